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
// not show which frames were entered that way, so yieldCrossesGo reads its call frames:
// Debug.frame points at a callFrame whose leading fields say which function runs (Fn), who
// called it (Parent) and where the caller is (Pc). frameHead mirrors those fields; init
// checks, through reflect, that gopher-lua's callFrame starts with them at the same offsets,
// so a gopher-lua whose frames look different stops fakecraft at start-up, not at a yield.
type frameHead struct {
	Idx    int
	Fn     *lua.LFunction
	Parent *frameHead
	Pc     int
}

var debugFrame = mustField(reflect.TypeOf(lua.Debug{}), "frame")

func init() {
	frame := debugFrame.Type
	if frame.Kind() != reflect.Pointer || frame.Elem().Kind() != reflect.Struct {
		panic("computer: gopher-lua's Debug.frame is not a pointer to a call frame")
	}
	mirror := reflect.TypeOf(frameHead{})
	for i := 0; i < mirror.NumField(); i++ {
		want := mirror.Field(i)
		got := mustField(frame.Elem(), want.Name)
		sameType := got.Type == want.Type ||
			(want.Name == "Parent" && got.Type == frame)
		if got.Offset != want.Offset || !sameType {
			panic(fmt.Sprintf("computer: gopher-lua's call frame field %s is not where fakecraft reads it", want.Name))
		}
	}
}

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
	frame := (*frameHead)(reflect.ValueOf(dbg).Elem().FieldByIndex(debugFrame.Index).UnsafePointer())
	for ; frame != nil && frame.Parent != nil; frame = frame.Parent {
		caller := frame.Parent
		fn := caller.Fn
		if fn.IsG || fn.Proto == nil {
			return true
		}
		if caller.Pc < 1 || caller.Pc > len(fn.Proto.Code) {
			return true
		}
		if op := int(fn.Proto.Code[caller.Pc-1] >> 26); op != lua.OP_CALL && op != lua.OP_TAILCALL {
			return true
		}
	}
	return false
}
