package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
)

// thingsModule mounts an API route with two methods and a computers' route beside it.
type thingsModule struct{}

func (thingsModule) Name() string { return "things" }

func (thingsModule) Mount(routes *Routes) {
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "thing") }
	routes.HandleAPIFunc("GET /trapos/things/{id}", ok)
	routes.HandleAPIFunc("PUT /trapos/things/{id}", ok)
	routes.HandleFunc("GET /trapos/ws", ok)
}

// callWithJSON sends method path to srv with the JSON body {}, and token as the API's bearer
// token unless it is empty; the caller closes the answer's body.
func callWithJSON(t *testing.T, srv *httptest.Server, method, path, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader("{}"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// TestAnUnknownAPIRouteOrMethodAnswersInTheAPIsShape: under the API's paths, a path no route
// has is 404 not_found and a route's path with another method 405 (bad_payload, with Allow),
// both in the API's JSON error shape; the auth still answers first.
func TestAnUnknownAPIRouteOrMethodAnswersInTheAPIsShape(t *testing.T) {
	srv := httptest.NewServer(New(slog.New(slog.DiscardHandler), Config{Metrics: prometheus.NewRegistry()}, thingsModule{}).Handler())
	t.Cleanup(srv.Close)
	do := func(method, path, token string) (*http.Response, Answer) {
		t.Helper()
		resp := callWithJSON(t, srv, method, path, token)
		defer resp.Body.Close()
		var a Answer
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		}
		return resp, a
	}

	resp, a := do(http.MethodPost, "/trapos/things/7", "")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, PUT", resp.Header.Get("Allow"))
	require.NotNil(t, a.Error)
	assert.Equal(t, protocol.CodeBadPayload, a.Error.Code)
	assert.Equal(t, "POST is not a method of /trapos/things/7: it takes GET, PUT (docs/http-api.md)", a.Error.Message)

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/trapos/things/7", strings.NewReader("x"))
	require.NoError(t, err)
	plain, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = plain.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, plain.StatusCode, "a POST without JSON is told the method, not to send JSON")

	resp, a = do(http.MethodGet, "/trapos/nope/x", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.NotNil(t, a.Error)
	assert.Equal(t, protocol.CodeNotFound, a.Error.Code)
	assert.Equal(t, "no API route at /trapos/nope/x (docs/http-api.md lists them)", a.Error.Message)

	resp, a = do(http.MethodGet, "/trapos/trapos/computers", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.NotNil(t, a.Error)
	assert.Equal(t, "no API route at /trapos/trapos/computers: the client's URL ends in /trapos, which the routes begin with; give the gateway's root (http://host:4444, --url or SANDBOX_URL)",
		a.Error.Message, "a base URL with /trapos in it is named (--url http://host:4444/trapos)")

	resp, a = do(http.MethodPost, MetricsPath, "")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET", resp.Header.Get("Allow"))
	require.NotNil(t, a.Error)

	resp, _ = do(http.MethodGet, "/trapos/ws", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the computers' routes are untouched")
	resp, _ = do(http.MethodPost, "/trapos/ws", "")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "and keep net/http's 405")
	assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	resp, _ = do(http.MethodPut, "/trapos/things/7", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	tokenSrv := httptest.NewServer(New(slog.New(slog.DiscardHandler), Config{APIToken: "tok"}, thingsModule{}).Handler())
	t.Cleanup(tokenSrv.Close)
	req, err = http.NewRequestWithContext(t.Context(), http.MethodGet, tokenSrv.URL+"/trapos/nope", nil)
	require.NoError(t, err)
	r, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = r.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, r.StatusCode, "the auth answers first")
}

// rpcModule mounts an API route of any method outside /trapos/, as MCP's /mcp.
type rpcModule struct{}

func (rpcModule) Name() string { return "rpc" }

func (rpcModule) Mount(routes *Routes) {
	routes.HandleAPIFunc("/rpc", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "rpc") })
}

// TestAPathBesideAnAPIRouteAndHealthzsOtherMethodsAnswerJSON: a path under an API route
// outside /trapos/ (/mcp/, /metrics/x) is 404 not_found, behind the auth, naming the route a
// final slash was added to, and a method /healthz does not take is 405 with Allow, without
// the auth as /healthz itself, each in the API's JSON, where net/http answered "404 page not
// found" and "Method Not Allowed" in plain text.
func TestAPathBesideAnAPIRouteAndHealthzsOtherMethodsAnswerJSON(t *testing.T) {
	srv := httptest.NewServer(New(slog.New(slog.DiscardHandler), Config{APIToken: "tok", Metrics: prometheus.NewRegistry()}, rpcModule{}).Handler())
	t.Cleanup(srv.Close)
	do := func(method, path, token string) (*http.Response, *protocol.Error) {
		t.Helper()
		resp := callWithJSON(t, srv, method, path, token)
		defer resp.Body.Close()
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"), "%s %s", method, path)
		var a Answer
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		require.NotNil(t, a.Error, "%s %s", method, path)
		return resp, a.Error
	}
	for path, want := range map[string]string{
		"/rpc/":      "no API route at /rpc/: the route is /rpc, without the last /",
		"/rpc/x":     "no API route at /rpc/x (docs/http-api.md lists them)",
		"/metrics/":  "no API route at /metrics/: the route is /metrics, without the last /",
		"/metrics/x": "no API route at /metrics/x (docs/http-api.md lists them)",
	} {
		resp, e := do(http.MethodPost, path, "tok")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		assert.Equal(t, protocol.CodeNotFound, e.Code, path)
		assert.Equal(t, want, e.Message, path)
		resp, e = do(http.MethodPost, path, "")
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the auth answers first: %s", path)
		assert.Equal(t, protocol.CodeUnauthorized, e.Code, path)
	}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		resp, e := do(method, HealthzPath, "")
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, method)
		assert.Equal(t, "GET", resp.Header.Get("Allow"))
		assert.Equal(t, protocol.CodeBadPayload, e.Code)
		assert.Equal(t, method+" is not a method of /healthz: it takes GET (docs/http-api.md)", e.Message)
	}
	resp, err := http.Get(srv.URL + HealthzPath)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
