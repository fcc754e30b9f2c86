package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunDrop: --drop hands files to the computer as a player's drag and drop; the import
// program saves them in the computer's directory under their own names.
func TestRunDrop(t *testing.T) {
	src := t.TempDir()
	a, b := filepath.Join(src, "a.txt"), filepath.Join(src, "b.bin")
	require.NoError(t, os.WriteFile(a, []byte("first"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte{0, 1, 0xff}, 0o644))
	dir := t.TempDir()
	code, out, errOut := run(t, "run", "--root", shellRepo(t), "--no-autostart", "--dir", dir,
		"--drop", a, "--drop", b, "import")
	assert.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "Drop files to transfer them to this computer\nTransferring a.txt\nTransferring b.bin\n", out)
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "first", string(got))
	got, err = os.ReadFile(filepath.Join(dir, "b.bin"))
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 0xff}, got)

	code, _, errOut = run(t, "run", "--root", shellRepo(t), "--drop", filepath.Join(src, "absent"), "import")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "absent")
}
