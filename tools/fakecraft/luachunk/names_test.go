package luachunk

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// TestDisplayName: Cobalt 0.9.3's short_src (LoadState.getShortName), each case run on it
// as load's chunk name: 30 bytes, where C Lua has 60.
func TestDisplayName(t *testing.T) {
	long := strings.Repeat("x", 50)
	tests := []struct{ name, want string }{
		{"@/rom/startup.lua", "/rom/startup.lua"},
		{"@abcdefghijklmnopqrstuv", "abcdefghijklmnopqrstuv"},        // 22 bytes: whole
		{"@abcdefghijklmnopqrstuvw", "...bcdefghijklmnopqrstuvw"},    // 23: "..." and the last 22
		{"@/apis/libsandboxscreen.lua", "...s/libsandboxscreen.lua"}, // a TrapOS API's errors
		{"@/apis/libsandboxfiles.lua", "...is/libsandboxfiles.lua"},  // the gateway's libraryPosition
		{"@/rom/apis/textutils.lua", "...rom/apis/textutils.lua"},    // a ROM API's
		{"=stdin", "stdin"}, //
		{"=averyveryverylongchunknamethatgoeson", "averyveryverylongchunknametha"}, // 29 bytes
		{"name", `[string "name"]`},
		{"", `[string ""]`},
		{"return 1\nreturn 2", `[string "return 1..."]`},
		{"a\rb", `[string "a..."]`},
		{"local x <const> = 1", `[string "local x <cons..."]`},
		{long[:13], `[string "` + long[:13] + `"]`},
		{long[:14], `[string "` + long[:13] + `..."]`},
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
	for _, name := range []string{"name", "=name", "@/x.lua", "local f = 1", "@/a/path/longer/than/22/bytes.lua"} {
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
