package luakit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// errorOf runs code, which must fail, with f installed as the global f, and returns the
// error message.
func errorOf(t *testing.T, f lua.LGFunction, code string) string {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("f", L.NewFunction(f))
	require.NoError(t, L.DoString("ok, err = pcall(function() "+code+" end)"))
	require.Equal(t, lua.LFalse, L.GetGlobal("ok"), "%s should fail", code)
	return L.GetGlobal("err").String()
}

func TestArgumentRules(t *testing.T) {
	tests := []struct {
		name string
		f    lua.LGFunction
		code string
		want string
	}{
		// Lua's standard library as Cobalt words it: no argument number, "nil" for a missing
		// argument, a table's __name; numeric strings are numbers.
		{"standard library missing", func(L *lua.LState) int { CheckString(L, 1); return 0 }, "f()",
			"<string>:1: bad argument (string expected, got nil)"},
		{"standard library nil", func(L *lua.LState) int { CheckTable(L, 2); return 0 }, "f(1, nil)",
			"<string>:1: bad argument (table expected, got nil)"},
		{"standard library type name", func(L *lua.LState) int { CheckNumber(L, 1); return 0 }, "f(setmetatable({}, {__name = 'thing'}))",
			"<string>:1: bad argument (number expected, got thing)"},
		{"standard library numeric string", func(L *lua.LState) int { CheckNumber(L, 1); return 0 }, "f('1x')",
			"<string>:1: bad argument (number expected, got string)"},
		{"standard library value", func(L *lua.LState) int { CheckValue(L, 2); return 0 }, "f(1)",
			"<string>:1: bad argument #2 (value expected)"},
		{"gopher-lua's own checks", func(L *lua.LState) int { UseStdLibArgRules(L); L.CheckTable(1); return 0 }, "f(1)",
			"<string>:1: bad argument (table expected, got number)"},
		{"gopher-lua's own reasons", func(L *lua.LState) int { UseStdLibArgRules(L); L.CheckAny(1); return 0 }, "f()",
			"<string>:1: bad argument #1 (value expected)"},
		// PUC Lua's (CraftOS-PC's periphemu): "no value" past the last argument.
		{"puc missing", func(L *lua.LState) int { ArgError(L, 1, "string"); return 0 }, "f()",
			"<string>:1: bad argument #1 (string expected, got no value)"},
		// CC's Java APIs: "nil" for a missing argument, no conversions, finite numbers.
		{"java missing", func(L *lua.LState) int { StrictString(L, 1); return 0 }, "f()",
			"<string>:1: bad argument #1 (string expected, got nil)"},
		{"java refuses numbers", func(L *lua.LState) int { StrictString(L, 1); return 0 }, "f(1)",
			"<string>:1: bad argument #1 (string expected, got number)"},
		{"java nan is a number", func(L *lua.LState) int { StrictString(L, 1); return 0 }, "f(0/0)",
			"<string>:1: bad argument #1 (string expected, got number)"},
		{"java finite", func(L *lua.LState) int { CheckFinite(L, 1); return 0 }, "f(-1/0)",
			"<string>:1: bad argument #1 (number expected, got -inf)"},
		{"java finite missing", func(L *lua.LState) int { CheckFinite(L, 1); return 0 }, "f()",
			"<string>:1: bad argument #1 (number expected, got nil)"},
		{"java long nan", func(L *lua.LState) int { OptLong(L, 2); return 0 }, "f(1, 0/0)",
			"<string>:1: bad argument #2 (number expected, got nan)"},
		{"java custom type name", func(L *lua.LState) int { StrictString(L, 1); return 0 }, "f(setmetatable({}, {__name = 'some type'}))",
			"<string>:1: bad argument #1 (string expected, got some type)"},
		{"java bool", func(L *lua.LState) int { OptBool(L, 1, false); return 0 }, "f('yes')",
			"<string>:1: bad argument #1 (boolean expected, got string)"},
		// cc.expect: nil left out of the list, the function named when it was called by name.
		{"expect names the function", func(L *lua.LState) int { Expect(L, 1, "string", "nil"); return 0 }, "f(1)",
			"<string>:1: bad argument #1 to 'f' (string expected, got number)"},
		{"expect lists types", func(L *lua.LState) int { Expect(L, 2, "string", "number", "nil", "table"); return 0 }, "f(1, true)",
			"<string>:1: bad argument #2 to 'f' (string, number or table expected, got boolean)"},
		{"expect shows the first type when one is left", func(L *lua.LState) int { Expect(L, 1, "nil", "string"); return 0 }, "f(1)",
			"<string>:1: bad argument #1 to 'f' (nil expected, got number)"},
		{"expect without a name", func(L *lua.LState) int { Expect(L, 1, "string"); return 0 }, "local t = {f} t[1](1)",
			"<string>:1: bad argument #1 (string expected, got number)"},
		{"field", func(L *lua.LState) int { ExpectField(L, L.CheckTable(1), "k", "number"); return 0 }, "f({k = 'x'})",
			"<string>:1: bad field 'k' (number expected, got string)"},
		{"field missing", func(L *lua.LState) int { ExpectField(L, L.CheckTable(1), "k", "number"); return 0 }, "f({})",
			"<string>:1: field 'k' missing from table"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, errorOf(t, tc.f, tc.code))
		})
	}
}

func TestOptLongTruncatesAndSaturates(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	var got []string
	L.SetGlobal("f", L.NewFunction(func(L *lua.LState) int {
		v, ok := OptLong(L, 1)
		got = append(got, fmt.Sprint(v, ok))
		return 0
	}))
	require.NoError(t, L.DoString("f(2.9) f(-2.9) f(1e300) f(-1e300) f(nil)"))
	assert.Equal(t, []string{"2 true", "-2 true", "9223372036854775807 true", "-9223372036854775808 true", "0 false"}, got)
}

func TestRaiseIsPlacedAtTheCallingLuaCode(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("f", L.NewFunction(func(L *lua.LState) int { Raise(L, "went %s", "wrong"); return 0 }))
	require.NoError(t, L.DoString(`
		local function outer()
			f()
		end
		_, fromLua = pcall(outer)
		_, fromPcall = pcall(f)`))
	assert.Equal(t, "<string>:3: went wrong", L.GetGlobal("fromLua").String())
	// Called by pcall itself: the nearest Lua code is the line calling pcall, where CC's
	// Cobalt places a Java function's error too (LuaError's calculateLevel).
	assert.Equal(t, "<string>:6: went wrong", L.GetGlobal("fromPcall").String())
}

// TestRaiseLooksPastFakecraftsPcall: fakecraft's pcall runs the function in a coroutine whose
// body stands in for C; the error of a Go function it calls directly is placed at the line
// calling pcall, in the coroutine that called it, as CC places it. A coroutine of the
// program's own (not pcall's) ends the search: no position.
func TestRaiseLooksPastFakecraftsPcall(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("f", L.NewFunction(func(L *lua.LState) int { Raise(L, "went wrong"); return 0 }))
	stand := func(code string) *lua.LFunction {
		fn, err := L.Load(strings.NewReader(code), CFrameSource)
		require.NoError(t, err)
		return fn
	}
	// A stand-in pcall, as fakecraft's cfuncs.lua writes it: its body is a stand-in too.
	L.SetGlobal("body", stand(`local fn = ... return function(...) return (fn(...)) end`))
	L.SetGlobal("standInPcall", stand(`
		local co = coroutine.create(body(...))
		return coroutine.resume(co, select(2, ...))`))
	require.NoError(t, L.DoString(`
		local co = coroutine.create(f)
		_, ownCoroutine = coroutine.resume(co)
		_, viaPcall = standInPcall(f)`))
	assert.Equal(t, "went wrong", L.GetGlobal("ownCoroutine").String())
	assert.Equal(t, "<string>:4: went wrong", L.GetGlobal("viaPcall").String())
}

// BenchmarkTracebackOfADeepStack is debug.traceback's work at the bottom of 2000 Lua frames
// (a stack overflow's handler sees 32768): it walks the frames once, so its time grows with
// the depth, not with its square.
func BenchmarkTracebackOfADeepStack(b *testing.B) {
	L := lua.NewState(lua.Options{CallStackSize: 4096, RegistrySize: 1 << 16})
	defer L.Close()
	L.SetGlobal("bench", L.NewFunction(func(L *lua.LState) int {
		for b.Loop() {
			if !strings.HasPrefix(Traceback(L, 0), "stack traceback:") {
				b.Fatal("no traceback")
			}
		}
		return 0
	}))
	require.NoError(b, L.DoString(`local function deep(n) if n == 0 then return (bench()) end return (deep(n - 1)) end deep(2000)`))
}
