-- exec: runs one Minecraft command on a command computer (`exec <command> [words...]`),
-- as CC: Tweaked's program: green "Success" or red "Failed", then what the command said.
-- Written for fakecraft from CC's documentation and test-rom specs; fakecraft has no
-- command computers, so outside a spec's stubbed `commands` it says it needs one.

local args = { ... };
if not commands then
  printError("Requires a Command Computer.");
  return;
end
if #args == 0 then
  printError("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <command>");
  return;
end

-- The command's name is case-insensitive; its arguments are passed on as typed.
args[1] = args[1]:lower();
local ok, output = commands.exec(table.concat(args, " "));
if ok then
  if term.isColour() then
    term.setTextColour(colours.green);
  end
  print("Success");
  term.setTextColour(colours.white);
else
  printError("Failed");
end
for _, line in ipairs(output) do
  print(line);
end
