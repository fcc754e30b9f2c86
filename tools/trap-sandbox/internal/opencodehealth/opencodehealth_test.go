package opencodehealth

import (
	"context"
	"encoding/json"
	"testing"

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
