package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	hostcomputer "trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/opencodehealth"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

func TestRequestsReachAComputerThroughAnotherReplica(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	c := a.connect(t, "7:kitchen")
	b.waitComputers(t, "7:kitchen@a")
	a.waitComputers(t, "7:kitchen@a")
	listed := b.computerList(t)[0]
	assert.Equal(t, testClientVersion, listed.ClientVersion, "the hello's clientVersion crosses replicas")
	assert.Equal(t, "local", listed.AccountID)

	pending := b.request("7:kitchen", gateway.TypePing, nil, waitLimit)
	c.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "7:kitchen"})
	res := await(t, pending)
	require.Equal(t, http.StatusOK, res.status, "%+v", res.body.Error)
	assert.True(t, res.body.OK)
	assert.JSONEq(t, `{"traposId":"7:kitchen"}`, string(res.body.Payload))

	// Any type goes through, payload both ways; so does the computer's own ok:false.
	pending = b.request("7:kitchen", "fs.read", map[string]any{"path": "startup.lua"}, waitLimit)
	req := c.answerRequest(pending, "fs.read", map[string]any{"data": "print('hi')", "size": 11, "eof": true})
	assert.JSONEq(t, `{"path":"startup.lua"}`, string(req.Payload))
	res = await(t, pending)
	require.Equal(t, http.StatusOK, res.status, "%+v", res.body.Error)
	assert.JSONEq(t, `{"data":"print('hi')","size":11,"eof":true}`, string(res.body.Payload))

	pending = b.request("7:kitchen", "door.open", nil, waitLimit)
	req = c.read()
	c.send(map[string]any{"event": "computer_response", "traposSenderId": c.id, "messageId": req.MessageID,
		"type": req.Type, "ok": false, "error": map[string]any{"code": "unknown_type", "message": "no door here"}})
	res = await(t, pending)
	require.Equal(t, http.StatusOK, res.status)
	assert.False(t, res.body.OK)
	assert.Equal(t, &protocol.Error{Code: "unknown_type", Message: "no door here"}, res.body.Error)

	// The Go API routes the same way (every module that calls it gets the other replicas too).
	done := make(chan gateway.Response, 1)
	go func() {
		resp, err := b.gw.Request(context.Background(), gateway.LocalAccount, "7:kitchen", gateway.TypePing, nil)
		assert.NoError(t, err)
		done <- resp
	}()
	c.answerNext(gateway.TypePing, map[string]any{"traposId": "7:kitchen"})
	assert.True(t, (<-done).OK)

	// Computer → gateway types are answered where the socket is.
	c.send(map[string]any{"event": "computer_request", "traposSenderId": c.id, "messageId": "p-1", "type": opencodehealth.Type})
	probe := c.read()
	assert.Equal(t, "p-1", probe.MessageID)
	assert.True(t, probe.OK)

	// A computer nobody holds: NATS has no responder, so not_connected at once.
	res = await(t, b.request("9:nowhere", gateway.TypePing, nil, time.Minute))
	assert.Equal(t, http.StatusNotFound, res.status)
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)
	assert.Less(t, res.took, 30*time.Second, "not_connected must not wait for the timeout")
	assert.Zero(t, b.router.RoutedInFlight())
}

// A routed request whose caller gives up (cancelled, not timed out) stops waiting on the
// replica that holds the computer too, as it would on that replica itself: it no longer holds
// one of the computer's gateway requests in flight there until its timeout.
func TestACancelledRoutedRequestFreesItsSlotWhereTheComputerIs(t *testing.T) {
	tc := newTestCluster(t)
	a := tc.startReplicaWith("a", gateway.Config{MaxGatewayRequestsInFlight: 1})
	b := tc.startReplica("b")
	c := a.connect(t, "7:slot")
	b.waitComputers(t, "7:slot@a")

	ctx, cancel := context.WithTimeout(context.Background(), gateway.MaxRequestTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.gw.Request(ctx, gateway.LocalAccount, "7:slot", gateway.TypePing, nil)
		done <- err
	}()
	c.read() // the request waits on A, in the computer's one slot
	busy := func() bool {
		_, err := a.gw.RequestWithin(context.Background(), gateway.LocalAccount, "7:slot", gateway.TypePing, nil, time.Millisecond)
		return protocol.CodeOf(err) == protocol.CodeBusy
	}
	require.True(t, busy(), "the routed request holds the slot")
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	require.Eventually(t, func() bool { return !busy() }, waitLimit, testkit.Poll, "A to give the slot back")
}

// A cancel that arrives before the routed request's goroutine has started (the asker gave up
// at once, on a busy replica) still ends it: it was lost, and the request kept the computer's
// slot until its timeout.
func TestACancelRightBehindItsRoutedRequestIsNotLost(t *testing.T) {
	release := make(chan struct{})
	answerStarting = func() { <-release }
	t.Cleanup(func() { answerStarting = nil }) // after the cluster's own cleanup
	tc := newTestCluster(t)
	a := tc.startReplicaWith("a", gateway.Config{MaxGatewayRequestsInFlight: 1})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before A stops, which waits for the request's goroutine
	a.connect(t, "7:slot")
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "7:slot"}

	// The asker is a plain client of the bus: the request, then its cancel right behind it.
	bus := tc.busClient(t)
	const reply = "asker.reply.1"
	body, err := json.Marshal(routedRequest{Type: gateway.TypePing, Payload: protocol.EmptyPayload, TimeoutMs: gateway.MaxRequestTimeout.Milliseconds()})
	require.NoError(t, err)
	require.NoError(t, bus.PublishMsg(&nats.Msg{Subject: computerSubject("a", k), Reply: reply, Data: body}))
	require.NoError(t, bus.Publish(cancelSubject("a"), []byte(reply)))
	// A serves its subjects in order: once it answers this, it has handled the cancel, while
	// the request's goroutine has not started yet.
	_, err = bus.Request(aliveSubject("a"), nil, waitLimit)
	require.NoError(t, err)
	assert.Contains(t, tc.logs.String(), "a routed request given up by its asker", "the cancel found its request")
	unblock()

	answering := func() int {
		a.router.mu.Lock()
		defer a.router.mu.Unlock()
		return len(a.router.answering)
	}
	require.Eventually(t, func() bool { return answering() == 0 }, waitLimit, testkit.Poll, "A to stop answering it")
	_, err = a.gw.RequestWithin(context.Background(), gateway.LocalAccount, "7:slot", gateway.TypePing, nil, time.Millisecond)
	assert.NotEqual(t, protocol.CodeBusy, protocol.CodeOf(err), "the computer's one slot is free")
}

func TestHelloOnAnotherReplicaClosesTheOlderSocketWith4009(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	old := a.connect(t, "3:miner")
	b.waitComputers(t, "3:miner@a")

	// A request waiting on the old socket fails when it is replaced.
	pending := a.request("3:miner", gateway.TypePing, nil, time.Minute)
	old.read() // the request reached the computer, which does not answer

	fresh := b.connect(t, "3:miner")
	code, reason := old.closeCode()
	assert.Equal(t, gateway.CloseReplaced, code)
	assert.Equal(t, "replaced", reason)
	res := await(t, pending)
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)
	assert.Contains(t, res.body.Error.Message, "replaced")
	// One replica= per line (the one that logs it): a log parser keeps one of two.
	assert.Contains(t, tc.logs.String(), `msg="computer said hello on another replica: closing its socket here" replica=a component=cluster traposId=3:miner claimant=b`)

	a.waitComputers(t, "3:miner@b")
	b.waitComputers(t, "3:miner@b")
	pending = a.request("3:miner", gateway.TypePing, nil, waitLimit)
	fresh.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "3:miner"})
	assert.Equal(t, http.StatusOK, await(t, pending).status)
}

func TestRacingHellosLeaveExactlyOneWinnerTheLaterClaim(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	for i := range 5 {
		id := string(rune('1'+i)) + ":race" // a traposId starts with the computer id
		ca, cb := a.dial(t, id), b.dial(t, id)
		var wg sync.WaitGroup
		for _, c := range []*computer{ca, cb} {
			wg.Go(func() { c.sendHello() })
		}
		wg.Wait()
		// Each socket's first frame is its hello's answer, or the 4009 of a hello that lost
		// while its claim was being written. Once both came, both claims are written.
		okA, codeA := ca.firstEvent()
		okB, codeB := cb.firstEvent()
		k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: id}
		require.Eventually(t, func() bool {
			return a.router.holds(k) != b.router.holds(k)
		}, waitLimit, testkit.Poll, "one replica left holding "+id)
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		e, err := a.router.claims.Get(ctx, claimKey(k))
		cancel()
		require.NoError(t, err)
		var cl claim
		require.NoError(t, json.Unmarshal(e.Value(), &cl))
		loser, winning, held := ca, cb, b
		loserOK, loserCode, winnerOK := okA, codeA, okB
		if cl.Replica == "a" {
			loser, winning, held = cb, ca, a
			loserOK, loserCode, winnerOK = okB, codeB, okA
		}
		require.True(t, held.router.holds(k), "round %d: the later claim's replica holds the socket", i)
		assert.True(t, winnerOK, "round %d: the winner's hello is answered", i)
		if loserOK {
			loserCode, _ = loser.closeCode()
		}
		assert.Equal(t, gateway.CloseReplaced, loserCode, "round %d", i)
		// The winner's socket still serves, from either replica.
		other := a
		if held == a {
			other = b
		}
		pending := other.request(id, gateway.TypePing, nil, waitLimit)
		winning.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": id})
		assert.Equal(t, http.StatusOK, await(t, pending).status, "round %d", i)
	}
}

func TestSocketClosingMidRequestFailsOnTheAskingReplicaAtOnce(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	c := a.connect(t, "5:tower")
	b.waitComputers(t, "5:tower@a")

	pending := b.request("5:tower", gateway.TypePing, nil, time.Minute)
	c.read()           // the request is pending on A
	_ = c.conn.Close() // CC's close(): TCP goes, no close frame
	res := await(t, pending)
	assert.Equal(t, http.StatusNotFound, res.status)
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)
	assert.Contains(t, res.body.Error.Message, "disconnected before it answered")
	assert.Less(t, res.took, 30*time.Second, "not_connected must not wait for the minute's timeout")
	require.Eventually(t, func() bool { return b.router.RoutedInFlight() == 0 }, waitLimit, testkit.Poll, "no routed request left")
}

// A crashed replica's connection closes, and NATS drops its subscriptions at once: the
// replicas with requests waiting on it learn so at their next heartbeat tick (nobody answers
// its alive subject) and fail them, instead of waiting out their timeout (a minute here).
func TestAReplicaKilledMidRequestFailsTheRequestsRoutedToItAtOnce(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	c := a.connect(t, "6:farm")
	b.waitComputers(t, "6:farm@a")

	pending := b.request("6:farm", gateway.TypePing, nil, gateway.MaxRequestTimeout)
	c.read() // pending on A
	a.kill()
	res := await(t, pending) // waits at most 2×waitLimit, a third of the request's timeout
	assert.Equal(t, http.StatusNotFound, res.status)
	require.NotNil(t, res.body.Error)
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)
	assert.Contains(t, res.body.Error.Message, "replica a, which held its socket, is not on NATS any more")
	assert.Zero(t, b.router.RoutedInFlight())

	// Nobody answers for it any more: not_connected at once.
	res = await(t, b.request("6:farm", gateway.TypePing, nil, time.Minute))
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)
	assert.Less(t, res.took, 30*time.Second)
}

// A replica that hangs keeps its NATS connection, so NATS cannot tell; once it has sent no
// heartbeat for the replica TTL, presence gives it up and the requests waiting on it fail.
func TestAHungReplicasRoutedRequestsFailWhenPresenceGivesItUp(t *testing.T) {
	tc := newTestCluster(t)
	a, proxy := tc.startCuttableReplica("a", gateway.Config{})
	b := tc.startReplica("b")
	t.Cleanup(func() { proxy.setFrozen(false) }) // before the replicas stop: A stops quickly
	c := a.connect(t, "2:mill")
	b.waitComputers(t, "2:mill@a")

	pending := b.request("2:mill", gateway.TypePing, nil, gateway.MaxRequestTimeout)
	c.read() // pending on A
	proxy.setFrozen(true)
	// B asks whether A is still there at every tick, and gets no answer (which proves nothing):
	// the request still waits.
	require.Eventually(t, func() bool {
		return strings.Contains(tc.logs.String(), "trapos.replica.a.alive")
	}, waitLimit, testkit.Poll, "B to ask the frozen A whether it is alive")
	assert.Equal(t, 1, b.router.RoutedInFlight())

	tc.clock.Advance(testReplicaTTL) // A's last heartbeat is now a TTL old
	res := await(t, pending)
	assert.Equal(t, http.StatusNotFound, res.status)
	require.NotNil(t, res.body.Error)
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)
	assert.Contains(t, res.body.Error.Message, "replica a, which held its socket, has sent no heartbeat for 1h0m0s")
	assert.Zero(t, b.router.RoutedInFlight())
}

// A request for a computer this replica knows no claim of reads the claim from the bucket;
// when NATS does not answer that read, the error says so, rather than that nobody holds the
// computer (another replica may).
func TestAClaimThatCannotBeReadIsNotTakenForNone(t *testing.T) {
	tc := newTestCluster(t)
	opClock := clock.NewFake(time.Now())
	tc.routerClock = opClock // A's reads end when the test says, not DefaultOpTimeout later
	a, proxy := tc.startCuttableReplica("a", gateway.Config{})
	t.Cleanup(func() { proxy.setFrozen(false) }) // before the replica stops: it stops quickly
	proxy.setFrozen(true)
	pending := a.request("3:elsewhere", gateway.TypePing, nil, gateway.MaxRequestTimeout)
	// The read's time runs out at the first move of A's clock after it began; it is moved
	// until the answer comes, as it moves for a replica that runs.
	var res apiResult
	require.Eventually(t, func() bool {
		select {
		case res = <-pending:
			return true
		default:
			opClock.Advance(DefaultOpTimeout)
			return false
		}
	}, waitLimit, testkit.Poll, "the request to be answered")
	assert.Equal(t, http.StatusNotFound, res.status)
	require.NotNil(t, res.body.Error)
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)
	assert.Contains(t, res.body.Error.Message, "computer 3:elsewhere is not connected to replica a, and NATS did not say which replica holds it")
}

// An answer that settled a routed request as its time ran out is the request's outcome, not
// a timeout (the waiting select took either when both were there).
func TestARoutedAnswerSettledAsTimeRunsOutIsNotDropped(t *testing.T) {
	r := &Router{pending: map[uint64]*pendingRoute{}}
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "7:"}
	for range 64 { // the waiting select picks one of two ready cases at random
		id, p, err := r.expect(k, "b", true)
		require.NoError(t, err)
		r.mu.Lock()
		r.settleLocked(id, routedResponse{Replica: "b", OK: true}, nil) // the answer arrives
		r.mu.Unlock()
		ctx, cancel := context.WithDeadline(context.Background(), time.Now()) // as time runs out
		err = r.awaitRoute(ctx, id, p, gateway.TypePing)
		cancel()
		require.NoError(t, err)
		assert.True(t, p.resp.OK)
	}
}

func TestPresenceConvergesAndADeadReplicaDropsOut(t *testing.T) {
	tc := newTestCluster(t)
	a, b, c := tc.startReplica("a"), tc.startReplica("b"), tc.startReplica("c")
	a1 := a.connect(t, "1:a")
	a.connect(t, "4:gone")
	b.connect(t, "2:b")
	c.connect(t, "3:c")
	for _, r := range []*replica{a, b, c} {
		r.waitComputers(t, "1:a@a", "2:b@b", "3:c@c", "4:gone@a")
	}

	// A crashes: its claims stay in NATS, but once A has been silent for the TTL nobody lists them.
	tc.crash(a, b, c)
	_, _ = a1.closeCode()
	tc.clock.Advance(testReplicaTTL + time.Minute)
	b.waitComputers(t, "2:b@b", "3:c@c")
	c.waitComputers(t, "2:b@b", "3:c@c")

	// Its computer reconnects to B and shows there, everywhere.
	b.connect(t, "1:a")
	b.waitComputers(t, "1:a@b", "2:b@b", "3:c@c")
	c.waitComputers(t, "1:a@b", "2:b@b", "3:c@c")

	// Silent for twice the TTL, A's leftover claims are withdrawn. The others look just as
	// silent for a moment (the clock jumped); the claims withdrawn from them are written again.
	tc.clock.Advance(testReplicaTTL)
	gone := claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: "4:gone"})
	require.Eventually(t, func() bool {
		_, err := b.router.claims.Get(context.Background(), gone)
		return errors.Is(err, jetstream.ErrKeyNotFound)
	}, waitLimit, testkit.Poll, "A's leftover claim to be withdrawn")
	b.waitComputers(t, "1:a@b", "2:b@b", "3:c@c")
	c.waitComputers(t, "1:a@b", "2:b@b", "3:c@c")
	for _, k := range []string{"1:a", "2:b", "3:c"} {
		require.Eventually(t, func() bool {
			_, err := b.router.claims.Get(context.Background(), claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: k}))
			return err == nil
		}, waitLimit, testkit.Poll, "the claim of "+k+" to be back")
	}

	// A clean stop withdraws C's claims and heartbeat at once: no TTL to wait for.
	c.stop()
	b.waitComputers(t, "1:a@b", "2:b@b")
}

func TestHealthzAndServingOwnComputersWithoutNATS(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	c := a.connect(t, "8:base")
	b.waitComputers(t, "8:base@a")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, healthz(c, a), "nats: connected (replica a, 2 replica(s) alive)")
	}, waitLimit, testkit.Poll, "A's /healthz to count B")

	tc.stopNATS()
	require.Eventually(t, func() bool { return !a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to notice NATS is gone")
	assert.Contains(t, healthz(t, a), "nats: disconnected")

	// A serves its own computer, a new one too, and answers for the rest at once.
	pending := a.request("8:base", gateway.TypePing, nil, waitLimit)
	c.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "8:base"})
	assert.Equal(t, http.StatusOK, await(t, pending).status)
	a.connect(t, "9:new")
	a.waitComputers(t, "8:base@a", "9:new@a")
	res := await(t, a.request("2:elsewhere", gateway.TypePing, nil, time.Minute))
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)
	assert.Contains(t, res.body.Error.Message, "NATS is unreachable")

	// NATS is back: the hello made meanwhile is announced, and B reaches both again.
	tc.startNATS()
	require.Eventually(t, func() bool { return a.nc.IsConnected() && b.nc.IsConnected() }, waitLimit, testkit.Poll, "A and B to reconnect")
	b.waitComputers(t, "8:base@a", "9:new@a")
	assert.Contains(t, healthz(t, a), "nats: connected")
	pending = b.request("8:base", gateway.TypePing, nil, waitLimit)
	c.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "8:base"})
	assert.Equal(t, http.StatusOK, await(t, pending).status)
}

// NATS restarted without its store (a new -sd, a container without its volume) has lost the
// buckets: the replicas create them again and announce their computers, instead of failing
// every heartbeat and claim until they restart.
func TestNATSRestartedWithoutItsStoreGetsTheBucketsBack(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	c := a.connect(t, "8:base")
	b.waitComputers(t, "8:base@a")

	tc.restartNATSWithoutItsStore(a, b)
	require.Eventually(t, func() bool { return a.nc.IsConnected() && b.nc.IsConnected() }, waitLimit, testkit.Poll, "A and B to reconnect")

	// A hello on B after the restart reaches A's list (B's claim, A's watch).
	b.connect(t, "9:new")
	a.waitComputers(t, "8:base@a", "9:new@b")
	// What B routes by is the claim that A writes again in the new bucket (reclaim). B's list
	// is no sign of it: until B reads the new bucket (rewatch), it lists what it read before
	// NATS went, and a request routed after that read and before A's claim is not_connected.
	waitClaim(t, b.router.claims, "8:base", "a")
	b.waitComputers(t, "8:base@a", "9:new@b")
	pending := b.request("8:base", gateway.TypePing, nil, waitLimit)
	c.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "8:base"})
	assert.Equal(t, http.StatusOK, await(t, pending).status)
	assert.Contains(t, tc.logs.String(), "NATS had lost a bucket")
}

// NATS restarted without its store numbers the claims anew, from 1. A socket claimed again
// then must be withdrawn at its new claim's revision when it closes: withdrawn at its claim's
// revision in the lost bucket, a later one, the withdrawal failed, and the claim stayed for as
// long as its replica lived, so that every other replica listed a computer long gone and routed
// its requests to a replica without its socket.
func TestASocketClaimedAgainAfterNATSLostItsStoreIsWithdrawnWhenItCloses(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	// Claims written and withdrawn first, so that the computer's claim has a revision the new
	// bucket does not reach.
	for _, id := range []string{"1:before", "2:before"} {
		_ = a.connect(t, id).conn.Close()
	}
	b.waitComputers(t)
	c := a.connect(t, "8:base")
	b.waitComputers(t, "8:base@a")

	tc.restartNATSWithoutItsStore(a, b)
	waitClaim(t, a.router.claims, "8:base", "a")
	b.waitComputers(t, "8:base@a")

	_ = c.conn.Close()
	b.waitComputers(t)
	assert.Empty(t, claimsInBucket(t, b.router))
}

// A computer whose socket on A outlived NATS's store (half-open, say) says hello on B once NATS
// is back, before A has claimed it again in the new bucket. A closes its socket (4009), as when
// NATS keeps its store: before, A compared its claim's revision in the lost bucket with that of
// B's claim in the new one, which numbers its writes from 1 again, took B's for the older,
// and kept the socket until its ping timeout. A's claim of 8:base is written after "before"
// others, so that B's has a lower revision, or the same one.
func TestASocketReplacedOnAnotherReplicaAfterNATSLostItsStoreCloses(t *testing.T) {
	for _, before := range []int{0, 2} {
		t.Run(fmt.Sprintf("%d claims before", before), func(t *testing.T) {
			// A's reconnection is held where it starts to read the new bucket (rewatch): the hello
			// on B comes before A reads the bucket and claims the computer again (reclaim).
			holdA := newGate()
			watchersStopping = func(replica string, _ bool) {
				if replica == "a" {
					holdA.pass()
				}
			}
			t.Cleanup(func() { watchersStopping = nil }) // after the cluster's own cleanup
			tc := newTestCluster(t)
			a, b := tc.startReplica("a"), tc.startReplica("b")
			t.Cleanup(holdA.open) // before the replicas stop
			for i := range before {
				_ = a.connect(t, fmt.Sprintf("%d:before", i)).conn.Close()
			}
			b.waitComputers(t)
			old := a.connect(t, "8:base")
			b.waitComputers(t, "8:base@a")

			tc.restartNATSWithoutItsStoreHolding(holdA, a, b)
			newer := b.connect(t, "8:base")
			rev := waitClaim(t, b.router.claims, "8:base", "b")
			holdA.open()

			expectReplacedOnB(t, a, b, old, newer, rev)
		})
	}
}

// The same, with the hello on B after A has read the new bucket and found no claim of the
// computer, before A writes it again: A's claim, written over B's, was the later one, so that
// B closed the computer's newer socket with 4009 ("do not reconnect") and the half-open one
// on A kept the computer.
func TestAReplicaClaimingAgainAfterNATSLostItsStoreLeavesAHelloElsewhereMeanwhile(t *testing.T) {
	key := claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: "8:base"})
	holdA := newGate()
	reclaimRead = func(replica, k string) {
		if replica == "a" && k == key {
			holdA.pass()
		}
	}
	t.Cleanup(func() { reclaimRead = nil }) // after the cluster's own cleanup
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	t.Cleanup(holdA.open) // before the replicas stop
	old := a.connect(t, "8:base")
	b.waitComputers(t, "8:base@a")

	tc.restartNATSWithoutItsStoreHolding(holdA, a, b)
	newer := b.connect(t, "8:base")
	rev := waitClaim(t, b.router.claims, "8:base", "b")
	holdA.open()

	expectReplacedOnB(t, a, b, old, newer, rev)
}

// expectReplacedOnB checks that computer 8:base's socket old on a closes as replaced (4009),
// and that its newer socket on b keeps it: listed on b everywhere, reached from a, and claimed
// by b's hello, at revision rev, all along: a's closing socket does not withdraw b's claim
// (its own claim's revision in the lost bucket may be the same number).
func expectReplacedOnB(t *testing.T, a, b *replica, old, newer *computer, rev uint64) {
	t.Helper()
	code, _ := old.closeCode()
	assert.Equal(t, gateway.CloseReplaced, code)
	a.waitComputers(t, "8:base@b")
	b.waitComputers(t, "8:base@b")
	pending := a.request("8:base", gateway.TypePing, nil, waitLimit)
	newer.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "8:base"})
	assert.Equal(t, http.StatusOK, await(t, pending).status)
	a.stop() // waits for a's withdrawals
	e, err := b.router.claims.Get(t.Context(), claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: "8:base"}))
	require.NoError(t, err)
	assert.Equal(t, "b", claimantOf(e))
	assert.Equal(t, rev, e.Revision(), "b's claim was withdrawn and written again")
}

// A replica that stops while NATS is away does not wait for NATS: stopping its bucket
// watchers asks the server to delete their consumers, and with no server each ask waits out
// the library's JetStream timeout (5 s, not configurable), so that SIGTERM took over six
// seconds. Closing the dead connection first ends them at once: the watchers stop on a closed
// connection.
func TestAReplicaStopsAtOnceWhileNATSIsAway(t *testing.T) {
	var stops []bool // for replica a: was its connection closed when its watchers stopped
	var mu sync.Mutex
	watchersStopping = func(replica string, connClosed bool) {
		if replica == "a" {
			mu.Lock()
			stops = append(stops, connClosed)
			mu.Unlock()
		}
	}
	t.Cleanup(func() { watchersStopping = nil }) // after the cluster's own cleanup
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	tc.stopNATS()
	require.Eventually(t, func() bool { return !a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to notice NATS is gone")
	a.stop()
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []bool{true}, stops, "the watchers stopped after the dead connection was closed")
}

func healthz(t testingT, r *replica) string {
	t.Helper()
	resp, err := client().Get(r.srv.URL + "/healthz")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var b []byte
	b, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func TestEscapedTokensAreValidDistinctAndReversible(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	ids := []string{"", "0:", "7:kitchen", "a.b", "a*b", "a>b", "a b", "_41", "A", "\x00\xff", "ü", "a_b", "-"}
	seen := map[string]string{}
	for _, id := range ids {
		tok := escapeToken(id)
		assert.Regexp(t, valid, tok, "id %q", id)
		back, err := unescapeToken(tok)
		require.NoError(t, err)
		assert.Equal(t, id, back)
		if prev, dup := seen[tok]; dup {
			t.Errorf("%q and %q share the token %q", prev, id, tok)
		}
		seen[tok] = id
	}
	k := gateway.Key{AccountID: "local", TraposID: "7:a.b c"}
	back, err := parseClaimKey(claimKey(k))
	require.NoError(t, err)
	assert.Equal(t, k, back)
	assert.Equal(t, "trapos.replica.b_2E1.computer.local.7_3Aa_2Eb_20c", computerSubject("b.1", k))
	assert.Equal(t, "trapos.replica.b_2E1.reply.42", replySubject("b.1", 42))
	assert.Equal(t, "trapos.replica.b_2E1.alive", aliveSubject("b.1"))
}

// Two sockets of one computer say hello here at once, and the older one's Claim arrives last:
// it does not replace the newer socket's, so the newer socket's Release withdraws the claim
// (before, the older hold stayed as the computer's claim, and the other replicas listed the
// computer here for good).
func TestAnOlderSocketsLateClaimKeepsTheNewerOne(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "5:twice"}
	c := gateway.Computer{AccountID: k.AccountID, TraposID: k.TraposID, ConnectedSince: time.Now()}
	a.router.Claim(c, "", 1002)
	a.router.Claim(c, "", 1001)              // the older socket's, late
	a.router.Release(k, 1001, gateway.Bye{}) // the older socket is replaced: its release finds the newer claim
	assert.True(t, a.router.holds(k), "the newer socket still holds the computer")
	b.waitComputers(t, "5:twice@a")
	a.router.Release(k, 1002, gateway.Bye{})
	assert.False(t, a.router.holds(k))
	b.waitComputers(t)
}

// A socket that closes while its claim is being written (its Release finds no revision yet)
// leaves no claim behind, even when the replica's own watcher has applied the claim first
// (then the watcher, finding the computer held, leaves it too): before, the claim stayed, and
// the other replicas listed the computer here for good.
func TestASocketClosedWhileItsClaimIsWrittenLeavesNoClaim(t *testing.T) {
	var a, b *replica
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "5:brief"}
	c := gateway.Computer{AccountID: k.AccountID, TraposID: k.TraposID, ConnectedSince: time.Now()}
	marker := gateway.Computer{AccountID: k.AccountID, TraposID: "9:marker", ConnectedSince: time.Now()}
	claimWritten = func(key string) {
		if key != claimKey(k) {
			return
		}
		// A's watcher applies the bucket in revision order: once it has the marker, written
		// after the claim, it has applied the claim too, while A still held the computer.
		b.router.Claim(marker, "", 1)
		a.waitComputers(t, "9:marker@b")
		a.router.Release(k, 1001, gateway.Bye{}) // the socket closed meanwhile
	}
	t.Cleanup(func() { claimWritten = nil }) // after the cluster's own cleanup
	tc := newTestCluster(t)
	a, b = tc.startReplica("a"), tc.startReplica("b")
	a.router.Claim(c, "", 1001)
	assert.False(t, a.router.holds(k))
	b.waitComputers(t) // its own marker is not listed: no socket holds it
	assert.Equal(t, map[string]string{"9:marker": "b"}, claimsInBucket(t, b.router))
}

// A claim withdrawn by another client right after it is written, before its replica knows its
// revision (a twin of the replica's name deletes it as its own previous run's, twin.go), is
// written again: the replica's watcher could not tell the withdrawal from one of an earlier
// claim, so it left it, and the computer, still connected, was listed nowhere.
func TestAClaimWithdrawnAsItIsWrittenIsWrittenAgain(t *testing.T) {
	var a, b *replica
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "5:kept"}
	c := gateway.Computer{AccountID: k.AccountID, TraposID: k.TraposID, ConnectedSince: time.Now()}
	marker := gateway.Computer{AccountID: k.AccountID, TraposID: "9:marker", ConnectedSince: time.Now()}
	var withdrawn atomic.Bool
	claimWritten = func(key string) {
		if key != claimKey(k) || withdrawn.Swap(true) {
			return
		}
		require.NoError(t, b.router.claims.Delete(t.Context(), key))
		// A's watcher applies the bucket in revision order: once it has the marker, written
		// after the withdrawal, it has applied the withdrawal too, before A knew its claim.
		b.router.Claim(marker, "", 1)
		a.waitComputers(t, "9:marker@b")
	}
	t.Cleanup(func() { claimWritten = nil }) // after the cluster's own cleanup
	tc := newTestCluster(t)
	a, b = tc.startReplica("a"), tc.startReplica("b")
	a.router.Claim(c, "", 1001)
	require.True(t, withdrawn.Load())
	b.waitComputers(t, "5:kept@a")
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Equal(ct, map[string]string{"5:kept": "a", "9:marker": "b"}, claimsInBucket(ct, b.router))
	}, waitLimit, testkit.Poll)
}

// overwriteAsTwin writes k's claim again as it stands, as a twin of its replica's name does
// for a socket of its own on the same computer (twin.go), and returns the new revision.
func overwriteAsTwin(t *testing.T, kv jetstream.KeyValue, k gateway.Key) uint64 {
	t.Helper()
	e, err := kv.Get(t.Context(), claimKey(k))
	require.NoError(t, err)
	rev, err := kv.Put(t.Context(), claimKey(k), e.Value())
	require.NoError(t, err)
	return rev
}

// A claim in a replica's name written over the claim of a socket it holds (a twin of its name
// with a socket of the same computer) becomes the claim the replica withdraws: before, it kept
// the older revision, its withdrawal failed, and the other replicas listed the computer on it
// for good.
func TestAClaimOverwrittenInTheReplicasNameIsWithdrawnWithItsSocket(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "5:both"}
	a.router.Claim(gateway.Computer{AccountID: k.AccountID, TraposID: k.TraposID, ConnectedSince: time.Now()}, "", 1001)
	b.waitComputers(t, "5:both@a")
	overwriteAsTwin(t, b.router.claims, k)
	// A's watcher applies the bucket in revision order: once it has the marker, written after
	// the twin's claim, it has applied that claim too, while A held the computer.
	b.router.Claim(gateway.Computer{AccountID: k.AccountID, TraposID: "9:marker", ConnectedSince: time.Now()}, "", 1)
	a.waitComputers(t, "9:marker@b")
	a.router.Release(k, 1001, gateway.Bye{}) // its socket closes
	b.waitComputers(t)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Equal(ct, map[string]string{"9:marker": "b"}, claimsInBucket(ct, b.router))
	}, waitLimit, testkit.Poll)
}

// The same, with the twin's claim written while the replica's own is, before it knows its
// revision (its watcher leaves a claim being written alone): reading the key back after
// writing, it takes the later claim in its name as its own.
func TestAClaimOverwrittenInTheReplicasNameAsItIsWrittenIsWithdrawnWithItsSocket(t *testing.T) {
	var a, b *replica
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "5:both"}
	var overwritten atomic.Bool
	claimWritten = func(key string) {
		if key != claimKey(k) || overwritten.Swap(true) {
			return
		}
		overwriteAsTwin(t, b.router.claims, k)
		b.router.Claim(gateway.Computer{AccountID: k.AccountID, TraposID: "9:marker", ConnectedSince: time.Now()}, "", 1)
		a.waitComputers(t, "9:marker@b") // A's watcher has applied the twin's claim (above)
	}
	t.Cleanup(func() { claimWritten = nil }) // after the cluster's own cleanup
	tc := newTestCluster(t)
	a, b = tc.startReplica("a"), tc.startReplica("b")
	a.router.Claim(gateway.Computer{AccountID: k.AccountID, TraposID: k.TraposID, ConnectedSince: time.Now()}, "", 1001)
	require.True(t, overwritten.Load())
	b.waitComputers(t, "5:both@a")
	a.router.Release(k, 1001, gateway.Bye{})
	b.waitComputers(t)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Equal(ct, map[string]string{"9:marker": "b"}, claimsInBucket(ct, b.router))
	}, waitLimit, testkit.Poll)
}

func TestARestartedReplicaWithdrawsTheClaimsOfItsPreviousRun(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	a.connect(t, "1:left")
	b.waitComputers(t, "1:left@a")
	a.kill() // its claim stays behind

	tc.startReplica("a") // the same name, as after a crash and restart
	b.waitComputers(t)
}

func TestANATSServerWithoutJetStreamIsNamed(t *testing.T) {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, NoLog: true, NoSigs: true})
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(waitLimit))
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	logger := slog.New(slog.DiscardHandler)
	nc, err := Connect(context.Background(), ConnOptions{URL: ns.ClientURL()}, logger)
	require.NoError(t, err)
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err = New(ctx, nc, Config{Replica: "a"}, logger)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "start nats-server with -js")
}

func TestConnectNamesTheURLWithoutItsSecret(t *testing.T) {
	_, err := Connect(context.Background(), ConnOptions{URL: "nats://bob:s3cret@127.0.0.1:1"}, slog.New(slog.DiscardHandler))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connect to NATS at nats://bob:xxxxx@127.0.0.1:1")
	assert.NotContains(t, err.Error(), "s3cret")
	assert.Equal(t, "nats://token:xxxxx@h:4222,nats://h2:4222", RedactURL("nats://t0ken@h:4222,nats://h2:4222"))

	// A URL that does not parse, or has no scheme (the NATS client reads it as nats://…), keeps
	// its secret too.
	for raw, named := range map[string]string{
		"nats://bob:s3cret@[::1":                 "connect to NATS: --nats (SANDBOX_NATS_URL) holds a URL that does not parse",
		"nats://bob:s3cret%zz@127.0.0.1:1":       "connect to NATS: --nats (SANDBOX_NATS_URL) holds a URL that does not parse",
		"bob:s3cret@127.0.0.1:1":                 "connect to NATS at nats://bob:xxxxx@127.0.0.1:1",
		"127.0.0.1:1, nats://s3cret@127.0.0.1:2": "connect to NATS at 127.0.0.1:1,nats://token:xxxxx@127.0.0.1:2",
	} {
		_, err := Connect(context.Background(), ConnOptions{URL: raw}, slog.New(slog.DiscardHandler))
		require.Error(t, err, raw)
		assert.Contains(t, err.Error(), named, raw)
		assert.NotContains(t, err.Error(), "s3cret", raw)
	}
}

func TestAReplicaCutOffFromNATSServesItsOwnAndCatchesUpWhenBack(t *testing.T) {
	tc := newTestCluster(t)
	a, proxy := tc.startCuttableReplica("a", gateway.Config{})
	b := tc.startReplica("b")
	mine := a.connect(t, "1:mine")
	moved := a.connect(t, "2:moved")
	b.waitComputers(t, "1:mine@a", "2:moved@a")

	proxy.setCut(true)
	require.Eventually(t, func() bool { return !a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to notice NATS is gone")
	assert.Contains(t, healthz(t, a), "nats: disconnected")

	// A serves its own computers meanwhile, and takes a new one.
	pending := a.request("1:mine", gateway.TypePing, nil, waitLimit)
	mine.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "1:mine"})
	assert.Equal(t, http.StatusOK, await(t, pending).status)
	a.connect(t, "3:new")
	// Meanwhile 2:moved says hello on B: a later claim than A's.
	movedOnB := b.connect(t, "2:moved")
	b.waitComputers(t, "1:mine@a", "2:moved@b")

	// Back: A reads the claims again, closes its older socket of 2:moved, and announces 3:new.
	proxy.setCut(false)
	code, reason := moved.closeCode()
	assert.Equal(t, gateway.CloseReplaced, code)
	assert.Equal(t, "replaced", reason)
	b.waitComputers(t, "1:mine@a", "2:moved@b", "3:new@a")
	a.waitComputers(t, "1:mine@a", "2:moved@b", "3:new@a")
	pending = a.request("2:moved", gateway.TypePing, nil, waitLimit)
	movedOnB.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "2:moved"})
	assert.Equal(t, http.StatusOK, await(t, pending).status)
}

// A request routed to another replica when the asking replica loses NATS fails at once with
// not_connected naming the lost connection: its answer could no longer arrive (the reply
// subscription is gone), and it waited out its own timeout (up to a minute), ending as a
// "timeout" of the computer's.
func TestARoutedRequestFailsAtOnceWhenTheAskerLosesNATS(t *testing.T) {
	tc := newTestCluster(t)
	a, proxy := tc.startCuttableReplica("a", gateway.Config{})
	b := tc.startReplica("b")
	c := b.connect(t, "7:far")
	a.waitComputers(t, "7:far@b")

	pending := a.request("7:far", gateway.TypePing, nil, time.Minute)
	require.Equal(t, gateway.TypePing, c.read().Type, "the routed request reached the computer")
	proxy.setCut(true)
	res := await(t, pending)
	assert.Equal(t, http.StatusNotFound, res.status)
	require.NotNil(t, res.body.Error)
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)
	assert.Contains(t, res.body.Error.Message, "NATS became unreachable while replica b, which holds its socket, was being asked")
	assert.True(t, strings.HasSuffix(res.body.Error.Message, hostcomputer.MayHaveDoneIt),
		"the computer had the request, and may have run it: %q", res.body.Error.Message)
	assert.Zero(t, a.router.RoutedInFlight())
}

// The router knows a computer's sockets here by the gateway's hold numbers, not by session: a
// Release for an older socket of a computer keeps the newer one's claim, and a later claim on
// another replica evicts only the hold it was judged against (gateway.Local.Evict).
// A computer that leaves a replica while the replica is cut off from NATS leaves a claim its
// replica could not withdraw then: once NATS is back, the replica withdraws it, instead of the
// others listing the computer on it (and answering not_connected for it) for as long as it runs.
func TestAClaimLeftWhileCutOffIsWithdrawnWhenNATSIsBack(t *testing.T) {
	tc := newTestCluster(t)
	a, proxy := tc.startCuttableReplica("a", gateway.Config{})
	b := tc.startReplica("b")
	gone := a.connect(t, "4:gone")
	a.connect(t, "5:stays")
	b.waitComputers(t, "4:gone@a", "5:stays@a")

	proxy.setCut(true)
	require.Eventually(t, func() bool { return !a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to notice NATS is gone")
	_ = gone.conn.Close()
	a.waitComputers(t, "5:stays@a")

	proxy.setCut(false)
	b.waitComputers(t, "5:stays@a")
	assert.Equal(t, map[string]string{"5:stays": "a"}, claimsInBucket(t, b.router))
}

func TestClaimsAreReleasedByHold(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "5:held"}
	c := gateway.Computer{AccountID: k.AccountID, TraposID: k.TraposID, ConnectedSince: time.Now()}
	a.router.Claim(c, "", 1001)
	a.router.Claim(c, "", 1002) // a newer socket of the same computer, here
	a.router.Release(k, 1001, gateway.Bye{})
	assert.True(t, a.router.holds(k), "the older socket's release keeps the newer claim")
	b.waitComputers(t, "5:held@a")
	a.router.Release(k, 1002, gateway.Bye{})
	assert.False(t, a.router.holds(k))
	b.waitComputers(t)
}
