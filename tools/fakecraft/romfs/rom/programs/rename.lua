-- rename <source> <destination>: renames one file or directory.

local args = { ... };
if #args < 2 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <source> <destination>");
  return;
end

local source = shell.resolve(args[1]);
local dest = shell.resolve(args[2]);

if not fs.exists(source) then
  printError("No matching files");
elseif fs.isDriveRoot(source) then
  printError("Can't rename mounts");
elseif fs.isReadOnly(source) then
  printError("Source is read-only");
elseif fs.exists(dest) then
  printError("Destination exists");
elseif fs.isReadOnly(dest) then
  printError("Destination is read-only");
else
  fs.move(source, dest);
end
