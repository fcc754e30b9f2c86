package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestANumberThatIsNoneSaysWhatToGive: a whole-number or number flag or variable given
// something else answers with an example, its default, as a duration flag does; kong's own
// words were Go's parser's (`expected a valid 64 bit int but got "lots"`).
func TestANumberThatIsNoneSaysWhatToGive(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"--max-connections", "lots"}, want: `--max-connections: "lots" is not a whole number: give one such as 20000 (its default)`},
		{args: []string{"--max-connections", "2.5"}, want: `--max-connections: "2.5" is not a whole number: give one such as 20000 (its default)`},
		{args: []string{"--upgrade-burst", "99999999999999999999"}, want: `--upgrade-burst: "99999999999999999999" is out of range: give one such as 2000 (its default)`},
		{args: []string{"serve", "--upgrade-rate=fast"}, want: `--upgrade-rate: "fast" is not a number: give one such as 200 (its default)`},
		{args: []string{"--upgrade-rate", "NaN"}, want: `--upgrade-rate: "NaN" is not a number: give one such as 200 (its default)`},
		{args: []string{"link", "key", "--account", "alice", "--uses", "x"}, want: `--uses: "x" is not a whole number`},
		// an environment file with CRLF line ends gives each value a carriage return
		{env: map[string]string{"SANDBOX_HEAP_FLOOR_MIB": "32\r"},
			want: `--heap-floor-mib: "32\r" has a space, tab or line break at its start or end (an environment file with CRLF line ends?): give "32" (from envar SANDBOX_HEAP_FLOOR_MIB="32\r")`},
		{env: map[string]string{"SANDBOX_HELLO_TIMEOUT": "10s\r"},
			want: `--hello-timeout: "10s\r" has a space, tab or line break at its start or end (an environment file with CRLF line ends?): give "10s" (from envar SANDBOX_HELLO_TIMEOUT="10s\r")`},
		{env: map[string]string{"SANDBOX_FAILED_HELLO_GLOBAL_BURST": "x"},
			want: `--failed-hello-global-burst: "x" is not a whole number: give one such as 50 (its default) (from envar SANDBOX_FAILED_HELLO_GLOBAL_BURST="x")`},
	} {
		clearEnv(t)
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		err := parseError(t, tc.args...)
		assert.EqualError(t, err, tc.want, "%v %v", tc.args, tc.env)
	}
	clearEnv(t)
	root, _ := parse(t, "--max-connections", "300", "--upgrade-rate=-1", "--failed-hello-rate", "0.5")
	assert.Equal(t, 300, root.Serve.MaxConnections, "a whole number is read as before")
	assert.Equal(t, -1.0, root.Serve.UpgradeRate, "a negative one too: its range is the command's to check")
	assert.Equal(t, 0.5, root.Serve.FailedHelloRate)
}

// TestANegativeNumberAfterASpaceIsTheFlagsValue: `--upgrade-rate -1` (the README: negative
// turns it off) and `--heap-floor-mib -1` reach the command, which says what it takes, where
// kong took -1 for a short flag and answered a usage error (`expected number value but got
// "-1" (short flag); perhaps try --upgrade-rate="-1"?`).
func TestANegativeNumberAfterASpaceIsTheFlagsValue(t *testing.T) {
	clearEnv(t)
	root, _ := parse(t, "--upgrade-rate", "-1", "--heap-floor-mib", "-1", "--failed-hello-rate", "-0.5")
	assert.Equal(t, -1.0, root.Serve.UpgradeRate)
	assert.Equal(t, -1, root.Serve.HeapFloorMiB)
	assert.Equal(t, -0.5, root.Serve.FailedHelloRate)

	for _, tc := range []struct {
		args []string
		want string
	}{
		// a negative duration is told the range the flag takes
		{args: []string{"tokens", "add", "alice", "laptop", "--expires", "-1h"},
			want: "--expires: -1h is out of range: give a lifetime from 1s to 876000h (100 years), or 0 for one that never expires"},
		// a word that reads as no number is still a flag, and the value is said to be missing
		{args: []string{"--max-connections", "-x"}, want: `--max-connections: expected number value but got "-x" (short flag); perhaps try --max-connections="-x"?`},
	} {
		err := parseError(t, tc.args...)
		assert.EqualError(t, err, tc.want, "%v", tc.args)
	}
}
