-- clear [screen|palette|all]: clears the screen and/or resets the colour palette.

local args = { ... };

local function clear_screen()
  term.clear();
  term.setCursorPos(1, 1);
end

local function reset_palette()
  for i = 0, 15 do
    local colour = 2 ^ i;
    term.setPaletteColour(colour, term.nativePaletteColour(colour));
  end
end

local command = args[1] or "screen";
if command == "screen" then
  clear_screen();
elseif command == "palette" then
  reset_palette();
elseif command == "all" then
  clear_screen();
  reset_palette();
else
  local name = arg[0] or fs.getName(shell.getRunningProgram());
  print("Usages:");
  print(name);
  print(name .. " screen");
  print(name .. " palette");
  print(name .. " all");
end
