package gateway

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
)

func TestMetricsAfterTraffic(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, Config{Password: "pw", Metrics: NewMetrics(reg)}, staticProber{OK: false, Detail: "down"})
	c := h.connect(t, "5:", "pw")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ch := asyncRequest(h.gw, ctx, "5:", TypePing, nil)
	c.answerNext(func(protocol.Frame) map[string]any {
		return map[string]any{"ok": true, "payload": map[string]any{}}
	})
	r := awaitResult(t, ch)
	require.NoError(t, r.err)
	require.True(t, r.resp.OK)
	c.request("p1", protocol.TypeProbeGateway, map[string]any{})
	assert.True(t, c.read().OK)
	bad := h.dial(t, "6:")
	bad.hello("wrong")
	bad.expectClose(CloseUnauthorized, "unauthorized")
	// The client sees the close frame before the gateway's session counts the close.
	m := h.gw.cfg.Metrics
	require.Eventually(t, func() bool {
		return testutil.ToFloat64(m.closes.WithLabelValues("4001")) == 1
	}, waitLimit, testkit.Poll, "the 4001 close to be counted")

	resp, err := h.srv.Client().Get(h.srv.URL + server.MetricsPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	text := string(data)
	for _, want := range []string{
		"trapos_gateway_connected_computers 1",
		`trapos_gateway_frames_in_total{event="computer_request",type="hello"} 2`,
		`trapos_gateway_frames_in_total{event="computer_response",type="ping"} 1`,
		`trapos_gateway_frames_out_total{event="gateway_request",type="ping"} 1`,
		`trapos_gateway_frames_out_total{event="gateway_response",type="probe_gateway"} 1`,
		`trapos_gateway_hello_failures_total{code="unauthorized"} 1`,
		`trapos_gateway_request_duration_seconds_count{outcome="ok"} 1`,
		`trapos_gateway_closes_total{code="4001"} 1`,
	} {
		assert.Contains(t, text, want)
	}
}
