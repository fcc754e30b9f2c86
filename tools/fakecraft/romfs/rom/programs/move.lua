-- move <source> <destination>: moves files (source may be a wildcard pattern) to a new
-- path or into a directory. Alias: mv.

local args = { ... };
if #args < 2 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <source> <destination>");
  return;
end

local source = shell.resolve(args[1]);
local dest = shell.resolve(args[2]);
local matches = fs.find(source);

-- Whether file may move to target; prints why not.
local function can_move(file, target)
  if fs.exists(target) then
    printError("Destination exists");
  elseif fs.isReadOnly(target) then
    printError("Destination is read-only");
  elseif fs.isDriveRoot(file) then
    printError("Cannot move mount /" .. file);
  elseif fs.isReadOnly(file) then
    printError("Cannot move read-only file /" .. file);
  else
    return true;
  end
  return false;
end

if #matches == 0 then
  printError("No matching files");
  return;
end

for _, file in ipairs(matches) do
  if fs.isDir(dest) then
    local target = fs.combine(dest, fs.getName(file));
    if can_move(file, target) then fs.move(file, target); end
  elseif #matches > 1 then
    printError("Cannot overwrite file multiple times");
    return;
  elseif can_move(file, dest) then
    fs.move(file, dest);
  end
end
