package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

func TestCallSendsAnyPayloadAndReturnsTheAnswer(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.connect(t, "7:", "")
	require.Len(t, h.gw.Computers(), 1)

	type result struct {
		resp Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := h.gw.Call(context.Background(), "7:", "door.open", map[string]any{"door": "<north>"}, waitLimit)
		done <- result{resp, err}
	}()
	c.answerNext(func(f protocol.Frame) map[string]any {
		assert.Equal(t, "door.open", f.Type)
		assert.JSONEq(t, `{"door":"<north>"}`, string(f.Payload))
		return map[string]any{"ok": false, "error": map[string]any{"code": "forbidden", "message": "no"}}
	})
	r := <-done
	require.NoError(t, r.err)
	assert.False(t, r.resp.OK)
	assert.Equal(t, protocol.CodeForbidden, r.resp.Error.Code)
}

func TestCallTimesOutAndFailsForUnknownComputers(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	h.connect(t, "7:", "") // never answers
	_, err := h.gw.Call(context.Background(), "7:", TypePing, nil, 50*time.Millisecond)
	assert.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err))
	_, err = h.gw.Call(context.Background(), "8:", TypePing, nil, time.Second)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err))
	_, err = h.gw.Call(context.Background(), "7:", TypePing, []int{1}, time.Second)
	assert.Equal(t, protocol.CodeInternal, protocol.CodeOf(err), "a payload must be an object")
}

func TestHandleRegistersComputerRequestTypes(t *testing.T) {
	gw := New(Config{}, slog.New(slog.DiscardHandler), nil)
	gw.Handle("door.state", func(_ context.Context, from protocol.Caller, payload json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(map[string]any{"from": from.TraposID, "account": from.AccountID, "echo": json.RawMessage(payload)})
	})
	assert.Panics(t, func() {
		gw.Handle("door.state", func(context.Context, protocol.Caller, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	})
	assert.Panics(t, func() {
		gw.Handle(TypeHello, func(context.Context, protocol.Caller, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	})
	server.New(slog.New(slog.DiscardHandler), server.Config{}, gw)
	assert.Panics(t, func() {
		gw.Handle("late", func(context.Context, protocol.Caller, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	},
		"the table is read without a lock once mounted")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	assert.NoError(t, gw.Shutdown(ctx))
}

func TestRegisteredTypeIsAnsweredWithTheCaller(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{Metrics: m}, nil, func(gw *Gateway) {
		gw.Handle("door.state", func(_ context.Context, from protocol.Caller, payload json.RawMessage) (json.RawMessage, error) {
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
