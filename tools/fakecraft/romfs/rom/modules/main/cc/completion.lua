-- cc.completion: helpers that turn a partial word into the list of suffixes that
-- complete it, for read()'s completion and for shell completion functions.

local expect = require("cc.expect").expect;

-- The six sides a peripheral or redstone signal can be on.
local SIDES = { "front", "back", "top", "bottom", "left", "right" };

-- The suffixes of every choice that starts with text. Without add_space an exact
-- match offers nothing; with it, a space.
local function suffixes(text, choices, add_space)
  local results = {};
  local extra = add_space and 1 or 0;
  for i = 1, #choices do
    local option = choices[i];
    if #option + extra > #text and option:sub(1, #text) == text then
      local rest = option:sub(#text + 1);
      if add_space then
        rest = rest .. " ";
      end
      results[#results + 1] = rest;
    end
  end
  return results;
end

--- Completes text against a list of strings.
local function choice(text, choices, add_space)
  expect(1, text, "string");
  expect(2, choices, "table");
  expect(3, add_space, "boolean", "nil");
  return suffixes(text, choices, add_space);
end

--- Completes the name of an attached peripheral.
local function peripheral_(text, add_space)
  expect(1, text, "string");
  expect(2, add_space, "boolean", "nil");
  local names = {};
  if peripheral and peripheral.getNames then
    names = peripheral.getNames();
  end
  return suffixes(text, names, add_space);
end

--- Completes a side name.
local function side(text, add_space)
  expect(1, text, "string");
  expect(2, add_space, "boolean", "nil");
  return suffixes(text, SIDES, add_space);
end

--- Completes a setting name.
local function setting(text, add_space)
  expect(1, text, "string");
  expect(2, add_space, "boolean", "nil");
  local names = {};
  if settings and settings.getNames then
    names = settings.getNames();
  end
  return suffixes(text, names, add_space);
end

--- Completes a Minecraft command name (command computers only).
local function command(text, add_space)
  expect(1, text, "string");
  expect(2, add_space, "boolean", "nil");
  local names = {};
  if commands and commands.list then
    names = commands.list();
  end
  return suffixes(text, names, add_space);
end

return {
  choice = choice,
  peripheral = peripheral_,
  side = side,
  setting = setting,
  command = command,
};
