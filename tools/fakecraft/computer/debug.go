package computer

import (
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/luachunk"
	"fakecraft/luakit"
)

// installDebug gives debug.getinfo Lua 5.2's fields: short_src (gopher-lua has none),
// source as the chunk name the function was loaded under (gopher-lua reports the display
// name it prints in errors), "C" as the kind of Go functions, and the "u" option's nparams
// and isvararg. debug.getlocal(f, n) names a function's parameters, as in Lua 5.2.
// debug.traceback writes Cobalt's traceback (debugTraceback), and hands back a message that is
// no string, as Lua 5.2 does, so an error object caught by xpcall(f, debug.traceback) stays
// the same object.
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
	dbg.RawSetString("traceback", L.NewFunction(debugTraceback))
	installCobaltDebug(L, dbg)
}

// installCobaltDebug adds the four functions of Cobalt 0.9.3's debug library that
// gopher-lua's lacks (CC installs Cobalt's whole library): debug.debug, which does nothing
// in Cobalt; getregistry, the state's registry; upvalueid(f, n), a userdata for f's upvalue
// n, equal (and the same table key) for every closure sharing that upvalue, as Cobalt's
// compare the upvalue they wrap; and upvaluejoin(f1, n1, f2, n2), which makes f1's upvalue
// n1 f2's upvalue n2. Their argument errors are Cobalt's (DebugLib.getClosureForUpvalue).
func installCobaltDebug(L *lua.LState, dbg *lua.LTable) {
	dbg.RawSetString("debug", L.NewFunction(func(*lua.LState) int { return 0 }))
	dbg.RawSetString("getregistry", L.NewFunction(func(L *lua.LState) int {
		L.Push(L.G.Registry)
		return 1
	}))
	// One userdata per upvalue asked about, so that == and table keys find it again (gopher-
	// lua compares userdata by identity). It lives as long as the computer.
	ids := map[*lua.Upvalue]*lua.LUserData{}
	dbg.RawSetString("upvalueid", L.NewFunction(func(L *lua.LState) int {
		fn, n := closureUpvalue(L, 1)
		uv := fn.Upvalues[n]
		id, ok := ids[uv]
		if !ok {
			id = L.NewUserData()
			id.Value = uv
			ids[uv] = id
		}
		L.Push(id)
		return 1
	}))
	dbg.RawSetString("upvaluejoin", L.NewFunction(func(L *lua.LState) int {
		f1, n1 := closureUpvalue(L, 1)
		f2, n2 := closureUpvalue(L, 3)
		f1.Upvalues[n1] = f2.Upvalues[n2]
		return 0
	}))
}

// closureUpvalue reads arguments at and at+1, a Lua function and its upvalue's number
// from 1, as Cobalt's getClosureForUpvalue does: the number first, then the function; a Go
// function or a Lua stand-in for one (it is Java in Cobalt) has no upvalues to name. It
// returns the function and the upvalue's index from 0.
func closureUpvalue(L *lua.LState, at int) (*lua.LFunction, int) {
	n := luakit.CheckInteger(L, at+1) - 1
	fn, ok := L.Get(at).(*lua.LFunction)
	if !ok {
		luakit.TypeError(L, at, "function")
	}
	if fn.IsG || fn.Proto.SourceName == cFrameSource || n < 0 || n >= len(fn.Upvalues) {
		luakit.BadArgumentReason(L, at, "invalid upvalue index")
	}
	return fn, n
}

// debugTraceback is debug.traceback([thread,] [message [, level]]) as Cobalt's: a message
// other than a string, a number or nil is returned unchanged; else the message (a number as
// its text) and a line break, if given, before luakit.Traceback of the thread from level on,
// by default 1 (the caller) for the running coroutine and 0 for another. gopher-lua's wrote
// its own format ("[G]: ?", "in corountine", a stand-in's line), dropped a level after each
// tail call and the message of a thread's traceback, and stopped at pcall's coroutine.
func debugTraceback(L *lua.LState) int {
	th, arg, level := L, 1, 1
	if co, ok := L.Get(1).(*lua.LState); ok {
		th, arg = co, 2
		if co != L {
			level = 0
		}
	}
	var text strings.Builder
	switch msg := L.Get(arg).(type) {
	case *lua.LNilType:
	case lua.LString:
		text.WriteString(string(msg) + "\n")
	case lua.LNumber:
		text.WriteString(ccformat.FormatNumber(float64(msg)) + "\n")
	default:
		L.Push(msg)
		return 1
	}
	text.WriteString(luakit.Traceback(th, luakit.OptInteger(L, arg+1, level)))
	L.Push(lua.LString(text.String()))
	return 1
}

// debugGetInfo wraps gopher-lua's debug.getinfo, and takes a coroutine first, as Lua 5.2's
// and Cobalt's do (gopher-lua refused one): debug.getinfo(co, level [, what]) describes the
// frame debug.traceback(co, msg, level) starts at.
func debugGetInfo(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if th, ok := L.Get(1).(*lua.LState); ok {
			L.Remove(1)
			if _, isLevel := L.Get(1).(lua.LNumber); isLevel && th != L {
				return getInfoOfThread(L, th)
			}
		}
		// The function is needed for its chunk name and parameters: ask for it ("f") and
		// drop it again when the caller did not.
		what, hasWhat := L.Get(2).(lua.LString)
		dropFunc := hasWhat && !strings.Contains(string(what), "f")
		if dropFunc {
			L.Replace(2, what+"f")
		}
		// Called directly, not through L.Call, so stack levels count as the original's.
		n := orig(L)
		info, ok := L.Get(-1).(*lua.LTable)
		if n != 1 || !ok {
			return n
		}
		finishInfo(info, string(what), hasWhat, dropFunc)
		return n
	}
}

// getInfoOfThread answers debug.getinfo(th, level [, what]) for a coroutine th other than
// the running one, its arguments from 1 on (level, what): nil past its last frame (one that
// returned has none; one that died of an error keeps the frames of its error), as Cobalt's
// DebugState.getFrame.
func getInfoOfThread(L *lua.LState, th *lua.LState) int {
	level := luakit.CheckInteger(L, 1)
	what := luakit.OptString(L, 2, "flnStu")
	holder, frame, ok := luakit.ThreadFrame(th, level)
	if !ok {
		L.Push(lua.LNil)
		return 1
	}
	info := L.NewTable()
	if frame == nil {
		// The Go function the coroutine yielded from: its frame is gone, what it was is not.
		info.RawSetString("what", lua.LString("G"))
		info.RawSetString("currentline", lua.LNumber(-1))
		finishInfo(info, what, true, false)
		L.Push(info)
		return 1
	}
	dbg := *frame
	fn, err := holder.GetInfo(strings.ReplaceAll(what, "u", "")+"f", &dbg, lua.LNil)
	if err != nil {
		luakit.ArgError(L, 2, "invalid option")
	}
	info.RawSetString("name", lua.LNil)
	if dbg.Name != "" {
		info.RawSetString("name", lua.LString(dbg.Name))
	}
	info.RawSetString("what", lua.LString(dbg.What))
	info.RawSetString("source", lua.LString(dbg.Source))
	info.RawSetString("currentline", lua.LNumber(dbg.CurrentLine))
	if dbg.CurrentColumn > 0 {
		info.RawSetString("currentcolumn", lua.LNumber(dbg.CurrentColumn))
	}
	info.RawSetString("nups", lua.LNumber(dbg.NUpvalues))
	info.RawSetString("linedefined", lua.LNumber(dbg.LineDefined))
	info.RawSetString("lastlinedefined", lua.LNumber(dbg.LastLineDefined))
	info.RawSetString("func", fn)
	finishInfo(info, what, true, !strings.Contains(what, "f"))
	L.Push(info)
	return 1
}

// finishInfo turns info, gopher-lua's answer to debug.getinfo with the "f" option added, into
// Cobalt's: what was asked for (hasWhat) the caller's what; dropFunc when "f" was not.
func finishInfo(info *lua.LTable, what string, hasWhat, dropFunc bool) {
	fn, _ := info.RawGetString("func").(*lua.LFunction)
	if dropFunc {
		info.RawSetString("func", lua.LNil)
	}
	standIn := fn != nil && fn.Proto != nil && fn.Proto.SourceName == cFrameSource
	if fn != nil && (!hasWhat || strings.ContainsRune(what, 'u')) {
		addParams(info, fn)
	}
	if info.RawGetString("what") == lua.LString("G") || standIn {
		// A Go function, or cfuncs.lua's code standing in for one, reads as C does.
		info.RawSetString("what", lua.LString("C"))
		info.RawSetString("source", lua.LString("=[C]"))
		info.RawSetString("short_src", lua.LString("[C]"))
		info.RawSetString("currentline", lua.LNumber(-1))
		if standIn {
			setAsGoFunction(info)
		}
		return
	}
	if fn == nil || fn.Proto == nil {
		return
	}
	if !hasWhat || strings.ContainsRune(what, 'S') {
		// Cobalt says "main" for a chunk and "Lua" for any other Lua function, by the
		// function; gopher-lua says "main" for the bottom frame and Lua 5.1's "tail" for a
		// frame a tail call entered.
		info.RawSetString("what", lua.LString(cobaltWhat(fn.Proto)))
	}
	info.RawSetString("short_src", lua.LString(fn.Proto.SourceName))
	info.RawSetString("source", lua.LString(luachunk.Source(fn.Proto)))
}

// setAsGoFunction makes what debug.getinfo says of a stand-in for C (cfuncs.lua) beyond its
// source what it says of a Go function, for the fields info holds.
func setAsGoFunction(info *lua.LTable) {
	for field, value := range map[string]lua.LValue{
		"linedefined": lua.LNumber(0), "lastlinedefined": lua.LNumber(0), "nups": lua.LNumber(0),
		"nparams": lua.LNumber(0), "isvararg": lua.LTrue,
	} {
		if info.RawGetString(field) != lua.LNil {
			info.RawSetString(field, value)
		}
	}
}

// addParams sets Lua 5.2's nparams and isvararg in info for fn. Go functions count as C
// ones: no fixed parameters, variadic.
func addParams(info *lua.LTable, fn *lua.LFunction) {
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
//
// It takes a coroutine first, as Cobalt's does: debug.getlocal(co, level, n) reads the frame
// debug.getinfo(co, level) describes ("bad argument #2 (level out of range)" past the last;
// nil for the Go function a suspended coroutine yielded from, as for any C function).
func debugGetLocal(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if th, ok := L.Get(1).(*lua.LState); ok {
			if th != L {
				return getLocalOfThread(L, th)
			}
			L.Remove(1)
		}
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

// getLocalOfThread answers debug.getlocal(th, level, n) for a coroutine th other than the
// running one.
func getLocalOfThread(L *lua.LState, th *lua.LState) int {
	level := luakit.CheckInteger(L, 2)
	n := luakit.CheckInteger(L, 3)
	holder, frame, ok := luakit.ThreadFrame(th, level)
	if !ok || th.Dead {
		luakit.Raise(L, "bad argument #2 (level out of range)")
	}
	if frame != nil {
		if name, value := holder.GetLocal(frame, n); name != "" {
			L.Push(lua.LString(name))
			L.Push(value)
			return 2
		}
	}
	L.Push(lua.LNil)
	return 1
}

// cobaltWhat is debug.getinfo's what of a Lua function as Cobalt gives it: "main" for a
// chunk (defined at line 0), "Lua" for any other.
func cobaltWhat(p *lua.FunctionProto) string {
	if p.LineDefined == 0 {
		return "main"
	}
	return "Lua"
}
