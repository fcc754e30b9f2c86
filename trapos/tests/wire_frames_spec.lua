-- The wire-frame fixture (tests/fixtures/wire_frames.json) through the Lua codec. The Go
-- protocol tests read the same file, so the two codecs cannot drift apart.

local codec = require('/apis/libsandboxcodec');
local speckit = require('/tests/speckit');

local FIXTURE = "/tests/fixtures/wire_frames.json";

local function readFixture()
  -- Empty arrays as plain tables, as the codec decodes them.
  local fixture = speckit.readJson(FIXTURE, { parse_empty_array = false });
  for _, case in ipairs(fixture.cases) do
    if case.decoded ~= nil and case.decoded.payload ~= nil then
      case.decoded.payload = speckit.bytes(case.decoded.payload);
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

  it("names the types the daemon answers, each with a request and an answer", function()
    local listed = {};
    for _, msgType in ipairs(fixture.computerTypes) do
      listed[msgType] = true;
    end
    expect(listed):same(speckit.daemonTypes());
    local requests, answers = {}, {};
    for _, case in ipairs(fixture.cases) do
      local decoded = case.decoded;
      if decoded ~= nil and decoded.event == codec.FRAME_GATEWAY_REQUEST then
        requests[decoded.type] = true;
      elseif decoded ~= nil and decoded.event == codec.FRAME_COMPUTER_RESPONSE and decoded.ok then
        answers[decoded.type] = true;
      end
    end
    for _, msgType in ipairs(fixture.computerTypes) do
      if not requests[msgType] then
        fail("no gateway_request case of " .. msgType);
      end
      if not answers[msgType] then
        fail("no successful computer_response case of " .. msgType);
      end
    end
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
