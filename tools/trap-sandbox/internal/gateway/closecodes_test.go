package gateway

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// A peer picks its close code; codes the gateway does not know share one label.
func TestMadeUpCloseCodesShareOneMetricLabel(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{Metrics: m}, nil)
	for i, code := range []int{4321, 4322, 3999} {
		c := h.connect(t, "7:", "")
		require.NoError(t, c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(waitLimit)))
		require.Eventually(t, func() bool { return testutil.ToFloat64(m.closes.WithLabelValues("other")) == float64(i+1) }, waitLimit, testkit.Poll, "the close to be counted")
	}
	assert.Equal(t, len(countedCloseCodes)+1, testutil.CollectAndCount(m.closes), "no series but the known codes' and other")
}

// TestAComputerThatLeftWithoutACloseFrameIsLoggedAsLeaving: every CC computer leaves without a
// close frame (a reboot, an unloaded chunk, a stopped server), and its line said only
// code=1006, "abnormal closure", which sent operators looking for a fault. A connection that
// failed (a reset) is no computer leaving: its line says so and carries the error, which was
// only at debug.
func TestAComputerThatLeftWithoutACloseFrameIsLoggedAsLeaving(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	left := h.connect(t, "7:kitchen", "")
	require.NoError(t, left.conn.NetConn().Close()) // CC's close(): TCP ends, no close frame
	line := awaitLogLine(t, h, "traposId=7:kitchen")
	assert.Contains(t, line, `level=INFO msg="computer disconnected"`)
	assert.Contains(t, line, `accountId=local traposId=7:kitchen code=1006 byGateway=false `+
		`likely="the computer rebooted or shut down, its chunk was unloaded or its Minecraft server stopped (CC closes a socket without a close frame)"`)
	assert.NotContains(t, line, "err=")

	reset := h.connect(t, "8:door", "")
	tcp, ok := reset.conn.NetConn().(*net.TCPConn)
	require.True(t, ok)
	require.NoError(t, tcp.SetLinger(0)) // its close resets the connection
	require.NoError(t, tcp.Close())
	line = awaitLogLine(t, h, "traposId=8:door")
	assert.Contains(t, line, `level=INFO msg="computer disconnected"`)
	assert.Contains(t, line, `accountId=local traposId=8:door code=1006 byGateway=false `+
		`likely="the connection failed (err says how): not the way a CC computer leaves" err=`)
	assert.Contains(t, line, "connection reset by peer")
}

// awaitLogLine waits for the gateway's "computer disconnected" line that holds part, and
// returns it.
func awaitLogLine(t *testing.T, h *harness, part string) string {
	t.Helper()
	var found string
	require.Eventually(t, func() bool {
		for line := range strings.Lines(h.logs.String()) {
			if strings.Contains(line, `msg="computer disconnected"`) && strings.Contains(line, part+" ") {
				found = line
				return true
			}
		}
		return false
	}, waitLimit, testkit.Poll, "the disconnect line of %s", part)
	return found
}

// The codes of docs/protocol.md's table that a computer sends have their own label: 4429 is a
// computer's (too many requests), not a made-up one.
func TestTheComputersDocumentedCloseCodeHasItsOwnLabel(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{Metrics: m}, nil)
	c := h.connect(t, "7:", "")
	require.NoError(t, c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(CloseTooManyRequests, ""), time.Now().Add(waitLimit)))
	require.Eventually(t, func() bool { return testutil.ToFloat64(m.closes.WithLabelValues("4429")) == 1 }, waitLimit, testkit.Poll, "the close to be counted as 4429")
	assert.Zero(t, testutil.ToFloat64(m.closes.WithLabelValues("other")))
}

// A frame that breaks RFC 6455 is closed 1002 (the WebSocket library sends the close frame),
// and the gateway says so: logged and counted as 1002 by the gateway, not as a peer's 1006.
// An oversized frame, whose 1009 the reader sends itself, is logged as the gateway's as well.
func TestAFrameThatBreaksTheWebSocketProtocolIsClosedAndCounted1002(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{Metrics: m}, nil)
	bystander := h.connect(t, "1:", "")
	c := h.connect(t, "2:", "")
	// A masked text frame with RSV1 set (no extension was negotiated): FIN|RSV1|text, "x".
	_, err := c.conn.NetConn().Write([]byte{0xC1, 0x81, 1, 2, 3, 4, 'x' ^ 1})
	require.NoError(t, err)
	c.expectClose(websocket.CloseProtocolError, "RSV1 set")
	require.Eventually(t, func() bool { return testutil.ToFloat64(m.closes.WithLabelValues("1002")) == 1 }, waitLimit, testkit.Poll, "the close to be counted as 1002")
	require.Eventually(t, func() bool { return strings.Contains(h.logs.String(), "traposId=2: code=1002 byGateway=true") }, waitLimit, testkit.Poll, "the disconnect to be logged as the gateway's 1002")
	assert.Contains(t, h.logs.String(), `reason="protocol error: RSV1 set"`)

	big := h.connect(t, "3:", "")
	require.NoError(t, big.conn.WriteMessage(websocket.TextMessage, []byte(strings.Repeat("x", protocol.MaxFrameBytes+1))))
	big.expectClose(websocket.CloseMessageTooBig, "frame too big")
	require.Eventually(t, func() bool { return strings.Contains(h.logs.String(), "traposId=3: code=1009 byGateway=true") }, waitLimit, testkit.Poll, "the disconnect to be logged as the gateway's 1009")

	bystander.request("p", protocol.TypeProbeGateway, nil)
	assert.True(t, bystander.read().OK)
}
