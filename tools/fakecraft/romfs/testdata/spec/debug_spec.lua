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
    local asGo = "C =[C] [C] -1 -1 0 true"; -- Cobalt's linedefined of a Java function is -1
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

  -- Cobalt's DebugHelpers.traceback: "[C]:" for a Java function, a Lua frame named by how
  -- its caller named it (kind and name), "function <src:line>" when unnamed,
  -- "(...tail calls...)" after a function a tail call reached; pcall is a frame of the same
  -- stack. fakecraft's stand-ins for C read as the C function they stand for.
  local src = debug.getinfo(1, "S").short_src;
  local function here() return debug.getinfo(2, "l").currentline; end
  -- The message and the first n frames of a traceback.
  local function head(text, n)
    local lines = {};
    for line in (text .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line; end
    return table.concat(lines, "\n", 1, math.min(#lines, n + 2));
  end
  local function frames(message, ...)
    local text = { message, "stack traceback:" };
    for i = 1, select("#", ...) do text[#text + 1] = "\t" .. select(i, ...):gsub("SRC", src); end
    return table.concat(text, "\n");
  end

  it("reads as CC's: C functions and stand-ins as [C], frames named by kind", function()
    local defined, inside = here() + 1, here() + 1;
    local value = setmetatable({}, { __tostring = function() return debug.traceback("t"); end });
    local function run() local text = tostring(value); return text; end
    local called = here() + 1;
    local text = run();
    expect(head(text, 3)):eq(frames("t", ("SRC:%d: in function <SRC:%d>"):format(inside, defined),
      "[C]: in function 'tostring'", ("SRC:%d: in local 'run'"):format(called - 2)));
    expect(text:find("[G]", 1, true)):eq(nil);
    expect(text:find("corountine", 1, true)):eq(nil);
    expect(text:find("%[C%]:%d")):eq(nil);

    -- table.concat's stand-in and what it calls of its own are one C frame
    defined = here() + 1;
    local proxy = setmetatable({}, { __len = function() return 1; end, __index = function() return debug.traceback("i"); end });
    called = here() + 1;
    text = table.concat(proxy);
    expect(head(text, 3)):str_match("^" .. frames("i", ("SRC:%d: in function <SRC:%d>"):format(defined, defined),
      "[C]: in field 'concat'", ("SRC:%d: in "):format(called)):gsub("[%[%]%(%)%.%-]", "%%%0"));

    -- pcall is a frame, and the stack goes on past it
    defined = here() + 1;
    local function caught() local ok, t = pcall(function() return debug.traceback("p"); end); return t; end
    called = here() + 1;
    text = caught();
    expect(head(text, 3)):eq(frames("p", ("SRC:%d: in function <SRC:%d>"):format(defined, defined),
      "[C]: in function 'pcall'", ("SRC:%d: in local 'caught'"):format(defined)));
    expect(head(text, 4)):str_match(("\n\tSRC:%d: in "):gsub("SRC", src):format(called) .. "[^\n]*$");

    -- a tail call of pcall (Lua standing in for C) keeps its caller, as of a C function
    defined = here() + 1;
    local function tailed() return pcall(function() return debug.traceback("t"); end); end
    expect(head(select(2, tailed()), 3)):eq(frames("t", ("SRC:%d: in function <SRC:%d>"):format(defined, defined),
      "[C]: in function 'pcall'", ("SRC:%d: in local 'tailed'"):format(defined)));

    -- methods, metamethods, upvalues; a tail call's mark
    local object = { name = function(self) return debug.traceback("m"); end };
    called = here() + 1;
    expect(head(object:name(), 1)):eq(frames("m", ("SRC:%d: in method 'name'"):format(called - 2)));
    local sum = setmetatable({}, { __add = function() return debug.traceback("a"); end });
    expect(head(sum + 1, 1)):eq(frames("a", ("SRC:%d: in metamethod '__add'"):format(here() - 1)));
    defined = here() + 1;
    local function last() return debug.traceback("l"); end
    local function tail() return last(); end
    local function outer() local t = tail(); return t; end
    local function upper() local t = outer(); return t; end
    expect(head(upper(), 4)):eq(frames("l", ("SRC:%d: in function <SRC:%d>"):format(defined, defined),
      "(...tail calls...)", ("SRC:%d: in upvalue 'outer'"):format(defined + 2),
      ("SRC:%d: in local 'upper'"):format(defined + 3)));
  end);

  -- Cobalt's ProtectedCall calls xpcall's handler where the error was raised, before the
  -- frames are unwound (closeUntil after it), so its traceback and levels start there.
  it("runs xpcall's handler over the frames of the error, as Cobalt does", function()
    local defined = here() + 1;
    local function fail() error("boom"); end
    local function run() fail(); end
    local called = here() + 1;
    local ok, text = xpcall(run, debug.traceback);
    expect(ok):eq(false);
    expect(head(text, 4)):eq(frames(("%s:%d: boom"):format(src, defined), "[C]: in function 'error'",
      ("SRC:%d: in upvalue 'fail'"):format(defined), ("SRC:%d: in function <SRC:%d>"):format(defined + 1, defined + 1),
      "[C]: in function 'xpcall'"));
    expect(head(text, 5)):str_match(("\n\tSRC:%d: in "):gsub("SRC", src):format(called) .. "[^\n]*$");

    -- a C function xpcall calls is a frame of its own, unnamed: xpcall, C, called it
    expect(head(select(2, xpcall(error, debug.traceback, "c", 0)), 2))
      :eq(frames("c", "[C]: in ?", "[C]: in function 'xpcall'"));

    -- debug.getinfo levels from the handler: 1 the handler, 2 error, 3 fail
    local _, line = xpcall(run, function() return debug.getinfo(3, "l").currentline; end);
    expect(line):eq(defined);

    -- an error the VM raises: the handler runs over its Lua frame, which names the handler
    -- by the failing instruction, as Cobalt's getFuncKind reads it
    defined = here() + 1;
    local function index() local t = nil; return t.x; end
    local handler_line = here() + 1;
    local _, vm = xpcall(index, function(m) return debug.traceback(m); end);
    expect(head(vm, 3)):eq(frames(("%s:%d: attempt to index local 't' (a nil value)"):format(src, defined),
      ("SRC:%d: in metamethod '__index'"):format(handler_line), ("SRC:%d: in function <SRC:%d>"):format(defined, defined),
      "[C]: in function 'xpcall'"));
  end);

  -- In Cobalt a gsub replacement function's frame lies on gsub's Java frame, on its caller's.
  it("goes on past string.gsub from its replacement function, as Cobalt's", function()
    local texts, defined = {}, here() + 1;
    local function replace() texts[#texts + 1] = head(debug.traceback("g"), 3); end
    local function run() local r = string.gsub("ab", ".", replace); return r; end
    run();
    local want = frames("g", ("SRC:%d: in function <SRC:%d>"):format(defined, defined),
      "[C]: in field 'gsub'", ("SRC:%d: in local 'run'"):format(defined + 1));
    expect(texts):same({ want, want }); -- the second match's after the helper's tail call
    -- levels too: error(msg, 3) is gsub's caller
    local function raise() error("three", 3); end
    expect({ pcall(function() local r = ("a"):gsub("a", raise); return r; end) })
      :same({ false, ("%s:%d: three"):format(src, here() - 1) });
    -- after a yield, another coroutine resumes the function: its caller is still gsub's
    defined = here() + 1;
    local co = coroutine.create(function() return (string.gsub("a", "a", function() coroutine.yield(); return debug.traceback("y"); end)); end);
    coroutine.resume(co);
    local _, late = coroutine.resume(co);
    expect(late):eq(frames("y", ("SRC:%d: in function <SRC:%d>"):format(defined, defined), "[C]: in field 'gsub'",
      ("SRC:%d: in function <SRC:%d>"):format(defined, defined)));
  end);

  it("takes a number message, a thread, and a level as Cobalt's", function()
    expect(debug.traceback(42)):str_match("^42\nstack traceback:\n");
    local co = coroutine.create(function() local x = coroutine.yield(); return x; end);
    coroutine.resume(co);
    local line = here() - 2;
    -- the yield's own frame first, as Cobalt keeps it on a suspended coroutine's stack
    expect(debug.traceback(co, "co")):eq(frames("co", "[C]: in field 'yield'",
      ("SRC:%d: in function <SRC:%d>"):format(line, line)));
    expect(debug.traceback(co, "co", 1)):eq(frames("co", ("SRC:%d: in function <SRC:%d>"):format(line, line)));
    -- suspended under pcall: the frames that yielded, pcall, and its caller
    co = coroutine.create(function()
      local function inner() local ok = pcall(function() coroutine.yield(); end); return ok; end
      local ok = inner();
      return ok;
    end);
    coroutine.resume(co);
    line = here() - 6;
    expect(debug.traceback(co, "p")):eq(frames("p", "[C]: in field 'yield'",
      ("SRC:%d: in function <SRC:%d>"):format(line + 1, line + 1), "[C]: in function 'pcall'",
      ("SRC:%d: in local 'inner'"):format(line + 1), ("SRC:%d: in function <SRC:%d>"):format(line + 2, line)));
    expect(head(debug.traceback(co, "p", 2), 1)):eq(frames("p", "[C]: in function 'pcall'"));
    coroutine.resume(co);
    expect(debug.traceback(co, "dead")):eq(frames("dead"));
    local function level(n) return debug.traceback("l", n); end
    local function call_level() local t = level(2); return t; end
    expect(head(call_level(), 1)):eq(frames("l", ("SRC:%d: in local 'call_level'"):format(here() - 1)));
  end);

  it("cuts a deep stack to the first 10 frames and the last 11", function()
    local function deep(n) if n == 0 then return debug.traceback("d", 1); end local t = deep(n - 1); return t; end
    local lines = {};
    for line in deep(40):gmatch("[^\n]+") do lines[#lines + 1] = line; end
    expect(lines[13]):eq("\t...");
    expect(#lines):eq(2 + 10 + 1 + 11);
  end);
end);

describe("an error the VM raises in a stand-in for C", function()
  it("is placed at the Lua code that called the C function, as Cobalt places it", function()
    local src = debug.getinfo(1, "S").short_src;
    local broken = setmetatable({}, { __len = function() return 1; end, __index = setmetatable({}, { __index = 5 }) });
    local line = debug.getinfo(1, "l").currentline;
    local co = coroutine.create(function()
      table.concat(broken);
    end);
    expect({ coroutine.resume(co) }):same({ false, ("%s:%d: attempt to index a number value"):format(src, line + 2) });
    co = coroutine.create(function()
      return tostring(setmetatable({}, { __tostring = 5 }));
    end);
    expect({ coroutine.resume(co) }):same({ false, ("%s:%d: attempt to call a number value"):format(src, line + 6) });
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
    -- Go function's events fire over a frame of its own: the hook's level 2 is not f)
    expect(table.concat(log, ",")):eq("return,line9,call f,line1,return f,line10,call");
    expect(debug.gethook()):eq(nil);
  end);

  -- Cobalt 0.9.3 (checked by running this on it) calls a Java function as a frame of its
  -- own and fires its call and return there, as a Lua function's: debug.getinfo(2) in the
  -- hook is the library function, named as its caller calls it. A function a library
  -- function calls (table.sort's comparator, pcall's function) has no name, and a tail call
  -- of a library function leaves its caller's frame, whose return fires after it.
  it("sees library functions' calls and returns in their own frames, among Lua ones, as Cobalt", function()
    local log = {};
    local function lf(x) return x + 1; end
    local function tail() return string.len("ab"); end
    local m = setmetatable({}, { __index = function(_, k) return k; end });
    local function less(a, b) return a < b; end
    debug.sethook(function(event)
      local info = debug.getinfo(2, "nS");
      log[#log + 1] = ("%s %s %s"):format(event, tostring(info.name), info.what);
    end, "cr");
    lf(1);
    string.rep("a", 2);
    math.max(lf(2), 3);
    pcall(lf, 4);
    table.sort({ 3, 1, 2 }, less);
    tail();
    ("x"):upper();
    local _ = m.foo;
    debug.sethook();
    expect(table.concat(log, ",")):eq(table.concat({
      "return sethook C", "call lf Lua", "return lf Lua", "call rep C", "return rep C",
      "call lf Lua", "return lf Lua", "call max C", "return max C",
      "call pcall C", "call nil Lua", "return nil Lua", "return pcall C",
      "call sort C", "call nil Lua", "return nil Lua", "call nil Lua", "return nil Lua",
      "call nil Lua", "return nil Lua", "return sort C",
      "call tail Lua", "call len C", "return len C", "return tail Lua",
      "call upper C", "return upper C", "call __index Lua", "return __index Lua",
      "call sethook C",
    }, ","));
  end);

  -- A library function's calls of library functions (pcall's, table.sort's comparator, a
  -- __pairs or __tostring, a coroutine.wrap function, a __call) are calls as Cobalt 0.9.3's
  -- Java function makes them, through Dispatch, in a frame of their own, unnamed (checked
  -- by running this on it); table.sort's own comparisons (__lt) are none.
  it("sees the calls library functions make of library functions, as Cobalt", function()
    local log = {};
    local t = { 3, 1, 2 };
    local proxy = setmetatable({}, { __pairs = type, __tostring = type });
    local w = coroutine.wrap(function(...) return coroutine.yield(...); end);
    w();
    local call_lua = setmetatable({}, { __call = function(_, x) return x; end });
    local call_go = setmetatable({}, { __call = type });
    local mt = { __lt = function(a, b) return a.v < b.v; end };
    local ordered = { setmetatable({ v = 3 }, mt), setmetatable({ v = 2 }, mt), setmetatable({ v = 1 }, mt) };
    local mixed = { 3, "a", 1 };
    debug.sethook(function(event)
      local info = debug.getinfo(2, "nS");
      log[#log + 1] = ("%s %s %s"):format(event, tostring(info.name), info.what);
    end, "cr");
    pcall(string.len, "x");
    table.sort(t, math.min);
    xpcall(string.len, type, "ab");
    pairs(proxy);
    tostring(proxy);
    table.foreach({ 1 }, type);
    pcall(w, 1);
    pcall(pcall, string.len, "x");
    pcall(call_lua, 1);
    pcall(call_go, 1);
    table.sort(ordered);
    pcall(table.sort, mixed);
    debug.sethook();
    expect(table.concat(log, ",")):eq(table.concat({
      "return sethook C", "call pcall C", "call nil C", "return nil C", "return pcall C",
      "call sort C", "call nil C", "return nil C", "call nil C", "return nil C",
      "call nil C", "return nil C", "return sort C",
      "call xpcall C", "call nil C", "return nil C", "return xpcall C",
      "call pairs C", "call nil C", "return nil C", "return pairs C",
      "call tostring C", "call nil C", "return nil C", "return tostring C",
      "call foreach C", "call nil C", "return nil C", "return foreach C",
      "call pcall C", "call nil C", "return nil C", "return pcall C",
      "call pcall C", "call nil C", "call nil C", "return nil C", "return nil C", "return pcall C",
      "call pcall C", "call nil Lua", "return nil Lua", "return pcall C",
      "call pcall C", "call nil C", "return nil C", "return pcall C",
      "call sort C", "call nil Lua", "return nil Lua", "call nil Lua", "return nil Lua",
      "call nil Lua", "return nil Lua", "return sort C",
      "call pcall C", "call nil C", "return pcall C",
      "call sethook C",
    }, ","));
  end);

  -- In a function with no locals, sethook's function lies in register 0, which the
  -- upvalue list after a closure's instruction does not set (a closure of log was read as
  -- setting it: "return log C"). Checked on Cobalt 0.9.3.
  it("sees a gsub's Go replacement in a coroutine, and names sethook there, as Cobalt", function()
    local log = {};
    coroutine.wrap(function()
      debug.sethook(function(event)
        local info = debug.getinfo(2, "nS");
        log[#log + 1] = ("%s %s %s"):format(event, tostring(info.name), info.what);
      end, "cr");
      string.gsub("ab", ".", string.upper);
      debug.sethook();
    end)();
    expect(table.concat(log, ",")):eq(table.concat({
      "return sethook C", "call gsub C", "call nil C", "return nil C", "call nil C",
      "return nil C", "return gsub C", "call sethook C",
    }, ","));
  end);

  -- Where a gsub cannot pass a yield on (in Lua that Go calls: the __pairs fakecraft's Go
  -- textutils.serialiseJSON follows), its replacement is called from Go. A library function
  -- there fires its call and return as in a gsub that may yield, as Cobalt's Dispatch fires
  -- them (CC's serialiseJSON is Lua: only the gsub's events are compared).
  it("sees a gsub's Go replacement where the gsub cannot yield", function()
    local log = {};
    local t = setmetatable({}, { __pairs = function()
      string.gsub("ab", ".", string.upper);
      return next, {}, nil;
    end });
    debug.sethook(function(event)
      local info = debug.getinfo(2, "nS");
      log[#log + 1] = ("%s %s %s"):format(event, tostring(info.name), info.what);
    end, "cr");
    textutils.serialiseJSON(t);
    debug.sethook();
    expect(table.concat(log, ","):match("call gsub C.-return gsub C")):eq(table.concat({
      "call gsub C", "call nil C", "return nil C", "call nil C", "return nil C", "return gsub C",
    }, ","));
  end);

  -- Cobalt 0.9.3 calls xpcall's handler through Dispatch, which fires a Java function's
  -- call and return in a frame of its own, named by the failing instruction (getFuncKind).
  -- Checked by running this on it.
  it("sees xpcall's Go handler called and returned, named by the failing instruction, as Cobalt", function()
    local log = {};
    debug.sethook(function(event)
      local info = debug.getinfo(2, "nS");
      log[#log + 1] = ("%s %s %s"):format(event, tostring(info.name), info.what);
    end, "cr");
    local results = { xpcall(error, type, "boom") };
    xpcall(function() local n; return n.x; end, type);
    debug.sethook();
    expect(results):same({ false, "string" });
    expect(table.concat(log, ",")):eq(table.concat({
      "return sethook C", "call xpcall C", "call nil C", "call nil C", "return nil C",
      "return xpcall C", "call xpcall C", "call nil Lua", "call __index C", "return __index C",
      "return xpcall C", "call sethook C",
    }, ","));
  end);

  it("may yield in the hooks of xpcall's Go handler, which then runs and answers", function()
    local co = coroutine.create(function()
      debug.sethook(function(event)
        local info = debug.getinfo(2, "nS");
        coroutine.yield(("%s %s %s"):format(event, tostring(info.name), info.what));
      end, "cr");
      local ok, err = xpcall(function() local n; return n.x; end, debug.traceback);
      debug.sethook();
      return ok, err;
    end);
    local seen = {};
    local result = table.pack(coroutine.resume(co));
    while coroutine.status(co) ~= "dead" do
      seen[#seen + 1] = result[2];
      result = table.pack(coroutine.resume(co));
    end
    expect({ result[1], result[2] }):same({ true, false });
    local line = debug.getinfo(1, "l").currentline - 11;
    expect(result[3]:match("^[^\n]*")):str_match(("debug_spec%%.lua:%d: attempt to index local 'n' %%(a nil value%%)$"):format(line));
    expect(result[3]:find("stack traceback:\n", 1, true) ~= nil):eq(true);
    expect(table.concat(seen, ",")):eq(table.concat({
      "return sethook C", "call xpcall C", "call nil Lua", "call __index C", "return __index C",
      "return xpcall C", "call sethook C",
    }, ","));
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

  -- Cobalt 0.9.3 calls a library function used as a metamethod through Dispatch, which
  -- fires its call and return in a frame of its own, named by the instruction that ran it
  -- (getFuncKind); the log below is Cobalt's, this code run on it. fakecraft's hidden
  -- operand of `..` (luachunk's concat rewrite) fires nothing.
  local metamethods = {
    __index = rawget, __newindex = rawset, __call = type, __concat = tostring, __eq = rawequal,
    __lt = rawequal, __le = rawequal, __add = rawequal, __unm = type, __len = type,
  };
  local function useMetamethods(a, b)
    local results = { a.x, a(1), a .. "s", "s" .. a .. "s", a == b, a < b, a <= b, a + 1, -a, #a };
    a.y = 1;
    return { results[2], results[5], results[6], results[7], results[8], results[9], results[10], rawget(a, "y") };
  end
  local metamethodEvents = table.concat({
    "call __index C", "return __index C", "call a C", "return a C", "call __concat C",
    "return __concat C", "call __concat C", "return __concat C", "call __eq C", "return __eq C",
    "call __lt C", "return __lt C", "call __le C", "return __le C", "call __add C",
    "return __add C", "call __unm C", "return __unm C", "call __len C", "return __len C",
    "call __newindex C", "return __newindex C",
  }, ",");
  local metamethodResults = { "table", false, false, false, false, "table", "table", 1 };

  it("sees a library function used as a metamethod called and returned, as Cobalt", function()
    local log = {};
    local a, b = setmetatable({}, metamethods), setmetatable({}, metamethods);
    debug.sethook(function(event)
      local info = debug.getinfo(2, "nS");
      log[#log + 1] = ("%s %s %s"):format(event, tostring(info.name), info.what);
    end, "cr");
    local results = useMetamethods(a, b);
    debug.sethook();
    expect(results):same(metamethodResults);
    expect(table.concat(log, ",")):eq("return sethook C,call useMetamethods Lua," .. metamethodEvents
      .. ",call rawget C,return rawget C,return useMetamethods Lua,call sethook C");
  end);

  it("may yield in the hooks of a library function used as a metamethod, and goes on", function()
    for _, mask in ipairs({ "c", "r", "cr" }) do
      local a, b = setmetatable({}, metamethods), setmetatable({}, metamethods);
      local seen = {};
      local co = coroutine.create(function()
        debug.sethook(function(event)
          local info = debug.getinfo(2, "nS");
          coroutine.yield(("%s %s %s"):format(event, tostring(info.name), info.what));
        end, mask);
        local results = useMetamethods(a, b);
        debug.sethook();
        return results;
      end);
      local result = table.pack(coroutine.resume(co));
      while coroutine.status(co) ~= "dead" do
        if result[2]:find(" __") or result[2]:find(" a C") then seen[#seen + 1] = result[2]; end
        result = table.pack(coroutine.resume(co));
      end
      expect(result[1]):eq(true);
      expect(result[2]):same(metamethodResults);
      local want = {};
      for event in metamethodEvents:gmatch("[^,]+") do
        if mask:find(event:sub(1, 1), 1, true) then want[#want + 1] = event; end
      end
      expect(table.concat(seen, ",")):eq(table.concat(want, ","));
    end
  end);

  it("may yield in a count hook over library functions used as metamethods, and goes on", function()
    local a, b = setmetatable({}, metamethods), setmetatable({}, metamethods);
    local n, results = echo(function()
      debug.sethook(function() coroutine.yield(); end, "", 1);
      local results = useMetamethods(a, b);
      debug.sethook();
      return results;
    end);
    expect(results):same(metamethodResults);
    expect(n > 20):eq(true);
  end);

  it("may yield in a call hook over a Go metamethod and xpcall's Go handler, and goes on", function()
    local t = setmetatable({ x = 1 }, { __index = rawget, __add = rawequal });
    local n, x, missing, same, ok, err = echo(function()
      debug.sethook(function(event) coroutine.yield(event); end, "cr");
      local x, missing, same = t.x, t.y, t + t;
      local ok, err = xpcall(error, type, "boom");
      debug.sethook();
      return x, missing, same, ok, err;
    end);
    expect({ x, missing, same, ok, err }):same({ 1, nil, true, false, "string" });
    expect(n > 0):eq(true);
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

  it("lets an error in the hook end the code it interrupted, with its position, and stays set", function()
    local failed = false;
    local function hook()
      if not failed then failed = true; error("in the hook"); end
    end
    local ok, err = pcall(function()
      debug.sethook(hook, "l");
      local x = 1;
      return x;
    end);
    local after = debug.gethook();
    debug.sethook();
    expect(ok):eq(false);
    expect(err):str_match("in the hook$");
    -- pcall runs its function in the caller's coroutine, as Cobalt's does: the hook set there
    -- is the caller's.
    expect(after):eq(hook);
  end);

  -- Cobalt's pcall and xpcall call the function in the same coroutine, whose hook fires
  -- throughout; the fork's run it in a coroutine of their own (cfuncs.lua), which shares the
  -- hook (ShareHooks). pcall itself counts as C: its call and return, no lines, no count.
  describe("under pcall and xpcall", function()
    local function work(n)
      local sum = 0;
      for i = 1, n do sum = sum + i; end
      return sum;
    end
    local function handler(e) return e; end
    -- No tail call of work: its call event would read "tail call".
    local function ten() local sum = work(10); return sum; end
    local runs = {
      direct = ten,
      pcall = function() return select(2, pcall(work, 10)); end,
      xpcall = function() return select(2, xpcall(ten, handler)); end,
    };

    -- The events of mask (and every count instructions) seen inside work during run.
    local function inWork(run, mask, count)
      local seen = {};
      debug.sethook(function(event, line)
        if debug.getinfo(2, "f").func == work then seen[#seen + 1] = event .. (line or ""); end
      end, mask, count);
      local sum = run();
      debug.sethook();
      expect(sum):eq(55);
      return table.concat(seen, ",");
    end

    it("fires count, line, call and return hooks inside the function as called directly", function()
      for _, hook in ipairs({ { "", 1 }, { "l" }, { "cr" } }) do
        local direct = inWork(runs.direct, hook[1], hook[2]);
        expect(#direct > 0):eq(true);
        expect(inWork(runs.pcall, hook[1], hook[2])):eq(direct);
        expect(inWork(runs.xpcall, hook[1], hook[2])):eq(direct);
      end
    end);

    it("counts none of pcall's own workings, and sees its call and return as a C function's", function()
      local count = 0;
      debug.sethook(function() count = count + 1; end, "", 1);
      pcall(work, 10);
      debug.sethook();
      local viaPcall = count;
      count = 0;
      debug.sethook(function() count = count + 1; end, "", 1);
      work(10);
      debug.sethook();
      expect(viaPcall - count):eq(1); -- the pcall global's lookup

      local log = {};
      debug.sethook(function(event)
        local info = debug.getinfo(2, "fS");
        if info.func == work then log[#log + 1] = event .. " work";
        elseif info.what == "C" then log[#log + 1] = event .. " C"; end
      end, "cr");
      pcall(work, 1);
      debug.sethook();
      -- sethook's return and its call are C functions' too, as in Cobalt.
      expect(table.concat(log, ",")):eq("return C,call C,call work,return work,return C,call C");
    end);

    it("fires in xpcall's handler, where the error was raised", function()
      local lines = 0;
      local function count(e)
        return e;
      end
      debug.sethook(function()
        if debug.getinfo(2, "f").func == count then lines = lines + 1; end
      end, "l");
      xpcall(function() error("x"); end, count);
      debug.sethook();
      expect(lines):eq(1);
    end);

    it("keeps a hook set or removed inside pcall's function, and gethook there reads the caller's", function()
      local hook = function() end;
      debug.sethook(hook, "l");
      local inside = { pcall(debug.gethook) };
      pcall(debug.sethook);
      local removed = { debug.gethook() };
      pcall(debug.sethook, hook, "c", 2);
      local set = { debug.gethook() };
      pcall(debug.sethook, coroutine.running(), nil);
      local byThread = { debug.gethook() };
      expect(inside):same({ true, hook, "l", 0 });
      expect(removed):same({ nil, "", 0 });
      expect(set):same({ hook, "c", 2 });
      expect(byThread):same({ nil, "", 0 });
    end);

    it("sets the running coroutine's hook when named inside pcall's function", function()
      local me = coroutine.running();
      local count = 0;
      pcall(function()
        debug.sethook(me, function() count = count + 1; end, "", 1);
        work(10);
        debug.sethook(me);
      end);
      expect(count > 10):eq(true);
      expect(debug.gethook()):eq(nil);
    end);

    it("may yield in a hook under pcall, and the code goes on where it was", function()
      for _, mask in ipairs({ "c", "r", "l", "" }) do
        local events = 0;
        local n, ok, sum = echo(function()
          debug.sethook(function()
            if debug.getinfo(2, "f").func == work then
              coroutine.yield();
              events = events + 1;
            end
          end, mask, mask == "" and 1 or 0);
          local ok, sum = pcall(work, 5);
          debug.sethook();
          return ok, sum;
        end);
        expect({ ok, sum }):same({ true, 15 });
        expect(n > 0 and n == events):eq(true);
      end
    end);

    it("fires in string.gsub's replacement function, as in the gsub's coroutine", function()
      local function upper(c) return c:upper(); end
      local lines = 0;
      debug.sethook(function()
        if debug.getinfo(2, "f").func == upper then lines = lines + 1; end
      end, "l");
      local text = string.gsub("abc", "%w", upper);
      debug.sethook();
      expect(text):eq("ABC");
      expect(lines):eq(3);
    end);

    it("is not a new coroutine's, resumed under pcall or not", function()
      local hook = function() end;
      debug.sethook(hook, "l");
      local co = coroutine.create(function() return debug.gethook(); end);
      local inCo = { coroutine.resume(co) };
      local underPcall = { pcall(coroutine.wrap(function() return debug.gethook(); end)) };
      debug.sethook();
      expect(inCo):same({ true, nil, "", 0 });
      expect(underPcall):same({ true, nil, "", 0 });
    end);
  end);
end);

describe("debug with a coroutine first", function()
  -- Cobalt's getinfo and getlocal take a coroutine first and read its frames as
  -- debug.traceback(co) lists them: a suspended one's level 0 is the yield it waits in.
  it("reads the frames of a suspended coroutine given first", function()
    local co = coroutine.create(function(first)
      local second = first .. "!";
      coroutine.yield(second);
      return second;
    end);
    coroutine.resume(co, "hi");
    local line = debug.getinfo(co, 1, "l").currentline;
    local body = debug.getinfo(co, 1, "Sf");
    expect(body.what):eq("Lua");
    expect(body.short_src):eq(debug.getinfo(1, "S").short_src);
    expect(line):eq(body.func and debug.getinfo(body.func, "S").linedefined + 2);
    expect(debug.getinfo(co, 0, "S").what):eq("C");
    expect(debug.getinfo(co, 0, "l").currentline):eq(-1);
    expect(debug.getinfo(co, 2)):eq(nil);
    expect({ debug.getlocal(co, 1, 1) }):same({ "first", "hi" });
    expect({ debug.getlocal(co, 1, 2) }):same({ "second", "hi!" });
    expect(debug.getlocal(co, 1, 3)):eq(nil);
    expect(debug.getlocal(co, 0, 1)):eq(nil);
    expect.error(debug.getlocal, co, 2, 1):str_match("bad argument #2 %(level out of range%)$");
    -- the running coroutine given first reads as no coroutine given
    expect(debug.getinfo(coroutine.running(), 1, "l").currentline):eq(debug.getinfo(1, "l").currentline);
        expect({ debug.getlocal(coroutine.running(), 1, 1) }):same({ "co", co });
    coroutine.resume(co);
    expect(debug.getinfo(co, 0)):eq(nil);
  end);

  -- A coroutine dead of an error keeps the frames of its error, as Cobalt's (and Lua 5.2's)
  -- does: CC's shell reads them to mark the error's line and column.
  it("reads the frames of a coroutine that died of an error", function()
    local co = coroutine.create(function()
      local t = nil;
      return t.x;
    end);
    local line = debug.getinfo(1, "l").currentline - 2;
    expect(coroutine.resume(co)):eq(false);
    local frame = debug.getinfo(co, 0, "Sl");
    expect({ frame.what, frame.currentline, frame.currentcolumn }):same({ "Lua", line, 15 });
    expect(debug.getinfo(co, 1)):eq(nil);
    local failed = coroutine.create(function() error("x"); end);
    coroutine.resume(failed);
    expect(debug.getinfo(failed, 0, "S").what):eq("C");
    expect(debug.getinfo(failed, 1, "S").what):eq("Lua");
    expect(debug.traceback(failed)):str_match("^stack traceback:\n\t%[C%]: in function 'error'\n\t[^\n]+$");
  end);
end);

-- A local's scope ends with its block, as Lua's endpc says: a later local that takes its
-- register again is named for itself (gopher-lua's compiler ended the scope of the local
-- whose index was the register, so the block's locals lived on and the chunk's never ended).
describe("debug.getlocal names", function()
  local function names(level)
    local found = {};
    for i = 1, 20 do
      local name, value = debug.getlocal(level + 1, i);
      if not name then break; end
      if name:sub(1, 1) ~= "(" then found[#found + 1] = name .. "=" .. tostring(value); end
    end
    return table.concat(found, " ");
  end

  it("the locals in scope at the call, not those of a block that ended", function()
    local seen = {};
    local a = 1;
    do
      local b = 2;
      seen[1] = names(1);
    end
    local c = 3;
    seen[2] = names(1);
    for k = 1, 1 do local e = 5; seen[3] = names(1); end
    if a then local d = 4; seen[4] = names(1); end
    expect(seen):same({
      "seen=" .. tostring(seen) .. " a=1 b=2",
      "seen=" .. tostring(seen) .. " a=1 c=3",
      "seen=" .. tostring(seen) .. " a=1 c=3 k=1 e=5",
      "seen=" .. tostring(seen) .. " a=1 c=3 d=4",
    });
  end);

  it("the local a runtime error names, not one of a block that ended in its register", function()
    local ok, err = pcall(function() local x = 1; do local y = 2; end local z; return z.q; end);
    expect(ok):eq(false);
    expect(err):str_match("attempt to index local 'z' %(a nil value%)$");
  end);
end);

-- Cobalt 0.9.3's debug library has four functions gopher-lua's lacks, and CC leaves them in
-- (CC 1.113.1 installs Cobalt's debugGlobals): checked on Cobalt run from its source.
describe("debug's functions beside gopher-lua's", function()
  local a, b = 1, 2;
  local function f() return a, b; end
  local function g() return a; end

  it("are there, and debug walks in Cobalt's order", function()
    expect(select("#", debug.debug())):eq(0);
    expect(type(debug.getregistry())):eq("table");
    local out = {};
    for k in pairs(debug) do out[#out + 1] = k; end
    expect(table.concat(out, " ")):eq("getupvalue setfenv debug setlocal sethook getregistry gethook setmetatable upvalueid traceback upvaluejoin getinfo setupvalue getlocal getmetatable getfenv");
  end);

  it("upvalueid names an upvalue: equal for one shared, a table key", function()
    expect(type(debug.upvalueid(f, 1))):eq("userdata");
    expect(debug.upvalueid(f, 1) == debug.upvalueid(g, 1)):eq(true);
    expect(rawequal(debug.upvalueid(f, 1), debug.upvalueid(g, "1"))):eq(true);
    expect(debug.upvalueid(f, 1) == debug.upvalueid(f, 2)):eq(false);
    local seen = { [debug.upvalueid(f, 1)] = true };
    expect(seen[debug.upvalueid(g, 1)]):eq(true);
    expect.error(debug.upvalueid, f, 3):eq("bad argument #1 (invalid upvalue index)");
    expect.error(debug.upvalueid, f, 0):eq("bad argument #1 (invalid upvalue index)");
    expect.error(debug.upvalueid, math.max, 1):eq("bad argument #1 (invalid upvalue index)");
    expect.error(debug.upvalueid, pcall, 1):eq("bad argument #1 (invalid upvalue index)");
    expect.error(debug.upvalueid, f):eq("bad argument (number expected, got nil)");
    expect.error(debug.upvalueid, 1, 1):eq("bad argument (function expected, got number)");
  end);

  it("upvaluejoin makes a closure's upvalue another's", function()
    local x, y = "x", "y";
    local function fx() return x; end
    local function fy() return y; end
    expect(select("#", debug.upvaluejoin(fx, 1, fy, 1))):eq(0);
    expect(fx()):eq("y");
    expect(debug.upvalueid(fx, 1) == debug.upvalueid(fy, 1)):eq(true);
    expect.error(debug.upvaluejoin, f, 1, g, 5):eq("bad argument #3 (invalid upvalue index)");
    expect.error(debug.upvaluejoin, f, 1, g):eq("bad argument (number expected, got nil)");
    expect.error(debug.upvaluejoin, f, 9, g):eq("bad argument #1 (invalid upvalue index)");
    expect.error(debug.upvaluejoin, f, 1, math.max, 1):eq("bad argument #3 (invalid upvalue index)");
  end);
end);

-- Cobalt 0.9.3's debug.getinfo sets the fields each option asks for, option by option in
-- the order the string gives them ("flnStu" by default), in a new table, and refuses an
-- option it does not know (DebugLib.getinfo; checked on Cobalt run from its source).
describe("debug.getinfo's options", function()
  local function keys(t)
    local out = {};
    for k in pairs(t) do out[#out + 1] = k; end
    return table.concat(out, " ");
  end
  local function f(a, b) return a; end

  it("give the fields asked for, walked as Cobalt's table", function()
    expect(keys(debug.getinfo(f))):eq("source what func isvararg istailcall nparams short_src nups currentline namewhat linedefined lastlinedefined");
    expect(keys(debug.getinfo(f, "S"))):eq("source what lastlinedefined linedefined short_src");
    expect(keys(debug.getinfo(f, "nSl"))):eq("lastlinedefined source what currentline namewhat linedefined short_src");
    expect(keys(debug.getinfo(math.max))):eq("source what func isvararg istailcall nparams short_src nups currentline namewhat linedefined lastlinedefined");
    expect(debug.getinfo(f, "l").currentline):eq(-1);
    expect(debug.getinfo(f, "n").namewhat):eq("");
  end);

  it("give activelines and istailcall", function()
    local line = debug.getinfo(f, "S").linedefined;
    expect(debug.getinfo(f, "L").activelines):same({ [line] = true });
    expect(debug.getinfo(f, "t").istailcall):eq(false);
    local function g() return debug.getinfo(1, "t").istailcall; end
    local function h() return g(); end
    expect({ h(), (g()) }):same({ true, false });
  end);

  it("name a frame's function as its caller does", function()
    local function named() local i = debug.getinfo(1, "n"); return i.name, i.namewhat; end
    expect({ named() }):same({ "named", "local" });
    local t = {};
    function t:m() local i = debug.getinfo(1, "n"); return i.name, i.namewhat; end
    function t.fld() local i = debug.getinfo(1, "n"); return i.name, i.namewhat; end
    expect({ t:m() }):same({ "m", "method" });
    expect({ t.fld() }):same({ "fld", "field" });
  end);

  it("refuse an option Cobalt does not know, after the level is found", function()
    expect.error(debug.getinfo, f, "x"):eq("bad argument #2 (invalid option)");
    expect.error(debug.getinfo, f, "Sx"):eq("bad argument #2 (invalid option)");
    expect(debug.getinfo(100, "x")):eq(nil);
    local co = coroutine.create(function() coroutine.yield(); end);
    coroutine.resume(co);
    expect.error(debug.getinfo, co, 1, "x"):eq("bad argument #3 (invalid option)");
  end);
end);
