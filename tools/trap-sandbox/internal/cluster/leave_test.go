package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// claimsInBucket reads every claim of r's claims bucket as traposId → the replica it names.
// The keys come from the stream's subjects, not from KeyValue.ListKeys: its watcher waits for
// as many entries as the bucket held when it began, and a delete marker purged meanwhile
// (purgeMarkers, which a clock moved past markerLifetime sets off) never comes, so the listing
// hung until its context ended and a wait on the claims ran out of time.
func claimsInBucket(t testingT, r *Router) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	stream, err := r.js.Stream(ctx, "KV_"+ClaimsBucket)
	require.NoError(t, err)
	prefix := "$KV." + ClaimsBucket + "."
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(prefix+">"))
	require.NoError(t, err)
	out := make(map[string]string)
	for subject := range info.State.Subjects {
		key := strings.TrimPrefix(subject, prefix)
		e, err := r.claims.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // a delete marker, or withdrawn since the stream was read
		}
		require.NoError(t, err)
		k, err := parseClaimKey(key)
		require.NoError(t, err)
		out[k.TraposID] = claimantOf(e)
	}
	return out
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
	res := await(t, b.request("1:on-a", gateway.TypePing, nil, waitLimit))
	assert.Equal(t, http.StatusNotFound, res.status)
	require.NotNil(t, res.body.Error)
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)
	// It said goodbye a moment ago: not "has sent no heartbeat for" the TTL.
	assert.Equal(t, "computer 1:on-a is not connected: replica a, which held its socket, has stopped", res.body.Error.Message)
	assert.Equal(t, "a", res.body.Error.ReplicaGone, "the mark MCP's tools read: the host API's JSON carries it")

	// During the stop, one computer says hello on B: the newest claim is B's.
	b.connect(t, "100:moves")
	code, _ := moving.closeCode()
	assert.Equal(t, gateway.CloseReplaced, code)
	b.waitComputers(t, "100:moves@b")

	// A's sockets close, and their claims stay in the bucket: no delete per socket.
	a.stop()
	inBucket := claimsInBucket(t, b.router)
	assert.Len(t, inBucket, many+1, "A withdrew its claims one by one")
	assert.Equal(t, "a", inBucket["1:on-a"])
	assert.Equal(t, "b", inBucket["100:moves"])
	b.waitComputers(t, "100:moves@b")
	res = await(t, b.request("1:on-a", gateway.TypePing, nil, waitLimit))
	assert.Equal(t, http.StatusNotFound, res.status)

	// A restarts under its name before the sweep: it deletes its previous run's claims itself
	// (the one of the computer that moved is B's and stays), and only its new computer is
	// listed.
	a2 := tc.startReplica("a")
	a2.connect(t, "200:new-on-a")
	live := map[string]string{"100:moves": "b", "200:new-on-a": "a"}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, live, claimsInBucket(c, b.router))
	}, waitLimit, testkit.Poll, "A to delete its previous run's claims")
	b.waitComputers(t, "100:moves@b", "200:new-on-a@a")
	a2.waitComputers(t, "100:moves@b", "200:new-on-a@a")

	// Twice the TTL after the goodbye, the sweeps find nothing of A's previous run left, and
	// the claims withdrawn because the clock jumped (every replica looks silent for a moment)
	// are written again: only the live claims are left.
	tc.clock.Advance(2 * testReplicaTTL)
	for _, r := range []*replica{a2, b} {
		beat := r.heartbeatRevision(t)
		require.Eventually(t, func() bool { return r.heartbeatRevision(t) > beat }, waitLimit, testkit.Poll, "%s to beat (and sweep)", r.name)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, live, claimsInBucket(c, b.router))
	}, waitLimit, testkit.Poll, "only the live claims to be left")
	b.waitComputers(t, "100:moves@b", "200:new-on-a@a")
	a2.waitComputers(t, "100:moves@b", "200:new-on-a@a")
}

// A request routed to a replica that stops while it waits on the computer is answered in that
// replica's name: the caller reads the answer on another replica, where "the gateway is
// shutting down" would name the wrong one.
func TestARequestWaitingOnAStoppingReplicaNamesIt(t *testing.T) {
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	c := a.connect(t, "3:mill")
	body, err := json.Marshal(routedRequest{Type: gateway.TypePing, Payload: protocol.EmptyPayload, TimeoutMs: waitLimit.Milliseconds()})
	require.NoError(t, err)
	// The asker is a plain client of the bus, so that only A's answer can end the request.
	bus := tc.busClient(t)
	asked := make(chan *nats.Msg, 1)
	go func() {
		m, err := bus.Request(computerSubject("a", gateway.Key{AccountID: gateway.LocalAccount, TraposID: "3:mill"}), body, waitLimit)
		assert.NoError(t, err)
		asked <- m
	}()
	c.read() // the request is pending on A
	a.stop()
	m := <-asked
	require.NotNil(t, m)
	var rr routedResponse
	require.NoError(t, json.Unmarshal(m.Data, &rr))
	require.NotNil(t, rr.GatewayError, "%s", m.Data)
	assert.Equal(t, protocol.CodeNotConnected, rr.GatewayError.Code)
	assert.Equal(t, "computer 3:mill is not connected: replica a, which held its socket, is shutting down; "+
		"it may have done what it was asked all the same: check before you ask again", rr.GatewayError.Message)
	assert.Equal(t, "a", rr.GatewayError.ReplicaGone, "the holder marks its own stop")
}

// A request on its way to a replica whose goodbye came meanwhile (after the goodbye failed the
// requests then waiting) is failed by the next heartbeat tick's look at the holders as one to
// a replica that stopped, not as one that "has sent no heartbeat for" the TTL, which it never
// went without.
func TestARequestToAReplicaThatSaidGoodbyeNamesItStopped(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	// Not alive is not enough: a that has not yet heard b at all holds it not alive too, and
	// judged its requests by the TTL.
	require.Eventually(t, func() bool { return a.router.alive("b") }, waitLimit, testkit.Poll, "a to hear b")
	b.stop()
	require.Eventually(t, func() bool {
		a.router.mu.Lock()
		defer a.router.mu.Unlock()
		return a.router.stopped["b"]
	}, waitLimit, testkit.Poll, "a to take in b's goodbye")
	holdBeats(t, a.router) // the tick below is the test's
	p := &pendingRoute{k: gateway.Key{AccountID: gateway.LocalAccount, TraposID: "5:late"}, holder: "b", request: true, done: make(chan struct{})}
	a.router.mu.Lock()
	a.router.pending[1<<62] = p
	a.router.mu.Unlock()
	a.router.watchHolders()
	select {
	case <-p.done:
	case <-time.After(waitLimit):
		t.Fatal("the request waiting on b was not failed")
	}
	stopped := protocol.Errorf(protocol.CodeNotConnected, "computer 5:late is not connected: replica b, which held its socket, has stopped; "+
		"it may have done what it was asked all the same: check before you ask again")
	stopped.ReplicaGone = "b"
	assert.Equal(t, stopped, p.err)
}

// A replica that stops takes no computer on while it says goodbye: a new socket is refused
// before its upgrade (503), and a socket opened before the stop that says hello now is
// answered not_connected and closed with 1001, as the others. Before, that hello was
// answered ok and the computer served there unannounced (its claim is not written once the
// replica leaves), until the close a moment later.
func TestAStoppingReplicaTakesNoComputerOnWhileSayingGoodbye(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	early := a.dial(t, "1:early")
	// A hello without a traposId is answered, and the socket stays: once it is, the socket's
	// session runs, so the stop below has it among the sockets to close.
	early.send(map[string]any{"event": "computer_request", "traposSenderId": "", "messageId": "probe-1",
		"type": gateway.TypeHello, "payload": map[string]any{}})
	probed := early.read()
	require.Equal(t, "probe-1", probed.MessageID)
	require.Equal(t, protocol.CodeNotAuthenticated, probed.Error.Code)

	// The goodbye waits for the heartbeat lock, so the stop waits in it, before any socket
	// closes.
	releaseBeats := holdBeats(t, a.router)
	stopped := make(chan struct{})
	go func() { a.stop(); close(stopped) }()
	require.Eventually(t, a.router.isLeaving, waitLimit, testkit.Poll, "the stop to say goodbye")

	status, refusal := a.dialRefused(t, "a new socket during the stop")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "the gateway is shutting down\n", refusal)

	answer := early.hello()
	require.False(t, answer.OK, "the hello of a socket opened before the stop")
	assert.Equal(t, protocol.CodeNotConnected, answer.Error.Code)
	assert.Equal(t, "the gateway is shutting down; reconnect (to another replica, or to this one once it is back)", answer.Error.Message)
	code, reason := early.closeCode()
	assert.Equal(t, websocket.CloseGoingAway, code)
	assert.Equal(t, "going away", reason)

	releaseBeats()
	<-stopped
	b.waitComputers(t)
	assert.Empty(t, claimsInBucket(t, b.router))
}

// TestAStoppedReplicasClaimsAreSweptTwiceTheTTLAfterItsGoodbye: the claims a replica leaves
// when it says goodbye are another replica's to delete (A does not come back), not before
// twice the TTL, and a claim replaced by a later one is not touched.
func TestAStoppedReplicasClaimsAreSweptTwiceTheTTLAfterItsGoodbye(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	a.connect(t, "1:left")
	a.connect(t, "2:left")
	a.connect(t, "3:moves")
	b.waitComputers(t, "1:left@a", "2:left@a", "3:moves@a")
	a.stop()
	b.waitComputers(t)
	require.Equal(t, map[string]string{"1:left": "a", "2:left": "a", "3:moves": "a"}, claimsInBucket(t, b.router))
	b.connect(t, "3:moves")
	b.waitComputers(t, "3:moves@b")

	// Not before twice the TTL.
	tc.clock.Advance(testReplicaTTL)
	for range 2 {
		beat := b.heartbeatRevision(t)
		require.Eventually(t, func() bool { return b.heartbeatRevision(t) > beat }, waitLimit, testkit.Poll, "B to beat (and sweep)")
	}
	assert.Equal(t, map[string]string{"1:left": "a", "2:left": "a", "3:moves": "b"}, claimsInBucket(t, b.router))
	b.waitComputers(t, "3:moves@b")

	tc.clock.Advance(testReplicaTTL)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, map[string]string{"3:moves": "b"}, claimsInBucket(c, b.router))
	}, waitLimit, testkit.Poll, "B to sweep A's claims")
	b.waitComputers(t, "3:moves@b")
}

// TestAHeartbeatDeletedFromOutsideComesBackWithTheReplicasNextBeat: a deleted heartbeat is
// taken for a goodbye, but it may be an operator purging trapos_replicas, or another client on
// the bus, while the replica lives on. Its computers leave the lists, and come back with its
// next heartbeat: not twice --nats-replica-ttl later, once the sweep has deleted their claims
// and the replica has written them again.
func TestAHeartbeatDeletedFromOutsideComesBackWithTheReplicasNextBeat(t *testing.T) {
	for _, tt := range []struct {
		name   string
		remove func(ctx context.Context, kv jetstream.KeyValue, key string) error
	}{
		{"deleted", func(ctx context.Context, kv jetstream.KeyValue, key string) error { return kv.Delete(ctx, key) }},
		{"purged", func(ctx context.Context, kv jetstream.KeyValue, key string) error { return kv.Purge(ctx, key) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestCluster(t)
			a, b := tc.startReplica("a"), tc.startReplica("b")
			kitchen := a.connect(t, "1:kitchen")
			a.connect(t, "2:mill")
			b.waitComputers(t, "1:kitchen@a", "2:mill@a")
			claimRev := func() uint64 {
				e, err := b.router.claims.Get(t.Context(), claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: "1:kitchen"}))
				require.NoError(t, err)
				return e.Revision()
			}
			written := claimRev()

			// The operator's client on the bus.
			nc, err := nats.Connect(tc.url())
			require.NoError(t, err)
			defer nc.Close()
			js, err := jetstream.New(nc)
			require.NoError(t, err)
			replicas, err := js.KeyValue(t.Context(), ReplicasBucket)
			require.NoError(t, err)

			// A's heartbeats wait while its heartbeat is removed, so that B applies the removal
			// before A's next beat (one every 50 ms would come before the test could look).
			releaseBeats := holdBeats(t, a.router)
			require.NoError(t, tt.remove(t.Context(), replicas, escapeToken("a")))
			b.waitComputers(t)
			res := await(t, b.request("1:kitchen", gateway.TypePing, nil, waitLimit))
			assert.Equal(t, http.StatusNotFound, res.status)
			require.NotNil(t, res.body.Error)
			assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)

			// A beats again, a heartbeat interval later: far from twice the TTL, nothing swept.
			tc.clock.Advance(testHeartbeat)
			releaseBeats()
			require.Eventually(t, func() bool {
				_, err := replicas.Get(t.Context(), escapeToken("a"))
				return err == nil
			}, waitLimit, testkit.Poll, "A to beat again")
			b.waitComputers(t, "1:kitchen@a", "2:mill@a")
			pending := b.request("1:kitchen", gateway.TypePing, nil, waitLimit)
			kitchen.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "1:kitchen"})
			res = await(t, pending)
			require.Equal(t, http.StatusOK, res.status, "%+v", res.body.Error)
			assert.JSONEq(t, `{"traposId":"1:kitchen"}`, string(res.body.Payload))
			assert.Equal(t, written, claimRev(), "the claim was deleted and written again")
		})
	}
}

// startRouter sets up a router named name on a connection of its own, as a replica's start
// does, and returns New's error; a router that starts is closed again.
func (tc *testCluster) startRouter(t *testing.T, name string, opTimeout time.Duration) error {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(tc.logs, nil)).With("replica", name+" (second)")
	nc, err := Connect(context.Background(), ConnOptions{URL: tc.url(), Name: name, ReconnectWait: testReconnectWait}, logger)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	router, err := New(ctx, nc, Config{Replica: name, HeartbeatInterval: testHeartbeat, ReplicaTTL: testReplicaTTL,
		OpTimeout: opTimeout, Clock: tc.clock}, logger)
	if err != nil {
		nc.Close() // as the serve command does
		return err
	}
	router.Close()
	return nil
}

// A replica started under the name of a running one (two hosts of one name, a copied service
// file) is refused before it touches anything: it would otherwise delete the running one's
// claims as those of its own previous run, and its goodbye would take the running one out of
// every list. A replica that crashed or stopped answers nothing any more, so restarting one
// under its name is never refused.
func TestAReplicaIsRefusedTheNameOfARunningOne(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	kitchen := b.connect(t, "7:kitchen")
	a.waitComputers(t, "7:kitchen@b")

	err := tc.startRouter(t, "b", DefaultOpTimeout)
	require.Error(t, err)
	assert.Equal(t, `the replica name "b" is taken: a running replica answers under it on NATS. `+
		`Give each replica its own --replica (SANDBOX_REPLICA), or stop the other one first`, err.Error())
	assert.Equal(t, map[string]string{"7:kitchen": "b"}, claimsInBucket(t, a.router), "the running replica's claim")
	a.waitComputers(t, "7:kitchen@b")
	pong := a.request("7:kitchen", gateway.TypePing, nil, waitLimit)
	kitchen.answerRequest(pong, gateway.TypePing, map[string]any{"traposId": "7:kitchen"})
	res := await(t, pong)
	assert.Equal(t, http.StatusOK, res.status, "%+v", res.body.Error)

	// Something that listens under a name and never answers (a hung replica) keeps it too.
	nc, err := nats.Connect(tc.url())
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.SubscribeSync(aliveSubject("c"))
	require.NoError(t, err)
	require.NoError(t, nc.Flush())
	err = tc.startRouter(t, "c", 50*time.Millisecond)
	require.Error(t, err)
	assert.Equal(t, `the replica name "c" may be taken: a client listens under it on NATS but did not answer within 50ms (a hung replica of that name?). `+
		`Give each replica its own --replica (SANDBOX_REPLICA), or stop the other one first`, err.Error())

	// A crash frees the name at once (NATS drops the connection's subscriptions), and so does a
	// clean stop.
	b.kill()
	require.NoError(t, tc.startRouter(t, "b", DefaultOpTimeout))
	a.stop()
	require.NoError(t, tc.startRouter(t, "a", DefaultOpTimeout))
}

// TestEachReplicaLogsTheOthersComingStoppingAndGoingSilent: an operator who killed a replica
// read nothing of it in the others' logs (its computers silently left their lists), nor of a
// replica that joined or stopped. Each replica now logs each other one's coming, its goodbye,
// and its silence past the TTL, once each.
func TestEachReplicaLogsTheOthersComingStoppingAndGoingSilent(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	linesOf := func(msg, about string) int {
		n := 0
		for line := range strings.Lines(tc.logs.String()) {
			if strings.Contains(line, "msg=\""+msg+"\"") && strings.Contains(line, "replica=a ") && strings.Contains(strings.TrimSpace(line)+" ", " other="+about+" ") {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return linesOf(replicaAliveLine, "b") == 1 }, waitLimit, testkit.Poll, "A to log that B is alive")

	// B crashes: nothing arrives from it; once it has been silent for the TTL, A says so, once.
	tc.crash(b, a)
	tc.clock.Advance(testReplicaTTL + time.Minute)
	require.Eventually(t, func() bool { return linesOf(replicaSilentLine, "b") == 1 }, waitLimit, testkit.Poll, "A to log that B went silent")
	beat := a.heartbeatRevision(t)
	require.Eventually(t, func() bool { return a.heartbeatRevision(t) > beat+1 }, waitLimit, testkit.Poll, "A to tick twice more")
	assert.Equal(t, 1, linesOf(replicaSilentLine, "b"), "a silence is one line")

	// C comes and stops cleanly: A logs both, and no silence after the goodbye.
	c := tc.startReplica("c")
	require.Eventually(t, func() bool { return linesOf(replicaAliveLine, "c") == 1 }, waitLimit, testkit.Poll, "A to log that C is alive")
	c.stop()
	require.Eventually(t, func() bool { return linesOf(replicaStoppedLine, "c") == 1 }, waitLimit, testkit.Poll, "A to log that C stopped")
	tc.clock.Advance(testReplicaTTL + time.Minute)
	beat = a.heartbeatRevision(t)
	require.Eventually(t, func() bool { return a.heartbeatRevision(t) > beat+1 }, waitLimit, testkit.Poll, "A to tick twice more")
	assert.Zero(t, linesOf(replicaSilentLine, "c"), "a replica that said goodbye is not silent")
	assert.Equal(t, 1, linesOf(replicaAliveLine, "b"), "B's coming is one line")
}
