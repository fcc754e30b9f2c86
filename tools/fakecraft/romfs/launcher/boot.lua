-- fakecraft boot: run by the shell as a program (so it has the `shell` API). It starts every
-- autostart server and the command together under parallel.waitForAll, like TrapOS's boot
-- launcher, and reports the command's outcome to fakecraft, which then shuts the computer
-- down (servers still running are stopped with it).

local boot = _G._FAKECRAFT_BOOT;
_G._FAKECRAFT_BOOT = nil;
if type(boot) ~= "table" then
  printError("boot.lua is started by fakecraft only");
  return false;
end

-- TrapOS installs its commands in /programs and puts that directory on the shell's path.
shell.setPath(shell.path() .. ":/programs");

local function server(path)
  return function()
    shell.run(path);
  end;
end

local function command()
  local ok = false;
  if boot.program ~= "" then
    ok = shell.execute(boot.program, table.unpack(boot.args));
  end
  boot.finish(ok);
end

local tasks = {};
for _, path in ipairs(boot.autostart) do
  tasks[#tasks + 1] = server(path);
end
tasks[#tasks + 1] = command;
parallel.waitForAll(table.unpack(tasks));
