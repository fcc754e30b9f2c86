//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/daemonfake"
)

// TestPutRefusesAFileWithoutAnEndUnreadPastTheLimit: put of a local file that never ends
// (/dev/zero, a pipe kept open) stops reading one byte past what it may send and says so; it
// read such a file whole first, which filled the host's memory and ignored Ctrl-C.
func TestPutRefusesAFileWithoutAnEndUnreadPastTheLimit(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	base := serveDisk(t, d)
	fifo := filepath.Join(t.TempDir(), "endless")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	// Held open for reading and writing, the pipe never reports its end: a reader reading to
	// the end waits forever, one that counts stops.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	go func() { _, _ = w.Write(make([]byte, maxFileBytes+1)) }()

	_, _, err = runWith(t, "", "put", "--url", base, "7:", fifo, "/big.bin")
	assert.EqualError(t, err, fifo+" holds more than 16777216 bytes (16 MiB), the most put moves: send a smaller file")
	_, ok := d.File("/big.bin")
	assert.False(t, ok, "nothing is written")

	dir := t.TempDir()
	_, _, err = runWith(t, "", "put", "--url", base, "7:", dir, "/x")
	assert.EqualError(t, err, dir+" is a directory: put copies one file")
}

// TestAGetThatCannotWriteKeepsTheLocalFile: a get whose local write fails part way (here the
// process's file size limit, as a full disk would) leaves the old local file byte for byte and
// says so in one line. It wrote the file in place, so the failure left the old one truncated
// to a part of the new.
func TestAGetThatCannotWriteKeepsTheLocalFile(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/big.bin": strings.Repeat("n", 8192), "/small.txt": "new"})
	base := serveDisk(t, d)
	local := filepath.Join(t.TempDir(), "keep.txt")
	require.NoError(t, os.WriteFile(local, []byte("precious"), 0o600))

	var old syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old))
	small := old
	small.Cur = 4096
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &small))
	_, _, err := runWith(t, "", "get", "--url", base, "--binary", "7:", "/big.bin", local)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old))
	assert.EqualError(t, err, "write "+local+": file too large (the local file is unchanged)")
	got, readErr := os.ReadFile(local)
	require.NoError(t, readErr)
	assert.Equal(t, "precious", string(got), "the old file is kept")
	entries, readErr := os.ReadDir(filepath.Dir(local))
	require.NoError(t, readErr)
	assert.Len(t, entries, 1, "no temporary file is left beside it")

	_, _, err = runWith(t, "", "get", "--url", base, "--binary", "7:", "/big.bin", local)
	require.NoError(t, err)
	got, _ = os.ReadFile(local)
	assert.Equal(t, strings.Repeat("n", 8192), string(got))
	st, err := os.Stat(local)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the replaced file keeps its permissions")

	link := filepath.Join(filepath.Dir(local), "link")
	require.NoError(t, os.Symlink("keep.txt", link))
	_, _, err = runWith(t, "", "get", "--url", base, "7:", "/small.txt", link)
	require.NoError(t, err)
	got, _ = os.ReadFile(local)
	assert.Equal(t, "new", string(got), "a link is written through, as cp does")
	dest, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, "keep.txt", dest, "and stays a link")

	long := filepath.Join(filepath.Dir(local), strings.Repeat("n", 250))
	_, _, err = runWith(t, "", "get", "--url", base, "7:", "/small.txt", long)
	require.NoError(t, err, "a name near the 255 bytes a name may have: the temporary name is not made from it")
	got, _ = os.ReadFile(long)
	assert.Equal(t, "new", string(got))
}
