package scaleout

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"

	"tests/internal/harness"
)

// TestAWaitThroughAnotherReplicaIsToldHowToWaitOnWhenTheHolderStops: MCP's wait_for_screen
// through replica B, on a monitor of a computer (the real Lua daemon) whose socket is on
// replica A, the real binaries on a real nats-server, ends when A stops (SIGTERM) with the
// gateway's words of what became of A, then what the wait watched, how long, and how to wait
// on, over /mcp and through the stdio bridge alike, as a wait whose computer disconnected is
// told; it answered "replica a, which held its socket, has stopped" alone. B marks the error
// (replicaGone), which the bridge reads from the host API's stream, never its words.
func TestAWaitThroughAnotherReplicaIsToldHowToWaitOnWhenTheHolderStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")
	monitorKitchenWith(ctx, t, a.WebSocketURL(), map[string]string{"top": "monitor:2:1", "bottom": "monitor:1:1"})
	const id = "5:küche"
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "a", listComputers(ct, b)[id]) },
		waitLimit, testkit.Poll, "B to list the computer on A")

	// One wait a monitor, each the first viewer of its own watch, which B starts through A: once
	// B has had both watches' answers, both waits watch (a viewer joining a watch already live
	// would leave no trace to wait on).
	overHTTP := harness.CallToolAsync(ctx, harness.ConnectMCP(ctx, t, b, ""), "wait_for_screen",
		map[string]any{"traposId": id, "monitor": "top", "text": "never shown", "timeoutMs": 60000})
	watchesStarted := func(ct *assert.CollectT) int {
		_, body := get(ct, b, "/metrics")
		m := regexp.MustCompile(`(?m)^trapos_gateway_relayed_message_duration_seconds_count\{module="screen",outcome="ok",replica="b"\} ([0-9]+)$`).FindStringSubmatch(body)
		if !assert.NotNil(ct, m, "no watch through A yet") {
			return 0
		}
		n, err := strconv.Atoi(m[1])
		assert.NoError(ct, err)
		return n
	}
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.GreaterOrEqual(ct, watchesStarted(ct), 1) },
		waitLimit, testkit.Poll, "B to start the first wait's watch through A")
	bridged := harness.CallToolAsync(ctx, harness.ConnectMCPStdio(ctx, t, gatewayBin, b), "wait_for_screen",
		map[string]any{"traposId": id, "monitor": "bottom", "text": "never shown", "timeoutMs": 60000})
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.GreaterOrEqual(ct, watchesStarted(ct), 2) },
		waitLimit, testkit.Poll, "B to start the second wait's watch through A")

	require.NoError(t, a.Stop())
	for _, w := range []struct {
		name, monitor string
		done          <-chan *sdk.CallToolResult
	}{{"over /mcp", "top", overHTTP}, {"through the stdio bridge", "bottom", bridged}} {
		var res *sdk.CallToolResult
		select {
		case res = <-w.done:
		case <-ctx.Done():
			t.Fatalf("%s: the wait did not end with A", w.name)
		}
		text := harness.ToolError(t, res, "not_connected")
		assert.Regexp(t, `^not_connected: computer 5:küche is not connected: replica a, which held its socket, has stopped, while the wait watched its monitor `+w.monitor+`, [0-9]+ ms in, before it showed "never shown" `+
			`\(its daemon connects again by itself, to a replica still running, within seconds\); ping with wait true waits for it to come back, and wait_for_screen then waits on$`,
			text, w.name)
	}
}

// TestACLICallThroughAnotherReplicaIsToldTheComputerConnectsAgain: trap-sandbox ping of a
// computer (the real Lua daemon) whose socket was on replica A, through replica B once A has
// stopped, the real binaries on a real nats-server, says that the computer's daemon connects
// again by itself and how the CLI sees it back, as MCP says with its own words (ping with wait
// true): it said "replica a, which held its socket, has stopped" alone, which read as gone for
// good. B marks the error (replicaGone), which the CLI reads from the host API, never its words.
func TestACLICallThroughAnotherReplicaIsToldTheComputerConnectsAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")
	monitorKitchen(ctx, t, a.WebSocketURL())
	const id = "5:küche"
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "a", listComputers(ct, b)[id]) },
		waitLimit, testkit.Poll, "B to list the computer on A")

	require.NoError(t, a.Stop())
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.NotContains(ct, listComputers(ct, b), id) },
		waitLimit, testkit.Poll, "B to hear that A stopped")
	cmd := exec.CommandContext(ctx, gatewayBin, "ping", id, "--url", b.URL(""))
	cmd.Env = append(harness.CleanEnv(), "GORACE=atexit_sleep_ms=0")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.Error(t, cmd.Run(), out.String())
	assert.Equal(t, "trap-sandbox: computer 5:küche ping: the gateway answered not_connected: the computer is not connected: replica a, which held its socket, has stopped "+
		"(its daemon connects again by itself, to a replica still running, within seconds: trap-sandbox computers lists it then)\n", errOut.String())
}
