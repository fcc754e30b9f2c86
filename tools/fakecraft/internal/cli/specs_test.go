package cli

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer/machine"
	"fakecraft/fakecrafttest"
)

// TestLuaSpecs runs the project's Lua specs through `fakecraft test`, so that
// `go test work` covers the in-game code (trapos/tests) and fakecraft's own ROM
// (romfs/testdata/spec) exactly as `just _craftos-test` does: on the virtual clock, test's
// default, so that no spec waits out its timers in real time or sees the machine's speed.
// Each directory runs twice: on a computer (51x19) and on a pocket computer (26x20,
// --pocket), whose players read the same words laid out for 26 columns, and which has
// nothing beside it (fakecraft's specs of drives, monitors and printers are pending there).
func TestLuaSpecs(t *testing.T) {
	root, err := machine.FindRepoRoot(".")
	require.NoError(t, err)

	for _, c := range []struct {
		name, dir string
		flags     []string
	}{
		{"trapos/tests", "trapos/tests", nil},
		{"trapos/tests on a pocket computer", "trapos/tests", []string{"--pocket"}},
		{"tools/fakecraft/romfs/testdata/spec", "tools/fakecraft/romfs/testdata/spec", nil},
		{"tools/fakecraft/romfs/testdata/spec on a pocket computer", "tools/fakecraft/romfs/testdata/spec", []string{"--pocket"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"test", "--root", root,
				"--time-limit", hangGuard(t).String(),
				// Nor is CC's 7 s a resume may run (wall time): a spec's resume of 0.2 s takes
				// 17 times that under -race, and more on a loaded machine (.ci/run's), as for
				// every computer under test (fakecrafttest.YieldTimeout).
				"--yield-timeout", fakecrafttest.YieldTimeout.String()}, c.flags...)
			code, out, errOut := run(t, append(args, filepath.Join(root, c.dir))...)
			summary := regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed`).FindStringSubmatch(out)
			require.NotNil(t, summary, "no summary line in:\n%s\n%s", out, errOut)
			assert.NotEqual(t, "0", summary[1], "no spec ran")
			assert.Equal(t, "0", summary[2], out)
			assert.Equal(t, ExitOK, code, out+errOut)
		})
	}
}

// hangGuard is how long one `fakecraft test` run may take: what is left of the test binary's
// own -timeout, less a minute so that a run that hangs is stopped by fakecraft and reported
// with its specs' output rather than by go test's panic; 0 (never) without a -timeout. It
// guards against a hang and measures no speed: a loaded machine running -race took 18 minutes
// for the four runs where a quiet one takes 5 (a fixed 10 minutes a run failed there).
func hangGuard(t *testing.T) time.Duration {
	deadline, ok := t.Deadline()
	if !ok {
		return 0
	}
	return max(time.Until(deadline)-time.Minute, time.Second)
}
