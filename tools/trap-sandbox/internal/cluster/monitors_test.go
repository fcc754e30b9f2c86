package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestARelayedScreenReadsMonitorsAreBounded: a computer held by replica a answers screen.read,
// asked through replica b, with 5000 monitors' names and a count of -7 (an older client's list,
// or a hostile one's); b's answer names 64 and counts the rest, as a's own would: the bound is
// the asking replica's, whatever carried the answer to it.
func TestARelayedScreenReadsMonitorsAreBounded(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	c := a.connect(t, "7:kitchen")
	b.waitComputers(t, "7:kitchen@a")
	names := make([]string, 5000)
	for i := range names {
		names[i] = fmt.Sprintf("monitor_%d", i)
	}
	pending := b.request("7:kitchen", "screen.read", map[string]any{}, waitLimit)
	c.answerRequest(pending, "screen.read", map[string]any{"width": 1, "height": 1, "rows": []any{}, "monitors": names, "monitorsLeftOut": -7})
	res := await(t, pending)
	require.Equal(t, http.StatusOK, res.status, "%+v", res.body.Error)
	var payload struct {
		Monitors        []string `json:"monitors"`
		MonitorsLeftOut int      `json:"monitorsLeftOut"`
	}
	require.NoError(t, json.Unmarshal(res.body.Payload, &payload))
	assert.Equal(t, names[:64], payload.Monitors)
	assert.Equal(t, 4936, payload.MonitorsLeftOut)
}
