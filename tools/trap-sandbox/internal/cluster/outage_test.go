package cluster

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/testkit"
)

// A network blip cuts both replicas off from NATS (which keeps its store) and leaves computer
// 9:blip's socket on A half-open; its daemon reconnects through the load balancer to B, which
// serves the hello locally. When NATS is back, the newer hello (B's) keeps the computer and
// A's socket closes with 4009, whichever replica claims again first. Revisions cannot order
// two hellos that neither replica could write while NATS was away: A's claim, written over
// B's by a plain Put, was the later one when A reconnected second, so that B closed the
// computer's live socket with 4009 (terminal for the daemon: stranded until `sandbox
// reconnect`) and the half-open one kept it. The hello times (the gateways' clock, moved
// between the hellos) order them instead. The same when only A was cut off and B, connected,
// wrote its claim at the hello.
func TestTheNewerHelloMadeDuringAnOutageKeepsTheComputer(t *testing.T) {
	for _, tt := range []struct {
		name      string
		aBefore   bool   // A's socket said hello before the outage (its claim is in the bucket)
		bCut      bool   // B is cut off from NATS too
		firstBack string // the replica whose link to NATS comes back first
	}{
		{"both during, a back first", false, true, "a"},
		{"both during, b back first", false, true, "b"},
		{"a before, a back first", true, true, "a"},
		{"a before, b back first", true, true, "b"},
		{"only a cut off", false, false, "b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestCluster(t)
			a, cutA := tc.startCuttableReplica("a", gateway.Config{Clock: tc.clock})
			b, cutB := tc.startCuttableReplica("b", gateway.Config{Clock: tc.clock})
			cut := map[string]*cuttableProxy{"a": cutA, "b": cutB}
			watcher := tc.startReplica("w") // reads the bucket throughout, and routes
			var old *computer
			if tt.aBefore {
				old = a.connect(t, "9:blip")
				b.waitComputers(t, "9:blip@a")
			}

			cut["a"].setCut(true)
			cut["b"].setCut(tt.bCut)
			require.Eventually(t, func() bool { return !a.nc.IsConnected() && b.nc.IsConnected() != tt.bCut },
				waitLimit, testkit.Poll, "A (and B if cut) to notice NATS is gone")
			if !tt.aBefore {
				old = a.connect(t, "9:blip")
			}
			tc.clock.Advance(time.Second) // the daemon reconnects a while after its last frame on A
			newer := b.connect(t, "9:blip")

			second := map[string]string{"a": "b", "b": "a"}[tt.firstBack]
			cut[tt.firstBack].setCut(false)
			if tt.firstBack == "b" || !tt.aBefore {
				waitClaim(t, watcher.router.claims, "9:blip", tt.firstBack)
			} else {
				require.Eventually(t, func() bool { return a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to reconnect")
			}
			cut[second].setCut(false)

			code, _ := old.closeCode()
			assert.Equal(t, gateway.CloseReplaced, code, "the half-open socket on A closes as replaced")
			waitClaim(t, watcher.router.claims, "9:blip", "b")
			watcher.waitComputers(t, "9:blip@b")
			a.waitComputers(t, "9:blip@b")
			pending := a.request("9:blip", gateway.TypePing, nil, waitLimit)
			newer.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "9:blip"})
			assert.Equal(t, http.StatusOK, await(t, pending).status, "the newer socket on B keeps the computer")
		})
	}
}

// The same when A's link to NATS drops as A writes the claim of the computer's hello: the
// claim, kept by the NATS client, was published when A reconnected, after the claim of the
// computer's newer hello on B, so that B closed the live socket with 4009 as soon as the link
// was back (and the hello on A waited out --nats-op-timeout first).
func TestAClaimWrittenAsTheLinkDropsDoesNotLandAfterANewerHello(t *testing.T) {
	tc := newTestCluster(t)
	a, cut := tc.startCuttableReplica("a", gateway.Config{Clock: tc.clock})
	b := tc.startReplicaWith("b", gateway.Config{Clock: tc.clock})
	key := claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: "9:blip"})
	var cutting sync.Once
	claimWriting = func(replica, k string) {
		if replica == "a" && k == key {
			cutting.Do(func() {
				cut.setCut(true)
				assert.Eventually(t, func() bool { return !a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to notice NATS is gone") // not the test's goroutine
			})
		}
	}
	t.Cleanup(func() { claimWriting = nil }) // after the cluster's own cleanup
	old := a.connect(t, "9:blip")
	tc.clock.Advance(time.Second)
	newer := b.connect(t, "9:blip")
	rev := waitClaim(t, b.router.claims, "9:blip", "b")

	cut.setCut(false)
	code, _ := old.closeCode()
	assert.Equal(t, gateway.CloseReplaced, code, "the half-open socket on A closes as replaced")
	a.waitComputers(t, "9:blip@b")
	pending := a.request("9:blip", gateway.TypePing, nil, waitLimit)
	newer.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "9:blip"})
	assert.Equal(t, http.StatusOK, await(t, pending).status, "the newer socket on B keeps the computer")
	assert.Equal(t, rev, waitClaim(t, b.router.claims, "9:blip", "b"), "B's claim stays where it was written")
}

// The same with A's hello the newer one: B, cut off first, served a hello of the computer,
// then its daemon reconnected to A, whose link dropped as A wrote the claim. B's claim, written
// when B's link came back, closed A's newer socket with 4009, A's hello taken for one whose
// claim NATS had refused (ordered after the claim it replaced only), not for one made without
// NATS (ordered by hello time).
func TestAHelloWhoseLinkDroppedAsItWasClaimedIsOrderedByHelloTime(t *testing.T) {
	tc := newTestCluster(t)
	a, cutA := tc.startCuttableReplica("a", gateway.Config{Clock: tc.clock})
	b, cutB := tc.startCuttableReplica("b", gateway.Config{Clock: tc.clock})
	cut := map[string]*cuttableProxy{"a": cutA, "b": cutB}
	watcher := tc.startReplica("w")
	key := claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: "9:blip"})
	var cutting sync.Once
	claimWriting = func(replica, k string) {
		if replica == "a" && k == key {
			cutting.Do(func() {
				cut["a"].setCut(true)
				assert.Eventually(t, func() bool { return !a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to notice NATS is gone") // not the test's goroutine
			})
		}
	}
	t.Cleanup(func() { claimWriting = nil }) // after the cluster's own cleanup

	cut["b"].setCut(true)
	require.Eventually(t, func() bool { return !b.nc.IsConnected() }, waitLimit, testkit.Poll, "B to notice NATS is gone")
	old := b.connect(t, "9:blip")
	tc.clock.Advance(time.Second)
	newer := a.connect(t, "9:blip")

	cut["b"].setCut(false)
	waitClaim(t, watcher.router.claims, "9:blip", "b")
	cut["a"].setCut(false)
	code, _ := old.closeCode()
	assert.Equal(t, gateway.CloseReplaced, code, "the older socket on B closes as replaced")
	waitClaim(t, watcher.router.claims, "9:blip", "a")
	b.waitComputers(t, "9:blip@a")
	pending := b.request("9:blip", gateway.TypePing, nil, waitLimit)
	newer.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "9:blip"})
	assert.Equal(t, http.StatusOK, await(t, pending).status, "the newer socket on A keeps the computer")
}

// TestTwoOutageHellosAtTheSameInstantLeaveOneSocket: two hellos of one computer, each served
// while its replica was cut off from NATS, that the replicas' clocks put at the same instant
// (a clock of coarse resolution, or one stepped by NTP) are not ordered by their times: the
// claim written first stays, and the other replica, finding a claim whose hello is not
// earlier than its own, closes its socket with 4009. Exactly one socket keeps the computer,
// whichever replica comes back first; neither closes the other's.
func TestTwoOutageHellosAtTheSameInstantLeaveOneSocket(t *testing.T) {
	for _, firstBack := range []string{"a", "b"} {
		t.Run(firstBack+" back first", func(t *testing.T) {
			tc := newTestCluster(t)
			hellos := clock.NewFake(time.Now()) // the gateways' clock: it stands still, so both hellos are at one instant
			a, cutA := tc.startCuttableReplica("a", gateway.Config{Clock: hellos})
			b, cutB := tc.startCuttableReplica("b", gateway.Config{Clock: hellos})
			cut := map[string]*cuttableProxy{"a": cutA, "b": cutB}
			watcher := tc.startReplica("w")

			cutA.setCut(true)
			cutB.setCut(true)
			require.Eventually(t, func() bool { return !a.nc.IsConnected() && !b.nc.IsConnected() },
				waitLimit, testkit.Poll, "A and B to notice NATS is gone")
			sockets := map[string]*computer{"a": a.connect(t, "9:blip"), "b": b.connect(t, "9:blip")}

			second := map[string]string{"a": "b", "b": "a"}[firstBack]
			cut[firstBack].setCut(false)
			waitClaim(t, watcher.router.claims, "9:blip", firstBack)
			cut[second].setCut(false)

			code, _ := sockets[second].closeCode()
			assert.Equal(t, gateway.CloseReplaced, code, "the socket of the replica back second closes as replaced")
			watcher.waitComputers(t, "9:blip@"+firstBack)
			pending := watcher.request("9:blip", gateway.TypePing, nil, waitLimit)
			sockets[firstBack].answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "9:blip"})
			assert.Equal(t, http.StatusOK, await(t, pending).status, "the socket of the replica back first keeps the computer")
			waitClaim(t, watcher.router.claims, "9:blip", firstBack)
		})
	}
}

// TestAHeartbeatWrittenAsNATSIsLostEndsThen: a heartbeat whose write NATS has taken but not
// answered when replica A's connection drops ends as A notices. Its answer would have come on
// that connection, and nats.go kept waiting for it after A reconnected, until OpTimeout (2 s):
// the write held A's heartbeat lock, and the reconnection's heartbeat, its rewatch and its
// claims written again waited behind it. It was seen after NATS had lost ReplicasBucket: a
// write then waits 250 ms twice for the stream to answer, so a cut came during one often.
// Here the bucket is gone and the test takes A's write without answering it, as NATS did the
// write whose answer the cut dropped. A's clock is the test's: the write waited out
// JetStream's own 5 s bound, and failed with context.DeadlineExceeded.
func TestAHeartbeatWrittenAsNATSIsLostEndsThen(t *testing.T) {
	tc := newTestCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	nc, js := tc.jetStream(t)
	a := startRouterOnFakeClock(ctx, t, tc)

	require.NoError(t, js.DeleteKeyValue(ctx, ReplicasBucket))
	taken := make(chan *nats.Msg, 1)
	sub, err := nc.ChanSubscribe("$KV."+ReplicasBucket+"."+escapeToken("a"), taken)
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	require.NoError(t, nc.Flush()) // the server has the subscription before A writes

	written := make(chan error, 1)
	go func() { written <- a.heartbeat(t.Context()) }() // a tick's context: no deadline
	select {
	case <-taken:
	case <-ctx.Done():
		t.Fatal("A's heartbeat never reached NATS")
	}
	a.proxy.setCut(true)
	err = <-written // ends by JetStream's 5 s at the latest
	require.ErrorIs(t, err, errNATSLost, "the write ended as A's connection was lost")
	assert.Contains(t, err.Error(), "write the heartbeat of replica a: the NATS connection was lost before NATS answered")
}
