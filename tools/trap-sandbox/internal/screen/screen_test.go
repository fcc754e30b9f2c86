package screen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit/daemonfake"
)

const testAccount = "local"

var from = protocol.Requester{AccountID: testAccount, TraposID: "7:"}

// stand-in: a computer answering screen.watch with watchId 1 and screen.unwatch.
func standIn(t *testing.T) (*Module, *daemonfake.Local) {
	t.Helper()
	d := daemonfake.NewLocal(nil)
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		switch typ {
		case protocol.TypeScreenWatch:
			return map[string]any{"watchId": 1}, nil
		case protocol.TypeScreenUnwatch:
			return map[string]any{}, nil
		}
		return nil, nil
	}
	return New(computer.New(d)).Metrics(prometheus.NewRegistry()), d
}

// frame is a screen.update of a 3×2 screen; whole frames carry every row, the palette and the
// colours (white on black).
func frame(seq int, rows map[string]string, whole bool) json.RawMessage {
	u := map[string]any{"watchId": 1, "seq": seq, "width": 3, "height": 2, "colour": true,
		"cursor": map[string]any{"x": 1, "y": 1, "blink": true}}
	rs := map[string]any{}
	for y, text := range rows {
		rs[y] = map[string]any{"text": text, "fg": "000", "bg": "fff"}
	}
	u["rows"] = rs
	if whole {
		u["palette"] = []string{"#f0f0f0"}
		u["fg"], u["bg"] = 1, 32768
	}
	b, _ := json.Marshal(u)
	return b
}

func texts(f Frame) []string {
	var out []string
	for _, r := range f.Screen.Rows {
		out = append(out, r.Text)
	}
	return out
}

func TestViewersShareOneWatchAndASlowOneSkipsFrames(t *testing.T) {
	m, d := standIn(t)
	v1, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	v2, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{protocol.TypeScreenWatch}, d.Types(), "one watch for both viewers")

	_, err = m.handleUpdate(t.Context(), from, frame(1, map[string]string{"1": "abé", "2": "cd "}, true))
	require.NoError(t, err)
	f, err := v1.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"abé", "cd "}, texts(f), "row text as host text")
	assert.Equal(t, []string{"#f0f0f0"}, f.Screen.Palette)

	// v2 does not read while three updates arrive: none of them waits for it.
	for seq := 2; seq <= 4; seq++ {
		_, err = m.handleUpdate(t.Context(), from, frame(seq, map[string]string{"2": fmt.Sprint("r", seq, " ")}, false))
		require.NoError(t, err)
	}
	f, err = v2.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 4, f.Seq, "the newest frame, the ones between skipped")
	assert.Equal(t, []string{"abé", "r4 "}, texts(f), "changed rows merge into the whole screen")
	assert.Equal(t, []string{"#f0f0f0"}, f.Screen.Palette, "the palette stays when an update has none")
	assert.Equal(t, [2]int{1, 32768}, [2]int{f.Screen.FG, f.Screen.BG}, "the colours stay when an update has none")

	// An update with new colours and no rows changes only them.
	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":1,"seq":5,"width":3,"height":2,"cursor":{"x":1,"y":1},"fg":16,"bg":2048,"rows":{}}`))
	require.NoError(t, err)
	f, err = v1.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, [2]int{16, 2048}, [2]int{f.Screen.FG, f.Screen.BG})
	assert.Equal(t, []string{"abé", "r4 "}, texts(f))

	assert.Equal(t, 5.0, testutil.ToFloat64(m.updates))
	assert.Greater(t, testutil.ToFloat64(m.updateBytes), 4*50.0)

	v1.Close()
	assert.Equal(t, 1, m.Watches(), "a viewer is left")
	v2.Close()
	assert.Equal(t, 0, m.Watches())
	assert.Equal(t, []string{protocol.TypeScreenWatch, protocol.TypeScreenUnwatch}, d.Types(), "the last viewer stops the watch")
	_, err = m.handleUpdate(t.Context(), from, frame(6, nil, false))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "an update after the last viewer left stops the watch on the computer")
}

func TestUpdatesOfWatchesNotKeptAreRefused(t *testing.T) {
	m, _ := standIn(t)
	_, err := m.handleUpdate(t.Context(), from, frame(1, nil, true))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "never asked")
	v, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	defer v.Close()
	other := json.RawMessage(`{"watchId":2,"seq":1,"width":3,"height":2,"rows":{}}`)
	_, err = m.handleUpdate(t.Context(), from, other)
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "another watch id")
	_, err = m.handleUpdate(t.Context(), protocol.Requester{AccountID: "other", TraposID: "7:"}, frame(1, nil, true))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "another account's computer")
	for _, bad := range []string{`{"seq":1}`, `{"watchId":1,"width":0,"height":2}`, `{"watchId":1,"width":3,"height":2,"rows":{"9":{"text":"x"}}}`, `{"watchId":1,"width":3,"height":2,"rows":{"1":{"text":"\u2014"}}}`, `[]`} {
		_, err = m.handleUpdate(t.Context(), from, json.RawMessage(bad))
		assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(err), bad)
	}
}

// TestAnUpdateMayOvertakeTheWatchAnswer: the computer's first update can be handled before
// screen.watch's answer reaches the module; it waits for it instead of being refused.
func TestAnUpdateMayOvertakeTheWatchAnswer(t *testing.T) {
	m, d := standIn(t)
	var wg sync.WaitGroup
	var updateErr error
	d.After = func(ctx context.Context, _ int, typ string) error {
		if typ == protocol.TypeScreenWatch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, updateErr = m.handleUpdate(context.Background(), from, frame(1, map[string]string{"1": "hi "}, true))
			}()
			require.Eventually(t, func() bool { return m.Watches() == 1 }, testWait, testTick)
		}
		return nil
	}
	v, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	defer v.Close()
	f, err := v.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "hi ", f.Screen.Rows[0].Text)
	wg.Wait()
	assert.NoError(t, updateErr)
}

// TestTheComputerGoingAwayEndsTheWatch: when the computer's socket closes, viewers hear it
// and the next viewer starts a new watch.
func TestTheComputerGoingAwayEndsTheWatch(t *testing.T) {
	m, d := standIn(t)
	v, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	socket, closeSocket := context.WithCancel(t.Context())
	_, err = m.handleUpdate(socket, from, frame(1, map[string]string{"1": "hi "}, true))
	require.NoError(t, err)
	_, err = v.Next(t.Context())
	require.NoError(t, err)
	closeSocket()
	_, err = v.Next(t.Context())
	assert.ErrorIs(t, err, ErrGone)
	assert.Equal(t, 0, m.Watches())
	v.Close()
	assert.Equal(t, []string{protocol.TypeScreenWatch}, d.Types(), "no unwatch to a computer that went away")
	v, err = m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	v.Close()
	assert.Equal(t, []string{protocol.TypeScreenWatch, protocol.TypeScreenWatch, protocol.TypeScreenUnwatch}, d.Types())
}

// sockets stands in for the gateway's Handlers.Socket: each computer's socket is held until
// the test closes it, and a closed one's place is taken by a new one, as a reconnect does.
type sockets struct {
	mu    sync.Mutex
	held  map[string]context.Context
	close map[string]context.CancelCauseFunc
}

func socketsOf(m *Module) *sockets {
	s := &sockets{held: map[string]context.Context{}, close: map[string]context.CancelCauseFunc{}}
	m.socketOf = s.socket
	return s
}

func (s *sockets) socket(accountID, traposID string) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := watchKey(accountID, traposID, "")
	if s.held[key] == nil || s.held[key].Err() != nil {
		s.held[key], s.close[key] = context.WithCancelCause(context.Background())
	}
	return s.held[key]
}

// closeSocket closes the computer's socket, with the gateway's reason (nil: it left).
func (s *sockets) closeSocket(from protocol.Requester, cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.close[watchKey(from.AccountID, from.TraposID, "")](cause)
}

// TestAComputerLeavingBeforeItsFirstUpdateEndsTheWatch: a computer that answers screen.watch
// and leaves before it sends an update (a client before 0.5.21 that lost its watch, or one that
// disconnects between the two) ends its watch as one that sent updates does: its viewers hear
// it, and the next viewer starts a new watch rather than joining the stale one. The watch was
// tied to the socket only at its first update, so its viewers waited for ever (the web
// console said "Live", and the stream sent no end event).
func TestAComputerLeavingBeforeItsFirstUpdateEndsTheWatch(t *testing.T) {
	m, d := standIn(t)
	socks := socketsOf(m)
	v, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	socks.closeSocket(from, nil)
	ctx, cancel := context.WithTimeout(t.Context(), testWait) // a bound on the failure, not a timing
	defer cancel()
	_, err = v.Next(ctx)
	require.ErrorIs(t, err, ErrGone)
	assert.Equal(t, 0, m.Watches())

	v2, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{protocol.TypeScreenWatch, protocol.TypeScreenWatch}, d.Types(), "a second viewer starts a new watch")
	v.Close()
	_, err = m.handleUpdate(t.Context(), from, frame(1, map[string]string{"1": "hi "}, true))
	require.NoError(t, err)
	f, err := v2.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"hi ", ""}, texts(f))

	// The gateway's reason for closing the socket reaches the viewers, as after an update.
	why := protocol.Errorf(protocol.CodeNotConnected, "the gateway is shutting down")
	socks.closeSocket(from, why)
	_, err = v2.Next(t.Context())
	assert.Equal(t, why, err)
	v2.Close()
	assert.Equal(t, []string{protocol.TypeScreenWatch, protocol.TypeScreenWatch}, d.Types(), "no unwatch to a computer that went away")
}

// TestAWatchForAnotherReplicaEndsWithTheSocketBeforeItsFirstUpdate: the holder's record of a
// watch for another replica's viewers is forgotten when the computer's socket closes, though
// no update came; it was kept until the viewers' replica went.
func TestAWatchForAnotherReplicaEndsWithTheSocketBeforeItsFirstUpdate(t *testing.T) {
	m, _ := standIn(t)
	socks := socketsOf(m)
	relay := newRelayStandIn("")
	relay.answer = func(relayMsg) (json.RawMessage, error) { return nil, nil }
	m.OnReplica("b", relay)
	_, err := m.Relayed(t.Context(), "a", testAccount, "7:", relayMsg{Op: opWatch}.encode())
	require.NoError(t, err)
	assert.Equal(t, 1, m.Relays())
	socks.closeSocket(from, nil)
	require.Eventually(t, func() bool { return m.Relays() == 0 }, testWait, testTick, "the record outlived the socket")
	_, err = m.handleUpdate(t.Context(), from, frame(1, nil, true))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err))
	assert.Empty(t, relay.ops(), "nothing passed on, nothing told: the viewers' replica hears it from the cluster")
}

func TestAWatchTheComputerRefusesFailsItsViewer(t *testing.T) {
	m, d := standIn(t)
	d.Exec = func(string, map[string]any) (any, *daemonfake.Error) {
		return nil, &daemonfake.Error{Code: string(protocol.CodeForbidden), Message: "set sandbox.allow_screen view"}
	}
	_, err := m.Watch(t.Context(), "7:", 0)
	assert.Equal(t, protocol.CodeForbidden, protocol.CodeOf(err))
	assert.Equal(t, 0, m.Watches())
}

// relayStandIn is the cluster's Peer as the module sees it: it answers the messages sent to
// the holder with answer, and the holder's lifeline is held.
type relayStandIn struct {
	holder string
	held   context.Context
	end    context.CancelCauseFunc
	mu     sync.Mutex
	sent   []string // op of each message sent
	answer func(relayMsg) (json.RawMessage, error)
	// ownerGone, when set, ends every lifeline of a watching replica at once, with it.
	ownerGone error
}

func newRelayStandIn(holder string) *relayStandIn {
	held, end := context.WithCancelCause(context.Background())
	return &relayStandIn{holder: holder, held: held, end: end}
}

func (r *relayStandIn) Send(_ context.Context, replica, _, _ string, raw json.RawMessage, _ time.Duration) (json.RawMessage, error) {
	var msg relayMsg
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.sent = append(r.sent, replica+":"+msg.Op)
	r.mu.Unlock()
	return r.answer(msg)
}

func (r *relayStandIn) Tell(replica, accountID, traposID string, msg json.RawMessage) error {
	_, err := r.Send(context.Background(), replica, accountID, traposID, msg, 0)
	return err
}

func (r *relayStandIn) Holder(string, string) (string, context.Context, context.CancelFunc) {
	if r.holder == "" {
		return "", nil, nil
	}
	return r.holder, r.held, func() {}
}

func (r *relayStandIn) Alive(string) (context.Context, context.CancelFunc) {
	alive, stop := context.WithCancelCause(context.Background())
	if r.ownerGone != nil {
		stop(r.ownerGone)
	}
	return alive, func() { stop(context.Canceled) }
}

func (r *relayStandIn) ops() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sent...)
}

// Under --nats, a computer whose socket another replica holds is watched through that
// replica's module: the watch starts there, only that replica's updates count, and the
// watch ends when the cluster's lifeline of the computer there ends. A computer listed on
// another replica that no replica holds any more is not connected, and nothing is asked.
func TestAComputerOnAnotherReplicaIsWatchedThroughIt(t *testing.T) {
	m, d := standIn(t)
	relay := newRelayStandIn("b")
	relay.answer = func(msg relayMsg) (json.RawMessage, error) {
		return json.RawMessage(`{"watchId":1}`), nil
	}
	m.OnReplica("a", relay)
	d.List = []computer.Computer{{AccountID: testAccount, TraposID: "7:", Replica: "b"}}
	v, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	defer v.Close()
	assert.Equal(t, []string{"b:watch"}, relay.ops())
	assert.Empty(t, d.Types(), "the computer is asked through b")

	update := relayMsg{Op: opUpdate, Update: frame(1, map[string]string{"1": "abc"}, true)}.encode()
	_, err = m.Relayed(t.Context(), "c", testAccount, "7:", update)
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "an update passed on by another replica than the holder")
	_, err = m.handleUpdate(t.Context(), from, frame(1, nil, true))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "an update of the computer here")
	_, err = m.Relayed(t.Context(), "b", testAccount, "7:", update)
	require.NoError(t, err)
	f, err := v.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"abc", ""}, texts(f))

	why := protocol.Errorf(protocol.CodeNotConnected, "replica b has stopped")
	relay.end(why)
	_, err = v.Next(t.Context())
	assert.Equal(t, why, err)
	v.Close()
	assert.Equal(t, []string{"b:watch"}, relay.ops(), "a watch that ended is not stopped")

	relay.holder = ""
	_, err = m.Watch(t.Context(), "7:", 0)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err))
	assert.Empty(t, d.Types())
	assert.Equal(t, 0, m.Watches())

	d.List[0].Replica = "a"
	v, err = m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	v.Close()
	assert.Equal(t, []string{protocol.TypeScreenWatch, protocol.TypeScreenUnwatch}, d.Types(), "one held here is watched here")
}

// The holder's side: a watch started for another replica passes the computer's updates on
// and answers what that replica answered; a failure to pass one on forgets the watch, answers
// the computer unknown_watch and tells the other replica.
func TestAWatchForAnotherReplicaPassesTheUpdatesOn(t *testing.T) {
	m, d := standIn(t)
	relay := newRelayStandIn("")
	var passed []json.RawMessage
	relay.answer = func(msg relayMsg) (json.RawMessage, error) {
		if msg.Op == opUpdate {
			passed = append(passed, msg.Update)
			if len(passed) == 2 {
				return nil, protocol.Errorf(protocol.CodeTimeout, "replica a did not answer in time")
			}
		}
		return nil, nil
	}
	m.OnReplica("b", relay)
	answer, err := m.Relayed(t.Context(), "a", testAccount, "7:", relayMsg{Op: opWatch}.encode())
	require.NoError(t, err)
	assert.JSONEq(t, `{"watchId":1}`, string(answer))
	assert.Equal(t, 1, m.Relays())
	assert.Equal(t, 0, m.Watches())

	_, err = m.handleUpdate(t.Context(), from, frame(1, nil, true))
	require.NoError(t, err)
	_, err = m.handleUpdate(t.Context(), from, frame(2, nil, false))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err))
	assert.Equal(t, []string{"a:update", "a:update", "a:lost"}, relay.ops())
	assert.Equal(t, 0, m.Relays())
	_, err = m.handleUpdate(t.Context(), from, frame(3, nil, false))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err))
	assert.Len(t, passed, 2)
	assert.Equal(t, []string{protocol.TypeScreenWatch}, d.Types())
}

// A screen.update whose field has the wrong JSON kind is refused naming the field and what it
// must be, in the protocol's words, never the Go type it is decoded into.
func TestAnUpdateWithAFieldOfTheWrongKindNamesTheField(t *testing.T) {
	m, _ := standIn(t)
	for bad, want := range map[string]string{
		`{"watchId":1,"width":1e9,"height":2}`:          `screen.update's payload: "width" must be a whole number (got a number 1e9)`,
		`{"watchId":1,"width":3,"height":2,"rows":"x"}`: `screen.update's payload: "rows" must be an object (got a string)`,
	} {
		_, err := m.handleUpdate(t.Context(), from, json.RawMessage(bad))
		assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(err), bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), want, bad)
		assert.NotContains(t, err.Error(), "Go struct", bad)
	}
}

// watchingAFirstScreen is a module whose viewer of 7: has read the computer's first screen
// (3x2: abc, def), for a test of the updates that may follow it.
func watchingAFirstScreen(t *testing.T) (*Module, *Viewer) {
	t.Helper()
	m, _ := standIn(t)
	v, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	t.Cleanup(v.Close)
	_, err = m.handleUpdate(t.Context(), from, frame(1, map[string]string{"1": "abc", "2": "def"}, true))
	require.NoError(t, err)
	_, err = v.Next(t.Context())
	require.NoError(t, err)
	return m, v
}

// TestAPaletteThatIsNoColourNeverReachesAViewer: a screen.update's palette went to every
// viewer as the computer sent it, and the web console builds CSS of it (a hostile computer's
// "url(/trapos/…)" made the console's page fetch the gateway's API with its viewer's rights).
// Now it is refused, bad_payload, and the viewer keeps the screen it had.
func TestAPaletteThatIsNoColourNeverReachesAViewer(t *testing.T) {
	m, v := watchingAFirstScreen(t)
	var err error

	for bad, want := range map[string]string{
		`["url(/trapos/computers)"]`:                           `screen.update: palette colour 0 is "url(/trapos/computer…", not #rrggbb`,
		`["#f0f0f0", "#00000g"]`:                               `screen.update: palette colour 1 is "#00000g", not #rrggbb`,
		`["#f0f0f0) 0 0, url(x"]`:                              `not #rrggbb`,
		`["` + strings.Repeat(`#000000", "`, 16) + `#000000"]`: `screen.update: the palette has 17 colours; a screen has 16`,
	} {
		update := `{"watchId":1,"seq":2,"width":3,"height":2,"rows":{},"palette":` + bad + `}`
		_, err := m.handleUpdate(t.Context(), from, json.RawMessage(update))
		assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(err), bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), want, bad)
	}
	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":1,"seq":2,"width":3,"height":2,"rows":{},"palette":["#A0b0C0"]}`))
	require.NoError(t, err, "#rrggbb in either case")
	f, err := v.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, f.Seq, "no refused update was merged")
	assert.Equal(t, []string{"#A0b0C0"}, f.Screen.Palette)
}

// TestAWatchTheOwnerEndedEndsItsViewersAndTheNextStartsAfresh: when the owner set
// sandbox.allow_screen none, the computer stopped sending updates without a word: the viewers
// kept a still screen for good, and a viewer who came after the owner allowed view again
// joined that dead watch and saw the old screen, never the new one. The computer's last
// update now says the watch ended: its viewers end with the reason, and the next viewer
// starts a new watch.
func TestAWatchTheOwnerEndedEndsItsViewersAndTheNextStartsAfresh(t *testing.T) {
	m, d := standIn(t)
	v, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	defer v.Close()
	_, err = m.handleUpdate(t.Context(), from, frame(1, map[string]string{"1": "abc", "2": "de "}, true))
	require.NoError(t, err)
	_, err = v.Next(t.Context())
	require.NoError(t, err)

	reason := "the screen watch ended: the owner withdrew sandbox.allow_screen (it is now none); the owner can allow it again with: set sandbox.allow_screen view"
	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":1,"seq":2,"ended":{"code":"forbidden","message":"`+reason+`"}}`))
	require.NoError(t, err)
	_, err = v.Next(t.Context())
	assert.Equal(t, protocol.CodeForbidden, protocol.CodeOf(err))
	assert.EqualError(t, err, "forbidden: computer 7: says "+reason, "the unlabelled computer's traposId, with no doubled colon")
	assert.Equal(t, 0, m.Watches())

	v2, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	defer v2.Close()
	assert.Equal(t, []string{protocol.TypeScreenWatch, protocol.TypeScreenWatch}, d.Types(), "the next viewer asked the computer for a new watch")
}

// A watching replica given up on (its heartbeats late) may live on: the holder forgets its
// watch, and tells it, so that its viewers do not wait for updates that no longer come.
func TestAWatchForAReplicaGivenUpOnIsForgottenAndItIsTold(t *testing.T) {
	m, _ := standIn(t)
	relay := newRelayStandIn("")
	relay.ownerGone = protocol.Errorf(protocol.CodeNotConnected, "replica a has sent no heartbeat for 15s")
	var lost []relayMsg
	done := make(chan struct{})
	relay.answer = func(msg relayMsg) (json.RawMessage, error) {
		if msg.Op == opLost {
			lost = append(lost, msg)
			close(done)
		}
		return nil, nil
	}
	m.OnReplica("b", relay)
	_, err := m.Relayed(t.Context(), "a", testAccount, "7:", relayMsg{Op: opWatch}.encode())
	require.NoError(t, err)
	<-done
	assert.Equal(t, 0, m.Relays())
	require.Len(t, lost, 1)
	assert.JSONEq(t, `1`, string(lost[0].WatchID))
	assert.Equal(t, "it took replica a for gone: replica a has sent no heartbeat for 15s", lost[0].Message)
	_, err = m.handleUpdate(t.Context(), from, frame(1, nil, true))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err))
}

// An update passed on as the computer's socket closes (the computer left, or this replica is
// stopping) is not told lost to the watching replica: the cluster's lifeline of the computer
// ends its viewers in its own words, where a lost message raced it with "could not pass it on
// (context canceled)" (TestALiveScreenThroughAnyReplica, tests/scaleout, read that as replica b
// stopped).
func TestAnUpdateCutOffByItsSocketsEndIsNotToldLost(t *testing.T) {
	m, _ := standIn(t)
	relay := newRelayStandIn("")
	socket, closeSocket := context.WithCancelCause(context.Background())
	var told []string
	relay.answer = func(msg relayMsg) (json.RawMessage, error) {
		switch msg.Op {
		case opWatch:
			return nil, nil
		case opUpdate:
			closeSocket(errors.New("the gateway is shutting down")) // the socket ends under the send
			return nil, context.Canceled
		}
		told = append(told, msg.Op)
		return nil, nil
	}
	m.OnReplica("b", relay)
	_, err := m.Relayed(t.Context(), "a", testAccount, "7:", relayMsg{Op: opWatch}.encode())
	require.NoError(t, err)
	_, err = m.handleUpdate(socket, from, frame(1, map[string]string{"1": "abc"}, false))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err))
	assert.Empty(t, told, "nothing told to replica a")
	assert.Equal(t, 0, m.Relays(), "the watch is forgotten")
}

// TestARowWiderThanTheScreenNeverReachesAViewer: a row's text, fg and bg were kept as sent,
// whatever the screen's width, and every row of a watch stays until it changes: a hostile
// computer could grow its watch to 1024 rows of 100 KB each, one update at a time, in the
// gateway and in every viewer (the web console fetched it whole). Now such a row is refused,
// bad_payload, and the viewer keeps the screen it had.
func TestARowWiderThanTheScreenNeverReachesAViewer(t *testing.T) {
	m, v := watchingAFirstScreen(t)
	var err error

	wide := strings.Repeat("x", 100<<10)
	for bad, want := range map[string]string{
		`{"text":"` + wide + `","fg":"000","bg":"fff"}`: "screen.update: row 1 has 102400 cells; the screen is 3 wide",
		`{"text":"abcd","fg":"000","bg":"fff"}`:         "screen.update: row 1 has 4 cells; the screen is 3 wide",
		`{"text":"abc","fg":"0000","bg":"fff"}`:         "screen.update: row 1 has 4 cells; the screen is 3 wide",
		`{"text":"abc","fg":"000","bg":"` + wide + `"}`: "screen.update: row 1 has 102400 cells",
	} {
		update := `{"watchId":1,"seq":2,"width":3,"height":2,"rows":{"1":` + bad + `}}`
		_, err := m.handleUpdate(t.Context(), from, json.RawMessage(update))
		assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(err), want)
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
	}
	// A row is counted in the computer's cells: \u00e9 is one, though two bytes in Go.
	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":1,"seq":2,"width":3,"height":2,"rows":{"2":{"text":"\u00e9\u00e9\u00e9","fg":"000","bg":"fff"}}}`))
	require.NoError(t, err)
	f, err := v.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, f.Seq, "no refused update was merged")
	assert.Equal(t, []string{"abc", "\u00e9\u00e9\u00e9"}, texts(f))
}

// TestAScreenLargerThanCCsIsRefused: a screen is at most 255 cells each way, CC's largest
// terminal; a hostile computer's 1024×1024 one, which the gateway took, hung the web console's
// tab that drew it (14 s a frame). It is refused, bad_payload, and the viewer keeps the screen
// it had; 255×255 is a screen.
func TestAScreenLargerThanCCsIsRefused(t *testing.T) {
	m, v := watchingAFirstScreen(t)
	for _, size := range []string{`"width":256,"height":19`, `"width":51,"height":256`, `"width":1024,"height":1024`} {
		_, err := m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":1,"seq":2,`+size+`,"rows":{}}`))
		assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(err), size)
		require.Error(t, err, size)
		assert.Contains(t, err.Error(), "is not a screen's (CC's are 1 to 255 cells each way)", size)
	}
	_, err := m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":1,"seq":2,"width":255,"height":255,"rows":{}}`))
	require.NoError(t, err)
	f, err := v.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, f.Seq, "no refused update was merged")
	assert.Equal(t, 255, f.Screen.Width)
}

// TestAWatchNamesTheRowsTheComputerHasNotSeen: each screen.update names the rows the
// computer's mirror has not seen drawn whole (unknownRows, as screen.read's), and the viewers'
// frames carry them: the web console and trap-sandbox screen showed them as blank rows,
// unsaid. An update without them (all rows seen, or a client before 0.5.25) names none; a
// list that is no rows of the screen is refused, bad_payload, and the viewer keeps its screen.
func TestAWatchNamesTheRowsTheComputerHasNotSeen(t *testing.T) {
	m, v := watchingAFirstScreen(t)
	_, err := m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":1,"seq":2,"width":3,"height":2,"rows":{},"unknownRows":[1,2]}`))
	require.NoError(t, err)
	f, err := v.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, f.Screen.UnknownRows)

	for bad, want := range map[string]string{
		`[0]`:     "screen.update: it names row 0 as unknown; the screen has rows 1 to 2",
		`[3]`:     "screen.update: it names row 3 as unknown; the screen has rows 1 to 2",
		`[1,2,1]`: "screen.update: it names 3 unknown rows; the screen is 2 high",
		`"1"`:     "unknownRows",
	} {
		_, err := m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":1,"seq":3,"width":3,"height":2,"rows":{},"unknownRows":`+bad+`}`))
		assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(err), bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), want, bad)
	}

	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":1,"seq":3,"width":3,"height":2,"rows":{"2":{"text":"xyz","fg":"000","bg":"fff"}},"unknownRows":[1]}`))
	require.NoError(t, err)
	f, err = v.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 3, f.Seq, "no refused update was merged")
	assert.Equal(t, []int{1}, f.Screen.UnknownRows, "row 2 drawn whole: seen")
	_, err = m.handleUpdate(t.Context(), from, frame(4, map[string]string{"1": "abc"}, false))
	require.NoError(t, err)
	f, err = v.Next(t.Context())
	require.NoError(t, err)
	assert.Empty(t, f.Screen.UnknownRows, "an update that names none: every row seen")
}

// TestAMonitorIsWatchedApartFromTheComputersOwnScreen: a viewer of a monitor has a watch of its
// own (screen.watch {monitor}), whose updates name the monitor and reach its viewers only, with
// the monitor's text scale; the monitor taken off ends that watch alone, with the computer's
// words and not_found, and the computer's own screen's watch goes on.
func TestAMonitorIsWatchedApartFromTheComputersOwnScreen(t *testing.T) {
	m, d := standIn(t)
	var mu sync.Mutex
	var watched []any
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		switch typ {
		case protocol.TypeScreenWatch:
			mu.Lock()
			defer mu.Unlock()
			watched = append(watched, p["monitor"])
			if p["monitor"] != nil {
				return map[string]any{"watchId": 2}, nil
			}
			return map[string]any{"watchId": 1}, nil
		case protocol.TypeScreenUnwatch:
			return map[string]any{}, nil
		}
		return nil, nil
	}
	own, err := m.Watch(t.Context(), "7:", 0)
	require.NoError(t, err)
	defer own.Close()
	top, err := m.WatchMonitor(t.Context(), "7:", "top", 0)
	require.NoError(t, err)
	assert.Equal(t, []any{nil, "top"}, watched, "one watch each, the monitor's naming it")
	assert.Equal(t, 2, m.Watches())
	// Named in another case, a side is the same monitor (CC reads a side in any case).
	again, err := m.WatchMonitor(t.Context(), "7:", "Top", 0)
	require.NoError(t, err)
	again.Close()
	assert.Len(t, watched, 2, "the monitor's viewers share its watch, Top's too")

	monitorUpdate := `{"watchId":2,"seq":1,"monitor":"top","textScale":0.5,"width":3,"height":2,"colour":true,"cursor":{"x":1,"y":1},"rows":{"1":{"text":"mon","fg":"000","bg":"fff"},"2":{"text":"   ","fg":"000","bg":"fff"}},"palette":["#f0f0f0"],"fg":1,"bg":32768}`
	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(monitorUpdate))
	require.NoError(t, err)
	f, err := top.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"mon", "   "}, texts(f))
	assert.Equal(t, "top", f.Screen.Monitor)
	assert.Equal(t, 0.5, f.Screen.TextScale)
	done, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = own.Next(done)
	assert.ErrorIs(t, err, context.Canceled, "the computer's own screen's viewer got no frame of the monitor's")

	// Without its monitor, the monitor's watch id is no watch of the computer's own screen.
	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":2,"seq":2,"width":3,"height":2,"rows":{}}`))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err))
	// A later update without textScale keeps it.
	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":2,"seq":2,"monitor":"top","width":3,"height":2,"rows":{"2":{"text":"abc","fg":"000","bg":"fff"}}}`))
	require.NoError(t, err)
	f, err = top.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"mon", "abc"}, texts(f))
	assert.Equal(t, 0.5, f.Screen.TextScale)

	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":2,"seq":3,"monitor":"top","ended":{"code":"not_found","message":"the screen watch ended: monitor top was taken off the computer"}}`))
	require.NoError(t, err)
	_, err = top.Next(t.Context())
	require.Error(t, err)
	assert.Equal(t, protocol.CodeNotFound, protocol.CodeOf(err))
	assert.Equal(t, "computer 7: says the screen watch ended: monitor top was taken off the computer", err.(*protocol.Error).Message)
	top.Close()
	assert.Equal(t, 1, m.Watches(), "the computer's own screen's watch goes on")
	_, err = m.handleUpdate(t.Context(), from, frame(1, map[string]string{"1": "own"}, true))
	require.NoError(t, err)
	f, err = own.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "own", f.Screen.Rows[0].Text)
	assert.Empty(t, f.Screen.Monitor)
}

// A monitor of a computer on another replica is watched through that replica as the computer's
// own screen is: the holder asks the computer for the monitor's watch, passes on only that
// watch's updates (they name the monitor), and says in its answer that the watch is the
// monitor's. A holder of an older build, whose answer names no monitor, watched the computer's
// own screen: that watch is stopped, and the viewer told to upgrade it.
func TestAMonitorOnAnotherReplicaIsWatchedThroughIt(t *testing.T) {
	holder, d := standIn(t)
	var asked []any
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		if typ == protocol.TypeScreenWatch {
			asked = append(asked, p["monitor"])
			return map[string]any{"watchId": 1}, nil
		}
		return map[string]any{}, nil
	}
	toA := newRelayStandIn("")
	var passed []json.RawMessage
	toA.answer = func(msg relayMsg) (json.RawMessage, error) {
		if msg.Op == opUpdate {
			passed = append(passed, msg.Update)
		}
		return nil, nil
	}
	holder.OnReplica("b", toA)
	answer, err := holder.Relayed(t.Context(), "a", testAccount, "7:", relayMsg{Op: opWatch, Monitor: "top"}.encode())
	require.NoError(t, err)
	assert.JSONEq(t, `{"watchId":1,"monitor":"top"}`, string(answer))
	assert.Equal(t, []any{"top"}, asked)
	_, err = holder.handleUpdate(t.Context(), from, frame(1, nil, true))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "the computer's own screen is not the watch passed on")
	monitorUpdate := json.RawMessage(`{"watchId":1,"seq":1,"monitor":"top","textScale":2,"width":3,"height":1,"rows":{"1":{"text":"mon","fg":"000","bg":"fff"}}}`)
	_, err = holder.handleUpdate(t.Context(), from, monitorUpdate)
	require.NoError(t, err)
	require.Len(t, passed, 1)

	watcher, dw := standIn(t)
	toB := newRelayStandIn("b")
	toB.answer = func(msg relayMsg) (json.RawMessage, error) {
		if msg.Op == opWatch {
			return holder.Relayed(t.Context(), "a", testAccount, "7:", relayMsg{Op: opWatch, Monitor: msg.Monitor}.encode())
		}
		return nil, nil
	}
	watcher.OnReplica("a", toB)
	dw.List = []computer.Computer{{AccountID: testAccount, TraposID: "7:", Replica: "b"}}
	v, err := watcher.WatchMonitor(t.Context(), "7:", "top", 0)
	require.NoError(t, err)
	_, err = watcher.Relayed(t.Context(), "b", testAccount, "7:", relayMsg{Op: opUpdate, Update: passed[0]}.encode())
	require.NoError(t, err)
	f, err := v.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"mon"}, texts(f))
	assert.Equal(t, 2.0, f.Screen.TextScale)
	v.Close()

	toB.answer = func(msg relayMsg) (json.RawMessage, error) { return json.RawMessage(`{"watchId":5}`), nil } // an older holder
	_, err = watcher.WatchMonitor(t.Context(), "7:", "top", 0)
	require.Error(t, err)
	assert.Equal(t, "internal: replica b, which holds the socket of computer 7:, runs an older build of the gateway, which watches no monitor: upgrade it to watch monitor top", err.Error())
	ops := toB.ops()
	assert.Equal(t, "b:unwatch", ops[len(ops)-1], "the own screen's watch it started is stopped")
	assert.Equal(t, 0, watcher.Watches())
}

// watchingAMonitor is a module watching monitor top of computer 7: (watchId 2; the computer's
// own screen would be watchId 1) with a viewer that got its first frame.
func watchingAMonitor(t *testing.T) (*Module, *Viewer) {
	t.Helper()
	m, d := standIn(t)
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		if typ == protocol.TypeScreenWatch {
			if p["monitor"] != nil {
				return map[string]any{"watchId": 2}, nil
			}
			return map[string]any{"watchId": 1}, nil
		}
		return map[string]any{}, nil
	}
	v, err := m.WatchMonitor(t.Context(), "7:", "top", 0)
	require.NoError(t, err)
	t.Cleanup(v.Close)
	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":2,"seq":1,"monitor":"top","textScale":1,"width":3,"height":1,"rows":{"1":{"text":"mon","fg":"000","bg":"fff"}}}`))
	require.NoError(t, err)
	_, err = v.Next(t.Context())
	require.NoError(t, err)
	return m, v
}

// TestAMonitorsTextScaleIsCCsOrRefused: a monitor's text scale is 0.5 to 5 in steps of 0.5,
// as CC's setTextScale takes; a hostile computer's -1, 0, 1e308, 0.3 or 7 reached every
// viewer as it sent it (trap-sandbox screen printed 1e308 as 309 digits in its status line).
// Refused, bad_payload, and the viewer keeps the screen and scale it had; a string or a NaN
// (no JSON) is no number.
func TestAMonitorsTextScaleIsCCsOrRefused(t *testing.T) {
	m, v := watchingAMonitor(t)
	for bad, want := range map[string]string{
		`-1`:    "screen.update: the text scale -1 is not a monitor's (CC's are 0.5 to 5, in steps of 0.5)",
		`0`:     "the text scale 0 is not a monitor's",
		`1e308`: "the text scale 1e+308 is not a monitor's",
		`0.3`:   "the text scale 0.3 is not a monitor's",
		`7`:     "the text scale 7 is not a monitor's",
		`5.5`:   "the text scale 5.5 is not a monitor's",
		`"2"`:   "textScale",
		`NaN`:   "screen.update's payload",
	} {
		_, err := m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":2,"seq":2,"monitor":"top","textScale":`+bad+`,"width":3,"height":1,"rows":{"1":{"text":"BAD","fg":"000","bg":"fff"}}}`))
		assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(err), bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), want, bad)
	}
	_, err := m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":2,"seq":2,"monitor":"top","textScale":4.5,"width":3,"height":1,"rows":{}}`))
	require.NoError(t, err)
	f, err := v.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, f.Seq, "no refused update was merged")
	assert.Equal(t, "mon", f.Screen.Rows[0].Text)
	assert.Equal(t, 4.5, f.Screen.TextScale)
}

// TestAHostileComputersMonitorUpdatesReachNoOtherWatch: a computer's screen.update reaches only
// the watch it names by its monitor and id: one naming a monitor it was never asked to watch,
// the monitor's id without the monitor (or the own screen's id with it), a name that differs
// by a control character, an ANSI escape, a bidi mark, a "../" or 100 KB of name, or another
// computer's watch, is unknown_watch (the computer stops it), and the monitor's viewer keeps
// its screen.
func TestAHostileComputersMonitorUpdatesReachNoOtherWatch(t *testing.T) {
	m, v := watchingAMonitor(t)
	long := strings.Repeat("top", 100_000/3)
	for name, update := range map[string]string{
		"a monitor never watched":       `{"watchId":2,"seq":2,"monitor":"left","width":3,"height":1,"rows":{}}`,
		"the monitor's id, no monitor":  `{"watchId":2,"seq":2,"width":3,"height":1,"rows":{}}`,
		"the own screen's id with it":   `{"watchId":1,"seq":2,"monitor":"top","width":3,"height":1,"rows":{}}`,
		"a control character":           `{"watchId":2,"seq":2,"monitor":"top\u0000","width":3,"height":1,"rows":{}}`,
		"an ANSI escape":                `{"watchId":2,"seq":2,"monitor":"\u001b[2Jtop","width":3,"height":1,"rows":{}}`,
		"a bidi override (byte-less)":   `{"watchId":2,"seq":2,"monitor":"\u00e2\u0080\u00aetop","width":3,"height":1,"rows":{}}`,
		"a path":                        `{"watchId":2,"seq":2,"monitor":"../top","width":3,"height":1,"rows":{}}`,
		"100 KB of name":                `{"watchId":2,"seq":2,"monitor":"` + long + `","width":3,"height":1,"rows":{}}`,
		"an ended of a monitor unknown": `{"watchId":2,"seq":2,"monitor":"left","ended":{"code":"not_found","message":"gone"}}`,
	} {
		_, err := m.handleUpdate(t.Context(), from, json.RawMessage(update))
		assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), name)
		require.Error(t, err, name)
		assert.NotContains(t, err.Error(), "\x1b", name)
		assert.Less(t, len(err.Error()), 200, name)
	}
	other := protocol.Requester{AccountID: "other", TraposID: "7:"}
	_, err := m.handleUpdate(t.Context(), other, json.RawMessage(`{"watchId":2,"seq":2,"monitor":"top","width":3,"height":1,"rows":{"1":{"text":"BAD","fg":"000","bg":"fff"}}}`))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "another account's computer 7:")
	_, err = m.handleUpdate(t.Context(), protocol.Requester{AccountID: testAccount, TraposID: "8:"}, json.RawMessage(`{"watchId":2,"seq":2,"monitor":"top","width":3,"height":1,"rows":{}}`))
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "another computer of the account")

	_, err = m.handleUpdate(t.Context(), from, json.RawMessage(`{"watchId":2,"seq":2,"monitor":"top","width":3,"height":1,"rows":{}}`))
	require.NoError(t, err)
	f, err := v.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, f.Seq, "only the monitor's own update was merged")
	assert.Equal(t, "mon", f.Screen.Rows[0].Text)
	assert.Equal(t, 1, m.Watches())
}

// TestARefusalShowsTheComputersStringAsText: a refusal names what the computer sent, cut to 40
// bytes; a longer string was cut and left raw (a row "\x1b]0;…" of 50 bytes came back with its
// ESC, a terminal's escape wherever the message is shown, and a character cut in half).
func TestARefusalShowsTheComputersStringAsText(t *testing.T) {
	m, _ := watchingAFirstScreen(t)
	key := "\x1b]0;owned\x07" + strings.Repeat("é", 30)
	payload, err := json.Marshal(map[string]any{"watchId": 1, "seq": 2, "width": 3, "height": 2, "rows": map[string]any{key: map[string]any{"text": "x"}}})
	require.NoError(t, err)
	_, err = m.handleUpdate(t.Context(), from, payload)
	assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(err))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\x1b")
	assert.NotContains(t, err.Error(), "\x07")
	assert.True(t, utf8.ValidString(err.Error()), "%q", err.Error())
	assert.Contains(t, err.Error(), `screen.update: row \x1b]0;owned\x07ééééééééééééééé… is not a row of a 2-row screen`)
}

// TestAMonitorsWatchTakesTheBusOnlyFromItsHolder: on the replicas' bus, a monitor's watch kept
// through replica b takes updates and its loss from b alone: replica c's update of it, or its
// "lost", forged or stale, is unknown_watch or ignored, and b's update naming another monitor
// (or none) is no update of it; the viewer sees b's update only.
func TestAMonitorsWatchTakesTheBusOnlyFromItsHolder(t *testing.T) {
	watcher, dw := standIn(t)
	toB := newRelayStandIn("b")
	toB.answer = func(msg relayMsg) (json.RawMessage, error) {
		return json.RawMessage(`{"watchId":1,"monitor":"top"}`), nil
	}
	watcher.OnReplica("a", toB)
	dw.List = []computer.Computer{{AccountID: testAccount, TraposID: "7:", Replica: "b"}}
	v, err := watcher.WatchMonitor(t.Context(), "7:", "top", 0)
	require.NoError(t, err)
	defer v.Close()
	update := func(monitor, text string) json.RawMessage {
		return json.RawMessage(`{"watchId":1,"seq":1,"monitor":"` + monitor + `","width":3,"height":1,"rows":{"1":{"text":"` + text + `","fg":"000","bg":"fff"}}}`)
	}

	_, err = watcher.Relayed(t.Context(), "c", testAccount, "7:", relayMsg{Op: opUpdate, Update: update("top", "BAD")}.encode())
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "an update from a replica that is not the holder")
	_, err = watcher.Relayed(t.Context(), "b", testAccount, "7:", relayMsg{Op: opUpdate, Update: update("left", "BAD")}.encode())
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "the holder's update of another monitor")
	_, err = watcher.Relayed(t.Context(), "b", "other", "7:", relayMsg{Op: opUpdate, Update: update("top", "BAD")}.encode())
	assert.Equal(t, protocol.CodeUnknownWatch, protocol.CodeOf(err), "another account's computer 7:")
	_, err = watcher.Relayed(t.Context(), "c", testAccount, "7:", relayMsg{Op: opLost, WatchID: json.RawMessage(`1`), Monitor: "top", Message: "forged"}.encode())
	require.NoError(t, err)
	_, err = watcher.Relayed(t.Context(), "b", testAccount, "7:", relayMsg{Op: opLost, WatchID: json.RawMessage(`1`), Message: "no monitor"}.encode())
	require.NoError(t, err)
	assert.Equal(t, 1, watcher.Watches(), "a lost from another replica, or of the own screen's watch, ends nothing")

	_, err = watcher.Relayed(t.Context(), "b", testAccount, "7:", relayMsg{Op: opUpdate, Update: update("top", "mon")}.encode())
	require.NoError(t, err)
	f, err := v.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"mon"}, texts(f))
	assert.Equal(t, 1, f.Seq, "no other update was merged")
}

// TestAForgedMonitorWatchOnTheBusKeepsNothingOnTheHolder: the holder asks the computer for the
// watch a replica names, whatever the monitor's name (a control character, 100 KB of it): the
// computer's refusal is the answer and the holder records nothing; a watch started for replica
// a is stopped by a alone (another replica's unwatch of it, forged or stale, stops nothing).
func TestAForgedMonitorWatchOnTheBusKeepsNothingOnTheHolder(t *testing.T) {
	holder, d := standIn(t)
	var mu sync.Mutex
	var unwatched int
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		switch typ {
		case protocol.TypeScreenWatch:
			if p["monitor"] != "top" {
				return nil, &daemonfake.Error{Code: "bad_payload", Message: "no monitor named that: this computer's monitors are top"}
			}
			return map[string]any{"watchId": 1}, nil
		case protocol.TypeScreenUnwatch:
			mu.Lock()
			unwatched++
			mu.Unlock()
		}
		return map[string]any{}, nil
	}
	holder.OnReplica("b", newRelayStandIn(""))
	for _, name := range []string{"top\x1b[2J", strings.Repeat("x", 100_000), "../top"} {
		_, err := holder.Relayed(t.Context(), "a", testAccount, "7:", relayMsg{Op: opWatch, Monitor: name}.encode())
		assert.Equal(t, protocol.CodeBadPayload, protocol.CodeOf(err))
		assert.Equal(t, 0, holder.Relays(), "nothing recorded of a watch the computer refused")
	}
	_, err := holder.Relayed(t.Context(), "a", testAccount, "7:", relayMsg{Op: opWatch, Monitor: "top"}.encode())
	require.NoError(t, err)
	require.Equal(t, 1, holder.Relays())
	_, err = holder.Relayed(t.Context(), "c", testAccount, "7:", relayMsg{Op: opUnwatch, WatchID: json.RawMessage(`1`), Monitor: "top"}.encode())
	require.NoError(t, err)
	assert.Equal(t, 1, holder.Relays(), "replica c's unwatch of a's watch")
	_, err = holder.Relayed(t.Context(), "a", testAccount, "7:", relayMsg{Op: opUnwatch, WatchID: json.RawMessage(`1`), Monitor: "top"}.encode())
	require.NoError(t, err)
	assert.Equal(t, 0, holder.Relays())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, unwatched, "the computer asked to stop it once, by a")
}
