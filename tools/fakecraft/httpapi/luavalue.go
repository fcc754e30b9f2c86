package httpapi

import (
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
)

// stringReader adapts a string for LState.Load.
func stringReader(s string) *strings.Reader { return strings.NewReader(s) }

// rawToString converts v as CC's argument coercion does: Lua's tostring without __tostring.
// Numbers use %.14g like Lua 5.2 (gopher-lua's own formatting differs).
func rawToString(v lua.LValue) string {
	switch x := v.(type) {
	case lua.LString:
		return string(x)
	case lua.LNumber:
		return ccformat.FormatNumber(float64(x))
	default:
		return v.String()
	}
}
