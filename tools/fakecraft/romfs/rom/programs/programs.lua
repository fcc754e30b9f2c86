-- programs [all]: lists the programs on the shell's path (`all` includes hidden ones).

local args = { ... };
textutils.pagedTabulate(shell.programs(args[1] == "all"));
