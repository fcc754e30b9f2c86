-- fg: opens a multishell tab running a command (default: a shell) and switches to it.

if not shell.openTab then
  printError("Requires multishell");
  return;
end

local tab;
if select("#", ...) > 0 then
  tab = shell.openTab(...);
else
  tab = shell.openTab("shell");
end
if tab then
  shell.switchTab(tab);
end
