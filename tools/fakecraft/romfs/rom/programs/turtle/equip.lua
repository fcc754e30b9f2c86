-- equip: equips the item in a slot on a turtle's side (`equip <slot> <left|right>`),
-- swapping out what was there, as CC: Tweaked's program. Written for fakecraft from CC's
-- documentation and test-rom specs. fakecraft has no turtles: outside a spec's stubbed
-- `turtle` it says it needs one.

if not turtle then
  printError("Requires a Turtle");
  return;
end

local args = { ... };
local function usage()
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <slot> <side>");
end

local EQUIP = { left = "equipLeft", right = "equipRight" };
if #args ~= 2 or not EQUIP[args[2]] then
  usage();
  return;
end

local slot = tonumber(args[1]);
turtle.select(slot);
if turtle.getItemCount(slot) == 0 then
  print("Nothing to equip");
elseif not turtle[EQUIP[args[2]]]() then
  print("Item not equippable");
elseif turtle.getItemCount(slot) > 0 then
  print("Items swapped"); -- the old upgrade came back into the slot
else
  print("Item equipped");
end
