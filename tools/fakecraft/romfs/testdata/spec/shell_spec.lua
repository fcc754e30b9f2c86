-- Specs for /rom/programs/shell.lua (the `shell` API that runs this spec).

-- This spec's directory on the computer, where the fixtures live.
local HERE = fs.getDir((debug.getinfo(1, "S").source:gsub("^[@=]", "")));
local FIXTURES = fs.combine(HERE, "fixtures");

local function fixture(name)
  return "/" .. fs.combine(FIXTURES, name);
end

-- Collects what printError is given while fn runs.
local function capture_errors(fn)
  local lines = {};
  stub(_G, "printError", function(...)
    lines[#lines + 1] = table.concat({ ... }, "\t");
  end);
  local result = fn();
  return result, lines;
end

describe("shell", function()
  before_each(function()
    _G.SHELL_SPEC_RESULT = nil;
    _G.SHELL_SPEC_SHELL = shell;
  end);

  describe("run", function()
    it("runs a program with its arguments in ... and arg", function()
      expect(shell.run(fixture("prog_args.lua"), "one", "two")):eq(true);
      local result = _G.SHELL_SPEC_RESULT;
      expect(result.args):same({ n = 2, "one", "two" });
      expect(result.arg0):eq(fixture("prog_args.lua"));
      expect(result.arg1):eq("one");
      expect(result.has_require):eq(true);
      expect(result.same_shell):eq(true);
    end);

    it("joins and re-splits its arguments, grouping double quotes", function()
      shell.run(fixture("prog_args.lua") .. ' a\t"b c"', '""', "d");
      expect(_G.SHELL_SPEC_RESULT.args):same({ n = 4, "a", "b c", "", "d" });
    end);

    it("finds a program without its .lua extension", function()
      expect(shell.run(fixture("prog_args"))):eq(true);
      expect(_G.SHELL_SPEC_RESULT.running):eq(fs.combine(FIXTURES, "prog_args.lua"));
    end);

    it("reports a missing program", function()
      local ok, lines = capture_errors(function()
        return shell.run("/no/such/program");
      end);
      expect(ok):eq(false);
      expect(lines):same({ "No such program" });
    end);

    it("returns false for an empty command", function()
      expect(shell.run("")):eq(false);
      expect(shell.run()):eq(false);
    end);

    it("prints a program's error with its position and returns false", function()
      local ok, lines = capture_errors(function()
        return shell.run(fixture("prog_error.lua"));
      end);
      expect(ok):eq(false);
      -- Cobalt shows a path of more than 22 bytes as "..." and its last 22.
      expect(lines):same({ "...ixtures/prog_error.lua:2: it broke" });
    end);

    it("prints Terminated bare", function()
      local ok, lines = capture_errors(function()
        return shell.run(fixture("prog_terminated.lua"));
      end);
      expect(ok):eq(false);
      expect(lines):same({ "Terminated" });
    end);

    -- Runs fn with the terminal on a fresh window; returns its result and the first row.
    local function first_row(fn)
      local previous = term.current();
      local win = window.create(previous, 1, 1, 51, 19, false);
      term.redirect(win);
      local ok, result = pcall(fn);
      term.redirect(previous);
      if not ok then error(result, 0); end
      return result, (win.getLine(1):gsub(" +$", ""));
    end

    it("explains a syntax error in words, as CC's shell does", function()
      local ok, lines, row;
      ok, row = first_row(function()
        local result;
        result, lines = capture_errors(function()
          return shell.run(fixture("prog_syntax.lua"));
        end);
        return result;
      end);
      expect(ok):eq(false);
      expect(lines):same({});
      expect(row):eq("Unexpected =. Expected an expression.");
    end);

    -- CC 1.109+ (cc.internal.exception): under a runtime error, its line and a mark under
    -- the token Cobalt places it at (here the "." of the index that failed).
    it("shows a runtime error's line with a mark at its column", function()
      local previous = term.current();
      local win = window.create(previous, 1, 1, 51, 19, false);
      term.redirect(win);
      local ok, result, lines = pcall(capture_errors, function()
        return shell.run(fixture("prog_index.lua"));
      end);
      term.redirect(previous);
      expect({ ok, result }):same({ true, false });
      expect(lines):same({ "...ixtures/prog_index.lua:3: attempt to index field 'sensor' (a nil value)" });
      local rows = {};
      for y = 1, 3 do rows[y] = (win.getLine(y):gsub(" +$", "")); end
      expect(rows):same({ "\149Line 3", "\149print(door.sensor.state);", "\149" .. (" "):rep(17) .. "\131" });
    end);

    -- A generic for's iterator fails at the first token after `in`, as Cobalt places it.
    it("marks a loop's iterator at the first token after in", function()
      local path = "/shell_spec_loop.lua";
      local handle = fs.open(path, "w");
      handle.write("local items\nfor _, item in pairs(items) do print(item) end\n");
      handle.close();
      local previous = term.current();
      local win = window.create(previous, 1, 1, 51, 19, false);
      term.redirect(win);
      local ok, result, lines = pcall(capture_errors, function() return shell.run(path); end);
      term.redirect(previous);
      fs.delete(path);
      expect({ ok, result }):same({ true, false });
      expect(lines):same({ path .. ":2: bad argument (table expected, got nil)" });
      expect((win.getLine(3):gsub(" +$", ""))):eq("\149" .. (" "):rep(15) .. "\131");
    end);

    -- Runs the program text at path on a fresh window, collecting what printError is given;
    -- returns the run's result, those lines, and the window's first rows.
    local function run_on_window(path, text, rows)
      local handle = fs.open(path, "w");
      handle.write(text);
      handle.close();
      local previous = term.current();
      local win = window.create(previous, 1, 1, 51, 19, false);
      term.redirect(win);
      local ok, result, lines = pcall(capture_errors, function() return shell.run(path); end);
      term.redirect(previous);
      fs.delete(path);
      if not ok then error(result, 0); end
      local shown = {};
      for y = 1, rows do shown[y] = (win.getLine(y):gsub(" +$", "")); end
      return result, lines, shown;
    end

    -- A coroutine manager passes an inner coroutine's error up as an exception (a table
    -- whose metatable's __name is "exception", with the message and the coroutine): CC's
    -- shell (through cc.internal.exception's try) prints the message, and marks the line in
    -- that coroutine, not the table's tostring.
    it("unwraps an exception a program throws: its message, and the mark in its thread", function()
      local path = "/shell_spec_exception.lua";
      local result, lines, rows = run_on_window(path, table.concat({
        "local co = coroutine.create(function()",
        "  local t = nil",
        "  return t.x",
        "end)",
        "local ok, err = coroutine.resume(co)",
        "if not ok then error(setmetatable({ message = err, thread = co }, { __name = \"exception\" })) end",
      }, "\n"), 3);
      expect(result):eq(false);
      expect(lines):same({ "...ell_spec_exception.lua:3: attempt to index local 't' (a nil value)" });
      expect(rows):same({ "\149Line 3", "\149  return t.x", "\149          \131" });
    end);

    -- An operator on a later line than its expression's start: Cobalt places the error on
    -- the operator's line (a chain of .. at its last ..), and the mark under it.
    it("marks an error on the line of the token it is placed at", function()
      local path = "/shell_spec_lines.lua";
      local result, lines, rows = run_on_window(path, 'local t = {}\nlocal s = "a" ..\n  t ..\n  "b"\n', 3);
      expect(result):eq(false);
      expect(lines):same({ path .. ":3: attempt to concatenate local 't' (a table value)" });
      expect(rows):same({ "\149Line 3", "\149  t ..", "\149    \131" });
    end);

    -- CC's shell prints an error only when it is not false, nil or "" (exception.try's err);
    -- a table is printError's to turn into text, as print does.
    it("prints no error of false, and gives printError a table as it is", function()
      local result, lines, rows = run_on_window("/shell_spec_false.lua", "error(false)", 1);
      expect({ result, lines, rows }):same({ false, {}, { "" } });
      local given = {};
      stub(_G, "printError", function(...) given[#given + 1] = table.pack(...); end);
      local path = "/shell_spec_table.lua";
      local handle = fs.open(path, "w");
      handle.write('error(setmetatable({}, { __tostring = function() return "thrown" end }))');
      handle.close();
      expect(shell.run(path)):eq(false);
      fs.delete(path);
      expect(#given):eq(1);
      expect({ given[1].n, type(given[1][1]), tostring(given[1][1]) }):same({ 1, "table", "thrown" });
    end);

    it("prints load's message when the explaining parser finds no fault", function()
      -- CC's parser takes parameters after "..."; the compiler does not.
      local path = "/shell_spec_params.lua";
      local handle = fs.open(path, "w");
      handle.write("local function f(..., a) end");
      handle.close();
      local ok, lines = capture_errors(function()
        return shell.run(path);
      end);
      fs.delete(path);
      expect(ok):eq(false);
      expect(#lines):eq(1);
      expect(lines[1]):eq("/shell_spec_params.lua:1: ')' expected near ','");
    end);

    it("keeps a program's globals private", function()
      _G.PROGRAM_GLOBAL = nil;
      shell.run(fixture("prog_args.lua"));
      expect(rawget(_G, "PROGRAM_GLOBAL")):eq(nil);
      expect(PROGRAM_GLOBAL):eq(nil);
    end);

    -- CC's shell makes a program's new global an error under the setting bios.strict_globals
    -- (off by default), placed where the program assigned it, and marked under the name
    -- (Cobalt's SETTABUP has the name's position).
    it("refuses a program's new global under bios.strict_globals", function()
      local path = "/shell_spec_strict.lua";
      local file = fs.open(path, "w");
      file.write("local ok = 1\n_G.SHELL_SPEC_RESULT = 'G'\n  counter = 1\nSHELL_SPEC_RESULT = 'after'\n");
      file.close();
      settings.set("bios.strict_globals", true);
      local previous = term.current();
      local win = window.create(previous, 1, 1, 51, 19, false);
      term.redirect(win);
      local _, ok, lines = pcall(capture_errors, function() return shell.run(path); end);
      term.redirect(previous);
      settings.unset("bios.strict_globals");
      expect(ok):eq(false);
      expect(lines):same({ "/shell_spec_strict.lua:3: Attempt to create global counter" });
      local rows = {};
      for y = 1, 3 do rows[y] = (win.getLine(y):gsub(" +$", "")); end
      expect(rows):same({ "\149Line 3", "\149  counter = 1", "\149  \131" });
      expect(_G.SHELL_SPEC_RESULT):eq("G");
      ok, lines = capture_errors(function() return shell.run(path); end);
      fs.delete(path);
      expect(ok):eq(true);
      expect(lines):same({});
    end);

    it("gives the program require relative to its own directory", function()
      _G.SHELL_SPEC_REQUIRE = nil;
      expect(shell.run(fixture("prog_require.lua"))):eq(true);
      expect(_G.SHELL_SPEC_REQUIRE):eq(42);
    end);

    it("passes events through to the program", function()
      _G.SHELL_SPEC_EVENT = nil;
      os.queueEvent("other", 1);
      os.queueEvent("shell_spec_event", "hello");
      expect(shell.run(fixture("prog_events.lua"))):eq(true);
      expect(_G.SHELL_SPEC_EVENT):eq("hello");
    end);

    it("runs programs from inside programs", function()
      _G.SHELL_SPEC_NESTED = nil;
      expect(shell.run(fixture("prog_nested.lua"))):eq(true);
      local nested = _G.SHELL_SPEC_NESTED;
      expect(nested.ok):eq(true);
      expect(nested.before):eq(fs.combine(FIXTURES, "prog_nested.lua"));
      expect(nested.after):eq(fs.combine(FIXTURES, "prog_nested.lua"));
      expect(_G.SHELL_SPEC_RESULT.running):eq(fs.combine(FIXTURES, "prog_args.lua"));
      expect(_G.SHELL_SPEC_RESULT.arg1):eq("inner");
    end);

    it("tracks the running program per run when runs interleave", function()
      _G.SHELL_SPEC_WAIT = {};
      parallel.waitForAll(
        function() shell.run(fixture("prog_wait.lua"), "first"); end,
        function() shell.run(fixture("prog_copy.lua"), "second"); end,
        function() os.queueEvent("first"); os.queueEvent("second"); end
      );
      local wait = _G.SHELL_SPEC_WAIT;
      expect(wait.first.before):eq(fs.combine(FIXTURES, "prog_wait.lua"));
      expect(wait.first.after):eq(fs.combine(FIXTURES, "prog_wait.lua"));
      expect(wait.second.after):eq(fs.combine(FIXTURES, "prog_copy.lua"));
    end);
  end);

  describe("hashbang", function()
    -- Writes a program file whose only line is "#!" .. line.
    local function hashbang_file(path, line)
      local handle = fs.open(path, "w");
      handle.write("#!" .. line);
      handle.close();
    end

    after_each(function()
      fs.delete("shell_spec_hb1.lua");
      fs.delete("shell_spec_hb2.lua");
    end);

    it("runs the named program with its words, the file's path, then the arguments", function()
      local handle = fs.open("shell_spec_hb1.lua", "w");
      handle.write("#!" .. fixture("prog_args.lua") .. ' "one two" three\nerror("not run")\n');
      handle.close();
      expect(shell.execute("shell_spec_hb1.lua", "last")):eq(true);
      local result = _G.SHELL_SPEC_RESULT;
      expect(result.args):same({ n = 4, "one two", "three", "shell_spec_hb1.lua", "last" });
      expect(result.arg0):eq(fixture("prog_args.lua"));
      expect(result.running):eq("shell_spec_hb1.lua");
    end);

    it("follows a hashbang to a file with its own hashbang", function()
      hashbang_file("shell_spec_hb1.lua", fixture("prog_args.lua"));
      hashbang_file("shell_spec_hb2.lua", "shell_spec_hb1.lua");
      expect(shell.execute("shell_spec_hb2.lua", "x")):eq(true);
      expect(_G.SHELL_SPEC_RESULT.args):same({ n = 3, "shell_spec_hb1.lua", "shell_spec_hb2.lua", "x" });
    end);

    it("stops a file that names itself, at CC's depth limit", function()
      hashbang_file("shell_spec_hb1.lua", "shell_spec_hb1.lua");
      local ok, lines = capture_errors(function()
        return shell.execute("shell_spec_hb1.lua");
      end);
      expect(ok):eq(false);
      expect(lines):same({ "Hashbang recursion depth limit reached when loading file: shell_spec_hb1.lua" });
    end);

    it("names a hashbang program it cannot find", function()
      hashbang_file("shell_spec_hb1.lua", "no_such_interpreter a");
      local ok, lines = capture_errors(function()
        return shell.execute("shell_spec_hb1.lua");
      end);
      expect(ok):eq(false);
      expect(lines):same({ "Hashbang program not found: no_such_interpreter" });
    end);

    it("refuses the shell alone as the hashbang program, but runs it with arguments", function()
      hashbang_file("shell_spec_hb1.lua", "shell");
      local ok, lines = capture_errors(function()
        return shell.execute("shell_spec_hb1.lua");
      end);
      expect(ok):eq(false);
      expect(lines):same({ "Cannot use the shell as a hashbang program" });

      hashbang_file("shell_spec_hb1.lua", "shell " .. fixture("prog_args.lua"));
      expect(shell.execute("shell_spec_hb1.lua", "y")):eq(true);
      expect(_G.SHELL_SPEC_RESULT.args):same({ n = 2, "shell_spec_hb1.lua", "y" });
    end);
  end);

  describe("execute", function()
    it("passes arguments exactly as given", function()
      expect(shell.execute(fixture("prog_args.lua"), "a b", "")):eq(true);
      expect(_G.SHELL_SPEC_RESULT.args):same({ n = 2, "a b", "" });
    end);

    it("gives the program an arg table of the command and its arguments only", function()
      expect(shell.execute(fixture("prog_args.lua"), "a b")):eq(true);
      expect(_G.SHELL_SPEC_RESULT.arg):same({ [0] = fixture("prog_args.lua"), "a b" });
    end);

    it("checks its arguments", function()
      expect.error(shell.execute, nil):eq("bad argument #1 (string expected, got nil)");
      expect.error(shell.execute, "x", 1):eq("bad argument #2 (string expected, got number)");
    end);
  end);

  describe("resolve", function()
    it("makes paths absolute against the current directory", function()
      expect(shell.resolve("/a/../b")):eq("b");
      expect(shell.resolve("x")):eq(fs.combine(shell.dir(), "x"));
    end);
  end);

  describe("resolveProgram", function()
    it("looks a name up on the path, trying .lua second", function()
      local old = shell.path();
      shell.setPath("/" .. FIXTURES .. ":/rom/programs");
      expect(shell.resolveProgram("prog_args")):eq(fs.combine(FIXTURES, "prog_args.lua"));
      expect(shell.resolveProgram("shell")):eq("rom/programs/shell.lua");
      expect(shell.resolveProgram("mods")):eq(nil);
      expect(shell.resolveProgram("nope")):eq(nil);
      shell.setPath(old);
    end);

    it("applies aliases first", function()
      shell.setAlias("spec_alias", fixture("prog_args.lua"));
      expect(shell.resolveProgram("spec_alias")):eq(fs.combine(FIXTURES, "prog_args.lua"));
      expect(shell.aliases().spec_alias):eq(fixture("prog_args.lua"));
      shell.clearAlias("spec_alias");
      expect(shell.resolveProgram("spec_alias")):eq(nil);
      expect(shell.aliases().sh):eq("shell");
    end);
  end);

  describe("path and dir", function()
    it("has CC's default path plus the /programs TrapOS adds at boot", function()
      -- CC's rom/startup.lua adds the pocket programs on a pocket computer, after fun's.
      local pocket_programs = pocket and ":/rom/programs/pocket" or "";
      expect(shell.path()):eq(".:/rom/programs:/rom/programs/http:/rom/programs/advanced:/rom/programs/rednet:/rom/programs/fun:/rom/programs/fun/advanced"
        .. pocket_programs .. ":/programs");
    end);

    it("refuses a directory that does not exist", function()
      expect.error(shell.setDir, "/no/such/dir"):eq("Not a directory");
    end);

    it("changes directory", function()
      local old = shell.dir();
      shell.setDir("/" .. FIXTURES);
      expect(shell.dir()):eq(FIXTURES);
      expect(shell.resolveProgram("prog_args")):eq(fs.combine(FIXTURES, "prog_args.lua"));
      shell.setDir("/" .. old);
      expect(shell.dir()):eq(old);
    end);
  end);

  describe("programs", function()
    it("lists programs on the path without .lua", function()
      local old = shell.path();
      shell.setPath("/" .. FIXTURES);
      local names = shell.programs();
      shell.setPath(old);
      expect(names[1]):eq("prog_args");
      local seen = {};
      for _, n in ipairs(names) do seen[n] = true; end
      expect(seen.prog_wait):eq(true);
      expect(seen.mods):eq(nil);
    end);
  end);

  describe("completion", function()
    it("registers completion functions by path", function()
      local fn = function() return { "x" }; end;
      shell.setCompletionFunction("spec/thing.lua", fn);
      expect(shell.getCompletionInfo()["spec/thing.lua"].fnComplete):eq(fn);
    end);

    it("type-checks the function", function()
      expect.error(shell.setCompletionFunction, "a", "b"):eq("bad argument #2 (function expected, got string)");
    end);

    it("completes arguments through the registered function", function()
      local path = fs.combine(FIXTURES, "prog_args.lua");
      local completion = require("cc.shell.completion");
      shell.setCompletionFunction(path, completion.build({ completion.choice, { "health", "help", "status" } }));
      expect(shell.complete(fixture("prog_args.lua") .. " he")):same({ "alth", "lp" });
      expect(shell.complete(fixture("prog_args.lua") .. " ")):same({ "health", "help", "status" });
      shell.getCompletionInfo()[path] = nil;
    end);

    it("completes program names", function()
      local old = shell.path();
      shell.setPath("/" .. FIXTURES);
      local got = shell.completeProgram("prog_a");
      shell.setPath(old);
      expect(got):same({ "rgs" });
    end);
  end);

  describe("prompt", function()
    -- A TransferredFiles object as a file_transfer event carries it, over Lua strings.
    local function transfer(files)
      local handles = {};
      for name, contents in pairs(files) do
        local unread = contents;
        handles[#handles + 1] = {
          getName = function() return name; end,
          read = function()
            local chunk = unread;
            unread = nil;
            return chunk;
          end,
          close = function() end,
        };
      end
      return { getFiles = function() return handles; end };
    end

    it("imports files dropped on it and comes back with the line typed so far", function()
      fs.delete("shell_spec_drop.txt");
      local win = window.create(term.current(), 1, 1, 32, 5, false);
      local previous = term.redirect(win);
      local co = coroutine.create(shell.run);
      local events = {
        { "shell" },
        { "paste", "xyz" },
        { "file_transfer", transfer({ ["shell_spec_drop.txt"] = "dropped" }) },
      };
      for _, event in ipairs(events) do
        local ok, err = coroutine.resume(co, table.unpack(event));
        if not ok then
          term.redirect(previous);
          error(err, 0);
        end
      end
      term.redirect(previous);
      local lines = {};
      for i = 1, 5 do lines[i] = win.getLine(i):gsub(" +$", ""); end
      local cursor, blink = { win.getCursorPos() }, win.getCursorBlink();
      -- End the inner shell, so its run does not stay on this shell's program stack.
      previous = term.redirect(win);
      coroutine.resume(co, "terminate");
      term.redirect(previous);

      local prompt = shell.dir() .. "> ";
      expect(lines):same({ "CraftOS 1.9", prompt .. "xyz", "Transferring shell_spec_drop.txt", prompt .. "xyz", "" });
      expect(cursor):same({ #prompt + 4, 4 });
      expect(blink):eq(true);
      expect(coroutine.status(co)):eq("dead");
      local handle = fs.open("shell_spec_drop.txt", "r");
      local contents = handle.readAll();
      handle.close();
      fs.delete("shell_spec_drop.txt");
      expect(contents):eq("dropped");
    end);

    it("has no tab functions outside multishell", function()
      expect(shell.openTab):eq(nil);
      expect(shell.switchTab):eq(nil);
    end);
  end);

  describe("getRunningProgram", function()
    it("names the spec runner without a leading slash", function()
      expect(shell.getRunningProgram()):eq(".fakecraft/spec.lua");
    end);
  end);
end);
