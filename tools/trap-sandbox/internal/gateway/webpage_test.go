package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
)

// A browser sends Origin on every WebSocket upgrade and CC: Tweaked never does: a web page the
// host's user visits must not connect as a computer. Without a password it would take the
// place of the player's computer of the same id (newest wins, and the replaced daemon stops
// reconnecting), receive what the host sends it and answer for it.
func TestAWebPageCannotOpenAComputersSocket(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	player := h.connect(t, "0:", "")

	for _, origin := range []string{"https://evil.example", "null", "http://" + strings.TrimPrefix(h.srv.URL, "http://")} {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		conn, resp, err := websocket.DefaultDialer.DialContext(ctx, h.wsURL(), http.Header{"Origin": {origin}})
		cancel()
		if conn != nil {
			_ = conn.Close()
		}
		require.ErrorIs(t, err, websocket.ErrBadHandshake, "origin %s", origin)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "origin %s", origin)
		assert.Contains(t, string(body), "a web page cannot connect as a computer (Origin "+origin+")")
	}
	assert.Contains(t, h.logs.String(), `msg="refused a computer socket opened by a web page`)
	assert.Contains(t, h.logs.String(), `origin=https://evil.example`)

	// The player's computer kept its socket: it still answers the host.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	pending := asyncRequest(h.gw, ctx, "0:", TypePing, nil)
	player.answerNext(func(protocol.Frame) map[string]any {
		return map[string]any{"ok": true, "payload": map[string]any{"traposId": "0:"}}
	})
	r := awaitResult(t, pending)
	require.NoError(t, r.err)
	assert.True(t, r.resp.OK)
	assert.Len(t, h.gw.Computers(), 1)
}

// A computer's socket answers only the requests sent on it: one that answers another
// computer's request (its messageId, its traposId as sender, a made-up payload) is not that
// computer's answer, however it learnt the id; the request waits for its own computer.
func TestAnAnswerOnAnotherComputersSocketIsNotItsAnswer(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	vault := h.connect(t, "8:vault", "")
	thief := h.connect(t, "7:thief", "")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	pending := asyncRequest(h.gw, ctx, "8:vault", "fs.read", json.RawMessage(`{"path":"/notes.txt"}`))
	req := vault.read()
	require.Equal(t, protocol.EventGatewayRequest, req.Event)
	thief.sendJSON(map[string]any{"event": "computer_response", "traposSenderId": "8:vault", "messageId": req.MessageID,
		"type": "fs.read", "ok": true, "payload": map[string]any{"data": "forged", "size": 6, "eof": true}})
	// The thief's socket is read in order: once its next request is answered, the forged
	// answer was read before it.
	thief.request("after", protocol.TypeProbeGateway, nil)
	require.Equal(t, "after", thief.read().MessageID)
	select {
	case r := <-pending:
		t.Fatalf("the vault's request was answered by the thief's socket: %+v", r)
	default:
	}
	assert.Contains(t, h.logs.String(), "ignored computer_response: no pending request")

	vault.sendJSON(map[string]any{"event": "computer_response", "traposSenderId": "8:vault", "messageId": req.MessageID,
		"type": "fs.read", "ok": true, "payload": map[string]any{"data": "diamonds", "size": 8, "eof": true}})
	r := awaitResult(t, pending)
	require.NoError(t, r.err)
	assert.JSONEq(t, `{"data":"diamonds","size":8,"eof":true}`, string(r.resp.Payload))
}

// A computer's hello from this machine, while the host API trusts loopback clients, means
// that every program on the Minecraft server's computers can use the API: logged once a run,
// naming the fix. Not with a token set, nor for a socket a proxy on this machine forwards.
func TestAComputerOnThisMachineWithoutAnAPITokenIsLoggedOnce(t *testing.T) {
	const line = `level=WARN msg="a computer connected from this machine while SANDBOX_API_TOKEN is unset`
	h := newHarness(t, Config{LoopbackAPI: true}, nil)
	h.connect(t, "7:kitchen", "")
	h.connect(t, "8:door", "")
	assert.Equal(t, 1, strings.Count(h.logs.String(), line), h.logs.String())
	assert.Regexp(t, `set SANDBOX_API_TOKEN, or give the computers a port of their own with --computers-listen .*\(docs/user-guide.md\)" module=\S+ remote=127.0.0.1:\d+ traposId=7:kitchen\n`, h.logs.String())

	// With a computers' port, one by the API's port came the wrong way: the line says so.
	pastPort := newHarness(t, Config{LoopbackAPI: true, ComputersPort: true}, nil)
	pastPort.connect(t, "7:kitchen", "")
	assert.Contains(t, pastPort.logs.String(), `level=WARN msg="a computer connected from this machine through --listen's port, not --computers-listen's, while SANDBOX_API_TOKEN is unset: `)
	assert.Contains(t, pastPort.logs.String(), `allow only --computers-listen's port in CC's http rules and install the computer again through it`)

	withToken := newHarness(t, Config{}, nil)
	withToken.connect(t, "7:kitchen", "")
	assert.NotContains(t, withToken.logs.String(), line)

	proxied := newHarness(t, Config{LoopbackAPI: true}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, proxied.wsURL(), http.Header{"X-Forwarded-For": {"203.0.113.7"}})
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() })
	c := &computer{t: t, conn: conn, id: "7:kitchen"}
	require.True(t, c.hello("").OK)
	assert.NotContains(t, proxied.logs.String(), line)
}
