-- Specs for /.fakecraft/spec.lua, the runner running this file.

local HERE = fs.getDir((debug.getinfo(1, "S").source:gsub("^[@=]", "")));

local function fixture(name)
  return "/" .. fs.combine(HERE, "fixtures/" .. name);
end

-- Runs the spec runner on a fixture and returns its success and printed lines.
local function run_fixture(name)
  local lines = {};
  stub(_G, "print", function(...)
    lines[#lines + 1] = table.concat({ ... }, "\t");
  end);
  stub(_G, "printError", function() end);
  local ok = shell.run("/.fakecraft/spec.lua", fixture(name));
  return ok, lines;
end

describe("spec runner", function()
  it("prints one line per case and a summary, and fails when a case fails", function()
    local ok, lines = run_fixture("sample_cases.lua");
    expect(ok):eq(false);
    expect(#lines):eq(7);
    expect(lines[1]):eq("ok outer inner passes");
    expect(lines[2]):str_match("^FAIL outer fails eq: .*sample_cases%.lua:10: Expected 1 to equal 2$");
    expect(lines[3]):str_match("^FAIL outer fails same with tables: .*sample_cases%.lua:14: Expected {.*} to be the same as {.*}$");
    expect(lines[4]):eq("FAIL outer errors: plain error");
    expect(lines[5]):eq("pending outer later");
    expect(lines[6]):eq("ok top level");
    expect(lines[7]):eq("2 passed, 3 failed, 1 skipped");
  end);

  it("restores stubs after each case", function()
    run_fixture("sample_cases.lua");
    expect(_G.SPEC_SPEC_TABLE.f()):eq("real");
  end);

  it("succeeds when every case passes, running hooks around each", function()
    local ok, lines = run_fixture("sample_passing.lua");
    expect(ok):eq(true);
    expect(lines[#lines]):eq("2 passed, 0 failed");
    expect(_G.SPEC_SPEC_ORDER):same({ "before", "one", "after", "before", "two", "after" });
  end);

  it("fails a case that leaves a function of CC's APIs changed, and puts it back for the next", function()
    local call = peripheral.call;
    local ok, lines = run_fixture("sample_leaky.lua");
    expect(ok):eq(false);
    expect(lines):same({
      "FAIL apis wraps without putting back: left peripheral.call, term.native().specSpecAdded changed "
        .. "(put back now): a case puts back what it wraps or replaces in CC's APIs, as stub does, "
        .. "else every later case runs through it",
      "ok apis finds them as they were",
      "1 passed, 1 failed",
    });
    expect(_G.SPEC_SPEC_SEEN.call):eq(call);
    expect(_G.SPEC_SPEC_SEEN.added):eq(nil);
  end);

  it("reports a missing file as a failure", function()
    local ok, lines = run_fixture("no_such_file.lua");
    expect(ok):eq(false);
    expect(lines[#lines]):eq("0 passed, 1 failed");
  end);
end);

describe("expect", function()
  it("compares with eq and ne", function()
    expect(1):eq(1):ne(2);
    expect("a"):equals("a");
    expect.error(function() expect(1):ne(1); end):str_match("Expected 1 to not equal 1$");
    expect.error(function() expect("a"):eq("b"); end):str_match('Expected "a" to equal "b"$');
  end);

  it("compares tables deeply with same", function()
    expect({ 1, { a = true } }):same({ 1, { a = true } });
    expect.error(function() expect({ 1 }):same({ 1, 2 }); end):str_match("to be the same as");
  end);

  it("checks types and patterns", function()
    expect("abc"):type("string"):str_match("^a");
    expect.error(function() expect(1):type("string"); end):str_match("to be of type string, but was number$");
    expect.error(function() expect("abc"):str_match("^b"); end):str_match("to match pattern");
  end);

  it("fails expect.error when the function does not error", function()
    local ok, err = pcall(expect.error, function() end);
    expect(ok):eq(false);
    expect(tostring(err)):str_match("Expected function to error$");
  end);

  it("strips the call-site position from expect.error messages", function()
    expect.error(error, "bare", 0):eq("bare");
    expect.error(function() error({ code = 7 }); end):same({ code = 7 });
  end);

  it("fails with fail()", function()
    local ok, err = pcall(fail, "custom");
    expect(ok):eq(false);
    expect(tostring(err)):str_match("custom$");
  end);
end);

describe("stub", function()
  it("records calls and returns the replacement's results", function()
    local t = { f = function() return "real"; end };
    local s = stub(t, "f", function(a, b) return a + b; end);
    expect(t.f):eq(s);
    expect(t.f(1, 2)):eq(3);
    expect(t.f):called():called(1):called_with(1, 2);
    expect.error(function() expect(t.f):called_with(2, 1); end):str_match("Expected stub to be called with %(2, 1%), but got %(1, 2%)$");
  end);

  it("knows a stub that was not called", function()
    local t = {};
    stub(t, "g");
    expect(t.g):not_called();
    t.g("x");
    expect.error(function() expect(t.g):not_called(); end):str_match("not to be called");
  end);

  it("stubs a value other than a function as it is, nil included", function()
    local t = { a = 1, b = 2 };
    stub(t, "a", { x = 1 });
    stub(t, "b", nil);
    stub(_G, "spec_spec_global", "set");
    expect(t.a):same({ x = 1 });
    expect(t.b):eq(nil);
    expect(spec_spec_global):eq("set");
  end);

  it("put the stubbed values back after the case", function()
    expect(spec_spec_global):eq(nil);
  end);

  it("lets a case yield", function()
    os.queueEvent("spec_spec_event", 5);
    local _, value = os.pullEvent("spec_spec_event");
    expect(value):eq(5);
  end);
end);
