-- libsandboxdaemon: the sandbox daemon's state machine, as a factory of event handlers.
-- It holds the computer's one WebSocket to the gateway: connects from the settings, says
-- hello, answers gateway requests, forwards program requests and reconnects after a loss.
-- servers/sandbox.lua feeds it events; nothing here pulls events or sleeps.

local ccExpect = require('cc.expect');
local expect, field = ccExpect.expect, ccExpect.field;
local codec = require('/apis/libsandboxcodec');
local config = require('/apis/libsandboxsettings');
local events = require('/apis/libsandboxevents');
local version = require('/apis/libsandboxversion');
local requestsLib = require('/apis/libsandboxrequests');
local advice = require('/apis/libsandboxadvice');
local proofLib = require('/apis/libsandboxproof');

-- Seconds between a lost connection and the next attempt, plus up to RECONNECT_JITTER more at
-- random: a Minecraft server's computers all lose the gateway at once when it restarts, and
-- must not all come back in the same tick.
local RECONNECT_DELAY = 5;
local RECONNECT_JITTER = 1;
-- A gateway that breaks every socket soon after it opens (one that sends a frame CC refuses
-- right after hello, or answers hello with an error) is tried again after a wait that doubles
-- with each such socket, from RECONNECT_DELAY (the first reconnect stays prompt) up to
-- RECONNECT_MAX_DELAY; a socket that stayed connected HEALTHY_AFTER seconds starts it again
-- from RECONNECT_DELAY, and so does a reconnect the player asks for.
local RECONNECT_MAX_DELAY = 60;
local HEALTHY_AFTER = 60;
-- Seconds an open socket may wait for the hello answer before it is presumed dead (a frozen
-- gateway keeps TCP open and says nothing). After hello, the answer's livenessMs sets the
-- bound instead; this is its default in the gateway (idle probe 60 s + request timeout 10 s).
local HELLO_ANSWER_WAIT = 70;
-- Seconds a gateway that proved itself here before has to send its proof (libsandboxproof).
local PROOF_WAIT = proofLib.PROOF_WAIT;
-- The package whose version a hello answer's servedClient must name to be shown.
local SERVED_NAME = "trapos-sandbox";
-- Seconds an attempt to connect may go without its outcome (websocket_success or
-- websocket_failure) before it is taken as lost and tried again. CC gives up on a connection
-- within its 30 s timeout, but the event saying so can be dropped from its full queue
-- (EVENT_QUEUE_LIMIT), and the daemon would wait for it for good.
local CONNECT_WAIT = 35;
-- Seconds between two looks at the computer's label. CC has no event for a label change, and
-- the traposId (id:label) is fixed per hello, so a renamed computer reconnects under its new
-- name within this time, or at once when a program asks the daemon's status (sandbox status).
local LABEL_CHECK_INTERVAL = 15;
-- bye's reasons (docs/protocol.md): the gateway closes the socket with 1000 and the reason, and
-- its log says it. A label change (its log names the new traposId), `sandbox stop`, and a
-- reconnect the player asked for (`sandbox reconnect`, a changed URL or password).
local BYE_RELABELLED, BYE_STOPPED, BYE_RECONNECTING = "relabelled", "stopped", "reconnecting";
-- CC's event queue holds at most this many events and drops the rest. A marker the daemon
-- queues is therefore seen within this many events, or was dropped.
local EVENT_QUEUE_LIMIT = events.EVENT_QUEUE_LIMIT;
-- Seconds (plus the jitter) before reconnecting to a gateway dropped for more frames waiting
-- than it may have in flight: each flood it sends again can then fill CC's queue, and cost a
-- sleeping program its timer, once a minute at most instead of all the time.
local OVERLOAD_RECONNECT_DELAY = 60;

-- Daemon states, as reported by status().state.
local STATE_DORMANT = "dormant";           -- sandbox.url is not set
local STATE_DISABLED = "disabled";         -- the http API is absent
local STATE_CONNECTING = "connecting";     -- websocketAsync called, no outcome yet
local STATE_AUTHENTICATING = "authenticating"; -- socket open, hello sent
local STATE_CONNECTED = "connected";       -- hello accepted
local STATE_WAITING = "waiting";           -- lost the socket, reconnect timer running
local STATE_UNAUTHORIZED = "unauthorized"; -- hello rejected: terminal until settings change
local STATE_REPLACED = "replaced";         -- closed 4009: terminal until settings change or reconnect
local STATE_REVOKED = "revoked";           -- closed 4003: terminal until settings change or reconnect
local STATE_STOPPED = "stopped";           -- `sandbox stop`: disconnected until a reconnect

-- Close codes after which reconnecting cannot help (docs/protocol.md): another socket said
-- hello for this computer (replaced; reconnecting would evict it in turn, and the two would
-- knock each other off forever), or the computer's credential was revoked.
local CLOSE_REPLACED, CLOSE_REVOKED = 4009, 4003;
local TERMINAL_CLOSES = {
  [CLOSE_REPLACED] = { state = STATE_REPLACED,
    why = "replaced: another computer said hello with this computer's id" },
  [CLOSE_REVOKED] = { state = STATE_REVOKED, why = "revoked: this computer's credential was revoked" },
};

local HTTP_DISABLED = "http API is disabled (enable it in the server config)";
local URL_NOT_SET = "sandbox.url is not set";

local traposId, newUuid, oneLine = codec.traposId, codec.newUuid, codec.oneLine;
local encodeFrame, decodeFrame = codec.encodeFrame, codec.decodeFrame;
local normaliseUrl, defineSettings = config.normaliseUrl, config.defineSettings;
local SETTING_URL, SETTING_PASSWORD = config.SETTING_URL, config.SETTING_PASSWORD;
local ERR_UNAUTHORIZED = codec.ERR_UNAUTHORIZED;
local ERR_NOT_CONNECTED, ERR_INTERNAL = codec.ERR_NOT_CONNECTED, codec.ERR_INTERNAL;
local MAX_GATEWAY_REQUESTS, CLOSE_TOO_MANY_REQUESTS = codec.MAX_GATEWAY_REQUESTS, codec.CLOSE_TOO_MANY_REQUESTS;
local MAX_COMPUTER_REQUESTS = codec.MAX_COMPUTER_REQUESTS;
local FRAME_COMPUTER_REQUEST, FRAME_COMPUTER_RESPONSE = codec.FRAME_COMPUTER_REQUEST, codec.FRAME_COMPUTER_RESPONSE;
local FRAME_GATEWAY_REQUEST, FRAME_GATEWAY_RESPONSE = codec.FRAME_GATEWAY_REQUEST, codec.FRAME_GATEWAY_RESPONSE;
local EVENT_SEND, EVENT_REPLY, EVENT_CONNECTED = events.EVENT_SEND, events.EVENT_REPLY, events.EVENT_CONNECTED;
local EVENT_RECONNECT, EVENT_STATUS_REQUEST, EVENT_STATUS = events.EVENT_RECONNECT, events.EVENT_STATUS_REQUEST, events.EVENT_STATUS;
local EVENT_STOP, EVENT_RETRY_NOW = events.EVENT_STOP, events.EVENT_RETRY_NOW;
local EVENT_MARK = events.EVENT_MARK;

-- The daemon as a factory of event handlers. deps: settings, os (queueEvent, startTimer,
-- cancelTimer, getComputerID, getComputerLabel, epoch, clock, day, time), http (nil when
-- disabled), and optionally clock (epoch ms), random (a number in [0, 1)), log(message) for
-- the faults status() counts (never the player's screen: servers/sandbox.lua writes a log
-- file), proofs (provesSince(url), proofKey(url), remember(url, since, key): the record of the gateways that
-- proved themselves, libsandboxproof's by default), and what gateway requests use (libsandboxrequests): fs, term, peripheral, pocket, host,
-- shell and env (the globals by default).
-- servers/sandbox.lua drives handle().
local function newDaemon(deps)
  expect(1, deps, "table");
  field(deps, "settings", "table");
  field(deps, "os", "table");
  field(deps, "http", "table", "nil");
  field(deps, "clock", "function", "nil");
  field(deps, "ticks", "function", "nil");
  field(deps, "random", "function", "nil");
  field(deps, "log", "function", "nil");
  field(deps, "env", "table", "nil");
  field(deps, "proofs", "table", "nil");
  local http = deps.http;
  local settingsApi = deps.settings;
  local osApi = deps.os;
  local clock = deps.clock or function() return osApi.epoch("utc"); end;
  -- The seconds of the clock CC's timers run on (os.clock: the server's ticks). On a server
  -- that lags, a timer of 5 s takes longer than 5 s of the epoch; the wait a status names is
  -- measured on this clock, or "waiting (1 s)" stood for seconds while the timer ran.
  local ticks = deps.ticks or function() return osApi.clock(); end;
  local log = deps.log or function() end;
  local random = deps.random or math.random;
  local proofs = deps.proofs or proofLib;

  local state = STATE_DORMANT;
  local url = nil;             -- normalised URL of the current attempt / socket
  local socket = nil;          -- open websocket handle (methods take no self)
  local helloId = nil;         -- messageId of the hello awaiting its answer
  -- While the gateway is asked to prove itself before the hello: the prove's messageId, the
  -- proof it must answer with, since when (epoch ms) it proves itself here, and the wait;
  -- proofUnkeyed: the prove went out with no sandbox.password, which no server can prove to;
  -- refusalWanted: the proof the gateway gives with its refusal of a revoked credential.
  local proveId, proofWanted, provedSince, proofTimer = nil, nil, nil, nil;
  local proofUnkeyed, refusalWanted = false, nil;
  local sessionId = nil;       -- traposId declared in the current session's hello
  local account = nil;         -- the accountId the gateway answered that hello with
  local credentialKind = nil;  -- how its credential was made ("linked", "issued"), as that answer said
  local proves = nil;          -- whether that answer said the gateway proves itself (proves:true)
  -- The trapos-sandbox version the gateway serves at /trapos/install, as the last hello answer
  -- named it (servedClient); nil when it named none, or none in MAJOR.MINOR.PATCH form. Kept
  -- while disconnected: sandbox status tells the player to upgrade when it is newer.
  local served = nil;
  local lastError = nil;
  local stateSince = clock();
  local reconnectTimer = nil;
  local retryAt = nil;         -- clock() the reconnect timer is due, while waiting
  local retryTick = nil;       -- ticks() it is due
  local churn = 0;             -- sockets in a row that broke before they stayed HEALTHY_AFTER s
  local askedTryTick = nil;    -- ticks() of the last try a program asked for (EVENT_RETRY_NOW)
  local connectedAt = nil;     -- clock() of the hello answer on the current socket
  -- Hellos answered ok since the daemon started: a program waiting for the gateway to come
  -- back (libsandbox.awaitReconnect) sees one that came and went again between two looks.
  local connections = 0;
  -- The URLs whose gateway answered a hello ok since the daemon started (the computer's boot),
  -- each with the clock() of the last frame it sent on a connection that said hello: a
  -- connection closed there without an answer is that gateway stopping or restarting, and
  -- nothing answering there is that gateway stopped since (whyUnanswered); one closed at a URL
  -- that never answered may be another server's port.
  local answeredAt = {};
  local labelTimer = nil;
  -- Liveness: a live gateway sends some frame (at worst its idle-probe ping) at least every
  -- livenessMs; a socket silent longer is dead even if TCP says nothing (a frozen gateway, a
  -- cut network, a NAT that forgot the mapping). CC's websocket sends no pings of its own.
  local livenessTimer = nil;
  local livenessMs = nil;      -- the bound in force on this socket, nil for none
  local lastFrameAt = nil;     -- clock() of the last frame the gateway sent on this socket
  local inflight = {};         -- messageId -> true, requests sent on the current socket
  local pending = {};          -- url -> how many websocketAsync calls have had no outcome yet
  local attempt = nil;         -- {url, timer}: the call the daemon is connecting with, and its CONNECT_WAIT
  -- The gateway's frames in flight (docs/protocol.md): owed counts its requests on this
  -- socket that we have not answered yet; mark is the marker event queued behind the frames
  -- that wait in CC's queue, {token, allowed, waiting, events}: waiting counts the frames
  -- handled before it comes back, all of which were in the queue together.
  local owed = 0;
  local owedByType = {};       -- type -> how many of owed: the refusal past the limit names the most
  local mark = nil;
  local markSeq = 0;
  local closedUnderUs = false; -- CC closed the socket; its websocket_closed will say why
  local faults, lastFault = 0, nil;

  local requests = requestsLib.newRequests({
    settings = settingsApi,
    os = osApi,
    fs = deps.fs or fs,
    term = deps.term or term,
    peripheral = deps.peripheral or peripheral,
    pocket = deps.pocket or pocket,
    host = deps.host or _HOST,
    shell = deps.shell or shell,
    env = deps.env or _G,
    keys = deps.keys,
    traposId = function() return sessionId or traposId(osApi.getComputerID(), osApi.getComputerLabel()); end,
  });

  -- A fault of the daemon's own (a failing handler, an answer it cannot send, a gateway it
  -- drops): counted for status() and logged, never printed on the player's screen. It may
  -- quote the gateway (a request's type), so it is kept as one line of bounded length.
  local function fault(message)
    faults = faults + 1;
    lastFault = oneLine(tostring(message));
    log(lastFault);
  end

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
      return "the sandbox daemon has stopped (sandbox stop): run sandbox reconnect";
    elseif lastError ~= nil then
      return lastError;
    elseif state == STATE_AUTHENTICATING then
      return config.helloUnanswered(url);
    end
    return "still connecting to " .. tostring(url);
  end

  local function reply(messageId, ok, payload, err)
    osApi.queueEvent(EVENT_REPLY, messageId, ok, payload, err);
  end

  local function replyNotConnected(messageId, why)
    reply(messageId, false, nil, { code = ERR_NOT_CONNECTED, message = why or whyNotConnected() });
  end

  -- How many requests of ours the gateway has not answered yet on this socket.
  local function openRequests()
    local n = 0;
    for _ in pairs(inflight) do
      n = n + 1;
    end
    return n;
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

  local function stopLiveness()
    if livenessTimer ~= nil then
      osApi.cancelTimer(livenessTimer);
      livenessTimer = nil;
    end
    livenessMs = nil;
  end

  -- Watches the socket for silence longer than ms.
  local function watchLiveness(ms)
    stopLiveness();
    livenessMs = ms;
    livenessTimer = osApi.startTimer(ms / 1000);
  end

  local function closeSocket()
    if labelTimer ~= nil then
      osApi.cancelTimer(labelTimer);
      labelTimer = nil;
    end
    stopLiveness();
    if socket ~= nil then
      local old = socket;
      socket = nil;
      -- CC allows 4 open sockets; a dead socket's close may raise "closed file": ignore.
      pcall(function() old.close(); end);
    end
    helloId = nil;
    sessionId = nil;
    if proofTimer ~= nil then
      osApi.cancelTimer(proofTimer);
    end
    proveId, proofWanted, provedSince, proofTimer = nil, nil, nil, nil;
    requests.socketClosed();
    account = nil;
    credentialKind = nil;
    proves = nil;
    connectedAt = nil;
    owed, owedByType, mark = 0, {}, nil;
  end

  -- The daemon no longer waits for its attempt's outcome (it came, or the daemon gave up).
  local function endAttempt()
    if attempt ~= nil then
      osApi.cancelTimer(attempt.timer);
      attempt = nil;
    end
  end

  local function cancelReconnect()
    if reconnectTimer ~= nil then
      osApi.cancelTimer(reconnectTimer);
      reconnectTimer = nil;
    end
    retryAt, retryTick = nil, nil;
  end

  local function scheduleReconnect(delay)
    cancelReconnect();
    setState(STATE_WAITING);
    local seconds = (delay or RECONNECT_DELAY) + RECONNECT_JITTER * random();
    reconnectTimer = osApi.startTimer(seconds);
    retryAt = clock() + seconds * 1000;
    retryTick = ticks() + seconds;
  end

  -- The wait after losing an open socket: RECONNECT_DELAY after one that stayed connected
  -- HEALTHY_AFTER seconds, else twice the last wait, up to RECONNECT_MAX_DELAY.
  local function churnDelay()
    if connectedAt ~= nil and clock() - connectedAt >= HEALTHY_AFTER * 1000 then
      churn = 0;
    end
    churn = churn + 1;
    return math.min(RECONNECT_DELAY * 2 ^ math.min(churn - 1, 16), RECONNECT_MAX_DELAY);
  end

  -- Drops the socket after an error and tries again in delay (default RECONNECT_DELAY, or
  -- longer for a gateway that keeps breaking its sockets: churnDelay) seconds, plus the jitter.
  local function lose(reason, delay)
    lastError = reason;
    endAttempt();
    if socket ~= nil then
      delay = math.max(delay or RECONNECT_DELAY, churnDelay());
    end
    closeSocket();
    failInflight("lost the connection: " .. reason);
    scheduleReconnect(delay);
  end

  -- Sends a frame. A send that fails on the socket means CC has closed it (a remote close or
  -- an error: "attempt to use a closed file"); the socket is dropped at once, and the
  -- websocket_closed event behind it, if CC's queue kept it, names the reason.
  local function sendFrame(frame)
    local encoded, err = encodeFrame(frame);
    if encoded == nil then
      return false, err, ERR_INTERNAL;
    end
    local ok, sendErr = pcall(function() socket.send(encoded); end);
    if not ok then
      sendErr = tostring(sendErr):gsub("^[^:]*:%d+: ", ""); -- CC's message, without our position
      lose("the connection closed (" .. sendErr .. ")");
      closedUnderUs = true;
      return false, sendErr, ERR_NOT_CONNECTED;
    end
    return true;
  end

  local function connect()
    closeSocket();
    cancelReconnect();
    closedUnderUs = false;
    failInflight("reconnecting to the gateway");
    if http == nil then
      endAttempt();
      url = nil;
      lastError = HTTP_DISABLED;
      setState(STATE_DISABLED);
      return;
    end
    url = normaliseUrl(settingsApi.get(SETTING_URL));
    if url == nil then
      endAttempt();
      setState(STATE_DORMANT);
      return;
    end
    setState(STATE_CONNECTING);
    if attempt ~= nil and attempt.url == url then
      -- An attempt on this very URL is still running: its outcome is ours.
      return;
    end
    endAttempt();
    local ok, result, err = pcall(function() return http.websocketAsync(url); end);
    if not ok then
      lastError = tostring(result);
      scheduleReconnect();
    elseif result == false or result == nil then
      -- CC also queues websocket_failure for this; we are no longer connecting by then.
      lastError = tostring(err or "could not connect");
      scheduleReconnect();
    else
      pending[url] = (pending[url] or 0) + 1;
      attempt = { url = url, timer = osApi.startTimer(CONNECT_WAIT) };
    end
  end

  -- An outcome of one of our websocketAsync calls on eventUrl: whether there was one without.
  local function settle(eventUrl)
    local count = pending[eventUrl];
    if count == nil then
      return false;
    end
    pending[eventUrl] = count > 1 and count - 1 or nil;
    return true;
  end

  local function sendHello()
    helloId = newUuid();
    sessionId = currentTraposId();
    local secret = config.password(settingsApi);
    local ok, err, code = sendFrame({
      event = FRAME_COMPUTER_REQUEST,
      traposSenderId = sessionId,
      messageId = helloId,
      type = "hello",
      payload = { traposId = sessionId, secret = secret, clientVersion = version.VERSION },
    });
    if not ok and code == ERR_INTERNAL then
      lose("cannot send hello: " .. err);
    end
  end

  -- The server at url did not prove it is the gateway that proved itself here before: the
  -- secret stays unsent, the socket is dropped, and the usual schedule tries again (the real
  -- gateway back on its port is then taken). detail says what the server did; says, its own
  -- words of a refusal instead (libsandboxproof.notProvedWhy).
  local function notProved(detail, says)
    local why = proofLib.notProvedWhy(tostring(url), provedSince or 0, proofUnkeyed, detail, says);
    log(why);
    lose(why);
  end

  -- Asks the gateway at url, which proved itself here since `since`, to prove itself again
  -- before the hello: a nonce of this socket's, and the key the computer's secret names.
  local function sendProve(since)
    provedSince = since;
    sessionId = currentTraposId();
    local nonce = proofLib.newNonce({ os = osApi, random = random });
    local secret = config.password(settingsApi);
    proofUnkeyed = secret == "";
    local payload;
    -- With the gateway's slow key recorded, the password's proof asked for is version 2.
    proofWanted, payload, refusalWanted = proofLib.expectedProof(secret, nonce, proofs.proofKey(url));
    proveId = newUuid();
    proofTimer = osApi.startTimer(PROOF_WAIT);
    local ok, err, code = sendFrame({
      event = FRAME_COMPUTER_REQUEST,
      traposSenderId = sessionId,
      messageId = proveId,
      type = codec.TYPE_PROVE,
      payload = payload,
    });
    if not ok and code == ERR_INTERNAL then
      lose("cannot send prove: " .. err);
    end
  end

  -- The gateway refused the hello's secret, or proved that it refuses it: terminal, as
  -- retrying with the same secret cannot succeed.
  local function refused(message)
    lastError = "unauthorized: " .. oneLine(message);
    closeSocket();
    cancelReconnect();
    setState(STATE_UNAUTHORIZED);
  end

  -- The answer to the prove: the hello goes out only after the proof the computer computed. A
  -- refusal the gateway proved (a revoked credential's) is its word, as a hello's refusal.
  local function onProof(frame)
    local detail, says, provedRefusal = proofLib.proveAnswerFault(frame.ok, frame.payload, frame.error, proofWanted,
      refusalWanted);
    if detail == nil and says == nil then
      osApi.cancelTimer(proofTimer);
      proveId, proofWanted, proofTimer = nil, nil, nil;
      watchLiveness(HELLO_ANSWER_WAIT * 1000);
      sendHello();
    elseif provedRefusal then
      log("the gateway at " .. tostring(url) .. " proved that it refuses this computer's credential: " .. says);
      refused(says);
    else
      notProved(detail, says);
    end
  end

  local function onHelloResponse(frame)
    helloId = nil;
    if frame.ok then
      lastError = nil;
      setState(STATE_CONNECTED);
      connectedAt = clock();
      connections = connections + 1;
      answeredAt[url] = clock();
      -- Whose computer this is now (a linked credential's account, or local): sandbox status.
      -- Only a name in the gateway's shape: sandbox status shows it, and sandbox link asks by it.
      account = codec.accountName(frame.payload.accountId);
      -- A credential set by hand (trap-sandbox credentials add) is not a linked one.
      local kind = frame.payload.credentialKind;
      credentialKind = type(kind) == "string" and kind ~= "" and oneLine(kind) or nil;
      -- What the gateway serves (an older gateway names nothing; garbage is ignored).
      local client = frame.payload.servedClient;
      served = nil;
      if type(client) == "table" and client.name == SERVED_NAME and version.parse(client.version) then
        served = client.version;
      end
      -- A gateway that can prove itself to this computer is asked to, from now on, before
      -- each hello to this URL (an older gateway says nothing of it). The slow key it gives
      -- with the password is recorded with it, also where the record has none yet (made by
      -- 0.5.32 or 0.5.33): the proves after it ask for version 2.
      proves = frame.payload.proves == true;
      if proves then
        local key = frame.payload.proofKey;
        key = proofLib.isProofKey(key) and key or nil;
        local since = proofs.provesSince(url);
        if since == nil or (key ~= nil and key ~= proofs.proofKey(url)) then
          proofs.remember(url, since or clock(), key);
        end
      end
      local announced = type(frame.payload) == "table" and frame.payload.livenessMs or nil;
      -- A bound CC's timers can take: a positive, finite number (JSON's 1e999 decodes as inf).
      if type(announced) == "number" and announced > 0 and announced < math.huge then
        watchLiveness(announced);
      else
        stopLiveness(); -- an older gateway announces no bound: trust TCP, as before
      end
      labelTimer = osApi.startTimer(LABEL_CHECK_INTERVAL);
      osApi.queueEvent(EVENT_CONNECTED, sessionId);
    elseif frame.error.code == ERR_UNAUTHORIZED then
      refused(frame.error.message);
    else
      lose("hello failed: " .. oneLine(frame.error.code) .. ": " .. oneLine(frame.error.message));
    end
  end

  -- Answers a gateway request, now or later (lua.exec, program-served types): the answer
  -- goes out only on the socket the request came in on. Past MAX_GATEWAY_REQUESTS unanswered
  -- (a gateway that gave up on requests whose jobs still run), a request is answered at once
  -- with internal, as the gateway answers a computer's requests past its own limit.
  local function onGatewayRequest(frame)
    local requestSocket = socket;
    local senderId = sessionId or currentTraposId();
    local answered = false;
    local function done(ok, payload, err)
      if answered or socket == nil or socket ~= requestSocket then
        return; -- answered already, or the connection that asked is gone with the gateway's wait
      end
      answered = true;
      owed = owed - 1;
      -- A type none is owed of is forgotten: a gateway sending ever new types (each up to
      -- 128 KiB) would otherwise grow this table, the computer's memory with it, without end.
      local left = owedByType[frame.type] - 1;
      owedByType[frame.type] = left > 0 and left or nil;
      local response = {
        event = FRAME_COMPUTER_RESPONSE,
        traposSenderId = senderId,
        messageId = frame.messageId,
        type = frame.type,
        ok = ok == true,
        payload = ok == true and payload or nil,
        error = ok ~= true and err or nil,
      };
      local sent, sendErr, code = sendFrame(response);
      if not sent and code == ERR_INTERNAL then
        -- Too big or unencodable: say so instead of leaving the gateway to time out, with
        -- the fix for a big one (whoever asked can read a file in parts).
        response.ok, response.payload = false, nil;
        local fix = sendErr:find("^Message is too large") and ": return less, or write it to a file on the computer and read the file" or "";
        response.error = { code = ERR_INTERNAL, message = "the answer to " .. frame.type .. " cannot be sent: " .. sendErr .. fix };
        sent, sendErr, code = sendFrame(response);
      end
      if not sent and code == ERR_INTERNAL then
        fault("cannot answer " .. frame.type .. ": " .. sendErr);
      end
    end
    -- Past the limit every request is refused until some are answered, ping included: name
    -- the type that holds the most (a program's handler that never answers, lua.exec jobs).
    local busiest, count = nil, 0;
    if owed >= MAX_GATEWAY_REQUESTS then
      for msgType, n in pairs(owedByType) do
        if n > count or (n == count and n > 0 and msgType < busiest) then
          busiest, count = msgType, n;
        end
      end
    end
    owed = owed + 1;
    owedByType[frame.type] = (owedByType[frame.type] or 0) + 1;
    if busiest ~= nil then
      return done(false, nil, { code = ERR_INTERNAL, message = "this computer already has " .. MAX_GATEWAY_REQUESTS
        .. " requests from the gateway in flight (the protocol's limit), " .. count .. " of them " .. oneLine(busiest)
        .. "; retry once they are answered" });
    end
    if frame.payloadError ~= nil then
      return done(false, nil, { code = codec.ERR_BAD_PAYLOAD, message = frame.payloadError });
    end
    requests.serve(frame.type, frame.payload, done);
  end

  -- Drops a gateway that broke the protocol's in-flight limit, and waits longer than after
  -- a loss before trying it again. CC's close() sends no close code: the code is for lastError.
  local function overloaded(waiting, allowed)
    local why = "closed the connection (" .. CLOSE_TOO_MANY_REQUESTS .. " too many requests): the gateway had "
      .. waiting .. " frames waiting here at once, more than the " .. allowed .. " it may have in flight"
      .. " (docs/protocol.md); reconnecting in " .. OVERLOAD_RECONNECT_DELAY .. " s";
    fault(why);
    lose(why, OVERLOAD_RECONNECT_DELAY);
  end

  -- Counts a frame from the gateway against what it may have in flight: its unanswered
  -- requests (MAX_GATEWAY_REQUESTS) and one answer to each request of ours still open. All
  -- frames handled before the marker comes back were waiting in CC's queue together, so the
  -- gateway had them all in flight at once. A flood of requests, even ones answered at once,
  -- fills CC's queue of 256 events and the events past it are lost, a sleeping program's
  -- timer among them: the daemon cannot refuse what CC queues, but it stops listening to
  -- such a gateway. Returns false once it has.
  local function countFrame()
    if mark == nil then
      local answers = (helloId ~= nil and 1 or 0) + openRequests();
      markSeq = markSeq + 1;
      mark = { token = markSeq, allowed = MAX_GATEWAY_REQUESTS + answers, waiting = 0, events = 0 };
      osApi.queueEvent(EVENT_MARK, markSeq);
    end
    mark.waiting = mark.waiting + 1;
    if mark.waiting > mark.allowed then
      overloaded(mark.waiting, mark.allowed);
      return false;
    end
    return true;
  end

  -- Every event the daemon sees passes here first: the marker ends its count when it comes
  -- back, and a marker not back within EVENT_QUEUE_LIMIT events was dropped from a full queue.
  local function watchMark(event, token)
    if mark == nil then
      return;
    elseif event == EVENT_MARK and token == mark.token then
      mark = nil;
      return;
    end
    mark.events = mark.events + 1;
    if mark.events >= EVENT_QUEUE_LIMIT then
      mark = nil;
    end
  end

  local function onMessage(eventUrl, contents)
    if eventUrl ~= url or socket == nil then
      return;
    end
    lastFrameAt = clock(); -- any frame, even one we ignore, shows the gateway alive
    if state == STATE_CONNECTED then
      answeredAt[url] = lastFrameAt;
    end
    if not countFrame() then
      return;
    end
    local frame = decodeFrame(contents);
    if frame == nil then
      return; -- malformed frames are ignored
    end
    if proveId ~= nil then
      -- Until it has proved itself, the server is nobody: its requests go unanswered.
      if frame.event == FRAME_GATEWAY_RESPONSE and frame.messageId == proveId then
        onProof(frame);
      end
      return;
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
    local wasPending = settle(eventUrl);
    if eventUrl == url and state == STATE_CONNECTING and socket == nil then
      endAttempt();
      socket = newSocket;
      setState(STATE_AUTHENTICATING);
      lastFrameAt = clock();
      local since = proofs.provesSince(url);
      if since ~= nil then
        sendProve(since);
      else
        watchLiveness(HELLO_ANSWER_WAIT * 1000);
        sendHello();
      end
    elseif wasPending and type(newSocket) == "table" then
      -- A stale attempt of ours (the URL changed meanwhile, or it was given up on): free
      -- the socket slot.
      pcall(function() newSocket.close(); end);
    end
  end

  -- Why an open socket closed, from websocket_closed's reason and code. CC closes it by itself,
  -- with no code, when reading fails: "Could not connect" (its word for any error, a frame it
  -- refuses too: text that is not UTF-8, a broken frame) or "Message is too large" (over its
  -- 128 KiB), which advice would read as a wrong address; said as what happened instead.
  local function whyOpenClosed(reason, code)
    if code == nil and reason == "Could not connect" then
      return "the open connection broke (CC could not read from it): the gateway stopped or the network"
        .. " dropped, or it sent a frame CC refuses (text that is not UTF-8, a broken frame)";
    elseif code == nil and reason == "Message is too large" then
      return "the gateway sent a frame over the 128 KiB CC takes (Message is too large), and CC dropped"
        .. " the connection: is sandbox.url a trap-sandbox gateway, and up to date?";
    end
    local said = oneLine(tostring(reason or "Connection closed"));
    if code ~= nil and reason ~= nil then
      return advice.gatewaysCloseReason(said, url); -- the gateway's words, never read as CC's
    end
    return said;
  end

  -- CC's reason for a connection that closed or failed before the gateway answered. When no
  -- gateway ever answered a hello at this URL, "Connection closed" is said with the step it
  -- closed at (step: "the WebSocket upgrade", "hello"): a server that accepts a connection and
  -- closes it unanswered (another server's port) is told from a gateway that stopped. Once one
  -- has answered here, "Could not connect" (or a refusal) and "Timed out" are said with the
  -- minute it last answered: that gateway stopped or is stuck, where the address could be
  -- wrong before (libsandboxadvice.stoppedAnswering).
  local function whyUnanswered(reason, step)
    if answeredAt[url] ~= nil then
      return advice.stoppedAnswering(reason, answeredAt[url]);
    elseif reason == "Connection closed" then
      return advice.closedUnanswered(step);
    end
    return reason;
  end

  -- A socket of eventUrl ended: an attempt failed (attemptFailed), or an open socket closed
  -- (CC says websocket_closed only after websocket_success, so it settles no attempt).
  local function onEnded(eventUrl, reason, code, attemptFailed)
    local wasPending = attemptFailed and settle(eventUrl);
    if eventUrl ~= url or (attemptFailed and socket ~= nil) then
      -- Another URL's, or an attempt given up on that failed after another opened our socket:
      -- a websocket_failure never speaks of an open socket.
      return;
    end
    if proveId ~= nil and socket ~= nil and not attemptFailed then
      -- Whatever its code says (revoked, replaced), it is not the gateway's word.
      notProved("closed the connection before its proof");
      return;
    end
    local terminal = TERMINAL_CLOSES[code];
    if terminal ~= nil and not wasPending
      and (((state == STATE_AUTHENTICATING or state == STATE_CONNECTED) and socket ~= nil) or closedUnderUs) then
      -- Stop: retrying cannot succeed, and after `replaced` it would take the slot back.
      closedUnderUs = false;
      lastError = terminal.why;
      closeSocket();
      failInflight(terminal.why);
      cancelReconnect();
      setState(terminal.state);
      return;
    end
    -- The reason may be the gateway's (a close frame's, an HTTP status line).
    if state == STATE_CONNECTING and wasPending then
      lose(whyUnanswered(oneLine(tostring(reason or "could not connect")), "the WebSocket upgrade"));
    elseif state == STATE_AUTHENTICATING and socket ~= nil and code == nil then
      lose(whyUnanswered(whyOpenClosed(reason, code), "hello"));
    elseif (state == STATE_AUTHENTICATING or state == STATE_CONNECTED) and socket ~= nil then
      lose(whyOpenClosed(reason, code));
    elseif closedUnderUs and not wasPending then
      -- The socket a failed send dropped: this is why it closed.
      closedUnderUs = false;
      lastError = whyOpenClosed(reason, code);
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
    -- Past the gateway's own limit it would refuse the request too; one that answers none
    -- must not collect them (each lets it have one frame more in flight: countFrame).
    if openRequests() >= MAX_COMPUTER_REQUESTS then
      reply(messageId, false, nil, { code = ERR_INTERNAL, message = "the gateway has not answered "
        .. MAX_COMPUTER_REQUESTS .. " requests of this computer yet (the most it takes in flight"
        .. " on one connection); retry once it has, or run: sandbox reconnect" });
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
    else
      reply(messageId, false, nil, { code = code, message = err });
    end
  end

  local function status()
    local statusUrl = url or normaliseUrl(settingsApi.get(SETTING_URL));
    return {
      url = statusUrl,
      -- Whether a gateway answered a hello at url since boot: sandbox link's own session, closed
      -- there unanswered, is then that gateway stopping, not another server's port.
      answered = answeredAt[statusUrl] ~= nil,
      -- The clock() of its last frame there (nil when none answered): nothing answering link's
      -- own session there is then said with that minute, as whyUnanswered says the daemon's.
      answeredUntil = answeredAt[statusUrl],
      connected = state == STATE_CONNECTED,
      state = state,
      traposId = sessionId or currentTraposId(),
      account = account,
      credentialKind = credentialKind,
      lastError = lastError,
      -- While waiting: the clock() (epoch ms) of the next try.
      retryAt = state == STATE_WAITING and retryAt or nil,
      -- While waiting: the ms to the next try on the timers' clock (ticks), what to show.
      retryInMs = state == STATE_WAITING and retryTick ~= nil and math.max(0, math.floor((retryTick - ticks()) * 1000)) or nil,
      since = stateSince,
      connections = connections,
      faults = faults,
      lastFault = lastFault,
      -- The package this daemon was loaded from: after an upgrade without a reboot, an older
      -- daemon (one without this field) still runs beside the new programs.
      version = version.VERSION,
      -- The trapos-sandbox version the gateway serves (nil: it named none).
      served = served,
      -- Since when (epoch ms) the gateway at url proves itself to this computer: it is asked
      -- to before each hello there (nil: never yet, or sandbox setup forgot it).
      provesSince = statusUrl ~= nil and proofs.provesSince(statusUrl) or nil,
      -- While connected: whether the hello answer said the gateway proves itself, which with
      -- no provesSince means the record could not be written (a full drive).
      proves = proves,
    };
  end

  -- (Re)starts from the current settings, forgetting the last error and the broken sockets.
  local function restart()
    lastError = nil;
    churn = 0;
    served = nil; -- the settings may name another gateway now
    connect();
  end

  local function start()
    defineSettings(settingsApi);
    requests.start(); -- mirror the screen from boot, before the shell draws
    restart();
  end

  -- Tells the gateway why the socket is about to close (bye), as the close itself cannot:
  -- CC's close() sends no close frame, and the gateway would log an abnormal 1006. The gateway
  -- closes the socket with 1000 and the reason once it reads the bye; nothing waits for that.
  -- A gateway older than bye answers unknown_type to a socket already gone: the 1006 of old.
  -- Said also while the hello is unanswered: the gateway reads the bye after the hello, so a
  -- hello it accepted ends as the bye says, and one it refused closed the socket anyway.
  local function sayBye(reason, payload)
    if socket == nil or (state ~= STATE_CONNECTED and state ~= STATE_AUTHENTICATING) then
      return;
    end
    payload.reason = reason;
    local encoded = encodeFrame({
      event = FRAME_COMPUTER_REQUEST,
      traposSenderId = sessionId,
      messageId = newUuid(),
      type = codec.TYPE_BYE,
      payload = payload,
    });
    local old = socket;
    if encoded ~= nil then
      pcall(function() old.send(encoded); end); -- a dead socket: the close follows all the same
    end
  end

  -- A connected computer whose label changed since its hello says hello again as itself,
  -- after a bye that names its new traposId. Returns whether it did.
  local function relabel()
    local now = currentTraposId();
    if state ~= STATE_CONNECTED or sessionId == nil or now == sessionId then
      return false;
    end
    sayBye(BYE_RELABELLED, { traposId = now });
    restart(); -- its closeSocket cancels the label timer
    return true;
  end

  -- The label timer fired: relabel, or look again later.
  local function checkLabel()
    labelTimer = nil;
    if not relabel() and state == STATE_CONNECTED then
      labelTimer = osApi.startTimer(LABEL_CHECK_INTERVAL);
    end
  end

  -- The liveness timer fired: silent too long means gone, else look again when it could be.
  local function checkLiveness()
    livenessTimer = nil;
    if socket == nil or livenessMs == nil then
      return;
    end
    local silent = clock() - lastFrameAt;
    if silent >= livenessMs and helloId ~= nil then
      -- Before its answer nothing was promised (HELLO_ANSWER_WAIT is ours): a gateway answers
      -- hello at once, so it is stuck, or the server is not a gateway (libsandboxadvice).
      lose("no answer to hello: the server sent nothing for " .. math.floor(silent / 1000) .. " s: reconnecting");
    elseif silent >= livenessMs then
      lose("the gateway sent nothing for " .. math.floor(silent / 1000) .. " s (it promised a frame every "
        .. math.floor(livenessMs / 1000) .. " s at most): reconnecting");
    else
      livenessTimer = osApi.startTimer((livenessMs - silent) / 1000);
    end
  end

  -- CONNECT_WAIT ran out on an attempt: its outcome is lost (or CC is very late with it).
  local function attemptLost()
    attempt = nil;
    if state == STATE_CONNECTING then
      lose("no outcome of the connection to " .. tostring(url) .. " within " .. CONNECT_WAIT
        .. " s (CC's full event queue may have dropped it): trying again");
    end
  end

  local function stop()
    requests.stop();
    sayBye(BYE_STOPPED, {});
    closeSocket();
    endAttempt();
    cancelReconnect();
    failInflight("the sandbox daemon has stopped (sandbox stop): run sandbox reconnect");
    setState(STATE_STOPPED);
  end

  local handlers = {
    websocket_success = onSuccess,
    websocket_failure = function(eventUrl, reason) onEnded(eventUrl, reason, nil, true); end,
    websocket_closed = function(eventUrl, reason, code) onEnded(eventUrl, reason, code, false); end,
    websocket_message = onMessage,
    timer = function(id)
      if reconnectTimer ~= nil and id == reconnectTimer then
        reconnectTimer = nil;
        connect();
      elseif labelTimer ~= nil and id == labelTimer then
        checkLabel();
      elseif livenessTimer ~= nil and id == livenessTimer then
        checkLiveness();
      elseif attempt ~= nil and id == attempt.timer then
        attemptLost();
      elseif proofTimer ~= nil and id == proofTimer then
        proofTimer = nil;
        notProved("sent no proof within " .. PROOF_WAIT .. " s");
      end
    end,
    setting_changed = function(name)
      if name == SETTING_URL or name == SETTING_PASSWORD then
        sayBye(BYE_RECONNECTING, {});
        restart();
      end
    end,
    [EVENT_RECONNECT] = function()
      sayBye(BYE_RECONNECTING, {});
      restart();
    end,
    -- A program asks a waiting daemon to try now (`sandbox health`, `sandbox status`): a
    -- player who restarted the gateway must not read the last failure until the timer's try.
    -- The timer's try, early: the last error is kept (the latest news until this try's
    -- outcome), and so is the back-off, so a gateway that breaks its sockets waits as long
    -- after this try as after the timer's. Only the player's asking makes it sooner, and at
    -- most once a RECONNECT_DELAY: a script running `sandbox status` every half second (a
    -- status screen) dialled a gateway that was down, or one to be tried a minute later,
    -- twice a second. Asked sooner, the status shows the last try's outcome, seconds old.
    [EVENT_RETRY_NOW] = function()
      if state ~= STATE_WAITING or reconnectTimer == nil then
        return;
      end
      if askedTryTick ~= nil and ticks() - askedTryTick < RECONNECT_DELAY then
        return;
      end
      askedTryTick = ticks();
      connect();
    end,
    [EVENT_STOP] = stop,
    [EVENT_SEND] = onSend,
    -- The label is looked at first: the player who typed `label set neu` and then `sandbox
    -- status` (or health, or ai, which ask the status before their request) read the old
    -- traposId, connected, until the label timer's look; now they read the new one,
    -- connecting, and the request goes out under it.
    [EVENT_STATUS_REQUEST] = function(replyId)
      relabel();
      osApi.queueEvent(EVENT_STATUS, replyId, status());
    end,
  };

  -- Started again after a stop: the screen's mirror too, which the stop took off the terminal
  -- (without it the host read the screen of the stop, frozen, until the computer rebooted).
  local function resume()
    requests.start();
    restart();
  end

  -- Stopped by the player (`sandbox stop`), the daemon still answers its status and starts
  -- again on a reconnect (`sandbox reconnect`, `sandbox setup`); everything else waits for that.
  local whileStopped = {
    [EVENT_RECONNECT] = resume,
    [EVENT_STATUS_REQUEST] = handlers[EVENT_STATUS_REQUEST],
    -- A program's request gets not_connected at once, not its whole timeout in silence.
    [EVENT_SEND] = function(messageId)
      if type(messageId) == "string" then
        replyNotConnected(messageId);
      end
    end,
    -- An attempt that was running at the stop ends now: its socket is closed (CC allows 4).
    websocket_success = function(eventUrl, newSocket)
      if settle(eventUrl) and type(newSocket) == "table" then
        pcall(function() newSocket.close(); end);
      end
    end,
    websocket_failure = settle,
  };

  -- Handles one event. Returns true: the daemon runs until the computer shuts down.
  -- A terminate (the player's Ctrl-T, meant for the foreground program) does not stop it: as
  -- CC's own background service, rednet.run (rom/apis/rednet.lua, run()), which bios.lua runs
  -- beside the shell, reads its events with os.pullEventRaw and ignores terminate. The player
  -- stops the daemon with `sandbox stop`. Running lua.exec jobs do not see the terminate either
  -- (libsandboxexec withholds it with the player's keys).
  -- A failing handler is a fault and survives: the daemon must not take the boot down.
  local function handle(event, ...)
    if state == STATE_STOPPED then
      local fn = whileStopped[event];
      if fn ~= nil then
        local ok, err = pcall(fn, ...);
        if not ok then
          fault("sandbox daemon: " .. tostring(event) .. " handler failed: " .. tostring(err));
        end
      end
      return true;
    end
    watchMark(event, ...);
    local fn = handlers[event];
    if fn ~= nil then
      local ok, err = pcall(fn, ...);
      if not ok then
        fault("sandbox daemon: " .. tostring(event) .. " handler failed: " .. tostring(err));
      end
    end
    -- Running lua.exec jobs and serving programs see every event, as under parallel.
    local ok, err = pcall(requests.onEvent, event, ...);
    if not ok then
      fault("sandbox daemon: request jobs failed on " .. tostring(event) .. ": " .. tostring(err));
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
  RECONNECT_DELAY = RECONNECT_DELAY,
  RECONNECT_JITTER = RECONNECT_JITTER,
  RECONNECT_MAX_DELAY = RECONNECT_MAX_DELAY,
  HEALTHY_AFTER = HEALTHY_AFTER,
  HELLO_ANSWER_WAIT = HELLO_ANSWER_WAIT,
  PROOF_WAIT = PROOF_WAIT,
  CONNECT_WAIT = CONNECT_WAIT,
  LABEL_CHECK_INTERVAL = LABEL_CHECK_INTERVAL,
  EVENT_QUEUE_LIMIT = EVENT_QUEUE_LIMIT,
  OVERLOAD_RECONNECT_DELAY = OVERLOAD_RECONNECT_DELAY,
  STATE_DORMANT = STATE_DORMANT,
  STATE_DISABLED = STATE_DISABLED,
  STATE_CONNECTING = STATE_CONNECTING,
  STATE_AUTHENTICATING = STATE_AUTHENTICATING,
  STATE_CONNECTED = STATE_CONNECTED,
  STATE_WAITING = STATE_WAITING,
  STATE_UNAUTHORIZED = STATE_UNAUTHORIZED,
  STATE_REPLACED = STATE_REPLACED,
  STATE_REVOKED = STATE_REVOKED,
  STATE_STOPPED = STATE_STOPPED,
  HTTP_DISABLED = HTTP_DISABLED,
  URL_NOT_SET = URL_NOT_SET,
  newDaemon = newDaemon,
};
