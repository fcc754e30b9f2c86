package computer

import (
	lua "github.com/yuin/gopher-lua"
)

// YieldBoundaryMessage is Lua 5.1's error for a yield that would cross Go code.
const YieldBoundaryMessage = "attempt to yield across metamethod/C-call boundary"

// yieldCrossesGo reports whether a yield by the running Go function (coroutine.yield, gsub
// passing a yield on) would have to pass through Go code to reach its coroutine's resume.
// gopher-lua (the fork in third_party/gopher-lua) runs a function called from Go (a library
// function's callback, a Go metamethod) in a nested interpreter loop:
// a yield there would end only that loop, and the Go code under it would carry on with a
// half-done call. A Lua metamethod or debug hook runs as a frame of the loop that needed it,
// and may yield; the fork's CanYield tells the two apart.
func yieldCrossesGo(L *lua.LState) bool {
	return !L.CanYield()
}
