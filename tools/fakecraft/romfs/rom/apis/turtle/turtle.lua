-- turtle: CC: Tweaked's turtle API, the Lua face of a turtle's native functions. Written for
-- fakecraft from CC's documentation. fakecraft emulates no turtles, so on its computers this
-- file only keeps CC's place and refuses to load, as CC's does on a computer; the bios
-- never loads it (it loads the files of /rom/apis, not its directories).
--
-- On a turtle it would publish the native functions as the API, `native` holding the
-- originals, and keep `craft` present exactly while a crafting table is equipped: a crafty
-- turtle crafts through the workbench peripheral on its side.

if not turtle then
  error("Cannot load turtle API on computer", 2);
end

native = turtle.native or turtle;

local function update_craft(api)
  for _, side in ipairs({ "left", "right" }) do
    if peripheral.getType(side) == "workbench" then
      api.craft = function(...)
        return peripheral.call(side, "craft", ...);
      end
      return;
    end
  end
  api.craft = nil;
end

local api = _ENV;
for name, fn in pairs(native) do
  if name == "equipLeft" or name == "equipRight" then
    -- Equipping may add or remove the crafting table.
    api[name] = function(...)
      local ok, err = fn(...);
      update_craft(turtle);
      return ok, err;
    end
  else
    api[name] = fn;
  end
end
update_craft(api);
