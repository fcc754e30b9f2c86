-- unequip: takes the upgrade off a turtle's side (`unequip <left|right>`) into the first
-- empty slot, as CC: Tweaked's program. Written for fakecraft from CC's documentation and
-- test-rom specs. fakecraft has no turtles: outside a spec's stubbed `turtle` it says it
-- needs one.

if not turtle then
  printError("Requires a Turtle");
  return;
end

local args = { ... };
local EQUIP = { left = "equipLeft", right = "equipRight" };
if #args ~= 1 or not EQUIP[args[1]] then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <side>");
  return;
end

-- Equipping from an empty slot takes the upgrade off; the slot then tells whether there
-- was one.
for slot = 1, 16 do
  if turtle.getItemCount(slot) == 0 then
    turtle.select(slot);
    if turtle[EQUIP[args[1]]]() then
      if turtle.getItemCount(slot) > 0 then
        print("Item unequipped");
      else
        print("Nothing to unequip");
      end
      return;
    end
  end
end
print("No space to unequip item");
