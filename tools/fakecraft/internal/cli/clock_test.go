package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTestRunsOnTheVirtualClock: `fakecraft test` runs its specs on the virtual clock unless
// told --no-virtual-time, and run takes --virtual-time: an hour's sleep then ends at once,
// os.clock reading the hour. On the real clock the same sleep runs into the time limit.
func TestTestRunsOnTheVirtualClock(t *testing.T) {
	root := repo(t, map[string]string{
		"trapos/tests/hour_spec.lua": `describe("an hour", function() it("passes", function()
  sleep(3600)
  expect(os.clock()):eq(3600)
end) end)`,
		"trapos/programs/hour.lua": `sleep(3600) print(os.clock())`,
	})
	// The limits guard against a hang; the real clock's cases are meant to reach theirs.
	code, out, errOut := run(t, "test", "--root", root, "--time-limit", "1m")
	assert.Equal(t, ExitOK, code, errOut+out)
	assert.Contains(t, out, "1 passed, 0 failed")

	code, out, errOut = run(t, "run", "--root", root, "--no-autostart", "--virtual-time", "--time-limit", "1m", "hour")
	assert.Equal(t, ExitOK, code, errOut+out)
	assert.Equal(t, "3600\n", out)

	code, _, errOut = run(t, "test", "--root", root, "--no-virtual-time", "--time-limit", "1s")
	assert.Equal(t, ExitTimeLimit, code, errOut)
	code, _, errOut = run(t, "run", "--root", root, "--no-autostart", "--time-limit", "1s", "hour")
	assert.Equal(t, ExitTimeLimit, code, errOut)
}

// TestVirtualTimeIsNotForAWorld: a world's computers share the real clock, so the virtual
// clock is refused with --world in one line naming the fix, for test (where it is the
// default) as for run; --no-virtual-time runs it.
func TestVirtualTimeIsNotForAWorld(t *testing.T) {
	root := repo(t, map[string]string{
		"trapos/tests/a_spec.lua":  `describe("a", function() it("works", function() end) end)`,
		"trapos/programs/done.lua": `print("done")`,
	})
	file := filepath.Join(t.TempDir(), "world.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"computers": [{"id": 0}]}`), 0o644))
	refusal := "fakecraft: --world: a world's computers share the real clock, which the virtual clock would run ahead of; add --no-virtual-time (fakecraft test runs on the virtual clock unless told not to)\n"

	code, out, errOut := run(t, "test", "--root", root, "--world", file)
	assert.Equal(t, ExitUsage, code, out)
	assert.Equal(t, refusal, errOut)
	code, out, errOut = run(t, "run", "--root", root, "--no-autostart", "--virtual-time", "--world", file, "done")
	assert.Equal(t, ExitUsage, code, out)
	assert.Equal(t, refusal, errOut)

	code, out, errOut = run(t, "test", "--root", root, "--no-virtual-time", "--world", file)
	assert.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "1 passed, 0 failed")
}
