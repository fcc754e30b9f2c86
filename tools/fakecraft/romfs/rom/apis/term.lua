-- fakecraft's term API, loaded by os.loadAPI as CC's rom/apis/term.lua is: the native
-- terminal's functions, each forwarded to the current redirect target, and redirection.
-- Written for fakecraft from CC: Tweaked's documented behaviour; it shares no code with
-- CC's. The forwarding call is on line 14, where CC's has it: a native function's error
-- through term.* reads "/rom/apis/term.lua:14: ..." here as in CC, whose VM places a Java
-- function's error at the Lua line that called it.
local expect = dofile("rom/modules/main/cc/expect.lua").expect;
local native_term = term.native and term.native() or term; -- the bios's term is native
local target = native_term;

-- forwarder(name) calls the current target's method name with the caller's arguments.
local function forwarder(name)
  return function(...)
    return target[name](...);
  end;
end

local api = _ENV; -- what os.loadAPI copies into the global term

-- nativePaletteColour is the native term's (Go, as CC's is Java), moved to the term API so
-- that no redirect target needs it, as CC's term.lua moves it.
nativePaletteColour, nativePaletteColor = native_term.nativePaletteColour, native_term.nativePaletteColor;
native_term.nativePaletteColour, native_term.nativePaletteColor = nil, nil;

function native()
  return native_term;
end

function current()
  return target;
end

-- redirect(new_target) makes new_target the terminal every term function draws on, and
-- returns the previous one. A method new_target lacks is one that raises when called.
function redirect(new_target)
  expect(1, new_target, "table");
  if new_target == api or new_target == _G.term then
    error("term is not a recommended redirect target, try term.current() instead", 2);
  end
  for name, fn in pairs(native_term) do
    if type(name) == "string" and type(fn) == "function" and type(new_target[name]) ~= "function" then
      new_target[name] = function() error("Redirect object is missing method " .. name .. ".", 2); end;
    end
  end
  local previous = target;
  target = new_target;
  return previous;
end

for name, fn in pairs(native_term) do
  if type(name) == "string" and type(fn) == "function" and rawget(api, name) == nil then
    api[name] = forwarder(name);
  end
end
