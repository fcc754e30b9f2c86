-- monitor <name> <program> [args] | monitor scale <name> <scale>: runs a program with its
-- output on a monitor (a touch on an advanced monitor reaches it as a left click, then a
-- release a tenth of a second later; a resized monitor as term_resize), or sets a
-- monitor's text scale (0.5 to 5).

local args = { ... };

-- How long after a touch its click is released.
local RELEASE_SECONDS = 0.1;

local function usage()
  local name = arg[0] or fs.getName(shell.getRunningProgram());
  print("Usage:");
  print("  " .. name .. " <name> <program> <arguments>");
  print("  " .. name .. " scale <name> <scale>");
end

local function is_monitor(name)
  if peripheral.getType(name) == "monitor" then return true; end
  print("No monitor named " .. name);
  return false;
end

local function scale(name, text)
  if not is_monitor(name) then return; end
  local value = tonumber(text);
  if value == nil or value < 0.5 or value > 5 then
    print("Invalid scale: " .. text);
    return;
  end
  peripheral.call(name, "setTextScale", value);
end

-- Runs the program on the monitor, passing it every event, and touches, resizes and the
-- releases of touches as the mouse and terminal events a program expects.
local function run_on(name, program, ...)
  local path = shell.resolveProgram(program);
  if path == nil then
    print("No such program: " .. program);
    return;
  end
  print("Running " .. program .. " on monitor " .. name);
  local previous = term.redirect(peripheral.wrap(name));
  local program_args = table.pack(...);
  local co = coroutine.create(function()
    (shell.execute or shell.run)(program, table.unpack(program_args, 1, program_args.n));
  end);
  local function resume(...)
    local ok, result = coroutine.resume(co, ...);
    if not ok then printError(result); end
    return result;
  end
  local function wants(filter, event) return coroutine.status(co) ~= "dead" and (filter == nil or filter == event); end

  local releases = {};
  local ok, err = pcall(function()
    local filter = resume();
    while coroutine.status(co) ~= "dead" do
      local event = table.pack(os.pullEventRaw());
      if filter == nil or event[1] == filter or event[1] == "terminate" then
        filter = resume(table.unpack(event, 1, event.n));
      end
      if wants(filter, "mouse_click") and event[1] == "monitor_touch" and event[2] == name then
        releases[os.startTimer(RELEASE_SECONDS)] = { event[3], event[4] };
        filter = resume("mouse_click", 1, table.unpack(event, 3, event.n));
      end
      if wants(filter, "term_resize") and event[1] == "monitor_resize" and event[2] == name then
        filter = resume("term_resize");
      end
      if wants(filter, "mouse_up") and event[1] == "timer" and releases[event[2]] then
        filter = resume("mouse_up", 1, table.unpack(releases[event[2]], 1, 2));
        releases[event[2]] = nil;
      end
    end
  end);
  term.redirect(previous);
  if not ok then printError(err); end
end

if #args < 2 or (args[1] == "scale" and #args < 3) then
  usage();
elseif args[1] == "scale" then
  scale(args[2], args[3]);
elseif is_monitor(args[1]) then
  run_on(table.unpack(args));
end
