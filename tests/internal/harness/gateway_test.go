package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLogWatcherFindsListeningAddress(t *testing.T) {
	cases := []struct {
		name   string
		writes []string
		want   string // "" means no address must be reported
	}{
		{
			name:   "one write",
			writes: []string{"time=x level=INFO msg=listening addr=127.0.0.1:4444 modules=[m]\n"},
			want:   "127.0.0.1:4444",
		},
		{
			name:   "split across writes",
			writes: []string{"level=WARN msg=\"no password\"\ntime=x level=INFO msg=list", "ening addr=[::1]:39", "001 modules=[m]\n"},
			want:   "[::1]:39001",
		},
		{
			name:   "quoted addr",
			writes: []string{"msg=listening addr=\"127.0.0.1:1\"\n"},
			want:   "127.0.0.1:1",
		},
		{
			name:   "other message mentioning listening",
			writes: []string{"msg=\"listening soon\" addr=127.0.0.1:2\n"},
		},
		{
			name:   "line not finished",
			writes: []string{"msg=listening addr=127.0.0.1:3"},
		},
		{
			name:   "listening without addr",
			writes: []string{"msg=listening\n"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newLogWatcher()
			for _, s := range tc.writes {
				n, err := w.Write([]byte(s))
				assert.NoError(t, err)
				assert.Equal(t, len(s), n)
			}
			select {
			case got := <-w.listening:
				assert.Equal(t, tc.want, got)
			default:
				assert.Empty(t, tc.want, "no address reported")
			}
		})
	}
}

func TestCleanEnvDropsGatewayConfig(t *testing.T) {
	t.Setenv("SANDBOX_PASSWORD", "leak")
	t.Setenv("OPENCODE_URL", "http://elsewhere")
	t.Setenv("HARNESS_KEEP", "1")
	env := CleanEnv()
	assert.Contains(t, env, "HARNESS_KEEP=1")
	for _, kv := range env {
		assert.NotRegexp(t, `^(SANDBOX_|OPENCODE_)`, kv)
	}
}
