package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit/daemonfake"
)

// TestGetROfRootLeavesOutTheROMAndFilesThatGo: get -r of / copies the computer's files but not
// /rom (said on stderr), and a file deleted on the computer between the listing of its
// directory and its read is left out with the computer's words, the copy going on and its
// total saying so.
func TestGetROfRootLeavesOutTheROMAndFilesThatGo(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/a.txt": "a", "/d/b.txt": "bb", "/d/c.txt": "ccc", "/rom/programs/ls.lua": "x"})
	lists, deleted := 0, false
	d.Before = func(_ context.Context, _ int, typ string) error {
		if typ == protocol.TypeFSList {
			lists++
		}
		if typ == protocol.TypeFSRead && lists == 2 && !deleted { // the first read in /d: another program deletes b.txt
			deleted = true
			payload, _ := json.Marshal(map[string]any{"path": "/d/b.txt"})
			assert.Nil(t, d.Answer(protocol.TypeFSDelete, payload).Error)
		}
		return nil
	}
	base := serveDisk(t, d)
	dest := t.TempDir()
	out, errOut, err := runWith(t, "", "get", "--url", base, "-r", "7:", "/", dest)
	require.NoError(t, err)
	assert.Equal(t, ""+
		"7: /a.txt -> "+filepath.Join(dest, "a.txt")+" (1 byte)\n"+
		"7: /d/c.txt -> "+filepath.Join(dest, "d", "c.txt")+" (3 bytes)\n"+
		"7: / -> "+dest+": 2 files and 2 directories (4 bytes), 1 left out (said above)\n", out)
	assert.Equal(t, ""+
		"trap-sandbox: /d/b.txt left out: /d/b.txt: No such file\n"+
		"trap-sandbox: /rom left out: it is the ROM every computer reads, not this computer's files (get -r 7: /rom copies it)\n", errOut)
	_, err = os.Stat(filepath.Join(dest, "rom"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestGetRSaysWhatItCopiedBeforeTheComputerWent: a computer that goes away mid-copy ends the
// copy with why and what was copied; the files copied are whole.
func TestGetRSaysWhatItCopiedBeforeTheComputerWent(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/d/a.txt": "a", "/d/b.txt": "bb"})
	reads := 0
	d.Before = func(_ context.Context, _ int, typ string) error {
		if typ == protocol.TypeFSRead {
			if reads++; reads == 2 {
				return computer.NotConnected("7:")
			}
		}
		return nil
	}
	base := serveDisk(t, d)
	dest := t.TempDir()
	out, _, err := runWith(t, "", "get", "--url", base, "-r", "7:", "/d", dest)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "computer 7: get -r /d/b.txt: ")
	assert.Contains(t, err.Error(), "not_connected")
	assert.Contains(t, err.Error(), "; copied before it: 7: /d -> "+filepath.Join(dest, "d")+": 1 file and 1 directory (1 byte)")
	assert.Equal(t, "7: /d/a.txt -> "+filepath.Join(dest, "d", "a.txt")+" (1 byte)\n", out)
	names, err := os.ReadDir(filepath.Join(dest, "d"))
	require.NoError(t, err)
	assert.Len(t, names, 1, "a.txt alone, no temporary file")
}

// TestGetAsTextSaysOnceItChangedTheBytes: get of a text file holding bytes 80-FF to a local
// file writes UTF-8, longer than the file on the computer; it said nothing, so a backup made
// with get (150009 bytes that became 157205) was not the computer's file. It says so once on
// stderr, with --binary and get -r; --binary, and a file of ASCII alone, say nothing.
func TestGetAsTextSaysOnceItChangedTheBytes(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/caf\xe9.txt": "caf\xe9 cr\xe8me\n", "/plain.txt": "plain\n"})
	base := serveDisk(t, d)
	dir := t.TempDir()
	_, errOut, err := runWith(t, "", "get", "--url", base, "7:", "/café.txt", dir)
	require.NoError(t, err)
	assert.Equal(t, "trap-sandbox: note: /café.txt was written as UTF-8 text, so its 11 bytes are 13 here (each byte 80-FF is two); get --binary, or get -r for a directory, copies the bytes unchanged\n", errOut)
	got, err := os.ReadFile(filepath.Join(dir, "café.txt"))
	require.NoError(t, err)
	assert.Equal(t, "café crème\n", string(got))
	for _, args := range [][]string{{"--binary", "7:", "/café.txt", dir}, {"7:", "/plain.txt", dir}} {
		_, errOut, err := runWith(t, "", append([]string{"get", "--url", base}, args...)...)
		require.NoError(t, err)
		assert.Empty(t, errOut, "%v", args)
	}
	got, err = os.ReadFile(filepath.Join(dir, "café.txt"))
	require.NoError(t, err)
	assert.Equal(t, "caf\xe9 cr\xe8me\n", string(got))

	_, _, err = runWith(t, "", "get", "--url", base, "-r", "7:", "/", "-")
	assert.EqualError(t, err, "computer 7: get -r: a directory goes to a local directory, not to stdout: name one")
}
