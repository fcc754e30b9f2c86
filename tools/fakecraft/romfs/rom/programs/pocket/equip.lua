-- equip: puts the item in hand into a pocket computer's back slot (a modem, a speaker),
-- as CC: Tweaked's program. Written for fakecraft from CC's documentation and test-rom
-- specs; fakecraft has no pocket computers, so outside a spec's stubbed `pocket` it says
-- it needs one.

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
