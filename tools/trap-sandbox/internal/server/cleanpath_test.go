package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// filesLikeModule mounts a route shaped as the file routes, answering its traposId and path,
// that takes a query parameter x (the redirect keeps the query).
type filesLikeModule struct{}

func (filesLikeModule) Name() string { return "files-like" }

func (filesLikeModule) Mount(routes *Routes) {
	routes.HandleAPIFunc("GET /trapos/computers/{traposId}/files/{path...}", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.PathValue("traposId")+" /"+r.PathValue("path"))
	}, QueryParam{Name: "x", Example: "1", Is: "a test's", Without: "none"})
}

// TestACleanedPathIsRedirectedAsTheClientEscapedIt: a path with . or .. segments or repeated
// slashes is answered 307 to its clean form, which names what the client named: the mux's own
// redirect escaped the escaped path again (golang/go#79897), so …/5:k%C3%BCche/files/new/x/..
// went to …/5:k%25C3%25BCche/files/new, the computer "5:k%C3%BCche", and a%20b to a%2520b.
func TestACleanedPathIsRedirectedAsTheClientEscapedIt(t *testing.T) {
	srv := httptest.NewServer(New(slog.New(slog.DiscardHandler), Config{}, filesLikeModule{}).Handler())
	t.Cleanup(srv.Close)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct{ path, location, served string }{
		{"/trapos/computers/5:k%C3%BCche/files/new/x/..", "/trapos/computers/5:k%C3%BCche/files/new", "5:küche /new"},
		{"/trapos/computers/7:kitchen/files/a%20b/./c?x=1", "/trapos/computers/7:kitchen/files/a%20b/c?x=1", "7:kitchen /a b/c"},
		{"/trapos/computers/7:a%2Fb/files//door.lua", "/trapos/computers/7:a%2Fb/files/door.lua", "7:a/b /door.lua"},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+tc.path, nil)
		require.NoError(t, err)
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode, tc.path)
		assert.Equal(t, tc.location, resp.Header.Get("Location"), tc.path)

		resp, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode, tc.path)
		assert.Equal(t, tc.served, string(body), "the redirect followed reaches what was named: %s", tc.path)
	}
}
