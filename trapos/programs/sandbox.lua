-- sandbox: talk to the trap-sandbox gateway through the sandbox daemon.
-- `sandbox health` asks the gateway to probe itself and opencode; `sandbox status` shows the
-- daemon's connection; `sandbox reconnect` makes it connect again (e.g. after fixing the
-- password, or after `sandbox stop`, which disconnects it); `sandbox setup [url]` asks for the URL, the password and what the host may do,
-- each with the current value as the answer to Enter, and saves them. User errors are one red
-- line (error(msg, 0)) that names the fix, and a failed run.

local libsandbox = require('/apis/libsandbox');
local advice = require('/apis/libsandboxadvice');
local VERSION = require('/apis/libsandboxversion').VERSION;
local LOG_PATH = require('/apis/libsandboxlog').LOG_PATH;

local MSG_URL_NOT_SET = "sandbox.url is not set. Run: sandbox setup";
local MSG_HTTP_DISABLED = "The http API is disabled on this computer (enable http in the server config)";
local MSG_NO_DAEMON = "The sandbox daemon is not running (is the trapos-sandbox package installed? reboot the computer)";

-- What `sandbox setup` shows for a password that is set: never the password, nor its length.
local PASSWORD_MASK = "********";
-- The answers `sandbox setup` takes for sandbox.allow_exec.
local EXEC_ANSWERS = { yes = true, y = true, ["true"] = true, no = false, n = false, ["false"] = false };

-- Every line fits the 51-column computer screen.
local function usage()
  print("Usage: sandbox <command>");
  print("  health     check the gateway and opencode");
  print("  status     show URL, connection, last error");
  print("  reconnect  make the daemon connect again");
  print("  stop       disconnect until reconnect");
  print("  setup      set the URL, password, host access");
  print("  help       this help (also --help, -h)");
  print("  --version  show the version");
  print("Settings: sandbox.url, sandbox.password,");
  print("  sandbox.allow_files (none|read|write),");
  print("  sandbox.allow_exec (true|false),");
  print("  sandbox.ai_confirm (true|false)");
  print("  sandbox.allow_screen (none|view|control)");
end

local function fail(message)
  error(message, 0);
end

-- Turns the daemon's reason into advice the user can act on.
local function explain(why, url)
  return advice.explain(tostring(why or "unknown error"), url, settings.get(libsandbox.SETTING_PASSWORD));
end

local function explainStatus(status)
  if status.state == libsandbox.STATE_UNAUTHORIZED then
    return explain(status.lastError or "unauthorized", status.url);
  elseif status.state == libsandbox.STATE_DORMANT then
    return libsandbox.URL_NOT_SET;
  elseif status.lastError ~= nil then
    return explain(status.lastError, status.url);
  elseif status.state == libsandbox.STATE_CONNECTING or status.state == libsandbox.STATE_AUTHENTICATING then
    return "still connecting to " .. tostring(status.url);
  end
  return tostring(status.state);
end

local function checkSetup()
  if http == nil then
    fail(MSG_HTTP_DISABLED);
  end
  if libsandbox.normaliseUrl(settings.get(libsandbox.SETTING_URL)) == nil then
    fail(MSG_URL_NOT_SET);
  end
end

local function getStatus()
  local status = libsandbox.requestStatus();
  if status == nil then
    fail(MSG_NO_DAEMON);
  end
  return status;
end

-- Returns the daemon's status once it is connected; fails with the reason otherwise.
-- A daemon still connecting (just booted, settings just changed) gets REQUEST_TIMEOUT seconds.
local function awaitConnection()
  local status = libsandbox.awaitConnection();
  if status == nil then
    fail(MSG_NO_DAEMON);
  elseif not status.connected then
    fail("Not connected to the gateway: " .. explainStatus(status));
  end
  return status;
end

local function failRequest(err, url)
  if err.code == libsandbox.ERR_TIMEOUT then
    fail("The gateway did not answer within " .. libsandbox.REQUEST_TIMEOUT .. " seconds");
  elseif err.code == libsandbox.ERR_NOT_CONNECTED then
    fail("Not connected to the gateway: " .. explain(err.message, url));
  end
  fail("The gateway refused the request: " .. err.code .. ": " .. err.message);
end

local function health()
  checkSetup();
  local status = awaitConnection();
  local ok, payload, err = libsandbox.request("probe_gateway", {}, libsandbox.REQUEST_TIMEOUT);
  if not ok then
    failRequest(err, status.url);
  end
  print("sandboxOk: " .. tostring(payload.sandboxOk == true));
  print("opencodeOk: " .. tostring(payload.opencodeOk == true));
  if payload.opencodeOk ~= true then
    print("opencodeDetail: " .. tostring(payload.opencodeDetail or "no detail given"));
  end
end

local function showStatus()
  local status = getStatus();
  print("url: " .. tostring(status.url or "not set"));
  print("connected: " .. tostring(status.connected == true));
  -- The state says why a computer is not connected yet (e.g. "connecting" right after boot).
  print("state: " .. tostring(status.state or "unknown"));
  print("traposId: " .. tostring(status.traposId));
  print("lastError: " .. tostring(status.lastError or "none"));
  if status.lastError ~= nil then
    local fix = explain(status.lastError, status.url);
    if fix ~= status.lastError then
      print("fix: " .. fix);
    end
  end
  -- The daemon's own faults are never printed by the daemon: they are counted here and logged.
  if (status.faults or 0) > 0 then
    print("faults: " .. status.faults .. " (see " .. LOG_PATH .. "), the last: " .. tostring(status.lastFault));
  end
  -- What the owner lets the host do here (read from the settings, as every request does).
  print("files: " .. libsandbox.filesAllowed());
  print("exec: " .. tostring(libsandbox.execAllowed()));
  -- Whether the player is asked before the agent changes this computer (the ai command).
  print("ai confirm: " .. tostring(libsandbox.aiConfirm()));
  print("screen: " .. libsandbox.screenAllowed());
end

local function reconnect()
  checkSetup();
  getStatus();
  -- The daemon sees the reconnect before our next status request (events are FIFO).
  libsandbox.reconnect();
  local status = awaitConnection();
  print("connected: true");
  print("traposId: " .. tostring(status.traposId));
end

-- The password to save: Enter keeps the current one (shown masked), or none if none is set.
local function askPassword()
  local current = settings.get(libsandbox.SETTING_PASSWORD);
  if type(current) == "number" then
    current = tostring(current); -- `set` stored digits as a number; the daemon sends them as text
  end
  if type(current) ~= "string" or current == "" then
    write("Gateway password (empty for none): ");
    return read("*");
  end
  write("Gateway password (Enter keeps it) [" .. PASSWORD_MASK .. "]: ");
  local typed = read("*");
  if typed == "" then
    return current;
  end
  return typed;
end

-- Asks until the answer is one of answers (a table from the lower-cased word to its value);
-- Enter gives current.
local function askChoice(prompt, answers, current, hint)
  while true do
    write(prompt);
    local typed = (read() or ""):match("^%s*(.-)%s*$"):lower();
    if typed == "" then
      return current;
    elseif answers[typed] ~= nil then
      return answers[typed];
    end
    printError(hint);
  end
end

-- Asks what the host may do here (docs/capabilities.md), the current values as defaults.
local function askAccess()
  local files = libsandbox.filesAllowed();
  local exec = libsandbox.execAllowed();
  print("What may the gateway's host do here?");
  files = askChoice("Files: none, read or write [" .. files .. "]: ",
    { none = libsandbox.FILES_NONE, read = libsandbox.FILES_READ, write = libsandbox.FILES_WRITE },
    files, "Answer none, read or write.");
  exec = askChoice("Run Lua and programs? yes or no [" .. (exec and "yes" or "no") .. "]: ",
    EXEC_ANSWERS, exec, "Answer yes or no.");
  local screen = libsandbox.screenAllowed();
  screen = askChoice("Screen: none, view or control [" .. screen .. "]: ",
    { none = libsandbox.SCREEN_NONE, view = libsandbox.SCREEN_VIEW, control = libsandbox.SCREEN_CONTROL },
    screen, "Answer none, view or control.");
  local confirm = libsandbox.aiConfirm();
  confirm = askChoice("Confirm the agent's changes? yes or no [" .. (confirm and "yes" or "no") .. "]: ",
    EXEC_ANSWERS, confirm, "Answer yes or no.");
  return files, exec, screen, confirm;
end

-- Asks for the URL (default: the current one), the password and the host's access (Enter
-- keeps each), saves them as their types, and shows whether the gateway now answers. The
-- daemon reconnects on the changed settings.
local function setup(urlArg)
  local current = settings.get(libsandbox.SETTING_URL);
  local url = urlArg;
  if url == nil then
    print("Gateway URL, e.g. ws://192.168.1.20:4444");
    write("[" .. tostring(current or "none") .. "]: ");
    url = read();
    if url:match("^%s*$") then
      url = current;
    end
  end
  url = url and url:match("^%s*(.-)%s*$");
  if url == nil or url == "" then
    fail("sandbox setup: no URL given. Run: sandbox setup ws://<host>:4444");
  end
  local scheme = url:match("^(%a[%w+.-]*)://");
  if scheme ~= nil and scheme:lower() ~= "ws" and scheme:lower() ~= "wss" then
    fail(advice.explain("Invalid scheme '" .. scheme:lower() .. "'", url));
  end
  local password = askPassword();
  local files, exec, screen, confirm = askAccess();
  settings.set(libsandbox.SETTING_URL, url);
  settings.set(libsandbox.SETTING_PASSWORD, password);
  settings.set(libsandbox.SETTING_ALLOW_FILES, files);
  settings.set(libsandbox.SETTING_ALLOW_EXEC, exec);
  settings.set(libsandbox.SETTING_ALLOW_SCREEN, screen);
  settings.set(libsandbox.SETTING_AI_CONFIRM, confirm);
  settings.save();
  print("Saved sandbox.url and sandbox.password.");
  print("Access: files " .. files .. ", exec " .. tostring(exec) .. ", screen " .. screen .. ".");
  print("ai confirm: " .. tostring(confirm));
  checkSetup();
  getStatus();
  libsandbox.reconnect();
  health();
end

-- Disconnects the daemon until `sandbox reconnect` (Ctrl-T does not: it is the foreground
-- program's). The daemon sees the stop before our status request (events are FIFO).
local function stop()
  getStatus();
  libsandbox.stopDaemon();
  print("state: " .. tostring(getStatus().state));
  print("sandbox reconnect starts it again.");
end

local COMMANDS = {
  health = health,
  status = showStatus,
  reconnect = reconnect,
  stop = stop,
  setup = setup,
};

-- How many arguments each command takes after its name.
local MAX_ARGS = { setup = 1 };

local args = { ... };
local command = args[1];

libsandbox.defineSettings();

if command == nil or command == "help" or command == "--help" or command == "-h" then
  usage();
elseif command == "--version" then
  print("sandbox " .. VERSION);
elseif COMMANDS[command] == nil then
  fail("sandbox: unknown command '" .. command .. "'. Run: sandbox --help");
elseif #args > 1 + (MAX_ARGS[command] or 0) then
  local extra = args[2 + (MAX_ARGS[command] or 0)];
  fail("sandbox " .. command .. ": unexpected argument '" .. extra .. "'. Run: sandbox --help");
else
  COMMANDS[command](table.unpack(args, 2));
end
