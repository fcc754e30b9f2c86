package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"
)

// TestGetRCopiesADirectoryAsABackup: get -r copies a directory of a computer to the host as
// cp -r does, through the real gateway binary and a booted computer: names by the text rule
// (the CC name gr\xfc\xdfe.txt is grüße.txt), each file's bytes unchanged (a backup: text would
// make the byte E9 two bytes), an empty directory, a file over 1 MiB, and a total at the end.
// Into a directory that exists it copies into <it>/<the directory's name>; a second copy
// replaces the files. get of a directory without -r names get -r; put -r puts the copy back.
func TestGetRCopiesADirectoryAsABackup(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), capLimit)
	defer cancel()
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	big := make([]byte, 1<<20+12345)
	for i := range big {
		big[i] = byte(i * 7 % 256)
	}
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 9, "lab"
	opts.SpaceLimit = capSpaceLimit
	opts.Files = map[string]string{
		"/e2e.lua":                  capProgram,
		"/backup/gr\xfc\xdfe.txt":   "caf\xe9\n",
		"/backup/logs/big.bin":      string(big),
		"/backup/logs/today.log":    "ok\n",
		"/backup/programs/door.lua": "print('door')\n",
	}
	c := fakecrafttest.StartWithin(t, opts, capLimit)
	c.WaitFor(ctx, markerServing)
	set(ctx, t, c, "sandbox.allow_files", "write")
	set(ctx, t, c, "sandbox.allow_exec", "true")
	_, errOut, code := cli(ctx, t, g, nil, "exec", capTraposID, `fs.makeDir("/backup/empty")`)
	require.Equal(t, 0, code, errOut)

	dest := t.TempDir()
	_, errOut, code = cli(ctx, t, g, nil, "get", capTraposID, "/backup", dest)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "a directory, not a file (get -r copies it with everything in it; ls lists it)")

	for round := range 2 {
		out, errOut, code := cli(ctx, t, g, nil, "get", "-r", capTraposID, "/backup", dest)
		require.Equal(t, 0, code, errOut)
		assert.Empty(t, errOut, "round %d", round)
		root := filepath.Join(dest, "backup")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		assert.Equal(t, capTraposID+" /backup -> "+root+": 4 files and 4 directories (1060943 bytes)", lines[len(lines)-1], "round %d: the total", round)
		assert.Contains(t, out, capTraposID+" /backup/grüße.txt -> "+filepath.Join(root, "grüße.txt")+" (5 bytes)\n")

		got, err := os.ReadFile(filepath.Join(root, "grüße.txt"))
		require.NoError(t, err)
		assert.Equal(t, "caf\xe9\n", string(got), "the file's bytes, not UTF-8 text")
		got, err = os.ReadFile(filepath.Join(root, "logs", "big.bin"))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(big, got), "big.bin came back changed (%d bytes)", len(got))
		got, err = os.ReadFile(filepath.Join(root, "programs", "door.lua"))
		require.NoError(t, err)
		assert.Equal(t, "print('door')\n", string(got))
		st, err := os.Stat(filepath.Join(root, "empty"))
		require.NoError(t, err)
		assert.True(t, st.IsDir(), "the empty directory is copied")
		names, err := os.ReadDir(root)
		require.NoError(t, err)
		assert.Len(t, names, 4, "no temporary file is left: %v", names)
	}

	// A name that is not there is the copy itself, as cp -r makes it.
	named := filepath.Join(dest, "saved")
	out, errOut, code := cli(ctx, t, g, nil, "get", "-r", capTraposID, "/backup/logs", named)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, capTraposID+" /backup/logs -> "+named+": 2 files and 1 directory (1060924 bytes)")
	got, err := os.ReadFile(filepath.Join(named, "today.log"))
	require.NoError(t, err)
	assert.Equal(t, "ok\n", string(got))

	// put -r is the way back: the backup put as /restored (not there: the copy itself) and
	// read back is the computer's files byte for byte.
	out, errOut, code = cli(ctx, t, g, nil, "put", "-r", capTraposID, filepath.Join(dest, "backup"), "/restored")
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)
	assert.Contains(t, out, filepath.Join(dest, "backup")+" -> "+capTraposID+" /restored: 4 files and 4 directories (1060943 bytes)\n")
	again := t.TempDir()
	_, errOut, code = cli(ctx, t, g, nil, "get", "-r", capTraposID, "/restored", again)
	require.Equal(t, 0, code, errOut)
	got, err = os.ReadFile(filepath.Join(again, "restored", "grüße.txt"))
	require.NoError(t, err)
	assert.Equal(t, "caf\xe9\n", string(got))
	got, err = os.ReadFile(filepath.Join(again, "restored", "logs", "big.bin"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(big, got), "big.bin came back changed (%d bytes)", len(got))
	_, err = os.Stat(filepath.Join(again, "restored", "empty"))
	require.NoError(t, err, "the empty directory is made")

	// Over a file it is refused, and the file is kept.
	file := filepath.Join(dest, "file")
	require.NoError(t, os.WriteFile(file, []byte("keep"), 0o600))
	_, errOut, code = cli(ctx, t, g, nil, "get", "-r", capTraposID, "/backup", file)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "is a file, not a directory")
	got, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(got))

	// A copy that left something out exits 3, where it exited 0 and a cron backup could not
	// tell it from a whole one: here a file the computer refuses (/programs/sandbox.lua, the
	// sandbox's own, without sandbox.allow_exec) and a link on the host. Each is said on
	// stderr, the total counts them, and no error line follows: the total said it.
	set(ctx, t, c, "sandbox.allow_exec", "false")
	programs := filepath.Join(t.TempDir(), "programs")
	require.NoError(t, os.Mkdir(programs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(programs, "bell.lua"), []byte("print('ding')\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(programs, "sandbox.lua"), []byte("print('mine')\n"), 0o644))
	require.NoError(t, os.Symlink("bell.lua", filepath.Join(programs, "link")))
	out, errOut, code = cli(ctx, t, g, nil, "put", "-r", capTraposID, programs, "/")
	assert.Equal(t, 3, code, errOut)
	assert.Contains(t, out, programs+" -> "+capTraposID+" /programs: 1 file and 1 directory (14 bytes), 2 left out (said above)\n")
	assert.Contains(t, errOut, "trap-sandbox: /programs/sandbox.lua left out: ")
	assert.Contains(t, errOut, "trap-sandbox: "+filepath.Join(programs, "link")+" left out: not a file or a directory (a link, a device or a pipe)\n")
	assert.Equal(t, 2, strings.Count(errOut, "\n"), "a line for each left out, and none after: %s", errOut)
}
