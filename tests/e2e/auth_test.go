package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// wrongPassword is the computer's sandbox.password in tests the gateway must reject.
const wrongPassword = "not-the-password"

// unauthorizedLine is the one red line `sandbox health` prints when the gateway rejects the
// computer's sandbox.password.
const unauthorizedLine = "Not connected to the gateway: the gateway rejected sandbox.password (unauthorized). Fix it with: sandbox setup"

// TestHealthWrongPassword: the gateway rejects the password; the command says so in one line
// and fails.
func TestHealthWrongPassword(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	ok, out := runCommand(ctx, t, computerOptions(t, g, wrongPassword, "sandbox", "health"))
	assert.False(t, ok, "the command must fail: %s", out)
	assert.Equal(t, screen(unauthorizedLine), lines(out))
}

// waitThenStatusProgram runs `sandbox health`, waits longer than two of the daemon's reconnect
// delays (5 s each, in the computer's scaled time) and shows `sandbox status`.
const waitThenStatusProgram = `
local ok = shell.run("sandbox", "health")
print("e2e: health ok " .. tostring(ok))
sleep(12)
shell.run("sandbox", "status")
`

// unauthorizedStatus is the start of `sandbox status` on a computer of this test's settings
// that the gateway refused before it ever connected: its lines up to lastError.
func unauthorizedStatus(g *harness.Gateway) []string {
	return []string{
		"url: " + g.WebSocketURL(),
		"connected: false",
		"state: unauthorized",
		"traposId: 0:",
		"proof: none yet (the first to answer is trusted)",
		"files: none",
		"exec: false",
		"ai confirm: true",
		"screen: none",
	}
}

// TestWrongPasswordStopsReconnecting: after an unauthorized hello the daemon does not try
// again on its own (it would be rejected forever); the gateway sees exactly one hello.
func TestWrongPasswordStopsReconnecting(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	opts := computerOptions(t, g, wrongPassword, "/e2e.lua")
	opts.Files = map[string]string{"/e2e.lua": waitThenStatusProgram}
	ok, out := runCommand(ctx, t, opts)
	assert.True(t, ok, out)
	assert.Equal(t, append(screen(
		unauthorizedLine,
		"e2e: health ok false"), hangingScreen(append(unauthorizedStatus(g),
		"lastError: unauthorized: wrong secret (check the computer's sandbox.password against SANDBOX_PASSWORD)",
		"fix: the gateway rejected sandbox.password (unauthorized). Fix it with: sandbox setup",
	)...)...), lines(out))
	// Any retry would have reached the gateway within the 12 s the program waited.
	assert.Equal(t, 1, strings.Count(g.Log(), `msg="hello rejected: wrong secret"`),
		"the daemon must say hello exactly once:\n%s", g.Log())
	assert.NotContains(t, g.Log(), wrongPassword, "the gateway must not log the offered secret")
}

// TestNoPasswordIsToldItSentNone: a computer without sandbox.password, on a gateway with one,
// read `lastError: unauthorized: wrong secret (check the computer's sandbox.password against
// SANDBOX_PASSWORD)` above its right fix; the gateway now says the computer sent no secret,
// and its operator's line says so as well.
func TestNoPasswordIsToldItSentNone(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	opts := computerOptions(t, g, "", "/e2e.lua")
	delete(opts.Settings, "sandbox.password")
	opts.Files = map[string]string{"/e2e.lua": `shell.run("sandbox", "health"); shell.run("sandbox", "status")`}
	ok, out := runCommand(ctx, t, opts)
	assert.True(t, ok, out)
	require.Len(t, lines(out), 19, out)
	assert.Equal(t, append(screen(
		"Not connected to the gateway: the gateway wants a password (unauthorized) and sandbox.password is not set. Set it with: sandbox setup"),
		hangingScreen(unauthorizedStatus(g)...)...), lines(out)[:12])
	// sandbox status keeps a parenthesis's words on one row where they fit; the rows after
	// the first, the gateway's words, indented.
	assert.Equal(t, []string{
		"lastError: unauthorized: no secret sent",
		"  (sandbox.password is not set): this gateway wants",
		"  SANDBOX_PASSWORD or a linked credential",
		"  (sandbox setup, or sandbox link)",
	}, lines(out)[12:16])
	assert.Equal(t, hangingScreen("fix: the gateway wants a password (unauthorized) and sandbox.password is not set. Set it with: sandbox setup"), lines(out)[16:])
	assert.Equal(t, 1, strings.Count(g.Log(), `msg="hello rejected: no secret"`), g.Log())
}
