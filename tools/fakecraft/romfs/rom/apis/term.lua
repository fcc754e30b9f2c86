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

-- The palette the screen starts with, read once, before any program can change it.
local start_palette = {};
for i = 0, 15 do
  start_palette[2 ^ i] = { native_term.getPaletteColour(2 ^ i) };
end

function nativePaletteColour(colour)
  if type(colour) ~= "number" then
    error(("bad argument #1 (number expected, got %s)"):format(type(colour)), 2);
  end
  local rgb = start_palette[colour];
  if not rgb then error("Colour out of range", 2); end
  return rgb[1], rgb[2], rgb[3];
end
nativePaletteColor = nativePaletteColour;

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
