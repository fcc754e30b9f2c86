package cluster

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the router's Prometheus collectors. A nil *metrics records nothing.
type metrics struct {
	routedLatency  *prometheus.HistogramVec
	relayedLatency *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer, r *Router) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		routedLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "trapos_gateway_routed_request_duration_seconds", Help: "Requests for computers held by another replica, sent over NATS, by outcome (ok, computer_error, or the gateway error code).",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 9),
		}, []string{"outcome"}),
		relayedLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "trapos_gateway_relayed_message_duration_seconds", Help: "Messages of a module sent to its counterpart on another replica over NATS and answered (module screen: a live screen's watch, unwatch and screen updates; input: an input typed on the replica holding the computer; link: a link code's socket asked for), by module and outcome (ok, or the error code).",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 9),
		}, []string{"module", "outcome"}),
	}
	reg.MustRegister(m.routedLatency, m.relayedLatency,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "trapos_gateway_nats_connected", Help: "1 while this replica's NATS connection is up, else 0.",
		}, func() float64 {
			if r.nc.IsConnected() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "trapos_gateway_replicas_alive", Help: "Replicas heard from within the replica TTL, this one included.",
		}, func() float64 { return float64(r.aliveReplicas()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "trapos_gateway_replica_name_twins_total", Help: "Replicas seen running under this replica's name, started after it or at the same instant, each of which stops for this one, the older (docs/scale-out.md).",
		}, func() float64 { return float64(r.twinsSeen.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "trapos_gateway_bus_answers_busy_total", Help: "Routed requests and relayed messages from NATS answered busy at once: this replica was answering as many as it answers at once (4096 by default; docs/scale-out.md).",
		}, func() float64 { return float64(r.busyAnswers.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "trapos_gateway_remote_computers", Help: "Computers held by the other live replicas.",
		}, func() float64 { return float64(len(r.Remote())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "trapos_gateway_claims_unannounced", Help: "Computers served here whose claim NATS, connected, did not take (or that could not be checked after a reconnection): the other replicas do not find them. Tried again at every heartbeat (docs/scale-out.md).",
		}, func() float64 { return float64(r.unannounced()) }),
	)
	// A gauge, not a counter of the differences seen: an alert on it fires while a replica
	// differs and clears once every replica agrees, whenever the difference began.
	for _, c := range settingChecks {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "trapos_gateway_replica_settings_differ", Help: "Live replicas whose heartbeat says another SANDBOX_PASSWORD (password), SANDBOX_API_TOKEN (api_token), trap-sandbox version (version) or SANDBOX_AI_MODEL (ai_model) than this replica's (docs/scale-out.md).",
			ConstLabels: prometheus.Labels{"setting": c.label},
		}, func() float64 { return float64(r.replicasDiffering(c)) }))
	}
	return m
}

func (m *metrics) routed(outcome string, d time.Duration) {
	if m != nil {
		m.routedLatency.WithLabelValues(outcome).Observe(d.Seconds())
	}
}

func (m *metrics) relayed(module, outcome string, d time.Duration) {
	if m != nil {
		m.relayedLatency.WithLabelValues(module, outcome).Observe(d.Seconds())
	}
}
