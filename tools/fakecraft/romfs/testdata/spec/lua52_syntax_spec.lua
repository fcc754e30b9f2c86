-- Specs for the Lua 5.2/5.3 syntax fakecraft adds in front of gopher-lua's compiler
-- (package luachunk): \x, \z and \u{...} escapes, and _ENV.

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
