-- go: moves a turtle (`go <direction> [distance] ...`: forward/fd, back/bk, up, down/dn,
-- left/lt, right/rt), as CC: Tweaked's program. A blocked move is tried again every half
-- second until it works, or ends the program when the turtle is out of fuel. Written for
-- fakecraft from CC's documentation. fakecraft has no turtles: outside a spec's stubbed
-- `turtle` it says it needs one.

if not turtle then
  printError("Requires a Turtle");
  return;
end

local args = { ... };
if #args < 1 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <direction> <distance>");
  return;
end

local MOVES = {
  fd = "forward", forward = "forward", forwards = "forward",
  bk = "back", back = "back",
  up = "up",
  dn = "down", down = "down",
  lt = "turnLeft", left = "turnLeft",
  rt = "turnRight", right = "turnRight",
};
local RETRY_DELAY = 0.5;

local i = 1;
while i <= #args do
  local direction = args[i];
  -- A direction is followed by an optional count of steps.
  local steps = i < #args and tonumber(args[i + 1]) or nil;
  i = i + (steps and 2 or 1);
  steps = steps or 1;

  local move = MOVES[direction:lower()];
  if not move then
    print("No such direction: " .. direction);
    print("Try: forward, back, up, down");
    return;
  end
  while steps > 0 do
    if turtle[move]() then
      steps = steps - 1;
    elseif turtle.getFuelLevel() == 0 then
      print("Out of fuel");
      return;
    else
      sleep(RETRY_DELAY);
    end
  end
end
