package gateway

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
)

// sessionsOf snapshots the gateway's sessions (before and after hello).
func sessionsOf(g *Gateway) []*Session {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*Session, 0, len(g.sessions))
	for s := range g.sessions {
		out = append(out, s)
	}
	return out
}

// 250 sockets from one address that never say hello and never read, each asking as fast as
// it can with the longest messageId a frame before hello may carry: no socket ever queues
// more than the budget before hello, and one that fills it is closed (1013).
func TestHostileSocketsBeforeHelloStayWithinTheirByteBudget(t *testing.T) {
	m := newMetrics()
	// A write blocked on the full kernel buffers must not time out (1006) before the queue
	// overflows (1013), however slow the machine: the budget is what is tested.
	h := newHarness(t, Config{WriteTimeout: time.Hour, HelloTimeout: time.Hour, Metrics: m}, nil)
	const sockets = 250
	id := strings.Repeat("m", MaxFrameBytesBeforeHello-200)
	frame := []byte(`{"event":"computer_request","messageId":"` + id + `","type":"probe_gateway"}`)
	// A tiny receive buffer, so the kernel holds few answers and the gateway's queue fills.
	dialer := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			_ = conn.(*net.TCPConn).SetReadBuffer(4096)
		}
		return conn, err
	}}
	conns := make([]*websocket.Conn, 0, sockets)
	for range sockets {
		conn, resp, err := dialer.Dial(h.wsURL(), nil)
		require.NoError(t, err)
		_ = resp.Body.Close()
		t.Cleanup(func() { _ = conn.Close() })
		conns = append(conns, conn)
	}
	var wg sync.WaitGroup
	for _, conn := range conns {
		wg.Go(func() {
			for range 100 { // enough answers to fill the kernel buffers and the budget
				_ = conn.SetWriteDeadline(time.Now().Add(waitLimit))
				if conn.WriteMessage(websocket.TextMessage, frame) != nil {
					return // the gateway closed it
				}
			}
		})
	}
	wg.Wait()
	open := sessionsOf(h.gw)
	for _, s := range open {
		assert.LessOrEqual(t, s.send.peakBytes(), preHelloQueueBytes)
	}
	closed := testutil.ToFloat64(m.closes.WithLabelValues("1013"))
	t.Logf("%d sockets still open, %g closed for filling their queue", len(open), closed)
	assert.Positive(t, closed, "sockets that fill their budget are closed")
}

func TestAFrameOverTheBeforeHelloLimitCloses1009(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.dial(t, "")
	// Exactly at the limit is still read (and answered: hello first).
	head := `{"event":"computer_request","traposSenderId":"7:","messageId":"at","type":"probe_gateway","payload":{"pad":"`
	tail := `"}}`
	text := head + strings.Repeat("x", MaxFrameBytesBeforeHello-len(head)-len(tail)) + tail
	require.Len(t, text, MaxFrameBytesBeforeHello)
	c.sendText(text)
	resp := c.read()
	assert.Equal(t, "at", resp.MessageID)
	assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)
	c.request(strings.Repeat("m", MaxFrameBytesBeforeHello), "probe_gateway", nil)
	c.expectClose(websocket.CloseMessageTooBig, "frame too big")
	// After hello the full 128 KiB applies.
	c = h.connect(t, "7:", "")
	c.request(strings.Repeat("m", 100_000), "dance", nil)
	resp = c.read()
	assert.Equal(t, protocol.CodeUnknownType, resp.Error.Code)
}

// A flood of the worst frames a socket can send before hello, and of wrong secrets, writes a
// bounded log: every line is short, and repeated WARN lines come once per address per minute.
func TestLogStaysBoundedUnderAFlood(t *testing.T) {
	fc := newFakeClock()
	m := newMetrics()
	h := newHarness(t, Config{Clock: fc, Password: "right", HelloTimeout: time.Hour, Metrics: m}, nil)
	long := strings.Repeat("t", MaxFrameBytesBeforeHello-300)
	c := h.dial(t, "")
	for i := range 300 {
		switch i % 3 {
		case 0:
			c.request("x", long, nil) // a huge type, answered not_authenticated
			c.read()
		case 1:
			c.sendText(`{"event":"` + long + `","messageId":"x"}`) // unknown event
		case 2:
			c.sendText(`{"event":"computer_response","messageId":"x","type":"` + long + `","ok":true}`)
		}
	}
	for range 50 { // wrong secrets from the same address
		w := h.dial(t, "7:")
		w.request("h", TypeHello, map[string]any{"traposId": "7:", "secret": "guess"})
	}
	require.Eventually(t, func() bool {
		return testutil.ToFloat64(m.helloFailures.WithLabelValues(string(protocol.CodeUnauthorized))) == 50
	}, waitLimit, testkit.Poll, "the wrong secrets to be counted")
	logs := h.logs.String()
	for line := range strings.SplitSeq(logs, "\n") {
		assert.Less(t, len(line), 1200, "a log line of %d bytes", len(line))
	}
	assert.Equal(t, 1, strings.Count(logs, "hello rejected: wrong secret"), "one WARN line for the address")
	assert.Less(t, len(logs), 300*1200)

	// A minute later the next one says how many were left out.
	fc.Advance(warnEvery)
	w := h.dial(t, "7:")
	w.request("h", TypeHello, map[string]any{"traposId": "7:", "secret": "guess"})
	require.Eventually(t, func() bool { return strings.Contains(h.logs.String(), "suppressedSinceLast=49") }, waitLimit, testkit.Poll, "the summary line")
}

// Wrong secrets from one address past its burst wait for their answer, one per token; a
// right secret from the same address gets in at once meanwhile.
func TestFailedHellosAreSlowedButARightSecretIsNever(t *testing.T) {
	m := newMetrics()
	fc := newFakeClock()
	h := newHarness(t, Config{Clock: fc, Password: "right", HelloTimeout: time.Hour, FailedHelloBurst: 3, FailedHelloRate: 1, Metrics: m}, nil)
	wrong := func() *computer {
		c := h.dial(t, "7:")
		c.request("h", TypeHello, map[string]any{"traposId": "7:", "secret": "guess"})
		return c
	}
	for range 3 { // the burst: answered at once
		c := wrong()
		assert.Equal(t, protocol.CodeUnauthorized, c.read().Error.Code)
		c.expectClose(CloseUnauthorized, "unauthorized")
	}
	held := func(n float64) func() bool {
		return func() bool { return testutil.ToFloat64(m.limits.WithLabelValues(limitFailedHellos)) == n }
	}
	fourth := wrong()
	require.Eventually(t, held(1), waitLimit, testkit.Poll, "the fourth verdict held back")
	fifth := wrong()
	require.Eventually(t, held(2), waitLimit, testkit.Poll, "the fifth verdict held back")
	var waiting []*Session
	for _, s := range sessionsOf(h.gw) {
		if s.verdictPending.Load() {
			waiting = append(waiting, s)
		}
	}
	require.Len(t, waiting, 2)

	ok := h.connect(t, "8:", "right") // same address, right secret: no wait
	assert.NotNil(t, ok)

	// The held verdicts wait on timers their goroutines arm after the count above: advance
	// only once both are armed, beside the writers' timers of the three open sockets (the
	// burst's sockets have ended and stopped theirs).
	require.Eventually(t, func() bool { return len(sessionsOf(h.gw)) == 3 }, waitLimit, testkit.Poll, "the burst's sockets to end")
	armed, cancelArmed := context.WithTimeout(context.Background(), waitLimit)
	defer cancelArmed()
	require.True(t, fc.WaitArmed(3+2, armed.Done()), "the held verdicts' timers were not armed")

	fc.Advance(time.Second) // one token: the fourth gets its answer
	assert.Equal(t, protocol.CodeUnauthorized, fourth.read().Error.Code)
	fourth.expectClose(CloseUnauthorized, "unauthorized")
	assert.False(t, waiting[0].isClosed() && waiting[1].isClosed(), "the fifth still waits")
	fc.Advance(time.Second)
	assert.Equal(t, protocol.CodeUnauthorized, fifth.read().Error.Code)
	fifth.expectClose(CloseUnauthorized, "unauthorized")
}

func TestAddressKeyGroupsAnIPv6Slash64(t *testing.T) {
	assert.Equal(t, "127.0.0.1", server.AddressKey("127.0.0.1:5555"))
	assert.Equal(t, "10.0.0.7", server.AddressKey("[::ffff:10.0.0.7]:1"))
	assert.Equal(t, "2001:db8:1:2::/64", server.AddressKey("[2001:db8:1:2:aaaa::1]:80"))
	assert.Equal(t, server.AddressKey("[2001:db8:1:2::1]:80"), server.AddressKey("[2001:db8:1:2:ffff:ffff:ffff:ffff]:81"))
	assert.NotEqual(t, server.AddressKey("[2001:db8:1:2::1]:80"), server.AddressKey("[2001:db8:1:3::1]:80"))
}

func TestHelloChecksTheTraposID(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	for _, bad := range []string{"turtle", ":x", "7", "x7:", "7:a\nb", "7:\x1b[2J", "7:kit\u202echen", "7:a\u2028b", "7:\u2066x", "7:" + strings.Repeat("l", cctext.MaxTraposIDBytes),
		// Invisible: each listed as 7:kitchen beside the real one.
		"7:kitchen\u200b", "7:\ufeffkitchen", "7:kit\u2060chen", "7:kitchen\U000E0041",
		// No computer's id: each sorted beside 7:kitchen, 0:, as that computer listed twice.
		"07:kitchen", "007:kitchen", "00:"} {
		c := h.dial(t, bad)
		resp := c.hello("")
		require.False(t, resp.OK, "traposId %q", bad)
		assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)
		assert.Contains(t, resp.Error.Message, "traposId")
	}
	for _, good := range []string{"7:", "12:kitchen", "3:\u00e9t\u00e9 \u2603", "4:soft\u00adhyphen", "0:", "10:07"} {
		assert.True(t, h.connect(t, good, "").hello("").OK, good)
	}
	assert.Len(t, h.gw.Computers(), 6)
	resp := h.dial(t, "7:kitchen\u200b").hello("")
	require.False(t, resp.OK)
	assert.Equal(t, "the traposId contains U+200B, an invisible formatting character; remove it from the computer's label", resp.Error.Message)
	resp = h.dial(t, "007:kitchen").hello("")
	require.False(t, resp.OK)
	assert.Equal(t, `the traposId "007:kitchen" writes its computer id with a leading zero, as no computer's id is written: it would list beside "7:kitchen" as that computer; `+
		"say hello with the id as os.getComputerID gives it", resp.Error.Message)
	resp = h.dial(t, "00:").hello("")
	require.False(t, resp.OK)
	assert.Contains(t, resp.Error.Message, `it would list beside "0:" as that computer`)
}

// A traposId written decomposed (u and U+0308 for ü) listed as the composed one beside it, a
// computer the host could not tell from the real 7:küche, and could not reach either: every
// host surface reads a typed traposId composed (cctext.TraposID). No CC label is written so
// (its bytes are characters up to U+00FF, which never decompose).
func TestHelloRefusesADecomposedTraposID(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	require.True(t, h.connect(t, "7:k\u00fcche", "").hello("").OK)
	resp := h.dial(t, "7:ku\u0308che").hello("")
	require.False(t, resp.OK, "the decomposed twin")
	assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)
	assert.Equal(t, `the traposId "7:ku\u0308che" is not written composed (Unicode NFC): it would list as "7:k\u00fcche"; `+
		"say hello with the composed traposId", resp.Error.Message)
	assert.Len(t, h.gw.Computers(), 1)
	// A combining mark that composes with nothing is a visible character of its own.
	assert.True(t, h.connect(t, "8:x\u0301", "").hello("").OK)
}

// A hello's clientVersion was kept whole, up to the 8 KiB frame before hello: every listing of
// the computers (the CLI's CLIENT column, the web console, each replica's claim of it on NATS)
// carried a hostile computer's 8 KiB, and its socket held them for its life. It is cut at
// MaxClientVersionBytes, marked as cut.
func TestALongClientVersionIsCut(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.dial(t, "7:")
	c.request("hello-1", TypeHello, map[string]any{"traposId": "7:", "secret": "", "clientVersion": strings.Repeat("9", 7000)})
	require.True(t, c.read().OK)
	list := h.gw.Computers()
	require.Len(t, list, 1)
	assert.Equal(t, strings.Repeat("9", MaxClientVersionBytes)+"…(cut, 7000 bytes)", list[0].ClientVersion)

	c2 := h.dial(t, "8:")
	c2.request("hello-1", TypeHello, map[string]any{"traposId": "8:", "secret": "", "clientVersion": "0.5.22"})
	require.True(t, c2.read().OK)
	for _, cp := range h.gw.Computers() {
		if cp.TraposID == "8:" {
			assert.Equal(t, "0.5.22", cp.ClientVersion, "a version is kept as it is")
		}
	}
}

// The traposId's limit counts the computer's bytes, as the computer does: CC sends a label's
// byte E9 as \u00e9, one byte, though "é" is two in Go. And bytes 0x80-0x9F are CC's drawing
// characters, which a label may hold, not control characters.
func TestTheTraposIDLimitCountsTheComputersBytes(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	atTheLimit := "7:" + strings.Repeat("\u00e9", cctext.MaxTraposIDBytes-2)
	resp := h.dial(t, atTheLimit).hello("")
	require.True(t, resp.OK, "a traposId of %d bytes on the computer: %+v", cctext.MaxTraposIDBytes, resp.Error)

	overTheLimit := "8:" + strings.Repeat("\u00e9", cctext.MaxTraposIDBytes-1)
	resp = h.dial(t, overTheLimit).hello("")
	require.False(t, resp.OK)
	assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)
	assert.Equal(t, "the traposId is 257 bytes; the limit is 256 (shorten the computer's label)", resp.Error.Message)

	drawing := "9:\u0080\u0085\u009f"
	assert.True(t, h.dial(t, drawing).hello("").OK, "CC's drawing characters are a label's bytes like any other")
}

func TestAnInvalidUTF8MessageIDIsEchoedAsValidText(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.dial(t, "")
	c.sendText("{\"event\":\"computer_request\",\"messageId\":\"a\xff\xfeb\",\"type\":\"probe_gateway\"}")
	text, err := c.readText()
	require.NoError(t, err)
	assert.True(t, utf8.ValidString(text), "the answer must be a valid text frame: %q", text)
	assert.Contains(t, text, "not_authenticated")
}

func TestPingsBeforeHelloAreLimited(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	c := h.dial(t, "")
	for range maxPingsBeforeHello + 1 {
		require.NoError(t, c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(waitLimit)))
	}
	c.expectClose(websocket.ClosePolicyViolation, "too many pings before hello")
	// After hello, pings are free.
	ok := h.connect(t, "7:", "")
	for range 3 * maxPingsBeforeHello {
		require.NoError(t, ok.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(waitLimit)))
	}
	ok.request("p", protocol.TypeProbeGateway, nil)
	assert.True(t, ok.read().OK, "the socket still serves")
}
