-- The wire-frame fixture (tests/fixtures/wire_frames.json) through the Lua codec. The Go
-- protocol tests read the same file, so the two codecs cannot drift apart.

local codec = require('/apis/libsandboxcodec');

local FIXTURE = "/tests/fixtures/wire_frames.json";

local function readFixture()
  local handle = fs.open(FIXTURE, "rb");
  if handle == nil then
    fail("cannot open " .. FIXTURE);
  end
  local text = handle.readAll();
  handle.close();
  local fixture = textutils.unserialiseJSON(text, { parse_empty_array = false });
  if fixture == nil then
    fail(FIXTURE .. " is not JSON");
  end
  -- The fixture's strings are wire strings too: the byte rule applies to them.
  local function bytes(value)
    if type(value) == "string" then
      return codec.fromWire(value);
    elseif type(value) == "table" then
      local out = {};
      for k, v in pairs(value) do
        out[bytes(k)] = bytes(v);
      end
      return out;
    end
    return value;
  end
  for _, case in ipairs(fixture.cases) do
    if case.decoded ~= nil and case.decoded.payload ~= nil then
      case.decoded.payload = bytes(case.decoded.payload);
    end
  end
  return fixture;
end

local fixture = readFixture();

describe("wire frames", function()
  it("shares the frame limit and the error codes", function()
    expect(codec.MAX_MESSAGE_BYTES):eq(fixture.maxFrameBytes);
    expect(codec.ERRORS):same(fixture.codes);
  end);

  for _, case in ipairs(fixture.cases) do
    it(case.name, function()
      local frame, err = codec.decodeFrame(case.input);
      if case.ignored then
        expect(frame):eq(nil);
        expect(err):type("string");
        return;
      end
      if frame == nil then
        fail("not decoded: " .. tostring(err));
      end
      local want = case.decoded;
      expect(frame.event):eq(want.event);
      expect(frame.messageId):eq(want.messageId);
      expect(frame.type):eq(want.type);
      if want.ok ~= nil then
        expect(frame.ok):eq(want.ok);
      end
      if want.payload ~= nil then
        expect(frame.payload):same(want.payload);
      end
      if want.errorCode ~= nil then
        expect(frame.error.code):eq(want.errorCode);
        if want.errorMessage ~= nil then
          expect(frame.error.message):eq(want.errorMessage);
        end
      end
    end);
  end
end);
