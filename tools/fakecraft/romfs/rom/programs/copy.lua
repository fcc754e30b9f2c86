-- copy <source> <destination>: copies files (source may be a wildcard pattern) to a new
-- path or into a directory. Alias: cp.

local args = { ... };
if #args < 2 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <source> <destination>");
  return;
end

local source = shell.resolve(args[1]);
local dest = shell.resolve(args[2]);
local matches = fs.find(source);
if #matches == 0 then
  printError("No matching files");
  return;
end

for _, file in ipairs(matches) do
  if fs.isDir(dest) then
    fs.copy(file, fs.combine(dest, fs.getName(file)));
  elseif #matches > 1 then
    printError("Cannot overwrite file multiple times");
    return;
  elseif fs.exists(dest) then
    printError("Destination exists");
  elseif fs.isReadOnly(dest) then
    printError("Destination is read-only");
  elseif fs.getFreeSpace(dest) < fs.getSize(file) then
    printError("Not enough space");
  else
    fs.copy(file, dest);
  end
end
