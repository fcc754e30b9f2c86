-- libsandbox: the trap-sandbox protocol for TrapOS programs.
-- Frames, ids, error codes, settings and the event contract with the sandbox daemon
-- (servers/sandbox.lua). Programs call request(); only the daemon touches the socket.

local ccExpect = require('cc.expect');
local expect, field = ccExpect.expect, ccExpect.field;

local VERSION = "1.0.0";

-- Path a bare "ws://host:port" URL is completed with (the gateway's WebSocket endpoint).
local DEFAULT_PATH = "/trapos/ws";

-- Settings read by the daemon and the command.
local SETTING_URL = "sandbox.url";
local SETTING_PASSWORD = "sandbox.password";

-- Seconds a program waits for the gateway's reply before giving up with `timeout`.
local REQUEST_TIMEOUT = 10;
-- Seconds a program waits for the daemon to answer a status request (it answers at once
-- when it runs, so silence means it does not).
local STATUS_TIMEOUT = 1;
-- Seconds between a lost connection and the next attempt (no backoff in v1).
local RECONNECT_DELAY = 5;
-- CC: Tweaked refuses to send a websocket message over max_websocket_message (128 KiB).
local MAX_MESSAGE_BYTES = 128 * 1024;

-- Error codes of the protocol (error.code of a failed response).
local ERR_UNAUTHORIZED = "unauthorized";
local ERR_NOT_AUTHENTICATED = "not_authenticated";
local ERR_UNKNOWN_TYPE = "unknown_type";
local ERR_NOT_CONNECTED = "not_connected";
local ERR_INTERNAL = "internal";
local ERR_TIMEOUT = "timeout";

-- Frame events on the wire.
local FRAME_COMPUTER_REQUEST = "computer_request";
local FRAME_COMPUTER_RESPONSE = "computer_response";
local FRAME_GATEWAY_REQUEST = "gateway_request";
local FRAME_GATEWAY_RESPONSE = "gateway_response";

-- OS events between programs and the daemon.
local EVENT_SEND = "trapos_sandbox_send";                     -- (messageId, type, payload)
local EVENT_REPLY = "trapos_sandbox_reply";                   -- (messageId, ok, payload, error)
local EVENT_CONNECTED = "trapos_sandbox_connected";           -- (traposId)
local EVENT_RECONNECT = "trapos_sandbox_reconnect";           -- ()
local EVENT_STATUS_REQUEST = "trapos_sandbox_status_request"; -- (replyId)
local EVENT_STATUS = "trapos_sandbox_status";                 -- (replyId, status)

-- Daemon states, as reported by status().state.
local STATE_DORMANT = "dormant";           -- sandbox.url is not set
local STATE_DISABLED = "disabled";         -- the http API is absent
local STATE_CONNECTING = "connecting";     -- websocketAsync called, no outcome yet
local STATE_AUTHENTICATING = "authenticating"; -- socket open, hello sent
local STATE_CONNECTED = "connected";       -- hello accepted
local STATE_WAITING = "waiting";           -- lost the socket, reconnect timer running
local STATE_UNAUTHORIZED = "unauthorized"; -- hello rejected: terminal until settings change
local STATE_STOPPED = "stopped";           -- terminated

local HTTP_DISABLED = "http API is disabled (enable it in the server config)";
local URL_NOT_SET = "sandbox.url is not set";

local HEX = "0123456789abcdef";
local VARIANT = "89ab";

local FRAME_EVENTS = {
  [FRAME_COMPUTER_REQUEST] = "request",
  [FRAME_COMPUTER_RESPONSE] = "response",
  [FRAME_GATEWAY_REQUEST] = "request",
  [FRAME_GATEWAY_RESPONSE] = "response",
};

local function traposId(computerId, label)
  expect(1, computerId, "number");
  expect(2, label, "string", "nil");
  return tostring(computerId) .. ":" .. (label or "");
end

local function localTraposId()
  return traposId(os.getComputerID(), os.getComputerLabel());
end

-- A random (version 4) UUID: lowercase 8-4-4-4-12 hex, version nibble 4, variant 10xx.
local function newUuid()
  local out = {};
  for i = 1, 32 do
    local digit;
    if i == 13 then
      digit = "4";
    elseif i == 17 then
      local v = math.random(1, 4);
      digit = VARIANT:sub(v, v);
    else
      local h = math.random(1, 16);
      digit = HEX:sub(h, h);
    end
    out[#out + 1] = digit;
    if i == 8 or i == 12 or i == 16 or i == 20 then
      out[#out + 1] = "-";
    end
  end
  return table.concat(out);
end

-- Completes a bare "ws://host:port" (or with a trailing "/") with the gateway path; an
-- explicit path is kept. A URL without a scheme gets ws://, as CC's websocket does.
-- Returns nil for nil or blank input.
local function normaliseUrl(url)
  expect(1, url, "string", "nil");
  if url == nil then
    return nil;
  end
  url = url:match("^%s*(.-)%s*$");
  if url == "" then
    return nil;
  end
  if not url:find("://", 1, true) then
    url = "ws://" .. url;
  end
  local prefix, rest = url:match("^(%a[%w+.-]*://[^/?#]*)(.*)$");
  if prefix == nil then
    return url;
  end
  if rest == "" or rest == "/" then
    return prefix .. DEFAULT_PATH;
  end
  return url;
end

-- The host of a URL (for messages), or the URL itself when it has none.
local function urlHost(url)
  expect(1, url, "string");
  return url:match("^%a[%w+.-]*://([^/?#:]+)") or url;
end

local function deepCopy(value)
  if type(value) ~= "table" then
    return value;
  end
  local copy = {};
  for k, v in pairs(value) do
    copy[k] = deepCopy(v);
  end
  return copy;
end

-- Any payload as a fresh, writable object table. unserialiseJSON gives the immutable
-- textutils.empty_json_array for "[]", so a decoded payload is always copied; a missing,
-- null, non-table or array payload becomes {} (the same rule the gateway applies).
local function normalisePayload(payload)
  if type(payload) ~= "table" or next(payload) == nil or payload[1] ~= nil then
    return {};
  end
  return deepCopy(payload);
end

-- An error object as {code=string, message=string}, whatever arrived.
local function normaliseError(err, fallbackMessage)
  local code, message;
  if type(err) == "table" then
    code, message = err.code, err.message;
  elseif type(err) == "string" then
    message = err;
  end
  if type(code) ~= "string" or code == "" then
    code = ERR_INTERNAL;
  end
  if type(message) ~= "string" then
    message = fallbackMessage or ("the request failed (" .. code .. ")");
  end
  return { code = code, message = message };
end

-- Encodes a frame table as JSON. Requests always carry a payload object ({} when empty);
-- successful responses carry one, failed ones carry error. Returns the string, or nil and
-- an error message (unserialisable value, or over MAX_MESSAGE_BYTES).
local function encodeFrame(frame)
  expect(1, frame, "table");
  local kind = FRAME_EVENTS[frame.event];
  if kind == nil then
    return nil, "unknown frame event " .. tostring(frame.event);
  end
  local wire = {
    event = frame.event,
    messageId = frame.messageId,
    type = frame.type,
    traposSenderId = frame.traposSenderId,
    traposReceiverId = frame.traposReceiverId,
  };
  if kind == "request" then
    wire.payload = normalisePayload(frame.payload);
  else
    wire.ok = frame.ok == true;
    if wire.ok then
      wire.payload = normalisePayload(frame.payload);
    else
      wire.error = normaliseError(frame.error);
    end
  end
  -- Native functions are pcall'd through a closure throughout: fakecraft loses their error
  -- when they are passed to pcall directly.
  local ok, encoded = pcall(function() return textutils.serializeJSON(wire); end);
  if not ok then
    return nil, "cannot encode frame: " .. tostring(encoded);
  end
  if #encoded > MAX_MESSAGE_BYTES then
    return nil, "Message is too large (" .. #encoded .. " bytes, the limit is " .. MAX_MESSAGE_BYTES .. ")";
  end
  return encoded;
end

-- Decodes one JSON frame. Returns a fresh frame table (payload always a writable object,
-- error normalised on failed responses), or nil and why it is malformed.
local function decodeFrame(text)
  if type(text) ~= "string" then
    return nil, "frame is not a string";
  end
  local decoded, err = textutils.unserializeJSON(text);
  if type(decoded) ~= "table" then
    return nil, err or "frame is not a JSON object";
  end
  local kind = FRAME_EVENTS[decoded.event];
  if kind == nil then
    return nil, "unknown frame event " .. tostring(decoded.event);
  end
  if type(decoded.messageId) ~= "string" or decoded.messageId == "" then
    return nil, "frame has no messageId";
  end
  if type(decoded.type) ~= "string" or decoded.type == "" then
    return nil, "frame has no type";
  end
  local frame = {
    event = decoded.event,
    messageId = decoded.messageId,
    type = decoded.type,
    payload = normalisePayload(decoded.payload),
  };
  if type(decoded.traposSenderId) == "string" then
    frame.traposSenderId = decoded.traposSenderId;
  end
  if type(decoded.traposReceiverId) == "string" then
    frame.traposReceiverId = decoded.traposReceiverId;
  end
  if kind == "response" then
    if type(decoded.ok) ~= "boolean" then
      return nil, "response has no ok";
    end
    frame.ok = decoded.ok;
    if not frame.ok then
      frame.error = normaliseError(decoded.error, "the gateway reported a failure without a message");
    end
  end
  return frame;
end

-- Defines the sandbox settings (so `set` type-checks them and shows their description).
local function defineSettings(settingsApi)
  expect(1, settingsApi, "table", "nil");
  settingsApi = settingsApi or settings;
  settingsApi.define(SETTING_URL, {
    description = "WebSocket URL of the trap-sandbox gateway, e.g. ws://127.0.0.1:4444",
    type = "string",
  });
  settingsApi.define(SETTING_PASSWORD, {
    description = "Shared secret sent to the trap-sandbox gateway in the hello handshake",
    type = "string",
    default = "",
  });
end

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

-- The daemon as a factory of event handlers. deps: settings, os (queueEvent, startTimer,
-- cancelTimer, getComputerID, getComputerLabel, epoch), http (nil when disabled), and
-- optionally clock (epoch ms) and log(message). servers/sandbox.lua drives handle().
local function newDaemon(deps)
  expect(1, deps, "table");
  field(deps, "settings", "table");
  field(deps, "os", "table");
  field(deps, "http", "table", "nil");
  field(deps, "clock", "function", "nil");
  field(deps, "log", "function", "nil");
  local http = deps.http;
  local settingsApi = deps.settings;
  local osApi = deps.os;
  local clock = deps.clock or function() return osApi.epoch("utc"); end;
  local log = deps.log or function() end;

  local state = STATE_DORMANT;
  local url = nil;             -- normalised URL of the current attempt / socket
  local socket = nil;          -- open websocket handle (methods take no self)
  local helloId = nil;         -- messageId of the hello awaiting its answer
  local sessionId = nil;       -- traposId declared in the current session's hello
  local lastError = nil;
  local stateSince = clock();
  local reconnectTimer = nil;
  local inflight = {};         -- messageId -> true, requests sent on the current socket
  local pending = {};          -- url -> true, websocketAsync calls without an outcome yet

  local function setState(newState)
    if state ~= newState then
      state = newState;
      stateSince = clock();
    end
  end

  local function currentTraposId()
    return traposId(osApi.getComputerID(), osApi.getComputerLabel());
  end

  -- Why a request cannot be sent right now.
  local function whyNotConnected()
    if state == STATE_DORMANT then
      return URL_NOT_SET;
    elseif state == STATE_DISABLED then
      return HTTP_DISABLED;
    elseif state == STATE_STOPPED then
      return "the sandbox daemon has stopped";
    elseif lastError ~= nil then
      return lastError;
    end
    return "still connecting to " .. tostring(url);
  end

  local function reply(messageId, ok, payload, err)
    osApi.queueEvent(EVENT_REPLY, messageId, ok, payload, err);
  end

  local function replyNotConnected(messageId, why)
    reply(messageId, false, nil, { code = ERR_NOT_CONNECTED, message = why or whyNotConnected() });
  end

  local function failInflight(why)
    local ids = {};
    for messageId in pairs(inflight) do
      ids[#ids + 1] = messageId;
    end
    inflight = {};
    for _, messageId in ipairs(ids) do
      replyNotConnected(messageId, why);
    end
  end

  local function closeSocket()
    if socket ~= nil then
      local old = socket;
      socket = nil;
      -- CC allows 4 open sockets; a dead socket's close may raise "closed file": ignore.
      pcall(function() old.close(); end);
    end
    helloId = nil;
    sessionId = nil;
  end

  local function cancelReconnect()
    if reconnectTimer ~= nil then
      osApi.cancelTimer(reconnectTimer);
      reconnectTimer = nil;
    end
  end

  local function scheduleReconnect()
    cancelReconnect();
    setState(STATE_WAITING);
    reconnectTimer = osApi.startTimer(RECONNECT_DELAY);
  end

  -- Drops the socket after an error and tries again in RECONNECT_DELAY seconds.
  local function lose(reason)
    lastError = reason;
    closeSocket();
    failInflight("lost the connection: " .. reason);
    scheduleReconnect();
  end

  local function sendFrame(frame)
    local encoded, err = encodeFrame(frame);
    if encoded == nil then
      return false, err, ERR_INTERNAL;
    end
    local ok, sendErr = pcall(function() socket.send(encoded); end);
    if not ok then
      return false, tostring(sendErr), ERR_NOT_CONNECTED;
    end
    return true;
  end

  local function connect()
    closeSocket();
    cancelReconnect();
    failInflight("reconnecting to the gateway");
    if http == nil then
      url = nil;
      lastError = HTTP_DISABLED;
      setState(STATE_DISABLED);
      return;
    end
    url = normaliseUrl(settingsApi.get(SETTING_URL));
    if url == nil then
      setState(STATE_DORMANT);
      return;
    end
    setState(STATE_CONNECTING);
    if pending[url] then
      -- An attempt on this very URL is still running: its outcome is ours.
      return;
    end
    local ok, result, err = pcall(function() return http.websocketAsync(url); end);
    if not ok then
      lastError = tostring(result);
      scheduleReconnect();
    elseif result == false or result == nil then
      -- CC also queues websocket_failure for this; we are no longer connecting by then.
      lastError = tostring(err or "could not connect");
      scheduleReconnect();
    else
      pending[url] = true;
    end
  end

  local function sendHello()
    helloId = newUuid();
    sessionId = currentTraposId();
    local secret = settingsApi.get(SETTING_PASSWORD);
    if type(secret) ~= "string" then
      secret = "";
    end
    local ok, err = sendFrame({
      event = FRAME_COMPUTER_REQUEST,
      traposSenderId = sessionId,
      messageId = helloId,
      type = "hello",
      payload = { traposId = sessionId, secret = secret },
    });
    if not ok then
      lose("cannot send hello: " .. err);
    end
  end

  local function onHelloResponse(frame)
    helloId = nil;
    if frame.ok then
      lastError = nil;
      setState(STATE_CONNECTED);
      osApi.queueEvent(EVENT_CONNECTED, sessionId);
    elseif frame.error.code == ERR_UNAUTHORIZED then
      -- Terminal: retrying with the same secret cannot succeed.
      lastError = "unauthorized: " .. frame.error.message;
      closeSocket();
      cancelReconnect();
      setState(STATE_UNAUTHORIZED);
    else
      lose("hello failed: " .. frame.error.code .. ": " .. frame.error.message);
    end
  end

  local function onGatewayRequest(frame)
    local response = {
      event = FRAME_COMPUTER_RESPONSE,
      traposSenderId = sessionId or currentTraposId(),
      messageId = frame.messageId,
      type = frame.type,
    };
    if frame.type == "ping" then
      response.ok = true;
      response.payload = { traposId = response.traposSenderId };
    else
      response.ok = false;
      response.error = {
        code = ERR_UNKNOWN_TYPE,
        message = "this computer does not handle requests of type " .. frame.type,
      };
    end
    local ok, err = sendFrame(response);
    if not ok then
      log("cannot answer " .. frame.type .. ": " .. err);
    end
  end

  local function onMessage(eventUrl, contents)
    if eventUrl ~= url or socket == nil then
      return;
    end
    local frame = decodeFrame(contents);
    if frame == nil then
      return; -- malformed frames are ignored
    end
    if frame.event == FRAME_GATEWAY_RESPONSE then
      if helloId ~= nil and frame.messageId == helloId then
        onHelloResponse(frame);
      elseif inflight[frame.messageId] then
        inflight[frame.messageId] = nil;
        reply(frame.messageId, frame.ok, frame.ok and frame.payload or nil, frame.error);
      end
    elseif frame.event == FRAME_GATEWAY_REQUEST then
      onGatewayRequest(frame);
    end
    -- computer_* frames are ours; the gateway has no business echoing them.
  end

  local function onSuccess(eventUrl, newSocket)
    local wasPending = pending[eventUrl];
    pending[eventUrl] = nil;
    if eventUrl == url and state == STATE_CONNECTING and socket == nil then
      socket = newSocket;
      setState(STATE_AUTHENTICATING);
      sendHello();
    elseif wasPending and type(newSocket) == "table" then
      -- A stale attempt of ours (the URL changed meanwhile): free the socket slot.
      pcall(function() newSocket.close(); end);
    end
  end

  local function onEnded(eventUrl, reason)
    local wasPending = pending[eventUrl];
    pending[eventUrl] = nil;
    if eventUrl ~= url then
      return;
    end
    if state == STATE_CONNECTING and wasPending then
      lose(tostring(reason or "could not connect"));
    elseif (state == STATE_AUTHENTICATING or state == STATE_CONNECTED) and socket ~= nil then
      lose(tostring(reason or "Connection closed"));
    end
  end

  local function onSend(messageId, msgType, payload)
    if type(messageId) ~= "string" then
      return;
    end
    if type(msgType) ~= "string" or msgType == "" then
      reply(messageId, false, nil, { code = ERR_INTERNAL, message = "the request has no type" });
      return;
    end
    if state ~= STATE_CONNECTED or socket == nil then
      replyNotConnected(messageId);
      return;
    end
    local ok, err, code = sendFrame({
      event = FRAME_COMPUTER_REQUEST,
      traposSenderId = sessionId,
      messageId = messageId,
      type = msgType,
      payload = payload,
    });
    if ok then
      inflight[messageId] = true;
    elseif code == ERR_NOT_CONNECTED then
      replyNotConnected(messageId, err);
      lose(err);
    else
      reply(messageId, false, nil, { code = code, message = err });
    end
  end

  local function status()
    return {
      url = url or normaliseUrl(settingsApi.get(SETTING_URL)),
      connected = state == STATE_CONNECTED,
      state = state,
      traposId = sessionId or currentTraposId(),
      lastError = lastError,
      since = stateSince,
    };
  end

  -- (Re)starts from the current settings, forgetting the last error.
  local function restart()
    lastError = nil;
    connect();
  end

  local function start()
    defineSettings(settingsApi);
    restart();
  end

  local function stop()
    closeSocket();
    cancelReconnect();
    failInflight("the sandbox daemon has stopped");
    setState(STATE_STOPPED);
  end

  local handlers = {
    websocket_success = onSuccess,
    websocket_failure = onEnded,
    websocket_closed = onEnded,
    websocket_message = onMessage,
    timer = function(id)
      if reconnectTimer ~= nil and id == reconnectTimer then
        reconnectTimer = nil;
        connect();
      end
    end,
    setting_changed = function(name)
      if name == SETTING_URL or name == SETTING_PASSWORD then
        restart();
      end
    end,
    [EVENT_RECONNECT] = restart,
    [EVENT_SEND] = onSend,
    [EVENT_STATUS_REQUEST] = function(replyId)
      osApi.queueEvent(EVENT_STATUS, replyId, status());
    end,
  };

  -- Handles one event. Returns false once the daemon has stopped (on terminate).
  -- A failing handler is logged and survives: the daemon must not take the boot down.
  local function handle(event, ...)
    if state == STATE_STOPPED then
      return false;
    end
    if event == "terminate" then
      stop();
      return false;
    end
    local fn = handlers[event];
    if fn ~= nil then
      local ok, err = pcall(fn, ...);
      if not ok then
        log("sandbox daemon: " .. tostring(event) .. " handler failed: " .. tostring(err));
      end
    end
    return true;
  end

  return {
    start = start,
    stop = stop,
    handle = handle,
    status = status,
  };
end

return {
  VERSION = VERSION,
  DEFAULT_PATH = DEFAULT_PATH,
  SETTING_URL = SETTING_URL,
  SETTING_PASSWORD = SETTING_PASSWORD,
  REQUEST_TIMEOUT = REQUEST_TIMEOUT,
  STATUS_TIMEOUT = STATUS_TIMEOUT,
  RECONNECT_DELAY = RECONNECT_DELAY,
  MAX_MESSAGE_BYTES = MAX_MESSAGE_BYTES,
  ERR_UNAUTHORIZED = ERR_UNAUTHORIZED,
  ERR_NOT_AUTHENTICATED = ERR_NOT_AUTHENTICATED,
  ERR_UNKNOWN_TYPE = ERR_UNKNOWN_TYPE,
  ERR_NOT_CONNECTED = ERR_NOT_CONNECTED,
  ERR_INTERNAL = ERR_INTERNAL,
  ERR_TIMEOUT = ERR_TIMEOUT,
  ERRORS = {
    ERR_UNAUTHORIZED, ERR_NOT_AUTHENTICATED, ERR_UNKNOWN_TYPE,
    ERR_NOT_CONNECTED, ERR_INTERNAL, ERR_TIMEOUT,
  },
  FRAME_COMPUTER_REQUEST = FRAME_COMPUTER_REQUEST,
  FRAME_COMPUTER_RESPONSE = FRAME_COMPUTER_RESPONSE,
  FRAME_GATEWAY_REQUEST = FRAME_GATEWAY_REQUEST,
  FRAME_GATEWAY_RESPONSE = FRAME_GATEWAY_RESPONSE,
  EVENT_SEND = EVENT_SEND,
  EVENT_REPLY = EVENT_REPLY,
  EVENT_CONNECTED = EVENT_CONNECTED,
  EVENT_RECONNECT = EVENT_RECONNECT,
  EVENT_STATUS_REQUEST = EVENT_STATUS_REQUEST,
  EVENT_STATUS = EVENT_STATUS,
  traposId = traposId,
  localTraposId = localTraposId,
  newUuid = newUuid,
  normaliseUrl = normaliseUrl,
  urlHost = urlHost,
  normalisePayload = normalisePayload,
  normaliseError = normaliseError,
  encodeFrame = encodeFrame,
  decodeFrame = decodeFrame,
  defineSettings = defineSettings,
  waitFor = waitFor,
  request = request,
  requestStatus = requestStatus,
  reconnect = reconnect,
  STATE_DORMANT = STATE_DORMANT,
  STATE_DISABLED = STATE_DISABLED,
  STATE_CONNECTING = STATE_CONNECTING,
  STATE_AUTHENTICATING = STATE_AUTHENTICATING,
  STATE_CONNECTED = STATE_CONNECTED,
  STATE_WAITING = STATE_WAITING,
  STATE_UNAUTHORIZED = STATE_UNAUTHORIZED,
  STATE_STOPPED = STATE_STOPPED,
  HTTP_DISABLED = HTTP_DISABLED,
  URL_NOT_SET = URL_NOT_SET,
  newDaemon = newDaemon,
};
