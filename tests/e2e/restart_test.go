package e2e

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// Markers the restart program prints, so the test can follow it.
const (
	markerFirstOK   = "e2e: first health ok"
	markerFailed    = "e2e: health failed"
	markerRecovered = "e2e: health ok again"
	markerGaveUp    = "e2e: gave up"
)

// restartProgram runs `sandbox health` every half (scaled) second: it reports the first
// success, the first failure after it, and the first success after that. maxRounds bounds it
// (400 rounds of at least 0.5 s scaled are over 50 s of real time at timeScale 4).
const restartProgram = `
local maxRounds = 400
local stage = "start"
for _ = 1, maxRounds do
  local ok = shell.run("sandbox", "health")
  if stage == "start" and ok then
    print("` + markerFirstOK + `")
    stage = "up"
  elseif stage == "up" and not ok then
    print("` + markerFailed + `")
    stage = "down"
  elseif stage == "down" and ok then
    print("` + markerRecovered + `")
    return
  end
  sleep(0.5)
end
error("` + markerGaveUp + `", 0)
`

// TestGatewayRestartUnderRunningComputer: the gateway goes away under a booted computer and
// comes back on the same port; the daemon reconnects by itself and `sandbox health` works again.
func TestGatewayRestartUnderRunningComputer(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	first := startGateway(t, oc.URL)
	opts := computerOptions(t, first, sandboxPassword, "/e2e.lua")
	opts.Files = map[string]string{"/e2e.lua": restartProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)

	c.WaitFor(ctx, markerFirstOK)
	require.NoError(t, first.Stop(), "SIGTERM must end the gateway with status 0")
	c.WaitFor(ctx, markerFailed)

	second := harness.Start(t, gatewayBin, harness.Options{
		Listen: net.JoinHostPort("127.0.0.1", first.Port()),
		Args:   []string{"--password", sandboxPassword, "--opencode-url", oc.URL},
	})
	c.WaitFor(ctx, markerRecovered)
	res, err := c.Wait(ctx)
	require.NoError(t, err)
	require.NoError(t, res.Err)
	assert.True(t, res.OK, c.Output())
	assert.Contains(t, second.Log(), `msg="computer connected"`, "the daemon must reconnect to the new gateway")

	out := lines(c.Output())
	// The first failed run explains it: the gateway closed the socket with 1001 (going away).
	failed := slices.Index(out, markerFailed)
	require.Positive(t, failed, "no failure marker in:\n%s", c.Output())
	assertRetryRowsBefore(t, out, failed, "Not connected to the gateway: the gateway stopped (going away)")

	// The last health run (after the restart) printed the full healthy report.
	require.GreaterOrEqual(t, len(out), 4)
	assert.Equal(t, []string{"sandboxOk: true", "opencodeOk: true", agentOffLine, markerRecovered}, out[len(out)-4:])
}

// TestSocketDroppedUnderRunningComputer: the network drops the computer's socket (the gateway
// stays up) and refuses new connections for a while; the daemon keeps retrying on its
// reconnect timer and `sandbox health` works again once connections are allowed.
func TestSocketDroppedUnderRunningComputer(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := startGateway(t, oc.URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Files = map[string]string{"/e2e.lua": restartProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)

	c.WaitFor(ctx, markerFirstOK)
	c.HTTP.Refuse(true)
	c.HTTP.DropAll()
	c.WaitFor(ctx, markerFailed)
	// Let at least one reconnect attempt (5 s scaled, 1.25 s real) hit the refusal.
	c.WaitFor(ctx, "Not connected to the gateway: nothing answers at")
	c.HTTP.Refuse(false)

	c.WaitFor(ctx, markerRecovered)
	res, err := c.Wait(ctx)
	require.NoError(t, err)
	require.NoError(t, res.Err)
	assert.True(t, res.OK, c.Output())
	assert.Equal(t, 2, strings.Count(g.Log(), `msg="computer connected"`),
		"one connection before the drop and one after:\n%s", g.Log())

	out := lines(c.Output())
	failed := slices.Index(out, markerFailed)
	require.Positive(t, failed, "no failure marker in:\n%s", c.Output())
	assertRetryRowsBefore(t, out, failed, "Not connected to the gateway: the gateway closed the connection (Connection closed): it stopped or restarted")
	require.GreaterOrEqual(t, len(out), 4)
	assert.Equal(t, []string{"sandboxOk: true", "opencodeOk: true", agentOffLine, markerRecovered}, out[len(out)-4:])
}

// assertRetryRowsBefore: the screen rows just before out[at] are advice, word-wrapped as print
// shows it, and the seconds to the daemon's next try as its status said them: the first try
// after a loss is 5 s away plus up to 1 s of jitter (libsandboxdaemon), so 1 to 6 s when
// `sandbox health` asked; which one depends on how soon it asked.
func assertRetryRowsBefore(t *testing.T, out []string, at int, advice string) {
	t.Helper()
	const firstRetryMax = 6
	for seconds := 1; seconds <= firstRetryMax; seconds++ {
		rows := screen(fmt.Sprintf("%s; the daemon retries in %d s", advice, seconds))
		if at >= len(rows) && slices.Equal(rows, out[at-len(rows):at]) {
			return
		}
	}
	t.Errorf("the rows before %q are not %q with 1 to %d s to the next try:\n%s",
		out[at], advice, firstRetryMax, strings.Join(out[:at], "\n"))
}
