-- Specs for the Lua 5.2/5.3 syntax fakecraft adds in front of gopher-lua's compiler
-- (package luachunk): \x, \z and \u{...} escapes, _ENV, and `..` formatting numbers.

describe("string escapes", function()
  it("reads \\x, \\u{...} and \\z", function()
    expect("\x41\x7a"):eq("Az");
    expect("\u{48}\u{E9}\u{20AC}"):eq("H\195\169\226\130\172");
    expect("a\z
            b"):eq("ab");
  end);

  it("keeps line numbers after a \\z that spans lines", function()
    local _ = "x\z

    ";
    local line = debug.getinfo(1, "l").currentline;
    expect(line):eq(16);
  end);

  it("works in loaded chunks too", function()
    expect(load("return '\\x41\\u{42}'")()):eq("AB");
  end);

  -- Cobalt 0.9.4's lexer, run from its source: it takes any escaped character as itself
  -- and \u{...} up to U+10FFFF, and refuses the rest near the string so far.
  it("refuses and takes what Cobalt's lexer does", function()
    local function loaded(text) return select(2, load("return " .. text, "=t")); end
    expect(loaded("'\\300'")):eq("t:1: escape sequence too large near ''\\300''");
    expect(loaded("'ab\\256x'")):eq("t:1: escape sequence too large near ''ab\\256x'");
    expect(loaded("'\\xZZ'")):eq("t:1: hexadecimal digit expected near ''\\xZ'");
    expect(loaded("'\\u{110000}'")):eq("t:1: UTF-8 value too large near ''\\u{110000'");
    expect(loaded("'\\u123'")):eq("t:1: missing '{' near ''\\u1'");
    expect(load("return '\\q\\255\\u{10FFFF}'")()):eq("q\255\244\143\191\191");
  end);
end);

describe("_ENV", function()
  it("is the chunk's environment", function()
    local env = setmetatable({}, { __index = _G });
    local fn = load("x = 1; return _ENV", "=t", "t", env);
    expect(fn()):eq(env);
    expect(env.x):eq(1);
  end);

  it("can be stored into and read from", function()
    local env = {};
    load("_ENV.y = 2; return y", "=t", "t", env)();
    expect(env.y):eq(2);
  end);

  it("can be rebound by a local", function()
    local fn = load("local _ENV = { v = 3 }; return v", "=t", "t", {});
    expect(fn()):eq(3);
    local g = load("local function f(_ENV) return w end; return f({ w = 4 })", "=t", "t", {});
    expect(g()):eq(4);
  end);

  it("is passed on by loadfile", function()
    local h = fs.open("/tmp/env_spec.lua", "w");
    h.write("z = 5");
    h.close();
    local env = {};
    loadfile("/tmp/env_spec.lua", nil, env)();
    expect(env.z):eq(5);
  end);
end);

describe("..", function()
  it("formats numbers as tostring does", function()
    local third, huge = 1 / 3, 2 ^ 63;
    expect("x" .. third):eq("x0.33333333333333");
    expect(third .. ""):eq(tostring(third));
    expect("s" .. 0.1 + 0.2):eq("s0.3");
    expect(huge .. ""):eq("9223372036854775807");
    expect(huge * 2 .. ""):eq("1.844674407371e+19");
    expect(0 / 0 .. " " .. 1 / 0 .. " " .. -1 / 0):eq("nan inf -inf");
    expect("n" .. 1.5 .. -2.25 .. 10):eq("n1.5-2.2510");
  end);

  it("formats numbers in loaded chunks, whatever their environment", function()
    expect(load("local n = ... return 'v' .. n", "=t", "t", {})(1 / 3)):eq("v0.33333333333333");
  end);

  it("leaves strings, metamethods and errors as they were", function()
    local mt = { __concat = function(a, b) return type(a) .. "+" .. type(b); end };
    expect("x" .. setmetatable({}, mt)):eq("string+table");
    expect(setmetatable({}, mt) .. "x"):eq("table+string");
    local ok, err = pcall(function() local t; return "x" .. t; end);
    expect(ok):eq(false);
    expect(err):str_match("concat");
  end);

  it("works in a for loop's list", function()
    local text, n = "a\nb", 0;
    for line in (text .. "\n"):gmatch("([^\n]*)\n") do n = n + 1; end
    expect(n):eq(2);
    for line in (tostring(text) .. "\n"):gmatch("([^\n]*)\n") do n = n + 1; end
    expect(n):eq(4);
    local seen;
    for _, v in ipairs({ "k" .. 1 / 4 }) do seen = v; end
    expect(seen):eq("k0.25");
  end);
end);

describe("generic for", function()
  it("starts next from the beginning of a table built in its list", function()
    local seen = {};
    for _, v in next, { "x", "y" } do seen[#seen + 1] = v; end
    expect(seen):same({ "x", "y" });
  end);
end);

describe("numerals", function()
  it("read hexadecimal fractions and binary exponents", function()
    expect(0x1p4):eq(16);
    expect(0x.8):eq(0.5);
    expect(0xA.8p1):eq(21);
    expect(0x1P-1):eq(0.5);
  end);

  it("read leading zeros as decimal and overflow to inf", function()
    expect(0012):eq(12);
    expect(1e400):eq(math.huge);
  end);

  it("wrap past 64 bits, as CC 1.113's Cobalt does", function()
    expect(0xffffffffffffffff):eq(-1);
    expect(0x10000000000000000):eq(0);
    expect(tostring(99999999999999999999)):eq("7766279631452241920");
  end);

  it("that Cobalt cannot convert are malformed", function()
    expect(select(2, load("return 1e", "=x"))):eq("x:1: malformed number near '1e'");
    expect(select(2, load("return {2e}", "=x"))):eq("x:1: malformed number near '2e'");
    expect(select(2, load("return 3..2", "=x"))):eq("x:1: malformed number near '3..2'");
    expect(select(2, load("return 0x1p", "=x"))):eq("x:1: malformed number near '0x1p'");
  end);
end);
