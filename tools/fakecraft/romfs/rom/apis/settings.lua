-- settings: named, optionally typed configuration values, saved to /.settings.
-- Loaded with os.loadAPI: the global functions below become the `settings` API, and
-- everything local stays private. Setting, unsetting, clearing and loading queue
-- setting_changed(name, new, old) when a value changes; only save writes the file.

local DEFAULT_PATH = ".settings";

-- Argument checks with CC's error texts, shared with every other ROM API.
local cc_expect = dofile("rom/modules/main/cc/expect.lua");
local expect, field = cc_expect.expect, cc_expect.field;

-- The value types a setting may hold (and a definition may name).
local VALID_TYPES = { number = true, string = true, boolean = true, table = true };

local details = {}; -- name -> { description = ?, default = ?, type = ? }
local values = {};  -- name -> the set value, a private copy

-- A private deep copy, made the way CC makes it (so functions inside a table raise
-- "Cannot serialize type function" and repeated tables raise too).
local function reserialize(value)
  if type(value) ~= "table" then
    return value;
  end
  return textutils.unserialize(textutils.serialize(value));
end

-- Stores new (already copied) and queues setting_changed when the effective value
-- changes; the old value falls back to the definition's default.
local function set_value(name, new)
  local old = values[name];
  if old == nil then
    local opt = details[name];
    if opt then
      old = opt.default;
    end
  end
  values[name] = new;
  if old ~= new then
    os.queueEvent("setting_changed", name, new, old);
  end
end

local function current_value(name)
  local result = values[name];
  if result ~= nil then
    return reserialize(result);
  end
  local opt = details[name];
  if opt then
    return reserialize(opt.default);
  end
  return nil;
end

--- Defines a setting: define(name [, { description = ?, default = ?, type = ? }]).
function define(name, options)
  expect(1, name, "string");
  expect(2, options, "table", "nil");
  local opt = {};
  if options then
    opt.description = field(options, "description", "string", "nil");
    opt.default = reserialize(field(options, "default", "number", "string", "boolean", "table", "nil"));
    opt.type = field(options, "type", "string", "nil");
    if opt.type ~= nil and not VALID_TYPES[opt.type] then
      error('Unknown type "' .. opt.type .. '". Expected one of number, string, boolean, table.', 2);
    end
  end
  details[name] = opt;
end

--- Removes a definition; a set value stays.
function undefine(name)
  expect(1, name, "string");
  details[name] = nil;
end

--- Sets a value (nil is not allowed: use unset). Does not save.
function set(name, value)
  expect(1, name, "string");
  expect(2, value, "number", "string", "boolean", "table");
  local opt = details[name];
  if opt and opt.type ~= nil then
    -- cc.expect names the function only when it was called by name, as CC's message does
    -- (through pcall it is "bad argument #2 (number expected, got string)").
    expect(2, value, opt.type);
  end
  set_value(name, reserialize(value));
end

--- Returns a copy of the value, else default, else the defined default, else nil.
function get(name, default)
  expect(1, name, "string");
  local result = values[name];
  if result ~= nil then
    return reserialize(result);
  end
  if default ~= nil then
    return default;
  end
  local opt = details[name];
  if opt then
    return reserialize(opt.default);
  end
  return nil;
end

--- Returns { description, default, type, value, changed } for a setting.
function getDetails(name)
  expect(1, name, "string");
  local opt = details[name] or {};
  return {
    description = opt.description,
    default = reserialize(opt.default),
    type = opt.type,
    value = current_value(name),
    changed = values[name] ~= nil,
  };
end

--- Removes a value, so the setting reads as its default again.
function unset(name)
  expect(1, name, "string");
  set_value(name, nil);
end

--- Removes every value; definitions stay.
function clear()
  local names = {};
  for name in pairs(values) do
    names[#names + 1] = name;
  end
  for i = 1, #names do
    set_value(names[i], nil);
  end
end

--- Returns the sorted names of every defined or set setting.
function getNames()
  local seen, names = {}, {};
  for name in pairs(details) do
    seen[name] = true;
    names[#names + 1] = name;
  end
  for name in pairs(values) do
    if not seen[name] then
      names[#names + 1] = name;
    end
  end
  table.sort(names);
  return names;
end

--- Merges values from a file (default .settings). Returns false if it is missing or
-- not a serialised table; entries with a non-string name, a value of the wrong type
-- or an unserialisable value are skipped silently.
function load(path)
  expect(1, path, "string", "nil");
  local file = fs.open(path or DEFAULT_PATH, "r");
  if not file then
    return false;
  end
  local contents = file.readAll();
  file.close();
  local loaded = textutils.unserialize(contents or "");
  if type(loaded) ~= "table" then
    return false;
  end
  for name, value in pairs(loaded) do
    local value_type = type(value);
    if type(name) == "string" and VALID_TYPES[value_type] then
      local opt = details[name];
      if opt == nil or opt.type == nil or opt.type == value_type then
        local ok, copy = pcall(reserialize, value);
        if ok then
          set_value(name, copy);
        end
      end
    end
  end
  return true;
end

--- Writes every set value (not defaults) to a file (default .settings). Returns false
-- if the file cannot be opened.
function save(path)
  expect(1, path, "string", "nil");
  local file = fs.open(path or DEFAULT_PATH, "w");
  if not file then
    return false;
  end
  file.write(textutils.serialize(values));
  file.close();
  return true;
end
