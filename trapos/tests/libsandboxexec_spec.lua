-- Specs for /apis/libsandboxexec: lua.exec and shell.run jobs in coroutines of their own,
-- fed with real events, on a screen of their own the size of the computer's, their output
-- captured and their time bounded.

local lib = require('/apis/libsandboxexec');
local speckit = require('/tests/speckit');

-- withdrawn, when given, is the runner's: why the owner no longer allows jobs, or nil.
local function newRunner(shellApi, withdrawn)
  return lib.newRunner({
    term = term, os = os, env = _G, shell = shellApi,
    withdrawn = withdrawn or function() return nil; end,
  });
end

-- Starts a job and feeds it events until it answers. Returns {ok, payload, err}.
local function finish(runner, kind, payload)
  local answer;
  runner[kind](payload, function(ok, result, err) answer = { ok = ok, payload = result, err = err }; end);
  while answer == nil do
    local event = table.pack(os.pullEventRaw());
    runner.onEvent(table.unpack(event, 1, event.n));
  end
  return answer;
end

-- Starts a job and feeds it events until it answers, with input events fed first (they
-- must not reach it). Returns {ok, payload, err}.
local function finishWithInput(runner, kind, payload, inputs)
  local answer;
  runner[kind](payload, function(ok, result, err) answer = { ok = ok, payload = result, err = err }; end);
  for _, input in ipairs(inputs) do
    runner.onEvent(table.unpack(input));
  end
  while answer == nil do
    local event = table.pack(os.pullEventRaw());
    runner.onEvent(table.unpack(event, 1, event.n));
  end
  return answer;
end

-- The rows a loop over the whole screen draws: "row 1" .. "row <height>".
local function drawnRows()
  local _, height = term.native().getSize();
  local rows = {};
  for y = 1, height do
    rows[y] = "row " .. y;
  end
  return table.concat(rows, "\n");
end

-- A chunk that clears the screen and writes every row, forever, yielding between frames.
local CLEAR_LOOP = [[
while true do
  term.clear();
  local _, height = term.getSize();
  for y = 1, height do
    term.setCursorPos(1, y);
    term.write("row " .. y);
  end
  sleep(0);
end
]];

describe("libsandboxexec", function()
  describe("lua.exec", function()
    it("evaluates an expression first, as the lua program does", function()
      local answer = finish(newRunner(), "exec", { code = "1+1" });
      expect(answer.ok):eq(true);
      expect(answer.payload.returns):same({ 2 });
      expect(answer.payload.output):eq("");
      expect(answer.payload.error):eq(nil);
    end);

    it("runs statements and returns every value, nil included", function()
      local answer = finish(newRunner(), "exec", { code = "local a = 1; return a, nil, 'x', nil" });
      expect(textutils.serializeJSON(answer.payload.returns)):eq('[1,null,"x",null]');
    end);

    it("returns an empty array when the chunk returns nothing", function()
      local answer = finish(newRunner(), "exec", { code = "local x = 1" });
      expect(textutils.serializeJSON(answer.payload.returns)):eq("[]");
    end);

    it("captures print and write as the computer's screen shows them, and restores the terminal", function()
      local before = term.current();
      local width = term.native().getSize();
      local answer = finish(newRunner(), "exec", { code = "print('hi'); write('a b'); write(' ' .. string.rep('y', " .. width .. "))" });
      expect(answer.payload.output):eq("hi\na b\n" .. string.rep("y", width));
      expect(term.current()):eq(before);
    end);

    it("keeps the chunk's own redirect from one resume to the next", function()
      local before = term.current();
      local answer = finish(newRunner(), "exec", {
        code = "local w = window.create(term.current(), 1, 1, 20, 2); term.redirect(w); sleep(0); print('in window'); return term.current() == w",
      });
      expect(answer.payload.returns):same({ true });
      expect(answer.payload.output):eq("in window\n");
      expect(term.current()):eq(before);
    end);

    it("gives the chunk a terminal the size of the computer's screen", function()
      local width, height = term.native().getSize();
      local answer = finish(newRunner(), "exec", { code = "term.getSize()" });
      expect(answer.payload.returns):same({ width, height });
    end);

    it("keeps the lines that scroll off the screen, then the screen", function()
      local answer = finish(newRunner(), "exec", { code = "for i = 1, 40 do print('line ' .. i) end" });
      local want = {};
      for i = 1, 40 do
        want[i] = "line " .. i;
      end
      expect(answer.payload.output):eq(table.concat(want, "\n") .. "\n");
    end);

    it("serves a chunk that raised: ok with the error and its position", function()
      local answer = finish(newRunner(), "exec", { code = "print('before'); error('boom')" });
      expect(answer.ok):eq(true);
      expect(answer.payload.error):eq("lua:1: boom");
      expect(answer.payload.output):eq("before\n");
      expect(textutils.serializeJSON(answer.payload.returns)):eq("[]");
    end);

    it("serves a syntax error the same way", function()
      local answer = finish(newRunner(), "exec", { code = "x = = 1" });
      expect(answer.ok):eq(true);
      expect(answer.payload.error):str_match("^lua:1:");
    end);

    it("survives a chunk ended by Too long without yielding", function()
      local runner = newRunner();
      local answer = finish(runner, "exec", { code = "error('Too long without yielding', 0)" });
      expect(answer.payload.error):eq("Too long without yielding");
      expect(finish(runner, "exec", { code = "2" }).payload.returns):same({ 2 });
    end);

    it("runs a sleeping chunk beside others", function()
      local runner = newRunner();
      local slow;
      runner.exec({ code = "sleep(0.3); return 'slow'" }, function(_, result) slow = result; end);
      expect(runner.count()):eq(1);
      local quick = finish(runner, "exec", { code = "'quick'" });
      expect(quick.payload.returns):same({ "quick" });
      expect(slow):eq(nil);
      while slow == nil do
        local event = table.pack(os.pullEventRaw());
        runner.onEvent(table.unpack(event, 1, event.n));
      end
      expect(slow.returns):same({ "slow" });
      expect(runner.count()):eq(0);
    end);

    it("abandons a chunk past its timeout", function()
      local runner = newRunner();
      local answer = finish(runner, "exec", { code = "while true do os.pullEvent() end", timeoutMs = 200 });
      expect(answer.ok):eq(false);
      expect(answer.err.code):eq("timeout");
      expect(answer.err.message):eq("it ran past its timeout of 200 ms and was abandoned (a job gets no keyboard or mouse input); its screen was blank");
      expect(runner.count()):eq(0);
    end);

    -- A raw request that gave no timeoutMs was told "its timeout of 5000 ms", a number it never
    -- sent: the answer says that was the default, and how to give it another.
    it("names the default timeout when the payload gave none", function()
      local timers = {};
      local osApi = setmetatable({
        startTimer = function(seconds)
          local id = os.startTimer(seconds);
          timers[#timers + 1] = id;
          return id;
        end,
      }, { __index = os });
      local runner = lib.newRunner({ term = term, os = osApi, env = _G, withdrawn = function() return nil; end });
      local answer;
      runner.exec({ code = "while true do os.pullEvent() end" }, function(ok, result, err) answer = { ok = ok, payload = result, err = err }; end);
      expect(#timers):eq(1);
      os.cancelTimer(timers[1]);
      runner.onEvent("timer", timers[1]);
      expect(answer.err.code):eq("timeout");
      expect(answer.err.message):eq("it ran past its default timeout of 5000 ms (the request's payload gave no timeoutMs; it takes 1 to 60000)"
        .. " and was abandoned (a job gets no keyboard or mouse input); its screen was blank");
      expect(runner.count()):eq(0);
    end);

    it("ends a full-screen loop at its timeout, with its screen in the answer", function()
      local runner = newRunner();
      local answer = finish(runner, "exec", { code = CLEAR_LOOP, timeoutMs = 300 });
      expect(answer.err.code):eq("timeout");
      expect(answer.err.message):eq("it ran past its timeout of 300 ms and was abandoned (a job gets no keyboard or mouse input); its screen showed:\n" .. drawnRows());
      expect(finish(runner, "exec", { code = "'next'" }).payload.returns):same({ "next" });
    end);

    it("withholds the player's keyboard, mouse and Ctrl-T: read() waits until the timeout", function()
      local runner = newRunner();
      local answer = finishWithInput(runner, "exec", { code = "print('name?'); return read()", timeoutMs = 300 }, {
        { "paste", "stolen" },
        { "char", "x" },
        { "key", keys.enter, false },
        { "key_up", keys.enter },
        { "mouse_click", 1, 1, 1 },
        { "term_resize" },
        { "terminate" },
      });
      expect(answer.ok):eq(false);
      expect(answer.err.code):eq("timeout");
      expect(answer.err.message):str_match("its screen showed:\nname%?$");
    end);

    it("does not pause a paged listing for a key, and puts paging back", function()
      local pagedPrint, pagedTabulate = textutils.pagedPrint, textutils.pagedTabulate;
      local answer = finish(newRunner(), "exec", {
        code = "local l = {}; for i = 1, 40 do l[i] = 'line ' .. i end; textutils.pagedPrint(table.concat(l, '\\n'));"
          .. "local t = {}; for i = 1, 300 do t[i] = 'e' .. i end; textutils.pagedTabulate(t)",
        timeoutMs = 2000,
      });
      expect(answer.ok):eq(true);
      expect(answer.payload.output):str_match("^line 1\nline 2\n");
      expect(answer.payload.output):str_match("e300\n$");
      expect(textutils.pagedPrint):eq(pagedPrint);
      expect(textutils.pagedTabulate):eq(pagedTabulate);
    end);

    it("refuses a bad payload", function()
      local runner = newRunner();
      expect(finish(runner, "exec", {}).err.code):eq("bad_payload");
      local answer = finish(runner, "exec", { code = "1", timeoutMs = lib.MAX_TIMEOUT_MS + 1 });
      expect(answer.err.code):eq("bad_payload");
      expect(answer.err.message):str_match("timeoutMs");
    end);

    it("cuts long output and says so, keeping the first lines and the last screen", function()
      -- Lines as wide as the screen but one column (40 x at 51 columns, 15 at a pocket
      -- computer's 26, so that none wraps), enough of them to pass the 16 KiB kept (400 at 51);
      -- few prints, so a loaded machine stays far from CC's 7 s yield limit.
      local width = term.getSize();
      local count = math.ceil(lib.MAX_OUTPUT_BYTES * 1.2 / width);
      local answer = finish(newRunner(), "exec", {
        code = ("for i = 1, %d do print(('line %%d '):format(i) .. ('x'):rep(%d)) end"):format(count, width - 11),
      });
      local output = answer.payload.output;
      expect(answer.payload.outputTruncated):eq(true);
      expect(#output <= lib.MAX_OUTPUT_BYTES):eq(true);
      expect(#output > lib.MAX_OUTPUT_BYTES - 100):eq(true);
      expect(output):str_match("^line 1 x+\nline 2 x+\n");
      expect(output):str_match("\nline " .. count .. " x+\n$");
    end);

    it("stops every job at the next event once the owner withdraws the permission", function()
      local why = nil;
      local steps = { exec = 0, run = 0 };
      -- Each job counts the step events it sees, forever.
      local function counter(name)
        return function()
          while true do
            os.pullEvent("libsandboxexec_spec_step");
            steps[name] = steps[name] + 1;
          end
        end;
      end
      local runner = lib.newRunner({
        term = term, os = os, env = { counter = counter("exec") }, shell = { run = counter("run") },
        withdrawn = function() return why; end,
      });
      local answers = {};
      runner.exec({ code = "counter()", timeoutMs = 60000 },
        function(ok, result, err) answers.exec = { ok = ok, payload = result, err = err }; end);
      runner.run({ command = "count", timeoutMs = 60000 },
        function(ok, result, err) answers.run = { ok = ok, payload = result, err = err }; end);
      runner.onEvent("libsandboxexec_spec_step");
      expect(steps):same({ exec = 1, run = 1 });

      why = "the owner withdrew it";
      runner.onEvent("libsandboxexec_spec_step");
      expect(steps):same({ exec = 1, run = 1 });
      expect(runner.count()):eq(0);
      expect(answers.exec):same({ ok = false, err = { code = "forbidden", message = "lua.exec was stopped while it ran: the owner withdrew it" } });
      expect(answers.run):same({ ok = false, err = { code = "forbidden", message = "shell.run was stopped while it ran: the owner withdrew it" } });
    end);

    it("drops its jobs on stop", function()
      local runner = newRunner();
      local answered = false;
      runner.exec({ code = "sleep(10)" }, function() answered = true; end);
      runner.stop();
      expect(runner.count()):eq(0);
      expect(answered):eq(false);
    end);
  end);

  describe("shell.run", function()
    local fakeShell = {
      run = function(command)
        print("ran " .. command);
        return command == "good";
      end,
    };

    it("runs a command line and captures its output", function()
      local answer = finish(newRunner(fakeShell), "run", { command = "good" });
      expect(answer.ok):eq(true);
      expect(answer.payload):same({ success = true, output = "ran good\n" });
      answer = finish(newRunner(fakeShell), "run", { command = "bad" });
      expect(answer.payload):same({ success = false, output = "ran bad\n" });
    end);

    it("lays the output out at the screen's width, as ls would print it", function()
      local layout = {
        run = function()
          textutils.tabulate({ "apis", "programs", "rom" }, { "a.lua", "b.lua" });
          return true;
        end,
      };
      local answer = finish(newRunner(layout), "run", { command = "ls" });
      expect(answer.ok):eq(true);
      local width = term.getSize();
      for line in answer.payload.output:gmatch("[^\n]+") do
        expect(#line <= width):eq(true);
      end
      -- in columns: three to a row at 51, two at a pocket computer's 26
      expect(answer.payload.output):str_match("^apis +programs");
      expect((answer.payload.output:gsub("%s+", " "))):eq("apis programs rom a.lua b.lua ");
    end);

    it("refuses an empty command", function()
      expect(finish(newRunner(fakeShell), "run", { command = "  " }).err.code):eq("bad_payload");
    end);

    it("runs edit until its timeout and answers the editor's screen; the next command runs", function()
      local runner = newRunner(shell);
      local answer = finish(runner, "run", { command = "edit /tmp/libsandboxexec_spec_edit.lua", timeoutMs = 300 });
      expect(answer.ok):eq(false);
      expect(answer.err.code):eq("timeout");
      -- its status line (Press Ctrl or click here to access menu on a colour computer), shorter on a pocket computer's
      local hint = speckit.narrow() and "Press Ctrl for menu" or "to access menu";
      expect(answer.err.message):str_match("its screen showed:\n.*" .. hint);
      expect(fs.exists("/tmp/libsandboxexec_spec_edit.lua")):eq(false);
      local ls = finish(runner, "run", { command = "ls /rom" });
      expect(ls.ok):eq(true);
      expect(ls.payload.output):str_match("programs");
    end);

    -- The shell's stack of running programs: what shell.getRunningProgram() reads from a
    -- coroutine that is not a program's own, as this case's is (its top).
    describe("and the shell's stack of running programs", function()
      -- Each case's programs have names of their own, so that one a case left on the stack
      -- is not what the next case finds there before it starts.
      local cases = 0;
      local WAITER, OTHER;
      -- A program that waits for the event named, and says so when it has it.
      local function writeWaiter(path, event)
        local file = fs.open(path, "w");
        file.write(("os.pullEvent(%q); print('got it')"):format(event));
        file.close();
      end
      local function feedUntil(runner, answered)
        while not answered() do
          local event = table.pack(os.pullEventRaw());
          runner.onEvent(table.unpack(event, 1, event.n));
        end
      end
      before_each(function()
        cases = cases + 1;
        WAITER = "/tmp/libsandboxexec_spec_wait" .. cases .. ".lua";
        OTHER = "/tmp/libsandboxexec_spec_other" .. cases .. ".lua";
        writeWaiter(WAITER, "libsandboxexec_spec_never");
        writeWaiter(OTHER, "libsandboxexec_spec_go");
      end);
      after_each(function()
        fs.delete(WAITER);
        fs.delete(OTHER);
      end);

      it("takes a program abandoned at its timeout off it", function()
        local before = shell.getRunningProgram();
        local answer = finish(newRunner(shell), "run", { command = WAITER, timeoutMs = 300 });
        expect(answer.err.code):eq("timeout");
        expect(shell.getRunningProgram()):eq(before);
      end);

      it("takes off the abandoned one when another job's program runs above it", function()
        local before = shell.getRunningProgram();
        local runner = newRunner(shell);
        local first, second;
        runner.run({ command = WAITER, timeoutMs = 300 }, function(ok, _, err) first = { ok = ok, err = err }; end);
        runner.run({ command = OTHER, timeoutMs = 60000 }, function(ok, result) second = { ok = ok, payload = result }; end);
        expect(shell.getRunningProgram()):eq(OTHER:sub(2));
        feedUntil(runner, function() return first ~= nil; end);
        expect(first.err.code):eq("timeout");
        expect(shell.getRunningProgram()):eq(OTHER:sub(2));
        os.queueEvent("libsandboxexec_spec_go");
        feedUntil(runner, function() return second ~= nil; end);
        expect(second.payload):same({ success = true, output = "got it\n" });
        expect(shell.getRunningProgram()):eq(before);
      end);

      it("takes off a program a lua.exec chunk ran, abandoned at its timeout", function()
        local before = shell.getRunningProgram();
        local runner = lib.newRunner({
          term = term, os = os, env = setmetatable({ shell = shell }, { __index = _G }),
          withdrawn = function() return nil; end,
        });
        local answer = finish(runner, "exec", { code = "shell.run(" .. ("%q"):format(WAITER) .. ")", timeoutMs = 300 });
        expect(answer.err.code):eq("timeout");
        expect(shell.getRunningProgram()):eq(before);
      end);

      it("takes off the programs of the jobs it drops on stop", function()
        local before = shell.getRunningProgram();
        local runner = newRunner(shell);
        runner.run({ command = WAITER, timeoutMs = 60000 }, function() fail("a dropped job answered"); end);
        expect(shell.getRunningProgram()):eq(WAITER:sub(2));
        runner.stop();
        expect(runner.count()):eq(0);
        expect(shell.getRunningProgram()):eq(before);
      end);
    end);

    it("lists a long directory without waiting for a key", function()
      local names = {};
      for i = 1, 300 do
        names[i] = "f" .. i;
      end
      local answer = finish(newRunner({
        run = function()
          textutils.pagedTabulate(names);
          return true;
        end,
      }), "run", { command = "ls", timeoutMs = 2000 });
      expect(answer.ok):eq(true);
      expect(answer.payload.output):str_match("f300");
    end);
  end);

  describe("a job that turns the computer off", function()
    -- A runner on an os whose shutdown and reboot count their calls and, as CC's bios makes
    -- them, never return (they yield until the computer stops; the real ones would stop this
    -- computer), seen by the jobs as their os too. The jobs' shell runs CC's reboot program
    -- (it sleeps, then reboots: it never ends), and one that reboots in a coroutine of its own,
    -- whose yield is that coroutine's, and so ends at once.
    local function powerRunner()
      local calls = { shutdown = 0, reboot = 0 };
      local function neverReturns(name)
        return function()
          calls[name] = calls[name] + 1;
          while true do coroutine.yield(); end
        end;
      end
      local fakeOs = setmetatable({ shutdown = neverReturns("shutdown"), reboot = neverReturns("reboot") }, { __index = os });
      local programs = {
        reboot = function() print("Goodbye"); os.sleep(0); fakeOs.reboot(); end,
        ["reboot-wrapped"] = function() print("Goodbye"); coroutine.wrap(fakeOs.reboot)(); return true; end,
      };
      local runner = lib.newRunner({
        term = term, os = fakeOs, env = setmetatable({ os = fakeOs }, { __index = _G }),
        shell = { run = function(command) return programs[command](); end },
        withdrawn = function() return nil; end,
      });
      return runner, calls, fakeOs;
    end

    it("answers a chunk that returns after a shutdown in a coroutine of its own, saying so", function()
      local runner, calls = powerRunner();
      local answer = finish(runner, "exec", { code = "print('bye') coroutine.wrap(os.shutdown)() return 42" });
      expect(answer.ok):eq(true);
      expect(answer.payload.returns):same({ 42 });
      expect(answer.payload.output):eq("bye\n");
      expect(answer.payload.powerOff):eq("shutdown");
      expect(calls):same({ shutdown = 1, reboot = 0 });
    end);

    it("answers a chunk at its os.reboot, which never returns, since the computer stops there", function()
      local runner, calls = powerRunner();
      local answer;
      runner.exec({ code = "print('bye') os.reboot() return 42", timeoutMs = 60000 },
        function(ok, result, err) answer = { ok = ok, payload = result, err = err }; end);
      -- Answered within the step that rebooted: no event is fed after it.
      expect(answer):same({ ok = true, payload = { returns = textutils.empty_json_array, output = "bye\n", powerOff = "reboot" } });
      expect(runner.count()):eq(0);
      expect(calls):same({ shutdown = 0, reboot = 1 });
    end);

    it("answers CC's reboot program as not done, and one that returns after its reboot as done", function()
      local runner = powerRunner();
      local answer = finish(runner, "run", { command = "reboot", timeoutMs = 60000 });
      expect(answer.payload):same({ success = false, output = "Goodbye\n", powerOff = "reboot" });
      answer = finish(runner, "run", { command = "reboot-wrapped" });
      expect(answer.payload):same({ success = true, output = "Goodbye\n", powerOff = "reboot" });
      expect(runner.count()):eq(0);
    end);

    it("puts os.shutdown and os.reboot back after each step", function()
      local runner, _, fakeOs = powerRunner();
      local shutdown, reboot = fakeOs.shutdown, fakeOs.reboot;
      runner.exec({ code = "sleep(10)", timeoutMs = 60000 }, function() end);
      expect(fakeOs.shutdown):eq(shutdown);
      expect(fakeOs.reboot):eq(reboot);
      runner.stop();
    end);

    it("says nothing of power for a job that leaves the computer on", function()
      local runner = powerRunner();
      expect(finish(runner, "exec", { code = "1" }).payload.powerOff):eq(nil);
    end);
  end);

  describe("capture", function()
    it("follows the cursor like a terminal", function()
      local capture = lib.newCapture(51, 19);
      capture.write("abc");
      capture.setCursorPos(2, 1);
      capture.write("X");
      capture.setCursorPos(1, 3);
      capture.write("z");
      expect((capture.text())):eq("aXc\n\nz");
      expect(capture.getSize()):eq(51);
      expect(select(2, capture.getSize())):eq(19);
    end);

    it("draws only what falls on the screen", function()
      local capture = lib.newCapture(10, 3);
      capture.setCursorPos(-2, 1);
      capture.write("abcdef");
      capture.setCursorPos(8, 2);
      capture.write("xyz12");
      capture.setCursorPos(1, 4);
      capture.write("below");
      capture.setCursorPos(1, 0);
      capture.write("above");
      capture.setCursorPos(2 ^ 27, 3);
      capture.write("far");
      expect((capture.text())):eq("def\n       xyz\n");
      expect(capture.getCursorPos()):eq(2 ^ 27 + 3);
    end);

    it("keeps the rows that scroll off the top, and loses those pushed off the bottom", function()
      local capture = lib.newCapture(10, 2);
      capture.write("one");
      capture.setCursorPos(1, 2);
      capture.write("two");
      capture.scroll(1);
      capture.setCursorPos(1, 2);
      capture.write("three");
      expect(capture.screen()):eq("two\nthree");
      capture.scroll(-1);
      expect(capture.screen()):eq("\ntwo");
      expect((capture.text())):eq("one\n\ntwo");
    end);

    it("clears the screen, not what scrolled off it", function()
      local capture = lib.newCapture(10, 2);
      capture.write("gone");
      capture.scroll(1);
      capture.write("shown");
      capture.setCursorPos(1, 2);
      capture.write("cleared");
      capture.clearLine();
      capture.setCursorPos(1, 1);
      capture.clear();
      capture.write("last");
      expect(capture.screen()):eq("last");
      expect((capture.text())):eq("gone\nlast");
    end);

    it("refuses a cursor at NaN or infinity, as CC does", function()
      local capture = lib.newCapture(10, 2);
      expect.error(capture.setCursorPos, 0 / 0, 1):str_match("^bad argument #1 %(number expected, got");
      expect.error(capture.setCursorPos, 1, math.huge):str_match("^bad argument #2 %(number expected, got");
      capture.write("still");
      expect((capture.text())):eq("still");
    end);

    it("checks blit's arguments as CC does", function()
      local capture = lib.newCapture(10, 2);
      capture.blit("ab", "00", "ff");
      expect((capture.text())):eq("ab");
      expect.error(capture.blit, "ab", "0", "ff"):str_match("Arguments must be the same length");
    end);

    it("keeps the colours and palette a program sets", function()
      local capture = lib.newCapture(10, 2, term.native());
      expect(capture.isColour()):eq(term.native().isColour());
      capture.setTextColour(colours.red);
      capture.setBackgroundColour(colours.blue);
      expect(capture.getTextColour()):eq(colours.red);
      expect(capture.getBackgroundColour()):eq(colours.blue);
      capture.setPaletteColour(colours.red, 0x102030);
      expect(table.pack(capture.getPaletteColour(colours.red))):same(table.pack(colours.unpackRGB(0x102030)));
      expect(table.pack(capture.getPaletteColour(colours.green))):same(table.pack(term.native().getPaletteColour(colours.green)));
    end);
  end);
end);
