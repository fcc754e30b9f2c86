package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestATimeoutOutOfRangeIsRefused: --timeout outside (0, 60s] is a usage error naming the
// range, on every client command that takes one, not a value changed without a word.
func TestATimeoutOutOfRangeIsRefused(t *testing.T) {
	clearEnv(t)
	for _, args := range [][]string{
		{"exec", "7:", "x"}, {"run", "7:", "ls"}, {"ls", "7:"}, {"cat", "7:", "/x"}, {"get", "7:", "/x", "y"},
		{"put", "7:", "x", "/y"}, {"ping", "7:"}, {"info", "7:"}, {"request", "7:", "ping"},
		{"screen", "7:", "--once"},
	} {
		for value, want := range map[string]string{
			"90s":  "--timeout: 90s is out of range: give more than 0 and at most 60s",
			"0s":   "--timeout: 0s is out of range: give more than 0 and at most 60s",
			"-1s":  "--timeout: -1s is out of range: give more than 0 and at most 60s",
			"soon": `--timeout: "soon" is not a duration: give one such as 10s, 1500ms, 5m or 720h`,
			// past Go's range, once "is not a duration": out of range as 90s is
			"3000000h": "--timeout: 3000000h is out of range: give more than 0 and at most 60s",
		} {
			err := parseError(t, append(args, "--timeout="+value)...)
			assert.EqualError(t, err, want, "%s --timeout %s", args[0], value)
		}
	}
	root, _ := parse(t, "exec", "7:", "x", "--timeout", "60s")
	assert.Equal(t, 60*time.Second, root.Exec.Timeout.Duration())
	root, _ = parse(t, "put", "7:", "x", "/y")
	assert.Equal(t, 60*time.Second, root.Put.Timeout.Duration(), "the default")
}

// TestADurationThatIsNoneSaysWhatToGive: every duration flag and variable, not only
// --timeout, answers a value that is no duration with examples of one; kong's own words were
// Go's parser's (`expected duration but got "soon": time: invalid duration "soon"`).
func TestADurationThatIsNoneSaysWhatToGive(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"--ping-period", "abc"}, want: `--ping-period: "abc" is not a duration: give one such as 10s, 1500ms, 5m or 720h`},
		{args: []string{"serve", "--hello-timeout=10"}, want: `--hello-timeout: "10" is not a duration: give it with its unit: 10s (seconds), 10m (minutes) or 10h (hours)`},
		{args: []string{"tokens", "add", "alice", "laptop", "--expires", "soon"}, want: `--expires: "soon" is not a duration: give one such as 10s, 1500ms, 5m or 720h`},
		{args: []string{"link", "key", "--account", "alice", "--expires", "2 h"}, want: `--expires: "2 h" is not a duration: give one such as 10s, 1500ms, 5m or 720h`},
		// Go's parser refuses one past its range (about 292 years) in the words it has for
		// "soon": the range is said instead.
		{args: []string{"--ping-period", "3000000h"}, want: `--ping-period: "3000000h" is longer than a duration can be: give at most 2562047h (about 292 years)`},
		{args: []string{"serve", "--hello-timeout=9223372036854775808ns"}, want: `--hello-timeout: "9223372036854775808ns" is longer than a duration can be: give at most 2562047h (about 292 years)`},
		{env: map[string]string{"SANDBOX_PING_PERIOD": "30"}, want: `--ping-period: "30" is not a duration: give it with its unit: 30s (seconds), 30m (minutes) or 30h (hours) (from envar SANDBOX_PING_PERIOD="30")`},
		// Days, weeks and years, which people write for a token's lifetime and Go's
		// durations have not, are named in hours (it said "give one such as … 720h" of 30d).
		{args: []string{"tokens", "add", "alice", "laptop", "--expires", "30d"}, want: `--expires: "30d" is not a duration: a duration's largest unit is h (hours): give 720h`},
		{args: []string{"link", "key", "--account", "alice", "--expires", "2w"}, want: `--expires: "2w" is not a duration: a duration's largest unit is h (hours): give 336h`},
		{args: []string{"tokens", "add", "alice", "laptop", "--expires", "1y"}, want: `--expires: "1y" is not a duration: a duration's largest unit is h (hours): give 8760h`},
	} {
		clearEnv(t)
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		err := parseError(t, tc.args...)
		assert.EqualError(t, err, tc.want, "%v %v", tc.args, tc.env)
	}
	clearEnv(t)
	root, _ := parse(t, "--ping-period", "45s", "--link-code-lifetime=-1s")
	assert.Equal(t, 45*time.Second, root.Serve.PingPeriod, "a duration is read as before")
	assert.Equal(t, -time.Second, root.Serve.LinkCodeLifetime, "a negative one too: its range is the command's to check")
}
