package computer

import (
	"fmt"
	"reflect"

	lua "github.com/yuin/gopher-lua"
)

// YieldBoundaryMessage is Lua 5.1's error for a yield that would cross Go code.
const YieldBoundaryMessage = "attempt to yield across metamethod/C-call boundary"

// gopher-lua runs a Lua function called from Go (a library function's callback) or by the
// VM itself (a metamethod, a generic for's iterator) in a nested interpreter loop. A yield
// there ends only that nested loop: the Go code under it carries on with a half-done call
// ("register underflow", a nil pointer panic) and the coroutine does not stop. Its API does
// not show which frames were entered that way, so these read its call frames: Debug.frame
// points at a callFrame whose exported fields say which function runs (Fn), who called it
// (Parent) and where the caller is (Pc). Resolved once, at start-up, so a gopher-lua whose
// frames look different fails every computer's boot rather than one yield.
var (
	debugFrame  = mustField(reflect.TypeOf(lua.Debug{}), "frame")
	frameFn     = mustField(debugFrame.Type.Elem(), "Fn")
	frameParent = mustField(debugFrame.Type.Elem(), "Parent")
	framePc     = mustField(debugFrame.Type.Elem(), "Pc")
)

func mustField(t reflect.Type, name string) reflect.StructField {
	f, ok := t.FieldByName(name)
	if !ok {
		panic(fmt.Sprintf("computer: gopher-lua's %s has no field %s", t, name))
	}
	return f
}

// yieldCrossesGo reports whether a yield by the running Go function (coroutine.yield) would
// have to pass through Go code to reach its coroutine's resume: some frame between them was
// called by a Go function, or by a Lua frame whose current instruction is not a call (the
// VM calling a metamethod or an iterator).
func yieldCrossesGo(L *lua.LState) bool {
	dbg, ok := L.GetStack(0)
	if !ok {
		return false
	}
	frame := reflect.ValueOf(dbg).Elem().FieldByIndex(debugFrame.Index)
	for !frame.IsNil() {
		caller := frame.Elem().FieldByIndex(frameParent.Index)
		if caller.IsNil() {
			return false // the coroutine's body
		}
		fn := (*lua.LFunction)(caller.Elem().FieldByIndex(frameFn.Index).UnsafePointer())
		if fn.IsG || fn.Proto == nil {
			return true
		}
		pc := int(caller.Elem().FieldByIndex(framePc.Index).Int())
		if pc < 1 || pc > len(fn.Proto.Code) {
			return true
		}
		if op := int(fn.Proto.Code[pc-1] >> 26); op != lua.OP_CALL && op != lua.OP_TAILCALL {
			return true
		}
		frame = caller
	}
	return false
}
