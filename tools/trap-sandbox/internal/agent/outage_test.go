package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/logthrottle"
	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/opencodehealth"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
	"trap-sandbox/testkit/opencodefake"
)

// logLines returns the log's lines that contain every one of parts.
func logLines(logs *testkit.SyncBuffer, parts ...string) []string {
	var out []string
	for _, line := range strings.Split(logs.String(), "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			out = append(out, line)
		}
	}
	return out
}

// askLogged runs one turn (ask) and waits for its last log line, which comes after the
// computer has its done event.
func askLogged(t *testing.T, m *Module, logs *testkit.SyncBuffer, from protocol.Requester, prompt string) string {
	t.Helper()
	before := len(logLines(logs, `msg="agent: turn ended"`))
	reason := ask(t, m, from, prompt)
	require.Eventually(t, func() bool { return len(logLines(logs, `msg="agent: turn ended"`)) > before }, 10*time.Second, testkit.Poll)
	return reason
}

// TestTurnsFailingForTheOperatorAreWarned: a QA tester's gateway whose model failed every
// turn logged each only at INFO ("agent: turn ended … reason=error"): an operator who
// watches WARN and ERROR never saw it. Now the first such turn is a WARN naming the cause and
// the fix, then one a minute while it lasts (counting the turns in between), and the first
// turn that works after it says so at INFO; each turn keeps its INFO line. The model's fix
// names its provider's reach too (opencode's Cannot connect to API was told to check the
// model's name, key and quota only).
func TestTurnsFailingForTheOperatorAreWarned(t *testing.T) {
	var failing atomic.Bool
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) {
		if failing.Load() {
			tu.FailProvider("Rate limit exceeded: quota used up", http.StatusTooManyRequests)
			return
		}
		tu.Text("re: " + tu.Prompt())
	})
	var logs testkit.SyncBuffer
	fc := clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL, Clock: fc},
		slog.New(slog.NewTextHandler(&logs, nil)), nil)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	desk := protocol.Requester{TraposID: "5:desk"}
	require.Equal(t, ReasonStop, askLogged(t, m, &logs, desk, "hello"))
	assert.Empty(t, logLines(&logs, "works again"), "nothing failed before")

	failing.Store(true)
	for range 5 {
		require.Equal(t, ReasonError, askLogged(t, m, &logs, desk, "hello"))
	}
	warns := logLines(&logs, "level=WARN")
	require.Len(t, warns, 1, "five failed turns, one WARN:\n%s", logs.String())
	assert.Contains(t, warns[0], `msg="agent: turns fail: the model failed (fix: check that --ai-model (SANDBOX_AI_MODEL) is a model opencode has (opencode models), that opencode's host reaches its provider, and the provider's key and quota)"`)
	assert.Contains(t, warns[0], `error="The agent's model failed (tell the gateway's operator): Rate limit exceeded: quota used up"`)
	assert.NotContains(t, warns[0], "suppressedSinceLast")
	assert.Len(t, logLines(&logs, "level=INFO", `msg="agent: turn ended"`, "reason=error", "code=ai_unavailable"), 5, "each turn keeps its INFO line")

	fc.Advance(logthrottle.Every - time.Second)
	require.Equal(t, ReasonError, askLogged(t, m, &logs, desk, "hello"))
	assert.Len(t, logLines(&logs, "level=WARN"), 1, "less than a minute after the WARN")
	fc.Advance(time.Second)
	require.Equal(t, ReasonError, askLogged(t, m, &logs, desk, "hello"))
	warns = logLines(&logs, "level=WARN")
	require.Len(t, warns, 2, "a minute after the first")
	assert.Contains(t, warns[1], "agent: turns fail: the model failed")
	assert.Contains(t, warns[1], "suppressedSinceLast=5", "the turns failed between the two WARN lines")

	failing.Store(false)
	require.Equal(t, ReasonStop, askLogged(t, m, &logs, desk, "hello"))
	require.Equal(t, ReasonStop, askLogged(t, m, &logs, desk, "hello"))
	again := logLines(&logs, "works again")
	require.Len(t, again, 1, "once, after the failures")
	assert.Contains(t, again[0], `level=INFO msg="agent: works again: a turn succeeded after turns failed" failedTurns=7`)
	assert.Len(t, logLines(&logs, "level=WARN"), 2)
}

// TestWhichFailuresAreTheOperators: the QA tester's three causes (opencode down, opencode's
// password not given to the gateway, a model opencode does not have) each WARN with their
// fix; a turn the player stops does not.
func TestWhichFailuresAreTheOperators(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for name, c := range map[string]struct {
		model, password string
		url             func(f *fakeAgent) string
		warn            string
		// player is the start of the error the player reads (the WARN's error=).
		player string
	}{
		"opencode down": {"p/m", "oc-pw", func(*fakeAgent) string { return closed.URL },
			`msg="agent: turns fail: opencode is unreachable (fix: start opencode serve, or point --opencode-url (OPENCODE_URL) at it)"`,
			`error="the agent is unavailable: opencode did not answer GET /global/event: dial tcp ` + strings.TrimPrefix(closed.URL, "http://")},
		// The player's line named OPENCODE_SERVER_PASSWORD as a thing to check, which a player
		// whose computer once held opencode's password (opencc.password) set there.
		"no password": {"p/m", "", func(f *fakeAgent) string { return f.oc.URL },
			`msg="agent: turns fail: opencode answered 401, wanting a password the gateway does not send (fix: give the gateway opencode's server password, --opencode-password (OPENCODE_SERVER_PASSWORD))"`,
			`error="the agent is unavailable: opencode answered 401, wanting a password the gateway does not send: its operator must give the gateway opencode's server password, --opencode-password (OPENCODE_SERVER_PASSWORD)"`},
		"unknown model": {"local/qwen2.5-coder", "oc-pw", func(f *fakeAgent) string { return f.oc.URL },
			`msg="agent: turns fail: the model failed (fix: check that --ai-model (SANDBOX_AI_MODEL) is a model opencode has (opencode models), that opencode's host reaches its provider, and the provider's key and quota)"`,
			`error="The agent's model failed (tell the gateway's operator): Model not found: local/qwen2.5-coder.`},
	} {
		t.Run(name, func(t *testing.T) {
			f := startFakeAgent(t)
			var logs testkit.SyncBuffer
			m, err := New(Config{Model: c.model, OpencodeURL: c.url(f), Password: c.password, Dir: f.root, MCPURL: f.mcpURL},
				slog.New(slog.NewTextHandler(&logs, nil)), nil)
			require.NoError(t, err)
			t.Cleanup(m.Close)
			require.Equal(t, ReasonError, askLogged(t, m, &logs, protocol.Requester{TraposID: "5:desk"}, "hello"))
			warns := logLines(&logs, "level=WARN")
			require.Len(t, warns, 1, logs.String())
			assert.Contains(t, warns[0], c.warn)
			assert.Contains(t, warns[0], c.player)
		})
	}
}

// TestATurnStoppedIsNotWarned: the player's own stop, and a turn past its deadline, are no
// failure of the operator's.
func TestATurnStoppedIsNotWarned(t *testing.T) {
	for name, stop := range map[string]error{"aborted": errAborted, "deadline": errDeadline, "disconnected": errDisconnected} {
		t.Run(name, func(t *testing.T) {
			f := startFakeAgentWith(t, func(tu *opencodefake.Turn) { tu.Stall() })
			_, logs, tu := runningTurn(t, f, func(*Module) {})
			tu.cancel(stop)
			require.Eventually(t, func() bool { return len(logLines(logs, `msg="agent: turn ended"`)) == 1 }, 10*time.Second, testkit.Poll)
			assert.Empty(t, logLines(logs, "level=WARN"), logs.String())
		})
	}
}

// TestATurnsLogLinesNameItsAccount: a turn's start and end lines (and a reset's) named the traposId alone,
// so alice's 7:desk and bob's 7:desk (each account's own computer, docs/accounts.md) asking at
// once read as one computer to the operator; they name the account too, as "computer
// connected" does.
func TestATurnsLogLinesNameItsAccount(t *testing.T) {
	f := startFakeAgent(t)
	var logs testkit.SyncBuffer
	m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL},
		slog.New(slog.NewTextHandler(&logs, nil)), nil)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	for _, from := range []protocol.Requester{
		{AccountID: "alice", TraposID: "7:desk", AccountCreated: aliceCreated},
		{AccountID: "bob", TraposID: "7:desk", AccountCreated: aliceCreated.Add(time.Hour)},
		{AccountID: "local", TraposID: "7:desk"},
	} {
		require.Equal(t, ReasonStop, askLogged(t, m, &logs, from, "hello"))
		_, err := m.handleReset(t.Context(), from, payload(t, map[string]any{}))
		require.NoError(t, err)
		for _, msg := range []string{`msg="agent: turn started"`, `msg="agent: turn ended"`, `msg="agent: conversation reset"`} {
			assert.Len(t, logLines(&logs, msg, "accountId="+from.AccountID+" traposId=7:desk "), 1, "%s of %s: %s", msg, from.AccountID, logs.String())
		}
	}
}

// TestAQuestionOpencodeNeverAnswersSaysHowLongEachWaited: with opencode stalled (it accepts
// connections and answers nothing) the player saw Thinking... for about 15 s, then "opencode
// at …: no answer within 5s", the health check's timeout, not their wait. The line says both:
// the question's call got no answer in the time it waited (the module's clock, advanced past
// the wait for the event stream), and the health check none in its timeout. The operator's
// WARNs, at start and for the turn, said "opencode is unreachable (fix: start opencode
// serve…)" of an opencode that ran (held by SIGSTOP): they say it takes connections and
// answers nothing, and to restart it.
func TestAQuestionOpencodeNeverAnswersSaysHowLongEachWaited(t *testing.T) {
	f := startFakeAgent(t)
	f.oc.Stall()
	// Each probe's timeout passes on a clock of its own once opencode has taken the probe's
	// connection: on the wall clock, 50 ms passed now and then on a loaded machine before the
	// connection was made, and the probe said opencode was unreachable.
	const probeTimeout = 50 * time.Millisecond
	probeClock := clock.NewFake(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
	connected := make(chan struct{}, 16)
	prober, err := opencode.NewProber(opencode.ProberConfig{URL: f.oc.URL, Password: "oc-pw", Timeout: probeTimeout, Clock: probeClock,
		Transport: connTelling{&http.Transport{}, connected}})
	require.NoError(t, err)
	t.Cleanup(prober.Close)
	stopPassing := make(chan struct{})
	passed := make(chan struct{})
	go func() {
		defer close(passed)
		for {
			select {
			case <-connected:
				probeClock.Advance(probeTimeout)
			case <-stopPassing:
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stopPassing)
		<-passed
	})
	fc := clock.NewFake(time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC))
	var logs testkit.SyncBuffer
	m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL, Clock: fc, Prober: prober},
		slog.New(slog.NewTextHandler(&logs, nil)), nil)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	m.stream.openGrace = time.Hour // the stream's attempt waits on: the question's wait ends by fc
	m.stream.clock = fc

	type result struct {
		reason string
		errs   []string
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() { done <- r }() // also when askTurn's require ends this goroutine
		r.reason, r.errs = askTurn(t, m, protocol.Requester{TraposID: "5:desk"}, "hello")
	}()
	// armed: the idle janitor's timer and the question's wait for the event stream
	require.True(t, fc.WaitArmed(2, t.Context().Done()))
	fc.Advance(readyWait)
	r := <-done
	assert.Equal(t, ReasonError, r.reason)
	assert.Equal(t, []string{"the agent is unavailable: opencode at " + f.oc.URL +
		": the question's call got no answer in 10s, and the health check none in 50ms"}, r.errs)

	hung := "opencode accepts connections but answers nothing (fix: if it started seconds ago, nothing to do; else it is hung: restart opencode serve"
	require.Eventually(t, func() bool { return len(logLines(&logs, "level=WARN")) == 2 }, 10*time.Second, testkit.Poll, "the start's WARN and the turn's")
	assert.Len(t, logLines(&logs, "level=WARN", `msg="agent: computers' questions will fail: `+hung+`)"`, "no answer within 50ms"), 1, logs.String())
	assert.Len(t, logLines(&logs, "level=WARN", `msg="agent: turns fail: `+hung+`)"`, "the question's call got no answer in 10s"), 1, logs.String())
	assert.Empty(t, logLines(&logs, "unreachable"), "it runs")
}

// connTelling is a transport that tells connected each time a request of its has its
// connection (httptrace's GotConn): the server took it.
type connTelling struct {
	*http.Transport
	connected chan<- struct{}
}

func (c connTelling) RoundTrip(r *http.Request) (*http.Response, error) {
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { c.connected <- struct{}{} }}
	return c.Transport.RoundTrip(r.WithContext(httptrace.WithClientTrace(r.Context(), trace)))
}

// TestOpencodeStoppedMidAnswerIsUnavailable: opencode 1.18.33 stopped (SIGTERM) during a turn
// answers the sync prompt nothing (its connection closes: curl's "empty reply from server")
// and cuts the event stream; the port then refuses. The player reads that opencode is down,
// with the probe's line, and the operator is warned: the turn was not aborted by anyone.
func TestOpencodeStoppedMidAnswerIsUnavailable(t *testing.T) {
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) {
		tu.Text("the first words")
		tu.Stall()
	})
	prober, err := opencode.NewProber(opencode.ProberConfig{URL: f.oc.URL, Password: "oc-pw"})
	require.NoError(t, err)
	t.Cleanup(prober.Close)
	m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL, Prober: prober},
		slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	passIdleWait := fakeIdleWait(t, m)
	kitchen := protocol.Requester{AccountID: "local", TraposID: "7:kitchen"}

	type result struct {
		reason string
		errs   []string
	}
	done := make(chan result, 1)
	go func() {
		reason, errs := askTurn(t, m, kitchen, "hello")
		done <- result{reason, errs}
	}()
	require.Eventually(t, func() bool { return f.agent.Running() == 1 }, 10*time.Second, testkit.Poll)
	passIdleWait() // a stopped opencode sends no session.idle
	f.oc.Stop()
	r := <-done
	assert.Equal(t, ReasonError, r.reason, "nobody aborted the turn: opencode went away")
	assert.Equal(t, []string{"the agent is unavailable: opencode at " + f.oc.URL + ": connection refused"}, r.errs)
}

// TestARetryOfTheSameFailureRepeatsItsFirstWords: opencode 1.18.33 retrying a provider it
// cannot reach (offline: opencode/big-pickle) gives its five retries two details of the one
// failure in turn ("Cannot connect to API: Unable to connect. Is the computer able to access
// the url?", then "…: Was there a typo in the url or port?"), so the computer, which says a
// retry's reason only when it changes, said it five times: three rows each, most of a
// screen. A retry of the same failure (the same words before the first colon) carries the
// words the player read first; another failure its own.
func TestARetryOfTheSameFailureRepeatsItsFirstWords(t *testing.T) {
	const unable = "Cannot connect to API: Unable to connect. Is the computer able to access the url?"
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) {
		tu.Retry(1, unable)
		tu.Retry(2, "Cannot connect to API: Was there a typo in the url or port?")
		tu.Retry(3, unable)
		tu.Retry(4, "Rate limit exceeded: try again later")
		tu.Retry(5, "Rate limit exceeded: quota used up")
		tu.Text("hello")
	})
	m := f.module(t)
	var retries []string
	for _, e := range askEvents(t, m, protocol.Requester{AccountID: "local", TraposID: "7:kitchen"}, "hi") {
		if e.Kind == KindRetry {
			retries = append(retries, fmt.Sprintf("%d %s", e.Attempt, e.Message))
		}
	}
	assert.Equal(t, []string{"1 " + unable, "2 " + unable, "3 " + unable,
		"4 Rate limit exceeded: try again later", "5 Rate limit exceeded: try again later"}, retries)
}

// TestTheGatewaySaysAtStartThatOpencodeHasNoSuchModel: a gateway whose --ai-model opencode
// has no provider for (played: anthropic/claude-sonnet-4-5 on an opencode without its key,
// which answers the first question "Model not found: … Did you mean: claude-sonnet-4-5?")
// logged at start only that opencode answers, and the operator learnt otherwise from the
// first player's failed question. opencode's configured providers say it at start.
func TestTheGatewaySaysAtStartThatOpencodeHasNoSuchModel(t *testing.T) {
	f := startFakeAgent(t)
	for _, tc := range []struct{ model, want string }{
		{"p/m", ""},
		{"anthropic/claude-sonnet-4-5", `level=WARN msg="agent: computers' questions will fail: opencode has no model anthropic/claude-sonnet-4-5 ` +
			`(fix: give opencode the model's provider and its key: opencode auth login, or a provider in its opencode.json, then restart it; ` +
			`or set --ai-model (SANDBOX_AI_MODEL) to a model opencode models lists)" providers=p`},
		{"p/nope", `msg="agent: computers' questions will fail: opencode has no model p/nope `},
	} {
		t.Run(tc.model, func(t *testing.T) {
			prober, err := opencode.NewProber(opencode.ProberConfig{URL: f.oc.URL, Password: "oc-pw"})
			require.NoError(t, err)
			defer prober.Close()
			var logs testkit.SyncBuffer
			m, err := New(Config{Model: tc.model, OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL, Prober: prober},
				slog.New(slog.NewTextHandler(&logs, nil)), nil)
			require.NoError(t, err)
			require.Eventually(t, func() bool { return len(logLines(&logs, `msg="agent: opencode answers" version=1.18.33`)) == 1 },
				10*time.Second, testkit.Poll, logs.String())
			// The start's check of the model runs beside its probe, which does not wait for it,
			// and Close does not either: ProbeAgent waits for that check, whose WARN is then
			// logged. (m.Close() alone left the WARN racing the assertion: 1 run in 6 failed.)
			prober.ProbeAgent(t.Context())
			m.Close()
			if tc.want == "" {
				assert.Empty(t, logLines(&logs, "level=WARN"), logs.String())
				return
			}
			assert.Len(t, logLines(&logs, tc.want), 1, logs.String())
		})
	}
}

// TestTheStartSaysTheModelIsMissingWhenOpencodeListedItsModelsLate: the start's check of the
// model (beside its probe, bound by the probe's 5 s) got no answer from a fresh opencode, which
// lists its providers slowly the first time in a directory (played: 10 s, opencode 1.18.33
// offline), and the start said only "agent: opencode answers": a model opencode had no key
// for went unsaid until a computer's sandbox health probed again. The start asks again, longer,
// and says what it found, or that it could not tell.
func TestTheStartSaysTheModelIsMissingWhenOpencodeListedItsModelsLate(t *testing.T) {
	const model = "anthropic/claude-sonnet-4-5"
	f := startFakeAgent(t)
	for _, tc := range []struct {
		name       string
		unanswered int32 // the listings that get no answer
		want       string
	}{
		{"the second listing answers", 1, `level=WARN msg="agent: computers' questions will fail: opencode has no model ` + model + ` (fix: `},
		{"none answers", 1 << 20, `level=WARN msg="agent: opencode did not list its models within 30s, so whether it has ` + model + ` is not known: ` +
			`a computer's sandbox health asks again (fix: if opencode started seconds ago, nothing to do; else see opencode's own log)"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prober, err := opencode.NewProber(opencode.ProberConfig{URL: f.oc.URL, Password: "oc-pw"})
			require.NoError(t, err)
			defer prober.Close()
			var listings atomic.Int32
			unanswered := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/config/providers" && listings.Add(1) <= tc.unanswered {
					return nil, errors.New("no answer") // as a listing past its timeout: known false
				}
				return http.DefaultTransport.RoundTrip(r)
			})
			var logs testkit.SyncBuffer
			m, err := New(Config{Model: model, OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL, Prober: prober,
				Transport: unanswered}, slog.New(slog.NewTextHandler(&logs, nil)), nil)
			require.NoError(t, err)
			defer m.Close()
			require.Eventually(t, func() bool { return len(logLines(&logs, tc.want)) == 1 }, 10*time.Second, testkit.Poll, logs.String())
			assert.GreaterOrEqual(t, listings.Load(), int32(2), "the start asked again")
		})
	}
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAnMCPEndpointOpencodeCannotReachNamesTheFlag: with --ai-mcp-url where opencode finds
// no MCP server (a path that answers 404, a port where nothing listens), opencode 1.18.33
// marks the computer's server failed, "SSE error: Non-200 status code (404)" or "SSE error:
// Unable to connect. Is the computer able to access the url?", and so again after the
// gateway's connect. The player reads opencode's words; the operator's WARN names the flag
// to fix (it said only that the error and opencode's log say why).
func TestAnMCPEndpointOpencodeCannotReachNamesTheFlag(t *testing.T) {
	f := startFakeAgent(t)
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	for _, tc := range []struct{ mcpURL, why string }{
		{notFound.URL + "/mcp", "SSE error: Non-200 status code (404)"},
		{opencodefake.ClosedPortURL(t) + "/mcp", "SSE error: Unable to connect. Is the computer able to access the url?"},
	} {
		var logs testkit.SyncBuffer
		m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: t.TempDir(), MCPURL: tc.mcpURL},
			slog.New(slog.NewTextHandler(&logs, nil)), nil)
		require.NoError(t, err)
		reason, errs := askTurn(t, m, protocol.Requester{AccountID: "local", TraposID: "7:kitchen"}, "hello")
		m.Close()
		assert.Equal(t, ReasonError, reason)
		assert.Equal(t, []string{"the agent is unavailable: opencode cannot reach the gateway's MCP endpoint (failed: " + tc.why + ")"}, errs)
		assert.Len(t, logLines(&logs, `level=WARN msg="agent: turns fail: opencode cannot reach the gateway's MCP endpoint `+
			`(fix: point --ai-mcp-url (SANDBOX_AI_MCP_URL) at this gateway's /mcp as opencode's host reaches it)"`, tc.why), 1, logs.String())
	}
}

// TestProbeGatewaySaysTheAgentHasNoModelUntilOpencodeHasIt: probe_gateway answered
// opencodeOk true, and nothing else, to a computer whose every question would fail (opencode
// answers but has no --ai-model: its provider has no key there), so sandbox health said all
// was well. The answer carries aiDetail then, beside opencodeOk (whose meaning stays
// opencode's reachability), and drops it at the first upstream probe after opencode has the
// model (its operator gave it the key): that probe waits for the check. The probe_gateway handler runs as the gateway has it:
// the opencodehealth module, on the same prober the agent checks through.
func TestProbeGatewaySaysTheAgentHasNoModelUntilOpencodeHasIt(t *testing.T) {
	const model = "anthropic/claude-sonnet-4-5"
	f := startFakeAgent(t)
	var logs testkit.SyncBuffer
	_, prober, advance := startProbedAgent(t, f, model, slog.NewTextHandler(&logs, nil))
	probe := probeGateway(t, prober)
	const missing = `{"sandboxOk":true,"opencodeOk":true,"aiDetail":"opencode lacks the agent's model (--ai-model): its provider has no key there, or the name is wrong"}`
	for _, word := range strings.Fields(noModel) {
		assert.LessOrEqual(t, len(word), 26, "a pocket computer's row: %q", word)
	}
	prober.ProbeAgent(t.Context()) // the check runs beside the probe, which does not wait for it
	assert.Equal(t, missing, probe())
	assert.Equal(t, missing, probe(), "from the last upstream result, which is fresh")

	f.agent.AddModel(model)
	advance(opencodehealth.Fresh + time.Millisecond)
	// It said the last word while the check ran beside it, so ai alone refused to open for a
	// fault fixed: a fault is said only once the check says it again.
	assert.Equal(t, `{"sandboxOk":true,"opencodeOk":true}`, probe(), "the next upstream probe checks again, and answers its word")
	assert.Len(t, logLines(&logs, `level=INFO msg="agent: opencode has the model now" model=`+model), 1, logs.String())
	assert.Len(t, logLines(&logs, `level=WARN msg="agent: computers' questions will fail: opencode has no model `+model), 1, logs.String())
}

// TestAQuestionIsRefusedAtOnceWhileOpencodeLacksTheModel: while the agent's check finds the
// model missing on opencode (probe_gateway's aiDetail), a question is refused at once with that
// line: it was taken, a session made and a prompt sent, for opencode's "Model not found" a
// turn later. The refusal asks opencode again (a fresh probe, which checks the model), so a key
// given since lets the next question through; a gateway whose check found the model asks
// nothing more than before.
func TestAQuestionIsRefusedAtOnceWhileOpencodeLacksTheModel(t *testing.T) {
	const model = "anthropic/claude-sonnet-4-5"
	f := startFakeAgent(t)
	prober, err := opencode.NewProber(opencode.ProberConfig{URL: f.oc.URL, Password: "oc-pw"})
	require.NoError(t, err)
	defer prober.Close()
	m, err := New(Config{Model: model, OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL, Prober: prober},
		slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer m.Close()
	// the check has run once a probe's check has ended (it runs beside the probe's flight)
	require.Equal(t, noModel, prober.ProbeAgent(t.Context()).AIDetail)

	desk := protocol.Requester{TraposID: "5:desk"}
	_, err = m.handleAsk(t.Context(), desk, payload(t, map[string]any{"prompt": "hello"}))
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, CodeAIUnavailable, pe.Code)
	assert.Equal(t, "the agent is unavailable: "+noModel, pe.Message)
	assert.Zero(t, f.agent.Prompts(), "no prompt sent")
	assert.Empty(t, f.agent.Sessions(), "no session made")

	f.agent.AddModel(model)
	assert.Equal(t, ReasonStop, ask(t, m, desk, "hello"), "opencode has the model now")
	assert.EqualValues(t, 1, f.agent.Prompts())
}

// TestAModelGoneWhileOpencodeAnswersIsSaidWithinTheRecheck: a model opencode had when the
// agent's check ran, and lost later while it went on answering the probe (restarted between
// two probes without the provider's key), was never checked for again: sandbox health said
// opencodeOk: true alone until a probe found opencode down. The check runs again in the first
// upstream probe at least opencode.AgentRecheck after its last, on the prober's clock.
func TestAModelGoneWhileOpencodeAnswersIsSaidWithinTheRecheck(t *testing.T) {
	f := startFakeAgent(t)
	_, prober, advance := startProbedAgent(t, f, "p/m", slog.DiscardHandler)
	probe := probeGateway(t, prober)
	const healthy = `{"sandboxOk":true,"opencodeOk":true}`
	prober.ProbeAgent(t.Context()) // the check runs beside the probe, which does not wait for it
	require.Equal(t, healthy, probe())

	f.agent.RemoveModel("p/m")
	advance(opencodehealth.Fresh + time.Millisecond)
	assert.Equal(t, healthy, probe(), "within the recheck, the last word stands")
	advance(opencode.AgentRecheck)
	prober.ProbeAgent(t.Context())
	assert.Equal(t, `{"sandboxOk":true,"opencodeOk":true,"aiDetail":"`+noModel+`"}`, probe(), "checked again after opencode.AgentRecheck")

	f.agent.AddModel("p/m")
	advance(opencodehealth.Fresh + time.Millisecond)
	prober.ProbeAgent(t.Context())
	assert.Equal(t, healthy, probe(), "checked at each probe while it found fault")
}

// TestTheFirstQuestionAfterOpencodeRestartedWithoutTheModelSaysSo: opencode restarted without
// the model; the check had not answered since a probe found it down (a fresh opencode took 6 s
// to list its providers, past the probe's 5 s), so the first question was taken and failed a
// turn later with opencode's "Model not found". The turn asks for the check's word before its
// prompt, and ends with the line a question is refused with once the check has said it.
func TestTheFirstQuestionAfterOpencodeRestartedWithoutTheModelSaysSo(t *testing.T) {
	f := startFakeAgent(t)
	m, prober, _ := startProbedAgent(t, f, "p/m", slog.DiscardHandler)
	require.Empty(t, prober.ProbeAgent(t.Context()).AIDetail, "opencode has the model")

	f.oc.FailWith(http.StatusBadGateway) // opencode restarts, found down by a probe
	require.False(t, prober.Probe(t.Context()).OK)
	f.agent.RemoveModel("p/m")
	f.oc.FailWith(0)

	desk := protocol.Requester{TraposID: "5:desk"}
	reason, errs := askTurn(t, m, desk, "hello")
	assert.Equal(t, ReasonError, reason)
	assert.Equal(t, []string{"the agent is unavailable: " + noModel}, errs)
	assert.Zero(t, f.agent.Prompts(), "no prompt sent for a model opencode lacks")
	assert.True(t, m.modelMissing.Load(), "the next question is refused at once")
}

// TestATurnOpencodeFoundNoModelForMakesTheCheckRunAgain: a question that fails with opencode's
// "Model not found" (a model lost since the agent's check found it) makes the gateway check
// again at once, without waiting for opencode.AgentRecheck: sandbox health says it, and the
// next question is refused at once, where each waited for its own "Model not found".
func TestATurnOpencodeFoundNoModelForMakesTheCheckRunAgain(t *testing.T) {
	f := startFakeAgent(t)
	m, prober, _ := startProbedAgent(t, f, "p/m", slog.DiscardHandler)
	require.Empty(t, prober.Probe(t.Context()).AIDetail)
	// The start's check of the model runs beside the probe, which does not wait for it: it
	// must end before the model goes, or it finds the model gone and the question is refused
	// before any turn (ai_unavailable: failed so once under load).
	prober.ProbeAgent(t.Context())

	f.agent.RemoveModel("p/m")
	desk := protocol.Requester{TraposID: "5:desk"}
	reason, errs := askTurn(t, m, desk, "hello")
	require.Equal(t, ReasonError, reason)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "Model not found: p/m.")
	require.Eventually(t, func() bool { return m.modelMissing.Load() }, 10*time.Second, testkit.Poll,
		"the check ran again after the turn, the prober's clock not past AgentRecheck")
	assert.Equal(t, noModel, prober.Probe(t.Context()).AIDetail)
	_, err := m.handleAsk(t.Context(), desk, payload(t, map[string]any{"prompt": "hello"}))
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "the agent is unavailable: "+noModel, pe.Message)
}

// TestAProbeDoesNotWaitForTheAgentsCheck: a fresh opencode answers its health at once and lists
// its providers only seconds later; the agent's check rode in the probe's flight, so the first
// sandbox health after opencode's restart waited for it up to the probe's 5 s. The probe now
// answers with opencode's health and the check's last word, and the check ends beside it: the
// next probe has its word.
func TestAProbeDoesNotWaitForTheAgentsCheck(t *testing.T) {
	f := startFakeAgent(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	var released atomic.Bool
	f.agent.BeforeProviders = func(r *http.Request) {
		if calls.Add(1) > 1 {
			return // the first list is the slow one
		}
		close(arrived)
		select {
		case <-release:
			released.Store(true)
		case <-r.Context().Done():
		}
	}
	// A long timeout: a check the probe waited for ends only with it. A still clock: every
	// result is fresh (opencodehealth.Fresh).
	prober, err := opencode.NewProber(opencode.ProberConfig{URL: f.oc.URL, Password: "oc-pw", Timeout: time.Minute,
		Clock: clock.NewFake(time.Unix(1_000_000, 0))})
	require.NoError(t, err)
	defer prober.Close()
	m, err := New(Config{Model: "q/absent", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL, Prober: prober},
		slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer m.Close()
	health := opencodehealth.New(prober, nil)

	answered := make(chan string, 1)
	go func() {
		payload, err := health.Handle(t.Context(), protocol.Requester{}, nil)
		assert.NoError(t, err)
		answered <- string(payload)
	}()
	<-arrived // the check asks opencode's providers, which hold the answer
	assert.Equal(t, `{"sandboxOk":true,"opencodeOk":true}`, <-answered, "opencode's health, the check's word unknown yet")
	close(release)
	assert.Equal(t, noModel, prober.ProbeAgent(t.Context()).AIDetail, "the check's word once it ended")
	assert.True(t, released.Load(), "the first check ended with its answer, not the probe's timeout")
	payload, err := health.Quick(protocol.Requester{}, nil)
	require.NoError(t, err)
	assert.Equal(t, `{"sandboxOk":true,"opencodeOk":true,"aiDetail":"`+noModel+`"}`, string(payload), "the next probe has it")
}

// startProbedAgent starts the agent for model on the fake's opencode, checking opencode through
// a prober of its own, as the gateway has them, on a clock that stands until advance moves it;
// its log lines go to logs. Both are closed at the test's end. A probe waits for the check of a
// fault however long it takes on a loaded machine: these tests read the check's word.
func startProbedAgent(t *testing.T, f *fakeAgent, model string, logs slog.Handler) (m *Module, prober *opencode.Prober, advance func(time.Duration)) {
	t.Helper()
	fc := clock.NewFake(time.Unix(1_000_000, 0))
	prober, err := opencode.NewProber(opencode.ProberConfig{URL: f.oc.URL, Password: "oc-pw", AgentWait: time.Minute, Clock: fc})
	require.NoError(t, err)
	t.Cleanup(prober.Close)
	m, err = New(Config{Model: model, OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL, Prober: prober},
		slog.New(logs), nil)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	return m, prober, fc.Advance
}

// probeGateway answers probe_gateway as the gateway's opencodehealth module does on prober:
// from its last upstream result while that is fresh, else by asking opencode.
func probeGateway(t *testing.T, prober *opencode.Prober) func() string {
	health := opencodehealth.New(prober, nil)
	return func() string {
		t.Helper()
		payload, err := health.Quick(protocol.Requester{}, nil)
		if errors.Is(err, protocol.ErrWouldBlock) {
			payload, err = health.Handle(context.Background(), protocol.Requester{}, nil)
		}
		require.NoError(t, err)
		return string(payload)
	}
}

// TestAnAbortOpencodeRefusesIsWarnedOnce: after Q stopped a turn on a hung opencode, "agent:
// could not abort a turn on opencode" was logged at each try (every 10 s, the abort's
// timeout) for as long as it hung. It is warned once; the tries after it are counted, and
// the line when opencode stops the turn says how many failed.
func TestAnAbortOpencodeRefusesIsWarnedOnce(t *testing.T) {
	f, fc, logs, tu := stopATurnOpencodeWillNotAbort(t)
	f.oc.FailWith(0)
	fc.Advance(abortEvery)
	require.Eventually(t, func() bool { return len(logLines(logs, "failedAborts")) == 1 }, 10*time.Second, testkit.Poll)
	end := logLines(logs, "failedAborts")[0]
	assert.Contains(t, end, `level=INFO msg="agent: opencode stopped a turn whose aborts had failed" accountId="" traposId=5:desk turnId=`+tu.id+` failedAborts=`)
	assert.GreaterOrEqual(t, failedAborts(t, end), 7, "the first, and one a try at least after the wait")
	assert.Len(t, logLines(logs, "could not abort"), 1)
}

// TestAQuestionWhileOpencodeRefusesTheStopSaysWhoseFixItIs: after Q on a turn while opencode
// hung (played: held by SIGSTOP), each question read "the last answer is still stopping: ask
// in a moment" for as long as it hung, a wait with no end the player could see. Once an
// abort has failed, the question (and a reset) says opencode does not answer and whose fix it
// is; once opencode stops the turn, the session is free again.
func TestAQuestionWhileOpencodeRefusesTheStopSaysWhoseFixItIs(t *testing.T) {
	f, fc, logs, _ := stopATurnOpencodeWillNotAbort(t)
	from := protocol.Requester{TraposID: "5:desk"}
	busyMessage := func(err error) string {
		t.Helper()
		var pe *protocol.Error
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, protocol.CodeBusy, pe.Code)
		return pe.Message
	}
	_, err := f.m.handleAsk(t.Context(), from, payload(t, map[string]any{"prompt": "again"}))
	assert.Equal(t, "the last answer is still stopping: opencode does not answer (tell the gateway's operator)", busyMessage(err))
	_, err = f.m.handleReset(t.Context(), from, payload(t, map[string]any{}))
	assert.Equal(t, "the last answer is still stopping: opencode does not answer (tell the gateway's operator)", busyMessage(err))

	f.oc.FailWith(0)
	fc.Advance(abortEvery)
	require.Eventually(t, func() bool { return len(logLines(logs, "failedAborts")) == 1 }, 10*time.Second, testkit.Poll)
	require.Eventually(t, func() bool {
		_, err := f.m.handleReset(t.Context(), from, payload(t, map[string]any{}))
		return err == nil
	}, 10*time.Second, testkit.Poll, "the session stays busy once opencode stopped the turn")
}

// TestAbortsTheGatewayGivesUpOnAreSaid: a gateway that stops while opencode still refuses a
// stopped turn's abort says it gave up, and how many failed.
func TestAbortsTheGatewayGivesUpOnAreSaid(t *testing.T) {
	f, _, logs, tu := stopATurnOpencodeWillNotAbort(t)
	f.m.Close()
	end := logLines(logs, "failedAborts")
	require.Len(t, end, 1, logs.String())
	assert.Contains(t, end[0], `level=WARN msg="agent: gave up aborting a turn on opencode: the gateway stops" accountId="" traposId=5:desk turnId=`+tu.id+` failedAborts=`)
	assert.GreaterOrEqual(t, failedAborts(t, end[0]), 7)
	assert.Len(t, logLines(logs, "could not abort"), 1)
}

// failedAborts reads a log line's failedAborts.
func failedAborts(t *testing.T, line string) int {
	t.Helper()
	var n int
	_, err := fmt.Sscanf(line[strings.Index(line, "failedAborts=")+len("failedAborts="):], "%d", &n)
	require.NoError(t, err)
	return n
}

// stoppingAgent is a module whose turn was stopped while opencode refuses its aborts.
type stoppingAgent struct {
	*fakeAgent
	m *Module
}

// stopATurnOpencodeWillNotAbort stops (Q) a turn while the fake opencode answers 502 to
// everything, and lets the module try the abort at least seven times, on the fake clock that
// paces the aborts (the module's abortClock), then checks the one WARN line.
func stopATurnOpencodeWillNotAbort(t *testing.T) (stoppingAgent, *clock.Fake, *testkit.SyncBuffer, *turn) {
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) { tu.Stall() })
	fc := clock.NewFake(time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC))
	m, logs, tu := runningTurn(t, f, func(m *Module) { m.abortClock = fc })
	f.oc.FailWith(http.StatusBadGateway)
	tu.cancel(errAborted) // Q

	// The first abort failed; its wait (abortWait) and the next try's timer are armed. Past
	// the wait the tries go on in the background, one each abortEvery.
	require.True(t, fc.WaitArmed(2, t.Context().Done()))
	fc.Advance(abortWait)
	nextTryArmed := func() bool { return fc.Armed() == 1 && fc.NextDue().Equal(fc.Now().Add(abortEvery)) }
	for range 6 {
		require.Eventually(t, nextTryArmed, 10*time.Second, testkit.Poll)
		fc.Advance(abortEvery)
	}
	require.Eventually(t, nextTryArmed, 10*time.Second, testkit.Poll)
	warns := logLines(logs, "could not abort")
	require.Len(t, warns, 1, logs.String())
	assert.Contains(t, warns[0], `level=WARN msg="agent: could not abort a turn on opencode; trying again until it stops the turn" accountId="" traposId=5:desk turnId=`+tu.id+` err="opencode answered HTTP 502"`)
	assert.Empty(t, logLines(logs, "failedAborts"), "the turn runs on")
	return stoppingAgent{f, m}, fc, logs, tu
}

// TestAStopOnAHungOpencodeEndsTheTurnWithinAbortWait: Q on a turn while opencode hung
// (played: held by SIGSTOP) ended the turn, its done event, 21 s later: the first abort's
// call waited its callTimeout (10 s) before the wait of abortWait began, and a try in flight
// as that wait passed held it 10 s more. The turn ends once abortWait has passed on the
// aborts' clock, the abort still in flight (the fake opencode stalled: a real socket that
// takes it and never answers).
func TestAStopOnAHungOpencodeEndsTheTurnWithinAbortWait(t *testing.T) {
	f := startFakeAgentWith(t, func(tu *opencodefake.Turn) { tu.Stall() })
	fc := clock.NewFake(time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC))
	_, logs, tu := runningTurn(t, f, func(m *Module) {
		m.abortClock = fc
		t.Cleanup(func() { fc.Advance(callTimeout) }) // before Close: the hung abort fails, Close gives up
	})
	f.oc.Stall()
	tu.cancel(errAborted) // Q

	// Armed: the turn's wait (abortWait) and the hung abort's timeout (callTimeout). Without
	// the fix only the abort's, until it timed out: a bound, so that failure is no hang.
	bound, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.True(t, fc.WaitArmed(2, bound.Done()), "the turn's wait does not run beside the abort's call (armed: %d)", fc.Armed())
	fc.Advance(abortWait)
	require.Eventually(t, func() bool { return len(logLines(logs, `msg="agent: turn ended"`, "reason=aborted")) == 1 }, 10*time.Second, testkit.Poll, logs.String())
	assert.Empty(t, logLines(logs, "could not abort"), "the abort is still in flight")
}

// runningTurn starts a module on f that logs as text to logs, set up by before, asks it a
// question from 5:desk, and returns it and the turn once opencode runs it.
func runningTurn(t *testing.T, f *fakeAgent, before func(m *Module)) (m *Module, logs *testkit.SyncBuffer, tu *turn) {
	t.Helper()
	logs = &testkit.SyncBuffer{}
	m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL},
		slog.New(slog.NewTextHandler(logs, nil)), nil)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	before(m)
	raw, err := m.handleAsk(t.Context(), protocol.Requester{TraposID: "5:desk"}, payload(t, map[string]any{"prompt": "hello"}))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return f.agent.Running() == 1 }, 10*time.Second, testkit.Poll)
	m.mu.Lock()
	for _, v := range m.turns {
		tu = v
	}
	m.mu.Unlock()
	require.NotNil(t, tu, string(raw))
	return m, logs, tu
}

// TestAWrongOpencodePasswordReadsOneWayEverywhere: opencode's 401 to the gateway read two ways
// for one cause: the probe's detail (sandbox health, ai alone) said "401 unauthorized (check
// OPENCODE_SERVER_PASSWORD / …)", a question's refusal (ai <question>) "opencode refused the
// gateway's credentials (…)". Both are now the probe's line, opencode.RefusedCredentials with
// the server, and the operator's WARNs name the same cause and fix; so for none sent.
func TestAWrongOpencodePasswordReadsOneWayEverywhere(t *testing.T) {
	for name, password := range map[string]string{"wrong": "not-oc-pw", "none": ""} {
		t.Run(name, func(t *testing.T) {
			f := startFakeAgent(t)
			prober, err := opencode.NewProber(opencode.ProberConfig{URL: f.oc.URL, Password: password})
			require.NoError(t, err)
			t.Cleanup(prober.Close)
			var logs testkit.SyncBuffer
			m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: password, Dir: f.root, MCPURL: f.mcpURL, Prober: prober},
				slog.New(slog.NewTextHandler(&logs, nil)), nil)
			require.NoError(t, err)
			t.Cleanup(m.Close)

			words := opencode.RefusedCredentials(password != "")
			detail := prober.Probe(t.Context()).Detail
			assert.Equal(t, "opencode at "+f.oc.URL+": "+words, detail, "the probe's line: sandbox health, ai alone")
			reason, errs := askTurn(t, m, protocol.Requester{TraposID: "5:desk"}, "hello")
			assert.Equal(t, ReasonError, reason)
			assert.Equal(t, []string{"the agent is unavailable: " + detail}, errs, "ai <question>: the probe's line")

			cause, fix := opencode.CredentialsRefused, opencode.CredentialsFix
			if password == "" {
				cause, fix = opencode.CredentialsMissing, opencode.CredentialsMissingFix
			}
			require.Eventually(t, func() bool { return len(logLines(&logs, "level=WARN")) == 2 }, 10*time.Second, testkit.Poll, "the start's WARN and the turn's")
			assert.Len(t, logLines(&logs, `msg="agent: computers' questions will fail: opencode `+cause+` (fix: `+fix+`)"`), 1, logs.String())
			assert.Len(t, logLines(&logs, `msg="agent: turns fail: opencode `+cause+` (fix: `+fix+`)"`), 1, logs.String())
			assert.NotContains(t, logs.String(), "check OPENCODE_SERVER_PASSWORD")
		})
	}
}
