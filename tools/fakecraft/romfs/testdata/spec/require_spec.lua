-- Specs for /rom/modules/main/cc/require.lua.

local make = require("cc.require").make;

-- This spec's directory on the computer, where the fixtures live.
local HERE = fs.getDir((debug.getinfo(1, "S").source:gsub("^[@=]", "")));

local function fresh(env)
  env = env or setmetatable({}, { __index = _G });
  local req, pkg = make(env, HERE);
  env.require, env.package = req, pkg;
  return req, pkg, env;
end

describe("cc.require", function()
  it("sets CC's package fields", function()
    local _, pkg = fresh();
    expect(pkg.path):eq("?;?.lua;?/init.lua;/rom/modules/main/?;/rom/modules/main/?.lua;/rom/modules/main/?/init.lua");
    expect(pkg.config):eq("/\n;\n?\n!\n-");
    expect(pkg.loaded.string):eq(string);
    expect(pkg.loaded._G):eq(_G);
    expect(pkg.loaded.package):eq(pkg);
    expect(type(pkg.preload)):eq("table");
    expect(#pkg.loaders):eq(2);
  end);

  it("loads a module relative to the program's directory and caches it", function()
    local req, pkg = fresh();
    local first = req("fixtures.mods.answer");
    expect(first.value):eq(42);
    expect(req("fixtures.mods.answer")):eq(first);
    expect(pkg.loaded["fixtures.mods.answer"]):eq(first);
  end);

  it("loads modules with the program's environment", function()
    local env = setmetatable({ shell = "the shell" }, { __index = _G });
    local req = fresh(env);
    expect(req("fixtures.mods.answer").sees_shell):eq(true);
    expect(rawget(env, "LOADS")):eq(1);
    expect(rawget(_G, "LOADS")):eq(nil);
  end);

  it("finds ?/init.lua", function()
    local req = fresh();
    expect(req("fixtures.mods.sub")):eq("sub init");
  end);

  it("resolves a module's own requires against the program's directory", function()
    local req = fresh();
    expect(req("fixtures.mods.dotted").inner):eq("sub init");
  end);

  it("gives true for a module that returns nothing", function()
    local req, pkg = fresh();
    expect(req("fixtures.mods.nothing")):eq(true);
    expect(pkg.loaded["fixtures.mods.nothing"]):eq(true);
  end);

  it("treats a leading slash as an absolute path", function()
    local req = fresh();
    local absolute = "/" .. fs.combine(HERE, "fixtures/mods/answer");
    expect(req(absolute).value):eq(42);
  end);

  it("finds ROM modules", function()
    local req = fresh();
    expect(type(req("cc.expect").expect)):eq("function");
    expect(type(req("cc.shell.completion").build)):eq("function");
  end);

  it("prefers package.preload", function()
    local req, pkg = fresh();
    pkg.preload["virtual"] = function(name) return "preloaded " .. name; end;
    expect(req("virtual")):eq("preloaded virtual");
  end);

  it("lists every place it looked", function()
    local req = fresh();
    local ok, err = pcall(req, "no.such");
    expect(ok):eq(false);
    local dir = HERE;
    local function rel(p) return fs.combine(dir, p); end
    expect(err):eq(table.concat({
      "module 'no.such' not found:",
      "no field package.preload['no.such']",
      "no file '" .. rel("no/such") .. "'",
      "no file '" .. rel("no/such.lua") .. "'",
      "no file '" .. rel("no/such/init.lua") .. "'",
      "no file '/rom/modules/main/no/such'",
      "no file '/rom/modules/main/no/such.lua'",
      "no file '/rom/modules/main/no/such/init.lua'",
    }, "\n  "));
  end);

  it("lists a module's syntax error among the places it looked, worded as Lua's", function()
    local req = fresh();
    local ok, err = pcall(req, "fixtures.mods.broken");
    expect(ok):eq(false);
    expect(err):eq(table.concat({
      "module 'fixtures.mods.broken' not found:",
      "no field package.preload['fixtures.mods.broken']",
      "...xtures/mods/broken.lua:3: unexpected symbol near <eof>", -- a long path as Cobalt shows it
    }, "\n  "));
  end);

  it("calls a preload loader with the module name alone", function()
    local req, pkg = fresh();
    pkg.preload["counted"] = table.pack;
    expect(req("counted")):same({ n = 1, "counted" });
  end);

  it("calls a file loader with the module name and its path", function()
    local req = fresh();
    local got = req("fixtures.mods.args");
    expect(got):same({ n = 2, "fixtures.mods.args", fs.combine(HERE, "fixtures/mods/args.lua") });
  end);

  it("reports a loop or earlier failure on the second require", function()
    local req = fresh();
    expect.error(req, "fixtures.mods.fails"):eq("fixture failure");
    expect.error(req, "fixtures.mods.fails"):eq("loop or previous error loading module 'fixtures.mods.fails'");
  end);

  it("checks its argument", function()
    local req = fresh();
    expect.error(req, 1):eq("bad argument #1 (string expected, got number)");
  end);

  it("searchpath returns the first existing file", function()
    local _, pkg = fresh();
    expect(pkg.searchpath("fixtures.mods.answer", "?.lua")):eq(fs.combine(HERE, "fixtures/mods/answer.lua"));
    local path, err = pkg.searchpath("x", "/a/?.lua;b/?");
    expect(path):eq(nil);
    expect(err):eq("no file '/a/x.lua'\n  no file '" .. fs.combine(HERE, "b/x") .. "'");
  end);
end);
