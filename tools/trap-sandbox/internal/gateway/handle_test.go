package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
)

func TestHandleRegistersComputerRequestTypes(t *testing.T) {
	gw := New(Config{}, slog.New(slog.DiscardHandler), nil)
	gw.Handle("door.state", func(_ context.Context, from protocol.Requester, payload json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"from": from.TraposID, "account": from.AccountID, "echo": json.RawMessage(payload)})
	})
	assert.Panics(t, func() {
		gw.Handle("door.state", func(context.Context, protocol.Requester, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	})
	assert.Panics(t, func() {
		gw.Handle(TypeHello, func(context.Context, protocol.Requester, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	})
	server.New(slog.New(slog.DiscardHandler), server.Config{}, gw)
	assert.Panics(t, func() {
		gw.Handle("late", func(context.Context, protocol.Requester, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	},
		"the table is read without a lock once mounted")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	assert.NoError(t, gw.Shutdown(ctx))
}

func TestRegisteredTypeIsAnsweredWithTheRequester(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{Metrics: m}, nil, func(gw *Gateway) {
		gw.Handle("door.state", func(_ context.Context, from protocol.Requester, payload json.RawMessage) (json.RawMessage, error) {
			if string(payload) == `{"fail":true}` {
				return nil, protocol.Errorf(protocol.CodeForbidden, "doors are closed")
			}
			return json.Marshal(map[string]any{"from": from.TraposID, "account": from.AccountID})
		})
	})
	c := h.connect(t, "7:door", "")
	c.request("d1", "door.state", map[string]any{})
	resp := c.read()
	require.True(t, resp.OK)
	assert.JSONEq(t, `{"from":"7:door","account":"local"}`, string(resp.Payload))
	c.request("d2", "door.state", map[string]any{"fail": true})
	resp = c.read()
	assert.Equal(t, protocol.CodeForbidden, resp.Error.Code)
	assert.Equal(t, 2.0, testutil.ToFloat64(m.framesIn.WithLabelValues(string(protocol.EventComputerRequest), "door.state")), "a registered type gets its own label")
}

// TestAHandlerThatPanicsFailsItsRequestAlone: a registered handler's panic is that request's
// internal error, logged with its stack; the socket and the gateway go on. A handler runs on a
// goroutine of its own, where a panic would end the process; a quick one on the socket's
// reader, where net/http's recovery would leave the socket open and registered.
func TestAHandlerThatPanicsFailsItsRequestAlone(t *testing.T) {
	doorState := func(payload json.RawMessage) (json.RawMessage, error) {
		if string(payload) == `{"bug":true}` {
			panic("a bug in door.state")
		}
		return json.RawMessage(`{"open":false}`), nil
	}
	t.Run("in a goroutine", func(t *testing.T) {
		requestThatPanics(t, func(gw *Gateway) {
			gw.Handle("door.state", func(_ context.Context, _ protocol.Requester, payload json.RawMessage) (json.RawMessage, error) {
				return doorState(payload)
			})
		})
	})
	t.Run("on the reader", func(t *testing.T) {
		requestThatPanics(t, func(gw *Gateway) {
			gw.HandleQuick("door.state", func(_ protocol.Requester, payload json.RawMessage) (json.RawMessage, error) {
				return doorState(payload)
			}, func(context.Context, protocol.Requester, json.RawMessage) (json.RawMessage, error) {
				return nil, errors.New("the quick handler never blocks")
			})
		})
	})
}

// requestThatPanics sends door.state's panicking request on a gateway with register's
// door.state, then one that works.
func requestThatPanics(t *testing.T, register func(*Gateway)) {
	t.Helper()
	h := newHarness(t, Config{}, nil, register)
	c := h.connect(t, "7:door", "")
	c.request("d1", "door.state", map[string]any{"bug": true})
	resp := c.read()
	require.False(t, resp.OK)
	assert.Equal(t, protocol.CodeInternal, resp.Error.Code)
	assert.Equal(t, "the gateway failed on this door.state request; its log has the details", resp.Error.Message)
	logs := h.logs.String()
	assert.Contains(t, logs, `level=ERROR msg="request handler panicked"`)
	assert.Contains(t, logs, "type=door.state")
	assert.Contains(t, logs, "a bug in door.state")
	assert.Contains(t, logs, "handle_test.go", "the stack is logged")

	c.request("d2", "door.state", map[string]any{})
	resp = c.read()
	require.True(t, resp.OK, "the socket still serves")
	assert.JSONEq(t, `{"open":false}`, string(resp.Payload))
}

// A handler that stops because its computer went away (its ctx, the socket's, ended) is an
// ordinary disconnect, logged at DEBUG, never as a failed request (ERROR).
func TestAHandlerEndedByItsSocketsCloseIsNoError(t *testing.T) {
	started := make(chan struct{})
	h := newHarness(t, Config{}, nil, func(g *Gateway) {
		g.Handle("wait", func(ctx context.Context, _ protocol.Requester, _ json.RawMessage) (json.RawMessage, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	})
	c := h.connect(t, "7:", "")
	c.request("w", "wait", nil)
	select {
	case <-started:
	case <-time.After(waitLimit):
		t.Fatal("the handler did not start")
	}
	require.NoError(t, c.conn.Close())
	require.Eventually(t, func() bool { return strings.Contains(h.logs.String(), `msg="request ended with its socket" `) },
		waitLimit, testkit.Poll)
	assert.NotContains(t, h.logs.String(), "level=ERROR")
}

// A panic on a socket's reader outside any module's handler (the gateway's own frame path)
// ends that socket alone, 1011, logged with its stack; the gateway and its other computers go
// on. Unrecovered, it ended the process: here, the test binary.
func TestAPanicOnTheReaderEndsItsSocketAlone(t *testing.T) {
	var armed atomic.Bool
	frameBufferTaken = func(delta int) {
		if delta > 0 && armed.CompareAndSwap(true, false) {
			panic("a bug in the frame path")
		}
	}
	t.Cleanup(func() { frameBufferTaken = nil }) // after the harness's own cleanup: its readers have ended
	h := newHarness(t, Config{}, nil)
	victim := h.connect(t, "7:victim", "")
	other := h.connect(t, "8:other", "")

	armed.Store(true)
	victim.request("p1", protocol.TypeProbeGateway, nil)
	victim.expectClose(CloseInternalError, "internal error")
	logs := h.logs.String()
	assert.Contains(t, logs, `level=ERROR msg="the gateway failed reading a frame: closing this socket (1011)"`)
	assert.Contains(t, logs, "a bug in the frame path")
	assert.Contains(t, logs, "handle_test.go", "the stack is logged")

	other.request("p2", protocol.TypeProbeGateway, nil)
	require.True(t, other.read().OK, "the other computer is still served")
	require.Eventually(t, func() bool {
		computers := h.gw.Computers()
		return len(computers) == 1 && computers[0].TraposID == "8:other"
	}, waitLimit, testkit.Poll, "the failed socket is unregistered: %v", h.gw.Computers())
}

// TestAnErrorReachesTheComputerByTheTextRule: a module's error message is host text, and one
// with a character past U+00FF (a clipped provider message ends in "…") reached the computer
// as raw UTF-8, which CC shows byte by byte ("â" and two more); the ellipsis arrives as
// "...", any other such character as '?', as the text rule has it, while what the message
// quotes of the computer's own bytes (é, U+00E9 on the wire) is left as it was.
func TestAnErrorReachesTheComputerByTheTextRule(t *testing.T) {
	h := newHarness(t, Config{}, nil, func(g *Gateway) {
		g.Handle("say", func(context.Context, protocol.Requester, json.RawMessage) (json.RawMessage, error) {
			return nil, protocol.Errorf(protocol.CodeBadPayload, "the provider said: too long… (of café, in 日本)")
		})
	})
	c := h.connect(t, "7:", "")
	c.request("s", "say", nil)
	resp := c.read()
	require.False(t, resp.OK)
	assert.Equal(t, protocol.CodeBadPayload, resp.Error.Code)
	assert.Equal(t, "the provider said: too long... (of café, in ??)", resp.Error.Message)
}

// TestAReplyTooBigToSendIsToldInTheComputersText: a request whose type is near the frame
// limit cannot have its answer (which echoes the type) sent; the short internal error that
// replaces it clips the type, and the clip's "…" reached the computer as raw UTF-8 too.
func TestAReplyTooBigToSendIsToldInTheComputersText(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	c.request("big", strings.Repeat("x", protocol.MaxFrameBytes-200), nil)
	resp := c.read()
	require.False(t, resp.OK)
	assert.Equal(t, "big", resp.MessageID)
	assert.Equal(t, protocol.CodeInternal, resp.Error.Code)
	for _, text := range []string{resp.Type, resp.Error.Message} {
		assert.Contains(t, text, "...(cut, ")
		assert.NotContains(t, text, "…")
	}
}
