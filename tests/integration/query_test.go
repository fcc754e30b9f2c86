package integration

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
	"tests/internal/repo"
)

// documentedRoute finds a route docs/http-api.md names: `GET /trapos/computers`,
// `GET|PUT|DELETE /trapos/computers/{traposId}/files/{path...}`.
var documentedRoute = regexp.MustCompile("`((?:GET|POST|PUT|DELETE)(?:\\|(?:GET|POST|PUT|DELETE))*) (/[^` ?]+)")

// documentedRoutes are the routes docs/http-api.md names in its headings and in its tables'
// first cells (`| `GET /trapos/tokens?account=alice` |`), as [method(s), path] pairs; its
// prose names routes with methods they do not take, as examples of refusals.
func documentedRoutes(doc string) [][]string {
	var routes [][]string
	for line := range strings.Lines(doc) {
		switch {
		case strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "| "):
			line, _, _ = strings.Cut(line[2:], " |")
		default:
			continue
		}
		for _, m := range documentedRoute.FindAllStringSubmatch(line, -1) {
			routes = append(routes, m[1:])
		}
	}
	return routes
}

// notAPIRoutes are the routes docs/http-api.md names that are not the host API's: the
// computers' socket and the load balancers' health check, which take anything.
var notAPIRoutes = map[string]bool{"/trapos/ws": true, "/healthz": true}

// TestEveryAPIRouteRefusesAQueryItDoesNotTake: every route docs/http-api.md lists, and /mcp,
// asked with a query parameter it does not take, is answered 400 bad_payload naming what it
// takes (a file read with ?offset=5 was answered the whole file, without a word).
func TestEveryAPIRouteRefusesAQueryItDoesNotTake(t *testing.T) {
	ctx := testContext(t)
	root, err := repo.Root()
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "http-api.md"))
	require.NoError(t, err)
	const token = "query-test-token"
	g := startGateway(t, "--api-token", token)
	wildcards := strings.NewReplacer("{traposId}", "7:", "{path...}", "x", "{id}", "abc", "{name}", "bob")
	asked := map[string]bool{}
	routes := append(documentedRoutes(string(doc)), []string{"POST", "/mcp"})
	for _, m := range routes {
		if notAPIRoutes[m[1]] {
			continue
		}
		for method := range strings.SplitSeq(m[0], "|") {
			path := wildcards.Replace(m[1])
			if asked[method+" "+path] {
				continue
			}
			asked[method+" "+path] = true
			body := ""
			if method == http.MethodPost || method == http.MethodPut {
				body = "{}"
			}
			status, answer := apiCall(ctx, t, g, token, method, path+"?offset=5", body)
			var a struct {
				Error struct{ Code, Message string }
			}
			require.NoError(t, json.Unmarshal([]byte(answer), &a), "%s %s: %s", method, path, answer)
			assert.Equal(t, http.StatusBadRequest, status, "%s %s: %s", method, path, answer)
			assert.Equal(t, "bad_payload", a.Error.Code, "%s %s", method, path)
			assert.Regexp(t, `^`+regexp.QuoteMeta(method+" "+path)+` takes (no|one) query parameter.*, not "offset"`, a.Error.Message)
		}
	}
	assert.Len(t, asked, 24, "the routes found in docs/http-api.md: %v", asked)
}

// TestARefusalShowsAHostileQueryAsText: a query parameter's name is echoed by its refusal as
// text, whatever its bytes (an escape sequence, a bidi override, HTML, a byte that is not
// UTF-8): quoted, so no terminal, log or page that shows the answer reads them raw, and by its
// length alone past maxParamShown, so a 500 KB name is not sent back. Without the token the
// refusal is the auth's, naming neither the route nor the parameter; an MCP request's id too
// long for any client is answered null, not echoed.
func TestARefusalShowsAHostileQueryAsText(t *testing.T) {
	ctx := testContext(t)
	const token = "hostile-query-token"
	g := startGateway(t, "--api-token", token)
	hostile := "%1b%5b2J%e2%80%ae%3cscript%3e%ff"

	status, answer := apiCall(ctx, t, g, "wrong", http.MethodGet, "/trapos/computers?"+hostile+"=1", "")
	assert.Equal(t, http.StatusUnauthorized, status, answer)
	assert.NotContains(t, answer, "computers", "the auth answers before the route is named")
	assert.NotContains(t, answer, "script")

	status, answer = apiCall(ctx, t, g, token, http.MethodGet, "/trapos/computers?"+hostile+"=1", "")
	assert.Equal(t, http.StatusBadRequest, status, answer)
	assert.True(t, utf8.ValidString(answer), "%q", answer)
	for _, raw := range []string{"\x1b", "\u202e"} {
		assert.NotContains(t, answer, raw, "the answer holds %q raw", raw)
	}
	var a struct {
		Error struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal([]byte(answer), &a), answer)
	assert.Equal(t, `GET /trapos/computers takes no query parameter, not "\x1b[2J\u202e<script>\xff" (docs/http-api.md)`, a.Error.Message)

	// A path is echoed as it was asked (the caller's own), its escape sequence and bidi
	// override as JSON escapes (WriteJSON), as every answer holds them.
	status, answer = apiCall(ctx, t, g, token, http.MethodGet, "/trapos/x"+hostile, "")
	assert.Equal(t, http.StatusNotFound, status, answer)
	assert.Contains(t, answer, `no API route at /trapos/x\u001b[2J\u202e<script>`)
	assert.NotContains(t, answer, "\u202e")

	status, answer = apiCall(ctx, t, g, token, http.MethodGet, "/trapos/computers?"+strings.Repeat("a", 500_000)+"=1", "")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, answer, "not one of 500000 bytes")
	assert.Less(t, len(answer), 1000, "the name is not sent back")

	long := strings.Repeat("x", 200)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL("/mcp"),
		strings.NewReader(`{"jsonrpc":"2.0","id":"`+long+`","method":"tools/cal","params":{}}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var rpc struct {
		ID    json.RawMessage
		Error struct{ Code int }
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&rpc))
	assert.Equal(t, -32601, rpc.Error.Code)
	assert.Equal(t, "null", string(rpc.ID), "an id of %d bytes is no client's", len(long))
}
