package agent

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
)

// The agent's counters show every label value from the start, at 0 (docs/ai.md#metrics), so a
// rate() or an increase() sees the first turn of each kind.
func TestEveryCounterLabelIsExportedFromTheStart(t *testing.T) {
	m := newMetrics(prometheus.NewRegistry())
	for _, c := range []struct {
		vec    *prometheus.CounterVec
		labels []string
	}{
		{m.turns, []string{"stop", "aborted", "error", "deadline", "disconnected"}},
		{m.errors, []string{"ai_unavailable", "timeout"}},
		{m.refusals, []string{"busy", "rate", "gateway", "account", "computers", "dirs"}},
		{m.released, []string{"idle", "room"}},
		{m.asks, []string{"once", "reject"}},
	} {
		assert.Equal(t, len(c.labels), testutil.CollectAndCount(c.vec), "%v", c.labels)
		for _, l := range c.labels {
			assert.Zero(t, testutil.ToFloat64(c.vec.WithLabelValues(l)))
		}
		assert.Equal(t, len(c.labels), testutil.CollectAndCount(c.vec), "a label value that was not there: %v", c.labels)
	}
}
