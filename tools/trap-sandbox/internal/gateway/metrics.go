package gateway

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"trap-sandbox/internal/protocol"
)

// MetricsPath is where the Prometheus metrics are served (behind the HTTP API's auth).
const MetricsPath = "/metrics"

// otherType stands for every request type the gateway does not know, so a computer cannot
// grow the label set without bound.
const otherType = "other"

// Metrics are the gateway's Prometheus collectors. A nil *Metrics records nothing.
type Metrics struct {
	registry       *prometheus.Registry
	framesIn       *prometheus.CounterVec
	framesOut      *prometheus.CounterVec
	helloFailures  *prometheus.CounterVec
	requestLatency *prometheus.HistogramVec
	probes         *prometheus.CounterVec
	closes         *prometheus.CounterVec
	limits         *prometheus.CounterVec
	livenessDrops  *prometheus.CounterVec
	// frameInCounters and frameOutCounters are framesIn's and framesOut's children for every
	// label pair that can occur, resolved once: a frame is counted with a map lookup instead
	// of hashing its labels.
	frameInCounters, frameOutCounters map[frameLabels]prometheus.Counter
}

// frameLabels is the label pair of the frame counters.
type frameLabels struct {
	event protocol.Event
	typ   string
}

// frameCounters resolves vec's children for events × the counted types.
func frameCounters(vec *prometheus.CounterVec, events ...protocol.Event) map[frameLabels]prometheus.Counter {
	counters := make(map[frameLabels]prometheus.Counter)
	for _, event := range events {
		for _, typ := range []string{TypeHello, TypeProbeGateway, TypePing, otherType} {
			counters[frameLabels{event, typ}] = vec.WithLabelValues(string(event), typ)
		}
	}
	return counters
}

// NewMetrics creates the collectors and registers them on reg (a dedicated registry, not the
// global one, so tests and embedders get a clean set).
func NewMetrics(reg *prometheus.Registry) *Metrics {
	m := &Metrics{
		registry: reg,
		framesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_frames_in_total", Help: "Frames received from computers, by event and type.",
		}, []string{"event", "type"}),
		framesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_frames_out_total", Help: "Frames queued to computers, by event and type.",
		}, []string{"event", "type"}),
		helloFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_hello_failures_total", Help: "Refused hellos, by error code.",
		}, []string{"code"}),
		requestLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "trapos_gateway_request_duration_seconds", Help: "Gateway-to-computer request latency, by outcome (ok, computer_error, or the gateway error code).",
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 8),
		}, []string{"outcome"}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_opencode_probes_total", Help: "probe_gateway results, by outcome (healthy, unhealthy).",
		}, []string{"outcome"}),
		closes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_closes_total", Help: "Closed sockets, by close code.",
		}, []string{"code"}),
		limits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_limited_total", Help: "Refusals by a limit: max_connections (HTTP 503), upgrade_rate (HTTP 429), requests_in_flight (internal error reply).",
		}, []string{"limit"}),
		livenessDrops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_liveness_drops_total", Help: "Sockets dropped as dead, by reason: pong_timeout (no frame or pong within the pong wait), unresponsive (no answer to an idle-probe ping, close 4010).",
		}, []string{"reason"}),
	}
	m.frameInCounters = frameCounters(m.framesIn, protocol.EventComputerRequest, protocol.EventComputerResponse)
	m.frameOutCounters = frameCounters(m.framesOut, protocol.EventGatewayRequest, protocol.EventGatewayResponse)
	reg.MustRegister(m.framesIn, m.framesOut, m.helloFailures, m.requestLatency, m.probes, m.closes, m.limits, m.livenessDrops)
	return m
}

// registerConnected adds the connected-computers gauge, read from the registry on scrape.
func (m *Metrics) registerConnected(r Registry) {
	if m == nil {
		return
	}
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "trapos_gateway_connected_computers", Help: "Computers with a hello-completed socket.",
	}, func() float64 { return float64(len(r.Sessions())) }))
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

func knownType(typ string) string {
	switch typ {
	case TypeHello, TypeProbeGateway, TypePing:
		return typ
	}
	return otherType
}

func (m *Metrics) frameIn(event protocol.Event, typ string) {
	if m != nil {
		countFrame(m.frameInCounters, m.framesIn, event, typ)
	}
}

func (m *Metrics) frameOut(event protocol.Event, typ string) {
	if m != nil {
		countFrame(m.frameOutCounters, m.framesOut, event, typ)
	}
}

func countFrame(counters map[frameLabels]prometheus.Counter, vec *prometheus.CounterVec, event protocol.Event, typ string) {
	typ = knownType(typ)
	if c, ok := counters[frameLabels{event, typ}]; ok {
		c.Inc()
		return
	}
	vec.WithLabelValues(string(event), typ).Inc() // an event in an unexpected direction
}

func (m *Metrics) helloFailed(code protocol.Code) {
	if m != nil {
		m.helloFailures.WithLabelValues(string(code)).Inc()
	}
}

func (m *Metrics) requestDone(outcome string, d time.Duration) {
	if m != nil {
		m.requestLatency.WithLabelValues(outcome).Observe(d.Seconds())
	}
}

func (m *Metrics) probed(healthy bool) {
	if m != nil {
		outcome := "unhealthy"
		if healthy {
			outcome = "healthy"
		}
		m.probes.WithLabelValues(outcome).Inc()
	}
}

func (m *Metrics) closed(code int) {
	if m != nil {
		m.closes.WithLabelValues(strconv.Itoa(code)).Inc()
	}
}

func (m *Metrics) limited(limit string) {
	if m != nil {
		m.limits.WithLabelValues(limit).Inc()
	}
}

func (m *Metrics) livenessDrop(reason string) {
	if m != nil {
		m.livenessDrops.WithLabelValues(reason).Inc()
	}
}
