package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestBareDropKeepsEveryTypedLine: a drop lands while the prompt waits, and the shell puts
// the prompt back (its cursor blink off, then on) without read() having returned: that is
// not a new wait for a line. Each line typed runs once, in order, and none is lost at the
// end of the input (the last one was, when the blink had typed the next line early).
func TestBareDropKeepsEveryTypedLine(t *testing.T) {
	src := filepath.Join(t.TempDir(), "a.lua")
	require.NoError(t, os.WriteFile(src, []byte(`print("dropped")`), 0o644))
	for _, n := range []int{1, 2, 3} {
		var typed, want strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&typed, "label set L%d\n", i)
			fmt.Fprintf(&want, "> label set L%d\nComputer label set to \"L%d\"\n", i, i)
		}
		code, out, errOut := bare(t, t.TempDir(), typed.String(), "--drop", src)
		assert.Equal(t, ExitOK, code, errOut)
		assert.Contains(t, out, "Transferring a.lua\n", n)
		assert.Contains(t, out, want.String()+"> \n", n)
	}
}
