package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
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

// A frame is counted under its type's label when the type has one, else under "other" (a
// computer cannot grow the label set), and an event in a direction it does not go under its
// own event all the same.
func TestFramesAreCountedUnderTheirTypeOrOther(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	m.frameOut(protocol.EventGatewayRequest, TypePing)
	m.frameIn(protocol.EventComputerResponse, TypePing)
	m.frameIn(protocol.EventComputerResponse, "made-up")
	m.frameIn(protocol.EventComputerRequest, "made-up-too")
	m.frameIn(protocol.EventGatewayRequest, TypePing)    // the other direction
	m.frameOut(protocol.EventComputerRequest, "made-up") // the other direction, no label of its own
	in := func(event protocol.Event, typ string) float64 {
		return testutil.ToFloat64(m.framesIn.WithLabelValues(string(event), typ))
	}
	out := func(event protocol.Event, typ string) float64 {
		return testutil.ToFloat64(m.framesOut.WithLabelValues(string(event), typ))
	}
	assert.Equal(t, 1.0, out(protocol.EventGatewayRequest, TypePing))
	assert.Equal(t, 1.0, in(protocol.EventComputerResponse, TypePing))
	assert.Equal(t, 1.0, in(protocol.EventComputerResponse, otherType))
	assert.Equal(t, 1.0, in(protocol.EventComputerRequest, otherType))
	assert.Equal(t, 1.0, in(protocol.EventGatewayRequest, TypePing))
	assert.Equal(t, 1.0, out(protocol.EventComputerRequest, otherType))
	assert.Equal(t, 0.0, in(protocol.EventComputerResponse, "made-up"), "no label for a type the gateway does not know")
}

// BenchmarkCountFrame is the frame counters' cost per frame: a host's ping counts two (its
// gateway_request and the computer_response).
func BenchmarkCountFrame(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry())
	for b.Loop() {
		m.frameOut(protocol.EventGatewayRequest, TypePing)
		m.frameIn(protocol.EventComputerResponse, TypePing)
	}
}

// A fresh gateway exports every series whose label values are known, at 0, so that a rate() or
// an increase() sees the first refusal, close or drop (docs/http-api.md#get-metrics).
func TestKnownSeriesAreExportedFromTheStart(t *testing.T) {
	reg := prometheus.NewRegistry()
	NewMetrics(reg)
	var text strings.Builder
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			text.WriteString(f.GetName())
			for _, l := range m.GetLabel() {
				fmt.Fprintf(&text, " %s=%s", l.GetName(), l.GetValue())
			}
			text.WriteString("\n")
		}
	}
	for _, want := range []string{
		"trapos_gateway_hello_failures_total code=unauthorized", "trapos_gateway_hello_failures_total code=not_authenticated",
		"trapos_gateway_closes_total code=1001", "trapos_gateway_closes_total code=1006", "trapos_gateway_closes_total code=4001",
		"trapos_gateway_closes_total code=4429", "trapos_gateway_closes_total code=other",
		"trapos_gateway_limited_total limit=max_connections", "trapos_gateway_limited_total limit=upgrade_rate",
		"trapos_gateway_limited_total limit=failed_hellos", "trapos_gateway_limited_total limit=failed_hellos_global",
		"trapos_gateway_limited_total limit=requests_in_flight", "trapos_gateway_limited_total limit=gateway_requests_in_flight",
		"trapos_gateway_limited_total limit=send_queue_bytes", "trapos_gateway_limited_total limit=log_lines",
		"trapos_gateway_evicted_before_hello_total cap=address", "trapos_gateway_evicted_before_hello_total cap=gateway",
		"trapos_gateway_evicted_before_hello_total cap=connections",
		"trapos_gateway_liveness_drops_total reason=pong_timeout", "trapos_gateway_liveness_drops_total reason=unresponsive",
	} {
		assert.Contains(t, text.String(), want+"\n")
	}
}

// TestRequestDurationLeavesOutComputersNotConnected: a request for a computer that is not
// connected fails before it is sent and is not in the request histogram, and its help says so
// (docs/http-api.md): an operator reading not_connected there sees sockets that closed while
// their request waited, not requests for absent computers.
func TestRequestDurationLeavesOutComputersNotConnected(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, Config{Password: "pw", Metrics: NewMetrics(reg)}, staticProber{OK: true})
	_, err := h.gw.Request(context.Background(), LocalAccount, "9", TypePing, nil)
	require.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err))
	families, err := reg.Gather()
	require.NoError(t, err)
	help := ""
	for _, f := range families {
		if f.GetName() == "trapos_gateway_request_duration_seconds" {
			help = f.GetHelp()
			for _, s := range f.GetMetric() {
				assert.Zero(t, s.GetHistogram().GetSampleCount(), "%v", s.GetLabel())
			}
		}
	}
	assert.Contains(t, help, "A request for a computer that is not connected is not counted")
}

// TestOlderClientComputersAreCounted: after an upgrade of the gateway, its operator watches its
// computers take the new client: trapos_gateway_older_client_computers counts those connected
// with an older one (or naming none), as the log's "computer runs an older client" line names
// each once; it read nowhere but trap-sandbox computers' CLIENT column, a computer at a time.
func TestOlderClientComputersAreCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarness(t, Config{ClientVersion: "0.5.10", Metrics: NewMetrics(reg)}, nil)
	h.dialAs(t, "1:", "0.5.9")
	h.dialAs(t, "2:", "0.5.10")
	h.dialAs(t, "3:", "")
	newer := h.dialAs(t, "4:", "0.6.0")
	count := func(name string) float64 {
		families, err := reg.Gather()
		require.NoError(t, err)
		for _, f := range families {
			if f.GetName() == name {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatalf("no %s", name)
		return 0
	}
	assert.Equal(t, 4.0, count("trapos_gateway_connected_computers"))
	assert.Equal(t, 2.0, count("trapos_gateway_older_client_computers"))
	require.NoError(t, newer.conn.Close())
	require.Eventually(t, func() bool { return count("trapos_gateway_connected_computers") == 3 }, waitLimit, testkit.Poll)
	assert.Equal(t, 2.0, count("trapos_gateway_older_client_computers"))

	// A gateway that serves no client calls none older.
	plain := prometheus.NewRegistry()
	h2 := newHarness(t, Config{Metrics: NewMetrics(plain)}, nil)
	h2.dialAs(t, "1:", "0.5.9")
	reg = plain
	assert.Equal(t, 0.0, count("trapos_gateway_older_client_computers"))
}
