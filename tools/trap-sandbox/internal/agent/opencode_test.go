package agent

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"
)

// fakeClient is the gateway's opencode client of directory dir, speaking to a fake opencode.
func fakeClient(t *testing.T, dir string) *client {
	t.Helper()
	oc := opencodefake.Start(t, opencodefake.Options{Password: "pw"})
	oc.Agent(func(*opencodefake.Turn) {}, "p/m")
	base, err := url.Parse(oc.URL)
	require.NoError(t, err)
	return &client{base: base, dir: dir, username: opencodefake.DefaultUsername, password: "pw", http: http.DefaultClient}
}

// TestReplyToAnUnknownAskNamesIt: opencode answers a reply to an ask it does not know (never
// asked, or answered already) with its other error shape, {"_tag","message"}; the gateway's
// error (which it logs) says what opencode said, not only the status.
func TestReplyToAnUnknownAskNamesIt(t *testing.T) {
	c := fakeClient(t, t.TempDir())
	err := c.replyPermission(context.Background(), "per_nope", "once", "")
	require.Error(t, err)
	assert.Equal(t, "opencode answered HTTP 404 (PermissionNotFoundError: Permission request not found: per_nope)", err.Error())
}

// TestEnsureMCPNamesAMissingConfig: when the directory's instance has no trap-sandbox MCP
// server (its opencode.json lacks it, or opencode runs on another host and never read it),
// opencode answers the connect with 404 McpServerNotFoundError; the operator is told where
// the server should have been configured, not a bare status, and the computer who fixes it,
// without the host's directory.
func TestEnsureMCPNamesAMissingConfig(t *testing.T) {
	dir := t.TempDir() // no opencode.json
	c := fakeClient(t, dir)
	err := c.ensureMCP(context.Background())
	require.Error(t, err)
	assert.Equal(t, "opencode has no trap-sandbox MCP server for "+dir+
		" (it read opencode.json before the gateway wrote it, or runs on another host): restart opencode on the gateway's host", err.Error())
	var he *hostError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "opencode has no trap-sandbox MCP server for this computer: its operator must restart opencode on the gateway's host", he.player)
}
