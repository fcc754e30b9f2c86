package cluster

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// lookAlike is a traposId with a no-break space, which a list shows as 7:kit\xa0chen: printed
// as it is, it reads as 7:kit chen.
const lookAlike = "7:kit\u00a0chen"

// A replica's own words about a computer held by another (here: its holder has stopped) name
// it as the lists show it, as a single gateway's do.
func TestAnotherReplicasComputerIsNamedAsTheListsShowIt(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	c := b.connect(t, lookAlike)
	a.waitComputers(t, lookAlike+"@b")
	// A lists it in its shown form, and takes that form back, as the holder does.
	resp, err := client().Get(a.srv.URL + hostapi.ComputersPath)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Contains(t, string(body), `"shown":"7:kit\\xa0chen"`)
	pending := a.request(cctext.ShowTraposID(lookAlike), "fs.list", map[string]any{"path": "/"}, waitLimit)
	c.answerRequest(pending, "fs.list", map[string]any{"entries": []any{}})
	require.Equal(t, http.StatusOK, await(t, pending).status)
	b.stop()
	a.waitComputers(t)

	res := await(t, a.request(lookAlike, "fs.list", map[string]any{"path": "/"}, waitLimit))
	require.Equal(t, http.StatusNotFound, res.status)
	require.NotNil(t, res.body.Error)
	assert.Contains(t, res.body.Error.Message, "computer "+cctext.ShowTraposID(lookAlike)+" is not connected: replica b, which held its socket, has stopped")
	assert.NotContains(t, res.body.Error.Message, "\u00a0")
}

// bye sends the computer's bye (reason, and the new traposId to for a relabel) and reads the
// gateway's answer.
func (c *computer) bye(reason, to string) {
	c.t.Helper()
	c.send(map[string]any{"event": "computer_request", "traposSenderId": c.id, "messageId": "bye-1",
		"type": gateway.TypeBye, "payload": map[string]any{"reason": reason, "traposId": to}})
	f := c.read()
	require.Equal(c.t, "bye-1", f.MessageID)
}

// A computer that says bye on one replica ends a live screen watched through another with a
// single gateway's words: relabelled, with the new traposId the web console's view follows
// (relabelledTo); stopped by its player; reconnecting. It read "computer 7:old disconnected",
// and the view waited for the old id for good.
func TestAByeEndsALiveScreenThroughAnotherReplicaAsOnOneGateway(t *testing.T) {
	for _, tt := range []struct {
		reason, to string
		want       protocol.Error
	}{
		{gateway.ByeRelabelled, "7:new", protocol.Error{Code: protocol.CodeNotConnected,
			Message: "computer 7:old was relabelled: it is 7:new now; ask it by that id", RelabelledTo: "7:new"}},
		{gateway.ByeRelabelled, "7:n\u00adew", protocol.Error{Code: protocol.CodeNotConnected,
			Message: `computer 7:old was relabelled: it is 7:n\xadew now; ask it by that id`, RelabelledTo: "7:n\u00adew"}},
		{gateway.ByeStopped, "", protocol.Error{Code: protocol.CodeNotConnected,
			Message: "computer 7:old was stopped by its player (sandbox stop; sandbox reconnect on it starts it again)"}},
		{gateway.ByeReconnecting, "", protocol.Error{Code: protocol.CodeNotConnected,
			Message: "computer 7:old is reconnecting (sandbox reconnect, or a changed setting on it): ask it again in a moment"}},
	} {
		t.Run(tt.reason+tt.to, func(t *testing.T) {
			tc := newTestCluster(t)
			a, b := tc.startReplica("a"), tc.startReplica("b")
			c := b.connect(t, "7:old")
			a.waitComputers(t, "7:old@b")
			s := watchedThrough(t, a, b, c, "")

			c.bye(tt.reason, tt.to)
			assert.Equal(t, &tt.want, s.end(t))
			s.closed(t)
			noRelays(t, a, b)
		})
	}
}

// A host request waiting on replica A for a computer that B holds hears, when the computer is
// relabelled, what one waiting on B hears: the new id, in the message and in relabelledTo
// (which the host API left out, on any gateway), with no did-you-mean after it (7:, another
// computer of id 7, was offered).
func TestARequestThroughAnotherReplicaHearsTheRelabel(t *testing.T) {
	for _, through := range []string{"b", "a"} {
		t.Run("through "+through, func(t *testing.T) {
			_, a, b, _ := computerOnB(t)
			c := b.connect(t, "7:old")
			a.waitComputers(t, "7:@b", "7:old@b")
			asked := map[string]*replica{"a": a, "b": b}[through]
			pending := asked.request("7:old", "fs.list", map[string]any{"path": "/"}, waitLimit)
			req := c.read()
			require.Equal(t, "fs.list", req.Type)
			c.bye(gateway.ByeRelabelled, "7:new")
			res := await(t, pending)
			require.Equal(t, http.StatusNotFound, res.status)
			assert.Equal(t, &protocol.Error{Code: protocol.CodeNotConnected,
				Message: "computer 7:old was relabelled: it is 7:new now; ask it by that id", RelabelledTo: "7:new"}, res.body.Error)
		})
	}
}

// An answer on the bus in the holder's name (a client of an unfenced bus) gets no further than
// a single gateway's answer would: a relabel's new traposId only for the same computer id, and
// none in a computer's own error; so it cannot send a web console's view to another computer.
func TestAForgedAnswerCannotNameAnotherComputerToFollow(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	c := b.connect(t, "7:old")
	a.waitComputers(t, "7:old@b")
	rogue := tc.busClient(t)
	answers := map[string]string{
		"gateway":  `{"replica":"b","gatewayError":{"code":"not_connected","message":"moved","relabelledTo":"8:bank"}}`,
		"computer": `{"replica":"b","ok":false,"error":{"code":"not_connected","message":"moved","relabelledTo":"7:new","accounts":["x"]}}`,
	}
	for which, answer := range answers {
		sub, err := rogue.Subscribe("trapos.replica.b.computer.>", func(m *nats.Msg) { _ = m.Respond([]byte(answer)) })
		require.NoError(t, err)
		require.NoError(t, rogue.Flush())
		pending := a.request("7:old", "fs.list", map[string]any{"path": "/"}, waitLimit)
		res := await(t, pending)
		require.NotNil(t, res.body.Error, which)
		assert.Equal(t, &protocol.Error{Code: protocol.CodeNotConnected, Message: "moved"}, res.body.Error, which)
		require.NoError(t, sub.Unsubscribe())
		c.answerNext("fs.list", map[string]any{"entries": []any{}}) // b's own answer, too late
	}
}

// A withdrawal of a claim forged on the bus, saying the computer was relabelled to another
// computer id, ends a live screen watched through another replica (as any forged withdrawal
// does), but the view is given no new id to follow: each replica words a bye itself, holding
// the new id to the computer's (gateway.RelabelledTo).
func TestAForgedWithdrawalCannotNameAnotherComputerToFollow(t *testing.T) {
	// b, which holds the socket, claims the computer again as it reads the withdrawal
	// (claimDeleted), and the bucket keeps one revision a key: a's watcher, behind under load,
	// then never read the withdrawal and the view went on (a CI run at 13:08 waited 10 s for its
	// end). b's claim after the withdrawal waits until a has ended the view.
	var forged atomic.Bool
	viewEnded := make(chan struct{})
	claimWriting = func(replica, _ string) {
		if replica == "b" && forged.Load() {
			<-viewEnded
		}
	}
	t.Cleanup(func() { claimWriting = nil }) // after the cluster's own cleanup: its replicas stopped
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	c := b.connect(t, "7:old")
	a.waitComputers(t, "7:old@b")
	s := watchedThrough(t, a, b, c, "")
	var letBClaim sync.Once
	t.Cleanup(func() { letBClaim.Do(func() { close(viewEnded) }) }) // before the replicas stop

	rogue := tc.busClient(t)
	m := nats.NewMsg("$KV." + ClaimsBucket + "." + claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: "7:old"}))
	m.Header.Set("KV-Operation", "DEL")
	m.Data = []byte(`{"bye":"relabelled","relabelledTo":"8:bank"}`)
	forged.Store(true)
	require.NoError(t, rogue.PublishMsg(m))
	ended := s.end(t)
	letBClaim.Do(func() { close(viewEnded) })
	assert.Equal(t, &protocol.Error{Code: protocol.CodeNotConnected,
		Message: "computer 7:old was relabelled: it says hello under its new label (trap-sandbox computers lists it)"}, ended)
}

// A computer cut off on one replica for its revoked credential ends a live screen watched
// through another with a single gateway's words (it read "computer 7: disconnected", and a web
// console waited for a computer that does not come back by itself).
func TestACutOffEndsALiveScreenThroughAnotherReplicaAsOnOneGateway(t *testing.T) {
	tc := newTestCluster(t)
	accounts, credential, _ := sharedAccounts(t)
	a, b, c := alicesComputerOnB(t, tc, accounts, credential)
	s := watchedThrough(t, a, b, c, "")

	status, body := a.revoke(t, "7:")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, &protocol.Error{Code: protocol.CodeNotConnected,
		Message: "computer 7: was cut off: its credential was revoked; it connects again once linked anew (sandbox link on it) or given a new credential"}, s.end(t))
}

// A caller that names a computer's old traposId on any replica just after it was relabelled on
// B (the web console's view opening, a request) hears its new id, as one that was waiting did:
// B from its own socket, A from the withdrawal of B's claim. It heard "not connected", and the
// view waited for the old id for good.
func TestARequestJustAfterARelabelOnAnotherReplicaHearsIt(t *testing.T) {
	for _, through := range []string{"b", "a"} {
		t.Run("through "+through, func(t *testing.T) {
			tc := newTestCluster(t)
			a, b := tc.startReplica("a"), tc.startReplica("b")
			c := b.connect(t, "7:old")
			a.waitComputers(t, "7:old@b")
			c.bye(gateway.ByeRelabelled, "7:new")
			a.waitComputers(t)
			b.waitComputers(t)
			asked := map[string]*replica{"a": a, "b": b}[through]
			res := await(t, asked.request("7:old", "fs.list", map[string]any{"path": "/"}, waitLimit))
			require.Equal(t, http.StatusNotFound, res.status)
			assert.Equal(t, &protocol.Error{Code: protocol.CodeNotConnected,
				Message: "computer 7:old was relabelled: it is 7:new now; ask it by that id", RelabelledTo: "7:new"}, res.body.Error)

			// Relabelled back, then gone without a bye: 7:old is not connected, no more
			// relabelled, on every replica.
			back := b.connect(t, "7:old")
			a.waitComputers(t, "7:old@b")
			require.NoError(t, back.conn.Close())
			a.waitComputers(t)
			b.waitComputers(t)
			res = await(t, asked.request("7:old", "fs.list", map[string]any{"path": "/"}, waitLimit))
			require.Equal(t, http.StatusNotFound, res.status)
			assert.Empty(t, res.body.Error.RelabelledTo)
			assert.Contains(t, res.body.Error.Message, "computer 7:old is not connected")
		})
	}
}

// A withdrawal forged on the bus for a computer no replica holds, saying it was relabelled to
// another computer id, gives a caller naming it no id to follow: it is not connected, as
// before. One naming another label of the same computer id is taken (docs/scale-out.md,
// Security: a forged message may send a caller to another label of the same computer, no
// further); each message is read in order, so once that one is heard the first was too.
func TestAForgedWithdrawalInjectsNoRelabelOfAnotherComputer(t *testing.T) {
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	rogue := tc.busClient(t)
	forge := func(traposID, body string) {
		m := nats.NewMsg("$KV." + ClaimsBucket + "." + claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: traposID}))
		m.Header.Set("KV-Operation", "DEL")
		m.Data = []byte(body)
		require.NoError(t, rogue.PublishMsg(m))
	}
	forge("7:ghost", `{"bye":"relabelled","relabelledTo":"8:bank"}`)
	forge("9:ghost", `{"bye":"relabelled","relabelledTo":"9:other"}`)
	require.Eventually(t, func() bool {
		res := await(t, a.request("9:ghost", "fs.list", map[string]any{"path": "/"}, waitLimit))
		return res.body.Error != nil && res.body.Error.RelabelledTo == "9:other"
	}, waitLimit, testkit.Poll, "the second forged withdrawal to be heard")

	res := await(t, a.request("7:ghost", "fs.list", map[string]any{"path": "/"}, waitLimit))
	require.Equal(t, http.StatusNotFound, res.status)
	assert.Empty(t, res.body.Error.RelabelledTo)
	assert.Contains(t, res.body.Error.Message, "computer 7:ghost is not connected")
	assert.NotContains(t, res.body.Error.Message, "8:bank")
}

// A computer that comes back under a label it was relabelled from (rebooted with its label set
// back, so it said no bye that names it) is at that label: no replica may send a caller on to
// the label it left. A, which heard the relabels only from B's withdrawals, kept the trail
// until 7:old's claim was withdrawn: a computer named by another of its former labels was sent
// on for good (7:mid answered "it is 7:new now" while the computer was 7:old), and, with B
// gone before the withdrawal, revoking 7:old said to revoke 7:new.
func TestAComputerBackUnderAFormerLabelIsNotSentOnByAnyReplica(t *testing.T) {
	tc := newTestCluster(t)
	accounts, credential, _ := sharedAccounts(t)
	a := tc.startReplicaWith("a", gateway.Config{Accounts: accounts})
	b := tc.startReplicaWith("b", gateway.Config{Accounts: accounts})
	relabel := func(from, to string) {
		t.Helper()
		c := b.connectWith(t, from, credential)
		a.waitComputers(t, from+"@b")
		c.bye(gateway.ByeRelabelled, to)
		a.waitComputers(t)
	}
	relabel("7:old", "7:mid")
	relabel("7:mid", "7:new")
	res := await(t, a.request("7:mid", "fs.list", map[string]any{"path": "/"}, waitLimit))
	require.Equal(t, "7:new", res.body.Error.RelabelledTo, "A heard both relabels")

	// 7:new goes without a bye (its player rebooted it with its label set back), and the
	// computer says hello as 7:old.
	gone := b.connectWith(t, "7:new", credential)
	a.waitComputers(t, "7:new@b")
	require.NoError(t, gone.conn.Close())
	a.waitComputers(t)
	b.connectWith(t, "7:old", credential)
	a.waitComputers(t, "7:old@b")
	for _, former := range []string{"7:mid", "7:new"} {
		res := await(t, a.request(former, "fs.list", map[string]any{"path": "/"}, waitLimit))
		require.Equal(t, http.StatusNotFound, res.status, former)
		assert.Empty(t, res.body.Error.RelabelledTo, former)
		assert.Equal(t, "computer "+former+" is not connected", strings.SplitN(res.body.Error.Message, ";", 2)[0], former)
	}

	// B crashes holding it: its claim stays until the sweep, and A, which took B for dead,
	// lists no 7:old. Revoking it by that id through A is told it is not connected, not that
	// it is 7:new now.
	tc.crash(b, a)
	tc.clock.Advance(testReplicaTTL + time.Minute)
	a.waitComputers(t)
	status, body := a.revoke(t, "7:old")
	assert.Equal(t, http.StatusNotFound, status, body)
	assert.Contains(t, body, "computer 7:old is not connected")
	assert.NotContains(t, body, "relabelled", "7:old is the computer's label")
}

// A replica reads every withdrawal the bucket keeps (an hour of them) again after each
// reconnection to NATS: a relabel among them is as old as its withdrawal, not as the read. A,
// back on NATS two minutes after B's relabel of 7:old, took it for one made as it reconnected,
// and told a caller naming 7:old "it is 7:new now" for a minute more.
func TestAReplicaBackOnNATSTakesNoOldRelabelForNew(t *testing.T) {
	tc := newTestCluster(t)
	later := &offsetClock{} // A's gateway's: its relabels' minute
	a, cut := tc.startCuttableReplica("a", gateway.Config{Clock: later})
	b := tc.startReplica("b")
	c := b.connect(t, "7:old")
	a.waitComputers(t, "7:old@b")
	c.bye(gateway.ByeRelabelled, "7:new")
	a.waitComputers(t)
	relabelledTo := func() string {
		t.Helper()
		res := await(t, a.request("7:old", "fs.list", map[string]any{"path": "/"}, waitLimit))
		require.Equal(t, http.StatusNotFound, res.status)
		return res.body.Error.RelabelledTo
	}
	require.Equal(t, "7:new", relabelledTo(), "A heard it at once")
	later.Advance(gateway.RelabelFollowWindow + time.Minute)
	require.Empty(t, relabelledTo(), "past its minute")

	reads := func() int {
		n := 0
		for line := range strings.Lines(tc.logs.String()) {
			if strings.Contains(line, `msg="read the other replicas' computers"`) && strings.Contains(line, "replica=a ") {
				n++
			}
		}
		return n
	}
	before := reads()
	cut.setCut(true)
	require.Eventually(t, func() bool { return !a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to notice NATS is gone")
	cut.setCut(false)
	require.Eventually(t, func() bool { return reads() > before }, waitLimit, testkit.Poll, "A to read the bucket again")
	assert.Empty(t, relabelledTo(), "relabelled two minutes before A read it again")
}
