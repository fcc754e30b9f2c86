-- drive [path]: names the drive a path (default: the current directory) is on and how
-- much room is left on it.

local args = { ... };
local path = shell.dir();
if args[1] ~= nil then path = shell.resolve(args[1]); end

if not fs.exists(path) then
  print("No such path");
  return;
end

-- Free space in CC's units: one decimal, rounded down.
local function amount(bytes)
  if bytes >= 1000 * 1000 then return math.floor(bytes / (100 * 1000)) / 10 .. "MB"; end
  if bytes >= 1000 then return math.floor(bytes / 100) / 10 .. "KB"; end
  return bytes .. "B";
end

write(fs.getDrive(path) .. " (");
print(amount(fs.getFreeSpace(path)) .. " remaining)");
