package httpapi

import (
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// stringReader adapts a string for LState.Load.
func stringReader(s string) *strings.Reader { return strings.NewReader(s) }

// rawToString converts v as CC's argument coercion does: Lua's tostring without __tostring.
func rawToString(v lua.LValue) string { return luakit.Coerced(v) }
