-- cat <paths...>: prints the contents of files. Not a CC: Tweaked program: fakecraft
-- adds it because a person at a terminal reaches for it (CC's `type` only names a
-- path's kind).

local args = table.pack(...);
if args.n < 1 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <paths>");
  return;
end

for i = 1, args.n do
  local path = shell.resolve(args[i]);
  if fs.isDir(path) then
    printError(args[i] .. ": Is a directory");
  else
    local file = fs.open(path, "r");
    if not file then
      printError(args[i] .. ": No such file");
    else
      local text = file.readAll() or "";
      file.close();
      if text ~= "" then
        if text:sub(-1) == "\n" then text = text:sub(1, -2); end
        textutils.pagedPrint(text);
      end
    end
  end
end
