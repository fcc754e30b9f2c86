-- cc.expect: argument checking for public functions, with CC: Tweaked's error texts.
-- Every check raises at level 3 so the message points at the code that called the
-- function doing the check, not at the check itself.

local native_type = type;
local native_select = select;

-- The level, seen from inside a check, of the function whose argument is wrong.
local CALLER_LEVEL = 3;

-- A value's type for error messages: tables and userdata may name themselves with
-- a string __name in their metatable; every other type uses type().
local function display_type(value)
  local t = native_type(value);
  if t ~= "table" and t ~= "userdata" then
    return t;
  end
  local getmetatable_raw = debug and debug.getmetatable or getmetatable;
  local ok, mt = pcall(getmetatable_raw, value);
  if not ok or native_type(mt) ~= "table" then
    return t;
  end
  local name = rawget(mt, "__name");
  if native_type(name) == "string" then
    return name;
  end
  return t;
end

-- "a", "a or b", "a, b or c". "nil" is accepted by a check but not listed, as CC lists
-- only the types a caller should pass ("table expected, got number" for "table", "nil").
local function join_types(...)
  local names = {};
  for i = 1, native_select("#", ...) do
    local name = tostring((native_select(i, ...)));
    if name ~= "nil" then
      names[#names + 1] = name;
    end
  end
  if #names == 0 then
    return "nil";
  elseif #names == 1 then
    return names[1];
  end
  return table.concat(names, ", ", 1, #names - 1) .. " or " .. names[#names];
end

local function matches(value, ...)
  local t = native_type(value);
  for i = 1, native_select("#", ...) do
    if native_select(i, ...) == t then
      return true;
    end
  end
  return false;
end

-- The name of the function that is checking its arguments (the caller of
-- expect), when the VM can tell it; nil otherwise. Only identifier-looking
-- names are used, so placeholders such as "main chunk" never leak out.
local function checked_function_name()
  if native_type(debug) ~= "table" or native_type(debug.getinfo) ~= "function" then
    return nil;
  end
  -- Levels seen by getinfo: 1 = this function, 2 = expect, 3 = the function
  -- whose argument is checked. Called directly, not under pcall: a pcall that
  -- runs its function as a coroutine (to allow yields) would hide the stack.
  local info = debug.getinfo(CALLER_LEVEL, "nS");
  if native_type(info) ~= "table" then
    return nil;
  end
  local name = info.name;
  if info.what ~= "Lua" or native_type(name) ~= "string" or not name:find("^[%a_][%w_]*$") then
    return nil;
  end
  -- A function called from native code (pcall, say) has no name, as in C Lua.
  -- fakecraft's bios runs pcall'd functions from Lua code whose source is "[C]".
  local caller = debug.getinfo(CALLER_LEVEL + 1, "S");
  if native_type(caller) ~= "table" or caller.what == "C" or caller.what == "G" then
    return nil;
  end
  local source = native_type(caller.source) == "string" and caller.source:gsub("^[@=]", "") or "";
  if source == "[C]" then
    return nil;
  end
  return name;
end

local function argument_message(name, index, value, ...)
  local types = join_types(...);
  if name then
    return ("bad argument #%d to '%s' (%s expected, got %s)"):format(index, name, types, display_type(value));
  end
  return ("bad argument #%d (%s expected, got %s)"):format(index, types, display_type(value));
end

--- Checks that argument #index is one of the given types and returns it.
local function expect(index, value, ...)
  if matches(value, ...) then
    return value;
  end
  error(argument_message(checked_function_name(), index, value, ...), CALLER_LEVEL);
end

--- Checks that tbl[key] is one of the given types and returns it.
local function field(tbl, key, ...)
  expect(1, tbl, "table");
  expect(2, key, "string");
  local value = tbl[key];
  if matches(value, ...) then
    return value;
  end
  if value == nil then
    error(("field '%s' missing from table"):format(key), CALLER_LEVEL);
  end
  error(("bad field '%s' (%s expected, got %s)"):format(key, join_types(...), display_type(value)), CALLER_LEVEL);
end

--- Checks that num lies within [min, max] (either bound may be nil) and returns it.
local function range(num, min, max)
  expect(1, num, "number");
  min = expect(2, min, "number", "nil") or -math.huge;
  max = expect(3, max, "number", "nil") or math.huge;
  -- NaN lies within no range: it fails both comparisons, so test for being inside.
  if not (num >= min and num <= max) then
    error(("number outside of range (expected %s to be within %s and %s)"):format(tostring(num), tostring(min), tostring(max)), CALLER_LEVEL);
  end
  return num;
end

local module = { expect = expect, field = field, range = range };

-- Calling the module is the same as calling expect. The check is repeated here
-- rather than tail-called, because VMs disagree on whether a tail call counts as
-- a stack level, and the levels must match a direct call to expect.
return setmetatable(module, {
  __call = function(_, index, value, ...)
    if matches(value, ...) then
      return value;
    end
    error(argument_message(checked_function_name(), index, value, ...), CALLER_LEVEL);
  end,
});
