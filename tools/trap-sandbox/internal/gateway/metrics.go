package gateway

import (
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	hostcomputer "trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
)

// otherType stands for every request type the gateway does not know, so a computer cannot
// grow the label set without bound.
const otherType = "other"

// Metrics are the gateway's Prometheus collectors. A nil *Metrics records nothing.
type Metrics struct {
	registry *prometheus.Registry
	// registerer registers on registry, adding the replica label when there is one.
	registerer     prometheus.Registerer
	framesIn       *prometheus.CounterVec
	framesOut      *prometheus.CounterVec
	helloFailures  *prometheus.CounterVec
	requestLatency *prometheus.HistogramVec
	// okLatency is requestLatency's child for outcome "ok", resolved once: every request a
	// computer answers is observed without hashing its label.
	okLatency     prometheus.Observer
	closes        *prometheus.CounterVec
	limits        *prometheus.CounterVec
	evictions     *prometheus.CounterVec
	livenessDrops *prometheus.CounterVec
	proofs        *prometheus.CounterVec
	// proofsRefused counts the password's first-version proves refused under --password-proofs
	// v2: a computer refused so waits for a proof it never gets and says no hello, so no other
	// count or list of the gateway's shows it.
	proofsRefused prometheus.Counter
	// frameInCounters and frameOutCounters are framesIn's and framesOut's children for every
	// label pair that can occur, resolved once: a frame is counted with a map lookup instead
	// of hashing its labels. countType adds to them before the gateway serves; afterwards
	// they are only read.
	frameInCounters, frameOutCounters map[frameLabels]prometheus.Counter
	// types are the types with a label of their own; the same lifecycle as the counters.
	types map[string]bool
}

// frameLabels is the label pair of the frame counters.
type frameLabels struct {
	event protocol.Event
	typ   string
}

// countedTypes are the types with a label of their own from the start: hello, prove, bye, the computer's
// built-in types and "other". Types registered with Gateway.Handle are added by countType.
func countedTypes() []string {
	return append([]string{TypeHello, TypeProve, TypeBye, otherType}, protocol.ComputerTypes...)
}

var (
	inEvents  = []protocol.Event{protocol.EventComputerRequest, protocol.EventComputerResponse}
	outEvents = []protocol.Event{protocol.EventGatewayRequest, protocol.EventGatewayResponse}
)

// addCounters resolves vec's children for events × types into counters.
func addCounters(counters map[frameLabels]prometheus.Counter, vec *prometheus.CounterVec, events []protocol.Event, types ...string) {
	for _, event := range events {
		for _, typ := range types {
			counters[frameLabels{event, typ}] = vec.WithLabelValues(string(event), typ)
		}
	}
}

// NewMetrics creates the collectors and registers them on reg (a dedicated registry, not the
// global one, so tests and embedders get a clean set).
func NewMetrics(reg *prometheus.Registry) *Metrics {
	return metricsOn(reg, reg)
}

// NewReplicaMetrics is NewMetrics for one of several replicas: every series carries the label
// replica="<name>", so that one dashboard over all replicas tells them apart.
func NewReplicaMetrics(reg *prometheus.Registry, replica string) *Metrics {
	return metricsOn(reg, ReplicaRegisterer(reg, replica))
}

// ReplicaRegisterer registers collectors on reg with the label replica="<name>" (for the
// metrics of other parts of a replica, such as the NATS router).
func ReplicaRegisterer(reg prometheus.Registerer, replica string) prometheus.Registerer {
	return prometheus.WrapRegistererWith(prometheus.Labels{"replica": replica}, reg)
}

func metricsOn(reg *prometheus.Registry, registerer prometheus.Registerer) *Metrics {
	m := &Metrics{
		registry:   reg,
		registerer: registerer,
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
			Name: "trapos_gateway_request_duration_seconds", Help: "Gateway-to-computer request latency, by outcome (ok, computer_error, or the gateway error code). A request for a computer that is not connected is not counted: it fails before reaching one (not_connected counts a socket that closed while its request waited).",
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 8),
		}, []string{"outcome"}),
		closes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_closes_total", Help: "Closed sockets, by close code.",
		}, []string{"code"}),
		limits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_limited_total", Help: "Limits applied, by limit: max_connections (HTTP 503), upgrade_rate (admitted with the short hello deadline), failed_hellos and failed_hellos_global (a wrong-secret answer held back by the address's or the gateway-wide budget), requests_in_flight (internal error reply), gateway_requests_in_flight and send_queue_bytes (busy to the host), log_lines (a computer's connect or disconnect line left out of the log, past its address's budget), account_connections (a hello refused busy: its account holds half the connection cap), screen_viewers (a screen stream or wait_for_screen refused busy: its account holds --max-screen-viewers).",
		}, []string{"limit"}),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_evicted_before_hello_total", Help: "Sockets without a good hello closed (4008) to make room for a new socket, by the cap that was full: address (sockets before hello per address), gateway (sockets before hello), connections (open sockets).",
		}, []string{"cap"}),
		livenessDrops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_liveness_drops_total", Help: "Sockets dropped as dead, by reason: pong_timeout (no frame or pong within the pong wait), unresponsive (no answer to an idle-probe ping, close 4010).",
		}, []string{"reason"}),
		proofs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_proofs_total", Help: "Proofs of itself the gateway gave (prove), by kind: password_v1 (the password's fast proof, which lets whoever asked test password guesses offline at SHA-256's speed: while it grows, computers older than 0.5.34 or not yet upgraded still ask for it, and --password-proofs v2 would refuse them), password_v2 (under the password's slow key), credential (a computer's own credential).",
		}, []string{"kind"}),
		proofsRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trapos_gateway_password_v1_proofs_refused_total", Help: "Proves of the password's fast first-version proof refused (--password-proofs v2): each a computer older than client 0.5.34, or one that has not learnt the gateway's proof key, which says no hello (so it is in no list) and is refused at each retry of its daemon until its player runs the install line and sandbox setup.",
		}),
	}
	// Every series whose label values are known is exported from the start, at 0: a rate() or
	// an increase() then sees the first event, and an alert on it has a series to watch.
	for _, code := range []protocol.Code{protocol.CodeUnauthorized, protocol.CodeNotAuthenticated} {
		m.helloFailures.WithLabelValues(string(code))
	}
	for _, code := range countedCloseCodes {
		m.closes.WithLabelValues(strconv.Itoa(code))
	}
	m.closes.WithLabelValues(otherCloseCode)
	for _, limit := range []string{limitMaxConnections, limitUpgradeRate, limitFailedHellos, limitFailedHellosGlobal,
		limitRequestsInFlight, limitGatewayRequestsInFlight, limitSendQueueBytes, limitLogLines, limitAccountConnections, limitScreenViewers} {
		m.limits.WithLabelValues(limit)
	}
	for _, full := range []string{evictedForAddress, evictedForGateway, evictedForConnections} {
		m.evictions.WithLabelValues(full)
	}
	for _, reason := range []string{dropPongTimeout, dropUnresponsive} {
		m.livenessDrops.WithLabelValues(reason)
	}
	for _, kind := range []string{proofPasswordV1, proofPasswordV2, proofCredential} {
		m.proofs.WithLabelValues(kind)
	}
	m.okLatency = m.requestLatency.WithLabelValues(outcomeOK)
	m.types = make(map[string]bool)
	for _, typ := range countedTypes() {
		m.types[typ] = true
	}
	m.frameInCounters = make(map[frameLabels]prometheus.Counter)
	m.frameOutCounters = make(map[frameLabels]prometheus.Counter)
	addCounters(m.frameInCounters, m.framesIn, inEvents, countedTypes()...)
	addCounters(m.frameOutCounters, m.framesOut, outEvents, countedTypes()...)
	registerer.MustRegister(m.framesIn, m.framesOut, m.helloFailures, m.requestLatency, m.closes, m.limits, m.evictions, m.livenessDrops, m.proofs, m.proofsRefused)
	return m
}

// countType gives a type registered with Gateway.Handle a label of its own.
func (m *Metrics) countType(typ string) {
	if m != nil {
		m.types[typ] = true
		addCounters(m.frameInCounters, m.framesIn, inEvents, typ)
		addCounters(m.frameOutCounters, m.framesOut, outEvents, typ)
	}
}

// registerConnected adds the connected-computers gauges, read from the registry on scrape:
// all of them, and those whose client is older than served (the gateway's
// Config.ClientVersion; none when it serves no client), the ones still to run the install
// line after an upgrade.
func (m *Metrics) registerConnected(r *registry, served string) {
	if m == nil {
		return
	}
	m.registerer.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "trapos_gateway_connected_computers", Help: "Computers with a hello-completed socket on this replica.",
	}, func() float64 { return float64(len(r.Sessions())) }))
	m.registerer.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "trapos_gateway_older_client_computers",
		Help: "Connected computers (of trapos_gateway_connected_computers) whose client is older than the one this gateway serves, or names no version: running the install line again upgrades them.",
	}, func() float64 {
		if served == "" {
			return 0
		}
		n := 0
		for _, s := range r.Sessions() {
			if hostcomputer.OlderVersion(s.Computer().ClientVersion, served) {
				n++
			}
		}
		return float64(n)
	}))
}

func (m *Metrics) frameIn(event protocol.Event, typ string) {
	if m != nil {
		m.countFrame(m.frameInCounters, m.framesIn, event, typ)
	}
}

func (m *Metrics) frameOut(event protocol.Event, typ string) {
	if m != nil {
		m.countFrame(m.frameOutCounters, m.framesOut, event, typ)
	}
}

// countFrame counts a frame under its type's label, or under "other" for a type without one
// (so a computer cannot grow the label set).
func (m *Metrics) countFrame(counters map[frameLabels]prometheus.Counter, vec *prometheus.CounterVec, event protocol.Event, typ string) {
	if c, ok := counters[frameLabels{event, typ}]; ok {
		c.Inc() // a type with a label of its own: one lookup
		return
	}
	if !m.types[typ] {
		typ = otherType
		if c, ok := counters[frameLabels{event, typ}]; ok {
			c.Inc()
			return
		}
	}
	vec.WithLabelValues(string(event), typ).Inc() // an event in an unexpected direction
}

func (m *Metrics) helloFailed(code protocol.Code) {
	if m != nil {
		m.helloFailures.WithLabelValues(string(code)).Inc()
	}
}

func (m *Metrics) requestDone(outcome string, d time.Duration) {
	switch {
	case m == nil:
	case outcome == outcomeOK:
		m.okLatency.Observe(d.Seconds())
	default:
		m.requestLatency.WithLabelValues(outcome).Observe(d.Seconds())
	}
}

func (m *Metrics) closed(code int) {
	if m != nil {
		m.closes.WithLabelValues(closeCodeLabel(code)).Inc()
	}
}

// countedCloseCodes are the close codes with a label of their own: docs/protocol.md's table,
// 1005 (a close frame without a code) and 1006 (no close frame).
var countedCloseCodes = []int{
	websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived,
	websocket.CloseAbnormalClosure, websocket.CloseProtocolError, websocket.ClosePolicyViolation, websocket.CloseMessageTooBig,
	websocket.CloseInternalServerErr, websocket.CloseTryAgainLater,
	CloseUnauthorized, CloseNoHello, CloseReplaced, CloseUnresponsive, CloseRevoked, CloseTooManyRequests,
}

// otherCloseCode labels every other close code.
const otherCloseCode = "other"

// closeCodeLabel is code as a metric label when the gateway knows it, else "other": a peer
// chooses its close code, and one series per code it makes up would let it grow the metrics
// without bound.
func closeCodeLabel(code int) string {
	if slices.Contains(countedCloseCodes, code) {
		return strconv.Itoa(code)
	}
	return otherCloseCode
}

func (m *Metrics) limited(limit string) {
	if m != nil {
		m.limits.WithLabelValues(limit).Inc()
	}
}

// ScreenViewerRefused counts a screen stream or wait refused busy because its account holds its
// most viewers of screens (the screen module's LimitViewers, which lives outside the gateway).
func (m *Metrics) ScreenViewerRefused() { m.limited(limitScreenViewers) }

func (m *Metrics) evicted(full string) {
	if m != nil {
		m.evictions.WithLabelValues(full).Inc()
	}
}

// registerAdmission adds the gauge of sockets before hello, read from the limiter on scrape.
func (m *Metrics) registerAdmission(l *limiter) {
	if m == nil {
		return
	}
	m.registerer.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "trapos_gateway_unauthenticated_sockets", Help: "Open sockets that have not said a good hello yet.",
	}, func() float64 {
		_, preHello := l.counts()
		return float64(preHello)
	}))
}

// Reasons of trapos_gateway_liveness_drops_total.
const (
	dropPongTimeout  = "pong_timeout" // no frame or pong within the pong wait (1006)
	dropUnresponsive = "unresponsive" // no answer to the idle-probe ping (4010)
)

// The kinds of trapos_gateway_proofs_total.
const (
	proofPasswordV1 = "password_v1"
	proofPasswordV2 = "password_v2"
	proofCredential = "credential"
)

// proofGiven counts a proof the gateway gave, of kind.
func (m *Metrics) proofGiven(kind string) {
	if m != nil {
		m.proofs.WithLabelValues(kind).Inc()
	}
}

// proofRefusedV1Off counts a password's first-version prove refused by --password-proofs v2.
func (m *Metrics) proofRefusedV1Off() {
	if m != nil {
		m.proofsRefused.Inc()
	}
}

func (m *Metrics) livenessDrop(reason string) {
	if m != nil {
		m.livenessDrops.WithLabelValues(reason).Inc()
	}
}
