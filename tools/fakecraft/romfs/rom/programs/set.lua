-- set: shows and changes settings, as CC: Tweaked's set program does.
--   set              every setting and its value
--   set NAME         one setting, its default when changed, and its description
--   set NAME VALUE   sets it (only the first word of VALUE counts) and saves /.settings
-- VALUE is coerced as CC does: true, false, nil (unsets) and numbers become those types,
-- anything else stays a string; a setting defined with a type refuses a value of another.

local args = { ... };

local function show(value)
  return textutils.serialize(value);
end

if #args == 0 then
  local lines = {};
  for i, name in ipairs(settings.getNames()) do
    lines[i] = show(name) .. " is " .. show(settings.get(name));
  end
  if #lines > 0 then
    print(table.concat(lines, "\n"));
  end
elseif #args == 1 then
  local name = args[1];
  local details = settings.getDetails(name);
  local message = name .. " is " .. show(details.value);
  if details.default ~= nil and details.value ~= details.default then
    message = message .. " (default is " .. show(details.default) .. ")";
  end
  print(message);
  if details.description then
    print(details.description);
  end
else
  local name, text = args[1], args[2];
  local value;
  if text == "true" then
    value = true;
  elseif text == "false" then
    value = false;
  elseif text == "nil" then
    value = nil;
  elseif tonumber(text) then
    value = tonumber(text);
  else
    value = text;
  end

  local option = settings.getDetails(name);
  if value == nil then
    settings.unset(name);
    print(show(name) .. " unset");
  elseif option.type and option.type ~= type(value) then
    printError(("%s is not a valid %s."):format(show(text), option.type));
  else
    settings.set(name, value);
    print(show(name) .. " set to " .. show(value));
  end

  -- CC saves whenever the typed value differs from the old one, even after refusing it.
  if value ~= option.value then
    settings.save();
  end
end
