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
