package integration

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnotherAccountsComputerIsNotReachedByALookAlikeName: alice's token naming bob's 8:shed
// by another case, with a no-break space, by its label alone or with a NUL is answered on every
// {traposId} route as a name that matches nothing (404 not_connected), and no answer names
// bob's computer (no "did you mean", no meant).
func TestAnotherAccountsComputerIsNotReachedByALookAlikeName(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	lastLine(ctx, t, "accounts", "add", "bob", dir)
	aliceCred := lastLine(ctx, t, "credentials", "add", "alice", dir)
	bobCred := lastLine(ctx, t, "credentials", "add", "bob", dir)
	g := startGateway(t, dir)
	mine := dial(ctx, t, g, "7:kitchen")
	require.NoError(t, mine.MustHello(ctx, aliceCred))
	answerRequests(ctx, mine, "alice's 7:kitchen")
	bobs := dial(ctx, t, g, "8:shed")
	require.NoError(t, bobs.MustHello(ctx, bobCred))
	answerRequests(ctx, bobs, "bob's 8:shed")

	routes := []struct{ method, path, body string }{
		{http.MethodPost, "/requests", `{"type":"ping"}`},
		{http.MethodPost, "/input", `{"events":[{"type":"char","text":"x"}]}`},
		{http.MethodGet, "/screen", ""},
		{http.MethodGet, "/files/door.lua", ""},
		{http.MethodPost, "/revoke", `{}`},
	}
	for _, name := range []string{"8:shed", "8:Shed", "8:SHED", "8:shed\u00a0", `8:shed\xa0`, "8:shed\x00", "shed", "8", ":shed"} {
		for _, r := range routes {
			status, body := apiCall(ctx, t, g, alice, r.method, "/trapos/computers/"+url.PathEscape(name)+r.path, r.body)
			assert.Equal(t, http.StatusNotFound, status, "%q %s: %s", name, r.path, body)
			assert.Contains(t, body, `"code":"not_connected"`, "%q %s", name, r.path)
			assert.NotContains(t, body, "did you mean", "%q %s: %s", name, r.path, body)
			assert.NotContains(t, body, `"meant"`, "%q %s: %s", name, r.path, body)
			assert.NotContains(t, body, "bob", "%q %s: %s", name, r.path, body)
		}
	}
}
