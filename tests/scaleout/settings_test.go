package scaleout

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"

	"tests/internal/harness"
)

// TestReplicasSayThatTheirPasswordsDiffer: two replicas given another SANDBOX_PASSWORD each
// (one refuses the hellos the other accepts) find it out from each other's heartbeats: each
// logs it, as an ERROR naming the other and the fix, and its /metrics counts the other; the
// passwords appear in neither.
func TestReplicasSayThatTheirPasswordsDiffer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	bus := harness.StartNATS(t, natsBin)
	start := func(name, password string) *harness.Gateway {
		return harness.Start(t, gatewayBin, harness.Options{
			Args: append([]string{"--nats", bus.URL, "--replica", name}, replicaFlags...),
			Env:  []string{"SANDBOX_PASSWORD=" + password},
		})
	}
	const passwordA, passwordB = "first-replica-password-7Qz", "second-replica-password-9Wx"
	a := start("a", passwordA)
	b := start("b", passwordB)

	const differs = `level=ERROR msg="another replica's SANDBOX_PASSWORD differs from this one's: a computer's hello is accepted on one and refused (unauthorized) on the other; give every replica the same SANDBOX_PASSWORD (docs/scale-out.md)"`
	require.NoError(t, a.WaitLog(ctx, differs+` replica=a component=cluster other=b set=true otherSet=true`))
	require.NoError(t, b.WaitLog(ctx, differs+` replica=b component=cluster other=a set=true otherSet=true`))

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		status, body := get(c, a, "/metrics")
		require.Equal(c, http.StatusOK, status)
		assert.Contains(c, body, `trapos_gateway_replica_settings_differ{replica="a",setting="password"} 1`+"\n")
		assert.Contains(c, body, `trapos_gateway_replica_settings_differ{replica="a",setting="api_token"} 0`+"\n")
		assert.Contains(c, body, `trapos_gateway_replica_settings_differ{replica="a",setting="version"} 0`+"\n", "one binary: one version")
	}, waitLimit, testkit.Poll, "a's /metrics to count b")
	for _, g := range []*harness.Gateway{a, b} {
		assert.NotContains(t, g.Log(), passwordA)
		assert.NotContains(t, g.Log(), passwordB)
		assert.NotContains(t, g.Log(), "another version")
	}
}
