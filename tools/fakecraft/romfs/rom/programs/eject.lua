-- eject <drive>: ejects the disk from a disk drive.

local args = { ... };
if #args == 0 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <drive>");
  return;
end

local drive = args[1];
if not disk.isPresent(drive) then
  print("Nothing in " .. drive .. " drive");
  return;
end
disk.eject(drive);
