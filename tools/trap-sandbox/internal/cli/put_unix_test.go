//go:build unix

package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
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
	assert.EqualError(t, err, "put: "+fifo+" holds more than 16777216 bytes (16 MiB), the most put moves: send a smaller file")
	_, ok := d.File("/big.bin")
	assert.False(t, ok, "nothing is written")

	dir := t.TempDir()
	_, _, err = runWith(t, "", "put", "--url", base, "7:", dir, "/x")
	assert.EqualError(t, err, "put: "+dir+" is a directory: give a file, or copy it with everything in it with put -r")
}

// TestAGetThatCannotWriteKeepsTheLocalFile: a get whose local write fails part way (here the
// process's file size limit, as a full disk would) leaves the old local file byte for byte and
// says so in one line. It wrote the file in place, so the failure left the old one truncated
// to a part of the new.
func TestAGetThatCannotWriteKeepsTheLocalFile(t *testing.T) {
	if os.Getenv(limitedGetEnv) != "" {
		limitedGet(t)
		return
	}
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/big.bin": strings.Repeat("n", 8192), "/small.txt": "new"})
	base := serveDisk(t, d)
	local := filepath.Join(t.TempDir(), "keep.txt")
	require.NoError(t, os.WriteFile(local, []byte("precious"), 0o600))

	// The limit is the whole process's, so the get runs in a child of its own: in this one the
	// test binary's log of the variables and files tests use (-test.testlogfile, megabytes
	// here) failed its writes under it too, and go test failed the package.
	child := exec.Command(os.Args[0], "-test.run=^TestAGetThatCannotWriteKeepsTheLocalFile$")
	child.Env = testkit.ChildEnv(limitedGetEnv+"=1", "LIMITED_GET_URL="+base, "LIMITED_GET_TO="+local)
	out, err := child.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "get failed: get: write "+local+": file too large (the local file is unchanged)\n")
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

// limitedGetEnv makes TestAGetThatCannotWriteKeepsTheLocalFile the child that runs its get
// under a 4 KiB file size limit (limitedGet).
const limitedGetEnv = "TRAP_SANDBOX_TEST_LIMITED_GET"

// limitedGet gets /big.bin (8 KiB) from LIMITED_GET_URL into LIMITED_GET_TO under a 4 KiB file
// size limit and prints how it failed.
func limitedGet(t *testing.T) {
	limit := syscall.Rlimit{Cur: 4096, Max: 4096}
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit))
	_, _, err := runWith(t, "", "get", "--url", os.Getenv("LIMITED_GET_URL"), "--binary", "7:", "/big.bin", os.Getenv("LIMITED_GET_TO"))
	fmt.Printf("get failed: %v\n", err)
	// The server is the parent's: its keep-alive connection would outlive this test (goleak).
	http.DefaultClient.CloseIdleConnections()
}

// TestAGetToADescriptorWritesWhereTheShellLeftIt: a local name that is one of the process's
// open descriptors (/dev/fd/N, /proc/self/fd/N; /dev/stdout as '-') is written through it, so
// a get into a redirected stdout (get … /dev/stdout >> log) adds the file after what the shell
// wrote. Written as a file, the descriptor's file was replaced by a rename: what was written
// before was gone, and what the shell wrote after went to a deleted file.
func TestAGetToADescriptorWritesWhereTheShellLeftIt(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(map[string]string{"/door.lua": "open()\n"})
	base := serveDisk(t, d)
	for _, link := range []string{"/dev/fd/%d", "/proc/self/fd/%d"} {
		t.Run(strings.ReplaceAll(link, "%d", "N"), func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			require.NoError(t, err)
			defer f.Close()
			_, err = f.WriteString("before\n")
			require.NoError(t, err)

			name := fmt.Sprintf(link, f.Fd())
			out, _, err := runWith(t, "", "get", "--url", base, "7:", "/door.lua", name)
			require.NoError(t, err)
			assert.Equal(t, "7: /door.lua -> "+name+" (7 bytes)\n", out)
			_, err = f.WriteString("after\n")
			require.NoError(t, err)
			got, err := os.ReadFile(log)
			require.NoError(t, err)
			assert.Equal(t, "before\nopen()\nafter\n", string(got))
		})
	}

	out, _, err := runWith(t, "", "get", "--url", base, "7:", "/door.lua", "/dev/stdout")
	require.NoError(t, err)
	assert.Equal(t, "open()\n", out, "stdout holds the file alone, as with '-'")

	// A descriptor that is not open for writing (here one read from; Go's runtime holds some
	// in every process) is refused with the fix before the file is read.
	readOnly, err := os.Open(os.Args[0])
	require.NoError(t, err)
	defer readOnly.Close()
	name := fmt.Sprintf("/dev/fd/%d", readOnly.Fd())
	_, _, err = runWith(t, "", "get", "--url", base, "7:", "/door.lua", name)
	assert.EqualError(t, err, fmt.Sprintf("get: %[1]s names descriptor %[2]d, which this command cannot write to (it is not open for writing): open it for writing in the shell (get … %[1]s %[2]d>>FILE) or name a file", name, readOnly.Fd()))
}

// TestAGetToATerminalShowsTheFileAsCatDoes: a computer's file that get writes to a terminal
// (stdout, stderr, a descriptor or a device named) is shown as cat shows it, its control bytes
// but tab and line breaks as \xNN, so that the bytes a hostile computer's file holds never
// reach the operator's terminal as its commands: "\x1b]52;c;…\a" set the terminal's clipboard
// (for the next paste into the shell), "\x1b]0;…\a" its title, "\x1b[2J" cleared the screen
// and a lone "\r" wrote the rest of the line over its start. Redirected (a pipe, a file) and
// with --binary, the bytes are written as they were.
func TestAGetToATerminalShowsTheFileAsCatDoes(t *testing.T) {
	clearEnv(t)
	const hostile = "notes\x1b]52;c;cm0gLXJmIH4K\a\x1b]0;title\a\x1b[2J\rover\n"
	d := daemonfake.NewLocal(map[string]string{"/notes.txt": hostile})
	base := serveDisk(t, d)
	const shown = `notes\x1b]52;c;cm0gLXJmIH4K\x07\x1b]0;title\x07\x1b[2J\x0dover` + "\n"

	// onTerminal runs get with stdout and stderr on a terminal and returns what the terminal
	// was given (its line discipline writes each line break as \r\n).
	onTerminal := func(t *testing.T, args ...string) string {
		ptmx, tty := openTerminal(t, 80, 24)
		_, kctx := parse(t, append([]string{"get", "--url", base}, args...)...)
		ctx, cancel := context.WithTimeout(context.Background(), clientWait)
		defer cancel()
		kctx.BindTo(ctx, (*context.Context)(nil))
		kctx.BindTo(tty, (*io.Writer)(nil))
		kctx.Bind(Stdout{Writer: tty})
		kctx.Bind(Stdin{Reader: strings.NewReader("")})
		require.NoError(t, kctx.Run())
		require.NoError(t, tty.Close())
		got, _ := io.ReadAll(ptmx) // EIO once the terminal's side is closed and all is read
		return strings.ReplaceAll(string(got), "\r\n", "\n")
	}
	for _, local := range []string{"-", "/dev/stdout", "/dev/stderr"} {
		got := onTerminal(t, "7:", "/notes.txt", local)
		assert.True(t, strings.HasPrefix(got, shown), "%s: %q", local, got)
		assert.NotContains(t, got, "\x1b", local)
		assert.NotContains(t, got, "\a", local)
		assert.NotContains(t, got, "\r", local)
	}
	t.Run("a terminal named", func(t *testing.T) {
		ptmx, tty := openTerminal(t, 80, 24)
		_, _, err := runWith(t, "", "get", "--url", base, "7:", "/notes.txt", tty.Name())
		require.NoError(t, err)
		require.NoError(t, tty.Close())
		got, _ := io.ReadAll(ptmx)
		assert.Equal(t, shown, strings.ReplaceAll(string(got), "\r\n", "\n"))
	})

	out, _, err := runWith(t, "", "get", "--url", base, "7:", "/notes.txt", "-")
	require.NoError(t, err)
	assert.Equal(t, hostile, out, "to a pipe or a file, the text as it is")
	local := filepath.Join(t.TempDir(), "notes.txt")
	_, _, err = runWith(t, "", "get", "--url", base, "7:", "/notes.txt", local)
	require.NoError(t, err)
	got, err := os.ReadFile(local)
	require.NoError(t, err)
	assert.Equal(t, hostile, string(got))
	got2 := onTerminal(t, "--binary", "7:", "/notes.txt", "-")
	assert.Contains(t, got2, "\x1b]0;title\a", "--binary asks for the bytes")
}
