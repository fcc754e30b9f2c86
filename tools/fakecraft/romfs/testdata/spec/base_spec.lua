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
