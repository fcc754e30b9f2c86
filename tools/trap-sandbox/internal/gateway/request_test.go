package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hostcomputer "trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

func TestRequestRoundTrip(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:turtle", "")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	pending := asyncRequest(h.gw, ctx, "7:turtle", TypePing, nil)
	req := c.answerNext(func(req protocol.Frame) map[string]any {
		return map[string]any{"ok": true, "payload": map[string]any{"traposId": "7:turtle"}}
	})
	assert.Equal(t, protocol.EventGatewayRequest, req.Event)
	assert.Equal(t, "7:turtle", req.TraposReceiverID)
	assert.Equal(t, TypePing, req.Type)
	assert.JSONEq(t, `{}`, string(req.Payload))
	_, err := uuid.Parse(req.MessageID)
	assert.NoError(t, err, "the gateway mints UUID messageIds")

	r := awaitResult(t, pending)
	require.NoError(t, r.err)
	assert.True(t, r.resp.OK)
	assert.Equal(t, TypePing, r.resp.Type)
	assert.JSONEq(t, `{"traposId":"7:turtle"}`, string(r.resp.Payload))
	assert.Nil(t, r.resp.Error)
}

func TestRequestComputerAnswersError(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	pending := asyncRequest(h.gw, ctx, "7:", "dance", json.RawMessage(`{"style":"waltz"}`))
	req := c.answerNext(func(protocol.Frame) map[string]any {
		return map[string]any{"ok": false, "error": map[string]any{"code": "unknown_type", "message": "no dance"}}
	})
	assert.JSONEq(t, `{"style":"waltz"}`, string(req.Payload))
	r := awaitResult(t, pending)
	require.NoError(t, r.err, "a computer's ok:false is an answer, not a gateway failure")
	assert.False(t, r.resp.OK)
	assert.Equal(t, &protocol.Error{Code: protocol.CodeUnknownType, Message: "no dance"}, r.resp.Error)
}

// An answer is matched to its request by messageId alone, as the seed's pending maps are: a
// computer_response that names another type is still the answer, passed on with its type.
func TestAnAnswerIsMatchedByMessageIDWhateverItsType(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	pending := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	c.answerNext(func(protocol.Frame) map[string]any {
		return map[string]any{"type": "fs.read", "ok": true, "payload": map[string]any{"traposId": "7:"}}
	})
	r := awaitResult(t, pending)
	require.NoError(t, r.err)
	assert.True(t, r.resp.OK)
	assert.Equal(t, "fs.read", r.resp.Type)
	assert.JSONEq(t, `{"traposId":"7:"}`, string(r.resp.Payload))
}

func TestRequestResponsePayloadForms(t *testing.T) {
	forms := map[string]any{
		"object {}":    map[string]any{},
		"array []":     []any{},
		"null":         nil,
		"string":       "str",
		"number":       3,
		"missing":      "<missing>",
		"non-empty []": []any{1, 2},
	}
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	for name, payload := range forms {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			pending := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
			c.answerNext(func(protocol.Frame) map[string]any {
				resp := map[string]any{"ok": true, "payload": payload}
				if payload == "<missing>" {
					delete(resp, "payload")
				}
				return resp
			})
			r := awaitResult(t, pending)
			require.NoError(t, r.err)
			assert.True(t, r.resp.OK)
			assert.JSONEq(t, `{}`, string(r.resp.Payload))
		})
	}
}

func TestRequestOutboundPayloadRule(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	for _, payload := range []string{"", "null", "[]", " [ ] ", "{}"} {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		pending := asyncRequest(h.gw, ctx, "7:", TypePing, json.RawMessage(payload))
		req := c.answerNext(func(protocol.Frame) map[string]any { return map[string]any{"ok": true} })
		assert.JSONEq(t, `{}`, string(req.Payload), "payload %q", payload)
		require.NoError(t, awaitResult(t, pending).err)
		cancel()
	}
	for _, bad := range []string{`"str"`, `[1]`, `3`, `{`} {
		_, err := h.gw.Request(context.Background(), LocalAccount, "7:", TypePing, json.RawMessage(bad))
		assert.Equal(t, protocol.CodeInternal, protocol.CodeOf(err), "payload %q", bad)
	}
	_, err := h.gw.Request(context.Background(), LocalAccount, "7:", "", nil)
	assert.Equal(t, protocol.CodeInternal, protocol.CodeOf(err))
}

// TestARequestThatIsNotUTF8IsNotSent: a payload holding a byte that is not UTF-8 would make a
// frame no WebSocket text frame, which the computer answers by closing its socket (1007, as
// CC: Tweaked's Netty does): it is refused, nothing is sent, and the socket keeps working.
func TestARequestThatIsNotUTF8IsNotSent(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err := h.gw.Request(ctx, LocalAccount, "7:", TypePing, json.RawMessage("{\"content\":\"k\xfcche\"}"))
	assert.Equal(t, protocol.CodeInternal, protocol.CodeOf(err), "%v", err)
	assert.Contains(t, err.Error(), "not UTF-8 text")

	pending := asyncRequest(h.gw, ctx, "7:", TypePing, json.RawMessage(`{"content":"küche"}`))
	req := c.answerNext(func(protocol.Frame) map[string]any { return map[string]any{"ok": true} })
	assert.JSONEq(t, `{"content":"küche"}`, string(req.Payload), "the next frame the computer reads is the next request")
	require.NoError(t, awaitResult(t, pending).err)
}

func TestRequestNotConnected(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	h.connect(t, "7:", "")
	_, err := h.gw.Request(context.Background(), LocalAccount, "8:", TypePing, nil)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err))
	assert.Contains(t, err.Error(), "8:")
	_, err = h.gw.Request(context.Background(), "other-account", "7:", TypePing, nil)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err), "the registry is keyed by account too")
}

func TestRequestTimeoutAndLateAnswer(t *testing.T) {
	fc := newFakeClock()
	h := newHarness(t, Config{Clock: fc, RequestTimeout: 100 * time.Millisecond}, nil)
	c := h.connect(t, "7:", "")

	pending := asyncRequest(h.gw, context.Background(), "7:", TypePing, nil)
	req := c.read() // the computer sees the request but does not answer in time
	// The request's timer, armed before the frame was sent, ends it once the clock passes it.
	fc.Advance(100 * time.Millisecond)
	r := awaitResult(t, pending)
	assert.Equal(t, protocol.CodeTimeout, protocol.CodeOf(r.err))

	// The late answer is ignored, and the socket keeps working both ways.
	c.sendJSON(map[string]any{"event": "computer_response", "traposSenderId": "7:", "messageId": req.MessageID, "type": "ping", "ok": true})
	c.request("p", protocol.TypeProbeGateway, nil)
	assert.True(t, c.read().OK)

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	pending = asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	c.answerNext(func(protocol.Frame) map[string]any { return map[string]any{"ok": true} })
	assert.NoError(t, awaitResult(t, pending).err)
	assert.Contains(t, h.logs.String(), "no pending request")
}

// A computer answering a request sent to another computer, by its messageId (a hostile one
// that learnt it, or guessed), answers nothing: each socket's answers are matched among the
// requests sent on it. The asked computer's own answer is the one its caller gets.
func TestAnAnswerToAnotherComputersRequestIsIgnored(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	asked := h.connect(t, "7:", "")
	other := h.connect(t, "8:", "")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	pending := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	req := asked.read()
	other.sendJSON(map[string]any{"event": "computer_response", "traposSenderId": "7:", "messageId": req.MessageID,
		"type": "ping", "ok": true, "payload": map[string]any{"traposId": "forged"}})
	other.request("p", protocol.TypeProbeGateway, nil) // its frame was read before this answer
	assert.True(t, other.read().OK)
	select {
	case r := <-pending:
		t.Fatalf("the request was settled by another computer's answer: %+v", r)
	default:
	}

	asked.sendJSON(map[string]any{"event": "computer_response", "traposSenderId": "7:", "messageId": req.MessageID,
		"type": "ping", "ok": true, "payload": map[string]any{"traposId": "7:"}})
	r := awaitResult(t, pending)
	require.NoError(t, r.err)
	assert.JSONEq(t, `{"traposId":"7:"}`, string(r.resp.Payload))
}

func TestRequestContextDeadlineWins(t *testing.T) {
	h := newHarness(t, Config{RequestTimeout: time.Hour}, nil)
	c := h.connect(t, "7:", "")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	pending := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	c.read()
	assert.Equal(t, protocol.CodeTimeout, protocol.CodeOf(awaitResult(t, pending).err))

	cctx, ccancel := context.WithCancel(context.Background())
	pending = asyncRequest(h.gw, cctx, "7:", TypePing, nil)
	c.read()
	ccancel()
	assert.ErrorIs(t, awaitResult(t, pending).err, context.Canceled)
}

func TestRequestSocketGoneMidRequest(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	pending := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	c.read()
	require.NoError(t, c.conn.Close()) // like CC's close(): no close frame, the server sees 1006
	r := awaitResult(t, pending)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(r.err))
	// A Lua run or a write may have happened: the caller is told before it asks again.
	assert.Contains(t, r.err.Error(), "disconnected before it answered; it may have done what it was asked all the same: check before you ask again")
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 0 }, waitLimit, testkit.Poll, "the computer to leave the registry")
	require.Eventually(t, func() bool { return strings.Contains(h.logs.String(), "computer disconnected") }, waitLimit, testkit.Poll, "the disconnect log")
	assert.Contains(t, h.logs.String(), "code=1006")
	assert.NotContains(t, h.logs.String(), "level=ERROR")
}

func TestRequestTooLargeIsRefusedBeforeSending(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	big := json.RawMessage(`{"blob":"` + strings.Repeat("x", protocol.MaxFrameBytes) + `"}`)
	_, err := h.gw.Request(context.Background(), LocalAccount, "7:", TypePing, big)
	assert.Equal(t, protocol.CodeInternal, protocol.CodeOf(err))
	assert.Contains(t, err.Error(), "frame too large")

	// Nothing was sent: the next frame the computer sees is the answer to its own request.
	c.request("p", protocol.TypeProbeGateway, nil)
	f := c.read()
	assert.Equal(t, protocol.EventGatewayResponse, f.Event)
	assert.Equal(t, "p", f.MessageID)
}

func TestNewestWins(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	old := h.connect(t, "7:", "")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	pending := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	old.read() // the old socket holds the request and never answers

	newer := h.connect(t, "7:", "")
	old.expectClose(CloseReplaced, "replaced")
	r := awaitResult(t, pending)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(r.err))
	// It may have run on the old socket (a Lua run, a write): the caller is told, as when a
	// computer goes; it was told only that it was replaced.
	assert.Equal(t, "not_connected: computer 7: was replaced by a newer connection before it answered"+hostcomputer.MayHaveDoneIt, r.err.Error())

	require.Len(t, h.gw.Computers(), 1)
	pending = asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	newer.answerNext(func(protocol.Frame) map[string]any {
		return map[string]any{"ok": true, "payload": map[string]any{"traposId": "7:"}}
	})
	r = awaitResult(t, pending)
	require.NoError(t, r.err)
	assert.True(t, r.resp.OK)
	// The old socket's end must not unregister the new one.
	assert.Len(t, h.gw.Computers(), 1)
}

// RequestWithin's timeout bounds the wait as a ctx deadline would (and RequestTimeout does
// not): the caller gets timeout, the pending entry is gone, and the computer stays.
func TestRequestWithinTimesOut(t *testing.T) {
	h := newHarness(t, Config{RequestTimeout: time.Hour}, nil)
	c := h.connect(t, "7:", "")
	s := h.session(t, "7:")
	done := make(chan error, 1)
	go func() {
		_, err := h.gw.RequestWithin(context.Background(), LocalAccount, "7:", TypePing, nil, 100*time.Millisecond)
		done <- err
	}()
	c.read() // seen, not answered
	select {
	case err := <-done:
		assert.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err))
		assert.Contains(t, err.Error(), "did not answer ping in time")
	case <-time.After(waitLimit):
		t.Fatal("RequestWithin did not end at its timeout")
	}
	assert.Zero(t, s.pending.len())
	assert.Len(t, h.gw.Computers(), 1)

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	go func() {
		resp, err := h.gw.RequestWithin(ctx, LocalAccount, "7:", TypePing, nil, time.Hour)
		if err == nil && !resp.OK {
			err = errors.New("not ok")
		}
		done <- err
	}()
	c.answerNext(func(protocol.Frame) map[string]any { return map[string]any{"ok": true} })
	assert.NoError(t, <-done)

	_, err := h.gw.RequestWithin(ctx, LocalAccount, "8:", TypePing, nil, time.Hour)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err))
}

// A gateway_request's messageId is a random version 4 UUID (docs/protocol.md), a new one
// for every request.
func TestMessageIDsAreRandomVersion4UUIDs(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		id := newMessageID()
		u, err := uuid.Parse(id)
		require.NoError(t, err, id)
		assert.Equal(t, uuid.Version(4), u.Version(), id)
		assert.Equal(t, uuid.RFC4122, u.Variant(), id)
		assert.Equal(t, u.String(), id, "the canonical lower-case form")
		assert.False(t, seen[id], "minted twice: %s", id)
		seen[id] = true
	}
}

// An answer the reader took just as the request's time ran out is the request's outcome: when
// both are there by the time the waiting caller runs, it gets the answer, not a timeout (before,
// its select took either, and a computer's answer, of a write it did, could be reported as
// never given).
func TestAnAnswerTakenAsTimeRunsOutIsNotDropped(t *testing.T) {
	for range 64 { // the waiting select picks one of two ready cases at random
		s := &Session{pending: newPendingTable(2)}
		wait, err := s.pending.add("m1", byHost, "ping", time.Now())
		require.NoError(t, err)
		s.pending.take("m1") // the reader takes the answer and hands it over
		wait <- result{resp: Response{OK: true, Type: TypePing}}
		timeout := make(chan time.Time, 1)
		timeout <- time.Time{} // and the request's time runs out
		resp, err := awaitResponse(context.Background(), timeout, s, wait, "m1", "7:", TypePing, time.Now())
		require.NoError(t, err)
		assert.True(t, resp.OK)

		wait, err = s.pending.add("m2", byHost, "ping", time.Now())
		require.NoError(t, err)
		s.pending.take("m2")
		wait <- result{resp: Response{OK: true, Type: TypePing}}
		ctx, cancel := context.WithDeadline(context.Background(), time.Now()) // a deadline that passed
		resp, err = awaitResponse(ctx, nil, s, wait, "m2", "7:", TypePing, time.Now())
		cancel()
		require.NoError(t, err)
		assert.True(t, resp.OK)
	}
}

// A host request's timer is recycled (startHostTimer), and fires only for the request it was
// last started for: one that fired for an earlier request and was read, or fired unread as
// its request was answered, or was stopped before it fired, holds nothing for the next.
func TestARecycledHostTimerFiresOnlyForItsNewRequest(t *testing.T) {
	read := startHostTimer(time.Millisecond)
	<-read.C // timed out
	stopHostTimer(read)

	// Fired, unread, as when an answer and the timeout come together. Under
	// GODEBUG=asynctimerchan=1 its channel is buffered (cap 1) and the value waits in it: the
	// case the drain is for, waited for until it is there. Go 1.23's timer channel has cap 0
	// and holds no value for a timer stopped: nothing to wait for.
	unread := startHostTimer(time.Nanosecond)
	for cap(unread.C) > 0 && len(unread.C) == 0 {
		runtime.Gosched()
	}
	stopHostTimer(unread)

	stopHostTimer(startHostTimer(time.Hour)) // answered in time

	for range 3 {
		next := startHostTimer(time.Hour)
		select {
		case <-next.C:
			t.Fatal("a recycled timer fired for an earlier request")
		default:
		}
		defer stopHostTimer(next)
	}
	waited := startHostTimer(time.Millisecond)
	defer stopHostTimer(waited)
	<-waited.C // and it still fires for its own
}
