-- bg: opens a multishell tab in the background running a command (default: a shell).

if not shell.openTab then
  printError("Requires multishell");
  return;
end

if select("#", ...) > 0 then
  shell.openTab(...);
else
  shell.openTab("shell");
end
