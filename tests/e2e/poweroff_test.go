package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"
)

// TestExecThatTurnsTheComputerOffIsAnswered: a host's exec or run of code that calls
// os.shutdown() or os.reboot() lost its answer, the computer's socket closing with the
// computer, and the host read `not_connected` (`disconnected before it answered`) not
// knowing whether the code ran: always when the code waited after the call (the computer
// stops at the next yield, before the job ended), and, on fakecraft, also when it returned at
// once (its shutdown dropped the connection before the answer queued on it was written, where
// CC's Netty writes it first). The answer now goes out as the computer stops, and says so:
// the CLI prints what the code printed and returned, then the line that it turned the
// computer off, and exits 0.
func TestExecThatTurnsTheComputerOffIsAnswered(t *testing.T) {
	for _, tc := range []struct {
		name, command, code, stdout, note string
	}{
		{
			name: "reboot, then a wait", command: "exec", code: `print("bye") os.reboot() sleep(10) return 42`,
			stdout: "bye\n",
			note:   "trap-sandbox: computer 7:north is rebooting: the code called os.reboot(); it connects again by itself within seconds\n",
		},
		{
			// os.shutdown() never returns (CC's bios yields after it until the computer stops);
			// called in a coroutine of its own it yields that one, and the code returns at once.
			name: "shutdown, then return", command: "exec", code: `print("bye") coroutine.wrap(os.shutdown)() return 42`,
			stdout: "bye\n42\n",
			note:   "trap-sandbox: computer 7:north is shutting down: the code called os.shutdown(); it stays off until a player turns it on in game\n",
		},
		{
			name: "the shutdown program", command: "run", code: "shutdown",
			stdout: "Goodbye\n",
			note:   "trap-sandbox: computer 7:north is shutting down: the code called os.shutdown(); it stays off until a player turns it on in game\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
			opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
			opts.ID, opts.Label = 7, "north"
			opts.Settings["sandbox.allow_exec"] = "true"
			opts.Files = map[string]string{"/e2e.lua": idleProgram}
			c := fakecrafttest.StartWithin(t, opts, testTimeout)
			c.WaitFor(ctx, markerIdle)

			stdout, stderr, code := cli(ctx, t, g, nil, tc.command, requestTraposID, tc.code)
			assert.Equal(t, tc.stdout, stdout)
			assert.Equal(t, tc.note, stderr)
			assert.Equal(t, 0, code)

			// The computer did turn off (under fakecraft's run a reboot ends it too).
			_, err := c.Wait(ctx)
			require.NoError(t, err)
		})
	}
}

// TestAServedHandlerThatRebootsIsAnswered: a program's libsandbox.serve handler that called
// os.reboot() was never answered (its answer crosses CC's event queue to the daemon, and the
// computer stopped first): the host read not_connected. serve now holds the reboot until the
// daemon has the answer.
func TestAServedHandlerThatRebootsIsAnswered(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 7, "north"
	opts.Files = map[string]string{"/e2e.lua": `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
print("` + markerIdle + `")
require('/apis/libsandbox').serve({ ["door.reboot"] = function() os.reboot(); return { rebooting = true }; end })
`}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerIdle)

	// The program offers its type once it serves: ask until it does.
	var stdout, stderr string
	var code int
	for {
		stdout, stderr, code = cli(ctx, t, g, nil, "request", requestTraposID, "door.reboot")
		if !strings.Contains(stderr, "unknown_type") {
			break
		}
		require.NoError(t, ctx.Err())
	}
	assert.Equal(t, 0, code, stderr)
	assert.JSONEq(t, `{"rebooting": true}`, stdout)
	_, err := c.Wait(ctx)
	require.NoError(t, err)
}
