package integration

// The per-account bound on screen streams and MCP wait_for_screen calls held at once
// (--max-screen-viewers, docs/screen.md), on the real binary: each step waits on the computer
// being asked (screen.watch, screen.unwatch), never on time.

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// TestAnAccountHoldsItsMostScreenViewersAndNoMore: alice's token holds a stream and a
// wait_for_screen, her most with --max-screen-viewers=2; her next stream is answered 429 busy,
// and her next wait busy, each naming the bound, counted and logged; bob's stream of his own
// computer opens all the same; once alice's stream is closed, her next one opens.
func TestAnAccountHoldsItsMostScreenViewersAndNoMore(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	bob := lastLine(ctx, t, "accounts", "add", "bob", dir)
	aliceCred := lastLine(ctx, t, "credentials", "add", "alice", dir)
	bobCred := lastLine(ctx, t, "credentials", "add", "bob", dir)
	g := startGateway(t, dir, "--max-screen-viewers=2")
	desk := startMonitorComputer(ctx, t, g, "7:desk", aliceCred)
	shed := startMonitorComputer(ctx, t, g, "8:shed", bobCred)

	first := openStream(ctx, t, g, alice, "/trapos/computers/7:desk/screen")
	defer first.Body.Close()
	require.Equal(t, http.StatusOK, first.StatusCode)
	assert.Empty(t, waitFor(ctx, t, desk.watched, "the stream's screen.watch"))
	s := harness.ConnectMCP(ctx, t, g, alice)
	_ = harness.CallToolAsync(ctx, s, "wait_for_screen", map[string]any{"traposId": "7:desk", "monitor": "top", "text": "never", "timeoutMs": 60000})
	assert.Equal(t, "top", waitFor(ctx, t, desk.watched, "the wait's screen.watch"))

	const refusal = "account alice already holds 2 screen waits and streams at once on this gateway, the most it may (--max-screen-viewers)"
	third := openStream(ctx, t, g, alice, "/trapos/computers/7:desk/screen")
	body, err := io.ReadAll(third.Body)
	third.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, third.StatusCode, string(body))
	assert.Contains(t, string(body), `"code":"busy"`)
	assert.Contains(t, string(body), refusal)
	msg := harness.ToolError(t, waitFor(ctx, t, harness.CallToolAsync(ctx, s, "wait_for_screen", map[string]any{"traposId": "7:desk", "timeoutMs": 60000}), "the third wait's answer"), "busy")
	assert.Contains(t, msg, refusal)
	assert.InDelta(t, 2, metric(ctx, t, g, `trapos_gateway_limited_total{limit="screen_viewers"}`), 0)
	require.NoError(t, g.WaitLog(ctx, "its account holds --max-screen-viewers already"))

	theirs := openStream(ctx, t, g, bob, "/trapos/computers/8:shed/screen")
	defer theirs.Body.Close()
	assert.Equal(t, http.StatusOK, theirs.StatusCode, "bob's places are his own")
	waitFor(ctx, t, shed.watched, "bob's screen.watch")

	first.Body.Close()
	// The stream's viewer gives its place back as it leaves, before it stops its watch.
	assert.Equal(t, "watch-", waitFor(ctx, t, desk.unwatched, "the closed stream's screen.unwatch"))
	again := openStream(ctx, t, g, alice, "/trapos/computers/7:desk/screen")
	defer again.Body.Close()
	assert.Equal(t, http.StatusOK, again.StatusCode, "the closed stream's place is alice's again")
}
