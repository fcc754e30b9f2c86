package computer

import (
	"strconv"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// BenchmarkToString is the cost of one tostring from Lua code (with its loop's step): a
// number and a string take the Go path, a table with a __tostring hands it off to
// cfuncs.lua's stand-in, where it may yield.
func BenchmarkToString(b *testing.B) {
	for _, c := range []struct{ name, value string }{
		{"number", "1.5"},
		{"string", `"abc"`},
		{"table", `{}`},
		{"__tostring", `setmetatable({}, { __tostring = function() return "t" end })`},
	} {
		b.Run(c.name, func(b *testing.B) {
			L := lua.NewState()
			defer L.Close()
			openLibs(L)
			_, native, err := installCFuncs(L)
			if err != nil {
				b.Fatal(err)
			}
			installHandOffs(L, native)
			loop, err := L.LoadString(`local v, tostring = ` + c.value + `, tostring
				for _ = 1, ` + strconv.Itoa(b.N) + ` do local _ = tostring(v) end`)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			L.Push(loop)
			L.Call(0, 0)
		})
	}
}
