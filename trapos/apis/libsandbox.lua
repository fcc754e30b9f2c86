-- libsandbox: the trap-sandbox client for TrapOS programs, and the package's entry point.
-- Programs call request() to reach the gateway through the sandbox daemon (servers/sandbox.lua);
-- only the daemon touches the socket. The wire format lives in libsandboxcodec, the settings
-- in libsandboxsettings, the program/daemon events in libsandboxevents and the daemon in
-- libsandboxdaemon, serving types from a program in libsandboxserve, the agent's client in
-- libsandboxai, the link session in libsandboxlink; the names programs need are listed once at the end, so one require serves
-- programs and no module's name hides another's.

local ccExpect = require('cc.expect');
local expect = ccExpect.expect;
local codec = require('/apis/libsandboxcodec');
local config = require('/apis/libsandboxsettings');
local events = require('/apis/libsandboxevents');
local daemon = require('/apis/libsandboxdaemon');
local serveLib = require('/apis/libsandboxserve');
local ai = require('/apis/libsandboxai');
local link = require('/apis/libsandboxlink');
local layout = require('/apis/libsandboxlayout');
local advice = require('/apis/libsandboxadvice');

local VERSION = require('/apis/libsandboxversion').VERSION;

-- Seconds a program waits for the gateway's reply before giving up with `timeout`.
local REQUEST_TIMEOUT = 10;
-- Seconds a program waits for the daemon to answer a status request (it answers at once
-- when it runs, so silence means it does not).
local STATUS_TIMEOUT = 1;

-- The `sandbox` command and its subcommands, for tab completion.
local COMMAND_PATH = "programs/sandbox.lua";
local SUBCOMMANDS = { "health", "status", "reconnect", "stop", "setup", "link", "uninstall", "help" };
-- The `ai` command and its options.
local AI_COMMAND_PATH = "programs/ai.lua";
local AI_OPTIONS = { "--reset", "--help", "--version" };
-- Where the package's help page (help/sandbox.txt) is: CC's `help sandbox` finds it once this
-- directory is on help.path. CC's boot sets that path anew (/rom/help) at each start, and
-- keeps it in no setting: so it is added at boot (registerHelp) and leaves with the package.
local HELP_DIR = "/help";

local newUuid, normalisePayload, normaliseError = codec.newUuid, codec.normalisePayload, codec.normaliseError;
local ERR_TIMEOUT = codec.ERR_TIMEOUT;
local EVENT_SEND, EVENT_REPLY = events.EVENT_SEND, events.EVENT_REPLY;
local EVENT_STATUS_REQUEST, EVENT_STATUS, EVENT_RECONNECT = events.EVENT_STATUS_REQUEST, events.EVENT_STATUS, events.EVENT_RECONNECT;
local EVENT_CONNECTED = events.EVENT_CONNECTED;

-- Waits for an event accepted by `match` or for `seconds` to pass. Unfiltered pulls: a
-- filtered pull would discard our own timer event. Terminate raises, as os.pullEvent does.
-- Returns the accepted event's arguments packed, or nil on timeout.
local function waitFor(seconds, match)
  expect(1, seconds, "number");
  expect(2, match, "function");
  local timer = os.startTimer(seconds);
  while true do
    local event = table.pack(os.pullEventRaw());
    if event[1] == "terminate" then
      os.cancelTimer(timer);
      error("Terminated", 0);
    elseif event[1] == "timer" and event[2] == timer then
      return nil;
    elseif match(event) then
      os.cancelTimer(timer);
      return event;
    end
  end
end

-- What a program reads when no sandbox daemon answers on this computer.
local NO_DAEMON = "The sandbox daemon is not running; reboot the computer to start it";

-- What a program says when no sandbox daemon answers: NO_DAEMON, or, when something keeps
-- the boot from starting it (shell.allow_startup false, a disk's startup file:
-- advice.bootBlocker), that, whose fix comes before the reboot, which alone would start
-- nothing (and after which the shell does not know the sandbox command either: it is on the
-- path the hook sets).
local function noDaemon()
  local why, fix = advice.bootBlocker();
  if why ~= nil then
    return "The sandbox daemon is not running: " .. why .. ". " .. fix .. ", then reboot";
  end
  return NO_DAEMON;
end

local requestStatus; -- below: request asks it after a timeout

-- Sends a request to the gateway through the daemon and waits for its reply.
-- Returns ok, payload, error: payload is a writable table when ok; error is
-- {code, message} when not (code `timeout` after timeoutSeconds, default 10, or
-- `not_connected` with noDaemon()'s message when then no daemon answers either).
local function request(msgType, payload, timeoutSeconds)
  expect(1, msgType, "string");
  expect(2, payload, "table", "nil");
  expect(3, timeoutSeconds, "number", "nil");
  local timeout = timeoutSeconds or REQUEST_TIMEOUT;
  local messageId = newUuid();
  -- Queueing before the wait is safe: nothing is delivered to us until we yield. JSON-safe
  -- as lua.exec's returns: serializeJSON writes NaN as a bare nan, a frame the gateway drops
  -- (the request would time out), and a cycle would overflow the copy.
  os.queueEvent(EVENT_SEND, messageId, msgType, normalisePayload(codec.jsonSafe(payload)));
  local reply = waitFor(timeout, function(event)
    return event[1] == EVENT_REPLY and event[2] == messageId;
  end);
  if reply == nil then
    -- Nobody answered: the gateway, or a daemon that is not there to send the request at all.
    if requestStatus() == nil then
      return false, nil, { code = codec.ERR_NOT_CONNECTED, message = noDaemon() };
    end
    return false, nil, {
      code = ERR_TIMEOUT,
      message = "The gateway did not answer within " .. tostring(timeout) .. " seconds",
    };
  end
  if reply[3] == true then
    return true, normalisePayload(reply[4]), nil;
  end
  return false, nil, normaliseError(reply[5]);
end

-- Asks the daemon for its status. Returns the status table, or nil when no daemon answered
-- within timeoutSeconds (default 1).
function requestStatus(timeoutSeconds)
  expect(1, timeoutSeconds, "number", "nil");
  local replyId = newUuid();
  os.queueEvent(EVENT_STATUS_REQUEST, replyId);
  local reply = waitFor(timeoutSeconds or STATUS_TIMEOUT, function(event)
    return event[1] == EVENT_STATUS and event[2] == replyId;
  end);
  if reply == nil or type(reply[3]) ~= "table" then
    return nil;
  end
  return reply[3];
end

-- How often awaitConnection looks at a daemon that is still connecting (it announces success
-- with trapos_sandbox_connected, but not failure).
local CONNECT_POLL = 0.5;

-- Asks the daemon for its status every CONNECT_POLL (sooner when it announces a connection)
-- while waiting(status, waited) says to (waited: the seconds waited so far). Returns the last
-- status, nil when no daemon answers.
local function pollStatus(waiting)
  local status = requestStatus();
  local waited = 0;
  while status ~= nil and waiting(status, waited) do
    waitFor(CONNECT_POLL, function(event)
      return event[1] == EVENT_CONNECTED;
    end);
    waited = waited + CONNECT_POLL;
    status = requestStatus();
  end
  return status;
end

-- Waits up to timeoutSeconds (default REQUEST_TIMEOUT) for a daemon that is still connecting
-- or authenticating (just booted, settings just changed). Returns its status then, whatever
-- it is, or nil when no daemon answers.
local function awaitConnection(timeoutSeconds)
  expect(1, timeoutSeconds, "number", "nil");
  local limit = timeoutSeconds or REQUEST_TIMEOUT;
  return pollStatus(function(status, waited)
    return waited < limit and (status.state == daemon.STATE_CONNECTING or status.state == daemon.STATE_AUTHENTICATING);
  end);
end

-- The seconds until a waiting daemon's next try, from its status (nil when it is not waiting):
-- longer for a gateway that keeps breaking its sockets. Never 0, which reads as stuck: a try
-- that is due (its timer's event still queued behind the status request) is at most a second
-- away, and shows so. `sandbox status` and the advice (libsandboxadvice) say the same number.
local function retrySeconds(status)
  expect(1, status, "table");
  if status.state ~= daemon.STATE_WAITING then
    return nil;
  elseif type(status.retryInMs) == "number" then
    -- On the timers' clock: on a server that lags, the epoch runs ahead of the timer.
    return math.max(1, math.ceil(status.retryInMs / 1000));
  elseif type(status.retryAt) ~= "number" then
    return nil;
  end
  return math.max(1, math.ceil((status.retryAt - os.epoch("utc")) / 1000)); -- a daemon before 0.5.20
end

-- What stands under a command while it waits for the daemon or the gateway (sandbox health
-- and reconnect, ai before its question): a daemon still connecting after boot, or a gateway
-- that took the request and is stuck, held the screen blank for up to REQUEST_TIMEOUT seconds,
-- which read as a computer that hung.
local WAITING = "Asking the gateway...";

-- Runs fn(...) with WAITING on t's cursor row (t: the program's terminal), erased when fn
-- returns or raises, so what comes next (the result, or the shell's line for fn's error: a
-- failure's message, Ctrl-T's Terminated) starts the row as it did. fn prints nothing. From a
-- row's start only; elsewhere fn runs as it is. Returns what fn returns.
local function whileWaiting(t, fn, ...)
  expect(1, t, "table");
  expect(2, fn, "function");
  local x, y = t.getCursorPos();
  if x ~= 1 then
    return fn(...);
  end
  t.write(WAITING);
  local results = table.pack(pcall(fn, ...));
  -- Blanks over what it wrote, as ai erases its notices: the row reads as before it, on CC's
  -- screen and in fakecraft's transcript alike, which keeps only what a row still shows.
  t.setCursorPos(1, y);
  t.write(string.rep(" ", #WAITING));
  t.setCursorPos(1, y);
  if not results[1] then
    error(results[2], 0);
  end
  return table.unpack(results, 2, results.n);
end

-- Asks a daemon that waits to reconnect to try now, not at its timer; in any other state it
-- does nothing. Unlike reconnect(), it keeps an open
-- connection, the last error and the back-off. Wait for the outcome with awaitConnection().
local function retryNow()
  os.queueEvent(events.EVENT_RETRY_NOW);
end

-- The states of a daemon that lost the gateway and is getting it back by itself.
local RECONNECTING = {
  [daemon.STATE_WAITING] = true, [daemon.STATE_CONNECTING] = true, [daemon.STATE_AUTHENTICATING] = true,
};
-- Seconds awaitReconnect waits at least: a daemon's first reconnect after a loss (its delay
-- and jitter) and that try's hello.
local RECONNECT_WAIT = daemon.RECONNECT_DELAY + daemon.RECONNECT_JITTER + REQUEST_TIMEOUT;

-- Waits for a daemon that lost the gateway to be connected again. Returns whether it is. A
-- daemon that stopped for good (replaced, revoked, stopped) is not waited for. While it waits
-- to try again it is asked to try now at each look (retryNow; it dials at most once a
-- RECONNECT_DELAY): after a gateway that broke its last sockets soon it backs off up to a
-- minute, and a gateway back after a restart was found only at that try, past the wait. The
-- wait is timeoutSeconds, by default the daemon's own next try as its first look says (its
-- jitter and that try's hello too), at least RECONNECT_WAIT. A daemon that got the gateway
-- back and lost it again between two looks (a gateway that took the hello and died, or
-- restarted twice: its status counts one more connection) is not back, and not waited for
-- again: what the wait was for, a turn the lost socket had, ended with it.
local function awaitReconnect(timeoutSeconds)
  expect(1, timeoutSeconds, "number", "nil");
  local limit = timeoutSeconds;
  local connections; -- the first look's count (nil from a daemon before 0.5.24)
  local status = pollStatus(function(s, waited)
    if s.connected or RECONNECTING[s.state] ~= true then
      return false;
    elseif waited == 0 then
      connections = type(s.connections) == "number" and s.connections or nil;
    elseif connections ~= nil and type(s.connections) == "number" and s.connections > connections then
      return false;
    end
    if limit == nil then
      limit = math.max(RECONNECT_WAIT, (retrySeconds(s) or 0) + daemon.RECONNECT_JITTER + REQUEST_TIMEOUT);
    end
    if waited >= limit then
      return false;
    elseif s.state == daemon.STATE_WAITING then
      retryNow();
    end
    return true;
  end);
  return status ~= nil and status.connected == true;
end

-- What keeps a stopped daemon disconnected, and its fix: the stop, not its error of before it.
local STOPPED = "stopped with sandbox stop; sandbox reconnect starts it again";

-- Why a daemon is not connected, from its status, in one line that names the fix: what
-- `sandbox status`, `sandbox health` and `ai` say (after "Not connected to the gateway: ").
-- Its last error is turned into advice (libsandboxadvice) that names the seconds to its next
-- try while it waits (retrySeconds); an error the advice has no rule for is returned as it is.
local function explainStatus(status)
  expect(1, status, "table");
  local function explain(why, retryIn)
    return advice.explain(tostring(why), status.url, settings.get(config.SETTING_PASSWORD), nil, retryIn);
  end
  if status.state == daemon.STATE_STOPPED then
    return STOPPED;
  elseif status.state == daemon.STATE_UNAUTHORIZED then
    return explain(status.lastError or "unauthorized");
  elseif status.state == daemon.STATE_DORMANT then
    return daemon.URL_NOT_SET;
  elseif status.lastError ~= nil then
    return explain(status.lastError, retrySeconds(status));
  elseif status.state == daemon.STATE_AUTHENTICATING then
    return config.helloUnanswered(status.url);
  elseif status.state == daemon.STATE_CONNECTING then
    return "still connecting to " .. tostring(status.url);
  end
  return tostring(status.state);
end

-- Asks the daemon to drop its connection and connect again (also after `unauthorized`, and
-- after stop()).
local function reconnect()
  os.queueEvent(EVENT_RECONNECT);
end

-- Asks the daemon to disconnect and stay so (state "stopped") until reconnect().
local function stopDaemon()
  os.queueEvent(events.EVENT_STOP);
end

-- Registers the `sandbox` and `ai` commands' tab completion with a shell (the daemon does it
-- at boot, so it works before a command first runs). Does nothing without a shell.
local function registerCompletion(shellApi)
  expect(1, shellApi, "table", "nil");
  if shellApi == nil or shellApi.setCompletionFunction == nil then
    return;
  end
  pcall(function()
    local completion = require('cc.shell.completion');
    shellApi.setCompletionFunction(COMMAND_PATH, completion.build({ completion.choice, SUBCOMMANDS }));
    shellApi.setCompletionFunction(AI_COMMAND_PATH, completion.build({ completion.choice, AI_OPTIONS }));
  end);
end

-- Puts HELP_DIR on CC's help path (the daemon does it at boot), after the directories already
-- there, so a topic of the ROM's or of the player's own path keeps its page. Does nothing
-- without a help API, or when the directory is on the path already.
local function registerHelp(helpApi)
  expect(1, helpApi, "table", "nil");
  if helpApi == nil or helpApi.path == nil or helpApi.setPath == nil then
    return;
  end
  local path = helpApi.path();
  if not string.find(":" .. path .. ":", ":" .. HELP_DIR .. ":", 1, true) then
    helpApi.setPath(path .. ":" .. HELP_DIR);
  end
end

-- The agent's client for programs: the sandbox daemon carries its requests; the screen's size
-- and the owner's sandbox.ai_confirm are read when a question is asked.
local defaultAi = ai.newClient({ request = request, awaitReconnect = awaitReconnect });

-- The public surface, each name from the one module that owns it.
return {
  VERSION = VERSION,
  REQUEST_TIMEOUT = REQUEST_TIMEOUT,
  NO_DAEMON = NO_DAEMON,
  noDaemon = noDaemon,
  STATUS_TIMEOUT = STATUS_TIMEOUT,
  COMMAND_PATH = COMMAND_PATH,
  SUBCOMMANDS = SUBCOMMANDS,
  AI_COMMAND_PATH = AI_COMMAND_PATH,
  HELP_DIR = HELP_DIR,
  registerHelp = registerHelp,
  AI_OPTIONS = AI_OPTIONS,
  waitFor = waitFor,
  request = request,
  requestStatus = requestStatus,
  awaitConnection = awaitConnection,
  awaitReconnect = awaitReconnect,
  retrySeconds = retrySeconds,
  STOPPED = STOPPED,
  explainStatus = explainStatus,
  reconnect = reconnect,
  stopDaemon = stopDaemon,
  retryNow = retryNow,
  whileWaiting = whileWaiting,
  serve = serveLib.serve,
  registerCompletion = registerCompletion,
  -- How answers and text fit the screen (libsandboxlayout).
  ANSWER_ROOM = layout.ANSWER_ROOM,
  PASSWORD_ROOM = layout.PASSWORD_ROOM,
  URL_ROOM = layout.URL_ROOM,
  roomToAnswer = layout.roomToAnswer,
  lastWordOwnRow = layout.lastWordOwnRow,
  fitLongWords = layout.fitLongWords,

  -- The owner's settings (libsandboxsettings).
  SETTING_URL = config.SETTING_URL,
  SETTING_PASSWORD = config.SETTING_PASSWORD,
  SETTING_ALLOW_FILES = config.SETTING_ALLOW_FILES,
  SETTING_ALLOW_EXEC = config.SETTING_ALLOW_EXEC,
  SETTING_AI_CONFIRM = config.SETTING_AI_CONFIRM,
  SETTING_ALLOW_SCREEN = config.SETTING_ALLOW_SCREEN,
  SETTING_NAMES = config.SETTING_NAMES,
  FILES_NONE = config.FILES_NONE,
  FILES_READ = config.FILES_READ,
  FILES_WRITE = config.FILES_WRITE,
  SCREEN_NONE = config.SCREEN_NONE,
  SCREEN_VIEW = config.SCREEN_VIEW,
  SCREEN_CONTROL = config.SCREEN_CONTROL,
  defineSettings = config.defineSettings,
  normaliseUrl = config.normaliseUrl,
  urlSet = config.urlSet,
  password = config.password,
  urlHost = config.urlHost,
  filesAllowed = config.filesAllowed,
  filesShown = config.filesShown,
  execAllowed = config.execAllowed,
  execShown = config.execShown,
  screenAllowed = config.screenAllowed,
  screenShown = config.screenShown,
  aiConfirm = config.aiConfirm,
  aiConfirmShown = config.aiConfirmShown,

  -- The wire (libsandboxcodec): error codes and the frame rules.
  ERR_UNAUTHORIZED = codec.ERR_UNAUTHORIZED,
  ERR_NOT_AUTHENTICATED = codec.ERR_NOT_AUTHENTICATED,
  ERR_UNKNOWN_TYPE = codec.ERR_UNKNOWN_TYPE,
  ERR_NOT_CONNECTED = codec.ERR_NOT_CONNECTED,
  ERR_INTERNAL = codec.ERR_INTERNAL,
  ERR_TIMEOUT = codec.ERR_TIMEOUT,
  ERR_FORBIDDEN = codec.ERR_FORBIDDEN,
  ERR_FS_ERROR = codec.ERR_FS_ERROR,
  ERR_BAD_PAYLOAD = codec.ERR_BAD_PAYLOAD,
  MAX_MESSAGE_BYTES = codec.MAX_MESSAGE_BYTES,
  MAX_GATEWAY_REQUESTS = codec.MAX_GATEWAY_REQUESTS,
  newUuid = codec.newUuid,
  encodeFrame = codec.encodeFrame,
  decodeFrame = codec.decodeFrame,

  -- The os events between programs and the daemon (libsandboxevents).
  EVENT_SEND = events.EVENT_SEND,
  EVENT_REPLY = events.EVENT_REPLY,
  EVENT_CONNECTED = events.EVENT_CONNECTED,
  EVENT_RECONNECT = events.EVENT_RECONNECT,
  EVENT_STOP = events.EVENT_STOP,
  EVENT_RETRY_NOW = events.EVENT_RETRY_NOW,
  EVENT_STATUS_REQUEST = events.EVENT_STATUS_REQUEST,
  EVENT_STATUS = events.EVENT_STATUS,
  EVENT_SERVE_OFFER = events.EVENT_SERVE_OFFER,
  EVENT_SERVE_WITHDRAW = events.EVENT_SERVE_WITHDRAW,
  EVENT_SERVE_REQUEST = events.EVENT_SERVE_REQUEST,
  EVENT_SERVE_REPLY = events.EVENT_SERVE_REPLY,

  -- The daemon (libsandboxdaemon) and the states its status reports.
  newDaemon = daemon.newDaemon,
  STATE_DORMANT = daemon.STATE_DORMANT,
  STATE_DISABLED = daemon.STATE_DISABLED,
  STATE_CONNECTING = daemon.STATE_CONNECTING,
  STATE_AUTHENTICATING = daemon.STATE_AUTHENTICATING,
  STATE_CONNECTED = daemon.STATE_CONNECTED,
  STATE_WAITING = daemon.STATE_WAITING,
  STATE_UNAUTHORIZED = daemon.STATE_UNAUTHORIZED,
  STATE_STOPPED = daemon.STATE_STOPPED,
  HTTP_DISABLED = daemon.HTTP_DISABLED,
  URL_NOT_SET = daemon.URL_NOT_SET,

  -- The gateway's agent (libsandboxai): ai.run/ask/poll/abort/reset/approve, a client of
  -- one's own, and the events' kinds, done reasons and error codes.
  ai = defaultAi,
  newAiClient = ai.newClient,
  noAgentLine = ai.noAgentLine,
  lineChanges = ai.lineChanges,
  KIND_TEXT = ai.KIND_TEXT,
  KIND_TOOL = ai.KIND_TOOL,
  KIND_CONFIRM = ai.KIND_CONFIRM,
  KIND_STARTING = ai.KIND_STARTING,
  KIND_RETRY = ai.KIND_RETRY,
  KIND_CUT = ai.KIND_CUT,
  KIND_ERROR = ai.KIND_ERROR,
  KIND_DONE = ai.KIND_DONE,
  DONE_STOP = ai.DONE_STOP,
  DONE_ABORTED = ai.DONE_ABORTED,
  DONE_ERROR = ai.DONE_ERROR,
  DONE_DEADLINE = ai.DONE_DEADLINE,
  DONE_DISCONNECTED = ai.DONE_DISCONNECTED,
  ERR_AI_DISABLED = ai.ERR_AI_DISABLED,
  ERR_AI_UNAVAILABLE = ai.ERR_AI_UNAVAILABLE,
  ERR_UNKNOWN_TURN = ai.ERR_UNKNOWN_TURN,
  ERR_BUSY = ai.ERR_BUSY,
  MAX_PROMPT_BYTES = ai.MAX_PROMPT_BYTES,

  -- Linking this computer to an account (libsandboxlink): the session `sandbox link` holds,
  -- and the link requests' error codes.
  newLinkSession = link.newSession,
  ERR_LINK_INVALID = link.ERR_LINK_INVALID,
  ERR_LINK_DISABLED = link.ERR_LINK_DISABLED,
};
