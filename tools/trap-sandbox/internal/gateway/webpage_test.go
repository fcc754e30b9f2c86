package gateway

import (
	"context"
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
