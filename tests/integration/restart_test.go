package integration

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// TestGatewayRestart: computers see the shutdown as close 1001 (reconnect), and after the
// gateway comes back on the same port they reconnect and say hello again.
func TestGatewayRestart(t *testing.T) {
	ctx := testContext(t)
	first := startGateway(t)
	ids := []string{"20:north", "21:south", "22:"}
	var computers []*harness.Computer
	for _, id := range ids {
		computers = append(computers, connect(ctx, t, first, id))
	}
	// One socket that has not said hello yet is closed the same way.
	silent := dial(ctx, t, first, "23:")

	require.NoError(t, first.Stop(), "SIGTERM must end the gateway with status 0")
	for i, c := range computers {
		ce, err := c.ExpectClose(ctx)
		require.NoError(t, err, ids[i])
		assert.Equal(t, harness.CloseGoingAway, ce.Code, "%s: close %d %q", ids[i], ce.Code, ce.Text)
	}
	requireClose(ctx, t, silent, harness.CloseGoingAway)

	_, err := harness.Dial(ctx, first.WebSocketURL(), "20:north")
	require.Error(t, err, "nothing may accept sockets while the gateway is down")

	second := harness.Start(t, gatewayBin, harness.Options{
		Listen: net.JoinHostPort("127.0.0.1", first.Port()),
		Args:   []string{"--password", sandboxPassword, "--opencode-url", opencodefake.ClosedPortURL(t)},
	})
	require.Equal(t, first.Addr, second.Addr)
	for _, id := range ids {
		c := connect(ctx, t, second, id)
		f, err := c.Request(ctx, harness.TypeProbeGateway, map[string]any{})
		require.NoError(t, err, id)
		requireOK(t, f)
	}
}

// TestSIGHUPStopsTheGatewayAsSIGTERMDoes: a hangup (the terminal or SSH session that started
// the gateway closed, or an operator expecting a reload, which there is none of) stops the
// gateway cleanly: its computers get 1001 and reconnect, the status is 0. At Go's default,
// SIGHUP ended the process at once: no close frame, and a replica said no goodbye.
func TestSIGHUPStopsTheGatewayAsSIGTERMDoes(t *testing.T) {
	ctx := testContext(t)
	gw := startGateway(t)
	c := connect(ctx, t, gw, "20:north")

	require.NoError(t, gw.Hangup(), "SIGHUP must end the gateway with status 0")
	ce, err := c.ExpectClose(ctx)
	require.NoError(t, err)
	assert.Equal(t, harness.CloseGoingAway, ce.Code, "close %d %q", ce.Code, ce.Text)
	// The log says who stopped it, and how to keep it up: a gateway started from an SSH
	// session stops when the session closes, which "shutting down" alone did not tell.
	assert.Contains(t, gw.Log(), `msg="shutting down" signal=SIGHUP likely="the terminal or SSH session that started it closed: `+
		`run it as a service to keep it up (tools/trap-sandbox/README.md)"`)
}

// TestSIGTERMIsNamedInTheShutdownLine: a stop by a service manager (systemctl stop is a
// SIGTERM) says so in the gateway's log, as the other signals it stops on do.
func TestSIGTERMIsNamedInTheShutdownLine(t *testing.T) {
	gw := startGateway(t)
	require.NoError(t, gw.Stop(), "SIGTERM must end the gateway with status 0")
	assert.Contains(t, gw.Log(), `msg="shutting down" signal=SIGTERM likely="a service manager's stop (systemctl stop), or kill"`)
}
