package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/link"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// fakeLink registers link handlers that answer as the link module does, and records who asked.
func fakeLink(asked chan<- protocol.Requester, expiresInMs int64) func(*Gateway) {
	return func(g *Gateway) {
		g.Handle(protocol.TypeLinkBegin, func(_ context.Context, from protocol.Requester, _ json.RawMessage) (json.RawMessage, error) {
			select {
			case asked <- from:
			default: // the test listens to the first only
			}
			return json.Marshal(map[string]any{"code": "BCDF-GHJK", "expiresInMs": expiresInMs})
		})
		g.Handle(protocol.TypeLinkAccept, func(context.Context, protocol.Requester, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"account":"alice","credential":"tsc_x_y"}`), nil
		})
	}
}

func (c *computer) linkHello() protocol.Frame {
	c.t.Helper()
	c.request("hello-1", TypeHello, map[string]any{"traposId": c.id, "link": true})
	return c.read()
}

func TestLinkSessionAnswersOnlyLinkAndClosesLinked(t *testing.T) {
	asked := make(chan protocol.Requester, 1)
	h := newHarness(t, Config{Password: "right"}, nil, fakeLink(asked, 600000))
	c := h.dial(t, "7:kitchen")
	hello := c.linkHello()
	require.True(t, hello.OK, "a link hello needs no secret: %+v", hello.Error)
	assert.JSONEq(t, `{"accountId":"","link":true,"livenessMs":70000}`, string(hello.Payload))
	assert.Empty(t, h.gw.Computers(), "a link session is never registered")

	c.request("m1", "ai.ask", map[string]any{})
	f := c.read()
	require.False(t, f.OK)
	assert.Equal(t, protocol.CodeNotAuthenticated, f.Error.Code)
	assert.Contains(t, f.Error.Message, "a link session only links")

	c.request("m2", protocol.TypeProbeGateway, nil)
	assert.True(t, c.read().OK, "probe_gateway is answered on a link session")

	c.request("m3", protocol.TypeLinkBegin, map[string]any{})
	f = c.read()
	require.True(t, f.OK)
	from := <-asked
	assert.Equal(t, "7:kitchen", from.TraposID, "the handler hears the link session's traposId")
	assert.Empty(t, from.AccountID)
	assert.NotEmpty(t, from.RemoteAddr)

	c.request("m4", protocol.TypeLinkAccept, map[string]any{"code": "BCDF-GHJK", "accept": true})
	f = c.read()
	require.True(t, f.OK)
	c.expectClose(1000, "linked")
	assert.Empty(t, h.gw.Computers())
}

func TestLinkSessionDoesNotEvictTheComputer(t *testing.T) {
	h := newHarness(t, Config{Password: "right"}, nil, fakeLink(make(chan protocol.Requester, 1), 600000))
	daemon := h.connect(t, "7:kitchen", "right")
	c := h.dial(t, "7:kitchen")
	require.True(t, c.linkHello().OK)
	c.request("m1", protocol.TypeLinkBegin, map[string]any{})
	require.True(t, c.read().OK)
	require.Len(t, h.gw.Computers(), 1, "the computer's own socket stays")
	daemon.request("p", protocol.TypeLinkBegin, map[string]any{})
	assert.True(t, daemon.read().OK, "a computer's normal session may link too")
}

func TestIdleLinkSessionClosesAtTheHelloTimeout(t *testing.T) {
	fc := newFakeClock()
	h := newHarness(t, Config{Clock: fc, HelloTimeout: 10 * time.Second, IdleProbeAfter: time.Hour}, nil,
		fakeLink(make(chan protocol.Requester, 1), 600000))
	c := h.dial(t, "7:")
	require.True(t, c.linkHello().OK)
	require.Eventually(t, func() bool { return fc.Armed() >= 1 }, waitLimit, testkit.Poll, "the writer's timer")
	fc.Advance(10 * time.Second)
	c.expectClose(CloseNoHello, "no hello in time")
}

func TestLinkSessionLivesTheCodesLifetimePlusGrace(t *testing.T) {
	fc := newFakeClock()
	const lifetime = time.Minute
	h := newHarness(t, Config{Clock: fc, HelloTimeout: 10 * time.Second, PingPeriod: time.Hour, IdleProbeAfter: time.Hour}, nil,
		fakeLink(make(chan protocol.Requester, 1), lifetime.Milliseconds()))
	c := h.dial(t, "7:")
	require.True(t, c.linkHello().OK)
	c.request("m1", protocol.TypeLinkBegin, map[string]any{})
	require.True(t, c.read().OK)
	// The writer's timer and the session's lifetime.
	require.Eventually(t, func() bool { return fc.Armed() >= 2 }, waitLimit, testkit.Poll, "the lifetime timer")
	fc.Advance(10 * time.Second)
	// Past the hello timeout the code keeps the session: a ping on a link session answers.
	c.request("m2", protocol.TypeProbeGateway, nil)
	require.True(t, c.read().OK, "still open after the hello timeout")
	fc.Advance(lifetime + linkSessionGrace - 10*time.Second)
	c.expectClose(1000, "link expired")
}

// A link session waits minutes for its code's approval, so among the sockets without a good
// hello it soon is the oldest, the first evicted when a flood of silent sockets (from other
// addresses: the gateway's cap; or its own: the address's) needs room: the player's code died
// with it, on every server at once. Once given a code it is kept as a computer is: the code
// budgets bound how many such sessions there are. One that has no code yet still makes room.
func TestALinkSessionWithACodeIsNotEvictedByAFlood(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{MaxUnauthenticated: 3, MaxUnauthenticatedPerAddress: 2, HelloTimeout: time.Hour, Metrics: m}, nil,
		fakeLink(make(chan protocol.Requester, 1), 600000))
	linking := h.dialFrom(t, "127.0.0.2", "7:kitchen")
	require.True(t, linking.linkHello().OK)
	linking.request("b", protocol.TypeLinkBegin, map[string]any{})
	require.True(t, linking.read().OK)
	waiting := h.dialFrom(t, "127.0.0.2", "8:")
	require.True(t, waiting.linkHello().OK, "a link session that has not asked for its code yet")
	for i := range 8 { // silent sockets from two other addresses, and two from the player's own
		h.dialFrom(t, fmt.Sprintf("127.0.0.%d", 3+i%2), "")
	}
	h.dialFrom(t, "127.0.0.2", "")
	h.dialFrom(t, "127.0.0.2", "")
	// It said its hello: its player reads that the gateway is busy, not "no hello in time".
	waiting.expectClose(CloseNoHello, evictLinkReason)
	assert.Equal(t, 3, h.gw.preHelloSockets(), "the flood's newest fill the gateway's cap; the code's session is not among them")

	linking.request("p", protocol.TypeProbeGateway, nil)
	assert.True(t, linking.read().OK, "the session that holds a code is still open")
	linking.request("a", protocol.TypeLinkAccept, map[string]any{"code": "BCDF-GHJK", "accept": true})
	require.True(t, linking.read().OK)
	linking.expectClose(1000, linkedReason)
}

// A link session kept for its code still never takes a computer's place: when the sockets fill
// the connection cap and none is left before hello, the oldest link session makes room for the
// newcomer (else link sessions, 300 codes a minute, could fill a gateway whose cap is lower than
// they are many, and lock its computers out with 503).
func TestLinkSessionsMakeRoomForComputersAtTheConnectionCap(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{Password: "right", MaxConnections: 3, HelloTimeout: time.Hour, Metrics: m}, nil,
		fakeLink(make(chan protocol.Requester, 1), 600000))
	var sessions []*computer
	for i := range 3 {
		c := h.dialFrom(t, fmt.Sprintf("127.0.0.%d", 2+i), fmt.Sprintf("%d:", 7+i))
		require.True(t, c.linkHello().OK)
		c.request("b", protocol.TypeLinkBegin, map[string]any{})
		require.True(t, c.read().OK)
		sessions = append(sessions, c)
	}
	h.connect(t, "1:", "right")
	sessions[0].expectClose(CloseNoHello, evictLinkReason)
	h.connect(t, "2:", "right")
	sessions[1].expectClose(CloseNoHello, evictLinkReason)
	assert.Equal(t, 2.0, testutil.ToFloat64(m.evictions.WithLabelValues(evictedForConnections)))
	sessions[2].request("p", protocol.TypeProbeGateway, nil)
	assert.True(t, sessions[2].read().OK, "the newest link session stays")
	assert.Len(t, h.gw.Computers(), 2)
}

func TestSecondHelloOnALinkSessionIsRefused(t *testing.T) {
	h := newHarness(t, Config{Password: "right"}, nil)
	c := h.dial(t, "7:")
	require.True(t, c.linkHello().OK)
	f := c.linkHello()
	require.False(t, f.OK)
	assert.Contains(t, f.Error.Message, "already said hello")
}

func TestLinkedCredentialFromAnotherComputerIsRefused(t *testing.T) {
	accounts, cred := linkedToAlice(t, "7:kitchen")
	h := newHarness(t, Config{Password: "shared", Accounts: accounts}, nil)

	other := h.dial(t, "8:kitchen")
	f := other.hello(cred)
	require.False(t, f.OK)
	assert.Equal(t, protocol.CodeUnauthorized, f.Error.Code)
	assert.Contains(t, f.Error.Message, "belongs to computer 7, not to 8")
	other.expectClose(CloseUnauthorized, "unauthorized")

	c := h.connect(t, "7:renamed", cred)
	_ = c
	require.Len(t, h.gw.Computers(), 1)
	assert.Equal(t, "alice", h.gw.Computers()[0].AccountID, "a label change keeps the credential working")
}

func TestWrongSecretSpendsTheAddresssBudget(t *testing.T) {
	fc := newFakeClock()
	h := newHarness(t, Config{Clock: fc, FailedHelloBurst: 2, FailedHelloRate: 1}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	for range 2 {
		require.NoError(t, h.gw.WrongSecret(ctx, "10.0.0.5:1"), "within the burst: at once")
	}
	done := make(chan error, 1)
	go func() { done <- h.gw.WrongSecret(ctx, "10.0.0.5:2") }()
	require.Eventually(t, func() bool { return fc.Armed() >= 1 }, waitLimit, testkit.Poll, "the hold-back")
	select {
	case <-done:
		t.Fatal("a wrong key past the burst was answered at once")
	default:
	}
	fc.Advance(time.Second)
	require.NoError(t, <-done)
}

// linkedToAlice is an account store in memory holding the user account alice, and the
// credential of her computer traposID, linked with an enrollment key of hers.
func linkedToAlice(t *testing.T, traposID string) (*account.Accounts, string) {
	t.Helper()
	ctx := t.Context()
	accounts := account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	key, _, err := accounts.IssueEnrollmentKey(ctx, "alice", "alice", 0, 0)
	require.NoError(t, err)
	cred, _, err := accounts.LinkWithKey(ctx, key, traposID)
	require.NoError(t, err)
	return accounts, cred
}

// TestAFloodOfMadeUpLinkSessionsLeavesAConnectedComputerItsCode plays the griefer over real
// sockets against the link module: a link session needs no secret, and one program on a
// Minecraft server opening link sessions under ever new computer ids spent the 30 codes a
// minute of the address every computer of the server shares; a player's sandbox link on it
// was refused for as long as it ran. The player's computer, its daemon connected on the
// shared password for a minute, now gets its code from its own bucket.
func TestAFloodOfMadeUpLinkSessionsLeavesAConnectedComputerItsCode(t *testing.T) {
	fc := newFakeClock()
	accounts := account.New(account.NewMemory(), fc)
	h := newHarness(t, Config{Password: "right", Clock: fc, PingPeriod: time.Hour, IdleProbeAfter: time.Hour}, nil, func(g *Gateway) {
		link.New(link.Config{Accounts: accounts, Clock: fc}, slog.New(slog.DiscardHandler)).Register(g)
	})
	h.connect(t, "7:kitchen", "right") // the player's daemon
	fc.Advance(time.Minute)

	begin := func(traposID string) protocol.Frame {
		t.Helper()
		c := h.dial(t, traposID)
		require.True(t, c.linkHello().OK)
		c.request("b", protocol.TypeLinkBegin, map[string]any{})
		return c.read()
	}
	for id := 100; id < 100+link.DefaultCodesPerAddress; id++ {
		f := begin(fmt.Sprintf("%d:", id))
		require.True(t, f.OK, "%+v", f.Error)
	}
	f := begin("200:")
	require.False(t, f.OK, "the made-up ids spent the address's codes")
	assert.Contains(t, f.Error.Message, "too many link codes from this address")

	f = begin("7:kitchen")
	require.True(t, f.OK, "the player's sandbox link during the flood: %+v", f.Error)
	var code struct{ Code string }
	require.NoError(t, json.Unmarshal(f.Payload, &code))
	assert.NotEmpty(t, code.Code)
}
