-- servers/sandbox.lua: boot daemon of the trapos-sandbox package.
-- Keeps one WebSocket to the trap-sandbox gateway (dormant while sandbox.url is unset) and
-- bridges it to trapos_sandbox_* events. The logic is libsandbox.newDaemon; this file
-- only feeds it events. Never sleep, http.websocket or ws.receive here: in CC they swallow
-- every other event of this coroutine.

local libsandbox = require('/apis/libsandbox');

local PROGRAM_PATH = "programs/sandbox.lua";
local SUBCOMMANDS = { "health", "status", "reconnect", "help" };

-- Tab completion for the command; the daemon runs at boot under shell.run, so it has shell.
local function registerCompletion()
  if shell == nil or shell.setCompletionFunction == nil then
    return;
  end
  pcall(function()
    local completion = require('cc.shell.completion');
    shell.setCompletionFunction(PROGRAM_PATH, completion.build({ completion.choice, SUBCOMMANDS }));
  end);
end

-- The screen is shared with the shell: report the first failure only.
local logged = false;
local function log(message)
  if not logged then
    logged = true;
    printError(message);
  end
end

registerCompletion();

local daemon = libsandbox.newDaemon({
  http = http,
  settings = settings,
  os = os,
  log = log,
});
daemon.start();

while true do
  local event = table.pack(os.pullEventRaw());
  if not daemon.handle(table.unpack(event, 1, event.n)) then
    break;
  end
end
