-- Specs for /apis/libsandbox: the program API (request/reply, status) and the entry point.

local lib = require('/apis/libsandbox');

local UUID_PATTERN = "^%x%x%x%x%x%x%x%x%-%x%x%x%x%-4%x%x%x%-[89ab]%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$";

-- Fake timer ids far above the computer's own, so a stubbed startTimer never collides.
local FAKE_TIMER = 900001;

describe("libsandbox", function()
  describe("request", function()
    local realQueue = os.queueEvent;

    it("queues trapos_sandbox_send and returns the matching reply", function()
      local sent;
      stub(os, "queueEvent", function(name, messageId, msgType, payload)
        if name == lib.EVENT_SEND then
          sent = { messageId = messageId, type = msgType, payload = payload };
          realQueue(lib.EVENT_REPLY, "someone-else", true, { sandboxOk = false });
          realQueue(lib.EVENT_REPLY, messageId, true, { sandboxOk = true, opencodeOk = false });
        else
          realQueue(name, messageId, msgType, payload);
        end
      end);
      local ok, payload, err = lib.request("probe_gateway", nil, 5);
      expect(sent.type):eq("probe_gateway");
      expect(sent.messageId):str_match(UUID_PATTERN);
      expect(sent.payload):same({});
      expect(ok):eq(true);
      expect(payload):same({ sandboxOk = true, opencodeOk = false });
      expect(err):eq(nil);
    end);

    it("sends a JSON-safe payload: NaN, infinities and a cycle as lua.exec's returns", function()
      local sent;
      stub(os, "queueEvent", function(name, messageId, msgType, payload)
        if name == lib.EVENT_SEND then
          sent = payload;
          realQueue(lib.EVENT_REPLY, messageId, true, {});
        else
          realQueue(name, messageId, msgType, payload);
        end
      end);
      local payload = { level = 0 / 0, limit = math.huge };
      payload.self = payload;
      expect(lib.request("probe_gateway", payload, 5)):eq(true);
      expect(sent):same({ level = "nan", limit = "inf", self = "<cycle>" });
      -- serializeJSON would have written a bare nan, which the gateway drops as malformed.
      expect(lib.encodeFrame({ event = "computer_request", messageId = "m", type = "t", payload = sent })):str_match('"nan"');
    end);

    it("leaves other replies to whoever waits for them", function()
      local otherSeen = false;
      stub(os, "queueEvent", function(name, messageId, ...)
        if name == lib.EVENT_SEND then
          realQueue(lib.EVENT_REPLY, "other-id", true, { n = 1 });
          realQueue(lib.EVENT_REPLY, messageId, true, { n = 2 });
        else
          realQueue(name, messageId, ...);
        end
      end);
      local ok, payload;
      parallel.waitForAll(function()
        ok, payload = lib.request("t", {}, 5);
      end, function()
        while true do
          local _, messageId, replyOk, replyPayload = os.pullEvent(lib.EVENT_REPLY);
          if messageId == "other-id" then
            otherSeen = replyOk == true and replyPayload.n == 1;
            return;
          end
        end
      end);
      expect(ok):eq(true);
      expect(payload.n):eq(2);
      expect(otherSeen):eq(true);
    end);

    it("returns the daemon's error on failure", function()
      stub(os, "queueEvent", function(name, messageId, ...)
        if name == lib.EVENT_SEND then
          realQueue(lib.EVENT_REPLY, messageId, false, nil, { code = "not_connected", message = "sandbox.url is not set" });
        else
          realQueue(name, messageId, ...);
        end
      end);
      local ok, payload, err = lib.request("t");
      expect(ok):eq(false);
      expect(payload):eq(nil);
      expect(err):same({ code = "not_connected", message = "sandbox.url is not set" });
    end);

    it("gives a writable payload even when the reply carries the [] sentinel", function()
      stub(os, "queueEvent", function(name, messageId, ...)
        if name == lib.EVENT_SEND then
          realQueue(lib.EVENT_REPLY, messageId, true, textutils.empty_json_array);
        else
          realQueue(name, messageId, ...);
        end
      end);
      local ok, payload = lib.request("t");
      expect(ok):eq(true);
      payload.x = 1;
      expect(payload.x):eq(1);
    end);

    it("times out with code timeout when no reply comes", function()
      local timerSeconds, cancelled = nil, {};
      stub(os, "startTimer", function(seconds)
        if timerSeconds == nil then
          timerSeconds = seconds;
          return FAKE_TIMER;
        end
        return FAKE_TIMER + 1; -- the status request's, after the timeout
      end);
      stub(os, "cancelTimer", function(id) cancelled[#cancelled + 1] = id; end);
      stub(os, "queueEvent", function(name, id, ...)
        if name == lib.EVENT_SEND then
          realQueue(lib.EVENT_REPLY, "not-ours", true, {});
          realQueue("timer", FAKE_TIMER - 1); -- somebody else's timer
          realQueue("timer", FAKE_TIMER);
        elseif name == lib.EVENT_STATUS_REQUEST then
          realQueue(lib.EVENT_STATUS, id, { state = "connected" }); -- a daemon runs
        else
          realQueue(name, id, ...);
        end
      end);
      local ok, payload, err = lib.request("probe_gateway", {});
      expect(timerSeconds):eq(10);
      expect(ok):eq(false);
      expect(payload):eq(nil);
      expect(err.code):eq("timeout");
      expect(err.message):eq("The gateway did not answer within 10 seconds");
      expect(cancelled):same({ FAKE_TIMER + 1 }); -- the request's timer fired: nothing to cancel
    end);

    it("says no daemon runs when nothing answered and no daemon answers its status either", function()
      stub(os, "startTimer", function() return FAKE_TIMER; end);
      stub(os, "cancelTimer", function() end);
      stub(os, "queueEvent", function(name, ...)
        if name == lib.EVENT_SEND or name == lib.EVENT_STATUS_REQUEST then
          realQueue("timer", FAKE_TIMER); -- nobody answers either
        else
          realQueue(name, ...);
        end
      end);
      local ok, _, err = lib.request("probe_gateway", {});
      expect(ok):eq(false);
      expect(err):same({ code = "not_connected", message = lib.NO_DAEMON });
    end);

    it("says why no daemon runs when shell.allow_startup is false, and its fix", function()
      -- CC then runs no startup file at boot, the hook among them: a reboot alone never
      -- starts the daemon, which the usual message told the player to do.
      stub(os, "startTimer", function() return FAKE_TIMER; end);
      stub(os, "cancelTimer", function() end);
      stub(os, "queueEvent", function(name, ...)
        if name == lib.EVENT_SEND or name == lib.EVENT_STATUS_REQUEST then
          realQueue("timer", FAKE_TIMER);
        else
          realQueue(name, ...);
        end
      end);
      stub(settings, "get", function(name, default)
        if name == "shell.allow_startup" then
          return false;
        end
        return default;
      end);
      local ok, _, err = lib.request("probe_gateway", {});
      expect(ok):eq(false);
      expect(err):same({ code = "not_connected", message = "The sandbox daemon is not running: shell.allow_startup "
        .. "is false, so the computer runs no startup file at boot. Run: set shell.allow_startup true, then reboot" });
      expect(lib.noDaemon()):eq(err.message);
    end);

    it("checks its arguments", function()
      expect.error(lib.request, nil):str_match("bad argument #1 .*string expected, got nil%)$");
      expect.error(lib.request, "t", "x"):str_match("bad argument #2 .*%(table expected, got string%)$");
    end);
  end);

  describe("waitFor", function()
    it("checks its arguments before it waits", function()
      expect.error(lib.waitFor, nil, function() end):str_match("bad argument #1 .*%(number expected, got nil%)$");
      -- Not "attempt to call a nil value" at the first event.
      expect.error(lib.waitFor, 1):str_match("bad argument #2 .*%(function expected, got nil%)$");
    end);
  end);

  describe("requestStatus", function()
    local realQueue = os.queueEvent;

    it("returns the daemon's status", function()
      stub(os, "queueEvent", function(name, replyId, ...)
        if name == lib.EVENT_STATUS_REQUEST then
          realQueue(lib.EVENT_STATUS, "another", { connected = false });
          realQueue(lib.EVENT_STATUS, replyId, { connected = true, traposId = "7:" });
        else
          realQueue(name, replyId, ...);
        end
      end);
      expect(lib.requestStatus()):same({ connected = true, traposId = "7:" });
    end);

    it("returns nil when no daemon answers", function()
      local seconds;
      stub(os, "startTimer", function(s)
        seconds = s;
        realQueue("timer", FAKE_TIMER);
        return FAKE_TIMER;
      end);
      expect(lib.requestStatus()):eq(nil);
      expect(seconds):eq(1);
    end);
  end);

  describe("awaitReconnect", function()
    local realQueue = os.queueEvent;
    local CONNECTED = { url = "ws://127.0.0.1:4444", connected = true, state = "connected" };
    -- A daemon that lost the gateway 0.1 s ago and backs off 20 s (its last two connections
    -- each lasted under a minute).
    local BACKING_OFF = { url = "ws://127.0.0.1:4444", connected = false, state = "waiting",
      lastError = "lost the connection: going away", retryInMs = 19900 };

    -- Plays the daemon: status(n, retries) is its status at the n-th look, after retries asks
    -- to try now. Each CONNECT_POLL's timer fires at once, so the looks count the seconds
    -- waited (two a second). Returns awaitReconnect's outcome, the looks and the asks.
    local function play(status, timeoutSeconds)
      local looks, retries = 0, 0;
      stub(os, "startTimer", function()
        local id = FAKE_TIMER + looks;
        realQueue("timer", id);
        return id;
      end);
      stub(os, "cancelTimer", function() end);
      stub(os, "queueEvent", function(name, replyId, ...)
        if name == lib.EVENT_STATUS_REQUEST then
          looks = looks + 1;
          realQueue(lib.EVENT_STATUS, replyId, status(looks, retries));
        elseif name == lib.EVENT_RETRY_NOW then
          retries = retries + 1;
        else
          realQueue(name, replyId, ...);
        end
      end);
      local back = lib.awaitReconnect(timeoutSeconds);
      return back, looks, retries;
    end

    it("asks a daemon that backs off to try now, and finds the gateway back at that try", function()
      -- ai gave up after 16 s of a daemon's 20 s wait, and said Not connected to a gateway
      -- that was back
      local back, looks, retries = play(function(_, retries)
        return retries > 0 and CONNECTED or BACKING_OFF;
      end);
      expect(back):eq(true);
      expect(retries):eq(1);
      expect(looks):eq(2);
    end);

    it("waits out the daemon's own next try, and its hello, when the gateway is not back at once", function()
      -- the tries asked for find nothing; the daemon's own, at 20 s, connects after 10 s more
      local back, looks, retries = play(function(look)
        return look > 2 * 29 and CONNECTED or BACKING_OFF;
      end);
      expect(back):eq(true);
      expect(looks):eq(2 * 29 + 1);
      expect(retries):eq(2 * 29);
      -- and no longer: a gateway that stays away is said once that try and its hello are over
      back, looks = play(function() return BACKING_OFF; end);
      expect(back):eq(false);
      expect(looks):eq(2 * (20 + 1 + 10) + 1); -- the next try, its jitter, its hello
    end);

    it("stops waiting when the daemon got the gateway back and lost it again at once", function()
      -- a gateway that took the hello and died (or restarted twice) between two looks: ai
      -- waited on for the daemon's next try, some 30 s, for the end of a turn that had ended
      -- with the first socket
      local function backingOff(connections)
        local status = { connections = connections };
        for k, v in pairs(BACKING_OFF) do
          status[k] = v;
        end
        return status;
      end
      local back, looks = play(function(_, retries)
        -- at the try asked for, its hello was answered, then the socket broke
        return backingOff(retries > 0 and 4 or 3);
      end);
      expect(back):eq(false);
      expect(looks):eq(2);
      -- a daemon before 0.5.24 counts no connections: waited for as before
      back, looks = play(function() return BACKING_OFF; end, 3);
      expect(back):eq(false);
      expect(looks):eq(2 * 3 + 1);
    end);

    it("waits as long as its first reconnect for a daemon that does not back off", function()
      local back, looks = play(function()
        return { url = "ws://127.0.0.1:4444", connected = false, state = "connecting" };
      end);
      expect(back):eq(false);
      expect(looks):eq(2 * (5 + 1 + 10) + 1);
      back, looks = play(function() return BACKING_OFF; end, 3);
      expect(back):eq(false);
      expect(looks):eq(2 * 3 + 1);
    end);

    it("neither waits for nor asks a daemon that stopped for good", function()
      local back, looks, retries = play(function()
        return { url = "ws://127.0.0.1:4444", connected = false, state = "stopped" };
      end);
      expect(back):eq(false);
      expect(looks):eq(1);
      expect(retries):eq(0);
    end);
  end);

  describe("entry point", function()
    it("gives each listed name its owning module's value", function()
      local modules = {
        require('/apis/libsandboxcodec'), require('/apis/libsandboxsettings'),
        require('/apis/libsandboxevents'), require('/apis/libsandboxdaemon'),
        require('/apis/libsandboxai'),
      };
      local checked = 0;
      for _, module in ipairs(modules) do
        for name, value in pairs(module) do
          if lib[name] ~= nil and name ~= "ai" then
            expect(lib[name]):eq(value);
            checked = checked + 1;
          end
        end
      end
      expect(checked > 60):eq(true);
      expect(lib.newDaemon):type("function");
      expect(lib.encodeFrame):type("function");
      expect(lib.SETTING_URL):eq("sandbox.url");
      expect(lib.newAiClient):eq(require('/apis/libsandboxai').newClient);
    end);
  end);

  describe("registerCompletion", function()
    it("completes the command's subcommands", function()
      local completions = {};
      lib.registerCompletion({ setCompletionFunction = function(path, fn) completions[path] = fn; end });
      local complete = completions["programs/sandbox.lua"];
      expect(complete):type("function");
      expect(complete(nil, 1, "he", {})):same({ "alth", "lp" });
      expect(complete(nil, 1, "st", {})):same({ "atus", "op" });
      expect(complete(nil, 1, "re", {})):same({ "connect" });
      expect(complete(nil, 1, "li", {})):same({ "nk" });
    end);

    it("completes the ai command's options", function()
      local completions = {};
      lib.registerCompletion({ setCompletionFunction = function(path, fn) completions[path] = fn; end });
      local complete = completions["programs/ai.lua"];
      expect(complete):type("function");
      expect(complete(nil, 1, "--r", {})):same({ "eset" });
      expect(complete(nil, 1, "--", {})):same({ "reset", "help", "version" });
    end);

    it("does nothing without a shell", function()
      lib.registerCompletion(nil);
      lib.registerCompletion({});
    end);
  end);

  describe("registerHelp", function()
    local function helpWith(path)
      local api = {};
      api.path = function() return path; end;
      api.setPath = function(new) path = new; end;
      return api;
    end

    it("puts the package's help directory after the path's own", function()
      local api = helpWith("/rom/help:/myhelp");
      lib.registerHelp(api);
      expect(api.path()):eq("/rom/help:/myhelp:/help");
      expect(lib.HELP_DIR):eq("/help");
    end);

    it("adds it once", function()
      local api = helpWith("/rom/help:/help:/more");
      lib.registerHelp(api);
      expect(api.path()):eq("/rom/help:/help:/more");
    end);

    it("does nothing without a help API", function()
      lib.registerHelp(nil);
      lib.registerHelp({});
    end);
  end);

  describe("whileWaiting", function()
    -- A screen of 26 columns, its cursor at column x of row 3.
    local function screen(x)
      local win = window.create(term.current(), 1, 1, 26, 5, false);
      win.setCursorPos(x, 3);
      return win;
    end

    it("shows what it waits for while the wait lasts, and leaves the row as it found it", function()
      -- A daemon still connecting, or a stuck gateway, held the screen blank for 10 s.
      local t = screen(1);
      local seen;
      local a, b = lib.whileWaiting(t, function(x, y)
        seen = t.getLine(3);
        return x + y, "two";
      end, 1, 2);
      expect({ a, b }):same({ 3, "two" });
      expect((seen:gsub(" +$", ""))):eq("Asking the gateway...");
      expect(t.getLine(3)):eq(string.rep(" ", 26));
      expect({ t.getCursorPos() }):same({ 1, 3 });
    end);

    it("clears the row before a failure, whose message the shell then prints from its start", function()
      for _, why in ipairs({ "Not connected to the gateway: stopped", "Terminated" }) do
        local t = screen(1);
        local ok, err = pcall(lib.whileWaiting, t, function() error(why, 0); end);
        expect({ ok, err }):same({ false, why });
        expect(t.getLine(3)):eq(string.rep(" ", 26));
        expect({ t.getCursorPos() }):same({ 1, 3 });
      end
    end);

    it("writes nothing in the middle of a row", function()
      local t = screen(5);
      expect(lib.whileWaiting(t, function() return t.getLine(3); end)):eq(string.rep(" ", 26));
      expect({ t.getCursorPos() }):same({ 5, 3 });
    end);
  end);

  describe("roomToAnswer", function()
    -- A screen width columns wide whose cursor is at column x.
    local function screen(width, x)
      return { getSize = function() return width, 20; end, getCursorPos = function() return x, 1; end };
    end

    it("leaves an answer ANSWER_ROOM columns after its question, on any width", function()
      expect(lib.ANSWER_ROOM):eq(4);
      for _, width in ipairs({ 26, 39, 51 }) do
        expect(lib.roomToAnswer(screen(width, 1))):eq(true);
        expect(lib.roomToAnswer(screen(width, width - 3))):eq(true);
        expect(lib.roomToAnswer(screen(width, width - 2))):eq(false);
        -- a question that filled the line leaves the cursor past its right edge
        expect(lib.roomToAnswer(screen(width, width + 1))):eq(false);
      end
    end);

    it("has one home, libsandboxlayout, which the installer loads too", function()
      -- the rule lived in three places: libsandbox (an answer's and a password's room), the
      -- sandbox command (a URL's) and the installer (a password's again)
      local layout = require('/apis/libsandboxlayout');
      expect(lib.roomToAnswer):eq(layout.roomToAnswer);
      expect({ lib.ANSWER_ROOM, lib.PASSWORD_ROOM, lib.URL_ROOM })
        :same({ layout.ANSWER_ROOM, layout.PASSWORD_ROOM, layout.URL_ROOM });
      expect(layout.URL_ROOM):eq(26);
      expect(layout.PASSWORD_ROOM):eq(17);
      -- a URL's 26 columns from column 26 of 51, not from 27, where an answer's 4 still are
      expect(layout.roomToAnswer(screen(51, 26), layout.URL_ROOM)):eq(true);
      expect(layout.roomToAnswer(screen(51, 27), layout.URL_ROOM)):eq(false);
      expect(layout.roomToAnswer(screen(51, 27))):eq(true);
    end);
  end);

  describe("libsandboxlayout.fitted", function()
    -- The sandbox command and the gateway's installer print through it (one home for both).
    it("lays out a program's print, printError and write for its screen, at each call", function()
      local out, width, column = {}, 26, 1;
      local env = {
        print = function(...) out[#out + 1] = { "print", select("#", ...), ... }; end,
        printError = function(text) out[#out + 1] = { "printError", 1, text }; end,
        write = function(text) out[#out + 1] = { "write", 1, text }; end,
        term = { getSize = function() return width, 20; end, getCursorPos = function() return column, 1; end },
      };
      local screen = require('/apis/libsandboxlayout').fitted(env);
      local url = "url: ws://192.168.100.200:4444/trapos/ws";
      screen.print(url);
      screen.print();
      screen.printError(url);
      width = 51;
      screen.print(url);
      width, column = 26, 20;
      screen.write("ws://127.0.0.1:4444/trapos/ws");
      screen.print(42);
      expect(out):same({
        { "print", 1, "url: ws://192.168.100.200\n:4444/trapos/ws" },
        { "print", 0 },
        { "printError", 1, "url: ws://192.168.100.200\n:4444/trapos/ws" },
        { "print", 1, url },
        { "write", 1, "\nws://127.0.0.1:4444/trapos\n/ws" },
        { "print", 1, "42" },
      });
    end);

    it("writes a question of the gateway's words hanging, the answer typed beside its [y/N]", function()
      -- sandbox link's question names the account the gateway chose: CC's write started its
      -- rows after the first at the row's start, where they read as lines of the computer's
      local function written(question)
        local win = window.create(term.current(), 1, 1, 26, 20, false);
        local previous = term.redirect(win);
        local screen = require('/apis/libsandboxlayout').fitted(_ENV);
        local ok, err = pcall(screen.writeHangingQuestion, question);
        term.redirect(previous);
        if not ok then
          fail(err);
        end
        local rows = {};
        for y = 1, select(2, win.getCursorPos()) do
          rows[y] = (win.getLine(y):gsub(" +$", ""));
        end
        return rows, { win.getCursorPos() };
      end
      local rows, cursor = written("Link this computer to kitchen-builders-guild? [y/N] ");
      expect(rows):same({ "Link this computer to", " kitchen-builders-guild?", " [y/N]" });
      expect(cursor):same({ 8, 3 });
      -- a word longer than a row goes on at the next, as CC breaks it; the [y/N] that would
      -- end the row with no room for the answer after it starts a row of its own with it
      rows, cursor = written("Link this computer to kitchen-builders-guild-of-the-northern-realm? [y/N] ");
      expect(rows):same({ "Link this computer to kitc", " hen-builders-guild-of-the", " -northern-realm?", " [y/N]" });
      expect(cursor):same({ 8, 4 });
    end);
  end);

  describe("fitLongWords", function()
    -- The rows text takes when CC's write puts it on a screen width columns wide, as a
    -- player reads them (trailing spaces cut).
    local function rowsOf(text, width)
      local win = window.create(term.current(), 1, 1, width, 30, false);
      local previous = term.redirect(win);
      write(text);
      term.redirect(previous);
      local rows = {};
      for y = 1, select(2, win.getCursorPos()) do
        rows[#rows + 1] = (win.getLine(y):gsub(" +$", ""));
      end
      return rows;
    end

    it("leaves text whose words all fit a row as it is", function()
      for _, text in ipairs({ "url: ws://192.168.100.200:4444/trapos/ws", "a\nb  c", "" }) do
        expect(lib.fitLongWords(text, 51)):eq(text);
      end
      expect(lib.fitLongWords("url: ws://127.0.0.1:4444/x", 26)):eq("url: ws://127.0.0.1:4444/x");
    end);

    it("breaks a URL longer than a row before a separator, its scheme and host whole on a row", function()
      -- CC alone: "url: ws://192.168.100.200:" / "4444/trapos/ws", the port cut in two.
      expect(rowsOf("url: ws://192.168.100.200:4444/trapos/ws", 26)):same({ "url: ws://192.168.100.200:", "4444/trapos/ws" });
      local cases = {
        -- its first part fits the row begun: it stays there
        { "url: ws://192.168.100.200:4444/trapos/ws", 26, { "url: ws://192.168.100.200", ":4444/trapos/ws" } },
        { "url: ws://127.0.0.1:4444/trapos/ws", 26, { "url: ws://127.0.0.1:4444", "/trapos/ws" } },
        -- it does not: the URL starts a row of its own
        { "Connect to: wss://sandbox.example.org/trapos/ws", 26, { "Connect to:", "wss://sandbox.example.org", "/trapos/ws" } },
        { "wget run http://192.168.100.200:4444/trapos/install <password>", 26,
          { "wget run", "http://192.168.100.200", ":4444/trapos/install", "<password>" } },
        { "Could not check the password: Could not connect (wss://sandbox.my-minecraft-server.example.org/trapos/ws). After",
          26, { "Could not check the", "password: Could not", "connect", "(wss://sandbox", ".my-minecraft-server", ".example.org/trapos/ws).", "After" } },
        { "(this gateway is ws://10.0.0.9:4444/gateways/north/trapos/ws; change it with: sandbox setup)", 51,
          { "(this gateway is", "ws://10.0.0.9:4444/gateways/north/trapos/ws; change", "it with: sandbox setup)" } },
      };
      for _, case in ipairs(cases) do
        local fitted = lib.fitLongWords(case[1], case[2]);
        expect(rowsOf(fitted, case[2])):same(case[3]);
        -- the same characters, rows run together: only line breaks were put in
        expect((fitted:gsub("%s", ""))):eq((case[1]:gsub("%s", "")));
      end
    end);

    it("breaks a URL without a separator at the row's end, on a row of its own; other long words as CC does", function()
      -- a scheme is never cut, also after a bracket: "(ws:" / "//…" would read as two words
      expect(rowsOf(lib.fitLongWords("(ws://a.bc:4444/x)", 9), 9)):same({ "(ws://a", ".bc:4444", "/x)" });
      local url = "ws://averyverylonghostnamewithoutadot";
      expect(rowsOf(lib.fitLongWords("URL: " .. url, 26), 26)):same({ "URL:", url:sub(1, 26), url:sub(27) });
      -- what a broken gateway sent, not a URL: as CC lays it out, and the URL after it too
      local junk = string.rep("x", 30);
      local text = "said: " .. junk .. " at ws://192.168.100.200:4444/trapos/ws";
      expect(rowsOf(lib.fitLongWords(text, 26), 26))
        :same({ "said: " .. string.rep("x", 20), string.rep("x", 10) .. " at", "ws://192.168.100.200:4444", "/trapos/ws" });
    end);

    it("breaks a path longer than a row before a /, else before a .", function()
      -- CC alone: "Could not write /apis/libs" / "andboxsettings.lua: ...", the name cut in two.
      expect(rowsOf("Could not write /apis/libsandboxsettings.lua: Out of space", 26))
        :same({ "Could not write /apis/libs", "andboxsettings.lua: Out of", "space" });
      local cases = {
        -- its first part fits the row begun: it stays there
        { "Could not write /apis/libsandboxsettings.lua: Out of space", 26,
          { "Could not write /apis", "/libsandboxsettings.lua:", "Out of space" } },
        -- it does not: the path starts a row of its own; a part longer than a row breaks before a "."
        { "Could not write /apis/libsandboxsettings.lua: /apis/libsandboxsettings.lua.new: Cannot write to directory", 26,
          { "Could not write /apis", "/libsandboxsettings.lua:", "/apis", "/libsandboxsettings.lua", ".new: Cannot write to", "directory" } },
        -- a relative one, in brackets; one without a break is cut at the row's end, as a URL is
        { "moved (startup/a-server-with-a-long-name.lua)", 26, { "moved (startup", "/a-server-with-a-long-name", ".lua)" } },
        { "at /" .. string.rep("x", 30), 26, { "at", "/" .. string.rep("x", 25), string.rep("x", 5) } },
      };
      for _, case in ipairs(cases) do
        local fitted = lib.fitLongWords(case[1], case[2]);
        expect(rowsOf(fitted, case[2])):same(case[3]);
        expect((fitted:gsub("%s", ""))):eq((case[1]:gsub("%s", "")));
      end
    end);

    it("keeps a sandbox command in a sentence on one row", function()
      -- CC alone: "... then link this computer with: sandbox" / "link", and a player who types
      -- the row's end runs sandbox alone.
      local tsa = "Not connected to the gateway: sandbox.password is an API token (tsa_...), the host's, "
        .. "which anyone who opens this computer reads: ask the operator to revoke it, then link this "
        .. "computer with: sandbox link";
      expect(rowsOf(tsa, 51)[5]):eq("link");
      local cases = {
        { tsa, 51, { "Not connected to the gateway: sandbox.password is", "an API token (tsa_...), the host's, which anyone",
          "who opens this computer reads: ask the operator to", "revoke it, then link this computer with:", "sandbox link" } },
        -- its punctuation and a bracket before it go with it; a word that is not a command does not
        { "start the gateway there, or fix the port (sandbox setup); then", 26,
          { "start the gateway there,", "or fix the port", "(sandbox setup); then" } },
        { "The sandbox daemon is not running", 13, { "The sandbox", "daemon is not", "running" } },
        -- CC's set and a setting's name: "set" alone ending a row prints every setting
        { "boot. Run: set shell.allow_startup true, then reboot", 26,
          { "boot. Run:", "set shell.allow_startup", "true, then reboot" } },
        { "Run: set shell.allow_startup true", 51, { "Run: set shell.allow_startup true" } },
        { "set the value", 6, { "set", "the", "value" } },
        -- where the pair fits, or sandbox alone does not, nothing changes
        { "Fix it with: sandbox setup", 26, { "Fix it with: sandbox setup" } },
        { "Fix it with: xxxxxxxxxxxxx sandbox setup", 26, { "Fix it with: xxxxxxxxxxxxx", "sandbox setup" } },
      };
      for _, case in ipairs(cases) do
        local fitted = lib.fitLongWords(case[1], case[2]);
        expect(rowsOf(fitted, case[2])):same(case[3]);
        expect((fitted:gsub("%s", ""))):eq((case[1]:gsub("%s", "")));
      end
    end);

    it("counts from the column the text starts at", function()
      expect(lib.fitLongWords("[ws://192.168.100.200:4444/trapos/ws]: ", 26, 10))
        :eq("\n[ws://192.168.100.200:4444\n/trapos/ws]: ");
      expect(lib.fitLongWords("[ws://192.168.100.200:4444/trapos/ws]: ", 26))
        :eq("[ws://192.168.100.200:4444\n/trapos/ws]: ");
    end);
  end);

  describe("libsandboxlayout.hangingRows", function()
    local layout = require('/apis/libsandboxlayout');
    local hangingRows = layout.hangingRows;

    -- The rows CC's own print shows text on, on a screen width columns wide, each without its
    -- trailing blanks.
    local function rowsPrinted(text, width)
      local win = window.create(term.current(), 1, 1, width, 60, false);
      local previous = term.redirect(win);
      print(text);
      term.redirect(previous);
      local rows = {};
      for y = 1, select(2, win.getCursorPos()) - 1 do
        rows[y] = (win.getLine(y):gsub(" +$", ""));
      end
      return rows;
    end

    local TEXTS = {
      "", "lastError: none", string.rep("x", 26), string.rep("x", 27), string.rep("x", 80),
      "a\nb\n\nc", "ab " .. string.rep("y", 60) .. " c", "trailing blanks  " .. string.rep(" ", 40),
      "sandbox.Allow_Exec is not a setting of the sandbox; did you mean sandbox.allow_exec?",
      "url: ws://192.168.100.200:4444/trapos/ws", "fix: start the gateway there, or fix the port (sandbox setup)",
      "sandbox." .. string.rep("y", 64) .. " is not a setting of the sandbox (sandbox help lists them)",
      "update: 0.9.0 is served: wget run https://a-long-host-name.example.org:4444/trapos/install",
      "account: " .. string.rep("a", 17) .. " proof: required " .. string.rep(" ", 30) .. "linked: yes",
      "lastError: unauthorized: " .. string.rep("word ", 50),
    };

    it("lays text out as print does, each row after the first indented, none wider than the screen", function()
      for _, width in ipairs({ 51, 39, 26, 13 }) do
        for _, text in ipairs(TEXTS) do
          local rows = hangingRows(text, width);
          local function failed(why)
            fail(string.format("%q at %d columns: %s:\n%s", text, width, why, table.concat(rows, "\n")));
          end
          -- print shows exactly these rows: it wraps none of them again
          local want = {};
          for i, row in ipairs(rows) do
            want[i] = (row:gsub(" +$", ""));
          end
          if table.concat(rowsPrinted(table.concat(rows, "\n"), width), "\n") ~= table.concat(want, "\n") then
            failed("print wraps a row again");
          end
          for i, row in ipairs(rows) do
            if #row > width then
              failed("row " .. i .. " is wider than the screen");
            elseif i > 1 and row:sub(1, #layout.hangingIndent(width)) ~= layout.hangingIndent(width) then
              failed("row " .. i .. " starts at the row's start");
            end
          end
          -- and nothing of the text is lost or added
          if table.concat(rows, ""):gsub("%s+", "") ~= text:gsub("%s+", "") then
            failed("the words differ from the text's");
          end
        end
      end
    end);

    it("is print's own layout for a line that fits one row, and breaks a URL as fitLongWords does", function()
      expect(hangingRows("lastError: none", 26)):same({ "lastError: none" });
      expect(hangingRows("url: ws://192.168.100.200:4444/trapos/ws", 26))
        :same({ "url: ws://192.168.100.200", " :4444/trapos/ws" });
      expect(hangingRows("url: ws://192.168.100.200:4444/trapos/ws", 39))
        :same({ "url:", "  ws://192.168.100.200:4444/trapos/ws" });
      expect(hangingRows("fix: the gateway refused; run sandbox setup now", 39))
        :same({ "fix: the gateway refused; run", "  sandbox setup now" });
    end);

    it("starts no row of a line's words at the row's start, on every screen width", function()
      -- A gateway's account chosen so that CC's wrap starts a row with "proof: required":
      -- indented by two columns, by one on a pocket computer's 26.
      for _, width in ipairs({ 51, 39, 26, 29, 36, 64 }) do
        local line = "account: " .. string.rep("a", width - #"account: ") .. " proof: required";
        expect(rowsPrinted(line, width)[2]):eq("proof: required");
        expect(hangingRows(line, width)[2]):eq((width < 39 and " " or "  ") .. "proof: required");
      end
    end);
  end);

  describe("libsandboxlayout.hangingQuestionRows", function()
    local layout = require('/apis/libsandboxlayout');

    it("moves a question's last word to a row of its own where its row leaves no room for the answer", function()
      local lastWordOwnRow = layout.lastWordOwnRow;
      -- "/door_k.lua. Allow? [y/N]" ends at column 25 of 26: no room for the blank and "y"
      expect(lastWordOwnRow(25, 5, 1, 26)):eq(true);
      -- ending at 21, the blank, "yes" and the cursor fit after it
      expect(lastWordOwnRow(21, 5, 1, 26)):eq(false);
      expect(lastWordOwnRow(22, 5, 1, 26)):eq(true);
      -- a row of its own, indented, would have no more room: it stays
      expect(lastWordOwnRow(25, 20, 1, 26, nil, 2)):eq(false);
      expect(lastWordOwnRow(25, 20, 1, 26)):eq(true);
      -- the room asked for counts (a password's)
      expect(lastWordOwnRow(10, 5, 1, 26, layout.PASSWORD_ROOM)):eq(true);
      -- ai's Allow? asks it through libsandbox
      expect(require('/apis/libsandbox').lastWordOwnRow):eq(lastWordOwnRow);
    end);

    it("keeps a question's last word beside the room its answer needs", function()
      local hangingQuestionRows = layout.hangingQuestionRows;
      -- room after it: as hangingRows
      expect(hangingQuestionRows("Link this computer to alice? [y/N] ", 51)):same({ "Link this computer to alice? [y/N]" });
      expect(hangingQuestionRows("Link this computer to alice? [y/N] ", 26))
        :same({ "Link this computer to", " alice? [y/N]" });
      -- a [y/N] ending at column 23 of 26 leaves too few for the blank, "yes" and the cursor
      expect(hangingQuestionRows("Link this computer to xx -northern-realm? [y/N] ", 26))
        :same({ "Link this computer to xx", " -northern-realm?", " [y/N]" });
      -- the room asked for counts, and the blanks the text ends with
      expect(hangingQuestionRows("Your gateway's name? ", 26, layout.PASSWORD_ROOM)):same({ "Your gateway's", " name?" });
      expect(hangingQuestionRows("Link this computer to alice? [y/N]" .. string.rep(" ", 10), 26))
        :same({ "Link this computer to", " alice?", " [y/N]" });
      -- a last row of one word keeps it: no row would have more room
      expect(hangingQuestionRows(string.rep("y", 24) .. " [y/N] ", 26)):same({ string.rep("y", 24), " [y/N]" });
    end);

    it("lays a question of the client's own out as print does, its [y/N] beside the answer", function()
      -- sandbox uninstall's on a pocket computer: "from this computer? [y/N]" filled the row,
      -- and the y typed stood alone at the next row's start
      local question = "Remove trapos-sandbox 0.5.38 and its settings from this computer? [y/N] ";
      expect(layout.questionRows(question, 26))
        :same({ "Remove trapos-sandbox", "0.5.38 and its settings", "from this computer?", "[y/N]" });
      expect(layout.questionRows(question, 51))
        :same({ "Remove trapos-sandbox 0.5.38 and its settings from", "this computer? [y/N]" });
      expect(layout.questionRows("Confirm the agent's changes? yes or no [yes]: ", 26))
        :same({ "Confirm the agent's", "changes? yes or no", "[yes]:" });
      -- with room after it, rows as print's
      expect(layout.questionRows("Files: none, read or write [none]: ", 26))
        :same({ "Files: none, read or write", "[none]:" });
    end);
  end);

  describe("the public surface", function()
    -- Every name a program may use, each from the one module that owns it; a name added to a
    -- module is not public until it is listed in libsandbox.lua.
    local NAMES = {
      "VERSION", "REQUEST_TIMEOUT", "NO_DAEMON", "noDaemon", "STATUS_TIMEOUT", "COMMAND_PATH", "SUBCOMMANDS",
      "AI_COMMAND_PATH", "AI_OPTIONS", "waitFor", "request", "requestStatus", "awaitConnection", "awaitReconnect", "retrySeconds", "STOPPED", "explainStatus", "reconnect",
      "stopDaemon", "retryNow", "whileWaiting", "serve", "registerCompletion", "HELP_DIR", "registerHelp", "ANSWER_ROOM", "PASSWORD_ROOM", "URL_ROOM", "roomToAnswer",
      "lastWordOwnRow", "fitLongWords",
      "SETTING_URL", "SETTING_PASSWORD", "SETTING_ALLOW_FILES", "SETTING_ALLOW_EXEC",
      "SETTING_AI_CONFIRM", "SETTING_ALLOW_SCREEN", "SETTING_NAMES", "FILES_NONE", "FILES_READ", "FILES_WRITE",
      "SCREEN_NONE", "SCREEN_VIEW", "SCREEN_CONTROL", "defineSettings",
      "normaliseUrl", "urlSet", "password", "urlHost", "filesAllowed", "filesShown", "execAllowed", "execShown", "screenAllowed",
      "screenShown", "aiConfirm", "aiConfirmShown",
      "ERR_UNAUTHORIZED", "ERR_NOT_AUTHENTICATED", "ERR_UNKNOWN_TYPE", "ERR_NOT_CONNECTED",
      "ERR_INTERNAL", "ERR_TIMEOUT", "ERR_FORBIDDEN", "ERR_FS_ERROR", "ERR_BAD_PAYLOAD",
      "MAX_MESSAGE_BYTES", "MAX_GATEWAY_REQUESTS", "newUuid", "encodeFrame", "decodeFrame",
      "EVENT_SEND", "EVENT_REPLY", "EVENT_CONNECTED", "EVENT_RECONNECT", "EVENT_STOP", "EVENT_RETRY_NOW", "EVENT_STATUS_REQUEST",
      "EVENT_STATUS", "EVENT_SERVE_OFFER", "EVENT_SERVE_WITHDRAW", "EVENT_SERVE_REQUEST",
      "EVENT_SERVE_REPLY",
      "newDaemon", "STATE_DORMANT", "STATE_DISABLED", "STATE_CONNECTING", "STATE_AUTHENTICATING",
      "STATE_CONNECTED", "STATE_WAITING", "STATE_UNAUTHORIZED", "STATE_STOPPED", "HTTP_DISABLED",
      "URL_NOT_SET",
      "ai", "newAiClient", "noAgentLine", "lineChanges", "KIND_TEXT", "KIND_TOOL", "KIND_CONFIRM", "KIND_STARTING", "KIND_RETRY", "KIND_CUT",
      "KIND_ERROR", "KIND_DONE", "DONE_STOP", "DONE_ABORTED", "DONE_ERROR", "DONE_DEADLINE",
      "DONE_DISCONNECTED", "ERR_AI_DISABLED", "ERR_AI_UNAVAILABLE", "ERR_UNKNOWN_TURN",
      "ERR_BUSY", "MAX_PROMPT_BYTES",
      "newLinkSession", "ERR_LINK_INVALID", "ERR_LINK_DISABLED",
    };

    it("is exactly the listed names, none of them nil", function()
      local listed = {};
      for _, name in ipairs(NAMES) do
        listed[name] = true;
        if lib[name] == nil then
          fail("libsandbox." .. name .. " is nil");
        end
      end
      for name in pairs(lib) do
        if not listed[name] then
          fail("libsandbox." .. name .. " is public but not listed");
        end
      end
    end);

    it("runs the agent's client through the daemon, beside other work under parallel", function()
      local realQueue = os.queueEvent;
      local polls = 0;
      stub(os, "queueEvent", function(name, messageId, msgType, payload)
        if name == lib.EVENT_SEND then
          if msgType == "ai.ask" then
            realQueue(lib.EVENT_REPLY, messageId, true, { turnId = "t9" });
          elseif msgType == "ai.poll" then
            polls = polls + 1;
            local events = polls == 1 and { { seq = 1, kind = "text", text = "Hi" } }
              or { { seq = 2, kind = "done", reason = "stop" } };
            realQueue(lib.EVENT_REPLY, messageId, true, { events = events, done = polls > 1 });
          end
        else
          realQueue(name, messageId, msgType, payload);
        end
      end);
      local text, result, ticks = "", nil, 0;
      parallel.waitForAll(function()
        result = lib.ai.run("hello", { onEvent = function(event)
          if event.kind == lib.KIND_TEXT then
            text = text .. event.text;
          end
        end });
      end, function()
        for _ = 1, 3 do
          os.queueEvent("spec_tick");
          os.pullEvent("spec_tick");
          ticks = ticks + 1;
        end
      end);
      expect(text):eq("Hi");
      expect(result.reason):eq("stop");
      expect(ticks):eq(3);
    end);

    it("offers the agent's client ready to use", function()
      for _, name in ipairs({ "run", "ask", "poll", "abort", "reset", "approve" }) do
        expect(lib.ai[name]):type("function");
      end
    end);
  end);
end);
