package agent

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"trap-sandbox/internal/protocol"
)

// metrics are the module's collectors; a nil *metrics records nothing.
type metrics struct {
	turns     *prometheus.CounterVec
	errors    *prometheus.CounterVec
	refusals  *prometheus.CounterVec
	asks      *prometheus.CounterVec
	running   prometheus.Gauge
	held      prometheus.Gauge
	released  *prometheus.CounterVec
	firstText prometheus.Histogram
	duration  prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	buckets := []float64{0.5, 1, 2, 5, 10, 20, 40, 70, 120, 180, 300}
	m := &metrics{
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trapos_gateway_ai_turns_total",
			Help: "Agent turns by how they ended (stop, aborted, error, deadline, disconnected)."}, []string{"reason"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trapos_gateway_ai_errors_total",
			Help: "Agent turns that failed, by the error event's code (ai_unavailable, timeout)."}, []string{"code"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trapos_gateway_ai_asks_refused_total",
			Help: "ai.ask (and ai.reset) refused with busy: a turn running on the session (busy), the per-computer rate limit (rate) or the most turns the gateway runs at once, --ai-max-turns (gateway), or --ai-max-computers computers none of them idle (computers), or a new computer's account at --ai-max-dirs directories, each used recently (dirs)."}, []string{"why"}),
		asks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trapos_gateway_ai_tool_permissions_total",
			Help: "The agent's tool calls the gateway answered, by answer (once, reject)."}, []string{"reply"}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "trapos_gateway_ai_turns_running",
			Help: "Agent turns running now."}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{Name: "trapos_gateway_ai_computers",
			Help: "Computers with agent state now (the gateway's, and an opencode instance each); at most --ai-max-computers."}),
		released: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trapos_gateway_ai_computers_released_total",
			Help: "Computers whose agent state was released and opencode instance disposed: idle for --ai-idle-after (idle), or to make room under --ai-max-computers (room)."}, []string{"why"}),
		firstText: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "trapos_gateway_ai_first_text_seconds",
			Help: "Time from a question to the first text of its answer.", Buckets: buckets}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "trapos_gateway_ai_turn_seconds",
			Help: "Time from a question to its turn's end.", Buckets: buckets}),
	}
	// Every label value is exported from the start, at 0, so that a rate() or an increase()
	// sees the first turn of each kind.
	for _, reason := range []string{ReasonStop, ReasonAborted, ReasonError, ReasonDeadline, ReasonDisconnected} {
		m.turns.WithLabelValues(reason)
	}
	for _, code := range []protocol.Code{CodeAIUnavailable, protocol.CodeTimeout} {
		m.errors.WithLabelValues(string(code))
	}
	for _, why := range []string{refusedBusy, refusedRate, refusedGateway, refusedAccount, refusedComputers, refusedDirs} {
		m.refusals.WithLabelValues(why)
	}
	for _, why := range []string{whyIdle, whyCap} {
		m.released.WithLabelValues(why)
	}
	for _, reply := range []string{replyOnce, replyReject} {
		m.asks.WithLabelValues(reply)
	}
	reg.MustRegister(m.turns, m.errors, m.refusals, m.asks, m.running, m.held, m.released, m.firstText, m.duration)
	return m
}

// Labels of trapos_gateway_ai_asks_refused_total (why) and of
// trapos_gateway_ai_tool_permissions_total (reply, opencode's answer words).
const (
	refusedBusy = "busy" // a turn runs on the session
	refusedRate = "rate" // the computer's rate limit
	// refusedGateway: the most turns the gateway runs at once (--ai-max-turns).
	refusedGateway = "gateway"
	// refusedAccount: the question's account runs its share of the gateway's turns
	// (maxAccountTurns).
	refusedAccount = "account"
	// refusedComputers: --ai-max-computers computers have state, none of them idle.
	refusedComputers = "computers"
	// refusedDirs: a new computer's account has --ai-max-dirs directories, each used recently.
	refusedDirs = "dirs"
	// Labels of trapos_gateway_ai_computers_released_total: idle, or made room for another.
	whyIdle     = "idle"
	whyCap      = "room"
	replyOnce   = "once"
	replyReject = "reject"
)

func (m *metrics) started() {
	if m != nil {
		m.running.Inc()
	}
}

func (m *metrics) ended(t *turn, reason string) {
	if m == nil {
		return
	}
	m.running.Dec()
	m.turns.WithLabelValues(reason).Inc()
	m.duration.Observe(time.Since(t.started).Seconds())
}

func (m *metrics) failed(code string) {
	if m != nil {
		m.errors.WithLabelValues(code).Inc()
	}
}

func (m *metrics) refused(why string) {
	if m != nil {
		m.refusals.WithLabelValues(why).Inc()
	}
}

func (m *metrics) asked(reply string) {
	if m != nil {
		m.asks.WithLabelValues(reply).Inc()
	}
}

func (m *metrics) firstTextAfter(d time.Duration) {
	if m != nil {
		m.firstText.Observe(d.Seconds())
	}
}

// computers sets the computers with agent state to n.
func (m *metrics) computers(n int) {
	if m != nil {
		m.held.Set(float64(n))
	}
}

// releasedComputers counts n computers whose state went, for why.
func (m *metrics) releasedComputers(why string, n int) {
	if m != nil {
		m.released.WithLabelValues(why).Add(float64(n))
	}
}
