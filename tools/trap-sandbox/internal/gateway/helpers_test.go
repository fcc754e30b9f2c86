package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/opencodehealth"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitLimit bounds every wait in these tests; nothing should come near it.
const waitLimit = 5 * time.Second

// staticProber answers every probe with the same Health.
type staticProber opencode.Health

func (p staticProber) Probe(context.Context) opencode.Health { return opencode.Health(p) }

// harness is a gateway behind a real HTTP server on loopback.
type harness struct {
	gw   *Gateway
	srv  *httptest.Server
	logs *testkit.SyncBuffer
}

func (h *harness) wsURL() string {
	return "ws" + strings.TrimPrefix(h.srv.URL, "http") + WebSocketPath
}

// newHarness serves a gateway as the real binary wires it: behind server.New, with the
// opencode health module registered (probing with prober; nil means always healthy) and
// whatever register adds to the handler table.
func newHarness(t *testing.T, cfg Config, prober opencodehealth.Prober, register ...func(*Gateway)) *harness {
	t.Helper()
	return newHarnessListening(t, nil, cfg, prober, register...)
}

// newHarnessListening is newHarness with the server's listener wrapped by wrap (nil: none),
// which then holds the gateway's side of every socket.
func newHarnessListening(t *testing.T, wrap func(net.Listener) net.Listener, cfg Config, prober opencodehealth.Prober,
	register ...func(*Gateway),
) *harness {
	t.Helper()
	return newHarnessServing(t, wrap, nil, cfg, prober, register...)
}

// newHarnessBehind is newHarness on a server that believes the X-Forwarded-For of proxies
// (--trusted-proxies).
func newHarnessBehind(t *testing.T, proxies server.TrustedProxies, cfg Config) *harness {
	t.Helper()
	return newHarnessServing(t, nil, proxies, cfg, nil)
}

func newHarnessServing(t *testing.T, wrap func(net.Listener) net.Listener, proxies server.TrustedProxies, cfg Config,
	prober opencodehealth.Prober, register ...func(*Gateway),
) *harness {
	t.Helper()
	if prober == nil {
		prober = staticProber{OK: true, Version: "test"}
	}
	if cfg.HelloTimeout == 0 {
		cfg.HelloTimeout = waitLimit
	}
	if cfg.CloseGrace == 0 {
		cfg.CloseGrace = 200 * time.Millisecond
	}
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	gw := New(cfg, logger, nil)
	var reg *prometheus.Registry
	var registerer prometheus.Registerer // nil without metrics: a nil *Registry in it is not nil
	if cfg.Metrics != nil {
		reg = cfg.Metrics.registry
		registerer = reg
	}
	opencodehealth.New(prober, registerer).Register(gw)
	for _, r := range register {
		r(gw)
	}
	srv := httptest.NewUnstartedServer(server.New(logger, server.Config{Metrics: reg, TrustedProxies: proxies}, gw).Handler())
	if wrap != nil {
		srv.Listener = wrap(srv.Listener)
	}
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		assert.NoError(t, gw.Shutdown(ctx))
		srv.Close()
	})
	return &harness{gw: gw, srv: srv, logs: logs}
}

// computer is the test's side of one socket, speaking the protocol by hand.
type computer struct {
	t    *testing.T
	conn *websocket.Conn
	id   string
}

func (h *harness) dial(t *testing.T, traposID string) *computer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, h.wsURL(), nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() })
	return &computer{t: t, conn: conn, id: traposID}
}

// connect dials and completes a hello.
func (h *harness) connect(t *testing.T, traposID, secret string) *computer {
	t.Helper()
	c := h.dial(t, traposID)
	resp := c.hello(secret)
	require.True(t, resp.OK, "hello failed: %+v", resp.Error)
	return c
}

// session is the local account's session of computer traposID, which must be connected.
func (h *harness) session(t *testing.T, traposID string) *Session {
	t.Helper()
	s := h.gw.registry.Lookup(Key{AccountID: LocalAccount, TraposID: traposID})
	require.NotNil(t, s, "no session of %s", traposID)
	return s
}

func (c *computer) sendText(text string) {
	c.t.Helper()
	require.NoError(c.t, c.conn.SetWriteDeadline(time.Now().Add(waitLimit)))
	require.NoError(c.t, c.conn.WriteMessage(websocket.TextMessage, []byte(text)))
}

func (c *computer) sendJSON(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	require.NoError(c.t, err)
	c.sendText(string(b))
}

// request sends a computer_request and returns its messageId.
func (c *computer) request(messageID, typ string, payload any) {
	c.t.Helper()
	frame := map[string]any{"event": "computer_request", "traposSenderId": c.id, "messageId": messageID, "type": typ}
	if payload != nil {
		frame["payload"] = payload
	}
	c.sendJSON(frame)
}

func (c *computer) hello(secret string) protocol.Frame {
	c.t.Helper()
	c.request("hello-1", TypeHello, map[string]any{"traposId": c.id, "secret": secret})
	resp := c.read()
	require.Equal(c.t, protocol.EventGatewayResponse, resp.Event)
	require.Equal(c.t, "hello-1", resp.MessageID)
	require.Equal(c.t, TypeHello, resp.Type)
	return resp
}

// readText reads the next data frame as text.
func (c *computer) readText() (string, error) {
	if err := c.conn.SetReadDeadline(time.Now().Add(waitLimit)); err != nil {
		return "", err
	}
	_, data, err := c.conn.ReadMessage()
	return string(data), err
}

// read reads and decodes the next frame; it fails the test on anything else.
func (c *computer) read() protocol.Frame {
	c.t.Helper()
	text, err := c.readText()
	require.NoError(c.t, err)
	f, err := protocol.DecodeFrame([]byte(text))
	require.NoError(c.t, err, "frame: %s", text)
	return f
}

// expectClose reads until the socket closes and checks the close code (and reason if given).
func (c *computer) expectClose(code int, reason string) {
	c.t.Helper()
	for {
		_, err := c.readText()
		if err == nil {
			continue // frames queued before the close
		}
		var ce *websocket.CloseError
		require.True(c.t, errors.As(err, &ce), "expected close %d, got %v", code, err)
		assert.Equal(c.t, code, ce.Code)
		if reason != "" {
			assert.Equal(c.t, reason, ce.Text)
		}
		return
	}
}

// answerNext reads the next gateway_request and answers it with a computer_response.
func (c *computer) answerNext(build func(req protocol.Frame) map[string]any) protocol.Frame {
	c.t.Helper()
	req := c.read()
	require.Equal(c.t, protocol.EventGatewayRequest, req.Event)
	resp := build(req)
	resp["event"] = "computer_response"
	resp["traposSenderId"] = c.id
	resp["messageId"] = req.MessageID
	if _, ok := resp["type"]; !ok {
		resp["type"] = req.Type
	}
	c.sendJSON(resp)
	return req
}

// asyncRequest runs gw.Request in a goroutine; the result arrives on the returned channel.
type requestResult struct {
	resp Response
	err  error
}

func asyncRequest(gw *Gateway, ctx context.Context, traposID, typ string, payload json.RawMessage) <-chan requestResult {
	ch := make(chan requestResult, 1)
	go func() {
		resp, err := gw.Request(ctx, LocalAccount, traposID, typ, payload)
		ch <- requestResult{resp, err}
	}()
	return ch
}

func awaitResult(t *testing.T, ch <-chan requestResult) requestResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitLimit):
		t.Fatal("the request did not finish")
		return requestResult{}
	}
}
