-- Specs for fakecraft's Lua 5.2 additions to the debug library (computer/debug.go).

describe("debug", function()
  local function two(a, b) return a, b; end
  local function varargs(first, ...) return debug.getinfo(1, "u"); end
  local methods = {};
  function methods:call(x) return x; end

  it("gives nparams and isvararg with the u option", function()
    local info = debug.getinfo(two, "u");
    expect(info.nparams):eq(2);
    expect(info.isvararg):eq(false);
    local running = varargs();
    expect(running.nparams):eq(1);
    expect(running.isvararg):eq(true);
    expect(debug.getinfo(two).nparams):eq(2);
    expect(debug.getinfo(two, "S").nparams):eq(nil);
  end);

  it("counts Go functions as C ones: no parameters, variadic", function()
    local info = debug.getinfo(rawget, "u");
    expect(info.nparams):eq(0);
    expect(info.isvararg):eq(true);
  end);

  it("names a function's parameters through getlocal", function()
    expect(debug.getlocal(two, 1)):eq("a");
    expect(debug.getlocal(two, 2)):eq("b");
    expect(debug.getlocal(two, 3)):eq(nil);
    expect(debug.getlocal(methods.call, 1)):eq("self");
    expect(debug.getlocal(methods.call, 2)):eq("x");
    expect(debug.getlocal(rawget, 1)):eq(nil);
  end);

  it("still reads locals at a stack level", function()
    local here = "value";
    local name, value = debug.getlocal(1, 1);
    expect(name):eq("here");
    expect(value):eq("value");
  end);
end);

describe("debug.traceback", function()
  it("hands back a message that is no string, so xpcall keeps an error object", function()
    local object = {};
    expect(debug.traceback(object)):eq(object);
    expect(debug.traceback(coroutine.create(print), object)):eq(object);
    local ok, err = xpcall(function() error(object); end, debug.traceback);
    expect(ok):eq(false);
    expect(err):eq(object);
    expect(debug.traceback("message")):str_match("^message\nstack traceback:");
  end);
end);
