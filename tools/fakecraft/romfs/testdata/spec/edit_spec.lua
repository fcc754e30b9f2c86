-- Specs for /rom/programs/edit.lua and /rom/programs/lua.lua, driven by queued key and
-- char events as the keyboard would send them.

local FILE = "/edit-spec.txt";

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
end);

describe("lua", function()
  -- Runs the prompt on typed lines; returns what it printed after its two-line header
  -- (without the empty prints that end each read).
  local function repl(...)
    local out = {};
    stub(_G, "print", function(...)
      local parts = table.pack(...);
      for i = 1, parts.n do parts[i] = tostring(parts[i]); end
      local text = table.concat(parts, "\t", 1, parts.n);
      if text ~= "" then out[#out + 1] = text; end
      return 1;
    end);
    stub(_G, "printError", function(text) out[#out + 1] = "error: " .. tostring(text); end);
    for _, line in ipairs({ ... }) do
      type_text(line);
      press(keys.enter);
    end
    type_text("exit()");
    press(keys.enter);
    shell.run("lua");
    return out;
  end

  it("prints the value of an expression", function()
    local out = repl("1+1", "'a' .. 'b'", "{ 1, x = true }", "nil");
    expect({ table.unpack(out, 3) }):same({ "2", '"ab"', "{ 1, x = true }", "nil" });
  end);

  it("runs statements and keeps their globals", function()
    local out = repl("answer = 6 * 7", "answer");
    expect({ table.unpack(out, 3) }):same({ "42" });
    expect(rawget(_G, "answer")):eq(nil);
  end);

  it("reports errors and carries on", function()
    local out = repl("error('boom')", "2");
    expect(out[3]):str_match("boom$");
    expect(out[4]):eq("2");
  end);

  it("explains itself when given arguments", function()
    local lines = {};
    stub(_G, "print", function(text) lines[#lines + 1] = text; end);
    shell.run("lua x");
    expect(lines):same({ "This is an interactive Lua prompt.", "To run a lua program, just type its name." });
  end);
end);
