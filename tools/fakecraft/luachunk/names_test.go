package luachunk

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

func TestDisplayName(t *testing.T) {
	long := strings.Repeat("x", 50)
	tests := []struct{ name, want string }{
		{"@/rom/startup.lua", "/rom/startup.lua"},
		{"=stdin", "stdin"},
		{"name", `[string "name"]`},
		{"return 1\nreturn 2", `[string "return 1..."]`},
		{long, `[string "` + long[:45] + `..."]`},
		{long[:44], `[string "` + long[:44] + `"]`},
		{long[:45], `[string "` + long[:45] + `..."]`}, // C Lua cuts at the room, not past it
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, DisplayName(tt.name), tt.name)
	}
}

// Every function of a chunk reports the chunk's name as its source; errors show the
// display name.
func TestSourceIsTheChunkName(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	for _, name := range []string{"name", "=name", "@/x.lua", "local f = 1"} {
		fn, err := Load(L, "return function() error('x') end", name, L.G.Global)
		require.NoError(t, err)
		assert.Equal(t, name, Source(fn.Proto))
		L.Push(fn)
		L.Call(0, 1)
		inner := L.Get(-1).(*lua.LFunction)
		L.Pop(1)
		assert.Equal(t, name, Source(inner.Proto))
		assert.Equal(t, DisplayName(name), inner.Proto.SourceName)
	}
	// An _ENV chunk is the inner function of a wrapper; it has the name too.
	fn, err := Load(L, "return _ENV", "envchunk", L.G.Global)
	require.NoError(t, err)
	assert.Equal(t, "envchunk", Source(fn.Proto))
}
