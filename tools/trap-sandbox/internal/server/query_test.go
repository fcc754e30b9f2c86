package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
)

// queriedModule mounts an API route that takes no query and one that takes one.
type queriedModule struct{}

func (queriedModule) Name() string { return "queried" }

func (queriedModule) Mount(routes *Routes) {
	ok := func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ran "+r.URL.RawQuery) }
	routes.HandleAPIFunc("GET /trapos/plain/{id}", ok)
	routes.HandleAPIFunc("GET /trapos/sides", ok, QueryParam{Name: "side", Example: "top", Is: "a side of the computer", Without: "every side is listed"})
}

// TestAQueryTheRouteDoesNotTakeIsRefused: an API route refuses, 400 bad_payload naming what
// it takes, a query parameter it does not take, one it takes given twice, and a query that
// cannot be read; each was ignored and the route answered as if it had not been asked. The
// auth answers first, and a route's own parameter reaches it.
func TestAQueryTheRouteDoesNotTakeIsRefused(t *testing.T) {
	srv := httptest.NewServer(New(slog.New(slog.DiscardHandler), Config{APIToken: "tok"}, queriedModule{}).Handler())
	t.Cleanup(srv.Close)
	do := func(path, token string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		if resp.StatusCode == http.StatusOK {
			return resp.StatusCode, string(b)
		}
		var a Answer
		require.NoError(t, json.Unmarshal(b, &a), string(b))
		require.NotNil(t, a.Error)
		if resp.StatusCode == http.StatusBadRequest {
			assert.Equal(t, protocol.CodeBadPayload, a.Error.Code)
		}
		return resp.StatusCode, a.Error.Message
	}
	for path, want := range map[string]string{
		"/trapos/plain/7?offset=5":                                "GET /trapos/plain/7 takes no query parameter, not \"offset\" (docs/http-api.md)",
		"/trapos/plain/7?" + strings.Repeat("o", 600):             "GET /trapos/plain/7 takes no query parameter, not one of 600 bytes (docs/http-api.md)",
		"/trapos/plain/7?%1b%5b2J=1":                              "GET /trapos/plain/7 takes no query parameter, not \"\\x1b[2J\" (docs/http-api.md)",
		"/trapos/plain/x" + strings.Repeat("é", 60) + "?offset=5": "GET /trapos/plain/x" + strings.Repeat("é", 42) + "… takes no query parameter, not \"offset\" (docs/http-api.md)",
		"/trapos/sides?sdie=top":                                  "GET /trapos/sides takes one query parameter, side (a side of the computer: ?side=top), not \"sdie\": without it every side is listed",
		"/trapos/sides?side=top&side=left":                        "the query names side 2 times: GET /trapos/sides takes it once (?side=top)",
		"/trapos/sides?side=%zz":                                  "the query of GET /trapos/sides cannot be read (invalid URL escape \"%zz\"): write it as name=value pairs joined by &, escaped as a URL's",
		"/trapos/sides?side=top;side=left":                        "the query of GET /trapos/sides cannot be read (invalid semicolon separator in query): write it as name=value pairs joined by &, escaped as a URL's",
	} {
		status, msg := do(path, "tok")
		assert.Equal(t, http.StatusBadRequest, status, path)
		assert.Equal(t, want, msg, path)
	}
	status, msg := do("/trapos/plain/7?offset=5", "")
	assert.Equal(t, http.StatusUnauthorized, status, "the auth answers first: %s", msg)
	for path, want := range map[string]string{"/trapos/plain/7": "ran ", "/trapos/plain/7?": "ran ", "/trapos/sides?side=top": "ran side=top"} {
		status, body := do(path, "tok")
		assert.Equal(t, http.StatusOK, status, path)
		assert.Equal(t, want, body, path)
	}
}
