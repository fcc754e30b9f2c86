-- libsandbox: the trap-sandbox client for TrapOS programs, and the package's entry point.
-- Programs call request() to reach the gateway through the sandbox daemon (servers/sandbox.lua);
-- only the daemon touches the socket. The wire format lives in libsandboxcodec, the settings
-- in libsandboxsettings, the program/daemon events in libsandboxevents and the daemon in
-- libsandboxdaemon; their public names are re-exported here so one require serves programs.

local ccExpect = require('cc.expect');
local expect = ccExpect.expect;
local codec = require('/apis/libsandboxcodec');
local config = require('/apis/libsandboxsettings');
local events = require('/apis/libsandboxevents');
local daemon = require('/apis/libsandboxdaemon');
local requestsLib = require('/apis/libsandboxrequests');

local VERSION = require('/apis/libsandboxversion').VERSION;

-- Seconds a program waits for the gateway's reply before giving up with `timeout`.
local REQUEST_TIMEOUT = 10;
-- Seconds a program waits for the daemon to answer a status request (it answers at once
-- when it runs, so silence means it does not).
local STATUS_TIMEOUT = 1;

-- The `sandbox` command and its subcommands, for tab completion.
local COMMAND_PATH = "programs/sandbox.lua";
local SUBCOMMANDS = { "health", "status", "reconnect", "setup", "help" };

local newUuid, normalisePayload, normaliseError = codec.newUuid, codec.normalisePayload, codec.normaliseError;
local ERR_TIMEOUT = codec.ERR_TIMEOUT;
local EVENT_SEND, EVENT_REPLY = events.EVENT_SEND, events.EVENT_REPLY;
local EVENT_STATUS_REQUEST, EVENT_STATUS, EVENT_RECONNECT = events.EVENT_STATUS_REQUEST, events.EVENT_STATUS, events.EVENT_RECONNECT;

-- Waits for an event accepted by `match` or for `seconds` to pass. Unfiltered pulls: a
-- filtered pull would discard our own timer event. Terminate raises, as os.pullEvent does.
-- Returns the accepted event's arguments packed, or nil on timeout.
local function waitFor(seconds, match)
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

-- Sends a request to the gateway through the daemon and waits for its reply.
-- Returns ok, payload, error: payload is a writable table when ok; error is
-- {code, message} when not (code `timeout` after timeoutSeconds, default 10).
local function request(msgType, payload, timeoutSeconds)
  expect(1, msgType, "string");
  expect(2, payload, "table", "nil");
  expect(3, timeoutSeconds, "number", "nil");
  local timeout = timeoutSeconds or REQUEST_TIMEOUT;
  local messageId = newUuid();
  -- Queueing before the wait is safe: nothing is delivered to us until we yield.
  os.queueEvent(EVENT_SEND, messageId, msgType, normalisePayload(payload));
  local reply = waitFor(timeout, function(event)
    return event[1] == EVENT_REPLY and event[2] == messageId;
  end);
  if reply == nil then
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
local function requestStatus(timeoutSeconds)
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

-- Asks the daemon to drop its connection and connect again (also after `unauthorized`).
local function reconnect()
  os.queueEvent(EVENT_RECONNECT);
end

-- Serves request types the gateway's host may send this computer, until terminated:
-- handlers maps a type name (not a built-in one, see codec.RESERVED_TYPES) to a function
-- (payload, type) returning the answer's payload table, or nil and an error (a message, or
-- {code, message}). A handler that raises answers `internal` with its message; the serving
-- goes on. While this runs, the daemon routes the types here; once it ends (returns, crashes
-- or is terminated) they answer unknown_type within SERVE_LEASE seconds.
local function serve(handlers)
  expect(1, handlers, "table");
  local types = {};
  for name, handler in pairs(handlers) do
    if type(name) ~= "string" or name == "" then
      error("bad argument #1 (type names must be non-empty strings)", 2);
    elseif codec.RESERVED_TYPES[name] then
      error("bad argument #1 (" .. name .. " is a built-in type and cannot be served)", 2);
    elseif type(handler) ~= "function" then
      error("bad argument #1 (the handler of " .. name .. " must be a function)", 2);
    end
    types[#types + 1] = name;
  end
  local providerId = newUuid();
  local heartbeat;
  -- Offering again after each request keeps the lease even if a handler pulled our timer.
  local function offer()
    if heartbeat ~= nil then
      os.cancelTimer(heartbeat);
    end
    os.queueEvent(events.EVENT_SERVE_OFFER, providerId, types);
    heartbeat = os.startTimer(requestsLib.SERVE_HEARTBEAT);
  end
  local function answer(requestId, msgType, payload)
    local result = table.pack(pcall(handlers[msgType], normalisePayload(payload), msgType));
    if not result[1] then
      os.queueEvent(events.EVENT_SERVE_REPLY, requestId, false, nil,
        { code = codec.ERR_INTERNAL, message = tostring(result[2]) });
    elseif type(result[2]) == "table" or (result[2] == nil and result[3] == nil) then
      os.queueEvent(events.EVENT_SERVE_REPLY, requestId, true, result[2] or {}, nil);
    else
      os.queueEvent(events.EVENT_SERVE_REPLY, requestId, false, nil,
        normaliseError(result[3], msgType .. " failed"));
    end
  end
  offer();
  while true do
    local event = table.pack(os.pullEventRaw());
    if event[1] == "terminate" then
      os.cancelTimer(heartbeat);
      os.queueEvent(events.EVENT_SERVE_WITHDRAW, providerId);
      error("Terminated", 0);
    elseif event[1] == "timer" and event[2] == heartbeat then
      heartbeat = nil;
      offer();
    elseif event[1] == events.EVENT_SERVE_REQUEST and event[2] == providerId and handlers[event[4]] ~= nil then
      answer(event[3], event[4], event[5]);
      offer();
    end
  end
end

-- Registers the `sandbox` command's tab completion with a shell (the daemon does it at boot,
-- so it works before the command first runs). Does nothing without a shell.
local function registerCompletion(shellApi)
  expect(1, shellApi, "table", "nil");
  if shellApi == nil or shellApi.setCompletionFunction == nil then
    return;
  end
  pcall(function()
    local completion = require('cc.shell.completion');
    shellApi.setCompletionFunction(COMMAND_PATH, completion.build({ completion.choice, SUBCOMMANDS }));
  end);
end

local api = {
  VERSION = VERSION,
  REQUEST_TIMEOUT = REQUEST_TIMEOUT,
  STATUS_TIMEOUT = STATUS_TIMEOUT,
  COMMAND_PATH = COMMAND_PATH,
  SUBCOMMANDS = SUBCOMMANDS,
  waitFor = waitFor,
  request = request,
  requestStatus = requestStatus,
  reconnect = reconnect,
  serve = serve,
  registerCompletion = registerCompletion,
};

-- The modules' public names, so `require('/apis/libsandbox')` keeps serving everything.
for _, module in ipairs({ codec, config, events, daemon, requestsLib }) do
  for name, value in pairs(module) do
    api[name] = value;
  end
end

return api;
