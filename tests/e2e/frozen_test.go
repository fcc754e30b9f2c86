package e2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// Markers the liveness program prints.
const (
	markerConnected = "e2e: connected"
	markerLeft      = "e2e: left connected:"
	markerBack      = "e2e: connected again"
)

// livenessProgram watches the daemon's status every 0.2 s and reports when it is connected,
// when it leaves connected (with the daemon's lastError) and when it is connected again.
const livenessProgram = `
local lib = require('/apis/libsandbox')
local stage = "start"
while true do
  local st = lib.requestStatus()
  if st ~= nil then
    if stage == "start" and st.connected then
      print("` + markerConnected + `")
      stage = "up"
    elseif stage == "up" and not st.connected then
      print("` + markerLeft + ` " .. tostring(st.lastError))
      stage = "down"
    elseif stage == "down" and st.connected then
      print("` + markerBack + `")
      return
    end
  end
  sleep(0.2)
end
`

// TestFrozenGatewayIsLeftAndRejoined: the gateway freezes (SIGSTOP: TCP stays open, nothing
// is answered). The daemon leaves connected once the gateway has been silent for the
// livenessMs its hello answer announced, and is connected again once the gateway runs again.
// The computer runs at real speed here: livenessMs is wall time on the gateway's side.
func TestFrozenGatewayIsLeftAndRejoined(t *testing.T) {
	// It waits for the gateway's probes and the daemon's silence, in real time, and shares
	// nothing (its own gateway and computer): it runs beside the package's other tests that
	// mostly wait.
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	// Idle probe 2 s + request timeout 3 s: the hello answer announces livenessMs 5000. The
	// 3 s leave a loaded machine time to answer a probe.
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--idle-probe-after", "2s", "--request-timeout", "3s")
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.TimeScale = 1
	opts.Files = map[string]string{"/e2e.lua": livenessProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)

	c.WaitFor(ctx, markerConnected)
	// Connected through three idle probes, longer than livenessMs: the probes keep it so.
	waitAnsweredProbes(ctx, t, g, 3)
	require.NotContains(t, c.Output(), markerLeft, "a live gateway must not be left:\n%s", c.Output())

	g.Freeze(t)
	c.WaitFor(ctx, markerLeft)
	g.Thaw()
	c.WaitFor(ctx, markerBack)
	res, err := c.Wait(ctx)
	require.NoError(t, err)
	require.NoError(t, res.Err)
	assert.True(t, res.OK, c.Output())
	// The daemon said why: the screen wraps the line, so its rows are joined again.
	// It counts whole seconds of the silence it saw: 5, or more on a machine slow to wake it.
	said := silenceSaid.FindStringSubmatch(strings.Join(lines(c.Output()), " "))
	require.NotNil(t, said, "the daemon must say why it left:\n%s", c.Output())
	silent, _ := strconv.Atoi(said[1])
	assert.GreaterOrEqual(t, silent, 5, said[0])
	assert.GreaterOrEqual(t, strings.Count(g.Log(), `msg="computer connected"`), 2, "the daemon must say hello again:\n%s", g.Log())
}

// silenceSaid is the daemon's reason for leaving a gateway that promised a frame every 5 s.
var silenceSaid = regexp.MustCompile(`the gateway sent nothing for (\d+) s \(it promised a frame every 5 s at most\): reconnecting`)

// answeredProbe is the gateway's count of idle-probe pings a computer answered.
var answeredProbe = regexp.MustCompile(`(?m)^trapos_gateway_frames_in_total\{event="computer_response",type="ping"\} (\d+)$`)

// waitAnsweredProbes waits until the gateway's metrics count n answered idle probes.
func waitAnsweredProbes(ctx context.Context, t *testing.T, g *harness.Gateway, n int) {
	t.Helper()
	for metricCount(ctx, t, g, answeredProbe) < n {
		select {
		case <-ctx.Done():
			t.Fatalf("the gateway did not count %d answered probes:\n%s", n, metricsText(ctx, t, g))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
