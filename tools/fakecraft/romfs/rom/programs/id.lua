-- id: prints the computer's id and label. fakecraft has no disk drives, so `id <drive>`
-- says there is no disk.

local args = { ... };
if #args > 0 then
  print("No disk in drive " .. tostring(args[1]));
  return;
end

print("This is computer #" .. os.getComputerID());
local label = os.getComputerLabel();
if label then
  print("This computer is labelled \"" .. label .. "\"");
end
