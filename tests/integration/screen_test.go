package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// TestAHostileComputersMonitorsAreBounded: a computer (here a raw socket, as an older or a
// hostile client) answers screen.read naming monitors past the client's bound (64 names of 64
// bytes at most, the rest counted in monitorsLeftOut): 5000 names, a name of 100 KiB, entries
// that are no name, a count of -7. The HTTP API (the web console's picker reads it there), MCP's
// read_screen over /mcp and the stdio bridge (the agent's) and the CLI each get 64 names at most
// and the rest counted, and the gateway serves on. Each reached them as the computer sent it.
func TestAHostileComputersMonitorsAreBounded(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	const id = "12:odd"
	c := connect(ctx, t, g, id)
	var answer atomic.Pointer[map[string]any]
	go func() {
		_ = c.Answer(ctx, func(f harness.Frame) *harness.Reply {
			if f.Type == "screen.read" {
				return &harness.Reply{Payload: *answer.Load()}
			}
			return &harness.Reply{Payload: map[string]any{}}
		})
	}()
	many := make([]any, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("monitor_%d", i)
	}
	mcps := map[string]*sdk.ClientSession{"http": connectMCP(ctx, t, g, "http"), "stdio": connectMCP(ctx, t, g, "stdio")}
	for _, hostile := range []struct {
		name     string
		monitors []any
		names    []any
		left     int
	}{
		{"5000 names", many, many[:64], 4936},
		{"a name of 100 KiB and entries that are no name", []any{strings.Repeat("m", 100<<10), 1, nil, map[string]any{}, "top"}, []any{"top"}, 4},
	} {
		t.Run(hostile.name, func(t *testing.T) {
			answer.Store(&map[string]any{"width": 1, "height": 1, "colour": true, "cursor": map[string]any{"x": 1, "y": 1, "blink": true},
				"fg": 1, "bg": 32768, "rows": []any{map[string]any{"text": "a", "fg": "0", "bg": "f"}},
				"monitors": hostile.monitors, "monitorsLeftOut": -7})
			type monitors struct {
				Monitors        []any `json:"monitors"`
				MonitorsLeftOut int   `json:"monitorsLeftOut"`
			}
			want := monitors{hostile.names, hostile.left}

			resp, err := http.Post(g.URL("/trapos/computers/"+id+"/requests"), "application/json", strings.NewReader(`{"type":"screen.read","payload":{}}`))
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			require.NoError(t, err)
			var api struct {
				OK      bool     `json:"ok"`
				Payload monitors `json:"payload"`
			}
			require.NoError(t, json.Unmarshal(body, &api), "%.300s", body)
			assert.Equal(t, want, api.Payload, "POST …/requests")

			for transport, s := range mcps {
				var out monitors
				res := harness.CallTool(ctx, t, s, "read_screen", map[string]any{"traposId": id})
				harness.ToolOK(t, res, id, &out)
				assert.Equal(t, want, out, "read_screen over %s", transport)
				assert.Contains(t, harness.Texts(res)[1], fmt.Sprintf("monitors names %d of the computer's monitors: %d more are attached (monitorsLeftOut)", len(hostile.names), hostile.left))
			}

			stdout, stderr, code := runCLI(ctx, t, nil, "request", "--url="+g.URL(""), id, "screen.read")
			require.Equal(t, 0, code, stderr)
			var cli monitors
			require.NoError(t, json.Unmarshal([]byte(stdout), &cli), "%.300s", stdout)
			assert.Equal(t, want, cli, "trap-sandbox request")
		})
	}
	stdout, stderr, code := runCLI(ctx, t, nil, "ping", "--url="+g.URL(""), id)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "pong from "+id, "the gateway serves on")
}
