package luakit

import (
	"math"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
)

// The argument rule of CC's Java APIs (IArguments): no value converts into another type,
// and a mismatch names the Lua type of what was given — "nil" for a missing argument,
// "number" for nan, a table's metatable __name if it has one — except where a number must
// be finite, which names nan, inf or -inf.

// javaArgError raises the Java APIs' message for argument n.
func javaArgError(L *lua.LState, n int, expected string) {
	BadArgument(L, n, expected, displayType(L, L.Get(n)))
}

// StrictString is argument n as a string; anything else, numbers included, is refused
// (IArguments.getString).
func StrictString(L *lua.LState, n int) string {
	s, ok := L.Get(n).(lua.LString)
	if !ok {
		javaArgError(L, n, "string")
	}
	return string(s)
}

// Coerced is a value as CC's Coerced<String> argument takes it (IArguments.getStringCoerced):
// Lua's tostring without the __tostring metamethod, so a missing argument is "nil".
func Coerced(v lua.LValue) string {
	switch v := v.(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return ccformat.FormatNumber(float64(v))
	}
	return v.String()
}

// OptStrictString is StrictString, or def for nil.
func OptStrictString(L *lua.LState, n int, def string) string {
	if L.Get(n) == lua.LNil {
		return def
	}
	return StrictString(L, n)
}

// OptionalString is StrictString, or nil for nil: Java's Optional<String> argument, where
// CC tells a missing string from an empty one (os.setComputerLabel("") labels the computer).
func OptionalString(L *lua.LState, n int) *string {
	if L.Get(n) == lua.LNil {
		return nil
	}
	s := StrictString(L, n)
	return &s
}

// CheckBool is argument n as a boolean (IArguments.getBoolean).
func CheckBool(L *lua.LState, n int) bool {
	v, ok := L.Get(n).(lua.LBool)
	if !ok {
		javaArgError(L, n, "boolean")
	}
	return bool(v)
}

// OptBool is argument n as a boolean, or def for nil.
func OptBool(L *lua.LState, n int, def bool) bool {
	switch v := L.Get(n).(type) {
	case *lua.LNilType:
		return def
	case lua.LBool:
		return bool(v)
	}
	javaArgError(L, n, "boolean")
	return def
}

// CheckFinite is argument n as a finite number (IArguments.getFiniteDouble): "number
// expected, got inf".
func CheckFinite(L *lua.LState, n int) float64 {
	v, ok := L.Get(n).(lua.LNumber)
	if !ok {
		javaArgError(L, n, "number")
	}
	if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
		BadArgument(L, n, "number", TypeName(v))
	}
	return float64(v)
}

// OptFinite is CheckFinite, or def for nil.
func OptFinite(L *lua.LState, n int, def float64) float64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return CheckFinite(L, n)
}

// OptLong is argument n as a finite number truncated towards zero, saturating at the ends
// of int64 as Java's cast does (IArguments.optLong); ok is false for nil.
func OptLong(L *lua.LState, n int) (v int64, ok bool) {
	if L.Get(n) == lua.LNil {
		return 0, false
	}
	return CheckLong(L, n), true
}

// CheckLong is argument n as a finite number (strings refused) truncated towards zero,
// saturating at the ends of int64 as Java's cast does (IArguments.getLong).
func CheckLong(L *lua.LState, n int) int64 {
	f := CheckFinite(L, n)
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// CheckInt is argument n as IArguments.getInt reads it: CheckLong cast to a Java int,
// which keeps the low 32 bits.
func CheckInt(L *lua.LState, n int) int {
	return int(int32(CheckLong(L, n)))
}
