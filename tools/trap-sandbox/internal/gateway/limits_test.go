package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
)

// dialRefused dials and expects the upgrade to be refused; it returns the status and body.
func (h *harness) dialRefused(t *testing.T) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, h.wsURL(), nil)
	if conn != nil {
		_ = conn.Close()
	}
	require.ErrorIs(t, err, websocket.ErrBadHandshake)
	require.NotNil(t, resp)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func (g *Gateway) openSockets() int {
	open, _ := g.limits.counts()
	return open
}

// Only authenticated computers can fill the gateway: then a new socket is refused with 503.
func TestMaxConnectionsRefusesWith503WhenComputersFillIt(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{MaxConnections: 2, Metrics: m}, nil)
	first := h.connect(t, "1:", "")
	h.connect(t, "2:", "")

	status, body := h.dialRefused(t)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Contains(t, body, "the gateway is full (2 connections)")
	h.dialRefused(t)
	assert.Equal(t, 2.0, testutil.ToFloat64(m.limits.WithLabelValues(limitMaxConnections)))
	assert.Equal(t, 1, strings.Count(h.logs.String(), "limit=max_connections"), "refusals are logged once per address per minute")

	// A freed slot is usable again.
	require.NoError(t, first.conn.Close())
	require.Eventually(t, func() bool { return h.gw.openSockets() == 1 }, waitLimit, testkit.Poll, "the closed socket to free its slot")
	h.connect(t, "3:", "")
}

// Past its upgrade rate an address is under pressure: its new sockets are admitted, with the
// short hello deadline, and counted; none is refused.
func TestUpgradesOverTheRateAreAdmittedUnderPressure(t *testing.T) {
	m := newMetrics()
	// A refill rate this low never adds a token during the test: only the burst counts.
	h := newHarness(t, Config{UpgradeRate: 0.001, UpgradeBurst: 3, HelloTimeout: time.Hour, PressureHelloTimeout: time.Minute, Metrics: m}, nil)
	for i := range 5 {
		h.connect(t, string(rune('1'+i))+":", "")
	}
	assert.Equal(t, 2.0, testutil.ToFloat64(m.limits.WithLabelValues(limitUpgradeRate)))
	assert.Equal(t, 5, h.gw.openSockets())
}

func TestUpgradeRateCanBeTurnedOff(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{UpgradeRate: -1, UpgradeBurst: 1, Metrics: m}, nil)
	for i := range 5 {
		h.connect(t, string(rune('1'+i))+":", "")
	}
	assert.Zero(t, testutil.ToFloat64(m.limits.WithLabelValues(limitUpgradeRate)))
}

func TestHostOf(t *testing.T) {
	assert.Equal(t, "127.0.0.1", server.HostOf("127.0.0.1:5555"))
	assert.Equal(t, "::1", server.HostOf("[::1]:5555"))
	assert.Equal(t, "garbage", server.HostOf("garbage"))
}

// withQuickType registers the computer_request type "quick", answered at once on the reader.
func withQuickType(g *Gateway) {
	g.HandleQuick("quick", func(protocol.Requester, json.RawMessage) (json.RawMessage, error) {
		return nil, nil
	}, func(context.Context, protocol.Requester, json.RawMessage) (json.RawMessage, error) {
		return nil, nil
	})
}

// floodRequest is computer 7:'s request of type typ with a 60 000-byte messageId, which every
// answer echoes: a few fill the kernel's buffers of a computer that does not read.
func floodRequest(typ string) []byte {
	return []byte(`{"event":"computer_request","traposSenderId":"7:","messageId":"` +
		strings.Repeat("m", 60_000) + `","type":"` + typ + `"}`)
}

func TestComputerThatDoesNotReadItsAnswersIsClosed1013AndCounted(t *testing.T) {
	m := newMetrics()
	const budget = 64 << 10
	// The writer blocks on the full kernel buffers; its write must not time out (1006) before
	// the queue overflows (1013), however slow the machine: the budget is what is tested.
	h := newHarness(t, Config{SendQueueBytes: budget, WriteTimeout: time.Hour, Metrics: m}, nil)
	c := h.connect(t, "7:", "")
	s := h.session(t, "7:")
	// It asks and asks and never reads: the kernel buffers fill, then the queue.
	for i := 0; !s.isClosed(); i++ {
		require.Less(t, i, 10_000, "the queue never overflowed")
		_ = c.conn.SetWriteDeadline(time.Now().Add(waitLimit))
		if c.conn.WriteMessage(websocket.TextMessage, floodRequest("dance")) != nil {
			break
		}
		assert.LessOrEqual(t, s.send.queued(), budget)
	}
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 0 }, waitLimit, testkit.Poll, "the computer to be dropped")
	assert.Equal(t, 1.0, testutil.ToFloat64(m.closes.WithLabelValues("1013")))
}

// A quick answer (HandleQuick) is written by the reader itself when no writer runs: a
// computer that asks and never reads stops being read once its answers fill the kernel's
// buffers (TCP pushes back, as on a bare server), its queue never fills, and every other
// computer is answered meanwhile. The full buffers are a stalled write (stallingListener),
// so the test knows the write waits on the computer, whatever the machine's speed; the
// write timeout ends it (here: its peer hangs up).
func TestQuickAnswersNotReadStopTheReaderNotTheGateway(t *testing.T) {
	m := newMetrics()
	const budget = 64 << 10
	h, c, s, gatewaySide := connectStallable(t, budget, m)
	gatewaySide.stall() // from now on 7: reads none of its answers

	c.request("q1", "quick", nil)
	var writer string
	select {
	case writer = <-gatewaySide.stalled:
	case <-time.After(waitLimit):
		t.Fatal("the answer was never written")
	}
	assert.True(t, strings.Contains(writer, ".(*Session).readLoop("),
		"the reader writes the answer itself, so it reads nothing more meanwhile; the stalled write was:\n%s", writer)
	c.request("q2", "quick", nil) // it asks on: nothing is read, nothing queued
	assert.False(t, s.isClosed(), "not dropped for a full queue (1013): it is no longer read")
	assert.LessOrEqual(t, s.send.peakBytes(), budget)

	other := h.connect(t, "8:", "")
	other.request("q", "quick", nil)
	assert.True(t, other.read().OK, "another computer is answered while the first one's reader waits")

	_ = c.conn.Close()
	gatewaySide.hangUp()
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 1 }, waitLimit, testkit.Poll, "the computer to be dropped")
	assert.Zero(t, testutil.ToFloat64(m.closes.WithLabelValues("1013")))
}

// A computer on a slow link reads what it is sent, only slowly, while the host's requests fill
// its send queue: an answer to the computer's own request still finds room, and the computer is
// not dropped as one that does not read its answers. Before, the answer counted against the
// host's frames, found the queue full and closed the computer 1013: it paid for the host's
// burst, which itself only got busy.
func TestTheHostsFramesDoNotCrowdOutTheComputersAnswers(t *testing.T) {
	m := newMetrics()
	const budget = 64 << 10
	h, c, s, gatewaySide := connectStallable(t, budget, m)
	t.Cleanup(gatewaySide.hangUp) // before the harness stops, should the test end early
	gatewaySide.stall()           // the slow link: the writer waits on its frame until the test lets it go

	// The host's requests, large ones then small ones, fill the queue to its last few bytes.
	for _, size := range []int{8 << 10, 0} {
		payload := json.RawMessage(`{"text":"` + strings.Repeat("x", size) + `"}`)
		for i := 0; ; i++ {
			require.Less(t, i, 1000, "the send queue never filled")
			_, err := h.gw.RequestWithin(context.Background(), LocalAccount, "7:", "dance", payload, time.Millisecond)
			if protocol.CodeOf(err) == protocol.CodeBusy {
				break
			}
			require.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err), "request %d: %v", i, err)
		}
	}
	hostBytes := s.send.queued()
	require.Greater(t, hostBytes, budget-1000, "the host's frames fill the queue")

	// The computer asks; its answer echoes a messageId longer than the room left.
	messageID := strings.Repeat("q", 1000)
	c.request(messageID, "quick", nil)
	require.Eventually(t, func() bool { return s.send.queued() > hostBytes || s.isClosed() }, waitLimit, testkit.Poll, "the answer to be queued")
	require.False(t, s.isClosed(), "the computer was dropped for the host's frames")
	assert.LessOrEqual(t, s.send.peakBytes(), 2*budget, "host frames and answers each within the budget")

	gatewaySide.hangUp() // the link delivers again
	for {
		f := c.read()
		if f.Event == protocol.EventGatewayResponse {
			assert.Equal(t, messageID, f.MessageID)
			assert.True(t, f.OK, "the answer: %+v", f.Error)
			break
		}
		require.Equal(t, protocol.EventGatewayRequest, f.Event, "the host's requests come first")
	}
	assert.Zero(t, testutil.ToFloat64(m.closes.WithLabelValues("1013")))
	assert.Len(t, h.gw.Computers(), 1)
}

// connectStallable connects computer 7: to a gateway of a send queue of budget bytes whose
// side of each socket the test can stall (stallingListener), and returns it once the hello's
// answer is written. That answer went out through a writer goroutine, which gives its role
// back only after its write: until then a quick answer would be queued for it instead of
// written by the reader.
func connectStallable(t *testing.T, budget int, m *Metrics) (*harness, *computer, *Session, *stallingConn) {
	t.Helper()
	l := &stallingListener{}
	h := newHarnessListening(t, l.wrap, Config{SendQueueBytes: budget, WriteTimeout: time.Hour, Metrics: m}, nil, withQuickType)
	c := h.connect(t, "7:", "")
	s := h.session(t, "7:")
	gatewaySide := l.conn(t, c.conn.LocalAddr())
	require.Eventually(t, func() bool { return !s.send.writerRunning() }, waitLimit, testkit.Poll, "the hello's writer to finish")
	return h, c, s, gatewaySide
}

// stallingListener holds the gateway's side of each socket (stallingConn), found by the
// computer's address.
type stallingListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[string]*stallingConn // by the remote address
}

func (l *stallingListener) wrap(inner net.Listener) net.Listener {
	l.Listener, l.conns = inner, map[string]*stallingConn{}
	return l
}

func (l *stallingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	sc := &stallingConn{Conn: conn, stalled: make(chan string, 1), resume: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conns[conn.RemoteAddr().String()] = sc
	return sc, nil
}

// conn is the gateway's side of the socket the computer dialled from addr.
func (l *stallingListener) conn(t *testing.T, addr net.Addr) *stallingConn {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	sc := l.conns[addr.String()]
	require.NotNil(t, sc, "no connection from %s", addr)
	return sc
}

// stallingConn is the gateway's side of a socket whose computer stops reading (stall): each
// write then waits, as one waits on full kernel buffers, until the computer hangs up (hangUp)
// or the gateway closes the socket; stalled receives the stack of a write that stalls.
type stallingConn struct {
	net.Conn
	stalling atomic.Bool
	stalled  chan string
	resume   chan struct{}
	hangOnce sync.Once
}

func (c *stallingConn) stall() { c.stalling.Store(true) }

// hangUp lets the stalled writes go on to a computer that has closed its side: they fail, or
// the reader then finds the socket closed.
func (c *stallingConn) hangUp() { c.hangOnce.Do(func() { close(c.resume) }) }

func (c *stallingConn) Write(p []byte) (int, error) {
	if c.stalling.Load() {
		stack := make([]byte, 64<<10)
		select {
		case c.stalled <- string(stack[:runtime.Stack(stack, false)]):
		default:
		}
		<-c.resume
	}
	return c.Conn.Write(p)
}

func (c *stallingConn) Close() error {
	c.hangUp()
	return c.Conn.Close()
}

// The same computer with a write timeout that passes: a frame that waits WriteTimeout for the
// peer to read it marks a slow consumer, closed 1013 as one whose queue overflows (not 1006,
// which says the peer went away).
func TestQuickAnswersNotReadAreClosed1013AfterTheWriteTimeout(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{WriteTimeout: 50 * time.Millisecond, Metrics: m}, nil, withQuickType)
	c := h.connect(t, "7:", "")
	s := h.session(t, "7:")
	for i := 0; !s.isClosed(); i++ {
		require.Less(t, i, 100_000, "the computer was never dropped")
		_ = c.conn.SetWriteDeadline(time.Now().Add(waitLimit))
		if c.conn.WriteMessage(websocket.TextMessage, floodRequest("quick")) != nil {
			break
		}
	}
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 0 }, waitLimit, testkit.Poll, "the computer to be dropped")
	assert.Equal(t, 1.0, testutil.ToFloat64(m.closes.WithLabelValues("1013")))
	assert.Zero(t, testutil.ToFloat64(m.closes.WithLabelValues("1006")))
	// The gateway dropped it (no close frame: it would not be read), and its line says so.
	assert.Contains(t, awaitLogLine(t, h, "traposId=7:"), `code=1013 byGateway=true reason="write timed out"`)
}

// Finding 4 of issue 22: wrong secrets were limited per address only, so 40 addresses got
// 70-76 answers a second. Now a gateway-wide budget holds the answers back past its burst,
// whichever address guesses; a right secret still gets in at once, and one WARN line names
// the guessing addresses.
func TestWrongSecretsAreLimitedGatewayWide(t *testing.T) {
	m := newMetrics()
	fc := newFakeClock()
	h := newHarness(t, Config{Clock: fc, Password: "right", HelloTimeout: time.Hour, FailedHelloBurst: 10,
		FailedHelloGlobalRate: 1, FailedHelloGlobalBurst: 3, Metrics: m}, nil)
	heldGlobally := func(n float64) func() bool {
		return func() bool { return testutil.ToFloat64(m.limits.WithLabelValues(limitFailedHellosGlobal)) == n }
	}
	var held []*computer
	for i := range 5 { // one wrong secret from each of 5 addresses, all within their own budgets
		c := h.dialFrom(t, fmt.Sprintf("127.0.0.%d", i+2), "7:")
		c.request("h", TypeHello, map[string]any{"traposId": "7:", "secret": "guess"})
		if i < 3 { // the gateway's burst: answered at once
			assert.Equal(t, protocol.CodeUnauthorized, c.read().Error.Code)
			c.expectClose(CloseUnauthorized, "unauthorized")
			continue
		}
		require.Eventually(t, heldGlobally(float64(i-2)), waitLimit, testkit.Poll, "the answer held back")
		held = append(held, c)
	}
	assert.Zero(t, testutil.ToFloat64(m.limits.WithLabelValues(limitFailedHellos)), "no address went past its own budget")
	h.dialFrom(t, "127.0.0.6", "8:").hello("right") // a right secret, from a guessing address: at once
	assert.Len(t, h.gw.Computers(), 1)

	logs := h.logs.String()
	assert.Equal(t, 1, strings.Count(logs, "wrong secrets over the gateway-wide budget"), "one line a minute")
	assert.Contains(t, logs, `addresses="127.0.0.2×1 127.0.0.3×1 127.0.0.4×1 127.0.0.5×1"`)
	assert.Contains(t, logs, "wrongSecrets=4 heldBack=1")

	// The held answers go out one per token of the gateway's budget.
	require.Eventually(t, func() bool { return fc.Armed() >= 2+1 }, waitLimit, testkit.Poll, "the held answers' timers") // + the computer's writer
	fc.Advance(time.Second)
	assert.Equal(t, protocol.CodeUnauthorized, held[0].read().Error.Code)
	held[0].expectClose(CloseUnauthorized, "unauthorized")
	fc.Advance(time.Second)
	assert.Equal(t, protocol.CodeUnauthorized, held[1].read().Error.Code)
}

// A flood of wrong secrets cannot run up a debt that outlives it: no answer waits more than
// maxFailedHelloDelay, and once that has passed the budget is back to its usual pace.
func TestWrongSecretDebtIsCapped(t *testing.T) {
	fc := newFakeClock()
	l := newLimiter(Config{Clock: fc, FailedHelloRate: 1, FailedHelloBurst: 1, FailedHelloGlobalRate: 1000,
		FailedHelloGlobalBurst: 1000}.withDefaults(), slog.New(slog.DiscardHandler))
	for range 1000 {
		assert.LessOrEqual(t, l.helloFailed("10.0.0.1:1").delay, maxFailedHelloDelay)
	}
	fc.Advance(maxFailedHelloDelay)
	assert.LessOrEqual(t, l.helloFailed("10.0.0.1:1").delay, time.Second)
}

func TestTheGuessersLineNamesTheBusiestAddresses(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	g := guessTally{counts: make(map[string]int)}
	for i := range 15 {
		for range i + 1 {
			g.add(fmt.Sprintf("10.0.0.%d", i+1), now, false)
		}
	}
	g.add("10.0.0.1", now, true)
	line := fmt.Sprint(g.lineDue(now))
	assert.Contains(t, line, "addresses 10.0.0.15×15 10.0.0.14×14 10.0.0.13×13")
	assert.Contains(t, line, "10.0.0.6×6 otherAddresses 5 wrongSecrets 121 heldBack 1")
	assert.Nil(t, g.lineDue(now.Add(time.Second)), "one line a minute")
	g.add("10.0.0.9", now.Add(2*time.Second), true)
	line = fmt.Sprint(g.lineDue(now.Add(warnEvery)))
	assert.Contains(t, line, "addresses 10.0.0.9×1 otherAddresses 0 wrongSecrets 1 heldBack 1")
	assert.Contains(t, line, "suppressedSinceLast 1")
}
