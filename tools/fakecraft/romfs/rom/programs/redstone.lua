-- redstone probe | set <side> [<colour>] <value> | pulse <side> <count> <period>: shows
-- the redstone inputs, sets an output (true/false or a strength 0-15; with a colour,
-- switches that colour of a bundled cable), or pulses an output on and off.

local args = { ... };

local function usage()
  local name = arg[0] or fs.getName(shell.getRunningProgram());
  print("Usages:");
  print(name .. " probe");
  print(name .. " set <side> <value>");
  print(name .. " set <side> <color> <value>");
  print(name .. " pulse <side> <count> <period>");
end

-- The colours lit in a bundled signal, each written in its own colour where it can be.
local function write_colours(signal)
  local first = true;
  for name, colour in pairs(colors) do
    if type(colour) == "number" and colors.test(signal, colour) then
      if not first then write(", "); end
      first = false;
      if term.isColour() then term.setTextColour(colour); end
      write(name);
      if term.isColour() then term.setTextColour(colours.white); end
    end
  end
end

local function probe()
  print("Redstone inputs: ");
  local on, bundled = {}, false;
  for _, side in ipairs(redstone.getSides()) do
    if redstone.getInput(side) then on[#on + 1] = side; end
    bundled = bundled or redstone.getBundledInput(side) > 0;
  end
  if #on > 0 then
    write(table.concat(on, ", "));
    print(".");
  else
    print("None.");
  end
  if not bundled then return; end
  print();
  print("Bundled inputs:");
  for _, side in ipairs(redstone.getSides()) do
    local signal = redstone.getBundledInput(side);
    if signal ~= 0 then
      write(side .. ": ");
      write_colours(signal);
      print(".");
    end
  end
end

local function set_bundled(side, colour_name, value)
  local colour = colors[colour_name] or colours[colour_name];
  if type(colour) ~= "number" then
    printError("No such color");
    return;
  end
  if value == "true" then
    rs.setBundledOutput(side, colors.combine(rs.getBundledOutput(side), colour));
  elseif value == "false" then
    rs.setBundledOutput(side, colors.subtract(rs.getBundledOutput(side), colour));
  else
    print("Value must be boolean");
  end
end

local function set(side, value)
  local strength = tonumber(value);
  if value == "true" or value == "false" then
    rs.setOutput(side, value == "true");
  elseif strength and strength >= 0 and strength <= 15 then
    rs.setAnalogOutput(side, strength);
  else
    print("Value must be boolean or 0-15");
  end
end

local function pulse(side, count, period)
  for _ = 1, count do
    redstone.setOutput(side, true);
    sleep(period / 2);
    redstone.setOutput(side, false);
    sleep(period / 2);
  end
end

local command = args[1];
if command == "probe" then
  probe();
elseif command == "pulse" then
  pulse(args[2], tonumber(args[3]) or 1, tonumber(args[4]) or 0.5);
elseif command == "set" then
  if #args > 3 then set_bundled(args[2], args[3], args[4]); else set(args[2], args[3]); end
else
  usage();
end
