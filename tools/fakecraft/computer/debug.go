package computer

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// installDebug gives debug.getinfo Lua 5.2's fields: short_src (gopher-lua has none),
// source with its "@" marker, and "C" as the kind of Go functions. Chunk names reach
// gopher-lua already shortened (it prints them in error positions), so source is rebuilt:
// a [string "..."] name stays as it is, any other gets its "@" back.
func installDebug(L *lua.LState) {
	dbg, ok := L.GetGlobal("debug").(*lua.LTable)
	if !ok {
		return
	}
	getinfo, ok := dbg.RawGetString("getinfo").(*lua.LFunction)
	if !ok || getinfo.GFunction == nil {
		return
	}
	orig := getinfo.GFunction
	dbg.RawSetString("getinfo", L.NewFunction(func(L *lua.LState) int {
		// Called directly, not through L.Call, so stack levels count as the original's.
		n := orig(L)
		info, ok := L.Get(-1).(*lua.LTable)
		if n != 1 || !ok {
			return n
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
	}))
}
