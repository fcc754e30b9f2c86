package agent

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
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

// TestAResetOfAComputerWithoutADirectoryAsksNothing: a reset asked opencode for the
// conversation, made the computer's place (a directory, a pass, an instance in opencode,
// maybe another computer's pushed out) and kept a rate record, for each new traposId: a
// player with the shared password resetting under ever new ones made as many. A computer
// with no directory under --ai-dir has no conversation to forget: its reset answers at once,
// touching neither opencode nor the disk, and keeps nothing.
func TestAResetOfAComputerWithoutADirectoryAsksNothing(t *testing.T) {
	f := startFakeAgent(t)
	m := f.module(t)
	before := f.oc.Requests()
	for i := range 100 {
		from := protocol.Requester{AccountID: "local", TraposID: strconv.Itoa(i) + ":a"}
		_, err := m.handleReset(t.Context(), from, payload(t, map[string]any{}))
		require.NoError(t, err)
		require.NoDirExists(t, ComputerDir(f.root, "local", from.TraposID))
	}
	assert.Equal(t, before, f.oc.Requests(), "no request reached opencode")
	m.placeMu.Lock()
	assert.Empty(t, m.places)
	m.placeMu.Unlock()
	m.mu.Lock()
	assert.Empty(t, m.limiters)
	assert.Empty(t, m.sessions)
	m.mu.Unlock()

	// A computer that asked has a conversation, which its reset forgets, at once.
	desk := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	require.Equal(t, ReasonStop, ask(t, m, desk, "remember 42"))
	_, err := m.handleReset(t.Context(), desk, payload(t, map[string]any{}))
	require.NoError(t, err)
	require.Equal(t, ReasonStop, ask(t, m, desk, "what was it?"))
	assert.Equal(t, []string{"trap-sandbox 5:desk main: what was it?"}, f.conversations())
}

// TestResetsCountAgainstTheTurnsBound: a reset of a computer with a conversation talks to
// opencode, and was bounded only by its computer's rate, which ever new traposIds each have
// afresh. It now counts as a turn against --ai-max-turns and its account's half of it: past
// either it is busy in the questions' words, spends nothing of its computer's rate, and
// the operator reads the WARN line; once the turns ended it is taken.
func TestResetsCountAgainstTheTurnsBound(t *testing.T) {
	f, release := startHeldAgent(t, func(prompt string) bool { return prompt == "hold" })
	var logs testkit.SyncBuffer
	m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL,
		MaxTurns: 4, RateBurst: 2}, slog.New(slog.NewTextHandler(&logs, nil)), prometheus.NewRegistry())
	require.NoError(t, err)
	t.Cleanup(m.Close)

	// Each has a conversation (and one question of its burst left).
	third := protocol.Requester{AccountID: "alice", TraposID: "3:"}
	shared := protocol.Requester{AccountID: "local", TraposID: "9:"}
	require.Equal(t, ReasonStop, ask(t, m, third, "free"))
	require.Equal(t, ReasonStop, ask(t, m, shared, "free"))
	reset := func(from protocol.Requester) error {
		_, err := m.handleReset(t.Context(), from, payload(t, map[string]any{}))
		return err
	}

	started := map[protocol.Requester]string{}
	hold := func(from protocol.Requester) {
		t.Helper()
		raw, err := m.handleAsk(t.Context(), from, payload(t, map[string]any{"prompt": "hold"}))
		require.NoError(t, err, "%+v", from)
		var r struct {
			TurnID string `json:"turnId"`
		}
		require.NoError(t, json.Unmarshal(raw, &r))
		started[from] = r.TurnID
	}
	hold(protocol.Requester{AccountID: "alice", TraposID: "1:"})
	hold(protocol.Requester{AccountID: "alice", TraposID: "2:"})
	var pe *protocol.Error
	require.ErrorAs(t, reset(third), &pe)
	assert.Equal(t, protocol.CodeBusy, pe.Code)
	assert.Equal(t, "your account has its share of the agent: reset soon", pe.Message)
	fitsALine(t, pe.Message)
	assert.Contains(t, logs.String(), `agent: a reset was refused: its account runs half the gateway's most turns at once (--ai-max-turns)" running=2 maxTurns=4 accountId=alice traposId=3:`)

	hold(protocol.Requester{AccountID: "bob", TraposID: "4:"})
	hold(protocol.Requester{AccountID: "local", TraposID: "5:"})
	require.ErrorAs(t, reset(shared), &pe)
	assert.Equal(t, protocol.CodeBusy, pe.Code)
	assert.Equal(t, "the agent is busy with others: reset in a minute", pe.Message)
	fitsALine(t, pe.Message)
	assert.Contains(t, logs.String(), `agent: a reset was refused: the gateway runs its most turns at once (--ai-max-turns)" running=4 maxTurns=4 accountId=local traposId=9:`)
	assert.InDelta(t, 1, testutil.ToFloat64(m.metrics.refusals.WithLabelValues(refusedGateway)), 0)
	assert.InDelta(t, 1, testutil.ToFloat64(m.metrics.refusals.WithLabelValues(refusedAccount)), 0)

	close(release)
	for from, id := range started {
		require.Equal(t, ReasonStop, turnEnd(t, m, from, id))
	}
	// The refusals spent nothing of their computers' rate: the one left takes the reset.
	require.NoError(t, reset(third))
	require.NoError(t, reset(shared))
	m.mu.Lock()
	assert.Zero(t, m.running, "a reset gives its place back")
	assert.Empty(t, m.accountRunning)
	m.mu.Unlock()
}

// TestAResetTalkingToOpencodeHoldsATurnsPlace: while a reset waits on opencode (up to 10 s
// of a slow one) it holds one of the gateway's turns, so resets in flight are bounded as
// turns are: a question then is busy, and taken once the reset is answered.
func TestAResetTalkingToOpencodeHoldsATurnsPlace(t *testing.T) {
	f := startFakeAgent(t)
	searching, answer := make(chan struct{}), make(chan struct{})
	var once sync.Once
	transport := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodGet && r.URL.Path == "/session" && r.URL.Query().Has("search") {
			once.Do(func() { close(searching) })
			select {
			case <-answer:
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL,
		MaxTurns: 1, Transport: transport}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	require.NoError(t, err)
	t.Cleanup(m.Close)
	desk := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	require.NoError(t, os.MkdirAll(ComputerDir(f.root, "local", desk.TraposID), 0o700)) // it asked before

	done := make(chan error, 1)
	go func() {
		_, err := m.handleReset(t.Context(), desk, payload(t, map[string]any{}))
		done <- err
	}()
	select {
	case <-searching:
	case err := <-done:
		t.Fatalf("the reset ended without asking opencode: %v", err)
	}
	door := protocol.Requester{AccountID: "local", TraposID: "6:door"}
	_, err = m.handleAsk(t.Context(), door, payload(t, map[string]any{"prompt": "q"}))
	assert.EqualError(t, err, "busy: the agent is busy with others: ask in a minute")
	close(answer)
	require.NoError(t, <-done)
	assert.Equal(t, ReasonStop, ask(t, m, door, "q"))
}
