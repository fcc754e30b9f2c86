// Package luakit holds CC: Tweaked's rules for the errors of Go functions called from Lua:
// the type names CC's messages use (nan, inf, -inf, "no value"), the argument checks, and
// raising an error at the position CC would give it. The Go APIs (fs, os, http, textutils,
// the peripherals, periphemu) and the base-library functions fakecraft replaces take their
// argument errors from here, so each wording has one home.
//
// CC words a bad argument three ways, after what the function is written in, and each Go
// function picks the family of the function it stands in for:
//   - Lua's standard library (string.rep, load, …), as Cobalt (CC 1.113's 0.9.3) words it:
//     a value of the wrong type is "bad argument (table expected, got number)", naming no
//     argument, a missing one "nil" and a table by its metatable's __name; other refusals
//     name the argument ("bad argument #2 (value expected)", "(invalid value)"). CheckString
//     takes a number as its text, CheckNumber and CheckInteger a numeric string as its
//     number — CheckString, OptString, CheckInteger, OptInteger, CheckNumber, CheckTable,
//     CheckValue, TypeError, BadArgumentReason. UseStdLibArgRules gives gopher-lua's own
//     checks (its library's, and the LState checks Go functions call) the same wording.
//     ArgError keeps PUC Lua's wording ("bad argument #1 (string expected, got no value)"),
//     which CraftOS-PC's periphemu uses.
//   - CC's Java APIs (fs, os, http, the peripherals; IArguments in CC): nothing converts, a
//     missing argument is "nil", a table is named by its metatable's __name, and a number
//     that must be finite names nan, inf or -inf — StrictString, CheckBool, OptBool,
//     CheckFinite, OptFinite, OptLong (javaargs.go).
//   - CC's Lua-written APIs (fs.complete, textutils, …, through cc.expect): "nil" is left
//     out of the list of expected types and the function's name is given when known —
//     Expect, ExpectField (expect.go).
//
// Every check raises through RaiseMessage: at the position of the Lua code nearest the Go
// function on the stack (its caller; under pcall(f, …), the line that called pcall), as CC's
// Cobalt places its Java functions' errors (whereFrom).
// BlameCallersCaller moves an error one caller up (a peripheral method's, to the program
// that called peripheral.call), and RaiseBare raises with no position at all.
//
// bit32, string.format and the debug library's replacements check their arguments with
// gopher-lua's LState checks, which follow the same rules through UseStdLibArgRules.
package luakit

import (
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
)

// NoValue is what CC's messages call an argument past the last one given.
const NoValue = "no value"

// TypeName is the type CC names for a value in argument errors: Lua's type, except
// numbers that are not finite, which are named nan, inf or -inf.
func TypeName(v lua.LValue) string {
	if n, ok := v.(lua.LNumber); ok {
		switch f := float64(n); {
		case math.IsNaN(f):
			return "nan"
		case math.IsInf(f, 1):
			return "inf"
		case math.IsInf(f, -1):
			return "-inf"
		}
	}
	return v.Type().String()
}

// ArgTypeName is TypeName of argument n, or "no value" when the call had fewer arguments.
func ArgTypeName(L *lua.LState, n int) string {
	if n > L.GetTop() {
		return NoValue
	}
	return TypeName(L.Get(n))
}

// ArgError raises "bad argument #n (expected expected, got T)" as PUC Lua's standard library
// words and places it (T is ArgTypeName; luaL_where(1): at the caller, none when that is C):
// CraftOS-PC's functions, which run on PUC Lua. CC's standard library words it as TypeError
// does.
func ArgError(L *lua.LState, n int, expected string) {
	RaiseAtCaller(L, fmt.Sprintf("bad argument #%d (%s expected, got %s)", n, expected, ArgTypeName(L, n)))
}

// TypeError raises Cobalt's "bad argument (expected expected, got T)" for argument n of a
// standard-library function: Cobalt's checks do not know the argument's number, and T is
// Lua's type of the value ("nil" when missing), or a table's metatable's __name.
func TypeError(L *lua.LState, n int, expected string) {
	RaiseMessage(L, stdTypeMessage(L, n, expected))
}

func stdTypeMessage(L *lua.LState, n int, expected string) string {
	return valueTypeMessage(L, L.Get(n), expected)
}

// ValueTypeError is TypeError for a value that is not an argument itself (table.concat's
// elements), which Cobalt's checks word the same way.
func ValueTypeError(L *lua.LState, v lua.LValue, expected string) {
	RaiseMessage(L, valueTypeMessage(L, v, expected))
}

func valueTypeMessage(L *lua.LState, v lua.LValue, expected string) string {
	return "bad argument (" + expected + " expected, got " + displayType(L, v) + ")"
}

// CheckValue is argument n, which may be nil but must be given: "bad argument #n (value
// expected)" otherwise.
func CheckValue(L *lua.LState, n int) lua.LValue {
	if n > L.GetTop() {
		BadArgumentReason(L, n, "value expected")
	}
	return L.Get(n)
}

// UseStdLibArgRules makes gopher-lua's own argument checks in L's state follow Cobalt's
// standard library: their errors worded as its are (TypeError, BadArgumentReason), where
// they are raised, and a string holding a number taken for a number argument as Cobalt's
// checkInteger and checkDouble take it (read as tonumber reads it; "1.5" truncates to 1
// where an integer is wanted), and made an int as checkInteger makes it (JavaInt).
func UseStdLibArgRules(L *lua.LState) {
	L.SetArgErrorWording(stdLibWording{})
	L.SetArgNumberReader(parseNumber)
	L.SetArgIntConverter(JavaInt)
}

// JavaInt is f as Cobalt's checkInteger makes an int of a number, Java's (int) (long) f:
// truncated toward zero and held to 64 bits (NaN is 0), then its low 32 bits taken as a
// signed int. So string.rep("x", 2^32 + 1) is "x" in CC, and 2^31 is negative (""); Go's
// int(f) kept the 64-bit value and tried to build four billion copies.
func JavaInt(f float64) int {
	var long int64
	switch {
	case f != f:
	case f >= math.MaxInt64:
		long = math.MaxInt64
	case f <= math.MinInt64:
		long = math.MinInt64
	default:
		long = int64(f)
	}
	return int(int32(long))
}

type stdLibWording struct{}

func (stdLibWording) BadArgument(L *lua.LState, n int, reason string) string {
	return fmt.Sprintf("bad argument #%d (%s)", n, reason)
}

func (stdLibWording) WrongType(L *lua.LState, n int, expected string) string {
	return stdTypeMessage(L, n, expected)
}

// BadArgument raises "bad argument #n (expected expected, got got)".
func BadArgument(L *lua.LState, n int, expected, got string) {
	RaiseMessage(L, fmt.Sprintf("bad argument #%d (%s expected, got %s)", n, expected, got))
}

// Raise raises a formatted message at the caller's position (see RaiseMessage).
func Raise(L *lua.LState, format string, args ...any) {
	RaiseMessage(L, fmt.Sprintf(format, args...))
}

// RaiseMessage raises msg, prefixed with the position of the Lua code nearest the running
// Go function (whereFrom): its caller's line, or under pcall(f, …) the line that called
// pcall, as CC's Cobalt places its Java functions' errors.
func RaiseMessage(L *lua.LState, msg string) {
	L.Error(lua.LString(CallerWhere(L)+msg), 0)
}

// CFrameSource is the source name of Lua code that stands in for a C function (fakecraft's
// chunk "=[C]": pcall and its coroutine's body, table.sort and string.gsub around their Go
// halves). Errors are never placed in it, as C Lua's are never placed in C.
const CFrameSource = "[C]"

// RaiseAtCaller raises msg as a function CC writes in Lua raises it with an explicit level
// (cc.expect's error(msg, 3)): at the position of the Go function's caller when that is Lua
// code, with none when it is C (a Go function, code standing in for C: pcall(f, …)), as
// Lua's levels count (FrameAt).
func RaiseAtCaller(L *lua.LState, msg string) {
	where := ""
	if th, dbg, at, ok := FrameAt(L, 1); ok && kindOf(th, dbg) == luaCode {
		where = th.Where(at) + " "
	}
	L.Error(lua.LString(where+msg), 0)
}

// CallerWhere is the position RaiseMessage puts before a message (whereFrom).
func CallerWhere(L *lua.LState) string { return whereFrom(L, 1) }

// whereFrom is the "source:line: " of the Lua code nearest the running Go function on the
// stack, from its caller first levels up (1: the Go function's caller, 2: that one's caller),
// counted as FrameAt counts: Go functions and code standing in for C (CFrameSource) are
// skipped, and "" when there is no Lua code. That is where CC's Cobalt places an error a
// Java function raises without a level of its own (LuaError's calculateLevel: the nearest
// frame of a Lua closure), which is how CC raises its APIs' errors: a function pcall calls
// directly (pcall(fs.list, "x")) has its error placed at the line that called pcall.
func whereFrom(L *lua.LState, first int) string {
	for level := first; ; level++ {
		th, dbg, at, ok := FrameAt(L, level)
		if !ok {
			return ""
		}
		switch kindOf(th, dbg) {
		case unreadable:
			return ""
		case luaCode:
			return th.Where(at) + " "
		}
	}
}

// whereAt is the "source:line: " of the frame level calls up from the running Go function
// (counted as FrameAt counts), "" when that frame is not Lua code (a Go function, code
// standing in for C) or there is none: where Cobalt places an error raised with an
// explicit level (LuaError's fileLine(thread, level)).
func whereAt(L *lua.LState, level int) string {
	if th, dbg, at, ok := FrameAt(L, level); ok && kindOf(th, dbg) == luaCode {
		return th.Where(at) + " "
	}
	return ""
}

// FrameAt finds the frame level calls up from the running function (0) as Lua counts them
// in CC, and the coroutine that holds it: its level there. fakecraft's pcall runs its
// function in a coroutine of its own whose body stands in for pcall (cfuncs.lua's
// trampoline), so the levels past that body are those of the coroutine that called pcall,
// past pcall's own workings there (the resume, cfuncs.lua's protected, pcall or xpcall:
// Go functions and stand-ins). A coroutine that is not pcall's (coroutine.create, wrap)
// ends the count, as in CC.
func FrameAt(L *lua.LState, level int) (*lua.LState, *lua.Debug, int, bool) {
	for {
		if dbg, ok := L.GetStack(level); ok {
			return L, dbg, level, true
		}
		depth := stackDepth(L)
		caller, first, ok := callerOf(L, L.Parent, depth)
		if !ok {
			return nil, nil, 0, false
		}
		L, level = caller, level-depth+first
	}
}

// Running is the coroutine CC's coroutine.running() answers in L. fakecraft runs a pcall's
// function in a coroutine of its own, and a Go function's Lua callback in a helper coroutine
// (SetCallbackBody: string.gsub's replacement function); CC runs both on the stack of the
// coroutine that called pcall or the Go function, which is therefore the one running, as
// FrameAt counts their levels there.
func Running(L *lua.LState) *lua.LState {
	for {
		if caller := pcallOwner(L); caller != nil {
			L = caller
			continue
		}
		if caller, _, ok := callbackCaller(L, L.Parent, stackDepth(L)); ok {
			L = caller
			continue
		}
		return L
	}
}

// pcallOwner is the coroutine that called the pcall whose function L runs, or nil: L's
// resumer, whose top frame past Go functions is cfuncs.lua's resumed running L (its first
// parameter), as pcallCoroutine reads it. pcallCaller's test, that L's bottom frame stands
// in for C, would also take a coroutine created with a Go function as its body (run under
// the same stand-in) and resumed under pcall.
func pcallOwner(L *lua.LState) *lua.LState {
	parent := L.Parent
	if parent == nil {
		return nil
	}
	for level := 0; ; level++ {
		dbg, ok := parent.GetStack(level)
		if !ok {
			return nil
		}
		switch kindOf(parent, dbg) {
		case goCode:
		case standIn:
			if pcallCoroutine(parent, dbg) == L {
				return parent
			}
			return nil
		default:
			return nil
		}
	}
}

// stackDepth is how many frames L holds.
func stackDepth(L *lua.LState) int {
	n := 0
	for dbg, ok := L.GetStack(0); ok; dbg, ok = L.CallerStack(dbg) {
		n++
	}
	return n
}

// callerOf is, for L, a coroutine holding depth frames resumed by parent (L.Parent while it
// runs), the coroutine where its levels go on and the level there, when L runs a pcall's
// function (pcallCaller) or a Go function's Lua callback (callbackCaller): in CC both are
// frames of the caller's stack.
func callerOf(L, parent *lua.LState, depth int) (*lua.LState, int, bool) {
	if caller, first, ok := pcallCaller(L, parent, depth); ok {
		return caller, first, true
	}
	return callbackCaller(L, parent, depth)
}

// callbackBodyKey is where SetCallbackBody keeps its function, in the Lua registry.
const callbackBodyKey = "fakecraft/luakit.callbackBody"

// SetCallbackBody names body as the function of the helper coroutines in which a Go function
// runs a Lua callback (string.gsub's replacement function, so that it may yield: computer's
// gsubyield.go); body's first parameter is the coroutine the Go function runs in. Levels and
// tracebacks in the callback go on there, at the Go function's caller, as in CC, where the
// callback's frame lies on the Go function's; body's own frame stands for the Go function.
func SetCallbackBody(L *lua.LState, body *lua.LFunction) {
	L.G.Registry.RawSetString(callbackBodyKey, body)
}

// callbackCaller is, for L, a coroutine holding depth frames resumed by parent, the
// coroutine and level of the Lua code that called the Go function L runs a callback for
// (SetCallbackBody): below the resume and the Go function when that coroutine resumed L,
// its top frame when it is suspended (the callback yielded, the Go function with it, and
// another coroutine resumed L since).
func callbackCaller(L, parent *lua.LState, depth int) (*lua.LState, int, bool) {
	if depth == 0 {
		return nil, 0, false
	}
	bottom, _ := L.GetStack(depth - 1)
	body := L.G.Registry.RawGetString(callbackBodyKey)
	if fn, err := L.GetInfo("f", bottom, lua.LNil); err != nil || body == lua.LNil || fn != body {
		return nil, 0, false
	}
	_, value := L.GetLocal(bottom, 1)
	owner, ok := value.(*lua.LState)
	switch {
	case !ok:
		return nil, 0, false
	case owner == parent:
		for level := 0; ; level++ {
			dbg, ok := owner.GetStack(level)
			if !ok {
				return nil, 0, false
			}
			switch kindOf(owner, dbg) {
			case goCode:
			case luaCode:
				return owner, level, true
			default:
				return nil, 0, false
			}
		}
	case suspended(owner):
		return owner, 0, true
	}
	return nil, 0, false
}

// pcallCaller is, for L, a coroutine holding depth frames, the coroutine that called pcall
// and the level there of pcall's caller, when L runs a pcall's function: its bottom frame
// stands in for C, and parent, the coroutine that resumed it (L.Parent while it runs), is
// in pcall's workings.
func pcallCaller(L, parent *lua.LState, depth int) (*lua.LState, int, bool) {
	if parent == nil || depth == 0 {
		return nil, 0, false
	}
	if bottom, _ := L.GetStack(depth - 1); kindOf(L, bottom) != standIn {
		return nil, 0, false
	}
	inPcall := false
	for level := 0; ; level++ {
		dbg, ok := parent.GetStack(level)
		if !ok {
			return nil, 0, false
		}
		switch kindOf(parent, dbg) {
		case goCode:
		case standIn:
			inPcall = true
		case luaCode:
			if inPcall {
				return parent, level, true
			}
			return nil, 0, false // resumed by Lua code: a coroutine of its own
		default:
			return nil, 0, false
		}
	}
}

// frameKind is what a frame runs, for placing errors as CC does.
type frameKind int

const (
	unreadable frameKind = iota // its debug information could not be read
	goCode                      // a Go function: C in CC
	standIn                     // Lua code standing in for C (CFrameSource)
	luaCode                     // a program's or the ROM's Lua code
)

// kindOf says what th's frame dbg (from th.GetStack) runs.
func kindOf(th *lua.LState, dbg *lua.Debug) frameKind {
	if _, err := th.GetInfo("S", dbg, lua.LNil); err != nil {
		return unreadable
	}
	switch {
	case dbg.What == "G":
		return goCode
	case dbg.Source == CFrameSource:
		return standIn
	}
	return luaCode
}

// BlameCallersCaller runs body, the work of a Go function that other code reaches through
// a Lua function of its own (peripheral.call into a peripheral's method), so that an error
// body raises at the running function's caller (as RaiseMessage places it) names the
// caller of that caller instead: CC raises a peripheral method's errors one level up, at
// the program that called peripheral.call rather than inside the ROM's peripheral API.
// That is a fixed level, 2 (PeripheralAPI.call's FastLuaException, which Cobalt places
// with fileLine(thread, 2)), not the nearest Lua code: when it is C, as under
// pcall(modem.open, -1), whose wrapper tail-calls peripheral.call, the error has no
// position.
func BlameCallersCaller(L *lua.LState, body func() int) int {
	here := CallerWhere(L)
	if here == "" {
		return body()
	}
	defer func() {
		if r := recover(); r != nil {
			if apiErr, ok := r.(*lua.ApiError); ok {
				if msg, ok := apiErr.Object.(lua.LString); ok && strings.HasPrefix(string(msg), here) {
					apiErr.Object = lua.LString(whereAt(L, 2) + string(msg)[len(here):])
				}
			}
			panic(r)
		}
	}()
	return body()
}

// RaiseBare raises a message with no position, as CC's bare errors (error(msg, 0)).
func RaiseBare(L *lua.LState, msg string) {
	L.Error(lua.LString(msg), 0)
}

// CheckString is argument n as a string; numbers convert, as in Lua's own library (CC's
// Java APIs refuse them: StrictString).
func CheckString(L *lua.LState, n int) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return ccformat.FormatNumber(float64(v))
	}
	TypeError(L, n, "string")
	return ""
}

// OptString is CheckString, or def for nil.
func OptString(L *lua.LState, n int, def string) string {
	if L.Get(n) == lua.LNil {
		return def
	}
	return CheckString(L, n)
}

// CheckNumber is argument n as a number (any, nan and inf included); a string holding a
// number converts, as Cobalt's checkDouble does.
func CheckNumber(L *lua.LState, n int) float64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, ok := parseNumber(string(v)); ok {
			return f
		}
	}
	TypeError(L, n, "number")
	return 0
}

// CheckInteger is argument n as Cobalt's checkInteger takes it: truncated to a 32-bit int
// (JavaInt); strings holding numbers convert, as Lua's own library functions do.
func CheckInteger(L *lua.LState, n int) int {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return JavaInt(float64(v))
	case lua.LString:
		if f, ok := parseNumber(string(v)); ok {
			return JavaInt(f)
		}
	}
	TypeError(L, n, "number")
	return 0
}

// OptInteger is CheckInteger, or def for nil.
func OptInteger(L *lua.LState, n int, def int) int {
	if L.Get(n) == lua.LNil {
		return def
	}
	return CheckInteger(L, n)
}

// CheckTable is argument n as a table.
func CheckTable(L *lua.LState, n int) *lua.LTable {
	if t, ok := L.Get(n).(*lua.LTable); ok {
		return t
	}
	TypeError(L, n, "table")
	return nil
}

// parseNumber converts a string as Cobalt's tonumber would.
func parseNumber(s string) (float64, bool) {
	return ccformat.ParseNumber(s, 10)
}
