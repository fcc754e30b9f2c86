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
		{`return "\u{7FFFFFFF}"`, "\xfd\xbf\xbf\xbf\xbf\xbf"},
		{`return "\u{10FFFF}"`, "\xf4\x8f\xbf\xbf"},
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
	assert.False(t, c.EnvWrapped)
	assert.False(t, needsEscapePass(`return "\n\\"`))
	assert.True(t, needsEscapePass(`return "\x41"`))
}

func TestVarargFunctionsHaveNoImplicitArg(t *testing.T) {
	assert.Equal(t, []string{"global"}, run(t, `arg = "global" local _ = _ENV return (function(...) return arg end)()`))
}
