package e2e

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"
)

// labelProgram renames the connected computer and waits, in the computer's own time, until the
// daemon is connected again under the new traposId; it prints how long that took.
const labelProgram = `
local lib = require('/apis/libsandbox')
assert(shell.run("sandbox", "health"))
os.setComputerLabel("renamed")
local t0 = os.clock()
while os.clock() - t0 < 60 do
  local status = lib.requestStatus()
  if status and status.connected and status.traposId == "0:renamed" then
    print("e2e: renamed after " .. math.floor(os.clock() - t0) .. " s")
    return
  end
  sleep(0.5)
end
error("e2e: still not reconnected as 0:renamed", 0)
`

// TestLabelChangeReconnects: CC has no label event, so the daemon looks on its own timer and
// says hello again under the new traposId within 30 s (computer time), after a bye that
// closes the old socket cleanly.
func TestLabelChangeReconnects(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := startGateway(t, oc.URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Files = map[string]string{"/e2e.lua": labelProgram}
	ok, out := runCommand(ctx, t, opts)
	require.True(t, ok, out)
	seconds, found := -1, false
	for _, l := range lines(out) {
		if n, _ := fmt.Sscanf(l, "e2e: renamed after %d s", &seconds); n == 1 {
			found = true
			break
		}
	}
	require.True(t, found, out)
	assert.LessOrEqual(t, seconds, 30, out)
	assert.Contains(t, g.Log(), "traposId=0:renamed", "the gateway saw the new name's hello")
	// CC's close() sends no close frame: the daemon's bye makes the old socket's end the
	// gateway's clean close, named, not an abnormal 1006.
	require.NoError(t, g.WaitLog(ctx, "traposId=0: code=1000 byGateway=true reason=relabelled relabelledTo=0:renamed"), g.Log())
	assert.NotContains(t, g.Log(), "traposId=0: code=1006", "the old socket's end")
}

// TestStatusRightAfterARelabelNamesTheNewTraposId: `label set renamed`, then `sandbox status`,
// read the old traposId, connected, until the daemon's label timer looked (up to 15 s). The
// status request makes the daemon look at once: it reconnects under the new name, and the
// status shows it connected as that.
func TestStatusRightAfterARelabelNamesTheNewTraposId(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := startGateway(t, oc.URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Files = map[string]string{"/e2e.lua": `
assert(shell.run("sandbox", "health"))
assert(shell.run("label", "set", "renamed"))
assert(shell.run("sandbox", "status"))
`}
	ok, out := runCommand(ctx, t, opts)
	require.True(t, ok, out)
	status := afterLast(out, "Computer label set to")
	assert.Contains(t, status, "traposId: 0:renamed", out)
	assert.Contains(t, status, "connected: true", out)
	assert.Contains(t, g.Log(), "traposId=0:renamed", "the gateway saw the new name's hello")
}
