package machine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAutostart(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(s), 0o644))
	}
	write("b/ccpm.json", `{"name":"b","autostart":["servers/b.lua"]}`)
	write("a/ccpm.json", `{"name":"a","autostart":["servers/a.lua","/servers/a2.lua"]}`)
	write("index.json", `{}`)

	all, err := Autostart(dir, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"/servers/a.lua", "/servers/a2.lua", "/servers/b.lua"}, all)

	only, err := Autostart(dir, []string{"b"})
	require.NoError(t, err)
	assert.Equal(t, []string{"/servers/b.lua"}, only)

	_, err = Autostart(dir, []string{"zzz"})
	assert.ErrorContains(t, err, `package "zzz" not found`)

	none, err := Autostart(filepath.Join(dir, "absent"), nil)
	require.NoError(t, err)
	assert.Empty(t, none)

	write("broken/ccpm.json", `{`)
	_, err = Autostart(dir, nil)
	assert.ErrorContains(t, err, "parse")
}

func TestFindRepoRoot(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.work"), nil, 0o644))
	deep := filepath.Join(dir, "x", "y")
	require.NoError(t, os.MkdirAll(deep, 0o755))
	root, err := FindRepoRoot(deep)
	require.NoError(t, err)
	assert.Equal(t, dir, root)
}
