package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"
)

const (
	serveTraposID = "11:door"
	// serveStopProgram serves door.open until the daemon is stopped (as `sandbox stop` does),
	// then ends without a word while the daemon hears nothing, and runs the daemon again.
	serveStopProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
local libsandbox = require('/apis/libsandbox');
parallel.waitForAny(function()
  print("e2e: serving");
  libsandbox.serve({ ["door.open"] = function() return { opened = true }; end });
end, function()
  os.pullEvent("trapos_sandbox_stop");
end);
print("e2e: ended while the daemon is stopped");
libsandbox.reconnect();
os.pullEvent("trapos_sandbox_connected");
print("e2e: connected again");
while true do os.pullEvent() end
`
)

// A program that ended while `sandbox stop` had stopped the daemon no longer serves its type
// once the daemon runs again: the host is told so (unknown_type), instead of waiting for its
// timeout on a request nothing will answer.
func TestServedTypeOfAProgramThatEndedWhileTheDaemonWasStopped(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), capLimit)
	defer cancel()
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 11, "door"
	opts.Files = map[string]string{"/e2e.lua": serveStopProgram}
	c := fakecrafttest.StartWithin(t, opts, capLimit)
	c.WaitFor(ctx, "e2e: serving")

	out, errOut, code := cli(ctx, t, g, nil, "request", serveTraposID, "door.open")
	require.Equal(t, 0, code, errOut)
	assert.JSONEq(t, `{"opened":true}`, out)

	c.QueueString("trapos_sandbox_stop")
	c.WaitFor(ctx, "e2e: connected again")
	// The stop said bye: the gateway closed the socket, and says why, not an abnormal 1006.
	require.NoError(t, g.WaitLog(ctx, "traposId="+serveTraposID+" code=1000 byGateway=true reason=stopped"), g.Log())
	assert.NotContains(t, g.Log(), "code=1006")

	// The daemon's sweep answers it within a lease (2.5 s of the computer's time); the request
	// may wait up to the limit, so a busy machine's slower computer does not time it out.
	_, errOut, code = cli(ctx, t, g, nil, "request", "--timeout", "60s", serveTraposID, "door.open")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "the computer answered unknown_type: door.open is no longer served: the program serving it has ended")
	_, errOut, code = cli(ctx, t, g, nil, "request", serveTraposID, "door.open")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "the computer answered unknown_type: this computer does not handle requests of type door.open:"+
		" no program on it serves that type now (start the program that serves it with libsandbox.serve)")
}
