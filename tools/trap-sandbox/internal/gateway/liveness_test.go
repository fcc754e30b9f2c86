package gateway

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
)

// Short liveness timers for tests; the defaults are tens of seconds.
const (
	testPingPeriod = 40 * time.Millisecond
	testPongWait   = 150 * time.Millisecond
)

func newMetrics() *Metrics { return NewMetrics(prometheus.NewRegistry()) }

func TestDefaultLivenessConfig(t *testing.T) {
	cfg := Config{}.withDefaults()
	assert.Equal(t, 30*time.Second, cfg.PingPeriod)
	assert.Equal(t, 60*time.Second, cfg.PongWait)
	assert.Equal(t, 60*time.Second, cfg.IdleProbeAfter)
	// A pong wait not above the ping period is corrected.
	cfg = Config{PingPeriod: time.Second, PongWait: time.Second}.withDefaults()
	assert.Equal(t, 2*time.Second, cfg.PongWait)
}

func TestPeerThatNeverPongsIsDropped(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{PingPeriod: testPingPeriod, PongWait: testPongWait, IdleProbeAfter: time.Hour, Metrics: m}, nil)
	c := h.connect(t, "7:", "")
	pings := make(chan struct{}, 100)
	c.conn.SetPingHandler(func(string) error { // a dead peer: the ping is never answered
		select {
		case pings <- struct{}{}:
		default:
		}
		return nil
	})
	require.Len(t, h.gw.Computers(), 1)

	start := time.Now()
	_, err := c.readText() // returns when the gateway drops the connection
	require.Error(t, err)
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		assert.Equal(t, websocket.CloseAbnormalClosure, ce.Code, "a dead peer gets no close frame")
	}
	assert.GreaterOrEqual(t, time.Since(start), testPongWait/2)
	assert.NotEmpty(t, pings, "the gateway sent pings")
	waitFor(t, "the computer to be unregistered", func() bool { return len(h.gw.Computers()) == 0 })
	assert.Equal(t, 1.0, testutil.ToFloat64(m.livenessDrops.WithLabelValues("pong_timeout")))
}

func TestPeerThatPongsStays(t *testing.T) {
	h := newHarness(t, Config{PingPeriod: testPingPeriod, PongWait: testPongWait, IdleProbeAfter: time.Hour}, nil)
	c := h.connect(t, "7:", "")
	// Read (and so answer pings) for several pong waits; only our own deadline may end it.
	require.NoError(t, c.conn.SetReadDeadline(time.Now().Add(4*testPongWait)))
	_, _, err := c.conn.ReadMessage()
	var netErr net.Error
	require.True(t, errors.As(err, &netErr) && netErr.Timeout(), "expected our read deadline, got %v", err)
	assert.Len(t, h.gw.Computers(), 1)
}

func TestPeerThatSendsFramesButNeverPongsStays(t *testing.T) {
	h := newHarness(t, Config{PingPeriod: testPingPeriod, PongWait: testPongWait, IdleProbeAfter: time.Hour}, nil)
	c := h.connect(t, "7:", "")
	c.conn.SetPingHandler(func(string) error { return nil }) // pings are never answered
	// Frames alone (even ignored ones) prove the peer alive: keep sending for several pong waits.
	for end := time.Now().Add(4 * testPongWait); time.Now().Before(end); {
		require.NoError(t, c.conn.WriteMessage(websocket.TextMessage, []byte(`{}`)))
		time.Sleep(testPingPeriod / 4)
	}
	assert.Len(t, h.gw.Computers(), 1)
}

// serveComputer reads until the read deadline and answers each gateway ping if answer is
// set; it returns how many pings arrived. Protocol pings are answered by gorilla meanwhile.
func serveComputer(conn *websocket.Conn, id string, answer bool, until time.Time) (int, error) {
	if err := conn.SetReadDeadline(until); err != nil {
		return 0, err
	}
	n := 0
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return n, err
		}
		f, err := protocol.DecodeFrame(data)
		if err != nil || f.Event != protocol.EventGatewayRequest || f.Type != TypePing {
			continue
		}
		n++
		if !answer {
			continue
		}
		resp := `{"event":"computer_response","traposSenderId":"` + id + `","messageId":"` + f.MessageID +
			`","type":"ping","ok":true,"payload":{"traposId":"` + id + `"}}`
		if err := conn.WriteMessage(websocket.TextMessage, []byte(resp)); err != nil {
			return n, err
		}
	}
}

func TestIdleComputerThatDoesNotAnswerPingIsClosed4010(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{PingPeriod: testPingPeriod, PongWait: testPongWait,
		IdleProbeAfter: 100 * time.Millisecond, RequestTimeout: 100 * time.Millisecond, Metrics: m}, nil)
	c := h.connect(t, "7:", "")
	// Protocol pings are answered (CC's Java side does that), gateway pings are not (the
	// Lua daemon crashed): the pong wait never expires, the idle probe does.
	pings, err := serveComputer(c.conn, "7:", false, time.Now().Add(waitLimit))
	assert.Equal(t, 1, pings)
	var ce *websocket.CloseError
	require.True(t, errors.As(err, &ce), "expected a close frame, got %v", err)
	assert.Equal(t, CloseUnresponsive, ce.Code)
	assert.Equal(t, "unresponsive", ce.Text)
	waitFor(t, "the computer to be unregistered", func() bool { return len(h.gw.Computers()) == 0 })
	assert.Equal(t, 1.0, testutil.ToFloat64(m.livenessDrops.WithLabelValues("unresponsive")))
	assert.Equal(t, 0.0, testutil.ToFloat64(m.livenessDrops.WithLabelValues("pong_timeout")))
}

func TestIdleComputerThatAnswersStays(t *testing.T) {
	m := newMetrics()
	const idle = 50 * time.Millisecond
	h := newHarness(t, Config{PingPeriod: testPingPeriod, PongWait: testPongWait,
		IdleProbeAfter: idle, RequestTimeout: 200 * time.Millisecond, Metrics: m}, nil)
	c := h.connect(t, "7:", "")
	pings, err := serveComputer(c.conn, "7:", true, time.Now().Add(12*idle))
	var netErr net.Error
	require.True(t, errors.As(err, &netErr) && netErr.Timeout(), "expected our read deadline, got %v", err)
	assert.GreaterOrEqual(t, pings, 3, "probed again each time it went idle")
	assert.Len(t, h.gw.Computers(), 1)
	assert.Equal(t, 0.0, testutil.ToFloat64(m.livenessDrops.WithLabelValues("unresponsive")))
}
