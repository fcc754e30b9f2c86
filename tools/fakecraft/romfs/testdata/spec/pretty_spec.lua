-- Specs for /rom/modules/main/cc/pretty.lua: documents, their layouts and pretty().

local pp = require("cc.pretty");

-- The lines of doc rendered for width columns (and a ribbon).
local function lines_of(doc, width, ribbon_frac)
  local rendered = pp.render(doc, width, ribbon_frac) .. "\n";
  local out = {};
  for piece in rendered:gmatch("([^\n]*)\n") do out[#out + 1] = piece; end
  return out;
end

-- What pp.write(doc) leaves in a fresh width x height window: its lines up to the cursor,
-- trailing spaces cut, and the window.
local function written(doc, width, height)
  local previous = term.current();
  local win = window.create(previous, 1, 1, width, height or 10, false);
  term.redirect(win);
  local ok, err = pcall(pp.write, doc);
  term.redirect(previous);
  if not ok then error(err, 0); end
  local _, y = win.getCursorPos();
  local out = {};
  for i = 1, y do out[i] = (win.getLine(i):gsub("%s+$", "")); end
  return out, win;
end

describe("cc.pretty documents", function()
  it("shares the documents of the empty string, a space and a newline", function()
    expect(pp.text("")):eq(pp.empty);
    expect(pp.text(" ")):eq(pp.space);
    expect(pp.text("\n")):eq(pp.space_line);
  end);

  it("splits text at newlines, keeping empty lines", function()
    expect(pp.text("a", colours.red)):same({ tag = "text", text = "a", colour = colours.red });
    expect(pp.text("a\n\nb")):same(pp.concat(pp.text("a"), pp.space_line, pp.space_line, pp.text("b")));
    expect(pp.text("\nb\n")):same(pp.concat(pp.space_line, pp.text("b"), pp.space_line));
  end);

  it("concatenates documents and strings, with .. too", function()
    expect(pp.concat()):eq(pp.empty);
    local a = pp.text("a");
    expect(pp.concat(a)):eq(a);
    expect(pp.concat("a", "b")):same(a .. pp.text("b"));
    expect(tostring(a .. "b")):eq("ab");
  end);

  it("checks its arguments as cc.expect does", function()
    expect.error(pp.text, 1):eq("bad argument #1 (string expected, got number)");
    expect.error(pp.text, "", ""):eq("bad argument #2 (number expected, got string)");
    expect.error(pp.concat, "", {}):eq("bad argument #2 (document expected, got table)");
    expect.error(pp.nest, 2, "x"):eq("bad argument #2 (document expected, got string)");
    expect.error(pp.nest, 0, pp.empty):eq("depth must be a positive number");
    expect.error(pp.render, pp.empty, "20"):eq("bad argument #2 (number expected, got string)");
    expect.error(pp.pretty, 1, { function_args = 1 }):eq("bad field 'function_args' (boolean expected, got number)");
    expect.error(pp.pretty_print, 1, nil, "x"):eq("bad argument #3 (number expected, got string)");
  end);

  it("groups only what can break, once", function()
    local flat = pp.text("a");
    expect(pp.group(flat)):eq(flat);
    local joined = pp.concat("a", "b");
    expect(pp.group(joined)):eq(joined);
    local broken = pp.group(pp.text("a\nb"));
    expect(pp.group(broken)):eq(broken);
  end);
end);

describe("cc.pretty layout", function()
  it("puts a group on one line when it fits in the ribbon", function()
    -- 20 columns with the default ribbon of 0.6: a group may take 12.
    expect(lines_of(pp.group(pp.concat("hello", pp.space_line, "world")), 20)):same({ "hello world" });
    expect(lines_of(pp.group(pp.concat("hello", pp.line, "world")), 20)):same({ "helloworld" });
    expect(lines_of(pp.group(pp.concat("hello", pp.space_line, "world!!")), 20)):same({ "hello", "world!!" });
    expect(lines_of(pp.group(pp.concat("hello", pp.space_line, "world!!")), 20, 1)):same({ "hello world!!" });
  end);

  it("indents nested lines, and a flat group drops the indent", function()
    expect(lines_of(pp.nest(2, pp.concat("a", pp.line, "b", pp.line, "c")), 20)):same({ "a", "  b", "  c" });
    expect(lines_of(pp.group(pp.nest(2, pp.concat("a", pp.space_line, "b"))), 20)):same({ "a b" });
  end);

  it("renders every group flat without a width, and never cuts long text", function()
    local doc = pp.group(pp.concat("a long piece of text", pp.space_line, "and more"));
    expect(pp.render(doc)):eq("a long piece of text and more");
    expect(tostring(doc)):eq("a long piece of text and more");
    expect(lines_of(pp.text("one long line that is wider than ten"), 10)):same({ "one long line that is wider than ten" });
  end);

  it("writes on the terminal, wrapping long text as write does", function()
    expect((written(pp.empty, 20))):same({ "" });
    expect((written(pp.text("hello world this is a long string which will wrap"), 20)))
      :same({ "hello world this is", "a long string which", "will wrap" });
    expect((written(pp.nest(2, pp.concat("hello", pp.line, "world")), 20))):same({ "hello", "  world" });
  end);

  it("writes each text in its colour, then restores the terminal's", function()
    local lines, win = written(pp.text("r", colours.red) .. pp.text("w"), 5);
    expect(lines):same({ "rw" });
    local _, fg = win.getLine(1);
    expect(fg:sub(1, 2)):eq(colours.toBlit(colours.red) .. colours.toBlit(colours.white));
    expect(win.getTextColour()):eq(colours.white);
  end);

  it("scrolls when a line break reaches the bottom", function()
    expect((written(pp.text("a\nb\nc"), 5, 2))):same({ "b", "c" });
  end);

  it("prints with a trailing new line", function()
    local previous = term.current();
    local win = window.create(previous, 1, 1, 10, 3, false);
    term.redirect(win);
    local ok, err = pcall(pp.print, pp.text("x"));
    term.redirect(previous);
    if not ok then error(err, 0); end
    expect({ win.getCursorPos() }):same({ 1, 2 });
  end);
end);

describe("cc.pretty.pretty", function()
  local function shown(value, width, options)
    return pp.render(pp.pretty(value, options), width);
  end

  it("writes tables out: the list, then keys sorted, strings before numbers", function()
    expect(pp.pretty({})):same(pp.text("{}"));
    expect(shown({ 1, 2, n = 2 })):eq("{ 1, 2, n = 2 }");
    expect(shown({ c = 1, [-1] = true, [2.5] = 0, b = 2, ["not id"] = 3, ["and"] = 4 }))
      :eq('{ ["and"] = 4, b = 2, c = 1, ["not id"] = 3, [-1] = true, [2.5] = 0 }');
  end);

  it("breaks a table that does not fit after each comma, indented", function()
    expect(shown({ 1, 2, 3 }, 4)):eq("{\n  1,\n  2,\n  3\n}");
    expect(shown({ a = { 1, 2 }, bb = "some long text here" }, 20))
      :eq('{\n  a = { 1, 2 },\n  bb = "some long text here"\n}');
  end);

  it("shows holes in the list part as nil", function()
    local t = { 1, 2, 3, 4, 5 };
    t[2] = nil;
    expect(tostring(pp.pretty(t))):eq("{ 1, nil, 3, 4, 5 }");
  end);

  it("shows a table inside itself, and tables with __tostring, by tostring", function()
    local t = {};
    t.self = t;
    expect(shown(t)):eq("{ self = " .. tostring(t) .. " }");
    local named = setmetatable({}, { __tostring = function() return "<named>"; end });
    expect(shown({ named })):eq("{ <named> }");
  end);

  it("quotes strings on one line and colours each kind", function()
    expect(shown("a\nb\"")):eq('"a\\nb\\""');
    expect(pp.pretty("s").colour):eq(colours.red);
    expect(pp.pretty(1).colour):eq(colours.magenta);
    expect(pp.pretty(true).colour):eq(colours.lightGrey);
    expect(pp.pretty(print).colour):eq(colours.lightGrey);
  end);

  it("shows a function's parameters and where it was defined when asked", function()
    local function f(a, b, ...) return a, b; end
    local function g() end
    expect(shown(f)):eq(tostring(f));
    expect(shown(f, nil, { function_args = true })):eq(tostring(f) .. "(a, b, ...)");
    expect(shown(g, nil, { function_args = true })):eq(tostring(g) .. "()");
    expect(shown(f, nil, { function_source = true })):str_match("^function<.*pretty_spec%.lua:%d+>$");
  end);
end);
