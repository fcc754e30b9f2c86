package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

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
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	// Idle probe 2 s + request timeout 1 s: the hello answer announces livenessMs 3000.
	g := startGateway(t, harness.ClosedPortURL(t), "--idle-probe-after", "2s", "--request-timeout", "1s")
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.TimeScale = 1
	opts.Files = map[string]string{"/e2e.lua": livenessProgram}
	c := fakecrafttest.Start(t, opts)

	c.WaitFor(ctx, markerConnected)
	// Connected for longer than livenessMs: the gateway's idle probes keep it so.
	time.Sleep(4 * time.Second)
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
	assert.Contains(t, strings.Join(lines(c.Output()), " "),
		"the gateway sent nothing for 3 s (it promised a frame every 3 s at most): reconnecting")
	assert.GreaterOrEqual(t, strings.Count(g.Log(), `msg="computer connected"`), 2, "the daemon must say hello again:\n%s", g.Log())
}
