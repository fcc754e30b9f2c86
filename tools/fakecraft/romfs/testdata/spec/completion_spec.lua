-- Specs for /rom/modules/main/cc/completion.lua and cc/shell/completion.lua.

local completion = require("cc.completion");
local shell_completion = require("cc.shell.completion");

describe("cc.completion", function()
  it("completes choices with suffixes", function()
    expect(completion.choice("he", { "health", "help", "status" })):same({ "alth", "lp" });
    expect(completion.choice("", { "a", "b" })):same({ "a", "b" });
  end);

  it("offers an exact match only with add_space", function()
    expect(completion.choice("help", { "help" })):same({});
    expect(completion.choice("help", { "help" }, true)):same({ " " });
    expect(completion.choice("he", { "help" }, true)):same({ "lp " });
  end);

  it("completes sides", function()
    expect(completion.side("b")):same({ "ack", "ottom" });
  end);

  it("checks its arguments", function()
    expect.error(completion.choice, nil, {}):eq("bad argument #1 (string expected, got nil)");
    expect.error(completion.choice, "", nil):eq("bad argument #2 (table expected, got nil)");
  end);
end);

describe("cc.shell.completion", function()
  it("builds a function that completes each argument in turn", function()
    local fn = shell_completion.build(
      { shell_completion.choice, { "health", "help" } },
      { shell_completion.choice, { "yes", "no" }, true }
    );
    expect(fn(shell, 1, "h", {})):same({ "ealth", "elp" });
    expect(fn(shell, 2, "y", { "prog", "help" })):same({ "es " });
    expect(fn(shell, 3, "", { "prog", "help", "yes" })):eq(nil);
  end);

  -- As CC's: a hidden file (its name starting with ".") is offered only for a "." typed, or
  -- under the setting shell.autocomplete_hidden (off by default); so is a hidden program.
  it("leaves hidden files out unless shell.autocomplete_hidden", function()
    local dir = "/completion_spec_hidden";
    fs.makeDir(dir);
    for _, name in ipairs({ ".secret.lua", "open.lua", ".cache" }) do
      local file = fs.open(fs.combine(dir, name), "w");
      file.close();
    end
    fs.delete(fs.combine(dir, ".cache"));
    fs.makeDir(fs.combine(dir, ".cache"));
    local previous = shell.dir();
    shell.setDir(dir);
    local visible = {
      shell_completion.file(shell, ""), shell_completion.dir(shell, ""),
      shell_completion.dirOrFile(shell, ""), shell.complete("edit "), shell.completeProgram(""),
      shell.complete("edit ."),
    };
    settings.set("shell.autocomplete_hidden", true);
    local all = {
      shell_completion.file(shell, ""), shell_completion.dir(shell, ""),
      shell_completion.dirOrFile(shell, ""), shell.completeProgram(".s"),
    };
    settings.unset("shell.autocomplete_hidden");
    shell.setDir(previous);
    fs.delete(dir);
    expect(visible[1]):same({ "../", "open.lua" });
    expect(visible[2]):same({ ".", ".." });
    expect(visible[3]):same({ ".", "..", "open.lua" });
    expect(visible[4]):same({ "../", "open.lua" });
    expect(visible[5][1]):eq("about");
    expect(visible[6]):same({ "./", "cache/", "secret.lua" });
    expect(all[1]):same({ "../", ".cache/", ".secret.lua", "open.lua" });
    expect(all[2]):same({ ".", "..", ".cache/", ".cache" });
    expect(all[3]):same({ ".", "..", ".cache/", ".cache", ".secret.lua", "open.lua" });
    expect(all[4]):same({ "ecret" });
  end);

  it("accepts plain functions and nil gaps", function()
    local fn = shell_completion.build(nil, function(sh, text) return { text .. "!" }; end);
    expect(fn(shell, 1, "x", {})):eq(nil);
    expect(fn(shell, 2, "x", {})):same({ "x!" });
  end);

  it("repeats a last argument marked many", function()
    local fn = shell_completion.build({ shell_completion.choice, { "ab" }, many = true });
    expect(fn(shell, 1, "a", {})):same({ "b" });
    expect(fn(shell, 5, "a", {})):same({ "b" });
  end);

  it("rejects bad specs", function()
    expect.error(shell_completion.build, 5):str_match("bad argument #1 %(table or function expected, got number%)");
    expect.error(shell_completion.build, { "x" }):str_match("Bad table entry #1 at argument #1 %(function expected, got string%)");
    expect.error(shell_completion.build, { shell_completion.choice, many = true }, shell_completion.file)
      :str_match("Unexpected 'many' field on argument #1");
  end);

  it("completes file and directory names against the shell's directory", function()
    local old = shell.dir();
    local here = fs.getDir((debug.getinfo(1, "S").source:gsub("^[@=]", "")));
    shell.setDir("/" .. here);
    local files = shell_completion.file(shell, "fixtures/prog_a");
    local dirs = shell_completion.dir(shell, "fixtures/mo");
    local both = shell_completion.dirOrFile(shell, "fixtures/prog_e", nil, true);
    shell.setDir("/" .. old);
    table.sort(dirs);
    table.sort(both);
    expect(files):same({ "rgs.lua" });
    expect(dirs):same({ "ds", "ds/" });
    expect(both):same({ "rror.lua ", "vents.lua " });
  end);

  it("completes program names through the shell", function()
    local got = shell_completion.program(shell, "shel");
    local found = false;
    for _, s in ipairs(got) do
      if s == "l" then found = true; end
    end
    expect(found):eq(true);
  end);

  it("follows a program name with a space only when the program completes its arguments", function()
    local info = shell.getCompletionInfo();
    local saved = info["rom/motd.txt"];
    shell.setCompletionFunction("rom/motd.txt", function() end);
    local got = shell_completion.programWithArgs(shell, "rom/", { "shell" }, 2);
    local typed = shell_completion.programWithArgs(shell, "rom/motd.txt", { "shell" }, 2);
    info["rom/motd.txt"] = saved;
    expect(got):same({
      "apis/", "autorun/", "help/", "modules/", "motd.txt ", "programs/", "startup.lua",
    });
    expect(typed):same({ " " });
  end);

  it("completes the arguments of alias, wget and pastebin as the shell registers them", function()
    expect(shell.complete("wget ")):same({ "run " });
    expect(shell.complete("pastebin ")):same({ "put ", "get ", "run " });
    expect(shell_completion.programWithArgs(shell, "", { "shell", "pastebin" }, 2)):same({ "put ", "get ", "run " });
    local alias = shell.complete("alias x shel");
    local found = false;
    for _, s in ipairs(alias) do
      if s == "l" then found = true; end
    end
    expect(found):eq(true);
  end);

  -- CC 1.113.1's rom/startup.lua registers these (read from its source); a program it
  -- registers none for (programs) completes nothing.
  it("completes the arguments of the ROM programs CC's startup registers, as it does", function()
    local function has(list, want)
      for _, s in ipairs(list or {}) do
        if s == want then return true; end
      end
      return false;
    end
    -- Nothing stands beside a pocket computer: its back takes a modem.
    local side = pocket and "back" or "top";
    expect(periphemu.create(side, pocket and "modem" or "monitor")):eq(true);
    local monitor = shell.complete("monitor ");
    local scale_of = shell.complete("monitor scale ");
    local program_on = shell.complete("monitor " .. side .. " hell");
    periphemu.remove(side);
    expect({ has(monitor, side .. " "), has(monitor, "scale ") }):same({ true, true });
    expect(has(scale_of, side .. " ")):eq(true);
    expect(program_on):same({ "o" });
    expect(shell.complete("gps ")):same({ "host", "host ", "locate" });
    expect(shell.complete("label ")):same({ "get", "get ", "set ", "clear", "clear " });
    expect(shell.complete("redstone ")):same({ "probe", "set ", "pulse " });
    expect(shell.complete("redstone set ba")):same({ "ck" });
    expect(shell.complete("dj ")):same({ "play", "play ", "stop " });
    expect(shell.complete("shell hel")):same({ "lo", "p " });
    expect(shell.complete("shell gps ")):same({ "host", "host ", "locate" });
    expect(shell.complete("programs ")):eq(nil);
    expect(shell.complete("help mkd")):same({ "ir" });
    expect(shell_completion.help(shell, "mkd", { "help" })):same({ "ir" });
    for _, path in ipairs({ "drive", "eject", "id", "fun/advanced/paint", "advanced/bg", "advanced/fg" }) do
      expect(shell.getCompletionInfo()["rom/programs/" .. path .. ".lua"] ~= nil):eq(true);
    end
  end);
end);
