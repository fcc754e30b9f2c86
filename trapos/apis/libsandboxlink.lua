-- libsandboxlink: the short session `sandbox link` holds with the gateway to link this
-- computer to an account (docs/protocol.md, "Linking a computer"). It opens a socket of its
-- own beside the daemon's, says hello with link:true (which registers nothing, so the daemon's
-- connection stays), and sends link.begin, link.poll and link.accept on it. Nothing here prints:
-- programs/sandbox.lua shows the code, asks the player and saves the credential, which the
-- daemon then says hello with.

local ccExpect = require('cc.expect');
local expect, field = ccExpect.expect, ccExpect.field;
local codec = require('/apis/libsandboxcodec');
local version = require('/apis/libsandboxversion');
local ai = require('/apis/libsandboxai');
local proofLib = require('/apis/libsandboxproof');
local advice = require('/apis/libsandboxadvice');

-- The request types of a link session (computer -> gateway).
local TYPE_BEGIN = "link.begin";
local TYPE_POLL = "link.poll";
local TYPE_ACCEPT = "link.accept";

-- A code's state, as link.poll (and link.begin with a key) answers it.
local STATE_PENDING = "pending";
local STATE_APPROVED = "approved";
local STATE_EXPIRED = "expired";

-- The error codes of the link requests besides the seed's: a code or key that is unknown,
-- expired, used or declined; a gateway without an account store; too many codes (the
-- message says when to try again).
local ERR_LINK_INVALID = "link_invalid";
local ERR_LINK_DISABLED = "link_disabled";
local ERR_BUSY = ai.ERR_BUSY;

-- What a link session is told when it is closed or never opens (the request error's code).
local ERR_NOT_CONNECTED, ERR_TIMEOUT = codec.ERR_NOT_CONNECTED, codec.ERR_TIMEOUT;
-- A gateway that answered the link hello as a plain hello: it predates linking.
local ERR_UNSUPPORTED = "link_unsupported";
-- A server that did not prove it is the gateway that proved itself here before (the message
-- says what it did, as the daemon says it): the session sent it nothing but the prove.
local ERR_NOT_PROVED = "not_proved";

-- The longest a link.poll waits at the gateway for the code's state to change (its maximum).
local POLL_WAIT_MS = 5000;
-- Seconds to wait for an answer beyond the gateway's own wait (the daemon's request timeout).
local ANSWER_WAIT = 10;
-- Seconds for the answer to link.begin with a key: a key spends the wrong-secret budget, and
-- past its burst the gateway holds a wrong one's answer back (docs/protocol.md).
local KEY_ANSWER_WAIT = 20;
-- Seconds for the socket to open; CC gives up on a connection by itself sooner.
local CONNECT_WAIT = 35;
-- Seconds to wait for websocket_closed, which says why, once a send finds the socket closed
-- (CC raises "attempt to use a closed file", which tells a player nothing, before that event
-- is pulled).
local CLOSE_EVENT_WAIT = 1;
-- The most frames a link session takes that it did not ask for: the gateway's idle probes
-- (a ping a minute at most, while the player thinks) and an answer come after its request
-- timed out. A gateway that sends more floods the computer: each frame is an event in CC's
-- queue of 256, and a flood keeps it full, so that the events past it are lost (a sleeping
-- program's timer among them), as the daemon's limits say (docs/protocol.md). The session is
-- then closed, with the code the daemon names such a gateway with.
local MAX_UNASKED_FRAMES = 64;
-- Marks the link session's URL (the gateway ignores the query): CC tells sockets apart only
-- by their URL, and the daemon's socket uses the plain one.
local LINK_QUERY = "link";

local FRAME_COMPUTER_REQUEST, FRAME_COMPUTER_RESPONSE = codec.FRAME_COMPUTER_REQUEST, codec.FRAME_COMPUTER_RESPONSE;
local FRAME_GATEWAY_REQUEST, FRAME_GATEWAY_RESPONSE = codec.FRAME_GATEWAY_REQUEST, codec.FRAME_GATEWAY_RESPONSE;

-- Whether text looks like an enrollment key (tsk_<id>_<secret>, from `trap-sandbox link key`).
local function isKey(text)
  expect(1, text, "string");
  return text:match("^tsk_[%w]+_[%w_-]+$") ~= nil;
end

-- The gateway's names for who approved a link when it was no account (docs/http-api.md): its
-- own token, SANDBOX_API_TOKEN or a loopback client without one ("local"), and its command line
-- on the store itself ("operator"). No account may take either, and a player knows neither:
-- "Approved by account alice (local)." read as another account, or as this computer.
local OPERATOR_APPROVERS = { ["local"] = true, operator = true };

-- Who approved a link, as the computer says it after "Approved by account alice": the
-- gateway's words in parentheses ("(bob (admin))", "(root (key kitchen))"), but its names for
-- its operator in words a player reads, the rest kept ("(by the gateway's operator)", "(by the
-- gateway's operator (key kitchen))" for an enrollment key its operator made).
local function approverShown(by)
  expect(1, by, "string");
  local name, rest = by:match("^(%S+)(.*)$");
  if name ~= nil and OPERATOR_APPROVERS[name] and (rest == "" or rest:find("^ %(") ~= nil) then
    return "(by the gateway's operator" .. rest .. ")";
  end
  return "(" .. by .. ")";
end

-- The longest link code this computer shows: the gateway's are 9 bytes (XXXX-XXXX); the approve
-- line's row of the code, indented 4, still fits a pocket computer's 26 columns.
local MAX_CODE_BYTES = 22;

-- Whether code is one a player can type and a shell takes as one plain word: letters, digits
-- and dashes, at most MAX_CODE_BYTES. Only such a code goes into the approve line.
local function isCode(code)
  return type(code) == "string" and #code <= MAX_CODE_BYTES and code:find("^[A-Za-z0-9][A-Za-z0-9-]*$") ~= nil;
end

-- The host command that approves code (isCode), as this computer shows it to the player, who
-- hands it to the account holder: built here, never the gateway's approveLine, so a hostile
-- gateway cannot put a command of its choosing on the screen as the one to run on the host
-- (another program, a --url of its own that takes the holder's API token, `; curl ... | sh`).
local function approveLine(code)
  expect(1, code, "string");
  return "trap-sandbox link approve " .. code;
end

-- The link session's URL: the gateway URL (already normalised) with the link query added.
local function linkUrl(url, tag)
  return url .. (url:find("?", 1, true) and "&" or "?") .. LINK_QUERY .. "=" .. tag;
end

-- A link session. deps: http (websocketAsync), os (startTimer, cancelTimer, getComputerID,
-- getComputerLabel) and pullEvent (os.pullEventRaw). Every wait yields only through pullEvent,
-- so a session runs inside parallel; terminate raises "Terminated", as os.pullEvent does.
local function newSession(deps)
  expect(1, deps, "table");
  field(deps, "http", "table");
  field(deps, "os", "table");
  field(deps, "pullEvent", "function");
  local http, osApi, pullEvent = deps.http, deps.os, deps.pullEvent;

  local url = nil;       -- the session's URL, as CC names its events
  local socket = nil;    -- the open websocket handle (methods take no self)
  local closedWhy = nil; -- why the socket closed, once it has
  local closeCode = nil;
  local closedAt = nil;  -- the step open was at when the socket closed unanswered (closedUnanswered)
  local unasked = 0;     -- frames of the gateway's that no request of ours waited for
  local traposId = codec.traposId(osApi.getComputerID(), osApi.getComputerLabel());

  local function markClosed(reason, code)
    closedWhy = tostring(reason or "Connection closed");
    closeCode = code;
    socket = nil;
  end

  local function send(frame)
    if socket == nil then
      return false, closedWhy or "the link session is not open";
    end
    local encoded, err = codec.encodeFrame(frame);
    if encoded == nil then
      return false, err;
    end
    local ok = pcall(function() socket.send(encoded); end);
    if not ok then
      -- The socket closed under us: its websocket_closed, with the reason, is on its way.
      markClosed(nil);
      return false, closedWhy, true;
    end
    return true;
  end

  -- Answers a request of the gateway's: its idle probe (ping) keeps the session alive while
  -- the player thinks; a link session serves nothing else.
  local function serve(frame)
    local ok = frame.type == codec.TYPE_PING;
    send({
      event = FRAME_COMPUTER_RESPONSE,
      traposSenderId = traposId,
      messageId = frame.messageId,
      type = frame.type,
      ok = ok,
      payload = ok and { traposId = traposId } or nil,
      error = not ok and { code = codec.ERR_UNKNOWN_TYPE, message = "a link session answers only ping" } or nil,
    });
  end

  -- Pulls events until found(event) returns something (returned), the socket closes (nil,
  -- "closed") or seconds pass (nil, "timeout"; nil seconds: no limit).
  local function pull(seconds, found)
    local timer = seconds and osApi.startTimer(seconds);
    local function done(...)
      if timer ~= nil then
        osApi.cancelTimer(timer);
      end
      return ...;
    end
    while true do
      local event = table.pack(pullEvent());
      local name = event[1];
      if name == "terminate" then
        done();
        error("Terminated", 0);
      elseif name == "timer" and timer ~= nil and event[2] == timer then
        timer = nil;
        return nil, "timeout";
      elseif (name == "websocket_closed" or name == "websocket_failure") and event[2] == url then
        local reason, code = event[3], event[4];
        if name == "websocket_closed" and code ~= nil and reason ~= nil then
          reason = advice.gatewaysCloseReason(tostring(reason), url); -- never read as CC's
        end
        markClosed(reason, code);
        return done(nil, "closed");
      elseif name == "websocket_message" and event[2] == url and socket ~= nil then
        local frame = codec.decodeFrame(event[3]);
        if frame ~= nil and frame.event == FRAME_GATEWAY_REQUEST then
          serve(frame);
        end
        local result = frame ~= nil and found(frame) or nil;
        if result ~= nil then
          return done(result);
        end
        unasked = unasked + 1;
        if unasked > MAX_UNASKED_FRAMES then
          local old = socket;
          pcall(function() old.close(); end);
          markClosed("the gateway sent " .. unasked .. " frames the link session did not ask for, more than the "
            .. MAX_UNASKED_FRAMES .. " it may (its pings, late answers): this computer closed it ("
            .. codec.CLOSE_TOO_MANY_REQUESTS .. " too many requests)", codec.CLOSE_TOO_MANY_REQUESTS);
          return done(nil, "closed");
        end
      elseif name == "websocket_success" and event[2] == url then
        local result = found(event);
        if result ~= nil then
          return done(result);
        end
      end
    end
  end

  -- Why a request failed, as the request error {code, message}.
  local function failure(outcome, seconds)
    if outcome == "timeout" then
      return { code = ERR_TIMEOUT, message = "the gateway did not answer within " .. seconds .. " seconds" };
    end
    return { code = ERR_NOT_CONNECTED, message = closedWhy or "the link session is not open", closeCode = closeCode,
      step = closedAt };
  end

  -- Sends a request and waits up to seconds for its answer. Returns ok, payload, error
  -- ({code, message}; a closed session is not_connected with CC's reason or the gateway's close
  -- reason, said as the gateway's where advice would read it as CC's, and closeCode).
  local function request(msgType, payload, seconds)
    expect(1, msgType, "string");
    expect(2, payload, "table");
    expect(3, seconds, "number");
    local messageId = codec.newUuid();
    local sent, _, closedUnderUs = send({ event = FRAME_COMPUTER_REQUEST, traposSenderId = traposId, messageId = messageId,
      type = msgType, payload = payload });
    if not sent then
      if closedUnderUs then
        pull(CLOSE_EVENT_WAIT, function() end); -- its websocket_closed says why (markClosed)
      end
      return false, nil, failure("closed");
    end
    local frame, outcome = pull(seconds, function(f)
      if f.event == FRAME_GATEWAY_RESPONSE and f.messageId == messageId then
        return f;
      end
    end);
    if frame == nil then
      return false, nil, failure(outcome, seconds);
    elseif not frame.ok then
      return false, nil, frame.error;
    end
    return true, frame.payload, nil;
  end

  -- Closes the session, if open.
  local function close()
    if socket ~= nil then
      local old = socket;
      socket = nil;
      closedWhy = closedWhy or "closed by this computer";
      pcall(function() old.close(); end);
    end
  end

  -- Asks the server to prove it is the gateway that proved itself here before, as the daemon
  -- asks before its hello (libsandboxproof): nil when it did, else the error not_proved.
  -- Whatever answers at the URL otherwise got the enrollment key the player typed, and its
  -- "approved" answer's credential became sandbox.password, whose proof it can make. The
  -- prove says link:true, so the gateway (0.5.36 on) keeps the socket open after its proved
  -- refusal of a revoked credential: that refusal counts as the proof, and the link goes on
  -- here, through the gateway that gave it (the way back of a revoked computer).
  local function prove(gatewayUrl, proveWith)
    local unkeyed = proveWith.secret == "";
    local wanted, payload, refusalWanted = proofLib.expectedProof(proveWith.secret, proofLib.newNonce({ os = osApi }),
      proveWith.key);
    payload.link = true;
    local answered, proved, err = request(codec.TYPE_PROVE, payload, proofLib.PROOF_WAIT);
    local detail, says, provedRefusal;
    if not answered and err.code == ERR_TIMEOUT then
      detail = "sent no proof within " .. proofLib.PROOF_WAIT .. " s";
    elseif not answered and err.code == ERR_NOT_CONNECTED then
      detail = "closed the connection before its proof";
    else
      detail, says, provedRefusal = proofLib.proveAnswerFault(answered, proved, err, wanted, refusalWanted);
      if (detail == nil and says == nil) or provedRefusal then
        return nil;
      end
    end
    -- refusedCredential: the server refused, in words of its own and without the gateway's
    -- proof of them, to prove itself for this computer's credential: an older gateway's
    -- refusal of a revoked one (or the words of one it does not hold), or another program's.
    return { code = ERR_NOT_PROVED, message = proofLib.notProvedWhy(gatewayUrl, proveWith.since, unkeyed, detail, says),
      refusedCredential = says ~= nil and not unkeyed and payload.credential ~= nil };
  end

  -- Opens the session to the gateway at gatewayUrl (normalised) and says hello with link:true;
  -- a session closed (or never opened) may be opened again. proveWith, for a URL whose gateway proved itself here ({since, secret, key}: the record's
  -- since and proof key, and sandbox.password), asks it for the proof first, as the daemon does.
  -- Returns true, or false and the error: not_connected with CC's reason when the socket
  -- does not open; not_proved (closed then; refusedCredential set for a credential's proof
  -- refused in the server's words); the hello's error; link_unsupported when the
  -- gateway answered it as a plain hello (it predates linking and may have registered this
  -- socket as the computer).
  local function open(gatewayUrl, proveWith)
    expect(1, gatewayUrl, "string");
    expect(2, proveWith, "table", "nil");
    if proveWith ~= nil then
      field(proveWith, "since", "number");
      field(proveWith, "secret", "string");
      field(proveWith, "key", "string", "nil");
    end
    -- A session is opened anew after one that closed: nothing of the first is said of the
    -- second.
    closedWhy, closeCode, closedAt, unasked = nil, nil, nil, 0;
    url = linkUrl(gatewayUrl, tostring(math.random(1, 2 ^ 30)));
    local ok, result, err = pcall(function() return http.websocketAsync(url); end);
    if not ok then
      markClosed(result);
      return false, failure("closed");
    elseif not result then
      markClosed(err or "Could not connect");
      return false, failure("closed");
    end
    local opened, outcome = pull(CONNECT_WAIT, function(event)
      if event[1] == "websocket_success" then
        return event[3];
      end
    end);
    if opened == nil then
      if outcome == "timeout" then
        markClosed("Timed out");
      else
        closedAt = "the WebSocket upgrade";
      end
      return false, failure("closed");
    end
    socket = opened;
    if proveWith ~= nil then
      local notProved = prove(gatewayUrl, proveWith);
      if notProved ~= nil then
        close();
        return false, notProved;
      end
    end
    local helloOk, payload, helloErr = request(codec.TYPE_HELLO,
      { traposId = traposId, clientVersion = version.VERSION, link = true }, ANSWER_WAIT);
    if not helloOk then
      if helloErr.code == ERR_NOT_CONNECTED and helloErr.closeCode == nil then
        closedAt = "hello"; -- closed with no close frame before hello's answer
        helloErr.step = closedAt;
      end
      return false, helloErr;
    elseif payload.link ~= true then
      return false, { code = ERR_UNSUPPORTED, message = "the gateway answered the link hello as a plain hello" };
    end
    return true;
  end

  -- Serves the session (the gateway's pings) until it closes; returns why it closed. For
  -- parallel, beside a question to the player.
  local function keepAlive()
    while socket ~= nil do
      pull(nil, function() end);
    end
    return closedWhy;
  end

  return {
    open = open,
    request = request,
    keepAlive = keepAlive,
    close = close,
    isOpen = function() return socket ~= nil; end,
    closedWhy = function() return closedWhy, closeCode; end,
  };
end

return {
  TYPE_BEGIN = TYPE_BEGIN,
  TYPE_POLL = TYPE_POLL,
  TYPE_ACCEPT = TYPE_ACCEPT,
  STATE_PENDING = STATE_PENDING,
  STATE_APPROVED = STATE_APPROVED,
  STATE_EXPIRED = STATE_EXPIRED,
  ERR_LINK_INVALID = ERR_LINK_INVALID,
  ERR_LINK_DISABLED = ERR_LINK_DISABLED,
  ERR_BUSY = ERR_BUSY,
  ERR_UNSUPPORTED = ERR_UNSUPPORTED,
  ERR_NOT_PROVED = ERR_NOT_PROVED,
  POLL_WAIT_MS = POLL_WAIT_MS,
  ANSWER_WAIT = ANSWER_WAIT,
  KEY_ANSWER_WAIT = KEY_ANSWER_WAIT,
  CONNECT_WAIT = CONNECT_WAIT,
  MAX_UNASKED_FRAMES = MAX_UNASKED_FRAMES,
  CLOSE_TOO_MANY_REQUESTS = codec.CLOSE_TOO_MANY_REQUESTS,
  LINK_QUERY = LINK_QUERY,
  MAX_CODE_BYTES = MAX_CODE_BYTES,
  isKey = isKey,
  isCode = isCode,
  approverShown = approverShown,
  approveLine = approveLine,
  linkUrl = linkUrl,
  newSession = newSession,
};
