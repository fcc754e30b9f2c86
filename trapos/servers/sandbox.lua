-- servers/sandbox.lua: boot daemon of the trapos-sandbox package.
-- Keeps one WebSocket to the trap-sandbox gateway (dormant while sandbox.url is unset) and
-- bridges it to trapos_sandbox_* events. The logic is libsandbox.newDaemon; this file
-- only feeds it events. Never sleep, http.websocket or ws.receive here: in CC they swallow
-- every other event of this coroutine.

-- A library of the client missing (a file deleted to free space) stopped the boot with CC's
-- require traceback and the places it looked: the boot says the sandbox command's one line,
-- the missing file and the install line, and goes on to the shell without the daemon.
local loaded, why = pcall(function()
  return require('/apis/libsandbox'), require('/apis/libsandboxlog');
end);
if not loaded then
  -- The line from sandbox.url (libsandboxsettings), unless that library is the one missing.
  local function installLine()
    local found, settingsLib = pcall(require, '/apis/libsandboxsettings');
    return found and settingsLib.installLine() or "wget run .../trapos/install, as its operator gives it out";
  end
  local missing = tostring(why):match("module '(/apis/[^']+)' not found");
  error(missing == nil and why or ("sandbox: " .. missing .. ".lua is missing: the trapos-sandbox client is "
    .. "not whole on this computer. Install it with the gateway's install line (" .. installLine() .. ")."), 0);
end
local libsandbox, fileLog = require('/apis/libsandbox'), require('/apis/libsandboxlog');

-- The screen is the player's: the daemon's faults go to its log file and `sandbox status`.
local log = fileLog.newFileLog({ fs = fs, clock = function() return os.epoch("utc"); end });

-- The daemon runs at boot under shell.run, so the command completes before its first run.
libsandbox.registerCompletion(shell);
-- CC's `help sandbox` finds the package's page: the boot set help.path before this ran.
libsandbox.registerHelp(help);

local daemon = libsandbox.newDaemon({
  http = http,
  settings = settings,
  os = os,
  log = log,
  -- lua.exec chunks see what a program run by the shell sees (shell, require), as the lua
  -- program's chunks do.
  env = setmetatable({ shell = shell, multishell = multishell, require = require, package = package }, { __index = _G }),
  shell = shell,
});
daemon.start();

-- Raw pulls: the player's Ctrl-T is the foreground program's, never the daemon's (`sandbox
-- stop` disconnects it); the daemon runs until the computer shuts down.
while true do
  local event = table.pack(os.pullEventRaw());
  daemon.handle(table.unpack(event, 1, event.n));
end
