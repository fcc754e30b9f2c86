-- Specs for /apis/libsandboxexec: lua.exec and shell.run jobs in coroutines of their own,
-- fed with real events, their output captured and their time bounded.

local lib = require('/apis/libsandboxexec');

local function newRunner(shellApi)
  return lib.newRunner({ term = term, os = os, env = _G, shell = shellApi });
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

    it("captures print and write without wrapping, and restores the terminal", function()
      local before = term.current();
      local long = string.rep("y", 300);
      local answer = finish(newRunner(), "exec", { code = "print('hi'); write('a'); write('" .. long .. "')" });
      expect(answer.payload.output):eq("hi\na" .. long);
      expect(term.current()):eq(before);
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
      runner.exec({ code = "sleep(0.3); return 'slow'" }, function(ok, result) slow = result; end);
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
      expect(answer.err.message):eq("it ran past its timeout of 200 ms and was abandoned");
      expect(runner.count()):eq(0);
    end);

    it("refuses a bad payload", function()
      local runner = newRunner();
      expect(finish(runner, "exec", {}).err.code):eq("bad_payload");
      local answer = finish(runner, "exec", { code = "1", timeoutMs = lib.MAX_TIMEOUT_MS + 1 });
      expect(answer.err.code):eq("bad_payload");
      expect(answer.err.message):str_match("timeoutMs");
    end);

    it("cuts long output and says so", function()
      local answer = finish(newRunner(), "exec", { code = "write(string.rep('z', " .. (lib.MAX_OUTPUT_BYTES + 5) .. "))" });
      expect(#answer.payload.output):eq(lib.MAX_OUTPUT_BYTES);
      expect(answer.payload.outputTruncated):eq(true);
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
      expect(answer.payload.output):str_match("^apis +programs +rom");
    end);

    it("refuses an empty command", function()
      expect(finish(newRunner(fakeShell), "run", { command = "  " }).err.code):eq("bad_payload");
    end);
  end);

  describe("capture", function()
    it("follows the cursor like a terminal", function()
      local capture = lib.newCapture();
      capture.write("abc");
      capture.setCursorPos(2, 1);
      capture.write("X");
      capture.setCursorPos(1, 3);
      capture.write("z");
      expect((capture.text())):eq("aXc\n\nz");
    end);

    it("clips a line written far past the output limit instead of padding it", function()
      local capture = lib.newCapture();
      capture.write("a");
      capture.setCursorPos(2 ^ 27, 1);
      capture.write("far");
      capture.setCursorPos(1, 2);
      capture.write("b");
      local text, cut = capture.text();
      expect(cut):eq(true);
      expect(#text <= lib.MAX_OUTPUT_BYTES):eq(true);
      expect(text:sub(1, 1)):eq("a");
    end);
  end);
end);
