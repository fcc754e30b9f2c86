package luakit

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// BadArgumentReason raises "bad argument #n (reason)", Lua's luaL_argerror, for a check
// that is not about the type alone ("table or string expected", "invalid format").
func BadArgumentReason(L *lua.LState, n int, reason string) {
	RaiseMessage(L, fmt.Sprintf("bad argument #%d (%s)", n, reason))
}
