package opencodehealth

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/protocol"
)

type staticProber opencode.Health

func (p staticProber) Probe(context.Context) opencode.Health { return opencode.Health(p) }

// table records what the module registers, as the gateway's handler table would.
type table map[string]protocol.RequestHandler

func (t table) Handle(typ string, h protocol.RequestHandler) { t[typ] = h }

func (t table) HandleQuick(typ string, quick protocol.QuickHandler, h protocol.RequestHandler) {
	t[typ] = h
	t[typ+"/quick"] = func(_ context.Context, from protocol.Requester, payload json.RawMessage) (json.RawMessage, error) {
		return quick(from, payload)
	}
}

// recentProber keeps a last result as opencode.Prober does, and counts the probes asked of it.
type recentProber struct {
	last   opencode.Health
	fresh  bool // whether last is within the asked age
	maxAge time.Duration
	probes int
}

func (p *recentProber) Probe(context.Context) opencode.Health {
	p.probes++
	return opencode.Health{OK: true}
}

func (p *recentProber) Recent(maxAge time.Duration) (opencode.Health, bool) {
	p.maxAge = maxAge
	return p.last, p.fresh
}

func TestRegistersProbeGateway(t *testing.T) {
	handlers := table{}
	New(staticProber{OK: true}, nil).Register(handlers)
	require.Contains(t, handlers, "probe_gateway")
	payload, err := handlers["probe_gateway"](context.Background(), protocol.Requester{TraposID: "7:"}, json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"sandboxOk":true,"opencodeOk":true}`, string(payload))
}

func TestUnhealthyAnswerCarriesTheDetailAndIsCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(staticProber{Detail: "connection refused"}, reg)
	payload, err := m.Handle(context.Background(), protocol.Requester{}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"sandboxOk":true,"opencodeOk":false,"opencodeDetail":"connection refused"}`, string(payload))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.probes.WithLabelValues("unhealthy")))
	assert.Equal(t, 0.0, testutil.ToFloat64(m.probes.WithLabelValues("healthy")))
}

// An opencode that answers though the agent cannot work there is healthy as ever (opencodeOk
// is opencode's reachability) and says why in aiDetail, encoded once for as long as it holds.
func TestAnAgentFaultIsSaidBesideAHealthyOpencode(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(staticProber{OK: true, AIDetail: "opencode has no model p/x"}, reg)
	first, err := m.Handle(context.Background(), protocol.Requester{}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"sandboxOk":true,"opencodeOk":true,"aiDetail":"opencode has no model p/x"}`, string(first))
	again, err := m.Handle(context.Background(), protocol.Requester{}, nil)
	require.NoError(t, err)
	assert.Same(t, &first[0], &again[0], "built once")
	assert.Equal(t, 2.0, testutil.ToFloat64(m.probes.WithLabelValues("healthy")))
	m.prober = staticProber{OK: true, AIDetail: "opencode has no model p/y"}
	other, err := m.Handle(context.Background(), protocol.Requester{}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"sandboxOk":true,"opencodeOk":true,"aiDetail":"opencode has no model p/y"}`, string(other))
}

// A prober that keeps its last result lets probe_gateway be answered at once from a result
// at most Fresh old, without probing; an older one (or none) leaves it to Handle, which probes.
func TestAFreshResultAnswersProbeGatewayWithoutProbing(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := &recentProber{last: opencode.Health{Detail: "connection refused"}, fresh: true}
	handlers := table{}
	m := New(p, reg)
	m.Register(handlers)
	require.Contains(t, handlers, "probe_gateway/quick", "registered as answerable at once")

	payload, err := handlers["probe_gateway/quick"](context.Background(), protocol.Requester{TraposID: "7:"}, json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"sandboxOk":true,"opencodeOk":false,"opencodeDetail":"connection refused"}`, string(payload))
	assert.Equal(t, Fresh, p.maxAge)
	assert.Zero(t, p.probes, "a fresh result is not probed again")
	assert.Equal(t, 1.0, testutil.ToFloat64(m.probes.WithLabelValues("unhealthy")), "a quick answer is counted too")

	p.fresh = false
	_, err = handlers["probe_gateway/quick"](context.Background(), protocol.Requester{TraposID: "7:"}, json.RawMessage(`{}`))
	require.ErrorIs(t, err, protocol.ErrWouldBlock, "a stale result is not an answer")
	payload, err = handlers["probe_gateway"](context.Background(), protocol.Requester{TraposID: "7:"}, json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"sandboxOk":true,"opencodeOk":true}`, string(payload))
	assert.Equal(t, 1, p.probes)
}

// A prober without a last result is always asked: nothing is answered from nothing.
func TestAProberWithoutAResultIsAlwaysAsked(t *testing.T) {
	handlers := table{}
	New(staticProber{OK: true}, nil).Register(handlers)
	assert.NotContains(t, handlers, "probe_gateway/quick")
}
