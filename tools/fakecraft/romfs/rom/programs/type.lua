-- type <path>: says whether path is a file or a directory (CC's `type`; to print a
-- file's contents use `cat`).

local args = { ... };
if #args < 1 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <path>");
  return;
end

local path = shell.resolve(args[1]);
if not fs.exists(path) then
  print("No such path");
elseif fs.isDir(path) then
  print("directory");
else
  print("file");
end
