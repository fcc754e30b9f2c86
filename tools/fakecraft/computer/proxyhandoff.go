package computer

import (
	"math"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/luakit"
)

// proxyStandIns are the table functions that follow a table's metamethods, as Cobalt's
// TableLib does off its fast path (a table with a metatable: #t through __len, elements
// through __index and __newindex). Called by Lua code, they hand such a table off
// (lua.LState.HandOff) to their stand-ins in cfuncs.lua (NAME_proxy), which read and write
// it with the VM's own operations, so the metamethods run as frames of the loop and may
// yield, as Cobalt resumes them. A table without a metatable, any other value, and a call
// by Go keep the Go function and its cost.
var proxyStandIns = []string{"concat", "unpack", "insert", "remove"}

// installProxyHandOffs wraps proxyStandIns' functions in the table library (and the global
// unpack) with their hand-off, and shares with cfuncs.lua's stand-ins the Go checks they
// make (native); cfuncs.lua has defined the stand-ins.
func installProxyHandOffs(L *lua.LState, native *lua.LTable) {
	tab := L.GetGlobal("table").(*lua.LTable)
	for _, name := range proxyStandIns {
		current := tab.RawGetString(name).(*lua.LFunction)
		standIn := native.RawGetString(name + "_proxy").(*lua.LFunction)
		goFn := current.GFunction
		wrapped := L.NewFunction(func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok && t.Metatable != lua.LNil && L.CanHandOff() {
				return L.HandOff(standIn, L.GetTop())
			}
			return goFn(L)
		})
		tab.RawSetString(name, wrapped)
		if L.GetGlobal(name) == current {
			L.SetGlobal(name, wrapped)
		}
	}
}

// proxyChecks are the Go checks the stand-ins make, by name in native. Each reads its
// arguments at the positions of the library function's own, so argument errors name them
// as the Go function does, and raises where luakit places errors: at the Lua code that
// called the library function (the stand-in counts as C).
var proxyChecks = map[string]lua.LGFunction{
	// length(n): what __len returned, as #t counts (lengthResult).
	"length": func(L *lua.LState) int {
		L.Push(lua.LNumber(lengthResult(L, L.Get(1))))
		return 1
	},
	// concat_args(length, sep, i, j): table.concat's sep, i and j, j by default length.
	"concat_args": func(L *lua.LState) int {
		length := int(L.Get(1).(lua.LNumber))
		sep, first, last := luakit.OptString(L, 2, ""), luakit.OptInteger(L, 3, 1), luakit.OptInteger(L, 4, length)
		L.Push(lua.LString(sep))
		L.Push(lua.LNumber(first))
		L.Push(lua.LNumber(last))
		return 3
	},
	// concat_piece(v): an element table.concat joins, as text.
	"concat_piece": func(L *lua.LState) int {
		switch v := L.Get(1).(type) {
		case lua.LString:
			L.Push(v)
		case lua.LNumber:
			L.Push(lua.LString(ccformat.FormatNumber(float64(v))))
		default:
			luakit.ValueTypeError(L, v, "string")
		}
		return 1
	},
	// unpack_range(v, i, j): unpack's i and j, j nil when not given (#v is then the end).
	"unpack_range": func(L *lua.LState) int {
		first := luakit.OptInteger(L, 2, 1)
		var last lua.LValue = lua.LNil
		if L.Get(3) != lua.LNil {
			last = lua.LNumber(luakit.CheckInteger(L, 3))
		}
		L.Push(lua.LNumber(first))
		L.Push(last)
		return 2
	},
	// unpack_count(first, last): how many values unpack returns.
	"unpack_count": func(L *lua.LState) int {
		first, last := int64(L.Get(1).(lua.LNumber)), int64(L.Get(2).(lua.LNumber))
		if first > last {
			L.Push(lua.LNumber(0))
			return 1
		}
		if last-first+1 >= math.MaxInt32 {
			luakit.RaiseMessage(L, "too many results to unpack")
		}
		L.Push(lua.LNumber(last - first + 1))
		return 1
	},
	// insert_args(t, [pos,] value): table.insert's checks; the position, if given.
	"insert_args": func(L *lua.LState) int {
		checkInsertArgs(L)
		if L.GetTop() == 3 {
			L.Push(L.Get(2))
			return 1
		}
		return 0 // no position: the value goes at the end
	},
	// remove_position(t, pos, size): table.remove's position, by default size.
	"remove_position": func(L *lua.LState) int {
		L.Push(lua.LNumber(luakit.OptInteger(L, 2, int(L.Get(3).(lua.LNumber)))))
		return 1
	},
}
