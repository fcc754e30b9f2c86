package hostapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// testTimeout bounds every wait of these tests; only a broken test reaches it.
const testTimeout = 10 * time.Second

// gatewayWithAPI serves a real gateway and the host API on it, as the binary does.
func gatewayWithAPI(t *testing.T, token string) (*gateway.Gateway, *httptest.Server) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	gw := gateway.New(gateway.Config{}, logger, nil)
	srv := httptest.NewServer(server.New(logger, server.Config{APIToken: token},
		gw, hostapi.New(computer.New(hostapi.NewGateway(gw)))).Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		assert.NoError(t, gw.Shutdown(ctx))
		srv.Close()
	})
	return gw, srv
}

// connectComputer says hello as traposID (with secret, if given) and answers every
// gateway_request with answer(type, payload) → the computer_response's fields, until the test
// ends.
func connectComputer(t *testing.T, gw *gateway.Gateway, srv *httptest.Server, traposID string, answer func(typ string, payload json.RawMessage) map[string]any, secret ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	before := len(gw.Computers())
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+gateway.WebSocketPath, nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() })
	require.NoError(t, conn.WriteJSON(map[string]any{"event": "computer_request", "traposSenderId": traposID,
		"messageId": "hello", "type": "hello", "payload": map[string]any{"traposId": traposID, "secret": strings.Join(secret, "")}}))
	go func() {
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			f, err := protocol.DecodeFrame(data)
			if err != nil || f.Event != protocol.EventGatewayRequest {
				continue
			}
			out := answer(f.Type, f.Payload)
			out["event"], out["traposSenderId"], out["messageId"], out["type"] = "computer_response", traposID, f.MessageID, f.Type
			if conn.WriteJSON(out) != nil {
				return
			}
		}
	}()
	require.Eventually(t, func() bool { return len(gw.Computers()) > before }, testTimeout, 5*time.Millisecond)
}

// TestBothTransportsReachARealGateway: the in-process Transport and the HTTP one give the
// same answers, errors and computer records through the real gateway.
func TestBothTransportsReachARealGateway(t *testing.T) {
	gw, srv := gatewayWithAPI(t, "tok")
	connectComputer(t, gw, srv, "7:a/b c", func(typ string, payload json.RawMessage) map[string]any {
		if typ == protocol.TypePing {
			return map[string]any{"ok": true, "payload": map[string]any{"traposId": "7:a/b c"}}
		}
		return map[string]any{"ok": false, "error": map[string]any{"code": "unknown_type", "message": "no " + typ}}
	})
	for name, tr := range map[string]computer.Transport{
		"in-process": hostapi.NewGateway(gw),
		"http":       hostapi.HTTP{URL: srv.URL, Token: "tok"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := account.WithCaller(t.Context(), account.LocalAdmin) // the in-process Transport serves the caller in ctx
			c := computer.New(tr)
			cs, err := c.Computers(ctx)
			require.NoError(t, err)
			require.Len(t, cs, 1)
			assert.Equal(t, "7:a/b c", cs[0].TraposID)
			assert.Equal(t, gateway.LocalAccount, cs[0].AccountID)
			assert.False(t, cs[0].ConnectedSince.IsZero())

			p, err := c.Ping(ctx, "7:a/b c", 0)
			require.NoError(t, err, "a traposId with a slash and a space is path-escaped")
			assert.Equal(t, "7:a/b c", p.TraposID)

			_, _, err = c.Request(ctx, "7:a/b c", "dance", nil, 0)
			var pe *protocol.Error
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, protocol.CodeUnknownType, pe.Code)
			assert.True(t, pe.ByComputer, "the computer's ok:false is marked as the computer's")

			_, err = c.Ping(ctx, "7", 0)
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, protocol.CodeNotConnected, pe.Code)
			assert.False(t, pe.ByComputer)
			assert.Equal(t, `computer 7 is not connected; did you mean "7:a/b c"?`, pe.Message, "one hint, not two")
		})
	}

	err := hostapi.HTTP{URL: srv.URL, Token: "wrong"}.Check(t.Context())
	assert.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err))
	assert.ErrorContains(t, err, "--api-token or SANDBOX_API_TOKEN")
	err = hostapi.HTTP{URL: "http://127.0.0.1:1"}.Check(t.Context())
	assert.ErrorContains(t, err, "call the gateway at http://127.0.0.1:1")
}
