package luachunk

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// runNamed loads src under chunkName and returns its first result as a string, and the
// prototype it ran.
func runNamed(t *testing.T, src, chunkName string) (string, *lua.FunctionProto) {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	fn, err := Load(L, src, chunkName, L.G.Global)
	require.NoError(t, err)
	L.Push(fn)
	require.NoError(t, L.PCall(0, 1, nil))
	return L.Get(-1).String(), fn.Proto
}

// TestAFilesChunkIsCompiledOnceForItsSource: a file loaded again with the same source (the
// next computer's boot, the next spec's require) runs the prototype compiled the first time;
// the file changed runs its new source, and the old one loaded again its own.
func TestAFilesChunkIsCompiledOnceForItsSource(t *testing.T) {
	const name = "@/apis/cache_test_lib.lua"
	got, first := runNamed(t, `return "one" .. 1`, name)
	assert.Equal(t, "one1", got)
	got, again := runNamed(t, `return "one" .. 1`, name)
	assert.Equal(t, "one1", got)
	assert.Same(t, first, again, "the same source under the same name is compiled once")

	got, changed := runNamed(t, `return "two" .. 2`, name)
	assert.Equal(t, "two2", got, "a file changed runs what it says now")
	assert.NotSame(t, first, changed)
	got, _ = runNamed(t, `return "one" .. 1`, name)
	assert.Equal(t, "one1", got)

	got, elsewhere := runNamed(t, `return "one" .. 1`, "@/apis/cache_test_other.lua")
	assert.Equal(t, "one1", got)
	assert.NotSame(t, first, elsewhere, "another file's chunk is its own (its name is its functions' source)")
	assert.Equal(t, "@/apis/cache_test_other.lua", Source(elsewhere))
}

// TestAStringsChunkIsNotKept: a chunk named by its text or "=name" (load of a string a program
// built) is compiled each time, so that a program's data fills no cache.
func TestAStringsChunkIsNotKept(t *testing.T) {
	for _, name := range []string{`return "data"`, "=data"} {
		_, first := runNamed(t, `return "data"`, name)
		_, again := runNamed(t, `return "data"`, name)
		assert.NotSame(t, first, again, name)
	}
}

// TestTheChunkCacheKeepsAtMostItsBytes: past maxBytes of source a chunk is not kept (it is
// compiled each time it loads); a file's chunk replaced by a longer one gives back the room of
// the one it replaces.
func TestTheChunkCacheKeepsAtMostItsBytes(t *testing.T) {
	c := chunkCache{byName: map[string]cached{}, maxBytes: 100}
	compiled := func(src string) Chunk {
		t.Helper()
		chunk, err := Compile(src, "cache")
		require.NoError(t, err)
		return chunk
	}
	srcLong, srcShort := "return '"+strings.Repeat("a", 50)+"'", "return '"+strings.Repeat("b", 40)+"'"
	require.Len(t, srcLong, 59)
	require.Len(t, srcShort, 49)

	c.put("@/a.lua", srcLong, compiled(srcLong))
	_, ok := c.get("@/a.lua", srcLong)
	assert.True(t, ok)
	c.put("@/b.lua", srcShort, compiled(srcShort))
	_, ok = c.get("@/b.lua", srcShort)
	assert.False(t, ok, "59 + 49 bytes are past 100")
	_, ok = c.get("@/a.lua", srcLong)
	assert.True(t, ok, "what was kept stays")

	c.put("@/a.lua", srcShort, compiled(srcShort))
	_, ok = c.get("@/a.lua", srcShort)
	assert.True(t, ok, "a replaced entry's room is given back")
	_, ok = c.get("@/a.lua", srcLong)
	assert.False(t, ok, "an entry serves only its own source")
	assert.Equal(t, 49, c.bytes)
}
