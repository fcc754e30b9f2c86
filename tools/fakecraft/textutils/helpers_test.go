package textutils

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// newState is a Lua state with textutils installed, closed when the test ends.
func newState(t *testing.T) *lua.LState {
	t.Helper()
	L := lua.NewState()
	t.Cleanup(L.Close)
	Install(L)
	return L
}

// run executes code as the chunk "test" and returns everything it returns.
func run(t *testing.T, L *lua.LState, code string) []lua.LValue {
	t.Helper()
	fn, err := L.Load(strings.NewReader(code), "test")
	require.NoError(t, err, "compile %q", code)
	top := L.GetTop()
	L.Push(fn)
	require.NoError(t, L.PCall(0, lua.MultRet, nil), "run %q", code)
	out := make([]lua.LValue, 0, L.GetTop()-top)
	for i := top + 1; i <= L.GetTop(); i++ {
		out = append(out, L.Get(i))
	}
	L.SetTop(top)
	return out
}

// runString runs code that returns exactly one string.
func runString(t *testing.T, L *lua.LState, code string) string {
	t.Helper()
	out := run(t, L, code)
	require.Len(t, out, 1, "results of %q", code)
	s, ok := out[0].(lua.LString)
	require.True(t, ok, "result of %q is %s, not a string", code, out[0].Type())
	return string(s)
}

// runError runs code that must raise, and returns the error value as a string.
func runError(t *testing.T, L *lua.LState, code string) string {
	t.Helper()
	fn, err := L.Load(strings.NewReader(code), "test")
	require.NoError(t, err, "compile %q", code)
	top := L.GetTop()
	L.Push(fn)
	err = L.PCall(0, lua.MultRet, nil)
	L.SetTop(top)
	require.Error(t, err, "%q should raise", code)
	var apiErr *lua.ApiError
	require.ErrorAs(t, err, &apiErr)
	return apiErr.Object.String()
}
