package integration

// MCP's wait_for_screen (docs/mcp.md) on the real binary, over /mcp and the stdio bridge, with
// a computer on a raw socket (monitorComputer) whose watch the test drives: each step waits on
// the computer being asked (screen.watch, screen.unwatch), never on time.

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// waitFor fails the test unless ch gives a value before ctx ends, and returns it.
func waitFor[T any](ctx context.Context, t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("%s never came", what)
		var zero T
		return zero
	}
}

// TestMCPWaitForScreenIsAViewerOfTheWatch: the wait starts the computer's watch, answers once
// an update shows its text (one before it does not), and leaves the watch: the computer is
// told to stop it; its answer names the monitors attached, as read_screen's. A monitor's wait
// watches that monitor. A call the client cancels mid-wait leaves the watch too, at once.
func TestMCPWaitForScreenIsAViewerOfTheWatch(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			ctx := testContext(t)
			g := startGateway(t)
			c := startMonitorComputer(ctx, t, g, "7:desk", sandboxPassword)
			s := connectMCP(ctx, t, g, transport)

			done := harness.CallToolAsync(ctx, s, "wait_for_screen", map[string]any{"traposId": "7:desk", "text": "ready", "timeoutMs": 60000})
			assert.Empty(t, waitFor(ctx, t, c.watched, "screen.watch"), "the computer's own screen")
			c.update(t, "", 1, "wait ")
			select {
			case res := <-done:
				t.Fatalf("answered before the screen showed its text: %v", harness.Texts(res))
			default:
			}
			c.update(t, "", 2, "ready")
			var out struct {
				Text     string   `json:"text"`
				TimedOut bool     `json:"timedOut"`
				WaitedMs *int64   `json:"waitedMs"`
				Monitors []string `json:"monitors"`
			}
			harness.ToolOK(t, waitFor(ctx, t, done, "the answer"), "7:desk", &out)
			assert.Equal(t, "ready", out.Text)
			assert.Equal(t, []string{"top"}, out.Monitors, "the monitors attached, as read_screen names them")
			assert.False(t, out.TimedOut)
			assert.NotNil(t, out.WaitedMs)
			assert.Equal(t, "watch-", waitFor(ctx, t, c.unwatched, "screen.unwatch"), "the wait left the watch")

			// A monitor's screen, watched as its own: the update of the computer's own screen
			// shows nothing of it.
			done = harness.CallToolAsync(ctx, s, "wait_for_screen", map[string]any{"traposId": "7:desk", "monitor": "top", "text": "hot", "timeoutMs": 60000})
			assert.Equal(t, "top", waitFor(ctx, t, c.watched, "screen.watch of the monitor"))
			c.update(t, "top", 1, "hot")
			var shown struct {
				Text      string   `json:"text"`
				Monitor   string   `json:"monitor"`
				TextScale float64  `json:"textScale"`
				Monitors  []string `json:"monitors"`
			}
			harness.ToolOK(t, waitFor(ctx, t, done, "the monitor's answer"), "7:desk", &shown)
			assert.Equal(t, "hot", shown.Text)
			assert.Empty(t, shown.Monitors, "a monitor's screen names none, as read_screen's")
			assert.Equal(t, "top", shown.Monitor)
			assert.InDelta(t, 1, shown.TextScale, 0)
			assert.Equal(t, "watch-top", waitFor(ctx, t, c.unwatched, "screen.unwatch of the monitor"))

			cancelled, cancel := context.WithCancel(ctx)
			done = harness.CallToolAsync(cancelled, s, "wait_for_screen", map[string]any{"traposId": "7:desk", "timeoutMs": 60000})
			waitFor(ctx, t, c.watched, "screen.watch")
			// Answered once the watch is the gateway's: the wait is its viewer then.
			requireOK(t, c.update(t, "", 1, "still"))
			cancel()
			assert.Equal(t, "watch-", waitFor(ctx, t, c.unwatched, "screen.unwatch"), "the cancelled wait left the watch")
			assert.True(t, waitFor(ctx, t, done, "the cancelled call's end").IsError)
		})
	}
}

// TestMCPWaitForScreenStopsWhenItsTokenIsRevoked: an account's token revoked while its wait
// runs ends the wait with unauthorized, and the watch with it: over /mcp on a screen that
// stays still (the gateway asks every second), through the stdio bridge at the screen's next
// update (the gateway's stream asks before each frame).
func TestMCPWaitForScreenStopsWhenItsTokenIsRevoked(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			ctx := testContext(t)
			dir := "--data-dir=" + t.TempDir()
			alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
			cred := lastLine(ctx, t, "credentials", "add", "alice", dir)
			g := startGateway(t, dir)
			c := startMonitorComputer(ctx, t, g, "7:desk", cred)
			s := harness.ConnectMCP(ctx, t, g, alice)
			if transport == "stdio" {
				s = harness.ConnectMCPStdio(ctx, t, gatewayBin, g, "SANDBOX_API_TOKEN="+alice)
			}

			done := harness.CallToolAsync(ctx, s, "wait_for_screen", map[string]any{"traposId": "7:desk", "text": "PIN", "timeoutMs": 60000})
			waitFor(ctx, t, c.watched, "screen.watch")
			c.update(t, "", 1, "door")
			_, errOut, code := runCLI(ctx, t, nil, "tokens", "revoke", dir, strings.SplitN(alice, "_", 3)[1])
			require.Equal(t, 0, code, errOut)
			if transport == "stdio" {
				c.update(t, "", 2, "PIN42")
			}
			msg := harness.ToolError(t, waitFor(ctx, t, done, "the answer"), "unauthorized")
			assert.Contains(t, msg, "revoked")
			assert.NotContains(t, msg, "PIN42")
			waitFor(ctx, t, c.unwatched, "screen.unwatch")
		})
	}
}

// TestMCPWaitForScreenReachesTheCallersComputersOnly: bob's token waiting on alice's computer,
// by its traposId, its label alone or another case of it, is answered not_connected, naming no
// account, over /mcp and the stdio bridge; the computer is never asked to watch, and alice's
// own wait on it goes on.
func TestMCPWaitForScreenReachesTheCallersComputersOnly(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			ctx := testContext(t)
			dir := "--data-dir=" + t.TempDir()
			alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
			bob := lastLine(ctx, t, "accounts", "add", "bob", dir)
			cred := lastLine(ctx, t, "credentials", "add", "alice", dir)
			g := startGateway(t, dir)
			c := startMonitorComputer(ctx, t, g, "7:desk", cred)
			connect := func(token string) *sdk.ClientSession {
				if transport == "stdio" {
					return harness.ConnectMCPStdio(ctx, t, gatewayBin, g, "SANDBOX_API_TOKEN="+token)
				}
				return harness.ConnectMCP(ctx, t, g, token)
			}
			mine := harness.CallToolAsync(ctx, connect(alice), "wait_for_screen", map[string]any{"traposId": "7:desk", "text": "mine", "timeoutMs": 60000})
			waitFor(ctx, t, c.watched, "alice's screen.watch")
			c.update(t, "", 1, "door")

			theirs := connect(bob)
			for _, id := range []string{"7:desk", "7:DESK", "desk", "7:"} {
				msg := harness.ToolError(t, waitFor(ctx, t, harness.CallToolAsync(ctx, theirs, "wait_for_screen", map[string]any{"traposId": id, "timeoutMs": 60000}), "bob's answer"), "not_connected")
				assert.NotContains(t, msg, "alice", id)
				assert.NotContains(t, msg, "door", id)
			}
			select {
			case m := <-c.watched:
				t.Fatalf("the computer was asked to watch (%q) for bob", m)
			default:
			}

			c.update(t, "", 2, "mine")
			var out struct {
				Text string `json:"text"`
			}
			harness.ToolOK(t, waitFor(ctx, t, mine, "alice's answer"), "7:desk", &out)
			assert.Equal(t, "mine", out.Text)
		})
	}
}
