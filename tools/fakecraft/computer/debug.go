package computer

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// installDebug gives debug.getinfo Lua 5.2's fields: short_src (gopher-lua has none),
// source with its "@" marker, "C" as the kind of Go functions, and the "u" option's nparams
// and isvararg. Chunk names reach gopher-lua already shortened (it prints them in error
// positions), so source is rebuilt: a [string "..."] name stays as it is, any other gets
// its "@" back. debug.getlocal(f, n) names a function's parameters, as in Lua 5.2.
func installDebug(L *lua.LState) {
	dbg, ok := L.GetGlobal("debug").(*lua.LTable)
	if !ok {
		return
	}
	if getinfo, ok := dbg.RawGetString("getinfo").(*lua.LFunction); ok && getinfo.GFunction != nil {
		dbg.RawSetString("getinfo", L.NewFunction(debugGetInfo(getinfo.GFunction)))
	}
	if getlocal, ok := dbg.RawGetString("getlocal").(*lua.LFunction); ok && getlocal.GFunction != nil {
		dbg.RawSetString("getlocal", L.NewFunction(debugGetLocal(getlocal.GFunction)))
	}
}

// debugGetInfo wraps gopher-lua's debug.getinfo.
func debugGetInfo(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		// Called directly, not through L.Call, so stack levels count as the original's.
		n := orig(L)
		info, ok := L.Get(-1).(*lua.LTable)
		if n != 1 || !ok {
			return n
		}
		if what, ok := L.Get(2).(lua.LString); !ok || strings.ContainsRune(string(what), 'u') {
			addParams(L, info)
		}
		if info.RawGetString("what") == lua.LString("G") {
			info.RawSetString("what", lua.LString("C"))
			info.RawSetString("source", lua.LString("=[C]"))
			info.RawSetString("short_src", lua.LString("[C]"))
			info.RawSetString("currentline", lua.LNumber(-1))
			return n
		}
		src, ok := info.RawGetString("source").(lua.LString)
		if !ok {
			return n
		}
		info.RawSetString("short_src", src)
		if !strings.HasPrefix(string(src), `[string "`) && string(src) != cFrameSource {
			info.RawSetString("source", "@"+src)
		}
		return n
	}
}

// addParams sets Lua 5.2's nparams and isvararg in info for the function getinfo was asked
// about (a function, or the one running at a stack level). Go functions count as C ones:
// no fixed parameters, variadic.
func addParams(L *lua.LState, info *lua.LTable) {
	var fn *lua.LFunction
	switch v := L.Get(1).(type) {
	case *lua.LFunction:
		fn = v
	case lua.LNumber:
		// The level as the original getinfo counted it: this Go function is level 0.
		dbg, ok := L.GetStack(int(v))
		if !ok {
			return
		}
		f, err := L.GetInfo("f", dbg, lua.LNil)
		if err != nil {
			return
		}
		fn, _ = f.(*lua.LFunction)
	}
	if fn == nil {
		return
	}
	if fn.IsG || fn.Proto == nil {
		info.RawSetString("nparams", lua.LNumber(0))
		info.RawSetString("isvararg", lua.LTrue)
		return
	}
	info.RawSetString("nparams", lua.LNumber(fn.Proto.NumParameters))
	info.RawSetString("isvararg", lua.LBool(fn.Proto.IsVarArg&lua.VarArgIsVarArg != 0))
}

// debugGetLocal wraps gopher-lua's debug.getlocal, which knows stack levels only: given a
// function, Lua 5.2 answers the name of its n-th parameter (nil past the last, and for Go
// functions).
func debugGetLocal(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		fn, ok := L.Get(1).(*lua.LFunction)
		if !ok {
			return orig(L)
		}
		n := L.CheckInt(2)
		if fn.IsG || fn.Proto == nil || n < 1 || n > int(fn.Proto.NumParameters) || n > len(fn.Proto.DbgLocals) {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LString(fn.Proto.DbgLocals[n-1].Name))
		return 1
	}
}
