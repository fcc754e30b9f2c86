-- Specs for /apis/libsandboxdaemon (newDaemon) against a scripted gateway: a fake
-- http whose websocketAsync records URLs, fake sockets that record sent frames, and events
-- fed straight to the daemon's handler.

local lib = require('/apis/libsandbox');
local daemonLib = require('/apis/libsandboxdaemon');
local codec = require('/apis/libsandboxcodec');
local speckit = require('/tests/speckit');
local VERSION = require('/apis/libsandboxversion').VERSION;

local URL = "ws://127.0.0.1:4444";
local FULL_URL = "ws://127.0.0.1:4444/trapos/ws";
-- CC's "Could not connect" at URL once its gateway answered (at the clock's 0, 00:00 UTC).
local STOPPED_AT_0 = "Could not connect (the gateway answered here until 00:00 UTC)";
local UUID_PATTERN = "^%x%x%x%x%x%x%x%x%-%x%x%x%x%-4%x%x%x%-[89ab]%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$";

local function newSocket()
  local socket = { sent = {}, closed = 0 };
  -- CC handle methods take no self: the daemon must call socket.send(x), not socket:send(x).
  socket.send = function(message)
    if type(message) ~= "string" then
      error("bad argument #1 (string expected, got " .. type(message) .. ")", 2);
    end
    if socket.closed > 0 then
      error("attempt to use a closed file", 2);
    end
    socket.sent[#socket.sent + 1] = message;
  end;
  socket.close = function()
    socket.closed = socket.closed + 1;
    socket.sentBeforeClose = socket.sentBeforeClose or #socket.sent;
  end;
  socket.frame = function(i)
    return textutils.unserializeJSON(socket.sent[i or #socket.sent]);
  end;
  return socket;
end

-- A scripted world: settings values, a fake os and http, and the daemon under test.
-- opts.recordFails: the record of the gateways that proved themselves cannot be written.
local function newWorld(opts)
  opts = opts or {};
  local world = {
    values = { ["sandbox.url"] = opts.url, ["sandbox.password"] = opts.password },
    label = opts.label,
    queued = {},
    timers = {},
    cancelled = {},
    connects = {},
    logs = {},
    nextTimer = 100,
    now = 0,    -- the daemon's clock, epoch ms
    ticks = 0,  -- the clock its timers run on (os.clock), seconds
    random = 0, -- what its random() returns
    proved = opts.proved or {},
    proofKeys = opts.proofKeys or {},
  };
  world.screen = window.create(term.native(), 1, 1, 51, 19, false);
  world.settings = {
    define = function() world.defined = (world.defined or 0) + 1; end,
    get = function(name, default)
      local value = world.values[name];
      if value == nil then
        return default;
      end
      return value;
    end,
  };
  world.os = {
    queueEvent = function(...)
      world.queued[#world.queued + 1] = table.pack(...);
    end,
    startTimer = function(seconds)
      world.nextTimer = world.nextTimer + 1;
      world.timers[world.nextTimer] = seconds;
      world.lastTimer = world.nextTimer;
      return world.nextTimer;
    end,
    cancelTimer = function(id)
      world.cancelled[id] = true;
      world.timers[id] = nil;
    end,
    getComputerID = function() return 7; end,
    getComputerLabel = function() return world.label; end,
    epoch = function() return 0; end,
  };
  if not opts.noHttp then
    world.http = {
      websocketAsync = function(url)
        world.connects[#world.connects + 1] = url;
        if opts.raise then
          error(opts.raise, 2);
        elseif opts.syncFailure then
          return false, opts.syncFailure;
        end
        return true;
      end,
    };
  end
  world.daemon = daemonLib.newDaemon({
    http = world.http,
    settings = world.settings,
    os = world.os,
    clock = function() return world.now; end,
    ticks = function() return world.ticks; end,
    random = function() return world.random; end,
    log = function(message) world.logs[#world.logs + 1] = message; end,
    -- the record of the gateways that proved themselves: url -> since (epoch ms)
    proofs = {
      provesSince = function(url) return world.proved[url]; end,
      proofKey = function(url) return world.proofKeys[url]; end,
      remember = function(url, since, key)
        if opts.recordFails then
          return false;
        end
        world.proved[url] = since;
        world.proofKeys[url] = key or world.proofKeys[url];
        return true;
      end,
    },
    -- the screen mirror wraps this invisible window, not the spec runner's own terminal
    term = setmetatable({ native = function() return world.screen; end }, { __index = term }),
    -- and puts its monitors' wrap in this table's call, not the global peripheral.call: no
    -- case stops its daemon, and each left a wrap there that mirrored every later monitor
    -- call, 118 deep by the end of this file, which made libsandboxscreen's monitor cases
    -- take seconds in one resume and run out of CC's yield limit on a loaded machine
    peripheral = setmetatable({}, { __index = peripheral }),
  });
  world.handle = world.daemon.handle;

  -- Events queued with this name, oldest first.
  world.events = function(name)
    local found = {};
    for _, event in ipairs(world.queued) do
      if event[1] == name then
        found[#found + 1] = event;
      end
    end
    return found;
  end;
  world.timerCount = function()
    local n = 0;
    for _ in pairs(world.timers) do
      n = n + 1;
    end
    return n;
  end;
  -- The running timer of that many seconds, if any.
  world.timerOf = function(seconds)
    for id, s in pairs(world.timers) do
      if s == seconds then
        return id;
      end
    end
    return nil;
  end;
  -- Opens the socket: websocket_success for the URL the daemon asked for.
  world.open = function()
    local socket = newSocket();
    world.handle("websocket_success", world.connects[#world.connects], socket);
    return socket;
  end;
  -- Hands the daemon its queued markers, as CC would once the events queued before each
  -- have been handled: with none of the gateway's frames waiting behind one another.
  world.delivered = 0;
  world.flushMarks = function()
    while world.delivered < #world.queued do
      world.delivered = world.delivered + 1;
      local event = world.queued[world.delivered];
      if event[1] == "trapos_sandbox_mark" then
        world.handle(table.unpack(event, 1, event.n));
      end
    end
  end;
  world.message = function(frame)
    local result = world.handle("websocket_message", world.connects[#world.connects], textutils.serializeJSON(frame), false);
    world.flushMarks();
    return result;
  end;
  -- n gateway frames that waited in CC's queue together (their markers come after them).
  world.flood = function(n, frame)
    for i = 1, n do
      world.handle("websocket_message", world.connects[#world.connects], textutils.serializeJSON(frame or {
        event = "gateway_request", messageId = "flood-" .. i, type = "ping",
      }), false);
    end
  end;
  world.answerHello = function(socket, ok, err, livenessMs, accountId)
    local hello = socket.frame(1);
    world.message({
      event = "gateway_response",
      traposReceiverId = hello.traposSenderId,
      messageId = hello.messageId,
      type = "hello",
      ok = ok,
      payload = ok and { accountId = accountId or "local", livenessMs = livenessMs } or nil,
      error = err,
    });
  end;
  -- Starts, opens and authenticates: returns the connected socket.
  world.connect = function()
    world.daemon.start();
    local socket = world.open();
    world.answerHello(socket, true);
    return socket;
  end;
  return world;
end

describe("sandbox daemon", function()
  describe("without sandbox.url", function()
    it("stays dormant and connects nowhere", function()
      local world = newWorld();
      world.daemon.start();
      expect(#world.connects):eq(0);
      expect(world.daemon.status().state):eq("dormant");
      expect(world.daemon.status().connected):eq(false);
      expect(world.timerCount()):eq(0);
    end);

    it("reads a sandbox.url that is not text as set does: digits as a URL, anything else as none", function()
      -- `set sandbox.url 4444` before the daemon defined the setting stores a number, and a
      -- hand-edited .settings may hold anything: read as a string, it stopped the daemon at boot
      local world = newWorld({ url = 4444 });
      world.daemon.start();
      expect(world.connects):same({ "ws://4444/trapos/ws" });
      for _, value in ipairs({ true, { "ws://x" } }) do
        world = newWorld({ url = value });
        world.daemon.start();
        expect(#world.connects):eq(0);
        expect(world.daemon.status().state):eq("dormant");
      end
    end);

    it("names the package it runs from in its status, so that sandbox status can tell an older one", function()
      local world = newWorld();
      world.daemon.start();
      expect(world.daemon.status().version):eq(VERSION);
    end);

    it("defines its settings on start", function()
      local world = newWorld();
      world.daemon.start();
      expect(world.defined):eq(6);
    end);

    it("answers a send at once with not_connected", function()
      local world = newWorld();
      world.daemon.start();
      world.handle("trapos_sandbox_send", "id-1", "probe_gateway", {});
      local replies = world.events("trapos_sandbox_reply");
      expect(#replies):eq(1);
      expect(replies[1][2]):eq("id-1");
      expect(replies[1][3]):eq(false);
      expect(replies[1][4]):eq(nil);
      expect(replies[1][5]):same({ code = "not_connected", message = "sandbox.url is not set" });
    end);

    it("wakes up when sandbox.url is set", function()
      local world = newWorld();
      world.daemon.start();
      world.values["sandbox.url"] = URL;
      world.handle("setting_changed", "sandbox.url", URL, nil);
      expect(world.connects):same({ FULL_URL });
      expect(world.daemon.status().state):eq("connecting");
    end);

    it("ignores other settings", function()
      local world = newWorld();
      world.daemon.start();
      world.values["sandbox.url"] = URL;
      world.handle("setting_changed", "shell.allow_startup", true, false);
      expect(#world.connects):eq(0);
    end);
  end);

  describe("without the http API", function()
    it("stays dormant with a clear last error", function()
      local world = newWorld({ url = URL, noHttp = true });
      world.daemon.start();
      local status = world.daemon.status();
      expect(status.state):eq("disabled");
      expect(status.lastError):eq("http API is disabled (enable it in the server config)");
      world.handle("trapos_sandbox_send", "id-1", "t", {});
      expect(world.events("trapos_sandbox_reply")[1][5].message)
        :eq("http API is disabled (enable it in the server config)");
      expect(world.timerCount()):eq(0);
    end);
  end);

  describe("label change", function()
    it("reconnects under the new traposId once its timer sees the new label", function()
      local world = newWorld({ url = URL, label = "old" });
      world.connect();
      expect(world.daemon.status().traposId):eq("7:old");
      local timer = world.lastTimer;
      expect(world.timers[timer]):eq(daemonLib.LABEL_CHECK_INTERVAL);
      expect(daemonLib.LABEL_CHECK_INTERVAL <= 30):eq(true);

      -- Unchanged: the timer is armed again and nothing else happens.
      world.handle("timer", timer);
      expect(#world.connects):eq(1);
      timer = world.lastTimer;
      expect(world.timers[timer]):eq(daemonLib.LABEL_CHECK_INTERVAL);

      world.label = "new";
      world.handle("timer", timer);
      expect(#world.connects):eq(2);
      local hello = world.open().frame(1);
      expect(hello.payload.traposId):eq("7:new");
    end);

    it("answers a status request after a relabel under the new traposId, reconnecting at once", function()
      -- `label set neu`, then `sandbox status`: it showed the old traposId, connected, for up
      -- to LABEL_CHECK_INTERVAL. The status request looks at the label first.
      local world = newWorld({ url = URL, label = "old" });
      local old = world.connect();
      local timer = world.timerOf(daemonLib.LABEL_CHECK_INTERVAL);
      world.label = "new";
      world.handle("trapos_sandbox_status_request", "r-1");
      local answered = world.events("trapos_sandbox_status")[1][3];
      expect({ answered.traposId, answered.state, answered.connected }):same({ "7:new", "connecting", false });
      expect(old.frame().payload):same({ reason = "relabelled", traposId = "7:new" });
      expect(old.closed):eq(1);
      expect(world.cancelled[timer]):eq(true);
      expect(#world.connects):eq(2);
      local newer = world.open();
      expect(newer.frame(1).payload.traposId):eq("7:new");

      -- Unchanged, a status request reconnects nothing.
      world.answerHello(newer, true);
      world.handle("trapos_sandbox_status_request", "r-2");
      expect(world.events("trapos_sandbox_status")[2][3].state):eq("connected");
      expect(#world.connects):eq(2);
      expect(newer.closed or 0):eq(0);
    end);

    it("says bye, relabelled, naming its new traposId, before it closes the old socket", function()
      -- CC's close() sends no close frame: without the bye the gateway logs an abnormal 1006.
      local world = newWorld({ url = URL, label = "old" });
      local old = world.connect();
      -- Fires the running label timer, as CC would (a fired timer is not running any more).
      local function fireLabelTimer()
        local timer = world.timerOf(daemonLib.LABEL_CHECK_INTERVAL);
        world.timers[timer] = nil;
        world.handle("timer", timer);
      end
      world.label = "new";
      fireLabelTimer();
      expect(old.closed):eq(1);
      expect(old.sentBeforeClose):eq(#old.sent);
      local bye = old.frame();
      expect(bye.event):eq("computer_request");
      expect(bye.type):eq("bye");
      expect(bye.traposSenderId):eq("7:old");
      expect(bye.messageId:find(UUID_PATTERN) ~= nil):eq(true);
      expect(bye.payload.reason):eq("relabelled");
      expect(bye.payload.traposId):eq("7:new");
      expect(world.daemon.status().lastError):eq(nil);

      -- A cleared label says bye too: its new traposId is "7:".
      local newer = world.open();
      world.answerHello(newer, true);
      world.label = nil;
      fireLabelTimer();
      expect(newer.frame().type):eq("bye");
      expect(newer.frame().payload.traposId):eq("7:");
      expect(#world.connects):eq(3);
    end);

    it("says bye, stopped or reconnecting, before sandbox stop, sandbox reconnect or a new URL closes its socket", function()
      for _, case in ipairs({
        { reason = "stopped", act = function(world) world.handle("trapos_sandbox_stop"); end },
        { reason = "reconnecting", act = function(world) world.handle("trapos_sandbox_reconnect"); end },
        { reason = "reconnecting", act = function(world)
          world.values["sandbox.password"] = "new";
          world.handle("setting_changed", "sandbox.password");
        end },
      }) do
        local world = newWorld({ url = URL, label = "old" });
        local socket = world.connect();
        case.act(world);
        expect(socket.closed):eq(1);
        expect(socket.sentBeforeClose):eq(#socket.sent);
        local bye = socket.frame();
        expect(bye.type):eq("bye");
        expect(bye.traposSenderId):eq("7:old");
        expect(bye.payload.reason):eq(case.reason);
        expect(bye.payload.traposId):eq(nil);
      end
      -- The hello sent, not answered yet (sandbox stop typed right after a boot): the bye
      -- follows it, and the gateway, which reads them in order, ends an accepted hello's
      -- socket as the bye says instead of logging 1006.
      local world = newWorld({ url = URL, label = "old" });
      world.daemon.start();
      local socket = world.open();
      world.handle("trapos_sandbox_stop");
      expect(socket.closed):eq(1);
      expect(#socket.sent):eq(2);
      expect(socket.sentBeforeClose):eq(2);
      expect(socket.frame(1).type):eq("hello");
      expect(socket.frame(2).type):eq("bye");
      expect(socket.frame(2).payload.reason):eq("stopped");
      -- Still connecting: no socket to say it on.
      world = newWorld({ url = URL, label = "old" });
      world.daemon.start();
      world.handle("trapos_sandbox_stop");
      expect(world.daemon.status().state):eq("stopped");
    end);

    it("says no bye on a socket that closed under it: it only reconnects", function()
      local world = newWorld({ url = URL, label = "old" });
      local old = world.connect();
      old.closed = 1; -- CC closed it; its websocket_closed is still queued
      world.label = "new";
      world.handle("timer", world.timerOf(daemonLib.LABEL_CHECK_INTERVAL));
      expect(#old.sent):eq(1); -- the hello alone
      expect(#world.connects):eq(2);
    end);

    it("runs no label timer while not connected", function()
      local world = newWorld({ url = URL, label = "old" });
      world.daemon.start();
      expect(world.timerOf(daemonLib.LABEL_CHECK_INTERVAL)):eq(nil);
      expect(world.timerCount()):eq(1); -- the attempt's CONNECT_WAIT
    end);
  end);

  describe("a gateway that proves itself", function()
    local proofLib = require('/apis/libsandboxproof');
    local SINCE = 1765078800000; -- 2025-12-07 03:40 UTC

    -- Answers the prove the daemon sent (frame 1) with proof, or with what answer() makes.
    local function answerProve(world, socket, proof)
      local prove = socket.frame(1);
      world.message({ event = "gateway_response", traposReceiverId = prove.traposSenderId, messageId = prove.messageId,
        type = "prove", ok = true, payload = { proof = proof } });
      return prove;
    end

    -- The proof the gateway that knows secret gives for the prove in socket's frame 1.
    local function rightProof(socket, secret)
      return (proofLib.expectedProof(secret, socket.frame(1).payload.nonce));
    end

    it("records the URL whose hello answer says proves, and says no more than hello there before", function()
      local world = newWorld({ url = URL, password = "pw" });
      world.now = SINCE;
      world.daemon.start();
      local socket = world.open();
      expect(socket.frame(1).type):eq("hello");
      local hello = socket.frame(1);
      world.message({ event = "gateway_response", traposReceiverId = "7:", messageId = hello.messageId, type = "hello",
        ok = true, payload = { accountId = "local", proves = true } });
      expect(world.proved):same({ [FULL_URL] = SINCE });
      expect(world.daemon.status().provesSince):eq(SINCE);
      expect(world.daemon.status().proves):eq(true);
    end);

    it("records nothing for a gateway that does not say it proves itself", function()
      local world = newWorld({ url = URL, password = "pw" });
      world.connect();
      expect(world.proved):same({});
      expect(world.daemon.status().provesSince):eq(nil);
      -- sandbox status says that gateway does not prove itself
      expect(world.daemon.status().proves):eq(false);
    end);

    it("says the gateway offers its proof while connected, also when its record could not be written", function()
      -- a full drive: sandbox status says the proof is offered but not recorded, not that the
      -- gateway gives none
      local world = newWorld({ url = URL, password = "pw", recordFails = true });
      world.now = SINCE;
      world.daemon.start();
      local socket = world.open();
      local hello = socket.frame(1);
      world.message({ event = "gateway_response", traposReceiverId = "7:", messageId = hello.messageId, type = "hello",
        ok = true, payload = { accountId = "local", proves = true } });
      expect(world.daemon.status().connected):eq(true);
      expect(world.daemon.status().provesSince):eq(nil);
      expect(world.daemon.status().proves):eq(true);
      -- not connected: nothing said of a gateway that is not there
      world.handle("websocket_closed", FULL_URL, "Connection closed", 1006);
      expect(world.daemon.status().connected):eq(false);
      expect(world.daemon.status().proves):eq(nil);
    end);

    it("asks for the proof first, then says hello after a right one", function()
      local world = newWorld({ url = URL, password = "pw", label = "base", proved = { [FULL_URL] = SINCE } });
      world.daemon.start();
      local socket = world.open();
      expect(#socket.sent):eq(1);
      local prove = socket.frame(1);
      expect(prove.event):eq("computer_request");
      expect(prove.type):eq("prove");
      expect(prove.traposSenderId):eq("7:base");
      expect(prove.payload.nonce):str_match("^%x+$");
      expect(#prove.payload.nonce):eq(32);
      expect(prove.payload.credential):eq(nil);
      expect(socket.sent[1]:find("pw", 1, true)):eq(nil);
      answerProve(world, socket, rightProof(socket, "pw"));
      expect(#socket.sent):eq(2);
      expect(socket.frame(2).type):eq("hello");
      expect(socket.frame(2).payload.secret):eq("pw");
    end);

    it("names its credential's id, never its secret, and checks the credential's proof", function()
      local secret = "tsc_abcdefghijklm_secretpartsecretpart";
      local world = newWorld({ url = URL, password = secret, proved = { [FULL_URL] = SINCE } });
      world.daemon.start();
      local socket = world.open();
      expect(socket.frame(1).payload.credential):eq("abcdefghijklm");
      expect(socket.sent[1]:find("secretpart", 1, true)):eq(nil);
      answerProve(world, socket, rightProof(socket, secret));
      expect(socket.frame(2).type):eq("hello");
    end);

    -- Each way a server that is not the gateway can answer: the hello never goes out, the
    -- socket is closed, the status says why and what to do, and the daemon tries again.
    local function expectRefused(world, socket, detail)
      expect(#socket.sent):eq(1);
      expect(socket.closed):eq(1);
      local status = world.daemon.status();
      expect(status.state):eq("waiting");
      expect(status.lastError):eq("the server at " .. FULL_URL .. " did not prove it is the gateway this computer was set up with"
        .. " (it has since 2025-12-07 03:40 UTC): it " .. detail .. "; another program may hold its port;"
        .. " if the operator moved the gateway, changed its password or went back to an older one, run sandbox setup");
      expect(world.logs[#world.logs]):eq(status.lastError);
      expect(world.proved):same({ [FULL_URL] = SINCE });
    end

    -- The gateway's slow key of the password "pw", as a hello's answer gives it (proofKey).
    local KEY = string.rep("0123456789abcdef", 4);

    -- The version 2 proof under key for the prove in socket's frame 1.
    local function rightProofV2(socket, key)
      return (proofLib.expectedProof("pw", socket.frame(1).payload.nonce, key));
    end

    it("records the slow key of the password's hello answer, and asks for version 2 with it", function()
      local world = newWorld({ url = URL, password = "pw" });
      world.now = SINCE;
      world.daemon.start();
      local socket = world.open();
      world.message({ event = "gateway_response", traposReceiverId = "7:", messageId = socket.frame(1).messageId, type = "hello",
        ok = true, payload = { accountId = "local", proves = true, proofKey = KEY } });
      expect(world.proved):same({ [FULL_URL] = SINCE });
      expect(world.proofKeys):same({ [FULL_URL] = KEY });
      world.handle("websocket_closed", FULL_URL, "going away", 1001);
      world.handle("timer", world.timerOf(daemonLib.RECONNECT_DELAY));
      local again = world.open();
      local prove = again.frame(1);
      expect(prove.type):eq("prove");
      expect(prove.payload.version):eq(2);
      expect(prove.payload.credential):eq(nil);
      answerProve(world, again, rightProofV2(again, KEY));
      expect(again.frame(2).type):eq("hello");
    end);

    it("asks an old record's gateway (no key: 0.5.33's) the first way, and records the key of its next good hello", function()
      local world = newWorld({ url = URL, password = "pw", proved = { [FULL_URL] = SINCE } });
      world.now = SINCE + 1000;
      world.daemon.start();
      local socket = world.open();
      expect(socket.frame(1).payload.version):eq(nil);
      answerProve(world, socket, rightProof(socket, "pw"));
      world.message({ event = "gateway_response", traposReceiverId = "7:", messageId = socket.frame(2).messageId, type = "hello",
        ok = true, payload = { accountId = "local", proves = true, proofKey = KEY } });
      expect(world.daemon.status().state):eq("connected");
      expect(world.proved):same({ [FULL_URL] = SINCE }, "proved since as before");
      expect(world.proofKeys):same({ [FULL_URL] = KEY });
    end);

    it("refuses a server that answers its version 2 prove with the password's first proof", function()
      -- a squatter that holds the fast key (SHA-256 of the password) but not the slow one
      local world = newWorld({ url = URL, password = "pw", proved = { [FULL_URL] = SINCE }, proofKeys = { [FULL_URL] = KEY } });
      world.daemon.start();
      local socket = world.open();
      expect(socket.frame(1).payload.version):eq(2);
      answerProve(world, socket, rightProof(socket, "pw"));
      expectRefused(world, socket, "sent a wrong proof");
      expect(world.proofKeys):same({ [FULL_URL] = KEY });
    end);

    it("records no key that is not 64 hex digits, and keeps its key when a hello answer gives none", function()
      for _, bad in ipairs({ "00", string.rep("G", 64), string.upper(KEY), 7, {} }) do
        local world = newWorld({ url = URL, password = "pw" });
        world.now = SINCE;
        world.daemon.start();
        local socket = world.open();
        world.message({ event = "gateway_response", traposReceiverId = "7:", messageId = socket.frame(1).messageId, type = "hello",
          ok = true, payload = { accountId = "local", proves = true, proofKey = bad } });
        expect(world.proved):same({ [FULL_URL] = SINCE });
        expect(world.proofKeys):same({});
      end
      local world = newWorld({ url = URL, password = "pw", proved = { [FULL_URL] = SINCE }, proofKeys = { [FULL_URL] = KEY } });
      world.daemon.start();
      local socket = world.open();
      answerProve(world, socket, rightProofV2(socket, KEY));
      world.message({ event = "gateway_response", traposReceiverId = "7:", messageId = socket.frame(2).messageId, type = "hello",
        ok = true, payload = { accountId = "local", proves = true } });
      expect(world.daemon.status().state):eq("connected");
      expect(world.proofKeys):same({ [FULL_URL] = KEY });
    end);

    it("sends no hello after a wrong proof", function()
      local world = newWorld({ url = URL, password = "pw", proved = { [FULL_URL] = SINCE } });
      world.daemon.start();
      local socket = world.open();
      answerProve(world, socket, rightProof(socket, "another password"));
      expectRefused(world, socket, "sent a wrong proof");
    end);

    -- sandbox.password removed with set (the user guide's way to remove it, as for a gateway
    -- whose operator took its password away): no server can prove itself with no secret, and
    -- the line says so, not that another program may hold the port, nor the password-less
    -- gateway's words for a computer that says hello with a password.
    it("says that sandbox.password is not set when a gateway that proved itself cannot, with no secret", function()
      local NOT_SET = "sandbox.password is not set, so the server at " .. FULL_URL .. " cannot prove it is the gateway"
        .. " this computer was set up with (it has since 2025-12-07 03:40 UTC), as it must before the hello;"
        .. " run sandbox setup (with the gateway's password, or none if it has none now)";
      for _, case in ipairs({
        -- the gateway's proof, made with its password
        function(world, socket) answerProve(world, socket, rightProof(socket, "pw")); end,
        -- a gateway without SANDBOX_PASSWORD now
        function(world, socket)
          world.message({ event = "gateway_response", messageId = socket.frame(1).messageId, type = "prove", ok = false,
            error = { code = "unauthorized", message = "this gateway has no SANDBOX_PASSWORD, so it cannot prove itself to a computer that says hello with one: link the computer (sandbox link) for a credential of its own, or run sandbox setup" } });
        end,
      }) do
        local world = newWorld({ url = URL, proved = { [FULL_URL] = SINCE } });
        world.daemon.start();
        local socket = world.open();
        expect(socket.frame(1).type):eq("prove");
        case(world, socket);
        expect(#socket.sent):eq(1);
        expect(socket.closed):eq(1);
        local status = world.daemon.status();
        expect(status.state):eq("waiting");
        expect(status.lastError):eq(NOT_SET);
        expect(world.logs[#world.logs]):eq(NOT_SET);
        expect(world.proved):same({ [FULL_URL] = SINCE });
      end
    end);

    it("sends no hello after an answer without a proof, an older gateway's", function()
      local world = newWorld({ url = URL, password = "pw", proved = { [FULL_URL] = SINCE } });
      world.daemon.start();
      local socket = world.open();
      local prove = socket.frame(1);
      world.message({ event = "gateway_response", messageId = prove.messageId, type = "prove", ok = false,
        error = { code = "not_authenticated", message = "send hello first" } });
      expectRefused(world, socket, "answered without a proof (not_authenticated: send hello first)");
    end);

    it("says what a server that refuses to prove itself says, as its words", function()
      local world = newWorld({ url = URL, password = "tsc_abcdefghijklm_secretpart", proved = { [FULL_URL] = SINCE } });
      world.daemon.start();
      local socket = world.open();
      local prove = socket.frame(1);
      world.message({ event = "gateway_response", messageId = prove.messageId, type = "prove", ok = false,
        error = { code = "unauthorized", message = "this computer's credential was revoked (link it again with: sandbox link, or set a new credential with: sandbox setup)" } });
      expect(#socket.sent):eq(1);
      expect(socket.closed):eq(1);
      local status = world.daemon.status();
      expect(status.state):eq("waiting");
      expect(status.lastError):eq("the server at " .. FULL_URL .. " gave no proof it is the gateway, and says: this computer's credential was revoked"
        .. " (link it again with: sandbox link, or set a new credential with: sandbox setup)");
      expect(world.logs[#world.logs]):eq(status.lastError);
      expect(world.proved):same({ [FULL_URL] = SINCE });
      -- Its close after the words, revoked, is not the gateway's word: the daemon tries again.
      world.handle("websocket_closed", FULL_URL, "revoked", 4003);
      expect(world.daemon.status().state):eq("waiting");
      expect(world.daemon.status().lastError):eq(status.lastError);
    end);

    -- The gateway (0.5.36 on) proves its refusal of a revoked credential: its word, as a
    -- hello's refusal is, so the daemon stops and says it as the gateway's; a refusal whose
    -- proof is wrong (made up, or the hello's proof in its place) is still an unproven server's.
    it("stops at a refusal the gateway proved, as at a hello's, and says it as the gateway's", function()
      local SECRET = "tsc_abcdefghijklm_secretpart";
      local WORDS = "this computer's credential was revoked (link it again with: sandbox link, or set a new credential with: sandbox setup)";
      local function refuseWith(world, socket, proof)
        local prove = socket.frame(1);
        world.message({ event = "gateway_response", messageId = prove.messageId, type = "prove", ok = false,
          error = { code = "unauthorized", message = WORDS, proof = proof } });
      end
      local world = newWorld({ url = URL, password = SECRET, proved = { [FULL_URL] = SINCE } });
      world.daemon.start();
      local socket = world.open();
      local _, _, refusalProof = proofLib.expectedProof(SECRET, socket.frame(1).payload.nonce);
      refuseWith(world, socket, refusalProof);
      expect(#socket.sent):eq(1);
      expect(socket.closed):eq(1);
      local status = world.daemon.status();
      expect(status.state):eq("unauthorized");
      expect(status.lastError):eq("unauthorized: " .. WORDS);
      expect(world.timerOf(5)):eq(nil);

      for _, wrong in ipairs({ string.rep("0", 64), rightProof(socket, SECRET) }) do
        world = newWorld({ url = URL, password = SECRET, proved = { [FULL_URL] = SINCE } });
        world.daemon.start();
        socket = world.open();
        refuseWith(world, socket, wrong);
        status = world.daemon.status();
        expect(status.state):eq("waiting");
        expect(status.lastError):eq("the server at " .. FULL_URL .. " gave no proof it is the gateway, and says: " .. WORDS);
      end
    end);

    -- A program on the gateway's port while it is down can keep the gateway's proved refusal
    -- from an earlier socket of this computer (under that socket's nonce), or make one under a
    -- credential of its own: neither proves this socket's refusal, so the daemon goes on
    -- trying (the real gateway, back, is taken at once), and sends nothing after the prove.
    it("takes no recorded proof of a revoked refusal for the gateway's word", function()
      local SECRET = "tsc_abcdefghijklm_secretpart";
      local WORDS = "this computer's credential was revoked (link it again with: sandbox link, or set a new credential with: sandbox setup)";
      local earlier = newWorld({ url = URL, password = SECRET, proved = { [FULL_URL] = SINCE } });
      earlier.daemon.start();
      local earlierNonce = earlier.open().frame(1).payload.nonce;
      local _, _, recorded = proofLib.expectedProof(SECRET, earlierNonce);
      for _, proofOf in ipairs({
        function() return recorded; end,
        function(nonce) return select(3, proofLib.expectedProof("tsc_abcdefghijklm_notthesecret", nonce)); end,
        function(nonce) return select(3, proofLib.expectedProof("tsc_othercomputer_secretpart", nonce)); end,
      }) do
        local world = newWorld({ url = URL, password = SECRET, proved = { [FULL_URL] = SINCE } });
        world.daemon.start();
        local socket = world.open();
        local prove = socket.frame(1);
        expect(prove.payload.nonce ~= earlierNonce):eq(true);
        world.message({ event = "gateway_response", messageId = prove.messageId, type = "prove", ok = false,
          error = { code = "unauthorized", message = WORDS, proof = proofOf(prove.payload.nonce) } });
        expect(#socket.sent):eq(1);
        local status = world.daemon.status();
        expect(status.state):eq("waiting");
        expect(status.lastError):eq("the server at " .. FULL_URL .. " gave no proof it is the gateway, and says: " .. WORDS);
      end
    end);

    it("sends no hello when no proof comes in time", function()
      local world = newWorld({ url = URL, password = "pw", proved = { [FULL_URL] = SINCE } });
      world.daemon.start();
      local socket = world.open();
      local timer = world.timerOf(daemonLib.PROOF_WAIT);
      expect(timer ~= nil):eq(true);
      world.handle("timer", timer);
      expectRefused(world, socket, "sent no proof within 10 s");
    end);

    it("sends no hello when the server closes the socket, whatever code it gives", function()
      for _, code in ipairs({ 4003, 4009 }) do
        local world = newWorld({ url = URL, password = "pw", proved = { [FULL_URL] = SINCE } });
        world.daemon.start();
        local socket = world.open();
        world.handle("websocket_closed", FULL_URL, "revoked", code);
        expectRefused(world, socket, "closed the connection before its proof");
      end
    end);

    it("answers none of the server's requests before its proof", function()
      local world = newWorld({ url = URL, password = "pw", proved = { [FULL_URL] = SINCE } });
      world.daemon.start();
      local socket = world.open();
      world.message({ event = "gateway_request", traposReceiverId = "7:", messageId = "r1", type = "ping", payload = {} });
      world.message({ event = "gateway_response", messageId = "other", type = "prove", ok = true, payload = { proof = "x" } });
      expect(#socket.sent):eq(1);
      answerProve(world, socket, rightProof(socket, "pw"));
      expect(socket.frame(2).type):eq("hello");
    end);

    it("tries again on its schedule, and takes the gateway that proves itself then", function()
      local world = newWorld({ url = URL, password = "pw", proved = { [FULL_URL] = SINCE } });
      world.daemon.start();
      local socket = world.open();
      answerProve(world, socket, "00");
      local retry = world.timerOf(daemonLib.RECONNECT_DELAY);
      expect(retry ~= nil):eq(true);
      world.handle("timer", retry);
      expect(#world.connects):eq(2);
      local again = world.open();
      answerProve(world, again, rightProof(again, "pw"));
      local hello = again.frame(2);
      world.message({ event = "gateway_response", traposReceiverId = "7:", messageId = hello.messageId, type = "hello",
        ok = true, payload = { accountId = "local", proves = true } });
      expect(world.daemon.status().state):eq("connected");
      expect(world.daemon.status().lastError):eq(nil);
      expect(world.proved):same({ [FULL_URL] = SINCE });
    end);

    it("asks each socket with a fresh nonce, so a proof replayed from an earlier socket is wrong", function()
      -- A program on the port that saw the gateway's proof on an earlier socket (a relay
      -- then, or a recording) answers the next socket with it: the hello stays unsent.
      local world = newWorld({ url = URL, password = "pw", proved = { [FULL_URL] = SINCE } });
      world.daemon.start();
      local first = world.open();
      local seen = rightProof(first, "pw");
      answerProve(world, first, seen);
      expect(first.frame(2).type):eq("hello");
      world.handle("websocket_closed", FULL_URL, "going away", 1001);
      world.handle("timer", world.timerOf(daemonLib.RECONNECT_DELAY));
      local again = world.open();
      expect(again.frame(1).payload.nonce ~= first.frame(1).payload.nonce):eq(true);
      answerProve(world, again, seen);
      expectRefused(world, again, "sent a wrong proof");
    end);

    it("says hello at once at a URL no gateway proved itself at", function()
      local world = newWorld({ url = "ws://other:4444", password = "pw", proved = { [FULL_URL] = SINCE } });
      world.daemon.start();
      expect(world.open().frame(1).type):eq("hello");
    end);
  end);

  describe("handshake", function()
    it("sends hello with traposId and secret when the socket opens", function()
      local world = newWorld({ url = URL, password = "s3cret", label = "base" });
      world.daemon.start();
      expect(world.connects):same({ FULL_URL });
      local socket = world.open();
      expect(#socket.sent):eq(1);
      local hello = socket.frame(1);
      expect(hello.event):eq("computer_request");
      expect(hello.type):eq("hello");
      expect(hello.traposSenderId):eq("7:base");
      expect(hello.messageId):str_match(UUID_PATTERN);
      expect(hello.payload):same({ traposId = "7:base", secret = "s3cret", clientVersion = VERSION });
      expect(world.daemon.status().state):eq("authenticating");
    end);

    it("takes the first answer to its hello and ignores another, whatever it says", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      local socket = world.open();
      world.answerHello(socket, true, nil, nil, "alice");
      world.answerHello(socket, false, { code = "unauthorized", message = "no" });
      world.answerHello(socket, true, nil, 1, "mallory");
      local status = world.daemon.status();
      expect(status.state):eq("connected");
      expect(status.account):eq("alice");
      expect(status.lastError):eq(nil);
      expect(socket.closed):eq(0);
      expect(world.timerOf(0.001)):eq(nil); -- no livenessMs of the third
    end);

    it("sends an empty secret when sandbox.password is unset", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      local hello = world.open().frame(1);
      expect(hello.payload):same({ traposId = "7:", secret = "", clientVersion = VERSION });
      expect(hello.traposSenderId):eq("7:");
    end);

    it("sends a numeric sandbox.password as its digits", function()
      -- `set sandbox.password 1234` (before the setting was defined) stores the number 1234.
      local world = newWorld({ url = URL, password = 1234 });
      world.daemon.start();
      expect(world.open().frame(1).payload.secret):eq("1234");
    end);

    it("ignores a success for somebody else's URL", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      local other = newSocket();
      world.handle("websocket_success", "ws://elsewhere:1/x", other);
      expect(#other.sent):eq(0);
      expect(other.closed):eq(0);
      expect(world.daemon.status().state):eq("connecting");
    end);

    it("is connected once hello is accepted and says so", function()
      local world = newWorld({ url = URL, label = "base" });
      world.connect();
      local connected = world.events("trapos_sandbox_connected");
      expect(#connected):eq(1);
      expect(connected[1][2]):eq("7:base");
      local status = world.daemon.status();
      expect(status.connected):eq(true);
      expect(status.state):eq("connected");
      expect(status.traposId):eq("7:base");
      expect(status.url):eq(FULL_URL);
      expect(status.lastError):eq(nil);
    end);

    it("knows its account from the hello answer, and forgets it with the socket", function()
      local world = newWorld({ url = URL, label = "base" });
      world.daemon.start();
      expect(world.daemon.status().account):eq(nil);
      world.answerHello(world.open(), true);
      expect(world.daemon.status().account):eq("local");
      world.handle("websocket_closed", FULL_URL, "Connection closed", 1006);
      expect(world.daemon.status().state):eq("waiting");
      expect(world.daemon.status().account):eq(nil);
    end);

    it("counts the times it got the gateway, so a program waiting for it sees one it lost again at once", function()
      local world = newWorld({ url = URL, label = "base" });
      world.daemon.start();
      expect(world.daemon.status().connections):eq(0);
      world.answerHello(world.open(), true);
      expect(world.daemon.status().connections):eq(1);
      world.handle("websocket_closed", FULL_URL, "Connection closed", 1006);
      expect(world.daemon.status().connections):eq(1);
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), false, nil, { code = "internal", message = "no" });
      expect(world.daemon.status().connections):eq(1); -- a refused hello is no connection
    end);

    it("knows how its credential was made from the hello answer, and forgets it with the socket", function()
      local world = newWorld({ url = URL, password = "tsc_ab12_secret" });
      world.daemon.start();
      local socket = world.open();
      local hello = socket.frame(1);
      world.message({ event = "gateway_response", messageId = hello.messageId, type = "hello", ok = true,
        payload = { accountId = "alice", credentialKind = "issued", livenessMs = 70000 } });
      expect(world.daemon.status().account):eq("alice");
      expect(world.daemon.status().credentialKind):eq("issued");
      world.handle("websocket_closed", FULL_URL, "Connection closed", 1006);
      expect(world.daemon.status().credentialKind):eq(nil);
      -- an older gateway says nothing: nothing is assumed
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), true, nil, nil, "alice");
      expect(world.daemon.status().credentialKind):eq(nil);
    end);

    it("keeps the client version the gateway serves from the hello answer, ignoring a malformed one", function()
      local cases = {
        { "a newer one", { name = "trapos-sandbox", version = "0.5.12" }, "0.5.12" },
        { "the same", { name = "trapos-sandbox", version = "0.5.11" }, "0.5.11" },
        { "missing (an older gateway)", nil, nil },
        { "not a table", "0.5.12", nil },
        { "no version", { name = "trapos-sandbox" }, nil },
        { "a number", { name = "trapos-sandbox", version = 5 }, nil },
        { "garbage", { name = "trapos-sandbox", version = "latest\n\27[2J" }, nil },
        { "two numbers", { name = "trapos-sandbox", version = "0.6" }, nil },
        { "a string too long", { name = "trapos-sandbox", version = "0.5." .. string.rep("9", 300) }, nil },
        { "another package", { name = "other", version = "9.9.9" }, nil },
      };
      for _, case in ipairs(cases) do
        local world = newWorld({ url = URL, password = "pw" });
        world.daemon.start();
        local socket = world.open();
        local hello = socket.frame(1);
        world.message({ event = "gateway_response", messageId = hello.messageId, type = "hello", ok = true,
          payload = { accountId = "local", livenessMs = 70000, servedClient = case[2] } });
        expect({ case[1], world.daemon.status().served }):same({ case[1], case[3] });
        if case[3] ~= nil then
          -- kept while the socket is down: the fix is the same
          world.handle("websocket_closed", FULL_URL, "Connection closed", 1006);
          expect(world.daemon.status().served):eq(case[3]);
          -- a gateway that names none (an older one) replaces it
          world.handle("timer", world.lastTimer);
          world.answerHello(world.open(), true, nil, nil, "local");
          expect(world.daemon.status().served):eq(nil);
        end
      end
    end);

    it("keeps the served client of the wire fixture's hello answer, the gateway's own", function()
      -- tests/fixtures/wire_frames.json's frame is the one the gateway's Go test writes.
      local answer;
      for _, case in ipairs(speckit.readJson("/tests/fixtures/wire_frames.json").cases) do
        if case.name == "hello answer naming the client the gateway serves" then
          answer = case.input;
        end
      end
      expect(type(answer)):eq("string");
      local world = newWorld({ url = URL, password = "pw" });
      world.daemon.start();
      local hello = world.open().frame(1);
      local text = answer:gsub('"messageId":"h1"', '"messageId":' .. textutils.serializeJSON(hello.messageId));
      world.handle("websocket_message", world.connects[#world.connects], text, false);
      world.flushMarks();
      expect(world.daemon.status().state):eq("connected");
      expect(world.daemon.status().served):eq("0.5.12");
    end);

    it("says hello with a linked credential once sandbox link saves it, and reports its account", function()
      local world = newWorld({ url = URL, password = "shared" });
      world.connect();
      world.values["sandbox.password"] = "tsc_ab12_secret";
      world.handle("setting_changed", "sandbox.password", "tsc_ab12_secret", "shared");
      expect(#world.connects):eq(2);
      local socket = world.open();
      expect(socket.frame(1).payload.secret):eq("tsc_ab12_secret");
      world.answerHello(socket, true, nil, nil, "alice");
      expect(world.daemon.status().account):eq("alice");
    end);

    it("stops for good on unauthorized", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      local socket = world.open();
      world.answerHello(socket, false, { code = "unauthorized", message = "wrong secret" });
      expect(socket.closed):eq(1);
      expect(world.timerCount()):eq(0);
      local status = world.daemon.status();
      expect(status.state):eq("unauthorized");
      expect(status.connected):eq(false);
      expect(status.lastError):eq("unauthorized: wrong secret");
      expect(#world.events("trapos_sandbox_connected")):eq(0);

      -- The gateway's close afterwards changes nothing.
      world.handle("websocket_closed", FULL_URL, "unauthorized", 4001);
      expect(world.timerCount()):eq(0);
      expect(#world.connects):eq(1);
      expect(world.daemon.status().lastError):eq("unauthorized: wrong secret");

      world.handle("trapos_sandbox_send", "id-1", "probe_gateway", {});
      local reply = world.events("trapos_sandbox_reply")[1];
      expect(reply[5]):same({ code = "not_connected", message = "unauthorized: wrong secret" });
    end);

    it("keeps the gateway's words one short line in its status", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      local socket = world.open();
      local forged = "wrong secret\nfix: set sandbox.allow_exec true\n" .. ("x"):rep(3000);
      world.answerHello(socket, false, { code = "unauthorized", message = forged });
      expect(world.daemon.status().lastError):eq("unauthorized: " .. codec.oneLine(forged));
      expect(world.daemon.status().lastError:find("\n")):eq(nil);
      expect(#world.daemon.status().lastError < 300):eq(true);

      world.handle("trapos_sandbox_reconnect");
      world.answerHello(world.open(), false, { code = "not_authenticated\nx", message = forged });
      expect(world.daemon.status().lastError):eq("hello failed: not_authenticated x: " .. codec.oneLine(forged));

      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), true, nil, nil, "alice");
      expect(world.daemon.status().account):eq("alice");

      world.handle("websocket_closed", FULL_URL, "bye\n" .. ("z"):rep(500), 1000);
      expect(world.daemon.status().lastError):eq(codec.oneLine("bye\n" .. ("z"):rep(500)));
    end);

    it("keeps an account only as a name of the gateway's accounts' shape", function()
      -- Words of the gateway's choosing in the status's account line read as lines of the status.
      for _, case in ipairs({ { "alice\nfiles: none\nexec: false" }, { "alice files: none" }, { "Alice" },
          { ("a"):rep(64) }, { 7 }, { "" }, { ("a"):rep(63), ("a"):rep(63) },
          { "kitchen_2.builders-guild", "kitchen_2.builders-guild" } }) do
        local world = newWorld({ url = URL });
        world.daemon.start();
        world.answerHello(world.open(), true, nil, nil, case[1]);
        expect(world.daemon.status().connected):eq(true);
        expect(world.daemon.status().account):eq(case[2]);
      end
    end);

    it("tries again after unauthorized when asked to", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.answerHello(world.open(), false, { code = "unauthorized", message = "no" });
      world.handle("trapos_sandbox_reconnect");
      expect(#world.connects):eq(2);
      expect(world.daemon.status().lastError):eq(nil);
      expect(world.daemon.status().state):eq("connecting");
    end);

    it("tries again after unauthorized when the password changes", function()
      local world = newWorld({ url = URL, password = "old" });
      world.daemon.start();
      world.answerHello(world.open(), false, { code = "unauthorized", message = "no" });
      world.values["sandbox.password"] = "new";
      world.handle("setting_changed", "sandbox.password", "new", "old");
      expect(#world.connects):eq(2);
      expect(world.daemon.status().lastError):eq(nil);
      expect(world.open().frame(1).payload.secret):eq("new");
    end);

    it("retries in 5 s when hello fails for another reason", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      local socket = world.open();
      world.answerHello(socket, false, { code = "internal", message = "registry down" });
      expect(socket.closed):eq(1);
      expect(world.timers[world.lastTimer]):eq(5);
      expect(world.daemon.status().state):eq("waiting");
    end);
  end);

  describe("connection loss", function()
    it("spreads its reconnect over 5 to 6 s", function()
      local world = newWorld({ url = URL });
      world.random = 0.999;
      world.connect();
      world.handle("websocket_closed", FULL_URL, "Connection closed", nil);
      expect(world.timers[world.lastTimer]):eq(5.999);
    end);

    it("says what broke an open connection CC closed by itself, not that nothing answers there", function()
      local world = newWorld({ url = URL });
      world.connect();
      -- CC's word for a frame it refuses (text that is not UTF-8, a broken frame) or a reset
      world.handle("websocket_closed", FULL_URL, "Could not connect", nil);
      local status = world.daemon.status();
      expect(status.state):eq("waiting");
      expect(status.lastError):eq("the open connection broke (CC could not read from it): the gateway stopped or the"
        .. " network dropped, or it sent a frame CC refuses (text that is not UTF-8, a broken frame)");
      expect(require('/apis/libsandboxadvice').explain(status.lastError, FULL_URL)):eq(status.lastError);
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), true);
      world.handle("websocket_closed", FULL_URL, "Message is too large", nil);
      expect(world.daemon.status().lastError):eq("the gateway sent a frame over the 128 KiB CC takes (Message is too"
        .. " large), and CC dropped the connection: is sandbox.url a trap-sandbox gateway, and up to date?");
      -- The gateway's own close frame says what it says, as the gateway's.
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), true);
      world.handle("websocket_closed", FULL_URL, "Could not connect", 4000);
      expect(world.daemon.status().lastError):eq("the gateway closed the connection saying: Could not connect");
    end);

    it("names the wait to its next try on its timers' clock, which a lagging server slows", function()
      local world = newWorld({ url = URL });
      world.connect();
      world.handle("websocket_closed", FULL_URL, "going away", 1001);
      local wait = world.timers[world.lastTimer];
      expect(world.daemon.status().retryInMs):eq(wait * 1000);
      -- Half the server's ticks came in 4 s: the timer has as much again to run, whatever the
      -- epoch says (it said "1 s" until the timer fired, seconds later).
      world.now, world.ticks = world.now + 4000, world.ticks + 2;
      local status = world.daemon.status();
      expect(status.retryInMs):eq((wait - 2) * 1000);
      expect(lib.retrySeconds(status)):eq(math.ceil(wait - 2));
      world.handle("timer", world.lastTimer);
      expect(world.daemon.status().retryInMs):eq(nil);
    end);

    it("waits longer each time a gateway breaks its socket soon after hello, from 5 s up to a minute", function()
      local world = newWorld({ url = URL });
      world.connect();
      local waits = {};
      for _ = 1, 7 do
        world.now = world.now + 1000; -- a second after the hello: not a healthy socket
        world.handle("websocket_closed", FULL_URL, "Message is too large", nil);
        waits[#waits + 1] = world.timers[world.lastTimer];
        local status = world.daemon.status();
        expect(status.state):eq("waiting");
        expect(status.retryAt):eq(world.now + waits[#waits] * 1000);
        world.now = world.now + waits[#waits] * 1000;
        world.handle("timer", world.lastTimer);
        expect(world.daemon.status().retryAt):eq(nil);
        world.answerHello(world.open(), true);
      end
      expect(waits):same({ 5, 10, 20, 40, 60, 60, 60 });
      expect(daemonLib.RECONNECT_MAX_DELAY):eq(60);
      -- A socket that stayed connected a minute starts again from 5 s.
      world.now = world.now + daemonLib.HEALTHY_AFTER * 1000;
      world.handle("websocket_closed", FULL_URL, "Could not connect", nil);
      expect(world.timers[world.lastTimer]):eq(5);
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), true);
      world.handle("websocket_closed", FULL_URL, "Could not connect", nil);
      expect(world.timers[world.lastTimer]):eq(10);
      -- So does a reconnect the player asks for, and a hello refused counts as a broken socket.
      world.handle(lib.EVENT_RECONNECT);
      world.answerHello(world.open(), false, { code = "internal", message = "try again later" });
      expect(world.timers[world.lastTimer]):eq(5);
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), false, { code = "internal", message = "try again later" });
      expect(world.timers[world.lastTimer]):eq(10);
      -- A gateway that is down (no socket opens) is tried every 5 s, as before.
      world.handle("timer", world.lastTimer);
      world.handle("websocket_failure", FULL_URL, "Connection refused");
      expect(world.timers[world.lastTimer]):eq(5);
    end);

    it("tries at once when a program asks while it waits, keeping its last error and back-off", function()
      -- sandbox health typed right after the gateway came back said "nothing answers" until
      -- the timer's try, up to 6 s (a minute for a gateway that broke its sockets) later
      local world = newWorld({ url = URL });
      world.connect();
      world.handle("websocket_closed", FULL_URL, "going away", 1001);
      world.handle("timer", world.lastTimer);
      world.handle("websocket_failure", FULL_URL, "Could not connect");
      local waiting = world.lastTimer;
      expect(world.daemon.status().state):eq("waiting");
      world.handle(lib.EVENT_RETRY_NOW);
      expect(#world.connects):eq(3);
      expect(world.cancelled[waiting]):eq(true);
      local status = world.daemon.status();
      expect(status.state):eq("connecting");
      expect(status.lastError):eq(STOPPED_AT_0); -- the latest news until this try's outcome
      world.answerHello(world.open(), true);
      expect(world.daemon.status().state):eq("connected");
      -- a connected daemon keeps its socket
      world.handle(lib.EVENT_RETRY_NOW);
      expect(#world.connects):eq(3);
      expect(world.daemon.status().state):eq("connected");
      -- the back-off holds: a socket that broke soon after hello again waits 10 s, not 5
      world.handle("websocket_closed", FULL_URL, "Could not connect", nil);
      expect(world.timers[world.lastTimer]):eq(10);
      world.ticks = world.ticks + daemonLib.RECONNECT_DELAY; -- the player asks again later
      world.handle(lib.EVENT_RETRY_NOW);
      world.answerHello(world.open(), true);
      world.handle("websocket_closed", FULL_URL, "Could not connect", nil);
      expect(world.timers[world.lastTimer]):eq(20);
    end);

    it("tries for a program at most once a RECONNECT_DELAY, however often it asks", function()
      -- a script running sandbox health or status every half second (a status screen) made a
      -- try each time: a gateway that was down, or that broke every socket and was to be
      -- tried a minute later, was dialled twice a second
      local world = newWorld({ url = URL });
      world.connect();
      world.handle("websocket_closed", FULL_URL, "going away", 1001);
      world.handle(lib.EVENT_RETRY_NOW);
      world.handle("websocket_failure", FULL_URL, "Could not connect");
      expect(#world.connects):eq(2);
      for _ = 1, 9 do
        world.ticks = world.ticks + 0.5;
        world.handle(lib.EVENT_RETRY_NOW);
        expect(#world.connects):eq(2);
        expect(world.daemon.status().state):eq("waiting");
        expect(world.daemon.status().lastError):eq(STOPPED_AT_0);
      end
      world.ticks = world.ticks + 0.5; -- RECONNECT_DELAY after the try it asked for
      world.handle(lib.EVENT_RETRY_NOW);
      expect(#world.connects):eq(3);
      -- the timer's own tries are not held back by it
      world.handle("websocket_failure", FULL_URL, "Could not connect");
      world.handle("timer", world.lastTimer);
      expect(#world.connects):eq(4);
    end);

    it("does not try when asked while it is not waiting to reconnect", function()
      local world = newWorld({ url = URL, password = "wrong" });
      world.daemon.start();
      world.handle(lib.EVENT_RETRY_NOW); -- connecting: its try is under way
      expect(#world.connects):eq(1);
      world.answerHello(world.open(), false, { code = "unauthorized", message = "bad secret" });
      world.handle(lib.EVENT_RETRY_NOW); -- refused: only a changed setting or a reconnect helps
      expect(#world.connects):eq(1);
      expect(world.daemon.status().state):eq("unauthorized");
      world.handle(lib.EVENT_RECONNECT);
      world.answerHello(world.open(), true);
      world.handle(lib.EVENT_STOP);
      world.handle(lib.EVENT_RETRY_NOW); -- stopped: only sandbox reconnect starts it
      expect(#world.connects):eq(2);
      expect(world.daemon.status().state):eq("stopped");
    end);

    it("reconnects when the gateway says nothing for livenessMs", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      local socket = world.open();
      world.answerHello(socket, true, nil, 70000);
      local liveness = world.timerOf(70);
      expect(liveness):ne(nil);
      -- A frame at 30 s: when the timer fires at 70 s the gateway was silent only 40 s.
      world.now = 30000;
      world.message({ event = "gateway_request", traposReceiverId = "7:", messageId = "p", type = "ping" });
      world.now = 70000;
      world.handle("timer", liveness);
      expect(world.daemon.status().state):eq("connected");
      local again = world.timerOf(30);
      expect(again):ne(nil);
      -- Nothing since: at 100 s it is 70 s of silence, and the socket is dropped.
      world.now = 100000;
      world.handle("timer", again);
      local status = world.daemon.status();
      expect(status.state):eq("waiting");
      expect(status.lastError):eq("the gateway sent nothing for 70 s (it promised a frame every 70 s at most): reconnecting");
      expect(socket.closed):eq(1);
      expect(world.timers[world.lastTimer]):eq(5);
    end);

    it("takes a livenessMs its timers cannot as no bound, and is connected", function()
      local world = newWorld({ url = URL });
      -- CC's os.startTimer refuses a number that is not finite.
      local startTimer = world.os.startTimer;
      world.os.startTimer = function(seconds)
        if seconds ~= seconds or seconds == math.huge then
          error("bad argument #1 (number expected, got " .. tostring(seconds) .. ")", 2);
        end
        return startTimer(seconds);
      end;
      world.daemon.start();
      local socket = world.open();
      local hello = socket.frame(1);
      world.handle("websocket_message", FULL_URL, '{"event":"gateway_response","messageId":"'
        .. hello.messageId .. '","type":"hello","ok":true,"payload":{"accountId":"local","livenessMs":1e999}}', false);
      local status = world.daemon.status();
      expect(status.state):eq("connected");
      expect(status.faults):eq(0);
      expect(#world.events("trapos_sandbox_connected")):eq(1);
      expect(world.timerOf(daemonLib.LABEL_CHECK_INTERVAL)):ne(nil);
      expect(world.timerOf(daemonLib.HELLO_ANSWER_WAIT)):eq(nil);
    end);

    it("waits at most 70 s for the hello answer", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      local socket = world.open();
      local wait = world.lastTimer;
      expect(world.timers[wait]):eq(daemonLib.HELLO_ANSWER_WAIT);
      world.now = 70000;
      world.handle("timer", wait);
      expect(world.daemon.status().state):eq("waiting");
      expect(socket.closed):eq(1);
      -- nothing was promised before the answer: "it promised a frame every 70 s" was not so
      expect(world.daemon.status().lastError):eq("no answer to hello: the server sent nothing for 70 s: reconnecting");
    end);

    it("keeps no liveness clock for a gateway that announces none", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.now = 10 * 60 * 1000;
      local due = {};
      for id in pairs(world.timers) do
        due[#due + 1] = id;
      end
      for _, id in ipairs(due) do
        world.handle("timer", id);
      end
      expect(world.daemon.status().state):eq("connected");
      expect(socket.closed):eq(0);
    end);

    it("says at which step a server that never answered here closed the connection", function()
      -- CC says "Connection closed" for a close before the upgrade's answer (websocket_failure)
      -- and after it (websocket_closed): both read as a gateway that stopped, also for a
      -- sandbox.url at another server's port that accepts and closes.
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.handle("websocket_failure", FULL_URL, "Connection closed");
      expect(world.daemon.status().lastError):eq("Connection closed before any answer to the WebSocket upgrade");
      world.handle("timer", world.lastTimer);
      world.open();
      world.handle("websocket_closed", FULL_URL, "Connection closed", nil);
      expect(world.daemon.status().lastError):eq("Connection closed before any answer to hello");
      expect(world.daemon.status().answered):eq(false); -- sandbox link words its own close so too
      -- once a hello was answered at this URL, the gateway there stopped or restarts
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), true);
      expect(world.daemon.status().answered):eq(true);
      world.handle("websocket_closed", FULL_URL, "Connection closed", nil);
      expect(world.daemon.status().lastError):eq("Connection closed");
      world.handle("timer", world.lastTimer);
      world.handle("websocket_failure", FULL_URL, "Connection closed");
      expect(world.daemon.status().lastError):eq("Connection closed");
      world.handle("timer", world.lastTimer);
      world.open();
      world.handle("websocket_closed", FULL_URL, "Connection closed", nil);
      expect(world.daemon.status().lastError):eq("Connection closed");
    end);

    it("says when the gateway that answered here last did, once nothing answers there", function()
      -- "nothing answers at …: the gateway there is not running (its operator starts it), or
      -- the address or port is wrong (sandbox setup)" sent the player to sandbox setup for an
      -- address whose gateway had answered minutes before
      local advice = require('/apis/libsandboxadvice');
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.handle("websocket_failure", FULL_URL, "Could not connect");
      expect(world.daemon.status().lastError):eq("Could not connect"); -- never answered here
      world.now = 1796668830000; -- 2026-12-07 18:40:30 UTC
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), true);
      world.now = world.now + 4 * 60000; -- a gateway ping at 18:44:30, its last frame
      world.message({ event = "gateway_request", messageId = "p1", type = "ping" });
      world.now = world.now + 60000;
      world.handle("websocket_closed", FULL_URL, "Connection closed", nil);
      expect(world.daemon.status().lastError):eq("Connection closed");
      world.handle("timer", world.lastTimer);
      world.handle("websocket_failure", FULL_URL, "Could not connect");
      local status = world.daemon.status();
      expect(status.lastError):eq("Could not connect (the gateway answered here until 18:44 UTC)");
      expect(status.answeredUntil):eq(1796668830000 + 4 * 60000); -- for sandbox link's own session
      expect(advice.explain(status.lastError, FULL_URL)):eq("nothing answers at 127.0.0.1:4444: the gateway there"
        .. " answered until 18:44 UTC and stopped (its operator restarts it); the daemon reconnects by itself once"
        .. " it runs again");
      -- and so on every try after, the minute kept
      world.now = world.now + 3600000;
      world.handle("timer", world.lastTimer);
      world.handle("websocket_failure", FULL_URL, "Connection refused");
      expect(world.daemon.status().lastError):eq("Connection refused (the gateway answered here until 18:44 UTC)");
      -- a server that takes the connection there and closes it is the gateway restarting
      world.handle("timer", world.lastTimer);
      world.handle("websocket_failure", FULL_URL, "Connection closed");
      expect(world.daemon.status().lastError):eq("Connection closed");
    end);

    it("says a gateway's close reason in CC's words for a connection nothing took as the gateway's", function()
      -- A gateway that closed with "Could not connect (the gateway answered here until 13:37
      -- UTC)" had the player read that nothing answered there since 13:37, while it answered
      local advice = require('/apis/libsandboxadvice');
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.answerHello(world.open(), true);
      local forged = "Could not connect (the gateway answered here until 13:37 UTC)";
      world.handle("websocket_closed", FULL_URL, forged, 4000);
      local said = world.daemon.status().lastError;
      expect(said):eq("the gateway closed the connection saying: " .. forged);
      expect(advice.explain(said, FULL_URL)):eq(said); -- no advice reads it as CC's
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), true);
      world.handle("websocket_closed", FULL_URL, "Connection refused", 4000);
      expect(world.daemon.status().lastError):eq("the gateway closed the connection saying: Connection refused");
      -- and any other of CC's words: told to fix TLS, the player looked for a certificate
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), true);
      world.handle("websocket_closed", FULL_URL, "Could not create a secure connection", 4000);
      said = world.daemon.status().lastError;
      expect(said):eq("the gateway closed the connection saying: Could not create a secure connection");
      expect(advice.explain(said, FULL_URL)):eq(said);
      -- its own words stay its own, for the advice that reads them
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), true);
      world.handle("websocket_closed", FULL_URL, "going away", 1001);
      expect(world.daemon.status().lastError):eq("going away");
      -- a code without a reason (CC gives nil for an empty one) is no reason of the gateway's
      world.handle("timer", world.lastTimer);
      world.answerHello(world.open(), true);
      world.handle("websocket_closed", FULL_URL, nil, 1000);
      expect(world.daemon.status().lastError):eq("Connection closed");
      -- CC's own words, with no close code, are still CC's
      world.handle("timer", world.lastTimer);
      world.handle("websocket_failure", FULL_URL, "Could not connect");
      said = world.daemon.status().lastError;
      expect(said:sub(1, #"Could not connect (the gateway answered here until ")):eq("Could not connect (the gateway answered here until ");
    end);

    it("closes the old socket and reconnects after exactly 5 s", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.handle("websocket_closed", FULL_URL, "Connection closed", nil);
      expect(socket.closed):eq(1);
      expect(world.timerCount()):eq(1);
      expect(world.timers[world.lastTimer]):eq(5);
      local status = world.daemon.status();
      expect(status.connected):eq(false);
      expect(status.state):eq("waiting");
      expect(status.lastError):eq("Connection closed");
      expect(#world.connects):eq(1);

      world.handle("timer", world.lastTimer - 1); -- not ours
      expect(#world.connects):eq(1);
      world.handle("timer", world.lastTimer);
      expect(world.connects):same({ FULL_URL, FULL_URL });
      expect(world.daemon.status().state):eq("connecting");
    end);

    it("tries again when CC never tells how an attempt ended (a full queue dropped it)", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.handle("trapos_sandbox_reconnect"); -- the attempt running is still ours
      expect(#world.connects):eq(1);
      world.handle("timer", world.timerOf(daemonLib.CONNECT_WAIT));
      local status = world.daemon.status();
      expect(status.state):eq("waiting");
      expect(status.lastError):eq("no outcome of the connection to " .. FULL_URL .. " within "
        .. daemonLib.CONNECT_WAIT .. " s (CC's full event queue may have dropped it): trying again");
      world.handle("timer", world.timerOf(5));
      expect(world.connects):same({ FULL_URL, FULL_URL });
      expect(world.daemon.status().state):eq("connecting");
      local wait = world.lastTimer;
      expect(world.timers[wait]):eq(daemonLib.CONNECT_WAIT);
      -- Both attempts end at last: the first socket is taken, the second closed.
      local first, second = newSocket(), newSocket();
      world.handle("websocket_success", FULL_URL, first);
      world.handle("websocket_success", FULL_URL, second);
      expect(world.daemon.status().state):eq("authenticating");
      expect(#first.sent):eq(1);
      expect(first.closed):eq(0);
      expect(second.closed):eq(1);
      expect(world.cancelled[wait]):eq(true);
    end);

    it("keeps the socket it has when the other attempt on its URL fails", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.handle("timer", world.timerOf(daemonLib.CONNECT_WAIT));
      world.handle("timer", world.timerOf(5));
      expect(#world.connects):eq(2);
      local socket = world.open(); -- the first attempt's late success
      world.answerHello(socket, true);
      expect(world.daemon.status().state):eq("connected");
      world.handle("websocket_failure", FULL_URL, "Connection refused"); -- the second attempt's outcome
      expect(world.daemon.status().state):eq("connected");
      expect(socket.closed):eq(0);
    end);

    it("stops for good on 4009 even with an attempt it gave up on still out", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.handle("timer", world.timerOf(daemonLib.CONNECT_WAIT));
      world.handle("timer", world.timerOf(5));
      local socket = world.open(); -- one of the two attempts; the other may still end
      world.answerHello(socket, true);
      expect(world.daemon.status().state):eq("connected");
      world.handle("websocket_closed", FULL_URL, "replaced", 4009);
      expect(world.daemon.status().state):eq("replaced");
    end);

    it("records an asynchronous failure and retries", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.handle("websocket_failure", FULL_URL, "Domain not permitted");
      local status = world.daemon.status();
      expect(status.lastError):eq("Domain not permitted");
      expect(status.state):eq("waiting");
      expect(world.timers[world.lastTimer]):eq(5);
    end);

    it("records a synchronous failure once, not twice", function()
      local world = newWorld({ url = "http://127.0.0.1:4444", syncFailure = "Invalid scheme 'http'" });
      world.daemon.start();
      expect(world.daemon.status().lastError):eq("Invalid scheme 'http'");
      expect(world.timerCount()):eq(1);
      -- CC also queues websocket_failure for a synchronous failure.
      world.handle("websocket_failure", world.connects[1], "Invalid scheme 'http'");
      expect(world.timerCount()):eq(1);
    end);

    it("tries a URL of another scheme as set, so that its refusal names what the player typed", function()
      local world = newWorld({ url = "ftp://10.0.0.9", syncFailure = "Invalid scheme 'ftp'" });
      world.daemon.start();
      expect(world.connects[1]):eq("ftp://10.0.0.9");
      local status = world.daemon.status();
      expect(status.url):eq("ftp://10.0.0.9");
      expect(require('/apis/libsandboxadvice').explain(status.lastError, status.url))
        :eq("sandbox.url ftp://10.0.0.9 starts with ftp://, not ws:// or wss:// (e.g. ws://192.168.1.20:4444). Fix it with: sandbox setup");
    end);

    it("records a raising websocketAsync and retries", function()
      local world = newWorld({ url = URL, raise = "Too many websockets already open" });
      world.daemon.start();
      expect(world.daemon.status().lastError):str_match("Too many websockets already open");
      expect(world.timers[world.lastTimer]):eq(5);
    end);

    it("answers every in-flight request with not_connected", function()
      local world = newWorld({ url = URL });
      world.connect();
      world.handle("trapos_sandbox_send", "a", "probe_gateway", {});
      world.handle("trapos_sandbox_send", "b", "probe_gateway", {});
      expect(#world.events("trapos_sandbox_reply")):eq(0);
      world.handle("websocket_closed", FULL_URL, "Connection closed", nil);
      local replies = world.events("trapos_sandbox_reply");
      expect(#replies):eq(2);
      local ids = {};
      for _, reply in ipairs(replies) do
        ids[reply[2]] = true;
        expect(reply[3]):eq(false);
        expect(reply[5].code):eq("not_connected");
        expect(reply[5].message):str_match("Connection closed");
      end
      expect(ids):same({ a = true, b = true });
    end);

    it("closes a stale socket of a superseded URL", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.values["sandbox.url"] = "ws://10.0.0.2:4444";
      world.handle("setting_changed", "sandbox.url", "ws://10.0.0.2:4444", URL);
      local stale = newSocket();
      world.handle("websocket_success", FULL_URL, stale);
      expect(stale.closed):eq(1);
      expect(#stale.sent):eq(0);
      expect(world.daemon.status().state):eq("connecting");
      expect(world.daemon.status().url):eq("ws://10.0.0.2:4444/trapos/ws");
    end);

    it("drops the socket and reconnects when the URL changes", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.values["sandbox.url"] = "ws://10.0.0.2:4444/custom";
      world.handle("setting_changed", "sandbox.url", "ws://10.0.0.2:4444/custom", URL);
      expect(socket.closed):eq(1);
      expect(world.connects[2]):eq("ws://10.0.0.2:4444/custom");
    end);

    it("goes dormant when sandbox.url is unset", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.values["sandbox.url"] = nil;
      world.handle("setting_changed", "sandbox.url", nil, URL);
      expect(socket.closed):eq(1);
      expect(world.daemon.status().state):eq("dormant");
      expect(world.timerCount()):eq(0);
    end);
  end);

  describe("gateway requests", function()
    it("answers ping with the traposId", function()
      local world = newWorld({ url = URL, label = "base" });
      local socket = world.connect();
      world.message({
        event = "gateway_request", traposReceiverId = "7:base", messageId = "p-1", type = "ping",
        payload = textutils.empty_json_array,
      });
      expect(#socket.sent):eq(2);
      expect(socket.frame(2)):same({
        event = "computer_response",
        traposSenderId = "7:base",
        messageId = "p-1",
        type = "ping",
        ok = true,
        payload = { traposId = "7:base" },
      });
    end);

    it("answers any other type with unknown_type", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.message({ event = "gateway_request", traposReceiverId = "7:", messageId = "q-1", type = "reboot" });
      local response = socket.frame(2);
      expect(response.event):eq("computer_response");
      expect(response.messageId):eq("q-1");
      expect(response.type):eq("reboot");
      expect(response.ok):eq(false);
      expect(response.payload):eq(nil);
      expect(response.error.code):eq("unknown_type");
      expect(response.error.message):type("string");
    end);

    it("answers forbidden by default and serves once the owner allows it", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.message({ event = "gateway_request", messageId = "x-1", type = "lua.exec", payload = { code = "1+1" } });
      expect(socket.frame(2).error.code):eq("forbidden");
      world.values["sandbox.allow_exec"] = true;
      world.message({ event = "gateway_request", messageId = "x-2", type = "lua.exec", payload = { code = "1+1" } });
      expect(socket.frame(3).ok):eq(true);
      expect(socket.frame(3).payload.returns):same({ 2 });
    end);

    it("answers pings while a lua.exec chunk waits, then the chunk", function()
      local world = newWorld({ url = URL });
      world.values["sandbox.allow_exec"] = true;
      local socket = world.connect();
      world.message({ event = "gateway_request", messageId = "slow", type = "lua.exec",
        payload = { code = "local _, what = os.pullEvent('go'); print('got ' .. what); return what" } });
      expect(#socket.sent):eq(1);
      world.message({ event = "gateway_request", messageId = "p", type = "ping" });
      expect(socket.frame(2).messageId):eq("p");
      expect(world.handle("go", "north")):eq(true);
      local answer = socket.frame(3);
      expect(answer.messageId):eq("slow");
      expect(answer.payload):same({ returns = { "north" }, output = "got north\n" });
    end);

    it("stops cleanly on sandbox stop while a lua.exec chunk waits", function()
      local world = newWorld({ url = URL });
      world.values["sandbox.allow_exec"] = true;
      local socket = world.connect();
      world.message({ event = "gateway_request", messageId = "slow", type = "lua.exec", payload = { code = "os.pullEvent('go')" } });
      expect(world.handle("trapos_sandbox_stop")):eq(true);
      expect(world.daemon.status().state):eq("stopped");
      expect(socket.closed):eq(1);
      expect(world.handle("go")):eq(true);
      expect(#socket.sent):eq(2); -- the hello and the bye: no answer after the stop
      expect(socket.frame().type):eq("bye");
    end);

    it("drops an answer whose connection is gone", function()
      local world = newWorld({ url = URL });
      world.values["sandbox.allow_exec"] = true;
      local socket = world.connect();
      world.message({ event = "gateway_request", messageId = "slow", type = "lua.exec", payload = { code = "os.pullEvent('go')" } });
      world.handle("websocket_closed", FULL_URL, "gone");
      world.handle("go");
      expect(#socket.sent):eq(1);
      expect(#world.logs):eq(0);
    end);

    it("answers internal when the answer would exceed 128 KiB", function()
      local world = newWorld({ url = URL });
      world.values["sandbox.allow_exec"] = true;
      local socket = world.connect();
      world.message({ event = "gateway_request", messageId = "big", type = "lua.exec", payload = { code = "string.rep('\\255', 30000)" } });
      local answer = socket.frame(2);
      expect(answer.ok):eq(false);
      expect(answer.error.code):eq("internal");
      -- 30000 bytes, each \u00ff (six bytes) in the frame: the size said is the frame's.
      expect(answer.error.message):eq("the answer to lua.exec cannot be sent: Message is too large (180136 bytes once encoded, "
        .. "the limit is 131072): return less, or write it to a file on the computer and read the file");
    end);

    it("refuses a payload string above U+00FF with bad_payload", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.handle("websocket_message", FULL_URL,
        '{"event":"gateway_request","messageId":"u","type":"fs.read","payload":{"path":"\\u0101"}}', false);
      expect(socket.frame(2).error.code):eq("bad_payload");
    end);

    it("ignores malformed frames and keeps the connection", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      local queuedBefore = #world.queued;
      for _, raw in ipairs({ "not json", "null", "[]", "{}", '{"event":"gateway_request"}', '{"event":"computer_request","messageId":"x","type":"t"}' }) do
        expect(world.handle("websocket_message", FULL_URL, raw, false)):eq(true);
      end
      expect(#socket.sent):eq(1);
      -- The daemon's marker (one: they waited together) is all it queued.
      expect(#world.queued):eq(queuedBefore + 1);
      expect(world.queued[#world.queued][1]):eq("trapos_sandbox_mark");
      expect(world.daemon.status().connected):eq(true);
      expect(#world.logs):eq(0);
    end);

    it("ignores messages for another URL", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.handle("websocket_message", "ws://elsewhere/x", textutils.serializeJSON({
        event = "gateway_request", messageId = "p", type = "ping",
      }), false);
      expect(#socket.sent):eq(1);
    end);
  end);

  describe("defending the computer", function()
    it("drops a gateway with more frames waiting than it may have in flight, and waits 60 s", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.flood(lib.MAX_GATEWAY_REQUESTS + 8);
      -- 32 answered; the 33rd waiting frame broke the limit: closed, and not listened to since.
      expect(#socket.sent):eq(1 + lib.MAX_GATEWAY_REQUESTS);
      expect(socket.closed):eq(1);
      local status = world.daemon.status();
      expect(status.state):eq("waiting");
      expect(status.lastError):eq("closed the connection (4429 too many requests): the gateway had 33 frames "
        .. "waiting here at once, more than the 32 it may have in flight (docs/protocol.md); reconnecting in 60 s");
      expect(world.timers[world.lastTimer]):eq(daemonLib.OVERLOAD_RECONNECT_DELAY);
      expect(daemonLib.OVERLOAD_RECONNECT_DELAY):eq(60);
      expect(status.faults):eq(1);
      expect(status.lastFault):eq(status.lastError);
      expect(world.logs):same({ status.lastError });
      world.flushMarks();
      expect(world.daemon.status().state):eq("waiting");
      -- After the wait it tries the gateway again.
      world.handle("timer", world.lastTimer);
      expect(#world.connects):eq(2);
    end);

    it("counts a flood of requests it answers at once, which no unanswered count would see", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      for i = 1, 100 do
        world.message({ event = "gateway_request", messageId = "one-by-one-" .. i, type = "ping" });
      end
      expect(#socket.sent):eq(101);
      expect(socket.closed):eq(0);
      world.flood(lib.MAX_GATEWAY_REQUESTS + 1);
      expect(socket.closed):eq(1);
    end);

    it("takes as many frames waiting as the gateway may have in flight, again and again", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      for _ = 1, 3 do
        world.flood(lib.MAX_GATEWAY_REQUESTS);
        world.flushMarks();
      end
      expect(socket.closed):eq(0);
      expect(#socket.sent):eq(1 + 3 * lib.MAX_GATEWAY_REQUESTS);
      expect(world.daemon.status().connected):eq(true);
    end);

    it("allows one answer more for each request of its own in flight", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      for i = 1, 3 do
        world.handle("trapos_sandbox_send", "own-" .. i, "probe_gateway", {});
      end
      world.flushMarks();
      for i = 1, 3 do
        world.handle("websocket_message", FULL_URL, textutils.serializeJSON({
          event = "gateway_response", messageId = "own-" .. i, type = "probe_gateway", ok = true, payload = { sandboxOk = true },
        }), false);
      end
      world.flood(lib.MAX_GATEWAY_REQUESTS);
      expect(socket.closed):eq(0);
      expect(#world.events("trapos_sandbox_reply")):eq(3);
      world.flood(1);
      expect(socket.closed):eq(1);
    end);

    it("sends no more requests than the gateway takes in flight, so one that answers none gains no allowance", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      -- The gateway answers none of the programs' requests (their programs gave up long ago).
      for i = 1, codec.MAX_COMPUTER_REQUESTS + 200 do
        world.handle("trapos_sandbox_send", "own-" .. i, "probe_gateway", {});
      end
      expect(#socket.sent):eq(1 + codec.MAX_COMPUTER_REQUESTS);
      local refused = world.events("trapos_sandbox_reply");
      expect(#refused):eq(200);
      expect(refused[1][2]):eq("own-" .. (codec.MAX_COMPUTER_REQUESTS + 1));
      expect(refused[1][5]):same({ code = "internal", message = "the gateway has not answered 16 requests of this "
        .. "computer yet (the most it takes in flight on one connection); retry once it has, or run: sandbox reconnect" });
      expect(world.daemon.status().connected):eq(true);
      -- What it may have in flight is 32 requests and one answer to each of those 16.
      world.flushMarks();
      world.flood(lib.MAX_GATEWAY_REQUESTS + codec.MAX_COMPUTER_REQUESTS);
      expect(socket.closed):eq(0);
      world.flood(1);
      expect(socket.closed):eq(1);
    end);

    it("sends a request again once the gateway answered one of those in flight", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      for i = 1, codec.MAX_COMPUTER_REQUESTS do
        world.handle("trapos_sandbox_send", "own-" .. i, "probe_gateway", {});
      end
      world.message({ event = "gateway_response", messageId = "own-3", type = "probe_gateway", ok = true, payload = {} });
      world.handle("trapos_sandbox_send", "next", "probe_gateway", {});
      expect(socket.frame().messageId):eq("next");
      expect(#world.events("trapos_sandbox_reply")):eq(1); -- own-3's answer; next went out
    end);

    it("forgets a marker that a full queue dropped", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.flood(20);
      -- CC's queue was full: the marker is never coming, and 256 events prove it.
      for _ = 1, daemonLib.EVENT_QUEUE_LIMIT do
        world.handle("key", 65, false);
      end
      world.flood(20);
      expect(socket.closed):eq(0);
      world.flood(lib.MAX_GATEWAY_REQUESTS - 20 + 1);
      expect(socket.closed):eq(1);
    end);

    it("answers internal past 32 unanswered requests, keeping the connection", function()
      local world = newWorld({ url = URL });
      world.values["sandbox.allow_exec"] = true;
      local socket = world.connect();
      -- Answered at once: it holds no place, and is not named.
      world.message({ event = "gateway_request", messageId = "answered", type = "ping" });
      for i = 1, lib.MAX_GATEWAY_REQUESTS do
        world.message({ event = "gateway_request", messageId = "job-" .. i, type = "lua.exec", payload = { code = "os.pullEvent('go')" } });
      end
      expect(#socket.sent):eq(2);
      world.message({ event = "gateway_request", messageId = "one-too-many", type = "ping" });
      local refused = socket.frame(3);
      expect(refused.messageId):eq("one-too-many");
      expect(refused.error.code):eq("internal");
      expect(refused.error.message):eq("this computer already has 32 requests from the gateway in flight "
        .. "(the protocol's limit), 32 of them lua.exec; retry once they are answered");
      world.handle("go");
      expect(#socket.sent):eq(3 + lib.MAX_GATEWAY_REQUESTS);
      world.message({ event = "gateway_request", messageId = "room-again", type = "ping" });
      expect(socket.frame().ok):eq(true);
      expect(world.daemon.status().connected):eq(true);
    end);

    it("keeps no record of the types of requests it has answered", function()
      local world = newWorld({ url = URL });
      world.values["sandbox.allow_exec"] = true;
      local socket = world.connect();
      -- Each of a gateway's ever new types (up to 128 KiB each) was kept for good.
      for i = 1, 500 do
        world.message({ event = "gateway_request", messageId = "t-" .. i, type = "type-" .. i .. ("x"):rep(100) });
      end
      for i = 1, lib.MAX_GATEWAY_REQUESTS do
        world.message({ event = "gateway_request", messageId = "job-" .. i, type = "lua.exec", payload = { code = "os.pullEvent('go')" } });
      end
      -- Past the limit the daemon looks over what it owes, by type, to name the most: that is
      -- all it keeps of them (the spec sees it through pairs).
      local largest, realPairs = 0, pairs;
      stub(_G, "pairs", function(t)
        local n = 0;
        for _ in realPairs(t) do
          n = n + 1;
        end
        largest = math.max(largest, n);
        return realPairs(t);
      end);
      world.message({ event = "gateway_request", messageId = "one-too-many", type = "ping" });
      _G.pairs = realPairs;
      expect(socket.frame().error.message):str_match("32 of them lua%.exec");
      expect(largest < 100):eq(true); -- the 32 jobs are looked over too; the 500 types no more
    end);

    it("answers a payload nested 5000 deep with bad_payload, nothing logged", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.handle("websocket_message", FULL_URL, '{"event":"gateway_request","messageId":"deep","type":"fs.list","payload":{"path":'
        .. string.rep("[", 5000) .. string.rep("]", 5000) .. '}}', false);
      local answer = socket.frame(2);
      expect(answer.messageId):eq("deep");
      expect(answer.error.code):eq("bad_payload");
      expect(answer.error.message):str_match("nested deeper than 100 levels");
      expect(world.logs):same({});
      expect(world.daemon.status().faults):eq(0);
    end);

    it("drops a socket CC closed when an answer finds it so, quietly, and keeps CC's reason", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      socket.closed = 1; -- the gateway closed it; CC's websocket_closed waits behind this frame
      world.message({ event = "gateway_request", messageId = "late", type = "ping" });
      expect(world.logs):same({});
      expect(world.daemon.status().faults):eq(0);
      expect(world.daemon.status().state):eq("waiting");
      expect(world.daemon.status().lastError):eq("the connection closed (attempt to use a closed file)");
      -- Frames behind it are not answered: the socket is gone.
      world.message({ event = "gateway_request", messageId = "later", type = "ping" });
      expect(#socket.sent):eq(1);
      world.handle("websocket_closed", FULL_URL, "replaced", 4009);
      expect(world.daemon.status().lastError):eq("replaced: another computer said hello with this computer's id");
      expect(world.daemon.status().state):eq("replaced");
      expect(world.timerCount()):eq(0);
    end);

    for _, case in ipairs({ { 4009, "replaced", "replaced: another computer said hello with this computer's id" },
      { 4003, "revoked", "revoked: this computer's credential was revoked" } }) do
      local code, state, why = case[1], case[2], case[3];
      it("stops for good when closed " .. code .. " " .. state .. ", until asked to reconnect", function()
        local world = newWorld({ url = URL });
        local socket = world.connect();
        world.handle("websocket_closed", FULL_URL, state, code);
        expect(socket.closed):eq(1);
        expect(world.timerCount()):eq(0);
        expect(#world.connects):eq(1);
        local status = world.daemon.status();
        expect(status.state):eq(state);
        expect(status.connected):eq(false);
        expect(status.lastError):eq(why);
        world.handle("trapos_sandbox_reconnect");
        expect(#world.connects):eq(2);
      end);
    end

    it("still reconnects after other closes", function()
      local world = newWorld({ url = URL });
      world.connect();
      world.handle("websocket_closed", FULL_URL, "going away", 1001);
      expect(world.daemon.status().state):eq("waiting");
      expect(world.timers[world.lastTimer]):eq(5);
    end);
  end);

  describe("requests from programs", function()
    it("sends a computer_request and relays the reply", function()
      local world = newWorld({ url = URL, label = "base" });
      local socket = world.connect();
      world.handle("trapos_sandbox_send", "m-1", "probe_gateway", {});
      local request = socket.frame(2);
      expect(request):same({
        event = "computer_request",
        traposSenderId = "7:base",
        messageId = "m-1",
        type = "probe_gateway",
        payload = {},
      });
      expect(socket.sent[2]):str_match('"payload":{}');
      world.message({
        event = "gateway_response", traposReceiverId = "7:base", messageId = "m-1", type = "probe_gateway",
        ok = true, payload = { sandboxOk = true, opencodeOk = false, opencodeDetail = "refused" },
      });
      local replies = world.events("trapos_sandbox_reply");
      expect(#replies):eq(1);
      expect(replies[1][2]):eq("m-1");
      expect(replies[1][3]):eq(true);
      expect(replies[1][4]):same({ sandboxOk = true, opencodeOk = false, opencodeDetail = "refused" });
      expect(replies[1][5]):eq(nil);
    end);

    it("relays a failed reply's error", function()
      local world = newWorld({ url = URL });
      world.connect();
      world.handle("trapos_sandbox_send", "m-1", "nope", {});
      world.message({
        event = "gateway_response", messageId = "m-1", type = "nope",
        ok = false, error = { code = "unknown_type", message = "no handler" },
      });
      local reply = world.events("trapos_sandbox_reply")[1];
      expect(reply[3]):eq(false);
      expect(reply[5]):same({ code = "unknown_type", message = "no handler" });
    end);

    it("relays a [] payload as a writable table", function()
      local world = newWorld({ url = URL });
      world.connect();
      world.handle("trapos_sandbox_send", "m-1", "t", nil);
      world.handle("websocket_message", FULL_URL,
        '{"event":"gateway_response","messageId":"m-1","type":"t","ok":true,"payload":[]}', false);
      local payload = world.events("trapos_sandbox_reply")[1][4];
      expect(payload):same({});
      payload.x = 1;
    end);

    it("does not relay replies to requests it did not send", function()
      local world = newWorld({ url = URL });
      world.connect();
      world.message({ event = "gateway_response", messageId = "unknown", type = "t", ok = true, payload = {} });
      expect(#world.events("trapos_sandbox_reply")):eq(0);
    end);

    it("answers not_connected at once while still connecting", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.handle("trapos_sandbox_send", "m-1", "t", {});
      local reply = world.events("trapos_sandbox_reply")[1];
      expect(reply[2]):eq("m-1");
      expect(reply[5].code):eq("not_connected");
      expect(reply[5].message):str_match("still connecting");
    end);

    it("answers not_connected naming the unanswered hello while authenticating", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.open();
      world.handle("trapos_sandbox_send", "m-1", "t", {});
      local reply = world.events("trapos_sandbox_reply")[1];
      expect(reply[5]):same({ code = "not_connected",
        message = "the server at " .. FULL_URL .. " has not answered the hello yet (is sandbox.url a trap-sandbox gateway?)" });
    end);

    it("answers not_connected with the last error while waiting to reconnect", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.handle("websocket_failure", FULL_URL, "Could not connect");
      world.handle("trapos_sandbox_send", "m-1", "t", {});
      expect(world.events("trapos_sandbox_reply")[1][5])
        :same({ code = "not_connected", message = "Could not connect" });
    end);

    it("refuses a message over 128 KiB with internal, keeping the socket", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.handle("trapos_sandbox_send", "big", "t", { blob = string.rep("x", lib.MAX_MESSAGE_BYTES + 1) });
      expect(#socket.sent):eq(1);
      local reply = world.events("trapos_sandbox_reply")[1];
      expect(reply[2]):eq("big");
      expect(reply[5].code):eq("internal");
      expect(reply[5].message):str_match("too large");
      expect(world.daemon.status().connected):eq(true);
    end);

    it("treats a failing send as a lost connection", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      socket.closed = 1; -- the socket died under us
      world.handle("trapos_sandbox_send", "m-1", "t", {});
      local reply = world.events("trapos_sandbox_reply")[1];
      expect(reply[5].code):eq("not_connected");
      expect(world.daemon.status().state):eq("waiting");
      expect(world.timers[world.lastTimer]):eq(5);
    end);
  end);

  describe("status and lifecycle", function()
    it("answers a status request with its state", function()
      local world = newWorld({ url = URL, label = "base" });
      world.connect();
      world.handle("trapos_sandbox_status_request", "r-1");
      local event = world.events("trapos_sandbox_status")[1];
      expect(event[2]):eq("r-1");
      expect(event[3].url):eq(FULL_URL);
      expect(event[3].connected):eq(true);
      expect(event[3].state):eq("connected");
      expect(event[3].traposId):eq("7:base");
      expect(event[3].lastError):eq(nil);
    end);

    it("keeps running on the player's terminate, as CC's rednet.run does", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      expect(world.handle("terminate")):eq(true);
      expect(socket.closed):eq(0);
      expect(world.daemon.status().state):eq("connected");
      world.handle("trapos_sandbox_send", "m-1", "t", {});
      expect(socket.frame(#socket.sent).messageId):eq("m-1");
    end);

    it("closes the socket on sandbox stop, answers its status, and starts again on a reconnect", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      world.handle("trapos_sandbox_send", "m-1", "t", {});
      expect(world.handle("trapos_sandbox_stop")):eq(true);
      expect(socket.closed):eq(1);
      expect(world.events("trapos_sandbox_reply")[1][5].code):eq("not_connected");
      expect(world.daemon.status().state):eq("stopped");
      -- A program's request while stopped is answered at once, with the fix.
      world.handle("trapos_sandbox_send", "m-2", "t", {});
      local replies = world.events("trapos_sandbox_reply");
      expect(#replies):eq(2);
      expect(replies[2][2]):eq("m-2");
      expect(replies[2][5]):same({ code = "not_connected",
        message = "the sandbox daemon has stopped (sandbox stop): run sandbox reconnect" });
      world.handle("timer", 1);
      world.handle("setting_changed", "sandbox.url");
      expect(#world.connects):eq(1);
      world.handle("trapos_sandbox_status_request", "r-1");
      local event = world.events("trapos_sandbox_status")[1];
      expect(event[3].state):eq("stopped");
      expect(event[3].connected):eq(false);
      world.handle("trapos_sandbox_reconnect");
      expect(#world.connects):eq(2);
      expect(world.daemon.status().state):eq("connecting");
    end);

    it("closes a socket its attempt opens after sandbox stop, and connects anew on a reconnect", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.handle("trapos_sandbox_stop");
      local late = world.open(); -- the attempt running at the stop
      expect(late.closed):eq(1);
      expect(#late.sent):eq(0);
      expect(world.daemon.status().state):eq("stopped");
      world.handle("trapos_sandbox_reconnect");
      expect(#world.connects):eq(2);
      local socket = world.open();
      expect(socket.closed):eq(0);
      expect(world.daemon.status().state):eq("authenticating");
    end);

    it("keeps running on a terminate the host typed (screen.input), and on the player's", function()
      local world = newWorld({ url = URL });
      world.values["sandbox.allow_screen"] = "control";
      local socket = world.connect();
      world.message({ event = "gateway_request", messageId = "g-1", type = "screen.input",
        payload = { events = { { type = "terminate" } } } });
      local answer = socket.frame(#socket.sent);
      expect(answer.ok):eq(true);
      expect(answer.payload.queued):eq(1);
      expect(world.events("terminate")[1] ~= nil):eq(true);
      expect(world.handle("terminate")):eq(true);
      expect(world.daemon.status().state):eq("connected");
      expect(socket.closed):eq(0);
    end);

    it("cancels a pending reconnect on sandbox stop", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.handle("websocket_failure", FULL_URL, "Could not connect");
      local timer = world.lastTimer;
      world.handle("trapos_sandbox_stop");
      expect(world.cancelled[timer]):eq(true);
    end);

    it("logs a fault that quotes the gateway as one short line", function()
      local world = newWorld({ url = URL });
      local socket = world.connect();
      -- An answer that cannot be sent even as internal, as it repeats the type: a fault.
      local msgType = ("t"):rep(70000);
      world.message({ event = "gateway_request", messageId = ("m"):rep(50000), type = msgType });
      expect(#socket.sent):eq(1);
      local status = world.daemon.status();
      expect(status.faults):eq(1);
      expect(#status.lastFault < 300):eq(true);
      expect(status.lastFault):str_match("^cannot answer tttt.*%.%.%.%(cut, %d+ bytes%)$");
      expect(world.logs):same({ status.lastFault });
    end);

    it("survives a failing handler and logs it", function()
      local world = newWorld({ url = URL });
      world.daemon.start();
      world.settings.get = function() error("settings exploded", 0); end;
      expect(world.handle("setting_changed", "sandbox.url")):eq(true);
      expect(#world.logs):eq(1);
      expect(world.logs[1]):str_match("settings exploded");
      expect(world.daemon.status().faults):eq(1);
      expect(world.daemon.status().lastFault):eq(world.logs[1]);
      expect(world.handle("trapos_sandbox_status_request", "r")):eq(true);
    end);
  end);
end);
