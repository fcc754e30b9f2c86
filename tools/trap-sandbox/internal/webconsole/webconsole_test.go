package webconsole

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/server"
)

// TestThePageLoadsWithoutAuth: with an API token set, the page and its assets are served to
// anyone (they hold no data), embedded, under a strict CSP; the API still wants the token.
func TestThePageLoadsWithoutAuth(t *testing.T) {
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{APIToken: "s3cret"}, New()).Handler())
	defer srv.Close()
	for path, want := range map[string]string{"/console/": `<script src="console.js"`, "/console/console.js": "screen.input", "/console/console.css": ".screen",
		"/console/" + InputsScript: "const inputTypesSince = "} {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Contains(t, string(body), want, path)
		assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'self'", path)
		// No other site's page may frame the console (clickjacking: a click on a hidden
		// frame would type on a computer), nor have a response sniffed as another type.
		assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'", path)
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), path)
		// Nor keep a handle to a console it opened, to turn it to another computer's view.
		assert.Equal(t, "same-origin", resp.Header.Get("Cross-Origin-Opener-Policy"), path)
	}
	resp, err := http.Get(srv.URL + "/console/nothing.js")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = client.Get(srv.URL + "/console")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "/console/", resp.Header.Get("Location"))
}

// TestThePageTakesTheInputTypesVersionsFromTheGateway: the page learns from which client each
// screen.input type is taken from the gateway's own list (inputs.js, loaded before console.js),
// as the gateway's refusals and trap-sandbox screen do: console.js had its copy of the
// versions, which a new type would have had to change in two places.
func TestThePageTakesTheInputTypesVersionsFromTheGateway(t *testing.T) {
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, New()).Handler())
	defer srv.Close()
	get := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		return string(body)
	}
	script := get("/console/" + InputsScript)
	_, literal, ok := strings.Cut(script, "const inputTypesSince = ")
	require.True(t, ok, script)
	var since map[string]string
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSuffix(literal, ";\n")), &since), script)
	assert.Equal(t, computer.InputTypesSince, since)

	page := get("/console/")
	inputs, console := strings.Index(page, `<script src="`+InputsScript+`"`), strings.Index(page, `<script src="console.js"`)
	assert.True(t, inputs >= 0 && inputs < console, "inputs.js is loaded, before console.js:\n%s", page)
	js, err := assets.ReadFile("assets/console.js")
	require.NoError(t, err)
	assert.NotRegexp(t, `(?m)^\s*[^/\s].*"\d+\.\d+\.\d+"`, string(js), "no client version of its own")
}

// TestThePageBatchesKeysByTheGatewaysLimit: the page puts keys typed meanwhile together in a
// call up to inputEventsMax os events, a copy of the gateway's computer.MaxInputEvents (the
// daemon's MAX_INPUT_EVENTS), and knows a text of more for one the gateway types in parts.
func TestThePageBatchesKeysByTheGatewaysLimit(t *testing.T) {
	js, err := assets.ReadFile("assets/console.js")
	require.NoError(t, err)
	assert.Contains(t, string(js), fmt.Sprintf("\nconst inputEventsMax = %d;", computer.MaxInputEvents))
}

// TestThePageKnowsTheGatewaysListedHint: the page puts its own way back to the list in place
// of the gateway's not_connected hint naming the CLI, MCP and the API (listedElsewhere, a copy
// of computer.ListedHint): a changed hint would reach the browser's person unreplaced.
func TestThePageKnowsTheGatewaysListedHint(t *testing.T) {
	js, err := assets.ReadFile("assets/console.js")
	require.NoError(t, err)
	assert.Contains(t, string(js), fmt.Sprintf("\nconst listedElsewhere = %q;", computer.ListedHint))
}

// TestThePageKnowsTheGatewaysStoppingWords: the page tells the gateway stopping from a computer
// leaving by the message the stream ends with (gatewayStopping, a copy of
// gateway.ErrShuttingDown's): a changed message would keep "the gateway is shutting down" in a
// view waiting for its computer once the gateway is back.
func TestThePageKnowsTheGatewaysStoppingWords(t *testing.T) {
	js, err := assets.ReadFile("assets/console.js")
	require.NoError(t, err)
	assert.Contains(t, string(js), fmt.Sprintf("\nconst gatewayStopping = %q;", gateway.ErrShuttingDown.Message))
}
