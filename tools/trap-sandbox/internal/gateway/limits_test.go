package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

func TestMaxConnectionsRefusesWith503(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{MaxConnections: 2, Metrics: m}, nil)
	first := h.dial(t, "1:")
	h.connect(t, "2:", "")

	status, body := h.dialRefused(t)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Contains(t, body, "the gateway is full (2 connections)")
	h.dialRefused(t)
	assert.Equal(t, 2.0, testutil.ToFloat64(m.limits.WithLabelValues(limitMaxConnections)))
	assert.Equal(t, 1, strings.Count(h.logs.String(), "limit=max_connections"), "refusals are logged once per address per minute")

	// A freed slot is usable again.
	require.NoError(t, first.conn.Close())
	require.Eventually(t, func() bool { return h.gw.openSockets() == 1 }, waitLimit, pollEvery, "the closed socket to free its slot")
	h.connect(t, "3:", "")
}

func TestUpgradeRateLimitRefusesWith429(t *testing.T) {
	m := newMetrics()
	// A refill rate this low never adds a token during the test: only the burst counts.
	h := newHarness(t, Config{UpgradeRate: 0.001, UpgradeBurst: 3, Metrics: m}, nil)
	for i := range 3 {
		h.dial(t, string(rune('1'+i))+":")
	}
	for range 2 {
		status, body := h.dialRefused(t)
		assert.Equal(t, http.StatusTooManyRequests, status)
		assert.Contains(t, body, "too many connection attempts from this address")
	}
	assert.Equal(t, 2.0, testutil.ToFloat64(m.limits.WithLabelValues(limitUpgradeRate)))
	assert.Equal(t, 1, strings.Count(h.logs.String(), "limit=upgrade_rate"), "refusals are logged once per address per minute")
	assert.Equal(t, 3, h.gw.openSockets(), "refused upgrades hold no slot")
}

func TestUpgradeRateLimitCanBeDisabled(t *testing.T) {
	h := newHarness(t, Config{UpgradeRate: -1, UpgradeBurst: 1}, nil)
	for i := range 5 {
		h.dial(t, string(rune('1'+i))+":")
	}
}

func TestHostOf(t *testing.T) {
	assert.Equal(t, "127.0.0.1", hostOf("127.0.0.1:5555"))
	assert.Equal(t, "::1", hostOf("[::1]:5555"))
	assert.Equal(t, "garbage", hostOf("garbage"))
}

func TestComputerThatDoesNotReadItsAnswersIsClosed1013AndCounted(t *testing.T) {
	m := newMetrics()
	const budget = 64 << 10
	// The writer blocks on the full kernel buffers; its write must not time out (1006) before
	// the queue overflows (1013), however slow the machine: the budget is what is tested.
	h := newHarness(t, Config{SendQueueBytes: budget, WriteTimeout: time.Hour, Metrics: m}, nil)
	c := h.connect(t, "7:", "")
	s := h.gw.registry.Lookup(Key{AccountID: LocalAccount, TraposID: "7:"})
	require.NotNil(t, s)
	// It asks and asks and never reads: the kernel buffers fill, then the queue.
	bigID := strings.Repeat("m", 60_000)
	for i := 0; !s.isClosed(); i++ {
		require.Less(t, i, 10_000, "the queue never overflowed")
		_ = c.conn.SetWriteDeadline(time.Now().Add(waitLimit))
		if c.conn.WriteMessage(websocket.TextMessage, []byte(`{"event":"computer_request","traposSenderId":"7:","messageId":"`+
			bigID+`","type":"dance"}`)) != nil {
			break
		}
		assert.LessOrEqual(t, s.send.queued(), budget)
	}
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 0 }, waitLimit, pollEvery, "the computer to be dropped")
	assert.Equal(t, 1.0, testutil.ToFloat64(m.closes.WithLabelValues("1013")))
}
