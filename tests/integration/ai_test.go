package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/daemonfake"
	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// aiModel is the model the agent tests configure; the fake opencode knows only it.
const aiModel = "fake/m"

// asker is a computer that asks the agent (ai.*) and, on the same socket, answers the
// gateway's requests as the sandbox daemon does (the agent's tools reach it that way).
type asker struct {
	d      *harness.Daemon
	c      *harness.Computer
	wmu    sync.Mutex
	mu     sync.Mutex
	waits  map[string]chan harness.Frame
	frames []int // the size of every gateway_response's payload
	done   chan struct{}
}

func newAsker(ctx context.Context, t *testing.T, g *harness.Gateway, d *harness.Daemon) *asker {
	t.Helper()
	return newAskerWith(ctx, t, g, d, sandboxPassword)
}

// newAskerWith is newAsker saying hello with secret (an account's credential).
func newAskerWith(ctx context.Context, t *testing.T, g *harness.Gateway, d *harness.Daemon, secret string) *asker {
	t.Helper()
	c, err := harness.Dial(ctx, g.WebSocketURL(), d.TraposID())
	require.NoError(t, err)
	require.NoError(t, c.MustHello(ctx, secret))
	a := &asker{d: d, c: c, waits: map[string]chan harness.Frame{}, done: make(chan struct{})}
	go a.read(ctx)
	t.Cleanup(a.close)
	return a
}

func (a *asker) close() {
	_ = a.c.Close()
	<-a.done
}

func (a *asker) write(v any) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	return a.c.WriteJSON(v)
}

func (a *asker) read(ctx context.Context) {
	defer close(a.done)
	for {
		f, err := a.c.Next(ctx)
		if err != nil {
			return
		}
		switch f.Event {
		case harness.EventGatewayRequest:
			r := a.d.Reply(f)
			msg := map[string]any{"event": harness.EventComputerResponse, "traposSenderId": a.c.TraposID,
				"messageId": f.MessageID, "type": f.Type, "ok": r.Error == nil}
			if r.Error != nil {
				msg["error"] = r.Error
			} else {
				msg["payload"] = r.Payload
			}
			if a.write(msg) != nil {
				return
			}
		case harness.EventGatewayResponse:
			a.mu.Lock()
			a.frames = append(a.frames, len(f.Payload))
			ch := a.waits[f.MessageID]
			delete(a.waits, f.MessageID)
			a.mu.Unlock()
			if ch != nil {
				ch <- f
			}
		}
	}
}

// request sends a computer_request and returns the gateway's answer.
func (a *asker) request(t *testing.T, ctx context.Context, typ string, payload any) harness.Frame {
	t.Helper()
	id := harness.NewMessageID()
	ch := make(chan harness.Frame, 1)
	a.mu.Lock()
	a.waits[id] = ch
	a.mu.Unlock()
	require.NoError(t, a.write(map[string]any{"event": harness.EventComputerRequest, "traposSenderId": a.c.TraposID,
		"messageId": id, "type": typ, "payload": payload}))
	select {
	case f := <-ch:
		return f
	case <-ctx.Done():
		t.Fatalf("no answer to %s", typ)
		return harness.Frame{}
	}
}

// ask starts a turn and returns its id.
func (a *asker) ask(t *testing.T, ctx context.Context, prompt string) string {
	t.Helper()
	p := requireOK(t, a.request(t, ctx, "ai.ask", map[string]any{"prompt": prompt, "kind": "computer",
		"screen": map[string]int{"width": 51, "height": 19}, "colour": true}))
	id, _ := p["turnId"].(string)
	require.NotEmpty(t, id)
	return id
}

// aiEvent is one event of ai.poll.
type aiEvent struct {
	Seq       int    `json:"seq"`
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	Tool      string `json:"tool"`
	Detail    string `json:"detail"`
	State     string `json:"state"`
	ConfirmID string `json:"confirmId"`
	Action    string `json:"action"`
	Bytes     *int   `json:"bytes"`
	Message   string `json:"message"`
	Attempt   int    `json:"attempt"`
	Code      string `json:"code"`
	Reason    string `json:"reason"`
	Error     string `json:"error"`
}

// follow polls a turn to its done event; confirm answers each confirm event (nil: none are
// expected). It returns every event, and checks seq runs 1, 2, 3… and done comes last.
func (a *asker) follow(t *testing.T, ctx context.Context, turnID string, confirm func(aiEvent) bool) []aiEvent {
	t.Helper()
	var all []aiEvent
	after := 0
	for {
		f := a.request(t, ctx, "ai.poll", map[string]any{"turnId": turnID, "after": after})
		var reply struct {
			Events []aiEvent `json:"events"`
			Done   bool      `json:"done"`
		}
		requireOK(t, f)
		require.NoError(t, json.Unmarshal(f.Payload, &reply))
		text := 0
		for _, e := range reply.Events {
			require.Equal(t, after+1, e.Seq, "events in order, none lost")
			after = e.Seq
			text += len(e.Text)
			all = append(all, e)
			if e.Kind == "confirm" {
				require.NotNil(t, confirm, "an unexpected confirm: %+v", e)
				requireOK(t, a.request(t, ctx, "ai.approve", map[string]any{"turnId": turnID, "confirmId": e.ConfirmID, "allow": confirm(e)}))
			}
		}
		assert.LessOrEqual(t, text, 16<<10, "a poll reply carries at most 16 KiB of text")
		if reply.Done {
			require.NotEmpty(t, all)
			require.Equal(t, "done", all[len(all)-1].Kind)
			return all
		}
	}
}

func last(events []aiEvent) aiEvent { return events[len(events)-1] }

func textOf(events []aiEvent) string {
	var b strings.Builder
	for _, e := range events {
		if e.Kind == "text" {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func kinds(events []aiEvent, kind string) []aiEvent {
	var out []aiEvent
	for _, e := range events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// bigAnswer is 200 000 characters, sent in 100-byte chunks as a model streams.
var bigAnswer = strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789abcdefghijklmnopqrstuvwxyz_\n", 2000)

// scriptedModel answers by the prompt's first word, as the scripted stand-in models of the
// reference did: text, tool calls, retries, failures and a stall.
func scriptedModel(t *opencodefake.Turn) {
	words := strings.Fields(t.Prompt())
	if len(words) == 0 {
		return
	}
	switch words[0] {
	case "hello":
		t.Text("Hello", " from the agent", " (é ✓)")
	case "tools":
		t.Text(strings.Join(t.Offered(), ","))
	case "system":
		t.Text(t.System())
	case "history":
		t.Text(strings.Join(t.History(), "|"))
	case "write": // write TRAPOSID PATH CONTENT
		r := t.Tool("trap-sandbox_write_file", map[string]any{"traposId": words[1], "path": words[2], "content": words[3]})
		if r.Stopped {
			return
		}
		t.Text("tool " + r.State + ": " + r.Error)
	case "bash":
		r := t.Tool("bash", map[string]any{"command": "id -un"})
		t.Text("bash " + r.State)
	case "stall":
		t.Stall()
	case "drop": // the event stream closes before the answer (opencode#38458)
		t.DropStreams()
		t.Text("said while the stream was down")
	case "big":
		chunks := make([]string, 0, len(bigAnswer)/100)
		for i := 0; i < len(bigAnswer); i += 100 {
			chunks = append(chunks, bigAnswer[i:i+100])
		}
		t.Text(chunks...)
	case "fail":
		t.Retry(1, "Cannot connect to API: connection refused")
		t.FailProvider("Incorrect API key provided: sk-SE****ed.", 401)
	}
}

type aiSetup struct {
	oc    *opencodefake.Server
	agent *opencodefake.Agent
	dir   string
}

func startFakeAgent(t *testing.T) aiSetup {
	oc := opencodefake.Start(t, opencodefake.Options{Password: opencodePassword})
	return aiSetup{oc: oc, agent: oc.Agent(scriptedModel, aiModel), dir: t.TempDir()}
}

func (s aiSetup) gateway(t *testing.T, extra ...string) *harness.Gateway {
	t.Helper()
	return harness.Start(t, gatewayBin, harness.Options{Args: append([]string{"--password", sandboxPassword,
		"--opencode-url", s.oc.URL, "--ai-model", aiModel, "--ai-dir", s.dir}, extra...),
		Env: []string{"OPENCODE_SERVER_PASSWORD=" + opencodePassword}})
}

// TestAgentAnswersTheAskingComputer: a question's answer streams back in order, as CC text;
// the agent is told which computer asked and is offered only the trap-sandbox tools for one
// computer; its writes on the asking computer happen after the player's yes and not after a
// no; a call aimed at another computer is refused and the turn goes on; host tools never
// run; a provider's failure reaches the computer as its one-line message only.
func TestAgentAnswersTheAskingComputer(t *testing.T) {
	ctx := testContext(t)
	s := startFakeAgent(t)
	g := s.gateway(t)
	desk := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 5, Label: "desk", AllowFiles: harness.AllowFilesWrite}}
	vault := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 6, Label: "vault", AllowFiles: harness.AllowFilesWrite}}
	stop, err := vault.Serve(ctx, g.WebSocketURL(), sandboxPassword)
	require.NoError(t, err)
	defer stop()
	a := newAsker(ctx, t, g, desk)

	t.Run("hello streams the answer as CC text", func(t *testing.T) {
		ev := a.follow(t, ctx, a.ask(t, ctx, "hello there"), nil)
		assert.Equal(t, "Hello from the agent (\u00e9 ?)", textOf(ev), "é stays the byte E9, ✓ becomes ?")
		assert.Equal(t, "stop", ev[len(ev)-1].Reason)
	})

	t.Run("the agent knows which computer asked", func(t *testing.T) {
		text := textOf(a.follow(t, ctx, a.ask(t, ctx, "system"), nil))
		assert.Contains(t, text, `traposId "5:desk"`)
		assert.Contains(t, text, `label "desk"`)
		assert.Contains(t, text, "screen 51x19")
		assert.Contains(t, text, "act only on that computer")
	})

	t.Run("only the trap-sandbox tools for one computer are offered", func(t *testing.T) {
		offered := strings.Split(textOf(a.follow(t, ctx, a.ask(t, ctx, "tools"), nil)), ",")
		assert.Contains(t, offered, "trap-sandbox_write_file")
		assert.Contains(t, offered, "trap-sandbox_run_lua")
		for _, tool := range offered {
			assert.True(t, strings.HasPrefix(tool, "trap-sandbox_"), "a host tool was offered: %s", tool)
		}
		assert.NotContains(t, offered, "trap-sandbox_list_computers", "it shows every player's computers")
	})

	t.Run("a host tool the model calls anyway is denied", func(t *testing.T) {
		ev := a.follow(t, ctx, a.ask(t, ctx, "bash"), nil)
		assert.Equal(t, "bash error", textOf(ev))
	})

	t.Run("a write runs after the player's yes", func(t *testing.T) {
		var seen []aiEvent
		ev := a.follow(t, ctx, a.ask(t, ctx, "write 5:desk /door.lua redstone.setOutput"), func(e aiEvent) bool {
			seen = append(seen, e)
			return true
		})
		require.Len(t, seen, 1)
		assert.Equal(t, "write", seen[0].Action)
		assert.Equal(t, "write_file", seen[0].Tool)
		assert.Equal(t, "/door.lua", seen[0].Detail)
		require.NotNil(t, seen[0].Bytes)
		assert.Equal(t, len("redstone.setOutput"), *seen[0].Bytes)
		data, ok := desk.File("/door.lua")
		require.True(t, ok, "the file was written on the asking computer")
		assert.Equal(t, "redstone.setOutput", string(data))
		tools := kinds(ev, "tool")
		require.NotEmpty(t, tools)
		assert.Equal(t, "completed", tools[len(tools)-1].State)
		assert.Equal(t, "/door.lua", tools[len(tools)-1].Detail)
	})

	t.Run("a write is refused after the player's no and the turn goes on", func(t *testing.T) {
		ev := a.follow(t, ctx, a.ask(t, ctx, "write 5:desk /no.lua x"), func(aiEvent) bool { return false })
		_, ok := desk.File("/no.lua")
		assert.False(t, ok)
		assert.Contains(t, textOf(ev), "tool error: "+opencodefake.RejectFeedbackPrefix+"The player refused this write")
		tools := kinds(ev, "tool")
		require.NotEmpty(t, tools)
		assert.Equal(t, "error", tools[len(tools)-1].State)
		assert.True(t, strings.HasPrefix(tools[len(tools)-1].Error, "The player refused this write (write_file /no.lua)."),
			"the player's line holds the gateway's reason without opencode's prefix: %q", tools[len(tools)-1].Error)
		assert.Equal(t, "stop", ev[len(ev)-1].Reason)
	})

	t.Run("a call aimed at another computer is refused and the turn goes on", func(t *testing.T) {
		ev := a.follow(t, ctx, a.ask(t, ctx, "write 6:vault /steal.lua x"), nil)
		_, ok := vault.File("/steal.lua")
		assert.False(t, ok, "the other computer was written")
		assert.Contains(t, textOf(ev), "you may act only on computer 5:desk")
		assert.Empty(t, kinds(ev, "confirm"), "nothing to put before the player")
	})

	t.Run("a provider failure reaches the player as its message only", func(t *testing.T) {
		ev := a.follow(t, ctx, a.ask(t, ctx, "fail"), nil)
		retries := kinds(ev, "retry")
		require.Len(t, retries, 1)
		assert.Equal(t, 1, retries[0].Attempt)
		errs := kinds(ev, "error")
		require.Len(t, errs, 1)
		assert.Equal(t, "ai_unavailable", errs[0].Code)
		assert.Equal(t, "The agent's model failed (tell the gateway's operator): Incorrect API key provided: sk-SE****ed.", errs[0].Message,
			"the player reads whose failure it is and who fixes it")
		assert.Equal(t, "error", ev[len(ev)-1].Reason)
		for _, e := range ev {
			assert.NotContains(t, e.Message+e.Text, "SECRET-echoed", "echoed headers or body reached the computer")
		}
		assert.NoError(t, g.WaitLog(ctx, `reason=error took=`), "the operator's log says why the turn failed")
		assert.Regexp(t, `msg="agent: turn ended" .* reason=error .* code=ai_unavailable error="The agent's model failed \(tell the gateway's operator\): Incorrect API key provided: sk-SE\*\*\*\*ed\."`, g.Log())
		assert.NotContains(t, g.Log(), "SECRET-echoed", "echoed headers or body in the log")
	})

	t.Run("a 200 KB answer arrives cut, in replies far below 128 KiB", func(t *testing.T) {
		ev := a.follow(t, ctx, a.ask(t, ctx, "big"), nil)
		text := textOf(ev)
		assert.Equal(t, 64<<10, len(text))
		assert.Equal(t, bigAnswer[:64<<10], text)
		require.Len(t, kinds(ev, "cut"), 1)
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, n := range a.frames {
			assert.Less(t, n, 32<<10, "a reply's payload")
		}
	})

	assert.Zero(t, s.agent.DefaultModelUsed(), "every prompt named the model")
	assert.Zero(t, s.agent.Always(), "never always")
	assert.Zero(t, s.agent.Queued(), "never a queued prompt")
	assert.NotContains(t, g.Log(), "hello there", "the prompt in the log")
	assert.NotContains(t, g.Log(), "from the agent", "the answer in the log")
}

// TestAgentTurnsStop: one turn at a time per session (busy, never queued); ai.abort stops the
// turn on opencode; a stalled provider ends at the gateway's deadline with a clear line; the
// computer's disconnect aborts its turn.
func TestAgentTurnsStop(t *testing.T) {
	ctx := testContext(t)
	s := startFakeAgent(t)
	g := s.gateway(t, "--ai-turn-deadline", "2s")
	desk := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 5, Label: "desk"}}
	a := newAsker(ctx, t, g, desk)

	turn := a.ask(t, ctx, "stall")
	f := a.request(t, ctx, "ai.ask", map[string]any{"prompt": "hello"})
	require.NotNil(t, f.Error)
	assert.Equal(t, "busy", f.Error.Code)
	assert.Equal(t, "the agent is busy here: wait or stop it (Q, Ctrl-T)", f.Error.Message)
	// Another conversation of the same computer is not held up.
	door := requireOK(t, a.request(t, ctx, "ai.ask", map[string]any{"prompt": "hello", "session": "door"}))
	assert.Equal(t, "stop", last(a.follow(t, ctx, door["turnId"].(string), nil)).Reason)
	// The stalled turn's prompt is at opencode (on a loaded machine it could still be on its
	// way, and a turn aborted before its prompt has nothing to abort there).
	require.Eventually(t, func() bool { return s.agent.Running() == 1 }, testTimeout, 20*time.Millisecond, "the stalled prompt to reach opencode")
	requireOK(t, a.request(t, ctx, "ai.abort", map[string]any{"turnId": turn}))
	ev := a.follow(t, ctx, turn, nil)
	assert.Equal(t, "aborted", ev[len(ev)-1].Reason)
	// The turn ends for the computer as the gateway asks opencode to abort it: the ask may
	// reach opencode just after (and be sent again until opencode says the turn stopped).
	require.Eventually(t, func() bool { return s.agent.Aborts() >= 1 }, testTimeout, 20*time.Millisecond, "the turn to be aborted on opencode")

	abortedBefore := s.agent.Aborts()
	ev = a.follow(t, ctx, a.ask(t, ctx, "stall"), nil)
	errs := kinds(ev, "error")
	require.Len(t, errs, 1)
	assert.Equal(t, "timeout", errs[0].Code)
	assert.Contains(t, errs[0].Message, "did not finish in 2 s")
	assert.Equal(t, "deadline", ev[len(ev)-1].Reason)
	require.Eventually(t, func() bool { return s.agent.Aborts() > abortedBefore }, testTimeout, 20*time.Millisecond, "the stalled turn to be aborted on opencode")
	assert.Zero(t, s.agent.Queued())
}

// TestAgentResetsSpendTheComputersRate: every ai.reset asks opencode for the conversation (and
// deletes it), and resets had no limit: a computer sending them as fast as it wrote frames sent
// opencode as many requests, 16 at once on each socket, beside every other computer's
// questions. A reset now spends the computer's rate as a question does (20 at once, then one
// per 3 s), and a reset refused so reaches opencode not at all. A computer that never asked
// has no conversation to forget: its reset is answered at once, spending nothing.
func TestAgentResetsSpendTheComputersRate(t *testing.T) {
	ctx := testContext(t)
	s := startFakeAgent(t)
	g := s.gateway(t)
	desk := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 5, Label: "desk"}}
	a := newAsker(ctx, t, g, desk)
	a.follow(t, ctx, a.ask(t, ctx, "hello"), nil) // it has a conversation now

	const resets = 60
	taken, refused := 0, 0
	start := time.Now()
	for i := range resets {
		f := a.request(t, ctx, "ai.reset", map[string]any{"session": fmt.Sprintf("s%d", i)})
		if f.Error == nil {
			taken++
			continue
		}
		refused++
		assert.Equal(t, "busy", f.Error.Code)
		assert.Regexp(t, `^too many resets and questions from here: reset again in \d+ s$`, f.Error.Message)
	}
	elapsed := time.Since(start)
	// The burst, and one more for each 3 s the loop took, whatever the machine's speed.
	assert.LessOrEqual(t, taken, 20+int(elapsed/(3*time.Second))+1, "resets taken in %v", elapsed)
	assert.NotZero(t, refused)
	// The rate is the computer's, questions and resets together.
	f := a.request(t, ctx, "ai.ask", map[string]any{"prompt": "hello"})
	require.NotNil(t, f.Error)
	assert.Equal(t, "busy", f.Error.Code)
	assert.Contains(t, f.Error.Message, "too many questions from here")
	// Another computer has its own; one that never asked resets at once, as often as it likes.
	door := newAsker(ctx, t, g, &harness.Daemon{Daemon: daemonfake.Daemon{ID: 6, Label: "door"}})
	for range resets {
		requireOK(t, door.request(t, ctx, "ai.reset", map[string]any{}))
	}
	door.follow(t, ctx, door.ask(t, ctx, "hello"), nil)
}

// TestTheGatewaySaysAtStartWhetherOpencodeAnswers: the agent touches opencode only when a
// computer asks, so an operator who gave the gateway a wrong opencode password (or started
// none) read nothing at start, and learnt it from the first player's failed question.
func TestTheGatewaySaysAtStartWhetherOpencodeAnswers(t *testing.T) {
	ctx := testContext(t)
	s := startFakeAgent(t)
	const warn = `level=WARN msg="agent: computers' questions will fail: `

	g := s.gateway(t)
	require.NoError(t, g.WaitLog(ctx, `level=INFO msg="agent: opencode answers" version=`), g.Log())
	assert.NotContains(t, g.Log(), "level=WARN msg=\"agent:")
	require.NoError(t, g.Stop())

	g = s.gateway(t, "--opencode-password", "not-opencodes")
	require.NoError(t, g.WaitLog(ctx, warn+`opencode answered 401, refusing the gateway's credentials (fix: give the gateway opencode's server password, `+
		`--opencode-password (OPENCODE_SERVER_PASSWORD), and its user if not opencode (OPENCODE_SERVER_USERNAME))" detail="opencode at `+s.oc.URL+
		`: answered 401, refusing the gateway's credentials: its operator must give the gateway opencode's server password, --opencode-password (OPENCODE_SERVER_PASSWORD), `+
		`and its user if not opencode (OPENCODE_SERVER_USERNAME)"`), g.Log())
	require.NoError(t, g.Stop())

	down := opencodefake.ClosedPortURL(t)
	g = s.gateway(t, "--opencode-url", down)
	require.NoError(t, g.WaitLog(ctx, warn+`opencode is unreachable (fix: start opencode serve, or point --opencode-url (OPENCODE_URL) at it; `+
		`if it is starting, nothing to do)" detail="opencode at `+down+`: connection refused"`), g.Log())
	assert.NotContains(t, g.Log(), opencodePassword, "no password in the log")
}

// TestAgentOff: without --ai-model every ai.* type answers ai_disabled naming the flag, and
// the log says why once.
func TestAgentOff(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := connect(ctx, t, g, "5:desk")
	for _, typ := range []string{"ai.ask", "ai.poll", "ai.abort", "ai.reset", "ai.approve"} {
		f, err := c.Request(ctx, typ, map[string]any{"prompt": "hello", "turnId": "turn_x", "after": 0})
		require.NoError(t, err)
		require.NotNil(t, f.Error, typ)
		assert.Equal(t, "ai_disabled", f.Error.Code, typ)
		assert.Contains(t, f.Error.Message, "--ai-model", typ)
	}
	assert.Equal(t, 1, strings.Count(g.Log(), "agent: off"))

	// trap-sandbox ai-turns said "no agent turn running", as on a gateway whose agent was on
	// and idle: the operator waited for a turn that could never start.
	out, errOut, code := runCLI(ctx, t, nil, "ai-turns", "--url", g.URL(""))
	assert.Equal(t, 1, code, errOut)
	assert.Empty(t, out)
	assert.Equal(t, "trap-sandbox: list agent turns: the gateway answered ai_disabled: this gateway's agent is off (it runs without --ai-model), so no turn runs here: "+
		"start it with --ai-model PROVIDER/MODEL (SANDBOX_AI_MODEL) to turn the agent on (docs/ai.md)\n", errOut)
}

// TestAgentConversations: a restarted gateway continues the same conversation (found by its
// title); ai.reset starts a new one; a turn the gateway does not know is unknown_turn; the
// running turns are listed; a computer's disconnect aborts its turn on opencode.
func TestAgentConversations(t *testing.T) {
	ctx := testContext(t)
	s := startFakeAgent(t)
	desk := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 5, Label: "desk"}}

	g := s.gateway(t)
	// With the agent on and no question asked, ai-turns says so, and succeeds (TestAgentOff).
	out, errOut, code := runCLI(ctx, t, nil, "ai-turns", "--url", g.URL(""))
	assert.Equal(t, 0, code, errOut)
	assert.Empty(t, out)
	assert.Equal(t, "no agent turn running\n", errOut)
	a := newAsker(ctx, t, g, desk)
	assert.Equal(t, "history one", textOf(a.follow(t, ctx, a.ask(t, ctx, "history one"), nil)))
	a.close()
	require.NoError(t, g.Stop())

	g = s.gateway(t)
	a = newAsker(ctx, t, g, desk)
	assert.Equal(t, "history one|history two", textOf(a.follow(t, ctx, a.ask(t, ctx, "history two"), nil)))
	require.Len(t, s.agent.Sessions(), 1)
	assert.Equal(t, "trap-sandbox 5:desk main", s.agent.Sessions()[0].Title)

	requireOK(t, a.request(t, ctx, "ai.reset", map[string]any{}))
	assert.Equal(t, "history three", textOf(a.follow(t, ctx, a.ask(t, ctx, "history three"), nil)))

	f := a.request(t, ctx, "ai.poll", map[string]any{"turnId": "turn_nope", "after": 0})
	require.NotNil(t, f.Error)
	assert.Equal(t, "unknown_turn", f.Error.Code)

	turn := a.ask(t, ctx, "stall")
	var listed []map[string]any
	resp, err := harness.HTTPClient().Get(g.URL("/trapos/ai/turns"))
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&listed))
	resp.Body.Close()
	require.Len(t, listed, 1)
	assert.Equal(t, "5:desk", listed[0]["traposId"])
	assert.Equal(t, turn, listed[0]["turnId"])

	// The computer goes away mid-turn: once the model is at work (before that there is no
	// prompt on opencode to abort, and the turn just ends).
	require.Eventually(t, func() bool { return s.agent.Running() == 1 }, testTimeout, 20*time.Millisecond, "the turn to reach the model")
	a.close()
	require.Eventually(t, func() bool { return s.agent.Aborts() == 1 }, testTimeout, 20*time.Millisecond, "the turn to be aborted on opencode")
	assert.Zero(t, s.agent.Queued())
}

// TestAGatewayRestartedMidTurnLeavesNoTurnOnOpencode: a gateway stopped mid-turn (SIGTERM)
// sent its abort on a context its stop had cancelled, and one killed (SIGKILL) could send
// none: either way the turn ran on in opencode (which does not stop a turn whose client went
// away), and the restarted gateway's next question on the conversation waited behind it (a
// stalled model's until its deadline). Now a stopping gateway aborts its turns, and a gateway
// that finds a conversation with a turn running aborts that turn before it asks.
func TestAGatewayRestartedMidTurnLeavesNoTurnOnOpencode(t *testing.T) {
	ctx := testContext(t)
	s := startFakeAgent(t)
	desk := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 5, Label: "desk"}}
	stalled := func(g *harness.Gateway) {
		t.Helper()
		a := newAsker(ctx, t, g, desk)
		a.ask(t, ctx, "stall")
		require.Eventually(t, func() bool { return s.agent.Running() == 1 }, testTimeout, 20*time.Millisecond, "the turn to reach the model")
	}

	g := s.gateway(t)
	stalled(g)
	require.NoError(t, g.Stop())
	assert.Equal(t, int64(1), s.agent.Aborts(), "the stopped gateway's turn was aborted on opencode before it exited")

	g = s.gateway(t)
	stalled(g)
	require.NoError(t, g.Kill())
	<-g.Exited()
	assert.Equal(t, int64(1), s.agent.Running(), "a killed gateway's turn runs on in opencode")
	assert.Equal(t, int64(1), s.agent.Aborts())

	g = s.gateway(t, "--ai-turn-deadline", "1h")
	a := newAsker(ctx, t, g, desk)
	ev := a.follow(t, ctx, a.ask(t, ctx, "hello"), nil)
	assert.Equal(t, "stop", last(ev).Reason, "answered, not held behind the killed gateway's turn")
	assert.Contains(t, g.Log(), "agent: a turn this gateway did not start still ran on the conversation; aborting it")
	assert.Equal(t, int64(2), s.agent.Aborts(), "the killed gateway's turn was aborted by the next")
	assert.Zero(t, s.agent.Queued(), "the question was never queued behind the old turn")
}

// TestAgentOfARecreatedAccount: `accounts remove alice` and `accounts add alice` (another
// person) through the running gateway: the new alice's computer 7 continued the removed
// alice's conversation with the agent. Now its first question deletes the removed account's
// conversations on opencode and starts a new one, which then continues as any other.
func TestAgentOfARecreatedAccount(t *testing.T) {
	ctx := testContext(t)
	s := startFakeAgent(t)
	dir := "--data-dir=" + t.TempDir()
	lastLine(ctx, t, "accounts", "add", "alice", dir)
	root := lastLine(ctx, t, "accounts", "add", "root", "--admin", dir)
	aliceCred := lastLine(ctx, t, "credentials", "add", "alice", dir)
	g := s.gateway(t, dir)
	url, admin := "--url="+g.URL(""), "--api-token="+root
	kitchen := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 7, Label: "kitchen"}}

	a := newAskerWith(ctx, t, g, kitchen, aliceCred)
	assert.Equal(t, "history my secret plan", textOf(a.follow(t, ctx, a.ask(t, ctx, "history my secret plan"), nil)))
	assert.Equal(t, "history my secret plan|history more", textOf(a.follow(t, ctx, a.ask(t, ctx, "history more"), nil)))

	_, errOut, code := runCLI(ctx, t, nil, "accounts", "remove", url, admin, "alice")
	require.Equal(t, 0, code, errOut)
	<-a.done // closed by the removal
	lastLine(ctx, t, "accounts", "add", "alice", url, admin)
	aliceCred = lastLine(ctx, t, "credentials", "add", "alice", url, admin)

	a = newAskerWith(ctx, t, g, kitchen, aliceCred)
	assert.Equal(t, "history hello", textOf(a.follow(t, ctx, a.ask(t, ctx, "history hello"), nil)),
		"the new alice's computer starts a new conversation")
	require.Len(t, s.agent.Sessions(), 1, "the removed alice's is deleted on opencode")
	assert.Equal(t, "trap-sandbox alice/7:kitchen main", s.agent.Sessions()[0].Title)
	assert.Equal(t, "history hello|history again", textOf(a.follow(t, ctx, a.ask(t, ctx, "history again"), nil)))
	assert.Contains(t, g.Log(), `msg="agent: an account of a removed account's name asked: the removed account's conversations were deleted on opencode" account=alice conversations=1`)
}

// TestAgentStartOrder: opencode and the gateway may start in either order. Opencode down at
// the first question: the turn fails at once with the probe's line, and the next question,
// once opencode is up, works. An instance of the session directory that opencode started
// while the gateway was down (its MCP connection failed, never retried): the gateway has it
// connect again, and the agent's tools work.
func TestAgentStartOrder(t *testing.T) {
	ctx := testContext(t)
	desk := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 5, Label: "desk", AllowFiles: harness.AllowFilesWrite}}

	t.Run("gateway first", func(t *testing.T) {
		addr, release := opencodefake.ReservePort(t) // down until the test listens there
		oc := opencodefake.New(opencodefake.Options{Password: opencodePassword})
		fake := oc.Agent(scriptedModel, aiModel)
		s := aiSetup{oc: &opencodefake.Server{URL: "http://" + addr}, dir: t.TempDir()}
		g := s.gateway(t)
		a := newAsker(ctx, t, g, desk)
		ev := a.follow(t, ctx, a.ask(t, ctx, "hello"), nil)
		errs := kinds(ev, "error")
		require.Len(t, errs, 1)
		assert.Equal(t, "ai_unavailable", errs[0].Code)
		assert.Equal(t, "the agent is unavailable: opencode at http://"+addr+": connection refused", errs[0].Message)
		require.NoError(t, g.WaitLog(ctx, `code=ai_unavailable error="the agent is unavailable: opencode at http://`+addr+`: connection refused"`),
			"the operator's log says why the turn failed")

		release()
		l, err := net.Listen("tcp", addr)
		require.NoError(t, err)
		srv := httptest.NewUnstartedServer(oc)
		srv.Listener.Close()
		srv.Listener = l
		srv.Start()
		t.Cleanup(srv.Close)
		t.Cleanup(oc.Close)
		a.follow(t, ctx, a.ask(t, ctx, "write 5:desk /first.lua x"), func(aiEvent) bool { return true })
		_, ok := desk.File("/first.lua")
		assert.True(t, ok, "the agent's tool reached the computer")
		assert.Equal(t, 1, fake.InstanceStarts(deskDir(s.dir)))
	})

	t.Run("opencode's instance first", func(t *testing.T) {
		first := startFakeAgent(t)
		addr, release := opencodefake.ReservePort(t)
		release() // the gateways below listen there
		port := strings.TrimPrefix(addr, "127.0.0.1:")
		listen := []string{"--listen", "127.0.0.1:" + port}
		g := first.gateway(t, listen...)
		a := newAsker(ctx, t, g, desk)
		a.follow(t, ctx, a.ask(t, ctx, "hello"), nil) // writes the computer's directory, with its pass
		require.NoError(t, g.Stop())

		// Another opencode starts the computer's instance now, while nothing serves /mcp: its
		// connection fails. It read the pass of the gateway that ran before.
		s := startFakeAgent(t)
		s.dir = first.dir
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.oc.URL+"/mcp?directory="+url.QueryEscape(deskDir(s.dir)), nil)
		require.NoError(t, err)
		req.SetBasicAuth(opencodefake.DefaultUsername, opencodePassword)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var status map[string]map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&status))
		resp.Body.Close()
		require.Equal(t, "failed", status["trap-sandbox"]["status"])

		g = s.gateway(t, listen...)
		a = newAsker(ctx, t, g, desk)
		ev := a.follow(t, ctx, a.ask(t, ctx, "write 5:desk /second.lua x"), func(aiEvent) bool { return true })
		_, ok := desk.File("/second.lua")
		assert.True(t, ok, "the agent's tool reached the computer with the pass kept across the restart: %+v", ev)
		assert.Equal(t, 1, s.agent.InstanceStarts(deskDir(s.dir)))
	})
}

// TestAgentInstanceWithoutTheMCPServer: opencode started the instance of a computer's
// directory before the gateway wrote its opencode.json (so it has no trap-sandbox server):
// the player reads who fixes it, without the host's directory; the operator's log names it.
func TestAgentInstanceWithoutTheMCPServer(t *testing.T) {
	ctx := testContext(t)
	s := startFakeAgent(t)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.oc.URL+"/mcp?directory="+url.QueryEscape(deskDir(s.dir)), nil)
	require.NoError(t, err)
	req.SetBasicAuth(opencodefake.DefaultUsername, opencodePassword)
	res, err := http.DefaultClient.Do(req) // the instance starts, and reads no opencode.json
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 1, s.agent.InstanceStarts(deskDir(s.dir)))

	g := s.gateway(t)
	a := newAsker(ctx, t, g, &harness.Daemon{Daemon: daemonfake.Daemon{ID: 5, Label: "desk"}})
	errs := kinds(a.follow(t, ctx, a.ask(t, ctx, "hello"), nil), "error")
	require.Len(t, errs, 1)
	assert.Equal(t, "ai_unavailable", errs[0].Code)
	assert.Equal(t, "the agent is unavailable: opencode has no trap-sandbox MCP server for this computer: its operator must restart opencode on the gateway's host",
		errs[0].Message, "the player reads no host path")
	require.NoError(t, g.WaitLog(ctx, `level=WARN msg="agent: turns fail: opencode failed (fix: the error and opencode's own log say why)" error="opencode has no trap-sandbox MCP server for `+deskDir(s.dir)+` (it read opencode.json`),
		"the operator's log names the directory")
}

// deskDir is computer 5:desk's directory (of account local) under the agent's directory.
func deskDir(root string) string { return root + "/computers/local/5_3adesk" }

// TestAgentUnknownModel: a model opencode does not know is a bare 500 whose reason is only on
// the event stream. The gateway's check of opencode's models finds it missing at start (its
// WARN names the model), and then refuses each question at once with probe_gateway's
// aiDetail, making no session on opencode. (The turn's "Model not found" line, for a model
// that goes missing between two checks: the agent package's TestWhichFailuresAreTheOperators.)
func TestAgentUnknownModel(t *testing.T) {
	ctx := testContext(t)
	s := startFakeAgent(t)
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--password", sandboxPassword,
		"--opencode-url", s.oc.URL, "--ai-model", "nope/x", "--ai-dir", s.dir},
		Env: []string{"OPENCODE_SERVER_PASSWORD=" + opencodePassword}})
	require.NoError(t, g.WaitLog(ctx, `msg="agent: computers' questions will fail: opencode has no model nope/x `),
		"the operator's log names the unknown model")
	a := newAsker(ctx, t, g, &harness.Daemon{Daemon: daemonfake.Daemon{ID: 5, Label: "desk"}})
	f := a.request(t, ctx, "ai.ask", map[string]any{"prompt": "hello"})
	requireErrorCode(t, f, "ai_unavailable")
	assert.Equal(t, "the agent is unavailable: opencode lacks the agent's model (--ai-model): its provider has no key there, or the name is wrong",
		f.Error.Message)
	assert.Empty(t, s.agent.Sessions(), "no session made on opencode")
}

// TestAgentEventStreamDropsMidTurn: opencode's event stream closes in the middle of a turn;
// the answer, which then comes only in the sync prompt's reply, reaches the player whole, and
// the next question streams again.
func TestAgentEventStreamDropsMidTurn(t *testing.T) {
	ctx := testContext(t)
	s := startFakeAgent(t)
	g := s.gateway(t)
	a := newAsker(ctx, t, g, &harness.Daemon{Daemon: daemonfake.Daemon{ID: 5, Label: "desk"}})
	ev := a.follow(t, ctx, a.ask(t, ctx, "drop"), nil)
	assert.Equal(t, "stop", last(ev).Reason)
	assert.Equal(t, "said while the stream was down", textOf(ev))
	ev = a.follow(t, ctx, a.ask(t, ctx, "hello"), nil)
	assert.Equal(t, "stop", last(ev).Reason)
	assert.Equal(t, "Hello from the agent (\u00e9 ?)", textOf(ev))
}

// TestAgentEventStreamDropsAfterSomeText: opencode's event stream closes in the middle of an
// answer whose first words the computer already has; what was said while the stream was down
// (the rest of that text, and a later step's text after a tool call) reaches the player when
// the turn ends, in order, nothing twice.
func TestAgentEventStreamDropsAfterSomeText(t *testing.T) {
	ctx := testContext(t)
	relayed := make(chan struct{})
	oc := opencodefake.Start(t, opencodefake.Options{Password: opencodePassword})
	s := aiSetup{oc: oc, agent: oc.Agent(func(tu *opencodefake.Turn) {
		p := tu.StartText()
		p.Delta("Before the drop, ")
		select {
		case <-relayed: // the computer polled these words
		case <-tu.Done():
			return
		}
		tu.DropStreams()
		p.Delta("after it.")
		p.End()
		r := tu.Tool("bash", map[string]any{"command": "id -un"}) // denied: the next step
		tu.Text(" Then ", r.State, ".")
	}, aiModel), dir: t.TempDir()}
	g := s.gateway(t)
	a := newAsker(ctx, t, g, &harness.Daemon{Daemon: daemonfake.Daemon{ID: 5, Label: "desk"}})
	turn := a.ask(t, ctx, "drop")
	text := ""
	for after := 0; text != "Before the drop, "; {
		f := a.request(t, ctx, "ai.poll", map[string]any{"turnId": turn, "after": after})
		var reply struct {
			Events []aiEvent `json:"events"`
		}
		requireOK(t, f)
		require.NoError(t, json.Unmarshal(f.Payload, &reply))
		for _, e := range reply.Events {
			require.NotEqual(t, "done", e.Kind, "the turn ended before the drop")
			after, text = e.Seq, text+e.Text
		}
	}
	close(relayed)
	ev := a.follow(t, ctx, turn, nil)
	assert.Equal(t, "stop", last(ev).Reason)
	assert.Equal(t, "Before the drop, after it. Then error.", textOf(ev))
}

// TestAgentAbortOvertakingItsPrompt: opencode forgets an abort of a session that is not busy
// yet, so an abort that reaches it before its prompt is lost; the gateway aborts again until
// the prompt's reply comes, and the conversation takes questions again.
func TestAgentAbortOvertakingItsPrompt(t *testing.T) {
	ctx := testContext(t)
	s := startFakeAgent(t)
	arrived := make(chan struct{})
	var once sync.Once
	s.agent.BeforePrompt = func() {
		once.Do(func() { close(arrived) })
		<-s.agent.AbortSeen()
	}
	g := s.gateway(t)
	a := newAsker(ctx, t, g, &harness.Daemon{Daemon: daemonfake.Daemon{ID: 5, Label: "desk"}})
	turn := a.ask(t, ctx, "stall")
	select {
	case <-arrived:
	case <-ctx.Done():
		t.Fatal("the prompt never reached opencode")
	}
	requireOK(t, a.request(t, ctx, "ai.abort", map[string]any{"turnId": turn}))
	assert.Equal(t, "aborted", last(a.follow(t, ctx, turn, nil)).Reason)
	require.Eventually(t, func() bool {
		f := a.request(t, ctx, "ai.ask", map[string]any{"prompt": "hello"})
		return f.OK != nil && *f.OK
	}, testTimeout, 50*time.Millisecond, "the conversation to take a question again")
	assert.GreaterOrEqual(t, s.agent.Aborts(), int64(2), "the abort was sent again")
	assert.Zero(t, s.agent.Queued())
}
