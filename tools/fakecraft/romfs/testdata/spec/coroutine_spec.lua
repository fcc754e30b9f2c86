-- Specs for yielding where gopher-lua's VM cannot, where fakecraft's fork of it and its
-- stand-ins let it (computer/boundary.go, third_party/gopher-lua, computer/cfuncs.lua, the
-- bios's pcall/xpcall).

-- Runs f in a coroutine that hands every yield's values straight back, as a scheduler that
-- answers each request would; returns what f returned, or raises its error.
local function echo(f)
  local co = coroutine.create(f);
  local result = table.pack(coroutine.resume(co));
  while coroutine.status(co) ~= "dead" do
    if not result[1] then break; end
    result = table.pack(coroutine.resume(co, table.unpack(result, 2, result.n)));
  end
  if not result[1] then error(result[2], 0); end
  return table.unpack(result, 2, result.n);
end

describe("a yield gopher-lua cannot make", function()
  local BOUNDARY = "attempt to yield across metamethod/C%-call boundary"; -- a pattern

  -- A Go function called by Go (here tostring as the __index of a value whose __tostring
  -- yields) calls Lua at once.
  local function yieldsUnderGo()
    return setmetatable({}, {
      __tostring = function() return coroutine.yield("x"); end,
      __index = tostring,
    });
  end

  it("is refused under a Go function that calls Lua, with the yield's position", function()
    local value = yieldsUnderGo();
    expect.error(echo, function() return value.key; end)
      :str_match("^[^:]+:%d+: " .. BOUNDARY .. "$");
    -- a Go function as the metamethod is called from Go too
    local index = setmetatable({}, { __index = coroutine.yield });
    expect.error(echo, function() return index.foo; end):str_match(BOUNDARY);
  end);

  it("leaves the coroutine and the computer working", function()
    local value = yieldsUnderGo();
    local co = coroutine.create(function()
      local ok, err = pcall(function() return value.key; end);
      local after = coroutine.yield(ok, err);
      return after * 2;
    end);
    local ok, caught, err = coroutine.resume(co);
    expect(ok):eq(true);
    expect(caught):eq(false);
    expect(err):str_match(BOUNDARY);
    expect({ coroutine.resume(co, 21) }):same({ true, 42 });
    expect(coroutine.status(co)):eq("dead");
  end);

  it("is still allowed through plain calls, pcall and __call", function()
    local callable = setmetatable({}, { __call = function(_, x) return coroutine.yield(x) + 1; end });
    expect(echo(function()
      local ok, value = pcall(function() return callable(1); end);
      return ok, value;
    end)):eq(true);
    expect(select(2, echo(function() return pcall(callable, 4); end))):eq(5);
  end);
end);

-- A Lua metamethod runs as a frame of the VM's loop, whose return finishes the instruction
-- that needed it (third_party/gopher-lua): a yield in it suspends the coroutine, and the
-- resume carries on with that instruction. Each metamethod below yields its operands and
-- computes on what the resume hands back.
describe("a metamethod", function()
  local meta = {};
  local function new(v) return setmetatable({ v = v }, meta); end
  local function value(x) if type(x) == "table" then return x.v; end return x; end
  meta.__add = function(a, b) local x, y = coroutine.yield(a, b); return new(x.v + y.v); end
  meta.__mod = function(a, b) local x, y = coroutine.yield(a, b); return new(x.v % y.v); end
  meta.__unm = function(a) return new(-coroutine.yield(a).v); end
  meta.__len = function(a) return coroutine.yield(a).v * 10; end
  meta.__eq = function(a, b) local x, y = coroutine.yield(a, b); return x.v == y.v; end
  meta.__lt = function(a, b) local x, y = coroutine.yield(a, b); return x.v < y.v; end
  meta.__concat = function(a, b) local x, y = coroutine.yield(a, b); return new(value(x) .. value(y)); end

  it("may yield in arithmetic, unary minus and #", function()
    local a, b = new(7), new(3);
    expect(echo(function() return (a + b).v, (a % b).v, (-a).v, #b; end)):eq(10);
    expect({ echo(function() return (a + b).v, (a % b).v, (-a).v, #b; end) }):same({ 10, 1, -7, 30 });
  end);

  it("may yield in comparisons, with <= through __lt when there is no __le", function()
    local a, b, a2 = new(2), new(3), new(2);
    expect({ echo(function()
      return a == b, a == a2, a ~= a2, a < b, b < a, a <= b, b <= a, a <= a2, a > b;
    end) }):same({ false, true, false, true, false, true, false, true, false });
    expect(echo(function() if b < a then return "jumped wrong"; end return "ok"; end)):eq("ok");
  end);

  it("may yield in a concatenation of many operands", function()
    local b = new("3");
    expect(echo(function() return (b .. b .. b .. b .. b).v; end)):eq("33333");
    expect(echo(function() local s = "s"; return ("a" .. s .. b .. 1 .. "c" .. b).v; end)):eq("as31c3");
  end);

  it("may yield in __index and __newindex, through a chain of tables, and in a method call", function()
    local fallback = setmetatable({}, { __index = function(_, key) return coroutine.yield(key):upper(); end });
    local t = setmetatable({ here = "h" }, { __index = fallback });
    expect({ echo(function() local k = "ke"; return t.here, t.hello, t[k .. "y"]; end) })
      :same({ "h", "HELLO", "KEY" });
    local store = {};
    local sink = setmetatable({}, { __newindex = function(_, key, v)
      local rKey, rVal = coroutine.yield(key, v);
      store[rKey] = rVal .. "!";
    end });
    echo(function() sink.a = "x"; local k = "b"; sink[k] = "y"; end);
    expect(store):same({ a = "x!", b = "y!" });
    expect(rawget(sink, "a")):eq(nil);
    local obj = setmetatable({}, { __index = function(_, key)
      local name = coroutine.yield(key);
      return function(self, x) return name .. x; end
    end });
    expect(echo(function() return obj:greet("!"); end)):eq("greet!");
  end);

  it("keeps its errors' positions after a yield", function()
    local bad = setmetatable({}, { __add = function()
      coroutine.yield();
      error("no sum", 2);
    end });
    local line = debug.getinfo(1, "l").currentline + 1;
    expect.error(echo, function() return bad + 1; end):eq(("%s:%d: no sum"):format(debug.getinfo(1, "S").short_src, line));
  end);
end);

describe("callbacks of library functions", function()
  it("may yield in table.foreach and table.foreachi, which stop at a non-nil result", function()
    local seen = {};
    echo(function()
      table.foreachi({ "a", "b" }, function(i, v) seen[#seen + 1] = coroutine.yield(i .. v); end);
    end);
    expect(seen):same({ "1a", "2b" });
    local keys = 0;
    expect(echo(function()
      return table.foreach({ x = 1, y = 2 }, function(k) keys = keys + coroutine.yield(1); end);
    end)):eq(nil);
    expect(keys):eq(2);
    expect(table.foreachi({ 5, 6, 7 }, function(i, v) if v == 6 then return i; end end)):eq(2);
    expect.error(table.foreach, {}):eq("bad argument (function expected, got nil)");
  end);

  it("may yield in a table.sort comparator", function()
    local t = { 32, 2, 4, 13, 8, 1 };
    echo(function()
      table.sort(t, function(a, b) return coroutine.yield(a) < coroutine.yield(b); end);
    end);
    expect(t):same({ 1, 2, 4, 8, 13, 32 });
  end);

  it("may yield in the __lt of what table.sort compares", function()
    local meta = { __lt = function(a, b) coroutine.yield(); return a.x < b.x; end };
    local t = {};
    for i, x in ipairs({ 5, 3, 9, 1 }) do t[i] = setmetatable({ x = x }, meta); end
    echo(function() table.sort(t); end);
    expect({ t[1].x, t[2].x, t[3].x, t[4].x }):same({ 1, 3, 5, 9 });
    expect.error(table.sort, { {}, {} }):eq("attempt to compare two table values");
    expect.error(table.sort, { {}, true }):eq("attempt to compare table with boolean");
  end);

  -- A proxy table whose __len, __index and __newindex each yield what they read or write
  -- and use what the resume hands back.
  local function yieldingProxy(store)
    return setmetatable({}, {
      __len = function() return coroutine.yield(#store); end,
      __index = function(_, k) return coroutine.yield(store[k]); end,
      __newindex = function(_, k, v) store[k] = coroutine.yield(v); end,
    });
  end

  it("may yield in the metamethods table.concat and unpack follow", function()
    local proxy = yieldingProxy({ "a", 2, "c" });
    expect(echo(function() return table.concat(proxy, ","); end)):eq("a,2,c");
    expect(echo(function() return table.concat(proxy, "", 2, 3); end)):eq("2c");
    expect({ echo(function() return unpack(proxy); end) }):same({ "a", 2, "c" });
    expect({ echo(function() return table.unpack(proxy, 2); end) }):same({ 2, "c" });
    expect({ echo(function() return table.unpack(proxy, 3, 4); end) }):same({ "c", nil });
    expect.error(echo, function() return table.concat(yieldingProxy({ "a", {} })); end)
      :str_match("^[^:]+:%d+: bad argument %(string expected, got table%)$");
  end);

  it("may yield in the metamethods table.insert and table.remove follow", function()
    local store = { "a", "b" };
    local proxy = yieldingProxy(store);
    echo(function() table.insert(proxy, "c"); table.insert(proxy, 1, "z"); end);
    expect(store):same({ "z", "a", "b", "c" });
    expect({ echo(function() return table.remove(proxy), table.remove(proxy, 1); end) }):same({ "c", "z" });
    expect(store):same({ "a", "b" });
    expect.error(echo, function() table.insert(proxy, 1, 2, 3); end)
      :str_match('^[^:]+:%d+: wrong number of arguments to "insert"$');
  end);

  -- Cobalt 0.9's table.sort is a heapsort (TableLib.Sort), run from its source: elements a
  -- comparator holds equal end in its order, and no comparator is refused.
  it("sorts as Cobalt's heapsort with a comparator, ties and a comparator always true included", function()
    local t = {};
    for i = 1, 200 do t[i] = (i * 7919) % 101; end
    local copy = { table.unpack(t) };
    table.sort(t, function(a, b) return a > b; end);
    table.sort(copy);
    for i = 1, 200 do expect(t[i]):eq(copy[201 - i]); end
    local records, calls = {}, 0;
    for i = 1, 20 do records[i] = { key = (i * 7) % 4, name = string.char(96 + i) }; end
    table.sort(records, function(a, b) calls = calls + 1; return a.key < b.key; end);
    for i, r in ipairs(records) do records[i] = r.key .. r.name; end
    expect(table.concat(records, " ")):eq("0d 0h 0p 0t 0l 1c 1o 1g 1s 1k 2n 2f 2j 2r 2b 3m 3e 3i 3q 3a");
    expect(calls):eq(99);
    local numbers = {};
    for i = 1, 50 do numbers[i] = i; end
    table.sort(numbers, function() return true; end);
    expect(table.concat(numbers, ",")):eq("39,47,23,35,27,19,43,11,50,13,33,29,17,37,9,41,21,45,5,49,25,26,6,28,14,32,30,16,34,8,36,18,38,4,40,20,42,10,44,22,46,2,48,24,12,1,3,7,15,31");
    expect.error(table.sort, {}, 1):eq("bad argument (function expected, got number)");
    -- The heapsort's comparison fails in the Lua stand-in: placed at the caller.
    ok, err = pcall(function() table.sort({ 1, "x" }); end);
    expect(err):str_match("^%.%.%.[^:]+:%d+: attempt to compare");
  end);

  -- With no comparator too, Cobalt's heapsort compares what is not numbers alone or strings
  -- alone: a mix fails at its first pair, the table left as far as it got; NaN and a proxy's
  -- __len, __index and __newindex go its way. Compared with Cobalt run from its source.
  it("sorts a mix with no comparator as Cobalt's heapsort, failing at its pair", function()
    expect.error(table.sort, { "a", 1 }):str_match("attempt to compare string with number$");
    expect.error(table.sort, { 1, "a" }):str_match("attempt to compare number with string$");
    expect.error(table.sort, { 3, 2, {}, 1 }):str_match("attempt to compare number with table$");
    expect.error(table.sort, { 3, 2, true, 1 }):str_match("attempt to compare number with boolean$");
    local t = {};
    for i = 1, 20 do t[i] = i % 3 == 0 and tostring(i) or i; end
    expect.error(table.sort, t):str_match("attempt to compare string with number$");
    expect(table.concat(t, " ")):eq("1 2 3 4 5 6 7 8 9 20 11 12 13 14 15 16 17 18 19 10");
    local ok, err = pcall(function() table.sort({ 2, 1, "x" }); end);
    expect(ok):eq(false);
    expect(err):str_match("^%.%.%.[^:]+:%d+: attempt to compare number with string$");
    t = { 5, 0 / 0, 3, 1, 0 / 0, 2, 4 };
    table.sort(t);
    for i = 1, #t do t[i] = tostring(t[i]); end
    expect(table.concat(t, " ")):eq("nan 4 1 nan 2 3 5");
    local sets = {};
    local proxy = setmetatable({}, {
      __len = function() return 3; end,
      __index = function(_, i) return ({ 3, 1, 2 })[i]; end,
      __newindex = function(_, i, v) sets[#sets + 1] = i .. "=" .. v; end,
    });
    table.sort(proxy);
    expect(table.concat(sets, " ")):eq("3=3 1=2 2=3 1=1");
  end);

  it("keeps string.gsub's errors where a yield cannot be made", function()
    -- Under a Go function called by Go (here __tostring under tostring as an __index) the
    -- replacement still cannot yield.
    local value = setmetatable({}, {
      __tostring = function() return (("ab"):gsub("%w", function(c) return coroutine.yield(c); end)); end,
      __index = tostring,
    });
    expect.error(echo, function() return value.key; end)
      :str_match("attempt to yield across metamethod/C%-call boundary");
    expect.error(string.gsub, "x", "x", "%"):eq("invalid use of '%' in replacement string");
  end);
end);

describe("a __tostring metamethod", function()
  local meta = { __tostring = function(self) return coroutine.yield(self.name) .. "!"; end };
  local function new(name) return setmetatable({ name = name }, meta); end

  it("may yield under tostring, and tostring returns what it returns", function()
    expect(echo(function() return tostring(new("a")); end)):eq("a!");
    expect(echo(function() local s = tostring(new("b")); return s .. "?"; end)):eq("b!?");
    -- a Go function as the metamethod is called as a Lua one would be
    local yielder = setmetatable({}, { __tostring = coroutine.yield });
    local co = coroutine.create(function() return tostring(yielder); end);
    expect({ coroutine.resume(co) }):same({ true, yielder });
    expect({ coroutine.resume(co, "text") }):same({ true, "text" });
  end);

  it("may yield under string.format's %s, each in turn, with the other directives in place", function()
    local order = {};
    local function record(name) order[#order + 1] = name; return name; end
    local text = echo(function()
      return ("[%5s|%-4s|%d|%s|%.1s|%q]"):format(new(record("x")), new(record("y")), 3, new("z"), new("w"), "q");
    end);
    expect(text):eq('[   x!|y!  |3|z!|w|"q"]');
    expect(order):same({ "x", "y" });
  end);

  it("keeps tostring's results and string.format's errors and their positions", function()
    local line = debug.getinfo(1, "l").currentline + 4;
    local where = debug.getinfo(1, "S").short_src .. ":";
    local result = {};
    local bad = setmetatable({}, { __tostring = function() coroutine.yield(); return result, 2; end });
    expect({ echo(function() return tostring(bad); end) }):same({ result });
    expect.error(echo, function() return ("%s"):format(bad); end)
      :eq(where .. (line + 1) .. ": '__tostring' must return a string");
    expect.error(echo, function() return ("%s %d"):format(new("x"), bad); end)
      :eq(where .. (line + 3) .. ": bad argument (number expected, got table)");
    expect.error(echo, function() return ("%s %y"):format(new("x")); end)
      :eq(where .. (line + 5) .. ": invalid conversion '%y' to 'format'");
    expect.error(echo, function() return ("%s %d"):format(new("x"), 2^70); end)
      :eq(where .. (line + 7) .. ": bad argument #3 (not a number in proper range)");
  end);
end);

describe("load's reader function", function()
  it("may yield, and load compiles all it read", function()
    local parts, i = { "return ", "1 + ", "2", "" }, 0;
    local f = echo(function()
      return load(function() i = i + 1; return coroutine.yield(parts[i]); end, "=yielded");
    end);
    expect(f()):eq(3);
    expect(debug.getinfo(f, "S").source):eq("=yielded");
    expect(i):eq(4);
  end);

  it("keeps load's answers to what the reader returns", function()
    expect({ echo(function() return load(function() coroutine.yield(); return {}; end); end) })
      :same({ nil, "reader function must return a string" });
    local pieces, i = { "return ", 1, "" }, 0;
    local one = echo(function() return load(function() i = i + 1; return coroutine.yield(pieces[i]); end); end);
    expect(one()):eq(1);
    local f = echo(function() return load(function() return coroutine.yield(nil); end); end);
    expect(debug.getinfo(f, "S").source):eq("=(load)");
  end);
end);

describe("a string.gsub replacement function", function()
  it("may yield, and gsub goes on with what resumed it", function()
    local text, n = echo(function()
      return ("hello world"):gsub("%w+", function(word) return coroutine.yield(word):upper(); end);
    end);
    expect({ text, n }):same({ "HELLO WORLD", 2 });
    local yields = {};
    local co = coroutine.create(function()
      local a, b = ("a1b2"):gsub("(%a)(%d)", function(l, d) return coroutine.yield(l, d) and d .. l; end, 1);
      return a, b, "after";
    end);
    expect({ coroutine.resume(co) }):same({ true, "a", "1" });
    expect(coroutine.status(co)):eq("suspended");
    expect({ coroutine.resume(co, true) }):same({ true, "1ab2", 1, "after" });
    expect(coroutine.status(co)):eq("dead");
  end);

  it("may wait for events", function()
    local got = ("ab"):gsub("%a", function(c)
      os.queueEvent("gsub_spec", c:upper());
      local _, up = os.pullEvent("gsub_spec");
      return up;
    end);
    expect(got):eq("AB");
  end);

  it("keeps gsub's rules for what the function answers, before and after a yield", function()
    expect(echo(function()
      return (("abc"):gsub("%a", function(c)
        coroutine.yield();
        if c == "b" then return false; end
        if c == "c" then return 7; end
      end));
    end)):eq("ab7");
    expect.error(echo, function()
      return ("ab"):gsub("%a", function(c) coroutine.yield(); return {}; end);
    end):str_match("^[^:]+:%d+: invalid replacement value %(a table%)$");
  end);

  it("raises an error after a yield in the coroutine, where pcall catches it", function()
    local ok, err = echo(function()
      return pcall(function()
        return ("ab"):gsub("%a", function(c)
          coroutine.yield();
          error("no " .. c, 0);
        end);
      end);
    end);
    expect({ ok, err }):same({ false, "no a" });
    local co = coroutine.create(function()
      return ("ab"):gsub("%a", function() coroutine.yield(); error("boom", 0); end);
    end);
    coroutine.resume(co);
    expect({ coroutine.resume(co) }):same({ false, "boom" });
    expect(coroutine.status(co)):eq("dead");
    expect({ coroutine.resume(co) }):same({ false, "cannot resume dead coroutine" });
  end);

  -- Cobalt's LuaThread.resume names the coroutine's status (run from its source).
  it("says which coroutine cannot be resumed as Cobalt does", function()
    local co;
    co = coroutine.create(function()
      local running = { coroutine.resume(co) };
      local child = coroutine.create(function() return coroutine.resume(co); end);
      return running, { select(2, coroutine.resume(child)) };
    end);
    local _, running, normal = coroutine.resume(co);
    expect(running):same({ false, "cannot resume running coroutine" });
    expect(normal):same({ false, "cannot resume normal coroutine" });
    expect({ coroutine.resume(co) }):same({ false, "cannot resume dead coroutine" });
    -- coroutine.wrap's function raises its refusal at its caller's line, as Cobalt places a
    -- Java function's error; an error inside the coroutine passes as it was raised.
    local w = coroutine.wrap(function() end);
    w();
    local line = debug.getinfo(1, "l").currentline + 1;
    local ok, err = pcall(function() w(); end);
    expect(ok):eq(false);
    expect(err):eq(debug.getinfo(1, "S").short_src .. ":" .. line .. ": cannot resume dead coroutine");
    expect(select(2, pcall(coroutine.wrap(function() error("inner", 0); end)))):eq("inner");
  end);

  -- Cobalt's wrap is a Java function, whose error (LuaError without a level) is placed at
  -- the Lua code nearest on the stack: under pcall(w), the line that called pcall, and in
  -- a coroutine the line running there (Cobalt 0.9.3, run from its source).
  it("places coroutine.wrap's refusals at the Lua code nearest, under a direct pcall too", function()
    local src = debug.getinfo(1, "S").short_src;
    local function at(line, msg) return src .. ":" .. line .. ": " .. msg; end
    local w = coroutine.wrap(function() end);
    w();
    local line = debug.getinfo(1, "l").currentline + 1;
    local _, dead = pcall(w); local _, dead_args = pcall(w, 1, 2);
    expect(dead):eq(at(line, "cannot resume dead coroutine"));
    expect(dead_args):eq(at(line, "cannot resume dead coroutine"));
    local _, no_function = pcall(coroutine.wrap); line = debug.getinfo(1, "l").currentline;
    expect(no_function):eq(at(line, "bad argument (function expected, got nil)"));
    local co = coroutine.create(function()
      return debug.getinfo(1, "l").currentline, pcall(w);
    end);
    local _, co_line, ok, err = coroutine.resume(co);
    expect({ ok, err }):same({ false, at(co_line, "cannot resume dead coroutine") });
    local again;
    again = coroutine.wrap(function()
      return debug.getinfo(1, "l").currentline, pcall(again);
    end);
    local again_line, again_ok, again_err = again();
    expect({ again_ok, again_err }):same({ false, at(again_line, "cannot resume running coroutine") });
    -- A traceback shows it as Cobalt's Java function, with no code of fakecraft's.
    expect(select(2, xpcall(w, debug.traceback))):str_match("^" .. src:gsub("%p", "%%%0")
      .. ":%d+: cannot resume dead coroutine\nstack traceback:\n\t%[C%]: in %?\n\t%[C%]: in function 'xpcall'\n");
  end);

  -- In CC the function runs on the stack of gsub's coroutine, which is the one running
  -- (Cobalt 0.9.4, run from its source); fakecraft's helper coroutine is not seen.
  it("nests, and the coroutine is not resumable while its function runs", function()
    local co;
    co = coroutine.create(function()
      return ("ab"):gsub("%a", function(c)
        expect(coroutine.running()):eq(co);
        expect(coroutine.status(co)):eq("running");
        expect({ coroutine.resume(co) }):same({ false, "cannot resume running coroutine" });
        local inner = coroutine.create(function() return coroutine.status(co); end);
        expect({ coroutine.resume(inner) }):same({ true, "normal" });
        return (c:rep(2):gsub("%a", function(d) return coroutine.yield(d):upper(); end));
      end);
    end);
    local result = table.pack(coroutine.resume(co));
    while coroutine.status(co) ~= "dead" do
      result = table.pack(coroutine.resume(co, result[2]));
    end
    expect({ result[1], result[2], result[3] }):same({ true, "AABB", 2 });
    for _ = 1, 50 do -- the helper coroutines are reused
      expect(echo(function() return (("xy"):gsub("%a", coroutine.yield)); end)):eq("xy");
    end
  end);
end);

-- fakecraft's pcall runs its function in a coroutine of its own (cfuncs.lua); CC's runs it
-- on the caller's stack, so the caller's coroutine is the one running there, and so on
-- through pcalls, xpcall's handler and yields (Cobalt 0.9.4, run from its source).
describe("the coroutine running under pcall", function()
  it("is the one that called pcall, and running", function()
    local co, seen;
    co = coroutine.create(function()
      local ok, err = pcall(function()
        local running, main = coroutine.running();
        seen = { running == co, main, coroutine.status(co), coroutine.resume(co) };
        expect(select(3, pcall(pcall, coroutine.running))):eq(co);
        expect(select(2, xpcall(error, function() return coroutine.running(); end))):eq(co);
        coroutine.yield("waits");
        expect(coroutine.running()):eq(co);
        expect(coroutine.status(co)):eq("running");
      end);
      if not ok then error(err, 0); end
      return "done";
    end);
    expect({ coroutine.resume(co) }):same({ true, "waits" });
    expect(seen):same({ true, false, "running", false, "cannot resume running coroutine" });
    expect({ coroutine.resume(co) }):same({ true, "done" });
  end);

  it("is normal to a coroutine it resumes, however deep", function()
    local co;
    co = coroutine.create(function()
      return pcall(function()
        local inner = coroutine.create(function()
          local innermost = coroutine.create(function()
            return coroutine.status(co), coroutine.resume(co);
          end);
          return coroutine.resume(innermost);
        end);
        return coroutine.resume(inner);
      end);
    end);
    expect({ coroutine.resume(co) })
      :same({ true, true, true, true, "normal", false, "cannot resume normal coroutine" });
  end);

  it("refuses a coroutine.wrap function called again inside its own pcall", function()
    local wrapped;
    wrapped = coroutine.wrap(function()
      local ok, err = pcall(function() wrapped(); end);
      return ok, err;
    end);
    local ok, err = wrapped();
    expect(ok):eq(false);
    expect(err):str_match("cannot resume running coroutine$");
  end);

  it("is the coroutine a C function body or pcall runs in", function()
    local co = coroutine.create(coroutine.running);
    expect(select(3, pcall(coroutine.resume, co))):eq(co);
    co = coroutine.create(pcall);
    expect(select(3, coroutine.resume(co, coroutine.running))):eq(co);
  end);
end);

describe("a generic for's iterator", function()
  it("may wait for events, as in CC", function()
    for i = 1, 3 do os.queueEvent("forin_spec", i * 10); end
    os.queueEvent("forin_spec"); -- no value: ends the loop
    local function events() local _, v = os.pullEvent("forin_spec"); return v; end
    local got = {};
    for v in events do got[#got + 1] = v; end
    expect(got):same({ 10, 20, 30 });
  end);

  it("may yield under coroutine.wrap", function()
    local consumer = coroutine.wrap(function()
      local seen = {};
      for v in function() return coroutine.yield(#seen); end do seen[#seen + 1] = v; end
      return seen;
    end);
    expect(consumer()):eq(0);
    expect(consumer("a")):eq(1);
    expect(consumer("b")):eq(2);
    expect(consumer(nil)):same({ "a", "b" });
  end);

  it("keeps the loop's meaning: break, fresh variables, the list once", function()
    local calls, fns = 0, {};
    local function upTo(n)
      calls = calls + 1;
      return function(limit, i) if i < limit then return i + 1; end end, n, 0;
    end
    for i in upTo(5) do
      if i == 4 then break; end
      fns[#fns + 1] = function() return i; end;
    end
    expect(calls):eq(1);
    expect({ fns[1](), fns[2](), fns[3]() }):same({ 1, 2, 3 });
    local rounds = 0;
    for i in upTo(3) do
      rounds = rounds + 1;
      i = 100; -- does not move the iteration
    end
    expect(rounds):eq(3);
    local total = 0;
    for _, v in ipairs({ 1, 2, 3 }) do total = total + v; end
    for _, v in pairs({ a = 4 }) do total = total + v; end
    expect(total):eq(10);
  end);

  it("says when the iterator cannot be called", function()
    local ok, err = pcall(function() for _ in nil do end end);
    expect(ok):eq(false);
    expect(err):str_match("^[^:]+:%d+: attempt to call");
  end);
end);

describe("xpcall", function()
  it("answers an error in the handler with Lua's message", function()
    expect({ xpcall(error, function(m) error(m); end, "x") })
      :same({ false, "error in error handling" });
    expect({ xpcall(error, function(m) return m .. "!", "more"; end, "x", 0) })
      :same({ false, "x!" });
  end);

  it("lets the handler yield", function()
    local ok, err = echo(function()
      return xpcall(function() error("boom", 0); end, function(m) return coroutine.yield(m) .. "!"; end);
    end);
    expect({ ok, err }):same({ false, "boom!" });
  end);

  -- Cobalt's ProtectedCall runs the handler over the frames of the error, before they are
  -- unwound, also when the function yielded first or the handler yields.
  it("runs the handler over the frames of the error, across yields", function()
    local line = debug.getinfo(1, "l").currentline;
    local function fail() coroutine.yield("f"); error("late", 0); end
    local ok, err = echo(function()
      return xpcall(function() fail(); end, function(m)
        local before = debug.getinfo(3, "l").currentline;
        coroutine.yield("h");
        return m .. ":" .. before .. ":" .. debug.getinfo(3, "l").currentline;
      end);
    end);
    expect({ ok, err }):same({ false, ("late:%d:%d"):format(line + 1, line + 1) });
  end);

  -- as pcall places it (debug_spec.lua's "an error the VM raises in a stand-in for C")
  it("hands the handler an error the VM raised in a C function xpcall called, placed at xpcall's line", function()
    local broken = setmetatable({}, { __len = function() return 1; end, __index = setmetatable({}, { __index = 5 }) });
    local line = debug.getinfo(1, "l").currentline;
    local _, err = xpcall(table.concat, function(m) return m; end, broken);
    expect(err):eq(("%s:%d: attempt to index a number value"):format(debug.getinfo(1, "S").short_src, line + 1));
  end);

  -- Cobalt's load calls its reader under the running thread's error function: xpcall's,
  -- none under a pcall, so a reader's error under xpcall is the handler's result.
  it("hands a load reader's error to the handler, as Cobalt does", function()
    local function handler(m) return "h:" .. m; end
    local function failing() error("r", 0); end
    expect({ xpcall(function() return load(failing); end, handler) }):same({ true, nil, "h:r" });
    expect({ xpcall(function() return pcall(load, failing); end, handler) }):same({ true, true, nil, "r" });
    expect({ load(failing) }):same({ nil, "r" });
  end);
end);

-- CC's coroutine runs a Java function as its body as it runs a Lua one (Cobalt's
-- LuaThread); gopher-lua neither ended such a coroutine (it stayed running, resume answered
-- nothing) nor resumed one that had yielded. fakecraft runs it in pcall's stand-in body.
describe("a coroutine whose body is a C function", function()
  it("returns its results and dies", function()
    local co = coroutine.create(math.max);
    expect({ coroutine.resume(co, 3, 4) }):same({ true, 4 });
    expect(coroutine.status(co)):eq("dead");
    expect({ coroutine.resume(co) }):same({ false, "cannot resume dead coroutine" });
    expect({ coroutine.resume(coroutine.create(os.getComputerID)) }):same({ true, os.getComputerID() });
    expect({ coroutine.resume(coroutine.create(select), "#", 1, nil) }):same({ true, 2 });
  end);

  it("is running while it runs", function()
    local co = coroutine.create(coroutine.status);
    expect({ coroutine.resume(co, co) }):same({ true, "running" });
    co = coroutine.create(coroutine.running);
    expect({ coroutine.resume(co) }):same({ true, co, false });
  end);

  it("yields, and returns what resumed it", function()
    local co = coroutine.create(coroutine.yield);
    expect({ coroutine.resume(co, 1, 2) }):same({ true, 1, 2 });
    expect(coroutine.status(co)):eq("suspended");
    expect({ coroutine.resume(co, 3, 4) }):same({ true, 3, 4 });
    expect(coroutine.status(co)):eq("dead");
    -- os.pullEvent is Lua in CC as here; pcall's function may yield inside it
    co = coroutine.create(os.pullEvent);
    expect({ coroutine.resume(co, "x") }):same({ true, "x" });
    expect({ coroutine.resume(co, "x", 1) }):same({ true, "x", 1 });
    co = coroutine.create(pcall);
    expect({ coroutine.resume(co, coroutine.yield, "y") }):same({ true, "y" });
    expect({ coroutine.resume(co, "z") }):same({ true, true, "z" });
  end);

  it("lets the Lua code it calls yield", function()
    local value = setmetatable({}, { __tostring = function() return "got " .. coroutine.yield("in"); end });
    local co = coroutine.create(tostring);
    expect({ coroutine.resume(co, value) }):same({ true, "in" });
    expect({ coroutine.resume(co, "back") }):same({ true, "got back" });
  end);

  it("dies of its error, which has no position, as no Lua code raised it", function()
    expect({ coroutine.resume(coroutine.create(error), "boom") }):same({ false, "boom" });
    expect({ coroutine.resume(coroutine.create(error), "boom", 2) }):same({ false, "boom" });
    local object = {};
    expect({ coroutine.resume(coroutine.create(error), object) }):same({ false, object });
    expect({ coroutine.resume(coroutine.create(assert), false, "nope") }):same({ false, "nope" });
    local ok, err = coroutine.resume(coroutine.create(string.rep));
    expect(ok):eq(false);
    expect(err):str_match("^bad argument");
    -- Lua code it calls places its own
    local function compare() error("cmp"); end
    local line = debug.getinfo(compare, "S").linedefined;
    expect({ coroutine.resume(coroutine.create(table.sort), { 2, 1 }, compare) })
      :same({ false, ("%s:%d: cmp"):format(debug.getinfo(1, "S").short_src, line) });
  end);

  -- pairs, table.sort and table.foreach are Lua stand-ins here (cfuncs.lua): an error the VM
  -- raised in one kept the stand-in's position ("[C]:111: attempt to call a number value").
  it("dies of the VM's error in a Lua stand-in for C without its position", function()
    expect({ coroutine.resume(coroutine.create(pairs), setmetatable({}, { __pairs = 5 })) })
      :same({ false, "attempt to call a number value" });
    expect({ coroutine.resume(coroutine.create(table.foreach), { 1 }, {}) })
      :same({ false, "bad argument (function expected, got table)" });
    expect({ coroutine.resume(coroutine.create(table.sort), { 2, 1 }, 5) })
      :same({ false, "bad argument (function expected, got number)" });
    expect({ coroutine.resume(coroutine.create(pcall)) }):same({ false, "bad argument #1 (value expected)" });
    -- still placed at the caller under pcall, as Cobalt places it at the nearest Lua code
    local ok, err = pcall(pairs, setmetatable({}, { __pairs = 5 }));
    expect({ ok, err }):same({ false, ("%s:%d: attempt to call a number value"):format(
      debug.getinfo(1, "S").short_src, debug.getinfo(1, "l").currentline - 2) });
  end);
end);
