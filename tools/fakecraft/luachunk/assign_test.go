package luachunk

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// Lua evaluates every value of a multiple assignment before it assigns any; stock
// gopher-lua v1.1.2 gets each of these wrong.
func TestMultipleAssignmentEvaluatesFirst(t *testing.T) {
	tests := []struct{ src, want string }{
		{`local a, b = 1, 2 a, b = b, a return a .. "," .. b`, "2,1"},
		{`local m, e = "M", nil m, e = nil, m return tostring(m) .. "," .. e`, "nil,M"},
		{`local a, b = 0, 0 a, b = a + 1, a + b return a .. "," .. b`, "1,0"},
		{`local function f(p, q) p, q = nil, p return q end return f(1)`, "1"},
		{`local i, t = 1, {} i, t[i] = i + 1, 20 return i .. "," .. t[1] .. "," .. tostring(t[2])`, "2,20,nil"},
		{`local i, t = 1, {} t[i], i = 20, 2 return i .. "," .. t[1] .. "," .. tostring(t[2])`, "2,20,nil"},
		{`local t = { 1, 2 } t[1], t[2] = t[2], t[1] return t[1] .. "," .. t[2]`, "2,1"},
		{`local a, d, f = {}, "e", 1 f, a.d = f, d return f .. "," .. a.d`, "1,e"},
		{`local x = 1 local function g() x, y = 2, x end g() return x .. "," .. y`, "2,1"},
		{`local a, b, c = 1, 2, 3 a, b, c = (function() return c, a end)() return a .. b .. tostring(c)`, "31nil"},
		{`local a, b = 1, 2 a, b = b, a, error == nil return a .. b`, "21"},
		{`local a, b = 1, 2 local function f(...) a, b = ... end f(b, a) return a .. b`, "21"},
		{`local s = 0 for i = 1, 3 do local a, b = i, s a, b = b, a s = s + a * b end return s`, "0"},
	}
	for _, tt := range tests {
		assert.Equal(t, []string{tt.want}, run(t, tt.src), tt.src)
	}
}

// Errors raised by a rewritten assignment still name the line it is on.
func TestMultipleAssignmentKeepsLines(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	fn, err := Load(L, "local a, b\n\na, b.x = 1, 2", "=chunk", L.G.Global)
	require.NoError(t, err)
	L.Push(fn)
	err = L.PCall(0, 0, nil)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "chunk:3:"), err.Error())
}
