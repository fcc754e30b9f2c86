-- craft: crafts with the items in a crafty turtle's inventory (`craft <number>` or
-- `craft all`), as CC: Tweaked's program, and says how many items it made. Written for
-- fakecraft from CC's documentation and test-rom specs. fakecraft has no turtles: outside a
-- spec's stubbed `turtle` it says it needs one.

if not turtle then
  printError("Requires a Turtle");
  return;
end
if not turtle.craft then
  print("Requires a Crafty Turtle");
  return;
end

local args = { ... };
local limit = tonumber(args[1]);
if not limit and args[1] ~= "all" then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " all|<number>");
  return;
end

-- The result lands in the selected slot: when the ingredients there were all used up it
-- holds only the result, else the result is what the slot lost.
local slot = turtle.getSelectedSlot();
local before = turtle.getItemCount(slot);
local made = 0;
if turtle.craft(limit) then
  local after = turtle.getItemCount(slot);
  if limit == nil or before <= limit then
    made = after;
  else
    made = before - after;
  end
end

if made == 1 then
  print("1 item crafted");
elseif made > 1 then
  print(made .. " items crafted");
else
  print("No items crafted");
end
