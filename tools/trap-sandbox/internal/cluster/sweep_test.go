package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/testkit"
)

// TestASweepWaitsForNeitherTheHeartbeatsNorClose: when a replica with many computers stops,
// another one withdraws its claims one delete each. Meanwhile that replica keeps beating (or
// every other replica would take it for dead), and stopping it does not wait for the sweep to
// end: at 100 000 computers over six replicas, stopping them all at once took over a minute.
func TestASweepWaitsForNeitherTheHeartbeatsNorClose(t *testing.T) {
	const claims = 3000
	tc := newTestCluster(t)
	a := tc.startReplica("a")

	// Replica "gone" is alive and holds many computers; it writes into the buckets by hand.
	_, js := tc.jetStream(t)
	ctx := t.Context()
	replicas, err := js.KeyValue(ctx, ReplicasBucket)
	require.NoError(t, err)
	claimsKV, err := js.KeyValue(ctx, ClaimsBucket)
	require.NoError(t, err)
	hb, _ := json.Marshal(heartbeatValue{Replica: "gone", Started: time.Now()})
	_, err = replicas.Put(ctx, escapeToken("gone"), hb)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return a.router.alive("gone") }, waitLimit, testkit.Poll, "A to hear from the other replica")
	for i := range claims {
		c := gateway.Computer{AccountID: gateway.LocalAccount, TraposID: fmt.Sprintf("%d:many", i), RemoteAddr: "127.0.0.2:1", ConnectedSince: time.Now()}
		_, err := claimsKV.Put(ctx, claimKey(gateway.Key{AccountID: c.AccountID, TraposID: c.TraposID}), encodeClaim("gone", c, ""))
		require.NoError(t, err)
	}
	remote := func() int { // the claims A knows of, listed or not
		a.router.mu.Lock()
		defer a.router.mu.Unlock()
		return a.router.remote.len()
	}
	require.Eventually(t, func() bool { return remote() == claims }, waitLimit, testkit.Poll, "A to know every claim")

	// It stops, leaving its claims (as a stop whose deletes did not land does): twice the TTL
	// later, A's sweep starts withdrawing them.
	require.NoError(t, replicas.Delete(ctx, escapeToken("gone")))
	require.Eventually(t, func() bool { return !a.router.alive("gone") }, waitLimit, testkit.Poll, "A to hear of the stop")
	assert.Equal(t, claims, remote(), "swept at once")
	tc.clock.Advance(2 * testReplicaTTL)
	require.Eventually(t, func() bool { return remote() < claims }, waitLimit, testkit.Poll, "A's sweep to start")

	// A's heartbeat goes on while it sweeps.
	beat := func() uint64 {
		e, err := replicas.Get(ctx, escapeToken("a"))
		require.NoError(t, err)
		return e.Revision()
	}
	last := beat()
	require.Eventually(t, func() bool { return beat() > last }, waitLimit, testkit.Poll, "A to beat while it sweeps")
	require.Positive(t, remote(), "A's heartbeat waited for its sweep to end")

	// Stopping A ends the sweep: the rest of the claims wait for another replica's sweep.
	a.stop()
	left := 0
	keys, err := claimsKV.ListKeys(ctx)
	require.NoError(t, err)
	for range keys.Keys() {
		left++
	}
	assert.Positive(t, left, "Close waited for the sweep to withdraw every claim")
	t.Logf("%d of %d claims were left for the next sweep", left, claims)
}

// TestAReplicaServesBeforeItHasReadEveryClaim: the claims bucket holds one claim per computer
// of the whole cluster, and reading it at start took longer than --nats-setup-timeout with
// 100 000 (every restarted replica exited). A replica starts once it knows the live replicas;
// the claims arrive meanwhile, and /healthz says so.
func TestAReplicaServesBeforeItHasReadEveryClaim(t *testing.T) {
	tc := newTestCluster(t)
	b := tc.startReplica("b")
	b.connect(t, "1:there")

	// A's claims read is held, as a big bucket on a busy host holds it.
	release := make(chan struct{})
	var once sync.Once
	nc, err := Connect(context.Background(), ConnOptions{URL: tc.url(), Name: "a", ReconnectWait: testReconnectWait}, slog.New(slog.NewTextHandler(tc.logs, nil)))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	held := func() {
		select {
		case <-release:
		case <-ctx.Done(): // the test has failed: let A stop
		}
	}
	a, err := newRouter(ctx, nc, Config{Replica: "a", HeartbeatInterval: testHeartbeat, ReplicaTTL: testReplicaTTL, Clock: tc.clock},
		slog.New(slog.NewTextHandler(tc.logs, &slog.HandlerOptions{Level: slog.LevelDebug})), held)
	require.NoError(t, err, "A waited for the claims")
	defer a.Close()
	defer once.Do(func() { close(release) }) // before Close, which waits for the watcher
	assert.Contains(t, a.HealthDetail(), "nats: connected (replica a, 2 replica(s) alive), reading the other replicas' computers (0 so far)")
	assert.Empty(t, a.Remote())
	require.Eventually(t, func() bool { return b.router.alive("a") }, waitLimit, testkit.Poll, "B to hear A's heartbeat")

	// Its routing reads a claim it has not been given yet.
	holder, err := a.holder(ctx, gateway.Key{AccountID: gateway.LocalAccount, TraposID: "1:there"})
	require.NoError(t, err)
	assert.Equal(t, "b", holder)

	once.Do(func() { close(release) })
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NotContains(c, a.HealthDetail(), "reading")
		assert.Len(c, a.Remote(), 1)
	}, waitLimit, testkit.Poll, "A to read the claims")
}
