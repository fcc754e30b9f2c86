-- Specs for the base library as CC: Tweaked's bios and Lua 5.2 give it: loadfile's argument
-- forms, load's chunk names as debug.getinfo reports them, and multiple assignment's order.

local FILE = "/base_spec_chunk.lua";

local function write_chunk(text)
  local file = fs.open(FILE, "w");
  file.write(text);
  file.close();
end

describe("multiple assignment", function()
  it("evaluates every value before assigning", function()
    local a, b = 1, 2;
    a, b = b, a;
    expect({ a, b }):same({ 2, 1 });
    local mode, env = {}, nil;
    local t = mode;
    mode, env = nil, mode;
    expect(mode):eq(nil);
    expect(env):eq(t);
  end);

  it("evaluates tables and keys on the left first", function()
    local i, t = 1, {};
    t[i], i = 20, 2;
    expect(t):same({ 20 });
    expect(i):eq(2);
  end);

  -- fakecraft rewrites a multiple assignment with temporaries; an error names what the
  -- program wrote, as Cobalt's does, not a temporary.
  it("names the table it could not index", function()
    local function message(f) return (select(2, pcall(f)):gsub("^[^:]*:%d+: ", "")); end
    expect(message(function() local a, t; a, t.x = 1, 2; return a end)):eq("attempt to index local 't' (a nil value)");
    expect(message(function() local a; a, not_a_global_anywhere.x = 1, 2; return a end))
      :eq("attempt to index global 'not_a_global_anywhere' (a nil value)");
    expect(message(function() local a, t = nil, {}; a, t.x.y = 1, 2; return a end))
      :eq("attempt to index field 'x' (a nil value)");
  end);
end);

describe("loadfile", function()
  it("takes an environment in place of the mode (the old form)", function()
    write_chunk("return _ENV");
    local env = {};
    expect(loadfile(FILE, env)()):eq(env);
    expect(loadfile(FILE, nil, env)()):eq(env);
    expect(loadfile(FILE)()):eq(_G);
    fs.delete(FILE);
  end);
end);

describe("chunk names", function()
  local function source_of(fn)
    local info = debug.getinfo(fn, "S");
    return { source = info.source, short_src = info.short_src };
  end

  it("keep load's name as the source, without a '=' or '@' added", function()
    expect(source_of(load("return 1", "name"))):same({ source = "name", short_src = "[string \"name\"]" });
    expect(source_of(load("return 1", "=name"))):same({ source = "=name", short_src = "name" });
    expect(source_of(load("return 1", "@file.lua"))):same({ source = "@file.lua", short_src = "file.lua" });
    expect(source_of(load("return 1"))):same({ source = "return 1", short_src = "[string \"return 1\"]" });
    local parts = { "return ", "1" };
    local reader = function() return table.remove(parts, 1); end;
    expect(source_of(load(reader))):same({ source = "=(load)", short_src = "(load)" });
  end);

  it("cut source text at its first line, as Lua's short_src does", function()
    expect(source_of(load("local x\nreturn x")).short_src):eq("[string \"local x...\"]");
  end);

  it("are the source of every function in the chunk, and of stack levels", function()
    local inner = load("return function() return debug.getinfo(1, 'S') end", "named")();
    expect(source_of(inner).source):eq("named");
    expect(inner().source):eq("named");
    expect(inner().short_src):eq("[string \"named\"]");
  end);

  it("give files '@' and the path", function()
    write_chunk("return 1");
    expect(source_of(loadfile(FILE))):same({ source = "@" .. FILE, short_src = FILE });
    fs.delete(FILE);
  end);

  it("leave func out unless asked for", function()
    expect(debug.getinfo(1, "S").func):eq(nil);
    expect(debug.getinfo(source_of, "Sf").func):eq(source_of);
    expect(debug.getinfo(rawget, "S").source):eq("=[C]");
  end);

  it("show in error positions as short_src", function()
    local _, err = pcall(load("error('boom')", "=where"));
    expect(err):eq("where:1: boom");
    _, err = pcall(load("error('boom')", "named"));
    expect(err):eq("[string \"named\"]:1: boom");
  end);
end);

describe("syntax errors", function()
  it("read as Cobalt's: the message, the token and the line", function()
    expect(select(2, load("1", "=chunk"))):eq("chunk:1: unexpected symbol near '1'");
    expect(select(2, load("x = 1\nif x then", "=chunk"))):eq("chunk:2: 'end' expected near <eof>");
    expect(select(2, load("function f()\n  return 1\n", "=chunk")))
      :eq("chunk:3: 'end' expected (to close 'function' at line 1) near <eof>");
    expect(select(2, load("x = \"abc", "=chunk"))):eq("chunk:1: unfinished string near <eof>");
    expect(select(2, load("break", "=chunk"))):eq("chunk:1: break outside loop at line 1");
    expect(select(2, load("x = [==[\n\nabc", "=chunk"))):eq("chunk:3: unfinished long string (started at line 1) near <eof>");
    expect(select(2, load("return 1", "=chunk", "b"))):eq("attempt to load a text chunk (mode is b)");
  end);

  -- Cobalt's parser counts nested statements and expressions (Parser.enterLevel) and stops
  -- past 200; fakecraft's gopher-lua compiled all of these. Compared with Cobalt run from its
  -- source.
  it("refuse nesting past Cobalt's 200 syntax levels", function()
    local function nested(open, inner, close, n) return open:rep(n) .. inner .. close:rep(n) end
    expect(select(2, load("x = 1 + " .. nested("(", "1", ")", 300), "=chunk")))
      :eq("chunk:1: main function has more than 200 syntax levels");
    expect(select(2, load("x = 1 + " .. nested("(", "1", ")", 198), "=chunk")))
      :eq("chunk:1: main function has more than 200 syntax levels");
    expect(type(load("x = 1 + " .. nested("(", "1", ")", 197), "=chunk"))):eq("function");
    expect(select(2, load(nested("if x then ", "", "end ", 200), "=chunk")))
      :eq("chunk:1: main function has more than 200 syntax levels");
    expect(type(load(nested("if x then ", "", "end ", 199), "=chunk"))):eq("function");
    expect(select(2, load("x = 1" .. (" .. 1"):rep(199), "=chunk")))
      :eq("chunk:1: main function has more than 200 syntax levels");
    expect(type(load("x = 1" .. (" .. 1"):rep(198), "=chunk"))):eq("function");
    expect(type(load("x = 1" .. (" + 1"):rep(300), "=chunk"))):eq("function");
    expect(select(2, load("\n\nlocal function f()\nx = " .. ("#"):rep(300) .. "t end", "=chunk")))
      :eq("chunk:4: function at line 3 has more than 200 syntax levels");
  end);

  it("name the chunk as its short_src", function()
    expect(select(2, load("x x", "named"))):eq("[string \"named\"]:1: syntax error near 'x'");
  end);
end);

describe("argument errors", function()
  -- Cobalt 0.9.3 (CC 1.113's): a type check names no argument and says nil for a missing
  -- one; other refusals name it.
  it("of the standard library are Cobalt's", function()
    expect.error(load):eq("bad argument (function expected, got nil)");
    expect.error(load, "return 1", false):eq("bad argument (string expected, got boolean)");
    expect.error(load, "return 1", nil, nil, 1):eq("bad argument (table expected, got number)");
    expect.error(loadstring):eq("bad argument (string expected, got nil)");
    expect.error(coroutine.create):eq("bad argument (function expected, got nil)");
    expect.error(coroutine.resume, 1):eq("bad argument (thread expected, got number)");
    expect.error(coroutine.wrap):eq("bad argument (function expected, got nil)");
    expect.error(string.rep, "x"):eq("bad argument (number expected, got nil)");
    expect.error(string.rep, "x", 2, {}):eq("bad argument (string expected, got table)");
    expect.error(math.log, "a"):eq("bad argument (number expected, got string)");
    expect(math.log("1")):eq(0);
    expect.error(rawlen, 1):eq("bad argument #1 (table or string expected)");
    expect(string.rep(1, "2", 3)):eq("131");
    -- gopher-lua's own library, reworded (it said "bad argument #1 to ? (...)").
    expect.error(rawset, 1, 2, 3):eq("bad argument (table expected, got number)");
    expect.error(rawset, {}, 1):eq("bad argument #3 (value expected)");
    expect.error(getmetatable):eq("bad argument #1 (value expected)");
    expect.error(string.sub):eq("bad argument (string expected, got nil)");
    expect.error(string.sub, setmetatable({}, { __name = "thing" })):eq("bad argument (string expected, got thing)");
    expect.error(math.floor, "x"):eq("bad argument (number expected, got string)");
    expect.error(unpack, 1):eq("attempt to get length of a number value"); -- Cobalt reads #v first
    expect.error(next, 1):eq("bad argument (table expected, got number)");
    expect.error(bit32.band, "x"):eq("bad argument (number expected, got string)");
    expect.error(table.sort, 1):eq("bad argument (table expected, got number)");
    expect.error(table.sort, {}, 1):eq("bad argument (function expected, got number)");
    expect.error(table.foreach, 1):eq("bad argument (table expected, got number)");
    expect.error(math.max):eq("bad argument (number expected, got nil)");
    expect.error(string.gsub, "a", "a", true):eq("bad argument: string/function/table expected");
    expect({ string.gsub("b", "a", true) }):same({ "b", 0 });
  end);

  it("refuse what Cobalt refuses", function()
    expect.error(setmetatable, 1, {}):eq("bad argument (table expected, got number)");
    expect(getmetatable(1)):eq(nil);
    expect.error(setmetatable, "s", {}):eq("bad argument (table expected, got string)");
    expect.error(setmetatable, {}):eq("bad argument #2 (value expected)");
    expect.error(setmetatable, {}, 1):eq("bad argument (nil or table expected, got number)");
    expect.error(setmetatable, setmetatable({}, { __metatable = 1 }), {}):eq("cannot change a protected metatable");
    expect.error(string.char, 256):eq("bad argument #1 (invalid value)");
    expect.error(string.char, 65, -1):eq("bad argument #2 (invalid value)");
    expect(string.char("65", 66.7)):eq("AB");
    expect.error(table.insert, {}, 1, 2, 3):eq('wrong number of arguments to "insert"');
    expect.error(table.insert, {}):eq('wrong number of arguments to "insert"');
    local t = { "b" };
    table.insert(t, "1", "a");
    expect(t):same({ "a", "b" });
    expect.error(math.random, 0):eq("bad argument #1 (interval is empty)");
    expect.error(math.random, 2, 1):eq("bad argument #2 (interval is empty)");
    expect.error(math.random, 1, 2, 3):eq("wrong number of arguments");
    expect(math.random(3, 3)):eq(3);
    expect.error(pcall):eq("bad argument #1 (value expected)");
    expect.error(xpcall, print):eq("bad argument #2 (value expected)");
    expect({ xpcall(error, nil) }):same({ false, "error in error handling" });
    expect.error(getfenv, "x"):eq("bad argument (number expected, got string)");
    expect.error(getfenv, -1):eq("bad argument #1 (level must be non-negative)");
    expect.error(getfenv, 1000):eq("bad argument #1 (invalid level)");
    expect(getfenv(0)):eq(_G);
    expect(getfenv(rawset)):eq(_G);
  end);

  -- Cobalt's tostring returns what __tostring returns (its first result), unchecked, where
  -- string.format's %s wants a string or a number.
  it("tostring returns __tostring's first result as it is, as Cobalt's", function()
    local function with(...)
      local results = table.pack(...);
      return setmetatable({}, { __tostring = function() return table.unpack(results, 1, results.n); end });
    end
    local t = {};
    expect(tostring(with(42))):eq(42);
    expect(tostring(with(t))):eq(t);
    expect(select("#", tostring(with("a", "b")))):eq(1);
    expect(select("#", tostring(with()))):eq(1);
    -- called by Go (as an __index) too
    expect(setmetatable({}, { __tostring = function() return t; end, __index = tostring }).key):eq(t);
    expect(("%s"):format(with(1.5))):eq("1.5");
    expect.error(string.format, "%s", with(t)):eq("'__tostring' must return a string");
  end);

  -- Cobalt's tostring and %s call any __tostring as a call does (Dispatch.call): a table
  -- with __call too, and one that cannot be called fails as a call, at the caller's line.
  it("tostring and %s call a __tostring that is a table with __call", function()
    local seen = {};
    local handler = setmetatable({}, { __call = function(self, value)
      seen[#seen + 1] = value;
      return "called " .. coroutine.yield("waiting");
    end });
    local value = setmetatable({}, { __tostring = handler });
    local co = coroutine.create(function() return tostring(value), ("[%s]"):format(value); end);
    expect({ coroutine.resume(co) }):same({ true, "waiting" });
    expect({ coroutine.resume(co, "a") }):same({ true, "waiting" });
    expect({ coroutine.resume(co, "b") }):same({ true, "called a", "[called b]" });
    expect(seen):same({ value, value });
    -- called by Go (as an __index) too
    local plain = setmetatable({}, { __call = function() return "plain"; end });
    expect(setmetatable({}, { __tostring = plain, __index = tostring }).key):eq("plain");

    local broken = setmetatable({}, { __tostring = "text" });
    local line = debug.getinfo(1, "l").currentline;
    local _, err = pcall(function() return tostring(broken); end);
    expect(err):eq(("%s:%d: attempt to call a string value"):format(debug.getinfo(1, "S").short_src, line + 1));
    expect.error(string.format, "%s", broken):eq("attempt to call a string value");
  end);

  -- Cobalt's load reads what its reader returns as Lua's lua_isstring does, a number as its
  -- text, and calls the reader protected: its error is load's nil, err (BaseLib.Load).
  it("load reads a number its reader returns as text, and returns its error", function()
    local function reader(...)
      local pieces, i = table.pack(...), 0;
      return function() i = i + 1; return pieces[i]; end;
    end
    expect({ load(reader("return ", 0.5, ", ", 12))() }):same({ 0.5, 12 });
    local tbl = {};
    expect({ load(function() error(tbl); end) }):same({ nil, tbl });
    local line = debug.getinfo(1, "l").currentline;
    expect({ load(function() error("oh no"); end) })
      :same({ nil, ("%s:%d: oh no"):format(debug.getinfo(1, "S").short_src, line + 1) });
    expect({ load(reader("return 1", {})) }):same({ nil, "reader function must return a string" });
    expect(select("#", load(42))):eq(2);
    -- called by Go (a Go __index of functions) too
    local meta = debug.getmetatable(reader);
    debug.setmetatable(reader, { __index = load });
    local ok, chunk, failed = pcall(function()
      return reader("return ", 7).name, (function() error(tbl); end).name;
    end);
    debug.setmetatable(reader, meta);
    expect(ok):eq(true);
    expect(chunk()):eq(7);
    expect(failed):eq(nil);
  end);

  -- Cobalt's getfenv reads a function's _ENV upvalue (LegacyEnv.getEnv), which a Lua 5.2
  -- function has when it or a function inside it uses a global, and a chunk always has;
  -- without one it answers the globals.
  it("getfenv of a function that uses no globals is the globals, as Cobalt's", function()
    local env = setmetatable({}, { __index = _G });
    local chunk = load([[
      local function pure(x) return x + 1; end
      local function global() return print; end
      local function outer() return function() undefined = 1; end; end
      local function level() local up = pure; return pure, up; end
      return pure, global, outer, level;
    ]], "=env", "t", env);
    local pure, global, outer, level = chunk();
    expect(getfenv(chunk)):eq(env);
    expect(getfenv(global)):eq(env);
    expect(getfenv(outer)):eq(env);
    expect(getfenv(pure)):eq(_G);
    expect(getfenv(level)):eq(_G);
    expect(getfenv(load("return 1", "=empty", "t", env))):eq(env);
    local getfenv = getfenv;
    local function here() return getfenv(1); end
    expect(here()):eq(_G);
  end);

  -- Cobalt 0.9.3's BaseLib.setfenv and getfenvobj, as its compare/errors/baselibargs.out.
  it("setfenv refuses as Cobalt does", function()
    local env = {};
    expect.error(setfenv, -1, env):eq("bad argument #1 (level must be non-negative)");
    expect.error(setfenv, "-2", env):eq("bad argument #1 (level must be non-negative)");
    expect.error(setfenv, 1000, env):eq("bad argument #1 (invalid level)");
    expect.error(setfenv, "1000", env):eq("bad argument #1 (invalid level)");
    expect.error(setfenv, rawset, env):eq("'setfenv' cannot change environment of given object");
    expect.error(setfenv, 0, env):eq("'setfenv' cannot change environment of given object");
    expect.error(setfenv, {}, env):eq("bad argument (number expected, got table)");
    expect.error(setfenv, nil):eq("bad argument (table expected, got nil)");
    expect.error(setfenv, rawset, "x"):eq("bad argument (table expected, got string)");
    local function f() return marker; end
    expect(setfenv(f, { marker = 1 })):eq(f);
    expect(f()):eq(1);
    local function g()
      expect(setfenv(1, { marker = 2, expect = expect })):eq(g);
      return marker;
    end
    expect(g()):eq(2);
    expect(getfenv(g).marker):eq(2);
    local line = debug.getinfo(1, "l").currentline;
    expect({ pcall(setfenv, rawset, env) })
      :same({ false, debug.getinfo(1, "S").short_src .. ":" .. (line + 1) .. ": 'setfenv' cannot change environment of given object" });
    expect.error(select, "x"):eq("bad argument (number expected, got string)");
    expect.error(select, 0):eq("bad argument #1 (index out of range)");
    expect.error(select, -3, 1, 2):eq("bad argument #1 (index out of range)");
    expect({ select("2", "a", "b", "c") }):same({ "b", "c" });
    expect({ select(-1, "a", "b") }):same({ "b" });
    expect({ select(5, "a") }):same({});
    expect(select("#", 1, nil)):eq(2);
  end);

  -- Cobalt's checkInteger is Java's (int) (long) d: an integer argument past 32 bits wraps.
  it("take an integer as a 32-bit int, as Cobalt's checkInteger does", function()
    expect(string.rep("x", 2 ^ 32 + 1)):eq("x");
    expect(string.rep("x", 2 ^ 31)):eq("");
    expect(string.rep("x", 1e300)):eq("");
    expect(string.rep("x", "4294967298")):eq("xx");
    expect(string.sub("hello", 2 ^ 32 + 2)):eq("ello");
    expect(string.char(2 ^ 32 + 65)):eq("A");
    expect(select(2 ^ 32 + 2, "a", "b")):eq("b");
    expect(table.concat({ "a", "b", "c" }, ",", 2 ^ 32 + 1, 2 ^ 32 + 2)):eq("a,b");
    expect.error(string.rep, "xx", 2 ^ 30):eq("resulting string too large");
    expect.error(string.rep, "x", 2 ^ 30 + 1, "y"):eq("resulting string too large");
  end);

  -- Cobalt's checkInteger and checkDouble read a string as tonumber does and truncate
  -- where an integer is wanted (Cobalt's compare/errors/*libargs.out).
  it("take a string holding a number for a number, as Cobalt does", function()
    expect(string.rep("ab", "2")):eq("abab");
    expect(string.rep("ab", "2.7")):eq("abab");
    expect(string.rep("ab", "0x2")):eq("abab");
    expect(string.sub("abcdef", "2", " 3 ")):eq("bc");
    expect({ string.byte("abc", "2", "3") }):same({ 98, 99 });
    expect(table.concat({ 1, 2, 3, 4 }, "-", "2", "3.9")):eq("2-3");
    local t = { 1, 2, 3 };
    expect(table.remove(t, "1")):eq(1);
    expect(math.ldexp(1, "3")):eq(8);
    expect(math.fmod("7", "4")):eq(3);
    expect(bit32.band("0xff", "12")):eq(12);
    expect(("%d %c"):format("42", "65")):eq("42 A");
    expect.error(string.rep, "ab", "two"):eq("bad argument (number expected, got string)");
    expect.error(string.sub, "ab", "1_0"):eq("bad argument (number expected, got string)");
    expect.error(string.rep, "ab", "0b1"):eq("bad argument (number expected, got string)");
  end);

  -- Run on Cobalt 0.9.4: arithmetic reads a string operand as tonumber does.
  it("arithmetic reads a string as Cobalt's tonumber, not in octal", function()
    expect("010" + 0):eq(10);
    expect(-"010"):eq(-10);
    expect(" 0x10 " * 1):eq(16);
    expect("1e500" + 0):eq(math.huge);
    local function sum(a, b) return a + b; end
    for _, text in ipairs({ "inf", "nan", "1_0", "0b1", "0x", "Infinity" }) do
      local ok, err = pcall(sum, text, 0);
      expect(ok):eq(false);
      expect(err):str_match("attempt to perform arithmetic on local 'a' %(a string value%)$");
    end
  end);

  -- Cobalt 0.9.3's TableLib.concat: #t through __len, then sep, i and j; each element read
  -- through __index must be a string or a number, whatever i and j are.
  it("table.concat as Cobalt's", function()
    expect(table.concat({ 1, 2.5, "x", 2 ^ 53 }, 0)):eq("102.50x09007199254740992");
    expect(table.concat({ "a", "b" }, ", ", 2, 1)):eq("");
    expect.error(table.concat, { {} }):eq("bad argument (string expected, got table)");
    expect.error(table.concat, { "a", setmetatable({}, { __name = "thing" }) }):eq("bad argument (string expected, got thing)");
    expect.error(table.concat, { "a", "b" }, ",", 1, 3):eq("bad argument (string expected, got nil)");
    expect.error(table.concat, { "a", "b" }, ",", 0):eq("bad argument (string expected, got nil)");
    expect(table.concat({ "a", "b" }, ",", 3)):eq("");
    expect.error(table.concat, { "a" }, {}):eq("bad argument (string expected, got table)");
    expect.error(table.concat, { "a" }, ",", true):eq("bad argument (number expected, got boolean)");
    expect.error(table.concat, { "a" }, ",", 1, "x"):eq("bad argument (number expected, got string)");
    expect.error(table.concat, "abc"):eq("bad argument (table expected, got string)");
    expect.error(table.concat):eq("bad argument (table expected, got nil)");
    local proxy = setmetatable({}, {
      __len = function() return 3 end,
      __index = function(_, i) return "v" .. i end,
    });
    expect(table.concat(proxy, "-")):eq("v1-v2-v3");
    expect.error(table.concat, setmetatable({}, { __len = function() return 1.5 end })):eq("object length is not an integer");
    expect.error(table.concat, setmetatable({}, { __len = function() return {} end }), {}):eq("object length is not an integer");
  end);

  it("next refuses a key the table never held, and rawset returns its table, as Cobalt's", function()
    local t = { 1, a = 2 };
    local line = debug.getinfo(1, "l").currentline + 1;
    local ok, err = pcall(function() return (next(t, "b")) end);
    expect({ ok, err }):same({ false, debug.getinfo(1, "S").short_src .. ":" .. line .. ": invalid key to 'next'" });
    expect.error(next, t, 2):eq("invalid key to 'next'");
    expect(rawset(t, "c", 3)):eq(t);
  end);

  -- Cobalt's TableLib.unpack: i first, then #v (or j), then v[i] to v[j], a proxy's
  -- __len and __index followed.
  it("unpack reads any value as Cobalt's", function()
    expect(table.unpack):eq(unpack);
    expect({ unpack({ 1, 2, 3 }, "2") }):same({ 2, 3 });
    expect(select("#", unpack("abc"))):eq(3);
    expect(select("#", unpack(nil, 2, 1))):eq(0);
    local proxy = setmetatable({}, { __len = function() return 2 end, __index = function(_, i) return i * 10 end });
    expect({ unpack(proxy) }):same({ 10, 20 });
    expect.error(unpack, nil):eq("attempt to get length of a nil value");
    expect.error(unpack, 1, 1, 2):eq("attempt to index a number value");
    expect.error(unpack, nil, "x"):eq("bad argument (number expected, got string)");
    expect.error(unpack, {}, 0, 2 ^ 31 - 1):eq("too many results to unpack");
    expect(select("#", unpack({}, 1, 2 ^ 31))):eq(0); -- 2^31 wraps to -2^31 (checkInteger)
  end);

  -- Cobalt 0.9.3's TableLib.insert and remove, off their fast path (a table with a
  -- metatable): #t through __len, elements through __index and __newindex.
  it("table.insert and table.remove work through a proxy's metamethods", function()
    local store, writes = { "a", "b" }, {};
    local proxy = setmetatable({}, {
      __len = function() return #store end,
      __index = function(_, k) return store[k] end,
      __newindex = function(_, k, v) writes[#writes + 1] = k; store[k] = v end,
    });
    table.insert(proxy, "c");
    table.insert(proxy, 1, "z");
    expect(store):same({ "z", "a", "b", "c" });
    expect(writes):same({ 3, 4, 3, 2, 1 });
    expect(table.remove(proxy)):eq("c");
    expect(table.remove(proxy, 1)):eq("z");
    expect(store):same({ "a", "b" });
    expect(select("#", table.remove(proxy, 10))):eq(0);
    expect(rawget(proxy, 1)):eq(nil);
  end);

  -- Cobalt's table.remove takes t[#t], wherever the table keeps it: gopher-lua's took the
  -- last slot of its array part, nil after t[#t] = nil, and removed nothing.
  it("table.remove takes the element at #t, and moves the others down", function()
    local t = { 1, 2, 3 };
    t[3] = nil;
    expect(table.remove(t)):eq(2);
    expect(#t):eq(1);
    expect(t):same({ 1 });
    local u = { "a", "b", "c" };
    expect(table.remove(u, 1)):eq("a");
    expect(u):same({ "b", "c" });
    expect(select("#", table.remove(u, 5))):eq(0);
    expect(table.remove({})):eq(nil);
  end);

  it("string.dump exists and dumps nothing, as in CC", function()
    expect.error(string.dump, print):eq("unable to dump given function");
    expect.error(string.dump, function() end):eq("unable to dump given function");
    expect.error(string.dump, 1):eq("bad argument (function expected, got number)");
  end);

  it("string.byte answers one byte by default, as Lua 5.2's", function()
    expect({ string.byte("abc") }):same({ 97 });
    expect({ ("abc"):byte(-1) }):same({ 99 });
    expect({ string.byte("abc", 2, nil) }):same({ 98 });
    expect({ string.byte("abc", 1, -1) }):same({ 97, 98, 99 });
    expect({ string.byte("abc", 0) }):same({});
    expect({ string.byte("abc", 4) }):same({});
    expect({ string.byte("abc", -10, 2) }):same({ 97, 98 });
    expect({ string.byte("") }):same({});
  end);

  -- Cobalt 0.9.4's StringMatch.str_find_aux clamps init to the string's length, as Lua 5.1
  -- does, where Lua 5.2 answers nil past the end.
  it("string.find and string.match start past the end at the end, as Cobalt's", function()
    expect({ (""):find("", 10) }):same({ 1, 0 });
    expect({ ("abc"):find("", 10) }):same({ 4, 3 });
    expect({ ("abc"):find("%a*", 10) }):same({ 4, 3 });
    expect({ ("abc"):find("", 4, true) }):same({ 4, 3 });
    expect({ ("abc"):find("c", 10) }):same({ nil });
    expect({ ("abc"):match("()", 10) }):same({ 4 });
    expect({ ("abc"):match("", 10) }):same({ "" });
    expect({ ("abc"):find("", -10) }):same({ 1, 0 });
  end);

  it("places a function's error where CC's Cobalt does: under pcall at pcall's caller, in a coroutine of its own nowhere", function()
    local here = debug.getinfo(1, "S").short_src;
    local line = debug.getinfo(1, "l").currentline + 1;
    local results = { { pcall(fs.list, "/nope") }, { pcall(string.rep) }, { pcall(error, "x", 2) } };
    expect(results):same({
      { false, here .. ":" .. line .. ": /nope: No such file" },
      { false, here .. ":" .. line .. ": bad argument (string expected, got nil)" },
      { false, here .. ":" .. line .. ": x" },
    });
    expect({ pcall(coroutine.wrap(rawset), 1, 2, 3) }):same({ false, "bad argument (table expected, got number)" });
    expect({ pcall(coroutine.wrap(fs.list), "/nope") }):same({ false, "/nope: No such file" });
    expect({ pcall(error, "x", 1) }):same({ false, "x" }); -- level 1 is pcall: C
  end);

  it("repeats math.random's numbers after math.randomseed with the same seed, as Cobalt does", function()
    local function draws() return { math.random(), math.random(1, 1000000), math.random(7) }; end
    expect({ math.randomseed(42, 7) }):same({ 42, 7 });
    local first = draws();
    math.randomseed(42, 7);
    expect(draws()):same(first);
    expect({ math.randomseed(42) }):same({ 42, 0 });
    local parts = { math.randomseed() }; -- reseeded at random: two parts, given back
    expect(#parts):eq(2);
    math.randomseed(parts[1], parts[2]);
    local again = draws();
    math.randomseed(parts[1], parts[2]);
    expect(draws()):same(again);
  end);

  it("of the os API say 'nil', and take no number for a string", function()
    expect.error(os.queueEvent):eq("bad argument #1 (string expected, got nil)");
    expect.error(os.epoch, 1):eq("bad argument #1 (string expected, got number)");
    expect.error(os.setComputerLabel, false):eq("bad argument #1 (string expected, got boolean)");
  end);
end);

describe("tostring", function()
  -- Cobalt shows a table, function or coroutine as its type and a hexadecimal hash, no 0x.
  it("tostring of a table, function or coroutine is its type and hex digits, as Cobalt's", function()
    expect(tostring({})):str_match("^table: %x+$");
    expect(tostring(print)):str_match("^function: %x+$");
    expect(tostring(function() end)):str_match("^function: %x+$");
    expect(tostring(coroutine.create(print))):str_match("^thread: %x+$");
    expect(("%s"):format({})):str_match("^table: %x+$");
    expect(tostring({}) ~= tostring({})):eq(true);
  end);
end);

-- Cobalt has no negative zero: LuaDouble.valueOf makes -0.0 the integer 0. Every
-- expression here is inf there (run on Cobalt 0.9.4, built from its source).
describe("negative zero", function()
  it("is never made, as in Cobalt", function()
    local z = 0;
    local function inverse(x) return 1 / x; end
    for _, x in ipairs({ -z, z * -1, -1 % 1, math.ceil(-0.5), math.fmod(-1, 1), (math.modf(-0.5)),
      tonumber("-0"), tonumber("-0x0"), string.unpack("<d", string.pack("<d", -z)), -1e-300 * 1e-300 }) do
      expect(inverse(x)):eq(math.huge);
    end
    expect(math.atan2(-z, -1)):eq(math.pi);
    expect(string.format("%f %g %.1e %a", -z, z * -1, -z, -z)):eq("0.000000 0 0.0e+00 0x0p+0");
    expect(inverse(textutils.unserialiseJSON("-0"))):eq(math.huge);
  end);
end);

describe("tonumber", function()
  it("reads decimals as Cobalt does", function()
    expect(tonumber("  12\r\n")):eq(12);
    expect(tonumber("0010")):eq(10);
    expect(tonumber("1e+5")):eq(100000);
    expect(tonumber("1E2")):eq(100);
    expect(tonumber("1.")):eq(1);
    expect(tonumber(".5")):eq(0.5);
    expect(tonumber("1e400")):eq(math.huge);
    expect(tonumber("--1")):eq(1);
    for _, text in ipairs({ "", "-", ".", "1e", "1e-", "1e5.5", "- 1", "1 2", "5\0", "inf", "nan", "1_0", "0b1" }) do
      expect(tonumber(text)):eq(nil);
    end
  end);

  it("reads hexadecimal with fractions and binary exponents", function()
    expect(tonumber("0X1f")):eq(31);
    expect(tonumber("  -0x10  ")):eq(-16);
    expect(tonumber("0x.8")):eq(0.5);
    expect(tonumber("0x1.8")):eq(1.5);
    expect(tonumber("0x1p4")):eq(16);
    expect(tonumber("0x1P-1")):eq(0.5);
    for _, text in ipairs({ "0x", "0x.", "0x-1", "0x1p", "0x1.2.3" }) do
      expect(tonumber(text)):eq(nil);
    end
  end);

  it("wraps whole numbers past 64 bits, as CC 1.113's Cobalt does", function()
    expect(tonumber("0xffffffffffffffff")):eq(-1);
    expect(tonumber("0x10000000000000000")):eq(0);
    expect(tonumber("99999999999999999999")):eq(7766279631452241919);
  end);

  it("takes a base, turning a number into its text first", function()
    expect(tonumber("ff", 16)):eq(255);
    expect(tonumber("0xff", 16)):eq(255);
    expect(tonumber("1.8", 16)):eq(1.5);
    expect(tonumber("zz", 36)):eq(1295);
    expect(tonumber("101", 2)):eq(5);
    expect(tonumber("12", 2)):eq(nil);
    expect(tonumber(10, 16)):eq(16);
    expect(tonumber(1.25, 2)):eq(nil);
    expect(tonumber(1.25)):eq(1.25);
    expect(tonumber(true)):eq(nil);
  end);

  it("words its argument errors as Cobalt does", function()
    expect.error(tonumber):eq("bad argument #1 (value expected)");
    expect.error(tonumber, "1", 1):eq("bad argument #2 (base out of range)");
    expect.error(tonumber, "1", 37):eq("bad argument #2 (base out of range)");
    expect.error(tonumber, true, 16):eq("bad argument (string expected, got boolean)");
    expect.error(tonumber, "1", {}):eq("bad argument (number expected, got table)");
  end);
end);

-- Cobalt 0.9.3's BaseLib: pairs and ipairs take any value and return their iterator; the
-- loop fails at its first step when the iterator cannot walk the value, at the line of the
-- expression after `in`.
-- Cobalt's tables are Lua 5.1's: an array part, then nodes placed by each key's hash and the
-- table's history; pairs walks them in that order, and # finds the border Cobalt's search
-- finds. Each answer here is Cobalt 0.9.4's (CC 1.113.1's), run from its source
-- (third_party/gopher-lua/cobaltorder.go).
describe("a table's order and length, as CC's", function()
  local function keys(t)
    local out = {};
    for k, v in pairs(t) do out[#out + 1] = tostring(k) .. "=" .. tostring(v); end
    return table.concat(out, " ");
  end

  it("walks a table's keys in Cobalt's order", function()
    expect(keys({ b = 1, a = 2, c = 3, [10] = 4, "x", "y", long_name = 5, [2.5] = 6 }))
      :eq("1=x 2=y a=2 c=3 b=1 long_name=5 2.5=6 10=4");
    local t = {};
    for i, k in ipairs({ "id", "label", "x", "y", "z", "fuel" }) do t[k] = i; end
    expect(keys(t)):eq("y=4 x=3 label=2 id=1 fuel=6 z=5");
    t.label, t.name = nil, 7; -- name takes the node label's removal left
    expect(keys(t)):eq("y=4 x=3 name=7 id=1 fuel=6 z=5");
    t = {};
    for i = 10, 1, -1 do t[i] = i; end
    t[0], t[-1], t[2147483648] = 0, -1, 2147483648;
    expect(keys(t)):eq("1=1 2=2 3=3 4=4 5=5 6=6 7=7 8=8 9=9 10=10 0=0 -1=-1 2147483648=2147483648");
  end);

  it("serialises a table's keys in that order", function()
    expect(textutils.serialize({ b = 1, a = 2, c = 3 })):eq("{\n  a = 2,\n  c = 3,\n  b = 1,\n}");
    expect(textutils.serializeJSON({ b = 1, a = 2, c = 3 })):eq('{"a":2,"c":3,"b":1}');
  end);

  it("keeps strings' metatable apart from the string library, as Cobalt's", function()
    expect(rawget(string, "__index")):eq(nil);
    expect(getmetatable("").__index):eq(string);
    expect(getmetatable("") == string):eq(false);
    for k in pairs(string) do expect(k):ne("__index"); end
  end);

  -- Cobalt 0.9.3 (CC 1.113.1's) makes each of its libraries with new LuaTable(0, n) and sets
  -- its functions in the order its source lists them, then the rest (string.gfind,
  -- math.pi, huge, mod, utf8.charpattern); those orders were read off Cobalt run from its
  -- source. CC's bios adds nothing to them.
  it("walks Cobalt's libraries in Cobalt's order", function()
    local function keys(lib)
      local out = {};
      for k in pairs(lib) do out[#out + 1] = k; end
      return table.concat(out, " ");
    end
    expect(keys(string)):eq("match gmatch upper gsub format lower sub pack gfind find char dump packsize reverse len unpack rep byte");
    expect(keys(table)):eq("pack move insert getn foreachi maxn remove concat unpack foreach sort");
    expect(keys(math)):eq("log tanh exp huge ldexp pi max randomseed modf deg tan cos log10 random atan2 frexp ceil floor atan abs sqrt sinh asin min mod fmod cosh pow acos sin rad");
    expect(keys(coroutine)):eq("running yield resume status wrap create isyieldable");
    expect(keys(bit32)):eq("band extract bor bnot bxor rshift rrotate lshift replace lrotate btest arshift");
    expect(keys(utf8)):eq("char codes codepoint charpattern offset len");
  end);

  -- CC's textutils is the ROM's textutils.lua, which os.loadAPI runs in an empty environment
  -- and copies into an empty table in the order the environment walks its globals
  -- (CC 1.113.1's bios and textutils.lua run on Cobalt).
  it("walks textutils in the order CC's os.loadAPI leaves it", function()
    local out = {};
    for k in pairs(textutils) do out[#out + 1] = k; end
    expect(table.concat(out, " ")):eq("json_null complete slowWrite unserialiseJSON slowPrint pagedTabulate tabulate unserialize empty_json_array urlEncode serialiseJSON unserializeJSON formatTime pagedPrint serialise unserialise serializeJSON serialize");
  end);

  -- fakecraft's ROM APIs are its own files: each sets its names as CC 1.113.1's file does
  -- (colours copies colors, disk defines in CC's order, keys fills its table of names in
  -- code order), so os.loadAPI leaves them walking as CC's (CC's files run on Cobalt).
  it("walks the ROM's Lua APIs in CC's order", function()
    local function keys_of(api)
      local out = {};
      for k in pairs(api) do out[#out + 1] = k; end
      return table.concat(out, " ");
    end
    expect(keys_of(colours)):eq("toBlit cyan packRGB purple fromBlit brown lightGrey orange red magenta lime white rgb8 grey green pink combine subtract black unpackRGB test yellow blue lightBlue");
    expect(keys_of(disk)):eq("getID isPresent hasData getMountPath stopAudio getLabel hasAudio setLabel getAudioTitle eject playAudio");
    expect(keys_of(_G.keys)):eq("a c b e d g f numPad3 f10 period j m l o n minus f1 s return slash seven eight v f22 x numPad6 z f18 rightBracket f9 left numPadSubtract f3 f20 numPadEqual pageDown leftCtrl rightCtrl numPad2 zero delete comma six leftAlt numPad8 getName numLock semicolon menu insert f23 space f16 down pause f11 f5 printScreen rightShift f19 h f15 nine f2 scrollLock two leftBracket home scollLock capsLock f14 up rightAlt one equals numPadAdd pageUp f7 apostrophe numPadEnter f8 y w u four t p tab q r f21 numPad1 right numPadDecimal f25 leftShift backspace grave end three numPadMultiply f24 k numPad7 numPad4 f13 numPad0 f17 i leftSuper f6 enter numPadDivide numPad5 f12 backslash numPad9 five f4");
  end);

  it("finds Cobalt's border of a table with holes, where table.insert and remove work", function()
    local t = { 1, 2, 3, 4, 5, 6, 7, 8 };
    t[2], t[4], t[8] = nil, nil, nil;
    expect(#t):eq(1);
    table.insert(t, "x");
    table.insert(t, 1, "y");
    expect(#t):eq(7);
    expect(keys(t)):eq("1=y 2=1 3=x 4=3 5=5 6=6 7=7");
    expect(table.remove(t)):eq(7);
    expect(keys(t)):eq("1=y 2=1 3=x 4=3 5=5 6=6");
    -- insert moves the elements up to #t only: t[5] stays where it is
    t = { "a", "b" };
    t[5] = "e";
    table.insert(t, 1, "z");
    expect(#t):eq(3);
    expect(keys(t)):eq("1=z 2=a 3=b 5=e");
  end);
end);

describe("pairs and ipairs", function()
  local here = debug.getinfo(1, "S").short_src;
  local function loopError(f)
    local ok, err = pcall(f);
    expect(ok):eq(false);
    return err;
  end

  it("refuse no value, and take any other", function()
    expect.error(pairs):eq("bad argument #1 (value expected)");
    expect.error(ipairs):eq("bad argument #1 (value expected)");
    expect({ pairs(1) }):same({ next, 1, nil });
    expect(select("#", pairs(nil))):eq(3);
    local iter, value, control = ipairs("abc");
    expect(type(iter)):eq("function");
    expect({ value, control }):same({ "abc", 0 });
  end);

  it("fail in the loop, at the line of the loop's expression list", function()
    local line = debug.getinfo(1, "l").currentline;
    expect(loopError(function() for _ in pairs(nil) do end end))
      :eq(here .. ":" .. (line + 1) .. ": bad argument (table expected, got nil)");
    expect(loopError(function() for _ in pairs(1) do end end))
      :eq(here .. ":" .. (line + 3) .. ": bad argument (table expected, got number)");
    expect(loopError(function() for _ in pairs("abc") do end end))
      :eq(here .. ":" .. (line + 5) .. ": bad argument (table expected, got string)");
    expect(loopError(function() for _ in ipairs(nil) do end end))
      :eq(here .. ":" .. (line + 7) .. ": attempt to index a nil value");
    expect(loopError(function() for _ in ipairs(1) do end end))
      :eq(here .. ":" .. (line + 9) .. ": attempt to index a number value");
    expect(loopError(function()
      for _,
        _ in
        pairs(true) do
      end
    end)):eq(here .. ":" .. (line + 14) .. ": bad argument (table expected, got boolean)");
    local walk = pairs; -- not the global: fakecraft compiles this loop with a plain call
    expect(loopError(function()
      for _ in
        walk(false) do
      end
    end)):eq(here .. ":" .. (line + 20) .. ": bad argument (table expected, got boolean)");
    local iter = ipairs({});
    expect.error(iter, {}, "x"):eq("bad argument (number expected, got string)");
  end);

  it("ipairs walks a string's nothing, and reads through __index", function()
    local n = 0;
    for _ in ipairs("abc") do n = n + 1 end
    expect(n):eq(0);
    local seen = {};
    local proxy = setmetatable({ "a" }, { __index = function(_, i) if i < 4 then return "v" .. i end end });
    for i, v in ipairs(proxy) do seen[i] = v end
    expect(seen):same({ "a", "v2", "v3" });
  end);

  it("pairs calls __pairs and returns all it returns", function()
    local t = setmetatable({}, {
      __pairs = function(self)
        return function(_, k) if k == nil then return "only", self end end, "state", nil, "extra";
      end,
    });
    local seen = {};
    for k, v in pairs(t) do seen[k] = v end
    expect(seen):same({ only = t });
    local results = { pairs(t) };
    expect({ results[2], results[3], results[4] }):same({ "state", nil, "extra" });
  end);

  it("lets the iterator __pairs gives yield, as Cobalt's loop does", function()
    local t = setmetatable({}, {
      __pairs = function()
        return function(_, k)
          k = (k or 0) + 1;
          if coroutine.yield(k) then return k end
        end;
      end,
    });
    local co = coroutine.create(function()
      local seen = 0;
      for k in pairs(t) do seen = seen + k end
      return seen;
    end);
    expect({ coroutine.resume(co) }):same({ true, 1 });
    expect({ coroutine.resume(co, true) }):same({ true, 2 });
    expect({ coroutine.resume(co, true) }):same({ true, 3 });
    expect({ coroutine.resume(co, false) }):same({ true, 3 });
    expect(coroutine.status(co)):eq("dead");
  end);

  -- Cobalt 0.9.3's pairs and inext call __pairs and __index as resumable calls
  -- (SuspendedAction), so a lazily-loaded table may wait for an event in either.
  it("lets __pairs and an __index ipairs reads yield", function()
    local lazy = setmetatable({}, {
      __pairs = function(self)
        local loaded = coroutine.yield("load");
        return next, loaded, nil;
      end,
      __index = function(_, i) return coroutine.yield(i) end,
    });
    local co = coroutine.create(function()
      local keys = 0;
      for _ in pairs(lazy) do keys = keys + 1 end
      local seen = {};
      for i, v in ipairs(lazy) do seen[i] = v end
      return keys, seen;
    end);
    expect({ coroutine.resume(co) }):same({ true, "load" });
    expect({ coroutine.resume(co, { a = 1, b = 2 }) }):same({ true, 1 });
    expect({ coroutine.resume(co, "one") }):same({ true, 2 });
    expect({ coroutine.resume(co, nil) }):same({ true, 2, { "one" } });
    local iter = ipairs(lazy);
    expect.error(iter, lazy, "x"):eq("bad argument (number expected, got string)");
    expect.error(iter, 1, 0):eq("attempt to index a number value");
  end);

  it("lets a coroutine's body end by yielding in a tail call", function()
    local co = coroutine.create(function(x) return coroutine.yield(x) end);
    expect({ coroutine.resume(co, 1) }):same({ true, 1 });
    expect({ coroutine.resume(co, 2, 3) }):same({ true, 2, 3 });
    expect(coroutine.status(co)):eq("dead");
  end);
end);

describe("string.format's %q", function()
  it("writes every value with a literal form as Cobalt does", function()
    expect(("%q"):format("a\nb\"\0\r")):eq('"a\\\nb\\"\\000\\r"');
    expect(("%q %q %q"):format(nil, true, false)):eq("nil true false");
    expect(("%q"):format()):eq("nil");
    expect(("%q %q %q"):format(12, 2 ^ 63, -3)):eq("12 9223372036854775807 -3");
    expect(("%q %q %q"):format(1.5, 0.5, -0.1)):eq("0x1.8p+0 0x1p-1 -0x1.999999999999ap-4");
    expect(("%q %q %q"):format(0 / 0, 1 / 0, -1 / 0)):eq("(0/0) 1e9999 -1e9999");
    expect.error(string.format, "%q", {}):eq("bad argument #2 (value has no literal form)");
  end);
end);

-- The message of a runtime error, as a program prints or matches it: Cobalt's (Lua 5.2's)
-- wording, the operand named by where it was read from.
describe("runtime errors", function()
  local function message(f)
    local ok, err = pcall(f);
    expect(ok):eq(false);
    return (err:gsub("^[^:]*:%d+: ", ""));
  end

  it("name a local, a global, a field, a method or an upvalue", function()
    local up;
    expect(message(function() local x; return x.y end)):eq("attempt to index local 'x' (a nil value)");
    expect(message(function() return not_a_global_anywhere.y end))
      :eq("attempt to index global 'not_a_global_anywhere' (a nil value)");
    expect(message(function() not_a_function_anywhere() end))
      :eq("attempt to call global 'not_a_function_anywhere' (a nil value)");
    expect(message(function() string.nope() end)):eq("attempt to call field 'nope' (a nil value)");
    expect(message(function() local t = {}; t:m() end)):eq("attempt to call method 'm' (a nil value)");
    expect(message(function() return up.x end)):eq("attempt to index upvalue 'up' (a nil value)");
    expect(message(function() local a = {}; return a + 1 end))
      :eq("attempt to perform arithmetic on local 'a' (a table value)");
    expect(message(function() local n; return #n end)):eq("attempt to get length of local 'n' (a nil value)");
  end);

  -- fakecraft routes an operand of `..` that may be a number through a hidden function (so
  -- that a number reads as CC writes it); the operand is named all the same, as Cobalt names
  -- it (each case run on Cobalt 0.9.3): a __concat's result by the operand it replaced.
  it("name the operand of .. that cannot be concatenated", function()
    local up, t = nil, {};
    expect(message(function() local x; return "b" .. x end)):eq("attempt to concatenate local 'x' (a nil value)");
    expect(message(function() return "b" .. up .. "a" end)):eq("attempt to concatenate upvalue 'up' (a nil value)");
    expect(message(function() return t .. "a" end)):eq("attempt to concatenate upvalue 't' (a table value)");
    expect(message(function() return "b" .. t.x .. "a" end)):eq("attempt to concatenate field 'x' (a nil value)");
    expect(message(function() return 1 .. not_a_global_anywhere end))
      :eq("attempt to concatenate global 'not_a_global_anywhere' (a nil value)");
    expect(message(function() local x, y = "a"; return x .. y .. "c" end)):eq("attempt to concatenate local 'y' (a nil value)");
    local cc = setmetatable({}, { __concat = function() return false end });
    expect(message(function() return "b" .. cc .. "a" end)):eq("attempt to concatenate upvalue 'cc' (a boolean value)");
    expect(message(function() local u = {}; return "x" .. #u .. u end)):eq("attempt to concatenate local 'u' (a table value)");
    expect(message(function() return "x" .. tostring(nil) .. up end)):eq("attempt to concatenate upvalue 'up' (a nil value)");
  end);

  it("give the type alone when the value has no name", function()
    expect(message(function() return ({}).a.b end)):eq("attempt to index field 'a' (a nil value)");
    expect(message(function() return -{} end)):eq("attempt to perform arithmetic on a table value");
    expect(message(function() return "x" .. {} end)):eq("attempt to concatenate a table value");
    expect(message(function() return {} < {} end)):eq("attempt to compare two table values");
    expect(message(function() return 1 < "x" end)):eq("attempt to compare number with string");
    expect(message(function() return setmetatable({}, { __name = "Thing" }) + 1 end))
      :eq("attempt to perform arithmetic on a Thing value");
  end);

  -- Cobalt's OP_FORPREP: each a number or a string that reads as one, in this order.
  it("check a numeric for's initial value, limit and step as Cobalt does", function()
    local sum = 0;
    for i = "1", "3" do sum = sum + i; end
    expect(sum):eq(6);
    expect(message(function() for _ = 1, nil do end end)):eq("'for' limit must be a number");
    expect(message(function() for _ = {}, nil do end end)):eq("'for' initial value must be a number");
    expect(message(function() for _ = 1, 2, "x" do end end)):eq("'for' step must be a number");
  end);
end);

describe("string.format", function()
  it("takes integers as Cobalt does", function()
    expect(string.format("%d %i %u", 3.5, -3.5, 7)):eq("3 -3 7");
    expect(string.format("%x %X %o", 255.9, 255, 8.5)):eq("ff FF 10");
    expect.error(string.format, "%d", 0 / 0):eq("bad argument #2 (not a number in proper range)");
    expect.error(string.format, "%x", 2 ^ 64):eq("bad argument #2 (not a number in proper range)");
  end);

  it("formats a missing %s argument as nil", function()
    expect(string.format("%s|%5s", nil)):eq("nil|  nil");
  end);

  -- Read from Cobalt 0.9.3, CC 1.113.1's, built from its source.
  it("writes %g with six significant digits unless told, as C and Cobalt do", function()
    expect(string.format("%g|%G|%g|%g", 1234567, 1234567, 1 / 3, 999999.5)):eq("1.23457e+06|1.23457E+06|0.333333|1e+06");
    expect(string.format("%g|%g|%g|%.10g", 100, 1e-5, 0.0001234567, 1234567)):eq("100|1e-05|0.000123457|1234567");
    expect(string.format("[%-12g][%012g][%#g][%+g]", 1 / 3, 1234567, 999999.5, 2.5)):eq("[0.333333    ][01.23457e+06][1.00000e+06][+2.5]");
  end);

  it("writes %a and %A as Cobalt does", function()
    expect(string.format("%a|%a|%a|%a|%A", 1, 0.5, -1, 255.5, 0.1)):eq("0x1p+0|0x1p-1|-0x1p+0|0x1.ffp+7|0X1.999999999999AP-4");
    expect(string.format("%a|%a", 1e300, 0)):eq("0x1.7e43c8800759cp+996|0x0p+0");
    expect(string.format("[%+a][% a][%-10a][%10a][%010a][%#a][%.1a][%.3a]", 1, 1, 1, -1, 1, 1, 1.03, 1))
      :eq("[+0x1p+0][ 0x1p+0][0x1p+0    ][   -0x1p+0][0x00001p+0][0x1.p+0][0x1.0p+0][0x1.000p+0]");
  end);

  -- Run on Cobalt 0.9.4 (CC 1.113.1's), built from its source: a subnormal's digits lose
  -- their leading zeros there, as its DoubleToStringConverter.toHex writes them.
  it("writes %a of subnormals, rounding and -0 as Cobalt does", function()
    expect(string.format("%a|%a|%a|%A", 2 ^ -1074, 2 ^ -1023, 2 ^ -1074 * 0x123, 2 ^ -1050))
      :eq("0x0.1p-1022|0x0.8p-1022|0x0.123p-1022|0X0.1P-1022");
    expect(string.format("%.2a|%5.1a|%-12a|", 2 ^ -1074 * 0xfff, 2 ^ -1074 * 3, 2 ^ -1074))
      :eq("0x0.00p-1022|0x0.0p-1022|0x0.1p-1022 |");
    expect(string.format("%.0a|%#.0a|%.1a|%.1a|%.1a", 1.9, 1.5, 1.03125, 1.09375, 1.96875))
      :eq("0x2p+0|0x2.p+0|0x1.0p+0|0x1.2p+0|0x2.0p+0");
    expect(string.format("%a|%.14a", 1 / 3, 1 / 3)):eq("0x1.5555555555555p-2|0x1.55555555555550p-2");
    local zero = 0;
    expect(string.format("%a|%+a", zero * -1, zero * -1)):eq("0x0p+0|+0x0p+0");
  end);

  it("writes inf and nan under every float conversion as Cobalt does", function()
    expect(string.format("[%5.1f|%-6e|%+g|%05f|%E|%G|% f]", 1 / 0, -1 / 0, 1 / 0, 0 / 0, 1 / 0, 0 / 0, 1 / 0))
      :eq("[  inf|-inf  |+inf|  nan|INF|NAN| inf]");
    expect(string.format("[%a|%-+7a|%8A|%#a|%A]", 1 / 0, 1 / 0, -1 / 0, 0 / 0, 0 / 0))
      :eq("[inf|+inf   |    -INF|nan|NAN]");
  end);

  it("names an unknown conversion as Cobalt does", function()
    expect.error(string.format, "%y", 1):eq("invalid conversion '%y' to 'format'");
    expect.error(string.format, "%-5y", 1):eq("invalid conversion '%-5y' to 'format'");
    expect.error(string.format, "50%"):eq("invalid conversion '%' to 'format'");
    expect.error(string.format, "%F", 1):eq("invalid conversion '%F' to 'format'");
    expect.error(string.format, "%1.2.3f", 1):eq("invalid conversion '%1.2.' to 'format'");
  end);

  -- Cobalt 0.9.3's FormatDesc and StringFormat (its compare/errors/stringlibargs.out has
  -- the first).
  it("refuses the directives Cobalt refuses", function()
    expect.error(string.format, "%######s", "abc"):eq("invalid format (repeated flags)");
    expect.error(string.format, "%-+ #0-d", 1):eq("invalid format (repeated flags)");
    expect.error(string.format, "%100d", 1):eq("invalid format (width or precision too long)");
    expect.error(string.format, "%.100f", 1):eq("invalid format (width or precision too long)");
    expect.error(string.format, "%05s", "x"):eq("invalid conversion specification: '%05s'");
    expect.error(string.format, "%#d", 1):eq("invalid conversion specification: '%#d'");
    expect.error(string.format, "%+u", 1):eq("invalid conversion specification: '%+u'");
    expect.error(string.format, "%.2c", 65):eq("invalid conversion specification: '%.2c'");
    expect.error(string.format, "%5q", 1):eq("specifier '%q' cannot have modifiers");
    expect(string.format("%-+ #0f|%99d", 1, 2)):eq("+1.000000|" .. (" "):rep(98) .. "2");
  end);

  -- Cobalt's FormatDesc cuts a string under %s at its first zero byte, unless it has 100
  -- bytes or more and no precision (run on Cobalt 0.9.4, built from its source).
  it("cuts %s at a zero byte as Cobalt does", function()
    expect(("[%s][%5s][%-4s][%.2s]"):format("a\0b", "a\0b", "\0b", "a\0bc")):eq("[a][    a][    ][a]");
    local long = ("x"):rep(99) .. "\0y";
    expect(("%s"):format(long)):eq(long);
    expect(("%.50s"):format(long)):eq(("x"):rep(50));
    expect(("%s"):format(setmetatable({}, { __tostring = function() return "t\0u"; end }))):eq("t");
  end);

  it("pads and cuts %s and %c in bytes", function()
    expect(("[%5s][%-5s][%.1s][%5.1s][%.s]"):format("\195\169", "\195\169", "\195\169", "ab", "x"))
      :eq("[   \195\169][\195\169   ][\195][    a][]");
    expect(("[%3c][%-3c]"):format(65, 66)):eq("[  A][B  ]");
  end);
end);

-- A recursion too deep for the stack: Cobalt's DebugState allows 32768 frames to a coroutine
-- and then raises "stack overflow" at the caller's position (its test-rom's assert/debug.lua
-- and spec/base_spec.lua), an error pcall catches and xpcall's handler sees.
describe("stack overflow", function()
  local depth = 0;
  local function overflow() depth = depth + 1; return 1 + overflow(); end
  local overflowAt = ("%s:%d"):format(debug.getinfo(overflow, "S").short_src, debug.getinfo(overflow, "S").linedefined);

  it("is an error pcall catches, at the position of the call, after 32768 frames of a coroutine", function()
    depth = 0;
    local ok, err = coroutine.resume(coroutine.create(overflow));
    expect(ok):eq(false);
    expect(err):eq(overflowAt .. ": stack overflow");
    expect(depth):eq(32768);
    local caught, message = pcall(overflow);
    expect(caught):eq(false);
    expect(message):str_match(": stack overflow$");
  end);

  it("leaves room for xpcall's handler", function()
    local ok, res = xpcall(overflow, debug.traceback);
    expect(ok):eq(false);
    expect(res):str_match(": stack overflow\nstack traceback:");
    local nested, handled = xpcall(overflow, function(err)
      local function inner(e) return e:find(": stack overflow$"); end
      return { err, inner(err) };
    end);
    expect(nested):eq(false);
    expect(handled[2]):type("number");
  end);

  it("is what a recursion of functions with many locals meets too", function()
    local function wide()
      local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20;
      local b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15, b16, b17, b18, b19, b20;
      wide();
    end
    local ok, err = pcall(wide);
    expect(ok):eq(false);
    expect(err):str_match("^" .. debug.getinfo(1, "S").short_src:gsub("%p", "%%%0") .. ":%d+: stack overflow$");
  end);
end);

-- A recursion through functions that call Lua back (pcall, string.gsub's replacement): Cobalt
-- allows 200 such Java frames (DebugState.MAX_JAVA_SIZE; its assert/debug.lua reaches 100
-- pcalls deep) and raises "stack overflow" at the position of the innermost Lua code.
describe("stack overflow through C functions", function()
  it("ends a recursion of pcalls after a couple of hundred, at the recursing function", function()
    local depth = 0;
    local function overflow() depth = depth + 1; local _, err = pcall(overflow); error(err, 0); end
    local at = ("%s:%d"):format(debug.getinfo(overflow, "S").short_src, debug.getinfo(overflow, "S").linedefined);
    local ok, err = pcall(overflow);
    expect(ok):eq(false);
    expect(err):eq(at .. ": stack overflow");
    expect(depth > 50 and depth <= 200):eq(true);
  end);

  it("ends a recursion through string.gsub's replacement function", function()
    local depth = 0;
    local function overflow() depth = depth + 1; return (string.gsub("a", "a", overflow)); end
    local ok, err = pcall(overflow);
    expect(ok):eq(false);
    expect(err):str_match(": stack overflow$");
    expect(depth > 50 and depth <= 200):eq(true);
  end);
end);

-- CC 1.113.1's bios raises when an API file does not load or fails as it runs, with
-- error("Failed to load API " .. name .. " due to " .. err, 1), which Cobalt places at that
-- call in its bios.lua (lines 510 and 506), and forgets the API was loading.
describe("os.loadAPI", function()
  local function with_file(name, text, body)
    local path = "/.lapi/" .. name;
    local file = fs.open(path, "w");
    file.write(text);
    file.close();
    local ok, err = pcall(body, path);
    fs.delete("/.lapi");
    if not ok then error(err, 0); end
  end

  it("raises CC's error for an API that fails as it runs, and may load it again", function()
    with_file("broken.lua", "x = 1\nerror('boom')\n", function(path)
      expect({ pcall(os.loadAPI, path) }):same({ false,
        "bios.lua:506: Failed to load API broken due to /.lapi/broken.lua:2: boom" });
      expect(broken):eq(nil);
      local again = fs.open(path, "w");
      again.write("x = 2\n");
      again.close();
      expect(os.loadAPI(path)):eq(true);
      expect(broken.x):eq(2);
      os.unloadAPI("broken");
    end);
  end);

  it("raises CC's error for an API that does not load", function()
    with_file("bad", "x = = 1\n", function(path)
      local ok, err = pcall(os.loadAPI, path);
      expect(ok):eq(false);
      expect(err):str_match("^bios%.lua:510: Failed to load API bad due to /%.lapi/bad:1: ");
    end);
    expect({ pcall(os.loadAPI, "/.lapi/missing") }):same({ false,
      "bios.lua:510: Failed to load API missing due to File not found" });
  end);
end);
