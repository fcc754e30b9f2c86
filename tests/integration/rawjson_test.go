package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// TestTheAPIsJSONCarriesNoRawControlOfAComputers: an operator who reads the host API with curl
// in a terminal, or a client that logs what /mcp sends, gets the JSON as the gateway wrote it.
// Go's encoder escapes C0 (\u001b) but writes DEL, the C1 controls and the bidirectional ones
// raw, so a computer whose traposId, client version or file name held U+009B (a terminal's
// CSI, which CC's labels and names may hold: byte 0x9B) or U+202E reached the terminal raw in
// GET /trapos/computers, a request's answer and /mcp's structured content (its text content
// was escaped already, as the stdio bridge escapes everything it writes). Each body now has
// them as JSON's \u009b, the same JSON value: each decodes to the computer's exact text.
func TestTheAPIsJSONCarriesNoRawControlOfAComputers(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	const id = "12:\u009b2Jodd"
	const version, name = oddVersion, oddName
	connectOdd(ctx, t, g, id, func(harness.Frame) *harness.Reply { return listsOddName() })
	raw := regexp.MustCompile("[\x7f\u0080-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]")
	call := func(method, path, body string) string {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, g.URL(path), strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := harness.HTTPClient().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		assert.False(t, raw.Match(b), "raw control in %s %s: %q", method, path, b)
		return string(b)
	}

	var list []struct {
		TraposID      string `json:"traposId"`
		ClientVersion string `json:"clientVersion"`
	}
	require.NoError(t, json.Unmarshal([]byte(call(http.MethodGet, "/trapos/computers", "")), &list))
	require.Len(t, list, 1)
	assert.Equal(t, id, list[0].TraposID, "the JSON reads back as the computer's text")
	assert.Equal(t, version, list[0].ClientVersion)

	var answer struct {
		Payload struct {
			Entries []struct {
				Name string `json:"name"`
			} `json:"entries"`
		} `json:"payload"`
	}
	body := call(http.MethodPost, "/trapos/computers/"+url.PathEscape(id)+"/requests", `{"type":"fs.list","payload":{"path":"/"}}`)
	require.NoError(t, json.Unmarshal([]byte(body), &answer))
	require.Len(t, answer.Payload.Entries, 1)
	assert.Equal(t, name, answer.Payload.Entries[0].Name)

	// /mcp, stateless: one POST is a whole call; the answer is an event stream of one message.
	args, err := json.Marshal(map[string]any{"traposId": id, "path": "/"})
	require.NoError(t, err)
	body = call(http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_files","arguments":`+string(args)+`}}`)
	var rpc struct {
		Result struct {
			StructuredContent struct {
				Entries []struct {
					Name string `json:"name"`
				} `json:"entries"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(mcpMessage(t, body)), &rpc), body)
	require.Len(t, rpc.Result.StructuredContent.Entries, 1, body)
	assert.Equal(t, name, rpc.Result.StructuredContent.Entries[0].Name, "the structured content decodes to the computer's name")
}

// mcpMessage is the JSON-RPC message of a /mcp answer: the body itself, or the data of its one
// server-sent event.
func mcpMessage(t *testing.T, body string) string {
	t.Helper()
	for line := range strings.SplitSeq(body, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return data
		}
	}
	return body
}

// oddVersion and oddName are a computer's words holding C1 and bidi controls (U+009B is a
// terminal's CSI), as its client version and a file's name: a name is CC's bytes
// (U+0000-U+00FF), a version any text.
const oddVersion, oddName = "0.5.27\u009b2J\u202e", "a\u009b31m\u007fb"

// connectOdd connects computer id, its client version oddVersion, answering every request
// with answer until the test ends.
func connectOdd(ctx context.Context, t *testing.T, g *harness.Gateway, id string, answer func(harness.Frame) *harness.Reply) {
	t.Helper()
	c := dial(ctx, t, g, id)
	hello, err := c.Request(ctx, harness.TypeHello, map[string]any{"traposId": id, "secret": sandboxPassword, "clientVersion": oddVersion})
	require.NoError(t, err)
	requireOK(t, hello)
	go func() { _ = c.Answer(ctx, answer) }()
}

// listsOddName is an fs.list answer of one file, named oddName.
func listsOddName() *harness.Reply {
	return &harness.Reply{Payload: map[string]any{"entries": []map[string]any{{"name": oddName, "isDir": false, "size": 1}}}}
}
