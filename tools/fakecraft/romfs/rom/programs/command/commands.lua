-- commands: lists the Minecraft commands a command computer can run, as CC: Tweaked's
-- program. Written for fakecraft from CC's documentation and test-rom specs; fakecraft has no
-- command computers, so outside a spec's stubbed `commands` it says it needs one.

if not commands then
  printError("Requires a Command Computer.");
  return;
end

local names = commands.list();
table.sort(names);
if term.isColour() then
  term.setTextColour(colours.green);
end
print("Available commands:");
term.setTextColour(colours.white);
textutils.pagedTabulate(names);
