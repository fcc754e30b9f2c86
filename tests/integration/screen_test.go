package integration

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"trap-sandbox/testkit/daemonfake"

	"tests/internal/harness"
)

// TestAHostileComputersScreenReachesNoAgent: a computer (here a raw socket) answers screen.read
// with a screen no computer has, each within the frame limit: a billion cells wide, 40000 rows
// of a 19-row screen, a row wider than the screen. MCP's read_screen (the agent's) and
// send_text, which reads the screen after typing, refuse each as the computer's fault, naming
// what is wrong; a screen of CC's largest terminal, 255×255, is read. The frame limit bounded
// the answer's bytes, not the screen: the 40000 rows and the billion-cell width reached the
// agent as they were.
func TestAHostileComputersScreenReachesNoAgent(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	const id = "12:odd"
	c := connect(ctx, t, g, id)
	screens := make(chan map[string]any, 1)
	go func() {
		_ = c.Answer(ctx, func(f harness.Frame) *harness.Reply {
			switch f.Type {
			case "screen.read":
				return &harness.Reply{Payload: <-screens}
			case "screen.input":
				return &harness.Reply{Payload: map[string]any{"queued": 1}}
			}
			return &harness.Reply{Error: &daemonfake.Error{Code: "unknown_type", Message: f.Type}}
		})
	}()
	screen := func(width, height int, rows []any) map[string]any {
		return map[string]any{"width": width, "height": height, "colour": true, "cursor": map[string]any{"x": 1, "y": 1, "blink": true},
			"fg": 1, "bg": 32768, "rows": rows}
	}
	row := func(text string) any { return map[string]any{"text": text, "fg": "", "bg": ""} }
	empties := make([]any, 40000)
	for i := range empties {
		empties[i] = map[string]any{}
	}
	s := connectMCP(ctx, t, g, "http")
	for _, c := range []struct {
		screen map[string]any
		why    string
	}{
		{screen(1_000_000_000, 19, []any{row("> ")}), "the size 1000000000×19 is not a screen's (CC's are 1 to 255 cells each way)"},
		{screen(51, 19, empties), "it has 40000 rows; the screen is 19 high"},
		{screen(3, 1, []any{row("abcd")}), "row 1 has 4 cells; the screen is 3 wide"},
	} {
		for _, tool := range []map[string]any{{"traposId": id}, {"traposId": id, "text": "x"}} {
			name := "read_screen"
			if tool["text"] != nil {
				name = "send_text"
			}
			screens <- c.screen
			msg := harness.ToolError(t, harness.CallTool(ctx, t, s, name, tool), "internal")
			assert.Contains(t, msg, "computer 12:odd answered screen.read with a screen that is not one: "+c.why, name)
		}
	}
	big := make([]any, 255)
	for i := range big {
		big[i] = row(strings.Repeat("x", 255))
	}
	screens <- screen(255, 255, big)
	var out struct {
		Text string `json:"text"`
	}
	harness.ToolOK(t, harness.CallTool(ctx, t, s, "read_screen", map[string]any{"traposId": id}), id, &out)
	assert.Len(t, strings.Split(out.Text, "\n"), 255, "CC's largest terminal is a screen")
}
