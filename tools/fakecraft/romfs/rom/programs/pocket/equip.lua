-- equip: puts an upgrade from the player's inventory on a pocket computer's back (a
-- modem, a speaker), as CC: Tweaked's program. Written for fakecraft from CC's
-- documentation and test-rom specs; on any other computer (no `pocket`) it says it needs
-- one.

if not pocket then
  printError("Requires a Pocket Computer");
  return;
end

local ok, err = pocket.equipBack();
if ok then
  print("Item equipped");
else
  printError(err);
end
