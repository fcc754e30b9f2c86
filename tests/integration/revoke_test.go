package integration

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCredentialsRevokeOnTheDataDirectoryClosesTheSocket: on one gateway, `credentials revoke`
// works on the data directory beside the running gateway, which notices within a second and
// closes the computer's socket (4003) as a revocation through its API does; the computer's
// next hello is refused.
func TestCredentialsRevokeOnTheDataDirectoryClosesTheSocket(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	lastLine(ctx, t, "accounts", "add", "alice", dir)
	cred := lastLine(ctx, t, "credentials", "add", "alice", dir)
	g := startGateway(t, dir)
	c := dial(ctx, t, g, "7:")
	require.NoError(t, c.MustHello(ctx, cred))

	out, errOut, code := runCLI(ctx, t, nil, "credentials", "revoke", dir, strings.SplitN(cred, "_", 3)[1])
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "a gateway running on this data directory closes its computer's socket within 1s and refuses its next hello")
	assert.Equal(t, "revoked", requireClose(ctx, t, c, 4003))

	again := dial(ctx, t, g, "7:")
	err := again.MustHello(ctx, cred)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "revoked")
}
