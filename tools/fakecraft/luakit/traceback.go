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
	eachFrame(L, level, func(th *lua.LState, dbg *lua.Debug) {
		frames = append(frames, tracedFrame{th, dbg, kindOf(th, dbg)})
	})
	var lines []string
	for i, frame := range frames {
		var caller *tracedFrame
		if i+1 < len(frames) {
			caller = &frames[i+1]
		}
		if frame.kind != luaCode && caller != nil && caller.kind == standIn {
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

// tracedFrame is a frame a traceback shows: its coroutine, the frame and what it runs.
type tracedFrame struct {
	th   *lua.LState
	dbg  *lua.Debug
	kind frameKind
}

// line is the frame's line of a traceback, caller the frame below it (nil at the bottom).
func (f tracedFrame) line(caller *tracedFrame) string {
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
	if caller != nil && caller.kind == luaCode {
		kind, name, named = f.th.FuncName(f.dbg, caller.dbg)
		// A generic for's iterator, called through a hidden local ("(for generator)",
		// luachunk's rewrite of the loop), is nameless, as under Cobalt's OP_TFORCALL.
		named = named && !(kind == "local" && strings.HasPrefix(name, "("))
	}
	switch {
	case named && kind == "global":
		fmt.Fprintf(&b, "function '%s'", name)
	case named:
		fmt.Fprintf(&b, "%s '%s'", kind, name)
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

// eachFrame visits the frames of L from level on, as FrameAt counts them (past pcall's
// coroutine into its caller's), each with the coroutine that holds it.
func eachFrame(L *lua.LState, level int, visit func(th *lua.LState, dbg *lua.Debug)) {
	for {
		depth := stackDepth(L)
		for ; level < depth; level++ {
			dbg, _ := L.GetStack(level)
			visit(L, dbg)
		}
		caller, first, ok := pcallCaller(L, depth)
		if !ok {
			return
		}
		L, level = caller, level-depth+first
	}
}
