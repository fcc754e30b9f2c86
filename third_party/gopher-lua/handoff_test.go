package lua

import "testing"

// TestHandOffLetsTheLuaFunctionYield: a Go function that hands off (HandOff) to a Lua
// function returns its results, from a call, a tail call and a call of a Go function taking
// a varying count, and the Lua function may yield where the Go function could not; called
// by Go, the Go function cannot hand off.
func TestHandOffLetsTheLuaFunctionYield(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString(`function twice(f, x) local y = coroutine.yield(x) return f(y), f(y) end`); err != nil {
		t.Fatal(err)
	}
	twice := L.GetGlobal("twice").(*LFunction)
	L.SetGlobal("handing", L.NewFunction(func(L *LState) int {
		if !L.CanHandOff() {
			L.Push(LString("called by Go"))
			return 1
		}
		f := L.Get(1)
		L.Push(f)
		L.Push(L.Get(2))
		return L.HandOff(twice, 2)
	}))
	if err := L.DoString(echoPrelude + `
	local up = string.upper
	local n, a, b = echo(function() local x, y = handing(up, "ab") return x .. y end)
	check(1, n, "yields of a call"); check("ABAB", a, "call")
	n, a, b = echo(function() return handing(up, "cd") end)
	check(1, n, "yields of a tail call"); check("CD", a, "tail call 1"); check("CD", b, "tail call 2")
	n, a, b = echo(function() local t = { handing(up, "e") } return #t, t[2] end)
	check("E", b, "all results"); check(2, a, "result count")
	check("called by Go", pcall(handing, up, "x") and select(2, pcall(handing, up, "x")), "under pcall")
	local ok, err = pcall(echo, function() return handing(error, "boom") end)
	check(false, ok, "error"); check(true, err:find("boom$") ~= nil, "error value " .. err)
	`); err != nil {
		t.Fatal(err)
	}
}

// TestHandOffKeepsHookEventsPaired: a debug hook sees the Go function's call, and the Lua
// function's return as its return, so calls and returns still pair up.
func TestHandOffKeepsHookEventsPaired(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString(`function double(x) return x * 2 end`); err != nil {
		t.Fatal(err)
	}
	double := L.GetGlobal("double").(*LFunction)
	L.SetGlobal("handing", L.NewFunction(func(L *LState) int {
		return L.HandOff(double, 1)
	}))
	if err := L.DoString(`
	local calls, returns = 0, 0
	local function run() return handing(21) + handing(1) end
	debug.sethook(function(event)
		if event == "return" then returns = returns + 1 else calls = calls + 1 end
	end, "cr")
	local result = run()
	debug.sethook()
	if result ~= 44 then error("result " .. tostring(result)) end
	-- calls: run, handing twice, the second sethook (whose return fires no more); returns:
	-- the first sethook, handing twice (through double), run
	if calls ~= 4 or returns ~= 4 then error(("calls %d, returns %d"):format(calls, returns)) end
	`); err != nil {
		t.Fatal(err)
	}
}
