package gateway

import (
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	assert.Equal(t, 1, testutil.CollectAndCount(m.closes), "one series, other")
}
