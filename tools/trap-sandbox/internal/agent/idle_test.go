package agent

import (
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
	"trap-sandbox/testkit/opencodefake"
)

// idleModule is a module on f whose computers go idle after 10 minutes of fc's time.
// options change its Config further.
func (f *fakeAgent) idleModule(t *testing.T, fc *clock.Fake, maxComputers int, logs *testkit.SyncBuffer, options ...func(*Config)) (*Module, *account.Passes) {
	t.Helper()
	passes := account.NewPasses()
	cfg := Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL, Passes: passes,
		Clock: fc, IdleAfter: 10 * time.Minute, MaxComputers: maxComputers}
	for _, o := range options {
		o(&cfg)
	}
	m, err := New(cfg, slog.New(slog.NewTextHandler(logs, nil)), prometheus.NewRegistry())
	require.NoError(t, err)
	t.Cleanup(m.Close)
	return m, passes
}

// tick advances fc past the janitor's next round and waits until the round is over (the
// janitor arms its timer again after it).
func tick(t *testing.T, fc *clock.Fake, d time.Duration) {
	t.Helper()
	require.True(t, fc.WaitArmed(1, t.Context().Done()), "the janitor runs")
	fc.Advance(d)
	require.True(t, fc.WaitArmed(1, t.Context().Done()), "the janitor's round ended")
}

// held reports what the module keeps of computer k: a place, sessions, a rate limiter.
func held(m *Module, k callerKey) (place, sessions, limiter bool) {
	m.placeMu.Lock()
	place = m.places[k] != nil
	m.placeMu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	for key := range m.sessions {
		sessions = sessions || key.callerKey == k
	}
	return place, sessions, m.limiters[k] != nil
}

// TestAnIdleComputersStateGoesAndComesBack: with the shared password a player says hello
// under ever new traposIds, each asking once: every one left, until the gateway restarted, its
// place, pass, sessions and rate limiter in the gateway and an instance (with its MCP
// connection) in opencode. Now a computer idle for --ai-idle-after loses them (its instance
// disposed on opencode, its pass revoked), and when it asks again it gets them back and its
// conversation goes on.
func TestAnIdleComputersStateGoesAndComesBack(t *testing.T) {
	f := startFakeAgent(t)
	fc := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	var logs testkit.SyncBuffer
	m, passes := f.idleModule(t, fc, 0, &logs)
	kitchen := protocol.Requester{AccountID: "local", TraposID: "7:kitchen"}
	k := callerOf(kitchen)
	dir := ComputerDir(f.root, "local", "7:kitchen")

	require.Equal(t, ReasonStop, ask(t, m, kitchen, "first"))
	pass := readPass(dir)
	_, granted := passes.Caller(pass)
	require.True(t, granted)
	require.Equal(t, []string{dir}, f.agent.Instances())

	tick(t, fc, 9*time.Minute) // not idle long enough
	p, s, l := held(m, k)
	assert.True(t, p && s && l, "kept while not idle")
	assert.Equal(t, 0, f.agent.Disposes(dir))

	tick(t, fc, 2*time.Minute)
	p, s, l = held(m, k)
	assert.False(t, p || s || l, "an idle computer's place, sessions and limiter go")
	_, granted = passes.Caller(pass)
	assert.False(t, granted, "its pass opens nothing until it asks again")
	assert.Equal(t, 1, f.agent.Disposes(dir), "its opencode instance is disposed")
	assert.Empty(t, f.agent.Instances())
	assert.InDelta(t, 1, testutil.ToFloat64(m.metrics.released.WithLabelValues(whyIdle)), 0)
	assert.InDelta(t, 0, testutil.ToFloat64(m.metrics.held), 0)

	require.Equal(t, ReasonStop, ask(t, m, kitchen, "second"))
	assert.Equal(t, []string{"trap-sandbox 7:kitchen main: first, second"}, f.conversations(), "the conversation goes on")
	assert.Equal(t, pass, readPass(dir), "with the pass its directory holds")
	_, granted = passes.Caller(pass)
	assert.True(t, granted)
	assert.Equal(t, 2, f.agent.InstanceStarts(dir), "a new instance, connected again")
	assert.InDelta(t, 1, testutil.ToFloat64(m.metrics.held), 0)
	assert.NotContains(t, logs.String(), "level=WARN")
}

// TestAComputerThatMovedKeepsItsInstance: with replicas sharing the agent's directory, a
// computer idle here because it moved to another replica asks there in the same opencode
// instance: its state here goes, its instance stays (a dispose would abort the turn it runs
// there). Its instance went too.
func TestAComputerThatMovedKeepsItsInstance(t *testing.T) {
	f := startFakeAgent(t)
	fc := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	var logs testkit.SyncBuffer
	var asked []string
	m, passes := f.idleModule(t, fc, 0, &logs, func(cfg *Config) {
		cfg.HeldElsewhere = func(accountID, traposID string) bool {
			asked = append(asked, accountID+" "+traposID) // the janitor's goroutine alone
			return traposID == "7:kitchen"
		}
	})
	kitchen := protocol.Requester{AccountID: "local", TraposID: "7:kitchen"}
	door := protocol.Requester{AccountID: "local", TraposID: "8:door"}
	require.Equal(t, ReasonStop, ask(t, m, kitchen, "first"))
	require.Equal(t, ReasonStop, ask(t, m, door, "first"))
	pass := readPass(ComputerDir(f.root, "local", "7:kitchen"))

	tick(t, fc, 11*time.Minute)
	p, s, l := held(m, callerOf(kitchen))
	assert.False(t, p || s || l, "its state here goes")
	_, granted := passes.Caller(pass)
	assert.False(t, granted, "its pass here too: the replica that holds it grants its own")
	assert.Equal(t, 0, f.agent.Disposes(ComputerDir(f.root, "local", "7:kitchen")), "its instance stays")
	assert.Equal(t, 1, f.agent.Disposes(ComputerDir(f.root, "local", "8:door")), "a computer no other replica holds: disposed")
	assert.ElementsMatch(t, []string{"local 7:kitchen", "local 8:door"}, asked)
}

// TestAComputerWithATurnRunningIsNeverIdle: a turn longer than the idle period keeps its
// computer's state (and instance); the idle period counts from the turn's end.
func TestAComputerWithATurnRunningIsNeverIdle(t *testing.T) {
	f, release := startHeldAgent(t, func(string) bool { return true })
	fc := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	var logs testkit.SyncBuffer
	m, _ := f.idleModule(t, fc, 0, &logs)
	kitchen := protocol.Requester{AccountID: "local", TraposID: "7:kitchen"}
	dir := ComputerDir(f.root, "local", "7:kitchen")

	done := make(chan string, 1)
	go func() { done <- askQuietly(m, kitchen, "long") }()
	require.Eventually(t, func() bool { return len(m.Running()) == 1 }, 10*time.Second, time.Millisecond)
	tick(t, fc, 11*time.Minute)
	p, _, _ := held(m, callerOf(kitchen))
	assert.True(t, p, "a computer with a turn running is kept")
	assert.Equal(t, 0, f.agent.Disposes(dir))

	close(release)
	require.Equal(t, ReasonStop, <-done)
	tick(t, fc, 9*time.Minute)
	p, _, _ = held(m, callerOf(kitchen))
	assert.True(t, p, "idle since the turn's end, not since its question")
	tick(t, fc, 2*time.Minute)
	p, _, _ = held(m, callerOf(kitchen))
	assert.False(t, p)
	assert.Equal(t, 1, f.agent.Disposes(dir))
}

// askQuietly is ask for a goroutine of its own: it returns the reason, or the error's words.
func askQuietly(m *Module, from protocol.Requester, prompt string) string {
	raw, err := m.handleAsk(m.ctx, from, json.RawMessage(`{"prompt":`+strconv.Quote(prompt)+`}`))
	if err != nil {
		return err.Error()
	}
	var started struct {
		TurnID string `json:"turnId"`
	}
	_ = json.Unmarshal(raw, &started)
	after := 0
	for {
		raw, err := m.handlePoll(m.ctx, from, json.RawMessage(`{"turnId":`+strconv.Quote(started.TurnID)+`,"after":`+strconv.Itoa(after)+`}`))
		if err != nil {
			return err.Error()
		}
		var r pollReply
		_ = json.Unmarshal(raw, &r)
		for _, e := range r.Events {
			after = e.Seq
			if e.Kind == KindDone {
				return e.Reason
			}
		}
	}
}

// waitDisposed waits until the dispose of k's instance, if one runs, was answered.
func waitDisposed(m *Module, k callerKey) {
	m.placeMu.Lock()
	gone := m.releasing[k]
	m.placeMu.Unlock()
	if gone != nil {
		<-gone
	}
}

// TestTheComputersWithStateAreCapped: within one idle period a player could still make as
// many computers (and opencode instances) as traposIds. At --ai-max-computers the least
// recently used idle computer makes room (its instance disposed); when none is idle, a new
// computer's question is busy, and leaves nothing behind.
func TestTheComputersWithStateAreCapped(t *testing.T) {
	f, release := startHeldAgent(t, func(prompt string) bool { return strings.HasPrefix(prompt, "hold") })
	fc := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	var logs testkit.SyncBuffer
	m, _ := f.idleModule(t, fc, 2, &logs)
	computer := func(id string) protocol.Requester { return protocol.Requester{AccountID: "local", TraposID: id} }
	dir := func(id string) string { return ComputerDir(f.root, "local", id) }

	require.Equal(t, ReasonStop, ask(t, m, computer("1:a"), "one"))
	fc.Advance(time.Second)
	require.Equal(t, ReasonStop, ask(t, m, computer("2:b"), "two"))
	fc.Advance(time.Second)
	require.Equal(t, ReasonStop, ask(t, m, computer("3:c"), "three"))
	waitDisposed(m, callerOf(computer("1:a")))
	p, s, l := held(m, callerOf(computer("1:a")))
	assert.False(t, p || s || l, "the least recently used computer made room")
	assert.Equal(t, 1, f.agent.Disposes(dir("1:a")))
	assert.Equal(t, []string{dir("2:b"), dir("3:c")}, f.agent.Instances())
	assert.InDelta(t, 1, testutil.ToFloat64(m.metrics.released.WithLabelValues(whyCap)), 0)
	assert.InDelta(t, 2, testutil.ToFloat64(m.metrics.held), 0)

	// 1:a comes back (2:b makes room) and its conversation goes on.
	fc.Advance(time.Second)
	require.Equal(t, ReasonStop, ask(t, m, computer("1:a"), "one again"))
	waitDisposed(m, callerOf(computer("2:b")))
	assert.Equal(t, 1, f.agent.Disposes(dir("2:b")))
	assert.Contains(t, f.conversations(), "trap-sandbox 1:a main: one, one again")

	// Both computers with state have a turn running: a new one is refused.
	done := make(chan string, 2)
	go func() { done <- askQuietly(m, computer("1:a"), "hold 1") }()
	go func() { done <- askQuietly(m, computer("3:c"), "hold 3") }()
	require.Eventually(t, func() bool { return len(m.Running()) == 2 }, 10*time.Second, time.Millisecond)
	_, err := m.handleAsk(t.Context(), computer("4:d"), payload(t, map[string]any{"prompt": "q"}))
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, protocol.CodeBusy, pe.Code)
	assert.Equal(t, "the agent has too many computers: ask in a minute", pe.Message)
	fitsALine(t, pe.Message)
	assert.NoDirExists(t, dir("4:d"), "a refused computer leaves no directory")
	assert.InDelta(t, 1, testutil.ToFloat64(m.metrics.refusals.WithLabelValues(refusedComputers)), 0)
	assert.Contains(t, logs.String(), `level=WARN msg="agent: a question was refused: as many computers as --ai-max-computers use the agent, none idle" maxComputers=2 accountId=local traposId=4:d`)
	close(release)
	assert.Equal(t, ReasonStop, <-done)
	assert.Equal(t, ReasonStop, <-done)
	assert.Equal(t, ReasonStop, ask(t, m, computer("4:d"), "q"), "once one is idle, it makes room")
}

// TestAnOpencodeWithoutDisposeIsSaidOnce: an opencode older than POST /instance/dispose
// answers it as any unknown route, with its web UI (200, HTML): the gateway says so once,
// asks no more, and its computers' state still goes and comes back.
func TestAnOpencodeWithoutDisposeIsSaidOnce(t *testing.T) {
	f := startFakeAgent(t)
	f.agent.WithoutDispose()
	fc := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	var logs testkit.SyncBuffer
	m, _ := f.idleModule(t, fc, 0, &logs)
	a := protocol.Requester{AccountID: "local", TraposID: "1:a"}
	b := protocol.Requester{AccountID: "local", TraposID: "2:b"}

	require.Equal(t, ReasonStop, ask(t, m, a, "one"))
	tick(t, fc, 11*time.Minute)
	require.Equal(t, ReasonStop, ask(t, m, b, "two"))
	tick(t, fc, 11*time.Minute)
	p, _, _ := held(m, callerOf(b))
	assert.False(t, p)
	assert.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), logs.String())
	assert.Contains(t, logs.String(), `level=WARN msg="agent: opencode does not dispose instances (it is older than POST /instance/dispose): the instances of idle computers stay until opencode restarts; upgrade opencode"`)
	require.Equal(t, ReasonStop, ask(t, m, a, "one again"))
	assert.Contains(t, f.conversations(), "trap-sandbox 1:a main: one, one again")
}

// TestADisposeAbortsATurnRunningInItsDirectory: opencode 1.18.33 aborts a turn running in a
// directory whose instance is disposed (the player read "The turn was aborted."), which is
// why the gateway never releases a computer with a turn running; a replica that still holds a
// computer since moved to another one can (docs/ai.md, Known limitations). The conversation
// goes on after it.
func TestADisposeAbortsATurnRunningInItsDirectory(t *testing.T) {
	release := make(chan struct{})
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) {
		if tu.Prompt() == "hold" {
			select {
			case <-release:
			case <-tu.Done():
				return
			}
		}
		tu.Text("re: " + tu.Prompt())
	})
	defer close(release)
	m := f.module(t)
	kitchen := protocol.Requester{AccountID: "local", TraposID: "7:kitchen"}
	dir := ComputerDir(f.root, "local", "7:kitchen")

	done := make(chan string, 1)
	go func() { done <- askQuietly(m, kitchen, "hold") }()
	require.Eventually(t, func() bool { return f.agent.Running() == 1 }, 10*time.Second, time.Millisecond)
	other := m.oc.in(dir) // another replica's client of the same directory
	var ok bool
	require.NoError(t, other.call(t.Context(), "POST", DisposePath, nil, nil, &ok))
	assert.True(t, ok)
	assert.Equal(t, ReasonAborted, <-done)
	assert.Equal(t, ReasonStop, ask(t, m, kitchen, "again"))
	assert.Equal(t, []string{"trap-sandbox 7:kitchen main: hold, again"}, f.conversations())
}

// startHeldAgent is opencode's fake whose model answers "re: <prompt>", holding the turns of
// the prompts held picks until release is closed (or the turn is aborted).
func startHeldAgent(t *testing.T, held func(prompt string) bool) (*fakeAgent, chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) {
		if held(tu.Prompt()) {
			select {
			case <-release:
			case <-tu.Done():
			}
		}
		tu.Text("re: " + tu.Prompt())
	})
	return f, release
}

// TestADisposeWhileTheModelWaitsToRetryAbortsTheTurn: opencode 1.18.33 stopping a turn that
// waits to retry its provider (its instance disposed, or the turn aborted by another client)
// answers its message with neither an error nor a finish. The player reads that the turn was
// aborted, not an answer that ended without a word.
func TestADisposeWhileTheModelWaitsToRetryAbortsTheTurn(t *testing.T) {
	retrying := make(chan struct{})
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) {
		tu.Retry(1, "Cannot connect to API: Unable to connect. Is the computer able to access the url?")
		close(retrying)
		tu.Stall()
	})
	m := f.module(t)
	kitchen := protocol.Requester{AccountID: "local", TraposID: "7:kitchen"}
	done := make(chan string, 1)
	go func() { done <- askQuietly(m, kitchen, "hello") }()
	<-retrying
	other := m.oc.in(ComputerDir(f.root, "local", "7:kitchen")) // another replica's client
	require.NoError(t, other.call(t.Context(), "POST", DisposePath, nil, nil, nil))
	assert.Equal(t, ReasonAborted, <-done)
}
