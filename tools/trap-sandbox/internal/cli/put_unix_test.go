//go:build unix

package cli

import (
	"os"
	"path/filepath"
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
