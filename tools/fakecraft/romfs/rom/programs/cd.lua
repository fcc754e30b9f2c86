-- cd <path>: makes path the shell's current directory.

local args = { ... };
if #args < 1 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <path>");
  return;
end

local dir = shell.resolve(args[1]);
if not fs.isDir(dir) then
  print("Not a directory");
  return;
end
shell.setDir(dir);
