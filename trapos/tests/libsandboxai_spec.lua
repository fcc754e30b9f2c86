-- Specs for /apis/libsandboxai: the ai.* requests and run(), against a fake gateway given to
-- the factory as its request function (no daemon, no socket).

local lib = require('/apis/libsandboxai');
local requests = require('/apis/libsandboxrequests');

-- A fake gateway: answers ai.ask with turnId "t1", ai.poll with the next reply of `polls` (a
-- list of {events, done} or {err = {code, message}}, or a function called instead), and
-- records every request.
local function gateway(polls, opts)
  opts = opts or {};
  local record = { requests = {} };
  local pollIndex = 0;
  record.request = function(msgType, payload, timeout)
    record.requests[#record.requests + 1] = { type = msgType, payload = payload, timeout = timeout };
    if opts.refuse ~= nil and opts.refuse[msgType] ~= nil then
      return false, nil, opts.refuse[msgType];
    elseif msgType == lib.TYPE_ASK then
      return true, { turnId = "t1" };
    elseif msgType == lib.TYPE_POLL then
      pollIndex = pollIndex + 1;
      local reply = polls[pollIndex];
      if type(reply) == "function" then
        reply = reply(payload);
      end
      if reply == nil then
        error("poll " .. pollIndex .. " was not expected", 0);
      elseif reply.err ~= nil then
        return false, nil, reply.err;
      end
      return true, { events = reply[1], done = reply[2] == true };
    end
    return true, {};
  end
  record.of = function(msgType)
    local found = {};
    for _, req in ipairs(record.requests) do
      if req.type == msgType then
        found[#found + 1] = req.payload;
      end
    end
    return found;
  end
  return record;
end

-- Settings holding values (read at each get, so a spec may change them between questions).
local function settingsOf(values)
  return { get = function(name) return values[name]; end };
end

local function settingsWith(confirm)
  return { get = function(name) if name == "sandbox.ai_confirm" then return confirm; end end };
end

local fakeTerm = {
  getSize = function() return 39, 13; end,
  isColour = function() return false; end,
};

local CONFIRM = { seq = 1, kind = "confirm", confirmId = "c1", action = "write", tool = "write_file", detail = "/door.lua", bytes = 312 };
local DONE = { seq = 2, kind = "done", reason = "stop" };

describe("libsandboxai", function()
  describe("ask", function()
    it("sends the question with the session, the screen, the kind and colour", function()
      local gw = gateway({});
      local client = lib.newClient({ request = gw.request, term = fakeTerm, kind = "turtle", settings = settingsOf({}) });
      expect(client.ask("hello")):eq("t1");
      local defaults = { files = "none", exec = false, screen = "none" };
      expect(gw.of(lib.TYPE_ASK)[1]):same({
        prompt = "hello", session = "main", kind = "turtle",
        screen = { width = 39, height = 13 }, colour = false, allowed = defaults, confirm = true,
      });
      client.ask("again", { session = "door-2", screen = { width = 5, height = 6 }, colour = true, kind = "pocket" });
      expect(gw.of(lib.TYPE_ASK)[2]):same({
        prompt = "again", session = "door-2", kind = "pocket",
        screen = { width = 5, height = 6 }, colour = true, allowed = defaults, confirm = true,
      });
    end);

    it("says the answer's Markdown is laid out only when the caller says so", function()
      local gw = gateway({});
      local client = lib.newClient({ request = gw.request, term = fakeTerm, settings = settingsOf({}) });
      client.ask("plain, as a program of the player's shows it");
      client.ask("laid out, as ai shows it", { markdown = true });
      expect(gw.of(lib.TYPE_ASK)[1].markdown):eq(nil);
      expect(gw.of(lib.TYPE_ASK)[2].markdown):eq(true);
    end);

    it("sends what the owner allows, as computer.info reads it, at each question", function()
      local values = { ["sandbox.allow_files"] = "read", ["sandbox.allow_exec"] = true,
        ["sandbox.allow_screen"] = "view", ["sandbox.ai_confirm"] = false };
      local owner = settingsOf(values);
      local gw = gateway({});
      local client = lib.newClient({ request = gw.request, term = fakeTerm, settings = owner });
      client.ask("save this as door.lua");
      local asked = gw.of(lib.TYPE_ASK)[1];
      expect(asked.allowed):same({ files = "read", exec = true, screen = "view" });
      expect(asked.confirm):eq(false);
      expect(asked.allowed):same(requests.allowed(owner)); -- the one reading computer.info gives
      -- The owner changes them between two questions; a hand-edited value the refusal check
      -- reads as none or false (or, for the questions, as true) is sent so.
      values["sandbox.allow_files"], values["sandbox.allow_exec"] = "Write", "true";
      values["sandbox.allow_screen"], values["sandbox.ai_confirm"] = "control", "no";
      client.ask("and now?");
      asked = gw.of(lib.TYPE_ASK)[2];
      expect(asked.allowed):same({ files = "none", exec = false, screen = "control" });
      expect(asked.confirm):eq(true);
    end);

    it("refuses an empty or too long question without asking the gateway", function()
      local gw = gateway({});
      local client = lib.newClient({ request = gw.request, term = fakeTerm });
      local turnId, err = client.ask("   ");
      expect(turnId):eq(nil);
      expect(err):same({ code = "bad_payload", message = "The question is empty" });
      turnId, err = client.ask(string.rep("x", lib.MAX_PROMPT_BYTES + 1));
      expect(turnId):eq(nil);
      expect(err):same({ code = "bad_payload", message = "The question is 4097 bytes, over 4096: shorten it" });
      expect(#gw.requests):eq(0);
      expect(client.ask(string.rep("x", lib.MAX_PROMPT_BYTES))):eq("t1");
    end);

    it("returns the gateway's refusal", function()
      local refusal = { code = "ai_disabled", message = "the operator must set --ai-model" };
      local gw = gateway({}, { refuse = { [lib.TYPE_ASK] = refusal } });
      local client = lib.newClient({ request = gw.request, term = fakeTerm });
      local turnId, err = client.ask("hi");
      expect(turnId):eq(nil);
      expect(err):same(refusal);
    end);

    it("raises for a bad session name, as for any bad argument", function()
      local client = lib.newClient({ request = gateway({}).request, term = fakeTerm });
      expect.error(client.ask, "hi", { session = "Main" }):str_match("session must be 1%-32 characters");
      expect.error(client.ask, "hi", { session = string.rep("a", 33) }):str_match("session must be");
      expect.error(client.reset, ""):str_match("bad argument #1");
      expect.error(client.ask, 42):str_match("string expected, got number");
    end);
  end);

  describe("the single requests", function()
    it("poll keeps the events in order and says whether the turn is done", function()
      local gw = gateway({ { { { seq = 1, kind = "text", text = "a" }, { kind = "text" }, { seq = 2, kind = "done", reason = "stop" } }, true } });
      local client = lib.newClient({ request = gw.request });
      local events, done = client.poll("t1", 0, 100);
      expect(#events):eq(2);
      expect(events[2].kind):eq("done");
      expect(done):eq(true);
      expect(gw.of(lib.TYPE_POLL)[1]):same({ turnId = "t1", after = 0, waitMs = 100 });
    end);

    it("poll keeps a confirm's bytes only as a count of bytes", function()
      local confirms = {};
      for i, bytes in ipairs({ 312, 0, -1, 1.5, math.huge, 2 ^ 60, "12" }) do
        confirms[i] = { seq = i, kind = "confirm", confirmId = "c" .. i, bytes = bytes };
      end
      local client = lib.newClient({ request = gateway({ { confirms, false } }).request });
      local events = client.poll("t1", 0, 100);
      local said = {};
      for i, event in ipairs(events) do
        said[i] = event.bytes == nil and "none" or event.bytes;
      end
      expect(said):same({ 312, 0, "none", "none", "none", "none", "12" });
    end);

    it("abort, reset and approve send their payloads", function()
      local gw = gateway({});
      local client = lib.newClient({ request = gw.request });
      expect(client.abort("t1")):eq(true);
      expect(client.reset()):eq(true);
      expect(client.reset("other")):eq(true);
      expect(client.approve("t1", "c1", false)):eq(true);
      expect(gw.of(lib.TYPE_ABORT)[1]):same({ turnId = "t1" });
      expect(gw.of(lib.TYPE_RESET)):same({ { session = "main" }, { session = "other" } });
      expect(gw.of(lib.TYPE_APPROVE)[1]):same({ turnId = "t1", confirmId = "c1", allow = false });
    end);

    it("reset returns busy while a turn runs", function()
      local busy = { code = "busy", message = "a turn is running on session main" };
      local client = lib.newClient({ request = gateway({}, { refuse = { [lib.TYPE_RESET] = busy } }).request });
      local ok, err = client.reset();
      expect(ok):eq(false);
      expect(err):same(busy);
    end);
  end);

  describe("run", function()
    it("hands every event to onEvent in order and polls after the last seq", function()
      local gw = gateway({
        { { { seq = 1, kind = "text", text = "Hel" }, { seq = 2, kind = "tool", tool = "read_file", detail = "/a", state = "running" } } },
        { {} },
        { { { seq = 2, kind = "tool", tool = "read_file", detail = "/a", state = "running" }, { seq = 3, kind = "text", text = "lo" } } },
        { { { seq = 4, kind = "done", reason = "stop" } }, true },
      });
      local seen = {};
      local client = lib.newClient({ request = gw.request, term = fakeTerm });
      local result, err = client.run("hi", { onEvent = function(event) seen[#seen + 1] = event.seq .. event.kind; end });
      expect(err):eq(nil);
      expect(result):same({ turnId = "t1", reason = "stop" });
      expect(seen):same({ "1text", "2tool", "3text", "4done" });
      local afters = {};
      for _, payload in ipairs(gw.of(lib.TYPE_POLL)) do
        afters[#afters + 1] = payload.after;
        expect(payload.waitMs):eq(lib.POLL_WAIT_MS);
      end
      expect(afters):same({ 0, 2, 2, 3 });
    end);

    it("calls onWait before each poll that follows events", function()
      local order = {};
      local gw = gateway({
        function() order[#order + 1] = "poll1"; return { { { seq = 1, kind = "text", text = "a" } } }; end,
        function() order[#order + 1] = "poll2"; return { { DONE }, true }; end,
      });
      lib.newClient({ request = gw.request, term = fakeTerm }).run("hi", {
        onEvent = function(event) order[#order + 1] = event.kind; end,
        onWait = function() order[#order + 1] = "wait"; end,
      });
      expect(order):same({ "poll1", "text", "wait", "poll2", "done" });
    end);

    it("reports the error and the cut of a turn", function()
      local gw = gateway({
        { { { seq = 1, kind = "cut", message = "cut at 64 KiB" }, { seq = 2, kind = "error", code = "timeout", message = "no answer" }, { seq = 3, kind = "done", reason = "deadline" } }, true },
      });
      local result = lib.newClient({ request = gw.request, term = fakeTerm }).run("hi");
      expect(result):same({ turnId = "t1", reason = "deadline", cut = true, error = { code = "timeout", message = "no answer" } });
    end);

    it("asks the program's callback to confirm and sends its answer", function()
      for _, answer in ipairs({ true, false }) do
        local gw = gateway({ { { CONFIRM, DONE }, true } });
        local asked, seen;
        local client = lib.newClient({ request = gw.request, term = fakeTerm, settings = settingsWith(nil) });
        client.run("hi", {
          confirm = function(event) asked = event.detail .. " " .. event.bytes; return answer; end,
          onEvent = function(event) if event.kind == "confirm" then seen = event; end end,
        });
        expect(asked):eq("/door.lua 312");
        expect(gw.of(lib.TYPE_APPROVE)):same({ { turnId = "t1", confirmId = "c1", allow = answer } });
        expect(seen.allowed):eq(answer);
        expect(seen.asked):eq(true);
      end
    end);

    it("denies a change when the program gives no callback", function()
      local gw = gateway({ { { CONFIRM, DONE }, true } });
      lib.newClient({ request = gw.request, term = fakeTerm, settings = settingsWith(true) }).run("hi");
      expect(gw.of(lib.TYPE_APPROVE)):same({ { turnId = "t1", confirmId = "c1", allow = false } });
    end);

    it("refuses at once, without asking, a change this computer's settings refuse", function()
      local settingsMap = { ["sandbox.ai_confirm"] = true, ["sandbox.allow_files"] = "none", ["sandbox.allow_exec"] = false };
      local fakeSettings = { get = function(name) return settingsMap[name]; end };
      local write = { seq = 1, kind = "confirm", confirmId = "c1", action = "write", tool = "write_file",
        detail = "/door.lua", bytes = 312, request = { type = "fs.write", payload = { path = "/door.lua" } } };
      local gw = gateway({ { { write, DONE }, true } });
      local called, seen = false, nil;
      lib.newClient({ request = gw.request, term = fakeTerm, settings = fakeSettings, fs = fs }).run("hi", {
        confirm = function() called = true; return true; end,
        onEvent = function(event) if event.kind == "confirm" then seen = event; end end,
      });
      expect(called):eq(false);
      local why = "fs.write needs sandbox.allow_files write (it is none); the owner can allow it with: set sandbox.allow_files write";
      expect(gw.of(lib.TYPE_APPROVE)):same({ { turnId = "t1", confirmId = "c1", allow = false, reason = why } });
      expect(seen.refused):eq(why);
      expect(seen.asked):eq(false);

      -- The same rule with the questions off: a run needs sandbox.allow_exec.
      settingsMap["sandbox.ai_confirm"] = false;
      local run = { seq = 1, kind = "confirm", confirmId = "c2", action = "run", tool = "run_lua", detail = "print(1)",
        request = { type = "lua.exec", payload = {} } };
      gw = gateway({ { { run, DONE }, true } });
      lib.newClient({ request = gw.request, term = fakeTerm, settings = fakeSettings, fs = fs }).run("hi");
      expect(gw.of(lib.TYPE_APPROVE)):same({ { turnId = "t1", confirmId = "c2", allow = false,
        reason = "lua.exec needs sandbox.allow_exec true (it is false); the owner can allow it with: set sandbox.allow_exec true" } });

      -- Allowed by the settings: the player is asked.
      settingsMap["sandbox.ai_confirm"], settingsMap["sandbox.allow_files"] = true, "write";
      gw = gateway({ { { write, DONE }, true } });
      lib.newClient({ request = gw.request, term = fakeTerm, settings = fakeSettings, fs = fs }).run("hi", {
        confirm = function() called = true; return true; end,
      });
      expect(called):eq(true);
      expect(gw.of(lib.TYPE_APPROVE)):same({ { turnId = "t1", confirmId = "c1", allow = true } });
    end);

    it("allows a change by itself when the owner set sandbox.ai_confirm false", function()
      local gw = gateway({ { { CONFIRM, DONE }, true } });
      local called = false;
      lib.newClient({ request = gw.request, term = fakeTerm, settings = settingsWith(false) }).run("hi", {
        confirm = function() called = true; return false; end,
      });
      expect(called):eq(false);
      expect(gw.of(lib.TYPE_APPROVE)):same({ { turnId = "t1", confirmId = "c1", allow = true } });
    end);

    it("polls again after a lost reply, waiting less at the gateway", function()
      local timeout = { err = { code = "timeout", message = "no reply" } };
      local gw = gateway({ timeout, timeout, { { DONE }, true } });
      expect(lib.newClient({ request = gw.request, term = fakeTerm }).run("hi").reason):eq("stop");
      local waits = {};
      for _, payload in ipairs(gw.of(lib.TYPE_POLL)) do
        waits[#waits + 1] = payload.waitMs;
      end
      expect(waits):same({ 5000, 2500, 1250 });
    end);

    it("gives up after MAX_POLL_FAILURES lost replies at the shortest wait", function()
      local timeout = { err = { code = "timeout", message = "no reply" } };
      local polls = {};
      for i = 1, 20 do
        polls[i] = timeout;
      end
      local gw = gateway(polls);
      local result, err = lib.newClient({ request = gw.request, term = fakeTerm }).run("hi");
      expect(result):eq(nil);
      expect(err.code):eq("timeout");
      local sent = gw.of(lib.TYPE_POLL);
      -- 5000, 2500, 1250, 625, then 500 until the failures run out
      expect(#sent):eq(4 + lib.MAX_POLL_FAILURES);
      expect(sent[#sent].waitMs):eq(lib.MIN_POLL_WAIT_MS);
    end);

    it("waits once for the daemon after a lost connection, then reads the turn's end", function()
      local lost = { err = { code = "not_connected", message = "lost the connection" } };
      local gw = gateway({ lost, { { { seq = 1, kind = "done", reason = "disconnected" } }, true } });
      local waits = 0;
      local result = lib.newClient({ request = gw.request, term = fakeTerm,
        awaitReconnect = function() waits = waits + 1; return true; end }).run("hi");
      expect(result.reason):eq("disconnected");
      expect(waits):eq(1);
    end);

    it("returns the answer lost when the daemon does not come back, or loses it again at once", function()
      local lost = { err = { code = "not_connected", message = "lost the connection" } };
      for _, case in ipairs({ { false, 1 }, { true, 2 } }) do
        local gw = gateway({ lost, lost, lost });
        local waits = 0;
        local result, err = lib.newClient({ request = gw.request, term = fakeTerm,
          awaitReconnect = function() waits = waits + 1; return case[1]; end }).run("hi");
        expect(result):eq(nil);
        -- Either way the gateway ended the turn with the first socket (ai says the answer is
        -- lost): back, then lost again before a poll got through (a gateway that took the
        -- hello and died, or restarted twice), it said the poll's error as it is, as if the
        -- answer could still come once connected.
        expect(err):same({ code = "not_connected", message = "lost the connection", answerLost = true });
        expect(waits):eq(1);
        expect(#gw.of(lib.TYPE_POLL)):eq(case[2]);
      end
    end);

    it("returns the answer lost when the gateway it got back does not answer the poll", function()
      -- a gateway that took the hello and hung: ai polled on for every timeout the halving
      -- allows (some 70 s under Reconnecting...), for the end of a turn that had ended with the
      -- first socket
      local lost = { err = { code = "not_connected", message = "lost the connection" } };
      local timeout = { err = { code = "timeout", message = "no reply" } };
      local gw = gateway({ lost, timeout, timeout, timeout, timeout, timeout, timeout, timeout });
      local result, err = lib.newClient({ request = gw.request, term = fakeTerm,
        awaitReconnect = function() return true; end }).run("hi");
      expect(result):eq(nil);
      expect(err):same({ code = "timeout", message = "no reply", answerLost = true });
      expect(#gw.of(lib.TYPE_POLL)):eq(2);
    end);

    it("returns other poll errors at once", function()
      local gw = gateway({ { err = { code = "unknown_turn", message = "no turn t1" } } });
      local result, err = lib.newClient({ request = gw.request, term = fakeTerm }).run("hi");
      expect(result):eq(nil);
      expect(err):same({ code = "unknown_turn", message = "no turn t1" });
    end);

    it("returns the ask's refusal without polling", function()
      local gw = gateway({}, { refuse = { [lib.TYPE_ASK] = { code = "busy", message = "a turn runs" } } });
      local result, err = lib.newClient({ request = gw.request, term = fakeTerm }).run("hi");
      expect(result):eq(nil);
      expect(err.code):eq("busy");
      expect(#gw.of(lib.TYPE_POLL)):eq(0);
    end);

    it("aborts the turn on terminate and raises Terminated", function()
      local gw = gateway({
        { { { seq = 1, kind = "text", text = "a" } } },
        function() error("Terminated", 0); end,
        { {} }, -- the look at the turn before the abort: it runs
      });
      local started;
      local ok, err = pcall(lib.newClient({ request = gw.request, term = fakeTerm }).run, "hi", {
        onStart = function(turnId) started = turnId; end,
      });
      expect(ok):eq(false);
      expect(err):eq("Terminated");
      expect(started):eq("t1");
      expect(gw.of(lib.TYPE_ABORT)):same({ { turnId = "t1" } });
      -- briefly: the same Ctrl-T may have stopped the daemon, which would never answer
      expect(gw.requests[#gw.requests].timeout):eq(lib.ABORT_TIMEOUT);
    end);

    it("sends no abort on terminate once the turn's done event came, and says it ended first", function()
      -- the player pages an answer all received (its text came with done): nothing runs to stop
      local gw = gateway({ { { { seq = 1, kind = "text", text = "a" }, DONE }, true } });
      local order = {};
      local ok, err = pcall(lib.newClient({ request = gw.request, term = fakeTerm }).run, "hi", {
        onEnded = function() order[#order + 1] = "ended"; end,
        onEvent = function(event)
          order[#order + 1] = event.kind;
          error("Terminated", 0);
        end,
      });
      expect(ok):eq(false);
      expect(err):eq("Terminated");
      expect(order):same({ "ended", "text" });
      expect(#gw.of(lib.TYPE_ABORT)):eq(0);
      expect(#gw.of(lib.TYPE_POLL)):eq(1);
    end);

    it("sends no abort on terminate when a look finds the turn ended, its end not polled yet", function()
      local gw = gateway({
        { { { seq = 1, kind = "text", text = "a" } } },
        { { { seq = 2, kind = "text", text = "b" }, { seq = 3, kind = "done", reason = "stop" } }, true },
      });
      local ended = 0;
      local ok, err = pcall(lib.newClient({ request = gw.request, term = fakeTerm }).run, "hi", {
        onEnded = function() ended = ended + 1; end,
        onEvent = function() error("Terminated", 0); end,
      });
      expect(ok):eq(false);
      expect(err):eq("Terminated");
      expect(ended):eq(1);
      expect(#gw.of(lib.TYPE_ABORT)):eq(0);
      expect(gw.of(lib.TYPE_POLL)[2]):same({ turnId = "t1", after = 1, waitMs = 0 });
      expect(gw.requests[#gw.requests].timeout):eq(lib.ABORT_TIMEOUT);
      -- paged past the 2 min the gateway keeps an ended turn: it knows it no more
      gw = gateway({
        { { { seq = 1, kind = "text", text = "a" } } },
        { err = { code = "unknown_turn", message = "the gateway knows no turn \"t1\" of this computer" } },
      });
      ended = 0;
      ok, err = pcall(lib.newClient({ request = gw.request, term = fakeTerm }).run, "hi", {
        onEnded = function() ended = ended + 1; end,
        onEvent = function() error("Terminated", 0); end,
      });
      expect(ok):eq(false);
      expect(err):eq("Terminated");
      expect(ended):eq(1);
      expect(#gw.of(lib.TYPE_ABORT)):eq(0);
    end);

    it("does not abort when a callback fails for another reason", function()
      local gw = gateway({ { { { seq = 1, kind = "text", text = "a" } } } });
      local ok, err = pcall(lib.newClient({ request = gw.request, term = fakeTerm }).run, "hi", {
        onEvent = function() error("boom", 0); end,
      });
      expect(ok):eq(false);
      expect(err):eq("boom");
      expect(#gw.of(lib.TYPE_ABORT)):eq(0);
    end);
  end);

  describe("newAnswerReader", function()
    -- What the reader tells of answer, given in pieces of `size` bytes (all at once by
    -- default), as one list of strings.
    local function read(answer, size)
      local said = {};
      local reader = lib.newAnswerReader({
        line = function(kind, indent, marker) said[#said + 1] = kind .. "|" .. indent .. "|" .. marker; end,
        text = function(part)
          if said[#said]:sub(1, 5) == "text:" then
            said[#said] = said[#said] .. part;
          else
            said[#said + 1] = "text:" .. part;
          end
        end,
        lineEnd = function() said[#said + 1] = "end"; end,
        inlineCode = function(text, typed) said[#said + 1] = "span:" .. text .. "|" .. typed; end,
        code = function(line) said[#said + 1] = "code:" .. line; end,
        blank = function() said[#said + 1] = "blank"; end,
        -- "table:" its rows, header first, each row's cells joined by "/" (a code span in
        -- brackets), then the aligns ("-" for none)
        table = function(header, rows, aligns)
          local function row(cells)
            local shown = {};
            for i, parts in ipairs(cells) do
              local cell = {};
              for j, part in ipairs(parts) do
                cell[j] = type(part) == "string" and part or "[" .. part[1] .. "|" .. part[2] .. "]";
              end
              shown[i] = table.concat(cell);
            end
            return table.concat(shown, "/");
          end
          local lines = { row(header) };
          for _, cells in ipairs(rows) do
            lines[#lines + 1] = row(cells);
          end
          local shownAligns = {};
          for i, align in ipairs(aligns) do
            shownAligns[i] = align or "-";
          end
          lines[#lines + 1] = table.concat(shownAligns, ",");
          said[#said + 1] = "table:" .. table.concat(lines, ";");
        end,
      });
      size = size or #answer;
      for i = 1, #answer, size do
        reader.add(answer:sub(i, i + size - 1));
      end
      reader.finish();
      return said;
    end

    it("begins the next answer outside the fence when showing the held line raised", function()
      -- a Ctrl-T at the "Press any key" of the last code line, shown by finish(): the next
      -- answer's text read as code of the fence left open
      local said, raise = {}, true;
      local reader = lib.newAnswerReader({
        line = function(kind) said[#said + 1] = kind; end,
        text = function() end,
        lineEnd = function() end,
        code = function(line)
          if raise then
            raise = false;
            error("Terminated", 0);
          end
          said[#said + 1] = "code:" .. line;
        end,
        blank = function() end,
      });
      reader.add("```lua\nprint(1)");
      local ok, err = pcall(reader.finish);
      expect(ok):eq(false);
      expect(err):eq("Terminated");
      reader.add("Back.\n");
      reader.finish();
      expect(said):same({ "text" });
    end);

    it("tells each line's kind from its start, however the answer is cut in pieces", function()
      local answer = "Intro\n\n- item\n  12. sub\n# Head\n> quote\n```lua\n  x = 1\n\n```\nafter\n\n    indented\n"
        .. "-not an item\n1234567890. no item\n";
      local want = {
        "text|0|", "text:Intro", "end", "blank",
        "item|0|- ", "text:item", "end",
        "item|2|12. ", "text:sub", "end",
        "heading|0|# ", "text:Head", "end",
        "quote|0|> ", "text:quote", "end",
        "code:  x = 1", "code:",
        "text|0|", "text:after", "end", "blank",
        "code:    indented",
        "text|0|", "text:-not an item", "end",
        "text|0|", "text:1234567890. no item", "end",
      };
      for _, size in ipairs({ 1, 2, 3, 7, #answer }) do
        expect(read(answer, size)):same(want);
      end
    end);

    it("ends a list item at a fence at the margin, as a terminal's Markdown does", function()
      -- the indented line after the fence is code, not the item's text going on under it
      local answer = "- item\n```lua\nx = 1\n```\n    indented\n- next\n  ```\n  y = 2\n  ```\n    more\n";
      local want = {
        "item|0|- ", "text:item", "end",
        "code:x = 1",
        "code:    indented",
        "item|0|- ", "text:next", "end",
        "code:  y = 2",
        "text|4|", "text:more", "end",
      };
      for _, size in ipairs({ 1, 3, #answer }) do
        expect(read(answer, size)):same(want);
      end
    end);

    it("gives inline code without its backticks and bold without its marks, however the answer is cut", function()
      local answer = "Run `door` now, **then** wait.\n- **door.lua**: `` a`b `` or ``` `x` ```\n## The `ai` command\n"
        .. "2 ** 3 and a**b**c, `* not bold *`\n```\nx = `y` .. **z**\n```\n";
      local want = {
        "text|0|", "text:Run ", "span:door|`door`", "text: now, then wait.", "end",
        "item|0|- ", "text:door.lua: ", "span:a`b|`` a`b ``", "text: or ", "span:`x`|``` `x` ```", "end",
        "heading|0|## ", "text:The ", "span:ai|`ai`", "text: command", "end",
        "text|0|", "text:2 ** 3 and abc, ", "span:* not bold *|`* not bold *`", "end",
        "code:x = `y` .. **z**",
      };
      for _, size in ipairs({ 1, 2, 3, 5, #answer }) do
        expect(read(answer, size)):same(want);
      end
    end);

    it("gives italic without its marks, a link as its text and URL, an escape as its byte, however the answer is cut", function()
      -- they showed as typed: "[the docs](https://tweaked.cc)", "_not_", "my\\_file.lua"
      local answer = "See [the docs](https://tweaked.cc/module/redstone.html) or <https://tweaked.cc>.\n"
        .. "Do _not_ run *this* in **a _loop_**, but my\\_file.lua \\*is\\* \\`fine\\` \\\\ \\n.\n"
        .. "snake_case_name, a*b*c, 2 * 3 * 4, __init__, x<y>z, <b> and [1] [x](y z) [`door`](https://x.y/`)\n"
        .. "- [**run** `door`](http://x.y)\n";
      local want = {
        "text|0|", "text:See the docs (https://tweaked.cc/module/redstone.html) or https://tweaked.cc.", "end",
        "text|0|", "text:Do not run this in a loop, but my_file.lua *is* `fine` \\ \\n.", "end",
        "text|0|", "text:snake_case_name, a*b*c, 2 * 3 * 4, __init__, x<y>z, <b> and [1] [x](y z) ",
        "span:door|`door`", "text: (https://x.y/`)", "end",
        "item|0|- ", "text:run ", "span:door|`door`", "text: (http://x.y)", "end",
      };
      for _, size in ipairs({ 1, 2, 3, 5, #answer }) do
        expect(read(answer, size)):same(want);
      end
    end);

    it("shows a mark that does not close within its line as typed", function()
      local answer = "a ` b **c\n**see `x` here\nends with `\nends **\n`` a ` b\n";
      local want = {
        "text|0|", "text:a ` b **c", "end",
        "text|0|", "text:**see ", "span:x|`x`", "text: here", "end",
        "text|0|", "text:ends with `", "end",
        "text|0|", "text:ends **", "end",
        "text|0|", "text:`` a ` b", "end",
      };
      for _, size in ipairs({ 1, 2, #answer }) do
        expect(read(answer, size)):same(want);
      end
    end);

    it("gives a table whole once its last row came, its cells' marks read, however it streams", function()
      local answer = "Sides:\n\n| side | what `it` does | n |\n|:-----|:---:|--:|\n| left | opens the **door** | 1 |\n"
        .. "|back|a \\| pipe|\n| top | `a|b` | 3 | extra |\n\nDone.\n";
      -- as GitHub's: a | splits cells in code spans too (\| does not), a row has the header's
      -- cell count (the missing empty, the extra left out)
      local want = {
        "text|0|", "text:Sides:", "end", "blank",
        "table:side/what [it|`it`] does/n;left/opens the door/1;back/a | pipe/;top/`a/b`;left,center,right",
        "blank", "text|0|", "text:Done.", "end",
      };
      for _, size in ipairs({ 1, 2, 3, 7, #answer }) do
        expect(read(answer, size)):same(want);
      end
    end);

    it("ends a table at the first line that is no row, and at the answer's end", function()
      expect(read("| a | b |\n|---|---|\n| 1 | 2 |\nafter\n")):same({ "table:a/b;1/2;-,-", "text|0|", "text:after", "end" });
      expect(read("| a |\n|---|\n- item\n")):same({ "table:a;-", "item|0|- ", "text:item", "end" });
      expect(read("| a |\n|---|\n```\nx\n```\n")):same({ "table:a;-", "code:x" });
      expect(read("| a |\n|---|\n| 1 |")):same({ "table:a;1;-" });
    end);

    it("shows a line beginning with | as the prose it is when no delimiter row follows", function()
      expect(read("| not a table |\nnext\n")):same({ "text|0|", "text:| not a table |", "end", "text|0|", "text:next", "end" });
      -- held to the answer's end, and before a blank line
      expect(read("|a **b**|")):same({ "text|0|", "text:|a b|", "end" });
      expect(read("| x |\n\ny\n")):same({ "text|0|", "text:| x |", "end", "blank", "text|0|", "text:y", "end" });
      -- a delimiter row of another cell count is none: each line is prose, the second may begin a table
      expect(read("| a | b |\n|---|\n|---|\n")):same({ "text|0|", "text:| a | b |", "end", "table:---;-" });
      -- a header of more than MAX_TABLE_COLUMNS columns is prose, its delimiter row too
      local wide = ("|x"):rep(lib.MAX_TABLE_COLUMNS + 1) .. "|";
      local wideRule = ("|-"):rep(lib.MAX_TABLE_COLUMNS + 1) .. "|";
      expect(read(wide .. "\n" .. wideRule .. "\n")):same({ "text|0|", "text:" .. wide, "end", "text|0|", "text:" .. wideRule, "end" });
      local widest = ("|x"):rep(lib.MAX_TABLE_COLUMNS) .. "|\n" .. ("|-"):rep(lib.MAX_TABLE_COLUMNS) .. "|\n";
      expect(read(widest)[1]:sub(1, 6)):eq("table:");
      -- a program without out.table gets the table's lines as typed
      local said = {};
      local reader = lib.newAnswerReader({
        line = function() end, code = function() end, blank = function() end,
        text = function(part) said[#said + 1] = part; end,
        lineEnd = function() said[#said + 1] = "\n"; end,
      });
      reader.add("| a | b |\n|---|---|\n| 1 | 2 |\n");
      reader.finish();
      expect(table.concat(said)):eq("| a | b |\n|---|---|\n| 1 | 2 |\n");
    end);

    it("gives a program without inlineCode the code span as typed", function()
      local said = {};
      local reader = lib.newAnswerReader({
        line = function() end, lineEnd = function() end, code = function() end, blank = function() end,
        text = function(part) said[#said + 1] = part; end,
      });
      reader.add("Run `door`, **now**.\n");
      reader.finish();
      expect(table.concat(said)):eq("Run `door`, now.");
    end);

    it("holds no more of a code line than MAX_HELD_LINE_BYTES, however long it streams", function()
      -- a hostile gateway's fenced line without end was held whole until its line break
      local max = lib.MAX_HELD_LINE_BYTES;
      local long = 3 * max + 5;
      local cut = "...(cut, " .. long .. " bytes)";
      expect(read("```\n" .. ("x"):rep(long) .. "\n```\nafter\n", 1000)):same({ "code:" .. ("x"):rep(max) .. cut,
        "text|0|", "text:after", "end" });
      -- an indented one, its indent counted in
      expect(read("\n" .. (" "):rep(long - 1) .. "x\n", 1000)):same({ "code:" .. (" "):rep(max) .. cut });
      -- one whole at the bound is not cut
      expect(read("```\n" .. ("y"):rep(max) .. "\n```\n", 999)):same({ "code:" .. ("y"):rep(max) });
    end);

    it("holds no more of a line than MAX_HELD_LINE_BYTES for inline marks that may never close", function()
      -- a hostile gateway's line that opened a code span or bold (or a run of backticks) and
      -- never ended was held whole, waiting for the closing mark, nothing given
      local max = lib.MAX_HELD_LINE_BYTES;
      for _, start in ipairs({ "a `", "a **", "a " .. ("`"):rep(3 * max) }) do
        local given = 0;
        local reader = lib.newAnswerReader({
          line = function() end, lineEnd = function() end, code = function() end, blank = function() end,
          text = function(part) given = given + #part; end,
          inlineCode = function(_, typed) given = given + #typed; end,
        });
        reader.add(start);
        for _ = 1, 3 * max / 1024 do
          reader.add(("x"):rep(1024));
        end
        expect(given >= #start + 2 * max):eq(true);
        reader.add("\n");
        expect(given):eq(#start + 3 * max);
      end
    end);

    it("reads lines that end in \\r\\n as those that end in \\n", function()
      local said = read("One.\r\n\r\n\r\n```\r\nx = 1\r\n```\r\nTwo.\r\n");
      expect(said):same({ "text|0|", "text:One.\r", "end", "blank", "code:x = 1\r", "text|0|", "text:Two.\r", "end" });
    end);

    it("reads an answer in the time of its length, in pieces of a byte too", function()
      -- Counted in steps, not in time: the Lua VM's instructions (a hook every 100) and the
      -- bytes the string functions it calls are given or make (a hundredth each). Twice the
      -- answer may take twice the steps, not four times. The shapes that hold a line's start
      -- back (a run of blanks, of digits, of #) or a line whole (code) are the ones that could
      -- cost the answer's length at each byte.
      local shapes = {
        function(n) return ("- an item that goes on\n"):rep(n / 23); end,
        function(n) return "```\n" .. ("x"):rep(n) .. "\n```\n"; end,
        function(n) return (" "):rep(n) .. "x\n"; end,
        function(n) return ("1"):rep(n) .. ". x\n"; end,
        function(n) return ("#"):rep(n) .. " x\n"; end,
        function(n) return ("\n"):rep(n); end,
        -- inline marks: a run of backticks, a code span and a bold held to the line's end
        function(n) return ("`"):rep(n) .. "\n"; end,
        function(n) return "`" .. ("x"):rep(n) .. "\n"; end,
        function(n) return "**" .. ("x `y` *"):rep(n / 7) .. "\n"; end,
        -- a link's text and URL, an autolink, escapes and italic held to the line's end
        function(n) return "[" .. ("x _y_ "):rep(n / 6) .. "](" .. ("u"):rep(n) .. "\n"; end,
        function(n) return "<" .. ("u"):rep(n) .. "\n"; end,
        function(n) return ("\\*"):rep(n / 2) .. "\n"; end,
        function(n) return ("_a [b](c) "):rep(n / 10) .. "\n"; end,
        -- a table's rows, held until it ends (given as typed past MAX_HELD_LINE_BYTES), a row of
        -- many cells, of blanks, and lines of | that are never a table
        function(n) return "| a | b |\n|---|---|\n" .. ("| x | `y` |\n"):rep(n / 12); end,
        function(n) return "| a |\n" .. ("|x"):rep(n / 2) .. "\n"; end,
        function(n) return "|" .. (" "):rep(n) .. "|\n"; end,
        function(n) return ("|\n"):rep(n / 2); end,
        -- a header of many columns, each row of the body that lacks them all
        function(n) return ("|x"):rep(n / 8) .. "|\n" .. ("|-"):rep(n / 8) .. "|\n" .. ("|\n"):rep(n / 4); end,
        -- (n / 16 rows, each as wide as the header: a row costs 32 cells where another shape's
        -- line costs one, and the measure's time is the spec's)
        function(n)
          local columns = lib.MAX_TABLE_COLUMNS;
          return ("|x"):rep(columns) .. "|\n" .. ("|-"):rep(columns) .. "|\n" .. ("|\n"):rep(n / 16);
        end,
      };
      -- A resume each YIELD_EVERY steps of the measure, its hook yielding (as a hook may in CC):
      -- CC's limit on a resume is wall time, which a loaded machine (and a -race build)
      -- stretches past a whole answer's, and past the reader's laying out a table at its end,
      -- one call however long the table.
      local function yield()
        os.queueEvent("answer_reader_spec");
        os.pullEvent("answer_reader_spec");
      end
      local YIELD_EVERY = 1000;
      local function steps(answer)
        local measuring = coroutine.running();
        local count, hooked = 0, 0;
        -- each library function the reader calls, counted by the bytes of the string it is
        -- given or makes, in the measuring coroutine alone (not whatever runs while it yields);
        -- the wrappers keep to a few instructions, a measure's cost being the hook's steps
        local counted = {
          { string, "find", "given" }, { string, "match", "given" }, { string, "gsub", "given" },
          { string, "sub", "made" }, { table, "concat", "made" },
        };
        for _, c in ipairs(counted) do
          local module, name = c[1], c[2];
          local f = module[name];
          c.real = f;
          if c[3] == "given" then
            module[name] = function(text, ...)
              if coroutine.running() == measuring then
                count = count + #text / 100;
              end
              return f(text, ...);
            end;
          else
            module[name] = function(...)
              local made = f(...);
              if coroutine.running() == measuring then
                count = count + #made / 100;
              end
              return made;
            end;
          end
        end
        local sub = counted[4].real;
        local reader = lib.newAnswerReader({
          line = function() end, text = function() end, lineEnd = function() end,
          code = function() end, blank = function() end, table = function() end,
        });
        debug.sethook(function()
          count = count + 1;
          hooked = hooked + 1;
          if hooked % YIELD_EVERY == 0 then
            yield();
          end
        end, "", 100);
        local ok, err = pcall(function()
          for i = 1, #answer do
            reader.add(sub(answer, i, i));
          end
          reader.finish();
        end);
        debug.sethook();
        for _, c in ipairs(counted) do
          c[1][c[2]] = c.real;
        end
        if not ok then
          error(err, 0);
        end
        return count;
      end
      for i, shape in ipairs(shapes) do
        yield();
        local once = steps(shape(4 * 1024));
        yield();
        local twice = steps(shape(8 * 1024));
        if twice > 2.5 * once then
          fail("shape " .. i .. ": " .. once .. " steps for 4 KiB, " .. twice .. " for 8 KiB");
        end
      end
    end);
  end);

  describe("tableLines", function()
    -- Cells of plain text as tableLines takes them; "`x`" is a piece in the colour "code".
    local function cells(...)
      local row = {};
      for i, cell in ipairs({ ... }) do
        local code = cell:match("^`(.*)`$");
        row[i] = cell == "" and {} or { code and { code, "code" } or { cell } };
      end
      return row;
    end
    -- The lines as text, each line's hang after a "@" when it has one.
    local function shown(lines)
      local found = {};
      for i, line in ipairs(lines) do
        local parts = {};
        for j, piece in ipairs(line.pieces) do
          parts[j] = piece[1];
        end
        found[i] = table.concat(parts) .. (line.hang and "@" .. line.hang or "");
      end
      return found;
    end
    local header = cells("side", "what it does", "n");
    local rows = { cells("left", "`door open`", "1"), cells("back", "reads the lever", "12") };

    it("lays out a table that fits in columns, its header underlined, each column aligned as its delimiter says", function()
      expect(shown(lib.tableLines(header, rows, { false, "center", "right" }, 51))):same({
        "side   what it does     n",
        "----  ---------------  --",
        "left     door open      1",
        "back  reads the lever  12",
      });
      -- a piece keeps its colour, and a row's missing cell and an empty one take only their room
      local lines = lib.tableLines(cells("a", "b", "c"), { cells("`x`"), cells("", "", "z") }, { false, false, false }, 51);
      expect(shown(lines)):same({ "a  b  c", "-  -  -", "x", "      z" });
      expect(lines[3].pieces[1]):same({ "x", "code" });
      -- exactly the width fits; where only one blank between columns fits, they are one apart
      expect(#shown(lib.tableLines(header, rows, {}, 25))[4]):eq(25);
      expect(shown(lib.tableLines(header, rows, { false, "center", "right" }, 23))):same({
        "side  what it does    n",
        "---- --------------- --",
        "left    door open     1",
        "back reads the lever 12",
      });
    end);

    it("shows a table too wide for the screen as a line a cell, name: value, its wrapped rows under the value", function()
      expect(shown(lib.tableLines(header, rows, { false, "center", "right" }, 22))):same({
        "side: left@6", "what it does: door open@11", "n: 1@3", "",
        "side: back@6", "what it does: reads the lever@11", "n: 12@3",
      });
      -- a cell of no header shows its value alone, an empty value its name alone; no line ends in a blank
      expect(shown(lib.tableLines(cells("", "long header"), { cells("xxxx", "") }, {}, 14))):same({ "xxxx", "long header:@7" });
      -- a name longer than a row: its rest and the value's rows go on two columns in, where
      -- under the value the name's rest read as a cell of its own ("computer: the" / "main")
      expect(shown(lib.tableLines(cells("side", "notes on this side of the computer"), { cells("left", "the main door") }, {},
        26))):same({ "side: left@6", "notes on this side of the computer: the main door@2" });
      -- a table with no body: its header's cells, a line each
      expect(shown(lib.tableLines(cells("aaaaaa", "bbbbbb"), {}, {}, 10))):same({ "aaaaaa", "bbbbbb" });
    end);
  end);

  describe("lineChanges", function()
    -- Lines "line 1" .. "line n", joined, ending in a line break; edits[i] replaces line i.
    local function numbered(n, edits)
      local lines = {};
      for i = 1, n do
        lines[i] = (edits or {})[i] or ("line " .. i);
      end
      return table.concat(lines, "\n") .. "\n";
    end

    it("shows a line edited in a long text with its context and line numbers, the rest left out", function()
      local rows, removed, added = lib.lineChanges(numbered(100), numbered(100, { [50] = "new 50" }), 2);
      expect(rows):same({
        { skipped = 47 },
        { mark = " ", line = 48, text = "line 48" },
        { mark = " ", line = 49, text = "line 49" },
        { mark = "-", line = 50, text = "line 50" },
        { mark = "+", line = 50, text = "new 50" },
        { mark = " ", line = 51, text = "line 51" },
        { mark = " ", line = 52, text = "line 52" },
        { skipped = 48 },
      });
      expect({ removed, added }):same({ 1, 1 });
    end);

    it("shows lines edited in place far apart as two changes, numbered in the new text", function()
      local rows = lib.lineChanges(numbered(30), numbered(30, { [2] = "two", [3] = "three", [25] = "x" }), 1);
      expect(rows):same({
        { mark = " ", line = 1, text = "line 1" },
        { mark = "-", line = 2, text = "line 2" },
        { mark = "-", line = 3, text = "line 3" },
        { mark = "+", line = 2, text = "two" },
        { mark = "+", line = 3, text = "three" },
        { mark = " ", line = 4, text = "line 4" },
        { skipped = 19 },
        { mark = " ", line = 24, text = "line 24" },
        { mark = "-", line = 25, text = "line 25" },
        { mark = "+", line = 25, text = "x" },
        { mark = " ", line = 26, text = "line 26" },
        { skipped = 4 },
      });
    end);

    it("shows lines added and removed, numbered in the old text and the new", function()
      local rows, removed, added = lib.lineChanges("a\nb\nc\nd\n", "a\nb\nX\nY\nZ\nd\n", 1);
      expect(rows):same({
        { skipped = 1 },
        { mark = " ", line = 2, text = "b" },
        { mark = "-", line = 3, text = "c" },
        { mark = "+", line = 3, text = "X" },
        { mark = "+", line = 4, text = "Y" },
        { mark = "+", line = 5, text = "Z" },
        { mark = " ", line = 6, text = "d" },
      });
      expect({ removed, added }):same({ 1, 3 });
      rows, removed, added = lib.lineChanges("a\nb\nc", "a\nc", 3);
      expect(rows):same({
        { mark = " ", line = 1, text = "a" },
        { mark = "-", line = 2, text = "b" },
        { mark = " ", line = 2, text = "c", unbroken = true },
      });
      expect({ removed, added }):same({ 1, 0 });
    end);

    it("shows a line added and one edited far apart as two changes, each with its context", function()
      local old = numbered(300);
      local new = numbered(300, { [10] = "line 10\ninserted", [150] = "changed" });
      local rows, removed, added = lib.lineChanges(old, new, 1);
      expect(rows):same({
        { skipped = 9 },
        { mark = " ", line = 10, text = "line 10" },
        { mark = "+", line = 11, text = "inserted" },
        { mark = " ", line = 12, text = "line 11" },
        { skipped = 137 },
        { mark = " ", line = 150, text = "line 149" },
        { mark = "-", line = 150, text = "line 150" },
        { mark = "+", line = 151, text = "changed" },
        { mark = " ", line = 152, text = "line 151" },
        { skipped = 149 },
      });
      expect({ removed, added }):same({ 1, 2 });
    end);

    it("puts the lines removed before those added where they change together", function()
      local rows = lib.lineChanges("a\nb\nc\nd\ne\n", "a\nB\nc\nD\nX\ne\n", 0);
      expect(rows):same({
        { skipped = 1 },
        { mark = "-", line = 2, text = "b" },
        { mark = "+", line = 2, text = "B" },
        { skipped = 1 },
        { mark = "-", line = 4, text = "d" },
        { mark = "+", line = 4, text = "D" },
        { mark = "+", line = 5, text = "X" },
        { skipped = 1 },
      });
    end);

    it("compares lines at their place when they change in too many places to look for the fewest", function()
      local edits = {};
      for i = 1, 200, 2 do
        edits[i] = "other " .. i;
      end
      local rows, removed, added = lib.lineChanges(numbered(200), numbered(200, edits), 0);
      expect({ removed, added }):same({ 100, 100 });
      expect(rows[1]):same({ mark = "-", line = 1, text = "line 1" });
      expect(rows[2]):same({ mark = "+", line = 1, text = "other 1" });
      expect(rows[3]):same({ skipped = 1 });
    end);

    it("shows nothing for the same text, and a change of the final line break as one of its line", function()
      local rows, removed, added = lib.lineChanges(numbered(5), numbered(5), 3);
      expect(rows):same({});
      expect({ removed, added }):same({ 0, 0 });
      rows = lib.lineChanges("a\nb", "a\nb\n", 3);
      expect(rows):same({
        { mark = " ", line = 1, text = "a" },
        { mark = "-", line = 2, text = "b", unbroken = true },
        { mark = "+", line = 2, text = "b" },
      });
      rows = lib.lineChanges("", "new\nfile", 3);
      expect(rows):same({
        { mark = "+", line = 1, text = "new" },
        { mark = "+", line = 2, text = "file", unbroken = true },
      });
      rows = lib.lineChanges("a\n\nb\n", "a\n\n", 3);
      expect(rows):same({
        { mark = " ", line = 1, text = "a" },
        { mark = " ", line = 2, text = "" },
        { mark = "-", line = 3, text = "b" },
      });
    end);

    it("costs a few passes over a long file, however many lines change", function()
      -- 20000 lines each way, all different and of different counts: a line-by-line match of
      -- both would compare 400 million pairs and never end within CC's time limit; the search
      -- for the fewest changes gives up after MAX_LINE_EDITS, and all are removed and added.
      local rows, removed, added = lib.lineChanges(numbered(20000), numbered(20001, setmetatable({}, {
        __index = function(_, i) return "other " .. i; end,
      })), 2);
      expect({ removed, added }):same({ 20000, 20001 });
      expect(#rows):eq(40001);
    end);

    -- A seeded property check over a few hundred small random texts of a tiny alphabet of
    -- lines, with and without a final line break and with \r\n: the rows, their left-out
    -- lines filled back in, give the new text (" " and "+") and the old (" " and "-"), each
    -- numbered where it stands, and within MAX_LINE_EDITS the lines removed and added are the
    -- fewest there are (a plain O(n x m) longest common subsequence, fine for tiny texts).
    describe("on random texts", function()
      local function lines(text)
        local found = {};
        for line in text:gmatch("[^\n]*\n") do
          found[#found + 1] = line;
        end
        found[#found + 1] = text:match("[^\n]+$");
        return found;
      end

      local function commonLines(a, b)
        local longest = {};
        for i = 0, #a do
          longest[i] = { [0] = 0 };
        end
        for j = 0, #b do
          longest[0][j] = 0;
        end
        for i = 1, #a do
          for j = 1, #b do
            longest[i][j] = a[i] == b[j] and longest[i - 1][j - 1] + 1
              or math.max(longest[i - 1][j], longest[i][j - 1]);
          end
        end
        return longest[#a][#b];
      end

      local alphabet = { "a", "b", "c", "", "a\r" };
      local function randomText(most)
        local parts = {};
        for i = 1, math.random(0, most) do
          parts[i] = alphabet[math.random(#alphabet)];
        end
        local text = table.concat(parts, math.random(4) == 1 and "\r\n" or "\n");
        if #parts > 0 and math.random(2) == 1 then
          text = text .. "\n";
        end
        return text;
      end

      -- The lines of `side` ("new": " " and "+"; "old": " " and "-") the rows give, each left
      -- out line filled in from that text, checking each row's number is where it stands.
      local function rebuilt(rows, text, side)
        local shown, out = {}, {};
        for i, line in ipairs(lines(text)) do
          shown[i] = line:gsub("\n$", "");
        end
        local kept = side == "new" and "+" or "-";
        for _, row in ipairs(rows) do
          if row.skipped then
            for _ = 1, row.skipped do
              local next = #out + 1;
              out[next] = shown[next];
            end
          elseif row.mark == kept or row.mark == " " then
            if row.mark == kept or side == "new" then
              expect(row.line):eq(#out + 1);
            end
            out[#out + 1] = row.text;
          end
        end
        return out, shown;
      end

      it("give back both texts, with the fewest lines removed and added (up to 64)", function()
        math.randomseed(515);
        for round = 1, 500 do
          if round % 25 == 0 then
            -- A resume of its own every 25 rounds: one resume may run 7 s in CC ("Too long
            -- without yielding"), and all 500 took more than TestLuaSpecs' 30 s in a -race
            -- build on a loaded machine.
            os.queueEvent("line_changes_round");
            os.pullEvent("line_changes_round");
          end
          -- The last hundred are longer, some past MAX_LINE_EDITS, where only the fallbacks run.
          local most = round <= 400 and 8 or 60;
          local old, new = randomText(most), randomText(most);
          if math.random(3) == 1 then
            new = old .. (math.random(2) == 1 and "\n" or "b");
          end
          local context = math.random(0, 3);
          local rows, removed, added = lib.lineChanges(old, new, context);
          local case = ("%q -> %q, context %d"):format(old, new, context);
          local got, want = rebuilt(rows, new, "new");
          if #rows > 0 or old ~= new then
            expect({ case, got }):same({ case, want });
          end
          got, want = rebuilt(rows, old, "old");
          if #rows > 0 or old ~= new then
            expect({ case, got }):same({ case, want });
          end
          local a, b = lines(old), lines(new);
          local fewest = #a + #b - 2 * commonLines(a, b);
          if fewest <= 64 then
            expect({ case, removed + added }):same({ case, fewest });
          end
        end
      end);
    end);
  end);

  describe("noAgentLine", function()
    it("says whose fix a gateway without an agent is, in the gateway's words as one line", function()
      expect(lib.noAgentLine({ code = "ai_disabled", message = "the agent is off: its operator must set --ai-model" }))
        :eq("The agent is off: its operator must set --ai-model");
      expect(lib.noAgentLine({ code = "ai_disabled", message = "off\nfiles: write" })):eq("Off files: write");
      expect(lib.noAgentLine({ code = "ai_disabled", message = "" })):eq("The agent is off: its operator must set --ai-model");
      expect(lib.noAgentLine({ code = "ai_disabled" })):eq("The agent is off: its operator must set --ai-model");
      expect(lib.noAgentLine({ code = "unknown_type", message = "no handler for ai.poll" }))
        :eq("This gateway has no agent (it is older than this client); its operator must upgrade it");
      expect(lib.noAgentLine({ code = "unknown_turn", message = "no turn" })):eq(nil);
      expect(lib.noAgentLine(nil)):eq(nil);
    end);
  end);
end);
