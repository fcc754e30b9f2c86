package integration

// MCP's click (docs/mcp.md) as an agent that should not reach a computer, or gives it a cell
// no screen has, would use it: on the real binary, with a computer on a raw socket that records
// every screen.input it is sent.

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// TestMCPClickReachesTheCallersComputersOnly: bob's token clicking alice's computer, by its
// traposId, another case of it or its label alone, is answered not_connected naming no account
// and none of its screen; a click at a cell no number holds exactly (1e20, 2^53 + 1, a button
// of 1e300) is bad_argument in the tool's words, not Go's decoder's ("cannot unmarshal number
// … into Go struct field"). None of them reaches the computer: the first screen.input it is
// sent is alice's own click, at the cell she gave.
func TestMCPClickReachesTheCallersComputersOnly(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	bob := lastLine(ctx, t, "accounts", "add", "bob", dir)
	cred := lastLine(ctx, t, "credentials", "add", "alice", dir)
	g := startGateway(t, dir)

	c := dial(ctx, t, g, "7:desk")
	f, err := c.Request(ctx, harness.TypeHello, map[string]any{"traposId": "7:desk", "secret": cred, "clientVersion": "0.5.35"})
	require.NoError(t, err)
	requireOK(t, f)
	inputs := make(chan json.RawMessage, 16)
	go func() {
		_ = c.AnswerSeeing(ctx, func(f harness.Frame) *harness.Reply {
			switch f.Type {
			case "screen.input":
				inputs <- f.Payload
				return &harness.Reply{Payload: map[string]any{"queued": 2}}
			case "screen.read":
				return &harness.Reply{Payload: map[string]any{"width": 5, "height": 1, "colour": true, "cursor": map[string]any{"x": 1, "y": 1},
					"rows": []any{map[string]any{"text": "alice", "fg": "00000", "bg": "fffff"}}}}
			}
			return nil
		}, nil)
	}()

	theirs := harness.ConnectMCP(ctx, t, g, bob)
	for _, id := range []string{"7:desk", "7:DESK", "desk"} {
		msg := harness.ToolError(t, waitFor(ctx, t, harness.CallToolAsync(ctx, theirs, "click", map[string]any{"traposId": id, "x": 1, "y": 1}), "bob's answer"), "not_connected")
		assert.NotContains(t, msg, "alice", id)
	}

	mine := harness.ConnectMCP(ctx, t, g, alice)
	for _, args := range []map[string]any{
		{"x": 1e20, "y": 1},
		{"x": 9007199254740993, "y": 1},
		{"x": 1, "y": -9223372036854775808},
		{"x": 1, "y": 1, "button": 1e300},
	} {
		args["traposId"] = "7:desk"
		msg := harness.ToolError(t, waitFor(ctx, t, harness.CallToolAsync(ctx, mine, "click", args), "alice's answer"), "bad_argument")
		assert.Contains(t, msg, "must be a whole number, at most 9007199254740991 in size", "%v", args)
		assert.NotContains(t, msg, "Go struct", "%v", args)
	}

	var screen struct {
		Text string `json:"text"`
	}
	harness.ToolOK(t, waitFor(ctx, t, harness.CallToolAsync(ctx, mine, "click", map[string]any{"traposId": "7:desk", "x": 4, "y": 1, "settleMs": 1}), "alice's click"), "7:desk", &screen)
	assert.Equal(t, "alice", screen.Text)
	var first struct {
		Events []map[string]any `json:"events"`
	}
	require.NoError(t, json.Unmarshal(waitFor(ctx, t, inputs, "the computer's first screen.input"), &first))
	assert.Equal(t, []map[string]any{{"type": "click", "button": float64(1), "x": float64(4), "y": float64(1)}}, first.Events,
		"the computer's first input is alice's click: nothing of bob's or of a refused cell reached it")
}
