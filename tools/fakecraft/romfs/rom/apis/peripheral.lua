-- peripheral: find and use the blocks around the computer (modems, monitors, drives, …).
-- Loaded with os.loadAPI over the native API the computer starts with, which only knows
-- what touches the computer's six sides (and, in fakecraft, what periphemu attached under
-- another name). Peripherals further away are reached through a wired modem on a side:
-- CC calls such a modem a "peripheral_hub", and it answers for the cable's peripherals
-- with its *Remote methods.

local expect = dofile("rom/modules/main/cc/expect.lua").expect;

local native = peripheral;
local sides = rs.getSides();

-- The hub on a side that reaches a peripheral of that name, if any.
local function hub_for(name)
  for i = 1, #sides do
    local side = sides[i];
    if native.hasType(side, "peripheral_hub") and native.call(side, "isPresentRemote", name) then
      return side;
    end
  end
  return nil;
end

-- A field of a wrapped peripheral's metatable, or an error blaming the caller's caller for
-- passing something that is not a wrapped peripheral.
local function wrapped_field(value, field, field_type)
  local mt = getmetatable(value);
  if type(mt) ~= "table" or mt.__name ~= "peripheral" or type(mt[field]) ~= field_type then
    error("bad argument #1 (table is not a peripheral)", 3);
  end
  return mt[field];
end

--- The names of every peripheral the computer can use: the sides that have one (each hub
-- followed by the peripherals on its cable), then the other names periphemu gave.
function getNames()
  local names = {};
  for i = 1, #sides do
    local side = sides[i];
    if native.isPresent(side) then
      names[#names + 1] = side;
      if native.hasType(side, "peripheral_hub") then
        for _, remote in ipairs(native.call(side, "getNamesRemote")) do
          names[#names + 1] = remote;
        end
      end
    end
  end
  if native.getNames then
    for _, name in ipairs(native.getNames()) do names[#names + 1] = name; end
  end
  return names;
end

--- Whether a peripheral of that name is attached, here or on a cable.
function isPresent(name)
  expect(1, name, "string");
  if native.isPresent(name) then return true; end
  return hub_for(name) ~= nil;
end

--- The types of a peripheral (by name or wrapped), nil when it is not there.
function getType(p)
  expect(1, p, "string", "table");
  if type(p) == "table" then
    return table.unpack(wrapped_field(p, "types", "table"));
  end
  if native.isPresent(p) then return native.getType(p); end
  local hub = hub_for(p);
  if hub then return native.call(hub, "getTypeRemote", p); end
  return nil;
end

--- Whether a peripheral (by name or wrapped) has a type; nil when it is not there.
function hasType(p, peripheral_type)
  expect(1, p, "string", "table");
  expect(2, peripheral_type, "string");
  if type(p) == "table" then
    return wrapped_field(p, "types", "table")[peripheral_type] ~= nil;
  end
  if native.isPresent(p) then return native.hasType(p, peripheral_type); end
  local hub = hub_for(p);
  if hub then return native.call(hub, "hasTypeRemote", p, peripheral_type); end
  return nil;
end

--- The names of a peripheral's methods, nil when it is not there.
function getMethods(name)
  expect(1, name, "string");
  if native.isPresent(name) then return native.getMethods(name); end
  local hub = hub_for(name);
  if hub then return native.call(hub, "getMethodsRemote", name); end
  return nil;
end

--- The name a wrapped peripheral was wrapped under.
function getName(p)
  expect(1, p, "table");
  return wrapped_field(p, "name", "string");
end

--- Calls a peripheral's method; nothing happens (nil) when it is not there. A method's
-- errors name the caller of this function.
function call(name, method, ...)
  expect(1, name, "string");
  expect(2, method, "string");
  if native.isPresent(name) then return native.call(name, method, ...); end
  local hub = hub_for(name);
  if hub then return native.call(hub, "callRemote", name, method, ...); end
  return nil;
end

--- A table of a peripheral's methods, each calling peripheral.call; nil when it is not
-- there. getName, getType and hasType read the name and types off its metatable.
function wrap(name)
  expect(1, name, "string");
  local methods = peripheral.getMethods(name);
  if not methods then return nil; end
  local types = { peripheral.getType(name) };
  for i = 1, #types do types[types[i]] = true; end
  local wrapped = setmetatable({}, { __name = "peripheral", name = name, type = types[1], types = types });
  for _, method in ipairs(methods) do
    wrapped[method] = function(...) return peripheral.call(name, method, ...); end;
  end
  return wrapped;
end

--- Every attached peripheral of a type, wrapped, that filter(name, wrapped) accepts.
function find(peripheral_type, filter)
  expect(1, peripheral_type, "string");
  expect(2, filter, "function", "nil");
  local found = {};
  for _, name in ipairs(peripheral.getNames()) do
    if peripheral.hasType(name, peripheral_type) then
      local wrapped = peripheral.wrap(name);
      if filter == nil or filter(name, wrapped) then found[#found + 1] = wrapped; end
    end
  end
  return table.unpack(found);
end
