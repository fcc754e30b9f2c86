package scaleout

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"

	"tests/internal/harness"
)

// postInput types events on traposID through g's POST …/input and returns the status and body.
func postInput(ctx context.Context, g *harness.Gateway, traposID string, events []map[string]any, timeoutMs int) (int, string, error) {
	body, _ := json.Marshal(map[string]any{"events": events, "timeoutMs": timeoutMs})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL("/trapos/computers/"+traposID+"/input"), bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := harness.HTTPClient().Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), err
}

// TestTheInputTurnIsHeldWhereTheComputerIs: a caller's input of several screen.input requests
// typed through replica a, on a computer whose socket replica b holds, holds the computer's
// input turn where its socket is: another caller's input through b waits for it and is never
// typed between its parts. (The turn was held per replica: b sent the other caller's key while
// a's first part was still unanswered.)
func TestTheInputTurnIsHeldWhereTheComputerIs(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	a, b := startReplica(t, nats, "a"), startReplica(t, nats, "b")

	c, err := harness.Dial(ctx, b.WebSocketURL(), "7:kitchen")
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.MustHello(ctx, ""))
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "b", listComputers(ct, a)["7:kitchen"]) }, waitLimit, testkit.Poll, "a to list b's computer")

	// The computer answers every screen.input at once but the first, which the test answers
	// (and the gateway's pings).
	requests := make(chan harness.Frame, 16)
	answering := make(chan struct{})
	go func() {
		defer close(answering)
		first := true
		_ = c.Answer(ctx, func(f harness.Frame) *harness.Reply {
			if f.Type != "screen.input" {
				return &harness.Reply{Payload: json.RawMessage(`{}`)}
			}
			requests <- f
			if first {
				first = false
				return nil
			}
			return &harness.Reply{Payload: json.RawMessage(`{}`)}
		})
	}()
	defer func() { _ = c.Close(); <-answering }()

	// 200 characters: two screen.input requests (128 events each at most).
	long := strings.Repeat("a", 200)
	longDone := make(chan string, 1)
	go func() {
		status, body, err := postInput(ctx, a, "7:kitchen", []map[string]any{{"type": "char", "text": long}}, int(waitLimit.Milliseconds()))
		if err != nil {
			body = err.Error()
		}
		longDone <- strings.Join([]string{http.StatusText(status), body}, " ")
	}()
	var first harness.Frame
	select {
	case first = <-requests:
	case out := <-longDone:
		t.Fatal("the long input ended before its first part reached the computer: " + out)
	}
	require.Equal(t, "screen.input", first.Type)
	require.Contains(t, string(first.Payload), strings.Repeat("a", 128))

	// While its first part is unanswered, another caller types a key through b, the holder.
	status, body, err := postInput(ctx, b, "7:kitchen", []map[string]any{{"type": "key", "name": "enter"}}, 3000)
	require.NoError(t, err)
	select {
	case f := <-requests:
		t.Fatalf("another caller's input reached the computer between the parts of a's input: %s %s", f.Type, f.Payload)
	default:
	}
	assert.Equal(t, http.StatusGatewayTimeout, status, body)
	assert.Contains(t, body, "was still typing another caller's input")
	// A single screen.input on …/requests through a, which holds no turn of its own while a's
	// input is typed on b, waits for b's turn as well.
	resp, err := harness.HTTPClient().Post(a.URL("/trapos/computers/7:kitchen/requests"), "application/json",
		strings.NewReader(`{"type":"screen.input","payload":{"events":[{"type":"key","name":"tab"}]},"timeoutMs":3000}`))
	require.NoError(t, err)
	single, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	select {
	case f := <-requests:
		t.Fatalf("a single screen.input reached the computer between the parts of a's input: %s %s", f.Type, f.Payload)
	default:
	}
	assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, string(single))
	assert.Contains(t, string(single), "was still typing another caller's input")

	// The first part answered, the second follows; nothing else comes.
	require.NoError(t, c.WriteJSON(map[string]any{"event": harness.EventComputerResponse, "traposSenderId": c.TraposID,
		"messageId": first.MessageID, "type": first.Type, "ok": true, "payload": map[string]any{}}))
	var second harness.Frame
	select {
	case second = <-requests:
	case <-ctx.Done():
		t.Fatal("the long input's second part never reached the computer")
	}
	assert.Equal(t, "screen.input", second.Type)
	assert.Contains(t, string(second.Payload), strings.Repeat("a", 72))
	assert.NotContains(t, string(second.Payload), "enter")
	select {
	case out := <-longDone:
		assert.Contains(t, out, `"queued":200`)
	case <-ctx.Done():
		t.Fatal("the long input never ended")
	}
}
