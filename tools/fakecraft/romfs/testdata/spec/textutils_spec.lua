-- Specs for the Lua half of the textutils API (textutils/textutils.lua): complete, and the
-- argument checks it shares with cc.expect.

describe("textutils.complete", function()
  it("checks its arguments as cc.expect does", function()
    expect.error(textutils.complete, nil):eq("bad argument #1 (string expected, got nil)");
    expect.error(textutils.complete, "", false):eq("bad argument #2 (table expected, got boolean)");
    local ok, err = pcall(function() textutils.complete(1, {}); end);
    expect(ok):eq(false);
    expect(err):str_match("^%.%.%.[^:]*textutils_spec%.lua:%d+: bad argument #1 to 'complete' %(string expected, got number%)$");
  end);

  it("completes names of the table, marking functions and tables with entries", function()
    local env = { print = print, printed = 1, pt = {}, pos = { x = 1 }, [1] = "no", ["p q"] = 2 };
    expect(textutils.complete("p", env)):same({ "os.", "rint(", "rinted", "t" });
    expect(textutils.complete("printed", env)):same({ "" });
    expect(textutils.complete("q", env)):same({});
  end);

  it("completes fields after dots, and only callables after a colon", function()
    local handle = setmetatable({}, { __call = function() end });
    local env = { a = { b = { close = print, count = 3, call = handle, cube = {} } } };
    expect(textutils.complete("a.b.c", env)):same({ "all", "lose(", "ount", "ube" });
    expect(textutils.complete("a.b:c", env)):same({ "all(", "lose(" });
    expect(textutils.complete("a.x.c", env)):same({});
    expect(textutils.complete("a.b.count.x", env)):same({});
    expect(textutils.complete("a:b.c", env)):same({});
  end);

  it("leaves out keywords and follows the __index chain, nearest first", function()
    local base = { shared = "base", only_base = print };
    local env = setmetatable({ shared = {}, ["end"] = 1, ending = 2 }, { __index = base });
    expect(textutils.complete("end", env)):same({});
    expect(textutils.complete("en", env)):same({ "ding" });
    expect(textutils.complete("s", env)):same({ "hared" });
    expect(textutils.complete("only", env)):same({ "_base(" });
  end);

  it("looks in textutils' own environment by default, then the globals", function()
    expect(textutils.complete("textutils.comp")):same({ "lete(" });
    expect(textutils.complete("slowW")):same({ "rite(" });
    expect(textutils.complete("json_n")):same({ "ull" });
  end);

  it("is what the lua prompt completes with, over its own environment", function()
    local completer;
    local reads = 0;
    stub(_G, "read", function(_, _, complete)
      reads = reads + 1;
      completer = completer or complete;
      return reads == 1 and "spec_local = { field = 1 }" or "exit()";
    end);
    stub(_G, "print", function() return 1; end);
    stub(_G, "write", function() return 0; end);
    shell.run("lua");
    expect(type(completer)):eq("function");
    expect(completer("x = textutils.comp")):same({ "lete(" });
    expect(completer("spec_local.fi")):same({ "eld" });
    expect(completer("ex")):same({ "it" });
    expect(spec_local):eq(nil);
  end);
end);

describe("textutils' drawing functions", function()
  it("name themselves in argument errors from Lua code", function()
    local ok, err = pcall(function() textutils.slowWrite("", "fast"); end);
    expect(ok):eq(false);
    expect(err):str_match("bad argument #2 to 'slowWrite' %(number expected, got string%)$");
    expect.error(textutils.tabulate, {}, true):eq("bad argument #2 (number or table expected, got boolean)");
  end);
end);

describe("textutils.unserialiseJSON", function()
  local function fails(text, message, opts)
    local value, err = textutils.unserialiseJSON(text, opts);
    expect(value):eq(nil);
    expect(err):eq("Malformed JSON at position " .. message);
  end

  it("says what it expected where CC does", function()
    fails("[1,2", "5: Unexpected end of input, expected ',' or ']'.");
    fails("{", "2: Unexpected end of input, expected '}'.");
    fails('{"a" 1}', "6: Unexpected \"1\", expected ':'.");
    fails('{"a":1,}', "8: Unexpected \"}\", expected object key.");
    fails("[1 2]", "4: Unexpected \"2\", expected ',' or ']'.");
    fails('"abc', "5: Unexpected end of input, expected '\"'.");
    fails("'ab", "4: Unexpected end of input, expected '\"'.", { nbt_style = true });
    fails('"\\', "2: Unexpected end of input, expected escape sequence.");
    fails("[1] x", "5: Unexpected trailing character \"x\".");
  end);

  it("places string errors as CC's reader does", function()
    fails('"ab\\u12"', "4: Malformed unicode escape \"12\\\"\".");
    fails('"a\tb"', "4: Unescaped whitespace \"\t\".");
    fails('"a\1b"', "4: Unescaped whitespace \"\1\".");
    fails('"\\q"', "3: Unknown escape character \"q\".");
    fails("'\\''", "3: Unknown escape character \"'\".", { nbt_style = true });
  end);

  it("reads numbers with CC's pattern and tonumber", function()
    fails("-", "1: Malformed number nil.");
    fails("-.5", "1: Malformed number nil.");
    fails("[1+2]", "2: Malformed number \"1+2\".");
    fails("[1e]", "2: Malformed number \"1e\".");
    expect(textutils.unserialiseJSON("[01,2.,-01,1E2]")):same({ 1, 2, -1, 100 });
  end);

  it("stops with CC's Lua error on an NBT key that is no identifier", function()
    expect.error(textutils.unserialiseJSON, "{1:2}", { nbt_style = true })
      :eq("/rom/apis/textutils.lua:622: attempt to perform arithmetic on local 'last' (a nil value)");
  end);
end);
