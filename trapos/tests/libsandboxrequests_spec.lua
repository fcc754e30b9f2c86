-- Specs for /apis/libsandboxrequests: which gateway requests the owner's settings allow,
-- the always-answered ones, and types served by programs through libsandbox.serve.

local lib = require('/apis/libsandboxrequests');
local libsandbox = require('/apis/libsandbox');
local newSettings = require('/tests/speckit').settings;

local function newRequests(values)
  return lib.newRequests({
    settings = newSettings(values or {}), os = os, fs = fs, term = term, env = _G,
    shell = { run = function() return true; end },
    peripheral = peripheral, pocket = pocket, host = _HOST,
    traposId = function() return "7:spec"; end,
  });
end

-- Serves one request and feeds events until it is answered. Returns {ok, payload, err}.
local function ask(requests, msgType, payload)
  local answer;
  requests.serve(msgType, payload or {}, function(ok, result, err) answer = { ok = ok, payload = result, err = err }; end);
  while answer == nil do
    local event = table.pack(os.pullEventRaw());
    requests.onEvent(table.unpack(event, 1, event.n));
  end
  return answer;
end

local FILE_READ = { "fs.list", "fs.read" };
local FILE_WRITE = { "fs.write", "fs.delete", "fs.move", "fs.makeDir" };
local EXEC = { "lua.exec", "shell.run" };

local function expectForbidden(requests, msgType, setting)
  local answer = ask(requests, msgType, { path = "/x", from = "/x", to = "/y", data = "", code = "1", command = "x" });
  expect(answer.ok):eq(false);
  expect(answer.err.code):eq("forbidden");
  expect(answer.err.message):str_match("set " .. setting:gsub("%.", "%%.") .. "$");
end

local function expectServed(requests, msgType)
  local answer = ask(requests, msgType, { path = "/", code = "1", command = "x" });
  if answer.err ~= nil then
    expect(answer.err.code):ne("forbidden");
  end
end

describe("libsandboxrequests", function()
  describe("permissions", function()
    it("forbids files and exec by default, naming the setting", function()
      local requests = newRequests();
      for _, msgType in ipairs(FILE_READ) do expectForbidden(requests, msgType, "sandbox.allow_files read"); end
      for _, msgType in ipairs(FILE_WRITE) do expectForbidden(requests, msgType, "sandbox.allow_files write"); end
      for _, msgType in ipairs(EXEC) do expectForbidden(requests, msgType, "sandbox.allow_exec true"); end
    end);

    it("always answers ping and computer.info", function()
      local requests = newRequests();
      expect(ask(requests, "ping").payload):same({ traposId = "7:spec" });
      local info = ask(requests, "computer.info").payload;
      expect(info.traposId):eq("7:spec");
      expect(info.id):eq(os.getComputerID());
      expect(info.host):eq(_HOST);
      expect(info.clientVersion):eq(libsandbox.VERSION);
      expect(info.uptime):type("number");
      expect(info.day):type("number");
      expect(info.time):type("number");
      expect(info.colour):eq(term.isColour());
      expect(info.freeSpace):eq(fs.getFreeSpace("/"));
      expect(textutils.serializeJSON(info.peripherals)):eq("[]");
      -- What a caller plans by: the kind of computer, its screen, what the owner allows.
      expect(info.pocket):eq(pocket ~= nil);
      local width, height = term.native().getSize();
      expect({ info.screenWidth, info.screenHeight }):same({ width, height });
      expect(info.allowed):same({ files = "none", exec = false, screen = "none" });
    end);

    it("measures computer.info's freeSpace on the drive of the path given, and says so", function()
      -- A disk in a drive (/disk) has its own room: a host's write there that ran out of
      -- space was told the root drive's.
      local asked = {};
      local drives = setmetatable({
        getFreeSpace = function(path)
          asked[#asked + 1] = path;
          if path:find("^/?disk/") or path:find("^/?disk$") then
            return 1234;
          end
          return 999999;
        end,
      }, { __index = fs });
      local requests = lib.newRequests({
        settings = newSettings({}), os = os, fs = drives, term = term, env = _G,
        traposId = function() return "7:spec"; end,
      });
      local info = ask(requests, "computer.info", { path = "/disk/big.txt" }).payload;
      expect({ info.freeSpace, info.freeSpacePath }):same({ 1234, "/disk/big.txt" });
      info = ask(requests, "computer.info", { path = "/notes/x.txt" }).payload;
      expect({ info.freeSpace, info.freeSpacePath }):same({ 999999, "/notes/x.txt" });
      -- without a path: the root drive's, and no freeSpacePath (as before 0.5.23)
      info = ask(requests, "computer.info").payload;
      expect({ info.freeSpace, info.freeSpacePath }):same({ 999999, nil });
      expect(asked):same({ "/disk/big.txt", "/notes/x.txt", "/" });
      local answer = ask(requests, "computer.info", { path = 5 });
      expect({ answer.ok, answer.err }):same({ false,
        { code = "bad_payload", message = "payload.path must be a string when given, got number" } });
    end);

    it("says in computer.info what the owner allows now, as the refusals read it", function()
      local values = { ["sandbox.allow_files"] = "read", ["sandbox.allow_exec"] = true, ["sandbox.allow_screen"] = "view" };
      local requests = newRequests(values);
      expect(ask(requests, "computer.info").payload.allowed):same({ files = "read", exec = true, screen = "view" });
      -- Read at each call: the owner's set shows in the next answer.
      values["sandbox.allow_files"], values["sandbox.allow_screen"] = "write", "control";
      expect(ask(requests, "computer.info").payload.allowed):same({ files = "write", exec = true, screen = "control" });
      -- A hand-edited value is what the check makes of it: none, or false.
      values["sandbox.allow_files"], values["sandbox.allow_exec"], values["sandbox.allow_screen"] = "Write", "true", "everything";
      expect(ask(requests, "computer.info").payload.allowed):same({ files = "none", exec = false, screen = "none" });
      expectForbidden(requests, "fs.list", "sandbox.allow_files read");
      expectForbidden(requests, "lua.exec", "sandbox.allow_exec true");
      expectForbidden(requests, "screen.read", "sandbox.allow_screen view");
    end);

    it("forbids the screen by default; view reads and watches it, control also types", function()
      local values = {};
      local requests = newRequests(values);
      for _, msgType in ipairs({ "screen.read", "screen.watch" }) do
        expectForbidden(requests, msgType, "sandbox.allow_screen view");
      end
      expectForbidden(requests, "screen.input", "sandbox.allow_screen control");
      values["sandbox.allow_screen"] = "view";
      local screen = ask(requests, "screen.read").payload;
      expect(screen.width):eq(term.native().getSize());
      expect(#screen.rows):eq(select(2, term.native().getSize()));
      expect(ask(requests, "screen.watch").ok):eq(true);
      expect(ask(requests, "screen.unwatch", { watchId = "gone" }).ok):eq(true);
      expectForbidden(requests, "screen.input", "sandbox.allow_screen control");
      values["sandbox.allow_screen"] = "control";
      local answer = ask(requests, "screen.input", { events = { { type = "key_up", name = "f24" } } });
      expect(answer.payload):same({ queued = 1 });
      values["sandbox.allow_screen"] = "everything";
      expectForbidden(requests, "screen.read", "sandbox.allow_screen view");
      requests.stop();
    end);

    it("lets read allow reading only", function()
      local requests = newRequests({ ["sandbox.allow_files"] = "read" });
      for _, msgType in ipairs(FILE_READ) do expectServed(requests, msgType); end
      for _, msgType in ipairs(FILE_WRITE) do expectForbidden(requests, msgType, "sandbox.allow_files write"); end
    end);

    it("lets write allow reading and writing", function()
      local requests = newRequests({ ["sandbox.allow_files"] = "write" });
      for _, msgType in ipairs(FILE_READ) do expectServed(requests, msgType); end
      expect(ask(requests, "fs.makeDir", { path = "/spec-requests" }).ok):eq(true);
      expect(ask(requests, "fs.delete", { path = "/spec-requests" }).ok):eq(true);
    end);

    it("keeps the settings, the startup files and the sandbox's own files for exec", function()
      local values = { ["sandbox.allow_files"] = "write" };
      local requests = newRequests(values);
      local before = fs.exists("/.settings");
      for _, call in ipairs({
        { "fs.write", { path = "/.settings", data = '{ ["sandbox.allow_exec"] = true }' } },
        { "fs.write", { path = "/Startup/evil.lua", data = "print('boot')" } },
        { "fs.makeDir", { path = "/startup" } },
        { "fs.delete", { path = "/servers/sandbox.lua" } },
        { "fs.move", { from = "/spec-evil.lua", to = "/startup.lua" } },
      }) do
        local answer = ask(requests, call[1], call[2]);
        expect(answer.ok):eq(false);
        expect(answer.err.code):eq("forbidden");
        expect(answer.err.message):str_match("needs sandbox%.allow_exec: ");
        expect(answer.err.message):str_match("set sandbox%.allow_exec true$");
      end
      expect(fs.exists("/.settings")):eq(before);
      expect(fs.exists("/startup")):eq(false);
      -- Exec already grants all of it.
      values["sandbox.allow_exec"] = true;
      expect(ask(requests, "fs.makeDir", { path = "/startup" }).ok):eq(true);
      expect(ask(requests, "fs.delete", { path = "/startup" }).ok):eq(true);
    end);

    it("reads an unknown value as none, and names it", function()
      local requests = newRequests({ ["sandbox.allow_files"] = "everything" });
      expectForbidden(requests, "fs.read", "sandbox.allow_files read");
      expect(ask(requests, "fs.read", { path = "/x" }).err.message):eq(
        'fs.read needs sandbox.allow_files read (it is none, as "everything" is not none/read/write); '
        .. "the owner can allow it with: set sandbox.allow_files read");
      expect(ask(newRequests({ ["sandbox.allow_screen"] = "View" }), "screen.read", {}).err.message):eq(
        'screen.read needs sandbox.allow_screen view (it is none, as "View" is not none/view/control); '
        .. "the owner can allow it with: set sandbox.allow_screen view");
      -- not set is none, with nothing to name
      expect(ask(newRequests({}), "fs.read", { path = "/x" }).err.message):str_match("%(it is none%)");
    end);

    it("allows exec only for the boolean true", function()
      expectForbidden(newRequests({ ["sandbox.allow_exec"] = "true" }), "lua.exec", "sandbox.allow_exec true");
      local answer = ask(newRequests({ ["sandbox.allow_exec"] = true }), "lua.exec", { code = "6*7" });
      expect(answer.ok):eq(true);
      expect(answer.payload.returns):same({ 42 });
    end);

    it("reads the settings on every request", function()
      local values = {};
      local requests = newRequests(values);
      expectForbidden(requests, "lua.exec", "sandbox.allow_exec true");
      values["sandbox.allow_exec"] = true;
      expect(ask(requests, "lua.exec", { code = "1" }).ok):eq(true);
    end);

    it("stops a running job once the owner withdraws exec, naming the setting as it is now", function()
      local values = { ["sandbox.allow_exec"] = true };
      local requests = newRequests(values);
      local answer;
      requests.serve("lua.exec", { code = "os.pullEvent('spec_never')", timeoutMs = 60000 },
        function(ok, result, err) answer = { ok = ok, payload = result, err = err }; end);
      requests.onEvent("spec_other");
      expect(answer):eq(nil);
      values["sandbox.allow_exec"] = "true"; -- a hand-edited string: not the boolean true
      requests.onEvent("setting_changed", "sandbox.allow_exec", "true", true);
      expect(answer):same({ ok = false, err = { code = "forbidden", message =
        'lua.exec was stopped while it ran: the owner withdrew sandbox.allow_exec (it is now false, as "true" is not the boolean true);'
        .. " the owner can allow it again with: set sandbox.allow_exec true" } });
    end);
  end);

  describe("refusal", function()
    it("is the one check, for the agent's changes too: the settings' reason, or nil", function()
      local values = { ["sandbox.allow_files"] = "read", ["sandbox.allow_exec"] = false };
      local settingsApi = newSettings(values);
      expect(lib.refusal(settingsApi, fs, "fs.write", { path = "/door.lua" })):eq(
        "fs.write needs sandbox.allow_files write (it is read); the owner can allow it with: set sandbox.allow_files write");
      expect(lib.refusal(settingsApi, fs, "fs.read", { path = "/door.lua" })):eq(nil);
      expect(lib.refusal(settingsApi, fs, "shell.run", {})):str_match("set sandbox.allow_exec true$");
      values["sandbox.allow_files"] = "write";
      expect(lib.refusal(settingsApi, fs, "fs.write", { path = "/door.lua" })):eq(nil);
      expect(lib.refusal(settingsApi, fs, "fs.write", { path = "/startup.lua" })):str_match("needs sandbox.allow_exec");
    end);

    it("words an exec refusal as the files and screen refusals: the setting needed, what it is, the line", function()
      local values = { ["sandbox.allow_exec"] = false };
      local settingsApi = newSettings(values);
      expect(lib.refusal(settingsApi, fs, "lua.exec", { code = "1" })):eq(
        "lua.exec needs sandbox.allow_exec true (it is false); the owner can allow it with: set sandbox.allow_exec true");
      expect(lib.refusal(settingsApi, fs, "shell.run", { command = "ls" })):eq(
        "shell.run needs sandbox.allow_exec true (it is false); the owner can allow it with: set sandbox.allow_exec true");
      values["sandbox.allow_files"] = "read";
      expect(lib.refusal(settingsApi, fs, "fs.write", { path = "/door.lua" })):eq(
        "fs.write needs sandbox.allow_files write (it is read); the owner can allow it with: set sandbox.allow_files write");
    end);

    it("names a hand-edited exec setting that is not the boolean true, as the files and screen refusals do", function()
      local settingsApi = newSettings({ ["sandbox.allow_exec"] = "true" });
      expect(lib.refusal(settingsApi, fs, "lua.exec", { code = "1" })):eq(
        'lua.exec needs sandbox.allow_exec true (it is false, as "true" is not the boolean true);'
        .. " the owner can allow it with: set sandbox.allow_exec true");
    end);
  end);

  describe("unknown types", function()
    it("answers unknown_type", function()
      local answer = ask(newRequests(), "door.open");
      expect(answer.ok):eq(false);
      expect(answer.err.code):eq("unknown_type");
    end);
  end);

  describe("a hostile gateway's payloads", function()
    -- Every field a built-in type reads, in every wrong type (and sizes and depths no host
    -- sends), with everything allowed: each request is answered, ok or with an error of the
    -- protocol's shape, never raised (a Lua error's position in the answer, or a daemon that
    -- logs a failing handler) and never internal.
    local fields = { "path", "from", "to", "data", "offset", "length", "append", "overwrite", "code", "command",
      "args", "timeoutMs", "events", "watchId", "stamp" };
    local values = { 1, -1, 0.5, 1e308, math.huge, -math.huge, true, false, {}, { 1, 2 }, { a = {} },
      { { { { {} } } } }, { n = -1 }, "", "\0", ("x"):rep(70000) };
    local types = { "fs.list", "fs.read", "fs.write", "fs.delete", "fs.move", "fs.makeDir", "lua.exec", "shell.run",
      "screen.read", "screen.input", "screen.watch", "screen.unwatch", "ping", "computer.info" };
    local allowed = { ["sandbox.allow_files"] = "write", ["sandbox.allow_exec"] = true, ["sandbox.allow_screen"] = "control" };

    -- Feeds requests the next event, after queueing one so that there is one: a yield, which
    -- ends the computer's resume. Returns the error onEvent raised, if it did.
    local function feedEvent(requests)
      os.queueEvent("spec_tick");
      local event = table.pack(os.pullEventRaw());
      local fed, why = pcall(requests.onEvent, table.unpack(event, 1, event.n));
      if not fed then
        return why;
      end
    end

    -- A case a type and a resume a field: CC's limit on a resume is wall time, and the 3360
    -- requests in one resume took 11 s of TestLuaSpecs' 30 under -race on a loaded machine.
    for _, msgType in ipairs(types) do
      it("answers every field of " .. msgType .. " in a wrong type, raising nothing", function()
        local problems = {};
        local requests = newRequests(allowed);
        requests.start();
        for _, name in ipairs(fields) do
          for i, value in ipairs(values) do
            local payload = { path = "/hostile/x", from = "/hostile/a", to = "/hostile/b", data = "d", code = "return 1" };
            payload[name] = value;
            local answer, raised;
            local served, err = pcall(requests.serve, msgType, payload, function(ok, result, why)
              answer = { ok = ok, payload = result, err = why };
            end);
            if not served then
              raised = err;
            end
            -- A lua.exec chunk or a watch answers after some events; none of these waits long.
            for _ = 1, 20 do
              if answer ~= nil or raised ~= nil then
                break;
              end
              raised = feedEvent(requests);
            end
            local case = msgType .. " with " .. name .. " = value " .. i .. ": ";
            if raised ~= nil then
              problems[#problems + 1] = case .. "raised " .. tostring(raised);
            elseif answer == nil then
              problems[#problems + 1] = case .. "no answer";
            elseif answer.ok ~= true and (type(answer.err) ~= "table" or type(answer.err.code) ~= "string"
                or type(answer.err.message) ~= "string") then
              problems[#problems + 1] = case .. "an error of no code and message";
            elseif answer.ok ~= true and (answer.err.code == "internal" or answer.err.message:find("%.lua:%d+")) then
              problems[#problems + 1] = case .. answer.err.code .. ": " .. answer.err.message;
            end
          end
          local raised = feedEvent(requests);
          if raised ~= nil then
            problems[#problems + 1] = msgType .. " after the values of " .. name .. ": raised " .. tostring(raised);
          end
        end
        requests.stop();
        expect(problems):same({});
      end);
    end
  end);

  describe("program-served types", function()
    -- Runs serve(handlers) beside a loop feeding requests; drive(requests) runs in that loop
    -- once the program has offered its types.
    local function withProgram(requests, handlers, drive)
      parallel.waitForAny(function()
        libsandbox.serve(handlers);
      end, function()
        while true do
          local event = table.pack(os.pullEventRaw());
          requests.onEvent(table.unpack(event, 1, event.n));
          if event[1] == libsandbox.EVENT_SERVE_OFFER then
            break;
          end
        end
        drive();
      end);
    end

    -- Feeds events until done() says to stop; counts the offers the program made meanwhile.
    local function feedUntil(requests, done)
      local offers = 0;
      while not done(offers) do
        local event = table.pack(os.pullEventRaw());
        requests.onEvent(table.unpack(event, 1, event.n));
        if event[1] == libsandbox.EVENT_SERVE_OFFER then
          offers = offers + 1;
        end
      end
    end

    it("routes a type to the program serving it, then answers unknown_type once it ends", function()
      local requests = newRequests();
      withProgram(requests, {
        ["door.open"] = function(payload) return { opened = payload.door }; end,
        ["door.fail"] = function() error("jammed", 0); end,
        ["door.refuse"] = function() return nil, { code = "forbidden", message = "locked" }; end,
        ["door.say"] = function() return nil, "no such door"; end,
        ["door.text"] = function() return "opened"; end,
        ["door.jam"] = function() return false, "door jammed"; end,
        ["door.raiseTable"] = function() error({ message = "jammed hard" }); end,
        ["door.raiseOther"] = function() error({ code = "jam" }); end,
      }, function()
        local answer = ask(requests, "door.open", { door = "north" });
        expect(answer.ok):eq(true);
        expect(answer.payload):same({ opened = "north" });
        answer = ask(requests, "door.fail");
        expect(answer.err):same({ code = "internal", message = "jammed" });
        answer = ask(requests, "door.refuse");
        expect(answer.err):same({ code = "forbidden", message = "locked" });
        answer = ask(requests, "door.say");
        expect(answer.err):same({ code = "internal", message = "no such door" });
        -- false, message: Lua's other way to refuse.
        answer = ask(requests, "door.jam");
        expect(answer.err):same({ code = "internal", message = "door jammed" });
        -- A raised table: its message, else what to raise instead (never "table: 5f2a1c").
        answer = ask(requests, "door.raiseTable");
        expect(answer.err):same({ code = "internal", message = "jammed hard" });
        answer = ask(requests, "door.raiseOther");
        expect(answer.err):same({ code = "internal", message = "the handler of door.raiseOther raised a table,"
          .. " not a message: raise error(\"what failed\") or return nil, {code, message}" });
        answer = ask(requests, "door.text");
        expect(answer.err):same({ code = "internal",
          message = "the handler of door.text returned a string, not a table (the answer's payload) or nil and an error" });
      end);
      -- The program has ended without a word: its lease runs out. The router sweeps every lease
      -- and ends a program not seen since the sweep before: the second sweep after its last
      -- offer, which came before started, at most two leases after it. On fakecraft test's
      -- virtual clock no time passes but the timers', so that is exact: counted in ticks
      -- (os.clock's 0.05 s steps), against the rounding of their sum.
      local lease = require('/apis/libsandboxserve').SERVE_LEASE;
      local started = os.clock();
      local answer;
      repeat
        answer = ask(requests, "door.open", {});
        if answer.ok then
          sleep(0.1);
        end
      until not answer.ok
      expect(answer.err.code):eq("unknown_type");
      local ticks = math.floor((os.clock() - started) / 0.05 + 0.5);
      expect(ticks <= 2 * lease / 0.05):eq(true);
    end);

    -- Stands in for os.shutdown or os.reboot (the real ones would stop this computer): records
    -- the call in calls, with what noted() says then, and never returns, as CC's bios makes
    -- them (it yields until the computer stops).
    local function neverReturns(calls, name, noted)
      return function()
        calls[#calls + 1] = { name, noted() };
        while true do coroutine.yield(); end
      end;
    end

    it("answers a handler that turns the computer off before the computer goes", function()
      -- Each program's serving stops at its held call, as the computer does: one program a call.
      local calls = {};
      local answers = {};
      local shutdown, reboot = os.shutdown, os.reboot;
      local function answered() return #answers; end
      rawset(os, "shutdown", neverReturns(calls, "shutdown", answered));
      rawset(os, "reboot", neverReturns(calls, "reboot", answered));
      local ok, err = pcall(function()
        for _, case in ipairs({
          { type = "door.reboot", handler = function() os.reboot(); return { rebooting = true }; end },
          { type = "door.halt", handler = function() os.shutdown(); sleep(10); return { never = true }; end },
        }) do
          local requests = newRequests();
          withProgram(requests, { [case.type] = case.handler }, function()
            local before = #calls;
            answers[#answers + 1] = ask(requests, case.type);
            -- The held call comes at the next tick, after the answer.
            while #calls == before do
              local event = table.pack(os.pullEventRaw());
              requests.onEvent(table.unpack(event, 1, event.n));
            end
          end);
        end
      end);
      rawset(os, "shutdown", shutdown);
      rawset(os, "reboot", reboot);
      assert(ok, err);
      -- A handler's call is held, so it returns there: one that returns after it answers.
      expect(answers[1]):same({ ok = true, payload = { rebooting = true } });
      expect(answers[2]):same({ ok = false, err = { code = "internal",
        message = "the handler of door.halt called os.shutdown() before it returned: the computer stopped it there" } });
      -- Each turned the computer off only once its answer was read.
      expect(calls):same({ { "reboot", 1 }, { "shutdown", 2 } });
    end);

    it("still turns the computer off when the program is terminated before the held call", function()
      local calls = {};
      local reboot = os.reboot;
      rawset(os, "reboot", neverReturns(calls, "reboot", function() return nil; end));
      local ok, err = pcall(function()
        local requests = newRequests();
        withProgram(requests, {
          ["door.reboot"] = function() os.reboot(); return { rebooting = true }; end,
        }, function()
          expect(ask(requests, "door.reboot")):same({ ok = true, payload = { rebooting = true } });
          -- Ctrl-T held down: the terminate comes before the tick the call was held for.
          os.queueEvent("terminate");
          while #calls == 0 do
            local event = table.pack(os.pullEventRaw());
            requests.onEvent(table.unpack(event, 1, event.n));
          end
        end);
      end);
      rawset(os, "reboot", reboot);
      -- The call is made on the terminate, and the computer stops there: no Terminated follows.
      assert(ok, err);
      expect(calls):same({ { "reboot" } });
    end);

    it("answers a request in flight when its program ends", function()
      local requests = newRequests();
      local answer;
      local taken = false;
      withProgram(requests, { ["door.slow"] = function() taken = true; sleep(60); return {}; end }, function()
        requests.serve("door.slow", {}, function(ok, _, err) answer = { ok = ok, err = err }; end);
        sleep(0.2); -- the program takes the request and hangs in it
      end);
      expect(taken):eq(true);
      while answer == nil do
        local event = table.pack(os.pullEventRaw());
        requests.onEvent(table.unpack(event, 1, event.n));
      end
      expect(answer.ok):eq(false);
      expect(answer.err.code):eq("unknown_type");
    end);

    it("serves the handlers as they were when serve was called, whatever the program changes", function()
      local requests = newRequests();
      local handlers = {};
      handlers["door.open"] = function() return { opened = true }; end;
      handlers["door.lock"] = function()
        handlers["door.open"] = nil; -- still offered: it must still be answered
        handlers["door.bell"] = function() return {}; end; -- never offered
        return { locked = true };
      end;
      withProgram(requests, handlers, function()
        expect(ask(requests, "door.lock").payload):same({ locked = true });
        expect(ask(requests, "door.open").payload):same({ opened = true });
        expect(ask(requests, "door.bell").err.code):eq("unknown_type");
      end);
    end);

    it("answers unknown_type for a program that ended while the daemon was stopped", function()
      local requests = newRequests();
      withProgram(requests, { ["door.open"] = function() return { opened = true }; end }, function()
        requests.stop(); -- sandbox stop: the daemon hears no event until it runs again
      end);
      -- The program has ended (without a word, while nobody listened); the daemon runs again.
      local answer;
      requests.serve("door.open", {}, function(ok, _, err) answer = { ok = ok, err = err }; end);
      -- The answer comes within a lease.
      feedUntil(requests, function() return answer ~= nil; end);
      expect(answer):same({ ok = false, err = { code = "unknown_type",
        message = "door.open is no longer served: the program serving it has ended" } });
    end);

    it("takes the next request while a handler waits, and keeps its lease meanwhile", function()
      local requests = newRequests();
      local lease = require('/apis/libsandboxserve').SERVE_LEASE;
      local answers = {};
      withProgram(requests, {
        -- Longer than two leases: a program that stopped offering meanwhile would be ended.
        ["door.open"] = function(payload) sleep(3 * lease); return { door = payload.door }; end,
      }, function()
        for _, door in ipairs({ "north", "south" }) do
          requests.serve("door.open", { door = door }, function(ok, payload, err)
            answers[door] = { ok = ok, payload = payload, err = err };
          end);
        end
        -- A guard against a hang, not a clock: both answers come long before it.
        local guard = os.startTimer(20 * lease);
        while answers.north == nil or answers.south == nil do
          local event = table.pack(os.pullEventRaw());
          if event[1] == "timer" and event[2] == guard then
            break;
          end
          requests.onEvent(table.unpack(event, 1, event.n));
        end
      end);
      expect(answers):same({
        north = { ok = true, payload = { door = "north" } },
        south = { ok = true, payload = { door = "south" } },
      });
    end);

    it("makes an answer JSON-safe and refuses an array, naming the fix", function()
      local requests = newRequests();
      withProgram(requests, {
        ["door.odd"] = function()
          local answer = { nan = 0 / 0, inf = math.huge, list = { 1, nil, 3 }, mixed = { 1, x = 2 } };
          answer.self = answer;
          return answer;
        end,
        ["door.list"] = function() return { "north", "south" }; end,
      }, function()
        local answer = ask(requests, "door.odd");
        expect(answer.ok):eq(true);
        expect(answer.payload.nan):eq("nan");
        expect(answer.payload.inf):eq("inf");
        expect(answer.payload.self):eq("<cycle>");
        expect(answer.payload.list):same({ 1, textutils.json_null, 3 });
        expect(answer.payload.mixed):same({ ["1"] = 1, x = 2 });
        expect(textutils.serializeJSON(answer.payload)):str_match('"nan":"nan"');
        answer = ask(requests, "door.list");
        expect(answer.err):same({ code = "internal", message = "the handler of door.list returned an array;"
          .. " the answer's payload is an object: put the list in a field, e.g. return { items = list }" });
      end);
    end);

    it("keeps serving while a handler waits longer than a lease, and answers it then", function()
      local requests = newRequests();
      withProgram(requests, {
        -- A filtered pull, as sleep's: it would eat the program's own heartbeat timer.
        ["door.wait"] = function() os.pullEvent("door_done"); return { waited = true }; end,
      }, function()
        local answer;
        requests.serve("door.wait", {}, function(ok, result, err) answer = { ok = ok, payload = result, err = err }; end);
        -- Four heartbeats span more than a lease (SERVE_LEASE < 4 * SERVE_HEARTBEAT).
        feedUntil(requests, function(offers) return answer ~= nil or offers >= 4; end);
        expect(answer):eq(nil);
        os.queueEvent("door_done");
        feedUntil(requests, function() return answer ~= nil; end);
        expect(answer):same({ ok = true, payload = { waited = true } });
      end);
    end);

    it("lets a handler go once the daemon has given up on it", function()
      local requests = newRequests();
      local now = 100;
      stub(os, "clock", function() return now; end);
      local resumed = false;
      withProgram(requests, {
        ["door.wait"] = function() os.pullEvent("door_done"); resumed = true; return {}; end,
      }, function()
        requests.serve("door.wait", {}, function() end);
        feedUntil(requests, function(offers) return offers >= 1; end);
        now = now + require('/apis/libsandboxserve').SERVE_ANSWER_WAIT + 1;
        feedUntil(requests, function(offers) return offers >= 1; end); -- a heartbeat past the wait
        os.queueEvent("door_done");
        feedUntil(requests, function(offers) return offers >= 1; end);
        expect(resumed):eq(false);
      end);
    end);

    it("answers other requests while a handler waits", function()
      local requests = newRequests();
      withProgram(requests, {
        ["door.wait"] = function() os.pullEvent("door_done"); return { waited = true }; end,
        ["door.open"] = function() return { opened = true }; end,
      }, function()
        local slow, quick;
        requests.serve("door.wait", {}, function(ok) slow = ok; end);
        requests.serve("door.open", {}, function(ok, result, err) quick = { ok = ok, payload = result, err = err }; end);
        feedUntil(requests, function() return quick ~= nil; end);
        expect(quick):same({ ok = true, payload = { opened = true } });
        expect(slow):eq(nil);
        os.queueEvent("door_done");
        feedUntil(requests, function() return slow ~= nil; end);
        expect(slow):eq(true);
      end);
    end);

    it("stops at a terminate that comes while a handler waits, and withdraws its types", function()
      local requests = newRequests();
      local answer;
      local ok, err = pcall(withProgram, requests, {
        ["door.wait"] = function() os.pullEvent("door_done"); return {}; end,
      }, function()
        requests.serve("door.wait", {}, function(okAnswer, _, errAnswer) answer = { ok = okAnswer, err = errAnswer }; end);
        os.queueEvent("terminate");
        feedUntil(requests, function() return answer ~= nil; end);
      end);
      -- The program ended as a terminated program does, not its handler alone.
      expect(ok):eq(false);
      expect(err):eq("Terminated");
      feedUntil(requests, function() return answer ~= nil; end);
      expect(answer):same({ ok = false, err = { code = "unknown_type",
        message = "door.wait is no longer served: the program serving it has stopped" } });
    end);

    it("refuses to serve a built-in type", function()
      expect.error(libsandbox.serve, { ["fs.read"] = function() end }):str_match("built%-in");
      expect.error(libsandbox.serve, { ["x"] = 3 }):str_match("must be a function");
    end);
  end);
end);
