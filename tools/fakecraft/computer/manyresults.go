package computer

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua grows a Lua stack registryGrowStep slots at a time and copies all of it each
// time, so a library function that pushes n results one by one costs about n²/2048 copies:
// `{ s:byte(1, -1) }` of half a million bytes spent seconds of CPU copying (CC's vm_spec,
// which then ran past the 7 s yield limit on a loaded machine). string.byte and
// table.unpack (the functions that return as many values as their data holds) first grow the
// stack once to the size their results need.
func installManyResults(L *lua.LState) {
	str := L.GetGlobal("string").(*lua.LTable)
	strByte := str.RawGetString("byte").(*lua.LFunction).GFunction
	str.RawSetString("byte", L.NewFunction(func(L *lua.LState) int {
		if s, ok := L.Get(1).(lua.LString); ok {
			if first, ok := intArg(L, 2, 1); ok {
				if last, ok := intArg(L, 3, first); ok {
					presize(L, rangeLength(first, last, len(s)))
				}
			}
		}
		return strByte(L)
	}))
	tab := L.GetGlobal("table").(*lua.LTable)
	unpack := tab.RawGetString("unpack").(*lua.LFunction)
	sized := L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok {
			if first, ok := intArg(L, 2, 1); ok {
				last, ok := intArg(L, 3, 0)
				if L.Get(3) == lua.LNil {
					last, ok = t.Len(), true
				}
				if ok && last-first+1 < math.MaxInt32 { // more: unpack refuses them itself
					presize(L, last-first+1)
				}
			}
		}
		return unpack.GFunction(L)
	})
	tab.RawSetString("unpack", sized)
	if L.GetGlobal("unpack") == unpack {
		L.SetGlobal("unpack", sized)
	}
}

// intArg is argument n as gopher-lua's OptInt reads it (def when nil or absent), and
// whether it is a number at all.
func intArg(L *lua.LState, n, def int) (int, bool) {
	switch v := L.Get(n).(type) {
	case *lua.LNilType:
		return def, true
	case lua.LNumber:
		return int(v), true
	}
	return 0, false
}

// rangeLength is how many bytes string.byte(s, first, last) answers for a string of length
// n: Lua's relative positions, clipped to the string.
func rangeLength(first, last, n int) int {
	if first < 0 {
		first = max(n+first+1, 1)
	}
	if last < 0 {
		last = n + last + 1
	}
	first = max(first, 1)
	last = min(last, n)
	return last - first + 1
}

// presize grows L's stack once to hold n more values, when n is more than one growth step.
func presize(L *lua.LState, n int) {
	if n <= registryGrowStep {
		return
	}
	top := L.GetTop()
	L.SetTop(top + n)
	L.SetTop(top)
}
