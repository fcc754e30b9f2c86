package luachunk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// run loads src with a fresh environment (that falls back to the globals) and returns its
// results as strings.
func run(t *testing.T, src string) []string {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	env := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", L.G.Global)
	L.SetMetatable(env, mt)
	fn, err := Load(L, src, "=test", env)
	require.NoError(t, err)
	L.Push(fn)
	require.NoError(t, L.PCall(0, lua.MultRet, nil))
	var out []string
	for i := 1; i <= L.GetTop(); i++ {
		out = append(out, L.Get(i).String())
	}
	return out
}

func TestEscapes(t *testing.T) {
	tests := []struct{ src, want string }{
		{`return "\x41\x62"`, "Ab"},
		{`return "\u{48}\u{e9}"`, "H\xc3\xa9"},
		{`return "\u{10FFFF}"`, "\xf4\x8f\xbf\xbf"},
		{`return "\u{000000041}\u{D800}"`, "A\xed\xa0\x80"}, // leading zeros, a surrogate, as Cobalt
		{`return "\q\255"`, "q\xff"},                        // Cobalt takes any escaped character as itself
		{"return 'a\\z  \n   b'", "ab"},
		{`return "\\x41"`, `\x41`},            // an escaped backslash, then text
		{`return [[\x41]]`, `\x41`},           // long strings have no escapes
		{"-- \"\\x41\"\nreturn '\\x41'", "A"}, // nor comments
		{`return "\x41" .. '\x42' .. "\"\x43"`, `AB"C`},
		{`return "\0651"`, "A1"}, // \ddd stays the lexer's
	}
	for _, tt := range tests {
		assert.Equal(t, []string{tt.want}, run(t, tt.src), tt.src)
	}
}

func TestEscapeZKeepsLineNumbers(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	_, err := Load(L, "local s = 'a\\z\n\n  b'\nlocal x = = 1", "=chunk", L.G.Global)
	require.Error(t, err)
	assert.Equal(t, "chunk:4: unexpected symbol near '='", err.Error())
}

func TestEnv(t *testing.T) {
	tests := []struct{ src, want string }{
		{`x = 1 return _ENV.x`, "1"},
		{`_ENV.y = 2 return y`, "2"},
		{`return _ENV == _G`, "false"}, // the chunk's own environment, not the globals
		{`local function f() return _ENV end return f() == _ENV`, "true"},
		{`local t = { print = 1 } local _ENV = t return print`, "1"},
		{`local function f(_ENV) return z end return f({ z = 3 })`, "3"},
		{`local _ENV = { v = 4 } do local _ENV = { v = 5 } end return v`, "4"},
		{`local print = 7 local _ENV = {} return print`, "7"}, // locals are not globals
		{`_ENV = { w = 6 } return w`, "6"},
		{`local e = {} local _ENV = e x = 8 return e.x`, "8"},
		{`local _ENV = { t = {} } function t.f() return 9 end return t.f()`, "9"},
	}
	for _, tt := range tests {
		assert.Equal(t, []string{tt.want}, run(t, tt.src), tt.src)
	}
}

func TestNoRewriteWithoutNeed(t *testing.T) {
	c, err := Compile("return 1", "x")
	require.NoError(t, err)
	assert.False(t, c.Wrapped)
	assert.False(t, needsEscapePass(`return "\n\\"`))
	assert.True(t, needsEscapePass(`return "\x41"`))
}

func TestVarargFunctionsHaveNoImplicitArg(t *testing.T) {
	assert.Equal(t, []string{"global"}, run(t, `arg = "global" local _ = _ENV return (function(...) return arg end)()`))
}

func TestConcatFormatsNumbersAsCC(t *testing.T) {
	tests := []struct{ src, want string }{
		{`return "x" .. 1/3`, "x0.33333333333333"},
		{`local n = 0.1 + 0.2 return n .. "!"`, "0.3!"},
		{`return "a" .. 2^63`, "a9223372036854775807"},
		{`return "a" .. 2^64`, "a1.844674407371e+19"},
		{`return 0/0 .. "|" .. 1/0 .. "|" .. -1/0`, "nan|inf|-inf"},
		{`return "n" .. 1.5 .. -2.25 .. 10 .. 1e100`, "n1.5-2.2510" + "1e+100"},
		{`local t = { v = 1/3 } return t.v .. ""`, "0.33333333333333"},
		{`local function f() return 1/3, 1 end return "r" .. f()`, "r0.33333333333333"},
		{`return (function(...) return "v" .. ... end)(1/3)`, "v0.33333333333333"},
		{`local x return "s" .. (x or 1/3)`, "s0.33333333333333"},
		{`return "plain" .. "strings" .. 'only'`, "plainstringsonly"},
		{`local s = "" for i = 1, 3 do s = s .. i / 2 end return s`, "0.511.5"},
		{`local s = 1/4 .. "" return #s`, "4"},
		{`local s = "" for i = 0.5, 2 do s = s .. i .. "," end return s`, "0.5,1.5,"},
		{`local s = "" for i = 1, 3 do i = i / 2 s = s .. i end return s`, "0.511.5"},
		{`local s = "" for i = 1, 2 do local i = i / 4 s = s .. i end return s`, "0.250.5"},
		{`local s = "" for i = 1, 2 do s = s .. (function(i) return i end)(i / 4) end return s`, "0.250.5"},
		{`local s = "" for i = 1, 2 do s = s .. i .. (function() local i = 0.5 return i end)() end return s`, "10.520.5"},
	}
	for _, tt := range tests {
		assert.Equal(t, []string{tt.want}, run(t, tt.src), tt.src)
	}
}

// TestConcatLeavesOtherValuesAlone: only numbers change; strings, metamethods and errors are
// what gopher-lua's own `..` makes of them. An operand that passed through the number filter
// is a call's result, named in an error as the value it was given (the fork's Hidden), as CC
// names the operand.
func TestConcatLeavesOtherValuesAlone(t *testing.T) {
	tests := []struct{ src, want string }{
		{`local mt = { __concat = function(a, b) return "meta" end } return setmetatable({}, mt) .. "x"`, "meta"},
		{`local mt = { __concat = function(a, b) return type(a) .. type(b) end } return "x" .. setmetatable({}, mt)`, "stringtable"},
		{`local ok, err = pcall(function() local t = {} return "x" .. t end) return err`,
			"test:1: attempt to concatenate local 't' (a table value)"},
		{`local ok, err = pcall(function() local t return "x" .. t end) return err`,
			"test:1: attempt to concatenate local 't' (a nil value)"},
	}
	for _, tt := range tests {
		assert.Equal(t, []string{tt.want}, run(t, tt.src), tt.src)
	}
}

// TestForListsGopherLuaMiscompiles: a generic for's list is where gopher-lua miscompiles a
// concatenation whose first operand is a call, and a list of fewer than three values; such a
// list is hoisted into locals first.
func TestForListsGopherLuaMiscompiles(t *testing.T) {
	tests := []struct{ src, want string }{
		{`local s, n = "a\nb", 0 for l in (tostring(s) .. "\n"):gmatch("[^\n]*\n") do n = n + 1 end return n`, "2"},
		{`local s, n = "a\nb", 0 for l in (s:upper() .. 1/4):gmatch(".") do n = n + 1 end return n`, "7"},
		{`local out = "" for a in ("x" .. 1):gmatch(".") do for b in (tostring(a) .. "y"):gmatch(".") do out = out .. b if b == "y" then break end end end return out`, "xy1y"},
		{`local n = 0 for l in (tostring(1) .. "ab"):gmatch(".") do if l == "a" then goto skip end n = n + 1 ::skip:: end return n`, "2"},
		// The other shape of the bug: a list of fewer than three values left the control
		// register as it was, so next started after a stale key.
		{`local r for _, v in next, { "x" } do r = v end return r`, "x"},
		{`local n = 0 for _ in next, { 1, 2, 3 } do n = n + 1 end return n`, "3"},
		{`local t, n = { a = 1, b = 2 }, 0 for k in next, t do n = n + 1 end return n`, "2"},
		{`local s, n = "a\nb", 0 for l in (s .. "\n"):gmatch("[^\n]*\n") do n = n + 1 end return n`, "2"},
		{`local s, r = "a", nil for _, v in ipairs({ s .. "b" }) do r = v end return r`, "ab"},
		{`local s, r = "a", nil for _, v in pairs({ s .. 1/3 .. s }) do r = v end return r`, "a0.33333333333333a"},
		{`local r for _, v in ipairs({ "k" .. 1/3 }) do r = v end return r`, "k0.33333333333333"},
		{`local s, n = "a\nb", 0 for l in ((s) .. ("\n")):gmatch("[^\n]*\n") do n = n + 1 end return n`, "2"},
	}
	for _, tt := range tests {
		assert.Equal(t, []string{tt.want}, run(t, tt.src), tt.src)
	}
}

func TestConcatRewriteOnlyWhereNeeded(t *testing.T) {
	for src, wrapped := range map[string]bool{
		`return 1`:                                                     false,
		`return "a" .. "b"`:                                            false,
		`return "a" .. 1.5`:                                            false, // folded at compile time
		`local s = "a" return s .. "b"`:                                true,
		`return "a" .. tostring(1/3)`:                                  false,
		`local t = {} return "n=" .. #t`:                               false,
		`local function f(...) end f(...)`:                             false,
		`local s = "" for i = 1, 9 do s = s .. i end`:                  true, // s may be a number
		`local t = {} for i = 1, 9 do t[i] = "n" .. i end`:             false,
		`local t = {} for i = 9, 1, -1 do t[i] = "n" .. i end`:         false,
		`local t = {} for i = 1, 9, 0.5 do t[i] = "n" .. i end`:        true,
		`local t = {} for i = 1, 9 do i = i * 1.5 t[i] = "n" .. i end`: true,
	} {
		c, err := Compile(src, "x")
		require.NoError(t, err, src)
		assert.Equal(t, wrapped, c.Wrapped, src)
	}
}

// A global read or assigned through a chunk's own _ENV (rewritten to a field of it) is
// placed at its name, as Cobalt's GETTABLE/SETTABLE of a global is: its environment's
// metamethods can fail there (a strict environment).
func TestEnvGlobalsAreMarkedAtTheirName(t *testing.T) {
	const src = `
local getinfo, setmetatable = debug.getinfo, setmetatable
local read, written
local _ENV = setmetatable({}, {
  __index = function() read = getinfo(2, "l").currentcolumn end,
  __newindex = function() written = getinfo(2, "l").currentcolumn end,
})
local y = 1 + (missing or 0)
  made = 1
return read, written`
	assert.Equal(t, []string{"16", "3"}, run(t, src))
}
