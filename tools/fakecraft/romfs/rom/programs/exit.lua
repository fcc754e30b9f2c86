-- exit: leaves the shell (the outermost one shuts the computer down).

shell.exit();
