-- refuel: burns fuel from a turtle's inventory (`refuel [number|all]`, default one item),
-- slot by slot until the limit or a full tank, as CC: Tweaked's program, then shows the
-- fuel level. Written for fakecraft from CC's documentation and test-rom specs. fakecraft
-- has no turtles: outside a spec's stubbed `turtle` it says it needs one.

if not turtle then
  printError("Requires a Turtle");
  return;
end

local args = { ... };
if #args > 1 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " [number]");
  return;
end

local limit = 1; -- items to burn; nil for all of them
if args[1] == "all" then
  limit = nil;
elseif args[1] then
  limit = tonumber(args[1]);
  if not limit then
    print("Invalid limit, expected a number or \"all\"");
    return;
  end
end

if turtle.getFuelLevel() == "unlimited" then
  print("Fuel level is unlimited");
  return;
end

for slot = 1, 16 do
  if (limit and limit <= 0) or turtle.getFuelLevel() >= turtle.getFuelLimit() then
    break;
  end
  local count = turtle.getItemCount(slot);
  if count > 0 then
    turtle.select(slot);
    if turtle.refuel(limit) and limit then
      limit = limit - (count - turtle.getItemCount(slot));
    end
  end
end
print("Fuel level is " .. turtle.getFuelLevel());
if turtle.getFuelLevel() == turtle.getFuelLimit() then
  print("Fuel limit reached");
end
