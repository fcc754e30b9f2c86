package machine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"fakecraft/computer"
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

// TestCallersAPIsFollowTheStandardOnes: an API given in ExtraAPIs is installed after every
// standard one of the table (computer/apis.go), so it may use or replace them, and before
// the C stand-ins and the bios, which see what it left.
func TestCallersAPIsFollowTheStandardOnes(t *testing.T) {
	var missing, early []string
	probe := func(L *lua.LState, e *computer.Env) error {
		for _, name := range []string{"string", "bit32", "os", "_FAKECRAFT_TERM", "_FAKECRAFT_BIOS", "fs", "textutils", "http", "peripheral", "redstone", "rs"} {
			if L.GetGlobal(name) == lua.LNil {
				missing = append(missing, name)
			}
		}
		// cfuncs.lua makes coroutine.wrap a Lua stand-in for C: not yet.
		if wrap, ok := L.GetField(L.GetGlobal("coroutine"), "wrap").(*lua.LFunction); !ok || !wrap.IsG {
			early = append(early, "cfuncs.lua's coroutine.wrap")
		}
		// Replacing a standard API here is what the bios and programs then see.
		if tu, ok := L.GetGlobal("textutils").(*lua.LTable); ok {
			tu.RawSetString("probed", lua.LString("yes"))
		}
		return nil
	}
	var out strings.Builder
	m, err := New(Options{
		Files:     map[string]string{"/p.lua": `print(textutils.probed)`},
		Program:   "/p.lua",
		Stdout:    &out,
		ExtraAPIs: []computer.Installer{probe},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := m.Run(ctx)
	require.NoError(t, err)
	assert.True(t, res.OK, out.String())
	assert.Empty(t, missing, "standard APIs not yet installed when the caller's ran")
	assert.Empty(t, early, "installed before the caller's APIs")
	assert.Equal(t, "yes\n", out.String())
}
