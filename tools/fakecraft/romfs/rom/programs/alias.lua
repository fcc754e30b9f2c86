-- alias: the shell's aliases (short names for programs).
--   alias                  lists them, as name:program
--   alias NAME PROGRAM     makes NAME run PROGRAM
--   alias NAME             removes the alias NAME

local args = table.pack(...);
if args.n > 2 then
  print("Usage: " .. (arg[0] or fs.getName(shell.getRunningProgram())) .. " <alias> <program>");
  return;
end

local name, program = args[1], args[2];
if name and program then
  shell.setAlias(name, program);
elseif name then
  shell.clearAlias(name);
else
  local entries = {};
  for alias, target in pairs(shell.aliases()) do
    entries[#entries + 1] = alias .. ":" .. target;
  end
  table.sort(entries);
  textutils.pagedTabulate(entries);
end
