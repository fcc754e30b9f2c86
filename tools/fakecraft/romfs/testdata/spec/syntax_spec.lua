-- Specs for cc.internal.syntax, the parser that explains Lua syntax errors (the lua prompt,
-- the shell), its lexer and cc.internal.error_printer. The messages and places were checked
-- against CC: Tweaked's own modules.

local syntax = require("cc.internal.syntax");
local parser = require("cc.internal.syntax.parser");
local lex_one = require("cc.internal.syntax.lexer").lex_one;
local tokens = parser.tokens;

-- A context that records lines, and a report that writes each message as text: its lines,
-- and each annotation as "@line:col-line:col note".
local function context_for(input, out)
  local starts = { 1 };
  local context = {};
  function context.line(pos) starts[#starts + 1] = pos; end
  function context.get_pos(pos)
    for i = #starts, 1, -1 do
      if pos >= starts[i] then return i, pos - starts[i] + 1; end
    end
  end
  function context.report(message)
    for _, part in ipairs(message) do
      if type(part) == "table" and part.tag == "annotate" then
        local l1, c1 = context.get_pos(part.start_pos);
        local l2, c2 = context.get_pos(part.end_pos);
        out[#out + 1] = ("@%d:%d-%d:%d %s"):format(l1, c1, l2, c2, tostring(part.msg));
      else
        out[#out + 1] = tostring(part);
      end
    end
  end
  return context;
end

-- Parses input from the start symbol; returns what was reported, one line each.
local function explain(input, start)
  local out = {};
  local context = context_for(input, out);
  local pos, stop = 1, {};
  local ok, err = pcall(parser.parse, context, function()
    while true do
      local token, s, f = lex_one(context, input, pos);
      if not token then return tokens.EOF, #input + 1, #input + 1; end
      pos = f + 1;
      if token < tokens.COMMENT then return token, s, f; end
      if token == tokens.ERROR then error(stop); end
    end
  end, parser[start]);
  if not ok and err ~= stop then error(err, 0); end
  return table.concat(out, "\n");
end

-- Every token of input: "line:col-line:col NAME".
local function lex_all(input)
  local names = {};
  for name, id in pairs(tokens) do names[id] = name; end
  local context = context_for(input, {});
  local out, pos = {}, 1;
  while true do
    local token, s, f = lex_one(context, input, pos);
    if not token then break; end
    local l1, c1 = context.get_pos(s);
    local l2, c2 = context.get_pos(f);
    out[#out + 1] = ("%d:%d-%d:%d %s"):format(l1, c1, l2, c2, names[token]);
    pos = f + 1;
  end
  return out;
end

describe("cc.internal.syntax's lexer", function()
  it("reads tokens with their places, across lines", function()
    expect(lex_all("local x = [[a\nb]] --c\nx.y(1e3, 0x1p4, ...)")):same({
      "1:1-1:5 LOCAL", "1:7-1:7 IDENT", "1:9-1:9 EQUALS", "1:11-2:3 STRING", "2:5-2:7 COMMENT",
      "3:1-3:1 IDENT", "3:2-3:2 DOT", "3:3-3:3 IDENT", "3:4-3:4 OPAREN", "3:5-3:7 NUMBER",
      "3:8-3:8 COMMA", "3:10-3:14 NUMBER", "3:15-3:15 COMMA", "3:17-3:19 DOTS", "3:20-3:20 CPAREN",
    });
  end);

  it("names < and >= as CC's lexer does (> and <=)", function()
    expect(lex_all("a < b >= c <= d > e")):same({
      "1:1-1:1 IDENT", "1:3-1:3 GT", "1:5-1:5 IDENT", "1:7-1:8 LE", "1:10-1:10 IDENT",
      "1:12-1:13 LE", "1:15-1:15 IDENT", "1:17-1:17 GT", "1:19-1:19 IDENT",
    });
  end);

  it("reads goto as its own token, and another language's operators as Lua's", function()
    expect(lex_all("goto && ||")):same({ "1:1-1:4 GOTO", "1:6-1:7 AND", "1:9-1:10 OR" });
  end);
end);

describe("cc.internal.syntax's parser", function()
  -- { input, start symbol, what CC's parser reports }
  local CASES = {
    { "while x = 1 do end", "program", "Unexpected = in expression.\n@1:9-1:9 \nTip: Replace this with == to check if two values are equal." },
    { "t = { [1] 2 }", "program", "Unexpected number.\n@1:11-1:11 " },
    { "t = { 'a' = 1 }", "program", "Unexpected = in expression.\n@1:11-1:11 \nTip: Wrap the preceding expression in [ and ] to use it as a table key." },
    { "t = { a = 1 b = 2 }", "program", "Unexpected identifier in table.\n@1:13-1:13 \n@1:12-1:12 Are you missing a comma here?" },
    { "t = { 1, 2 ; )", "program", "Unexpected ). Are you missing a closing bracket?\n@1:5-1:5 Brackets were opened here.\n@1:14-1:14 Unexpected ) here." },
    { "print('a' 'b')", "program", "Unexpected string. Are you missing a closing bracket?\n@1:6-1:6 Brackets were opened here.\n@1:11-1:13 Unexpected string here." },
    { "print(1, 2,)", "program", "Unexpected ) in function call.\n@1:12-1:12 \n@1:11-1:11 Tip: Try removing this ,." },
    { "local function a.b() end", "program", "Cannot use local function with a table key.\n@1:17-1:17 . appears here.\n@1:1-1:5 Tip: Try removing this local keyword." },
    { "os.reboot\nprint(1)", "program", "Unexpected identifier after name.\n@1:10-1:10 Expected something before the end of the line.\nTip: Use () to call with no arguments." },
    { "os.reboot", "program", "Unexpected end of file after name.\n@1:10-1:10 Expected something before the end of the line.\nTip: Use () to call with no arguments." },
    { "x y", "program", "Unexpected identifier after name.\n@1:3-1:3 \nDid you mean to assign this or call it as a function?" },
    { "a, b", "program", "Unexpected end of file after name.\n@1:5-1:5 \nDid you mean to assign this?" },
    { "a, b c", "program", "Unexpected identifier after name.\n@1:6-1:6 \nDid you mean to assign this?" },
    { "(f)", "program", "Unexpected end of file after name.\n@1:4-1:4 Expected something before the end of the line.\nTip: Use () to call with no arguments." },
    { "(f) x", "program", "Unexpected identifier.\n@1:5-1:5 " },
    { "if x\nthen end", "program", "" },
    { "if x print(x) end", "program", "Expected then after if condition.\n@1:1-1:2 If statement started here.\n@1:6-1:6 Expected then before here." },
    { "if x\nprint(x) end", "program", "Expected then after if condition.\n@1:1-1:2 If statement started here.\n@1:5-1:5 Expected then before here." },
    { "for i = 1, 10\n  print(i)\nend", "program", "Unexpected identifier.\n@2:3-2:7 " },
    { "for i, v pairs(t) do end", "program", "Unexpected identifier.\n@1:10-1:14 " },
    { "function f(a, 1) end", "program", "Unexpected number. Expected a variable name.\n@1:15-1:15 " },
    { "function f(a b) end", "program", "Unexpected identifier. Are you missing a closing bracket?\n@1:11-1:11 Brackets were opened here.\n@1:14-1:14 Unexpected identifier here." },
    { "local function f\n  return 1\nend", "program", "Unexpected return. Expected ( to start function arguments.\n@2:3-2:8 " },
    { "do\n  local x = 1\n", "program", "Unexpected end of file. Expected end or another statement.\n@1:1-1:2 Block started here.\n@3:1-3:1 Expected end of block here." },
    { "while true do\n  x()\n)", "program", "Unexpected ). Expected end or another statement.\n@1:1-1:5 Block started here.\n@3:1-3:1 Expected end of block here." },
    { "repeat\n  x = 1\n", "program", "Unexpected end of file.\n@3:1-3:1 " },
    { "repeat\n  f()\n", "program", "Unexpected end of file after name.\n@2:6-2:6 Expected something before the end of the line.\nTip: Use () to call with no arguments." },
    { "repeat", "program", "Unexpected end of file. Expected a variable name.\n@1:7-1:7 " },
    { "f()\nend", "program", "Unexpected end after name.\n@1:4-1:4 Expected something before the end of the line.\nTip: Use () to call with no arguments." },
    { "x = 1\nend", "program", "Unexpected end.\n@2:1-2:3 \nYour program contains more ends than needed. Check each block (if, for, function, ...) only has one end." },
    { "x = 1 = 2", "program", "Unexpected = in expression.\n@1:7-1:7 \nTip: Replace this with == to check if two values are equal." },
    { "::top", "program", "Unexpected end of file.\n@1:1-1:2 Label was started here.\n@1:6-1:6 Tip: Try adding :: here." },
    { "goto", "program", "Unexpected end of file after name.\n@1:5-1:5 Expected something before the end of the line.\nTip: Use () to call with no arguments." },
    { "goto 3", "program", "Unexpected number after name.\n@1:6-1:6 \nDid you mean to assign this or call it as a function?" },
    { "goto = 1 x = goto", "program", "" },
    { "return 1\nx = 2", "program", "Unexpected identifier. Expected a statement.\n@2:1-2:1 " },
    { "local 1 = 2", "program", "Unexpected number. Expected a variable name.\n@1:7-1:7 " },
    { "x = a.1", "program", "Unexpected number. Expected a statement.\n@1:6-1:7 " },
    { "x = a:b", "program", "Unexpected end of file.\n@1:8-1:8 " },
    { "x = f(1", "program", "Unexpected end of file. Are you missing a closing bracket?\n@1:6-1:6 Brackets were opened here.\n@1:8-1:8 Unexpected end of file here." },
    { "x = t[1", "program", "Unexpected end of file. Are you missing a closing bracket?\n@1:6-1:6 Brackets were opened here.\n@1:8-1:8 Unexpected end of file here." },
    { "x = -", "program", "Unexpected end of file. Expected an expression.\n@1:6-1:6 " },
    { "x = 1 +\n", "program", "Unexpected end of file. Expected an expression.\n@2:1-2:1 " },
    { "x = 3 ~= 4 != 5", "program", "Unexpected character.\n@1:12-1:13 \nTip: Replace this with ~= to check if two values are not equal." },
    { "x = a && b", "program", "Unexpected character.\n@1:7-1:8 \nTip: Replace this with and to check if both values are true." },
    { "x = 1 < 2", "program", "" },
    { "x = 0x", "program", "This isn't a valid number.\n@1:5-1:6 \nNumbers must be in one of the following formats: 123, 3.14, 23e35, 0x01AF." },
    { "x = \"abc", "program", "This string is not finished. Are you missing a closing quote (\")?\n@1:5-1:5 String started here.\n@1:9-1:9 Expected a closing quote here." },
    { "x = 'abc\\", "program", "This string is not finished.\n@1:5-1:5 String started here.\n@1:9-1:9 An escape sequence was started here, but with nothing following it." },
    { "x = [==[ abc ]=]", "program", "This string was never finished.\n@1:5-1:8 String was started here.\nWe expected a closing delimiter (]==]) somewhere after this string was started." },
    { "--[[ never closed", "program", "This comment was never finished.\n@1:1-1:4 Comment was started here.\nWe expected a closing delimiter (]]) somewhere after this comment was started." },
    { "x = [==", "program", "Incorrect start of a long string.\n@1:5-1:8 \nTip: If you wanted to start a long string here, add an extra [ here." },
    { "x = @", "program", "Unexpected character.\n@1:5-1:5 This character isn't usable in Lua code." },
    { "x = [[ a [[ b ]]", "program", "[[ cannot be nested inside another [[ ... ]]\n@1:10-1:11 " },
    { "local function f(..., a) end", "program", "" },
    { "1 + 2", "repl_exprs", "" },
    { "1 2", "repl_exprs", "Unexpected number.\n@1:3-1:3 " },
    { "x = 1", "repl_exprs", "Unexpected = in expression.\n@1:3-1:3 \nTip: Replace this with == to check if two values are equal." },
    { "f(,)", "repl_exprs", "Unexpected ,. Are you missing a closing bracket?\n@1:2-1:2 Brackets were opened here.\n@1:3-1:3 Unexpected , here." },
    { "goto", "repl_exprs", "" },
  };

  for i, case in ipairs(CASES) do
    it(("explains %s as a %s (case %d)"):format(("%q"):format(case[1]):gsub("\\\n", "\\n"), case[2], i), function()
      expect(explain(case[1], case[2])):eq(case[3]);
    end);
  end
end);

describe("cc.internal.syntax", function()
  -- Runs fn with the terminal redirected to a fresh w×h window; returns its result and rows.
  local function on_window(w, h, fn)
    local previous = term.current();
    local win = window.create(previous, 1, 1, w, h, false);
    term.redirect(win);
    local ok, result = pcall(fn);
    term.redirect(previous);
    if not ok then error(result, 0); end
    local rows = {};
    for y = 1, h do rows[y] = win.getLine(y):gsub(" +$", ""); end
    return result, rows;
  end

  it("accepts what parses, printing nothing", function()
    local ok, rows = on_window(20, 2, function() return syntax.parse_program("local x = 1\nreturn x"); end);
    expect(ok):eq(true);
    expect(rows):same({ "", "" });
    expect((on_window(20, 2, function() return syntax.parse_repl("x + 1"); end))):eq(true);
    expect((on_window(20, 2, function() return syntax.parse_repl("x = 1"); end))):eq(true);
  end);

  it("prints the error under a line of the source, marked", function()
    local ok, rows = on_window(30, 12, function() return syntax.parse_program("x = {1 2}"); end);
    expect(ok):eq(false);
    expect(rows):same({
      "Unexpected number in table.", "", "\149Line 1", "\149x = {1 2}", "\149       \131", "",
      "\149Line 1", "\149x = {1 2}", "\149      \131", "\149Are you missing a comma here?", "", "",
    });
  end);

  it("reports the prompt's reading that got furthest", function()
    local ok, rows = on_window(40, 15, function() return syntax.parse_repl("print(1"); end);
    expect(ok):eq(false);
    expect(rows[1]):eq("Unexpected end of file. Are you missing");
    expect(rows[2]):eq("a closing bracket?");
  end);

  it("explains a program's syntax error when the shell runs it", function()
    local path = "/syntax_spec_program.lua";
    local handle = fs.open(path, "w");
    handle.write("if x = 1 then end");
    handle.close();
    local _, rows = on_window(51, 12, function() return shell.run(path); end);
    fs.delete(path);
    expect(rows[1]):eq("Unexpected = in expression.");
    expect(rows[4]):eq("\149if x = 1 then end");
  end);

  it("explains a line the lua prompt cannot compile, and keeps prompting", function()
    local lines = { "t = {1 2}", "exit()" };
    stub(_G, "read", function() return table.remove(lines, 1); end);
    local _, rows = on_window(51, 19, function() return shell.run("lua"); end);
    local shown = table.concat(rows, "\n");
    expect(shown):str_match("Unexpected number in table%.");
    expect(shown):str_match("Are you missing a comma here%?");
    expect(#lines):eq(0);
  end);
end);
