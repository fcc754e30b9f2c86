package cli

import (
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestATimeoutOutOfRangeIsRefused: --timeout outside (0, 60s] is a usage error naming the
// range, on every client command that takes one, not a value changed without a word.
func TestATimeoutOutOfRangeIsRefused(t *testing.T) {
	clearEnv(t)
	for _, args := range [][]string{
		{"exec", "7:", "x"}, {"run", "7:", "ls"}, {"ls", "7:"}, {"cat", "7:", "/x"}, {"get", "7:", "/x", "y"},
		{"put", "7:", "x", "/y"}, {"ping", "7:"}, {"info", "7:"}, {"request", "7:", "ping"},
	} {
		for value, want := range map[string]string{
			"90s":  "--timeout: 90s is out of range: give more than 0 and at most 60s",
			"0s":   "--timeout: 0s is out of range: give more than 0 and at most 60s",
			"-1s":  "--timeout: -1s is out of range: give more than 0 and at most 60s",
			"soon": `--timeout: "soon" is not a duration: give one such as 10s or 1500ms`,
		} {
			var root CLI
			parser, err := NewParser(&root, kong.Exit(func(int) {}))
			require.NoError(t, err)
			_, err = parser.Parse(append(args, "--timeout="+value))
			assert.EqualError(t, err, want, "%s --timeout %s", args[0], value)
		}
	}
	root, _ := parse(t, "exec", "7:", "x", "--timeout", "60s")
	assert.Equal(t, 60*time.Second, root.Exec.Timeout.Duration())
	root, _ = parse(t, "put", "7:", "x", "/y")
	assert.Equal(t, 60*time.Second, root.Put.Timeout.Duration(), "the default")
}
