// Package opencodehealth is the opencode health module: it answers the computers'
// probe_gateway request with the gateway's health and opencode's, probing opencode through
// an opencode.Prober. It registers into the gateway's handler table (Register) and owns its
// metric; the gateway itself knows nothing of opencode.
package opencodehealth

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/protocol"
)

// Type is the request type this module answers.
const Type = protocol.TypeProbeGateway

// Prober answers whether opencode is healthy; *opencode.Prober implements it.
type Prober interface {
	Probe(ctx context.Context) opencode.Health
}

// RecentProber is a Prober that can also tell its last result without probing;
// *opencode.Prober implements it. With one, a probe_gateway is answered at once from a result
// at most Fresh old.
type RecentProber interface {
	Prober
	Recent(maxAge time.Duration) (opencode.Health, bool)
}

// Fresh is how old an upstream result may be and still answer a probe_gateway: within it,
// every probe is answered from the last result at once (on the socket's reader), instead of
// each asking opencode again. Short enough that no person could tell (docs/protocol.md).
const Fresh = time.Second

// Handlers is the table the module registers into; *gateway.Gateway implements it.
type Handlers interface {
	Handle(typ string, h protocol.RequestHandler)
	HandleQuick(typ string, quick protocol.QuickHandler, h protocol.RequestHandler)
}

// Payload is probe_gateway's answer.
type Payload struct {
	SandboxOK      bool   `json:"sandboxOk"`
	OpencodeOK     bool   `json:"opencodeOk"`
	OpencodeDetail string `json:"opencodeDetail,omitempty"`
	// AIDetail is what keeps the agent from working though opencode answers (its model
	// missing there): only with OpencodeOK, and only then (opencode.Health.AIDetail).
	AIDetail string `json:"aiDetail,omitempty"`
}

// healthyPayload is the common answer, encoded once.
var healthyPayload = json.RawMessage(`{"sandboxOk":true,"opencodeOk":true}`)

// Module answers probe_gateway.
type Module struct {
	prober Prober
	probes *prometheus.CounterVec // nil without a registry
	// healthy and unhealthy are probes' two counters, resolved once rather than per probe.
	healthy, unhealthy prometheus.Counter
	// agentFault is the answer for the last healthy result with an AIDetail, encoded once
	// for as long as that detail holds.
	agentFault atomic.Pointer[detailed]
}

// detailed is an answer encoded for the detail it was built for.
type detailed struct {
	detail  string
	payload json.RawMessage
}

// New returns the module probing with prober; its metric goes on reg (nil: none).
func New(prober Prober, reg prometheus.Registerer) *Module {
	m := &Module{prober: prober}
	if reg != nil {
		m.probes = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trapos_gateway_opencode_probes_total", Help: "probe_gateway results, by outcome (healthy, unhealthy).",
		}, []string{"outcome"})
		reg.MustRegister(m.probes)
		m.healthy, m.unhealthy = m.probes.WithLabelValues("healthy"), m.probes.WithLabelValues("unhealthy")
	}
	return m
}

// Register adds probe_gateway to the gateway's handler table: answered at once from a fresh
// result when the prober keeps one, else by probing.
func (m *Module) Register(h Handlers) {
	if _, ok := m.prober.(RecentProber); ok {
		h.HandleQuick(Type, m.Quick, m.Handle)
		return
	}
	h.Handle(Type, m.Handle)
}

// Quick answers a probe_gateway from the prober's last result when it is at most Fresh old,
// and returns protocol.ErrWouldBlock otherwise (Handle then probes).
func (m *Module) Quick(_ protocol.Requester, _ json.RawMessage) (json.RawMessage, error) {
	rp, ok := m.prober.(RecentProber)
	if !ok {
		return nil, protocol.ErrWouldBlock
	}
	h, ok := rp.Recent(Fresh)
	if !ok {
		return nil, protocol.ErrWouldBlock
	}
	return m.answer(h)
}

// Handle answers one probe_gateway: the sandbox is trivially ok (it answered), and opencode
// is probed (bounded by the prober's own timeout).
func (m *Module) Handle(ctx context.Context, _ protocol.Requester, _ json.RawMessage) (json.RawMessage, error) {
	return m.answer(m.prober.Probe(ctx))
}

// answer is probe_gateway's answer for health h, counted.
func (m *Module) answer(h opencode.Health) (json.RawMessage, error) {
	m.count(h.OK)
	switch {
	case h.OK && h.AIDetail == "":
		return healthyPayload, nil
	case h.OK:
		if last := m.agentFault.Load(); last != nil && last.detail == h.AIDetail {
			return last.payload, nil
		}
		b, err := json.Marshal(Payload{SandboxOK: true, OpencodeOK: true, AIDetail: h.AIDetail})
		if err != nil {
			return nil, fmt.Errorf("encode probe_gateway payload: %w", err)
		}
		m.agentFault.Store(&detailed{detail: h.AIDetail, payload: b})
		return b, nil
	}
	b, err := json.Marshal(Payload{SandboxOK: true, OpencodeDetail: h.Detail})
	if err != nil {
		return nil, fmt.Errorf("encode probe_gateway payload: %w", err)
	}
	return b, nil
}

func (m *Module) count(healthy bool) {
	switch {
	case m.healthy == nil:
	case healthy:
		m.healthy.Inc()
	default:
		m.unhealthy.Inc()
	}
}
