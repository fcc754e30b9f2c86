package agent

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// TestTheGatewayBoundsTheTurnsRunningAtOnce: the rate limit is a computer's, and a player
// with the shared password (every player reads it on any computer) says hello under ever
// new traposIds: each new computer started 20 turns at once on the operator's model, without
// end. Now the gateway runs at most --ai-max-turns turns at once, all computers together: the
// next question is busy, spends nothing of its computer's rate, and is asked again once a
// turn ended.
func TestTheGatewayBoundsTheTurnsRunningAtOnce(t *testing.T) {
	f, release := startHeldAgent(t, func(string) bool { return true })
	var logs testkit.SyncBuffer
	m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL,
		MaxTurns: 3, RateBurst: 1}, slog.New(slog.NewTextHandler(&logs, nil)), prometheus.NewRegistry())
	require.NoError(t, err)
	t.Cleanup(m.Close)

	started := map[protocol.Requester]string{}
	for i := range 3 {
		from := protocol.Requester{AccountID: "local", TraposID: strconv.Itoa(i) + ":"}
		started[from] = startTurn(t, m, from)
	}
	late := protocol.Requester{AccountID: "local", TraposID: "99:"}
	_, err = m.handleAsk(t.Context(), late, payload(t, map[string]any{"prompt": "q"}))
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, protocol.CodeBusy, pe.Code)
	assert.Equal(t, "the agent is busy with others: ask in a minute", pe.Message)
	fitsALine(t, pe.Message)
	assert.InDelta(t, 1, testutil.ToFloat64(m.metrics.refusals.WithLabelValues(refusedGateway)), 0)
	assert.Contains(t, logs.String(), `agent: a question was refused: the gateway runs its most turns at once (--ai-max-turns)" running=3 maxTurns=3 accountId=local traposId=99:`)
	assert.NoDirExists(t, ComputerDir(f.root, "local", "99:"), "a refused question leaves no directory for its computer")

	close(release)
	for from, id := range started {
		require.Equal(t, ReasonStop, turnEnd(t, m, from, id))
	}
	// Its one question of the burst was not spent on the refusal.
	assert.Equal(t, ReasonStop, ask(t, m, late, "q again"))
}

// TestAnAccountRunsHalfTheGatewaysTurnsAtMost: the gateway's cap is first come first served,
// and one computer starts 20 turns at once, one per session, then one more every 3 s while
// they run: one player's account held the cap, and every other player's question was busy.
// An account other than local now runs half of it at most: its next question is busy, saying
// so in one line, spends nothing of its computer's rate, and leaves no directory; other
// accounts and local are served, and once a turn of the account ends it asks again.
func TestAnAccountRunsHalfTheGatewaysTurnsAtMost(t *testing.T) {
	f, release := startHeldAgent(t, func(string) bool { return true })
	var logs testkit.SyncBuffer
	m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL,
		MaxTurns: 4, RateBurst: 1}, slog.New(slog.NewTextHandler(&logs, nil)), prometheus.NewRegistry())
	require.NoError(t, err)
	t.Cleanup(m.Close)

	started := map[protocol.Requester]string{}
	start := func(from protocol.Requester) {
		t.Helper()
		started[from] = startTurn(t, m, from)
	}
	start(protocol.Requester{AccountID: "alice", TraposID: "1:"})
	start(protocol.Requester{AccountID: "alice", TraposID: "2:"})
	third := protocol.Requester{AccountID: "alice", TraposID: "3:"}
	_, err = m.handleAsk(t.Context(), third, payload(t, map[string]any{"prompt": "q"}))
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, protocol.CodeBusy, pe.Code)
	assert.Equal(t, "your account has its share of the agent: ask later", pe.Message)
	fitsALine(t, pe.Message)
	assert.InDelta(t, 1, testutil.ToFloat64(m.metrics.refusals.WithLabelValues(refusedAccount)), 0)
	assert.Contains(t, logs.String(), `agent: a question was refused: its account runs half the gateway's most turns at once (--ai-max-turns)" running=2 maxTurns=4 accountId=alice traposId=3:`)
	assert.NoDirExists(t, ComputerDir(f.root, "alice", "3:"), "a refused question leaves no directory for its computer")
	start(protocol.Requester{AccountID: "bob", TraposID: "4:"})
	start(protocol.Requester{AccountID: "local", TraposID: "5:"})

	close(release)
	for from, id := range started {
		turnEnd(t, m, from, id)
	}
	// Its one question of the burst was not spent on the refusal.
	assert.Equal(t, ReasonStop, ask(t, m, third, "q again"))
}

// startTurn asks the question "q" from computer from and returns its turn's id.
func startTurn(t *testing.T, m *Module, from protocol.Requester) string {
	t.Helper()
	raw, err := m.handleAsk(t.Context(), from, payload(t, map[string]any{"prompt": "q"}))
	require.NoError(t, err, "%+v", from)
	var r struct {
		TurnID string `json:"turnId"`
	}
	require.NoError(t, json.Unmarshal(raw, &r))
	return r.TurnID
}

// turnEnd polls computer from's turn id until it is done and returns why it ended.
func turnEnd(t *testing.T, m *Module, from protocol.Requester, id string) string {
	t.Helper()
	after := 0
	for {
		raw, err := m.handlePoll(t.Context(), from, payload(t, map[string]any{"turnId": id, "after": after}))
		require.NoError(t, err)
		var r pollReply
		require.NoError(t, json.Unmarshal(raw, &r))
		for _, e := range r.Events {
			after = e.Seq
			if e.Kind == KindDone {
				return e.Reason
			}
		}
	}
}
