-- Specs for servers/sandbox.lua: the thin loop that feeds events to libsandbox.newDaemon.
-- The file runs for real with a scripted os.pullEventRaw and a recording os.queueEvent.

local lib = require('/apis/libsandbox');
local speckit = require('/tests/speckit');

local SERVER = "/servers/sandbox.lua";

-- The end of a scripted run: the server itself never ends (the daemon runs until shutdown).
local END_OF_SCRIPT = "end of the scripted events";

-- Runs the server over the given events (each a packed list), then stops it. Returns what it
-- queued, the completion functions it registered, what it printed in red, and whether it
-- failed before the script's end.
-- opts: settings (values), get (replaces settings.get), http.
local function runServer(events, opts)
  opts = opts or {};
  local queued, completions, errors = {}, {}, {};
  local nextEvent = 0;
  local fakeOs = setmetatable({
    pullEventRaw = function()
      nextEvent = nextEvent + 1;
      local event = events[nextEvent];
      if event == nil then
        error(END_OF_SCRIPT, 0);
      end
      return table.unpack(event, 1, event.n or #event);
    end,
    queueEvent = function(...) queued[#queued + 1] = table.pack(...); end,
    startTimer = function() return 1; end,
    cancelTimer = function() end,
  }, { __index = os });
  local fakeSettings = speckit.settings(opts.settings or {});
  if opts.get then
    fakeSettings.get = opts.get;
  end
  local env = setmetatable({
    os = fakeOs,
    settings = fakeSettings,
    require = require,
    printError = function(message) errors[#errors + 1] = message; end,
    shell = { setCompletionFunction = function(path, fn) completions[path] = fn; end },
  }, { __index = function(_, key)
    if key == "http" then
      return opts.http;
    end
    return _G[key];
  end });
  local server, loadErr = loadfile(SERVER, nil, env);
  if server == nil then
    fail("cannot load " .. SERVER .. ": " .. tostring(loadErr));
  end
  -- The server never ends, so nothing stops its daemon, whose screen mirror wraps the native
  -- terminal's methods and peripheral.call as on a computer until it shuts down: they are put
  -- back after the run, else every later case drew through each run's mirror.
  local native, call = term.native(), peripheral.call;
  local nativeMethods = {};
  for name, method in pairs(native) do
    nativeMethods[name] = method;
  end
  local ok, err = pcall(server);
  for name, method in pairs(nativeMethods) do
    native[name] = method;
  end
  peripheral.call = call; -- luacheck: ignore 122
  if not ok and err == END_OF_SCRIPT then
    ok, err = true, nil;
  end
  return { ok = ok, err = err, queued = queued, completions = completions, errors = errors, pulled = nextEvent };
end

describe("sandbox server", function()
  it("answers status requests and keeps running on the player's terminate", function()
    local result = runServer({
      { "trapos_sandbox_status_request", "r-1" },
      { "trapos_sandbox_send", "m-1", "probe_gateway", {} },
      { "terminate" },
      { "trapos_sandbox_status_request", "r-2" },
    });
    if not result.ok then
      fail(tostring(result.err));
    end
    expect(result.pulled):eq(5);
    expect(result.queued[3][2]):eq("r-2");
    expect(result.queued[3][3].state):eq("disabled");
    expect(result.queued[1][1]):eq(lib.EVENT_STATUS);
    expect(result.queued[1][2]):eq("r-1");
    expect(result.queued[1][3].state):eq("disabled");
    expect(result.queued[2][1]):eq(lib.EVENT_REPLY);
    expect(result.queued[2][5].code):eq("not_connected");
    expect(result.errors):same({});
  end);

  it("connects at boot when sandbox.url is set", function()
    local urls = {};
    local result = runServer({ { "terminate" } }, {
      settings = { ["sandbox.url"] = "ws://gw:4444" },
      http = { websocketAsync = function(url) urls[#urls + 1] = url; return true; end },
    });
    expect(result.ok):eq(true);
    expect(urls):same({ "ws://gw:4444/trapos/ws" });
  end);

  it("logs a failing handler to its log file and prints nothing", function()
    local LOG = require('/apis/libsandboxlog').LOG_PATH;
    if fs.exists(LOG) then
      fs.delete(LOG);
    end
    local urlReads = 0;
    local result = runServer({ { "setting_changed", "sandbox.url" }, { "terminate" } }, {
      get = function(name, default)
        if name ~= "sandbox.url" then
          return default;
        end
        urlReads = urlReads + 1;
        if urlReads > 1 then
          error("settings exploded", 0); -- at the setting_changed, not at start
        end
        return "ws://gw:4444";
      end,
      http = { websocketAsync = function() return true; end },
    });
    expect(result.ok):eq(true);
    expect(result.errors):same({});
    local handle = fs.open(LOG, "r");
    local text = handle.readAll();
    handle.close();
    fs.delete(LOG);
    expect(text):str_match("^%d+%-%d+%-%d+T%d+:%d+:%d+Z sandbox daemon: setting_changed handler failed: settings exploded\n$");
  end);

  it("registers tab completion for the command", function()
    local result = runServer({ { "terminate" } });
    local complete = result.completions["programs/sandbox.lua"];
    expect(complete):type("function");
    expect(complete(nil, 1, "re", {})):same({ "connect" });
  end);
end);
