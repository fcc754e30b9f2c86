-- Specs for /apis/libsandboxcodec: error codes, ids and the frame codec.

local lib = require('/apis/libsandboxcodec');

local UUID_PATTERN = "^%x%x%x%x%x%x%x%x%-%x%x%x%x%-4%x%x%x%-[89ab]%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$";

local function responseJson(fields)
  local frame = {
    event = "gateway_response",
    traposReceiverId = "7:",
    messageId = "m-1",
    type = "probe_gateway",
    ok = true,
  };
  for k, v in pairs(fields) do
    frame[k] = v;
  end
  return textutils.serializeJSON(frame);
end

describe("libsandboxcodec", function()
  describe("constants", function()
    it("has the six v1 error codes and the vocabulary's three", function()
      expect(lib.ERRORS):same({
        "unauthorized", "not_authenticated", "unknown_type", "not_connected", "internal", "timeout",
        "forbidden", "fs_error", "bad_payload",
      });
      expect(lib.ERR_UNAUTHORIZED):eq("unauthorized");
      expect(lib.ERR_NOT_AUTHENTICATED):eq("not_authenticated");
      expect(lib.ERR_UNKNOWN_TYPE):eq("unknown_type");
      expect(lib.ERR_NOT_CONNECTED):eq("not_connected");
      expect(lib.ERR_INTERNAL):eq("internal");
      expect(lib.ERR_TIMEOUT):eq("timeout");
    end);

  end);

  describe("traposId", function()
    it("joins id and label", function()
      expect(lib.traposId(7, "base")):eq("7:base");
    end);

    it("keeps the colon without a label", function()
      expect(lib.traposId(7, nil)):eq("7:");
      expect(lib.traposId(7)):eq("7:");
      expect(lib.traposId(7, "")):eq("7:");
    end);

    it("rejects a non-number id", function()
      expect.error(lib.traposId, "7", "x"):str_match("bad argument #1 .*number expected, got string%)$");
    end);

    it("reads this computer's id and label", function()
      stub(os, "getComputerID", function() return 12; end);
      stub(os, "getComputerLabel", function() return nil; end);
      expect(lib.localTraposId()):eq("12:");
      stub(os, "getComputerLabel", function() return "miner"; end);
      expect(lib.localTraposId()):eq("12:miner");
    end);
  end);

  describe("newUuid", function()
    it("mints lowercase version 4 UUIDs", function()
      for _ = 1, 200 do
        local id = lib.newUuid();
        expect(id):type("string");
        expect(id):str_match(UUID_PATTERN);
        expect(id:lower()):eq(id);
      end
    end);

    it("does not repeat itself", function()
      local seen = {};
      for _ = 1, 200 do
        local id = lib.newUuid();
        if seen[id] then
          fail("repeated id " .. id);
        end
        seen[id] = true;
      end
    end);
  end);

  describe("decodeFrame", function()
    it("relies on [] decoding to the immutable empty_json_array", function()
      local decoded = textutils.unserializeJSON("[]");
      expect(decoded):eq(textutils.empty_json_array);
      expect(pcall(function() decoded[1] = "x"; end)):eq(false);
    end);

    it("turns a [] payload into a fresh writable table", function()
      local frame = lib.decodeFrame(responseJson({ payload = textutils.empty_json_array }));
      expect(frame):type("table");
      expect(frame.payload):same({});
      expect(rawequal(frame.payload, textutils.empty_json_array)):eq(false);
      frame.payload.written = true; -- must not raise
      expect(frame.payload.written):eq(true);
    end);

    it("treats a missing, null, string or array payload as {}", function()
      local cases = {
        '{"event":"gateway_response","messageId":"m","type":"t","ok":true}',
        '{"event":"gateway_response","messageId":"m","type":"t","ok":true,"payload":null}',
        '{"event":"gateway_response","messageId":"m","type":"t","ok":true,"payload":"text"}',
        '{"event":"gateway_response","messageId":"m","type":"t","ok":true,"payload":[1,2]}',
        '{"event":"gateway_response","messageId":"m","type":"t","ok":true,"payload":7}',
      };
      for i, json in ipairs(cases) do
        local frame, err = lib.decodeFrame(json);
        if frame == nil then
          fail("case " .. i .. ": " .. tostring(err));
        end
        expect(frame.payload):same({});
        frame.payload.x = 1;
      end
    end);

    it("copies nested empty arrays too", function()
      local frame = lib.decodeFrame('{"event":"gateway_request","messageId":"m","type":"t","payload":{"list":[],"n":2}}');
      expect(frame.payload.n):eq(2);
      expect(frame.payload.list):same({});
      frame.payload.list[1] = "ok";
    end);

    it("decodes a gateway request", function()
      local frame = lib.decodeFrame('{"event":"gateway_request","traposReceiverId":"7:","messageId":"abc","type":"ping","payload":{}}');
      expect(frame):same({
        event = "gateway_request",
        traposReceiverId = "7:",
        messageId = "abc",
        type = "ping",
        payload = {},
      });
    end);

    it("normalises the error of a failed response", function()
      local frame = lib.decodeFrame(responseJson({ ok = false, error = { code = "unauthorized", message = "bad secret" } }));
      expect(frame.ok):eq(false);
      expect(frame.error):same({ code = "unauthorized", message = "bad secret" });
      frame = lib.decodeFrame(responseJson({ ok = false }));
      expect(frame.error.code):eq("internal");
      expect(frame.error.message):type("string");
    end);

    it("reads a failed response's message by the byte rule, as a payload's strings", function()
      -- A label's ü as Go writes it (raw UTF-8) and as an escape: the byte FC either way, which
      -- the screen shows as ü; before, its two UTF-8 bytes (Ã¼).
      for _, written in ipairs({ "k\195\188che", "k\\u00fcche" }) do
        local frame = lib.decodeFrame('{"event":"gateway_response","messageId":"m","type":"link.begin","ok":false,'
          .. '"error":{"code":"forbidden","message":"account alice has computer 5:' .. written .. ' connected already"}}');
        expect(frame.error):same({ code = "forbidden", message = "account alice has computer 5:k\252che connected already" });
      end
      -- A character no byte stands for (a hostile gateway's …) stays as it came.
      local frame = lib.decodeFrame('{"event":"gateway_response","messageId":"m","type":"t","ok":false,'
        .. '"error":{"code":"internal","message":"cut\226\128\166 and k\195\188che"}}');
      expect(frame.error.message):eq("cut\226\128\166 and k\195\188che");
    end);

    it("rejects malformed frames without raising", function()
      local bad = {
        "not json",
        "null",
        "[]",
        "42",
        "{}",
        '{"event":"something","messageId":"m","type":"t"}',
        '{"event":"gateway_request","type":"t"}',
        '{"event":"gateway_request","messageId":"m"}',
        '{"event":"gateway_response","messageId":"m","type":"t","ok":"yes"}',
      };
      for _, json in ipairs(bad) do
        local frame, err = lib.decodeFrame(json);
        expect(frame):eq(nil);
        expect(err):type("string");
      end
      expect(lib.decodeFrame(nil)):eq(nil);
    end);

    it("reads a response without ok as failed, as docs/protocol.md says", function()
      local frame = lib.decodeFrame('{"event":"gateway_response","messageId":"m","type":"t"}');
      expect(frame.ok):eq(false);
      expect(frame.error.code):eq("internal");
    end);
  end);

  describe("nesting", function()
    local function nested(levels)
      return string.rep("[", levels) .. string.rep("]", levels);
    end
    -- A gateway_request whose payload holds value, with the payload key at `where`.
    local function request(value, payloadFirst)
      if payloadFirst then
        return '{"payload":{"v":' .. value .. '},"event":"gateway_request","messageId":"m-9","type":"door.open"}';
      end
      return '{"event":"gateway_request","messageId":"m-9","type":"door.open","payload":{"v":' .. value .. '}}';
    end

    it("decodes a frame nested exactly MAX_JSON_DEPTH deep", function()
      expect(lib.MAX_JSON_DEPTH):eq(100);
      -- The frame is level 1, the payload level 2: 98 more levels reach 100.
      local frame = lib.decodeFrame(request(nested(98)));
      expect(frame.payloadError):eq(nil);
      local value, levels = frame.payload.v, 1;
      while type(value[1]) == "table" do
        value, levels = value[1], levels + 1;
      end
      expect(levels):eq(98);
    end);

    it("cuts out a payload nested deeper before decoding and says why, keeping the frame", function()
      for _, levels in ipairs({ 99, 5000, 100000 }) do
        for _, payloadFirst in ipairs({ false, true }) do
          local frame, err = lib.decodeFrame(request(nested(levels), payloadFirst));
          if frame == nil then
            fail(levels .. " levels: " .. tostring(err));
          end
          expect(frame.messageId):eq("m-9");
          expect(frame.type):eq("door.open");
          expect(frame.payload):same({});
          expect(frame.payloadError):eq("the payload is nested deeper than 100 levels, the most this computer decodes");
        end
      end
    end);

    it("fails a response whose payload nests too deep with bad_payload", function()
      local frame = lib.decodeFrame('{"event":"gateway_response","messageId":"m","type":"t","ok":true,"payload":{"x":'
        .. nested(5000) .. '}}');
      expect(frame.ok):eq(false);
      expect(frame.payload):same({});
      expect(frame.error.code):eq("bad_payload");
      expect(frame.error.message):str_match("nested deeper than 100 levels");
    end);

    it("refuses a frame nested too deep outside its payload as malformed", function()
      for _, json in ipairs({
        nested(5000),
        '{"event":"gateway_request","messageId":"m","type":"t","extra":' .. nested(5000) .. '}',
        '{"event":"gateway_request","messageId":"m","type":"t","payload":{},"payload2":' .. nested(200) .. '}',
      }) do
        local frame, err = lib.decodeFrame(json);
        expect(frame):eq(nil);
        expect(err):eq("frame nested deeper than 100 levels");
      end
    end);

    it("does not count brackets and escaped quotes inside strings", function()
      local text = string.rep('[{\\"\\\\', 3000);
      local frame = lib.decodeFrame(request('"' .. text .. '"'));
      expect(frame.payloadError):eq(nil);
      expect(frame.payload.v):eq(string.rep('[{"\\', 3000));
      -- A payload key inside a nested object is not the frame's payload.
      frame = lib.decodeFrame(request('{"payload":' .. nested(5000) .. '}'));
      expect(frame.payloadError):str_match("nested deeper");
    end);
  end);

  describe("encodeFrame", function()
    it("sends {} for an empty or missing payload", function()
      local json = lib.encodeFrame({
        event = "computer_request", traposSenderId = "7:", messageId = "m", type = "probe_gateway",
      });
      expect(json):str_match('"payload":{}');
      json = lib.encodeFrame({
        event = "computer_request", traposSenderId = "7:", messageId = "m", type = "t",
        payload = textutils.empty_json_array,
      });
      expect(json):str_match('"payload":{}');
    end);

    it("round-trips a request", function()
      local json = lib.encodeFrame({
        event = "computer_request", traposSenderId = "7:base", messageId = "m-2", type = "hello",
        payload = { traposId = "7:base", secret = "s" },
      });
      expect(textutils.unserializeJSON(json)):same({
        event = "computer_request", traposSenderId = "7:base", messageId = "m-2", type = "hello",
        payload = { traposId = "7:base", secret = "s" },
      });
    end);

    it("puts error, not payload, on a failed response", function()
      local json = lib.encodeFrame({
        event = "computer_response", traposSenderId = "7:", messageId = "m", type = "x",
        ok = false, error = { code = "unknown_type", message = "no" },
      });
      expect(textutils.unserializeJSON(json)):same({
        event = "computer_response", traposSenderId = "7:", messageId = "m", type = "x",
        ok = false, error = { code = "unknown_type", message = "no" },
      });
    end);

    it("refuses a frame over 128 KiB", function()
      local json, err = lib.encodeFrame({
        event = "computer_request", traposSenderId = "7:", messageId = "m", type = "t",
        payload = { blob = string.rep("a", lib.MAX_MESSAGE_BYTES) },
      });
      expect(json):eq(nil);
      expect(err):str_match("^Message is too large");
    end);

    it("refuses a payload far over 128 KiB without serialising it", function()
      local serialised = 0;
      local serialise = textutils.serializeJSON;
      stub(textutils, "serializeJSON", function(...)
        serialised = serialised + 1;
        return serialise(...);
      end);
      -- A lua.exec returning 16 MiB: as JSON, each byte would be six ("\u00C8").
      local json, err = lib.encodeFrame({
        event = "computer_response", traposSenderId = "7:", messageId = "m", type = "lua.exec", ok = true,
        payload = { returns = { string.rep("\200", 16 * 1024 * 1024) } },
      });
      expect(json):eq(nil);
      expect(err):eq("Message is too large (its strings alone hold over 131072 bytes, the limit)");
      expect(serialised):eq(0);
    end);

    it("refuses a payload that holds itself, saying so, and copies one that repeats a table", function()
      local loop = { name = "door" };
      loop.inner = { back = loop };
      local json, err = lib.encodeFrame({ event = "computer_request", messageId = "m", type = "t", payload = loop });
      expect(json):eq(nil);
      expect(err):eq("cannot encode frame: " .. lib.CYCLE);
      expect.error(lib.normalisePayload, loop):eq(lib.CYCLE);
      local shared = { 1 };
      expect(lib.normalisePayload({ a = shared, b = shared })):same({ a = { 1 }, b = { 1 } });
    end);

    it("reports an unserialisable payload instead of raising", function()
      local json, err = lib.encodeFrame({
        event = "computer_request", traposSenderId = "7:", messageId = "m", type = "t",
        payload = { fn = function() end },
      });
      expect(json):eq(nil);
      expect(err):type("string");
    end);
  end);

  describe("the byte rule", function()
    it("sends every byte value as its own code point", function()
      for byte = 0, 255 do
        local json = lib.encodeFrame({
          event = "computer_response", messageId = "m", type = "fs.read", ok = true,
          payload = { data = string.char(byte) },
        });
        local escaped = json:match('"data":"(.-)"[,}]');
        if byte >= 0x7F or byte < 0x20 then
          -- serializeJSON writes \u00XX (or a short escape), one code point per byte.
          local expected = ({ [8] = "\\b", [9] = "\\t", [10] = "\\n", [12] = "\\f", [13] = "\\r" })[byte]
            or string.format("\\u00%02X", byte);
          expect(escaped):eq(expected);
        end
      end
    end);

    it("maps every code point U+0000-U+00FF back to its byte, escaped or raw", function()
      for byte = 0, 255 do
        local escaped = string.format('{"event":"gateway_request","messageId":"m","type":"fs.write","payload":{"data":"\\u%04x"}}', byte);
        local frame = lib.decodeFrame(escaped);
        expect(frame.payloadError):eq(nil);
        expect(frame.payload.data):eq(string.char(byte));
        if byte >= 0x20 and byte ~= 0x22 and byte ~= 0x5C then
          -- The gateway sends U+0080-U+00FF as raw UTF-8; CC hands those bytes over as they are.
          local raw = utf8 and utf8.char(byte) or (byte < 0x80 and string.char(byte)
            or string.char(0xC0 + math.floor(byte / 64), 0x80 + byte % 64));
          local rawFrame = lib.decodeFrame('{"event":"gateway_request","messageId":"m","type":"fs.write","payload":{"data":"' .. raw .. '"}}');
          expect(rawFrame.payload.data):eq(string.char(byte));
        end
      end
    end);

    it("converts keys and nested strings too", function()
      local frame = lib.decodeFrame('{"event":"gateway_request","messageId":"m","type":"t","payload":{"\\u00fc":["\\u00ff",{"x":"\\u0080"}]}}');
      expect(frame.payload):same({ ["\252"] = { "\255", { x = "\128" } } });
    end);

    it("maps the type's code points back to bytes too, so a program can serve a type in CC's bytes", function()
      local frame = lib.decodeFrame('{"event":"gateway_request","messageId":"m","type":"k\\u00fcche.open","payload":{}}');
      expect(frame.type):eq("k\252che.open");
      frame = lib.decodeFrame('{"event":"gateway_request","messageId":"m","type":"k\195\188che.open","payload":{}}');
      expect(frame.type):eq("k\252che.open");
      -- No byte stands for a higher code point: the type stays as it came (no handler has it).
      frame = lib.decodeFrame('{"event":"gateway_request","messageId":"m","type":"\\u65e5","payload":{}}');
      expect(frame.type):eq("\230\151\165");
    end);

    it("refuses a code point above U+00FF in a request", function()
      local frame = lib.decodeFrame('{"event":"gateway_request","messageId":"m","type":"fs.write","payload":{"path":"a\\u0100"}}');
      expect(frame.payloadError):str_match("U%+00FF");
      expect(lib.fromWire("\196\128")):eq(nil);
      expect(lib.fromWire("\195")):eq(nil);
      expect(lib.fromWire("plain")):eq("plain");
    end);

    it("writes bytes as the UTF-8 of their code points (toWire), which fromWire reads back", function()
      local all = {};
      for b = 0, 255 do
        all[#all + 1] = string.char(b);
      end
      local bytes = table.concat(all);
      expect(lib.fromWire(lib.toWire(bytes))):eq(bytes);
      expect(lib.toWire("p\228sswort")):eq("p\195\164sswort");
      expect(lib.toWire("\128\191\192\255")):eq("\194\128\194\191\195\128\195\191");
      expect(lib.toWire("plain")):eq("plain");
    end);

    it("round-trips all 256 bytes through encode and decode", function()
      local all = {};
      for byte = 0, 255 do
        all[#all + 1] = string.char(byte);
      end
      all = table.concat(all);
      local json = lib.encodeFrame({ event = "gateway_request", messageId = "m", type = "t", payload = { data = all } });
      expect(lib.decodeFrame(json).payload.data):eq(all);
    end);
  end);

  describe("jsonSafe", function()
    local function encoded(value)
      return textutils.serializeJSON({ v = lib.jsonSafe(value) });
    end

    it("keeps plain values", function()
      expect(encoded(1)):eq('{"v":1}');
      expect(encoded("x")):eq('{"v":"x"}');
      expect(encoded(true)):eq('{"v":true}');
      expect(encoded(nil)):eq('{"v":null}');
    end);

    it("writes NaN and the infinities as strings", function()
      expect(lib.jsonSafe(0 / 0)):eq("nan");
      expect(lib.jsonSafe(math.huge)):eq("inf");
      expect(lib.jsonSafe(-math.huge)):eq("-inf");
    end);

    it("keeps holes in arrays as null", function()
      expect(encoded({ 1, nil, 3 })):eq('{"v":[1,null,3]}');
    end);

    it("turns functions into their names and cycles into a marker", function()
      local t = { name = "t" };
      t.self = t;
      local safe = lib.jsonSafe(t);
      expect(safe.self):eq("<cycle>");
      expect(lib.jsonSafe(print)):str_match("^function");
    end);

    it("copies a table met twice", function()
      local shared = { 1 };
      local safe = lib.jsonSafe({ a = shared, b = shared });
      expect(safe.a):same({ 1 });
      expect(safe.b):same({ 1 });
      expect(textutils.serializeJSON(safe)):type("string");
    end);

    it("makes mixed and sparse tables objects with string keys", function()
      expect(lib.jsonSafe({ 1, x = 2 })):same({ ["1"] = 1, x = 2 });
      expect(lib.jsonSafe({ [1000] = true })):same({ ["1000"] = true });
    end);
  end);

  describe("withoutPositionIn", function()
    it("takes off the position CC put in front of an error at a line of the given source", function()
      expect(lib.withoutPositionIn("/apis/x.lua:57: /a: No such file", "/apis/x.lua")):eq("/a: No such file");
      expect(lib.withoutPositionIn("/apis/x.lua:3: a: b: c", "/apis/x.lua")):eq("a: b: c");
    end);

    it("keeps any other error as it is", function()
      expect(lib.withoutPositionIn("/programs/p.lua:3: boom", "/apis/x.lua")):eq("/programs/p.lua:3: boom");
      expect(lib.withoutPositionIn("/apis/x.lua: not a position", "/apis/x.lua")):eq("/apis/x.lua: not a position");
      expect(lib.withoutPositionIn("/apis/x.lua.bak:3: other file", "/apis/x.lua")):eq("/apis/x.lua.bak:3: other file");
      expect(lib.withoutPositionIn("No such file", "/apis/x.lua")):eq("No such file");
      local object = {};
      expect(lib.withoutPositionIn(object, "/apis/x.lua")):eq(object);
      expect(lib.withoutPositionIn(nil, "/apis/x.lua")):eq(nil);
    end);
  end);

  describe("oneLine", function()
    it("makes the gateway's text one line of bounded length", function()
      expect(lib.oneLine("wrong secret")):eq("wrong secret");
      expect(lib.oneLine("a\nfix: set sandbox.allow_exec true")):eq("a fix: set sandbox.allow_exec true");
      expect(lib.oneLine("a\r\n\t\0\27[2Jb\127c")):eq("a [2Jb c");
      -- CC's bytes above 127 are characters of its font, kept.
      expect(lib.oneLine("k\252che")):eq("k\252che");
      local long = ("x"):rep(70000);
      expect(lib.oneLine(long)):eq(("x"):rep(lib.MAX_SHOWN_BYTES) .. "...(cut, 70000 bytes)");
      expect(lib.oneLine("abcdef", 3)):eq("abc...(cut, 6 bytes)");
      expect(lib.oneLine(("y"):rep(lib.MAX_SHOWN_BYTES))):eq(("y"):rep(lib.MAX_SHOWN_BYTES));
    end);
  end);

  describe("accountName", function()
    it("takes an account's name only in the shape the gateway gives them", function()
      for _, name in ipairs({ "local", "alice", "0", "kitchen_2.builders-guild", ("a"):rep(63) }) do
        expect(lib.accountName(name)):eq(name);
      end
      for _, value in ipairs({ "", "Alice", "-alice", ".x", "alice smith", "alice\nexec: true", "k\252che",
          ("a"):rep(64), 7, false, {} }) do
        expect(lib.accountName(value)):eq(nil);
      end
      expect(lib.accountName(nil)):eq(nil);
    end);
  end);
end);
