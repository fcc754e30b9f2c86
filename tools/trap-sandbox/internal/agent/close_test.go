package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
	"trap-sandbox/testkit/opencodefake"
)

// stopLimit bounds the wait for a turn that must stop on opencode: it stops within
// milliseconds, so only a failure waits this long (generous for a loaded 2-core machine).
const stopLimit = 30 * time.Second

// TestClosingTheGatewayAbortsItsTurnsOnOpencode: a gateway stopped (restarted) while a turn
// ran sent its abort on a context the stop had cancelled, so the abort never left and the
// turn ran on in opencode (which does not stop a turn whose client went away): the player's
// next question after the restart waited behind it (a stalled model's, until its deadline)
// and a write it still asked for was put to the player under the new question. Close now
// aborts every running turn on opencode before it returns.
func TestClosingTheGatewayAbortsItsTurnsOnOpencode(t *testing.T) {
	f := closeDuringATurn(t)
	assert.Positive(t, f.agent.Aborts())
}

// closeDuringATurn closes a module while a turn thinks on opencode until it is stopped, and
// fails the test unless opencode stops that turn within stopLimit.
func closeDuringATurn(t *testing.T) *fakeAgent {
	t.Helper()
	started, ended := make(chan struct{}), make(chan struct{})
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) {
		close(started)
		<-tu.Done() // a model that thinks until it is stopped
		close(ended)
	})
	m := f.module(t)
	from := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	_, err := m.handleAsk(t.Context(), from, payload(t, map[string]any{"prompt": "think"}))
	require.NoError(t, err)
	<-started

	m.Close()
	select {
	case <-ended:
	case <-time.After(stopLimit):
		require.Fail(t, "the turn still runs on opencode after the gateway closed")
	}
	return f
}

// TestClosingTheGatewayAbortsATurnWhoseReplyCameFirst: Close cancels the turn and the
// prompt's call alike, and a turn that reached its wait only once both were done took the
// prompt's reply (the call's error) half the time, as a select does, and returned without an
// abort: the turn ran on in opencode (a flake of TestClosingTheGatewayAbortsItsTurnsOnOpencode
// on a loaded CI machine). The hook holds the turn until both are ready; each round is a coin
// toss without the fix. (The hook is the package's: no test here runs in parallel.)
func TestClosingTheGatewayAbortsATurnWhoseReplyCameFirst(t *testing.T) {
	testHookAwaitingReply = func(ctx context.Context, replies chan promptResult) {
		<-ctx.Done()
		replies <- <-replies // the call's error, as the transport saw the cancel; put back
	}
	t.Cleanup(func() { testHookAwaitingReply = nil })
	for range 8 {
		closeDuringATurn(t)
	}
}

// TestClosingTheGatewayWaitsForNoIdleFromTheStreamItStops: a turn's prompt that Close ended
// waited for its session.idle (at most idleWait, 2 s), which the event stream Close stops can
// no longer bring: Close took 2 s a running turn. Here the idle wait's clock never reaches
// idleWait, so Close returns only if it does not wait for it.
func TestClosingTheGatewayWaitsForNoIdleFromTheStreamItStops(t *testing.T) {
	started := make(chan struct{})
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) {
		close(started)
		<-tu.Done() // a model that thinks until it is stopped
	})
	m := f.module(t)
	idleClock := clock.NewFake(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
	m.idleClock = idleClock
	from := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	_, err := m.handleAsk(t.Context(), from, payload(t, map[string]any{"prompt": "think"}))
	require.NoError(t, err)
	<-started

	closed := make(chan struct{})
	go func() {
		defer close(closed)
		m.Close()
	}()
	select {
	case <-closed:
	case <-time.After(stopLimit):
		idleClock.Advance(idleWait) // so that Close returns and nothing outlives the test
		<-closed
		require.Fail(t, "Close waited for a session.idle the stream it stopped could not bring")
	}
}

// TestATurnLeftRunningOnOpencodeIsStoppedFirst: a gateway killed while a turn ran (kill -9,
// a crash: it cannot abort) left the turn running in opencode, which does not stop a turn
// whose client went away; the restarted gateway's next question on that conversation waited
// behind it, and behind a permission ask nobody would answer until the question's deadline
// (3 min), then showed the old turn's tool line. A gateway that finds a conversation with a
// turn running now aborts that turn first. (A second module on the same directory stands for
// the restarted gateway while the first, "killed", still holds its turn.)
func TestATurnLeftRunningOnOpencodeIsStoppedFirst(t *testing.T) {
	started := make(chan struct{})
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) {
		if tu.Prompt() == "think" {
			close(started)
			<-tu.Done() // until it is stopped
			return
		}
		tu.Text("re: " + tu.Prompt())
	})
	from := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	killed := f.module(t)
	_, err := killed.handleAsk(t.Context(), from, payload(t, map[string]any{"prompt": "think"}))
	require.NoError(t, err)
	<-started

	restarted := f.module(t)
	answered := make(chan string, 1)
	go func() { answered <- askQuietly(restarted, from, "hello") }()
	select {
	case reason := <-answered:
		assert.Equal(t, ReasonStop, reason)
	case <-time.After(stopLimit):
		require.Fail(t, "the question waits behind the turn the killed gateway left running")
	}
	assert.Positive(t, f.agent.Aborts())
	assert.Equal(t, []string{"trap-sandbox 5:desk main: think, hello"}, f.conversations())
}

// TestAnOpencodeThatCannotSayWhetherATurnRunsIsAskedAnyway: the check for a turn left running
// is the gateway's best effort: an opencode that does not answer GET /session/status (here one
// without the route, which answers with its web UI) gets the question all the same, and the
// operator's log says the check failed.
func TestAnOpencodeThatCannotSayWhetherATurnRunsIsAskedAnyway(t *testing.T) {
	var logs testkit.SyncBuffer
	m, err := New(Config{Model: "p/m", OpencodeURL: opencodefake.Start(t, opencodefake.Options{}).URL, Dir: t.TempDir(), MCPURL: "http://127.0.0.1:2/mcp"},
		slog.New(slog.NewTextHandler(&logs, nil)), nil)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	from := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	pl, err := m.placeOf(t.Context(), callerOf(from))
	require.NoError(t, err)
	m.mu.Lock()
	s := m.sessionLocked(sessionKey{callerOf(from), DefaultSession}, pl)
	m.mu.Unlock()
	m.stopOrphan(t.Context(), s, "ses_1")
	assert.Contains(t, logs.String(), `level=WARN msg="agent: could not learn whether a turn still runs on the conversation (if one does, the question waits for it)" accountId=local traposId=5:desk session=main err=`)
}

// TestAConversationGoneOnOpencodeIsOneLine: a conversation deleted on opencode behind the
// gateway's back (by hand, or opencode's storage lost) ends the next turn with one line of a
// computer naming the fix (it took 69 columns), and the question after it starts a new one.
func TestAConversationGoneOnOpencodeIsOneLine(t *testing.T) {
	f := startFakeAgent(t)
	m := f.module(t)
	passIdleWait := fakeIdleWait(t, m)
	from := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	require.Equal(t, ReasonStop, ask(t, m, from, "one"))
	sessions := f.agent.Sessions()
	require.Len(t, sessions, 1)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodDelete, f.oc.URL+"/session/"+sessions[0].ID, nil)
	require.NoError(t, err)
	req.SetBasicAuth(opencodefake.DefaultUsername, "oc-pw")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)

	passIdleWait() // a prompt to a session opencode no longer has brings no session.idle
	_, errs := askTurn(t, m, from, "two")
	assert.Equal(t, []string{"The conversation was lost: ask again for a new one"}, errs)
	fitsALine(t, errs[0])
	require.Equal(t, ReasonStop, ask(t, m, from, "three"))
	assert.Equal(t, []string{"trap-sandbox 5:desk main: three"}, f.conversations())
}

// fakeIdleWait puts m's wait for a turn's session.idle after its prompt's reply (idleWait) on
// a fake clock, and returns passIdleWait, which moves that clock past the wait of the next
// turn to begin it. A turn whose prompt failed gets no idle (opencode never ran the prompt, or
// is gone), and the test would wait idleWait out on the wall clock before the turn ended;
// other turns' idles come, and end their waits. Call it before m's first turn.
func fakeIdleWait(t *testing.T, m *Module) (passIdleWait func()) {
	fc := clock.NewFake(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
	m.idleClock = fc
	return func() {
		passed := make(chan struct{})
		go func() {
			defer close(passed)
			if fc.WaitArmed(1, t.Context().Done()) {
				fc.Advance(idleWait)
			}
		}()
		t.Cleanup(func() { <-passed })
	}
}

// TestAToolsLineComesBeforeItsQuestion: the input of a call the player is asked about arrives
// with the tool's running part; the ask waiting for it (answerAsk) was woken before the tool's
// line was added, so the question could come first and the line after it, then again with
// its failure (a QA tester's pocket computer showed The agent wants to write /d.lua... and
// only then * write_file /d.lua, twice). The line is now added before the ask is woken.
func TestAToolsLineComesBeforeItsQuestion(t *testing.T) {
	for i := range 1000 {
		tu := newTestTurn()
		tu.tr = newTracker()
		callID := fmt.Sprintf("call_%d", i)
		lineFirst := make(chan bool, 1)
		go func() {
			tu.tr.inputOf(callID, nil)
			events, _ := tu.poll(context.Background(), 0, 0)
			lineFirst <- len(events) == 1 && events[0].Kind == KindTool
		}()
		var p eventProps
		require.NoError(t, json.Unmarshal([]byte(`{"part":{"id":"prt_1","type":"tool","tool":"trap-sandbox_write_file","callID":"`+callID+
			`","state":{"status":"running","input":{"traposId":"5:desk","path":"/door.lua","content":"x"}}}}`), &p))
		tu.observePart(&p)
		require.True(t, <-lineFirst, "the tool's line is there when its ask gets the input (round %d)", i)
	}
}
