-- The vocabulary table (tests/fixtures/vocabulary.json) through the real daemon: each step is
-- a gateway_request frame handed to libsandboxdaemon on a scripted socket, served by the real
-- handlers on this computer's fs, and its answer is the computer_response the daemon sends.
-- The Go stand-in of the daemon (tools/trap-sandbox/testkit/daemonfake) runs the same table,
-- so the two cannot drift apart.

local codec = require('/apis/libsandboxcodec');
local daemonLib = require('/apis/libsandboxdaemon');
local speckit = require('/tests/speckit');

local FIXTURE = "/tests/fixtures/vocabulary.json";
local URL = "ws://vocabulary.test";
local FULL_URL = URL .. "/trapos/ws";
local EMPTY_ARRAY = textutils.empty_json_array;
local bytes = speckit.bytes;

-- Decodes JSON text; an empty array decodes as the sentinel, an empty object as a table.
local decode = speckit.decodeJson;

-- The JSON type of a decoded value, in the fixture's words.
local function jsonType(value)
  if type(value) == "table" then
    if value == EMPTY_ARRAY or value[1] ~= nil then
      return "array";
    end
    return "object";
  end
  return type(value);
end

-- Whether two decoded values are the same JSON, [] and {} told apart. Returns true, or false
-- and where they differ.
local function sameJson(want, got, where)
  where = where or "answer";
  if jsonType(want) ~= jsonType(got) then
    return false, where .. ": want " .. jsonType(want) .. ", got " .. jsonType(got);
  end
  if type(want) ~= "table" then
    if want ~= got then
      return false, where .. ": want " .. textutils.serialize(want) .. ", got " .. textutils.serialize(got);
    end
    return true;
  end
  for k, v in pairs(want) do
    local ok, diff = sameJson(v, got[k], where .. "." .. tostring(k));
    if not ok then
      return false, diff;
    end
  end
  for k in pairs(got) do
    if want[k] == nil then
      return false, where .. "." .. tostring(k) .. ": not wanted, got " .. textutils.serialize(got[k]);
    end
  end
  return true;
end

-- Empties the fixture's root and applies a case's given dirs and files.
local function prepare(root, given)
  if fs.exists(root) then
    fs.delete(root);
  end
  fs.makeDir(root);
  for _, dir in ipairs(given.dirs or {}) do
    fs.makeDir(bytes(dir));
  end
  for path, contents in pairs(given.files or {}) do
    local handle = fs.open(bytes(path), "wb");
    handle.write(bytes(contents));
    handle.close();
  end
end

-- A daemon connected to a scripted gateway, with the case's settings. Returns the daemon and
-- a function that sends one request frame and returns the decoded computer_response.
local function connect(computer, given)
  local values = {
    ["sandbox.url"] = URL,
    ["sandbox.allow_files"] = given.allowFiles,
    ["sandbox.allow_exec"] = given.allowExec,
    ["sandbox.allow_screen"] = given.allowScreen,
  };
  local settingsApi = speckit.settings(values);
  -- The real os (timers, clock, events), as the computer of the table.
  local osApi = setmetatable({
    getComputerID = function() return computer.id; end,
    getComputerLabel = function() return computer.label; end,
  }, { __index = os });
  local logs = {};
  local daemon = daemonLib.newDaemon({
    http = { websocketAsync = function() return true; end },
    settings = settingsApi,
    os = osApi,
    -- A chunk sees the computer's settings, as on a computer, where both are the global API.
    env = setmetatable({ settings = settingsApi }, { __index = _G }),
    log = function(message) logs[#logs + 1] = message; end,
    -- the screen mirror wraps an invisible window, not the spec runner's own terminal
    term = setmetatable({ native = function() return window.create(term.native(), 1, 1, 51, 19, false); end },
      { __index = term }),
  });
  local sent = {};
  local socket = {
    send = function(message) sent[#sent + 1] = message; end,
    close = function() end,
  };
  daemon.start();
  daemon.handle("websocket_success", FULL_URL, socket);
  local hello = decode(sent[1], "hello");
  daemon.handle("websocket_message", FULL_URL, textutils.serializeJSON({
    event = "gateway_response", traposReceiverId = hello.traposSenderId, messageId = hello.messageId,
    type = "hello", ok = true, payload = { accountId = "local" },
  }), false);
  expect(daemon.status().state):eq(daemonLib.STATE_CONNECTED);

  local count = 0;
  local function request(step)
    count = count + 1;
    local messageId = "vocabulary-" .. count;
    local text;
    if step.rawPayload ~= nil then
      text = '{"event":"gateway_request","messageId":"' .. messageId .. '","type":'
        .. textutils.serializeJSON(step.type) .. ',"payload":' .. step.rawPayload .. '}';
    else
      local err;
      text, err = codec.encodeFrame({ event = "gateway_request", messageId = messageId, type = step.type, payload = bytes(step.payload) });
      if text == nil then
        fail("cannot encode the request: " .. err);
      end
    end
    local before = #sent;
    daemon.handle("websocket_message", FULL_URL, text, false);
    -- An answer that waits (a running chunk, its timeout) comes with the computer's events.
    while #sent == before do
      local event = table.pack(os.pullEventRaw());
      daemon.handle(table.unpack(event, 1, event.n));
    end
    expect(#sent):eq(before + 1);
    local response = decode(sent[#sent], "the answer");
    expect(response.event):eq("computer_response");
    expect(response.messageId):eq(messageId);
    if #logs > 0 then
      fail("the daemon logged: " .. table.concat(logs, "\n"));
    end
    return response;
  end
  return daemon, request;
end

local function check(step, response)
  if step.error ~= nil then
    if response.ok ~= false then
      fail("want error " .. step.error.code .. ", got ok: " .. textutils.serializeJSON(response.payload));
    end
    expect(response.error.code):eq(step.error.code);
    if step.error.message ~= nil then
      expect(bytes(response.error.message)):eq(bytes(step.error.message));
    end
    return;
  end
  if response.ok ~= true then
    fail("want ok, got " .. textutils.serializeJSON(response.error));
  end
  local payload = bytes(response.payload);
  if step.answer ~= nil then
    local same, diff = sameJson(bytes(step.answer), payload);
    if not same then
      fail(diff);
    end
  elseif step.answerTypes ~= nil then
    for key, kind in pairs(step.answerTypes) do
      if jsonType(payload[key]) ~= kind then
        fail("answer." .. key .. ": want " .. kind .. ", got " .. jsonType(payload[key]));
      end
    end
    for key in pairs(payload) do
      if step.answerTypes[key] == nil then
        fail("answer." .. key .. ": not wanted");
      end
    end
  end
  for key, want in pairs(step.answerHas or {}) do
    local same, diff = sameJson(bytes(want), payload[key], "answer." .. key);
    if not same then
      fail(diff);
    end
  end
end

local fixture = speckit.readJson(FIXTURE);

describe("the computer vocabulary", function()
  it("covers every type the daemon answers", function()
    local covered = {};
    for _, case in ipairs(fixture.cases) do
      for _, step in ipairs(case.steps) do
        covered[step.type] = true;
      end
    end
    for msgType in pairs(speckit.daemonTypes()) do
      if not covered[msgType] then
        fail("no case sends " .. msgType);
      end
    end
  end);

  for _, case in ipairs(fixture.cases) do
    it(case.name, function()
      local given = case.given or {};
      prepare(bytes(fixture.root), given);
      local daemon, request = connect(fixture.computer, given);
      for i, step in ipairs(case.steps) do
        local ok, err = pcall(check, step, request(step));
        if not ok then
          daemon.stop();
          fail("step " .. i .. " (" .. step.type .. "): " .. tostring(err));
        end
      end
      daemon.stop();
      fs.delete(bytes(fixture.root));
    end);
  end
end);
