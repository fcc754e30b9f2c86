-- commands: one of CC: Tweaked's command-computer programs. fakecraft has no command computers
-- (out of its scope), so it only answers as CC's does on an ordinary computer.

if not commands then
  printError("Requires a Command Computer.");
  return;
end
printError("fakecraft cannot run Minecraft commands.");
