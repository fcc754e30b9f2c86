package integration

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// computersOnlyAnswer starts the one line the computers' port answers anything else with.
const computersOnlyAnswer = "this port (--computers-listen) serves computers only"

// requestOn sends method path (a JSON body for a POST) to addr with no token, as a program on
// a computer of a Minecraft server on the gateway's machine would, and returns the answer.
func requestOn(ctx context.Context, t *testing.T, method, addr, path string) (int, string) {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"id":"mallory","admin":true}`)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, body)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(raw)
}

// TestTheComputersPortServesComputersOnly: with --computers-listen, a Minecraft server on the
// gateway's machine allows only that port in CC's http rules. Its computers install and
// connect through it, and there a program on one reaches none of the host API (no account
// made, no computer listed), the web console, /mcp or /metrics, which loopback clients get
// without a token on --listen; and the gateway does not warn of a computer that came that
// way, as it still does of one through --listen.
func TestTheComputersPortServesComputersOnly(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, "--computers-listen", "127.0.0.1:0")
	computersAddr := g.ComputersAddr()
	require.NotEmpty(t, computersAddr, "no computers' listening line:\n%s", g.Log())
	require.NotEqual(t, g.Addr, computersAddr)
	assert.Contains(t, g.Log(), `msg="computers connect here" url=ws://`+computersAddr+`/trapos/ws`)

	// The installer fetched through the computers' port names that port for the socket.
	status, installer := requestOn(ctx, t, http.MethodGet, computersAddr, "/trapos/install")
	require.Equal(t, http.StatusOK, status, installer)
	assert.Contains(t, installer, `websocket = "ws://`+computersAddr+`/trapos/ws";`)
	status, file := requestOn(ctx, t, http.MethodGet, computersAddr, "/trapos/files/apis/libsandboxversion.lua")
	assert.Equal(t, http.StatusOK, status, file)
	status, health := requestOn(ctx, t, http.MethodGet, computersAddr, "/healthz")
	assert.Equal(t, http.StatusOK, status, health)

	c, err := harness.Dial(ctx, "ws://"+computersAddr+"/trapos/ws", "7:kitchen")
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.MustHello(ctx, sandboxPassword))

	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/trapos/computers"},
		{http.MethodPost, "/trapos/accounts"},
		{http.MethodPost, "/trapos/computers/7:kitchen/requests"},
		{http.MethodGet, "/console/"},
		{http.MethodPost, "/mcp"},
		{http.MethodGet, "/metrics"},
		{http.MethodGet, "/trapos/files/../computers"},
		{http.MethodPost, "/trapos/ws"},
	} {
		status, body := requestOn(ctx, t, r.method, computersAddr, r.path)
		assert.Equal(t, http.StatusNotFound, status, "%s %s: %s", r.method, r.path, body)
		assert.True(t, strings.HasPrefix(body, computersOnlyAnswer), "%s %s: %s", r.method, r.path, body)
		assert.Contains(t, body, "the host API, the web console, /mcp and /metrics are on --listen")
	}
	// The host's own tools still reach the API on --listen, from loopback without a token.
	status, listed := requestOn(ctx, t, http.MethodGet, g.Addr, "/trapos/computers")
	require.Equal(t, http.StatusOK, status, listed)
	assert.Contains(t, listed, `"7:kitchen"`)
	assert.NotContains(t, listed, "mallory")

	const warning = `level=WARN msg="a computer connected from this machine`
	require.NoError(t, g.WaitLog(ctx, "traposId=7:kitchen"), g.Log())
	assert.NotContains(t, g.Log(), warning, "a computer through the computers' port reached no API")
	connect(ctx, t, g, "8:door") // through --listen: the wrong way, with a port for computers
	require.NoError(t, g.WaitLog(ctx, warning+" through --listen's port, not --computers-listen's, while SANDBOX_API_TOKEN is unset"), g.Log())
	assert.Contains(t, g.Log(), "install the computer again through it")
}
