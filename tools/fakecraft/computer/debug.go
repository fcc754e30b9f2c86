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

// cobaltInfoOptions is what Cobalt's debug.getinfo tells when not told what.
const cobaltInfoOptions = "flnStu"

// debugGetInfo wraps gopher-lua's debug.getinfo as Cobalt 0.9.3's: it takes a coroutine
// first, as Lua 5.2's and Cobalt's do (gopher-lua refused one): debug.getinfo(co, level [,
// what]) describes the frame debug.traceback(co, msg, level) starts at; and its table is
// Cobalt's (cobaltInfo): the fields its options ask for, in their order, an unknown option
// refused once the function or frame is found.
func debugGetInfo(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		optArg := 2
		if th, ok := L.Get(1).(*lua.LState); ok {
			L.Remove(1)
			optArg = 3
			if _, isLevel := L.Get(1).(lua.LNumber); isLevel && th != L {
				return getInfoOfThread(L, th, optArg)
			}
		}
		options := infoOptions(L, 2)
		// Gather everything gopher-lua tells (the function too, for its chunk name and
		// parameters); cobaltInfo keeps what the options ask for.
		L.SetTop(1)
		L.Push(lua.LString("Slunf"))
		// Called directly, not through L.Call, so stack levels count as the original's.
		n := orig(L)
		info, ok := L.Get(-1).(*lua.LTable)
		if n != 1 || !ok {
			return n
		}
		facts := infoFacts{info: info, tail: info.RawGetString("what") == lua.LString("tail")}
		facts.fn, _ = info.RawGetString("func").(*lua.LFunction)
		if level, isLevel := L.Get(1).(lua.LNumber); isLevel {
			facts.frame = true
			if dbg, ok := L.GetStack(int(level)); ok {
				if caller, ok := L.GetStack(int(level) + 1); ok {
					facts.nameWhat, facts.name, facts.named = L.FuncName(dbg, caller)
				}
			}
		}
		finishInfo(info)
		L.Push(cobaltInfo(L, facts, options, optArg))
		return 1
	}
}

// infoOptions is debug.getinfo's option string, argument n: Cobalt's optString, so a number
// is its text and nil the default.
func infoOptions(L *lua.LState, n int) string {
	switch v := L.Get(n).(type) {
	case *lua.LNilType:
		return cobaltInfoOptions
	case lua.LNumber:
		return ccformat.FormatNumber(float64(v))
	}
	return luakit.CheckString(L, n)
}

// infoFacts is what debug.getinfo can tell of a function or a frame: finishInfo's table of
// every field gopher-lua gave, the function (nil for the Go function a suspended coroutine
// yielded from, whose frame is gone), whether it is a frame of the stack (then its line,
// its name as its caller calls it and whether a tail call entered it are known).
type infoFacts struct {
	info           *lua.LTable
	fn             *lua.LFunction
	frame, tail    bool
	nameWhat, name string
	named          bool
}

// cobaltInfo is debug.getinfo's table as Cobalt's DebugLib.getinfo makes it: a new table
// given, option by option in the order the string names them, that option's fields (S:
// what, source, short_src, linedefined, lastlinedefined; l: currentline, currentcolumn; u:
// nups, nparams, isvararg; n: name, namewhat; f: func; L: activelines; t: istailcall), so
// that pairs walks it as Cobalt's. A function Cobalt has in Java (a Go one, a stand-in)
// reads as C: -1 for its lines. An option it does not know is "bad argument #optArg
// (invalid option)".
func cobaltInfo(L *lua.LState, f infoFacts, options string, optArg int) *lua.LTable {
	out := L.NewTable()
	isC := f.info.RawGetString("what") == lua.LString("C")
	copyField := func(name string) { out.RawSetString(name, f.info.RawGetString(name)) }
	for i := 0; i < len(options); i++ {
		switch options[i] {
		case 'S':
			if isC {
				out.RawSetString("what", lua.LString("C"))
				out.RawSetString("source", lua.LString("=[C]"))
				out.RawSetString("short_src", lua.LString("[C]"))
				out.RawSetString("linedefined", lua.LNumber(-1))
				out.RawSetString("lastlinedefined", lua.LNumber(-1))
				continue
			}
			for _, name := range []string{"what", "source", "short_src", "linedefined", "lastlinedefined"} {
				copyField(name)
			}
		case 'l':
			if !f.frame || isC {
				out.RawSetString("currentline", lua.LNumber(-1))
				continue
			}
			copyField("currentline")
			if column := f.info.RawGetString("currentcolumn"); column != lua.LNil {
				out.RawSetString("currentcolumn", column)
			}
		case 'u':
			if isC {
				out.RawSetString("nups", lua.LNumber(0))
				out.RawSetString("nparams", lua.LNumber(0))
				out.RawSetString("isvararg", lua.LTrue)
				continue
			}
			for _, name := range []string{"nups", "nparams", "isvararg"} {
				copyField(name)
			}
		case 'n':
			name, nameWhat := lua.LValue(lua.LNil), ""
			if f.named {
				name, nameWhat = lua.LString(f.name), f.nameWhat
			}
			out.RawSetString("name", name)
			out.RawSetString("namewhat", lua.LString(nameWhat))
		case 'f':
			if f.fn != nil {
				out.RawSetString("func", f.fn)
			} else {
				out.RawSetString("func", lua.LNil)
			}
		case 'L':
			if !isC && f.fn != nil && f.fn.Proto != nil {
				lines := L.NewTable()
				out.RawSetString("activelines", lines)
				for _, line := range f.fn.Proto.DbgSourcePositions {
					lines.RawSetInt(line, lua.LTrue)
				}
			}
		case 't':
			out.RawSetString("istailcall", lua.LBool(f.frame && f.tail))
		default:
			luakit.BadArgumentReason(L, optArg, "invalid option")
		}
	}
	return out
}

// getInfoOfThread answers debug.getinfo(th, level [, what]) for a coroutine th other than
// the running one, its arguments from 1 on (level, what): nil past its last frame (one that
// returned has none; one that died of an error keeps the frames of its error), as Cobalt's
// DebugState.getFrame; else Cobalt's table (cobaltInfo).
func getInfoOfThread(L *lua.LState, th *lua.LState, optArg int) int {
	level := luakit.CheckInteger(L, 1)
	options := infoOptions(L, 2)
	holder, frame, ok := luakit.ThreadFrame(th, level)
	if !ok {
		L.Push(lua.LNil)
		return 1
	}
	info := L.NewTable()
	facts := infoFacts{info: info, frame: true}
	if frame == nil {
		// The Go function the coroutine yielded from: its frame is gone, what it was is not.
		info.RawSetString("what", lua.LString("G"))
		info.RawSetString("currentline", lua.LNumber(-1))
		finishInfo(info)
		L.Push(cobaltInfo(L, facts, options, optArg))
		return 1
	}
	dbg := *frame
	fn, err := holder.GetInfo("Slnf", &dbg, lua.LNil)
	if err != nil {
		luakit.BadArgumentReason(L, optArg, "invalid option")
	}
	facts.fn, _ = fn.(*lua.LFunction)
	facts.tail = dbg.What == "tail"
	if _, caller, ok := luakit.ThreadFrame(th, level+1); ok && caller != nil {
		facts.nameWhat, facts.name, facts.named = holder.FuncName(frame, caller)
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
	finishInfo(info)
	L.Push(cobaltInfo(L, facts, options, optArg))
	return 1
}

// finishInfo turns info, gopher-lua's answer to debug.getinfo with every option, into the
// facts cobaltInfo shapes: what is "C" for a Go function or cfuncs.lua's code standing in
// for one (cobaltInfo gives them C's fields), else Cobalt's "main" or "Lua"; the chunk names
// and the parameters are Cobalt's.
func finishInfo(info *lua.LTable) {
	fn, _ := info.RawGetString("func").(*lua.LFunction)
	standIn := fn != nil && fn.Proto != nil && fn.Proto.SourceName == cFrameSource
	if info.RawGetString("what") == lua.LString("G") || standIn {
		info.RawSetString("what", lua.LString("C"))
		return
	}
	if fn == nil || fn.Proto == nil {
		return
	}
	addParams(info, fn)
	// Cobalt says "main" for a chunk and "Lua" for any other Lua function, by the function;
	// gopher-lua says "main" for the bottom frame and Lua 5.1's "tail" for a frame a tail
	// call entered.
	info.RawSetString("what", lua.LString(cobaltWhat(fn.Proto)))
	info.RawSetString("short_src", lua.LString(fn.Proto.SourceName))
	info.RawSetString("source", lua.LString(luachunk.Source(fn.Proto)))
}

// addParams sets Lua 5.2's nparams and isvararg in info for fn, a Lua function (cobaltInfo
// gives C's to the others).
func addParams(info *lua.LTable, fn *lua.LFunction) {
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
