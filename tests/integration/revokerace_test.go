package integration

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// TestATokenRevokedWhileInUseIsRefusedFromTheNextRequest: callers using alice's token on
// several connections at once while the token is revoked through the API get 401 for every
// request they start once the revocation has answered (none slips through on a connection
// kept alive), the ones before it answered as usual, and the gateway serves alice's other
// token throughout.
func TestATokenRevokedWhileInUseIsRefusedFromTheNextRequest(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	busy := lastLine(ctx, t, "tokens", "add", "alice", "busy", dir)
	g := startGateway(t, dir)

	const callers, afterEach = 6, 20
	var revoked atomic.Bool
	var okBefore atomic.Int64
	started := make(chan struct{}, callers)
	errs := make(chan string, callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			keepAlive := &http.Transport{} // a request after the revocation may reuse a connection of one before it
			defer keepAlive.CloseIdleConnections()
			client := &http.Client{Transport: keepAlive, Timeout: harness.StartTimeout}
			first, after := true, 0
			for after < afterEach && ctx.Err() == nil {
				wasRevoked := revoked.Load()
				status := statusOf(ctx, client, g.URL("/trapos/computers"), busy)
				switch {
				case wasRevoked && status != http.StatusUnauthorized:
					errs <- "a request started after the revocation answered " + http.StatusText(status)
					return
				case wasRevoked:
					after++
				case status == http.StatusOK:
					okBefore.Add(1)
				}
				if first {
					first = false
					started <- struct{}{}
				}
			}
		})
	}
	for range callers {
		<-started // every caller has made a request with the token
	}
	id := strings.SplitN(busy, "_", 3)[1]
	status, body := apiPost(ctx, t, g, alice, "/trapos/tokens/"+id+"/revoke", `{}`)
	require.Equal(t, http.StatusOK, status, body)
	revoked.Store(true)
	status, body = apiGet(ctx, t, g, alice, "/trapos/computers")
	assert.Equal(t, http.StatusOK, status, "the account's other token is served: %s", body)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	assert.Positive(t, okBefore.Load(), "the token worked before its revocation")
}

// statusOf GETs url with token and returns the status (0 when the request failed).
func statusOf(ctx context.Context, client *http.Client, url, token string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

// TestARevocationWithAFieldRevokesNothing: the computer and enrollment-key revocations of the
// real binary refuse a body with a field ({"dryRun":true}), which they did not read and revoked
// all the same: the computer stays connected and the key links on; {} revokes.
func TestARevocationWithAFieldRevokesNothing(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	cred := lastLine(ctx, t, "credentials", "add", "alice", dir)
	key := lastLine(ctx, t, "link", "key", "--account", "alice", dir)
	g := startGateway(t, dir)
	c := dial(ctx, t, g, "7:kitchen")
	require.NoError(t, c.MustHello(ctx, cred))

	keyPath := "/trapos/link/keys/" + strings.SplitN(key, "_", 3)[1] + "/revoke"
	for _, path := range []string{"/trapos/computers/7:kitchen/revoke", keyPath} {
		status, body := apiPost(ctx, t, g, alice, path, `{"dryRun":true}`)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Contains(t, body, `the body has a field the route does not take, \"dryRun\": send a JSON object {}`, path)
	}
	status, body := apiGet(ctx, t, g, alice, "/trapos/link/keys")
	require.Equal(t, http.StatusOK, status, body)
	assert.NotContains(t, body, "revokedAt", "the key is not revoked")

	for _, path := range []string{"/trapos/computers/7:kitchen/revoke", keyPath} {
		status, body := apiPost(ctx, t, g, alice, path, `{}`)
		assert.Equal(t, http.StatusOK, status, "%s: %s", path, body)
	}
	assert.Equal(t, "revoked", requireClose(ctx, t, c, 4003))
}
