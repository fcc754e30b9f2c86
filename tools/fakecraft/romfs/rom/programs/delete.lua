-- delete <paths...>: deletes files and directories (each path may be a wildcard
-- pattern). Alias: rm.

local args = table.pack(...);
if args.n < 1 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <paths>");
  return;
end

for i = 1, args.n do
  local matches = fs.find(shell.resolve(args[i]));
  if #matches == 0 then
    printError(args[i] .. ": No matching files");
  end
  for _, file in ipairs(matches) do
    if fs.isReadOnly(file) then
      printError("Cannot delete read-only file /" .. file);
    elseif fs.isDriveRoot(file) then
      printError("Cannot delete mount /" .. file);
      if fs.isDir(file) then
        print("To delete its contents run rm /" .. fs.combine(file, "*"));
      end
    else
      local ok, err = pcall(fs.delete, file);
      if not ok then printError((tostring(err):gsub("^pcall: ", ""))); end
    end
  end
end
