package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// claimsInBucket reads every claim of the bucket as traposId → the replica it names.
func claimsInBucket(t testing.TB, kv jetstream.KeyValue) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	out := make(map[string]string)
	keys, err := kv.ListKeys(ctx)
	require.NoError(t, err)
	for key := range keys.Keys() {
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted since it was listed
		}
		require.NoError(t, err)
		k, err := parseClaimKey(key)
		require.NoError(t, err)
		out[k.TraposID] = claimantOf(e)
	}
	return out
}

// leftoverCount is how many claims r has set aside for its sweep.
func (r *Router) leftoverCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.leftovers {
		n += len(l.claims)
	}
	return n
}

// heartbeatRevision is the revision of r's latest heartbeat in the bucket: it grows at every
// beat, which starts a sweep.
func (r *replica) heartbeatRevision(t testing.TB) uint64 {
	t.Helper()
	e, err := r.router.replicas.Get(t.Context(), escapeToken(r.name))
	require.NoError(t, err)
	return e.Revision()
}

// TestACleanStopSaysGoodbyeOnceAndTheOthersSweepItsClaims: a replica that stops withdrew its
// claims one delete per socket, each applied by every other replica; with six replicas of
// 17 000 computers the stop took half a minute. It now says goodbye once: the others drop its
// computers at once, and delete its claims from the bucket later, each only if it is still
// the stopped replica's, so a computer that moved meanwhile keeps its new claim.
func TestACleanStopSaysGoodbyeOnceAndTheOthersSweepItsClaims(t *testing.T) {
	const many = 40
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	var want []string
	for i := range many {
		a.connect(t, fmt.Sprintf("%d:on-a", i))
		want = append(want, fmt.Sprintf("%d:on-a@a", i))
	}
	moving := a.connect(t, "100:moves")
	want = append(want, "100:moves@a")
	b.waitComputers(t, want...)

	// A starts stopping: it says goodbye before it closes a socket. B drops every computer of
	// A at once, and routes to A no more.
	a.router.Leave()
	b.waitComputers(t)
	assert.Zero(t, b.router.remote.len(), "B still keeps A's computers as the other replicas'")
	assert.Equal(t, many+1, b.router.leftoverCount())
	res := await(t, b.request("1:on-a", gateway.TypePing, nil, waitLimit))
	assert.Equal(t, http.StatusNotFound, res.status)
	require.NotNil(t, res.body.Error)
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)

	// During the stop, one computer says hello on B: the newest claim is B's.
	b.connect(t, "100:moves")
	code, _ := moving.closeCode()
	assert.Equal(t, gateway.CloseReplaced, code)
	b.waitComputers(t, "100:moves@b")

	// A's sockets close, and their claims stay in the bucket: no delete per socket.
	a.stop()
	inBucket := claimsInBucket(t, b.router.claims)
	assert.Len(t, inBucket, many+1, "A withdrew its claims one by one")
	assert.Equal(t, "a", inBucket["1:on-a"])
	assert.Equal(t, "b", inBucket["100:moves"])
	assert.Equal(t, many, b.router.leftoverCount(), "B still means to sweep the claim of the computer that moved")
	b.waitComputers(t, "100:moves@b")

	// A restarts under its name before the sweep: its previous run's computers are not
	// listed again.
	a2 := tc.startReplica("a")
	a2.connect(t, "200:new-on-a")
	b.waitComputers(t, "100:moves@b", "200:new-on-a@a")

	// Twice the TTL after the goodbye, the leftovers are deleted from the bucket (by B's
	// sweep, or by A's own clean-up of its previous run), and the computer that moved keeps
	// B's claim.
	tc.clock.Advance(2 * testReplicaTTL)
	require.Eventually(t, func() bool { return b.router.leftoverCount() == 0 }, waitLimit, testkit.Poll, "B to sweep A's leftovers")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, map[string]string{"100:moves": "b", "200:new-on-a": "a"}, claimsInBucket(t, b.router.claims))
	}, waitLimit, testkit.Poll, "only the live claims to be left")
	b.waitComputers(t, "100:moves@b", "200:new-on-a@a")
	a2.waitComputers(t, "100:moves@b", "200:new-on-a@a")
}

// TestLeftoversAreSweptWhenNobodyElseDeletesThem: the goodbye's leftovers are B's to delete
// (A does not come back), and a leftover replaced by a later claim is not touched.
func TestLeftoversAreSweptWhenNobodyElseDeletesThem(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	a.connect(t, "1:left")
	a.connect(t, "2:left")
	b.waitComputers(t, "1:left@a", "2:left@a")
	a.stop()
	b.waitComputers(t)
	require.Equal(t, map[string]string{"1:left": "a", "2:left": "a"}, claimsInBucket(t, b.router.claims))

	// Not before twice the TTL.
	tc.clock.Advance(testReplicaTTL)
	for range 2 {
		beat := b.heartbeatRevision(t)
		require.Eventually(t, func() bool { return b.heartbeatRevision(t) > beat }, waitLimit, testkit.Poll, "B to beat (and sweep)")
	}
	assert.Equal(t, 2, b.router.leftoverCount())
	assert.Len(t, claimsInBucket(t, b.router.claims), 2)

	tc.clock.Advance(testReplicaTTL)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Empty(c, claimsInBucket(t, b.router.claims))
	}, waitLimit, testkit.Poll, "B to sweep A's claims")
	assert.Zero(t, b.router.leftoverCount())
}
