package integration

import (
	"context"
	"math"
	"net"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// TestBadConfigurationFailsClearly: a mistake in the configuration ends the process at once
// with a non-zero status and a message naming the problem, never a panic or a half-started
// gateway.
func TestBadConfigurationFailsClearly(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = busy.Close() })
	_, busyPort, err := net.SplitHostPort(busy.Addr().String())
	require.NoError(t, err)

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"zero hello timeout", []string{"--listen", "127.0.0.1:0", "--hello-timeout", "0s"}, "hello-timeout"},
		// At 5ms every computer's socket was closed before its hello, and nothing was logged.
		{"hello timeout shorter than a hello takes", []string{"--listen", "127.0.0.1:0", "--hello-timeout", "5ms"},
			"--hello-timeout (SANDBOX_HELLO_TIMEOUT) 5ms is shorter than a computer may take to say hello once its socket opens (the gateway's proof checked in Lua, a lagging Minecraft server; " +
				"a socket without a hello within it is closed 4008): give at least 1s (the default is 10s)"},
		{"request timeout shorter than an answer takes", []string{"--listen", "127.0.0.1:0", "--request-timeout", "1ms"},
			"--request-timeout (SANDBOX_REQUEST_TIMEOUT) 1ms is shorter than a computer may take to answer a request"},
		{"idle probe at every silence", []string{"--listen", "127.0.0.1:0", "--idle-probe-after", "1ms"},
			"--idle-probe-after (SANDBOX_IDLE_PROBE_AFTER) 1ms would have the gateway ping every idle computer without end"},
		{"pressure hello timeout shorter than a hello takes", []string{"--listen", "127.0.0.1:0", "--pressure-hello-timeout", "5ms"},
			"--pressure-hello-timeout (SANDBOX_PRESSURE_HELLO_TIMEOUT) 5ms is shorter than a computer may take to say hello once its socket opens"},
		{"negative probe timeout", []string{"--listen", "127.0.0.1:0", "--probe-timeout", "-1s"}, "probe-timeout"},
		{"unparsable duration", []string{"--listen", "127.0.0.1:0", "--request-timeout", "soon"}, "request-timeout"},
		{"port in use", []string{"--listen", busy.Addr().String()}, busy.Addr().String()},
		{"websocket public URL", []string{"--listen", "127.0.0.1:0", "--public-url", "ws://mc.example.org:4444"}, "--public-url"},
		{"unknown flag", []string{"--listen", "127.0.0.1:0", "--no-such-flag"}, "no-such-flag"},
		// The computers' port cannot be --listen's own: the second bind failed as if another
		// program held it. A malformed one is named as --computers-listen's, not --listen's.
		{"computers port on the listen port", []string{"--listen", busy.Addr().String(), "--computers-listen", busy.Addr().String()},
			`--computers-listen (SANDBOX_COMPUTERS_LISTEN) "` + busy.Addr().String() + `" takes the port of --listen "` + busy.Addr().String() + `": the computers-only port must be another one, e.g. 127.0.0.1:4445`},
		{"computers port within every interface's", []string{"--listen", ":" + busyPort, "--computers-listen", "127.0.0.1:" + busyPort},
			`--computers-listen (SANDBOX_COMPUTERS_LISTEN) "127.0.0.1:` + busyPort + `" takes the port of --listen ":` + busyPort + `"`},
		{"computers port without a host", []string{"--listen", "127.0.0.1:0", "--computers-listen", "4445"},
			`--computers-listen (SANDBOX_COMPUTERS_LISTEN) "4445": want host:port: :4445 listens on every interface, 127.0.0.1:4445 on this host only`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, gatewayBin, tc.args...)
			cmd.Env = harness.CleanEnv()
			out, err := cmd.CombinedOutput()
			require.NoError(t, ctx.Err(), "the gateway kept running:\n%s", out)
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "want a non-zero exit, got %v:\n%s", err, out)
			assert.NotZero(t, exit.ExitCode())
			assert.Contains(t, string(out), tc.want)
			assert.NotContains(t, string(out), "panic")
			assert.NotContains(t, string(out), "msg=listening")
		})
	}
}

// TestGOGCOffIsSaidAtStart: a gateway started with GOGC=off in its environment says that the
// collector is off and its --heap-floor-mib does nothing, where it logged heapFloorMiB=32 on
// its config line and nothing else, and /metrics' go_gc_gogc_percent read 1.8e19 (Go's off)
// for the floor's percent that the README sends the operator to; one without it has the floor.
func TestGOGCOffIsSaidAtStart(t *testing.T) {
	ctx := testContext(t)
	off := harness.Start(t, gatewayBin, harness.Options{Env: []string{"GOGC=off"}})
	assert.Contains(t, off.Log(), `level=WARN msg="GOGC=off in the gateway's environment turns Go's collector off: with no GOMEMLIMIT its memory grows until the machine runs out, `+
		`and --heap-floor-mib (SANDBOX_HEAP_FLOOR_MIB) 32 does nothing (no cycle to put a floor under); unset GOGC (tools/trap-sandbox/README.md, --heap-floor-mib), or set GOMEMLIMIT to cap it" GOGC=off`)
	assert.Greater(t, metric(ctx, t, off, "go_gc_gogc_percent"), float64(math.MaxInt64), "Go's off, as the README says /metrics shows it")

	on := harness.Start(t, gatewayBin, harness.Options{})
	assert.NotContains(t, on.Log(), "GOGC=off")
	percent := metric(ctx, t, on, "go_gc_gogc_percent")
	assert.True(t, percent > 100 && percent <= 1<<20, "the floor's percent: %g", percent)
}
