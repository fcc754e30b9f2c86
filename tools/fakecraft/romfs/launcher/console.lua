-- console: what `fakecraft shell` runs on a TrapOS computer (and `fakecraft run`'s once it
-- rebooted), in the manner of CC's bios: the shell's prompt, and when it ends (`exit`, or
-- Ctrl-T at the prompt, which CC's shell does not catch) the shutdown program says Goodbye
-- and turns the computer off.

shell.run("shell");
shell.run("shutdown");
