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

  it("says what a function is as Cobalt does: main for a chunk, Lua for any other, C for a native one", function()
    local function where() return debug.getinfo(2, "S").what; end
    local function tail() return where(); end -- no level of its own: level 2 is its caller
    local function calls() local what = tail(); return what; end
    expect(calls()):eq("Lua");
    local function me() local what = debug.getinfo(1, "S").what; return what; end
    local function viaTail() return me(); end -- me's own level, reached by a tail call
    expect(viaTail()):eq("Lua");
    expect(debug.getinfo(1, "S").what):eq("Lua");
    expect(debug.getinfo(two, "S").what):eq("Lua");
    expect(debug.getinfo(load("return 1"), "S").what):eq("main");
    expect(load("return debug.getinfo(1, 'S').what")()):eq("main");
    expect(debug.getinfo(rawget, "S").what):eq("C");
  end);

  -- fakecraft's Lua stand-ins for C functions (pcall, and tostring's call of __tostring,
  -- which it hands off) read as the C functions they stand for.
  it("counts the Lua code standing in for a C function as C", function()
    local fields = "what source short_src currentline linedefined nparams isvararg";
    local function info(level)
      local i, got = debug.getinfo(level + 1, "Slu"), {};
      for field in fields:gmatch("%S+") do got[#got + 1] = tostring(i[field]); end
      return table.concat(got, " ");
    end
    local asGo = "C =[C] [C] -1 0 0 true";
    expect(select(2, pcall(info, 1))):eq(asGo);
    expect(tostring(setmetatable({}, { __tostring = function() local s = info(2); return s; end }))):eq(asGo);
    expect(debug.getinfo(pcall, "S").what):eq("C");
  end);

  it("gives a callback a stand-in calls no name, as C gives it none", function()
    local traceback = tostring(setmetatable({}, { __tostring = function() return debug.traceback(); end }));
    expect(traceback:find("function 'handler'", 1, true)):eq(nil);
    expect(traceback:find("in function 'tostring'", 1, true) ~= nil):eq(true);
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

-- debug.sethook is the fork's (third_party/gopher-lua, hook.go): per coroutine, and a hook
-- runs as a frame of the VM's loop, so it may yield.
describe("debug.sethook", function()
  -- Runs f in a coroutine that hands every yield's values back; returns the yields' count
  -- and f's results.
  local function echo(f)
    local co = coroutine.create(f);
    local yields = 0;
    local result = table.pack(coroutine.resume(co));
    while coroutine.status(co) ~= "dead" do
      yields = yields + 1;
      result = table.pack(coroutine.resume(co, table.unpack(result, 2, result.n)));
    end
    if not result[1] then error(result[2], 0); end
    return yields, table.unpack(result, 2, result.n);
  end

  it("calls the hook for calls, returns, lines and counts, seen from the running function", function()
    local log = {};
    local base = debug.getinfo(1, "l").currentline;
    local function f(x) return x + 1; end
    echo(function()
      debug.sethook(function(event, line)
        if event == "line" then log[#log + 1] = event .. (line - base);
        elseif event ~= "count" then
          log[#log + 1] = event .. (debug.getinfo(2, "f").func == f and " f" or "");
        end
      end, "crl", 1000);
      local y = f(1);
      debug.sethook();
      return y;
    end);
    -- sethook's return, f's call, line and return; the line calling sethook, and its call (a
    -- Go function's events fire around the instruction that calls it, seen from its caller)
    expect(table.concat(log, ",")):eq("return,line9,call f,line1,return f,line10,call");
    expect(debug.gethook()):eq(nil);
  end);

  it("may yield in a hook of every kind, and the code goes on where it was", function()
    for _, mask in ipairs({ "c", "r", "l", "" }) do
      local events = 0;
      local n, sum, text = echo(function()
        debug.sethook(function(event)
          expect(coroutine.yield(event)):eq(event);
          events = events + 1;
        end, mask, mask == "" and 2 or 0);
        local sum = 0;
        for i = 1, 5 do sum = sum + i; end
        local text = string.gsub("xyz", "x", "z");
        debug.sethook();
        return sum, text;
      end);
      expect({ sum, text }):same({ 15, "zyz" });
      expect(n > 0 and n == events):eq(true);
    end
  end);

  it("is per coroutine, and gethook reads another coroutine's", function()
    local hook = function() end;
    local co = coroutine.create(function() coroutine.yield(debug.gethook()); end);
    debug.sethook(co, hook, "l", 3);
    local _, mine = coroutine.resume(co);
    expect(mine):eq(hook);
    expect({ debug.gethook(co) }):same({ hook, "l", 3 });
    expect(debug.gethook()):eq(nil);
  end);

  it("lets an error in the hook end the code it interrupted, with its position", function()
    local ok, err = pcall(function()
      debug.sethook(function() error("in the hook"); end, "l");
      local x = 1;
      return x;
    end);
    expect(ok):eq(false);
    expect(err):str_match("in the hook$");
    expect(debug.gethook()):eq(nil); -- pcall's own coroutine had the hook
  end);
end);
