package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
)

// sseEvent is one event of a live screen's stream.
type sseEvent struct{ name, data string }

// screenStream is GET …/screen opened on a replica: its status, then its events, arrive on
// channels; events is closed when the stream ends.
type screenStream struct {
	status chan int
	events chan sseEvent
	cancel context.CancelFunc
	done   chan struct{}
}

// openScreen opens a live screen of traposID through r, with token ("": a loopback caller,
// an admin). It returns at once: the watch starts once the computer answers screen.watch.
func (r *replica) openScreen(t *testing.T, traposID, token string) *screenStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &screenStream{status: make(chan int, 1), events: make(chan sseEvent), cancel: cancel, done: make(chan struct{})}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.srv.URL+"/trapos/computers/"+url.PathEscape(traposID)+"/screen", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	go func() {
		defer close(s.done)
		defer close(s.events)
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			s.status <- -1
			return
		}
		defer resp.Body.Close()
		s.status <- resp.StatusCode
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && ev.name != "":
				select {
				case s.events <- ev:
				case <-ctx.Done():
					return
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	t.Cleanup(s.close)
	return s
}

// close leaves the stream, as a viewer closing its window does.
func (s *screenStream) close() {
	s.cancel()
	<-s.done
}

// opened waits for the stream's status.
func (s *screenStream) opened(t *testing.T) int {
	t.Helper()
	select {
	case status := <-s.status:
		return status
	case <-time.After(waitLimit):
		t.Fatal("the live screen did not answer")
		return 0
	}
}

// next waits for the stream's next event.
func (s *screenStream) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		require.True(t, ok, "the stream ended")
		return ev
	case <-time.After(waitLimit):
		t.Fatal("no event on the live screen")
		return sseEvent{}
	}
}

// frame waits for the next event, a frame, and returns its first row's text.
func (s *screenStream) frame(t *testing.T) string {
	t.Helper()
	ev := s.next(t)
	require.Equal(t, "frame", ev.name, "data: %s", ev.data)
	var f struct {
		Rows []struct {
			Text string `json:"text"`
		} `json:"rows"`
	}
	require.NoError(t, json.Unmarshal([]byte(ev.data), &f))
	require.NotEmpty(t, f.Rows)
	return f.Rows[0].Text
}

// end waits for the stream's end event and returns its error; the stream then closes
// (closed).
func (s *screenStream) end(t *testing.T) *protocol.Error {
	t.Helper()
	ev := s.next(t)
	require.Equal(t, "end", ev.name, "data: %s", ev.data)
	var a server.Answer
	require.NoError(t, json.Unmarshal([]byte(ev.data), &a))
	require.NotNil(t, a.Error)
	return a.Error
}

// closed waits for the stream to close, with no event after its end.
func (s *screenStream) closed(t *testing.T) {
	t.Helper()
	select {
	case _, more := <-s.events:
		require.False(t, more, "an event after the end")
	case <-time.After(waitLimit):
		t.Fatal("the stream did not close after its end")
	}
}

// update sends a screen.update of watch id (one row of 3 columns) and returns the gateway's
// answer.
func (c *computer) update(id any, seq int, row string, ended string) protocol.Frame {
	c.t.Helper()
	c.sendUpdate(id, seq, row, ended)
	f := c.read()
	require.Equal(c.t, protocol.EventGatewayResponse, f.Event)
	require.Equal(c.t, fmt.Sprintf("update-%d", seq), f.MessageID)
	return f
}

// sendUpdate sends update's screen.update, messageId update-<seq>, and reads nothing.
func (c *computer) sendUpdate(id any, seq int, row string, ended string) {
	c.t.Helper()
	payload := map[string]any{"watchId": id, "seq": seq, "width": 3, "height": 1, "colour": true,
		"cursor": map[string]any{"x": 1, "y": 1, "blink": false},
		"rows":   map[string]any{"1": map[string]any{"text": row, "fg": "000", "bg": "fff"}}}
	if ended != "" {
		payload = map[string]any{"watchId": id, "seq": seq, "ended": map[string]any{"code": "forbidden", "message": ended}}
	}
	c.send(map[string]any{"event": "computer_request", "traposSenderId": c.id, "messageId": fmt.Sprintf("update-%d", seq),
		"type": protocol.TypeScreenUpdate, "payload": payload})
}

// watchedThrough opens a live screen of the computer c (held by replica holder) through
// replica viewer, answers its screen.watch with watch "w1", and checks that the computer's
// first update reaches the viewer.
func watchedThrough(t *testing.T, viewer, holder *replica, c *computer, token string) *screenStream {
	t.Helper()
	s := viewer.openScreen(t, c.id, token)
	c.answerNext(protocol.TypeScreenWatch, map[string]any{"watchId": "w1"})
	require.Equal(t, http.StatusOK, s.opened(t))
	ans := c.update("w1", 1, "abc", "")
	require.True(t, ans.OK, "the first update: %+v", ans.Error)
	assert.Equal(t, "abc", s.frame(t))
	assert.Equal(t, 1, viewer.screens.Watches(), "the viewers' replica keeps the watch")
	assert.Equal(t, 1, holder.screens.Relays(), "the holder passes its updates on")
	assert.Equal(t, 0, holder.screens.Watches())
	return s
}

// noRelays waits until neither replica keeps anything of a watch.
func noRelays(t *testing.T, replicas ...*replica) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, r := range replicas {
			if r.screens.Watches() != 0 || r.screens.Relays() != 0 {
				return false
			}
		}
		return true
	}, waitLimit, testkit.Poll, "no watch left behind")
}

// A live screen asked of a replica that does not hold the computer's socket shows the
// computer's screen as it changes; its last viewer leaving stops the watch on the computer,
// and an update that still comes is answered unknown_watch.
func TestALiveScreenWorksThroughAReplicaThatDoesNotHoldTheComputer(t *testing.T) {
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	b := tc.startReplica("b")
	c := b.connect(t, "7:kitchen")
	a.waitComputers(t, "7:kitchen@b")

	s := watchedThrough(t, a, b, c, "")
	for seq, row := range []string{"xyz", "é!?"} {
		ans := c.update("w1", seq+2, row, "")
		require.True(t, ans.OK, "%+v", ans.Error)
		assert.Equal(t, row, s.frame(t))
	}

	s.close()
	unwatch := c.answerNext(protocol.TypeScreenUnwatch, map[string]any{})
	assert.JSONEq(t, `{"watchId":"w1"}`, string(unwatch.Payload))
	noRelays(t, a, b)
	ans := c.update("w1", 9, "late", "")
	require.False(t, ans.OK)
	assert.Equal(t, protocol.CodeUnknownWatch, ans.Error.Code)
}

// The computer's socket closing ends a live screen watched through another replica as it ends
// one watched on the holder: "computer … disconnected".
func TestALiveScreenThroughAnotherReplicaEndsWhenTheComputerDisconnects(t *testing.T) {
	_, a, b, c := computerOnB(t)
	s := watchedThrough(t, a, b, c, "")

	_ = c.conn.Close()
	end := s.end(t)
	assert.Equal(t, &protocol.Error{Code: protocol.CodeNotConnected, Message: "computer 7: disconnected", Left: true}, end,
		"marked left through another replica too, which a client of the stream reads (the stdio MCP bridge)")
	s.closed(t)
	noRelays(t, a, b)
}

// A computer that answers screen.watch and disconnects before its first update ends the live
// screen too, watched on its own replica or through another: "computer … disconnected", and
// the holder keeps no record of the watch. The watch was tied to the socket only at its first
// update: the stream sent no end event, and the web console said "Live", for ever.
func TestALiveScreenEndsWhenTheComputerDisconnectsBeforeItsFirstUpdate(t *testing.T) {
	for _, through := range []string{"the holder", "another replica"} {
		t.Run(through, func(t *testing.T) {
			_, a, b, c := computerOnB(t)
			viewer := a
			if through == "the holder" {
				viewer = b
			}
			s := viewer.openScreen(t, c.id, "")
			c.answerNext(protocol.TypeScreenWatch, map[string]any{"watchId": "w1"})
			require.Equal(t, http.StatusOK, s.opened(t))
			require.Eventually(t, func() bool { return viewer.screens.Watches() == 1 }, waitLimit, testkit.Poll)

			_ = c.conn.Close()
			end := s.end(t)
			assert.Equal(t, &protocol.Error{Code: protocol.CodeNotConnected, Message: "computer 7: disconnected", Left: true}, end)
			s.closed(t)
			noRelays(t, a, b)
		})
	}
}

// The holder stopping, or crashing, ends the live screen, naming the holder, within a heartbeat
// (a crash is found by the probe of the replicas that lifelines hang on).
func TestALiveScreenThroughAnotherReplicaEndsWhenTheHolderGoes(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			tc := newTestCluster(t)
			a := tc.startReplica("a")
			b := tc.startReplica("b")
			c := b.connect(t, "7:")
			a.waitComputers(t, "7:@b")
			s := watchedThrough(t, a, b, c, "")

			if crash {
				b.kill()
			} else {
				b.stop()
			}
			end := s.end(t)
			assert.Equal(t, protocol.CodeNotConnected, end.Code)
			want := "computer 7: is not connected: replica b, which held its socket, has stopped"
			if crash {
				want = "computer 7: is not connected: replica b, which held its socket, is not on NATS any more"
			}
			assert.Contains(t, end.Message, want)
			assert.Equal(t, "b", end.ReplicaGone, "the mark MCP's wait_for_screen reads")
			assert.False(t, end.Stopping, "the gateway serving the stream, a, runs on: the CLI's view waits for the computer there")
			s.closed(t)
			noRelays(t, a)
		})
	}
}

// The watching replica stopping ends the live screens it serves of computers held elsewhere as
// it ends those of its own computers, marked stopping (the CLI's view and the MCP bridge wait
// for another gateway), at its gateway's shutdown: before the HTTP server's shutdown waits for
// the stream, not at the router's Close after it, when the stream was cut with no end. The
// holder forgets the watch (the watching replica's goodbye), and a computer's lifeline taken
// after the goodbye has ended alike.
func TestALiveScreenThroughAReplicaThatStopsEndsSayingItStops(t *testing.T) {
	_, a, b, c := computerOnB(t)
	s := watchedThrough(t, a, b, c, "")

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(t, a.gw.Shutdown(ctx)) // the router still open: the server's Serve has not returned
	end := s.end(t)
	assert.Equal(t, protocol.CodeNotConnected, end.Code)
	assert.Equal(t, gateway.ErrShuttingDown.Message, end.Message)
	assert.True(t, end.Stopping, "the mark the CLI's view and the MCP bridge read")
	assert.Empty(t, end.ReplicaGone, "the holder, b, runs on")
	s.closed(t)
	noRelays(t, a, b)

	holder, held, stop := a.router.Holding(gateway.Key{AccountID: gateway.LocalAccount, TraposID: c.id})
	defer stop()
	assert.Equal(t, "b", holder)
	require.Error(t, held.Err(), "a lifeline taken after the goodbye has ended")
	assert.Equal(t, gateway.ErrShuttingDown, context.Cause(held))
}

// The owner withdrawing sandbox.allow_screen ends the live screen with the computer's words,
// as on the holder; the holder forgets the watch.
func TestALiveScreenThroughAnotherReplicaEndsWhenTheOwnerWithdrawsIt(t *testing.T) {
	_, a, b, c := computerOnB(t)
	s := watchedThrough(t, a, b, c, "")

	const why = "the screen watch ended: the owner withdrew sandbox.allow_screen (it is now none)"
	ans := c.update("w1", 2, "", why)
	require.True(t, ans.OK, "%+v", ans.Error)
	end := s.end(t)
	assert.Equal(t, protocol.CodeForbidden, end.Code)
	assert.Equal(t, "computer 7: says "+why, end.Message)
	assert.True(t, end.Refused, "the computer's own end, said to be through the other replica too")
	s.closed(t)
	noRelays(t, a, b)
}

// The computer's own refusal of a watch through another replica says it is the computer's
// (refused), as on the holder, so that a viewer backs off from it; the gateway's own refusal
// there (the computer not answering in time) does not. Before, the mark did not cross the bus:
// every refusal through another replica read as the gateway's.
func TestALiveScreenThroughAnotherReplicaSaysTheComputerRefusedIt(t *testing.T) {
	_, a, b, c := computerOnB(t)
	type refusal struct {
		status int
		answer server.Answer
	}
	refused := make(chan refusal, 1)
	go func() {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, a.srv.URL+"/trapos/computers/7:/screen", nil)
		if err != nil {
			refused <- refusal{status: -1}
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := client().Do(req)
		if err != nil {
			refused <- refusal{status: -1}
			return
		}
		defer resp.Body.Close()
		var out server.Answer
		_ = json.NewDecoder(resp.Body).Decode(&out)
		refused <- refusal{resp.StatusCode, out}
	}()
	req := c.read()
	require.Equal(t, protocol.TypeScreenWatch, req.Type)
	c.send(map[string]any{"event": "computer_response", "traposSenderId": c.id, "messageId": req.MessageID,
		"type": req.Type, "ok": false, "error": map[string]any{"code": "internal", "message": "this screen is out of order"}})
	var got refusal
	select {
	case got = <-refused:
	case <-time.After(waitLimit):
		t.Fatal("the watch was not answered")
	}
	assert.Equal(t, http.StatusInternalServerError, got.status)
	assert.Equal(t, &protocol.Error{Code: protocol.CodeInternal, Message: "this screen is out of order", Refused: true}, got.answer.Error)
	noRelays(t, a, b)
}

// A live screen through another replica is an account's like any: its token is checked again
// before each frame (revoked: the stream ends), and another account's token finds no such
// computer, through any replica.
func TestALiveScreenThroughAnotherReplicaKeepsToItsAccount(t *testing.T) {
	tc := newTestCluster(t)
	accounts, credential, _ := sharedAccounts(t)
	bobToken, err := accounts.AddAccount(t.Context(), "bob", account.RoleUser, "first")
	require.NoError(t, err)
	a := tc.startReplicaWith("a", gateway.Config{Accounts: accounts})
	b := tc.startReplicaWith("b", gateway.Config{Accounts: accounts})
	c := b.connectWith(t, "7:door", credential)
	a.waitComputers(t, "7:door@b")

	for _, r := range []*replica{a, b} {
		refused := r.openScreen(t, "7:door", bobToken)
		assert.Equal(t, http.StatusNotFound, refused.opened(t), "bob's token through replica %s", r.name)
		refused.close()
	}

	token, _, err := accounts.IssueToken(t.Context(), "alice", "screen", 0)
	require.NoError(t, err)
	s := watchedThrough(t, a, b, c, token)
	_, selector, _ := account.Identify(token)
	_, err = accounts.RevokeToken(t.Context(), "alice", selector)
	require.NoError(t, err)
	// The update that comes next ends the stream: the viewer leaves, and the watch stops on
	// the computer, whose unwatch may come before the update's answer.
	c.sendUpdate("w1", 2, "new", "")
	for range 2 {
		f := c.read()
		if f.Event == protocol.EventGatewayRequest {
			c.answer(f, protocol.TypeScreenUnwatch, map[string]any{})
			continue
		}
		require.Equal(t, "update-2", f.MessageID)
		require.True(t, f.OK, "%+v", f.Error)
	}
	end := s.end(t)
	assert.Equal(t, protocol.CodeUnauthorized, end.Code)
	assert.Contains(t, end.Message, "revoked")
	s.closed(t)
	noRelays(t, a, b)
}

// A watch whose viewers' replica died is forgotten by the holder (within a heartbeat: the
// probe finds it off NATS), and the computer's next update is answered unknown_watch, which
// stops the watch on the computer: no updates sent for nobody.
func TestAWatchOfAReplicaThatDiedIsAnsweredUnknownWatch(t *testing.T) {
	_, a, b, c := computerOnB(t)
	s := watchedThrough(t, a, b, c, "")

	a.kill()
	s.close()
	noRelays(t, b)
	ans := c.update("w1", 2, "new", "")
	require.False(t, ans.OK)
	assert.Equal(t, protocol.CodeUnknownWatch, ans.Error.Code)
}

// Messages on a replica's relay subjects that are not the screen module's, or not well
// formed, are refused (answered with an error when an answer is awaited, dropped otherwise),
// and the replica goes on serving live screens.
func TestMalformedRelayMessagesAreRefused(t *testing.T) {
	tc, a, b, c := computerOnB(t)

	nc, err := nats.Connect(tc.url())
	require.NoError(t, err)
	defer nc.Close()
	subject := relaySubject("b", "screen", gateway.Key{AccountID: "local", TraposID: "7:"})
	for _, m := range []struct{ subject, body string }{
		{"trapos.replica.b.relay", `{"from":"x","payload":{}}`},
		{"trapos.replica.b.relay.screen", `{"from":"x","payload":{}}`},
		{"trapos.replica.b.relay.screen.local", `{"from":"x","payload":{}}`},
		{"trapos.replica.b.relay.screen.local.7_Z", `{"from":"x","payload":{}}`},
		{"trapos.replica.b.relay.nothing.local.7_3A", `{"from":"x","payload":{}}`},
		{subject, `not json`},
		{subject, `{"payload":{}}`},
		{subject, `{"from":"x","payload":"a string"}`},
		{subject, `{"from":"x","payload":{"op":"nothing"}}`},
		{subject, `{"from":"x","payload":{"op":"update"}}`},
		{subject, `{"from":"x","payload":{"op":"update","watchId":"w","update":{"watchId":"w","width":-1}}}`},
		{subject, `{"from":"x","payload":{"op":"update","update":{"watchId":"w","width":3,"height":1,"rows":{"9":{}}}}}`},
		{subject, `{"from":"x","payload":{"op":"unwatch"}}`},
		{subject, `{"from":"x","payload":{"op":"unwatch","watchId":{}}}`},
		{subject, `{"from":"x","payload":{"op":"lost","watchId":[1]}}`},
	} {
		require.NoError(t, nc.Publish(m.subject, []byte(m.body)), "told %s", m.body)
		reply, err := nc.Request(m.subject, []byte(m.body), waitLimit)
		require.NoError(t, err, "%s %s", m.subject, m.body)
		var rr routedResponse
		require.NoError(t, json.Unmarshal(reply.Data, &rr), "%s", reply.Data)
		assert.Equal(t, "b", rr.Replica)
		if strings.Contains(m.body, `"unwatch","watchId":{}`) || strings.Contains(m.body, `"lost"`) {
			assert.True(t, rr.OK, "%s %s: nothing to stop", m.subject, m.body)
			continue
		}
		assert.False(t, rr.OK, "%s %s", m.subject, m.body)
		assert.True(t, rr.Error != nil || rr.GatewayError != nil, "%s %s: %s", m.subject, m.body, reply.Data)
	}
	assert.Equal(t, 0, b.screens.Relays())

	s := watchedThrough(t, a, b, c, "")
	s.close()
	c.answerNext(protocol.TypeScreenUnwatch, map[string]any{})
	noRelays(t, a, b)
}

// A watching replica that hangs never holds up the holder: while an update waits on it, the
// computer's socket is read and its requests answered; the holder waits a bounded time, then
// forgets the watch, answers the computer unknown_watch (it stops the watch) and tells the
// watching replica, whose stream ends once it is back.
func TestASlowWatchingReplicaDoesNotHoldUpTheHolder(t *testing.T) {
	tc := newTestCluster(t)
	a, proxy := tc.startCuttableReplica("a", gateway.Config{})
	b := tc.startReplica("b")
	b.screens.PassOnWithin(300 * time.Millisecond)
	c := b.connect(t, "7:")
	a.waitComputers(t, "7:@b")
	s := watchedThrough(t, a, b, c, "")

	proxy.setFrozen(true)
	c.sendUpdate("w1", 2, "new", "")
	pinged := b.request("7:", gateway.TypePing, nil, waitLimit)
	c.answerRequest(pinged, gateway.TypePing, map[string]any{"traposId": "7:"})
	assert.Equal(t, http.StatusOK, await(t, pinged).status, "the socket is read while an update waits")
	ans := c.read()
	require.Equal(t, "update-2", ans.MessageID)
	require.False(t, ans.OK)
	assert.Equal(t, protocol.CodeUnknownWatch, ans.Error.Code)
	assert.Equal(t, 0, b.screens.Relays())

	proxy.setFrozen(false)
	ev := s.next(t)
	for ev.name == "frame" { // the update itself may arrive before the holder's word
		ev = s.next(t)
	}
	require.Equal(t, "end", ev.name)
	var end server.Answer
	require.NoError(t, json.Unmarshal([]byte(ev.data), &end))
	assert.Equal(t, protocol.CodeNotConnected, end.Error.Code)
	assert.Contains(t, end.Error.Message, "the live screen of computer 7: stopped: replica b, which holds its socket, could not pass it on (replica a did not answer in time); watch it again")
	s.closed(t)
	noRelays(t, a, b)
}

// A replica of a trap-sandbox from before the relay (its heartbeat does not say relays) is
// sent none: a live screen of a computer on it is refused at once, saying why.
func TestALiveScreenOfAComputerOnAnOlderReplicaIsRefusedAtOnce(t *testing.T) {
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	rogue := tc.busClient(t)
	putRawHeartbeat(t, rogue, "old", `{"replica":"old","closesRemoved":true}`)
	putClaim(t, rogue, "old", gateway.Key{AccountID: gateway.LocalAccount, TraposID: "7:"})
	a.waitComputers(t, "7:@old")

	status, answer := a.watchScreen(t, "7:")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, &protocol.Error{Code: protocol.CodeNotConnected,
		Message: "replica old runs an older trap-sandbox, which relays nothing between replicas (live screens): upgrade it (docs/scale-out.md)"}, answer.Error)
	assert.Equal(t, 0, a.screens.Watches())
}

// A relayed message to a replica gone from NATS fails at once, naming it as what it is: the
// computer's holder ("which held its socket") or the replica a computer held here was
// relayed to (a replica watching its screen).
func TestARelayToAReplicaGoneFromNATSFailsNamingIt(t *testing.T) {
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	b := tc.startReplica("b")
	b.connect(t, "7:")
	a.waitComputers(t, "7:@b")
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "7:"}
	b.stop()
	// Only NATS's word that nobody listens (503) fails the relays below: b's goodbye, taken in
	// while one waited, would fail it first as "has stopped", and so would a heartbeat tick of
	// a's (watchHolders), b and c having sent no heartbeat, as "has sent no heartbeat for …".
	require.Eventually(t, func() bool { return !a.router.alive("b") }, waitLimit, testkit.Poll, "a to take in b's goodbye")
	holdBeats(t, a.router)

	_, err := a.router.Relay(t.Context(), "b", "screen", k, json.RawMessage(`{}`))
	// Marked as the holder's going (ReplicaGone), as every such not_connected is: MCP reads it.
	assert.Equal(t, holderGone("7:", "b", "is not on NATS any more (it stopped, crashed or lost its connection)"), err)
	assert.EqualError(t, err, "not_connected: computer 7: is not connected: replica b, which held its socket, is not on NATS any more (it stopped, crashed or lost its connection)")
	_, err = a.router.Relay(t.Context(), "c", "screen", gateway.Key{AccountID: gateway.LocalAccount, TraposID: "8:"}, json.RawMessage(`{}`))
	assert.Equal(t, protocol.Errorf(protocol.CodeNotConnected,
		"replica c is not on NATS any more (it stopped, crashed or lost its connection)"), err)
	assert.Equal(t, 0, a.router.RoutedInFlight())
}

// The viewers' replica losing NATS ends its live screens of computers on other replicas at
// once: their updates can no longer reach it.
func TestALiveScreenThroughAnotherReplicaEndsWhenItLosesNATS(t *testing.T) {
	tc := newTestCluster(t)
	a, proxy := tc.startCuttableReplica("a", gateway.Config{})
	b := tc.startReplica("b")
	c := b.connect(t, "7:")
	a.waitComputers(t, "7:@b")
	s := watchedThrough(t, a, b, c, "")

	proxy.setCut(true)
	end := s.end(t)
	assert.Equal(t, &protocol.Error{Code: protocol.CodeNotConnected,
		Message: "computer 7: is not connected to replica a, which lost its NATS connection"}, end)
	// The viewer left: the stop cannot reach the holder without NATS.
	s.closed(t)
	proxy.setCut(false)
	ans := c.update("w1", 2, "new", "")
	require.False(t, ans.OK)
	assert.Equal(t, protocol.CodeUnknownWatch, ans.Error.Code, "a keeps no such watch (or is not back yet): the computer stops it")
	noRelays(t, a, b)
}

// TestHeldElsewhereNamesAComputerOfAnotherLiveReplica: the agent keeps the opencode instance
// of a computer that moved to another replica (agent.Config.HeldElsewhere): true while a
// live replica other than this one holds its socket, false for this replica's own, another
// account's, a closed socket, and a stopped replica's.
func TestHeldElsewhereNamesAComputerOfAnotherLiveReplica(t *testing.T) {
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	b := tc.startReplica("b")
	k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: "7:kitchen"}
	c := b.connect(t, "7:kitchen")
	a.waitComputers(t, "7:kitchen@b")
	assert.True(t, a.router.HeldElsewhere(k))
	assert.False(t, b.router.HeldElsewhere(k), "its own replica")
	assert.False(t, a.router.HeldElsewhere(gateway.Key{AccountID: "alice", TraposID: "7:kitchen"}), "another account's")

	require.NoError(t, c.conn.Close())
	require.Eventually(t, func() bool { return !a.router.HeldElsewhere(k) }, waitLimit, testkit.Poll, "a closed socket")

	b.connect(t, "7:kitchen")
	require.Eventually(t, func() bool { return a.router.HeldElsewhere(k) }, waitLimit, testkit.Poll, "held by b again")
	b.stop()
	require.Eventually(t, func() bool { return !a.router.HeldElsewhere(k) }, waitLimit, testkit.Poll, "a stopped replica's")
}

// computerOnB starts replicas a and b on one NATS, with computer 7: connected to b and listed
// on a: the holder and the replica a viewer asks.
func computerOnB(t *testing.T) (*testCluster, *replica, *replica, *computer) {
	t.Helper()
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	b := tc.startReplica("b")
	c := b.connect(t, "7:")
	a.waitComputers(t, "7:@b")
	return tc, a, b, c
}
