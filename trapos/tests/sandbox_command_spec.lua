-- Specs for programs/sandbox.lua: its exact output in each daemon state. The program runs
-- for real (loadfile + its own environment); the daemon is played by a stubbed
-- os.queueEvent that answers status requests and sends like servers/sandbox.lua would, and
-- timers fire at once so no test waits real seconds.

local lib = require('/apis/libsandbox');

local PROGRAM = "/programs/sandbox.lua";
local URL = "ws://127.0.0.1:4444";
local FULL_URL = "ws://127.0.0.1:4444/trapos/ws";
-- Fake timer ids, far above the computer's own and never reused across cases: a stale
-- timer event left in the queue by one case must not fire another case's wait.
local nextTimer = 800000;

local MSG_NO_DAEMON = "The sandbox daemon is not running (is the trapos-sandbox package installed? reboot the computer)";

local function connectedStatus()
  return { url = FULL_URL, connected = true, state = "connected", traposId = "7:base" };
end

local function downStatus(state, lastError)
  return { url = FULL_URL, connected = false, state = state, traposId = "7:base", lastError = lastError };
end

-- Runs the program with args. opts.status: the daemon's status, a list of statuses given
-- in turn (the last repeats), or nil for no daemon. opts.reply(type, payload) returns the
-- gateway's ok, payload, error, or nothing to never answer. opts.settings: setting values
-- (sandbox.url defaults to URL). opts.noHttp hides the http API.
-- Returns ok, error message, printed lines, and a record of what the program asked for.
local function run(args, opts)
  opts = opts or {};
  local realQueue = os.queueEvent;
  local record = { sends = {}, reconnects = 0, timers = {}, statusRequests = 0 };
  local statuses = opts.status;
  if statuses ~= nil and statuses[1] == nil then
    statuses = { statuses };
  end

  local values = opts.settings or { ["sandbox.url"] = URL };
  stub(settings, "get", function(name, default)
    local value = values[name];
    if value == nil then
      return default;
    end
    return value;
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
      if statuses ~= nil then
        local status = statuses[math.min(record.statusRequests, #statuses)];
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
    else
      realQueue(name, ...);
    end
  end);

  -- read() answers opts.typed in turn; settings.set/save are recorded, not applied.
  local typed = opts.typed or {};
  record.prompts, record.reads, record.saved, record.values = {}, {}, 0, values;
  stub(settings, "set", function(name, value) values[name] = value; end);
  stub(settings, "save", function() record.saved = record.saved + 1; return true; end);

  local lines = {};
  local completions = {};
  local env = {
    write = function(text) record.prompts[#record.prompts + 1] = text; end,
    read = function(replace)
      record.reads[#record.reads + 1] = replace or false;
      return table.remove(typed, 1) or "";
    end,
    print = function(...)
      local parts = table.pack(...);
      for i = 1, parts.n do
        parts[i] = tostring(parts[i]);
      end
      lines[#lines + 1] = table.concat(parts, "\t", 1, parts.n);
    end,
    require = require,
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
      return _G.http or {};
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

local function expectSuccess(ok, err)
  if not ok then
    fail("the command failed: " .. tostring(err));
  end
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
      expect(#record.sends):eq(1);
      expect(record.sends[1].type):eq("probe_gateway");
      expect(record.sends[1].payload):same({});
    end);

    it("adds opencodeDetail only when opencode is down", function()
      local ok, err, lines = run({ "health" }, {
        status = connectedStatus(),
        reply = function()
          return true, { sandboxOk = true, opencodeOk = false, opencodeDetail = "opencode at http://127.0.0.1:4242: connection refused" };
        end,
      });
      expectSuccess(ok, err);
      expect(lines):same({
        "sandboxOk: true",
        "opencodeOk: false",
        "opencodeDetail: opencode at http://127.0.0.1:4242: connection refused",
      });
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

    it("gives up on a daemon that never finishes connecting", function()
      local ok, err = run({ "health" }, { status = downStatus("connecting") });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: still connecting to " .. FULL_URL);
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

    it("explains unauthorized", function()
      local ok, err = run({ "health" }, { status = downStatus("unauthorized", "unauthorized: wrong secret") });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: the gateway rejected sandbox.password (unauthorized). Fix it with: sandbox setup");
    end);

    it("explains Domain not permitted", function()
      local ok, err = run({ "health" }, { status = downStatus("waiting", "Domain not permitted") });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: Domain not permitted: the server's CC: Tweaked config denies 127.0.0.1; allow it in computercraft-server.toml [[http.rules]] (see the user guide)");
    end);

    it("turns a refused connection into its fix", function()
      local ok, err = run({ "health" }, { status = downStatus("waiting", "Could not connect") });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: nothing answers at 127.0.0.1:4444: start the gateway there, or fix the address or port (sandbox setup); the daemon retries every 5 s");
    end);

    it("passes an error it has no advice for on as it is", function()
      local ok, err = run({ "health" }, { status = downStatus("waiting", "hello failed: internal: boom") });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: hello failed: internal: boom");
    end);

    it("reports a timeout after 10 seconds", function()
      local ok, err, lines, record = run({ "health" }, { status = connectedStatus(), reply = function() end });
      expect(ok):eq(false);
      expect(err):eq("The gateway did not answer within 10 seconds");
      expect(lines):same({});
      expect(record.timers[#record.timers]):eq(10);
    end);

    it("reports a connection lost during the request", function()
      local ok, err = run({ "health" }, {
        status = connectedStatus(),
        reply = function()
          return false, nil, { code = "not_connected", message = "lost the connection: Connection closed" };
        end,
      });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: the gateway closed the connection (Connection closed): it stopped or restarted; the daemon retries every 5 s");
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

    it("keeps a password of digits that set stored as a number, as text", function()
      local ok, err, _, record = run({ "setup" }, {
        settings = { ["sandbox.url"] = URL, ["sandbox.password"] = 1234 },
        typed = { "", "" }, status = connectedStatus(), reply = healthy,
      });
      expectSuccess(ok, err);
      expect(record.values["sandbox.password"]):eq("1234");
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
        typed = { "", "", "", "", "", "no" }, status = connectedStatus(), reply = healthy,
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

    it("refuses an http:// URL with its fix before saving anything", function()
      local ok, err, _, record = run({ "setup", "http://10.0.0.9:4444" }, { settings = {} });
      expect(ok):eq(false);
      expect(err):eq("sandbox.url must start with ws:// (for TLS: wss:// through a reverse proxy that terminates TLS), not http://. Fix it with: sandbox setup");
      expect(record.saved):eq(0);
    end);

    it("prints the error with its fix when the gateway does not answer", function()
      local ok, err = run({ "setup", "ws://10.0.0.9:4444" }, {
        settings = {}, typed = { "pw" }, status = downStatus("waiting", "Could not connect"),
      });
      expect(ok):eq(false);
      expect(err):str_match("^Not connected to the gateway: nothing answers at 127.0.0.1:4444");
    end);

    it("refuses a second argument", function()
      local ok, err = run({ "setup", "ws://a:1", "extra" }, {});
      expect(ok):eq(false);
      expect(err):eq("sandbox setup: unexpected argument 'extra'. Run: sandbox --help");
    end);
  end);

  describe("status", function()
    it("shows a connected daemon", function()
      local ok, err, lines = run({ "status" }, { status = connectedStatus() });
      expectSuccess(ok, err);
      expect(lines):same({
        "url: " .. FULL_URL,
        "connected: true",
        "state: connected",
        "traposId: 7:base",
        "lastError: none",
        "files: none",
        "exec: false",
        "ai confirm: true",
        "screen: none",
      });
    end);

    it("shows the last error", function()
      local ok, err, lines = run({ "status" }, { status = downStatus("waiting", "Connection closed") });
      expectSuccess(ok, err);
      expect(lines):same({
        "url: " .. FULL_URL,
        "connected: false",
        "state: waiting",
        "traposId: 7:base",
        "lastError: Connection closed",
        "fix: the gateway closed the connection (Connection closed): it stopped or restarted; the daemon retries every 5 s",
        "files: none",
        "exec: false",
        "ai confirm: true",
        "screen: none",
      });
    end);

    it("shows the daemon's faults and where they are logged", function()
      local status = connectedStatus();
      status.faults, status.lastFault = 2, "sandbox daemon: timer handler failed: boom";
      local ok, err, lines = run({ "status" }, { status = status });
      expectSuccess(ok, err);
      expect(lines):same({
        "url: " .. FULL_URL,
        "connected: true",
        "state: connected",
        "traposId: 7:base",
        "lastError: none",
        "faults: 2 (see /.sandbox.log), the last: sandbox daemon: timer handler failed: boom",
        "files: none",
        "exec: false",
        "ai confirm: true",
        "screen: none",
      });
    end);

    it("shows a dormant daemon", function()
      local ok, err, lines = run({ "status" }, {
        settings = {},
        status = { connected = false, state = "dormant", traposId = "7:" },
      });
      expectSuccess(ok, err);
      expect(lines):same({ "url: not set", "connected: false", "state: dormant", "traposId: 7:", "lastError: none",
        "files: none", "exec: false", "ai confirm: true", "screen: none" });
    end);

    it("shows what the owner allows", function()
      local ok, err, lines = run({ "status" }, {
        settings = { ["sandbox.allow_files"] = "write", ["sandbox.allow_exec"] = true, ["sandbox.ai_confirm"] = false,
          ["sandbox.allow_screen"] = "control" },
        status = { connected = false, state = "dormant", traposId = "7:" },
      });
      expectSuccess(ok, err);
      expect(lines[6]):eq("files: write");
      expect(lines[7]):eq("exec: true");
      expect(lines[8]):eq("ai confirm: false");
      expect(lines[9]):eq("screen: control");
    end);

    it("fails when the daemon is not running", function()
      local ok, err = run({ "status" }, {});
      expect(ok):eq(false);
      expect(err):eq(MSG_NO_DAEMON);
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
        status = { connectedStatus(), downStatus("unauthorized", "unauthorized: no") },
      });
      expect(record.reconnects):eq(1);
      expect(ok):eq(false);
      expect(err):str_match("^Not connected to the gateway: the gateway rejected sandbox.password");
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
  end);

  describe("arguments", function()
    it("prints usage for --help, -h, help and no argument", function()
      for _, args in ipairs({ { "--help" }, { "-h" }, { "help" }, {} }) do
        local ok, err, lines = run(args, {});
        expectSuccess(ok, err);
        expect(lines[1]):eq("Usage: sandbox <command>");
        expect(#lines > 3):eq(true);
        for _, line in ipairs(lines) do
          if #line > 51 then
            fail("usage line wider than the screen: " .. line);
          end
        end
      end
    end);

    it("prints the version", function()
      local ok, err, lines = run({ "--version" }, {});
      expectSuccess(ok, err);
      -- tests/packages checks that this is the version packages/trapos-sandbox/ccpm.json says.
      expect(lines):same({ "sandbox " .. require("/apis/libsandboxversion").VERSION });
    end);

    it("rejects an unknown command in one line", function()
      local ok, err, lines = run({ "frobnicate" }, {});
      expect(ok):eq(false);
      expect(err):eq("sandbox: unknown command 'frobnicate'. Run: sandbox --help");
      expect(lines):same({});
    end);

    it("rejects extra arguments", function()
      local ok, err = run({ "status", "now" }, { status = connectedStatus() });
      expect(ok):eq(false);
      expect(err):eq("sandbox status: unexpected argument 'now'. Run: sandbox --help");
    end);

    it("leaves tab completion to the daemon", function()
      local _, _, _, record = run({ "--version" }, {});
      expect(next(record.completions)):eq(nil);
    end);
  end);
end);
