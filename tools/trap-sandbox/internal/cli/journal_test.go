//go:build unix

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamOf is f's JOURNAL_STREAM, as systemd sets it for a service whose output is the
// journal's stream: its device and inode numbers.
func streamOf(t *testing.T, f *os.File) string {
	t.Helper()
	fi, err := f.Stat()
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

// logEachLevel logs one line of each level through the gateway's logger on f and returns
// what f holds, line by line.
func logEachLevel(t *testing.T, f *os.File) []string {
	t.Helper()
	logger, err := (&ServeCmd{LogLevel: "debug"}).logger(f)
	require.NoError(t, err)
	logger.Debug("a debug line")
	logger.With("replica", "a").Info("an info line", "computers", 2)
	logger.Warn("a warning")
	logger.Error("an error")
	data, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// TestTheLogUnderTheJournalCarriesEachLinesPriority: journald gives every line a service
// writes the priority of info unless the line starts with its syslog priority (<3>, …),
// which it reads and strips: journalctl -p warning showed none of the gateway's warnings and
// errors. Under the journal (its stream is the log's file, $JOURNAL_STREAM) each line starts
// with its level's priority; elsewhere (a terminal, a file a shell redirected it to inside a
// unit) the lines are as they were.
func TestTheLogUnderTheJournalCarriesEachLinesPriority(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	t.Setenv("JOURNAL_STREAM", streamOf(t, f))
	lines := logEachLevel(t, f)
	require.Len(t, lines, 4)
	for i, want := range []string{`<7>time=`, `<6>time=`, `<4>time=`, `<3>time=`} {
		assert.True(t, strings.HasPrefix(lines[i], want), "line %d: %q", i, lines[i])
	}
	assert.Contains(t, lines[1], `level=INFO msg="an info line" replica=a computers=2`)
	assert.Contains(t, lines[3], `level=ERROR msg="an error"`)
	assert.Equal(t, "<3>", ErrorPrefix(f), "a failed start's last line is an error")

	other, err := os.Create(filepath.Join(t.TempDir(), "other"))
	require.NoError(t, err)
	defer other.Close()
	for _, line := range logEachLevel(t, other) { // the journal's stream is f, not this file
		assert.True(t, strings.HasPrefix(line, "time="), "%q", line)
	}
	assert.Empty(t, ErrorPrefix(other))
}
