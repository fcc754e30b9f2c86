-- Specs for the shell programs in /rom/programs (ls, cd, cp, mv, rm, …), run through
-- shell.run as a player would type them. Messages are CC: Tweaked's.

local DIR = "/spec-files";

-- Runs a command line, returning what it printed with print/write and with printError.
local function capture(line)
  local output, errors = {}, {};
  stub(_G, "print", function(...)
    local parts = table.pack(...);
    for i = 1, parts.n do parts[i] = tostring(parts[i]); end
    output[#output + 1] = table.concat(parts, "\t", 1, parts.n) .. "\n";
    return 1;
  end);
  stub(_G, "write", function(text) output[#output + 1] = tostring(text); return 0; end);
  stub(_G, "printError", function(...)
    errors[#errors + 1] = table.concat({ ... }, "\t") .. "\n";
  end);
  local ok = shell.run(line);
  return { ok = ok, output = table.concat(output), error = table.concat(errors) };
end

local function touch(path, content)
  local file = fs.open(path, "w");
  file.write(content or "");
  file.close();
end

local function read_file(path)
  local file = fs.open(path, "r");
  local text = file.readAll();
  file.close();
  return text;
end

describe("programs", function()
  before_each(function()
    fs.delete(DIR);
    fs.makeDir(DIR);
  end);
  after_each(function()
    fs.delete(DIR);
    shell.setDir("");
  end);

  describe("cd", function()
    it("changes into a directory", function()
      fs.makeDir(DIR .. "/sub");
      capture("cd " .. DIR .. "/sub");
      expect(shell.dir()):eq("spec-files/sub");
      capture("cd ..");
      expect(shell.dir()):eq("spec-files");
    end);
    it("does not move into a missing directory", function()
      expect(capture("cd /rom/nothing")):same({ ok = true, output = "Not a directory\n", error = "" });
      expect(shell.dir()):eq("");
    end);
    it("shows its usage without arguments", function()
      expect(capture("cd").output):eq("Usage: cd <path>\n");
    end);
  end);

  describe("copy", function()
    it("copies a file, also as cp", function()
      touch(DIR .. "/a.txt", "abc");
      capture("copy " .. DIR .. "/a.txt " .. DIR .. "/b.txt");
      capture("cp " .. DIR .. "/a.txt " .. DIR .. "/c.txt");
      expect(read_file(DIR .. "/a.txt")):eq("abc");
      expect(read_file(DIR .. "/b.txt")):eq("abc");
      expect(read_file(DIR .. "/c.txt")):eq("abc");
    end);
    it("copies a glob into a directory", function()
      touch(DIR .. "/a.txt");
      touch(DIR .. "/b.txt");
      fs.makeDir(DIR .. "/into");
      capture("cp " .. DIR .. "/*.txt " .. DIR .. "/into");
      expect(fs.list(DIR .. "/into")):same({ "a.txt", "b.txt" });
    end);
    it("refuses a missing source, an existing or read-only destination", function()
      touch(DIR .. "/c.txt");
      expect(capture("copy nothing destination").error):eq("No matching files\n");
      expect(capture("copy " .. DIR .. "/c.txt " .. DIR .. "/c.txt").error):eq("Destination exists\n");
      expect(capture("copy " .. DIR .. "/c.txt /rom/test.txt").error):eq("Destination is read-only\n");
    end);
    it("shows its usage without arguments", function()
      expect(capture("copy")):same({ ok = true, output = "Usage: copy <source> <destination>\n", error = "" });
    end);
  end);

  describe("delete", function()
    it("deletes files, globs and directories, also as rm", function()
      touch(DIR .. "/a.txt");
      touch(DIR .. "/b.txt");
      touch(DIR .. "/c.lua");
      fs.makeDir(DIR .. "/d/e");
      capture("rm " .. DIR .. "/*.txt " .. DIR .. "/d");
      expect(fs.list(DIR)):same({ "c.lua" });
      capture("delete " .. DIR .. "/c.lua");
      expect(fs.list(DIR)):same({});
    end);
    it("refuses read-only files and the root mount", function()
      expect(capture("rm /rom/programs/shell.lua").error)
        :eq("Cannot delete read-only file /rom/programs/shell.lua\n");
      expect(capture("rm /rom").error):eq("Cannot delete read-only file /rom\n");
    end);
    it("names a pattern that matched nothing", function()
      expect(capture("rm never-existed").error):eq("never-existed: No matching files\n");
    end);
    it("shows its usage without arguments", function()
      expect(capture("rm").output):eq("Usage: rm <paths>\n");
    end);
  end);

  describe("mkdir", function()
    it("makes directories with their parents", function()
      capture("mkdir " .. DIR .. "/a/b " .. DIR .. "/c");
      expect(fs.isDir(DIR .. "/a/b")):eq(true);
      expect(fs.isDir(DIR .. "/c")):eq(true);
    end);
    it("refuses a path that is a file, or read-only", function()
      touch(DIR .. "/f");
      expect(capture("mkdir " .. DIR .. "/f").error):eq(DIR .. "/f: Destination exists\n");
      expect(capture("mkdir /rom/x").error):eq("/rom/x: Access denied\n");
    end);
  end);

  describe("move", function()
    it("moves a file, and a file into a directory, also as mv", function()
      touch(DIR .. "/a.txt", "1");
      fs.makeDir(DIR .. "/d");
      capture("move " .. DIR .. "/a.txt " .. DIR .. "/b.txt");
      expect(fs.exists(DIR .. "/a.txt")):eq(false);
      capture("mv " .. DIR .. "/b.txt " .. DIR .. "/d");
      expect(read_file(DIR .. "/d/b.txt")):eq("1");
    end);
    it("refuses what CC refuses", function()
      touch(DIR .. "/a.txt");
      touch(DIR .. "/b.txt");
      expect(capture("move nothing destination").error):eq("No matching files\n");
      expect(capture("move " .. DIR .. "/a.txt " .. DIR .. "/a.txt").error):eq("Destination exists\n");
      expect(capture("move " .. DIR .. "/a.txt /rom/test.txt").error):eq("Destination is read-only\n");
      expect(capture("move /rom/programs/shell.lua " .. DIR .. "/x").error)
        :eq("Cannot move read-only file /rom/programs/shell.lua\n");
      expect(capture("move " .. DIR .. "/*.txt " .. DIR .. "/c.txt").error)
        :eq("Cannot overwrite file multiple times\n");
    end);
    it("shows its usage without arguments", function()
      expect(capture("move").output):eq("Usage: move <source> <destination>\n");
    end);
  end);

  describe("rename", function()
    it("renames a file", function()
      touch(DIR .. "/a.txt");
      capture("rename " .. DIR .. "/a.txt " .. DIR .. "/b.txt");
      expect(fs.list(DIR)):same({ "b.txt" });
    end);
    it("refuses what CC refuses", function()
      touch(DIR .. "/c.txt");
      expect(capture("rename nothing destination").error):eq("No matching files\n");
      expect(capture("rename " .. DIR .. "/c.txt " .. DIR .. "/c.txt").error):eq("Destination exists\n");
      expect(capture("rename " .. DIR .. "/c.txt /rom/test.txt").error):eq("Destination is read-only\n");
      expect(capture("rename /rom/programs/shell.lua " .. DIR .. "/d").error):eq("Source is read-only\n");
    end);
  end);

  describe("type and cat", function()
    it("type names a path's kind", function()
      touch(DIR .. "/f");
      expect(capture("type " .. DIR .. "/f").output):eq("file\n");
      expect(capture("type " .. DIR).output):eq("directory\n");
      expect(capture("type " .. DIR .. "/none").output):eq("No such path\n");
      expect(capture("type").output):eq("Usage: type <path>\n");
    end);
    it("cat prints a file's lines", function()
      touch(DIR .. "/f", "one\ntwo\n");
      expect(capture("cat " .. DIR .. "/f").output):eq("one\ntwo\n");
      expect(capture("cat " .. DIR .. "/none").error):eq(DIR .. "/none: No such file\n");
      expect(capture("cat " .. DIR).error):eq(DIR .. ": Is a directory\n");
    end);
  end);

  describe("label and id", function()
    it("label shows its usage", function()
      expect(capture("label").output):eq(
        "Usages:\nlabel get\nlabel get <drive>\nlabel set <text>\nlabel set <drive> <text>\nlabel clear\nlabel clear <drive>\n");
    end);
    it("label gets, sets and clears the computer label", function()
      local saved = os.getComputerLabel();
      os.setComputerLabel(nil);
      expect(capture("label get").output):eq("No Computer label\n");
      expect(capture("label set kitchen").output):eq("Computer label set to \"kitchen\"\n");
      expect(os.getComputerLabel()):eq("kitchen");
      expect(capture("label get").output):eq("Computer label is \"kitchen\"\n");
      expect(capture("id").output):eq(
        "This is computer #" .. os.getComputerID() .. "\nThis computer is labelled \"kitchen\"\n");
      expect(capture("label clear").output):eq("Computer label cleared\n");
      expect(os.getComputerLabel()):eq(nil);
      expect(capture("id").output):eq("This is computer #" .. os.getComputerID() .. "\n");
      -- An empty label is a label in CC (OSAPI.setComputerLabel maps only nil to none).
      expect(capture("label set \"\"").output):eq("Computer label set to \"\"\n");
      expect(capture("label get").output):eq("Computer label is \"\"\n");
      os.setComputerLabel(saved);
    end);
  end);

  describe("list and programs", function()
    it("list tabulates directories then files", function()
      fs.makeDir(DIR .. "/zdir");
      touch(DIR .. "/b.txt");
      touch(DIR .. "/.hidden");
      local tabulate = stub(textutils, "pagedTabulate");
      capture("ls " .. DIR);
      expect(tabulate):called_with(colours.green, { "zdir" }, colours.white, { "b.txt" });
    end);
    it("list refuses a file or a missing directory", function()
      touch(DIR .. "/f");
      expect(capture("list " .. DIR .. "/f").error):eq("Not a directory\n");
      expect(capture("list /rom/nothing").error):eq("Not a directory\n");
    end);
    it("programs tabulates the shell's programs", function()
      local tabulate = stub(textutils, "pagedTabulate");
      capture("programs");
      expect(tabulate):called_with(shell.programs(false));
    end);
  end);

  describe("completion", function()
    local function complete(program, index, text, previous)
      local info = shell.getCompletionInfo()["rom/programs/" .. program .. ".lua"];
      expect(info):type("table");
      return info.fnComplete(shell, index, text, previous or {});
    end
    it("completes directories for mkdir and cd, at every mkdir argument", function()
      fs.makeDir(DIR .. "/a");
      fs.makeDir(DIR .. "/b");
      touch(DIR .. "/f.txt");
      expect(complete("mkdir", 1, DIR .. "/")):same({ "a/", "a", "b/", "b" });
      expect(complete("mkdir", 2, DIR .. "/", { "mkdir", "x" })):same({ "a/", "a", "b/", "b" });
      expect(complete("cd", 1, DIR .. "/")):same({ "a/", "a", "b/", "b" });
      expect(complete("cd", 2, DIR .. "/")):eq(nil);
    end);
    it("completes files for edit and both paths for cp", function()
      fs.makeDir(DIR .. "/d");
      touch(DIR .. "/file.txt");
      expect(complete("edit", 1, DIR .. "/fi")):same({ "le.txt" });
      expect(complete("copy", 1, DIR .. "/fi")):same({ "le.txt " });
      expect(complete("copy", 2, DIR .. "/d", { "copy", "x" })):same({ "/" });
    end);
    it("completes the words of label and help topics", function()
      expect(complete("label", 1, "s")):same({ "et " });
      expect(complete("help", 1, "mk")):same({ "dir" });
    end);
  end);

  describe("clear, exit, shutdown and help", function()
    it("clear clears the screen and homes the cursor", function()
      local clear = stub(term, "clear");
      local set_cursor = stub(term, "setCursorPos");
      capture("clear");
      expect(clear):called(1);
      expect(set_cursor):called_with(1, 1);
    end);
    it("exit asks the shell to exit", function()
      local exit = stub(shell, "exit");
      capture("exit");
      expect(exit):called(1);
    end);
    it("shutdown says goodbye and shuts down", function()
      local sleep = stub(_G, "sleep");
      local shutdown = stub(os, "shutdown");
      expect(capture("shutdown").output):eq("Goodbye\n");
      expect(sleep):called_with(1);
      expect(shutdown):called(1);
    end);
    it("help prints a topic or says there is none", function()
      expect(capture("help nothing")):same({ ok = true, output = "", error = "No help available\n" });
      -- help pages the topic to the screen's width: a pocket computer's 26 columns break it.
      expect(capture("help cd").output):str_match("^cd <path> changes the%s+current directory");
    end);
  end);
end);

describe("programs of CC's ROM beyond the file tools", function()
  before_each(function()
    fs.delete(DIR);
    fs.makeDir(DIR);
  end);
  after_each(function()
    fs.delete(DIR);
  end);

  describe("alias", function()
    it("sets, lists and clears aliases", function()
      capture("alias spec-alias list");
      expect(shell.aliases()["spec-alias"]):eq("list");
      local tabulate = stub(textutils, "pagedTabulate");
      capture("alias");
      expect(tabulate):called(1);
      capture("alias spec-alias");
      expect(shell.aliases()["spec-alias"]):eq(nil);
    end);
    it("lists aliases sorted, as name:program", function()
      stub(shell, "aliases", function() return { mv = "move", cp = "copy" }; end);
      local tabulate = stub(textutils, "pagedTabulate");
      capture("alias");
      expect(tabulate):called_with({ "cp:copy", "mv:move" });
    end);
    it("shows its usage for too many arguments", function()
      expect(capture("alias a b c")):same({ ok = true, output = "Usage: alias <alias> <program>\n", error = "" });
    end);
  end);

  describe("hello, time and the command-computer programs", function()
    it("hello prints slowly", function()
      local slow = stub(textutils, "slowPrint", function(text) print(text); end);
      expect(capture("hello").output):eq("Hello World!\n");
      expect(slow):called(1);
    end);
    it("time names the time of day and the day", function()
      local want = "The time is " .. textutils.formatTime(os.time(), false) .. " on Day " .. os.day() .. "\n";
      expect(capture("time")):same({ ok = true, output = want, error = "" });
    end);
    it("commands and exec need a command computer", function()
      for _, program in ipairs({ "/rom/programs/command/commands.lua", "/rom/programs/command/exec.lua" }) do
        expect(capture(program)):same({ ok = true, output = "", error = "Requires a Command Computer.\n" });
      end
    end);
  end);

  describe("motd", function()
    local function on(month, day)
      stub(os, "date", function() return { month = month, day = day }; end);
    end
    it("greets on its dates", function()
      on(1, 1);
      expect(capture("motd").output):eq("Happy new year!\n");
      on(10, 31);
      expect(capture("motd").output):eq("OOoooOOOoooo! Spooky!\n");
      on(12, 24);
      expect(capture("motd").output):eq("Merry X-mas!\n");
    end);
    it("picks a line of the files on motd.path, skipping missing ones", function()
      on(3, 3);
      local file = fs.open(DIR .. "/motd.txt", "w");
      file.write("only line\n");
      file.close();
      local old = settings.get("motd.path");
      settings.set("motd.path", DIR .. "/missing.txt:" .. DIR .. "/motd.txt");
      local out = capture("motd").output;
      settings.set("motd.path", DIR .. "/missing.txt");
      local none = capture("motd").output;
      settings.set("motd.path", old);
      expect(out):eq("only line\n");
      expect(none):eq("missingno\n");
    end);
    it("defaults to the ROM's messages", function()
      on(3, 3);
      expect(settings.get("motd.path")):eq("/rom/motd.txt:/motd.txt");
      local out = capture("motd").output;
      local found = false;
      for line in io.lines("/rom/motd.txt") do
        if out == line .. "\n" then found = true; end
      end
      expect(found):eq(true);
    end);
    it("runs at startup when motd.enable is set", function()
      on(1, 1);
      local enable, startup = settings.get("motd.enable"), settings.get("shell.allow_startup");
      settings.set("motd.enable", true);
      settings.set("shell.allow_startup", false);
      local out = capture("/rom/startup.lua").output;
      settings.set("motd.enable", enable);
      settings.set("shell.allow_startup", startup);
      expect(out):eq("Happy new year!\n");
    end);
  end);

  describe("pastebin", function()
    local PASTE = 'print("pasted", ...)';
    local function serve(content_type)
      local asked = {};
      stub(http, "get", function(url)
        asked[#asked + 1] = url;
        return {
          readAll = function() return PASTE; end,
          close = function() end,
          getResponseHeaders = function() return { ["Content-Type"] = content_type or "text/plain; charset=utf-8" }; end,
        };
      end);
      local post = stub(http, "post", function()
        return { readAll = function() return "https://pastebin.com/xyz12"; end, close = function() end };
      end);
      return asked, post;
    end

    it("gets a paste by code or URL and refuses to overwrite", function()
      local asked = serve();
      expect(capture("pastebin get abc12 " .. DIR .. "/got.lua").output)
        :eq("Connecting to pastebin.com... Success.\nDownloaded as " .. DIR .. "/got.lua\n");
      expect(read_file(DIR .. "/got.lua")):eq(PASTE);
      expect(asked[1]):str_match("^https://pastebin%.com/raw/abc12%?cb=%x+$");
      capture("pastebin get https://pastebin.com/raw/def34 " .. DIR .. "/url.lua");
      expect(asked[2]):str_match("^https://pastebin%.com/raw/def34%?");
      expect(capture("pastebin get abc12 " .. DIR .. "/got.lua").output):eq("File already exists\n");
    end);

    it("runs a paste with its arguments", function()
      serve();
      expect(capture("pastebin run abc12 a b")):same({
        ok = true, output = "Connecting to pastebin.com... Success.\npasted\ta\tb\n", error = "",
      });
    end);

    it("says Failed when pastebin answers a page instead of the paste", function()
      serve("text/html");
      local got = capture("pastebin run abc12");
      expect(got.output):str_match("^Connecting to pastebin%.com%.%.%. Failed%.\n");
    end);

    it("puts a file and names its code", function()
      local _, post = serve();
      local file = fs.open(DIR .. "/up.lua", "w");
      file.write("x = 1");
      file.close();
      expect(capture("pastebin put " .. DIR .. "/up.lua").output):eq(
        "Connecting to pastebin.com... Success.\nUploaded as https://pastebin.com/xyz12\n" ..
        'Run "pastebin get xyz12" to download anywhere\n');
      expect(post):called(1);
      expect(capture("pastebin put " .. DIR .. "/nothing").output):eq("No such file\n");
    end);

    it("shows its usages", function()
      expect(capture("pastebin").output):eq(
        "Usages:\npastebin put <filename>\npastebin get <code> <filename>\npastebin run <code> <arguments>\n");
      expect(capture("pastebin get abc12").output):str_match("^Usages:");
    end);
  end);

  describe("help", function()
    local function window_run(width, height, topic_text, events)
      local path = DIR .. "/topic.txt";
      local file = fs.open(path, "w");
      file.write(topic_text);
      file.close();
      stub(help, "lookup", function() return path; end);
      local previous = term.current();
      local win = window.create(previous, 1, 1, width, height, false);
      term.redirect(win);
      local co = coroutine.create(shell.run);
      local ok, err = coroutine.resume(co, "help topic");
      for _, event in ipairs(events or {}) do
        if coroutine.status(co) == "dead" then break; end
        ok, err = coroutine.resume(co, table.unpack(event));
      end
      local lines = {};
      for y = 1, height do lines[y] = win.getLine(y); end
      local dead = coroutine.status(co) == "dead";
      -- A viewer still open is closed (terminate), so the shell forgets the run.
      if not dead then coroutine.resume(co, "terminate"); end
      term.redirect(previous);
      if not ok then error(err, 0); end
      return dead, lines;
    end

    it("prints a topic that fits above the last line", function()
      local dead, lines = window_run(12, 3, "two short\nlines");
      expect(dead):eq(true);
      expect(lines):same({ "two short   ", "lines       ", "            " });
    end);

    it("opens a viewer for a longer topic and scrolls it", function()
      local dead, lines = window_run(12, 3, "one\ntwo\nthree\nfour");
      expect(dead):eq(false);
      expect(lines):same({ "one         ", "two         ", "Help: topic " });
      dead, lines = window_run(12, 3, "one\ntwo\nthree\nfour", { { "key", keys.down }, { "key", keys.down } });
      expect(lines):same({ "three       ", "four        ", "Help: topic " });
    end);

    it("closes on Q and drops the Q's char event, so it never reaches the prompt", function()
      local path = DIR .. "/topic.txt";
      local file = fs.open(path, "w");
      file.write("a\nb\nc\nd\ne");
      file.close();
      stub(help, "lookup", function() return path; end);
      local previous = term.current();
      term.redirect(window.create(previous, 1, 1, 10, 3, false));
      local co = coroutine.create(shell.run);
      coroutine.resume(co, "help topic");
      coroutine.resume(co, "key", keys.q);
      local after_key = coroutine.status(co);
      coroutine.resume(co, "char", "q");
      term.redirect(previous);
      expect({ after_key, coroutine.status(co) }):same({ "suspended", "dead" });
    end);
  end);
end);
