-- parallel: run several functions as coroutines that share the event stream.
-- Loaded with os.loadAPI: the global functions below become the `parallel` API.

-- Error level that blames the caller of waitForAny/waitForAll for a bad argument
-- (1 = make_routines, 2 = waitForX, 3 = its caller).
local ARGUMENT_ERROR_LEVEL = 3;

-- One coroutine per function; a non-function argument is the caller's mistake
-- (usually passing f() instead of f).
local function make_routines(...)
  local count = select("#", ...);
  local routines = {};
  for i = 1, count do
    local fn = select(i, ...);
    if type(fn) ~= "function" then
      error(("bad argument #%d (function expected, got %s)"):format(i, type(fn)), ARGUMENT_ERROR_LEVEL);
    end
    routines[i] = coroutine.create(fn);
  end
  return routines, count;
end

-- Drives the routines until no more than `keep` of them are still alive and
-- returns the index of the routine whose end got it there. The first pass resumes
-- each routine with no arguments; after that each pass hands one raw event to
-- every live routine that waits for it (its last yielded filter is nil or the
-- event's name, or the event is terminate).
local function run_until(routines, count, keep)
  if count == 0 then
    return 0;
  end
  local alive = count;
  local filters = {};
  local event = { n = 0 };
  while true do
    local name = event[1];
    for i = 1, count do
      local routine = routines[i];
      if routine ~= nil then
        local filter = filters[i];
        if filter == nil or filter == name or name == "terminate" then
          local ok, result = coroutine.resume(routine, table.unpack(event, 1, event.n));
          if not ok then
            -- Re-raised as is: no position prefix, siblings abandoned.
            error(result, 0);
          end
          filters[i] = result;
          if coroutine.status(routine) == "dead" then
            routines[i] = nil;
            alive = alive - 1;
            if alive <= keep then
              return i;
            end
          end
        end
      end
    end
    event = table.pack(os.pullEventRaw());
  end
end

--- Runs every function until one of them returns; returns that function's index.
function waitForAny(...)
  local routines, count = make_routines(...);
  return run_until(routines, count, count - 1);
end

--- Runs every function until all of them have returned; returns the index of the
--- last one to finish.
function waitForAll(...)
  local routines, count = make_routines(...);
  return run_until(routines, count, 0);
end
