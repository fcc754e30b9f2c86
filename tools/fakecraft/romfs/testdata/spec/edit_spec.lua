-- Specs for /rom/programs/edit.lua and /rom/programs/lua.lua, driven by queued key and
-- char events as the keyboard would send them.

local FILE = "/edit-spec.txt";

-- A case of a peripheral beside the computer: pending on a pocket computer, which has nothing
-- beside it (CC's PocketBrain attaches its upgrade on the back, and nothing else).
local it_beside = pocket and pending or it;

local function type_text(text)
  for c in text:gmatch(".") do os.queueEvent("char", c); end
end

local function press(...)
  for _, key in ipairs({ ... }) do
    os.queueEvent("key", key, false);
    os.queueEvent("key_up", key);
  end
end

local function read_file(path)
  local file = fs.open(path, "r");
  local text = file.readAll();
  file.close();
  return text;
end

-- The menu: Ctrl opens it on Save; Right moves to Exit.
local function save() press(keys.leftCtrl, keys.enter); end
local function quit() press(keys.leftCtrl, keys.right, keys.enter); end

describe("edit", function()
  before_each(function() fs.delete(FILE); end);
  after_each(function() fs.delete(FILE); end);

  it("shows its usage without arguments", function()
    local lines = {};
    stub(_G, "print", function(text) lines[#lines + 1] = text; end);
    shell.run("edit");
    expect(lines):same({ "Usage: edit <path>" });
  end);

  it("refuses a directory", function()
    local lines = {};
    stub(_G, "print", function(text) lines[#lines + 1] = text; end);
    shell.run("edit /rom");
    expect(lines):same({ "Cannot edit a directory." });
  end);

  it("writes a new file and saves it from the menu", function()
    type_text("hello");
    press(keys.enter);
    type_text("world");
    save();
    quit();
    expect(shell.run("edit " .. FILE)):eq(true);
    expect(read_file(FILE)):eq("hello\nworld\n");
  end);

  it("moves the cursor, inserts, deletes and joins lines", function()
    local file = fs.open(FILE, "w");
    file.write("abc\ndef\n");
    file.close();
    -- On "abc": End, Left, type X => "abXc"; Down, Home, Delete => "ef";
    -- Backspace at the start of line 2 joins it to line 1.
    press(keys["end"], keys.left);
    type_text("X");
    press(keys.down, keys.home, keys.delete, keys.backspace);
    save();
    quit();
    shell.run("edit " .. FILE);
    expect(read_file(FILE)):eq("abXcef\n");
  end);

  it("keeps the indent on Enter and indents with Tab", function()
    press(keys.tab);
    type_text("x");
    press(keys.enter);
    type_text("y");
    save();
    quit();
    shell.run("edit " .. FILE);
    expect(read_file(FILE)):eq("    x\n    y\n");
  end);

  it("leaves without saving", function()
    type_text("lost");
    quit();
    shell.run("edit " .. FILE);
    expect(fs.exists(FILE)):eq(false);
  end);

  it("shows how to reach the menu on the status line, shorter on a pocket computer's 26 columns", function()
    -- The status line of edit run in a window width columns wide, as last drawn before it
    -- quits (it clears the screen then).
    local function statusLine(width)
      quit();
      local previous = term.current();
      local win = window.create(previous, 1, 1, width, 20, false);
      local shown = nil;
      local write = win.write;
      win.write = function(text)
        write(text);
        local line = win.getLine(20):gsub(" +$", "");
        if line ~= "" then shown = line; end
      end;
      term.redirect(win);
      shell.run("edit " .. FILE);
      term.redirect(previous);
      return shown;
    end
    -- A colour computer's takes a click on the status line too.
    if term.isColour() then
      expect(statusLine(51)):eq("Press Ctrl or click here to access menu" .. (" "):rep(8) .. "Ln 1");
      expect(statusLine(44)):eq("Press Ctrl or click here to access menu Ln 1");
      expect(statusLine(43)):eq("Press Ctrl for menu" .. (" "):rep(20) .. "Ln 1");
    else
      expect(statusLine(51)):eq("Press Ctrl to access menu" .. (" "):rep(22) .. "Ln 1");
      expect(statusLine(30)):eq("Press Ctrl to access menu Ln 1");
    end
    expect(statusLine(26)):eq("Press Ctrl for menu   Ln 1");
  end);

  it("says where it saved on the status line", function()
    type_text("x");
    save();
    quit();
    local seen = {};
    local native_write = term.write;
    stub(term, "write", function(text)
      seen[#seen + 1] = text;
      return native_write(text);
    end);
    shell.run("edit " .. FILE);
    local saved = false;
    for _, text in ipairs(seen) do
      if text == "Saved to edit-spec.txt" then saved = true; end
    end
    expect(saved):eq(true);
  end);

  it("gives a new file without an extension edit.default_extension", function()
    type_text("x = 1");
    save();
    quit();
    shell.run("edit /edit-spec");
    expect(read_file("/edit-spec.lua")):eq("x = 1\n");
    fs.delete("/edit-spec.lua");
    settings.set("edit.default_extension", "");
    save();
    quit();
    shell.run("edit /edit-spec");
    settings.unset("edit.default_extension");
    expect(fs.exists("/edit-spec")):eq(true);
    fs.delete("/edit-spec");
  end);

  it("keeps a line's leading spaces on Enter, and takes a four-space indent with Backspace", function()
    local file = fs.open(FILE, "w");
    file.write("\t  ab\n        cd\n");
    file.close();
    press(keys["end"], keys.enter);
    type_text("1");
    press(keys.down, keys.home, keys.right, keys.right, keys.right, keys.right, keys.right);
    press(keys.backspace, keys.backspace);
    save();
    quit();
    shell.run("edit " .. FILE);
    expect(read_file(FILE)):eq("\t  ab\n1\n   cd\n");
  end);

  it("runs a menu item by its first letter, and leaves a read-only file as it is", function()
    type_text("saved by s");
    press(keys.leftCtrl);
    type_text("s");
    press(keys.leftCtrl);
    type_text("e");
    shell.run("edit " .. FILE);
    expect(read_file(FILE)):eq("saved by s\n");

    local seen = {};
    local native_write = term.write;
    stub(term, "write", function(text)
      seen[#seen + 1] = text;
      return native_write(text);
    end);
    type_text("x");
    press(keys.enter, keys.backspace, keys.tab, keys.leftCtrl);
    type_text("e");
    expect(shell.run("edit /rom/motd.txt")):eq(true);
    local said = false;
    for _, text in ipairs(seen) do said = said or text == "File is read only"; end
    expect(said):eq(true);
  end);

  it("moves the cursor where the screen is clicked, and opens the menu from its bottom row", function()
    local file = fs.open(FILE, "w");
    file.write("abc\ndef\n");
    file.close();
    local _, height = term.getSize();
    os.queueEvent("mouse_click", 1, 3, 2);
    type_text("X");
    os.queueEvent("mouse_click", 1, 40, 1);
    type_text("Y");
    os.queueEvent("mouse_click", 1, 1, height);
    os.queueEvent("mouse_click", 1, 3, height); -- on [Save]
    press(keys.leftCtrl);
    type_text("e");
    shell.run("edit " .. FILE);
    expect(read_file(FILE)):eq("abcY\ndeXf\n");
  end);

  it("completes the name before the cursor, taken with Tab", function()
    type_text("print(textutils.ser");
    press(keys.down, keys.tab);
    type_text("1))");
    save();
    quit();
    shell.run("edit " .. FILE);
    expect(read_file(FILE)):eq("print(textutils.serialiseJSON(1))\n");
  end);

  -- Run (under multishell) opens a tab on the text; here the tab runs at once, in a window,
  -- given the key it waits for at the end. Its error is read as CC's runner reads it, through
  -- cc.internal.exception's try: an exception the text throws is its message and the line
  -- marked in the coroutine it names.
  it("runs the text in a tab, showing an exception's message and its line", function()
    local file = fs.open(FILE, "w");
    file.write(table.concat({
      "local co = coroutine.create(function()",
      "  local t = nil",
      "  return t.x",
      "end)",
      "local ok, err = coroutine.resume(co)",
      "error(setmetatable({ message = err, thread = co }, { __name = \"exception\" }))",
    }, "\n"));
    file.close();
    stub(_G, "multishell", { getCurrent = function() return 1; end, setTitle = function() end });
    stub(shell, "switchTab", function() end);
    local errors, rows = {}, {};
    stub(shell, "openTab", function(path)
      stub(_G, "printError", function(text) errors[#errors + 1] = tostring(text); end);
      local previous = term.current();
      local win = window.create(previous, 1, 1, 51, 19, false);
      term.redirect(win);
      press(keys.enter);
      shell.run(path);
      term.redirect(previous);
      for y = 1, 3 do rows[y] = (win.getLine(y):gsub(" +$", "")); end
      press(keys.leftCtrl);
      type_text("e");
      return 2;
    end);
    press(keys.leftCtrl);
    type_text("r");
    shell.run("edit " .. FILE);
    expect(errors):same({ FILE .. ":3: attempt to index local 't' (a nil value)" });
    expect(rows):same({ "\149Line 3", "\149  return t.x", "\149          \131" });
  end);

  it_beside("prints the text on a printer's pages from the menu", function()
    periphemu.create("edit_spec_printer", "printer");
    local file = fs.open(FILE, "w");
    for i = 1, 25 do file.write("line " .. i .. "\n"); end
    file.close();
    press(keys.leftCtrl);
    type_text("p");
    local printer = peripheral.wrap("edit_spec_printer");
    -- The printer answers on the next tick, and keys typed meanwhile are lost to edit (as
    -- in CC): leave once the last page is out.
    parallel.waitForAll(function() shell.run("edit " .. FILE); end, function()
      repeat sleep(0.05); until printer.getPaperLevel() == 384 - 2 and not pcall(printer.getCursorPos);
      press(keys.leftCtrl);
      type_text("e");
    end);
    periphemu.remove("edit_spec_printer");
  end);
end);

describe("lua", function()
  -- Runs the prompt on typed lines in a window of a computer's 51x19 (on a pocket computer
  -- too, so that its lines break as they do on a computer); returns the lines it showed
  -- other than its prompts (the two-line header first). Values are printed with cc.pretty,
  -- which writes to the terminal rather than calling print.
  local function repl(...)
    for _, line in ipairs({ ... }) do
      type_text(line);
      press(keys.enter);
    end
    type_text("exit()");
    press(keys.enter);
    local previous = term.current();
    local width, height = 51, 19;
    local win = window.create(previous, 1, 1, width, height, false);
    term.redirect(win);
    shell.run("lua");
    term.redirect(previous);
    local out = {};
    for y = 1, height do
      local text = win.getLine(y):gsub(" +$", "");
      if text ~= "" and text:sub(1, 5) ~= "lua> " then out[#out + 1] = text; end
    end
    return out;
  end

  it("prints the value of an expression", function()
    local out = repl("1+1", "'a' .. 'b'", "{ 1, x = true }", "nil");
    expect({ table.unpack(out, 3) }):same({ "2", '"ab"', "{ 1, x = true }", "nil" });
  end);

  it("prints values with cc.pretty, in its colours", function()
    type_text("'ab'");
    press(keys.enter);
    type_text("exit()");
    press(keys.enter);
    local previous = term.current();
    local width, height = previous.getSize();
    local win = window.create(previous, 1, 1, width, height, false);
    term.redirect(win);
    shell.run("lua");
    term.redirect(previous);
    local colour;
    for y = 1, height do
      local text, fg = win.getLine(y);
      if text:sub(1, 4) == '"ab"' then colour = fg:sub(1, 4); end
    end
    expect(colour):eq(colours.toBlit(colours.red):rep(4));
  end);

  it("runs statements and keeps their globals", function()
    local out = repl("answer = 6 * 7", "answer");
    expect({ table.unpack(out, 3) }):same({ "42" });
    expect(rawget(_G, "answer")):eq(nil);
  end);

  it("reports errors and carries on", function()
    local out = repl("error('boom')", "2");
    expect(out[3]):str_match("boom$");
    -- As CC 1.109+: the line, and a mark under the call that failed.
    expect({ table.unpack(out, 4) }):same({ "\149Line 1", "\149error('boom')", "\149     \131", "2" });
  end);

  it("marks where a runtime error happened, in the line as typed", function()
    local out = repl("local t = {} ; print(t.a.b)", "nil .. 1");
    expect({ table.unpack(out, 5) }):same({
      "lua[1]:1: attempt to index field 'a' (a nil value)",
      "\149Line 1", "\149local t = {} ; print(t.a.b)", "\149                        \131",
      "lua[2]:1: attempt to concatenate a nil value",
      "\149Line 1", "\149nil .. 1", "\149    \131",
    });
  end);

  it("warns that a local is gone by the next line, unless lua.warn_against_use_of_local is off", function()
    local out = repl("local x = 1", "x");
    expect({ table.unpack(out, 3) }):same({
      "To access local variables in later inputs, remove", "the local keyword.", "nil",
    });
    settings.set("lua.warn_against_use_of_local", false);
    out = repl("local x = 1", "x");
    settings.unset("lua.warn_against_use_of_local");
    expect({ table.unpack(out, 3) }):same({ "nil" });
  end);

  it("explains itself when given arguments", function()
    local lines = {};
    stub(_G, "print", function(text) lines[#lines + 1] = text; end);
    shell.run("lua x");
    expect(lines):same({ "This is an interactive Lua prompt.", "To run a lua program, just type its name." });
  end);
end);
