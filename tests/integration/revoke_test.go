package integration

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCredentialsRevokeOnOneNodeNamesTheWayToCloseNow: on one gateway, `credentials revoke`
// works on the data directory, which the running gateway reads only at a hello; the command
// says so and names the command that closes the socket now, which then does.
func TestCredentialsRevokeOnOneNodeNamesTheWayToCloseNow(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	cred := lastLine(ctx, t, "credentials", "add", "alice", dir)
	g := startGateway(t, dir)
	c := dial(ctx, t, g, "7:")
	require.NoError(t, c.MustHello(ctx, cred))

	out, errOut, code := runCLI(ctx, t, nil, "credentials", "revoke", dir, strings.SplitN(cred, "_", 3)[1])
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "its computer's next hello is refused (to close its socket now, revoke it through the gateway: trap-sandbox computers revoke TRAPOSID)")

	out, errOut, code = runCLI(ctx, t, nil, "computers", "revoke", "--url="+g.URL(""), "--api-token="+alice, "7:")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "computer 7: of alice: credential ")
	assert.Equal(t, "revoked", requireClose(ctx, t, c, 4003))
}
