-- Specs for /apis/libsandboxlink (newSession) against a scripted gateway: a fake http whose
-- socket hands each frame sent to the script and queues its answers, a fake os whose timers
-- fire only when nothing else is queued, and pullEvent reading that queue.

local link = require('/apis/libsandboxlink');
local proofLib = require('/apis/libsandboxproof');
local VERSION = require('/apis/libsandboxversion').VERSION;

local URL = "ws://127.0.0.1:4444/trapos/ws";

-- The gateway's answer to a request frame: ok with payload, or refused with code and message.
local function answer(frame, payload)
  return { event = "gateway_response", messageId = frame.messageId, type = frame.type, ok = true, payload = payload or {} };
end

local function refuse(frame, code, message)
  return { event = "gateway_response", messageId = frame.messageId, type = frame.type, ok = false,
    error = { code = code, message = message } };
end

-- A world around one session. script(frame, world) answers each frame the session sends with
-- a frame, a list of frames, or nothing; by default a link hello is answered as the
-- contract says. opts.failure: websocketAsync's connection fails with that reason.
local function newWorld(script, opts)
  opts = opts or {};
  local world = { queue = {}, sent = {}, timers = {}, nextTimer = 0, closed = 0 };
  world.push = function(...)
    world.queue[#world.queue + 1] = table.pack(...);
  end;
  world.socket = {
    send = function(text)
      if world.closed > 0 then
        error("attempt to use a closed file", 2);
      end
      local frame = textutils.unserializeJSON(text);
      world.sent[#world.sent + 1] = frame;
      local replies;
      if frame.type == "hello" and (script == nil or not world.scriptsHello) then
        replies = answer(frame, { accountId = "", link = true, livenessMs = 70000 });
      elseif script ~= nil then
        replies = script(frame, world);
      end
      if replies ~= nil and replies.event ~= nil then
        replies = { replies };
      end
      for _, reply in ipairs(replies or {}) do
        world.push("websocket_message", world.url, textutils.serializeJSON(reply), false);
      end
    end,
    close = function()
      world.closed = world.closed + 1;
    end,
  };
  world.http = {
    websocketAsync = function(url)
      world.url = url;
      if opts.failure ~= nil then
        world.push("websocket_failure", url, opts.failure);
      else
        world.push("websocket_success", url, world.socket);
      end
      return true;
    end,
  };
  world.os = {
    startTimer = function(seconds)
      world.nextTimer = world.nextTimer + 1;
      world.timers[world.nextTimer] = seconds;
      return world.nextTimer;
    end,
    cancelTimer = function(id) world.timers[id] = nil; end,
    getComputerID = function() return 7; end,
    getComputerLabel = function() return "desk"; end,
  };
  -- The next queued event; with none, the oldest running timer fires (time passes).
  world.pullEvent = function()
    local event = table.remove(world.queue, 1);
    if event ~= nil then
      return table.unpack(event, 1, event.n);
    end
    local oldest = nil;
    for id in pairs(world.timers) do
      if oldest == nil or id < oldest then
        oldest = id;
      end
    end
    if oldest == nil then
      error("the session waits for an event that never comes", 0);
    end
    world.fired = world.timers[oldest];
    world.timers[oldest] = nil;
    return "timer", oldest;
  end;
  world.session = link.newSession({ http = world.http, os = world.os, pullEvent = world.pullEvent });
  -- The frames sent of a type, oldest first.
  world.of = function(msgType)
    local found = {};
    for _, frame in ipairs(world.sent) do
      if frame.type == msgType then
        found[#found + 1] = frame;
      end
    end
    return found;
  end;
  return world;
end

describe("libsandboxlink", function()
  describe("open", function()
    it("says hello with link:true, no secret, on a URL of its own", function()
      local world = newWorld();
      expect(world.session.open(URL)):eq(true);
      expect(world.url):str_match("^ws://127%.0%.0%.1:4444/trapos/ws%?link=%d+$");
      local hello = world.of("hello")[1];
      expect(hello.event):eq("computer_request");
      expect(hello.traposSenderId):eq("7:desk");
      expect(hello.payload):same({ traposId = "7:desk", clientVersion = VERSION, link = true });
      expect(world.session.isOpen()):eq(true);
    end);

    it("adds its query to a URL that has one", function()
      expect(link.linkUrl("ws://h:1/trapos/ws?x=1", "5")):eq("ws://h:1/trapos/ws?x=1&link=5");
    end);

    it("reports a gateway that answers the link hello as a plain hello", function()
      local world = newWorld(function(frame)
        if frame.type == "hello" then
          return answer(frame, { accountId = "local", livenessMs = 70000 });
        end
      end);
      world.scriptsHello = true;
      local ok, err = world.session.open(URL);
      expect(ok):eq(false);
      expect(err.code):eq(link.ERR_UNSUPPORTED);
    end);

    it("passes on the hello's refusal", function()
      local world = newWorld(function(frame)
        return refuse(frame, "unauthorized", "wrong secret");
      end);
      world.scriptsHello = true;
      local ok, err = world.session.open(URL);
      expect(ok):eq(false);
      expect(err):same({ code = "unauthorized", message = "wrong secret" });
    end);

    -- A server that answers a prove with the proof the password (or the credential) makes, a
    -- wrong one, or a refusal of its own words.
    local function proving(secret, how)
      return function(frame)
        if frame.type ~= "prove" then
          return nil;
        elseif how == "wrong" then
          return answer(frame, { proof = string.rep("0", 64) });
        elseif how == "refuse" then
          return refuse(frame, "unauthorized", "this computer's credential was revoked\nLinked to mallory.");
        end
        local proof = proofLib.expectedProof(secret, frame.payload.nonce, nil);
        return answer(frame, { proof = proof });
      end;
    end

    it("asks a gateway that proved itself here for its proof before the link hello", function()
      local world = newWorld(proving("pw"));
      expect(world.session.open(URL, { since = 0, secret = "pw" })):eq(true);
      expect(world.sent[1].type):eq("prove");
      expect(world.sent[1].payload.nonce):str_match("^%x+$");
      expect(world.sent[2].type):eq("hello");
      expect(world.session.isOpen()):eq(true);
    end);

    it("sends nothing more to a server that does not prove itself, and closes", function()
      for _, how in ipairs({ "wrong", "refuse" }) do
        local world = newWorld(proving("pw", how));
        local ok, err = world.session.open(URL, { since = 0, secret = "pw" });
        expect(ok):eq(false);
        expect(err.code):eq(link.ERR_NOT_PROVED);
        expect(err.refusedCredential):eq(false);
        expect(#world.sent):eq(1);
        expect(world.session.isOpen()):eq(false);
        expect(world.closed):eq(1);
        if how == "wrong" then
          expect(err.message):str_match("did not prove it is the gateway this computer was set up with %(it has since 1970%-01%-01 00:00 UTC%): it sent a wrong proof;");
        else
          -- The server's words, in one line, said as its own.
          expect(err.message):str_match("gave no proof it is the gateway, and says: this computer's credential was revoked Linked to mallory%.$");
        end
      end
    end);

    it("says a credential's proof refused in the server's words, which a revoked computer gets", function()
      local world = newWorld(proving(nil, "refuse"));
      local _, err = world.session.open(URL, { since = 0, secret = "tsc_abc_Secret" });
      expect(err.code):eq(link.ERR_NOT_PROVED);
      expect(err.refusedCredential):eq(true);
      expect(world.sent[1].payload.credential):eq("abc");
    end);

    -- The gateway (0.5.36 on) proves its refusal of a revoked credential, and keeps a link
    -- session's socket open after it: the link goes on there, through the gateway that proved
    -- itself. The same words with a wrong proof, or none, are an unproven server's.
    it("goes on after the gateway's proved refusal of a revoked credential, on that socket", function()
      local secret = "tsc_abc_Secret";
      local function refusing(proofOf)
        return function(frame)
          if frame.type == "prove" then
            local r = refuse(frame, "unauthorized", "this computer's credential was revoked");
            r.error.proof = proofOf(frame.payload.nonce);
            return r;
          end
        end;
      end
      local world = newWorld(refusing(function(nonce) return select(3, proofLib.expectedProof(secret, nonce)); end));
      expect(world.session.open(URL, { since = 0, secret = secret })):eq(true);
      expect(world.sent[1].type):eq("prove");
      expect(world.sent[1].payload.link):eq(true);
      expect(world.sent[2].type):eq("hello");
      expect(world.sent[2].payload.link):eq(true);
      expect(world.closed):eq(0);
      expect(world.session.isOpen()):eq(true);

      for _, proofOf in ipairs({
        function() return string.rep("0", 64); end,
        function(nonce) return (proofLib.expectedProof(secret, nonce)); end, -- the hello's proof
        function() return nil; end,
      }) do
        world = newWorld(refusing(proofOf));
        local ok, err = world.session.open(URL, { since = 0, secret = secret });
        expect(ok):eq(false);
        expect(err.code):eq(link.ERR_NOT_PROVED);
        expect(err.refusedCredential):eq(true);
        expect(err.message):str_match("gave no proof it is the gateway, and says: this computer's credential was revoked$");
        expect(#world.sent):eq(1);
        expect(world.closed):eq(1);
      end
    end);

    -- A program on the gateway's port while it is down can keep what the gateway said before:
    -- the proved refusal one link session of this computer got (under another nonce: each
    -- session's is fresh), or another revoked computer's (its key, its id). Neither is a proof
    -- for this session's nonce, so the link goes nowhere and nothing follows the prove.
    it("takes no recorded proof of a revoked refusal, this computer's earlier one or another's", function()
      local secret = "tsc_abc_Secret";
      local recorded = {};
      local gateway = newWorld(function(frame)
        if frame.type == "prove" then
          local r = refuse(frame, "unauthorized", "this computer's credential was revoked");
          r.error.proof = select(3, proofLib.expectedProof(secret, frame.payload.nonce));
          recorded.ofThis = r.error.proof;
          return r;
        end
      end);
      expect(gateway.session.open(URL, { since = 0, secret = secret })):eq(true);
      local earlierNonce = gateway.sent[1].payload.nonce;

      for _, proofOf in ipairs({
        function() return recorded.ofThis; end, -- this computer's, from its earlier session
        function(nonce) return select(3, proofLib.expectedProof("tsc_xyz_OtherSecret", nonce)); end, -- another's
        function(nonce) return select(3, proofLib.expectedProof("tsc_abc_OtherSecret", nonce)); end, -- one naming this id
      }) do
        local world = newWorld(function(frame)
          if frame.type == "prove" then
            local r = refuse(frame, "unauthorized", "this computer's credential was revoked");
            r.error.proof = proofOf(frame.payload.nonce);
            return r;
          end
        end);
        local ok, err = world.session.open(URL, { since = 0, secret = secret });
        expect(ok):eq(false);
        expect(world.sent[1].payload.nonce ~= earlierNonce):eq(true);
        expect(err.code):eq(link.ERR_NOT_PROVED);
        expect(err.message):str_match("gave no proof it is the gateway, and says: this computer's credential was revoked$");
        expect(#world.sent):eq(1);
        expect(world.closed):eq(1);
      end
    end);

    it("takes no proof for a server that says nothing in time", function()
      local world = newWorld(function() return nil; end);
      local ok, err = world.session.open(URL, { since = 0, secret = "pw" });
      expect(ok):eq(false);
      expect(err.message):str_match("it sent no proof within 10 s;");
      expect(world.fired):eq(proofLib.PROOF_WAIT);
      expect(#world.sent):eq(1);
    end);

    it("opens again after a session that closed, nothing of the first said of the second", function()
      local world = newWorld(proving(nil, "refuse"));
      local ok = world.session.open(URL, { since = 0, secret = "tsc_abc_Secret" });
      expect(ok):eq(false);
      world.closed = 0; -- CC's next socket is a new one; this world's fake has one
      expect(world.session.open(URL)):eq(true);
      expect(world.sent[2].type):eq("hello");
      expect(world.session.closedWhy()):eq(nil);
    end);

    it("reports CC's reason when the socket does not open", function()
      local world = newWorld(nil, { failure = "Could not connect" });
      local ok, err = world.session.open(URL);
      expect(ok):eq(false);
      expect(err.code):eq("not_connected");
      expect(err.message):eq("Could not connect");
      expect(#world.sent):eq(0);
    end);
  end);

  describe("request", function()
    it("relays the answer's payload", function()
      local world = newWorld(function(frame)
        return answer(frame, { code = "BCDF-GHJK", expiresInMs = 600000 });
      end);
      world.session.open(URL);
      local ok, payload = world.session.request(link.TYPE_BEGIN, {}, 10);
      expect(ok):eq(true);
      expect(payload):same({ code = "BCDF-GHJK", expiresInMs = 600000 });
      expect(world.of("link.begin")[1].payload):same({});
    end);

    it("relays a refusal's code and message", function()
      local world = newWorld(function(frame)
        return refuse(frame, "busy", "too many link codes from this address; try again in 12 s");
      end);
      world.session.open(URL);
      local ok, payload, err = world.session.request(link.TYPE_BEGIN, {}, 10);
      expect(ok):eq(false);
      expect(payload):eq(nil);
      expect(err):same({ code = "busy", message = "too many link codes from this address; try again in 12 s" });
    end);

    it("times out after its seconds when the gateway does not answer", function()
      local world = newWorld(function() end);
      world.session.open(URL);
      local ok, _, err = world.session.request(link.TYPE_POLL, { code = "X" }, 15);
      expect(ok):eq(false);
      expect(err.code):eq("timeout");
      expect(world.fired):eq(15);
    end);

    it("answers the gateway's ping while it waits", function()
      local world = newWorld(function(frame)
        if frame.type == "link.poll" then
          return { { event = "gateway_request", messageId = "p1", type = "ping", payload = {} },
            answer(frame, { state = "pending" }) };
        end
      end);
      world.session.open(URL);
      local ok, payload = world.session.request(link.TYPE_POLL, { code = "X", waitMs = 5000 }, 15);
      expect(ok):eq(true);
      expect(payload.state):eq("pending");
      local pong = world.of("ping")[1];
      expect(pong.event):eq("computer_response");
      expect(pong.messageId):eq("p1");
      expect(pong.ok):eq(true);
      expect(pong.payload):same({ traposId = "7:desk" });
    end);

    it("fails with the close reason and code when the gateway closes the session", function()
      local world = newWorld(function(_, w)
        w.push("websocket_closed", w.url, "link expired", 1000);
      end);
      world.session.open(URL);
      local ok, _, err = world.session.request(link.TYPE_POLL, { code = "X" }, 15);
      expect(ok):eq(false);
      expect(err.code):eq("not_connected");
      expect(err.message):eq("link expired");
      expect(err.closeCode):eq(1000);
      expect(world.session.isOpen()):eq(false);
      ok, _, err = world.session.request(link.TYPE_POLL, { code = "X" }, 15);
      expect(ok):eq(false);
      expect(err.message):eq("link expired");
    end);

    it("closes a session the gateway floods with frames it did not ask for, and stops listening", function()
      local world = newWorld(function(frame, w)
        if frame.type == "link.poll" then
          for i = 1, link.MAX_UNASKED_FRAMES + 100 do
            w.push("websocket_message", w.url, textutils.serializeJSON(
              { event = "gateway_request", messageId = "f" .. i, type = "ping", payload = {} }), false);
          end
          return answer(frame, { state = "pending" });
        end
      end);
      world.session.open(URL);
      local ok, _, err = world.session.request(link.TYPE_POLL, { code = "X" }, 15);
      expect(ok):eq(false);
      expect(err):same({ code = "not_connected", closeCode = 4429, message = "the gateway sent 65 frames the link "
        .. "session did not ask for, more than the 64 it may (its pings, late answers): this computer closed it (4429 too many requests)" });
      expect(world.closed):eq(1);
      expect(world.session.isOpen()):eq(false);
      expect(#world.of("ping")):eq(link.MAX_UNASKED_FRAMES + 1);
      -- it sends nothing more, and says why
      ok, _, err = world.session.request(link.TYPE_POLL, { code = "X" }, 15);
      expect(ok):eq(false);
      expect(err.closeCode):eq(4429);
      expect(#world.sent):eq(2 + link.MAX_UNASKED_FRAMES + 1);
    end);

    it("takes the pings and late answers of a long session", function()
      local polls = 0;
      local world = newWorld(function(frame)
        if frame.type == "link.poll" then
          polls = polls + 1;
          return { { event = "gateway_request", messageId = "p" .. polls, type = "ping", payload = {} },
            answer({ messageId = "late-" .. polls, type = "link.poll" }, { state = "pending" }),
            answer(frame, { state = "pending" }) };
        end
      end);
      world.session.open(URL);
      for _ = 1, link.MAX_UNASKED_FRAMES / 2 do
        local ok = world.session.request(link.TYPE_POLL, { code = "X" }, 15);
        expect(ok):eq(true);
      end
      expect(world.session.isOpen()):eq(true);
    end);

    it("ignores frames of another socket", function()
      local world = newWorld(function(frame, w)
        w.push("websocket_message", "ws://elsewhere/trapos/ws", textutils.serializeJSON(answer(frame, { state = "wrong" })), false);
        return answer(frame, { state = "pending" });
      end);
      world.session.open(URL);
      local _, payload = world.session.request(link.TYPE_POLL, { code = "X" }, 15);
      expect(payload.state):eq("pending");
    end);

    it("raises Terminated on Ctrl-T", function()
      local world = newWorld(function(_, w) w.push("terminate"); end);
      world.session.open(URL);
      local ok, err = pcall(world.session.request, link.TYPE_POLL, { code = "X" }, 15);
      expect(ok):eq(false);
      expect(err):eq("Terminated");
      expect(next(world.timers)):eq(nil);
    end);
  end);

  describe("keepAlive and close", function()
    it("answers pings until the session closes, then says why", function()
      local world = newWorld();
      world.session.open(URL);
      world.push("websocket_message", world.url, textutils.serializeJSON(
        { event = "gateway_request", messageId = "p2", type = "ping", payload = {} }), false);
      world.push("websocket_message", world.url, textutils.serializeJSON(
        { event = "gateway_request", messageId = "q1", type = "fs.list", payload = {} }), false);
      world.push("websocket_closed", world.url, "unresponsive", 4010);
      expect(world.session.keepAlive()):eq("unresponsive");
      expect(world.of("ping")[1].ok):eq(true);
      local refused = world.of("fs.list")[1];
      expect(refused.ok):eq(false);
      expect(refused.error.code):eq("unknown_type");
    end);

    it("says the gateway's reason when a request finds the socket closed", function()
      local world = newWorld();
      world.session.open(URL);
      -- The gateway stopped: CC's handle is closed, and websocket_closed not pulled yet.
      world.closed = 1;
      world.push("websocket_closed", world.url, "going away", 1001);
      local ok, _, err = world.session.request(link.TYPE_POLL, { code = "X" }, 15);
      expect(ok):eq(false);
      expect(err):same({ code = "not_connected", message = "going away", closeCode = 1001 });
      expect(next(world.timers)):eq(nil);
    end);

    it("says the connection closed when no reason comes", function()
      local world = newWorld();
      world.session.open(URL);
      world.closed = 1;
      local ok, _, err = world.session.request(link.TYPE_POLL, { code = "X" }, 15);
      expect(ok):eq(false);
      expect(err.code):eq("not_connected");
      expect(err.message):eq("Connection closed");
      expect(world.fired):eq(1);
    end);

    it("closes the socket once", function()
      local world = newWorld();
      world.session.open(URL);
      world.session.close();
      world.session.close();
      expect(world.closed):eq(1);
      expect(world.session.isOpen()):eq(false);
    end);
  end);

  describe("isKey", function()
    it("takes an enrollment key and nothing else", function()
      expect(link.isKey("tsk_ab12cd_S3cr3t-x_y")):eq(true);
      expect(link.isKey("BCDF-GHJK")):eq(false);
      expect(link.isKey("tsc_ab12_secret")):eq(false);
      expect(link.isKey("tsk_")):eq(false);
    end);
  end);

  describe("approverShown", function()
    it("says the gateway's operator where the gateway names its own token or store, and the rest as it is", function()
      -- "Approved by account alice (local)." read as an account named local, or this computer
      expect(link.approverShown("local")):eq("(by the gateway's operator)");
      expect(link.approverShown("operator")):eq("(by the gateway's operator)");
      expect(link.approverShown("local (key kitchen)")):eq("(by the gateway's operator (key kitchen))");
      expect(link.approverShown("operator (key kitchen)")):eq("(by the gateway's operator (key kitchen))");
      for _, by in ipairs({ "bob (admin)", "root (key kitchen)", "alice (token laptop)", "local-guild", "localx (admin)", "locals" }) do
        expect(link.approverShown(by)):eq("(" .. by .. ")");
      end
    end);
  end);

  describe("isCode and approveLine", function()
    it("takes a code that is one plain word, short enough for a pocket computer's row", function()
      for _, code in ipairs({ "BCDF-GHJK", "bcdfghjk", "AB12", ("B"):rep(link.MAX_CODE_BYTES) }) do
        expect(link.isCode(code)):eq(true);
        expect(link.approveLine(code)):eq("trap-sandbox link approve " .. code);
      end
      for _, code in ipairs({ "", "-rf", "BCDF GHJK", "BCDF;reboot", "$(x)", "`x`", "A\nB", "K\252CHE",
          ("B"):rep(link.MAX_CODE_BYTES + 1), 12345678, nil }) do
        expect(link.isCode(code)):eq(false);
      end
    end);
  end);
end);
