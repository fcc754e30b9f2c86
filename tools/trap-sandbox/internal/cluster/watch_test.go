package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/testkit"
)

// TestAReplicaReadsTheClaimsWhenMarkersArePurgedAsItReadsThem: nats.go's watcher says it has
// read a bucket's contents at its start once it has received as many entries as were
// pending then, or an entry says none is pending any more. The server writes that into each
// entry as it sends it: markers purged (purgeMarkers) after the last claim before them was
// sent, and before they were, left the claim saying "5 more", and the 5 never came. The
// replica's /healthz said "reading the other replicas' computers" until 5 later changes came.
//
// The server is made to wait between the last claim and the markers by flow control: it
// stops sending once 2 MB are on their way to a client, until that client has taken them; A's
// watcher is held at its first claim, so its buffer of 256 fills and it takes nothing more.
// Three big claims after the small ones carry the server over the 2 MB.
func TestAReplicaReadsTheClaimsWhenMarkersArePurgedAsItReadsThem(t *testing.T) {
	tc := newTestCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	_, js := tc.jetStream(t)
	claimsCfg, _ := (&Router{}).bucketConfigs()
	claims, err := bucket(ctx, js, claimsCfg)
	require.NoError(t, err)

	// The claims of replica c, which is not running: no replica withdraws them.
	const small, big, markers = 300, 3, 5
	put := func(i int, pad string) uint64 {
		k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: strconv.Itoa(i) + ":pc"}
		v, err := json.Marshal(map[string]string{"replica": "c", "accountId": k.AccountID, "traposId": k.TraposID, "pad": pad})
		require.NoError(t, err)
		rev, err := claims.Put(ctx, claimKey(k), v)
		require.NoError(t, err)
		return rev
	}
	for i := range small {
		put(i, "")
	}
	var lastClaim uint64
	for i := range big {
		lastClaim = put(small+i, strings.Repeat("x", 900_000))
	}
	type markerAt struct {
		key string
		rev uint64
	}
	stream, err := js.Stream(ctx, "KV_"+ClaimsBucket)
	require.NoError(t, err)
	var left []markerAt
	for i := range markers {
		key := claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: strconv.Itoa(i) + ":pc"})
		require.NoError(t, claims.Delete(ctx, key)) // the computer left
		m, err := stream.GetLastMsgForSubject(ctx, "$KV."+ClaimsBucket+"."+key)
		require.NoError(t, err)
		left = append(left, markerAt{key, m.Sequence})
	}

	// A starts, and its watcher is held at its first claim.
	reached, release := make(chan struct{}), make(chan struct{})
	var reachOnce, releaseOnce sync.Once
	held := func() {
		reachOnce.Do(func() { close(reached) })
		select {
		case <-release:
		case <-ctx.Done(): // the test has failed: let A stop
		}
	}
	anc, err := Connect(ctx, ConnOptions{URL: tc.url(), Name: "a", ReconnectWait: testReconnectWait}, slog.New(slog.NewTextHandler(tc.logs, nil)))
	require.NoError(t, err)
	a, err := newRouter(ctx, anc, Config{Replica: "a", HeartbeatInterval: testHeartbeat, ReplicaTTL: testReplicaTTL, Clock: tc.clock},
		slog.New(slog.NewTextHandler(tc.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", "a"), held)
	require.NoError(t, err)
	defer a.Close()
	defer releaseOnce.Do(func() { close(release) }) // before Close, which waits for the watcher
	<-reached

	// The server has sent the last claim, and waits for A's watcher before the markers.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		consumers := stream.ListConsumers(ctx)
		var delivered []uint64
		for ci := range consumers.Info() {
			delivered = append(delivered, ci.Delivered.Stream)
		}
		assert.NoError(c, consumers.Err())
		assert.Equal(c, []uint64{lastClaim}, delivered, "the stream's one consumer (A's claims watcher) has sent up to the last claim")
	}, waitLimit, testkit.Poll, "the server to send A's watcher the claims")

	// The markers are purged, as the purging replica's sweep purges them.
	for _, m := range left {
		require.NoError(t, stream.Purge(ctx, jetstream.WithPurgeSubject("$KV."+ClaimsBucket+"."+m.key), jetstream.WithPurgeSequence(m.rev+1)))
	}
	assert.Contains(t, a.HealthDetail(), "reading the other replicas' computers")
	releaseOnce.Do(func() { close(release) })

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NotContains(c, a.HealthDetail(), "reading")
	}, waitLimit, testkit.Poll, "A to have read the claims")
	assert.Contains(t, tc.logs.String(), fmt.Sprintf(`msg="read the other replicas' computers" replica=a component=cluster computers=%d `, small-markers+big))
}

// TestAReplicaReadsTheHeartbeatsAgainWithinItsWaitAfterReconnecting: after a reconnection
// the replica reads ReplicasBucket again (rewatch) and waits for the heartbeats there at that
// moment, within --nats-op-timeout. The watch counts them read at nats.go's word, at an entry
// at or past the stream's last sequence at its start, or when a check finds the rest removed
// (startRead). Entries removed from the stream's end as the watch reads them (in production:
// the bucket's TTL, the newest heartbeat ReplicaTTL old, every replica silent and this one's
// own heartbeat after reconnecting failed) leave the first two waiting for a later change: the
// check must come within the wait. It came each heartbeat interval (5 s), after the 2 s wait
// had given up, and the replica then watched neither bucket until its next reconnection.
//
// The server is made to stop before the stream's last entries by flow control, as in
// TestAReplicaReadsTheClaimsWhenMarkersArePurgedAsItReadsThem: A's new watch is held at its
// first entry, so its buffer of 256 fills and it takes nothing more, and three big entries
// carry the server over 2 MB. The entries after them are purged, and A's watch let go to its
// last entry, where it is held while A's clock moves to its wait's end, less a moment. A's
// clock is the test's: it moves only when the test moves it.
func TestAReplicaReadsTheHeartbeatsAgainWithinItsWaitAfterReconnecting(t *testing.T) {
	tc := newTestCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	_, js := tc.jetStream(t)
	_, replicasCfg := (&Router{cfg: Config{ReplicaTTL: DefaultReplicaTTL}}).bucketConfigs()
	replicas, err := bucket(ctx, js, replicasCfg)
	require.NoError(t, err)
	stream, err := js.Stream(ctx, "KV_"+ReplicasBucket)
	require.NoError(t, err)

	// Entries that are no heartbeats (A logs each once and reads on): 300 small, 3 of 900 KB.
	const small, big = 300, 3
	var lastBig uint64
	for i := range small + big {
		pad := ""
		if i >= small {
			pad = strings.Repeat("x", 900_000)
		}
		lastBig, err = replicas.Put(ctx, fmt.Sprintf("filler%03d", i), []byte(pad))
		require.NoError(t, err)
	}

	// Once holding, A's watch waits at its first entry and at its last, each until let go;
	// its watch before the reconnection gets neither, only the changes after its start.
	var holding atomic.Bool
	first, last := newGate(), newGate()
	heartbeatApplying = func(replica, key string) {
		if replica != "a" || !holding.Load() {
			return
		}
		switch key {
		case "filler000":
			first.pass()
		case fmt.Sprintf("filler%03d", small+big-1):
			last.pass()
		}
	}
	defer func() { heartbeatApplying = nil }()
	// As A's reconnection starts to read the bucket again, a heartbeat of replica z is its
	// last entry, after A's own heartbeat of the reconnection.
	watchersStopping = func(replica string, connClosed bool) {
		if replica != "a" || !holding.Load() || connClosed {
			return
		}
		b, _ := json.Marshal(heartbeatValue{Replica: "z", Started: time.Now()})
		_, err := replicas.Put(ctx, "z", b)
		assert.NoError(t, err)
	}
	defer func() { watchersStopping = nil }()

	a := startRouterOnFakeClock(ctx, t, tc)
	defer first.open() // before a's Close (a cleanup), which waits for the watch
	defer last.open()

	holding.Store(true)
	a.reconnect(t)
	<-first.reached

	// The server has sent up to the last big entry, and waits for A's watch before the
	// entries after it, A's heartbeat and z's. (A's watch before the reconnection, until the
	// server drops its consumer, was sent them all.)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var delivered []uint64
		consumers := stream.ListConsumers(ctx)
		for ci := range consumers.Info() {
			delivered = append(delivered, ci.Delivered.Stream)
		}
		assert.NoError(c, consumers.Err())
		assert.Contains(c, delivered, lastBig, "A's watch has been sent up to the last big entry")
	}, waitLimit, testkit.Poll, "the server to send A's watch the big entries")
	for _, key := range []string{"a", "z"} {
		require.NoError(t, stream.Purge(ctx, jetstream.WithPurgeSubject("$KV."+ReplicasBucket+"."+key)))
	}
	first.open()
	<-last.reached

	a.clock.Advance(DefaultOpTimeout - time.Millisecond)
	last.open()
	require.Eventually(t, func() bool {
		return a.reads() == 2 || strings.Contains(tc.logs.String(), "cannot watch the NATS buckets again")
	}, waitLimit, testkit.Poll, "A to read the buckets again, or give up")
	assert.NotContains(t, tc.logs.String(), "cannot watch the NATS buckets again")
	assert.Equal(t, 2, a.reads(), "A read the buckets again within its wait")
}

// TestAReplicaWhoseRewatchFailedWatchesAgainAtTheNextHeartbeat: a reconnection whose read of
// the buckets fails (here ReplicasBucket is gone as the read starts, standing for NATS slow to
// answer or its JetStream not ready yet) leaves the replica watching neither bucket; it says
// so, and tries again at the next heartbeat tick, checking the buckets first (the one gone is
// created again), until it watches them: another replica's heartbeat written then reaches it.
// Before, it watched nothing until its next reconnection, and took every other replica for
// dead once --nats-replica-ttl had passed. A's clock is the test's.
func TestAReplicaWhoseRewatchFailedWatchesAgainAtTheNextHeartbeat(t *testing.T) {
	tc := newTestCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	f := startWithATryAfterAFailedRewatch(t, tc)
	a := f.a
	f.try.open()
	require.Eventually(t, func() bool { return strings.Contains(tc.logs.String(), rewatchedLine) }, waitLimit, testkit.Poll,
		"A to watch the buckets again at a heartbeat tick")
	require.Eventually(t, func() bool { return a.reads() == 2 }, waitLimit, testkit.Poll, "A to read the buckets again")
	assert.Contains(t, tc.logs.String(), `msg="NATS had lost a bucket (restarted without its store?): created it again" replica=a component=cluster bucket=`+ReplicasBucket)

	replicas, err := f.js.KeyValue(ctx, ReplicasBucket)
	require.NoError(t, err)
	b, _ := json.Marshal(heartbeatValue{Replica: "y", Started: time.Now()})
	_, err = replicas.Put(ctx, "y", b)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return strings.Contains(tc.logs.String(), `msg="`+replicaAliveLine+`" replica=a component=cluster other=y`)
	}, waitLimit, testkit.Poll, "y's heartbeat to reach A")
}

// TestAReconnectionsRewatchLeavesATicksTryNothingToDo: a heartbeat tick's try to watch the
// buckets again (after a rewatch that failed) that waits while a reconnection's rewatch
// succeeds does nothing after it. It rewatched again: it stopped the watchers just started and
// read every claim again, the other replicas' computers missing from A's lists until it had.
func TestAReconnectionsRewatchLeavesATicksTryNothingToDo(t *testing.T) {
	tc := newTestCluster(t)
	f := startWithATryAfterAFailedRewatch(t, tc)
	a := f.a

	// While the tick's try waits, A's next reconnection watches the buckets again.
	a.reconnect(t)
	require.Eventually(t, func() bool { return strings.Contains(tc.logs.String(), rewatchedLine) }, waitLimit, testkit.Poll,
		"the reconnection's rewatch to succeed")
	require.Equal(t, int32(2), f.rewatches.Load(), "the rewatch that failed and the reconnection's")

	f.try.open()
	require.Eventually(t, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return !a.rewatching
	}, waitLimit, testkit.Poll, "the tick's try to end")
	assert.Equal(t, int32(2), f.rewatches.Load(), "the tick's try stopped the watchers the reconnection's rewatch had started")
	require.Eventually(t, func() bool { return a.reads() == 2 }, waitLimit, testkit.Poll, "A to read the buckets again")
}

// tryAfterAFailedRewatch is replica A after a reconnection whose read of the buckets failed
// (ReplicasBucket deleted as the read began), with a heartbeat tick's try to watch them again
// begun and held until the test opens try.
type tryAfterAFailedRewatch struct {
	a   *routerOnFakeClock
	try *gate
	// rewatches counts A's watchers stopped to be started anew since the reconnection.
	rewatches *atomic.Int32
	js        jetstream.JetStream // the test's own connection to NATS
}

// startWithATryAfterAFailedRewatch starts A, cuts it off NATS, and deletes ReplicasBucket as
// its reconnection begins to read the buckets again, and waits until it has said it cannot.
// Then A's heartbeat ticks as its clock moves on, until one begins a try to watch the buckets
// again; the clock then stands still: moved on during the try, it would end the try's NATS
// operations (OpTimeout, on that clock), the bucket's creation among them.
func startWithATryAfterAFailedRewatch(t *testing.T, tc *testCluster) tryAfterAFailedRewatch {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	t.Cleanup(cancel)
	f := tryAfterAFailedRewatch{try: newGate(), rewatches: new(atomic.Int32)}
	_, f.js = tc.jetStream(t)

	var failing atomic.Bool
	var once sync.Once
	watchersStopping = func(replica string, connClosed bool) {
		if replica != "a" || !failing.Load() || connClosed {
			return
		}
		f.rewatches.Add(1)
		once.Do(func() { assert.NoError(t, f.js.DeleteKeyValue(ctx, ReplicasBucket)) })
	}
	rewatchRetrying = func(replica string) {
		if replica == "a" {
			f.try.pass()
		}
	}
	t.Cleanup(func() { watchersStopping, rewatchRetrying = nil, nil })

	f.a = startRouterOnFakeClock(ctx, t, tc)
	t.Cleanup(f.try.open) // before A's Close (the cleanup before), which waits for the try
	failing.Store(true)
	f.a.reconnect(t)
	require.Eventually(t, func() bool { return strings.Contains(tc.logs.String(), unwatchedLine) }, waitLimit, testkit.Poll,
		"A to say it cannot watch the buckets")
	assert.Equal(t, 1, f.a.reads())

	require.Eventually(t, func() bool {
		select {
		case <-f.try.reached:
			return true
		default:
			f.a.clock.Advance(DefaultHeartbeatInterval)
			return false
		}
	}, waitLimit, testkit.Poll, "a heartbeat tick to try to watch the buckets again")
	return f
}

// routerOnFakeClock is replica a's router alone, reaching NATS through a proxy the test cuts,
// on a clock that moves only when the test moves it; it logs to tc.logs, debug included.
type routerOnFakeClock struct {
	*Router
	nc    *nats.Conn
	proxy *cuttableProxy
	clock *clock.Fake
	logs  *testkit.SyncBuffer
}

// startRouterOnFakeClock starts replica a's router and waits until it has read the buckets;
// it closes as the test ends.
func startRouterOnFakeClock(ctx context.Context, t *testing.T, tc *testCluster) *routerOnFakeClock {
	t.Helper()
	a := &routerOnFakeClock{proxy: newCuttableProxy(t, tc.ns.Addr().String()), clock: clock.NewFake(time.Now()), logs: tc.logs}
	var err error
	a.nc, err = Connect(ctx, ConnOptions{URL: a.proxy.url(), Name: "a", ReconnectWait: testReconnectWait}, slog.New(slog.NewTextHandler(tc.logs, nil)))
	require.NoError(t, err)
	a.Router, err = newRouter(ctx, a.nc, Config{Replica: "a", Clock: a.clock},
		slog.New(slog.NewTextHandler(tc.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", "a"), nil)
	require.NoError(t, err)
	t.Cleanup(a.Close)
	require.Eventually(t, func() bool { return a.reads() == 1 }, waitLimit, testkit.Poll, "A to read the buckets")
	return a
}

// reads is how many times a has read the buckets: at its start, and at each rewatch that succeeded.
func (a *routerOnFakeClock) reads() int {
	return strings.Count(a.logs.String(), `msg="read the other replicas' computers" replica=a`)
}

// reconnect cuts a off NATS until it notices, then lets it reconnect.
func (a *routerOnFakeClock) reconnect(t *testing.T) {
	t.Helper()
	a.proxy.setCut(true)
	require.Eventually(t, func() bool { return !a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to notice NATS is gone")
	a.proxy.setCut(false)
}
