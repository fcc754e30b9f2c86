-- mkdir <paths...>: makes directories, with any missing parents.

local args = { ... };
if #args < 1 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <paths>");
  return;
end

for _, path in ipairs(args) do
  local dir = shell.resolve(path);
  if fs.exists(dir) and not fs.isDir(dir) then
    printError(path .. ": Destination exists");
  elseif fs.isReadOnly(dir) then
    printError(path .. ": Access denied");
  else
    fs.makeDir(dir);
  end
end
