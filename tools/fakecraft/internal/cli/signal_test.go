package cli

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"fakecraft/fakecrafttest"
)

// catchSignals keeps the test binary alive should fakecraft not catch sig itself: the run
// under test then goes on to its --time-limit and the test fails instead of the process
// dying of the signal.
func catchSignals(t *testing.T, sig os.Signal) {
	t.Helper()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sig)
	t.Cleanup(func() { signal.Stop(ch) })
}

// TestRunStoppedBySignal: Ctrl-C at `fakecraft run` (SIGINT), `kill` (SIGTERM) and the
// terminal closing (SIGHUP) turn the computer off as --time-limit does: one line saying
// why, exit status 128 plus the signal's number, and the computer's temporary directories
// removed, not left in $TMPDIR.
func TestRunStoppedBySignal(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		line string
	}{
		{syscall.SIGINT, "fakecraft: SIGINT (Ctrl-C): fakecraft stopped the computer\n"},
		{syscall.SIGTERM, "fakecraft: SIGTERM: fakecraft stopped the computer\n"},
		{syscall.SIGHUP, "fakecraft: SIGHUP (the terminal closed): fakecraft stopped the computer\n"},
	} {
		t.Run(unix.SignalName(tc.sig), func(t *testing.T) {
			root := repo(t, map[string]string{"trapos/programs/wait.lua": `print("waiting") os.pullEvent("never")`})
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			catchSignals(t, tc.sig)
			ctx, cancel := context.WithTimeout(context.Background(), shellTimeout)
			defer cancel()
			out := &fakecrafttest.Output{}
			var errOut bytes.Buffer // read once MainWithInput has returned
			status := make(chan int, 1)
			go func() {
				status <- MainWithInput([]string{"run", "--root", root, "--time-limit", "30s", "wait"},
					strings.NewReader(""), out, &errOut)
			}()
			for changed := out.Changed(); !strings.Contains(out.String(), "waiting\n"); changed = out.Changed() {
				select {
				case <-changed:
				case <-ctx.Done():
					t.Fatalf("the program never started; output: %q", out.String())
				}
			}
			require.NoError(t, syscall.Kill(os.Getpid(), tc.sig))
			assert.Equal(t, 128+int(tc.sig), <-status)
			assert.Equal(t, tc.line, errOut.String())
			left, err := os.ReadDir(tmp)
			require.NoError(t, err)
			assert.Empty(t, left, "temporary directories left behind")
		})
	}
}

// TestShellStoppedBySignalGivesTheTerminalBack: `kill` of `fakecraft shell` turns the
// computer off and gives the terminal back as it found it (cooked mode, echo on), as the
// shell's own end does; before, it died raw, on the alternate screen with mouse reports on.
func TestShellStoppedBySignalGivesTheTerminalBack(t *testing.T) {
	catchSignals(t, syscall.SIGTERM)
	s := startShell(t, "--root", shellRepo(t), "--no-autostart")
	s.waitPrompt(">")
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	assert.Equal(t, 128+int(syscall.SIGTERM), s.exit())
	assert.Equal(t, "fakecraft: SIGTERM: fakecraft stopped the computer\n", s.stderr.String())
	mode, err := unix.IoctlGetTermios(int(s.tty.Fd()), unix.TCGETS)
	require.NoError(t, err)
	assert.NotZero(t, mode.Lflag&unix.ECHO, "echo is back on")
	assert.NotZero(t, mode.Lflag&unix.ICANON, "line editing is back on")
}
