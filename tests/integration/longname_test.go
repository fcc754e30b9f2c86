package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// TestANameLongerThanAnyComputersIsNotConnected: a traposId no computer can have (hello
// refuses one over 256 bytes) is not_connected on every {traposId} route of the real binary,
// named by its length. POST …/requests answered it 413 "send a smaller payload" for a payload
// of {}, and the other routes echoed the 600 KB name whole in their answer.
func TestANameLongerThanAnyComputersIsNotConnected(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	answerRequests(ctx, connect(ctx, t, g, "7:kitchen"), "7:kitchen")
	long := "7:" + strings.Repeat("k", 600_000)
	for _, route := range []struct{ method, path, body string }{
		{http.MethodPost, "/requests", `{"type":"ping"}`},
		{http.MethodPost, "/input", `{"events":[{"type":"char","text":"x"}]}`},
		{http.MethodGet, "/screen", ""},
		{http.MethodGet, "/files/door.lua", ""},
		{http.MethodPost, "/revoke", `{}`},
	} {
		t.Run(route.method+" "+route.path, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, route.method, g.URL("/trapos/computers/"+long+route.path), bytes.NewReader([]byte(route.body)))
			require.NoError(t, err)
			if route.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%.300s", body)
			assert.Less(t, len(body), 2000, "the name is not echoed: %.300s", body)
			var answer struct {
				Error struct{ Code, Message string }
			}
			require.NoError(t, json.Unmarshal(body, &answer), "%.300s", body)
			assert.Equal(t, "not_connected", answer.Error.Code)
			assert.Contains(t, answer.Error.Message, fmt.Sprintf("computer of a traposId of %d bytes (a computer's is at most 256) is not connected; did you mean \"7:kitchen\"?", len(long)))
		})
	}
}

// TestAMonitorNameTooLongForARequestIsNamed: a screen stream's monitor name that no request to
// the computer holds (600 KB) is refused naming the name's length and what a monitor is called,
// where the stream answered 413 "send a smaller payload" to a GET, which sends none.
func TestAMonitorNameTooLongForARequestIsNamed(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	answerRequests(ctx, connect(ctx, t, g, "7:kitchen"), "7:kitchen")
	status, body := httpGet(t, g.URL("/trapos/computers/7:kitchen/screen?monitor="+strings.Repeat("m", 600_000)))
	assert.Equal(t, http.StatusBadRequest, status, "%s", body)
	var answer struct {
		Error struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal(body, &answer), "%s", body)
	assert.Equal(t, "bad_payload", answer.Error.Code)
	assert.Equal(t, tooLongMonitor, answer.Error.Message)

	// An agent's read_screen and wait_for_screen name it alike, over /mcp and the stdio bridge
	// (which reads a monitor through POST …/requests and the stream), where they answered
	// "the gateway_request frame would exceed 131072 bytes …; send a smaller payload".
	for _, transport := range []string{"http", "stdio"} {
		s := connectMCP(ctx, t, g, transport)
		for _, tool := range []string{"read_screen", "wait_for_screen"} {
			res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"traposId": "7:kitchen", "monitor": strings.Repeat("m", 600_000)}})
			require.NoError(t, err)
			assert.Equal(t, "bad_payload: "+tooLongMonitor, harness.ToolError(t, res, "bad_payload"), "%s over %s", tool, transport)
		}
	}
}

// tooLongMonitor is the refusal of a monitor name of 600 000 bytes.
const tooLongMonitor = "the monitor name is 600000 bytes, more than a request to the computer holds (128 KiB, CC: Tweaked's limit), so no monitor is named so: " +
	"name one of the computer's (a side such as top, or a wired modem's monitor_0)"
