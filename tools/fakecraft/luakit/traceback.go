package luakit

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Traceback is the "stack traceback:" text of debug.traceback for L from level on, as CC:
// Tweaked's Cobalt writes it (DebugHelpers.traceback, read from Cobalt 0.9.3's source):
//
//	stack traceback:
//		[C]: in function 'error'
//		prog.lua:3: in local 'fail'
//		prog.lua:5: in main chunk
//		[C]: in function 'pcall'
//
// A frame is "source:line:" for Lua code and "[C]:" for a Go function and for Lua code
// standing in for C (CFrameSource), which with what it calls of its own workings is one
// frame, as the C function it stands for; then "in" what the Lua code that called it names
// it (Lua 5.2's getfuncname, lua.LState.FuncName: "function 'x'" for a global, "local 'x'",
// "method 'x'", "field 'x'", "upvalue 'x'", "metamethod '__index'"), else "main chunk" for a
// chunk, "function <source:line>" for another Lua function, "?" for C. A function reached by
// a tail call is followed by "(...tail calls...)". Levels count as FrameAt counts them, past
// pcall's coroutine into its caller's, as Cobalt's pcall is a frame of the same stack; more
// than 22 frames are cut to the first 10, "...", and the last 11.
func Traceback(L *lua.LState, level int) string {
	var frames []tracedFrame
	eachFrame(L, level, func(th *lua.LState, dbg *lua.Debug, callsProgram bool) {
		kind := goCode // the function a suspended coroutine yielded from (dbg nil)
		if dbg != nil {
			kind = kindOf(th, dbg)
		}
		frames = append(frames, tracedFrame{th, dbg, kind, callsProgram})
	})
	var lines []string
	for i, frame := range frames {
		var caller *tracedFrame
		if i+1 < len(frames) {
			caller = &frames[i+1]
		}
		if frame.kind != luaCode && caller != nil && caller.kind == standIn && !caller.callsProgram {
			continue // a stand-in's own workings: part of the C function it stands for
		}
		lines = append(lines, frame.line(caller))
	}
	const head, tail = 10, 11
	if len(lines) > head+tail+1 {
		lines = append(append(lines[:head:head], "..."), lines[len(lines)-tail:]...)
	}
	var b strings.Builder
	b.WriteString("stack traceback:")
	for _, line := range lines {
		b.WriteString("\n\t")
		b.WriteString(line)
	}
	return b.String()
}

// tracedFrame is a frame a traceback shows: its coroutine, the frame and what it runs. dbg is
// nil for the Go function a suspended coroutine yielded from, whose frame the yield took off
// its stack.
type tracedFrame struct {
	th   *lua.LState
	dbg  *lua.Debug
	kind frameKind
	// callsProgram: a stand-in that calls the program's function (pcall's coroutine body,
	// gsub's helper), so the C function it calls is the program's own (xpcall(error, f)).
	callsProgram bool
}

// line is the frame's line of a traceback, caller the frame below it (nil at the bottom).
func (f tracedFrame) line(caller *tracedFrame) string {
	if f.dbg == nil {
		if caller != nil && caller.kind == luaCode {
			if kind, name, named := f.th.CalledName(caller.dbg); named {
				return fmt.Sprintf("%s: in %s", CFrameSource, namedAs(kind, name))
			}
		}
		return CFrameSource + ": in ?"
	}
	var b strings.Builder
	info := *f.dbg
	_, _ = f.th.GetInfo("Sl", &info, lua.LNil)
	if f.kind == luaCode {
		b.WriteString(info.Source + ":")
		if info.CurrentLine > 0 {
			fmt.Fprintf(&b, "%d:", info.CurrentLine)
		}
	} else {
		b.WriteString(CFrameSource + ":")
	}
	b.WriteString(" in ")
	kind, name, named := "", "", false
	if caller != nil && caller.kind == luaCode && f.kind != luaCode {
		// C: named by the call, whatever tail calls a stand-in's workings made (gsub's helper).
		kind, name, named = f.th.CalledName(caller.dbg)
	} else if caller != nil && caller.kind == luaCode {
		kind, name, named = f.th.FuncName(f.dbg, caller.dbg)
		// A generic for's iterator, called through a hidden local ("(for generator)",
		// luachunk's rewrite of the loop), is nameless, as under Cobalt's OP_TFORCALL.
		named = named && !(kind == "local" && strings.HasPrefix(name, "("))
	}
	switch {
	case named:
		b.WriteString(namedAs(kind, name))
	case f.kind != luaCode:
		b.WriteString("?")
	case info.LineDefined == 0:
		b.WriteString("main chunk")
	default:
		fmt.Fprintf(&b, "function <%s:%d>", info.Source, info.LineDefined)
	}
	if f.kind == luaCode && info.What == "tail" {
		b.WriteString("\n\t(...tail calls...)")
	}
	return b.String()
}

// namedAs is how a traceback names a function its caller names: "function 'x'" for a
// global, else the kind and the name ("local 'x'").
func namedAs(kind, name string) string {
	if kind == "global" {
		return fmt.Sprintf("function '%s'", name)
	}
	return fmt.Sprintf("%s '%s'", kind, name)
}

// eachFrame visits the frames of L from level on, as FrameAt counts them (past pcall's
// coroutine into its caller's), each with the coroutine that holds it and whether it is the
// bottom of a coroutine so crossed (it calls the program's function). A suspended
// coroutine's frames start where it yielded, as Cobalt keeps them: in the pcall coroutines
// it waits in, innermost first (suspendedIn), at the Go function that yielded (visited with
// a nil dbg).
func eachFrame(L *lua.LState, level int, visit func(th *lua.LState, dbg *lua.Debug, callsProgram bool)) {
	waiting := suspendedIn(L)
	if len(waiting) > 0 {
		L = waiting[len(waiting)-1]
		if level == 0 {
			visit(L, nil, false)
		}
		level--
	}
	for {
		depth := stackDepth(L)
		parent := L.Parent
		if n := len(waiting); n > 1 && L == waiting[n-1] {
			waiting, parent = waiting[:n-1], waiting[n-2]
		}
		caller, first, crossed := callerOf(L, parent, depth)
		if level < depth {
			// One walk down the frames (CallerStack), not one from the top a level.
			level = max(level, 0)
			dbg, _ := L.GetStack(level)
			for ; level < depth; level++ {
				visit(L, dbg, crossed && level == depth-1)
				dbg, _ = L.CallerStack(dbg)
			}
		}
		if !crossed {
			return
		}
		L, level = caller, level-depth+first
	}
}

// suspendedIn is, for a coroutine suspended in a yield, the coroutine and the pcall
// coroutines it waits in, outermost first: while a pcall's function is suspended, the
// coroutine that called pcall waits in cfuncs.lua's protected_by, which holds the pcall's
// coroutine in its local co. It is nil for a coroutine that runs, resumed another, is dead
// or has not started.
func suspendedIn(L *lua.LState) []*lua.LState {
	if !suspended(L) {
		return nil
	}
	chain := []*lua.LState{L}
	for th := L; ; {
		top, _ := th.GetStack(0)
		if kindOf(th, top) != standIn {
			return chain
		}
		child := pcallCoroutine(th, top)
		if child == nil || !suspended(child) {
			return chain
		}
		chain = append(chain, child)
		th = child
	}
}

// suspended says whether th is a coroutine suspended in a yield: not dead, not the main
// thread, not running nor waiting for a coroutine it resumed (its Parent is set while it
// runs), and started (its top frame ran an instruction).
func suspended(th *lua.LState) bool {
	if th.Dead || th.Parent != nil || th == th.G.MainThread || th == th.G.CurrentThread {
		return false
	}
	top, ok := th.GetStack(0)
	if !ok {
		return false
	}
	info := *top
	_, err := th.GetInfo("l", &info, lua.LNil)
	return err == nil && info.CurrentLine > 0
}

// pcallCoroutine is the coroutine the stand-in frame top of th runs a pcall's function in
// (cfuncs.lua's resumed, its first parameter), or nil.
func pcallCoroutine(th *lua.LState, top *lua.Debug) *lua.LState {
	_, value := th.GetLocal(top, 1)
	co, _ := value.(*lua.LState)
	return co
}

// ThreadFrame is the frame at level of the coroutine th as debug.traceback(th, msg, level)
// counts them (eachFrame): the coroutine holding it and the frame, which is nil for the Go
// function a suspended coroutine yielded from (its level 0). ok is false past the last frame.
func ThreadFrame(th *lua.LState, level int) (holder *lua.LState, frame *lua.Debug, ok bool) {
	eachFrame(th, level, func(t *lua.LState, dbg *lua.Debug, _ bool) {
		if !ok {
			holder, frame, ok = t, dbg, true
		}
	})
	return holder, frame, ok
}
