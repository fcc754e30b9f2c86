package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestConformancePrintsScorePerSpecFile(t *testing.T) {
	code, out, _ := run(t, "conformance", "--test-timeout", "300ms", "../../conformance/testdata/fake-rom")
	assert.Equal(t, ExitFailed, code, out)
	assert.Contains(t, out, "a_spec.lua: 2 passed, 1 failed, 0 skipped\n", "a helper's test counts for a_spec.lua")
	assert.Contains(t, out, "b_spec.lua: 1 passed, 2 failed, 1 skipped\n")
	assert.Contains(t, out, "\n3 passed, 3 failed, 1 skipped\n")
	// A message is CC bytes; it is printed as text, as the transcript is.
	assert.Contains(t, out, "fail    a_spec.lua › a › fails\n        \"küche\" ~= 2\n")
}

func TestConformanceNeedsATestROM(t *testing.T) {
	code, _, errOut := run(t, "conformance", t.TempDir())
	assert.Equal(t, ExitFailed, code)
	assert.Contains(t, errOut, "not a test-rom")
}

// TestConformanceWithoutTestROMSaysWhatToGive: a command line's mistake names the fix: the
// command's usage and its --help (it said only `expected "<test-rom>"`).
func TestConformanceWithoutTestROMSaysWhatToGive(t *testing.T) {
	code, out, errOut := run(t, "conformance")
	assert.Equal(t, ExitUsage, code)
	assert.Empty(t, out)
	assert.Equal(t, "fakecraft: expected \"<test-rom>\"\n"+
		"usage: fakecraft conformance <test-rom> [<spec> ...] [flags] (`fakecraft conformance --help` says more)\n", errOut)

	_, _, errOut = run(t, "bogus")
	assert.Contains(t, errOut, "`fakecraft --help` lists the commands")
}

// TestConformanceTimeLimitSaysSo: the whole run's --time-limit running out is said as
// `run`'s is, exit status 2 (it said `context deadline exceeded`, status 1).
func TestConformanceTimeLimitSaysSo(t *testing.T) {
	code, _, errOut := run(t, "conformance", "--time-limit", "1ns", "../../conformance/testdata/fake-rom")
	assert.Equal(t, ExitTimeLimit, code)
	assert.Equal(t, "fakecraft: --time-limit 1ns ran out: fakecraft stopped the computer\n", errOut)
}
