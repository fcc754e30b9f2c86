package machine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer"
)

// TestROMLayout: /rom holds at its top exactly what CC: Tweaked's ROM holds, so Lua that lists
// it sees what it would in the game; fakecraft's launcher is outside it, and only on TrapOS
// computers.
func TestROMLayout(t *testing.T) {
	cc := []string{"apis", "autorun", "help", "modules", "motd.txt", "programs", "startup.lua"}

	t.Run("trapos computer", func(t *testing.T) {
		m, err := New(Options{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Close() })
		rom, err := m.FS.List("/rom")
		require.NoError(t, err)
		assert.Equal(t, cc, rom)
		root, err := m.FS.List("/")
		require.NoError(t, err)
		assert.Equal(t, []string{".fakecraft", "rom"}, root)
		launcher, err := m.FS.List(computer.LauncherDir)
		require.NoError(t, err)
		assert.Equal(t, []string{"boot.lua", "console.lua", "spec.lua"}, launcher)
	})

	t.Run("bare computer", func(t *testing.T) {
		m, err := New(Options{Bare: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Close() })
		rom, err := m.FS.List("/rom")
		require.NoError(t, err)
		assert.Equal(t, cc, rom)
		root, err := m.FS.List("/")
		require.NoError(t, err)
		assert.Equal(t, []string{"rom"}, root, "a bare computer is CC's alone: no launcher")
	})

	t.Run("command computer places", func(t *testing.T) {
		m, err := New(Options{Bare: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Close() })
		for _, dir := range []string{"/rom/apis/command", "/rom/modules/command", "/rom/programs/command"} {
			assert.True(t, m.FS.IsDir(dir), dir)
		}
	})
}
