package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

func TestHelloOK(t *testing.T) {
	h := newHarness(t, Config{Password: "pw"}, nil)
	c := h.dial(t, "7:kitchen")
	resp := c.hello("pw")
	assert.True(t, resp.OK)
	assert.Equal(t, "7:kitchen", resp.TraposReceiverID)
	assert.JSONEq(t, `{"accountId":"local","livenessMs":70000,"proves":true,"proofKey":"0c95d5a72967a63dbfafb363075baa097cb5457564dc6525dd3de5235a1884c7"}`, string(resp.Payload))

	computers := h.gw.Computers()
	require.Len(t, computers, 1)
	assert.Equal(t, LocalAccount, computers[0].AccountID)
	assert.Equal(t, "7:kitchen", computers[0].TraposID)
	assert.NotEmpty(t, computers[0].RemoteAddr)
	assert.False(t, computers[0].ConnectedSince.IsZero())
	assert.False(t, computers[0].LastFrameAt.Before(computers[0].ConnectedSince))
	assert.NotContains(t, h.logs.String(), "pw\"", "the secret is never logged")
}

func TestHelloWithoutPasswordAcceptsAnySecret(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	for i, secret := range []string{"", "anything"} {
		c := h.dial(t, []string{"1:", "2:b"}[i])
		assert.True(t, c.hello(secret).OK)
	}
	assert.Len(t, h.gw.Computers(), 2)
}

// TestHelloUnauthorized: a hello the password refuses is answered unauthorized, then 4001. One
// that sent no secret (the daemon of a computer whose sandbox.password is not set sends "")
// was told "wrong secret (check the computer's sandbox.password against SANDBOX_PASSWORD)",
// which sandbox status showed over its right fix: it is told it sent none, and the operator's
// line says so too.
func TestHelloUnauthorized(t *testing.T) {
	const password = "correct horse"
	const wrong = "wrong secret (check the computer's sandbox.password against SANDBOX_PASSWORD)"
	cases := []struct {
		name    string
		payload map[string]any
		message string
		logged  string
	}{
		{name: "wrong secret", payload: map[string]any{"traposId": "7:", "secret": "battery staple"}, message: wrong, logged: "hello rejected: wrong secret"},
		{name: "missing secret", payload: map[string]any{"traposId": "7:"}, message: noSecretMsg, logged: "hello rejected: no secret"},
		{name: "null secret", payload: map[string]any{"traposId": "7:", "secret": nil}, message: noSecretMsg, logged: "hello rejected: no secret"},
		{name: "empty secret", payload: map[string]any{"traposId": "7:", "secret": ""}, message: noSecretMsg, logged: "hello rejected: no secret"},
		{name: "secret is a number", payload: map[string]any{"traposId": "7:", "secret": 42}, message: wrong, logged: "hello rejected: wrong secret"},
		{name: "secret with a prefix of the password", payload: map[string]any{"traposId": "7:", "secret": "correct"}, message: wrong, logged: "hello rejected: wrong secret"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{Password: password}, nil)
			c := h.dial(t, "7:")
			c.request("h1", TypeHello, tc.payload)
			resp := c.read()
			assert.Equal(t, protocol.EventGatewayResponse, resp.Event)
			assert.Equal(t, "h1", resp.MessageID)
			assert.False(t, resp.OK)
			require.NotNil(t, resp.Error)
			assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
			assert.Equal(t, tc.message, resp.Error.Message)
			c.expectClose(CloseUnauthorized, "unauthorized")
			assert.Empty(t, h.gw.Computers())
			assert.Contains(t, h.logs.String(), `msg="`+tc.logged+`"`)
			assert.NotContains(t, h.logs.String(), "battery")
			assert.NotContains(t, h.logs.String(), password)
		})
	}
}

func TestHelloWithoutTraposID(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.dial(t, "7:")
	for i, payload := range []any{map[string]any{"secret": "s"}, map[string]any{"traposId": ""}, map[string]any{"traposId": 7}, []any{}, nil} {
		c.request("h", TypeHello, payload)
		resp := c.read()
		assert.False(t, resp.OK, "case %d", i)
		require.NotNil(t, resp.Error)
		assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)
		assert.Contains(t, resp.Error.Message, "hello needs a traposId")
	}
	// The socket stays usable: a proper hello now succeeds.
	assert.True(t, c.hello("").OK)
}

func TestNoHelloInTimeCloses4008(t *testing.T) {
	fc := newFakeClock()
	h := newHarness(t, Config{Clock: fc, HelloTimeout: 100 * time.Millisecond}, nil)
	c := h.dial(t, "7:")
	// The hello timer is the session's first; the socket closes once the clock passes it.
	require.True(t, fc.WaitArmed(1, t.Context().Done()))
	fc.Advance(100 * time.Millisecond)
	c.expectClose(CloseNoHello, "no hello in time")

	// A hello after the close gets no answer: the socket is gone.
	_ = c.conn.WriteMessage(websocket.TextMessage, []byte(`{"event":"computer_request","messageId":"late","type":"hello","payload":{"traposId":"7:"}}`))
	_, err := c.readText()
	assert.Error(t, err)
	assert.Empty(t, h.gw.Computers())
}

// TestHelloBeforeTimeoutStopsTheTimer: a socket that said hello in time stays open past the
// hello timeout. It is this behaviour's one test: on the fake clock, the hello is in time
// however slow the machine (the binary's --hello-timeout is tested by tests/integration's
// TestNoHelloClosesWith4008, whose silent socket needs no speed either).
func TestHelloBeforeTimeoutStopsTheTimer(t *testing.T) {
	fc := newFakeClock()
	h := newHarness(t, Config{Clock: fc, HelloTimeout: 150 * time.Millisecond}, nil)
	c := h.connect(t, "7:", "")
	// Past the hello timeout the socket must stay open: the writer's timer fires (and is
	// disarmed) and the writer arms it again after its tick.
	require.True(t, fc.WaitArmed(1, t.Context().Done()))
	fc.Advance(300 * time.Millisecond)
	require.Eventually(t, func() bool { return fc.Armed() >= 1 }, waitLimit, testkit.Poll, "the writer's tick past the hello timeout")
	c.request("p", protocol.TypeProbeGateway, nil)
	assert.True(t, c.read().OK)
}

func TestNotAuthenticatedBeforeHello(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.dial(t, "7:")
	c.request("p1", protocol.TypeProbeGateway, map[string]any{})
	resp := c.read()
	assert.Equal(t, "p1", resp.MessageID)
	assert.Equal(t, protocol.TypeProbeGateway, resp.Type)
	assert.Equal(t, "7:", resp.TraposReceiverID)
	assert.False(t, resp.OK)
	require.NotNil(t, resp.Error)
	assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)

	// An unknown type before hello is also not_authenticated (auth is checked first).
	c.request("p2", "nope", nil)
	assert.Equal(t, protocol.CodeNotAuthenticated, c.read().Error.Code)

	// A computer_response before hello is ignored; then a late hello still works.
	c.sendJSON(map[string]any{"event": "computer_response", "messageId": "x", "type": "ping", "ok": true})
	assert.True(t, c.hello("").OK)
}

func TestRepeatedHello(t *testing.T) {
	h := newHarness(t, Config{Password: "pw"}, nil)
	c := h.connect(t, "7:", "pw")
	resp := c.hello("pw")
	assert.True(t, resp.OK, "the same hello again just answers ok")
	assert.JSONEq(t, `{"accountId":"local","livenessMs":70000,"proves":true,"proofKey":"0c95d5a72967a63dbfafb363075baa097cb5457564dc6525dd3de5235a1884c7"}`, string(resp.Payload))

	c.request("h2", TypeHello, map[string]any{"traposId": "8:", "secret": "pw"})
	other := c.read()
	assert.False(t, other.OK)
	assert.Equal(t, protocol.CodeNotAuthenticated, other.Error.Code)
	assert.Contains(t, other.Error.Message, "already registered")
	require.Len(t, h.gw.Computers(), 1)
	assert.Equal(t, "7:", h.gw.Computers()[0].TraposID)

	// A wrong secret on an authenticated socket still ends it.
	c.request("h3", TypeHello, map[string]any{"traposId": "7:", "secret": "nope"})
	assert.Equal(t, protocol.CodeUnauthorized, c.read().Error.Code)
	c.expectClose(CloseUnauthorized, "unauthorized")
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 0 }, waitLimit, testkit.Poll, "the computer to leave the registry")
}

// TestAHandshakeAProxyStrippedOfItsUpgradeIsNamed: a computer's handshake through a reverse
// proxy that drops the hop-by-hop Upgrade and Connection headers (nginx's default) arrives with
// Sec-WebSocket-Key only; it is told, and the gateway warns (once a minute), that the proxy must
// pass them, where it said the path is no web page's and logged nothing.
func TestAHandshakeAProxyStrippedOfItsUpgradeIsNamed(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	for range 2 {
		req, err := http.NewRequest(http.MethodGet, h.srv.URL+WebSocketPath, nil)
		require.NoError(t, err)
		// What nginx sends on without proxy_set_header Upgrade/Connection: the end-to-end headers.
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Connection", "close")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Equal(t, "Bad Request: "+upgradeLost+"\n", string(body))
	}
	assert.Equal(t, 1, strings.Count(h.logs.String(), "without its Upgrade or Connection: upgrade header"), h.logs.String())
}

// TestNonWebSocketRequest: a plain GET (the address of the "computers connect here" line
// opened in a browser) is told what the path is for; it was a bare "Bad Request".
func TestNonWebSocketRequest(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	resp, err := http.Get(h.srv.URL + WebSocketPath)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "Bad Request: "+notAWebSocket+"\n", string(body))
	assert.Equal(t, "13", resp.Header.Get("Sec-WebSocket-Version"))

	resp, err = http.Post(h.srv.URL+WebSocketPath, "text/plain", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

// TestHelloCheckRegistersNothing: a hello with check:true (the installer's password check)
// is answered as a hello, registers nothing and ends its socket with 1000, so the computer's
// own connected daemon is not replaced (4009) by its installer.
func TestHelloCheckRegistersNothing(t *testing.T) {
	h := newHarness(t, Config{Password: "pw"}, nil)
	daemon := h.connect(t, "7:kitchen", "pw")

	installer := h.dial(t, "7:kitchen")
	installer.request("c1", TypeHello, map[string]any{"traposId": "7:kitchen", "secret": "pw", "check": true})
	resp := installer.read()
	assert.Equal(t, "c1", resp.MessageID)
	assert.True(t, resp.OK, "%+v", resp.Error)
	assert.Equal(t, "7:kitchen", resp.TraposReceiverID)
	installer.expectClose(CloseChecked, "checked")

	computers := h.gw.Computers()
	require.Len(t, computers, 1)
	daemon.request("p", protocol.TypeProbeGateway, nil)
	assert.True(t, daemon.read().OK, "the daemon's socket still serves")

	// A wrong secret is refused as in any hello (4001), and the daemon stays too.
	wrong := h.dial(t, "7:kitchen")
	wrong.request("c2", TypeHello, map[string]any{"traposId": "7:kitchen", "secret": "nope", "check": true})
	refused := wrong.read()
	require.NotNil(t, refused.Error)
	assert.Equal(t, protocol.CodeUnauthorized, refused.Error.Code)
	wrong.expectClose(CloseUnauthorized, "unauthorized")
	assert.Len(t, h.gw.Computers(), 1)
}

// TestHelloFlagsThatAreNotBooleansAreRefused: a check or link that is not a boolean ("yes",
// 1) was read as false, so a client that meant only to check the secret (or to link) said an
// ordinary hello, registered, and took the place of the computer's running daemon. It is
// refused now, naming the field, and the daemon keeps its place; null is absent.
func TestHelloFlagsThatAreNotBooleansAreRefused(t *testing.T) {
	h := newHarness(t, Config{Password: "pw"}, nil)
	daemon := h.connect(t, "7:kitchen", "pw")
	c := h.dial(t, "7:kitchen")
	for _, tc := range []struct {
		field string
		value any
		shown string
	}{{"check", "yes", `"yes"`}, {"check", 1, "1"}, {"link", "true", `"true"`}, {"link", map[string]any{}, "{}"}} {
		c.request("h", TypeHello, map[string]any{"traposId": "7:kitchen", "secret": "pw", tc.field: tc.value})
		resp := c.read()
		require.NotNil(t, resp.Error, "%s: %v", tc.field, tc.value)
		assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)
		assert.Equal(t, "hello's "+tc.field+" must be true or false, not "+tc.shown, resp.Error.Message)
	}
	daemon.request("p", protocol.TypeProbeGateway, nil)
	assert.True(t, daemon.read().OK, "the daemon's socket still serves: nothing took its place")

	c.request("n", TypeHello, map[string]any{"traposId": "7:kitchen", "secret": "pw", "check": nil, "link": nil})
	assert.True(t, c.read().OK, "null is an absent flag: an ordinary hello")
}

// TestHelloCheckWithoutPassword: a gateway without a password accepts any secret in a check.
func TestHelloCheckWithoutPassword(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.dial(t, "3:")
	c.request("c", TypeHello, map[string]any{"traposId": "3:", "secret": "anything", "check": true})
	assert.True(t, c.read().OK)
	c.expectClose(CloseChecked, "checked")
	assert.Empty(t, h.gw.Computers())
}

// A gateway that serves a client names it in every good hello's answer (servedClient), so that
// a daemon older than it can tell its player to run the install line; one that serves none
// (and a link session, which runs no client) says nothing of it.
func TestHelloAnswerNamesTheServedClient(t *testing.T) {
	h := newHarness(t, Config{Password: "pw", ClientName: "trapos-sandbox", ClientVersion: "0.5.11"}, nil)
	resp := h.dial(t, "7:kitchen").hello("pw")
	require.True(t, resp.OK)
	assert.JSONEq(t, `{"accountId":"local","livenessMs":70000,"proves":true,"proofKey":"0c95d5a72967a63dbfafb363075baa097cb5457564dc6525dd3de5235a1884c7","servedClient":{"name":"trapos-sandbox","version":"0.5.11"}}`, string(resp.Payload))

	none := newHarness(t, Config{Password: "pw"}, nil)
	resp = none.dial(t, "7:kitchen").hello("pw")
	require.True(t, resp.OK)
	assert.NotContains(t, string(resp.Payload), "servedClient")
}

// The wire fixture's good hello answer (trapos/tests/fixtures/wire_frames.json), which the
// codecs' tests decode and the daemon's spec reads servedClient from, is the one this gateway
// writes: no field of it is missing from the fixture, nor one more in it.
func TestHelloAnswerIsTheWireFixtures(t *testing.T) {
	const name = "hello answer naming the client the gateway serves"
	var fixture protocol.Frame
	for _, c := range testkit.ReadFixture[struct {
		Cases []struct{ Name, Input string }
	}](t, "wire_frames.json").Cases {
		if c.Name == name {
			f, err := protocol.DecodeFrame([]byte(c.Input))
			require.NoError(t, err)
			fixture = f
		}
	}
	require.NotNil(t, fixture.Payload, "wire_frames.json has no case %q", name)
	var served struct {
		ServedClient struct{ Name, Version string }
	}
	require.NoError(t, json.Unmarshal(fixture.Payload, &served))
	h := newHarness(t, Config{Password: "pw", ClientName: served.ServedClient.Name, ClientVersion: served.ServedClient.Version}, nil)
	resp := h.dial(t, "7:kitchen").hello("pw")
	require.True(t, resp.OK)
	assert.JSONEq(t, string(fixture.Payload), string(resp.Payload))
}

// A host's request sent the moment a computer is registered reaches it after its hello's
// answer, never before: the computer hears that it is connected first. Before, the answer was
// queued once the registration was done, and a request that came in between (the host
// waiting for the computer, as MCP's ping does) was written ahead of it; a client that reads
// its hello's answer as the next frame took the request for it.
func TestAHostsRequestFollowsTheHelloAnswer(t *testing.T) {
	cluster := &claimingCluster{claiming: make(chan struct{}), proceed: make(chan struct{}), held: map[Key]uint64{}}
	claiming := cluster.claiming
	proceed := sync.OnceFunc(func() { close(cluster.proceed) })
	t.Cleanup(proceed) // a failed test must not hold the hello, and so the gateway's shutdown
	h := newHarness(t, Config{Password: "pw"}, nil, func(gw *Gateway) { gw.registry.cluster = cluster })
	c := h.dial(t, "7:")
	c.request("hello-1", TypeHello, map[string]any{"traposId": "7:", "secret": "pw"})
	<-claiming // registered, its claim held: from now on a host's request finds the computer

	s := h.session(t, "7:")
	result := asyncRequest(h.gw, t.Context(), "7:", protocol.TypePing, nil)
	frames := make(chan string, 2)
	go func() {
		defer close(frames)
		for range 2 {
			text, err := c.readText()
			if err != nil {
				return
			}
			frames <- text
		}
	}()
	// Either the request waits in the queue behind the held answer, or it was written.
	require.Eventually(t, func() bool { return s.send.queued() > 0 || len(frames) > 0 }, waitLimit, testkit.Poll)
	proceed()

	first, second := <-frames, <-frames
	assert.Contains(t, first, `"messageId":"hello-1"`, "the hello's answer comes first")
	req, err := protocol.DecodeFrame([]byte(second))
	require.NoError(t, err, "frame: %s", second)
	require.Equal(t, protocol.EventGatewayRequest, req.Event, "frame: %s", second)
	c.sendJSON(map[string]any{"event": "computer_response", "traposSenderId": "7:", "messageId": req.MessageID,
		"type": req.Type, "ok": true, "payload": map[string]any{}})
	r := awaitResult(t, result)
	require.NoError(t, r.err)
	assert.True(t, r.resp.OK)
}
