-- Specs for programs/ai.lua: what the player sees. The program runs for real (loadfile with
-- its own environment) on an invisible window whose rows are read back; the daemon and the
-- gateway are played by a stubbed os.queueEvent answering status requests and sends, and the
-- player by a read() that types the given lines and an os.pullEvent that presses a key at
-- each "Press any key".

local lib = require('/apis/libsandbox');

local PROGRAM = "/programs/ai.lua";
local URL = "ws://127.0.0.1:4444";
local MORE = "Press any key to continue";
-- Typed instead of a line: the player presses Ctrl-T at the prompt.
local CTRL_T = {};
-- Typed as a line: the player types nothing (read waits, and fails the program if it is still
-- waited for after many turns of the computer's events).
local NO_ANSWER = {};
-- Answered instead of a poll: the player presses Ctrl-T while the answer streams.
local TERMINATE = {};
-- Given as a reply: the gateway answers nothing (its probe waits on an opencode starting).
local NO_REPLY = {};

-- Makes every timer fire at once, each with an id of its own from base on: ids drawn at
-- random from one range collided now and then (a test starts tens of timers), and a poll's
-- timer then read as the turn's deadline ("The gateway did not answer in time").
local function timersAtOnce(base)
  local nextId = base;
  stub(os, "startTimer", function()
    nextId = nextId + 1;
    os.queueEvent("timer", nextId);
    return nextId;
  end);
end

local function text(seq, piece) return { seq = seq, kind = "text", text = piece }; end
local function done(seq, reason) return { seq = seq, kind = "done", reason = reason or "stop" }; end

-- Runs the program with args on a width x height window. opts.polls: the ai.poll replies in
-- turn (a list of events, or {err = {code, message}}, or TERMINATE, or a function of the
-- screen's rows returning one of those); opts.replies[type]: the
-- answer to other types ({ok, payload, err}, or a function of the record returning one);
-- opts.typed: read()'s lines; opts.settings;
-- opts.terminateAtPause: the "Press any key" (1 for the first) the player answers with Ctrl-T;
-- opts.pressedAtPause[n]: what the computer gets at the nth instead of a space's key, in
-- order: {event, key} or "terminate"; opts.queuedAtPause[n]: events put in the computer's
-- queue behind that key, as CC queues a printable key's char and its key_up;
-- opts.noDaemon, or opts.statuses (the daemon's statuses in turn, the last repeating; a
-- function of the record returns one when asked), and opts.afterRetry (the same, once the
-- program asked the daemon to try now: lib.retryNow).
-- Returns ok, error, the window's rows, and a record of what was sent.
local function run(args, opts)
  opts = opts or {};
  local width, height = opts.width or 30, opts.height or 8;
  local win = window.create(term.current(), 1, 1, width, height, false);
  if opts.commandLine ~= nil then
    -- the shell's command line on a full screen: the row above the bottom, where the cursor is
    win.setCursorPos(1, height - 1);
    win.write(opts.commandLine);
    win.setCursorPos(1, height);
  end
  local realQueue = os.queueEvent;
  local record = { sends = {}, pauses = {}, reads = {}, turns = 0, printed = {} };
  local polls, pollIndex = opts.polls or {}, 0;
  local values = opts.settings or { ["sandbox.url"] = URL };
  stub(settings, "get", function(name, default)
    if values[name] == nil then
      return default;
    end
    return values[name];
  end);
  stub(settings, "getNames", function()
    local names = {};
    for name in pairs(values) do
      names[#names + 1] = name;
    end
    table.sort(names);
    return names;
  end);

  record.cursorPos = function() return win.getCursorPos(); end;
  local function rows()
    local found = {};
    for y = 1, height do
      found[y] = (win.getLine(y)):gsub("%s+$", "");
    end
    return found;
  end
  record.rows = rows;
  -- Row y's text colours as blit characters (0 white, e red, d green, 8 light grey).
  record.colours = function(y) return select(2, win.getLine(y)); end;
  -- Row y's background colours as blit characters: with opts.background set after the window
  -- is cleared (black, "f"), each cell the program wrote shows it, a blank too.
  record.backgrounds = function(y) return select(3, win.getLine(y)); end;
  if opts.background ~= nil then
    win.setBackgroundColour(opts.background);
  end
  if opts.basic then
    win.isColour = function() return false; end;
    win.isColor = win.isColour;
  end

  local statuses, answered = opts.statuses, 0;
  record.retries = 0;
  stub(os, "queueEvent", function(name, ...)
    local params = table.pack(...);
    if name == lib.EVENT_RETRY_NOW then
      record.retries = record.retries + 1;
      record.retriedAfter = record.statusRequests or 0;
      if opts.afterRetry ~= nil then
        statuses, answered = opts.afterRetry, 0;
      end
    elseif name == lib.EVENT_STATUS_REQUEST then
      record.statusRequests = (record.statusRequests or 0) + 1;
      answered = answered + 1;
      if statuses ~= nil then
        local status = statuses[math.min(answered, #statuses)];
        if type(status) == "function" then
          status = status(record);
        end
        realQueue(lib.EVENT_STATUS, params[1], status);
      elseif not opts.noDaemon then
        realQueue(lib.EVENT_STATUS, params[1], { url = URL, connected = true, state = "connected" });
      end
    elseif name == lib.EVENT_SEND then
      local msgType, payload = params[2], params[3];
      record.sends[#record.sends + 1] = { type = msgType, payload = payload };
      if msgType == "ai.poll" and payload.turnId == "" then
        -- ai alone asks whether the gateway has an agent: opts.probe answers (else an agent's
        -- unknown_turn), apart from the scripted polls.
        record.probes = (record.probes or 0) + 1;
        local err = opts.probe or { code = "unknown_turn", message = "the gateway knows no turn \"\" of this computer" };
        realQueue(lib.EVENT_REPLY, params[1], false, nil, err);
      elseif msgType == "ai.poll" then
        pollIndex = pollIndex + 1;
        local reply = polls[pollIndex];
        if type(reply) == "function" then
          reply = reply(rows());
        end
        if reply == TERMINATE then
          realQueue("terminate");
        elseif reply == nil then
          realQueue(lib.EVENT_REPLY, params[1], false, nil, { code = "unknown_turn", message = "no more polls scripted" });
        elseif reply.err ~= nil then
          realQueue(lib.EVENT_REPLY, params[1], false, nil, reply.err);
        else
          realQueue(lib.EVENT_REPLY, params[1], true, { events = reply, done = false });
        end
      else
        if msgType == "ai.ask" then
          record.turns = record.turns + 1;
        end
        local answer = (opts.replies or {})[msgType] or { true, msgType == "ai.ask" and { turnId = "t" .. record.turns } or {} };
        if type(answer) == "function" then
          answer = answer(record);
        end
        if answer ~= NO_REPLY then
          realQueue(lib.EVENT_REPLY, params[1], answer[1], answer[2], answer[3]);
        end
      end
    else
      realQueue(name, ...);
    end
  end);

  -- Yields to the computer once, as a key wait does on CC (the key comes in a later resume),
  -- keeping every other event that arrives meanwhile in its order. CC limits one resume by
  -- the wall clock: an answer paged without a yield would run in one resume, and the spec
  -- would pass or fail by the machine's speed.
  local function yieldOnce()
    realQueue("ai_spec_yield");
    local held = {};
    while true do
      local event = table.pack(os.pullEventRaw());
      if event[1] == "ai_spec_yield" then
        break;
      end
      held[#held + 1] = event;
    end
    for _, event in ipairs(held) do
      realQueue(table.unpack(event, 1, event.n));
    end
  end

  local function newline()
    local _, y = win.getCursorPos();
    if y >= height then
      win.scroll(1);
      win.setCursorPos(1, height);
    else
      win.setCursorPos(1, y + 1);
    end
  end
  local typed = opts.typed or {};
  local pressed = {}; -- what the player presses at the "Press any key" on the screen, not taken yet
  local env = {
    term = win,
    write = function(s) win.write(s); end,
    print = function(...)
      local parts = table.pack(...);
      for i = 1, parts.n do parts[i] = tostring(parts[i]); end
      local line = table.concat(parts, "\t", 1, parts.n);
      record.printed[#record.printed + 1] = line;
      win.write(line);
      newline();
    end,
    read = function(_, history)
      record.reads[#record.reads + 1] = { history = history, row = rows()[select(2, win.getCursorPos())] };
      local line = table.remove(typed, 1);
      if line == CTRL_T or line == nil then
        error("Terminated", 0);
      elseif line == NO_ANSWER then
        for _ = 1, 1000 do
          yieldOnce();
        end
        error("the player was waited for past the gateway's refusal", 0);
      end
      win.write(line);
      newline();
      return line;
    end,
    os = setmetatable({
      -- The pager's wait (the program waits for nothing else with os.pullEvent): a new
      -- "Press any key" once the events pressed at the one before are all taken.
      pullEvent = function(filter)
        if filter ~= "key" and filter ~= nil then
          return os.pullEvent(filter);
        end
        if #pressed == 0 then
          record.pauses[#record.pauses + 1] = rows();
          record.blinking = win.getCursorBlink();
          if #record.pauses == opts.terminateAtPause then
            error("Terminated", 0); -- the player holds Ctrl-T at this "Press any key"
          end
          yieldOnce();
          pressed = { table.unpack((opts.pressedAtPause or {})[#record.pauses] or { { "key", keys.space } }) };
          for _, event in ipairs((opts.queuedAtPause or {})[#record.pauses] or {}) do
            realQueue(table.unpack(event));
          end
        end
        while #pressed > 0 do
          local event = table.remove(pressed, 1);
          if event == "terminate" then
            error("Terminated", 0);
          elseif filter == nil or event[1] == filter then
            return table.unpack(event);
          end
        end
        error("the pager waited for a key past those pressed", 0);
      end,
    }, { __index = os }),
    require = require,
  };
  setmetatable(env, { __index = _G });
  local program, loadErr = loadfile(PROGRAM, nil, env);
  if program == nil then
    fail("cannot load " .. PROGRAM .. ": " .. tostring(loadErr));
  end
  local ok, err = pcall(program, table.unpack(args));
  return ok, err, rows(), record;
end

local function sent(record, msgType)
  local found = {};
  for _, send in ipairs(record.sends) do
    if send.type == msgType then
      found[#found + 1] = send.payload;
    end
  end
  return found;
end

local function expectSuccess(ok, err)
  if not ok then
    fail("the program failed: " .. tostring(err));
  end
end

-- A turn that did not answer (it failed, or the player stopped it) fails the program with an
-- empty error: its line is on the screen already, the shell prints no empty error, and
-- shell.run("ai", ...) returns false.
local function expectFailedTurn(ok, err)
  expect(ok):eq(false);
  expect(err):eq("");
end

local CONFIRM = { seq = 1, kind = "confirm", confirmId = "c1", action = "write", tool = "write_file", detail = "/door.lua", bytes = 312 };

describe("ai command", function()
  describe("ai <question>", function()
    it("asks the whole question and prints the answer as it streams, word-wrapped", function()
      local ok, err, rows, record = run({ "open", "the", "door" }, {
        width = 20,
        polls = {
          { text(1, "The door is "), text(2, "ope") },
          {},
          { text(3, "n now; a verylongwordthatdoesnotfit here.\nBye"), done(4) },
        },
      });
      expectSuccess(ok, err);
      expect(sent(record, "ai.ask")[1].prompt):eq("open the door");
      expect(sent(record, "ai.ask")[1].session):eq("main");
      expect(sent(record, "ai.ask")[1].screen):same({ width = 20, height = 8 });
      -- ai lays out the answer's Markdown, and says so: the agent is told to use fences
      expect(sent(record, "ai.ask")[1].markdown):eq(true);
      expect(rows):same({
        "The door is open",
        "now; a",
        "verylongwordthatdoes",
        "notfit here.",
        "Bye",
        "", "", "",
      });
    end);

    it("shows Thinking... at once and takes it away with the first output", function()
      local atFirstPoll;
      local ok, err, rows = run({ "hi" }, {
        polls = {
          function(screen) atFirstPoll = screen[1]; return { { seq = 1, kind = "retry", message = "rate limited", attempt = 1 } }; end,
          { text(2, "Hello"), done(3) },
        },
      });
      expectSuccess(ok, err);
      expect(atFirstPoll):eq("Thinking... (Q stops)");
      expect(table.concat(rows, "|")):str_match("^The agent's model failed on|the gateway's host, retrying|%(attempt 1%): rate limited|Hello|");
    end);

    it("says the agent is starting while opencode loads this computer, until the first output", function()
      -- opencode 1.18.33 loads a computer's instance on its first question after it started,
      -- 8 to 17 s, while the screen said only Thinking...; the gateway's starting event says why.
      for _, case in ipairs({
        { width = 51, notice = "Starting the agent for this computer... (Q stops)" },
        { width = 26, notice = "Starting up... (Q stops)" },
      }) do
        local shown;
        local ok, err, rows = run({ "hi" }, {
          width = case.width,
          polls = {
            { { seq = 1, kind = "starting", message = "the agent is starting for this computer: its first question takes longer" } },
            function(screen) shown = screen[1]; return { text(2, "Hello"), done(3) }; end,
          },
        });
        expectSuccess(ok, err);
        expect(shown):eq(case.notice);
        expect(rows[1]):eq("Hello");
        expect(rows[2]):eq("");
      end
    end);

    it("says a provider's failure once while opencode retries it, and Q still stops the turn", function()
      local reason = "Cannot connect to API: Unable to connect. Is the computer able to access the url?";
      local afterRetry;
      local ok, err, rows = run({ "hi" }, {
        width = 26, height = 15,
        polls = {
          { { seq = 1, kind = "retry", message = reason, attempt = 1 } },
          function(screen)
            afterRetry = screen;
            return { { seq = 2, kind = "retry", message = reason, attempt = 2 }, { seq = 3, kind = "retry", message = reason, attempt = 3 },
              { seq = 4, kind = "retry", message = "rate limited", attempt = 4 } };
          end,
          { text(5, "Hello"), done(6) },
        },
      });
      expectSuccess(ok, err);
      expect(afterRetry[8]):eq("Thinking... (Q stops)");
      -- The provider's "the computer" is opencode's host: the line says whose failure it is,
      -- and where it happened.
      expect(rows):same({
        "The agent's model failed", "on the gateway's host,", "retrying (attempt 1):", "Cannot connect to API:",
        "Unable to connect. Is the", "computer able to access", "the url?", "Retrying (attempt 2)", "Retrying (attempt 3)",
        "The agent's model failed", "on the gateway's host,", "retrying (attempt 4): rate", "limited", "Hello", "",
      });
    end);

    it("shows the word held back when the answer pauses", function()
      local seen;
      local ok, err, rows = run({ "hi" }, {
        width = 30,
        polls = {
          { text(1, "Thinking hard") },
          function(screen) seen = screen[1]; return { text(2, "er now"), done(3) }; end,
        },
      });
      expectSuccess(ok, err);
      expect(seen):eq("Thinking hard");
      expect(rows[1]):eq("Thinking harder now");
    end);

    it("moves a word shown at a pause to the next row whole when its rest does not fit this one", function()
      -- opencode streams a word in tokens, often across two polls: the first part, shown at
      -- the wait, stayed at the row's end and the rest went on at the next ("stand-in m" / "odel.")
      local seen;
      local ok, err, rows, record = run({ "hi" }, {
        width = 26,
        polls = {
          { text(1, "Intro\nHello from the stand-in `m`o") },
          function(screen) seen = screen[2]; return { text(2, "d") }; end,
          { text(3, "el. It `re`") },
          { text(4, "ads the `door` state") },
          { text(5, " and ends " .. ("x"):rep(20)) },
          { text(6, ("y"):rep(10) .. " end"), done(7) },
        },
      });
      expectSuccess(ok, err);
      expect(seen):eq("Hello from the stand-in mo");
      expect({ table.unpack(rows, 1, 6) }):same({ "Intro", "Hello from the stand-in", "model. It reads the door",
        "state and ends", ("x"):rep(20) .. ("y"):rep(6), "yyyy end" });
      -- the word's pieces keep their colours where it is written again (its code's light
      -- blue), and where it goes on ("re" of "reads")
      expect(record.colours(3):sub(1, 6)):eq("300000");
      expect(record.colours(3):sub(11, 15)):eq("33000");
      -- a word longer than a row is cut at the width where its parts meet too
      ok, err, rows = run({ "hi" }, {
        width = 26,
        polls = { { text(1, "Word: " .. ("a"):rep(30)) }, { text(2, ("b"):rep(24) .. " end"), done(3) } },
      });
      expectSuccess(ok, err);
      expect({ table.unpack(rows, 1, 4) }):same({ "Word:", ("a"):rep(26), ("a"):rep(4) .. ("b"):rep(22), "bb end" });
    end);

    -- An answer of twenty lines, line1 to line20: longer than the 8-row screens the pager's
    -- specs use.
    local function twentyLines()
      local lines = {};
      for i = 1, 20 do
        lines[#lines + 1] = "line" .. i .. "\n";
      end
      return table.concat(lines);
    end

    it("pages an answer longer than the screen", function()
      local ok, err, rows, record = run({ "count" }, {
        height = 8, commandLine = "> ai count",
        polls = { { text(1, twentyLines()), done(2) } },
      });
      expectSuccess(ok, err);
      expect(#record.pauses):eq(2);
      expect(record.blinking):eq(true);
      -- the command line still shown: the player sees what they asked
      expect(record.pauses[1]):same({ "> ai count", "line1", "line2", "line3", "line4", "line5", "line6", MORE });
      expect(record.pauses[2][1]):eq("line7");
      expect(record.pauses[2][8]):eq(MORE);
      expect(rows[7]):eq("line20");
    end);

    it("stops the first page while the question typed is still on the screen, on a computer and a pocket computer", function()
      -- the first "Press any key" came a row late: the shell's command line, or the question
      -- typed at ai>, had scrolled off the top, and the player no longer saw what they asked
      for _, size in ipairs({ { 51, 19 }, { 26, 20 } }) do
        local width, height = size[1], size[2];
        local ok, err, _, record = run({ "count" }, {
          width = width, height = height, commandLine = "> ai count",
          polls = { { text(1, twentyLines() .. twentyLines()), done(2) } },
        });
        expectSuccess(ok, err);
        expect(record.pauses[1][1]):eq("> ai count");
        expect(record.pauses[1][2]):eq("line1");
        expect(record.pauses[1][height - 1]):eq("line" .. (height - 2));
        expect(record.pauses[1][height]):eq(MORE);
        -- a later page goes on from the row the first stopped at, a screenful less one
        expect(record.pauses[2][1]):eq("line" .. (height - 1));
        expect(record.pauses[2][height]):eq(MORE);

        ok, err, _, record = run({}, {
          width = width, height = height, commandLine = "> ai", typed = { "count", "exit" },
          polls = { { text(1, twentyLines() .. twentyLines()), done(2) } },
        });
        expectSuccess(ok, err);
        expect(record.pauses[1][1]):eq("ai> count");
        expect(record.pauses[1][2]):eq("line1");
        expect(record.pauses[1][height]):eq(MORE);
      end
    end);

    it("writes a word of 300 KB, cut at the width, without running too long", function()
      -- A base64 blob in an answer: built a byte at a time, it cost minutes of copying and ended
      -- the program with "Too long without yielding".
      local digits = "0123456789";
      local blob = digits:rep(30000);
      local ok, err, rows, record = run({ "blob" }, {
        width = 50, height = 8,
        polls = { { text(1, blob:sub(1, 100000)), text(2, blob:sub(100001) .. " end"), done(3) } },
      });
      expectSuccess(ok, err);
      expect(#record.pauses):eq(math.floor(#blob / 50 / 7));
      expect(rows):same({ digits:rep(5), digits:rep(5), digits:rep(5), digits:rep(5), digits:rep(5), digits:rep(5), "end", "" });
    end);

    it("breaks a URL longer than a line before its separators, not at the width", function()
      local url = "http://192.168.100.200:4444/trapos/install";
      local ok, err, rows = run({ "link" }, {
        width = 26,
        polls = { { text(1, "Run: wget run " .. url .. " pw"), done(2) } },
      });
      expectSuccess(ok, err);
      expect({ table.unpack(rows, 1, 4) }):same({ "Run: wget run", "http://192.168.100.200", ":4444/trapos/install pw", "" });
      -- the blank before a URL moved to the next row is not written at the end of its row (a
      -- transcript, or a screen whose background differs, showed it): each cell written takes
      -- the background colour, grey here, so a written blank shows as a "7" past the text
      local record;
      ok, err, rows, record = run({ "link" }, {
        width = 26, background = colours.grey,
        polls = { { text(1, "Then:\nRun: wget run " .. url .. " pw\n- wget run " .. url), done(2) } },
      });
      expectSuccess(ok, err);
      expect({ table.unpack(rows, 2, 7) }):same({ "Run: wget run", "http://192.168.100.200", ":4444/trapos/install pw",
        "- wget run", "  http://192.168.100.200", "  :4444/trapos/install" });
      expect(record.backgrounds(2)):eq(("7"):rep(#"Run: wget run") .. ("f"):rep(26 - #"Run: wget run"));
      expect(record.backgrounds(5)):eq(("7"):rep(#"- wget run") .. ("f"):rep(26 - #"- wget run"));
      -- any other word is still cut at the width
      ok, err, rows = run({ "blob" }, { width = 26, polls = { { text(1, "x " .. string.rep("y", 30)), done(2) } } });
      expectSuccess(ok, err);
      expect({ table.unpack(rows, 1, 4) }):same({ "x", string.rep("y", 26), "yyyy", "" });
    end);

    it("lays out a URL that came in two polls as it would have come whole", function()
      -- opencode streams a URL in tokens too: its first part, shown at the wait, began a row
      -- of its own, or its rest did, cut at the width ("https://tweaked.cc/module/" /
      -- "peripheral.html#v:find"), where the whole URL breaks before its "/" and ":".
      local cases = {
        { "See https://tweaked.cc/module/", "peripheral.html#v:find for more" },
        { "Docs: https://tweaked.cc/module/peripheral.html", "#v:find end" },
        { "Docs: https://tweaked.cc/module/peripheral.html", "#v:find/and/more/of/it/still/to/come end" },
        { "Intro\nhttps:/", "/tweaked.cc/module/peripheral.html#v:find" },
        { "- see https://tweaked.cc/mod", "ule/peripheral.html end" },
        { "Docs: https://tweaked.cc/module/per", "ipheral.html#v:fi", "nd/and/more/of/it end" },
      };
      for _, case in ipairs(cases) do
        local _, _, whole = run({ "link" }, { width = 26, polls = { { text(1, table.concat(case)), done(2) } } });
        local polls = {};
        for i, piece in ipairs(case) do
          polls[i] = { text(i, piece) };
        end
        table.insert(polls[#polls], done(#case + 1));
        local ok, err, rows = run({ "link" }, { width = 26, polls = polls });
        expectSuccess(ok, err);
        expect(rows):same(whole);
      end
      -- a word's first part that does not fit its row waits for its rest (with it, it may be
      -- a URL whose first part stays on this row), one that fits shows
      local seen;
      local ok, err, rows = run({ "link" }, {
        width = 26, polls = {
          { text(1, "See https://tweaked.cc/module/") },
          function(screen) seen = { screen[1], screen[2] }; return { text(2, "peripheral.html#v:find for more"), done(3) }; end,
        },
      });
      expectSuccess(ok, err);
      expect(seen):same({ "See", "" });
      expect({ table.unpack(rows, 1, 4) }):same({ "See https://tweaked.cc", "/module/peripheral.html#v", ":find for more", "" });
    end);

    it("takes the pager's notice away on Ctrl-T and says so at once", function()
      local ok, err, rows, record = run({ "count" }, {
        width = 51,
        height = 8, commandLine = "> ai count",
        terminateAtPause = 1,
        -- the second: the look at the turn at Ctrl-T, which still runs
        polls = { { text(1, twentyLines()) }, { text(2, "more") } },
      });
      expectFailedTurn(ok, err);
      expect(#record.pauses):eq(1); -- no second "Press any key" before the abort line
      expect(record.pauses[1][8]):eq(MORE);
      -- the word the page stopped before is not shown: the player stopped reading there (it
      -- came after the Ctrl-T, above the line saying the rest was not shown)
      expect(rows[6]):eq("line6");
      expect(rows[7]):eq("Aborted: the turn was stopped (Ctrl-T).");
      expect(sent(record, "ai.abort")):same({ { turnId = "t1" } });
      for _, row in ipairs(rows) do
        expect(row:find(MORE, 1, true)):eq(nil);
      end
    end);

    it("says on Ctrl-T while an answer all received is paged that its rest was not shown, stopping nothing", function()
      -- it said "Aborted: the turn was stopped (Ctrl-T).", of a turn that had ended
      local ok, err, rows, record = run({ "count" }, {
        width = 51,
        height = 8, commandLine = "> ai count",
        terminateAtPause = 1,
        polls = { { text(1, twentyLines()), done(2) } },
      });
      expectFailedTurn(ok, err);
      expect(#record.pauses):eq(1);
      expect(rows[6]):eq("line6"); -- and line7, where the page stopped, is the rest
      expect(rows[7]):eq("The rest of the answer was not shown (Ctrl-T).");
      expect(#sent(record, "ai.abort")):eq(0); -- the turn had ended: nothing to stop
      expect(#sent(record, "ai.poll")):eq(1); -- its end was in hand: nothing to look at
      for _, row in ipairs(rows) do
        expect(row:find(MORE, 1, true)):eq(nil);
      end
    end);

    it("takes a Ctrl-T held at a Press any key as a Ctrl-T, not as the key that turns the page", function()
      -- CC sends the Ctrl press as a key before the hold's terminate (CraftOS-PC and
      -- fakecraft the letter's too, Ctrl held): it turned the page, the next screenful
      -- showed, and in a conversation the terminate then left ai at its prompt.
      local ctrlT = {
        { { "key", keys.leftCtrl }, "terminate" },
        { { "key", keys.leftCtrl }, { "key", keys.t }, { "key_up", keys.t }, { "key_up", keys.leftCtrl }, "terminate" },
      };
      for _, held in ipairs(ctrlT) do
        local ok, err, rows, record = run({ "count" }, {
          width = 51,
          height = 8, commandLine = "> ai count",
          pressedAtPause = { held },
          polls = { { text(1, twentyLines()), done(2) } },
        });
        expectFailedTurn(ok, err);
        expect(#record.pauses):eq(1);
        expect(rows[6]):eq("line6");
        expect(rows[7]):eq("The rest of the answer was not shown (Ctrl-T).");
      end
      -- a key once Ctrl is up turns the page
      local ok, err, rows, record = run({ "count" }, {
        width = 51,
        height = 8, commandLine = "> ai count",
        pressedAtPause = { { { "key", keys.leftCtrl }, { "key_up", keys.leftCtrl }, { "key", keys.space } } },
        terminateAtPause = 2,
        polls = { { text(1, twentyLines()), done(2) } },
      });
      expectFailedTurn(ok, err);
      expect(#record.pauses):eq(2);
      expect(rows[6]):eq("line13");
    end);

    it("leaves nothing of the key that turned the page to what reads next", function()
      -- CC queues a printable key's char right behind its key: left in the queue, it was
      -- typed into what read next, the shell's prompt, the ai> question, or Allow? [y/N]'s
      -- answer, where a y that turned the last page of a write's content stood as the answer
      -- (played: "Allow? [y/N] y" before the player had typed anything).
      local y = { { "key", keys.y } };
      local itsChar = { { "char", "y" }, { "key_up", keys.y } };
      local ok, err, _, record = run({ "count" }, {
        width = 51,
        height = 8, commandLine = "> ai count",
        pressedAtPause = { y, y },
        queuedAtPause = { itsChar, itsChar },
        polls = { { text(1, twentyLines()), done(2) } },
      });
      expectSuccess(ok, err);
      expect(#record.pauses):eq(2);
      -- what the shell's prompt reads next
      os.queueEvent("ai_spec_read_next");
      local typedNext = {};
      while true do
        local event, c = os.pullEventRaw();
        if event == "ai_spec_read_next" then
          break;
        elseif event == "char" then
          typedNext[#typedNext + 1] = c;
        end
      end
      expect(typedNext):same({});
    end);

    it("says so too when the turn ended while its answer was paged, its end not polled yet", function()
      -- the gateway had the whole answer; the computer polls no more while the player pages
      local ok, err, rows, record = run({ "count" }, {
        width = 51,
        height = 8,
        terminateAtPause = 1,
        polls = { { text(1, twentyLines()) }, { text(2, "more"), done(3) } },
      });
      expectFailedTurn(ok, err);
      expect(rows[7]):eq("The rest of the answer was not shown (Ctrl-T).");
      expect(#sent(record, "ai.abort")):eq(0);
      -- one look at what came after the event on the screen, not waited for
      expect(sent(record, "ai.poll")[2]):same({ turnId = "t1", after = 1, waitMs = 0 });
    end);

    it("shows tool activity as one line each", function()
      local ok, err, rows = run({ "fix" }, {
        width = 40,
        polls = { {
          { seq = 1, kind = "tool", tool = "read_file", detail = "/door.lua", state = "running" },
          { seq = 2, kind = "tool", tool = "read_file", detail = "/door.lua", state = "completed" },
          { seq = 3, kind = "tool", tool = "list_dir", detail = "/", state = "completed" },
          { seq = 4, kind = "tool", tool = "run_lua", detail = "chunk", state = "error", error = "Refused. Do not retry it; tell the player." },
          text(5, "Done."), done(6),
        } },
      });
      expectSuccess(ok, err);
      expect(rows[1]):eq("* read_file /door.lua");
      expect(rows[2]):eq("* list_dir /");
      expect(rows[3]):eq("* run_lua chunk failed: Refused.");
      expect(rows[4]):eq("Done.");
      -- a tool the gateway gives no detail of (one of opencode's own) takes no blank for it
      ok, err, rows = run({ "fix" }, {
        width = 40,
        polls = { {
          { seq = 1, kind = "tool", tool = "bash", detail = "", state = "running" },
          { seq = 2, kind = "tool", tool = "bash", state = "error", error = "Denied. Do not retry it." },
          done(3),
        } },
      });
      expectSuccess(ok, err);
      expect({ rows[1], rows[2] }):same({ "* bash", "* bash failed: Denied." });
    end);

    it("keeps the set command of a refused tool's line whole, as the sandbox command's lines do", function()
      -- on a pocket computer's 26 columns the line ended a row with "set", which typed alone
      -- lists every setting, and began the next with the setting's name
      local refused = "forbidden: fs.write needs sandbox.allow_files write (it is none); the owner can allow it"
        .. " with: set sandbox.allow_files write. This is the computer owner's setting, not the player's answer.";
      local ok, err, rows = run({ "door" }, {
        width = 26, height = 12,
        polls = { {
          { seq = 1, kind = "tool", tool = "write_file", detail = "/door.lua", state = "running" },
          { seq = 2, kind = "tool", tool = "write_file", detail = "/door.lua", state = "error", error = refused },
          text(3, "Done."), done(4),
        } },
      });
      expectSuccess(ok, err);
      expect({ table.unpack(rows, 1, 9) }):same({
        "* write_file /door.lua",
        "* write_file /door.lua",
        "failed: forbidden:",
        "fs.write needs",
        "sandbox.allow_files write",
        "(it is none); the owner",
        "can allow it with:",
        "set sandbox.allow_files",
        "write.",
      });
      expect(rows[10]):eq("Done.");
    end);

    describe("an answer in Markdown", function()
      -- The answer, in one event or a byte an event, as it may stream.
      local function answerPolls(answer, bytewise)
        if not bytewise then
          return { { text(1, answer), done(2) } };
        end
        local events = {};
        for i = 1, #answer do
          events[i] = text(i, answer:sub(i, i));
        end
        events[#events + 1] = done(#answer + 1);
        return { events };
      end
      local function rowsOf(rows)
        local found = {};
        for _, row in ipairs(rows) do
          found[#found + 1] = row;
        end
        while found[#found] == "" do
          found[#found] = nil;
        end
        return found;
      end

      it("goes on with a wrapped list item under its text, on a pocket computer, however it streams", function()
        local answer = "Two ways:\n- pull the lever on the left of the door\n- or run:\n"
          .. "  - `door open` from the shell of this computer\n10. ten numbered items indent by four\n"
          .. "Text after the list wraps back at the margin again.";
        for _, bytewise in ipairs({ false, true }) do
          local ok, err, rows = run({ "door" }, { width = 26, height = 20, polls = answerPolls(answer, bytewise) });
          expectSuccess(ok, err);
          expect(rowsOf(rows)):same({
            "Two ways:",
            "- pull the lever on the",
            "  left of the door",
            "- or run:",
            "  - door open from the",
            "    shell of this computer",
            "10. ten numbered items",
            "    indent by four",
            "Text after the list wraps",
            "back at the margin again.",
          });
        end
      end);

      it("shows inline code in the code colour without its backticks, and bold without its marks", function()
        -- on a pocket computer's 26 columns, in one event or a byte an event (a backtick
        -- split from its code); "`door`." is one word, wrapped whole, in two colours
        local answer = "Type `sandbox.allow_files write` or run `door`. **Then** wait.\n"
          .. "`abcdefghijklmnopqrstuvwxyz0123`, `a`";
        for _, bytewise in ipairs({ false, true }) do
          local ok, err, rows, record = run({ "door" }, { width = 26, height = 20, polls = answerPolls(answer, bytewise) });
          expectSuccess(ok, err);
          expect(rowsOf(rows)):same({
            "Type sandbox.allow_files",
            "write or run door. Then",
            "wait.",
            "abcdefghijklmnopqrstuvwxyz",
            "0123, a",
          });
          expect(record.colours(1):sub(1, 24)):eq("00000" .. ("3"):rep(19)); -- light blue
          expect(record.colours(2):sub(1, 23)):eq("33333" .. ("0"):rep(8) .. "3333" .. ("0"):rep(6));
          expect(record.colours(4)):eq(("3"):rep(26));
          expect(record.colours(5):sub(1, 7)):eq("3333003");
        end
        -- on a basic computer, as typed: the backticks are what sets the code apart there
        local _, _, rows = run({ "door" }, { width = 26, height = 20, basic = true, polls = answerPolls(answer) });
        expect(rowsOf(rows)):same({
          "Type `sandbox.allow_files",
          "write` or run `door`. Then",
          "wait.",
          "`abcdefghijklmnopqrstuvwxy",
          "z0123`, `a`",
        });
      end);

      it("goes on in the heading's colour after inline code in it", function()
        local ok, err, rows, record = run({ "door" }, { width = 26, height = 20, polls = answerPolls("## Run `door` now\nok") });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({ "## Run door now", "ok" });
        expect(record.colours(1):sub(1, 15)):eq(("4"):rep(7) .. "3333" .. ("4"):rep(4));
        expect(record.colours(2):sub(1, 2)):eq("00");
      end);

      it("shows fenced code as code: its indent kept, wrapped after a >, the fences not shown, in colour", function()
        local answer = "Save this as door.lua:\n\n```lua\nwhile true do\n  if redstone.getInput(\"back\") then\n"
          .. "    print(\"the door opens now\")\n\n  end\nend\n```\n\nThen run door.";
        for _, bytewise in ipairs({ false, true }) do
          local ok, err, rows, record = run({ "door" }, { width = 26, height = 20, polls = answerPolls(answer, bytewise) });
          expectSuccess(ok, err);
          expect(rowsOf(rows)):same({
            "Save this as door.lua:",
            "",
            "while true do",
            "  if redstone.getInput(\"ba",
            "  >ck\") then",
            "    print(\"the door opens",
            "    >now\")",
            "",
            "  end",
            "end",
            "",
            "Then run door.",
          });
          expect(record.colours(3):sub(1, 13)):eq(("3"):rep(13)); -- light blue
          expect(record.colours(5):sub(1, 4)):eq("3383"); -- its > light grey
          expect(record.colours(1):sub(1, 4)):eq("0000");
        end
        -- on a basic computer, plain
        local _, _, _, record = run({ "door" }, { width = 26, height = 20, basic = true, polls = answerPolls(answer) });
        expect(record.colours(3)):eq(("0"):rep(26));
      end);

      it("lays out docs/ai.md's example on a pocket computer as it shows", function()
        local answer = "Save this as door.lua:\n\n```lua\nwhile true do\n  if redstone.getInput(\"back\") then\n"
          .. "    print(\"the door opens now\")\n  end\nend\n```\n\n\nThen run it:\n"
          .. "- type door at the shell, or add it to startup.lua\n";
        local ok, err, rows = run({ "door" }, { width = 26, height = 20, polls = answerPolls(answer) });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({
          "Save this as door.lua:",
          "",
          "while true do",
          "  if redstone.getInput(\"ba",
          "  >ck\") then",
          "    print(\"the door opens",
          "    >now\")",
          "  end",
          "end",
          "",
          "Then run it:",
          "- type door at the shell,",
          "  or add it to startup.lua",
        });
      end);

      it("stops at Ctrl-T in the middle of a code line paged, showing none of it again", function()
        local long = {};
        for i = 1, 12 do
          long[i] = "word" .. i;
        end
        local answer = "```\nx = { " .. table.concat(long, ", ") .. " }\n```\nafter";
        local ok, err, rows, record = run({ "door" }, {
          width = 12, height = 8, terminateAtPause = 1, polls = { { text(1, answer) }, { text(2, "more") } },
        });
        expectFailedTurn(ok, err);
        expect(#record.pauses):eq(1);
        expect(record.pauses[1][1]):eq("x = { word1,");
        local shown = table.concat(rows, "\n");
        expect(select(2, shown:gsub("word1,", ""))):eq(0); -- scrolled away, not shown again
        -- the abort line at the margin, not at the code's hang after a >
        expect({ rows[4], rows[5], rows[6], rows[7] }):same({ "Aborted: the", "turn was", "stopped", "(Ctrl-T)." });
      end);

      it("keeps code in a list item at the item's indent, and a ~~~ fence's lines as they are", function()
        local answer = "1. Open it:\n   ```\n   edit door.lua\n   ```\n2. Then:\n~~~~\n```\n  x = 1\n~~~~\nend";
        local ok, err, rows = run({ "door" }, { width = 26, height = 20, polls = answerPolls(answer) });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({ "1. Open it:", "   edit door.lua", "2. Then:", "```", "  x = 1", "end" });
      end);

      it("shows code indented four columns as code, but not a list item's indented text", function()
        local answer = "Type:\n\n    print(\"a long line of code here\")\n\n- an item\n\n    its own text that wraps at the item";
        local ok, err, rows, record = run({ "door" }, { width = 26, height = 20, polls = answerPolls(answer) });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({
          "Type:",
          "",
          "    print(\"a long line of",
          "    >code here\")",
          "",
          "- an item",
          "",
          "    its own text that",
          "    wraps at the item",
        });
        expect(record.colours(3):sub(5, 9)):eq(("3"):rep(5));
        expect(record.colours(8):sub(5, 9)):eq(("0"):rep(5));
      end);

      it("keeps one blank line between blocks, never two, and none before or after the answer", function()
        local ok, err, rows = run({ "door" }, {
          width = 26, height = 20, polls = answerPolls("\n\n  \nOne.\n\n\n \t\nTwo.  \n\n```\n\n\n```\n\n\nThree.\n\n\n"),
        });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({ "One.", "", "Two.", "", "", "", "", "Three." });
      end);

      it("shows nothing of blanks that end a row or a line: a line that fills its row takes no empty row", function()
        -- a line of the width, then a blank (a Markdown line break is two), took a row of its own
        local ok, err, rows = run({ "door" }, { width = 10, height = 8, polls = answerPolls("0123456789  \nnext one\n") });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({ "0123456789", "next one" });
      end);

      it("shows a heading in colour, its marks kept, and a quote's wrapped rows under its text", function()
        local answer = "## The door\n> a quoted line long enough to wrap\n#hashtag is text";
        local ok, err, rows, record = run({ "door" }, { width = 26, height = 20, polls = answerPolls(answer) });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({ "## The door", "> a quoted line long", "  enough to wrap", "#hashtag is text" });
        expect(record.colours(1):sub(1, 11)):eq(("4"):rep(11)); -- yellow
        expect(record.colours(2):sub(1, 5)):eq(("0"):rep(5));
      end);

      it("breaks a URL in a list item before its separators, its further rows under the item's text", function()
        local answer = "- wget run http://192.168.100.200:4444/trapos/install pw";
        local ok, err, rows = run({ "link" }, { width = 26, height = 20, polls = answerPolls(answer) });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({ "- wget run", "  http://192.168.100.200", "  :4444/trapos/install pw" });
      end);

      it("shows a line the answer's end leaves open, and a marker's start that stays text", function()
        local ok, err, rows = run({ "door" }, { width = 26, height = 20, polls = { { text(1, "- a\n1"), done(2) } } });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({ "- a", "1" });
        ok, err, rows = run({ "door" }, { width = 26, height = 20, polls = { { text(1, "```lua\nx = 1"), done(2) } } });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({ "x = 1" });
      end);

      it("shows a table in columns on a computer, and a line a cell on a pocket computer, however it streams", function()
        local answer = "Sides:\n\n| side | what it does | power |\n|------|--------------|------:|\n"
          .. "| left | opens the `door` | 15 |\n| back | reads the lever here | 7 |\n\nDone.";
        for _, bytewise in ipairs({ false, true }) do
          local ok, err, rows, record = run({ "sides" }, { width = 51, height = 20, polls = answerPolls(answer, bytewise) });
          expectSuccess(ok, err);
          expect(rowsOf(rows)):same({
            "Sides:",
            "",
            "side  what it does          power",
            "----  --------------------  -----",
            "left  opens the door           15",
            "back  reads the lever here      7",
            "",
            "Done.",
          });
          expect(record.colours(5):sub(16, 20)):eq("0" .. ("3"):rep(4)); -- the cell's inline code, light blue
          ok, err, rows = run({ "sides" }, { width = 26, height = 20, polls = answerPolls(answer, bytewise) });
          expectSuccess(ok, err);
          expect(rowsOf(rows)):same({
            "Sides:",
            "",
            "side: left",
            "what it does: opens the",
            "             door",
            "power: 15",
            "",
            "side: back",
            "what it does: reads the",
            "             lever here",
            "power: 7",
            "",
            "Done.",
          });
        end
        -- a basic computer shows the code's backticks, which count in the columns
        local ok, err, rows = run({ "sides" }, { width = 51, height = 20, basic = true, polls = answerPolls(answer) });
        expectSuccess(ok, err);
        expect({ table.unpack(rows, 3, 6) }):same({
          "side  what it does          power",
          "----  --------------------  -----",
          "left  opens the `door`         15",
          "back  reads the lever here      7",
        });
      end);

      it("keeps a table in a list item at the item's indent, one blank apart where only that fits", function()
        local answer = "- the sides:\n\n  | side | what |\n  |---|---|\n  | left | opens the door here |\n";
        local ok, err, rows = run({ "sides" }, { width = 26, height = 20, polls = answerPolls(answer) });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({
          "- the sides:", "", "  side what", "  ---- -------------------", "  left opens the door here",
        });
        -- too wide for the rest of the row: a line a cell, wrapped under the value
        answer = "- the sides:\n  | side | what |\n  |---|---|\n  | left | opens the door on the left |\n";
        ok, err, rows = run({ "sides" }, { width = 26, height = 20, polls = answerPolls(answer) });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({ "- the sides:", "  side: left", "  what: opens the door on", "        the left" });
      end);

      it("goes on at the margin after a tool's line in the middle of the answer", function()
        local ok, err, rows = run({ "door" }, { width = 26, height = 20, polls = { {
          text(1, "```\n  a = 1\n- Let me"), { seq = 2, kind = "tool", tool = "read_file", detail = "/a", state = "completed" },
          text(3, "\n\nRead it."), done(4),
        } } });
        expectSuccess(ok, err);
        expect(rowsOf(rows)):same({ "  a = 1", "- Let me", "* read_file /a", "Read it." });
      end);
    end);

    it("stops waiting for the player's answer once the gateway has refused the change by itself", function()
      local started = {};
      stub(os, "startTimer", function(seconds)
        started[#started + 1] = seconds;
        local id = 830000 + #started;
        os.queueEvent("timer", id);
        return id;
      end);
      local ok, err, rows, record = run({ "write it" }, {
        width = 51,
        typed = { NO_ANSWER },
        polls = { { CONFIRM }, { { seq = 2, kind = "tool", tool = "write_file", detail = "/door.lua", state = "error",
          error = "The player did not answer within 1 min, so this write was refused." }, text(3, "I could not."), done(4) } },
      });
      expectSuccess(ok, err);
      local waited = false;
      for _, seconds in ipairs(started) do
        waited = waited or seconds == 61;
      end
      expect(waited):eq(true); -- a second past the gateway's 60 s
      expect(rows[2]):eq("shown). Allow? [y/N]");
      expect(rows[3]):eq("* write_file /door.lua failed: The player did not");
      expect(rows[5]):eq("I could not.");
      expect(sent(record, "ai.approve")):same({ { turnId = "t1", confirmId = "c1", allow = false } });
    end);

    it("says a change was not made when the answer to its question got to no gateway that held the turn", function()
      -- The gateway restarted while the player read "Allow?": the answer went to no gateway
      -- (the daemon had none) or to one that knew no such turn, and the next poll found the
      -- turn gone. It said "The gateway lost the answer (restarted?): ask again", and the
      -- player who had typed y was left to wonder whether the file was written.
      for _, refusal in ipairs({
        { code = "not_connected", message = "lost the connection: going away" },
        { code = "unknown_turn", message = "the gateway knows no turn \"t1\" of this computer" },
      }) do
        local ok, err, _, record = run({ "write it" }, {
          width = 51,
          typed = { "y" },
          replies = { ["ai.approve"] = { false, nil, refusal } },
          polls = { { CONFIRM }, { err = { code = "unknown_turn", message = "no turn t1" } } },
        });
        expect(ok):eq(false);
        expect(sent(record, "ai.approve")):same({ { turnId = "t1", confirmId = "c1", allow = true } });
        expect(err):eq("The gateway lost the answer (restarted?) before your reply to Allow? got to it: the agent did"
          .. " not write /door.lua (312 bytes). Ask again");
      end
      -- an answer that got to the gateway: what became of the change is the gateway's to say
      local ok, err = run({ "write it" }, {
        width = 51,
        typed = { "y" },
        polls = { { CONFIRM }, { err = { code = "unknown_turn", message = "no turn t1" } } },
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway lost the answer (restarted?): ask again");
      -- nor when the turn went on after it (the gateway gave up waiting, and the agent went on)
      ok, err = run({ "write it" }, {
        width = 51,
        typed = { "y" },
        replies = { ["ai.approve"] = { false, nil, { code = "unknown_turn", message = "no confirmation \"c1\" waits" } } },
        polls = { { CONFIRM }, { text(2, "Hm.") }, { err = { code = "unknown_turn", message = "no turn t1" } } },
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway lost the answer (restarted?): ask again");
    end);

    it("says a change was not made, beside why the answer is lost, when the gateway did not come back", function()
      local ok, err = run({ "write it" }, {
        width = 51,
        typed = { "y" },
        replies = { ["ai.approve"] = { false, nil, { code = "not_connected", message = "lost the connection: going away" } } },
        statuses = { { url = URL, state = "connected", connected = true },
          { url = URL, state = "stopped", lastError = "stopped" } },
        polls = { { CONFIRM }, { err = { code = "not_connected", message = "lost the connection: going away" } } },
      });
      expect(ok):eq(false);
      expect(err):str_match("%. Your reply to Allow%? did not get to the gateway: the agent did not write /door%.lua %(312 bytes%)%. "
        .. "The answer is lost: ask again once reconnected$");
    end);

    it("puts a change to the player and sends the answer", function()
      for _, case in ipairs({ { "y", true }, { "YES", true }, { "n", false }, { "", false } }) do
        local ok, err, rows, record = run({ "write it" }, {
          width = 51,
          typed = { case[1] },
          polls = { { CONFIRM }, { text(2, "ok"), done(3) } },
        });
        expectSuccess(ok, err);
        -- a write without its content (one over the gateway's 16 KiB) says it was not shown
        expect(rows[1]):eq("The agent wants to write /door.lua (312 bytes, not");
        expect(record.reads[1].row):eq("shown). Allow? [y/N]");
        expect(rows[2]):eq(("shown). Allow? [y/N] " .. case[1]):gsub("%s+$", ""));
        expect(sent(record, "ai.approve")):same({ { turnId = "t1", confirmId = "c1", allow = case[2] } });
        expect(rows[3]):eq("ok");
      end
    end);

    it("stops a long answer after a question while the question and its answer are still on the screen, on a computer and a pocket computer", function()
      -- the pager counted from the row after the answer: the answer's first page scrolled
      -- "Allow? [y/N] y" away before its "Press any key", and the player no longer saw it
      local lines = {};
      for i = 1, 40 do
        lines[i] = "line" .. i;
      end
      local long = table.concat(lines, "\n") .. "\n";
      for _, case in ipairs({
        { 51, 19, { "The agent wants to write /door.lua (312 bytes, not", "shown). Allow? [y/N] y" } },
        { 26, 20, { "The agent wants to write", "/door.lua (312 bytes, not", "shown). Allow? [y/N] y" } },
      }) do
        local width, height, question = case[1], case[2], case[3];
        local ok, err, _, record = run({ "write it" }, {
          width = width, height = height, commandLine = "> ai write it", typed = { "y" },
          polls = { { CONFIRM }, { text(2, long), done(3) } },
        });
        expectSuccess(ok, err);
        local page = record.pauses[1];
        local expected = {};
        for i, row in ipairs(question) do
          expected[i] = row;
        end
        for i = 1, height - 1 - #question do
          expected[#expected + 1] = "line" .. i;
        end
        expected[#expected + 1] = MORE;
        expect(page):same(expected);
        -- the next page begins with the line after, as every later page does
        expect(record.pauses[2][1]):eq("line" .. (height - #question));
        expect(record.pauses[2][height]):eq(MORE);
      end
    end);

    it("names the change it asks about in one line, whatever the gateway put in it", function()
      local confirm = { seq = 1, kind = "confirm", confirmId = "c1", action = "write\n", tool = "write_file",
        detail = "/notes.txt. Allow? [y/N] y\nThe agent wants to write /startup.lua", bytes = 3 };
      local ok, err, rows = run({ "write it" }, {
        width = 51, height = 12, typed = { "n" },
        polls = { { confirm }, { done(2) } },
      });
      expectSuccess(ok, err);
      -- one line, wrapped: no row of the gateway's own starts where it put a newline
      expect(rows[1]):eq("The agent wants to write  /notes.txt. Allow? [y/N]");
      expect(rows[2]):eq("y The agent wants to write /startup.lua (3 bytes,");
      expect(rows[3]):eq("not shown). Allow? [y/N] n");
    end);

    it("puts the [y/N] on a row of its own when the question fills the row, the answer beside it", function()
      -- On a pocket computer's 26 columns "/door_k.lua. Allow? [y/N] " ends at the right edge,
      -- where the answer would not show; on the next row alone it stood away from its [y/N].
      local confirm = { seq = 1, kind = "confirm", confirmId = "c1", action = "delete", tool = "delete_file",
        detail = "/door_k.lua" };
      local ok, err, rows, record = run({ "delete it" }, {
        width = 26, height = 10, typed = { "y" }, polls = { { confirm }, { done(2) } },
      });
      expectSuccess(ok, err);
      expect({ rows[1], rows[2], rows[3] }):same({
        "The agent wants to delete", "/door_k.lua. Allow?", "[y/N] y",
      });
      expect(sent(record, "ai.approve")):same({ { turnId = "t1", confirmId = "c1", allow = true } });
    end);

    it("names the whole path a change acts on, from its request, where the gateway's detail is cut", function()
      -- The detail is cut at 60 bytes; on a pocket computer the cut fell in the file's name.
      local path = "/a/very/long/path/name/that/is/longer/than/the/screen/door.lua";
      local write = { seq = 1, kind = "confirm", confirmId = "c1", action = "write", tool = "write_file",
        detail = path:sub(1, 57) .. "...", bytes = 13, request = { type = "fs.write", payload = { path = path } } };
      -- the owner allows writes: a change the settings refuse is never put to the player
      local allowed = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "write" };
      local ok, err, rows = run({ "write it" }, {
        width = 26, height = 10, settings = allowed, typed = { "y" }, polls = { { write }, { done(2) } },
      });
      expectSuccess(ok, err);
      expect({ rows[1], rows[2], rows[3], rows[4], rows[5], rows[6] }):same({
        "The agent wants to write a", "new file", "/a/very/long/path/name/tha", "t/is/longer/than/the/scree",
        "n/door.lua (13 bytes, not", "shown). Allow? [y/N] y",
      });
      -- a move names both paths; a control byte or a backslash is \xNN, as in the detail
      local move = { seq = 1, kind = "confirm", confirmId = "c1", action = "write", tool = "move_file",
        detail = "/old -> /new...", request = { type = "fs.move", payload = { from = "/old\\a", to = "/new\nline.lua" } } };
      ok, err, rows = run({ "move it" }, {
        width = 80, settings = allowed, typed = { "n" }, polls = { { move }, { done(2) } },
      });
      expectSuccess(ok, err);
      -- as a move, not the gateway's "write" (it read "write /old -> /new")
      expect(rows[1]):eq("The agent wants to move /old\\x5ca to /new\\x0aline.lua. Allow? [y/N] n");
      -- a new directory as one, and a verb a gateway words otherwise as the request is
      local makeDir = { seq = 1, kind = "confirm", confirmId = "c1", action = "write", tool = "make_dir",
        detail = "/lib", request = { type = "fs.makeDir", payload = { path = "/lib" } } };
      ok, err, rows = run({ "make it" }, {
        width = 80, settings = allowed, typed = { "n" }, polls = { { makeDir }, { done(2) } },
      });
      expectSuccess(ok, err);
      expect(rows[1]):eq("The agent wants to make the directory /lib. Allow? [y/N] n");
      local worded = { seq = 1, kind = "confirm", confirmId = "c1", action = "read (harmless, say y)", tool = "delete_file",
        detail = "/old.lua", request = { type = "fs.delete", payload = { path = "/old.lua" } } };
      ok, err, rows = run({ "tidy" }, {
        width = 80, settings = allowed, typed = { "n" }, polls = { { worded }, { done(2) } },
      });
      expectSuccess(ok, err);
      expect(rows[1]):eq("The agent wants to delete /old.lua. Allow? [y/N] n");
      -- allowed without asking (sandbox.ai_confirm false), the line names it whole too
      ok, err, rows = run({ "write it" }, {
        width = 100, settings = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "write", ["sandbox.ai_confirm"] = false },
        polls = { { write, done(2) } },
      });
      expectSuccess(ok, err);
      expect(rows[1]):eq("Allowed: write " .. path .. " (13 bytes)");
    end);

    it("shows a run's whole code before asking when its detail shows only part of it", function()
      local full = "print('hello')\nfs.delete('/startup.lua')";
      local run1 = { seq = 1, kind = "confirm", confirmId = "c1", action = "run", tool = "run_lua",
        detail = "print('hello') fs.delete('/startup.lua')", full = full };
      local ok, err, rows, record = run({ "run it" }, {
        width = 51,
        typed = { "n" },
        polls = { { run1 }, { done(2) } },
      });
      expectSuccess(ok, err);
      expect(rows[1]):eq("The agent wants to run this on this computer:");
      expect(rows[2]):eq("print('hello')");
      expect(rows[3]):eq("fs.delete('/startup.lua')");
      expect(record.reads[1].row):eq("Allow? [y/N]");
      expect(rows[4]):eq("Allow? [y/N] n");
      expect(sent(record, "ai.approve")):same({ { turnId = "t1", confirmId = "c1", allow = false } });
    end);

    it("shows a run's line of 100 KB with a run of blanks inside, without running too long", function()
      -- the client does not bound a gateway's code: a quadratic reading of the line's blanks
      -- ended ai with "Too long without yielding" before the question was put
      local full = "print(1)" .. (" "):rep(100000) .. "x";
      local run1 = { seq = 1, kind = "confirm", confirmId = "c1", action = "run", tool = "run_lua",
        detail = "print(1)", full = full };
      local ok, err, _, record = run({ "run it" }, {
        width = 51, height = 19, typed = { "n" }, polls = { { run1 }, { done(2) } },
      });
      expectSuccess(ok, err);
      expect(record.reads[1].row):eq("Allow? [y/N]");
      expect(sent(record, "ai.approve")):same({ { turnId = "t1", confirmId = "c1", allow = false } });
    end);

    it("keeps a run's indent on a pocket computer: a word too long after it is cut, not moved to a line of its own, and goes on at that indent", function()
      local full = "for i = 1, 3 do\n  redstone.setOutput(\"left\", true)\nend";
      local run1 = { seq = 1, kind = "confirm", confirmId = "c1", action = "run", tool = "run_lua",
        detail = "for i = 1, 3 do redstone.setOutput(\"left\", true) end", full = full };
      local ok, err, rows = run({ "run it" }, {
        width = 26,
        typed = { "n" },
        polls = { { run1 }, { done(2) } },
      });
      expectSuccess(ok, err);
      expect({ rows[3], rows[4], rows[5], rows[6], rows[7] }):same({
        "for i = 1, 3 do", "  redstone.setOutput(\"left", "  >\", true)", "end", "Allow? [y/N] n",
      });
    end);

    describe("a write", function()
      local PATH = "/ai_spec_door.lua";
      local ALLOWED = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "write" };
      local function write(content, bytes)
        return { seq = 1, kind = "confirm", confirmId = "c1", action = "write", tool = "write_file",
          detail = PATH, bytes = bytes or #content, content = content,
          request = { type = "fs.write", payload = { path = PATH } } };
      end
      local function putFile(data)
        local file = fs.open(PATH, "wb");
        file.write(data);
        file.close();
      end
      local function numbered(n, edits)
        local lines = {};
        for i = 1, n do
          lines[i] = (edits or {})[i] or ("print(" .. i .. ")");
        end
        return table.concat(lines, "\n") .. "\n";
      end
      local function rowsFrom(rows, first, last)
        local found = {};
        for y = first, last do
          found[#found + 1] = rows[y];
        end
        return found;
      end
      after_each(function() fs.delete(PATH); end);

      it("shows a new file's content, paged, before asking, a control byte as \\xNN", function()
        local content = "-- door\r\nredstone.setOutput(\"left\", true)\n\27[2J\n";
        for i = 1, 20 do
          content = content .. "print(" .. i .. ")\n";
        end
        local ok, err, rows, record = run({ "write it" }, {
          width = 51, height = 19, settings = ALLOWED, typed = { "y" }, polls = { { write(content) }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(record.pauses[1], 1, 6)):same({
          "The agent wants to write a new file", "/ai_spec_door.lua (238 bytes):",
          "-- door", "redstone.setOutput(\"left\", true)", "\\x1b[2J", "print(1)",
        });
        expect(#record.pauses):eq(1);
        expect(record.reads[1].row):eq("Allow? [y/N]");
        local asked;
        for y, row in ipairs(rows) do
          asked = row == "Allow? [y/N] y" and y or asked;
        end
        expect(rows[asked - 1]):eq("print(20)");
        expect(sent(record, "ai.approve")):same({ { turnId = "t1", confirmId = "c1", allow = true } });
      end);

      it("shows only what it changes of a long text file there, numbered, in colour", function()
        putFile(numbered(300));
        local ok, err, rows, record = run({ "edit it" }, {
          width = 51, height = 19, settings = ALLOWED, typed = { "n" },
          polls = { { write(numbered(300, { [150] = "print(\"one hundred fifty\")" })) }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 1, 10)):same({
          "The agent wants to change /ai_spec_door.lua (3192",
          "-> 3208 bytes):",
          "     (147 lines the same)",
          " 148 print(148)",
          " 149 print(149)",
          "-    print(150)",
          "+150 print(\"one hundred fifty\")",
          " 151 print(151)",
          " 152 print(152)",
          "     (148 lines the same)",
        });
        expect(rows[11]):eq("Allow? [y/N] n");
        expect(record.colours(6):sub(1, 1)):eq("e"); -- red
        expect(record.colours(7):sub(1, 1)):eq("d"); -- green
        expect(record.colours(5):sub(1, 1)):eq("0");
        expect(#record.pauses):eq(0);
      end);

      it("marks the lines it changes plainly on a basic computer, and on a pocket one", function()
        putFile("a\nb\nc\n");
        local ok, err, rows, record = run({ "edit it" }, {
          width = 26, height = 20, basic = true, settings = ALLOWED, typed = { "n" },
          polls = { { write("a\nB\nc\n") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 1, 8)):same({
          "The agent wants to change", "/ai_spec_door.lua (6 -> 6", "bytes):",
          " 1 a", "-  b", "+2 B", " 3 c", "Allow? [y/N] n",
        });
        expect(record.colours(5)):eq(("0"):rep(26));
      end);

      it("goes on with a wrapped line of a new file at its own indent, on a pocket computer and on 51 columns", function()
        local content = "while true do\n  if redstone.getInput(\"back\") then\n    print(\"the door opens now\")\n  end\nend\n";
        local ok, err, rows = run({ "write it" }, {
          width = 26, height = 20, settings = ALLOWED, typed = { "n" }, polls = { { write(content) }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 4, 10)):same({
          "while true do",
          "  if redstone.getInput(\"ba",
          "  >ck\") then",
          "    print(\"the door opens",
          "    >now\")",
          "  end",
          "end",
        });
        local long = "local t = {\n    " .. ("word "):rep(12) .. "\n}\n";
        ok, err, rows = run({ "write it" }, {
          width = 51, height = 19, settings = ALLOWED, typed = { "n" }, polls = { { write(long) }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 3, 6)):same({
          "local t = {", "    word word word word word word word word word", "    >word word word", "}",
        });
      end);

      it("keeps a tab's indent where a line wraps, and shows blanks no row needs in none", function()
        -- tabs indent as spaces do; a line of only spaces is one blank row (it took three of
        -- "             >"); an indent wider than the screen takes one row, not 250 of " >"
        local content = "while true do\n\tif redstone.getInput(\"back\") then\n\t\tprint(\"the door opens now\")\n"
          .. (" "):rep(60) .. "\n\tend\n" .. (" "):rep(3000) .. "x\nend\n";
        local ok, err, rows = run({ "write it" }, {
          width = 26, height = 20, settings = ALLOWED, typed = { "n" }, polls = { { write(content) }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 4, 13)):same({
          "while true do",
          " if redstone.getInput(\"bac",
          " >k\") then",
          "  print(\"the door opens",
          "  >now\")",
          "",
          " end",
          (" "):rep(25) .. "x",
          "end",
          "Allow? [y/N] n",
        });
      end);

      it("goes on with a wrapped changed line after its mark and number, at its indent, in its colour", function()
        putFile("if x then\n  a()\nend\n");
        local ok, err, rows, record = run({ "edit it" }, {
          width = 26, height = 20, settings = ALLOWED, typed = { "n" },
          polls = { { write("if x then\n  redstone.setOutput(\"left\", true)\nend\n") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 4, 9)):same({
          " 1 if x then", "-    a()", "+2   redstone.setOutput(\"l", "     >eft\", true)", " 3 end", "Allow? [y/N] n",
        });
        expect(record.colours(7):sub(1, 7)):eq("ddddd8d"); -- the row goes on green, its mark light grey
        -- on a basic computer the mark is there, plain
        local _, _, _, again = run({ "edit it" }, {
          width = 26, height = 20, basic = true, settings = ALLOWED, typed = { "n" },
          polls = { { write("if x then\n  redstone.setOutput(\"left\", true)\nend\n") }, { done(2) } },
        });
        expect(again.rows()[7]):eq("     >eft\", true)");
        expect(again.colours(7)):eq(("0"):rep(26));
      end);

      it("says which changed line has no line break, when only its ending changes", function()
        putFile("a\nb\n");
        local ok, err, rows = run({ "edit it" }, {
          width = 51, settings = ALLOWED, typed = { "n" },
          polls = { { write("a\nb") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 3, 6)):same({ " 1 a", "-  b", "+2 b  (no line break)", "Allow? [y/N] n" });
      end);

      it("shows the \\r of lines whose \\r\\n the write makes \\n, and of no line it keeps", function()
        putFile("a\r\nb\r\nc\r\n");
        local ok, err, rows = run({ "edit it" }, {
          width = 51, height = 19, settings = ALLOWED, typed = { "n" },
          polls = { { write("a\nb\nc\n") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 3, 9)):same({
          "-  a\\x0d", "-  b\\x0d", "-  c\\x0d", "+1 a", "+2 b", "+3 c", "Allow? [y/N] n",
        });
        putFile("a\r\nb\r\nc\r\n");
        ok, err, rows = run({ "edit it" }, {
          width = 51, settings = ALLOWED, typed = { "n" },
          polls = { { write("a\r\nB\r\nc\r\n") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 3, 7)):same({ " 1 a", "-  b", "+2 B", " 3 c", "Allow? [y/N] n" });
      end);

      it("compares a program holding an escape byte by its lines, the byte as \\xNN", function()
        putFile("a\n\27[31mred\nc\n");
        local ok, err, rows = run({ "edit it" }, {
          width = 51, settings = ALLOWED, typed = { "n" },
          polls = { { write("a\n\27[32mgreen\nc\n") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 3, 6)):same({ " 1 a", "-  \\x1b[31mred", "+2 \\x1b[32mgreen", " 3 c" });
      end);

      it("shows a binary file safely: every byte that is not text as \\xNN, none raw", function()
        local every = {};
        for i = 0, 255 do
          every[#every + 1] = string.char(i);
        end
        putFile("\0old binary");
        local ok, err, rows = run({ "write it" }, {
          width = 51, height = 30, settings = ALLOWED, typed = { "n" },
          polls = { { write(table.concat(every)) }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rows[1]):eq("The agent wants to replace /ai_spec_door.lua (11");
        expect(rows[2]):eq("bytes) with this (256 bytes):");
        expect(rows[3]:sub(1, 20)):eq("\\x00\\x01\\x02\\x03\\x04");
        -- not text: its tab and line break are bytes too, not a gap and a new row
        expect(rows[3]:sub(33, 48)):eq("\\x08\\x09\\x0a\\x0b");
        local shown = table.concat(rows, "\n");
        expect(shown:find("[%z\1-\8\11-\31\127-\159]")):eq(nil);
        expect(shown:find("\\x7f\\x80", 1, true) ~= nil and shown:find("\\x9f", 1, true) ~= nil):eq(true);
        expect(shown:find("\255", 1, true) ~= nil):eq(true); -- Latin-1 shows as itself
      end);

      it("says in its question that a write too long to read here was not shown, and how long", function()
        local long = ("x"):rep(5000);
        local ok, err, rows, record = run({ "write it" }, {
          width = 51, settings = ALLOWED, typed = { "y" }, polls = { { write(long) }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 1, 3)):same({
          "The agent wants to write a new file", "/ai_spec_door.lua (5000 bytes, not shown: too", "long). Allow? [y/N] y",
        });
        expect(#record.pauses):eq(0);
        expect(sent(record, "ai.approve")):same({ { turnId = "t1", confirmId = "c1", allow = true } });
        -- bounded as shown: 2000 bytes that are not text read as 8000
        ok, err, rows = run({ "write it" }, {
          width = 51, settings = ALLOWED, typed = { "n" }, polls = { { write(("\0"):rep(2000)) }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 1, 3)):same({
          "The agent wants to write a new file", "/ai_spec_door.lua (2000 bytes, not shown: too", "long). Allow? [y/N] n",
        });
        -- over the gateway's 16 KiB it comes without its content
        local big = write("", 20000);
        big.content = nil;
        ok, err, rows = run({ "write it" }, {
          width = 51, settings = ALLOWED, typed = { "n" }, polls = { { big }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 1, 3)):same({
          "The agent wants to write a new file", "/ai_spec_door.lua (20000 bytes, not shown: too", "long). Allow? [y/N] n",
        });
        -- a change of too many lines of a file there
        putFile(numbered(600));
        ok, err, rows = run({ "edit it" }, {
          width = 51, settings = ALLOWED, typed = { "n" },
          polls = { { write(numbered(600, setmetatable({}, { __index = function(_, i) return "x" .. i; end }))) }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 1, 2)):same({
          "The agent wants to change /ai_spec_door.lua (6492", "-> 2892 bytes, not shown: too many changes). Allow?",
        });
      end);

      it("says a write of what the file holds already, and an empty new file, in one line", function()
        putFile("same\n");
        local ok, err, rows = run({ "write it" }, {
          width = 80, settings = ALLOWED, typed = { "n" }, polls = { { write("same\n") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rows[1]):eq("The agent wants to write /ai_spec_door.lua (5 bytes), the same as it holds now.");
        fs.delete(PATH);
        ok, err, rows = run({ "write it" }, {
          width = 100, settings = ALLOWED, typed = { "n" }, polls = { { write("") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rows[1]):eq("The agent wants to write a new file /ai_spec_door.lua (0 bytes). Allow? [y/N] n");
      end);

      it("says a write onto a directory here is one, not a new file", function()
        fs.makeDir(PATH);
        local ok, err, rows = run({ "write it" }, {
          width = 100, settings = ALLOWED, typed = { "n" }, polls = { { write("print(1)\n") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rows[1]):eq("The agent wants to write /ai_spec_door.lua (9 bytes), a directory here: the write will fail. Allow?");
        expect(rows[2]):eq("[y/N] n");
      end);

      it("says a write of the bytes a binary file holds already in one line", function()
        putFile("\0same");
        local ok, err, rows = run({ "write it" }, {
          width = 100, settings = ALLOWED, typed = { "n" }, polls = { { write("\0same") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rows[1]):eq("The agent wants to write /ai_spec_door.lua (5 bytes), the same as it holds now. Allow? [y/N] n");
      end);

      it("compares an empty file there, and one of 64 KiB, by their lines", function()
        putFile("");
        local ok, err, rows = run({ "write it" }, {
          width = 51, settings = ALLOWED, typed = { "n" }, polls = { { write("a\nb\n") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 1, 4)):same({ "The agent wants to change /ai_spec_door.lua (0 -> 4", "bytes):", "+1 a", "+2 b" });
        -- compared up to 64 KiB (all its 1024 lines removed: too many to show), replaced past it
        local line = ("x"):rep(63) .. "\n";
        putFile(line:rep(1024));
        expect(fs.getSize(PATH)):eq(64 * 1024);
        ok, err, rows = run({ "edit it" }, {
          width = 51, settings = ALLOWED, typed = { "n" }, polls = { { write("short\n") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 1, 2)):same({
          "The agent wants to change /ai_spec_door.lua (65536", "-> 6 bytes, not shown: too many changes). Allow?",
        });
        putFile(line:rep(1024) .. "\n");
        ok, err, rows = run({ "edit it" }, {
          width = 51, settings = ALLOWED, typed = { "n" }, polls = { { write("short\n") }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 1, 3)):same({ "The agent wants to replace /ai_spec_door.lua (65537", "bytes) with this (6 bytes):", "short" });
      end);

      it("names and compares the file its request writes, where a gateway's detail names another", function()
        putFile("a\nb\n");
        local event = write("a\nB\n");
        event.detail = "/harmless.txt";
        local ok, err, rows = run({ "edit it" }, {
          width = 51, settings = ALLOWED, typed = { "n" }, polls = { { event }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rowsFrom(rows, 1, 5)):same({ "The agent wants to change /ai_spec_door.lua (4 -> 4", "bytes):", " 1 a", "-  b", "+2 B" });
      end);

      it("does not read or compare a content a gateway sent over its 16 KiB, nor one that is no string", function()
        putFile(numbered(600));
        local huge = ("\n"):rep(1024 * 1024);
        local ok, err, rows = run({ "edit it" }, {
          width = 51, settings = ALLOWED, typed = { "n" }, polls = { { write(huge) }, { done(2) } },
        });
        expectSuccess(ok, err);
        -- not shown, but named as what it is: a file there replaced
        expect(rowsFrom(rows, 1, 3)):same({
          "The agent wants to replace /ai_spec_door.lua (6492", "bytes) with 1048576 bytes (not shown: too long).",
          "Allow? [y/N] n",
        });
        local odd = write("x");
        odd.content = { "x" };
        ok, err, rows = run({ "edit it" }, {
          width = 80, settings = ALLOWED, typed = { "n" }, polls = { { odd }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(rows[1]):eq("The agent wants to replace /ai_spec_door.lua (6492 bytes) with 1 byte (not");
        expect(rows[2]):eq("shown). Allow? [y/N] n");
      end);

      it("reads no file there for a write it does not show: fs gives its size", function()
        putFile(numbered(600));
        local realOpen, opened = fs.open, 0;
        stub(fs, "open", function(path, mode)
          if fs.combine(path, "") == fs.combine(PATH, "") then
            opened = opened + 1;
          end
          return realOpen(path, mode);
        end);
        local unsent = write("x", 20000);
        unsent.content = nil;
        for _, event in ipairs({ write(("\n"):rep(1024 * 1024)), unsent }) do
          local ok, err, rows = run({ "edit it" }, {
            width = 80, settings = ALLOWED, typed = { "n" }, polls = { { event }, { done(2) } },
          });
          expectSuccess(ok, err);
          expect(rows[1]:find("The agent wants to replace /ai_spec_door.lua (6492 bytes) with", 1, true)):eq(1);
        end
        expect(opened):eq(0);
        -- a write it shows reads the file there, once, to compare
        local ok, err = run({ "edit it" }, {
          width = 80, settings = ALLOWED, typed = { "n" }, polls = { { write(numbered(600, { [3] = "x" })) }, { done(2) } },
        });
        expectSuccess(ok, err);
        expect(opened):eq(1);
      end);

      it("is allowed without asking in one line when sandbox.ai_confirm is false", function()
        putFile("a\n");
        local ok, err, rows, record = run({ "write it" }, {
          width = 80, settings = { ["sandbox.url"] = URL, ["sandbox.allow_files"] = "write", ["sandbox.ai_confirm"] = false },
          polls = { { write("b\n"), done(2) } },
        });
        expectSuccess(ok, err);
        expect(#record.reads):eq(0);
        expect(rows[1]):eq("Allowed: write /ai_spec_door.lua (2 bytes)");
        expect(rows[2]):eq("");
      end);
    end);

    it("shows a control byte of a run's code as \\xNN", function()
      local run1 = { seq = 1, kind = "confirm", confirmId = "c1", action = "run", tool = "run_lua",
        detail = "print('\27[2J') x", full = "print('\27[2J')\nx" };
      local ok, err, rows = run({ "run it" }, { width = 51, typed = { "n" }, polls = { { run1 }, { done(2) } } });
      expectSuccess(ok, err);
      expect(rows[2]):eq("print('\\x1b[2J')");
    end);

    it("allows a change without asking when sandbox.ai_confirm is false", function()
      local ok, err, rows, record = run({ "write it" }, {
        width = 51,
        settings = { ["sandbox.url"] = URL, ["sandbox.ai_confirm"] = false },
        polls = { { CONFIRM, done(2) } },
      });
      expectSuccess(ok, err);
      expect(#record.reads):eq(0);
      expect(sent(record, "ai.approve")):same({ { turnId = "t1", confirmId = "c1", allow = true } });
      expect(rows[1]):eq("Allowed: write /door.lua (312 bytes)");
    end);

    it("says 1 byte, not 1 bytes", function()
      local one = { seq = 1, kind = "confirm", confirmId = "c1", action = "write", tool = "write_file", detail = "/a", bytes = 1 };
      local ok, err, rows = run({ "write it" }, {
        width = 51,
        settings = { ["sandbox.url"] = URL, ["sandbox.ai_confirm"] = false },
        polls = { { one, done(2) } },
      });
      expectSuccess(ok, err);
      expect(rows[1]):eq("Allowed: write /a (1 byte)");
    end);

    it("aborts the turn on Ctrl-T and says so", function()
      local ok, err, rows, record = run({ "hi" }, {
        width = 51,
        -- the last: the look at the turn at Ctrl-T, which still runs
        polls = { { text(1, "Hello there") }, TERMINATE, {} },
      });
      expectFailedTurn(ok, err);
      expect(sent(record, "ai.abort")):same({ { turnId = "t1" } });
      expect(rows[1]):eq("Hello there");
      expect(rows[2]):eq("Aborted: the turn was stopped (Ctrl-T).");
      for _, row in ipairs(rows) do
        expect(row:find("daemon", 1, true)):eq(nil); -- Ctrl-T leaves the sandbox daemon running
      end
    end);

    it("stops the turn on Q, without Ctrl-T, and says so", function()
      local ok, err, rows, record = run({ "hi" }, {
        width = 51,
        polls = {
          { text(1, "Hello there") },
          function() os.queueEvent("key", keys.q, false); return {}; end,
          { text(2, " never shown") },
        },
      });
      expectFailedTurn(ok, err);
      expect(sent(record, "ai.abort")):same({ { turnId = "t1" } });
      expect(rows[1]):eq("Hello there");
      expect(rows[2]):eq("Stopped: the turn was aborted (Q).");
    end);

    it("says Q stopped the turn while it waited for the daemon to reconnect, as Ctrl-T would", function()
      -- it printed "Not connected to the gateway: ...": the abort cannot reach a gateway the
      -- daemon lost, whose turn ended with the socket (a restarted one forgot it)
      timersAtOnce(825000);
      local waiting = { url = URL, state = "waiting", lastError = "lost the connection: going away", retryInMs = 20000 };
      local ok, err, rows, record = run({ "hi" }, {
        width = 51,
        statuses = {
          { url = URL, state = "connected", connected = true },
          function() os.queueEvent("key", keys.q, false); return waiting; end,
          waiting,
        },
        polls = {
          { text(1, "Hello there") },
          { err = { code = "not_connected", message = "lost the connection: going away" } },
        },
        replies = { ["ai.abort"] = { false, nil, { code = "not_connected", message = "lost the connection: going away" } } },
      });
      expectFailedTurn(ok, err);
      expect(sent(record, "ai.abort")):same({ { turnId = "t1" } });
      expect(rows[1]):eq("Hello there");
      expect(rows[2]):eq("Stopped: the turn was aborted (Q).");
    end);

    it("stops the turn on the first Q after a key turned a page", function()
      -- the stop-key watcher sees the page's key while the pager takes its char off the
      -- queue; the pager then left the watcher to take the next key as the page's, and the
      -- player's Q did not stop the turn: a second Q did
      local ok, err, _, record = run({ "count" }, {
        width = 51,
        height = 8, commandLine = "> ai count",
        -- the key CC queues to every coroutine, the watcher's too, and its char
        queuedAtPause = { { { "key", keys.space, false }, { "char", " " } } },
        polls = {
          { text(1, twentyLines()) },
          function() os.queueEvent("key", keys.q, false); return {}; end,
          { text(2, "never shown") },
        },
      });
      expectFailedTurn(ok, err);
      expect(#record.pauses >= 1):eq(true);
      expect(sent(record, "ai.abort")):same({ { turnId = "t1" } });
    end);

    it("does not take the key that ended a question for stop", function()
      local long = {};
      for i = 1, 12 do
        long[#long + 1] = "line" .. i .. "\n";
      end
      local ok, err, _, record = run({ "write it" }, {
        width = 51,
        typed = { "q" },
        polls = {
          { CONFIRM },
          function()
            -- the key that ended the question reaches the stop-key watcher after read()
            os.queueEvent("key", keys.q, false);
            return { text(2, table.concat(long)), done(3) };
          end,
        },
      });
      expectSuccess(ok, err);
      expect(#sent(record, "ai.abort")):eq(0);
      expect(sent(record, "ai.approve")[1].allow):eq(false);
    end);

    it("shows the turn's error, its cut and its end", function()
      local ok, err, rows = run({ "hi" }, {
        width = 51,
        polls = { {
          text(1, "Part"),
          { seq = 2, kind = "cut", message = "the answer passed 64 KiB" },
          { seq = 3, kind = "error", code = "timeout", message = "The agent did not answer within 90 s" },
          done(4, "deadline"),
        } },
      });
      expectFailedTurn(ok, err);
      expect(rows[1]):eq("Part");
      expect(rows[2]):eq("(The answer was cut: the answer passed 64 KiB)");
      expect(rows[3]):eq("The agent did not answer within 90 s");
      expect(rows[4]):eq("");
    end);

    it("names the fix when the turn fails because opencode is down, and shows a provider's failure as it is", function()
      local ok, err, rows = run({ "hi" }, {
        width = 80,
        polls = { {
          { seq = 1, kind = "error", code = "ai_unavailable", message = "the agent is unavailable: opencode at http://127.0.0.1:4242: connection refused" },
          done(2, "error"),
        } },
      });
      expectFailedTurn(ok, err);
      -- whose fix it is, once: it said "Run: sandbox health", which only said the detail again
      expect(rows[1] .. " " .. rows[2]):eq("The agent is unavailable (tell the gateway's operator): opencode at http://127.0.0.1:4242: connection refused");
      expect(rows[3]):eq("");
      ok, err, rows = run({ "hi" }, {
        width = 80,
        polls = { { { seq = 1, kind = "error", code = "ai_unavailable", message = "Incorrect API key provided: sk-ab****cd." }, done(2, "error") } },
      });
      expectFailedTurn(ok, err);
      expect(rows[1]):eq("Incorrect API key provided: sk-ab****cd.");
    end);

    it("shows the gateway's words around the answer as one line each: tool, retry, cut, error", function()
      local long = ("z"):rep(2000);
      local ok, err, _, record = run({ "hi" }, {
        width = 51, height = 100,
        polls = { {
          { seq = 1, kind = "tool", tool = "read\nfiles: write", detail = "/a\r\n" .. long, state = "completed" },
          { seq = 2, kind = "tool", tool = "bash", detail = "x", state = "error", error = "no\nexec: true" },
          { seq = 3, kind = "retry", attempt = "1\n2", message = "down\n\nReally" },
          { seq = 4, kind = "cut", message = "a\nb" },
          { seq = 5, kind = "error", code = "timeout", message = "late\n" .. long },
          done(6, "deadline"),
        } },
      });
      expectFailedTurn(ok, err);
      local rows = record.rows();
      local between, joined = "|" .. table.concat(rows, "|") .. "|", table.concat(rows);
      expect(rows[1]):eq("* read files: write /a");
      expect(joined):str_match("^%* read files: write /a" .. ("z"):rep(1021) .. "%.%.%.%(cut,%s*2004 bytes%)%* bash");
      expect(between):str_match("|%* bash x failed: no exec: true|The agent's model failed on the gateway's host,|retrying %(attempt 1 2%): down Really|");
      expect(between):str_match("|%(The answer was cut: a b%)|late|");
      expect(joined):str_match("late" .. ("z"):rep(1019) .. "%.%.%.%(cut,%s*2005 bytes%)$");
    end);

    it("names the old ai's opencc.* settings, which are not used any more", function()
      local ok, err, rows = run({ "hi" }, {
        width = 51,
        settings = { ["sandbox.url"] = URL, ["opencc.password"] = "hunter2", ["opencc.session_id"] = "ses_1" },
        polls = { { text(1, "Hello"), done(2) } },
      });
      expectSuccess(ok, err);
      -- Each removal is a line of its own, which no screen breaks after "set" (it did).
      expect(rows[1]):eq("Not used any more: opencc.password,");
      expect(rows[2]):eq("opencc.session_id. Remove them with:");
      expect(rows[3]):eq("set opencc.password nil");
      expect(rows[4]):eq("set opencc.session_id nil");
      expect(rows[5]):eq("Hello");
      for _, row in ipairs(rows) do
        expect(row:find("hunter2", 1, true)):eq(nil);
      end
      local pocketOk, pocketErr, pocketRows = run({ "hi" }, {
        width = 26,
        settings = { ["sandbox.url"] = URL, ["opencc.password"] = "hunter2" },
        polls = { { text(1, "Hello"), done(2) } },
      });
      expectSuccess(pocketOk, pocketErr);
      expect({ pocketRows[1], pocketRows[2], pocketRows[3], pocketRows[4] }):same({
        "Not used any more:", "opencc.password. Remove it", "with:", "set opencc.password nil",
      });
    end);

    it("fails (shell.run returns false) when the turn fails, without a second line, and not when it answers", function()
      local ok, err, rows = run({ "hi" }, {
        width = 51,
        polls = { { text(1, "Hello"), { seq = 2, kind = "error", code = "ai_unavailable", message = "Provider down." }, done(3, "error") } },
      });
      expectFailedTurn(ok, err);
      expect(rows[2]):eq("Provider down.");
      expect(rows[3]):eq("");
      ok, err = run({ "hi" }, { polls = { { text(1, "Hello"), done(2) } } });
      expectSuccess(ok, err);
    end);

    it("says why a turn ended without an error event", function()
      local ok, err, rows = run({ "hi" }, { width = 51, polls = { { done(1, "deadline") } } });
      expectFailedTurn(ok, err);
      expect(rows[1]):eq("The agent took too long: ask again later");
    end);
  end);

  describe("errors", function()
    local cases = {
      -- the gateway's own words (internal/agent), which begin in lower case as its errors do
      { "ai_disabled", { code = "ai_disabled", message = "the agent is off: its operator must set --ai-model" },
        "The agent is off: its operator must set --ai-model" },
      { "ai_unavailable", { code = "ai_unavailable", message = "the agent is unavailable: opencode at http://127.0.0.1:4096: connection refused" },
        "The agent is unavailable (tell the gateway's operator): opencode at http://127.0.0.1:4096: connection refused" },
      { "ai_unavailable without the gateway's prefix", { code = "ai_unavailable", message = "opencode does not answer" },
        "The agent is unavailable (tell the gateway's operator): opencode does not answer" },
      { "busy", { code = "busy", message = "a turn is running on session main; try again when it ends" },
        "A turn is running on session main; try again when it ends" },
      { "ai_disabled without the gateway's words", { code = "ai_disabled", message = "" },
        "The agent is off: its operator must set --ai-model" },
      { "busy without the gateway's words", { code = "busy", message = "" },
        "The agent is busy here: wait or stop it (Q, Ctrl-T)" },
      { "not connected", { code = "not_connected", message = "the gateway is unreachable" },
        "Not connected to the gateway: the gateway is unreachable. Run: sandbox status" },
      -- CC's message and the daemon's are said as sandbox status says them: they name no fix.
      { "not connected, nothing answering", { code = "not_connected", message = "Could not connect" },
        "Not connected to the gateway: nothing answers at 127.0.0.1:4444: the gateway there is not running (its operator starts it), or the address or port is wrong (sandbox setup); the daemon retries every 5 s" },
      { "not connected, the gateway stopped", { code = "not_connected", message = "lost the connection: going away" },
        "Not connected to the gateway: the gateway stopped (going away); the daemon reconnects by itself once it runs again" },
      { "timeout", { code = "timeout", message = "no reply" },
        "The gateway did not answer in time. Run: sandbox health" },
      { "an older gateway", { code = "unknown_type", message = "no handler for ai.ask" },
        "This gateway has no agent (it is older than this client); its operator must upgrade it" },
      { "another code", { code = "internal", message = "oops" },
        "The gateway refused: internal: oops" },
      { "the gateway's words as one short line", { code = "odd\ncode", message = "a\nfiles: write " .. ("z"):rep(300) },
        "The gateway refused: odd code: a files: write " .. ("z"):rep(256 - 15) .. "...(cut, 315 bytes)" },
      { "busy in one short line", { code = "busy", message = "wait\r\n" .. ("z"):rep(300) },
        "Wait " .. ("z"):rep(256 - 5) .. "...(cut, 306 bytes)" },
    };
    for _, case in ipairs(cases) do
      it("says " .. case[1] .. " in one line naming the fix", function()
        local ok, err, rows = run({ "hi" }, { width = 80, replies = { ["ai.ask"] = { false, nil, case[2] } } });
        expect(ok):eq(false);
        expect(err):eq(case[3]);
        expect(rows[1]):eq("");
      end);
    end

    it("breaks a URL in its one line before a separator on a pocket computer", function()
      local ok, err = run({ "hi" }, { width = 26, replies = { ["ai.ask"] = { false, nil,
        { code = "ai_unavailable", message = "opencode at http://192.168.100.200:4096/global/health: connection refused" } } } });
      expect(ok):eq(false);
      expect(err):eq("The agent is unavailable (tell the gateway's operator): opencode at\nhttp://192.168.100.200\n:4096/global/health: connection refused");
    end);

    it("fails at once when sandbox.url is not set", function()
      local ok, err, _, record = run({ "hi" }, { settings = {} });
      expect(ok):eq(false);
      expect(err):eq("sandbox.url is not set. Run: sandbox setup");
      expect(#record.sends):eq(0);
    end);

    it("fails at once when the daemon is not running", function()
      local ok, err, _, record = run({ "hi" }, { noDaemon = true });
      expect(ok):eq(false);
      expect(err):str_match("^The sandbox daemon is not running");
      expect(#record.sends):eq(0);
    end);

    it("says why the daemon is not running when shell.allow_startup is false, and its fix", function()
      -- a reboot alone, the usual fix, runs no startup file then
      local ok, err, _, record = run({ "hi" }, {
        noDaemon = true, width = 26, settings = { ["sandbox.url"] = URL, ["shell.allow_startup"] = false },
      });
      expect(ok):eq(false);
      -- laid out as every line ai prints, here on a pocket computer's 26 columns: a row ending
      -- in "set" would print every setting
      expect(err):eq(lib.fitLongWords("The sandbox daemon is not running: shell.allow_startup is false, so the computer "
        .. "runs no startup file at boot. Run: set shell.allow_startup true, then reboot", 26));
      expect(#record.sends):eq(0);
    end);

    it("waits for a daemon that is still connecting, as sandbox health does", function()
      timersAtOnce(810000);
      local ok, err, rows, record = run({ "hi" }, {
        statuses = { { state = "connecting" }, { state = "authenticating" }, { state = "connected", connected = true } },
        polls = { { text(1, "Hello"), done(2) } },
      });
      expectSuccess(ok, err);
      expect(record.statusRequests):eq(3);
      expect(rows[1]):eq("Hello");
    end);

    it("makes a daemon waiting to reconnect try now before it asks, as sandbox health does", function()
      -- typed right after the gateway's restart, it said "Not connected to the gateway: nothing
      -- answers at ...; the daemon retries in 5 s" while the gateway was back
      timersAtOnce(815000);
      local ok, err, rows, record = run({ "hi" }, {
        statuses = { { state = "waiting", lastError = "Could not connect", retryInMs = 5000 } },
        afterRetry = { { state = "connecting", lastError = "Could not connect" }, { state = "connected", connected = true } },
        polls = { { text(1, "Hello"), done(2) } },
      });
      expectSuccess(ok, err);
      expect(record.retries):eq(1);
      expect(record.retriedAfter):eq(0); -- before its first look at the daemon
      expect(rows[1]):eq("Hello");
    end);

    it("makes a daemon waiting to reconnect try now before each question of a conversation", function()
      -- the gateway restarted while the conversation waited at its prompt: the next question
      -- said "Not connected to the gateway: nothing answers at ...: start the gateway there,
      -- or fix the address or port (sandbox setup); the daemon retries in 2 s" while the
      -- gateway was back, until the daemon's own timer tried (up to a minute, backing off)
      timersAtOnce(817000);
      local connected = { url = URL, state = "connected", connected = true };
      local waiting = { url = URL, state = "waiting", lastError = "Could not connect", retryInMs = 30000 };
      local ok, err, rows, record = run({}, {
        width = 51, height = 12,
        typed = { "first", "second" },
        -- connected for the conversation's start and its first question (a try now before
        -- each); lost while the prompt waited; back once asked to try now a third time
        statuses = { function(r) return (r.turns == 0 or r.retries >= 3) and connected or waiting; end },
        replies = { ["ai.ask"] = function(r)
          if r.retries < 3 and r.turns > 1 then
            return { false, nil, { code = "not_connected", message = "Could not connect" } };
          end
          return { true, { turnId = "t" .. r.turns } };
        end },
        polls = { { text(1, "One"), done(2) }, { text(1, "Two"), done(2) } },
      });
      expectSuccess(ok, err);
      expect(rows[3]):eq("One");
      expect(rows[4]):eq("ai> second");
      expect(rows[5]):eq("Two");
      expect(record.retries):eq(3);
    end);

    it("says the gateway lost a turn it no longer knows, in one line of a computer", function()
      local ok, err = run({ "hi" }, { polls = { { err = { code = "unknown_turn", message = "no turn t1" } } } });
      expect(ok):eq(false);
      expect(err):eq("The gateway lost the answer (restarted?): ask again");
      expect(#err <= 51):eq(true);
    end);

    it("waits for the daemon to reconnect after a restart of the gateway, saying so, then says the answer was lost", function()
      timersAtOnce(820000);
      local whileWaiting;
      local ok, err, rows, record = run({ "hi" }, {
        width = 26,
        statuses = { { state = "connected", connected = true }, { state = "waiting", lastError = "lost the connection: going away" },
          { state = "connected", connected = true } },
        polls = {
          { text(1, "Hel") },
          { err = { code = "not_connected", message = "lost the connection: going away" } },
          function(screen) whileWaiting = screen; return { err = { code = "unknown_turn", message = "no turn t1" } }; end,
        },
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway lost the answer (restarted?): ask again");
      expect(record.statusRequests):eq(3);
      -- The screen stood still for as long as the daemon took (some 16 s) with the gateway gone.
      expect(whileWaiting[1]):eq("Hel");
      expect(whileWaiting[2]):eq("Reconnecting... (Q stops)");
      expect(rows[2]):eq("");
    end);

    it("makes a daemon that backs off try now while it waits, then says the answer was lost", function()
      -- a daemon whose last connections each lasted under a minute waits 20 s: ai gave up
      -- after 16 s and said "Not connected to the gateway: the gateway stopped (going away);
      -- the daemon retries in 5 s", the gateway back meanwhile
      timersAtOnce(822000);
      local connected = { url = URL, state = "connected", connected = true };
      local backingOff = { url = URL, state = "waiting", lastError = "lost the connection: going away", retryInMs = 20000 };
      local ok, err, _, record = run({ "hi" }, {
        statuses = {
          connected,
          -- the first ask to try now was the question's own (checkDaemon's)
          function(r) return r.retries >= 2 and connected or backingOff; end,
        },
        polls = {
          { text(1, "Hel") },
          { err = { code = "not_connected", message = "lost the connection: going away" } },
          { err = { code = "unknown_turn", message = "no turn t1" } },
        },
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway lost the answer (restarted?): ask again");
      expect(record.retries):eq(2);
      expect(record.statusRequests):eq(3);
    end);

    -- A daemon waiting to try again, its clock held still (os.epoch("utc") at NOW): it says
    -- its next try is 38 s away, as sandbox status's state does ("waiting (38 s)").
    local NOW = 1700000000000;
    local function waitingDaemon(lastError)
      local realEpoch = os.epoch;
      stub(os, "epoch", function(kind)
        if kind == "utc" then
          return NOW;
        end
        return realEpoch(kind);
      end);
      return { url = URL, connected = false, state = "waiting", lastError = lastError, retryAt = NOW + 37500 };
    end

    it("names the seconds to the daemon's next try, as sandbox status and sandbox health do", function()
      local waiting = waitingDaemon("Could not connect");
      local ok, err = run({ "hi" }, { width = 200, statuses = { waiting },
        replies = { ["ai.ask"] = { false, nil, { code = "not_connected", message = "Could not connect" } } } });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: nothing answers at 127.0.0.1:4444: the gateway there is not running (its operator starts it), or the address or port is wrong (sandbox setup); the daemon retries in 38 s");
      -- ai alone, before its prompt
      local rows, record;
      waiting.lastError = "lost the connection: Connection closed";
      ok, err, rows, record = run({}, { width = 200, typed = { "exit" }, statuses = { waiting },
        probe = { code = "not_connected", message = "lost the connection: Connection closed" } });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: the gateway closed the connection (Connection closed): it stopped or restarted; the daemon retries in 38 s");
      expect(#record.reads):eq(0);
      expect(rows[1]):eq("");
    end);

    it("says a gateway that answered since boot stopped, on a computer and a pocket computer", function()
      -- it said "the gateway there is not running (its operator starts it), or the address or
      -- port is wrong (sandbox setup)" of a gateway that had answered this computer until then
      local stopped = "Could not connect (the gateway answered here until 18:40 UTC)";
      local said = "Not connected to the gateway: nothing answers at 127.0.0.1:4444: the gateway there answered"
        .. " until 18:40 UTC and stopped (its operator restarts it); the daemon retries in 38 s";
      for _, width in ipairs({ 51, 26 }) do
        local ok, err = run({ "hi" }, { width = width, statuses = { waitingDaemon(stopped) },
          replies = { ["ai.ask"] = { false, nil, { code = "not_connected", message = stopped } } } });
        expect(ok):eq(false);
        expect((err:gsub("\n", " "))):eq(said);
      end
      -- the answer a question waited for is lost with the gateway
      local ok, err = run({ "hi" }, {
        width = 200,
        statuses = { { url = URL, state = "connected", connected = true }, waitingDaemon(stopped) },
        polls = { { text(1, "Hel") }, { err = { code = "not_connected", message = "lost the connection: going away" } } },
      });
      expect(ok):eq(false);
      expect(err):eq(said .. ". The answer is lost: ask again once reconnected");
    end);

    it("names a stopped daemon's fix once, in sandbox health's words", function()
      -- it said "...: run sandbox reconnect. Run: sandbox status", a second fix that shows the stop again
      local stopped = { url = URL, connected = false, state = "stopped", lastError = "Could not connect" };
      local ok, err = run({ "hi" }, { width = 200, statuses = { stopped },
        replies = { ["ai.ask"] = { false, nil, { code = "not_connected", message = "the sandbox daemon has stopped (sandbox stop): run sandbox reconnect" } } } });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: stopped with sandbox stop; sandbox reconnect starts it again");
    end);

    it("names, after waiting for a gateway that did not come back, the reason the daemon waits after now and its next try, and that the answer is lost", function()
      -- it said only why and the daemon's next try, as if the answer would come once it
      -- connected: the gateway ended the turn with the socket
      timersAtOnce(830000);
      local waiting = waitingDaemon("Could not connect");
      local ok, err, rows = run({ "hi" }, {
        width = 200,
        statuses = { { url = URL, state = "connected", connected = true }, waiting },
        polls = {
          { text(1, "Hel") },
          -- the poll's reason, from before the daemon tried again and found nothing there
          { err = { code = "not_connected", message = "lost the connection: going away" } },
        },
      });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: nothing answers at 127.0.0.1:4444: the gateway there is not running (its operator starts it), or the address or port is wrong (sandbox setup); the daemon retries in 38 s. The answer is lost: ask again once reconnected");
      expect(rows[1]):eq("Hel");
    end);

    it("says the answer is lost when the gateway it got back breaks again at once", function()
      -- A gateway that took the hello and died (or restarted twice): the poll after the
      -- reconnect lost the socket too, and ai said only why, as if the answer would still come
      -- once connected; the gateway ended the turn with the first socket.
      local waiting = waitingDaemon("lost the connection: Connection closed");
      local ok, err, rows = run({ "hi" }, {
        width = 200,
        statuses = { { url = URL, state = "connected", connected = true }, { url = URL, state = "connected", connected = true }, waiting },
        polls = {
          { text(1, "Hel") },
          { err = { code = "not_connected", message = "lost the connection: Connection closed" } },
          { err = { code = "not_connected", message = "lost the connection: Connection closed" } },
        },
      });
      expect(ok):eq(false);
      expect(err):eq("Not connected to the gateway: the gateway closed the connection (Connection closed): it stopped or restarted; the daemon retries in 38 s. The answer is lost: ask again once reconnected");
      expect(rows[1]):eq("Hel");
    end);

    it("says the answer is lost when the gateway it got back does not answer", function()
      -- it polled on under Reconnecting... for some 70 s, then said only that the gateway did
      -- not answer, of a turn that had ended with the first socket
      local ok, err, rows = run({ "hi" }, {
        width = 200,
        polls = {
          { text(1, "Hel") },
          { err = { code = "not_connected", message = "lost the connection: Connection closed" } },
          { err = { code = "timeout", message = "The gateway did not answer within 10 seconds" } },
          { err = { code = "timeout", message = "The gateway did not answer within 10 seconds" } },
          { err = { code = "timeout", message = "The gateway did not answer within 10 seconds" } },
          { err = { code = "timeout", message = "The gateway did not answer within 10 seconds" } },
          { err = { code = "timeout", message = "The gateway did not answer within 10 seconds" } },
          { err = { code = "timeout", message = "The gateway did not answer within 10 seconds" } },
          { err = { code = "timeout", message = "The gateway did not answer within 10 seconds" } },
        },
      });
      expect(ok):eq(false);
      expect(err):eq("The gateway did not answer in time. Run: sandbox health. The answer is lost: ask again once reconnected");
      expect(rows[1]):eq("Hel");
    end);

    it("says a daemon that died during the turn is not running, with its one fix", function()
      -- it said "Not connected to the gateway: The sandbox daemon is not running; reboot the
      -- computer to start it. Run: sandbox status", a second fix that can only say it again
      local ok, err, rows = run({ "hi" }, {
        width = 51,
        -- connected when ai started, then no daemon answers its status (false: no status)
        statuses = { { url = URL, state = "connected", connected = true }, false },
        polls = {
          { text(1, "Hel") },
          -- what libsandbox.request answers when, after its wait, no daemon answers either
          { err = { code = "not_connected", message = lib.NO_DAEMON } },
        },
      });
      expect(ok):eq(false);
      expect(err):eq("The sandbox daemon is not running; reboot the computer to start it. The answer is lost: ask again once reconnected");
      expect(rows[1]):eq("Hel");
    end);

    it("says the turn ended when the daemon got the same gateway back", function()
      local ok, err, rows = run({ "hi" }, {
        width = 51,
        polls = {
          { text(1, "Hello") },
          { err = { code = "not_connected", message = "lost the connection" } },
          { text(1, "Hello"), done(2, "disconnected") },
        },
      });
      expectFailedTurn(ok, err);
      expect(rows[1]):eq("Hello");
      expect(rows[2]):eq("The turn ended: this computer lost the gateway.");
    end);

    it("refuses an unknown option", function()
      local ok, err, _, record = run({ "--frobnicate" });
      expect(ok):eq(false);
      expect(err):eq("ai: unknown option '--frobnicate'.\nRun: ai --help");
      expect(#record.sends):eq(0);
      -- one dash too, as sandbox: `ai -v` is no question for the agent
      ok, err, _, record = run({ "-v" });
      expect(ok):eq(false);
      expect(err):eq("ai: unknown option '-v'.\nRun: ai --help");
      expect(#record.sends):eq(0);
    end);

    it("refuses an empty question with what to type instead, before asking the gateway", function()
      for _, args in ipairs({ { "" }, { "  " }, { "", "" } }) do
        local ok, err, _, record = run(args);
        expect(ok):eq(false);
        expect(err):eq("ai: the question is empty.\nRun: ai <question>\nor: ai (a conversation)");
        expect(#record.sends):eq(0);
      end
    end);

    it("refuses a word after --reset, forgetting nothing", function()
      local ok, err, _, record = run({ "--reset", "now" });
      expect(ok):eq(false);
      expect(err):eq("ai --reset: unexpected argument 'now'.\nRun: ai --help");
      expect(#record.sends):eq(0);
    end);
  end);

  describe("ai alone", function()
    it("holds a conversation until exit, keeping the typed lines as history", function()
      local ok, err, rows, record = run({}, {
        width = 40,
        typed = { "hello", "", "and then?", "exit" },
        polls = { { text(1, "Hi!"), done(2) }, { text(1, "Then bye."), done(2) } },
      });
      expectSuccess(ok, err);
      expect(rows):same({
        "Ask the agent. exit or Ctrl-T leaves.",
        "ai> hello", "Hi!", "ai>", "ai> and then?", "Then bye.", "ai> exit", "",
      });
      local asks = sent(record, "ai.ask");
      expect(#asks):eq(2);
      expect(asks[2].prompt):eq("and then?");
      expect(record.reads[4].history):same({ "hello", "and then?" });
    end);

    it("leaves on exit in any case, exit() as CC's lua prompt does, and quit, asking nothing", function()
      -- each went to the agent as a question, which it answered by telling the player to type exit
      for _, line in ipairs({ "Exit", "EXIT", " exit() ", "quit", "Quit()" }) do
        local ok, err, rows, record = run({}, { width = 40, typed = { line } });
        expectSuccess(ok, err);
        expect({ rows[1], rows[2] }):same({ "Ask the agent. exit or Ctrl-T leaves.", (("ai> " .. line):gsub("%s+$", "")) });
        expect(#sent(record, "ai.ask")):eq(0);
      end
      -- a question that only begins with one of them is a question
      local ok, err, _, record = run({}, {
        width = 40, typed = { "exit the maze?", "exit" }, polls = { { text(1, "Left."), done(2) } },
      });
      expectSuccess(ok, err);
      expect(sent(record, "ai.ask")[1].prompt):eq("exit the maze?");
    end);

    it("leaves on Ctrl-T at the prompt, and goes on after Ctrl-T in a turn", function()
      local ok, err, rows, record = run({}, {
        width = 45,
        typed = { "hi", "again", CTRL_T },
        polls = { TERMINATE, {}, { text(1, "Back."), done(2) } }, -- {}: the look at Ctrl-T
      });
      expectSuccess(ok, err);
      expect(rows[3]):eq("Aborted: the turn was stopped (Ctrl-T).");
      expect(rows[5]):eq("Back.");
      expect(#sent(record, "ai.abort")):eq(1);
      -- the shell's prompt comes on a row of its own, not after "ai> "
      expect(rows[6]):eq("ai>");
      expect({ record.cursorPos() }):same({ 1, 7 });
    end);

    it("shows the abort line when a second Ctrl-T stops the paging of the code line it still held", function()
      -- Ctrl-T while a code line streams: the end of the turn shows the line it held, which
      -- pages; a Ctrl-T there escaped the turn, without the abort line (in a conversation,
      -- ending it), and left the reader inside the fence.
      local ok, err, rows, record = run({ "count" }, {
        width = 20, height = 6, terminateAtPause = 1,
        polls = { { text(1, "Here:\n```lua\nprint(\"" .. string.rep("x", 100)) }, TERMINATE, {} },
      });
      expectFailedTurn(ok, err);
      expect(#record.pauses):eq(1);
      expect(sent(record, "ai.abort")):same({ { turnId = "t1" } });
      local found = false;
      for _, row in ipairs(rows) do
        found = found or row:find("Aborted", 1, true) ~= nil;
      end
      expect(found):eq(true);
    end);

    it("goes on in its colours after Ctrl-T at a \"Press any key\" in a heading or in code", function()
      -- the heading's yellow (the code's light blue) stayed: the next question typed and its
      -- answer showed in it. The heading's 10 words end where the pager stops, at its line's end.
      for _, case in ipairs({ { "## ", 10 }, { "```\n", 12 } }) do
        local words = {};
        for i = 1, case[2] do
          words[i] = "heading" .. i;
        end
        local ok, err, rows, record = run({}, {
          width = 20, height = 6, terminateAtPause = 1,
          typed = { "door", "again", CTRL_T },
          polls = { { text(1, case[1] .. table.concat(words, " ") .. "\n") }, {}, { text(1, "Back."), done(2) } },
        });
        expectSuccess(ok, err);
        expect(#record.pauses):eq(1); -- Ctrl-T in the answer's paging
        local at = {};
        for y, row in ipairs(rows) do
          at[row] = y;
        end
        expect(at["ai> again"]):ne(nil);
        expect(record.colours(at["ai> again"]):sub(1, 9)):eq("444400000");
        expect(record.colours(at["Back."]):sub(1, 5)):eq("00000");
      end
    end);

    it("says at once, before its prompt, that the gateway has no agent, or is not there, naming who fixes it", function()
      for _, case in ipairs({
        -- The daemon lost the gateway: the prompt opened, and its first question said so.
        { { code = "not_connected", message = "Could not connect" },
          "Not connected to the gateway: nothing answers at 127.0.0.1:4444: the gateway there is not running (its operator starts it), or the address or port is wrong (sandbox setup); the daemon retries every 5 s" },
        { { code = "ai_disabled", message = "the agent is off: its operator must set --ai-model" },
          "The agent is off: its operator must set --ai-model" },
        { { code = "unknown_type", message = "no handler for ai.poll" },
          "This gateway has no agent (it is older than this client); its operator must upgrade it" },
      }) do
        local ok, err, rows, record = run({}, { width = 120, typed = { "hi", "exit" }, probe = case[1] });
        expect(ok):eq(false);
        expect(err):eq(case[2]);
        expect(#record.reads):eq(0);
        expect(rows[1]):eq("");
        expect(sent(record, "ai.poll")):same({ { turnId = "", after = 0, waitMs = 0 } });
      end
      -- Any other failure leaves it to the first question (the daemon may be reconnecting).
      local ok, err, rows, record = run({}, { width = 60, typed = { "exit" },
        probe = { code = "timeout", message = "no reply" } });
      expectSuccess(ok, err);
      expect(rows[1]):eq("Ask the agent. exit or Ctrl-T leaves.");
      expect(record.probes):eq(1);
    end);

    it("says at once, before its prompt, that the agent cannot answer when the gateway's probe says why", function()
      -- opencode answers but lacks the agent's model (probe_gateway's aiDetail), or opencode
      -- is down: the prompt opened, the player typed a question, and only then read why.
      for _, case in ipairs({
        { { sandboxOk = true, opencodeOk = true,
            aiDetail = "opencode lacks the agent's model (--ai-model): its provider has no key there, or the name is wrong" },
          "The agent is unavailable (tell the gateway's operator): opencode lacks the agent's model (--ai-model): its provider has no key there, or the name is wrong" },
        { { sandboxOk = true, opencodeOk = false, opencodeDetail = "opencode at http://127.0.0.1:4242: connection refused" },
          "The agent is unavailable (tell the gateway's operator): opencode at http://127.0.0.1:4242: connection refused" },
      }) do
        local ok, err, rows, record = run({}, { width = 200, typed = { "hi", "exit" },
          replies = { probe_gateway = { true, case[1] } } });
        expect(ok):eq(false);
        expect(err):eq(case[2]);
        expect(#record.reads):eq(0);
        expect(rows[1]):eq("");
        expect(#sent(record, "probe_gateway")):eq(1);
        expect(#sent(record, "ai.ask")):eq(0);
      end
      -- A healthy answer, or none (an older gateway, a timeout), opens the prompt.
      for _, reply in ipairs({ { true, { sandboxOk = true, opencodeOk = true } }, { false, nil, { code = "timeout", message = "no reply" } } }) do
        local ok, err, rows = run({}, { width = 60, typed = { "exit" }, replies = { probe_gateway = reply } });
        expectSuccess(ok, err);
        expect(rows[1]):eq("Ask the agent. exit or Ctrl-T leaves.");
      end
      -- A probe not answered within 2 s (played: opencode just restarted, the gateway's probe
      -- waited 5 s on it) is not waited for: the prompt stood blank that long.
      local started = os.clock();
      local waitedOk, waitedErr, waitedRows = run({}, { width = 60, typed = { "exit" }, replies = { probe_gateway = NO_REPLY } });
      expectSuccess(waitedOk, waitedErr);
      expect(waitedRows[1]):eq("Ask the agent. exit or Ctrl-T leaves.");
      expect(os.clock() - started <= 2.5):eq(true);
      -- A gateway without an agent is not probed: ai.poll said so.
      local _, _, _, record = run({}, { width = 60, typed = { "exit" },
        probe = { code = "ai_disabled", message = "the agent is off: its operator must set --ai-model" } });
      expect(#sent(record, "probe_gateway")):eq(0);
    end);

    it("shows a refused question in red and goes on", function()
      local ok, err, rows = run({}, {
        width = 60,
        typed = { "hi", "exit" },
        replies = { ["ai.ask"] = { false, nil, { code = "busy", message = "a turn is running on session main" } } },
      });
      expectSuccess(ok, err);
      expect(rows[3]):eq("A turn is running on session main");
      expect(rows[4]):eq("ai> exit");
    end);
  end);

  describe("options", function()
    it("--reset resets the conversation", function()
      local ok, err, rows, record = run({ "--reset" }, { width = 70 });
      expectSuccess(ok, err);
      expect(sent(record, "ai.reset")):same({ { session = "main" } });
      expect(rows[1]):eq("The conversation is reset: the next question starts a new one.");
    end);

    it("--reset says busy while a turn runs", function()
      local ok, err = run({ "--reset" }, {
        replies = { ["ai.reset"] = { false, nil, { code = "busy", message = "a turn is running; reset when it ends" } } },
      });
      expect(ok):eq(false);
      expect(err):eq("A turn is running; reset when it ends");
    end);

    it("--help fits a pocket screen's 26 columns and a turtle's 13 rows", function()
      local ok, err, rows, record = run({ "--help" }, { width = 26, height = 13 });
      expectSuccess(ok, err);
      expect(rows[1]):eq("Usage: ai <question>");
      expect(#record.sends):eq(0);
      -- CC's print wraps a longer line (this one clips it): none may need to
      for _, line in ipairs(record.printed) do
        if #line > 25 then
          fail("help line wider than a pocket computer: " .. line);
        end
      end
      -- the command typed and the next prompt stay on the screen with it
      expect(#record.printed <= 11):eq(true);
      local help = table.concat(record.printed, "\n");
      for _, word in ipairs({ "--reset", "--version", "exit", "Ctrl-T", "sandbox.ai_confirm" }) do
        expect(help:find(word, 1, true) ~= nil):eq(true);
      end
    end);
  end);
end);
