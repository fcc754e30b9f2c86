-- Specs for programs/sandbox.lua: its exact output in each daemon state. The program runs
-- for real (loadfile + its own environment); the daemon is played by a stubbed
-- os.queueEvent that answers status requests and sends like servers/sandbox.lua would, and
-- timers fire at once so no test waits real seconds.

local lib = require('/apis/libsandbox');
local settingsLib = require('/apis/libsandboxsettings');
local speckit = require('/tests/speckit');
-- What a player reads of the words on this computer's screen (a pocket computer's too).
local fitted = speckit.fitted;
-- A line of status, health or link's account as a player reads it: its rows after the first
-- indented (libsandboxlayout.hangingRows).
local hanging = speckit.hanging;
-- A line printed hanging, its words as the program wrote them (its rows joined again).
local function unhung(line)
  return (line:gsub("\n +", " "));
end

local PROGRAM = "/programs/sandbox.lua";
local URL = "ws://127.0.0.1:4444";
local FULL_URL = "ws://127.0.0.1:4444/trapos/ws";
-- Fake timer ids, far above the computer's own and never reused across cases: a stale
-- timer event left in the queue by one case must not fire another case's wait.
local nextTimer = 800000;

local MSG_NO_DAEMON = "The sandbox daemon is not running; reboot the computer to start it";
-- And when shell.allow_startup is false: CC runs no startup file at boot, so a reboot does not
-- start it.
local MSG_STARTUP_OFF = "The sandbox daemon is not running: shell.allow_startup is false, so the computer "
  .. "runs no startup file at boot. Run: set shell.allow_startup true, then reboot";

-- Puts a disk with a startup file (named file: "startup", "startup.lua") in a drive named
-- side, as CC's APIs show it (stubbed for this spec: a pocket computer has no side for one).
local function diskWithStartup(side, file)
  local names, exists = peripheral.getNames, fs.exists;
  stub(peripheral, "getNames", function()
    local all = names();
    table.insert(all, 1, side);
    return all;
  end);
  stub(disk, "isPresent", function(name) return name == side; end);
  stub(disk, "hasData", function(name) return name == side; end);
  stub(disk, "getMountPath", function(name) return name == side and "disk" or nil; end);
  stub(fs, "exists", function(path) return path == "/disk/" .. file or exists(path); end);
end

-- What setup fails with when it refuses a URL: why, then "Run:" and the command to type with
-- the URL to give on rows of their own (libsandboxlayout.commandRows, on this computer).
local function refusedRun(why, url)
  return fitted(why) .. " Run:\n" .. table.concat(
    require('/apis/libsandboxlayout').commandRows({ "sandbox", "setup", url }, (term.getSize()), true), "\n");
end

-- When the gateway of connectedStatus first proved itself here (epoch ms), and the status
-- line that says so (a gateway from 0.5.32 on proves itself to a computer with a password),
-- without its date on a narrower screen.
local SINCE = 1765078800000;
local PROVEN = speckit.narrow() and "proof: required" or "proof: required since 2025-12-07 03:40 UTC";

local function connectedStatus()
  return { url = FULL_URL, connected = true, state = "connected", traposId = "7:base", version = lib.VERSION,
    provesSince = SINCE, proves = true };
end

-- The proof line of a daemon that has no record of a gateway that proved itself and is not
-- connected (downStatus).
local UNPROVEN = "proof: none yet (the first to answer is trusted)";

local function downStatus(state, lastError)
  return { url = FULL_URL, connected = false, state = state, traposId = "7:base", lastError = lastError,
    version = lib.VERSION };
end

-- Runs the program with args. opts.status: the daemon's status, a list of statuses given
-- in turn (the last repeats), or nil for no daemon; opts.afterRetry: the statuses (the same
-- way) the daemon gives once a program asked it to try now (lib.retryNow). opts.reply(type, payload) returns the
-- gateway's ok, payload, error, or nothing to never answer. opts.settings: setting values
-- (sandbox.url defaults to URL). opts.noHttp hides the http API. opts.gateway(frame, record)
-- plays the gateway on the link session's own socket (see linkGateway). opts.typed: the lines
-- read() answers in turn; a function in the list is called instead (it may raise Terminated).
-- Returns ok, error message, printed lines, and a record of what the program asked for.
local function run(args, opts)
  opts = opts or {};
  local realQueue = os.queueEvent;
  local record = { sends = {}, reconnects = 0, retries = 0, timers = {}, statusRequests = 0 };
  local function listOf(given)
    if given ~= nil and given[1] == nil then
      return { given };
    end
    return given;
  end
  local statuses = listOf(opts.status);
  local answered = 0; -- the status requests answered from statuses

  local values = opts.settings or { ["sandbox.url"] = URL };
  stub(settings, "get", function(name, default)
    local value = values[name];
    if value == nil then
      return default;
    end
    return value;
  end);
  -- The names of the settings set, sorted, as CC's settings.getNames gives them.
  stub(settings, "getNames", function()
    local names = {};
    for name in pairs(values) do
      names[#names + 1] = name;
    end
    table.sort(names);
    return names;
  end);

  stub(os, "startTimer", function(seconds)
    nextTimer = nextTimer + 1;
    record.timers[#record.timers + 1] = seconds;
    realQueue("timer", nextTimer); -- fires after anything already queued
    return nextTimer;
  end);
  stub(os, "cancelTimer", function() end);

  stub(os, "queueEvent", function(name, ...)
    local params = table.pack(...);
    if name == lib.EVENT_STATUS_REQUEST then
      record.statusRequests = record.statusRequests + 1;
      answered = answered + 1;
      if statuses ~= nil then
        local status = statuses[math.min(answered, #statuses)];
        realQueue(lib.EVENT_STATUS, params[1], status);
      end
    elseif name == lib.EVENT_SEND then
      record.sends[#record.sends + 1] = { type = params[2], payload = params[3] };
      if opts.reply ~= nil then
        local result = table.pack(opts.reply(params[2], params[3]));
        if result.n > 0 then
          realQueue(lib.EVENT_REPLY, params[1], result[1], result[2], result[3]);
        end
      end
    elseif name == lib.EVENT_RECONNECT then
      record.reconnects = record.reconnects + 1;
    elseif name == lib.EVENT_STOP then
      record.stops = (record.stops or 0) + 1;
    elseif name == lib.EVENT_RETRY_NOW then
      record.retries = record.retries + 1;
      record.retriedAfter = record.statusRequests;
      if opts.afterRetry ~= nil then
        statuses, answered = listOf(opts.afterRetry), 0;
      end
    else
      realQueue(name, ...);
    end
  end);

  -- read() answers opts.typed in turn; settings.set/save are recorded, not applied.
  local typed = opts.typed or {};
  record.prompts, record.reads, record.saved, record.values, record.screen = {}, {}, 0, values, {};
  -- The link session's socket: each frame sent goes to opts.gateway, whose answers (a frame,
  -- a list of frames, or nothing) arrive as websocket_message events.
  record.frames, record.sockets, record.closes = {}, {}, 0;
  local fakeHttp, sockets = nil, {};
  if opts.gateway ~= nil or opts.linkFailure ~= nil then
    fakeHttp = { websocketAsync = function(url)
      record.sockets[#record.sockets + 1] = url;
      record.url = url;
      if opts.linkFailure ~= nil then
        realQueue("websocket_failure", url, opts.linkFailure);
        return true;
      end
      local socket = {};
      socket.send = function(text)
        local frame = textutils.unserializeJSON(text);
        record.frames[#record.frames + 1] = frame;
        local replies = opts.gateway(frame, record, realQueue);
        if type(replies) == "string" or (replies ~= nil and replies.event ~= nil) then
          replies = { replies };
        end
        for _, reply in ipairs(replies or {}) do
          -- A string is the frame's JSON as is (numbers serializeJSON cannot write: 1e999).
          realQueue("websocket_message", url, type(reply) == "string" and reply or textutils.serializeJSON(reply), false);
        end
      end;
      socket.close = function() record.closes = record.closes + 1; end;
      -- CC's queue copies tables without their functions: the handle is put back on delivery.
      sockets[url] = socket;
      realQueue("websocket_success", url);
      return true;
    end };
    local realPull = os.pullEventRaw;
    stub(os, "pullEventRaw", function(...)
      local event = table.pack(realPull(...));
      if event[1] == "websocket_success" and sockets[event[2]] ~= nil then
        event[3], event.n = sockets[event[2]], math.max(event.n, 3);
      end
      return table.unpack(event, 1, event.n);
    end);
  end
  stub(settings, "set", function(name, value) values[name] = value; end);
  -- The program saves through libsandboxsettings.save (its spec runs it on a real drive).
  stub(settingsLib, "save", function() record.saved = record.saved + 1; return not opts.saveFails; end);
  -- Which settings are set, as CC's settings.getDetails says (changed), not a default.
  stub(settings, "getDetails", function(name) return { value = values[name], changed = values[name] ~= nil }; end);
  -- The settings file holds what was set unless opts.savedValues says otherwise (a save that
  -- failed before this run).
  stub(settingsLib, "savedValue", function(name)
    if opts.savedValues ~= nil then
      return opts.savedValues[name];
    end
    return values[name];
  end);
  stub(settings, "save", function() fail("settings.save called directly: use libsandboxsettings.save"); end);

  local lines = {};
  local completions = {};
  local env = {
    write = function(text) record.prompts[#record.prompts + 1] = text; end,
    read = function(replace)
      record.reads[#record.reads + 1] = replace or false;
      local line = table.remove(typed, 1) or "";
      if type(line) == "function" then
        return line();
      end
      return line;
    end,
    print = function(...)
      local parts = table.pack(...);
      for i = 1, parts.n do
        parts[i] = tostring(parts[i]);
      end
      lines[#lines + 1] = table.concat(parts, "\t", 1, parts.n);
    end,
    require = require,
    -- opts.width: a screen of that many columns (a pocket computer's 26), else the computer's;
    -- opts.cursorX: the column each question leaves the cursor at (else the line's start).
    term = setmetatable({
      getSize = function()
        if opts.width ~= nil then
          return opts.width, opts.height or 20;
        end
        return term.getSize();
      end,
      getCursorPos = function() return opts.cursorX or 1, 1; end,
      -- What the program puts on the screen beside print and write: a notice while it waits
      -- (libsandbox.whileWaiting), and the blanks that erase it.
      write = function(text) record.screen[#record.screen + 1] = text; end,
      setCursorPos = function() end,
    }, { __index = term }),
    shell = {
      setCompletionFunction = function(path, fn) completions[path] = fn; end,
    },
  };
  setmetatable(env, { __index = function(_, key)
    if key == "http" then
      -- The command only checks that http exists; the daemon owns the socket.
      if opts.noHttp then
        return nil;
      end
      return fakeHttp or _G.http or {};
    end
    return _G[key];
  end });
  local program, loadErr = loadfile(PROGRAM, nil, env);
  if program == nil then
    fail("cannot load " .. PROGRAM .. ": " .. tostring(loadErr));
  end
  local ok, err = pcall(program, table.unpack(args));
  record.completions = completions;
  return ok, err, lines, record;
end

-- The command a usage is of: what follows "Usage:" on its first line, or on the next one
-- when a narrow screen's layout (a pocket computer's) gives it a line of its own.
local function usageOf(lines)
  if lines[1] == "Usage:" and lines[2] ~= nil then
    return (lines[2]:gsub("^ +", ""));
  end
  return lines[1] and lines[1]:match("^Usage: (.*)$");
end

-- A mistake in how a command was typed, as this computer's screen shows it: message is as a
-- computer's 51 columns show it, the problem, then on a line of its own the lead and the
-- command to run ("Run: sandbox --help"), which on a screen too narrow for both (a pocket
-- computer's 26) have a line each.
local function usageError(message)
  local problem, lead, command = message:match("^(.-)\n(.-:) (sandbox .*)$");
  if problem == nil then
    fail("not a usage error: " .. message);
  end
  local fix = lead .. " " .. command;
  if #fix >= (term.getSize()) then
    fix = lead .. "\n" .. command;
  end
  return fitted(problem .. "\n" .. fix);
end

-- The rows lines take printed on a screen width columns wide, wrapped as print wraps, each
-- without its trailing spaces.
local function printedRows(lines, width)
  local win = window.create(term.current(), 1, 1, width, 100, false);
  local previous = term.redirect(win);
  for _, line in ipairs(lines) do
    print(line);
  end
  term.redirect(previous);
  local rows = {};
  for y = 1, select(2, win.getCursorPos()) - 1 do
    rows[y] = (win.getLine(y):gsub(" +$", ""));
  end
  return rows;
end

local function expectSuccess(ok, err)
  if not ok then
    fail("the command failed: " .. tostring(err));
  end
end

-- What linkGateway hands out: the credential must never be printed.
local CREDENTIAL = "tsc_c0ffee_9dKq2xSecretPart";
local KEY = "tsk_k1_S3cretKeyPart";
local APPROVED = { state = "approved", account = "alice", approvedBy = "alice (token laptop)" };

-- A gateway that links as docs/protocol.md says, for run's opts.gateway: a link hello is
-- answered as a link session (o.hello replaces that answer), link.begin with the code (or,
-- with a key, approved at once), link.poll with o.polls in turn (the last repeats; a function
-- is called with the frame, the record and the queue instead; o.begin replaces the code's
-- answer), link.accept with the
-- credential (into o.acceptAccount, by default alice); o.keyAnswer replaces a key's answer. o.refuse[type] = {code, message} refuses that type.
local function linkGateway(o)
  o = o or {};
  local polls = o.polls or { APPROVED };
  local pollIndex = 0;
  return function(frame, record, queue)
    local function answer(payload)
      return { event = "gateway_response", messageId = frame.messageId, type = frame.type, ok = true, payload = payload };
    end
    if frame.event ~= "computer_request" then
      return nil;
    elseif o.refuse ~= nil and o.refuse[frame.type] ~= nil then
      return { event = "gateway_response", messageId = frame.messageId, type = frame.type, ok = false,
        error = o.refuse[frame.type] };
    elseif frame.type == "hello" then
      return answer(o.hello or { accountId = "", link = true, livenessMs = 70000 });
    elseif frame.type == "link.begin" and frame.payload.key ~= nil then
      return answer(o.keyAnswer or { state = "approved", account = "alice", approvedBy = "root (key kitchen)", credential = CREDENTIAL });
    elseif frame.type == "link.begin" then
      return answer(o.begin or { code = "BCDF-GHJK", expiresInMs = 600000, approveLine = "trap-sandbox link approve BCDF-GHJK" });
    elseif frame.type == "link.poll" then
      pollIndex = pollIndex + 1;
      local reply = polls[math.min(pollIndex, #polls)];
      if type(reply) == "function" then
        return reply(frame, record, queue);
      end
      return answer(reply);
    elseif frame.type == "link.accept" and frame.payload.accept == true then
      return answer({ account = o.acceptAccount or "alice", credential = o.credential or CREDENTIAL });
    elseif frame.type == "link.accept" then
      return answer({});
    end
  end
end

-- sandbox link's question for account, as the program writes it on this computer's screen:
-- its rows after the first indented (the account is the gateway's), the answer typed after
-- the blank that ends it.
local function linkQuestion(account)
  local layout = require('/apis/libsandboxlayout');
  return table.concat(layout.hangingQuestionRows("Link this computer to " .. account .. "? [y/N] ",
    (term.getSize())), "\n") .. " ";
end

-- The payloads of the frames of a type the program sent on its link session.
local function sentOf(record, msgType)
  local found = {};
  for _, frame in ipairs(record.frames) do
    if frame.type == msgType and frame.event == "computer_request" then
      found[#found + 1] = frame.payload;
    end
  end
  return found;
end

-- The failure the player reads, its rows run together (a pocket computer starts a command
-- such as sandbox link on a row of its own); fails when the program did not fail.
local function failed(ok, err)
  expect(ok):eq(false);
  return (tostring(err):gsub("\n", " "));
end

-- Fails when the credential or the key shows anywhere the player sees.
local function expectNoSecret(lines, record, err)
  local seen = { table.unpack(lines) };
  for _, prompt in ipairs(record.prompts) do
    seen[#seen + 1] = prompt;
  end
  seen[#seen + 1] = tostring(err);
  for _, text in ipairs(seen) do
    if text:find("tsc_", 1, true) or text:find(KEY, 1, true) then
      fail("a secret was shown: " .. text);
    end
  end
end

-- The approve line goes on at the next row on a pocket computer, as a shell continues a line.
local CODE_LINES = {
  "Link code: BCDF-GHJK (valid 10 min)",
  "On the host, the account holder runs:",
  "  trap-sandbox link approve BCDF-GHJK",
  "Waiting... (Ctrl-T to cancel)",
};
if speckit.narrow() then
  CODE_LINES = { CODE_LINES[1], CODE_LINES[2], "  trap-sandbox link \\", "    approve BCDF-GHJK", CODE_LINES[4] };
end

describe("sandbox command", function()
  describe("health", function()
    it("prints sandboxOk and opencodeOk when all is well", function()
      local ok, err, lines, record = run({ "health" }, {
        status = connectedStatus(),
        reply = function() return true, { sandboxOk = true, opencodeOk = true }; end,
      });
      expectSuccess(ok, err);
      expect(lines):same({ "sandboxOk: true", "opencodeOk: true" });
      expect(#record.sends):eq(2);
      expect(record.sends[1].type):eq("probe_gateway");
      expect(record.sends[1].payload):same({});
      -- whether the gateway's agent is on: a poll of a turn that cannot exist (ai alone's)
      expect(record.sends[2].type):eq("ai.poll");
      expect(record.sends[2].payload):same({ turnId = "", after = 0, waitMs = 0 });
    end);

    -- The gateway's answers to probe_gateway (opencode's state) and to the poll that asks
    -- whether its agent is on (agentErr: its error, else an agent's unknown_turn).
    local function gatewayWith(probe, agentErr)
      return function(msgType)
        if msgType == "ai.poll" then
          return false, nil, agentErr or { code = "unknown_turn", message = "the gateway knows no turn \"\" of this computer" };
        end
        return true, probe;
      end;
    end
    local OPENCODE_DOWN = { sandboxOk = true, opencodeOk = false, opencodeDetail = "opencode at http://127.0.0.1:4242: connection refused" };
    local AGENT_OFF = { code = "ai_disabled", message = "the agent is off: its operator must set --ai-model" };
    local DOWN_LINE = "The agent is down on the gateway's host: its operator must start or fix it (the detail above says why). "
      .. "Only ai needs it; files, Lua and the screen still work.";

    it("adds opencodeDetail when opencode is down, and whose fix it is", function()
      -- it said the detail alone, which names no fix or one for the operator ("set OPENCODE_SERVER_PASSWORD")
      local ok, err, lines = run({ "health" }, { status = connectedStatus(), reply = gatewayWith(OPENCODE_DOWN) });
      expectSuccess(ok, err);
      expect(lines):same({
        "sandboxOk: true",
        "opencodeOk: false",
        hanging("opencodeDetail: opencode at http://127.0.0.1:4242: connection refused"),
        hanging(DOWN_LINE),
      });
    end);

    it("says the agent cannot answer though opencode answers, and whose fix it is", function()
      -- it said sandboxOk: true, opencodeOk: true, and every ai question then failed
      local NO_MODEL = "opencode lacks the agent's model (--ai-model): its provider has no key there, or the name is wrong";
      local ok, err, lines = run({ "health" }, { status = connectedStatus(),
        reply = gatewayWith({ sandboxOk = true, opencodeOk = true, aiDetail = (NO_MODEL:gsub(": ", ":\n")) }) });
      expectSuccess(ok, err);
      expect(lines):same({
        "sandboxOk: true",
        "opencodeOk: true",
        hanging("The agent cannot answer (tell the gateway's operator): " .. NO_MODEL),
      });
      -- the agent off says so instead; opencode down says its own line (the detail is not sent then)
      ok, err, lines = run({ "health" }, { status = connectedStatus(),
        reply = gatewayWith({ sandboxOk = true, opencodeOk = true, aiDetail = NO_MODEL }, AGENT_OFF) });
      expectSuccess(ok, err);
      expect(lines[3]):eq(hanging("The agent is off: its operator must set --ai-model"));
      expect(#lines):eq(3);
    end);

    it("says the gateway's agent is off, whose fix it is, whatever opencode's state", function()
      -- it said opencodeOk: true, and ai then failed; or named opencode, whose start changes nothing
      local ok, err, lines = run({ "health" }, { status = connectedStatus(),
        reply = gatewayWith({ sandboxOk = true, opencodeOk = true }, AGENT_OFF) });
      expectSuccess(ok, err);
      expect(lines):same({ "sandboxOk: true", "opencodeOk: true", hanging("The agent is off: its operator must set --ai-model") });
      ok, err, lines = run({ "health" }, { status = connectedStatus(), reply = gatewayWith(OPENCODE_DOWN, AGENT_OFF) });
      expectSuccess(ok, err);
      expect(lines[4]):eq(hanging("The agent is off: its operator must set --ai-model"));
      expect(#lines):eq(4);
      -- a gateway from before the agent
      ok, err, lines = run({ "health" }, { status = connectedStatus(),
        reply = gatewayWith({ sandboxOk = true, opencodeOk = true }, { code = "unknown_type", message = "no handler for ai.poll" }) });
      expectSuccess(ok, err);
      expect(lines[3]):eq(hanging("This gateway has no agent (it is older than this client); its operator must upgrade it"));
    end);

    it("waits for a daemon that is still connecting", function()
      local ok, err, lines, record = run({ "health" }, {
        status = { downStatus("connecting"), downStatus("authenticating"), connectedStatus() },
        reply = function() return true, { sandboxOk = true, opencodeOk = true }; end,
      });
      expectSuccess(ok, err);
      expect(lines):same({ "sandboxOk: true", "opencodeOk: true" });
      expect(record.statusRequests):eq(3);
    end);

    it("makes a daemon waiting to reconnect try now, and shows how that try went", function()
      -- typed right after the gateway's restart, it said "nothing answers ...; the daemon
      -- retries in 5 s" while the gateway was back
      local waiting = downStatus("waiting", "Could not connect");
      waiting.retryInMs = 5000;
      local ok, err, lines, record = run({ "health" }, {
        status = waiting,
        afterRetry = { downStatus("connecting", "Could not connect"), connectedStatus() },
        reply = function() return true, { sandboxOk = true, opencodeOk = true }; end,
      });
      expectSuccess(ok, err);
      expect(lines):same({ "sandboxOk: true", "opencodeOk: true" });
      expect(record.retries):eq(1);
      expect(record.retriedAfter):eq(0); -- asked before its first look at the status
      -- a try that fails again says so, and when the next one is
      local again = downStatus("waiting", "Could not connect");
      again.retryInMs = 5400;
      ok, err = run({ "health" }, { status = waiting, afterRetry = { downStatus("connecting", "Could not connect"), again } });
      expect(ok):eq(false);
      expect(err):eq(fitted("Not connected to the gateway: nothing answers at 127.0.0.1:4444: the gateway there is not"
        .. " running (its operator starts it), or the address or port is wrong (sandbox setup); the daemon retries in 6 s"));
    end);

    it("gives up on a daemon that never finishes connecting", function()
      local ok, err = run({ "health" }, { status = downStatus("connecting") });
      expect(ok):eq(false);
      expect(err):eq(fitted("Not connected to the gateway: still connecting to " .. FULL_URL));
    end);

    it("says so when the server never answers the hello", function()
      local ok, err = run({ "health" }, { status = downStatus("authenticating") });
      expect(ok):eq(false);
      expect(err):eq(fitted("Not connected to the gateway: the server at " .. FULL_URL
        .. " has not answered the hello yet (is sandbox.url a trap-sandbox gateway?)"));
    end);

    it("fails when sandbox.url is not set", function()
      local ok, err, lines, record = run({ "health" }, { settings = {}, status = downStatus("dormant") });
      expect(ok):eq(false);
      expect(err):eq("sandbox.url is not set. Run: sandbox setup");
      expect(lines):same({});
      expect(#record.sends):eq(0);
    end);

    it("fails when the http API is disabled", function()
      local ok, err = run({ "health" }, { noHttp = true, status = downStatus("disabled") });
      expect(ok):eq(false);
      expect(err):eq("The http API is disabled on this computer (enable http in the server config)");
    end);

    it("fails when the daemon is not running", function()
      local ok, err, _, record = run({ "health" }, {});
      expect(ok):eq(false);
      expect(err):eq(MSG_NO_DAEMON);
      expect(record.timers[1]):eq(1);
    end);

    it("says why the daemon is not running when shell.allow_startup is false", function()
      local ok, err = run({ "health" }, { settings = { ["sandbox.url"] = URL, ["shell.allow_startup"] = false } });
      expect(ok):eq(false);
      expect(err):eq(fitted(MSG_STARTUP_OFF));
    end);

    it("explains unauthorized, by what sandbox.password holds", function()
      local cases = {
        { "secret", "the gateway rejected sandbox.password (unauthorized). Fix it with: sandbox setup" },
        { nil, "the gateway wants a password (unauthorized) and sandbox.password is not set. Set it with: sandbox setup" },
        { 12345, "the gateway rejected sandbox.password (unauthorized); `set` stored it as the number 12345: "
          .. "if it began with 0 or is long, set it as text with: sandbox setup" },
        { CREDENTIAL, "the gateway does not know this computer's linked credential (unauthorized): was its account removed? "
          .. "Link again with: sandbox link (or ask the operator: is the gateway missing its data directory? "
          .. "Once it has it again: sandbox reconnect)" },
      };
      for _, case in ipairs(cases) do
        local ok, err = run({ "health" }, {
          settings = { ["sandbox.url"] = URL, ["sandbox.password"] = case[1] },
          status = downStatus("unauthorized", "unauthorized: wrong secret"),
        });
        expect(ok):eq(false);
        expect(err):eq(fitted("Not connected to the gateway: " .. case[2]));
      end
    end);

    it("explains Domain not permitted", function()
      local ok, err = run({ "health" }, { status = downStatus("waiting", "Domain not permitted") });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: Domain not permitted: the server's CC: Tweaked config denies 127.0.0.1; allow it in computercraft-server.toml [[http.rules]] (see the user guide)");
    end);

    it("turns a refused connection into its fix", function()
      local ok, err = run({ "health" }, { status = downStatus("waiting", "Could not connect") });
      expect(ok):eq(false);
      expect(err):eq(fitted("Not connected to the gateway: nothing answers at 127.0.0.1:4444: the gateway there is not "
        .. "running (its operator starts it), or the address or port is wrong (sandbox setup); the daemon retries every 5 s"));
    end);

    it("names sandbox reconnect for a stopped daemon, whatever its last error", function()
      for _, status in ipairs({ downStatus("stopped", "Could not connect"), downStatus("stopped") }) do
        local ok, err = run({ "health" }, { status = status });
        expect(ok):eq(false);
        expect(err):eq(fitted("Not connected to the gateway: stopped with sandbox stop; sandbox reconnect starts it again"));
        -- the command starts a row rather than end one: "... stopped with sandbox" / "stop; ..."
        _, err = run({ "health" }, { status = status, width = 51 });
        expect(err):eq("Not connected to the gateway: stopped with\nsandbox stop; sandbox reconnect starts it again");
      end
    end);

    it("passes an error it has no advice for on as it is", function()
      local ok, err = run({ "health" }, { status = downStatus("waiting", "hello failed: internal: boom") });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: hello failed: internal: boom");
    end);

    it("reports a timeout after 10 seconds", function()
      local ok, err, lines, record = run({ "health" }, { status = connectedStatus(), reply = function() end });
      expect(ok):eq(false);
      expect(err):eq("The gateway did not answer within 10 seconds: it is overloaded or stuck; try again, or ask its operator to check its log");
      expect(lines):same({});
      -- The request's 10 s, then the 1 s in which the daemon answers its status: it runs.
      expect({ record.timers[#record.timers - 1], record.timers[#record.timers] }):same({ 10, 1 });
      -- Those seconds say what the command waits for, and the row is clear for the error: the
      -- screen stood blank under the command, which read as a computer that hung.
      expect(record.screen):same({ "Asking the gateway...", (("Asking the gateway..."):gsub(".", " ")) });
    end);

    it("reports a connection lost during the request", function()
      local ok, err = run({ "health" }, {
        status = connectedStatus(),
        reply = function()
          return false, nil, { code = "not_connected", message = "lost the connection: Connection closed" };
        end,
      });
      expect(ok):eq(false);
      expect(err):eq(fitted("Not connected to the gateway: the gateway closed the connection (Connection closed): it stopped or restarted; the daemon retries by itself"));
    end);

    it("shows the gateway's words as one short line", function()
      local ok, err = run({ "health" }, {
        status = connectedStatus(),
        reply = function() return false, nil, { code = "internal\nfiles: write", message = "a\nexec: true" .. ("x"):rep(500) }; end,
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway refused the request: internal files: write: a exec: true" .. ("x"):rep(244)
        .. "...(cut, 512 bytes)");
      local lines;
      ok, err, lines = run({ "health" }, {
        status = connectedStatus(),
        reply = function() return true, { sandboxOk = true, opencodeOk = false, opencodeDetail = "a\nb\nc" }; end,
      });
      expectSuccess(ok, err);
      expect(lines[3]):eq("opencodeDetail: a b c");
      -- a detail of another type is none, never Lua's "table: 3b44..." as the gateway's words
      for _, detail in ipairs({ {}, true }) do
        ok, err, lines = run({ "health" }, {
          status = connectedStatus(),
          reply = function() return true, { sandboxOk = true, opencodeOk = false, opencodeDetail = detail }; end,
        });
        expectSuccess(ok, err);
        expect(lines[3]):eq(hanging("opencodeDetail: no detail given"));
      end
    end);

    it("reports other gateway errors with their code", function()
      local ok, err = run({ "health" }, {
        status = connectedStatus(),
        reply = function() return false, nil, { code = "not_authenticated", message = "say hello first" }; end,
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway refused the request: not_authenticated: say hello first");
    end);
  end);

  describe("setup", function()
    local function healthy()
      return true, { sandboxOk = true, opencodeOk = true };
    end

    it("saves the URL given and the password typed, as text, reconnects and checks health", function()
      local ok, err, lines, record = run({ "setup", "ws://10.0.0.9:4444" }, {
        settings = {}, typed = { "1234" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(record.values["sandbox.url"]):eq("ws://10.0.0.9:4444");
      expect(record.values["sandbox.password"]):eq("1234");
      expect(record.prompts[1]):eq("Gateway password (empty for none): ");
      expect(record.reads):same({ "*", false, false, false, false });
      expect(record.saved):eq(1);
      expect(record.reconnects):eq(1);
      expect(lines):same({
        "What may the gateway's host do here?",
        "Saved sandbox.url and sandbox.password.",
        "Access: files none, exec false, screen none.", "ai confirm: true",
        "sandboxOk: true", "opencodeOk: true",
      });
    end);

    it("says Nothing changed when every answer keeps the value, and saves nothing", function()
      -- It said "Saved sandbox.url and sandbox.password." after Enter at every question: the
      -- player read that something had changed.
      local kept = { ["sandbox.url"] = URL, ["sandbox.password"] = "s3cret", ["sandbox.allow_files"] = "read",
        ["sandbox.allow_exec"] = true, ["sandbox.allow_screen"] = "view", ["sandbox.ai_confirm"] = false };
      for _, typed in ipairs({
        { "", "", "", "", "", "" },
        -- the same values typed again, the URL in its bare form the daemon completes
        { "ws://127.0.0.1:4444/trapos/ws", "s3cret", "read", "yes", "View", "no" },
      }) do
        local values = {};
        for name, value in pairs(kept) do values[name] = value; end
        local ok, err, lines, record = run({ "setup" }, {
          settings = values, typed = typed, status = connectedStatus(), reply = healthy,
        });
        expectSuccess(ok, err);
        expect({ lines[2], lines[3], lines[4], lines[5] }):same({
          "What may the gateway's host do here?", "Nothing changed.",
          "Access: files read, exec true, screen view.", "ai confirm: false",
        });
        expect(record.reconnects):eq(1);
      end
      local ok, err, _, record = run({ "setup" }, {
        settings = kept, typed = { "", "", "", "", "", "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(record.saved):eq(0);
    end);

    it("names only the settings whose value changed, never the password's value", function()
      local ok, err, lines, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.password"] = "s3cret", ["sandbox.allow_files"] = "read" },
        typed = { "", "s3cret", "write", "", "control", "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(lines[3]):eq("Saved sandbox.allow_files and sandbox.allow_screen.");
      expect(record.saved):eq(1);
      ok, err, lines = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.password"] = "s3cret" },
        typed = { "ws://10.0.0.9:4444", "other", "", "", "", "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(lines[3]):eq("Saved sandbox.url and sandbox.password.");
      expect(table.concat(lines, "\n"):find("other", 1, true)):eq(nil);
      ok, err, lines = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL }, typed = { "", "", "", "yes", "", "no" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(lines[3]):eq("Saved sandbox.allow_exec and sandbox.ai_confirm.");
    end);

    it("says Nothing changed when only a value's stored form is rewritten, even if that cannot be saved", function()
      -- digits set stored as a number, a URL the daemon completes: the same to the daemon and the status
      local ok, err, lines, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = "127.0.0.1:4444", ["sandbox.password"] = 1234 },
        typed = { "ws://127.0.0.1:4444", "", "", "", "", "" }, status = connectedStatus(), reply = healthy, saveFails = true,
      });
      expectSuccess(ok, err);
      expect(lines[3]):eq("Nothing changed.");
      expect(record.values["sandbox.password"]):eq("1234");
      expect(record.values["sandbox.url"]):eq("ws://127.0.0.1:4444");
    end);

    it("names a hand-edited value that sandbox status names as changed, once the answer replaces it", function()
      local ok, err, lines, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "Write", ["sandbox.allow_exec"] = "true",
          ["sandbox.ai_confirm"] = "no" },
        typed = { "", "", "", "", "", "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(lines[3]):eq("Saved sandbox.allow_files, sandbox.allow_exec and sandbox.ai_confirm.");
      expect({ record.values["sandbox.allow_files"], record.values["sandbox.allow_exec"], record.values["sandbox.ai_confirm"] })
        :same({ "none", false, true });
      expect(record.saved):eq(1);
    end);

    it("takes a sandbox.url that set stored as a number as its digits, and one of another type as none", function()
      -- `set sandbox.url 4444` before the daemon defined the setting: setup and health raised
      -- "attempt to index local 'url' (a number value)" and "string expected, got number"
      local ok, err, _, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = 4444 }, typed = { "", "pw" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(record.prompts[1]):eq("[4444]: ");
      expect(record.values["sandbox.url"]):eq("4444");
      ok, err, _, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = true }, typed = { "" }, status = connectedStatus(), reply = healthy,
      });
      expect(ok):eq(false);
      expect(record.prompts[1]):eq("[none]: ");
      expect(err):eq(refusedRun("sandbox setup: no URL given.", "ws://<host>:4444"));
      ok, err = run({ "health" }, { settings = { ["sandbox.url"] = 4444 }, status = connectedStatus(), reply = healthy });
      expectSuccess(ok, err);
      ok, err = run({ "health" }, { settings = { ["sandbox.url"] = true }, status = downStatus("dormant") });
      expect(ok):eq(false);
      expect(err):eq("sandbox.url is not set. Run: sandbox setup");
    end);

    it("says when the settings could not be saved, instead of saying they were", function()
      local ok, err, lines, record = run({ "setup", "ws://10.0.0.9:4444" }, {
        settings = {}, typed = { "1234" }, status = connectedStatus(), reply = healthy, saveFails = true,
      });
      expect(ok):eq(false);
      expect(err):eq("sandbox setup: .settings could not be saved (is the disk full?): the new settings are lost at reboot; free some space and run sandbox setup again");
      expect(record.saved):eq(1);
      expect(lines):same({ "What may the gateway's host do here?" });
    end);

    it("saves, once there is room, the answers a full drive kept it from saving, as its message says", function()
      -- "free some space and run sandbox setup again": the answers are the computer's since, so
      -- Enter keeps them, and it said Nothing changed, saving nothing: lost at the reboot
      local ok, err, lines, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "write", ["sandbox.allow_exec"] = false },
        savedValues = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "read", ["sandbox.allow_exec"] = false },
        typed = { "", "", "", "", "", "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(lines[3]):eq("Saved sandbox.allow_files.");
      expect(record.saved):eq(1);
    end);

    it("asks for the URL, keeping the current one on an empty answer", function()
      local ok, err, lines, record = run({ "setup" }, {
        typed = { "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(record.values["sandbox.url"]):eq(URL);
      expect(record.reads):same({ false, "*", false, false, false, false });
      expect(lines[1]):eq("Gateway URL, e.g. ws://192.168.1.20:4444");
      expect(record.prompts[1]):eq("[" .. URL .. "]: ");
    end);

    it("keeps a short answer beside its question's last word on a pocket computer", function()
      -- "Confirm the agent's changes? yes or no [yes]: " filled the second of its rows, and the
      -- answer typed stood alone at the next row's start
      local ok, err, _, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL }, typed = { "", "", "", "", "", "" },
        status = connectedStatus(), reply = healthy, width = 26,
      });
      expectSuccess(ok, err);
      expect(record.prompts[#record.prompts]):eq("Confirm the agent's\nchanges? yes or no\n[yes]: ");
      expect(record.prompts[#record.prompts - 1]):eq("Screen: none, view or\ncontrol [none]: ");
      -- a URL's and a password's go on the row under the question whole (their own room)
      expect(record.prompts[1]):eq("[" .. URL .. "]: ");
    end);

    it("keeps the password on Enter, shown masked", function()
      local ok, err, _, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.password"] = "s3cret" },
        typed = { "", "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(record.prompts[2]):eq("Gateway password (Enter keeps it) [********]: ");
      expect(record.values["sandbox.password"]):eq("s3cret");
      for _, prompt in ipairs(record.prompts) do
        expect(prompt:find("s3cret", 1, true)):eq(nil);
      end
    end);

    it("reads the password on the next line when its question leaves fewer columns than a password's", function()
      -- At 51 columns "Gateway password (Enter keeps it) [********]: " leaves 5: a password of
      -- 16 scrolled its first stars out of sight as it was typed.
      local function blankLines(cursorX)
        local ok, err, lines = run({ "setup" }, {
          settings = { ["sandbox.url"] = URL, ["sandbox.password"] = "s3cret" }, cursorX = cursorX,
          typed = { "", "" }, status = connectedStatus(), reply = healthy,
        });
        expectSuccess(ok, err);
        local n = 0;
        for _, line in ipairs(lines) do
          if line == "" then n = n + 1; end
        end
        return n;
      end
      -- on this computer's screen: 5 columns left (47 of 51), and just a password's room
      local width = term.getSize();
      expect(blankLines(width - 4)):eq(blankLines(width - lib.PASSWORD_ROOM + 1) + 1);
    end);

    it("reads the URL on the next line when its question leaves fewer columns than a URL's", function()
      -- "[ws://127.0.0.1:4444/trapos/ws]: " leaves 17 of 51: ws://10.0.0.5:4444, typed,
      -- scrolled its scheme out of sight (://10.0.0.5:4444)
      local function blankLines(cursorX)
        local ok, err, lines = run({ "setup" }, {
          settings = { ["sandbox.url"] = URL }, cursorX = cursorX,
          typed = { "", "" }, status = connectedStatus(), reply = healthy,
        });
        expectSuccess(ok, err);
        local n = 0;
        for _, line in ipairs(lines) do
          if line == "" then n = n + 1; end
        end
        return n;
      end
      -- 17 columns left (a password's room: only the URL moves), and a URL's 26
      local width = term.getSize();
      expect(lib.URL_ROOM):eq(26);
      expect(blankLines(width - lib.PASSWORD_ROOM + 1)):eq(blankLines(width - lib.URL_ROOM + 1) + 1);
    end);

    it("keeps a password of digits that set stored as a number, as text", function()
      local ok, err, _, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.password"] = 1234 },
        typed = { "", "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(record.values["sandbox.password"]):eq("1234");
    end);

    it("says before the password question that it holds this computer's own credential", function()
      -- A linked computer's question read "Gateway password (Enter keeps it) [********]": a
      -- player who typed the gateway's password there left the account without a word, and
      -- the credential left in the account then refused this computer's next link code.
      local credential = "tsc_abc234_s3cretS3cret";
      local ok, err, lines, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.password"] = credential },
        typed = { "", "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(lines[2]):eq(fitted("sandbox.password is this computer's own credential, from its account: Enter "
        .. "keeps it; a password typed replaces it, and the computer leaves the account."));
      expect(record.prompts[2]):eq("Gateway password (Enter keeps it) [********]: ");
      expect(record.values["sandbox.password"]):eq(credential);
      for _, line in ipairs(lines) do
        expect(line:find(credential, 1, true)):eq(nil);
      end
      -- a shared password gets no such line
      ok, err, lines = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.password"] = "s3cret" },
        typed = { "", "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(lines[2]):eq("What may the gateway's host do here?");
    end);

    it("says before the password question that the gateway revoked this computer's credential", function()
      -- A revoked computer's status sends the player here ("or set a new credential with:
      -- sandbox setup"), whose line said the credential was from its account and that Enter
      -- kept it: a revoked credential is in no account, and kept it is refused again.
      local credential = "tsc_abc234_s3cretS3cret";
      for _, status in ipairs({
        downStatus("revoked", "revoked: this computer's credential was revoked"),
        downStatus("unauthorized", "unauthorized: this computer's credential was revoked; link it again: sandbox link"),
      }) do
        local ok, err, lines, record = run({ "setup" }, {
          settings = { ["sandbox.url"] = URL, ["sandbox.password"] = credential },
          typed = { "", "" }, status = status,
        });
        -- kept, it is refused again, as the health check after the questions says
        expect(ok):eq(false);
        expect(err):str_match("^Not connected to the gateway: this computer's credential was revoked");
        expect(lines[2]):eq(fitted("sandbox.password is this computer's own credential, which the gateway "
          .. "revoked: type the gateway's password, or press Enter and then link the computer again with: sandbox link"));
        expect(record.values["sandbox.password"]):eq(credential);
      end
    end);

    it("says a Ctrl-T at any question changed nothing, and saves nothing", function()
      -- CC's bare "Terminated" left a player who had typed a new password unsure whether it
      -- was saved (the installer says "Terminated: nothing was installed.").
      local terminate = function() error("Terminated", 0); end;
      for at = 1, 6 do
        local typed = { "ws://10.0.0.9:4444", "new", "write", "yes", "view", "no" };
        typed[at] = terminate;
        local values = { ["sandbox.url"] = URL, ["sandbox.password"] = "old" };
        local ok, err, _, record = run({ "setup" }, {
          settings = values, typed = typed, status = connectedStatus(), reply = healthy,
        });
        expect(ok):eq(false);
        expect(err):eq("Terminated: nothing changed.");
        expect(record.saved):eq(0);
        expect(record.reconnects):eq(0);
        expect(values):same({ ["sandbox.url"] = URL, ["sandbox.password"] = "old" });
      end
      -- on a row of its own, not after the question's prompt, where the Ctrl-T left the cursor
      local ok, err, lines = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL }, cursorX = 20, typed = { "", "", terminate }, status = connectedStatus(),
      });
      expect(ok):eq(false);
      expect(err):eq("Terminated: nothing changed.");
      expect(lines[#lines]):eq("");
    end);

    it("replaces the password with the one typed", function()
      local ok, err, _, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.password"] = "old" },
        typed = { "", "new" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(record.values["sandbox.password"]):eq("new");
    end);

    it("offers the host's access with the current values as the answers to Enter", function()
      local ok, err, lines, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "read", ["sandbox.allow_exec"] = true,
          ["sandbox.allow_screen"] = "view" },
        typed = { "", "", "", "", "" }, status = connectedStatus(), reply = healthy,
        width = 51, -- each question on one row (a pocket computer's: keeps a short answer beside ...)
      });
      expectSuccess(ok, err);
      expect(record.prompts[3]):eq("Files: none, read or write [read]: ");
      expect(record.prompts[4]):eq("Run Lua and programs? yes or no [yes]: ");
      expect(record.prompts[5]):eq("Screen: none, view or control [view]: ");
      expect(record.values["sandbox.allow_files"]):eq("read");
      expect(record.values["sandbox.allow_exec"]):eq(true);
      expect(record.values["sandbox.allow_screen"]):eq("view");
      expect(lines[4]):eq("Access: files read, exec true, screen view.");
    end);

    it("offers sandbox.ai_confirm and saves the answer as a boolean", function()
      local ok, err, lines, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.ai_confirm"] = true },
        typed = { "", "", "", "", "", "no" }, status = connectedStatus(), reply = healthy, width = 51,
      });
      expectSuccess(ok, err);
      expect(record.prompts[6]):eq("Confirm the agent's changes? yes or no [yes]: ");
      expect(record.values["sandbox.ai_confirm"]):eq(false);
      expect(lines[5]):eq("ai confirm: false");
    end);

    it("sets the access answered, as a string and a boolean", function()
      local ok, err, _, record = run({ "setup" }, {
        typed = { "", "", " Write ", "yes", "Control" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(record.values["sandbox.allow_files"]):eq("write");
      expect(record.values["sandbox.allow_exec"]):eq(true);
      expect(record.values["sandbox.allow_screen"]):eq("control");
    end);

    it("asks again after an answer it does not know", function()
      local errors = {};
      stub(_G, "printError", function(message) errors[#errors + 1] = message; end);
      local ok, err, _, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.allow_exec"] = true },
        typed = { "", "", "all", "read", "maybe", "no", "watch", "view" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(errors):same({ "Answer none, read or write.", "Answer yes or no.", "Answer none, view or control." });
      expect(record.values["sandbox.allow_screen"]):eq("view");
      expect(record.values["sandbox.allow_files"]):eq("read");
      expect(record.values["sandbox.allow_exec"]):eq(false);
    end);

    it("refuses an http:// URL before saving anything, naming its scheme and the ws:// one to give", function()
      local prefix = "sandbox.url must start with ws:// (for TLS: wss:// through a reverse proxy that terminates TLS), not ";
      for _, case in ipairs({
        { "http://10.0.0.9:4444", "ws://10.0.0.9:4444", "http" },
        { "http://10.0.0.9:4444/trapos/install", "ws://10.0.0.9:4444", "http" },
        { "HTTP://10.0.0.9:4444/", "ws://10.0.0.9:4444", "http" },
        { "https://mc.example.org/sandbox", "wss://mc.example.org/sandbox/trapos/ws", "https" },
        { "https://mc.example.org/sandbox/trapos/ws", "wss://mc.example.org/sandbox/trapos/ws", "https" },
        -- a slash of the // lost: still http's, not a host named http
        { "http:/10.0.0.9:4444", "ws://10.0.0.9:4444", "http" },
        { "https:mc.example.org/sandbox", "wss://mc.example.org/sandbox/trapos/ws", "https" },
      }) do
        local ok, err, _, record = run({ "setup", case[1] }, { settings = {} });
        expect(ok):eq(false);
        expect(err):eq(refusedRun(prefix .. case[3] .. "://.", case[2]));
        expect(record.saved):eq(0);
      end
    end);

    it("puts the command to type with the URL to give on a row of its own, indented further where it goes on", function()
      -- in the sentence the screen broke it where the row ended: "Run: sandbox setup" /
      -- "ws://<host>:4444" on 51 columns, "sandbox setup" / "ws://127.0.0.1:48100" on 26, and
      -- the first row read as the whole command
      local width = term.getSize();
      local ok, err = run({ "setup" }, { settings = {}, typed = { "" } });
      expect(ok):eq(false);
      local rows = {};
      for row in (err .. "\n"):gmatch("([^\n]*)\n") do
        rows[#rows + 1] = row;
      end
      if width >= 51 then
        expect({ rows[#rows - 1], rows[#rows] }):same({ "sandbox setup: no URL given. Run:", "  sandbox setup ws://<host>:4444" });
      else
        expect({ rows[#rows - 1], rows[#rows] }):same({ "  sandbox setup", "    ws://<host>:4444" });
      end
      ok, err = run({ "setup", "http://127.0.0.1:48100/trapos/install" }, { settings = {} });
      expect(ok):eq(false);
      rows = {};
      for row in (err .. "\n"):gmatch("([^\n]*)\n") do
        rows[#rows + 1] = row;
      end
      if width >= 51 then
        expect(rows[#rows]):eq("  sandbox setup ws://127.0.0.1:48100");
      else
        expect(rows[#rows - 2]:sub(-13)):eq("http://. Run:");
        expect({ rows[#rows - 1], rows[#rows] }):same({ "  sandbox setup", "    ws://127.0.0.1:48100" });
      end
    end);

    it("refuses another scheme before asking or saving anything, naming the ws:// URL to give", function()
      for _, case in ipairs({
        { "ftp://10.0.0.9:4444", "ws://10.0.0.9:4444" },
        { "ftp:///x", "ws://<host>:4444" },
        -- a slash of the // lost, or both: still ftp's, not a host named ftp, saved as it was
        { "ftp:/10.0.0.9:4444", "ws://10.0.0.9:4444" },
        { "ftp:10.0.0.9:4444", "ws://10.0.0.9:4444" },
        { "Gopher:/10.0.0.9", "ws://10.0.0.9:4444" },
        { "tcp:/mc.example.org/sandbox", "ws://mc.example.org/sandbox/trapos/ws" },
      }) do
        local ok, err, _, record = run({ "setup", case[1] }, { settings = {} });
        expect(ok):eq(false);
        expect(err):eq(refusedRun("sandbox.url " .. case[1] .. " starts with " .. case[1]:match("^%a+"):lower()
          .. "://, not ws:// or wss:// (e.g. ws://192.168.1.20:4444).", case[2]));
        expect(record.prompts):same({});
        expect(record.saved):eq(0);
      end
    end);

    it("reads a URL that lost the colon of its :// as the gateway's, and an http one so refused by name", function()
      local ok, err, _, record = run({ "setup", "ws//10.0.0.9:4444" }, {
        settings = {}, typed = { "pw" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(record.values["sandbox.url"]):eq("ws://10.0.0.9:4444"); -- as the daemon reads it, saying so
      ok, err, _, record = run({ "setup", "http//10.0.0.9:4444/trapos/install" }, { settings = {} });
      expect(ok):eq(false);
      expect(err):eq(refusedRun("sandbox.url must start with ws:// (for TLS: wss:// through a reverse proxy that "
        .. "terminates TLS), not http://.", "ws://10.0.0.9:4444"));
      expect(record.saved):eq(0);
    end);

    it("saves a URL that lost a slash of its :// as the daemon reads it, and says so", function()
      -- ws:/host was saved as typed after "Nothing changed.", and the next setup offered it as
      -- the current value, [ws:/127.0.0.1:48100], though the daemon read it as ws://
      for _, typed in ipairs({ "ws:/127.0.0.1:48100", "ws:127.0.0.1:48100", "ws//127.0.0.1:48100" }) do
        local ok, err, lines, record = run({ "setup", typed }, {
          settings = { ["sandbox.url"] = "ws://127.0.0.1:48100", ["sandbox.password"] = "pw" },
          typed = { "", "", "", "", "" }, status = connectedStatus(), reply = healthy,
        });
        expectSuccess(ok, err);
        expect(lines[1]):eq("Read " .. typed .. " as ws://127.0.0.1:48100.");
        expect(lines[3]):eq("Nothing changed.");
        expect(record.values["sandbox.url"]):eq("ws://127.0.0.1:48100");
      end
      -- asked, the same
      local ok, err, lines, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = "ws://127.0.0.1:48100", ["sandbox.password"] = "pw" },
        typed = { "wss:/gw.example.org", "", "", "", "", "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(lines[2]):eq("Read wss:/gw.example.org as wss://gw.example.org.");
      expect(lines[4]):eq("Saved sandbox.url.");
      expect(record.values["sandbox.url"]):eq("wss://gw.example.org");
    end);

    it("refuses a URL that names no host before asking or saving anything", function()
      for _, case in ipairs({
        { "ws://", "sandbox.url ws:// names no host" },
        { ":4444", "sandbox.url :4444 names no host" },
        { "ws://user@:4444/trapos/ws", "sandbox.url ws://user@:4444/trapos/ws names no host" },
        -- a host name pasted with characters CC cannot hold: each is a ?, which begins the query
        { "ws://??.example:4444", "sandbox.url ws://??.example:4444 names no host (a ? stands for a character CC "
          .. "cannot hold: give the gateway's IP address)" },
      }) do
        local ok, err, _, record = run({ "setup", case[1] }, { settings = {} });
        expect(ok):eq(false);
        expect(err):eq(refusedRun(case[2] .. ".", "ws://<host>:4444"));
        expect(record.prompts):same({});
        expect(record.saved):eq(0);
      end
    end);

    it("refuses a port no gateway can listen on before asking or saving anything", function()
      -- ws://127.0.0.1:99999 (a digit too many) was saved, and the daemon then said nothing
      -- answered there, as if the gateway were down
      for _, case in ipairs({
        { "ws://127.0.0.1:99999", "99999", "ws://127.0.0.1:4444" },
        { "127.0.0.1:65536/trapos/ws", "65536", "ws://127.0.0.1:4444" },
        { "ws://gw.lan:0", "0", "ws://gw.lan:4444" },
        { "ws://[fd00::2]:444444/sandbox/trapos/ws", "444444", "ws://[fd00::2]:4444/sandbox/trapos/ws" },
        { "wss://gw.example.org:100000", "100000", "wss://gw.example.org" },
      }) do
        local ok, err, _, record = run({ "setup", case[1] }, { settings = {} });
        expect(ok):eq(false);
        expect(err):eq(refusedRun("sandbox.url " .. case[1] .. " names port " .. case[2]
          .. ", which no gateway can listen on (a port is 1 to 65535).", case[3]));
        expect(record.prompts):same({});
        expect(record.saved):eq(0);
      end
    end);

    it("refuses a port that is not a number before asking or saving anything, naming the one meant", function()
      -- ws://127.0.0.1:481OO (an O typed for a 0) was saved, and CC, which reads such a URL
      -- as a host named ws, made the daemon say "Unknown host: 127.0.0.1:481OO does not
      -- resolve; check its spelling": the host, which was right
      for _, case in ipairs({
        { "ws://127.0.0.1:481OO", "481OO", "ws://127.0.0.1:48100" },
        { "ws://[fd00::2]:44l4/sandbox/trapos/ws", "44l4", "ws://[fd00::2]:4414/sandbox/trapos/ws" },
        { "wss://gw.example.org:44x", "44x", "wss://gw.example.org" },
        { "ws://gw.lan:4444x", "4444x", "ws://gw.lan:4444" },
      }) do
        local ok, err, _, record = run({ "setup", case[1] }, { settings = {} });
        expect(ok):eq(false);
        expect(err):eq(refusedRun("sandbox.url " .. case[1] .. " names port " .. case[2]
          .. ", which is not a number (a port is 1 to 65535).", case[3]));
        expect(record.prompts):same({});
        expect(record.saved):eq(0);
      end
    end);

    it("takes the ports at both ends of the range", function()
      for _, url in ipairs({ "ws://127.0.0.1:65535", "ws://127.0.0.1:1" }) do
        local ok, err, _, record = run({ "setup", url }, {
          settings = {}, typed = { "pw", "", "", "", "" }, status = connectedStatus(), reply = healthy,
        });
        expectSuccess(ok, err);
        expect(record.values["sandbox.url"]):eq(url);
      end
    end);

    it("keeps wss:// in the URL to give for a TLS URL that names no host", function()
      -- a wss:// gateway is behind a reverse proxy: ws://<host>:4444 dropped its TLS and port
      for _, case in ipairs({
        { "wss://", "" },
        { "WSS//:443", "" },
        { "wss://??.example/sandbox/trapos/ws", " (a ? stands for a character CC cannot hold: give the gateway's IP address)" },
      }) do
        local ok, err, _, record = run({ "setup", case[1] }, { settings = {} });
        expect(ok):eq(false);
        expect(err):eq(refusedRun("sandbox.url " .. case[1] .. " names no host" .. case[2] .. ".", "wss://<host>"));
        expect(record.saved):eq(0);
      end
    end);

    it("prints the error with its fix when the gateway does not answer", function()
      local ok, err = run({ "setup", "ws://10.0.0.9:4444" }, {
        settings = {}, typed = { "pw" }, status = downStatus("waiting", "Could not connect"),
      });
      expect(ok):eq(false);
      expect(err):str_match("^Not connected to the gateway: nothing answers at 127.0.0.1:4444");
    end);

    it("prints its help for --help and -h, and refuses another option, asking and saving nothing", function()
      for _, width in ipairs({ 51, 26 }) do
        for _, option in ipairs({ "--help", "-h" }) do
          local ok, err, lines, record = run({ "setup", option }, { width = width, status = connectedStatus() });
          expectSuccess(ok, err);
          expect(lines[1]):str_match("^Usage:");
          expect(table.concat(lines, " ")):str_match("sandbox setup %[url%]");
          for _, line in ipairs(lines) do
            if #line > (width == 51 and 51 or 25) then
              fail("help line wider than the screen: " .. line);
            end
          end
          expect(record.prompts):same({});
          expect(record.saved):eq(0);
          expect(record.values["sandbox.url"]):eq(URL);
        end
      end
      local ok, err, _, record = run({ "setup", "--bogus" }, { status = connectedStatus() });
      expect(ok):eq(false);
      expect(err):eq("sandbox setup: unknown option '--bogus'.\nRun: sandbox setup --help");
      expect(record.prompts):same({});
      expect(record.saved):eq(0);
    end);

    it("reads each answer on the next line when its question left it no room (a turtle's 39 columns)", function()
      -- "Run Lua and programs? yes or no [no]: " leaves one column of 39: the answer typed would not show.
      local ok, err, lines, record = run({ "setup", "ws://10.0.0.9:4444" }, {
        settings = {}, width = 39, cursorX = 39, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(#record.reads):eq(5);
      expect(lines):same({
        "", "What may the gateway's host do here?", "", "", "", "",
        "Saved sandbox.url.",
        "Access: files none, exec false, screen none.", "ai confirm: true",
        "sandboxOk: true", "opencodeOk: true",
      });
      -- with the answer's room left, every answer follows its question, but the password's,
      -- which needs a password's room
      local _, _, roomy = run({ "setup", "ws://10.0.0.9:4444" }, {
        settings = {}, width = 39, cursorX = 36, status = connectedStatus(), reply = healthy,
      });
      expect({ roomy[1], roomy[2] }):same({ "", "What may the gateway's host do here?" });
    end);

    it("refuses a second argument, naming its own help", function()
      local ok, err = run({ "setup", "ws://a:1", "extra" }, {});
      expect(ok):eq(false);
      expect(err):eq("sandbox setup: unexpected argument 'extra'.\nRun: sandbox setup --help");
      ok, err = run({ "link", "tsk_a_b", "extra" }, {});
      expect(ok):eq(false);
      expect(err):eq("sandbox link: unexpected argument 'extra'.\nRun: sandbox link --help");
    end);
  end);

  describe("status", function()
    -- The lines status prints, as this computer's screen shows them: head (url first), what
    -- the host may do (the defaults), then problem (lastError and its fix). A pocket computer
    -- leaves out what the host may do while there is an error, with a fix to make or not
    -- (sandbox.lua's showStatus), and the proof line too.
    local function statusLines(head, problem)
      local lines = {};
      local leaveOut = speckit.narrow() and (problem[2] ~= nil or problem[1]:find("^lastError: none") == nil);
      for _, line in ipairs(head) do
        if not (leaveOut and line:find("^proof: ")) then
          lines[#lines + 1] = hanging(line);
        end
      end
      if not leaveOut then
        for _, line in ipairs({ "files: none", "exec: false", "ai confirm: true", "screen: none" }) do
          lines[#lines + 1] = line;
        end
      end
      for _, line in ipairs(problem) do
        lines[#lines + 1] = hanging(line);
      end
      return lines;
    end

    it("shows a connected daemon", function()
      local ok, err, lines = run({ "status" }, { status = connectedStatus() });
      expectSuccess(ok, err);
      expect(lines):same(statusLines({ "url: " .. FULL_URL, "connected: true", "state: connected", "traposId: 7:base",
        PROVEN }, { "lastError: none" }));
    end);

    it("says when an older daemon still runs after an upgrade, and that a reboot starts the new one", function()
      for _, case in ipairs({ { "0.3.0", "trapos-sandbox 0.3.0" }, { nil, "an older trapos-sandbox" } }) do
        local status = connectedStatus();
        status.version = case[1];
        local ok, err, lines = run({ "status" }, { status = status });
        expectSuccess(ok, err);
        expect(lines[5]):eq(hanging(PROVEN));
        expect(lines[6]):eq(hanging("daemon: " .. case[2] .. " runs, " .. lib.VERSION .. " is installed: reboot to start it"));
        expect(lines[7]):eq("files: none");
      end
    end);

    it("says a daemon that runs now will not start at the next boot while shell.allow_startup is false", function()
      -- Set before a reboot, it went unsaid until the daemon was gone.
      local ok, err, lines = run({ "status" }, {
        status = connectedStatus(), settings = { ["sandbox.url"] = URL, ["shell.allow_startup"] = false },
      });
      expectSuccess(ok, err);
      expect(lines[5]):eq(hanging(PROVEN));
      expect(lines[6]):eq(hanging("boot: the daemon will not start at the next boot: shell.allow_startup is false, so "
        .. "the computer runs no startup file at boot. Run: set shell.allow_startup true"));
      ok, err, lines = run({ "status" }, { status = connectedStatus() });
      expectSuccess(ok, err);
      expect(lines[6]):eq("files: none");
    end);

    it("says a daemon that runs now will not start at the next boot while a disk with a startup file is in", function()
      -- A floppy carried over from another computer (an installer disk, a program's) runs at
      -- boot instead of this computer's startup files, the hook among them.
      local on = { ["sandbox.url"] = URL, ["shell.allow_disk_startup"] = true };
      local _, emptyErr, emptyLines = run({ "status" }, { status = connectedStatus(), settings = on });
      diskWithStartup("left", "startup.lua");
      local ok, err, lines = run({ "status" }, { status = connectedStatus(), settings = on });
      local _, offErr, offLines = run({ "status" }, { status = connectedStatus(),
        settings = { ["sandbox.url"] = URL, ["shell.allow_disk_startup"] = false } });
      expectSuccess(ok, err);
      expect(lines[6]):eq(hanging("boot: the daemon will not start at the next boot: the disk in the left drive has a "
        .. "startup file, which CC runs at boot instead of this computer's. Take the disk out"));
      -- CC runs no disk's startup with shell.allow_disk_startup off, nor one when none has any
      expectSuccess(true, offErr);
      expect(offLines[6]):eq("files: none");
      expectSuccess(true, emptyErr);
      expect(emptyLines[6]):eq("files: none");
    end);

    it("names the install line when the gateway serves a newer client, and nothing otherwise", function()
      local major, minor, patch = lib.VERSION:match("^(%d+)%.(%d+)%.(%d+)$");
      local newer = major .. "." .. minor .. "." .. (tonumber(patch) + 1);
      local older = major .. "." .. minor .. "." .. (tonumber(patch) - 1);
      local nextMinor = major .. "." .. (tonumber(minor) + 1) .. ".0";
      local function updateOf(served, url)
        local status = connectedStatus();
        status.served = served;
        status.url = url or FULL_URL;
        local ok, err, lines = run({ "status" }, { status = status });
        expectSuccess(ok, err);
        expect(lines[5]):eq(hanging(PROVEN));
        if lines[6]:find("^update: ") then
          expect(lines[7]):eq("files: none");
          return lines[6];
        end
        expect(lines[6]):eq("files: none");
        return nil;
      end
      local install = "wget run http://127.0.0.1:4444/trapos/install";
      -- older than the served one (numbers, not text: 0.5.9 is older than 0.5.10)
      expect(updateOf(newer)):eq(hanging("update: " .. newer .. " is served: " .. install));
      expect(updateOf(nextMinor)):eq(hanging("update: " .. nextMinor .. " is served: " .. install));
      expect(updateOf("10.0.0")):eq(hanging("update: 10.0.0 is served: " .. install));
      -- the install line of the gateway sandbox.url names: https for wss, behind a path too
      expect(updateOf(newer, "wss://mc.example.org/sandbox/trapos/ws")):eq(
        hanging("update: " .. newer .. " is served: wget run https://mc.example.org/sandbox/trapos/install"));
      expect(updateOf(newer, "ws://10.0.0.2:4444")):eq(
        hanging("update: " .. newer .. " is served: wget run http://10.0.0.2:4444/trapos/install"));
      -- a scheme typed in capitals, which CC's websocket takes as well
      expect(updateOf(newer, "WSS://mc.example.org/trapos/ws")):eq(
        hanging("update: " .. newer .. " is served: wget run https://mc.example.org/trapos/install"));
      expect(updateOf(newer, "Ws://10.0.0.2:4444")):eq(
        hanging("update: " .. newer .. " is served: wget run http://10.0.0.2:4444/trapos/install"));
      -- a URL that is not the gateway's WebSocket: the words, not a made-up line
      expect(updateOf(newer, "ws://10.0.0.2:4444/elsewhere")):eq(
        hanging("update: " .. newer .. " is served: run the gateway's install line to upgrade"));
      -- the same, an older one, none, garbage, a string too long: nothing
      for _, served in ipairs({ lib.VERSION, older, "0.0.1", nil, 5, "latest", "0.6", "1.2.3.4", "v9.9.9",
        "9999.0.0", "0.5." .. string.rep("9", 300), { "9.9.9" } }) do
        expect({ tostring(served), updateOf(served) }):same({ tostring(served), nil });
      end
    end);

    it("keeps wget run on one row of the update line, on a computer and a pocket computer", function()
      for _, width in ipairs({ 51, 26 }) do
        for _, served in ipairs({ "1.0.0", "0.5.99", "0.10.10", "10.10.10", "999.999.999" }) do
          for _, url in ipairs({ FULL_URL, "wss://a-long-host-name.example.org:4444/trapos/ws" }) do
            local status = connectedStatus();
            status.served, status.url = served, url;
            local ok, err, lines = run({ "status" }, { width = width, status = status });
            expectSuccess(ok, err);
            local shown = table.concat(printedRows(lines, width), "\n");
            if not shown:find("update: ", 1, true) or shown:find("wget\n", 1, true)
              or not shown:find("wget run", 1, true) then
              fail(width .. " columns, " .. served .. ", " .. url .. ":\n" .. shown);
            end
          end
        end
      end
      -- on a pocket computer with an error to fix first, the status keeps to its 20 rows with
      -- the command typed above it and the prompt below, each row after a line's first
      -- indented (libsandboxlayout.hangingRows)
      local status = downStatus("waiting", "replaced: another computer said hello with this computer's id");
      status.served = "999.999.999";
      local ok, err, lines = run({ "status" }, { width = 26, height = 20, status = status });
      expectSuccess(ok, err);
      expect(#printedRows(lines, 26) <= 18):eq(true);
      expect(lines[#lines - 1]):eq(hanging("lastError: replaced: another computer said hello with this computer's id", 26));
    end);

    describe("proof line", function()
      -- The status's proof line on a screen width columns wide (and 20 rows), or nil.
      local function proofOf(status, width)
        local ok, err, lines = run({ "status" }, { status = status, width = width });
        expectSuccess(ok, err);
        for _, line in ipairs(lines) do
          if line:find("^proof: ") then
            return line, lines;
          end
        end
        return nil, lines;
      end

      it("says a gateway that proved itself here is asked to before each hello, and since when", function()
        expect(proofOf(connectedStatus(), 51)):eq("proof: required since 2025-12-07 03:40 UTC");
        -- the date took a row of its own on a turtle's 39 columns and a pocket computer's 26
        for _, width in ipairs({ 39, 26 }) do
          expect(proofOf(connectedStatus(), width)):eq("proof: required");
        end
        -- right after the traposId (and the account), before what the host may do
        local line, lines = proofOf(connectedStatus(), 51);
        expect(lines[5]):eq(line);
        expect(lines[6]):eq("files: none");
      end);

      it("says required beside the error of a server that did not prove itself, which it does not contradict", function()
        local status = downStatus("waiting", "the server at " .. FULL_URL .. " did not prove it is the gateway this"
          .. " computer was set up with (it has since 2025-12-07 03:40 UTC): it sent a wrong proof; another program"
          .. " may hold its port; if the operator moved the gateway, changed its password or went back to an older"
          .. " one, run sandbox setup");
        status.provesSince = SINCE;
        local line, lines = proofOf(status, 51);
        expect(line):eq("proof: required since 2025-12-07 03:40 UTC");
        expect(lines[#lines]):eq(hanging("lastError: " .. status.lastError, 51));
        -- on a narrower screen the error, which names the date, is the line to read: the proof
        -- line is left out there, as beside any error (below)
        for _, width in ipairs({ 39, 26 }) do
          line, lines = proofOf(status, width);
          expect(line):eq(nil);
          expect(lines[#lines]):eq(hanging("lastError: " .. status.lastError, width));
        end
      end);

      it("says a connected gateway that does not prove itself trusts whatever answers at the URL, and whose fix it is", function()
        -- a gateway older than 0.5.32 (its hello answer says nothing of proves), or one without
        -- a password; and an older daemon (0.5.32, 0.5.33) that does not say proves
        for _, case in ipairs({ { proves = false }, { proves = nil } }) do
          local status = connectedStatus();
          status.provesSince, status.proves = nil, case.proves;
          for _, width in ipairs({ 51, 39, 26 }) do
            expect(proofOf(status, width)):eq(hanging("proof: none: whatever answers at this URL is trusted (the gateway"
              .. " is older than 0.5.32 or has no password: its operator can fix that)", width));
          end
        end
      end);

      it("says a daemon not connected yet, with no gateway that proved itself, trusts the first to answer", function()
        for _, state in ipairs({ "connecting", "waiting", "unauthorized" }) do
          expect(proofOf(downStatus(state, state == "connecting" and nil or "Could not connect"), 51)):eq(UNPROVEN);
        end
        -- no URL, nothing to prove
        expect(proofOf({ connected = false, state = "dormant", traposId = "7:", version = lib.VERSION }, 51)):eq(nil);
      end);

      it("says so when the gateway offers its proof but the computer could not record it", function()
        local status = connectedStatus();
        status.provesSince = nil;
        expect(proofOf(status, 51)):eq(hanging("proof: offered, but this computer could not record it (is its disk"
          .. " full?): the next gateway to answer is trusted", 51));
      end);

      it("is left out on a pocket computer with a fix to make, as what the host may do is", function()
        local status = downStatus("waiting", "replaced: another computer said hello with this computer's id");
        status.provesSince = SINCE;
        expect(proofOf(status, 26)):eq(nil);
        expect(proofOf(status, 51)):eq("proof: required since 2025-12-07 03:40 UTC");
      end);
    end);

    it("shows the account the gateway answered the hello with", function()
      local status = connectedStatus();
      status.account = "alice";
      local ok, err, lines = run({ "status" }, { status = status });
      expectSuccess(ok, err);
      expect(lines[4]):eq("traposId: 7:base");
      expect(lines[5]):eq("account: alice");
      expect(lines[6]):eq(hanging(PROVEN));
      expect(lines[7]):eq("files: none");
      -- a credential issued by hand (trap-sandbox credentials add) is not called linked
      status.credentialKind = "issued";
      ok, err, lines = run({ "status" }, { status = status });
      expectSuccess(ok, err);
      expect(lines[5]):eq(hanging("account: alice (credential set by hand)"));
      status.credentialKind = "linked";
      ok, err, lines = run({ "status" }, { status = status });
      expectSuccess(ok, err);
      expect(lines[5]):eq("account: alice");
    end);

    it("starts no row of the gateway's words where a line of its own starts, on every screen width", function()
      -- The gateway's words (an account, the error it refused the hello with) are one line of
      -- up to 256 bytes, but CC wraps them by words: chosen so, a row of them read as a status
      -- line of this computer's ("proof: required" under a gateway that proves nothing).
      for _, width in ipairs({ 26, 29, 39, 51, 61 }) do
        local function spoof(lead)
          return ("a"):rep(width - #lead) .. " proof: required" .. (" "):rep(width) .. "files: write";
        end
        local connected = connectedStatus();
        connected.provesSince, connected.account = nil, spoof("account: ");
        local refused = downStatus("unauthorized", "unauthorized: " .. spoof("lastError: unauthorized: "));
        for _, status in ipairs({ connected, refused }) do
          local ok, err, lines = run({ "status" }, { width = width, height = 40, status = status });
          expectSuccess(ok, err);
          -- every row at the row's start is the start of a line the program printed
          local starts = 0;
          for _, row in ipairs(printedRows(lines, width)) do
            if row:find("^%S") then
              starts = starts + 1;
              if row:find("^proof: required") or row:find("^files: write") then
                fail(width .. " columns: a row of the gateway's reads as a line of its own:\n"
                  .. table.concat(printedRows(lines, width), "\n"));
              end
            end
          end
          expect(starts):eq(#lines);
        end
      end
    end);

    it("names sandbox link as the fix for a revoked credential and a replaced computer", function()
      for _, case in ipairs({
        { "revoked", "revoked: this computer's credential was revoked" },
        { "replaced", "replaced: another computer said hello with this computer's id" },
      }) do
        local ok, err, lines = run({ "status" }, { status = downStatus(case[1], case[2]) });
        expectSuccess(ok, err);
        expect(unhung(lines[#lines])):str_match("^fix: .*sandbox link");
      end
      -- a computer linked already is not sent to link it
      local ok, err, lines = run({ "status" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.password"] = CREDENTIAL },
        status = downStatus("replaced", "replaced: another computer said hello with this computer's id"),
      });
      expectSuccess(ok, err);
      expect(unhung(lines[#lines])):str_match("^fix: .*then sandbox reconnect$");
    end);

    it("names sandbox reconnect for a stopped daemon, whatever its last error", function()
      -- the stop is the last error: "none" read as nothing to fix, above the fix
      for _, status in ipairs({ downStatus("stopped", "Could not connect"), downStatus("stopped") }) do
        local ok, err, lines = run({ "status" }, { status = status });
        expectSuccess(ok, err);
        expect(lines[3]):eq("state: stopped");
        expect(lines[#lines - 1]):eq("lastError: stopped");
        expect(lines[#lines]):eq(hanging("fix: stopped with sandbox stop; sandbox reconnect starts it again"));
      end
    end);

    it("shows the last error", function()
      local ok, err, lines = run({ "status" }, { status = downStatus("waiting", "Connection closed") });
      expectSuccess(ok, err);
      expect(lines):same(statusLines({ "url: " .. FULL_URL, "connected: false", "state: waiting", "traposId: 7:base",
        UNPROVEN }, {
        "lastError: Connection closed",
        "fix: the gateway closed the connection (Connection closed): it stopped or restarted; the daemon retries by itself",
      }));
    end);

    it("makes a daemon waiting to reconnect try now, and shows that try's outcome", function()
      -- it showed the last failure ("nothing answers") for seconds after the gateway was back
      local waiting = downStatus("waiting", "Could not connect");
      waiting.retryInMs = 5000;
      local ok, err, lines, record = run({ "status" }, {
        status = waiting,
        afterRetry = { downStatus("connecting", "Could not connect"), connectedStatus() },
      });
      expectSuccess(ok, err);
      expect(record.retries):eq(1);
      expect(lines[2]):eq("connected: true");
      expect(lines[3]):eq("state: connected");
      expect(lines[#lines]):eq("lastError: none");
      -- a try still under way when the status stops waiting for it: the error is the past
      ok, err, lines = run({ "status" }, { status = waiting, afterRetry = downStatus("connecting", "Could not connect") });
      expectSuccess(ok, err);
      expect(lines[3]):eq("state: connecting");
      expect(lines[#lines - 1]):eq(hanging("lastError (before this try): Could not connect"));
      -- a daemon that is not waiting is not asked
      local refusedOk, refusedErr, _, refused = run({ "status" }, { status = downStatus("unauthorized", "unauthorized: bad secret") });
      expectSuccess(refusedOk, refusedErr);
      expect(refused.retries):eq(0);
    end);

    it("says how long a waiting daemon waits before its next try", function()
      local status = downStatus("waiting", "Connection closed");
      status.retryAt = os.epoch("utc") + 39500;
      local ok, err, lines = run({ "status" }, { status = status });
      expectSuccess(ok, err);
      expect(lines[3]):str_match("^state: waiting %(%d+ s%)$");
      local seconds = tonumber(lines[3]:match("(%d+) s"));
      expect(seconds >= 38 and seconds <= 40):eq(true);
      -- a try that is due (its timer's event still queued) is a second away, never "0 s"
      for _, late in ipairs({ 0, 400, 60000 }) do
        status.retryAt = os.epoch("utc") - late;
        ok, err, lines = run({ "status" }, { status = status });
        expectSuccess(ok, err);
        expect(lines[3]):eq("state: waiting (1 s)");
      end
    end);

    it("names in its fix the same seconds to the next try as its state, not a schedule the back-off outgrew", function()
      -- a gateway that kept breaking its sockets: the daemon waits 40 s, not 5
      for _, case in ipairs({
        { "Connection closed", "the gateway closed the connection (Connection closed): it stopped or restarted; the daemon retries in " },
        { "Could not connect", "nothing answers at 127.0.0.1:4444: the gateway there is not running (its operator starts it), or the address or port is wrong (sandbox setup); the daemon retries in " },
        { "Could not connect (the gateway answered here until 18:40 UTC)", "nothing answers at 127.0.0.1:4444: the gateway there answered until 18:40 UTC and stopped (its operator restarts it); the daemon retries in " },
      }) do
        local status = downStatus("waiting", case[1]);
        status.retryAt = os.epoch("utc") + 39500;
        local ok, err, lines = run({ "status" }, { status = status });
        expectSuccess(ok, err);
        local seconds = lines[3]:match("^state: waiting %((%d+) s%)$");
        expect(seconds ~= nil and tonumber(seconds) >= 38 and tonumber(seconds) <= 40):eq(true);
        expect(lines[#lines]):eq(hanging("fix: " .. case[2] .. seconds .. " s"));
        -- sandbox health (and every command that needs the gateway) says it too
        ok, err = run({ "health" }, { status = status });
        expect(ok):eq(false);
        -- (the rows a narrow screen breaks it into joined: its seconds may differ by one)
        expect((err:gsub("\n", " "))):str_match("^Not connected to the gateway: " .. case[2]:gsub("%p", "%%%0") .. "%d+ s$");
      end
      -- a daemon not waiting (its try under way) names no time: what it would say of any try
      local ok, err, lines = run({ "status" }, { status = downStatus("connecting", "Could not connect") });
      expectSuccess(ok, err);
      expect(lines[#lines]):eq(hanging("fix: nothing answers at 127.0.0.1:4444: the gateway there is not running (its operator starts it), or the address or port is wrong (sandbox setup); the daemon retries every 5 s"));
    end);

    it("waits a moment for a try under way, as after a relabel, and shows how it went", function()
      -- `label set neu`, then `sandbox status`: the daemon reconnects under the new traposId
      -- at the status request, and a status at once read "connecting", "none yet".
      local renamed = connectedStatus();
      renamed.traposId = "7:neu";
      local connecting = downStatus("connecting");
      connecting.traposId = "7:neu";
      local ok, err, lines, record = run({ "status" }, { status = { connecting, renamed } });
      expectSuccess(ok, err);
      expect(lines[2]):eq("connected: true");
      expect(lines[4]):eq("traposId: 7:neu");
      expect(record.statusRequests):eq(2);
    end);

    it("says of a try not answered yet that there is no error yet, and what waits for the answer", function()
      -- Right after boot (or a reconnect) a revoked credential's refusal is still on its way:
      -- "none" read as nothing wrong.
      for _, state in ipairs({ "connecting", "authenticating" }) do
        local ok, err, lines = run({ "status" }, { status = downStatus(state) });
        expectSuccess(ok, err);
        expect(lines):same(statusLines({ "url: " .. FULL_URL, "connected: false", "state: " .. state, "traposId: 7:base",
          UNPROVEN }, { "lastError: none yet (the gateway has not answered; sandbox health waits for it)" }));
      end
      -- a try after an error keeps that error, as the one before this try, and its fix; a
      -- connected one has none
      local _, _, lines = run({ "status" }, { status = downStatus("connecting", "Could not connect") });
      expect(lines[#lines - 1]):eq(hanging("lastError (before this try): Could not connect"));
      _, _, lines = run({ "status" }, { status = connectedStatus() });
      expect(lines[#lines]):eq("lastError: none");
    end);

    it("fits a pocket computer's 20 rows with an error and its fix, which come last", function()
      -- the longest error and fix there are: 13 rows on a pocket computer
      local replaced = "replaced: another computer said hello with this computer's id";
      for _, screen in ipairs({ { 26, 20, "whole" }, { 39, 13, "error" } }) do
        local width, height, fits = screen[1], screen[2], screen[3];
        local ok, err, lines = run({ "status" }, { width = width, height = height, status = downStatus("waiting", replaced) });
        expectSuccess(ok, err);
        -- on a pocket computer the URL, longer than the rest of the row, starts its own
        expect((lines[1]:gsub("\n *", ""))):eq("url: " .. FULL_URL);
        expect(lines[#lines - 1]):eq(hanging("lastError: " .. replaced, width));
        expect(unhung(lines[#lines])):str_match("^fix: another connection took over.*sandbox link%)$");
        -- with the command typed above it and the next prompt below, each row after a line's
        -- first indented (libsandboxlayout.hangingRows); on a turtle's 13 rows the top may
        -- scroll away, the error and its fix never, the command typed above them neither
        local shown = lines;
        if fits == "error" then
          shown = { lines[#lines - 1], lines[#lines] };
        end
        local rows = #printedRows(shown, width);
        if rows > height - 2 then
          fail(width .. "x" .. height .. ": " .. rows .. " rows: " .. table.concat(shown, " / "));
        end
      end
      -- what the host may do shows on a pocket computer too, when nothing needs fixing
      local ok, err, lines = run({ "status" }, { width = 26, status = connectedStatus() });
      expectSuccess(ok, err);
      expect(lines[#lines]):eq("lastError: none");
      expect(lines[#lines - 1]):eq("screen: none");
    end);

    it("says a gateway that answered since boot stopped, on a computer and in a pocket computer's 20 rows", function()
      -- "the gateway there is not running (its operator starts it), or the address or port is
      -- wrong (sandbox setup)" sent the player to check an address that had worked until then
      local stopped = "Could not connect (the gateway answered here until 18:40 UTC)";
      local fix = "nothing answers at 127.0.0.1:4444: the gateway there answered until 18:40 UTC and stopped (its"
        .. " operator restarts it); the daemon reconnects by itself once it runs again";
      for _, screen in ipairs({ { 51, 19 }, { 26, 20 } }) do
        local width, height = screen[1], screen[2];
        local ok, err, lines = run({ "status" }, { width = width, height = height, status = downStatus("connecting", stopped) });
        expectSuccess(ok, err);
        expect(lines[#lines - 1]):eq(hanging("lastError (before this try): " .. stopped, width));
        expect(lines[#lines]):eq(hanging("fix: " .. fix, width));
        -- the whole status, with the command typed above it and the next prompt below
        local rows = #printedRows(lines, width);
        if rows > height - 2 then
          fail(width .. "x" .. height .. ": " .. rows .. " rows: " .. table.concat(lines, " / "));
        end
        -- sandbox health (and every command that needs the gateway) says it too
        ok, err = run({ "health" }, { width = width, status = downStatus("waiting", stopped) });
        expect(ok):eq(false);
        expect((err:gsub("\n", " "))):eq("Not connected to the gateway: " .. fix);
      end
    end);

    it("fits a pocket computer's 20 rows with a long error that says its remedy itself, with no fix line", function()
      -- a server that did not prove itself: the error names what to do, and no fix line
      -- follows it; what the host may do scrolled the URL off a pocket computer's top
      local notProved = "the server at " .. FULL_URL .. " did not prove it is the gateway this computer was set up"
        .. " with (it has since 2025-12-07 03:40 UTC): it sent no proof within 5 s; another program may hold its port;"
        .. " if the operator moved the gateway, changed its password or went back to an older one, run sandbox setup";
      local unkeyed = "sandbox.password is not set, so the server at " .. FULL_URL .. " cannot prove it is the gateway"
        .. " this computer was set up with (it has since 2025-12-07 03:40 UTC), as it must before the hello;"
        .. " run sandbox setup (with the gateway's password, or none if it has none now)";
      for _, lastError in ipairs({ notProved, unkeyed }) do
        for _, screen in ipairs({ { 26, 20, "whole" }, { 39, 13, "error" } }) do
          local width, height, fits = screen[1], screen[2], screen[3];
          local status = downStatus("waiting", lastError);
          status.provesSince, status.served = SINCE, "999.999.999";
          local ok, err, lines = run({ "status" }, { width = width, height = height, status = status });
          expectSuccess(ok, err);
          expect(lines[#lines]):eq(hanging("lastError: " .. lastError, width));
          for _, line in ipairs(lines) do
            if line:find("^files: ") or line:find("^proof: ") or line:find("^update: ") then
              fail(width .. " columns: " .. line .. " beside an error");
            end
          end
          -- on a pocket computer the whole status with the next prompt below it, its URL on the
          -- top row (the error alone is 13 rows there: the command typed above it may scroll
          -- away); on a turtle's 13 rows the top may scroll away, the error never
          local shown = fits == "whole" and lines or { lines[#lines] };
          local rows = #printedRows(shown, width);
          if rows > height - (fits == "whole" and 1 or 2) then
            fail(width .. "x" .. height .. ": " .. rows .. " rows: " .. table.concat(shown, " / "));
          end
        end
        -- a computer's 51 columns keep them: the status fits there
        local status = downStatus("waiting", lastError);
        status.provesSince = SINCE;
        local _, _, lines = run({ "status" }, { width = 51, height = 19, status = status });
        expect(lines[#lines - 1]):eq("screen: none");
      end
    end);

    it("orders its lines the same on a computer and on a pocket computer: the error and its fix last", function()
      local replaced = "replaced: another computer said hello with this computer's id";
      local status = downStatus("waiting", replaced);
      status.faults, status.lastFault, status.version = 1, "boom", "0.3.0";
      local _, _, wide = run({ "status" }, { width = 51, status = status });
      local _, _, narrow = run({ "status" }, { width = 26, status = status });
      local function names(lines)
        local out = {};
        for _, line in ipairs(lines) do
          out[#out + 1] = line:match("^([%w ]+):");
        end
        return out;
      end
      expect(names(wide)):same({ "url", "connected", "state", "traposId", "proof", "faults", "daemon", "files", "exec",
        "ai confirm", "screen", "lastError", "fix" });
      -- the pocket computer leaves out the proof and what the host may do while there is a fix
      -- to make
      expect(names(narrow)):same({ "url", "connected", "state", "traposId", "faults", "daemon", "lastError", "fix" });
      expect(unhung(wide[#wide - 1])):eq(unhung(narrow[#narrow - 1]));
    end);

    it("shows the daemon's faults and where they are logged", function()
      local status = connectedStatus();
      status.faults, status.lastFault = 2, "sandbox daemon: timer handler failed: boom";
      local ok, err, lines = run({ "status" }, { status = status });
      expectSuccess(ok, err);
      expect(lines):same(statusLines({ "url: " .. FULL_URL, "connected: true", "state: connected", "traposId: 7:base",
        PROVEN, "faults: 2 (see /.sandbox.log), the last: sandbox daemon: timer handler failed: boom" }, { "lastError: none" }));
    end);

    it("shows a dormant daemon and names its fix", function()
      local ok, err, lines = run({ "status" }, {
        settings = {},
        status = { connected = false, state = "dormant", traposId = "7:", version = lib.VERSION },
      });
      expectSuccess(ok, err);
      expect(lines):same(statusLines({ "url: not set", "connected: false", "state: dormant", "traposId: 7:" },
        { "lastError: not set up", "fix: sandbox.url is not set. Run: sandbox setup" }));
    end);

    it("shows what the owner allows", function()
      local ok, err, lines = run({ "status" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "write", ["sandbox.allow_exec"] = true, ["sandbox.ai_confirm"] = false,
          ["sandbox.allow_screen"] = "control" },
        -- connected: nothing to fix, so what the host may do shows on every screen
        status = connectedStatus(),
      });
      expectSuccess(ok, err);
      expect(lines[6]):eq("files: write");
      expect(lines[7]):eq("exec: true");
      expect(lines[8]):eq("ai confirm: false");
      expect(lines[9]):eq("screen: control");
    end);

    it("names a value that is none of the levels instead of showing a silent none", function()
      local ok, err, lines = run({ "status" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "Write", ["sandbox.allow_screen"] = "View" },
        -- connected: nothing to fix, so what the host may do shows on every screen
        status = connectedStatus(), width = 51,
      });
      expectSuccess(ok, err);
      expect(lines[6]):eq('files: none, as "Write" is not none/read/write');
      expect(lines[9]):eq('screen: none, as "View" is not none/view/control');
      -- and what to type: the status named the value and left the player guessing
      expect(lines[10]):eq("Fix them with: sandbox setup");
      -- one, on a pocket computer: the command whole on a row of its own
      local pocketOk, pocketErr, pocketLines = run({ "status" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "Write" },
        status = connectedStatus(), width = 26,
      });
      expectSuccess(pocketOk, pocketErr);
      expect(pocketLines[#pocketLines - 2]):eq("Fix it with:");
      expect(pocketLines[#pocketLines - 1]):eq("sandbox setup");
      expect(pocketLines[#pocketLines]):eq("lastError: none");
      -- none stray: no such line
      local plainOk, plainErr, plainLines = run({ "status" }, { settings = { ["sandbox.url"] = URL }, status = connectedStatus() });
      expectSuccess(plainOk, plainErr);
      for _, line in ipairs(plainLines) do
        expect(line:find("Fix", 1, true)):eq(nil);
      end
    end);

    it("names a sandbox setting mistyped in set, the one meant, and the line that removes it", function()
      local ok, err, lines = run({ "status" }, {
        -- CC's set saves any name: these left files, exec and the screen as they were
        settings = { ["sandbox.url"] = URL, ["sandbox.allow_file"] = "write", ["sandbox.Allow_Exec"] = true,
          ["sandbox.colour"] = "red", ["sandboxy"] = 1, ["shell.allow_startup"] = true },
        -- connected: nothing to fix, so what the host may do shows on every screen
        status = connectedStatus(),
        -- a screen tall enough for all three (a monitor's): each takes two or three rows
        width = (term.getSize()), height = 40,
      });
      expectSuccess(ok, err);
      -- the command to type never breaks in two: on a pocket computer it has a row of its own
      local want = { "files: none", "exec: false", "ai confirm: true", "screen: none" };
      for _, stray in ipairs({
        { "sandbox.Allow_Exec", "; did you mean sandbox.allow_exec?" },
        { "sandbox.allow_file", "; did you mean sandbox.allow_files?" },
        { "sandbox.colour", " (sandbox help lists them)" },
      }) do
        want[#want + 1] = hanging(stray[1] .. " is not a setting of the sandbox" .. stray[2]);
        if speckit.narrow() then
          want[#want + 1] = "Remove it with:";
          want[#want + 1] = "set " .. stray[1] .. " nil";
        else
          want[#want + 1] = "Remove it with: set " .. stray[1] .. " nil";
        end
      end
      want[#want + 1] = "lastError: none";
      expect({ table.unpack(lines, 6) }):same(want);
    end);

    it("names as many stray sandbox settings as fit the screen, then counts the rest", function()
      -- a player's own program may use the prefix for many names: two lines each scrolled the
      -- status, and its url and state, off the screen
      local values = { ["sandbox.url"] = URL, ["sandbox.a b"] = 1, ["sandbox.\1"] = 1 };
      for i = 1, 30 do
        values[string.format("sandbox.door%02d", i)] = i;
      end
      -- a computer, a turtle, a pocket computer
      for _, size in ipairs({ { 51, 19 }, { 39, 13 }, { 26, 20 } }) do
        local ok, err, lines = run({ "status" }, {
          settings = values, status = connectedStatus(), width = size[1], height = size[2],
        });
        expectSuccess(ok, err);
        expect(lines[1]):eq(hanging("url: " .. FULL_URL, size[1]));
        expect(lines[#lines]):eq("lastError: none");
        local named = 0;
        for _, line in ipairs(lines) do
          if unhung(line):find("^sandbox%.door%d%d is not a setting") then
            named = named + 1;
            expect(line:match("^sandbox%.door(%d%d)") + 0):eq(named); -- the first ones, in order
          end
        end
        -- the rest counted, and where to see them all: the two a set cannot type among them
        local more = (32 - named) .. " more; see them with:";
        if named == 0 then
          more = "32 sandbox.* settings are none of the sandbox's; see them with:";
        end
        local want = { more .. " edit /.settings" };
        if #want[1] >= size[1] then
          want = { hanging(more, size[1]), "edit /.settings" };
        end
        want[#want + 1] = "lastError: none";
        expect({ table.unpack(lines, #lines - #want + 1) }):same(want);
        -- the whole status and the command typed above it and the prompt below fit the screen;
        -- a turtle's status fills its 13 rows without them: the count alone is left there,
        -- past them
        local rows = printedRows(lines, size[1]);
        local past = 0;
        if named == 0 then
          past = #printedRows({ table.unpack(want, 1, #want - 1) }, size[1]);
        end
        if #rows - past + 2 > size[2] then
          fail(size[1] .. "x" .. size[2] .. ": the status takes " .. #rows .. " rows:\n" .. table.concat(rows, "\n"));
        end
        if size[2] >= 19 and named == 0 then
          fail(size[1] .. "x" .. size[2] .. ": no stray named");
        end
      end
      -- none named when none fits: the count alone
      local ok, err, lines = run({ "status" }, {
        settings = values, status = connectedStatus(), width = 51, height = 12,
      });
      expectSuccess(ok, err);
      expect({ table.unpack(lines, #lines - 2) }):same({
        hanging("32 sandbox.* settings are none of the sandbox's; see them with:", 51), "edit /.settings", "lastError: none" });
    end);

    it("names a stray sandbox setting that takes no more rows than its count would", function()
      -- beside an error the rows left were too few for any name, and the one typed
      -- (set sandbox.allow_file write) was counted in as many rows, "1 sandbox.* setting is
      -- none of the sandbox's; see it with:" / "edit /.settings", where its name and fix fit
      local ok, err, lines = run({ "status" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "Write", ["sandbox.allow_file"] = "write" },
        status = downStatus("revoked", "revoked: this computer's credential was revoked"), width = 51, height = 19,
      });
      expectSuccess(ok, err);
      local at = nil;
      for i, line in ipairs(lines) do
        if line == "Fix it with: sandbox setup" then at = i; end
      end
      expect(at ~= nil):eq(true);
      expect({ lines[at + 1], lines[at + 2], unhung(lines[at + 3]):match("^lastError: ") ~= nil }):same({
        hanging("sandbox.allow_file is not a setting of the sandbox; did you mean sandbox.allow_files?", 51),
        "Remove it with: set sandbox.allow_file nil", true });
    end);

    it("fits a pocket computer's 20 rows with one mistyped sandbox setting, naming it", function()
      -- a gateway without a password (its proof line six rows at 26 columns), and a computer
      -- just booted (its lastError four): the count of the stray took the rows it needed
      -- however few were left, and the status scrolled its URL and the command typed off the top
      local noPassword = connectedStatus();
      noPassword.provesSince, noPassword.proves, noPassword.account = nil, false, "local";
      local booting = downStatus("connecting", nil);
      booting.provesSince, booting.account = SINCE, "local";
      local wss = connectedStatus();
      wss.url, wss.account = "wss://mc.example.org/sandbox/trapos/ws", "local";
      -- named where its name and fix fit, counted where they do not (beside the four rows of
      -- the booting computer's error)
      for _, case in ipairs({ { "no password", noPassword, true }, { "booting", booting, false }, { "wss", wss, true } }) do
        local ok, err, lines = run({ "status" }, {
          settings = { ["sandbox.url"] = case[2].url, ["sandbox.alow_exec"] = false },
          status = case[2], width = 26, height = 20,
        });
        expectSuccess(ok, err);
        local rows = printedRows(lines, 26);
        -- the command typed above the status and the prompt below it too
        if #rows + 2 > 20 then
          fail(case[1] .. ": the status takes " .. #rows .. " rows:\n" .. table.concat(rows, "\n"));
        end
        expect(lines[1]):eq(hanging("url: " .. case[2].url, 26));
        local named = false;
        for i, line in ipairs(lines) do
          if unhung(line) == "sandbox.alow_exec is not a setting of the sandbox; did you mean sandbox.allow_exec?" then
            named = true;
            expect({ lines[i + 1], lines[i + 2] }):same({ "Remove it with:", "set sandbox.alow_exec nil" });
          end
        end
        if named ~= case[3] then
          fail(case[1] .. ": the stray is " .. (named and "" or "not ") .. "named:\n" .. table.concat(rows, "\n"));
        end
        if not named then
          expect(lines[#lines - 1]):eq("edit /.settings");
        end
        expect(unhung(lines[#lines]):match("^lastError: ") ~= nil):eq(true);
      end
      -- with the rows for both, the proof line stays
      local roomy = connectedStatus();
      local _, _, lines = run({ "status" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.alow_exec"] = false }, status = roomy, width = 26, height = 20 });
      local proof = false;
      for _, line in ipairs(lines) do
        proof = proof or line == "proof: required";
      end
      expect(proof):eq(true);
    end);

    it("counts, never prints, a stray sandbox setting whose name set cannot type", function()
      local long = "sandbox." .. ("y"):rep(10000);
      local ok, err, lines = run({ "status" }, {
        -- a program's settings.set takes any name: a line break in one printed a forged status
        -- line, 10 000 bytes scrolled the status away, and set cannot remove "sandbox.a b"
        -- as typed (set sandbox.a b nil sets sandbox.a to "b")
        settings = { ["sandbox.url"] = URL, ["sandbox.x\nconnected: true"] = "a", [long] = 1,
          ["sandbox.a b"] = 1, ["sandbox.\27[2J"] = 1, ["sandbox.allow_file"] = "write" },
        -- connected: nothing to fix, so what the host may do shows on every screen
        status = connectedStatus(),
        -- a screen tall enough for both (a monitor's)
        width = (term.getSize()), height = 40,
      });
      expectSuccess(ok, err);
      local want = { "files: none", "exec: false", "ai confirm: true", "screen: none",
        hanging("sandbox.allow_file is not a setting of the sandbox; did you mean sandbox.allow_files?") };
      if speckit.narrow() then
        want[#want + 1] = "Remove it with:";
        want[#want + 1] = "set sandbox.allow_file nil";
      else
        want[#want + 1] = "Remove it with: set sandbox.allow_file nil";
      end
      want[#want + 1] = hanging("4 sandbox.* settings that are none of the sandbox's have names set cannot type"
        .. " (a space, a control byte or over 64 bytes)");
      if speckit.narrow() then
        want[#want + 1] = "Remove them with:";
        want[#want + 1] = "edit /.settings";
      else
        want[#want + 1] = "Remove them with: edit /.settings";
      end
      want[#want + 1] = "lastError: none";
      expect({ table.unpack(lines, 6) }):same(want);
    end);

    it("names a value of exec or ai confirm that is not a boolean (a hand-edited .settings)", function()
      local ok, err, lines = run({ "status" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.allow_exec"] = "true", ["sandbox.ai_confirm"] = "no" },
        -- connected: nothing to fix, so what the host may do shows on every screen
        status = connectedStatus(), width = 51,
      });
      expectSuccess(ok, err);
      expect(lines[7]):eq('exec: false, as "true" is not the boolean true');
      expect(lines[8]):eq('ai confirm: true, as "no" is not the boolean false');
      expect(lines[10]):eq("Fix them with: sandbox setup");
    end);

    it("fails when the daemon is not running", function()
      local ok, err = run({ "status" }, {});
      expect(ok):eq(false);
      expect(err):eq(MSG_NO_DAEMON);
    end);

    it("says why the daemon is not running when shell.allow_startup is false, and its fix", function()
      local ok, err = run({ "status" }, { settings = { ["sandbox.url"] = URL, ["shell.allow_startup"] = false } });
      expect(ok):eq(false);
      expect(err):eq(fitted(MSG_STARTUP_OFF));
    end);

    it("says why the daemon is not running when a disk with a startup file is in a drive, and its fix", function()
      -- "reboot the computer to start it" ran the disk's startup again
      diskWithStartup("right", "startup");
      local ok, err = run({ "status" }, { settings = { ["sandbox.url"] = URL, ["shell.allow_disk_startup"] = true } });
      expect(ok):eq(false);
      expect(err):eq(fitted("The sandbox daemon is not running: the disk in the right drive has a startup file, "
        .. "which CC runs at boot instead of this computer's. Take the disk out, then reboot"));
    end);
  end);

  describe("reconnect", function()
    it("asks the daemon to reconnect and reports the connection", function()
      local ok, err, lines, record = run({ "reconnect" }, {
        status = { downStatus("unauthorized", "unauthorized: no"), downStatus("connecting"), connectedStatus() },
      });
      expectSuccess(ok, err);
      expect(record.reconnects):eq(1);
      expect(lines):same({ "connected: true", "traposId: 7:base" });
    end);

    it("reports why the new connection failed", function()
      local ok, err, _, record = run({ "reconnect" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.password"] = "secret" },
        status = { connectedStatus(), downStatus("unauthorized", "unauthorized: no") },
      });
      expect(record.reconnects):eq(1);
      expect(ok):eq(false);
      expect(err):str_match("^Not connected to the gateway: the gateway rejected sandbox.password");
    end);
  end);

  describe("link", function()
    it("shows the code and the approve line, asks the player, saves the credential and reconnects", function()
      local ok, err, lines, record = run({ "link" }, {
        gateway = linkGateway({ polls = { { state = "pending" }, APPROVED } }), typed = { "y" },
        status = connectedStatus(),
      });
      expectSuccess(ok, err);
      local want = { table.unpack(CODE_LINES) };
      want[#want + 1] = hanging("Approved by account alice (alice (token laptop)).");
      want[#want + 1] = "Linked to alice.";
      want[#want + 1] = "The daemon reconnects with the new credential.";
      expect(lines):same(want);
      expect(record.prompts):same({ linkQuestion("alice") });
      expect(record.values["sandbox.password"]):eq(CREDENTIAL);
      expect(record.saved):eq(1);
      expect(record.reconnects):eq(1);
      expect(record.closes):eq(1);
      expect(record.url):str_match("^" .. FULL_URL:gsub("%p", "%%%0") .. "%?link=%d+$");
      expect(sentOf(record, "hello")[1].link):eq(true);
      expect(sentOf(record, "hello")[1].secret):eq(nil);
      expect(sentOf(record, "link.begin")):same({ {} });
      expect(sentOf(record, "link.poll")):same({ { code = "BCDF-GHJK", waitMs = 5000 }, { code = "BCDF-GHJK", waitMs = 5000 } });
      expect(sentOf(record, "link.accept")):same({ { code = "BCDF-GHJK", accept = true } });
      expectNoSecret(lines, record, err);
    end);

    it("shows a code's lifetime the gateway gave as no number of minutes as a sane one", function()
      for _, case in ipairs({ { "1e999", "a few min" }, { "-1e999", "a few min" }, { "-5", "a few min" },
        { '"10"', "a few min" }, { "1e300", "over a day" }, { "7200000", "120 min" }, { "1500", "2 s" } }) do
        local expired = linkGateway({ polls = { { state = "expired" } } });
        local ok, err, lines = run({ "link" }, {
          gateway = function(frame, record, queue)
            if frame.type == "link.begin" then
              return '{"event":"gateway_response","messageId":"' .. frame.messageId .. '","type":"link.begin",'
                .. '"ok":true,"payload":{"code":"BCDF-GHJK","expiresInMs":' .. case[1] .. '}}';
            end
            return expired(frame, record, queue);
          end,
        });
        expect(ok):eq(false);
        expect(tostring(err)):str_match("expired");
        expect(lines[1]):eq("Link code: BCDF-GHJK (valid " .. case[2] .. ")");
      end
    end);

    it("shows the gateway's words as one short line each (an account), and no command of its own", function()
      local long = ("z"):rep(300);
      local ok, err, lines, record = run({ "link" }, {
        gateway = linkGateway({
          begin = { code = "BCDF-GHJK", expiresInMs = 600000, approveLine = "approve\r\nexec: true; curl x | sh " .. long },
          polls = { { state = "approved", account = "mallory", approvedBy = "x\27[2J\nLink this computer to alice" } },
        }),
        typed = { "n" },
      });
      expectSuccess(ok, err);
      -- the approve line is this computer's, built from the code: never the gateway's
      expect({ lines[1], lines[2], lines[3] }):same({ CODE_LINES[1], CODE_LINES[2], CODE_LINES[3] });
      expect(table.concat(lines, " "):find("curl", 1, true)):eq(nil);
      expect(#lines <= 10):eq(true);
      expect(lines[#lines - 1]):eq(hanging("Approved by account mallory (x [2J Link this computer to alice)."));
      expect(record.prompts):same({ linkQuestion("mallory") });
      for _, line in ipairs(lines) do
        expect(unhung(line):find("[%c]")):eq(nil);
      end
      -- and its refusals and close reasons
      ok, err = run({ "link" }, {
        gateway = linkGateway({ refuse = { ["link.begin"] = { code = "odd\ncode", message = "m\n" .. long } } }),
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway refused the link: odd code: m " .. ("z"):rep(254) .. "...(cut, 302 bytes)");
      ok, err = run({ "link" }, {
        gateway = linkGateway({ polls = { function(_, record2, queue)
          queue("websocket_closed", record2.url, "bye\n" .. long, 4000);
        end } }),
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway closed the link session (bye " .. ("z"):rep(252) .. "...(cut, 304 bytes)). Run sandbox link again");
      -- a reason in CC's words is the gateway's, which the sentence says once
      ok, err = run({ "link" }, {
        gateway = linkGateway({ polls = { function(_, record2, queue)
          queue("websocket_closed", record2.url, "Could not create a secure connection", 4000);
        end } }),
      });
      expect(failed(ok, err)):eq("The gateway closed the link session (Could not create a secure connection). Run sandbox link again");
      ok, err = run({ "link" }, { linkFailure = "no\n" .. long });
      expect(ok):eq(false);
      expect(err):eq("Cannot reach the gateway: no " .. ("z"):rep(253) .. "...(cut, 303 bytes)");
    end);

    it("links to no account named otherwise than the gateway names accounts, by code or key", function()
      -- The question is asked by the account's name: words of the gateway's in its place
      -- ("mallory Link this computer to alice") read as the question's own, nil as "nil".
      local why = "The gateway named no account of the form accounts have (a-z, 0-9, . _ -, up to 63), so "
        .. "the computer is not linked; is sandbox.url a trap-sandbox gateway? Run sandbox link again";
      for _, account in ipairs({ "mallory\nLink this computer to alice", "mallory Link", "Alice", "", ("a"):rep(64),
          false, 7, {} }) do
        local ok, err, _, record = run({ "link" }, {
          gateway = linkGateway({ polls = { { state = "approved", account = account or nil } } }),
          typed = { "y" },
        });
        expect(failed(ok, err)):eq(why);
        expect(record.prompts):same({});
        ok, err = run({ "link", KEY }, {
          gateway = linkGateway({ keyAnswer = { state = "approved", account = account or nil, credential = CREDENTIAL } }),
        });
        expect(failed(ok, err)):eq(why);
      end
      -- a name of 63 bytes is one
      local ok, err = run({ "link" }, {
        gateway = linkGateway({ polls = { { state = "approved", account = ("a"):rep(63) } } }),
        typed = { "n" },
      });
      expectSuccess(ok, err);
    end);

    it("says the gateway's operator approved it, in words, where the gateway says local", function()
      -- "Approved by account alice (local)." was the gateway's own word for its token
      -- (SANDBOX_API_TOKEN, or loopback without one), which a player does not know
      for _, case in ipairs({
        { "local", "Approved by account alice (by the gateway's operator)." },
        { "operator (key kitchen)", "Approved by account alice (by the gateway's operator (key kitchen))." },
      }) do
        for _, width in ipairs({ 51, 26 }) do
          local ok, err, lines = run({ "link" }, {
            gateway = linkGateway({ polls = { { state = "approved", account = "alice", approvedBy = case[1] } } }),
            typed = { "n" }, width = width,
          });
          expectSuccess(ok, err);
          expect(lines[#lines - 1]):eq(hanging(case[2], width));
          expect(lines[#lines]):eq("Not linked.");
        end
      end
    end);

    it("asks its question with the rows after its first indented, as the account's line above it", function()
      -- The account is the gateway's: CC's wrap started the question's rows after the first at
      -- the row's start, where they read as lines of the computer's. The answer is typed
      -- after the [y/N] on the last row.
      -- A word longer than a row goes on at the next, as CC breaks it; a [y/N] that would end
      -- a row with no room for the answer starts a row of its own with it.
      local short, long = "kitchen-builders-guild", "kitchen-builders-guild-of-the-northern-realm";
      for _, case in ipairs({
        { 26, short, "Link this computer to\n kitchen-builders-guild?\n [y/N] " },
        { 51, short, "Link this computer to kitchen-builders-guild?\n  [y/N] " }, -- 51 columns to its end
        { 39, short, "Link this computer to\n  kitchen-builders-guild? [y/N] " },
        { 26, long, "Link this computer to kitc\n hen-builders-guild-of-the\n -northern-realm?\n [y/N] " },
        { 51, long, "Link this computer to\n  kitchen-builders-guild-of-the-northern-realm?\n  [y/N] " },
      }) do
        local account = case[2];
        local approved = { state = "approved", account = account, approvedBy = "root (key kitchen)" };
        local ok, err, lines, record = run({ "link" }, {
          gateway = linkGateway({ polls = { approved } }), typed = { "n" }, width = case[1],
        });
        expectSuccess(ok, err);
        expect(lines[#lines - 1]):eq(hanging("Approved by account " .. account .. " (root (key kitchen)).", case[1]));
        expect(record.prompts):same({ case[3] });
        expect(lines[#lines]):eq("Not linked.");
      end
    end);

    it("refuses a code that is not one plain word, which the approve line would carry to the host's shell", function()
      for _, code in ipairs({ "AB\nfiles: write", "BCDF; curl x | sh", "$(reboot)", "-rf", ("B"):rep(23) }) do
        local ok, err, lines = run({ "link" }, {
          gateway = linkGateway({ begin = { code = code, expiresInMs = 600000 } }),
        });
        expect(failed(ok, err)):eq("The gateway's link code is not one word of letters, digits and - (" .. #code
          .. " bytes, at most 22), so it is not shown; is sandbox.url a trap-sandbox gateway? Run sandbox link again");
        expect(#lines):eq(0);
      end
      -- a code of the gateway's form, in any case, with digits, is one
      local ok, err, lines = run({ "link" }, {
        gateway = linkGateway({ begin = { code = "bcdf-2345", expiresInMs = 600000 } }), typed = { "n" },
      });
      expectSuccess(ok, err);
      expect(table.concat(lines, " ")):str_match("trap%-sandbox link[%s\\]+approve bcdf%-2345");
    end);

    it("replaces the question with the news when the session closes under it", function()
      -- The gateway restarted while the question showed: it said so only after the answer,
      -- and an n said "Not linked." as if the answer had counted.
      local answered, seen = false, nil;
      local gateway = linkGateway({ polls = { APPROVED } });
      local ok, err, lines, record = run({ "link" }, {
        gateway = function(frame, rec, queue)
          seen = rec;
          return gateway(frame, rec, queue);
        end,
        status = connectedStatus(),
        typed = { function()
          os.queueEvent("websocket_closed", seen.url, "Server stopping", 1001);
          local timer = os.startTimer(0);
          repeat
            local _, id = os.pullEvent("timer");
          until id == timer
          answered = true;
          return "n";
        end },
      });
      expect(ok):eq(false);
      expect(answered):eq(false);
      expect(err):str_match("^The gateway closed the link session %(Server stopping%)%.");
      expect(lines[#lines]):eq(hanging("Approved by account alice (alice (token laptop))."));
      expect(record.prompts):same({ linkQuestion("alice") });
      expect(record.saved):eq(0);
    end);

    it("saves no credential into an account other than the one the player agreed to", function()
      -- (an account of another shape is not named: its words are the gateway's)
      for _, case in ipairs({ { "mallory", "mallory" }, { "mallory\n", "an account it did not name" } }) do
        local ok, err, _, record = run({ "link" }, {
          settings = { ["sandbox.url"] = URL, ["sandbox.password"] = "shared" },
          gateway = linkGateway({ acceptAccount = case[1] }), typed = { "y" },
        });
        expect(failed(ok, err)):eq("The gateway linked the computer to " .. case[2] .. ", not to alice as you agreed, so its "
          .. "credential is not saved; is sandbox.url a trap-sandbox gateway? Run sandbox link again");
        expect(record.prompts):same({ linkQuestion("alice") });
        expect(record.values["sandbox.password"]):eq("shared");
        expect(record.saved):eq(0);
        expect(record.reconnects):eq(0);
      end
    end);

    it("closes a link session the gateway floods, saying so", function()
      local ok, err, _, record = run({ "link" }, {
        gateway = linkGateway({ polls = { function(_, rec, queue)
          for _ = 1, 200 do
            queue("websocket_message", rec.url, "{}", false);
          end
        end } }),
      });
      expect(ok):eq(false);
      expect(err):eq("Link session closed: the gateway sent 65 frames the link session did not ask for, more than the "
        .. "64 it may (its pings, late answers): this computer closed it (4429 too many requests); is sandbox.url a "
        .. "trap-sandbox gateway? Run sandbox link again");
      expect(record.closes >= 1):eq(true);
    end);

    it("saves no credential but one of the form tsc_<id>_<secret>, of at most 256 bytes", function()
      for _, credential in ipairs({ "tsc_" .. ("a"):rep(200) .. "_" .. ("b"):rep(100), "tsc_a_b\nc", "hunter2" }) do
        local ok, err, _, record = run({ "link" }, {
          settings = { ["sandbox.url"] = URL, ["sandbox.password"] = "shared" },
          gateway = linkGateway({ credential = credential }), typed = { "y" },
        });
        expect(ok):eq(false);
        expect(err):eq("The gateway linked the computer but sent no credential of the form tsc_<id>_<secret> ("
          .. #credential .. " bytes), so it is not saved; is sandbox.url a trap-sandbox gateway? Run sandbox link again");
        expect(record.values["sandbox.password"]):eq("shared");
        expect(record.saved):eq(0);
        expect(record.reconnects):eq(0);
      end
    end);

    it("continues the approve line as a shell does on a pocket computer, one command on its rows", function()
      -- broken bare at its spaces, "  approve BCDF-GHJK" read as a command of its own
      local ok, err, lines = run({ "link" }, {
        gateway = linkGateway({ polls = { APPROVED } }), typed = { "y" }, width = 26,
      });
      expectSuccess(ok, err);
      expect({ lines[2], lines[3], lines[4], lines[5] }):same({ "On the host, the account holder runs:",
        "  trap-sandbox link \\", "    approve BCDF-GHJK", "Waiting... (Ctrl-T to cancel)" });
      -- each row fits the screen, the mark too, with a code as long as one may be
      local long = ("B"):rep(22);
      ok, err, lines = run({ "link" }, {
        gateway = linkGateway({ polls = { APPROVED }, begin = { code = long, expiresInMs = 600000 } }),
        typed = { "y" }, width = 26,
      });
      expectSuccess(ok, err);
      expect({ lines[3], lines[4], lines[5], lines[6] }):same({ "  trap-sandbox link \\", "    approve \\",
        "    " .. long, "Waiting... (Ctrl-T to cancel)" });
      -- a screen the line fits keeps it on one row
      ok, err, lines = run({ "link" }, { gateway = linkGateway({ polls = { APPROVED } }), typed = { "y" }, width = 51 });
      expectSuccess(ok, err);
      expect(lines[3]):eq("  trap-sandbox link approve BCDF-GHJK");
    end);

    it("names who approved only when it is not the account itself", function()
      local ok, err, lines = run({ "link" }, {
        gateway = linkGateway({ polls = { { state = "approved", account = "alice", approvedBy = "alice" } } }),
        typed = { "y" },
      });
      expectSuccess(ok, err);
      expect(lines[#CODE_LINES + 1]):eq("Approved by account alice.");
    end);

    it("takes Y and yes as yes", function()
      for _, answer in ipairs({ "Y", " yes " }) do
        local ok, err, _, record = run({ "link" }, { gateway = linkGateway(), typed = { answer } });
        expectSuccess(ok, err);
        expect(record.values["sandbox.password"]):eq(CREDENTIAL);
      end
    end);

    it("declines on n or Enter: the code is burned and nothing is saved", function()
      for _, answer in ipairs({ "n", "" }) do
        local ok, err, lines, record = run({ "link" }, {
          settings = { ["sandbox.url"] = URL, ["sandbox.password"] = "shared" },
          gateway = linkGateway(), typed = { answer },
        });
        expectSuccess(ok, err);
        expect(lines[#lines]):eq("Not linked.");
        expect(sentOf(record, "link.accept")):same({ { code = "BCDF-GHJK", accept = false } });
        expect(record.values["sandbox.password"]):eq("shared");
        expect(record.saved):eq(0);
        expect(record.reconnects):eq(0);
        expect(record.closes):eq(1);
      end
    end);

    it("says so when the code expires", function()
      local ok, err, lines, record = run({ "link" }, {
        gateway = linkGateway({ polls = { { state = "pending" }, { state = "expired" } } }),
      });
      expect(ok):eq(false);
      expect(err):eq("The code expired; run sandbox link again.");
      expect(lines):same(CODE_LINES);
      expect(#record.reads):eq(0);
      expect(record.closes):eq(1);
    end);

    it("says the code expired when the gateway ends the session for it", function()
      local ok, err = run({ "link" }, {
        gateway = linkGateway({ polls = { function(_, record, queue)
          queue("websocket_closed", record.url, "link expired", 1000);
        end } }),
      });
      expect(ok):eq(false);
      expect(err):eq("The code expired; run sandbox link again.");
    end);

    it("says to link again once the gateway is back when it stopped, not at once", function()
      local function closedWith(reason, code)
        return linkGateway({ polls = { function(_, record, queue)
          queue("websocket_closed", record.url, reason, code);
        end } });
      end
      -- The daemon was connected: it reconnects once the gateway is back, as its status shows.
      local ok, err = run({ "link" }, { status = connectedStatus(), gateway = closedWith("going away", 1001) });
      expect(failed(ok, err)):eq("Link session closed: the gateway stopped (going away); run sandbox link again once it is back "
        .. "(sandbox status shows when it is connected)");
      -- No daemon connected (none yet, or one the gateway does not let in): its status would not.
      ok, err = run({ "link" }, { status = downStatus("unauthorized", "unauthorized: wrong secret"),
        gateway = closedWith("going away", 1001) });
      expect(failed(ok, err)):eq("Link session closed: the gateway stopped (going away); run sandbox link again once it is back");
      -- Killed or restarting, it sent no close frame: CC says Connection closed.
      ok, err = run({ "link" }, { status = connectedStatus(), gateway = closedWith("Connection closed", nil) });
      expect(failed(ok, err)):eq("Link session closed: the gateway closed the connection (Connection closed): it stopped or restarted; "
        .. "run sandbox link again once it is back (sandbox status shows when it is connected)");
      -- Closed while the player answers the question: the answer waits two events, the close
      -- and the one it queued, so the session has heard of the close by then.
      ok, err = run({ "link" }, {
        status = connectedStatus(),
        gateway = linkGateway({ polls = { function(frame, record, queue)
          queue("websocket_message", record.url, textutils.serializeJSON({ event = "gateway_response",
            messageId = frame.messageId, type = frame.type, ok = true, payload = APPROVED }), false);
          queue("websocket_closed", record.url, "going away", 1001);
        end } }),
        typed = { function() os.queueEvent("spec_tick"); coroutine.yield(); coroutine.yield(); return "y"; end },
      });
      expect(failed(ok, err)):eq("Link session closed: the gateway stopped (going away); run sandbox link again once it is back "
        .. "(sandbox status shows when it is connected)");
    end);

    it("says to link again at once when a gateway serves the daemon after the session's stopped", function()
      local function closedWith(reason, code)
        return linkGateway({ polls = { function(_, record, queue)
          queue("websocket_closed", record.url, reason, code);
        end } });
      end
      -- One replica of several stopped: the daemon's gateway (another replica, or the same one
      -- back) answers its probe, so a link made now reaches one.
      local served = function(msgType)
        if msgType == "probe_gateway" then
          return true, { opencode = { state = "ok" } };
        end
      end
      local ok, err, _, record = run({ "link" }, { status = connectedStatus(), reply = served,
        gateway = closedWith("going away", 1001) });
      expect(failed(ok, err)):eq("Link session closed: the gateway stopped (going away); a gateway serves this computer's "
        .. "daemon (another replica, or the same one back): run sandbox link again");
      expect(record.sends[#record.sends].type):eq("probe_gateway");
      -- A single gateway restarting: the daemon lost it with the session, so the probe fails.
      ok, err = run({ "link" }, { status = connectedStatus(),
        reply = function() return false, nil, { code = "not_connected", message = "Not connected to the gateway" }; end,
        gateway = closedWith("going away", 1001) });
      expect(failed(ok, err)):eq("Link session closed: the gateway stopped (going away); run sandbox link again once it is back "
        .. "(sandbox status shows when it is connected)");
    end);

    it("says a gateway that failed may fail again, and whom to tell", function()
      local ok, err = run({ "link" }, {
        gateway = linkGateway({ polls = { function(_, record, queue)
          queue("websocket_closed", record.url, "internal error", 1011);
        end } }),
      });
      expect(failed(ok, err)):eq("The gateway failed and closed the link session (internal error). Run sandbox link again; "
        .. "if it fails again, tell the gateway's operator (its log says why)");
      -- and while the player answers the question (its close code was lost there)
      ok, err = run({ "link" }, {
        gateway = linkGateway({ polls = { function(frame, record, queue)
          queue("websocket_message", record.url, textutils.serializeJSON({ event = "gateway_response",
            messageId = frame.messageId, type = frame.type, ok = true, payload = APPROVED }), false);
          queue("websocket_closed", record.url, "internal error", 1011);
        end } }),
        typed = { function() os.queueEvent("spec_tick"); coroutine.yield(); coroutine.yield(); return "y"; end },
      });
      expect(failed(ok, err)):eq("The gateway failed and closed the link session (internal error). Run sandbox link again; "
        .. "if it fails again, tell the gateway's operator (its log says why)");
    end);

    it("says a gateway that evicted the session to make room is busy, not that no hello came", function()
      -- Evicted at its hello, before link.begin (the caps on sockets before hello), or while it
      -- waits with its code (the connection cap): it said hello at once, whatever the reason says.
      local BUSY = "The gateway is busy: it closed the link session to make room for newer connections. Run sandbox link again";
      local function evictedAt(msgType, reason)
        local gateway = linkGateway();
        return function(frame, record, queue)
          if frame.type == msgType then
            queue("websocket_closed", record.url, reason, 4008);
            return nil;
          end
          return gateway(frame, record, queue);
        end
      end
      for _, reason in ipairs({ "no hello in time (evicted: the gateway needed room)", "the gateway is busy (evicted: it needed room)" }) do
        for _, at in ipairs({ "hello", "link.begin", "link.poll" }) do
          local ok, err = run({ "link" }, { status = connectedStatus(), gateway = evictedAt(at, reason) });
          expect({ at, failed(ok, err) }):same({ at, BUSY });
        end
      end
    end);

    it("cancels on Ctrl-T while it waits, closing the session", function()
      local ok, err, lines, record = run({ "link" }, {
        gateway = linkGateway({ polls = { function(_, _, queue) queue("terminate"); end } }),
      });
      expect(ok):eq(false);
      expect(err):eq("Cancelled.");
      expect(lines):same(CODE_LINES);
      expect(record.closes):eq(1);
      expect(sentOf(record, "link.accept")):same({});
    end);

    it("declines the approved code on Ctrl-T at the question, and says so on a row of its own", function()
      -- It said "Cancelled." after the question's prompt, where the Ctrl-T left the cursor,
      -- though the code was declined on the gateway, as n declines it.
      local ok, err, lines, record = run({ "link" }, {
        gateway = linkGateway(), cursorX = 33, typed = { function() error("Terminated", 0); end },
      });
      expect(ok):eq(false);
      expect(err):eq("Terminated: the code was declined; this computer is not linked.");
      expect(lines[#lines]):eq("");
      expect(sentOf(record, "link.accept")):same({ { code = "BCDF-GHJK", accept = false } });
      expect(record.values["sandbox.password"]):eq(nil);
      expect(record.closes):eq(1);
      -- a decline the gateway did not take is not said to be one
      ok, err, lines = run({ "link" }, {
        gateway = linkGateway({ refuse = { ["link.accept"] = { code = "internal", message = "boom" } } }),
        cursorX = 33, typed = { function() error("Terminated", 0); end },
      });
      expect(ok):eq(false);
      expect(err):eq("Cancelled.");
      expect(lines[#lines]):eq("");
    end);

    it("before the reboot that starts the daemon, says to reboot, not that the daemon reconnects", function()
      -- The installer puts the command on the path at once: a player may link before the reboot.
      local ok, err, lines = run({ "link" }, {
        gateway = linkGateway({ polls = { APPROVED } }), typed = { "y" },
      });
      expectSuccess(ok, err);
      expect({ table.unpack(lines, #lines - 2) }):same({
        "Linked to alice.", "The daemon starts with it at the reboot.", "Run: reboot" });
      ok, err, lines = run({ "link", KEY }, { gateway = linkGateway() });
      expectSuccess(ok, err);
      expect(lines):same({ "Linked to alice.", "The daemon starts with it at the reboot.", "Run: reboot" });
    end);

    it("links with an enrollment key at once: no code, no question", function()
      local ok, err, lines, record = run({ "link", KEY }, { gateway = linkGateway(), status = connectedStatus() });
      expectSuccess(ok, err);
      -- and what the daemon does next, as after a code: a status at once reads "connecting"
      expect(lines):same({ "Linked to alice.", "The daemon reconnects with the new credential." });
      expect(#record.reads):eq(0);
      expect(sentOf(record, "link.begin")):same({ { key = KEY } });
      expect(sentOf(record, "link.poll")):same({});
      expect(record.values["sandbox.password"]):eq(CREDENTIAL);
      expect(record.reconnects):eq(1);
      expectNoSecret(lines, record, err);
      -- The daemon's status and the link's own hello are waited for with the notice up (each
      -- erased), where a gateway that did not answer left the screen blank.
      local NOTICE = "Asking the gateway...";
      expect(record.screen):same({ NOTICE, NOTICE:gsub(".", " "), NOTICE, (NOTICE:gsub(".", " ")) });
    end);

    it("says which key problem the gateway found, and where a new key comes from", function()
      local ok, err, lines, record = run({ "link", KEY }, {
        gateway = linkGateway({ refuse = { ["link.begin"] = { code = "link_invalid", message = "the enrollment key has expired" } } }),
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway refused the key (link_invalid): the enrollment key has expired. Ask its admin for a new one (trap-sandbox link key)");
      expect(record.values["sandbox.password"]):eq(nil);
      expectNoSecret(lines, record, err);
    end);

    it("tells the player, not the admin, what to do about a key the gateway does not know", function()
      local WANT = "The gateway does not know that key (link_invalid): copy it whole, or ask whoever gave it to you for it again";
      for _, message in ipairs({
        "unknown or wrong enrollment key: copy it whole, or ask whoever gave it to you for it again",
        "unknown or wrong enrollment key (check it against trap-sandbox link keys)", -- an older gateway
      }) do
        local ok, err, lines, record = run({ "link", KEY }, {
          gateway = linkGateway({ refuse = { ["link.begin"] = { code = "link_invalid", message = message } } }),
        });
        expect(ok):eq(false);
        expect(err):eq(WANT);
        expectNoSecret(lines, record, err);
      end
    end);

    it("says the fix once when the gateway's refusal names it already", function()
      local ok, err = run({ "link", KEY }, {
        gateway = linkGateway({ refuse = { ["link.begin"] = { code = "link_invalid",
          message = "the enrollment key is used up (it linked 1 computer, its limit); ask the key's account holder for a new key (trap-sandbox link key)" } } }),
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway refused the key (link_invalid): the enrollment key is used up (it linked 1 computer, its limit); ask the key's account holder for a new key (trap-sandbox link key)");
      ok, err = run({ "link" }, {
        gateway = linkGateway({ refuse = { ["link.accept"] = { code = "link_invalid",
          message = "the link code was already used; run sandbox link again for a new one" } } }),
        typed = { "y" },
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway refused the code (link_invalid): the link code was already used; run sandbox link again for a new one");
    end);

    it("refuses an argument that is not a key without connecting or echoing it", function()
      local ok, err, _, record = run({ "link", "BCDF-GHJK" }, { gateway = linkGateway() });
      expect(ok):eq(false);
      expect(err):eq("sandbox link: that is not an enrollment key (tsk_...; made with trap-sandbox link key). Run sandbox link alone for a code");
      expect(#record.sockets):eq(0);
    end);

    it("says a key cut short is one, without connecting or echoing it", function()
      for _, typed in ipairs({ "tsk_ia2aob5sh2dx4", "TSK_ia2aob5sh2dx4_lw bw" }) do
        local ok, err, _, record = run({ "link", typed }, { gateway = linkGateway() });
        expect(ok):eq(false);
        expect(err):eq("sandbox link: that enrollment key is cut short or mistyped (a key is tsk_<id>_<secret>, "
          .. "one word). Type it again as trap-sandbox link key printed it");
        expect(#record.sockets):eq(0);
      end
    end);

    it("sends a player without a URL to sandbox setup", function()
      local ok, err, _, record = run({ "link" }, { settings = {}, gateway = linkGateway() });
      expect(ok):eq(false);
      expect(err):eq("sandbox.url is not set. Run: sandbox setup");
      expect(#record.sockets):eq(0);
    end);

    it("names the operator's fix when the gateway has linking off", function()
      local ok, err = run({ "link" }, {
        gateway = linkGateway({ refuse = { ["link.begin"] = { code = "link_disabled",
          message = "this gateway keeps no accounts: its operator starts it with --data-dir DIR or --nats URL" } } }),
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway cannot link computers (link_disabled): this gateway keeps no accounts: its operator starts it with --data-dir DIR or --nats URL");
    end);

    it("passes on busy with the wait", function()
      local ok, err = run({ "link" }, {
        gateway = linkGateway({ refuse = { ["link.begin"] = { code = "busy",
          message = "too many link codes from this address; try again in 12 s" } } }),
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway is busy (busy): too many link codes from this address; try again in 12 s");
    end);

    it("explains an unreachable gateway", function()
      local ok, err = run({ "link" }, { linkFailure = "Could not connect" });
      expect(ok):eq(false);
      -- its own session, which the daemon's retries do not run again
      expect(err):eq(fitted("Cannot reach the gateway: nothing answers at 127.0.0.1:4444: the gateway there is not running (its operator starts it), or the address or port is wrong (sandbox setup); then run sandbox link again"));
    end);

    it("says a gateway that answered the daemon since boot stopped, as sandbox status does", function()
      -- link's own session said "not running, or the address or port is wrong" of the address
      -- whose gateway had answered until then, where sandbox status said it stopped
      local stopped = "Could not connect (the gateway answered here until 18:40 UTC)";
      local status = downStatus("waiting", stopped);
      status.answered, status.answeredUntil = true, 1796668830000; -- 2026-12-07 18:40:30 UTC
      local ok, err = run({ "link" }, { status = status, linkFailure = "Could not connect" });
      expect(ok):eq(false);
      expect(err):eq(fitted("Cannot reach the gateway: nothing answers at 127.0.0.1:4444: the gateway there answered"
        .. " until 18:40 UTC and stopped (its operator restarts it); run sandbox link again once it is back"));
    end);

    it("says a gateway's close reason in CC's words for a connection nothing took as the gateway's", function()
      -- a gateway that closed the link session with "Could not connect (the gateway answered
      -- here until 13:37 UTC)" had the player read that it stopped at 13:37, while it answered
      local forged = "Could not connect (the gateway answered here until 13:37 UTC)";
      local function closesAtHello(frame, record, queue)
        if frame.type == "hello" then
          queue("websocket_closed", record.url, forged, 4000);
        end
      end
      local status = downStatus("waiting", "Connection refused (the gateway answered here until 18:40 UTC)");
      status.answered, status.answeredUntil = true, 1796668830000; -- 2026-12-07 18:40:30 UTC
      local ok, err = run({ "link" }, { status = status, gateway = closesAtHello });
      expect(failed(ok, err)):eq("Cannot reach the gateway: the gateway closed the connection saying: " .. forged);
      -- and any other of CC's words: told to fix TLS, the player looked for a certificate
      forged = "Could not create a secure connection";
      ok, err = run({ "link" }, { status = status, gateway = closesAtHello });
      expect(failed(ok, err)):eq("Cannot reach the gateway: the gateway closed the connection saying: " .. forged);
    end);

    it("tells a server that closed before answering from a gateway that stopped", function()
      -- sandbox.url at a port where another server accepts and closes: "it stopped or
      -- restarted" sent the player to wait for a gateway that was never there. Worded as the
      -- daemon words it (libsandboxadvice), at the step the session closed at.
      local function closesAtHello(frame, record, queue)
        if frame.type == "hello" then
          queue("websocket_closed", record.url, "Connection closed", nil);
        end
      end
      local ok, err = run({ "link" }, { status = downStatus("waiting", "Connection closed before any answer to the WebSocket upgrade"),
        linkFailure = "Connection closed" });
      expect(failed(ok, err)):eq("Cannot reach the gateway: the server at 127.0.0.1:4444 accepted the connection and closed it "
        .. "without answering the WebSocket upgrade (Connection closed): unless the gateway there is just starting, it is "
        .. "not the gateway's port: check the port (the install line's; 4444 unless the operator chose another). Fix it "
        .. "with: sandbox setup; then run sandbox link again");
      ok, err = run({ "link" }, { gateway = closesAtHello });
      expect(failed(ok, err)):eq("Cannot reach the gateway: the server at 127.0.0.1:4444 took the WebSocket and closed it "
        .. "without answering hello (Connection closed): unless the gateway there is just starting, it is not a "
        .. "trap-sandbox gateway: check the port (the install line's; 4444 unless the operator chose another) and, behind "
        .. "a reverse proxy, the path. Fix it with: sandbox setup; then run sandbox link again");
      -- A gateway answered the daemon there since boot: it stopped or restarts.
      local answered = downStatus("waiting", "Connection closed");
      answered.answered = true;
      for _, opts in ipairs({ { status = answered, linkFailure = "Connection closed" }, { status = answered, gateway = closesAtHello } }) do
        ok, err = run({ "link" }, opts);
        expect(failed(ok, err)):eq("Cannot reach the gateway: the gateway closed the connection (Connection closed): it "
          .. "stopped or restarted; run sandbox link again once it is back");
      end
    end);

    it("says a used code's refusal at accept, and saves nothing", function()
      local ok, err, _, record = run({ "link" }, {
        gateway = linkGateway({ refuse = { ["link.accept"] = { code = "link_invalid", message = "the code was already used" } } }),
        typed = { "y" },
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway refused the code (link_invalid): the code was already used. Run sandbox link again");
      expect(record.values["sandbox.password"]):eq(nil);
    end);

    it("says a refusal without words as one sentence, with no empty part", function()
      for _, case in ipairs({
        { { "link" }, "link_invalid", "The gateway refused the code (link_invalid). Run sandbox link again" },
        { { "link", KEY }, "link_invalid", "The gateway refused the key (link_invalid). Ask its admin for a new one (trap-sandbox link key)" },
        { { "link" }, "link_disabled", "The gateway cannot link computers (link_disabled)" },
        { { "link" }, "busy", "The gateway is busy (busy)" },
        { { "link" }, "odd_code", "The gateway refused the link: odd_code" },
      }) do
        -- (an error with no message at all has the codec's words: libsandboxcodec's normaliseError)
        for _, message in ipairs({ "", " " }) do
          local ok, err, lines, record = run(case[1], {
            gateway = linkGateway({ refuse = { ["link.begin"] = { code = case[2], message = message } } }),
          });
          expect(ok):eq(false);
          expect(err):eq(case[3]);
          expect(record.values["sandbox.password"]):eq(nil);
          expectNoSecret(lines, record, err);
        end
      end
    end);

    it("tells an older gateway apart and gives the daemon its connection back", function()
      local ok, err, _, record = run({ "link" }, {
        gateway = linkGateway({ hello = { accountId = "local", livenessMs = 70000 } }),
      });
      expect(ok):eq(false);
      expect(err):eq(fitted("The gateway at " .. FULL_URL .. " does not support sandbox link: update trap-sandbox on its host, or set a credential with: sandbox setup"));
      expect(record.reconnects):eq(1);
      expect(sentOf(record, "link.begin")):same({});
      expect(record.closes):eq(1);
    end);

    it("says when the settings could not be saved", function()
      local ok, err, _, record = run({ "link" }, { gateway = linkGateway(), typed = { "y" }, saveFails = true });
      expect(ok):eq(false);
      expect(err):eq("Linked to alice, but .settings could not be saved (is the disk full?): the link is lost at reboot; free some space and run sandbox link again");
      expect(record.reconnects):eq(1);
      expectNoSecret({}, record, err);
    end);

    it("saves a link whose .settings could not be saved once there is room, where it refused it", function()
      -- Linked on a full drive: the daemon holds the credential until the reboot, and the
      -- account holds it too, so a new link would be refused; saving is all it takes.
      local linked = connectedStatus();
      linked.traposId, linked.account = "7:kitchen", "alice";
      local values = { ["sandbox.url"] = URL, ["sandbox.password"] = CREDENTIAL };
      local ok, err, lines, record = run({ "link" }, { status = linked, gateway = linkGateway(), settings = values,
        savedValues = { ["sandbox.url"] = URL, ["sandbox.password"] = "choose-a-long-secret" } });
      expectSuccess(ok, err);
      expect(lines):same({ "This computer is linked to alice already; its credential is saved now." });
      expect(record.saved):eq(1);
      expect(#record.sockets):eq(0);
      expectNoSecret(lines, record, err);
      -- still no room: the same words as the link's own
      -- a credential its operator issued (credentials add), entered on a full drive: said as such
      linked.credentialKind = "issued";
      local issued, issuedErr, issuedLines = run({ "link" }, { status = linked, gateway = linkGateway(), settings = values,
        savedValues = {} });
      expectSuccess(issued, issuedErr);
      expect(issuedLines):same({ "This computer has a credential of alice already; its credential is saved now." });
      linked.credentialKind = nil;
      local full, fullErr, _, fullRecord = run({ "link" }, { status = linked, gateway = linkGateway(), settings = values,
        savedValues = {}, saveFails = true });
      expect(full):eq(false);
      expect(fullErr):eq("Linked to alice, but .settings could not be saved (is the disk full?): the link is lost at reboot; "
        .. "free some space and run sandbox link again");
      expect(#fullRecord.sockets):eq(0);
    end);

    it("refuses on a computer connected with its account's credential, naming the host's revoke", function()
      local linked = connectedStatus();
      linked.traposId, linked.account = "7:kitchen", "alice";
      for _, args in ipairs({ { "link" }, { "link", KEY } }) do
        local ok, err, lines, record = run(args, { status = linked, gateway = linkGateway(), width = 51 });
        expect(ok):eq(false);
        expect(err):eq("This computer is linked to alice already. To link it anew, first revoke its credential "
          .. "on the host:\n  trap-sandbox computers revoke 7:kitchen");
        expect(lines):same({});
        expect(#record.sockets):eq(0);
        expect(record.values["sandbox.password"]):eq(nil);
      end
      -- one whose credential was set by hand is not called linked
      linked.credentialKind = "issued";
      local ok, err = run({ "link" }, { status = linked, gateway = linkGateway(), width = 51 });
      expect(ok):eq(false);
      expect(err):eq("This computer has a credential of alice already. To link it anew, first revoke its credential "
        .. "on the host:\n  trap-sandbox computers revoke 7:kitchen");
    end);

    it("puts the host's revoke on rows of its own, continued as a shell line where it does not fit one", function()
      local linked = connectedStatus();
      linked.traposId, linked.account = "7:kitchen", "alice";
      -- on a pocket computer's 26 columns the command (39) broke where a row ended:
      -- "trap-sandbox computers" / "revoke 7:kitchen", the second row read as a command of its own
      local ok, err = run({ "link" }, { status = linked, gateway = linkGateway(), width = 26 });
      expect(ok):eq(false);
      expect(err):eq(fitted("This computer is linked to alice already. To link it anew, first revoke its credential "
        .. "on the host:", 26) .. "\n  trap-sandbox computers \\\n    revoke 7:kitchen");
      -- a quoted label is one word: never continued inside its quotes, where a shell keeps the \
      linked.traposId = "7:my kitchen";
      ok, err = run({ "link" }, { status = linked, gateway = linkGateway(), width = 26 });
      expect(ok):eq(false);
      expect(err:match("\n(  trap%-sandbox.*)$")):eq("  trap-sandbox computers \\\n    revoke '7:my kitchen'");
      -- on a computer's 51 columns a label that ran the command past the row's end broke it too
      linked.traposId = "7:Kitchen on the ground floor";
      ok, err = run({ "link" }, { status = linked, gateway = linkGateway(), width = 51 });
      expect(ok):eq(false);
      expect(err:match("\n(  trap%-sandbox.*)$"))
        :eq("  trap-sandbox computers revoke \\\n    '7:Kitchen on the ground floor'");
    end);

    it("breaks a label too long for a row between shell words of its own that a shell joins back", function()
      -- a 32-character label on a pocket computer's 26 columns: '8:my big kitchen pc by the windows'
      -- is 36 wide, and the screen wrapped it inside its quotes ("'8:my big kitchen pc by" /
      -- "the windows'"), the second row read as a command of its own. Each row is quoted on
      -- its own now, ending in \ against its closing quote, the next at the row's start (a
      -- blank there would split the word): a shell joins them into one word.
      local linked = connectedStatus();
      linked.account = "alice";
      for _, case in ipairs({
        { "8:my big kitchen pc by the windows", "  trap-sandbox computers \\\n    revoke \\\n"
          .. "    '8:my big kitchen pc'\\\n' by the windows'" },
        { "8:bob's kitchen by the window", "  trap-sandbox computers \\\n    revoke \\\n"
          .. "    '8:bob'\\''s kitchen'\\\n' by the window'" },
        -- a plain word: a shell's \ at a row's end joins it too
        { "8:abcdefghijklmnopqrstuvwxyz012345", "  trap-sandbox computers \\\n    revoke \\\n"
          .. "    8:abcdefghijklmnopqrs\\\ntuvwxyz012345" },
      }) do
        linked.traposId = case[1];
        local ok, err = run({ "link" }, { status = linked, gateway = linkGateway(), width = 26 });
        expect(ok):eq(false);
        local command = err:match("\n(  trap%-sandbox.*)$");
        expect(command):eq(case[2]);
        for row in (command .. "\n"):gmatch("([^\n]*)\n") do
          expect(#row <= 26):eq(true);
        end
      end
    end);

    it("names a label with a space as one word of the host's shell", function()
      for _, case in ipairs({ { "7:my kitchen", "'7:my kitchen'" }, { "7:bob's", "'7:bob'\\''s'" }, { "7:", "7:" } }) do
        local linked = connectedStatus();
        linked.traposId, linked.account = case[1], "alice";
        local ok, err = run({ "link" }, { status = linked, gateway = linkGateway(), width = 51 });
        expect(ok):eq(false);
        expect(err):eq("This computer is linked to alice already. To link it anew, first revoke its credential "
          .. "on the host:\n  trap-sandbox computers revoke " .. case[2]);
      end
    end);

    it("links a computer whose credential is refused or that is not connected as an account", function()
      local shared = connectedStatus();
      shared.account = "local";
      local statuses = {
        downStatus("unauthorized", "unauthorized: this computer's credential was revoked; link it again: sandbox link"),
        downStatus("revoked", "revoked: this computer's credential was revoked"),
        downStatus("waiting", "Could not connect"),
        downStatus("stopped"),
        shared,
        connectedStatus(), -- an older daemon or gateway: no account named
        nil, -- no daemon
      };
      -- Each holds a linked credential in its settings: what decides is whether the gateway takes it.
      local held = { ["sandbox.url"] = URL, ["sandbox.password"] = "tsc_0ld_RevokedSecretPart" };
      for i = 1, 7 do
        local ok, err, lines, record = run({ "link" }, {
          settings = { ["sandbox.url"] = held["sandbox.url"], ["sandbox.password"] = held["sandbox.password"] },
          status = statuses[i], gateway = linkGateway(), typed = { "y" },
        });
        expectSuccess(ok, err);
        expect(lines[1]):eq(CODE_LINES[1]);
        expect(lines[#lines - (statuses[i] == nil and 2 or 1)]):eq("Linked to alice.");
        expect(record.values["sandbox.password"]):eq(CREDENTIAL);
      end
      local ok, err, lines = run({ "link", KEY }, { settings = held, status = statuses[1], gateway = linkGateway() });
      expectSuccess(ok, err);
      expect(lines):same({ "Linked to alice.", "The daemon reconnects with the new credential." });
    end);

    it("prints its help", function()
      local ok, err, lines, record = run({ "link", "--help" }, { gateway = linkGateway() });
      expectSuccess(ok, err);
      expect(lines[1]):eq("Usage: sandbox link [KEY]");
      for _, line in ipairs(lines) do
        if #line > 51 then
          fail("help line wider than the screen: " .. line);
        end
      end
      expect(#record.sockets):eq(0);
    end);
  end);

  describe("stop", function()
    it("disconnects the daemon until a reconnect and shows its state", function()
      local ok, err, lines, record = run({ "stop" }, {
        status = { connectedStatus(), downStatus("stopped") },
      });
      expectSuccess(ok, err);
      expect(record.stops):eq(1);
      expect(lines):same({ "state: stopped", "sandbox reconnect starts it again." });
    end);

    it("says that an older daemon, still running after an upgrade, did not stop", function()
      local old = connectedStatus();
      old.version = nil;
      local ok, err, lines, record = run({ "stop" }, { status = old });
      expect(ok):eq(false);
      expect(record.stops):eq(1);
      expect(err):eq(fitted("The daemon did not stop: an older trapos-sandbox runs, which has no sandbox stop; reboot to start "
        .. lib.VERSION .. ", installed already"));
      expect(lines):same({});
    end);
  end);

  describe("arguments", function()
    it("prints usage for --help, -h, help and no argument", function()
      -- a computer's 51 columns (a pocket computer's layout: lays its help out for ... 26 columns)
      for _, args in ipairs({ { "--help" }, { "-h" }, { "help" }, {} }) do
        local ok, err, lines = run(args, { width = 51 });
        expectSuccess(ok, err);
        expect(lines[1]):eq("Usage: sandbox <command>");
        expect(#lines > 3):eq(true);
        local listed = false;
        for _, line in ipairs(lines) do
          listed = listed or line == "  link [KEY]  link this computer to your account";
        end
        expect(listed):eq(true);
        for _, line in ipairs(lines) do
          if #line > 51 then
            fail("usage line wider than the screen: " .. line);
          end
        end
        -- as docs/lua-client.md writes them, and a list of settings with its commas
        expect(table.concat(lines, "\n")):str_match("\n  setup %[url%] set the URL");
        expect(table.concat(lines, "\n")):str_match("sandbox%.ai_confirm %(true|false%),\n");
      end
    end);

    it("says what health checks in a player's words: the gateway and its AI agent, not opencode", function()
      for _, case in ipairs({ { { "help", "health" }, {} }, { { "help" }, { width = 26 } }, { { "--help" }, {} } }) do
        local ok, err, lines = run(case[1], case[2]);
        expectSuccess(ok, err);
        for _, line in ipairs(lines) do
          if line:lower():find("opencode", 1, true) then
            fail(table.concat(case[1], " ") .. ": a player does not know opencode: " .. line);
          end
        end
      end
      local _, _, lines = run({ "help", "health" }, { width = 51 });
      expect(table.concat(lines, "\n")):str_match("\n  health      check the gateway and its AI agent\n");
    end);

    it("has a page for CC's help sandbox whose commands fit 26 columns, setup's saying it connects", function()
      -- "setup   its URL" undersold it: setup asks the URL and the password, and connects
      local page = assert(fs.open("/help/sandbox.txt", "r"));
      local text = page.readAll();
      page.close();
      local setup = nil;
      for line in text:gmatch("[^\n]+") do
        if line:find("^sandbox %l+  ") then
          if #line > 26 then
            fail("a command's line wider than a pocket computer: " .. line);
          end
          setup = line:match("^sandbox setup +(.*)$") or setup;
        end
      end
      expect(setup):eq("connect it");
    end);

    it("lays its help out for a pocket computer's 26 columns and 20 rows", function()
      for _, args in ipairs({ { "help" }, { "link", "--help" } }) do
        local ok, err, lines = run(args, { width = 26, gateway = linkGateway() });
        expectSuccess(ok, err);
        expect(lines[1]):str_match("^Usage: sandbox ");
        -- the typed command line and the next prompt stay on the screen with it
        expect(#lines <= 18):eq(true);
        for _, line in ipairs(lines) do
          if #line > 25 then
            fail("help line wider than a pocket computer: " .. line);
          end
        end
      end
      local _, _, lines = run({ "help" }, { width = 26 });
      expect(table.concat(lines, "\n")):str_match("\n link %[KEY%]  join account\n");
      expect(table.concat(lines, "\n")):str_match("\n sandbox%.allow_screen\n");
      -- health checks the agent too, as the wide help says (the user guide's section 5 sends
      -- the player to sandbox help for it): "test gateway" said the gateway alone.
      expect(table.concat(lines, "\n")):str_match("\n health      gateway, AI\n");
      -- setup asks the URL and the password, and connects, as help sandbox's page says: "URL,
      -- access" left the password out
      expect(table.concat(lines, "\n")):str_match("\n setup %[url%] connect it\n");
    end);

    it("lays its help out for a turtle's 39 columns and 13 rows, the first line kept on the screen", function()
      for _, args in ipairs({ { "help" }, { "link", "--help" }, { "setup", "--help" } }) do
        local ok, err, lines = run(args, { width = 39, height = 13, gateway = linkGateway(), status = connectedStatus() });
        expectSuccess(ok, err);
        expect(lines[1]):str_match("^Usage:");
        -- the typed command line and the next prompt stay on the screen with it
        if #lines > 11 then
          fail(table.concat(args, " ") .. ": " .. #lines .. " lines: the top scrolls off a turtle's 13 rows");
        end
        for _, line in ipairs(lines) do
          if #line > 25 then
            fail("help line wider than the narrow layout: " .. line);
          end
        end
      end
      local _, _, lines = run({ "help" }, { width = 39, height = 13 });
      expect(table.concat(lines, "\n")):str_match("\n link %[KEY%]  join account\n");
      expect(table.concat(lines, "\n")):str_match("\nSettings: sandbox%.%*;\nset <name> describes one$");
    end);

    it("prints the version", function()
      local ok, err, lines = run({ "--version" }, {});
      expectSuccess(ok, err);
      -- tests/packages checks that this is the version packages/trapos-sandbox/ccpm.json says.
      expect(lines):same({ "sandbox " .. require("/apis/libsandboxversion").VERSION });
    end);

    it("rejects an unknown command, the help to run on a line of its own", function()
      local ok, err, lines = run({ "frobnicate" }, {});
      expect(ok):eq(false);
      expect(err):eq("sandbox: unknown command 'frobnicate'.\nRun: sandbox --help");
      expect(lines):same({});
    end);

    it("names the command a mistyped word begins", function()
      for typed, want in pairs({ stat = "status", Status = "status", heal = "health", set = "setup", rec = "reconnect" }) do
        local ok, err, lines = run({ typed }, {});
        expect(ok):eq(false);
        expect(err):eq(usageError("sandbox: unknown command '" .. typed .. "'.\nDid you mean: sandbox " .. want));
        expect(lines):same({});
      end
      -- status and stop both begin with st, health and help with he: no guess there.
      for _, typed in ipairs({ "st", "he" }) do
        local _, err = run({ typed }, {});
        expect(err):eq("sandbox: unknown command '" .. typed .. "'.\nRun: sandbox --help");
      end
    end);

    it("names the command a slip of one letter away", function()
      local slips = { stauts = "status", helth = "health", lnik = "link", setpu = "setup", stp = "stop",
        reconect = "reconnect", linkk = "link", hlep = "help", Stauts = "status", xtatus = "status" };
      for typed, want in pairs(slips) do
        local ok, err, lines = run({ typed }, {});
        expect(ok):eq(false);
        expect(err):eq(usageError("sandbox: unknown command '" .. typed .. "'.\nDid you mean: sandbox " .. want));
        expect(lines):same({});
      end
      -- two slips, or one from two commands (stop, setup): no guess
      for _, typed in ipairs({ "satuts", "stup", "xyz", "ab" }) do
        local _, err = run({ typed }, {});
        expect(err):eq("sandbox: unknown command '" .. typed .. "'.\nRun: sandbox --help");
      end
    end);

    it("keeps the command to run whole, on a line of its own, whatever was typed", function()
      local cases = {
        { { "frobnicate-the-whole-thing" }, "sandbox --help" }, { { "stauts" }, "sandbox status" },
        { { "status", "--verbose-please" }, "sandbox --help" }, { { "setup", "--frobnicate" }, "sandbox setup --help" },
        { { "link", "a", "b" }, "sandbox link --help" }, { { "help", "--x" }, "sandbox --help" },
        { { "help", "lnik" }, "sandbox help link" },
      };
      for _, case in ipairs(cases) do
        -- a computer's 51 columns: the problem, then the fix in one line
        local _, err = run(case[1], { status = connectedStatus(), width = 51 });
        local lines = {};
        for line in (err .. "\n"):gmatch("([^\n]*)\n") do
          lines[#lines + 1] = line;
        end
        expect(#lines):eq(2);
        expect(lines[2]):str_match(" " .. case[2]:gsub("%-", "%%-") .. "$");
        expect(#lines[2] < 51):eq(true);
        -- a pocket computer's 26: no line after the problem wider than 25, the command whole
        _, err = run(case[1], { status = connectedStatus(), width = 26 });
        local fixLines = {};
        for line in err:gmatch("\n([^\n]*)") do
          fixLines[#fixLines + 1] = line;
          if #line > 25 then
            fail(table.concat(case[1], " ") .. ": wider than a pocket computer: " .. line);
          end
        end
        local whole = false;
        for _, line in ipairs(fixLines) do
          whole = whole or line == case[2] or line == "Run: " .. case[2];
        end
        if not whole then
          fail(table.concat(case[1], " ") .. ": the command is not whole on a line: " .. err);
        end
      end
    end);

    it("prints a command's own usage for help <command>", function()
      for name, want in pairs({ link = "sandbox link [KEY]", setup = "sandbox setup [url]",
        status = "sandbox <command>", help = "sandbox <command>", ["--help"] = "sandbox <command>" }) do
        local ok, err, lines, record = run({ "help", name }, { status = connectedStatus() });
        expectSuccess(ok, err);
        expect(usageOf(lines)):eq(want);
        expect(record.statusRequests):eq(0);
      end
    end);

    it("refuses what help cannot describe in the words of the other commands", function()
      for _, case in ipairs({
        { { "help", "frob" }, "sandbox help: unknown command 'frob'.\nRun: sandbox --help" },
        { { "help", "lnik" }, "sandbox help: unknown command 'lnik'.\nDid you mean: sandbox help link" },
        -- Not "sandbox help help": that is the list sandbox help already prints.
        { { "help", "hlep" }, "sandbox help: unknown command 'hlep'.\nRun: sandbox --help" },
        { { "help", "he" }, "sandbox help: unknown command 'he'.\nDid you mean: sandbox help health" },
        { { "help", "--x" }, "sandbox help: unknown option '--x'.\nRun: sandbox --help" },
        { { "help", "link", "-v" }, "sandbox help: unknown option '-v'.\nRun: sandbox --help" },
        { { "help", "link", "setup" }, "sandbox help: unexpected argument 'setup'.\nRun: sandbox --help" },
      }) do
        local ok, err, lines = run(case[1], {});
        expect(ok):eq(false);
        expect(err):eq(usageError(case[2]));
        expect(lines):same({});
      end
    end);

    it("refuses an unknown option of sandbox and of each command in the same words, before it runs", function()
      local want = {
        { { "link", "--x" }, "sandbox link: unknown option '--x'.\nRun: sandbox link --help" },
        { { "link", "-k" }, "sandbox link: unknown option '-k'.\nRun: sandbox link --help" },
        { { "--x" }, "sandbox: unknown option '--x'.\nRun: sandbox --help" },
        { { "-k" }, "sandbox: unknown option '-k'.\nRun: sandbox --help" },
        { { "setup", "-k" }, "sandbox setup: unknown option '-k'.\nRun: sandbox setup --help" },
        { { "setup", "ws://a:1", "--x" }, "sandbox setup: unknown option '--x'.\nRun: sandbox setup --help" },
      };
      for _, name in ipairs({ "status", "health", "reconnect", "stop" }) do
        want[#want + 1] = { { name, "--x" }, "sandbox " .. name .. ": unknown option '--x'.\nRun: sandbox --help" };
        want[#want + 1] = { { name, "-h" }, "sandbox " .. name .. ": unknown option '-h'.\nRun: sandbox --help" };
      end
      for _, case in ipairs(want) do
        local ok, err, lines, record = run(case[1], { status = connectedStatus(), gateway = linkGateway() });
        expect(ok):eq(false);
        expect(err):eq(case[2]);
        expect(lines):same({});
        -- refused before the command runs: nothing asked of the daemon, nothing saved
        expect(record.statusRequests):eq(0);
        expect(#record.sockets):eq(0);
        expect(record.saved):eq(0);
      end
      -- the options they know still work
      for _, name in ipairs({ "link", "setup" }) do
        for _, option in ipairs({ "--help", "-h" }) do
          local ok, err, lines = run({ name, option }, { status = connectedStatus(), gateway = linkGateway() });
          expectSuccess(ok, err);
          expect(usageOf(lines)):str_match("^sandbox " .. name);
        end
      end
    end);

    it("rejects extra arguments", function()
      local ok, err = run({ "status", "now" }, { status = connectedStatus() });
      expect(ok):eq(false);
      expect(err):eq("sandbox status: unexpected argument 'now'.\nRun: sandbox --help");
    end);

    it("fits every line it lays out itself on the 51-column screen", function()
      -- A message (an error, lastError, fix, faults) is one sentence CC wraps at its words;
      -- every other line and prompt is the command's own layout and must not wrap.
      local MESSAGE = { "^lastError: ", "^fix: ", "^faults: ", "^The agent is " };
      local function check(what, lines, record)
        local all = {};
        for _, line in ipairs(lines) do all[#all + 1] = line; end
        for _, prompt in ipairs(record.prompts) do all[#all + 1] = prompt; end
        for _, line in ipairs(all) do
          local message = false;
          for _, pattern in ipairs(MESSAGE) do message = message or line:find(pattern) ~= nil; end
          if not message and #line > 51 then
            fail(what .. ": a line wider than the screen: " .. line);
          end
        end
      end
      local status = downStatus("waiting", "Could not connect");
      status.account, status.faults, status.lastFault = "alice", 1, "boom";
      local healthy = function() return true, { sandboxOk = true, opencodeOk = false, opencodeDetail = "x" }; end;
      local runs = {
        { "status", { "status" }, { status = status } },
        { "setup", { "setup" }, { typed = { "ws://10.0.0.9:4444" }, status = connectedStatus(), reply = healthy } },
        { "setup again", { "setup" }, {
          settings = { ["sandbox.url"] = "ws://192.168.100.200:4444/trapos/ws", ["sandbox.password"] = "x",
            ["sandbox.allow_files"] = "write", ["sandbox.allow_exec"] = true, ["sandbox.allow_screen"] = "control" },
          status = connectedStatus(), reply = healthy } },
        { "link", { "link" }, { gateway = linkGateway(), typed = { "y" } } },
        { "link with a key", { "link", KEY }, { gateway = linkGateway() } },
        { "link --help", { "link", "--help" }, {} },
        { "stop", { "stop" }, { status = { connectedStatus(), downStatus("stopped") } } },
        { "reconnect", { "reconnect" }, { status = { downStatus("connecting"), connectedStatus() } } },
        { "help", { "help" }, {} },
      };
      for _, case in ipairs(runs) do
        local ok, err, lines, record = run(case[2], case[3]);
        if not ok then
          fail(case[1] .. " failed: " .. tostring(err));
        end
        check(case[1], lines, record);
      end
    end);

    it("leaves tab completion to the daemon", function()
      local _, _, _, record = run({ "--version" }, {});
      expect(next(record.completions)):eq(nil);
    end);
  end);
end);
