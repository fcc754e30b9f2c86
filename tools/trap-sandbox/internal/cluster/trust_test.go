package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// busClient is another client of the test's NATS server (which asks for no credentials): what
// anyone who reaches an unfenced bus can do.
func (tc *testCluster) busClient(t *testing.T) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(tc.url(), nats.Name("rogue"))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// The campaign's rogue: a client on the bus that answers every request it sees, at once, with
// a forged file. The replicas take an answer only from the replica they asked, so every read
// gets the computer's own file, and each forged answer is logged.
func TestAnswersFromAnotherBusClientAreIgnored(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	c := a.connect(t, "4:vault")
	b.waitComputers(t, "4:vault@a")

	rogue := tc.busClient(t)
	var forged atomic.Int64
	answers := []string{
		`{"ok":true,"type":"fs.read","payload":{"data":"forged","size":6,"eof":true}}`,                   // as before replicas named themselves
		`{"replica":"rogue","ok":true,"type":"fs.read","payload":{"data":"forged","size":6,"eof":true}}`, // naming itself
		`forged`, // not even JSON
	}
	_, err := rogue.Subscribe("trapos.>", func(m *nats.Msg) {
		if m.Reply != "" && !strings.HasSuffix(m.Subject, ".alive") {
			_ = m.Respond([]byte(answers[forged.Add(1)%int64(len(answers))]))
		}
	})
	require.NoError(t, err)
	require.NoError(t, rogue.Flush())

	// Each time, the computer answers only once the rogue's answer has reached B (and been
	// ignored): the rogue is always first, as it was for most requests in the campaign.
	const reads = 20
	ignored := func() int {
		return strings.Count(tc.logs.String(), "ignored an answer to a routed request that does not come from the replica asked")
	}
	for i := range reads {
		pending := b.request("4:vault", "fs.read", map[string]any{"path": "/notes.txt"}, waitLimit)
		require.Eventually(t, func() bool { return ignored() == i+1 }, waitLimit, testkit.Poll, "B to ignore the rogue's answer")
		c.answerRequest(pending, "fs.read", map[string]any{"data": "diamonds at -12 64 300\n", "size": 23, "eof": true})
		res := await(t, pending)
		require.Equal(t, http.StatusOK, res.status, "read %d: %+v", i, res.body.Error)
		assert.JSONEq(t, `{"data":"diamonds at -12 64 300\n","size":23,"eof":true}`, string(res.body.Payload), "read %d", i)
	}
	assert.Equal(t, int64(reads), forged.Load(), "the rogue answered every routed request (the bus is not fenced here)")
	assert.Zero(t, b.router.RoutedInFlight())
}

// A client of the bus floods a replica with routed requests: each was a goroutine of its own
// at once, as fast as NATS delivered them, however many came. The replica answers
// MaxBusAnswers of them at once; each one past them is answered busy at once, and once those
// it answers are done it answers again.
func TestABusFloodOfRoutedRequestsIsAnsweredBusyPastTheSlots(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int64
	answerStarting = func() { started.Add(1); <-release }
	t.Cleanup(func() { answerStarting = nil }) // after the cluster's own cleanup
	tc := newTestCluster(t)
	const slots, flood = 8, 200
	tc.maxBusAnswers = slots
	tc.startReplica("a")
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before A stops, which waits for the requests' goroutines

	bus := tc.busClient(t)
	inbox := nats.NewInbox()
	answers, err := bus.SubscribeSync(inbox + ".>")
	require.NoError(t, err)
	body, err := json.Marshal(routedRequest{Type: gateway.TypePing, Payload: protocol.EmptyPayload})
	require.NoError(t, err)
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "7:flood"}
	for i := range flood {
		require.NoError(t, bus.PublishMsg(&nats.Msg{Subject: computerSubject("a", k), Reply: fmt.Sprintf("%s.%d", inbox, i), Data: body}))
	}
	answer := func() routedResponse {
		t.Helper()
		m, err := answers.NextMsg(waitLimit)
		require.NoError(t, err, "an answer")
		var rr routedResponse
		require.NoError(t, json.Unmarshal(m.Data, &rr))
		return rr
	}
	for i := range flood - slots {
		rr := answer()
		require.NotNil(t, rr.GatewayError, "answer %d", i)
		require.Equal(t, protocol.CodeBusy, rr.GatewayError.Code, "answer %d: %s", i, rr.GatewayError.Message)
		assert.Contains(t, rr.GatewayError.Message, "replica a answers 8 messages from the bus at once already")
	}
	require.Eventually(t, func() bool { return started.Load() == slots }, waitLimit, testkit.Poll)
	unblock()
	for range slots {
		rr := answer()
		require.NotNil(t, rr.GatewayError)
		assert.Equal(t, protocol.CodeNotConnected, rr.GatewayError.Code, "answered: the computer is not here")
	}
	assert.Equal(t, int64(slots), started.Load(), "goroutines answering at once")

	// The slots are free again.
	m, err := bus.Request(computerSubject("a", k), body, waitLimit)
	require.NoError(t, err)
	var rr routedResponse
	require.NoError(t, json.Unmarshal(m.Data, &rr))
	assert.Equal(t, protocol.CodeNotConnected, rr.GatewayError.Code)
}

// checkingLocal is a replica's gateway.Local whose revocation checks wait for release,
// counting those under way (the most at once) and those done.
type checkingLocal struct {
	gateway.Local
	release              chan struct{}
	running, most, heard atomic.Int64
}

func (l *checkingLocal) RevocationHeard(ctx context.Context, _ string) {
	n := l.running.Add(1)
	for m := l.most.Load(); n > m && !l.most.CompareAndSwap(m, n); m = l.most.Load() {
	}
	select {
	case <-l.release:
	case <-ctx.Done():
	}
	l.running.Add(-1)
	l.heard.Add(1)
}

// A client of the bus floods it with revocations of a credential held here (the claims on the
// bus carry it): each was a goroutine of its own at once, each waiting on the account store.
// A replica checks maxRevocationChecks at once; the rest wait in NATS's buffer of the
// subscription, and each is checked in its turn: none is dropped.
func TestABusFloodOfRevocationsIsCheckedAFewAtATime(t *testing.T) {
	tc := newTestCluster(t)
	opened := tc.openRouter("a", tc.url(), nil)
	require.NoError(t, opened.err)
	r := opened.router
	local := &checkingLocal{release: make(chan struct{})}
	r.Attach(local)
	var once sync.Once
	unblock := func() { once.Do(func() { close(local.release) }) }
	t.Cleanup(r.Close)
	t.Cleanup(unblock) // before the router closes

	bus := tc.busClient(t)
	const flood = 100
	for range flood {
		require.NoError(t, PublishRevocation(bus, "cred-held-here"))
	}
	require.NoError(t, bus.Flush())
	waiting := func() int {
		msgs, _, err := r.revSub.Pending()
		require.NoError(t, err)
		return msgs
	}
	// Checks under way; the rest wait in the subscription's buffer (NATS counts the one its
	// goroutine holds, waiting for a slot, until it is handled).
	require.Eventually(t, func() bool {
		return local.running.Load() == maxRevocationChecks && waiting() == flood-maxRevocationChecks
	}, waitLimit, testkit.Poll, "checks under way, the rest waiting")
	unblock()
	require.Eventually(t, func() bool { return local.heard.Load() == flood }, waitLimit, testkit.Poll, "every revocation checked")
	assert.Equal(t, int64(maxRevocationChecks), local.most.Load(), "checks at once")
}

// putClaim writes a claim on k in replica's name straight into the bucket, as any client of
// an unfenced bus can.
func putClaim(t *testing.T, nc *nats.Conn, replica string, k gateway.Key) {
	t.Helper()
	putRawClaim(t, nc, k, string(encodeClaim(replica, gateway.Computer{AccountID: k.AccountID, TraposID: k.TraposID, ConnectedSince: time.Now()}, "")))
}

// A claim counts only when its replica is alive: a claim forged in the name of a replica that
// sends no heartbeat closes no socket, and the replica holding it claims it again so the others
// still reach it. Once heartbeats come in that name, its claims count (the NATS account, not
// this check, keeps other clients from writing them: docs/scale-out.md).
func TestAClaimCountsOnlyWhenItsReplicaIsAlive(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "3:miner"}
	c := a.connect(t, k.TraposID)
	b.waitComputers(t, "3:miner@a")
	rogue := tc.busClient(t)

	putClaim(t, rogue, "evil", k)
	require.Eventually(t, func() bool {
		return strings.Contains(tc.logs.String(), "ignored a claim on a computer held here, by a replica that sends no heartbeat") &&
			claimHolder(t, a, k) == "a"
	}, waitLimit, testkit.Poll, "A to claim 3:miner again")
	b.waitComputers(t, "3:miner@a")
	pending := b.request(k.TraposID, gateway.TypePing, nil, waitLimit)
	c.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": k.TraposID})
	assert.Equal(t, http.StatusOK, await(t, pending).status, "the socket is still open, and B reaches it")

	// Heartbeats in the name of "evil": now its claim is a live replica's, and newest wins.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	js, err := jetstream.New(rogue)
	require.NoError(t, err)
	replicas, err := js.KeyValue(ctx, ReplicasBucket)
	require.NoError(t, err)
	_, err = replicas.Put(ctx, escapeToken("evil"), []byte(`{"replica":"evil"}`))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return a.router.alive("evil") }, waitLimit, testkit.Poll, "A to count evil alive")
	putClaim(t, rogue, "evil", k)
	code, _ := c.closeCode()
	assert.Equal(t, gateway.CloseReplaced, code)
}

// claimHolder is the replica named by k's claim in the bucket, read through r.
func claimHolder(t *testing.T, r *replica, k gateway.Key) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	e, err := r.router.claims.Get(ctx, claimKey(k))
	if err != nil {
		return ""
	}
	var c claim
	require.NoError(t, json.Unmarshal(e.Value(), &c))
	return c.Replica
}

// A routed request from anyone on the bus is held to the host API's rule before the computer
// sees it: its payload is a JSON object (or nothing, null, []), as Gateway.Request requires
// of a request made on the replica itself.
func TestARoutedRequestsPayloadMustBeAnObject(t *testing.T) {
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	c := a.connect(t, "5:gate")
	rogue := tc.busClient(t)
	subject := computerSubject("a", gateway.Key{AccountID: gateway.LocalAccount, TraposID: "5:gate"})

	for _, payload := range []string{`5`, `"fs"`, `[1]`, `true`} {
		m, err := rogue.Request(subject, []byte(`{"type":"fs.read","payload":`+payload+`}`), waitLimit)
		require.NoError(t, err, payload)
		var rr routedResponse
		require.NoError(t, json.Unmarshal(m.Data, &rr), payload)
		require.NotNil(t, rr.GatewayError, "%s: %s", payload, m.Data)
		assert.Equal(t, "the payload must be a JSON object", rr.GatewayError.Message, payload)
	}

	// None of them reached the computer: the first request it reads is the next one, and null
	// is sent as {}.
	answered := make(chan *nats.Msg, 1)
	go func() {
		m, err := rogue.Request(subject, []byte(`{"type":"ping","payload":null}`), waitLimit)
		assert.NoError(t, err)
		answered <- m
	}()
	f := c.answerNext(gateway.TypePing, map[string]any{"traposId": "5:gate"})
	assert.JSONEq(t, `{}`, string(f.Payload))
	m := <-answered
	require.NotNil(t, m)
	assert.Contains(t, string(m.Data), `"ok":true`)
}

// putRawClaim writes value under k's key in ClaimsBucket, as any client of an unfenced bus can
// (an operator's kv put with a typo), and returns its revision.
func putRawClaim(t *testing.T, nc *nats.Conn, k gateway.Key, value string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, ClaimsBucket)
	require.NoError(t, err)
	rev, err := kv.Put(ctx, claimKey(k), []byte(value))
	require.NoError(t, err)
	return rev
}

// A claim that cannot be read (not JSON, or naming no replica) on a computer held here is
// not left to hide the computer: the replica holding it claims it again at once and says so,
// naming the key and not what was written there; the other replicas, and one started after,
// find the computer.
func TestAnUnreadableClaimIsClaimedOverByItsHolder(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "6:kitchen"}
	c := a.connect(t, k.TraposID)
	b.waitComputers(t, "6:kitchen@a")
	rogue := tc.busClient(t)

	for i, value := range []string{`{"oops":1}`, `garbage not json`, `{"replica":""}`} {
		rev := putRawClaim(t, rogue, k, value)
		require.Eventually(t, func() bool {
			e, err := a.router.claims.Get(t.Context(), claimKey(k))
			return err == nil && e.Revision() > rev && claimantOf(e) == "a"
		}, waitLimit, testkit.Poll, "%s: A to claim 6:kitchen again", value)
		logs := tc.logs.String()
		assert.Equal(t, i+1, strings.Count(logs, `msg="ignored a claim that cannot be read (not JSON, or naming no replica) on a computer held here`), value)
		assert.Contains(t, logs, "key="+claimKey(k), value)
		assert.NotContains(t, logs, value, "what was written is not logged")
	}
	g := tc.startReplica("g")
	g.waitComputers(t, "6:kitchen@a")
	pending := g.request(k.TraposID, gateway.TypePing, nil, waitLimit)
	c.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": k.TraposID})
	assert.Equal(t, http.StatusOK, await(t, pending).status, "the socket is still open, and G reaches it")
}

// A claim that cannot be read, written while the holder's own claim is being written, is
// claimed over all the same: the watcher read it before the holder knew its claim's revision
// (so it could not tell it was later), and the holder's read-back finds it. Before, the
// read-back took it for a claim by a replica named "" and doubted it, so the computer was
// found nowhere for a heartbeat interval and the log said a replica sends no heartbeat.
func TestAnUnreadableClaimWrittenAsTheHoldersClaimIsWrittenIsClaimedOver(t *testing.T) {
	var a, b *replica
	var rogue *nats.Conn
	var rogueRev atomic.Uint64
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "6:pantry"}
	marker := gateway.Computer{AccountID: k.AccountID, TraposID: "9:marker", ConnectedSince: time.Now()}
	claimWritten = func(key string) {
		if key != claimKey(k) || rogueRev.Load() != 0 {
			return
		}
		rogueRev.Store(putRawClaim(t, rogue, k, `{"replica":""}`))
		// A's watcher applies the bucket in revision order: once it has the marker, written
		// after the rogue claim, it has applied that too, before A knew its own claim.
		b.router.Claim(marker, "", 1)
		a.waitComputers(t, "9:marker@b")
	}
	t.Cleanup(func() { claimWritten = nil }) // after the cluster's own cleanup
	tc := newTestCluster(t)
	a, b = tc.startReplica("a"), tc.startReplica("b")
	rogue = tc.busClient(t)
	a.router.Claim(gateway.Computer{AccountID: k.AccountID, TraposID: k.TraposID, ConnectedSince: time.Now()}, "", 1001)
	require.NotZero(t, rogueRev.Load())
	require.Eventually(t, func() bool {
		e, err := a.router.claims.Get(t.Context(), claimKey(k))
		return err == nil && e.Revision() > rogueRev.Load() && claimantOf(e) == "a"
	}, waitLimit, testkit.Poll, "A to claim 6:pantry again")
	b.waitComputers(t, "6:pantry@a")
	logs := tc.logs.String()
	assert.Equal(t, 1, strings.Count(logs, `msg="ignored a claim that cannot be read (not JSON, or naming no replica) on a computer held here`))
	assert.NotContains(t, logs, "sends no heartbeat")
}

// A claim by a replica that sends no heartbeat, withdrawn (by a sweep: its claimant never heard
// from) before the holder settled its doubt, is logged all the same when the holder claims the
// computer again.
func TestADoubtedClaimWithdrawnBeforeItIsSettledIsLogged(t *testing.T) {
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "3:miner"}
	a.connect(t, k.TraposID)
	waitClaim(t, a.router.claims, k.TraposID, "a")
	release := holdBeats(t, a.router) // no heartbeat tick settles the doubt meanwhile
	defer release()
	rogue := tc.busClient(t)

	putClaim(t, rogue, "z", k)
	require.Eventually(t, func() bool {
		a.router.mu.Lock()
		defer a.router.mu.Unlock()
		_, ok := a.router.doubted[k]
		return ok
	}, waitLimit, testkit.Poll, "A to doubt z's claim")
	e, err := a.router.claims.Get(t.Context(), claimKey(k))
	require.NoError(t, err)
	require.NoError(t, a.router.claims.Delete(t.Context(), claimKey(k), jetstream.LastRevision(e.Revision())))
	waitClaim(t, a.router.claims, k.TraposID, "a")
	assert.Contains(t, tc.logs.String(), "ignored a claim on a computer held here, by a replica that sends no heartbeat")
	assert.Contains(t, tc.logs.String(), "claimant=z")
}

// putRawHeartbeat writes value under name's key in ReplicasBucket, as any client of an
// unfenced bus can (an operator's kv put with a typo).
func putRawHeartbeat(t *testing.T, nc *nats.Conn, name, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, ReplicasBucket)
	require.NoError(t, err)
	_, err = kv.Put(ctx, escapeToken(name), []byte(value))
	require.NoError(t, err)
}

// A value in the heartbeats' bucket that is not a heartbeat is logged as what it is, once per
// key while it stays so, and neither taken for a replica of an older trap-sandbox nor for a
// sign of life; accounts remove --nats does not name it among the older replicas either.
func TestAnUnreadableHeartbeatIsLoggedAsSuch(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	require.Eventually(t, func() bool { return a.router.alive("b") }, waitLimit, testkit.Poll, "A to count B alive")
	rogue := tc.busClient(t)
	unreadable := func(key string) int {
		return strings.Count(tc.logs.String(), `msg="cannot read the heartbeat under a key of trapos_replicas (not JSON, or naming no replica): ignored; another NATS client writes heartbeats? Fence the replicas' buckets (docs/scale-out.md, Security)" replica=a component=cluster key=`+key+"\n")
	}
	// seen makes sure that A's watcher has applied every write before it: one more heartbeat,
	// readable, in another name.
	seen := 0
	applied := func() {
		seen++
		name := fmt.Sprintf("marker%d", seen)
		putRawHeartbeat(t, rogue, name, `{"replica":"`+name+`","closesRemoved":true}`)
		require.Eventually(t, func() bool { return a.router.alive(name) }, waitLimit, testkit.Poll, "A to read %s", name)
	}

	putRawHeartbeat(t, rogue, "zz", `garbage hb`)
	putRawHeartbeat(t, rogue, "zz", `{"oops":1}`)
	// B's heartbeats wait while garbage is under its key: the bucket keeps one revision a key,
	// so B's next heartbeat would replace the garbage before A's watcher was sent it, and A
	// would never see it (under load it did not: 0 logged).
	releaseB := holdBeats(t, b.router)
	putRawHeartbeat(t, rogue, "b", `garbage`)
	applied()
	assert.Equal(t, 1, unreadable("zz"), "once while it stays unreadable")
	assert.Equal(t, 1, unreadable("b"))
	assert.NotContains(t, tc.logs.String(), "another replica runs an older trap-sandbox")
	assert.False(t, a.router.alive("zz"), "no sign of life")
	older, err := OlderReplicas(t.Context(), rogue)
	require.NoError(t, err)
	assert.Empty(t, older)

	// B's next heartbeat makes its key readable again; another bad write is logged again.
	releaseB()
	require.Eventually(t, func() bool {
		e, err := b.router.replicas.Get(t.Context(), escapeToken("b"))
		if err != nil {
			return false
		}
		_, ok := readHeartbeat(e.Value())
		return ok
	}, waitLimit, testkit.Poll, "B to write its heartbeat again")
	applied()
	holdBeats(t, b.router) // released at the test's end: the garbage stays under B's key
	putRawHeartbeat(t, rogue, "b", `garbage`)
	applied()
	assert.Equal(t, 2, unreadable("b"))
	assert.True(t, a.router.alive("b"))
}

// Whatever anyone on an unfenced bus publishes on a replica's subjects and on trapos.revoked
// (not JSON, JSON nested past the decoder's limit, a subject cut short or with a bad escape,
// an id out of range, fields of the wrong type) is refused or ignored: a routed request that
// awaits an answer is told why, nothing reaches the computer, nothing is closed, and the
// replica goes on routing. A panic in a handler would end the test binary.
func TestMalformedMessagesOnTheBusLeaveTheReplicaServing(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "5:gate"}
	c := a.connect(t, k.TraposID)
	b.waitComputers(t, "5:gate@a")
	rogue := tc.busClient(t)

	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	own, held := replicaSubjects("a"), computerSubject("a", k)
	// Asked with a reply subject: each is answered, by replica a, with the reason.
	for _, m := range []struct{ subject, body string }{
		{own + "computer", `{"type":"ping"}`},
		{own + "computer.local", `{"type":"ping"}`},
		{own + "computer.local.5_Zgate", `{"type":"ping"}`},
		{own + "computer.local.5_3", `{"type":"ping"}`},
		{held, `not json`},
		{held, ``},
		{held, `{}`},
		{held, `{"type":5}`},
		{held, `{"type":"ping","payload":` + deep + `}`},
		{held, `{"type":"ping","timeoutMs":"soon"}`},
		{held, `{"type":"ping","payload":{}}` + ` trailing`},
	} {
		reply, err := rogue.Request(m.subject, []byte(m.body), waitLimit)
		require.NoError(t, err, "%s %.40s", m.subject, m.body)
		var rr routedResponse
		require.NoError(t, json.Unmarshal(reply.Data, &rr), "%s", reply.Data)
		assert.Equal(t, "a", rr.Replica, "%s %.40s", m.subject, m.body)
		assert.False(t, rr.OK, "%s %.40s", m.subject, m.body)
		assert.NotNil(t, rr.GatewayError, "%s %.40s: %s", m.subject, m.body, reply.Data)
	}
	// Told, with no one to answer: each is dropped.
	for _, m := range []struct{ subject, body string }{
		{held, `{"type":"ping","payload":{}}`}, // a routed request without a reply subject
		{own + "reply", `{}`},
		{own + "reply.x", `{"replica":"a","ok":true}`},
		{own + "reply.18446744073709551616", `{"replica":"a","ok":true}`},
		{own + "reply.1", `not json`},
		{own + "cancel", ``},
		{own + "cancel", `not a reply subject`},
		{own + "alive", ``},
		{own + "teleport.x", `{}`},
		{RevocationSubject, `not json`},
		{RevocationSubject, `{}`},
		{RevocationSubject, `{"credential":5}`},
		{RevocationSubject, `{"credential":"tsc_nobody"}`},
		{RevocationSubject, `{"credential":` + deep + `}`},
	} {
		require.NoError(t, rogue.Publish(m.subject, []byte(m.body)), "%s %.40s", m.subject, m.body)
	}
	require.NoError(t, rogue.Flush())
	// trapos.revoked has a subscription of its own: both replicas read the four that name no
	// credential (the made-up one is no socket's here: not even the store is asked).
	const noCredential = "ignored a revocation that names no credential"
	require.Eventually(t, func() bool { return strings.Count(tc.logs.String(), noCredential) == 8 }, waitLimit, testkit.Poll,
		"both replicas to read trapos.revoked's messages")

	// Replica a still routes: b's request reaches the computer, which read nothing before it.
	pending := b.request(k.TraposID, gateway.TypePing, nil, waitLimit)
	f := c.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": k.TraposID})
	assert.JSONEq(t, `{}`, string(f.Payload))
	assert.Equal(t, http.StatusOK, await(t, pending).status)
	assert.Zero(t, a.router.RoutedInFlight())
	assert.Zero(t, b.router.RoutedInFlight())
	a.waitComputers(t, "5:gate@a")
}
