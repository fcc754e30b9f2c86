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

// TestAnUnknownAPIRouteOrMethodAnswersInTheAPIsShape: under the API's paths, a path no route
// has is 404 not_found and a route's path with another method 405 (bad_payload, with Allow),
// both in the API's JSON error shape; the auth still answers first.
func TestAnUnknownAPIRouteOrMethodAnswersInTheAPIsShape(t *testing.T) {
	srv := httptest.NewServer(New(slog.New(slog.DiscardHandler), Config{Metrics: prometheus.NewRegistry()}, thingsModule{}).Handler())
	t.Cleanup(srv.Close)
	do := func(method, path, token string) (*http.Response, Answer) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader("{}"))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
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
