-- turn: turns a turtle (`turn <left|right> [turns] ...`, also lt/rt), as CC: Tweaked's
-- program. Written for fakecraft from CC's documentation. fakecraft has no turtles: outside
-- a spec's stubbed `turtle` it says it needs one.

if not turtle then
  printError("Requires a Turtle");
  return;
end

local args = { ... };
if #args < 1 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <direction> <turns>");
  return;
end

local TURNS = { lt = "turnLeft", left = "turnLeft", rt = "turnRight", right = "turnRight" };

local i = 1;
while i <= #args do
  local direction = args[i];
  local turns = i < #args and tonumber(args[i + 1]) or nil;
  i = i + (turns and 2 or 1);

  local turn = TURNS[direction:lower()];
  if not turn then
    print("No such direction: " .. direction);
    print("Try: left, right");
    return;
  end
  for _ = 1, turns or 1 do
    turtle[turn]();
  end
end
