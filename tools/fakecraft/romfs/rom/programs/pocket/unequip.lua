-- unequip: takes the upgrade off a pocket computer's back, as CC: Tweaked's program.
-- Written for fakecraft from CC's documentation and test-rom specs; on any other computer
-- (no `pocket`) it says it needs one.

if not pocket then
  printError("Requires a Pocket Computer");
  return;
end

local ok, err = pocket.unequipBack();
if ok then
  print("Item unequipped");
else
  printError(err);
end
