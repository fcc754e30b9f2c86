package cluster

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/testkit"
)

// claimsStreamMessages is how many messages the claims bucket's stream holds: a claim, or
// the delete marker a computer that left leaves under its key.
func claimsStreamMessages(t testing.TB, r *replica) uint64 {
	t.Helper()
	s, err := r.router.js.Stream(t.Context(), "KV_"+ClaimsBucket)
	require.NoError(t, err)
	info, err := s.Info(t.Context())
	require.NoError(t, err)
	return info.State.Msgs
}

// TestTheMarkersOfComputersThatLeftArePurged: each computer that leaves leaves a delete marker
// under its key, which NATS keeps for good (a bucket's history counts it as the key's last
// value). Played: 4 000 computers that came and went left 4 000 markers in the claims bucket,
// and every replica's start read them all. markerLifetime after a replica read one, the
// replica whose name sorts first among the live ones purges it (the others forget it), and a
// computer back under its key keeps its claim.
func TestTheMarkersOfComputersThatLeftArePurged(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	left := []*computer{a.connect(t, "1:gone"), b.connect(t, "2:gone"), a.connect(t, "3:back")}
	a.waitComputers(t, "1:gone@a", "2:gone@b", "3:back@a")
	for _, c := range left {
		_ = c.conn.Close()
	}
	a.waitComputers(t)
	b.waitComputers(t)
	require.Equal(t, uint64(3), claimsStreamMessages(t, a), "three delete markers")
	a.connect(t, "3:back") // its claim replaces its marker
	b.waitComputers(t, "3:back@a")

	tc.clock.Advance(markerLifetime)
	require.Eventually(t, func() bool { return claimsStreamMessages(t, a) == 1 }, waitLimit, testkit.Poll,
		"the markers to be purged, the claim kept")
	e, err := a.router.claims.Get(t.Context(), claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: "3:back"}))
	require.NoError(t, err)
	assert.Equal(t, jetstream.KeyValuePut, e.Operation())
	assert.Equal(t, "a", claimantOf(e))
	for _, r := range []*replica{a, b} {
		require.Eventually(t, func() bool {
			r.router.mu.Lock()
			defer r.router.mu.Unlock()
			return len(r.router.markers) == 0
		}, waitLimit, testkit.Poll, "replica %s to forget the purged markers", r.router.cfg.Replica)
	}
}
