// Package luakit is the one place fakecraft's Go APIs take CC: Tweaked's argument rules
// from: the type names CC's messages use (nan, inf, -inf, "no value"), the argument checks
// of CC's Java APIs, and errors raised at the caller's position. Every API is installed
// through one signature (Opener) from one list, as gopher-lua's linit.go lists its
// libraries.
package luakit

import (
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/host"
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

// ArgError raises CC's "bad argument #n (expected expected, got T)".
func ArgError(L *lua.LState, n int, expected string) {
	L.RaiseError("bad argument #%d (%s expected, got %s)", n, expected, ArgTypeName(L, n))
}

// Raise raises a formatted message at the position of the Lua code that called the Go
// function (gopher-lua's RaiseError).
func Raise(L *lua.LState, format string, args ...any) {
	L.RaiseError(format, args...)
}

// RaiseBare raises a message with no position, as CC's bare errors (error(msg, 0)).
func RaiseBare(L *lua.LState, msg string) {
	L.Error(lua.LString(msg), 0)
}

// Expect checks argument n against Lua type names ("string", "number", "nil", …) and
// returns it; the message lists them as cc.expect does ("string or number").
func Expect(L *lua.LState, n int, types ...string) lua.LValue {
	v := L.Get(n)
	got := v.Type().String()
	for _, t := range types {
		if t == got {
			return v
		}
	}
	ArgError(L, n, joinTypes(types))
	return lua.LNil
}

func joinTypes(types []string) string {
	switch len(types) {
	case 0:
		return "value"
	case 1:
		return types[0]
	}
	return strings.Join(types[:len(types)-1], ", ") + " or " + types[len(types)-1]
}

// CheckString is argument n as a string; numbers convert (as CC's Java API does).
func CheckString(L *lua.LState, n int) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return ccformat.FormatNumber(float64(v))
	}
	ArgError(L, n, "string")
	return ""
}

// OptString is CheckString, or def for nil.
func OptString(L *lua.LState, n int, def string) string {
	if L.Get(n) == lua.LNil {
		return def
	}
	return CheckString(L, n)
}

// CheckNumber is argument n as a number (any, nan and inf included).
func CheckNumber(L *lua.LState, n int) float64 {
	if v, ok := L.Get(n).(lua.LNumber); ok {
		return float64(v)
	}
	ArgError(L, n, "number")
	return 0
}

// CheckFinite is argument n as a finite number: CC's Java APIs name nan and inf in the
// message ("number expected, got inf").
func CheckFinite(L *lua.LState, n int) float64 {
	if v, ok := L.Get(n).(lua.LNumber); ok && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
		return float64(v)
	}
	ArgError(L, n, "number")
	return 0
}

// OptFinite is CheckFinite, or def for nil.
func OptFinite(L *lua.LState, n int, def float64) float64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return CheckFinite(L, n)
}

// CheckInteger is argument n truncated to an integer; strings holding numbers convert, as
// Lua's own library functions do.
func CheckInteger(L *lua.LState, n int) int {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return int(float64(v))
	case lua.LString:
		if f, ok := parseNumber(string(v)); ok {
			return int(f)
		}
	}
	ArgError(L, n, "number")
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
	ArgError(L, n, "table")
	return nil
}

// parseNumber converts a string as Lua's tonumber would; gopher-lua answers 0 for text that
// is no number, so a 0 only counts when the text has a zero digit.
func parseNumber(s string) (float64, bool) {
	v := lua.LVAsNumber(lua.LString(s))
	if v == 0 && !strings.Contains(s, "0") {
		return 0, false
	}
	return float64(v), true
}

// Opener installs one API into a computer's Lua state. It runs on the goroutine that owns
// the state before the bios; h is the computer.
type Opener func(L *lua.LState, h host.Host) error

// Library is one API and its opener.
type Library struct {
	Name string
	Open Opener
}

// OpenAll installs libs in order.
func OpenAll(L *lua.LState, h host.Host, libs []Library) error {
	for _, lib := range libs {
		if err := lib.Open(L, h); err != nil {
			return fmt.Errorf("install %s: %w", lib.Name, err)
		}
	}
	return nil
}
