package lua

import (
	"fmt"
	"strings"
	"testing"
)

// echoPrelude defines echo(f): it runs f in a coroutine and resumes it with whatever it
// yielded, until it ends, and returns its results and how many yields it made. A metamethod
// that yields its operands and computes on what the resume hands back gives the right answer
// only if the VM carried on with the interrupted instruction after the resume.
const echoPrelude = `
function echo(f, ...)
	local co = coroutine.create(f)
	local yields = 0
	local res = { coroutine.resume(co, ...) }
	while coroutine.status(co) ~= "dead" do
		yields = yields + 1
		res = { coroutine.resume(co, unpack(res, 2)) }
	end
	if not res[1] then error(res[2], 0) end
	return yields, unpack(res, 2)
end
function check(want, got, what)
	if want ~= got then error(what .. ": want " .. tostring(want) .. ", got " .. tostring(got), 2) end
end
`

func runYieldScript(t *testing.T, script string) {
	t.Helper()
	L := NewState()
	defer L.Close()
	if err := L.DoString(echoPrelude + script); err != nil {
		t.Fatal(err)
	}
}

func TestYieldInArithmeticMetamethods(t *testing.T) {
	runYieldScript(t, `
	local mt = {}
	local function new(v) return setmetatable({ v = v }, mt) end
	mt.__add = function(a, b) local x, y = coroutine.yield(a, b) return new(x.v + y.v) end
	mt.__sub = function(a, b) local x, y = coroutine.yield(a, b) return new(x.v - y.v) end
	mt.__div = function(a, b) local x, y = coroutine.yield(a, b) return new(x.v / y.v) end
	mt.__unm = function(a) local x = coroutine.yield(a) return new(-x.v) end
	mt.__len = function(a) local x = coroutine.yield(a) return x.v * 10 end
	local a, b = new(2), new(3)
	local n, r = echo(function()
		local s = (a + b).v + (b - a).v + (a / b).v * 3 + (-a).v + #b
		return s
	end)
	check(5, n, "yields")
	check(5 + 1 + 2 - 2 + 30, r, "result")
	-- a register below others still live: the result lands in its own register only
	n, r = echo(function()
		local x, y, z = 1, a, 3
		x = y + b
		return x.v * 100 + z
	end)
	check(1, n, "yields")
	check(503, r, "result")
	-- a metamethod that tail-calls yield
	mt.__mul = function(p, q) return coroutine.yield(new(p.v * q.v)) end
	n, r = echo(function() return (a * b).v end)
	check(1, n, "yields")
	check(6, r, "tail call")
`)
}

func TestYieldInIndexMetamethods(t *testing.T) {
	runYieldScript(t, `
	local fallback = setmetatable({}, { __index = function(tbl, key)
		return coroutine.yield(key):upper()
	end })
	-- a table's __index table whose own __index is a function
	local t = setmetatable({ here = "h" }, { __index = fallback })
	local n, r1, r2, r3 = echo(function()
		local k = "dyn"
		return t.here, t.hello, t[k .. "amic"]
	end)
	check(2, n, "yields")
	check("h", r1, "raw field")
	check("HELLO", r2, "string key")
	check("DYNAMIC", r3, "value key")
	-- a method call through __index
	local obj = setmetatable({}, { __index = function(tbl, key)
		local name = coroutine.yield(key)
		return function(self, x) return name .. x .. tostring(self == tbl) end
	end })
	n, r1 = echo(function() return obj:greet("!") end)
	check(1, n, "yields")
	check("greet!true", r1, "self")
	-- a global through a function environment's __index
	local env = setmetatable({}, { __index = function(_, key) return coroutine.yield(key) .. "?" end })
	local f = setfenv(function() return missing end, env)
	n, r1 = echo(f)
	check(1, n, "yields")
	check("missing?", r1, "global")
`)
}

func TestYieldInNewindexMetamethods(t *testing.T) {
	runYieldScript(t, `
	local store = {}
	local t = setmetatable({}, { __newindex = function(tbl, key, val)
		local k, v = coroutine.yield(key, val)
		rawset(store, k, v .. "!")
	end })
	local env = setmetatable({}, { __newindex = function(_, key, val)
		rawset(store, coroutine.yield(key), val)
	end })
	local n = echo(function()
		local key = "b"
		t.a = "x"
		t[key] = "y"
		setfenv(1, env)
		g = "z"
	end)
	check(3, n, "yields")
	check("x!", store.a, "string key")
	check("y!", store.b, "value key")
	check("z", store.g, "global")
	check(nil, rawget(t, "a"), "raw")
`)
}

func TestYieldInComparisonMetamethods(t *testing.T) {
	runYieldScript(t, `
	local mt = {}
	local function new(v) return setmetatable({ v = v }, mt) end
	mt.__eq = function(a, b) local x, y = coroutine.yield(a, b) return x.v == y.v end
	mt.__lt = function(a, b) local x, y = coroutine.yield(a, b) return x.v < y.v end
	local a, b, a2 = new(2), new(3), new(2)
	local n, r = echo(function()
		local out = {}
		out[#out + 1] = tostring(a == b) .. tostring(a == a2) .. tostring(a ~= a2) .. tostring(a == a)
		out[#out + 1] = tostring(a < b) .. tostring(b < a) .. tostring(a < a2)
		-- <= with no __le: not (b < a), as Lua 5.1 does
		out[#out + 1] = tostring(a <= b) .. tostring(b <= a) .. tostring(a <= a2)
		out[#out + 1] = tostring(a >= b) .. tostring(b > a)
		if a < b then out[#out + 1] = "jump" end
		while b < a do out[#out + 1] = "never" end
		return table.concat(out, " ")
	end)
	-- a == a compares the same table: no metamethod
	check(3 + 3 + 3 + 2 + 2, n, "yields")
	check("falsetruefalsetrue truefalsefalse truefalsetrue falsetrue jump", r, "results")
	mt.__le = function(a, b) local x, y = coroutine.yield(a, b) return x.v <= y.v + 10 end
	n, r = echo(function() return b <= a end)
	check(1, n, "yields")
	check(true, r, "__le")
`)
}

func TestYieldInConcatMetamethods(t *testing.T) {
	runYieldScript(t, `
	local mt = {}
	local function new(v) return setmetatable({ v = v }, mt) end
	mt.__concat = function(a, b)
		local x, y = coroutine.yield(a, b)
		x = type(x) == "table" and x.v or x
		y = type(y) == "table" and y.v or y
		return new(x .. y)
	end
	local b = new("3")
	local n, r = echo(function() return (b .. b .. b .. b .. b).v end)
	check(4, n, "yields")
	check("33333", r, "five operands")
	n, r = echo(function() local s = "s" return ("a" .. s .. b .. 1 .. "c" .. b .. "d").v end)
	check(6, n, "yields") -- every step has a table on one side
	check("as31c3d", r, "mixed operands")
`)
}

func TestYieldInCallMetamethod(t *testing.T) {
	runYieldScript(t, `
	local callable = setmetatable({}, { __call = function(self, x)
		return coroutine.yield(x) * 2
	end })
	local n, r = echo(function() return callable(21) + 0 end)
	check(1, n, "yields")
	check(42, r, "__call")
`)
}

func TestMetamethodErrorsKeepTheirPlace(t *testing.T) {
	L := NewState()
	defer L.Close()
	err := L.DoString(echoPrelude + `
	local mt = { __add = function(a, b)
		coroutine.yield()
		error("boom")
	end }
	local a = setmetatable({}, mt)
	echo(function() return a + a end)
	`)
	// the prelude's lines, then the error's fourth line
	at := fmt.Sprintf("<string>:%d: boom", strings.Count(echoPrelude, "\n")+4)
	if err == nil || !strings.Contains(err.Error(), at) {
		t.Fatalf("want the error at the metamethod's line, got %v", err)
	}
	err = L.DoString(`local t = setmetatable({}, { __concat = function(a, b) return {} end })
	local x = t .. "a" .. t .. "b"`)
	if err == nil || !strings.Contains(err.Error(), "<string>:2: attempt to concatenate") {
		t.Fatalf("want the concatenation's error at its line, got %v", err)
	}
}

func TestCanYield(t *testing.T) {
	L := NewState()
	defer L.Close()
	L.SetGlobal("canyield", L.NewFunction(func(L *LState) int {
		L.Push(LBool(L.CanYield()))
		return 1
	}))
	L.SetGlobal("gocall", L.NewFunction(func(L *LState) int {
		L.Push(L.Get(1))
		L.Call(0, 1)
		return 1
	}))
	if err := L.DoString(`
	local co = coroutine.wrap(function()
		local t = setmetatable({}, { __index = function() return canyield() end,
			__add = canyield })
		return canyield(), t.x, gocall(canyield), gocall(function() return t.y end), t + t
	end)
	local a, b, c, d, e = co()
	assert(a == true and b == true, "a Lua function and a Lua metamethod may yield")
	assert(c == false and d == false, "under a Go function they may not")
	assert(e == false, "a Go metamethod may not")
	`); err != nil {
		t.Fatal(err)
	}
}

func TestHookEvents(t *testing.T) {
	runYieldScript(t, `
	local log = {}
	local base = debug.getinfo(1, "l").currentline
	local function f(x) return x + 1 end
	local function g(x) return f(x) end -- a tail call
	debug.sethook(function(event, line)
		local info = debug.getinfo(2, "lS")
		local at = info.currentline - base
		if info.what == "G" then
			-- a Go function's own frame, over its caller's at the line calling it
			at = "G" .. debug.getinfo(3, "l").currentline - base
		end
		log[#log + 1] = event .. (line and (":" .. line - base) or "") .. "@" .. at
	end, "crl")
	local y = g(1)
	debug.sethook()
	check(nil, debug.gethook(), "cleared")
	-- sethook's return, the line calling g, g's call and line, f's tail call, line and
	-- return, then the line calling sethook and its call, each seen from the function
	-- running (level 2): sethook's in its own frame
	check("return@G3 line:12@12 call@2 line:2@2 tail call@1 line:1@1 return@1 line:13@13 call@G13",
		table.concat(log, " "), "events")
	check(2, y, "result")
	`)
}

func TestHooksYield(t *testing.T) {
	for _, mask := range []string{"c", "r", "l", ""} {
		t.Run("mask "+mask, func(t *testing.T) {
			runYieldScript(t, `
	local mask = "`+mask+`"
	local seen = {}
	local n, sum, text = echo(function()
		debug.sethook(function(event)
			-- a yield handing back something else would break the check below
			local back = coroutine.yield(event)
			seen[back] = (seen[back] or 0) + 1
			check(event, back, "resumed with")
		end, mask, mask == "" and 1 or 0)
		local sum = 0
		for i = 1, 5 do sum = sum + i end
		local text = string.gsub("xyz", "x", "z")
		debug.sethook()
		return sum, text
	end)
	check(15, sum, "the loop's result")
	check("zyz", text, "a Go function's result")
	local want = ({ c = "call", r = "return", l = "line", [""] = "count" })[mask]
	check(true, (seen[want] or 0) > 0, "events of " .. want)
	local total = 0
	for _, k in pairs(seen) do total = total + k end
	check(n, total, "every yield")
			`)
		})
	}
}

func TestHooksPerCoroutine(t *testing.T) {
	runYieldScript(t, `
	local count = 0
	local function hook() count = count + 1 end
	local co = coroutine.create(function()
		coroutine.yield(debug.gethook())
		for i = 1, 10 do end
	end)
	debug.sethook(co, hook, "", 1)
	local _, h = coroutine.resume(co)
	check(nil, debug.gethook(), "the main thread has none")
	check(hook, h, "the coroutine's own")
	local f, mask, n = debug.gethook(co)
	check(hook, f, "gethook(co)") check("", mask, "mask") check(1, n, "count")
	count = 0
	for i = 1, 10 do end
	check(0, count, "not counted outside the coroutine")
	coroutine.resume(co)
	check(true, count > 10, "counted inside it")
	-- a hook runs with hooks off, and one that fails stops nothing else
	local inner = 0
	debug.sethook(function() inner = inner + 1; for i = 1, 3 do end end, "l")
	local x = 1
	debug.sethook()
	check(true, inner > 0 and inner < 5, "hooks off in the hook: " .. inner)
	`)
}

func TestHookErrorLeavesHooksOn(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString(`
	calls = 0
	fail = false
	debug.sethook(function()
		calls = calls + 1
		if fail then fail = false; error("from the hook") end
	end, "l")`); err != nil {
		t.Fatal(err)
	}
	err := L.DoString("fail = true\nlocal x = 1")
	if err == nil || !strings.Contains(err.Error(), "from the hook") {
		t.Fatalf("want the hook's error, got %v", err)
	}
	before := L.GetGlobal("calls").(LNumber)
	if err := L.DoString("local y = 2\nlocal z = 3"); err != nil {
		t.Fatal(err)
	}
	if after := L.GetGlobal("calls").(LNumber); after <= before {
		t.Fatalf("hooks stayed off after an error in a hook: %v calls, then %v", before, after)
	}
}

func TestHookUnderGoCannotYield(t *testing.T) {
	L := NewState()
	defer L.Close()
	L.SetGlobal("canyield", L.NewFunction(func(L *LState) int {
		L.Push(LBool(L.CanYield()))
		return 1
	}))
	L.SetGlobal("gocall", L.NewFunction(func(L *LState) int {
		L.Push(L.Get(1))
		L.Call(0, 0)
		return 0
	}))
	if err := L.DoString(`
	local seen = {}
	local co = coroutine.wrap(function()
		debug.sethook(function() seen[#seen + 1] = canyield() end, "c")
		local function f() end
		f()
		gocall(f)
		debug.sethook()
	end)
	co()
	-- f's call, gocall's (before the instruction), sethook's; f's under gocall
	assert(seen[1] == true and seen[2] == true, "a hook of Lua code may yield")
	assert(seen[3] == false, "a hook under a Go function may not")
	`); err != nil {
		t.Fatal(err)
	}
}

// TestYieldInForIterator: a generic for's Lua iterator runs as a frame of the loop, so it may
// yield; the step finishes after the resume with what the iterator returned, every loop
// variable (nil-padded), and nested loops, break, a tail call, an error and a Go iterator
// behave as before.
func TestYieldInForIterator(t *testing.T) {
	runYieldScript(t, `
	local function counter(limit)
		return function(_, i)
			i = coroutine.yield(i) + 1 -- echo resumes with what was yielded
			if i <= limit then return i, i * 10 end
		end, nil, 0
	end
	local n, sum, last = echo(function()
		local sum, last = 0, nil
		for i, ten, none in counter(3) do
			check(nil, none, "padded variable")
			sum = sum + i + ten
			for j in counter(2) do sum = sum + j * 1000 end
			last = i
		end
		return sum, last
	end)
	check(4 + 3*3, n, "yields") -- 4 outer steps, 3 inner ones in each of 3 bodies
	check((1 + 2 + 3) * 11 + 3 * 3000, sum, "sum")
	check(3, last, "last")
	`)
	runYieldScript(t, `
	local function tailIter(_, i) if i < 3 then return select(1, i + 1) end end
	local seen = 0
	for i in tailIter, nil, 0 do seen = seen + i end
	check(6, seen, "tail-calling iterator")
	for i in tailIter, nil, 0 do if i == 2 then break end seen = i end
	check(1, seen, "break")
	local ok, err = pcall(function() for _ in function() error("boom", 0) end do end end)
	check(false, ok, "error")
	check("boom", err, "error message")
	local t, keys = { a = 1, b = 2 }, 0
	for _ in next, t do keys = keys + 1 end
	check(2, keys, "Go iterator")
	`)
}

// A Go function's yield in a tail call (`return coroutine.yield(x)`) ends its caller's frame
// only when resumed: upstream let the yield take its caller's place first, so a coroutine
// whose body ended so had no frame left and its resume crashed (a nil dereference).
func TestYieldInTailCall(t *testing.T) {
	runYieldScript(t, `
	local co = coroutine.create(function(x) return coroutine.yield(x) end)
	local ok, v = coroutine.resume(co, 21)
	check(true, ok, "first resume") check(21, v, "yielded")
	local ok2, a, b, c = coroutine.resume(co, 1, 2, 3)
	check(true, ok2, "second resume: " .. tostring(a))
	check(1, a, "1st result") check(2, b, "2nd result") check(3, c, "3rd result")
	check("dead", coroutine.status(co), "status")

	local callable = setmetatable({}, { __call = function(self, x) return coroutine.yield(x) end })
	local n, r = echo(function() return callable(21) end)
	check(1, n, "yields through __call") check(21, r, "__call's tail yield")

	local function inner(x) return coroutine.yield(x) end
	local function outer() local a, b = inner(5) return a * b end
	local w = coroutine.wrap(function() return outer() + 1 end)
	check(5, w(), "wrapped yield")
	check(31, w(5, 6), "resumed into the tail call's caller")
`)
}

// The Go API's Resume of a coroutine whose body ended in a tail-called yield ends it with
// the resumed values, not by running the body again.
func TestResumeAfterTailCallYield(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString(`function body(x) return coroutine.yield(x + 1) end`); err != nil {
		t.Fatal(err)
	}
	co, _ := L.NewThread()
	fn := L.GetGlobal("body").(*LFunction)
	state, err, values := L.Resume(co, fn, LNumber(1))
	if state != ResumeYield || err != nil || len(values) != 1 || values[0] != LNumber(2) {
		t.Fatalf("first resume: %v %v %v", state, err, values)
	}
	state, err, values = L.Resume(co, fn, LString("done"))
	if state != ResumeOK || err != nil || len(values) != 1 || values[0] != LString("done") {
		t.Fatalf("second resume: %v %v %v", state, err, values)
	}
}

// TestGoMetamethodFiresItsHooks: a Go function used as a metamethod fires its call and return
// over a frame of its own, named by the instruction that runs it, as Cobalt's Dispatch fires a
// Java metamethod's: a Go hook at once, a Lua hook as a frame of the loop that may yield,
// after which the instruction finishes with the metamethod's result. One that fails fires no
// return and its error is placed at the instruction; an error in the hook ends the
// instruction. A function hidden from hooks fires nothing.
func TestGoMetamethodFiresItsHooks(t *testing.T) {
	L := NewState()
	defer L.Close()
	var goEvents []string
	L.SetGlobal("gohook", L.NewFunction(func(L *LState) int {
		dbg, _ := L.GetStack(1)
		_, _ = L.GetInfo("S", dbg, LNil)
		name := "?"
		for _, global := range []string{"rawget", "rawequal", "tostring"} {
			if dbg.frame.Fn == L.GetGlobal(global) {
				name = global
			}
		}
		goEvents = append(goEvents, L.CheckString(1)+" "+name+" "+dbg.What)
		return 0
	}))
	hidden := L.NewFunction(func(L *LState) int { return 0 })
	hidden.Hidden = true
	L.SetGlobal("hidden", hidden)
	if err := L.DoString(echoPrelude + `
	local mt = { __index = rawget, __add = rawequal, __concat = tostring, __lt = rawequal }
	local a, b = setmetatable({ x = 1 }, mt), setmetatable({}, mt)
	debug.sethook(gohook, "cr")
	local x, sum, text, less = a.y, a + a, "s" .. a .. "s", a < b
	hidden()
	debug.sethook()
	check(nil, x, "a Go hook: __index's result") check(true, sum, "__add's")
	check(false, less, "__lt's") check("s", text:sub(1, 1), "__concat's")

	local names = { [rawget] = "rawget", [rawequal] = "rawequal", [tostring] = "tostring", [debug.sethook] = "sethook" }
	local seen = {}
	local n, x2, sum2, text2, less2 = echo(function()
		debug.sethook(function(event)
			local info = debug.getinfo(2, "fS")
			if info.what == "G" then seen[#seen + 1] = coroutine.yield(event .. " " .. tostring(names[info.func])) end
		end, "cr")
		local x, sum, text, less = a.y, a + a, "s" .. a .. "s", a < b
		hidden()
		debug.sethook()
		return x, sum, text, less
	end)
	check(nil, x2, "a Lua hook that yields: __index's result") check(true, sum2, "__add's")
	check(false, less2, "__lt's") check("s", text2:sub(1, 1), "__concat's")
	check("return sethook,call rawget,return rawget,call rawequal,return rawequal,call tostring,return tostring,call rawequal,return rawequal,call sethook",
		table.concat(seen, ","), "the events a Lua hook yielded")
	check(#seen, n, "every yield")

	local fails = setmetatable({}, { __index = string.rep })
	local returns = 0
	debug.sethook(function(event) if event == "return" and debug.getinfo(2, "f").func == string.rep then returns = returns + 1 end end, "cr")
	local ok, err = pcall(function() return fails.boom end)
	debug.sethook()
	check(false, ok, "a metamethod that fails") check(true, err:find("^<string>:47: bad argument #1") ~= nil, "its error, at the index: " .. err) check(0, returns, "no return")

	ok, err = pcall(function()
		debug.sethook(function(event) if debug.getinfo(2, "f").func == rawget then error("in hook", 0) end end, "c")
		return a.y
	end)
	debug.sethook()
	check("in hook", err, "an error in the call hook")
	`); err != nil {
		t.Fatal(err)
	}
	want := "return ? G,call rawget G,return rawget G,call rawequal G,return rawequal G,call tostring G,return tostring G,call rawequal G,return rawequal G,call ? G"
	if got := strings.Join(goEvents, ","); got != want {
		t.Errorf("a Go hook's events: %s, want %s", got, want)
	}
}
