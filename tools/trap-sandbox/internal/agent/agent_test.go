package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
	"trap-sandbox/testkit/opencodefake"
)

func TestWireTextFollowsTheTextRule(t *testing.T) {
	assert.Equal(t, "caf\u00e9 ? ok", wireText("café ✓ ok"))
	assert.Equal(t, "a\u00ffb", wireText("a\xffb"), "a byte that is not UTF-8 stands for itself")
	assert.Equal(t, "emoji ?", wireText("emoji 😀"))
}

// TestTheAnswerShowsTypographyAsItsPlainTwins: a model writes ’ “ ” — … in prose all the
// time; by the text rule alone each reached the computer as '?' ("It?s ?quoted? ? yes?").
func TestTheAnswerShowsTypographyAsItsPlainTwins(t *testing.T) {
	tr := newTestTurn()
	tr.m, tr.tr = &Module{cfg: Config{AnswerCap: 64 << 10}, metrics: newMetrics(prometheus.NewRegistry())}, newTracker()
	tr.relayDelta("prt_1", "It’s “quoted” — yes… ")
	tr.relayDelta("prt_1", "café ☃")
	ev, _ := tr.poll(context.Background(), 0, 0)
	var text strings.Builder
	for _, e := range ev {
		text.WriteString(e.Text)
	}
	assert.Equal(t, "It's \"quoted\"\u00a0-- yes... caf\u00e9 ?", text.String(), "the dash keeps to the word before it")

	// A model's tokens carry the blank before a word, not after: " —" comes in one delta and
	// " yes" in the next, and the dash still keeps to the word before it.
	tr = newTestTurn()
	tr.m, tr.tr = &Module{cfg: Config{AnswerCap: 64 << 10}, metrics: newMetrics(prometheus.NewRegistry())}, newTracker()
	for _, delta := range []string{"“quoted”", " —", " yes", " –", " no"} {
		tr.relayDelta("prt_1", delta)
	}
	ev, _ = tr.poll(context.Background(), 0, 0)
	text.Reset()
	for _, e := range ev {
		text.WriteString(e.Text)
	}
	assert.Equal(t, "\"quoted\"\u00a0-- yes\u00a0- no", text.String(), "a dash streamed apart from the blank after it")
}

// TestAQuotedEuroSignInTheAnswerIsTheCharacter: a € is EUR in the answer's prose, but in a
// double-quoted string (code the model proposes, the gateway's warning for the character quoted
// back) it is the character, '?' as the computer has it, also when the quote came in an earlier
// delta of the part, or in the part's text the stream missed and the turn's end settles.
func TestAQuotedEuroSignInTheAnswerIsTheCharacter(t *testing.T) {
	tr := newTestTurn()
	tr.m, tr.tr = &Module{cfg: Config{AnswerCap: 64 << 10}, metrics: newMetrics(prometheus.NewRegistry())}, newTracker()
	for _, delta := range []string{"5 € each. ", "print(\"Preis: 5 ", "€\")", " -- 5 €\n"} {
		tr.relayDelta("prt_1", delta)
	}
	tr.relayDelta("prt_2", "€ \"€") // another part starts afresh
	tr.relayDelta("prt_3", "The tool said: \"")
	tr.tr.markGap()
	tr.settleText([]ocPart{
		{ID: "prt_1", Type: "text", Text: "5 € each. print(\"Preis: 5 €\") -- 5 €\n"},
		{ID: "prt_2", Type: "text", Text: "€ \"€"},
		{ID: "prt_3", Type: "text", Text: "The tool said: \"€\" (U+20AC) was sent as \"?\""},
	})
	ev, _ := tr.poll(context.Background(), 0, 0)
	var text strings.Builder
	for _, e := range ev {
		text.WriteString(e.Text)
	}
	assert.Equal(t, "5 EUR each. print(\"Preis: 5 ?\") -- 5 EUR\nEUR \"?The tool said: \"?\" (U+20AC) was sent as \"?\"", text.String())
}

// TestSessionTitles: the titles docs/ai.md gives, by which a restarted gateway finds a
// conversation again; an account's computer's names its account, so two accounts' 7:kitchen
// never share one.
func TestSessionTitles(t *testing.T) {
	assert.Equal(t, "trap-sandbox 7:kitchen main", sessionKey{callerKey{"local", "7:kitchen", 0}, "main"}.title())
	assert.Equal(t, "trap-sandbox alice/7:kitchen main", sessionKey{callerKey{"alice", "7:kitchen", 0}, "main"}.title())
	assert.NotEqual(t, sessionKey{callerKey{"bob", "7:kitchen", 0}, "main"}.title(), sessionKey{callerKey{"alice", "7:kitchen", 0}, "main"}.title())
}

func TestRulesDenyEverythingButTheComputerTools(t *testing.T) {
	rules := Rules(false)
	require.Equal(t, Rule{"*", "*", "deny"}, rules[0], "first the deny of everything, so later rules win")
	for _, r := range rules[1:] {
		assert.True(t, strings.HasPrefix(r.Permission, toolPrefix), "only trap-sandbox tools: %+v", r)
		assert.Equal(t, "ask", r.Action, "every call comes to the gateway: %+v", r)
		assert.NotEqual(t, toolPrefix+"list_computers", r.Permission)
	}
	host := Rules(true)
	assert.Equal(t, "allow", host[0].Action)
	assert.Contains(t, host, Rule{"question", "*", "deny"})
	assert.Contains(t, host, Rule{toolPrefix + "list_computers", "*", "deny"})
}

func TestJudgeAllowsOnlyTheAskingComputer(t *testing.T) {
	in := func(s string) json.RawMessage { return json.RawMessage(s) }
	desk := callerKey{account.Local, "5:desk", 0}
	v := judge("trap-sandbox_read_file", in(`{"traposId":"5:desk","path":"/a"}`), desk)
	assert.Equal(t, verdict{allow: true}, v)
	v = judge("trap-sandbox_write_file", in(`{"traposId":"5:desk","path":"/a","content":"x"}`), desk)
	assert.Equal(t, verdict{allow: true, confirm: ActionWrite}, v)
	assert.Equal(t, ActionDelete, judge("trap-sandbox_delete_file", in(`{"traposId":"5:desk"}`), desk).confirm)
	assert.Equal(t, ActionRun, judge("trap-sandbox_run_lua", in(`{"traposId":"5:desk"}`), desk).confirm)

	for name, c := range map[string]struct{ perm, input string }{
		"another computer": {"trap-sandbox_read_file", `{"traposId":"6:vault"}`},
		"no traposId":      {"trap-sandbox_read_file", `{"path":"/a"}`},
		"list_computers":   {"trap-sandbox_list_computers", `{}`},
		"a host tool":      {"bash", `{"command":"id"}`},
		"another server":   {"other_read_file", `{"traposId":"5:desk"}`},
	} {
		v := judge(c.perm, in(c.input), desk)
		assert.False(t, v.allow, name)
		assert.NotEmpty(t, v.message, "%s: a reject carries a message, so the turn goes on", name)
	}
	assert.False(t, judge("trap-sandbox_read_file", nil, desk).allow, "arguments never seen")
}

// TestJudgeReadsATraposIDAsTheToolsDo: the model's traposId with ü written as u and U+0308
// names the asking computer 7:küche, as the tool the call reaches reads it (MCP composes every
// traposId argument, cctext.ListedTraposID); refused, the model read "act only on computer
// 7:küche, not on 7:küche" and could not tell what to change.
func TestJudgeReadsATraposIDAsTheToolsDo(t *testing.T) {
	kitchen := callerKey{account.Local, "7:küche", 0}
	v := judge("trap-sandbox_read_file", json.RawMessage(`{"traposId":"7:ku\u0308che","path":"/a"}`), kitchen)
	assert.Equal(t, verdict{allow: true}, v)
	assert.False(t, judge("trap-sandbox_read_file", json.RawMessage(`{"traposId":"7:kuche","path":"/a"}`), kitchen).allow)

	// Its shown form, as a refusal names it (the label's trailing space as \x20), is the asker
	// too, as the tool reads it: refused, the model was told to act only on the computer it named.
	spaced := callerKey{account.Local, "7:kitchen ", 0}
	assert.Equal(t, verdict{allow: true}, judge("trap-sandbox_read_file", json.RawMessage(`{"traposId":"7:kitchen\\x20","path":"/a"}`), spaced))
	refused := judge("trap-sandbox_read_file", json.RawMessage(`{"traposId":"7:kitchen","path":"/a"}`), spaced)
	assert.Equal(t, `Refused: you may act only on computer 7:kitchen\x20, the one whose player asked, not on 7:kitchen.`, refused.message)
}

func TestDescribe(t *testing.T) {
	d, n := describe("write_file", json.RawMessage(`{"path":"/door.lua","content":"héllo"}`))
	assert.Equal(t, "/door.lua", d)
	require.NotNil(t, n)
	assert.Equal(t, 5, *n, "the bytes the computer stores: é is one (E9), not UTF-8's two")
	_, n = describe("write_file", json.RawMessage(`{"path":"/door.lua","content":"print('open') -- küche — ok\n"}`))
	require.NotNil(t, n)
	assert.Equal(t, 28, *n, "ü is one byte, — the one byte ?")
	d, n = describe("write_file", json.RawMessage(`{"path":"/b","contentBase64":"AAEC"}`))
	assert.Equal(t, "/b", d)
	assert.Equal(t, 3, *n)
	d, _ = describe("move_file", json.RawMessage(`{"from":"/a","to":"/b"}`))
	assert.Equal(t, "/a -> /b", d)
	d, _ = describe("run_lua", json.RawMessage(`{"code":"for i=1,3 do\n  print(i)\nend `+strings.Repeat("x", 100)+`"}`))
	assert.LessOrEqual(t, len(d), detailMax)
	assert.True(t, strings.HasPrefix(d, "for i=1,3 do print(i) end"), "one line: %q", d)
}

func newTestTurn() *turn {
	return newTurn("turn_t", callerKey{"local", "5:desk", 0}, &session{}, context.Background())
}

// TestTheDeadlineLineFitsALine: the line a player reads when a turn passes its deadline is
// one line of a computer naming the fix (The agent did not finish in 3 min; the turn was
// stopped. took 59 columns and named none).
func TestTheDeadlineLineFitsALine(t *testing.T) {
	tu := newTestTurn()
	tu.m = &Module{cfg: Config{TurnDeadline: DefaultTurnDeadline}}
	end := stopped(tu, errDeadline)
	require.NotNil(t, end.event)
	assert.Equal(t, "The agent did not finish in 3 min: ask again later", end.event.Message)
	fitsALine(t, end.event.Message)
}

// TestPlayerReasonDropsOpencodesRejectWords: opencode 1.18.33 writes a rejected call's error
// as its own words, then the gateway's message; the player reads the message only.
func TestPlayerReasonDropsOpencodesRejectWords(t *testing.T) {
	assert.Equal(t, "The player refused this write (write_file /door.lua).",
		playerReason("The user rejected permission to use this specific tool call with the following feedback: The player refused this write (write_file /door.lua)."))
	assert.Equal(t, "MCP error -32602: bad path", playerReason("MCP error -32602: bad path"))
}

func TestTextIsSplitCutAndPaged(t *testing.T) {
	tr := newTestTurn()
	assert.True(t, tr.addText("abc", 64<<10), "the first text")
	assert.False(t, tr.addText("def", 64<<10))
	ev, done := tr.poll(context.Background(), 0, 0)
	require.Len(t, ev, 1, "undelivered text is merged")
	assert.Equal(t, "abcdef", ev[0].Text)
	assert.False(t, done)

	tr.addText("g", 64<<10)
	ev, _ = tr.poll(context.Background(), 1, 0)
	require.Len(t, ev, 1)
	assert.Equal(t, Event{Seq: 2, Kind: KindText, Text: "g"}, ev[0], "delivered text is never changed")

	tr = newTestTurn()
	big := strings.Repeat("é", 100<<10) // 2 bytes each
	tr.addText(big, 64<<10)
	tr.add(Event{Kind: KindDone, Reason: ReasonStop})
	var text strings.Builder
	after, cuts := 0, 0
	for {
		ev, done := tr.poll(context.Background(), after, 0)
		size := 0
		for _, e := range ev {
			require.Equal(t, after+1, e.Seq)
			after = e.Seq
			assert.LessOrEqual(t, len(e.Text), textEventBytes)
			assert.True(t, strings.HasPrefix(e.Text, "é") || e.Text == "", "split on whole characters")
			text.WriteString(e.Text)
			size += len(e.Text)
			if e.Kind == KindCut {
				cuts++
				assert.Equal(t, "over 64 KiB; ask for less", e.Message)
				fitsALine(t, "(The answer was cut: "+e.Message+")") // as the ai program shows it
			}
		}
		assert.LessOrEqual(t, size, pollTextBytes)
		if done {
			break
		}
	}
	assert.Equal(t, 64<<10, text.Len())
	assert.Equal(t, 1, cuts)
	ev, done = tr.poll(context.Background(), after, 0)
	assert.Empty(t, ev)
	assert.True(t, done, "a late poll after done says done")
}

func TestPollWaitsForAnEvent(t *testing.T) {
	tr := newTestTurn()
	got := make(chan []Event)
	go func() {
		ev, _ := tr.poll(context.Background(), 0, time.Minute)
		got <- ev
	}()
	tr.add(Event{Kind: KindRetry, Message: "again", Attempt: 1})
	ev := <-got
	require.Len(t, ev, 1)
	assert.Equal(t, KindRetry, ev[0].Kind)
}

func TestWriteSessionDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agent")
	require.NoError(t, WriteSessionDir(dir, "p/m", "http://127.0.0.1:4444/mcp", "tok", Rules(false)))
	info, err := os.Stat(filepath.Join(dir, ConfigFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "it holds the API token")
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	require.NoError(t, err)
	var cfg struct {
		Model string `json:"model"`
		MCP   map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
			OAuth   bool              `json:"oauth"`
		} `json:"mcp"`
		Permission map[string]string `json:"permission"`
	}
	require.NoError(t, json.Unmarshal(data, &cfg))
	assert.Equal(t, "p/m", cfg.Model)
	assert.Equal(t, "remote", cfg.MCP[MCPName].Type)
	assert.Equal(t, "Bearer tok", cfg.MCP[MCPName].Headers["Authorization"])
	assert.Equal(t, "deny", cfg.Permission["*"])
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")
	assert.Error(t, WriteSessionDir("relative", "p/m", "u", "", nil))
}

// TestEachComputerHasItsPlace: each computer's conversations live in a directory of its own
// whose opencode.json sends its own pass to /mcp; the pass opens that computer's account,
// limited to that computer; a restarted gateway keeps the pass (a running opencode instance
// keeps the configuration it read), and the agent's own directory carries no token at all.
func TestEachComputerHasItsPlace(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, ConfigFile), []byte(`{"mcp":{"trap-sandbox":{"headers":{"Authorization":"Bearer the-old-api-token"}}}}`), 0o600))
	start := func() (*Module, *account.Passes) {
		passes := account.NewPasses()
		m, err := New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: root, MCPURL: "http://127.0.0.1:2/mcp", Passes: passes},
			slog.New(slog.DiscardHandler), nil)
		require.NoError(t, err)
		t.Cleanup(m.Close)
		return m, passes
	}
	m, passes := start()
	data, err := os.ReadFile(filepath.Join(root, ConfigFile))
	require.NoError(t, err)
	assert.NotContains(t, string(data), "the-old-api-token", "the agent's own directory connects to nothing")
	assert.NotContains(t, string(data), `"mcp"`)

	alice, err := m.placeOf(t.Context(), callerKey{"alice", "5:desk", 0})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "computers", "alice", "5_3adesk"), alice.dir)
	info, err := os.Stat(filepath.Join(alice.dir, ConfigFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	assert.Equal(t, alice.pass, readPass(alice.dir))
	c, ok := passes.Caller(alice.pass)
	require.True(t, ok)
	assert.Equal(t, account.Caller{Account: "alice", Only: "5:desk"}, c)
	again, err := m.placeOf(t.Context(), callerKey{"alice", "5:desk", 0})
	require.NoError(t, err)
	assert.Same(t, alice, again)

	local, err := m.placeOf(t.Context(), callerKey{account.Local, "5:desk", 0})
	require.NoError(t, err)
	assert.NotEqual(t, alice.dir, local.dir)
	assert.NotEqual(t, alice.pass, local.pass)

	m2, passes2 := start()
	_, ok = passes2.Caller(alice.pass)
	assert.False(t, ok, "a pass opens nothing before its computer asks this gateway")
	after, err := m2.placeOf(t.Context(), callerKey{"alice", "5:desk", 0})
	require.NoError(t, err)
	assert.Equal(t, alice.pass, after.pass, "kept across a restart")
	c, ok = passes2.Caller(alice.pass)
	require.True(t, ok)
	assert.Equal(t, "5:desk", c.Only)
}

func TestPathName(t *testing.T) {
	assert.Equal(t, "7_3adesk", pathName("7:desk"))
	assert.Equal(t, "7_3a_4bitchen", pathName("7:Kitchen"), "no two names differ only in case")
	assert.Equal(t, "_2e_2e", pathName(".."))
	assert.Equal(t, "a_2fb_5cc_25", pathName(`a/b\c%`))
	assert.Equal(t, "_", pathName(""))
	assert.NotEqual(t, pathName("_3a"), pathName(":"))

	// 85 escaped bytes are 255: the longest name kept as it is (an earlier gateway made it).
	assert.Equal(t, strings.Repeat("_2e", 85), pathName(strings.Repeat(".", 85)))
	long := "7:" + strings.Repeat("é", 127) // the longest traposId a hello may say (256 bytes)
	name := pathName(long)
	assert.LessOrEqual(t, len(name), maxPathName)
	assert.Regexp(t, `^7_3a(_c3_a9)+(_c3)?_h[0-9a-f]{64}$`, name, "cut between escapes, and named by its hash")
	assert.NotEqual(t, name, pathName(long[:len(long)-2]+"e"), "two long names that share the cut part")
	assert.Equal(t, name, pathName(long), "the same name every time (a restart finds the directory)")
}

// TestAPollForNoTurnIsUnknown: the ai command's question before its prompt, ai.poll of turn
// "", is answered unknown_turn at once by an agent that is on, and touches nothing.
func TestAPollForNoTurnIsUnknown(t *testing.T) {
	f := startFakeAgent(t)
	m := f.module(t)
	from := protocol.Requester{AccountID: "alice", TraposID: "7:desk", AccountCreated: aliceCreated}
	_, err := m.handlePoll(context.Background(), from, json.RawMessage(`{"turnId":"","after":0,"waitMs":0}`))
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, CodeUnknownTurn, pe.Code)
	assert.Empty(t, m.Running())
}

// TestAComputerWithALongLabelAsks: a traposId of 256 bytes (a name tag's label of accented
// letters) escapes to more than a file's name may have; its computer's every question
// answered "the agent is unavailable: the gateway cannot prepare this computer's directory".
func TestAComputerWithALongLabelAsks(t *testing.T) {
	f := startFakeAgent(t)
	m := f.module(t)
	from := protocol.Requester{AccountID: "alice", TraposID: "7:" + strings.Repeat("é", 127), AccountCreated: aliceCreated}
	require.Equal(t, ReasonStop, ask(t, m, from, "one"))
	m.Close()
	m = f.module(t) // a gateway restart finds the conversation again
	require.Equal(t, ReasonStop, ask(t, m, from, "two"))
	assert.Equal(t, []string{"trap-sandbox alice/" + from.TraposID + " main: one, two"}, f.conversations())
}

func TestOffWithoutAModel(t *testing.T) {
	var logs testkit.SyncBuffer
	m, err := New(Config{}, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	require.NoError(t, err)
	defer m.Close()
	_, err = m.handleAsk(context.Background(), protocol.Requester{TraposID: "5:desk"}, json.RawMessage(`{"prompt":"hi"}`))
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, CodeAIDisabled, pe.Code)
	assert.Equal(t, "the agent is off: its operator must set --ai-model", pe.Message)
	fitsALine(t, pe.Message) // it took three lines
	assert.Equal(t, 1, strings.Count(logs.String(), "agent: off"))
	// Whatever the payload: the ai command asks for a turn that cannot exist before its
	// prompt (ai_disabled at once; an agent that is on answers unknown_turn,
	// TestAPollForNoTurnIsUnknown).
	_, err = m.handlePoll(context.Background(), protocol.Requester{TraposID: "5:desk"}, json.RawMessage(`{"turnId":"","after":0,"waitMs":0}`))
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, CodeAIDisabled, pe.Code)

	_, err = New(Config{Model: "nomodel"}, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	assert.ErrorContains(t, err, "PROVIDER/MODEL")

	// A refused opencode URL never repeats its password (the error is printed at start).
	for _, bad := range []string{"http://u:secretpw@", "ftp://u:secretpw@host:1", "http://u:secret pw@host:1"} {
		_, err = New(Config{Model: "p/m", OpencodeURL: bad, Dir: t.TempDir(), MCPURL: "http://127.0.0.1:2/mcp"},
			slog.New(slog.DiscardHandler), nil)
		require.ErrorContains(t, err, "give http(s)://host:port", bad)
		assert.NotContains(t, err.Error(), "secret", bad)
	}

	// A --ai-mcp-url opencode cannot use is refused at start, not at every question.
	for _, bad := range []string{"notaurl", "127.0.0.1:4444/mcp", "ws://127.0.0.1:4444/mcp"} {
		_, err = New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: t.TempDir(), MCPURL: bad},
			slog.New(slog.DiscardHandler), nil)
		assert.ErrorContains(t, err, `--ai-mcp-url (SANDBOX_AI_MCP_URL) "`+bad+`": give the gateway's /mcp as opencode reaches it`, bad)
	}
	// Nor does a --ai-mcp-url's password show, refused or taken: it was in the "agent: on" line.
	for _, bad := range []string{"ws://u:secretpw@127.0.0.1:4444/mcp", "http://u:secret pw@host:1/mcp"} {
		_, err = New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: t.TempDir(), MCPURL: bad},
			slog.New(slog.DiscardHandler), nil)
		require.ErrorContains(t, err, "give the gateway's /mcp as opencode reaches it", bad)
		assert.NotContains(t, err.Error(), "secret", bad)
	}
	var onLine testkit.SyncBuffer
	m, err = New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: t.TempDir(), MCPURL: "http://proxy:secretpw@127.0.0.1:2/mcp"},
		slog.New(slog.NewTextHandler(&onLine, nil)), nil)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	assert.Contains(t, onLine.String(), "mcp=http://proxy:xxxxx@127.0.0.1:2/mcp")
	assert.NotContains(t, onLine.String(), "secretpw")
}

// fitsALine asserts a message a player reads is one line of a 51-column computer.
func fitsALine(t *testing.T, message string) {
	t.Helper()
	assert.LessOrEqual(t, len(message), 51, "one line of a computer: %q", message)
	assert.NotContains(t, message, "\n")
}

// TestBusyTellsThePlayerHowToStopTheTurn: a question or a reset while a turn runs names the
// keys a player has (Q, Ctrl-T), in one line (it took three, and named the request a program
// sends, ai.abort); a program's own conversation is named, with that request.
func TestBusyTellsThePlayerHowToStopTheTurn(t *testing.T) {
	m, err := New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: t.TempDir(), MCPURL: "http://127.0.0.1:2/mcp",
		TurnDeadline: time.Hour}, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer m.Close()
	from := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	caller := callerOf(from)
	pl, err := m.placeOf(t.Context(), caller)
	require.NoError(t, err)
	m.mu.Lock()
	s := m.sessionLocked(sessionKey{caller, DefaultSession}, pl)
	s.busy = newTurn("turn_running", caller, s, context.Background())
	door := m.sessionLocked(sessionKey{caller, "door"}, pl)
	door.busy = newTurn("turn_door", caller, door, context.Background())
	m.mu.Unlock()
	message := func(err error) string {
		t.Helper()
		var pe *protocol.Error
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, protocol.CodeBusy, pe.Code)
		return pe.Message
	}
	_, err = m.handleAsk(context.Background(), from, json.RawMessage(`{"prompt":"hi"}`))
	assert.Equal(t, "the agent is busy here: wait or stop it (Q, Ctrl-T)", message(err))
	fitsALine(t, message(err))
	_, err = m.handleReset(context.Background(), from, json.RawMessage(`{}`))
	assert.Equal(t, "the agent is busy here: stop it (Q), then reset", message(err))
	fitsALine(t, message(err))
	_, err = m.handleAsk(context.Background(), from, json.RawMessage(`{"prompt":"hi","session":"door"}`))
	assert.Equal(t, `the agent is busy in session "door": wait or stop it (ai.abort)`, message(err))
	_, err = m.handleReset(context.Background(), from, json.RawMessage(`{"session":"door"}`))
	assert.Equal(t, `the agent is busy in session "door": stop it (ai.abort), then reset`, message(err))

	m.mu.Lock()
	s.busy.done = true // answered, opencode not stopped yet
	m.mu.Unlock()
	_, err = m.handleAsk(context.Background(), from, json.RawMessage(`{"prompt":"hi"}`))
	assert.Equal(t, "the last answer is still stopping: ask in a moment", message(err))
	fitsALine(t, message(err))
}

// TestAStoppedTurnOpencodeHasNotStoppedYetIsNoTurnToStop: the player pressed Q (ai.abort) and
// read "Stopped: the turn was aborted (Q)", but opencode had not answered the abort yet (it
// hung: played with opencode 1.18.33 stopped by SIGSTOP, some 30 s). The next question read
// "the agent is busy here: wait or stop it (Q, Ctrl-T)", a turn the player had just stopped
// and could not stop again, and ai --reset "stop it (Q), then reset". Both say now that the
// last answer is still stopping, as they did only once the turn's done event had come.
func TestAStoppedTurnOpencodeHasNotStoppedYetIsNoTurnToStop(t *testing.T) {
	m, err := New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: t.TempDir(), MCPURL: "http://127.0.0.1:2/mcp",
		TurnDeadline: time.Hour}, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer m.Close()
	from := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	caller := callerOf(from)
	pl, err := m.placeOf(t.Context(), caller)
	require.NoError(t, err)
	m.mu.Lock()
	s := m.sessionLocked(sessionKey{caller, DefaultSession}, pl)
	running := newTurn("turn_running", caller, s, context.Background())
	s.busy = running
	m.mu.Unlock()
	message := func(err error) string {
		t.Helper()
		var pe *protocol.Error
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, protocol.CodeBusy, pe.Code)
		return pe.Message
	}
	for _, cause := range []error{errAborted, errDeadline, errDisconnected} {
		running.cancel(cause) // stopped; the turn's goroutine still waits for opencode
		_, err = m.handleAsk(t.Context(), from, json.RawMessage(`{"prompt":"hi"}`))
		assert.Equal(t, "the last answer is still stopping: ask in a moment", message(err), "%v", cause)
		_, err = m.handleReset(t.Context(), from, json.RawMessage(`{}`))
		assert.Equal(t, "the last answer is still stopping: reset soon", message(err), "%v", cause)
		fitsALine(t, message(err))
		running = newTurn("turn_running", caller, s, context.Background())
		m.mu.Lock()
		s.busy = running
		m.mu.Unlock()
	}
}

func TestAskValidatesAndRateLimits(t *testing.T) {
	var logs testkit.SyncBuffer
	m, err := New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: t.TempDir(), MCPURL: "http://127.0.0.1:2/mcp",
		RateBurst: 2, RateEvery: time.Hour, TurnDeadline: time.Hour}, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	require.NoError(t, err)
	defer m.Close()
	ask := func(caller, payload string) *protocol.Error {
		_, err := m.handleAsk(context.Background(), protocol.Requester{AccountID: "local", TraposID: caller}, json.RawMessage(payload))
		if err == nil {
			return nil
		}
		var pe *protocol.Error
		require.ErrorAs(t, err, &pe)
		return pe
	}
	for payload, want := range map[string]string{
		`{}`:              "needs a prompt",
		`{"prompt":"  "}`: "needs a prompt",
		`{"prompt":"` + strings.Repeat("x", 4097) + `"}`: "the limit is 4096",
		`{"prompt":"hi","session":"Bad Name"}`:           "session must be",
		`{"prompt":"hi","kind":"robot"}`:                 "kind must be",
		`{"prompt":"hi","screen":{"width":0}}`:           "screen must be",
		// A field of the wrong kind is named in the protocol's words, not Go's.
		`{"prompt":5}`: `ai.ask's payload: "prompt" must be a string (got a number)`,
		`{"prompt":"hi","screen":{"width":"wide"}}`: `ai.ask's payload: "screen.width" must be a whole number (got a string)`,
	} {
		pe := ask("5:desk", payload)
		require.NotNil(t, pe, payload)
		assert.Equal(t, protocol.CodeBadPayload, pe.Code, payload)
		assert.Contains(t, pe.Message, want, payload)
		assert.NotContains(t, pe.Message, "Go struct", payload)
	}
	_, err = m.handleReset(context.Background(), protocol.Requester{AccountID: "local", TraposID: "5:desk"}, json.RawMessage(`{"session":5}`))
	assert.EqualError(t, err, `bad_payload: ai.reset's payload: "session" must be a string (got a number)`)
	// Two sessions within the burst, the third question is refused: opencode is down here,
	// so the turns end at once with ai_unavailable, and the session is free again.
	require.Nil(t, ask("5:desk", `{"prompt":"hi","session":"a"}`))
	require.Nil(t, ask("5:desk", `{"prompt":"hi","session":"b"}`))
	pe := ask("5:desk", `{"prompt":"hi","session":"c"}`)
	require.NotNil(t, pe)
	assert.Equal(t, protocol.CodeBusy, pe.Code)
	assert.Equal(t, "too many questions from here: ask again in 3600 s", pe.Message)
	fitsALine(t, pe.Message)
	assert.Nil(t, ask("6:vault", `{"prompt":"hi"}`), "another computer has its own limit")
	assert.NotContains(t, logs.String(), `"hi"`)

	// The limit is in CC bytes, as the computer counts them: é is one byte there (U+00E9 on
	// the wire), though two in Go's UTF-8.
	assert.Nil(t, ask("7:latin", `{"prompt":"`+strings.Repeat("é", MaxPromptBytes)+`"}`), "4096 CC bytes")
	pe = ask("7:latin", `{"prompt":"`+strings.Repeat("é", MaxPromptBytes+1)+`"}`)
	require.NotNil(t, pe)
	assert.Equal(t, "the prompt is 4097 bytes; the limit is 4096", pe.Message)
}

// TestRefusedQuestionsAndResetsMakeNoConversation: a conversation was made for a question's
// session before the computer's rate was checked, so one asking under ever new session names
// past its rate (or resetting them) left a record for each, kept while it went on asking.
func TestRefusedQuestionsAndResetsMakeNoConversation(t *testing.T) {
	m, err := New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: t.TempDir(), MCPURL: "http://127.0.0.1:2/mcp",
		RateBurst: 1, RateEvery: time.Hour, TurnDeadline: time.Hour}, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer m.Close()
	from := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	_, err = m.handleAsk(t.Context(), from, json.RawMessage(`{"prompt":"hi"}`))
	require.NoError(t, err)
	sessions := func() int {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.sessions)
	}
	require.Equal(t, 1, sessions())
	for i := range 50 {
		_, err := m.handleAsk(t.Context(), from, json.RawMessage(fmt.Sprintf(`{"prompt":"hi","session":"s%d"}`, i)))
		require.ErrorContains(t, err, "too many questions from here")
		_, err = m.handleReset(t.Context(), from, json.RawMessage(fmt.Sprintf(`{"session":"r%d"}`, i)))
		require.ErrorContains(t, err, "too many resets and questions from here: reset again in 3600 s")
	}
	assert.Equal(t, 1, sessions())
}

// TestAskScreenIsCCs: the screen an ai.ask reports is bounded as a screen.update's, by CC:
// Tweaked's largest terminal (protocol.MaxScreenSide, 255 each way), and the refusal names
// that range: a size no computer has (1000×1000 passed before) is told to no model.
func TestAskScreenIsCCs(t *testing.T) {
	m, err := New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: t.TempDir(), MCPURL: "http://127.0.0.1:2/mcp",
		TurnDeadline: time.Hour}, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer m.Close()
	ask := func(caller string, width, height int) error {
		_, err := m.handleAsk(t.Context(), protocol.Requester{AccountID: "local", TraposID: caller},
			json.RawMessage(fmt.Sprintf(`{"prompt":"hi","screen":{"width":%d,"height":%d}}`, width, height)))
		return err
	}
	for _, size := range [][2]int{{256, 19}, {51, 256}, {1000, 1000}, {0, 19}, {51, -1}} {
		err := ask("5:desk", size[0], size[1])
		var pe *protocol.Error
		require.ErrorAs(t, err, &pe, size)
		assert.Equal(t, protocol.CodeBadPayload, pe.Code, size)
		assert.Equal(t, fmt.Sprintf("screen must be {width, height}, each 1 to 255 (CC's largest terminal), not %d×%d", size[0], size[1]),
			pe.Message, size)
	}
	// opencode is down here: a question taken ends at once with ai_unavailable.
	assert.NoError(t, ask("6:wall", protocol.MaxScreenSide, protocol.MaxScreenSide), "CC's largest terminal")
	assert.NoError(t, ask("7:pocket", 26, 20))
}

// TestConfirmCarriesTheRequestAndTheComputersRefusal: a confirm event names the request the
// change will be (type and paths, never the content), so the computer checks its own
// settings first; a refusal it answers by itself (ai.approve with a reason) reaches the
// agent as the computer's forbidden, not as a player's no.
func TestConfirmCarriesTheRequestAndTheComputersRefusal(t *testing.T) {
	m, err := New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: t.TempDir(), MCPURL: "http://127.0.0.1:2/mcp"},
		slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer m.Close()
	tr := newTestTurn()
	m.turns[tr.id] = tr
	from := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	approve := func(payload string) error {
		_, err := m.handleApprove(context.Background(), from, json.RawMessage(payload))
		return err
	}
	answered := map[string]bool{}
	for _, c := range []struct {
		tool, input string
		want        ConfirmRequest
		answer      string
		verdict     string
	}{
		{"write_file", `{"traposId":"5:desk","path":"/startup.lua","content":"secret code"}`,
			ConfirmRequest{Type: "fs.write", Payload: map[string]string{"path": "/startup.lua"}},
			`"allow":false,"reason":"fs.write needs sandbox.allow_files write (it is none)\nsecond line"`,
			"forbidden: fs.write needs sandbox.allow_files write (it is none)"},
		{"move_file", `{"traposId":"5:desk","from":"/a","to":"/b"}`,
			ConfirmRequest{Type: "fs.move", Payload: map[string]string{"from": "/a", "to": "/b"}}, `"allow":true`, ""},
		// Paths by the path rule, as the tool reads them: the computer checks the file the
		// call changes (\x2e is '.', é is the byte E9), not a name CC would read as /startup/x2elua.
		{"write_file", `{"traposId":"5:desk","path":"/startup\\x2elua","content":"x"}`,
			ConfirmRequest{Type: "fs.write", Payload: map[string]string{"path": "/startup.lua"}}, `"allow":true`, ""},
		{"move_file", `{"traposId":"5:desk","from":"/\\xe9","to":"/é2"}`,
			ConfirmRequest{Type: "fs.move", Payload: map[string]string{"from": "/\u00e9", "to": "/\u00e92"}}, `"allow":true`, ""},
		{"run_lua", `{"traposId":"5:desk","code":"os.shutdown()"}`,
			ConfirmRequest{Type: "lua.exec", Payload: map[string]string{}}, `"allow":false`, "The player refused this run"},
	} {
		got := make(chan verdict, 1)
		go func() { got <- m.confirm(tr, toolPrefix+c.tool, []byte(c.input), agentTools[c.tool]) }()
		var ev Event
		require.Eventually(t, func() bool {
			events, _ := tr.poll(context.Background(), 0, 0)
			for _, e := range events {
				if e.Kind == KindConfirm && e.Tool == c.tool && !answered[e.ConfirmID] {
					answered[e.ConfirmID] = true
					ev = e
					return true
				}
			}
			return false
		}, 5*time.Second, time.Millisecond)
		require.NotNil(t, ev.Request, c.tool)
		assert.Equal(t, c.want, *ev.Request, c.tool)
		if p, ok := c.want.Payload["path"]; ok {
			assert.Equal(t, p, ev.Detail, "%s: the player is shown the file it changes", c.tool)
		}
		require.NoError(t, approve(`{"turnId":"turn_t","confirmId":"`+ev.ConfirmID+`",`+c.answer+`}`))
		v := <-got
		assert.Equal(t, c.verdict == "", v.allow, c.tool)
		if c.verdict != "" {
			assert.True(t, strings.HasPrefix(v.message, c.verdict), "%s: %q", c.tool, v.message)
		}
		assert.NotContains(t, v.message, "second line")
		if strings.HasPrefix(c.verdict, "forbidden") {
			// whose refusal it is: opencode writes "The user rejected permission" before it
			assert.Equal(t, c.verdict+". "+settingRefused, v.message)
		}
	}
	// A path the tool would refuse (a character CC cannot hold) is refused at once with the
	// tool's bad_payload: the player is not asked about a change that cannot happen.
	got := make(chan verdict, 1)
	go func() {
		got <- m.confirm(tr, toolPrefix+"write_file", []byte(`{"traposId":"5:desk","path":"/日.lua","content":"x"}`), ActionWrite)
	}()
	var v verdict
	require.Eventually(t, func() bool {
		select {
		case v = <-got:
			return true
		default:
		}
		events, _ := tr.poll(context.Background(), 0, 0)
		for _, e := range events {
			if e.Kind == KindConfirm && e.Detail == "/?.lua" { // without the check, asked as '?'
				t.Errorf("the player was asked about %q", e.Detail)
				_ = approve(`{"turnId":"turn_t","confirmId":"` + e.ConfirmID + `","allow":true}`)
			}
		}
		return false
	}, 5*time.Second, time.Millisecond)
	assert.False(t, v.allow)
	assert.True(t, strings.HasPrefix(v.message, "bad_payload: \"日\" (U+65E5)"), v.message)
	err = approve(`{"turnId":"turn_t","confirmId":"x","allow":false,"reason":"` + strings.Repeat("x", 1025) + `"}`)
	assert.ErrorContains(t, err, "the limit is 1024")
	// In CC bytes: 1024 é is within it (the confirmation is unknown, not the reason too long).
	err = approve(`{"turnId":"turn_t","confirmId":"x","allow":false,"reason":"` + strings.Repeat("é", 1024) + `"}`)
	assert.ErrorContains(t, err, `no confirmation "x" waits`)
}

// TestARunIsPutToThePlayerWhole: a run whose code the one-line detail cuts (or whose lines it
// joins) carries the whole code, so the player approves what they can read; a short one-line
// run needs no more than its detail; code too long to read is refused without asking.
func TestARunIsPutToThePlayerWhole(t *testing.T) {
	m, err := New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: t.TempDir(), MCPURL: "http://127.0.0.1:2/mcp"},
		slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer m.Close()
	hidden := "print('hello')\n" + strings.Repeat("-- padding\n", 10) + "fs.delete('/startup.lua') -- küche"
	for _, c := range []struct{ tool, input, full string }{
		{"run_lua", `{"traposId":"5:desk","code":` + strconv.Quote(hidden) + `}`, hidden},
		{"run_lua", `{"traposId":"5:desk","code":"print(1)\nprint(2)"}`, "print(1)\nprint(2)"},
		{"run_program", `{"traposId":"5:desk","command":"door open"}`, ""},
		{"run_program", `{"traposId":"5:desk","command":"` + strings.Repeat("x ", 40) + `rm /startup.lua"}`, strings.Repeat("x ", 40) + "rm /startup.lua"},
	} {
		tr := newTestTurn()
		m.turns[tr.id] = tr
		got := make(chan verdict, 1)
		go func() { got <- m.confirm(tr, toolPrefix+c.tool, []byte(c.input), agentTools[c.tool]) }()
		var ev Event
		require.Eventually(t, func() bool {
			events, _ := tr.poll(context.Background(), 0, 0)
			if len(events) > 0 {
				ev = events[0]
			}
			return len(events) > 0
		}, 5*time.Second, time.Millisecond)
		assert.Equal(t, KindConfirm, ev.Kind)
		assert.Equal(t, wireText(c.full), ev.Full, c.input)
		assert.LessOrEqual(t, len(ev.Detail), detailMax)
		require.True(t, tr.answerConfirm(ev.ConfirmID, confirmAnswer{allow: true}))
		assert.True(t, (<-got).allow)
	}

	tr := newTestTurn()
	v := m.confirm(tr, toolPrefix+"run_lua", []byte(`{"traposId":"5:desk","code":"`+strings.Repeat("x", fullMax+1)+`"}`), "run")
	assert.False(t, v.allow)
	assert.Equal(t, "This run's code is 4097 bytes: the player is shown at most 4096 to approve, so it was not put to them. Send a shorter one.", v.message)
	events, _ := tr.poll(context.Background(), 0, 0)
	assert.Empty(t, events, "nothing was put to the player")
}

// TestAWriteIsPutToThePlayerWithItsContent: a write's confirm carries the bytes it stores
// (the text rule for content, base64 decoded, every byte value; an empty file as ""), so the
// player reads what they approve; one over contentMax is still put to them, without it, and
// the biggest content's poll reply stays a frame CC takes (128 KiB) however it is escaped. A
// run's full is not used for it: a 0.5.14 client shows full as "wants to write this", without
// the file's name.
func TestAWriteIsPutToThePlayerWithItsContent(t *testing.T) {
	m, err := New(Config{Model: "p/m", OpencodeURL: "http://127.0.0.1:1", Dir: t.TempDir(), MCPURL: "http://127.0.0.1:2/mcp"},
		slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	defer m.Close()
	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	controls := strings.Repeat(`\u0000`, contentMax) // JSON escapes: NUL bytes
	for _, c := range []struct {
		name, input string
		content     *string
		bytes       int
	}{
		{"text", `{"traposId":"5:desk","path":"/door.lua","content":"print('küche')\n-- 日"}`, ptr("print('k\u00fcche')\n-- ?"), 19},
		{"every byte", `{"traposId":"5:desk","path":"/b.bin","contentBase64":"` + base64.StdEncoding.EncodeToString(every) + `"}`, ptr(protocol.WireOfBytes(every)), 256},
		{"empty", `{"traposId":"5:desk","path":"/empty","content":""}`, ptr(""), 0},
		{"at the bound", `{"traposId":"5:desk","path":"/nul","content":"` + controls + `"}`, ptr(strings.Repeat("\x00", contentMax)), contentMax},
		{"over the bound", `{"traposId":"5:desk","path":"/big.lua","content":"` + strings.Repeat("x", contentMax+1) + `"}`, nil, contentMax + 1},
	} {
		tr := newTestTurn()
		m.turns[tr.id] = tr
		got := make(chan verdict, 1)
		go func() { got <- m.confirm(tr, toolPrefix+"write_file", []byte(c.input), ActionWrite) }()
		var events []Event
		require.Eventually(t, func() bool {
			events, _ = tr.poll(context.Background(), 0, 0)
			return len(events) > 0
		}, 5*time.Second, time.Millisecond)
		ev := events[0]
		assert.Equal(t, KindConfirm, ev.Kind, c.name)
		assert.Empty(t, ev.Full, "%s: full stays a run's", c.name)
		require.NotNil(t, ev.Bytes, c.name)
		assert.Equal(t, c.bytes, *ev.Bytes, c.name)
		if c.content == nil {
			assert.Nil(t, ev.Content, c.name)
		} else if assert.NotNil(t, ev.Content, c.name) {
			assert.Equal(t, *c.content, *ev.Content, c.name)
		}
		reply, err := json.Marshal(map[string]any{"events": events, "done": false})
		require.NoError(t, err)
		assert.Less(t, len(reply), 120<<10, "%s: the poll reply fits a frame", c.name)
		if c.content != nil {
			assert.Contains(t, string(reply), `"content":`, c.name)
		}
		require.True(t, tr.answerConfirm(ev.ConfirmID, confirmAnswer{allow: true}))
		assert.True(t, (<-got).allow, "%s: a write the player allows is allowed, shown or not", c.name)
	}
}

func ptr(s string) *string { return &s }

// TestSettleRelaysWhatEachPartMissed: at a turn's end, of each text part the computer gets
// exactly what it has not got yet, in order: the rest of a part cut by a stream drop, a part
// never relayed whole, nothing of a part it has whole (also when opencode stored it without
// the last delta's trailing space); after a drop, and once settled, no delta is relayed live.
func TestSettleRelaysWhatEachPartMissed(t *testing.T) {
	tr := newTestTurn()
	tr.m, tr.tr = &Module{cfg: Config{AnswerCap: 64 << 10}, metrics: newMetrics(prometheus.NewRegistry())}, newTracker()
	tr.relayDelta("prt_1", "Whole. ")
	tr.relayDelta("prt_2", "Before the drop, ")
	tr.tr.markGap()
	tr.relayDelta("prt_2", "after it") // a delta after the drop: its part misses words before it
	tr.settleText([]ocPart{
		{ID: "prt_0", Type: "step-start"},
		{ID: "prt_1", Type: "text", Text: "Whole."},
		{ID: "prt_2", Type: "text", Text: "Before the drop, lost, after it."},
		{ID: "prt_r", Type: "reasoning", Text: "hmm"},
		{ID: "prt_s", Type: "text", Text: "injected", Synthetic: true},
		{ID: "prt_3", Type: "text", Text: " Next step."},
	})
	tr.relayDelta("prt_3", " late") // the stream's late events after the end
	ev, _ := tr.poll(context.Background(), 0, 0)
	var text strings.Builder
	for _, e := range ev {
		text.WriteString(e.Text)
	}
	assert.Equal(t, "Whole. Before the drop, lost, after it. Next step.", text.String())
}

// TestATurnAttachedWhileTheStreamIsDownStartsWithAGap: the stream can drop between a turn's
// waitReady and its attach (opencode calls run between them); the turn then misses its first
// events, so its text is settled from opencode at its end, never taken as whole.
func TestATurnAttachedWhileTheStreamIsDownStartsWithAGap(t *testing.T) {
	s := newStream(nil, slog.New(slog.DiscardHandler))
	down := &turn{tr: newTracker()}
	s.attach("ses_down", down)
	s.setUp()
	up := &turn{tr: newTracker()}
	s.attach("ses_up", up)
	close(down.tr.idle)
	close(up.tr.idle)
	assert.False(t, down.tr.streamWhole(), "attached while down: its first events are lost")
	assert.True(t, up.tr.streamWhole())
}

// fakeAgent is opencode's fake with a model that answers every prompt, and an MCP endpoint
// its instances connect to (standing in for the gateway's /mcp), so whole turns run.
type fakeAgent struct {
	oc     *opencodefake.Server
	agent  *opencodefake.Agent
	mcpURL string
	root   string
}

func startFakeAgent(t *testing.T) *fakeAgent {
	t.Helper()
	return startFakeAgentWith(t, func(tu *opencodefake.Turn) { tu.Text("re: " + tu.Prompt()) })
}

// startFakeAgentWith is startFakeAgent with a model of the test's.
func startFakeAgentWith(t *testing.T, model opencodefake.Model) *fakeAgent {
	t.Helper()
	oc := opencodefake.Start(t, opencodefake.Options{Password: "oc-pw"})
	a := oc.Agent(model, "p/m")
	srv := sdk.NewServer(&sdk.Implementation{Name: "trap-sandbox", Version: "test"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{}, nil, nil
	})
	mcp := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(mcp.Close)
	return &fakeAgent{oc: oc, agent: a, mcpURL: mcp.URL, root: t.TempDir()}
}

// module starts a gateway's agent module on the fake (again: a gateway restart).
func (f *fakeAgent) module(t *testing.T) *Module {
	t.Helper()
	// Close's abort has the whole stopLimit: a loaded machine answers it late, not never.
	m, err := New(Config{Model: "p/m", OpencodeURL: f.oc.URL, Password: "oc-pw", Dir: f.root, MCPURL: f.mcpURL, ClosingAbortWait: stopLimit},
		slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	return m
}

// ask runs one turn to its end and returns the reason it ended with.
func ask(t *testing.T, m *Module, from protocol.Requester, prompt string) string {
	t.Helper()
	reason, errs := askTurn(t, m, from, prompt)
	for _, e := range errs {
		t.Logf("turn error: %s", e)
	}
	return reason
}

// askTurn runs one turn to its end and returns the reason it ended with and the messages of
// its error events.
func askTurn(t *testing.T, m *Module, from protocol.Requester, prompt string) (reason string, errs []string) {
	t.Helper()
	for _, e := range askEvents(t, m, from, prompt) {
		if e.Kind == KindError {
			errs = append(errs, e.Message)
		}
		if e.Kind == KindDone {
			reason = e.Reason
		}
	}
	return reason, errs
}

// askEvents runs one turn to its end and returns its events, the done event last.
func askEvents(t *testing.T, m *Module, from protocol.Requester, prompt string) []Event {
	t.Helper()
	raw, err := m.handleAsk(t.Context(), from, payload(t, map[string]any{"prompt": prompt}))
	require.NoError(t, err)
	var started struct {
		TurnID string `json:"turnId"`
	}
	require.NoError(t, json.Unmarshal(raw, &started))
	var events []Event
	after := 0
	for {
		raw, err := m.handlePoll(t.Context(), from, payload(t, map[string]any{"turnId": started.TurnID, "after": after}))
		require.NoError(t, err)
		var r pollReply
		require.NoError(t, json.Unmarshal(raw, &r))
		for _, e := range r.Events {
			after = e.Seq
			events = append(events, e)
			if e.Kind == KindDone {
				return events
			}
		}
	}
}

func payload(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// conversations lists the fake's sessions as "title: prompt, prompt…".
func (f *fakeAgent) conversations() []string {
	var out []string
	for _, s := range f.agent.Sessions() {
		out = append(out, s.Title+": "+strings.Join(s.History(), ", "))
	}
	return out
}

func accountFile(root, accountID string) string {
	return filepath.Join(root, computersDir, pathName(accountID), AccountFile)
}

var (
	aliceCreated    = time.Date(2026, 12, 1, 9, 0, 0, 123, time.UTC)
	newAliceCreated = time.Date(2026, 12, 3, 12, 0, 0, 456, time.UTC)
)

// TestARecreatedAccountStartsAfresh: after `accounts remove alice` and `accounts add alice`
// (another person), the new alice's computer 7 continued the removed alice's conversation
// with the agent. Now the first question of any of the new account's computers deletes every
// conversation of the removed account's computers on opencode, and each starts a new one;
// the new account's own conversations then continue, across a gateway restart too.
func TestARecreatedAccountStartsAfresh(t *testing.T) {
	f := startFakeAgent(t)
	m := f.module(t)
	kitchen := protocol.Requester{AccountID: "alice", TraposID: "7:kitchen", AccountCreated: aliceCreated}
	hall := protocol.Requester{AccountID: "alice", TraposID: "8:hall", AccountCreated: aliceCreated}
	require.Equal(t, ReasonStop, ask(t, m, kitchen, "my secret plan"))
	require.Equal(t, ReasonStop, ask(t, m, kitchen, "and more"))
	require.Equal(t, ReasonStop, ask(t, m, hall, "the hall's"))
	require.ElementsMatch(t, []string{"trap-sandbox alice/7:kitchen main: my secret plan, and more", "trap-sandbox alice/8:hall main: the hall's"},
		f.conversations(), "the old alice's conversations continue")

	// The account is removed and made again (the gateway kept running): two of the new
	// alice's computers ask at once.
	kitchen.AccountCreated, hall.AccountCreated = newAliceCreated, newAliceCreated
	var wg sync.WaitGroup
	for _, from := range []protocol.Requester{kitchen, hall} {
		wg.Go(func() { assert.Equal(t, ReasonStop, ask(t, m, from, "hello from "+from.TraposID)) })
	}
	wg.Wait()
	assert.ElementsMatch(t, []string{"trap-sandbox alice/7:kitchen main: hello from 7:kitchen", "trap-sandbox alice/8:hall main: hello from 8:hall"},
		f.conversations(), "the removed alice's conversations are deleted, the new alice's start afresh")
	data, err := os.ReadFile(accountFile(f.root, "alice"))
	require.NoError(t, err)
	assert.Equal(t, newAliceCreated.Format(time.RFC3339Nano)+"\n"+aliceCreated.Format(time.RFC3339Nano)+"\n", string(data),
		"the new alice's, then the removed alice's")

	m.Close()
	m = f.module(t) // a gateway restart
	require.Equal(t, ReasonStop, ask(t, m, kitchen, "again"))
	assert.Contains(t, f.conversations(), "trap-sandbox alice/7:kitchen main: hello from 7:kitchen, again", "the new alice's conversation continues")
}

// TestAnAccountDirectoryFromBeforeStampsIsKept: a directory of a gateway before this check
// (no AccountFile) is taken as the account's: an upgrade loses no conversation.
func TestAnAccountDirectoryFromBeforeStampsIsKept(t *testing.T) {
	f := startFakeAgent(t)
	kitchen := protocol.Requester{AccountID: "alice", TraposID: "7:kitchen", AccountCreated: aliceCreated}
	m := f.module(t)
	require.Equal(t, ReasonStop, ask(t, m, kitchen, "one"))
	m.Close()
	require.NoError(t, os.Remove(accountFile(f.root, "alice")))

	m = f.module(t)
	require.Equal(t, ReasonStop, ask(t, m, kitchen, "two"))
	assert.Equal(t, []string{"trap-sandbox alice/7:kitchen main: one, two"}, f.conversations())
	data, err := os.ReadFile(accountFile(f.root, "alice"))
	require.NoError(t, err, "adopted")
	assert.Equal(t, aliceCreated.Format(time.RFC3339Nano)+"\n", string(data))
}

// TestTheSharedPasswordsConversationsAreAsBefore: a computer on the shared password (no
// stamp) keeps its conversation as before, and its directory gets no AccountFile.
func TestTheSharedPasswordsConversationsAreAsBefore(t *testing.T) {
	f := startFakeAgent(t)
	desk := protocol.Requester{AccountID: "local", TraposID: "5:desk"}
	m := f.module(t)
	require.Equal(t, ReasonStop, ask(t, m, desk, "one"))
	m.Close()
	m = f.module(t)
	require.Equal(t, ReasonStop, ask(t, m, desk, "two"))
	assert.Equal(t, []string{"trap-sandbox 5:desk main: one, two"}, f.conversations())
	_, err := os.Stat(accountFile(f.root, "local"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestARecreatedAccountWaitsForOpencode: while opencode cannot delete the removed account's
// conversations, the new account's question answers ai_unavailable with opencode's one line
// and nothing is continued; once it can, they are deleted and the question starts afresh.
func TestARecreatedAccountWaitsForOpencode(t *testing.T) {
	f := startFakeAgent(t)
	m := f.module(t)
	kitchen := protocol.Requester{AccountID: "alice", TraposID: "7:kitchen", AccountCreated: aliceCreated}
	require.Equal(t, ReasonStop, ask(t, m, kitchen, "my secret plan"))

	kitchen.AccountCreated = newAliceCreated
	f.oc.FailWith(http.StatusBadGateway)
	_, err := m.handleAsk(t.Context(), kitchen, json.RawMessage(`{"prompt":"hello"}`))
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, CodeAIUnavailable, pe.Code)
	assert.Equal(t, "the agent is unavailable: opencode answered HTTP 502", pe.Message)
	data, err := os.ReadFile(accountFile(f.root, "alice"))
	require.NoError(t, err)
	assert.Equal(t, aliceCreated.Format(time.RFC3339Nano)+"\n", string(data), "still the removed account's: the next question tries again")

	f.oc.FailWith(0)
	require.Equal(t, ReasonStop, ask(t, m, kitchen, "hello"))
	assert.Equal(t, []string{"trap-sandbox alice/7:kitchen main: hello"}, f.conversations())
}

// TestARemovedAccountsComputerNeverTakesTheNameBack: a computer of the removed account that
// still asks after the new account claimed the name (a replica cut off from NATS, which has
// not heard of the removal and keeps its socket; two replicas share the ai dir) is refused:
// it neither continues the new account's conversation (same title) nor deletes it by claiming
// the name back, on the replica that cached its place or on one that did not.
func TestARemovedAccountsComputerNeverTakesTheNameBack(t *testing.T) {
	f := startFakeAgent(t)
	a, b := f.module(t), f.module(t) // two replicas on one ai dir
	old := protocol.Requester{AccountID: "alice", TraposID: "7:kitchen", AccountCreated: aliceCreated}
	require.Equal(t, ReasonStop, ask(t, b, old, "my secret plan")) // b holds the old alice's place
	fresh := old
	fresh.AccountCreated = newAliceCreated
	require.Equal(t, ReasonStop, ask(t, a, fresh, "hello")) // a: the new alice claims the name

	for _, m := range []*Module{b, a} {
		_, err := m.handleAsk(t.Context(), old, json.RawMessage(`{"prompt":"what was my plan?"}`))
		var pe *protocol.Error
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, protocol.CodeUnauthorized, pe.Code)
		assert.Equal(t, "this computer's account was removed, and its name given to a new account: the agent no longer answers it", pe.Message)
		_, err = m.handleReset(t.Context(), old, json.RawMessage(`{}`))
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, protocol.CodeUnauthorized, pe.Code)
	}
	assert.Equal(t, []string{"trap-sandbox alice/7:kitchen main: hello"}, f.conversations(), "the new alice's conversation, untouched")
	data, err := os.ReadFile(accountFile(f.root, "alice"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), newAliceCreated.Format(time.RFC3339Nano)+"\n"), "still the new alice's: %q", data)
	require.Equal(t, ReasonStop, ask(t, b, fresh, "again"))
	assert.Equal(t, []string{"trap-sandbox alice/7:kitchen main: hello, again"}, f.conversations(), "the new alice's conversation continues on either replica")
}

// kinds is the kinds of events, in order.
func kinds(events []Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Kind)
	}
	return out
}

// TestTheFirstQuestionInAnOpencodeRunSaysTheAgentIsStarting: opencode 1.18.33 loads a
// computer's instance on its first prompt, 8 to 17 s after it started, while the player read
// only Thinking...; each computer's first question in an opencode run now says so first (a
// starting event), and no other does: not a second question, nor one after the event stream
// dropped and opened again at once (opencode#38458, the same opencode), but the first after
// opencode was unreachable (it restarted) again.
func TestTheFirstQuestionInAnOpencodeRunSaysTheAgentIsStarting(t *testing.T) {
	f := startFakeAgent(t)
	m := f.module(t)
	kitchen := protocol.Requester{AccountID: "local", TraposID: "7:kitchen"}
	desk := protocol.Requester{AccountID: "local", TraposID: "5:desk"}

	first := askEvents(t, m, kitchen, "first")
	assert.Equal(t, []string{KindStarting, KindText, KindDone}, kinds(first))
	assert.Equal(t, "the agent is starting for this computer: its first question takes longer", first[0].Message)
	assert.Equal(t, []string{KindText, KindDone}, kinds(askEvents(t, m, kitchen, "second")))
	assert.Equal(t, []string{KindStarting, KindText, KindDone}, kinds(askEvents(t, m, desk, "first")), "each computer's instance starts")

	f.agent.DropStreams() // the same opencode: its stream opens again at once
	assert.Equal(t, []string{KindText, KindDone}, kinds(askEvents(t, m, kitchen, "third")))

	f.oc.FailWith(http.StatusBadGateway) // opencode restarts
	before := m.stream.opencodeRun()
	f.agent.DropStreams()
	require.Eventually(t, func() bool {
		m.stream.mu.Lock()
		defer m.stream.mu.Unlock()
		return m.stream.unreached
	}, 10*time.Second, testkit.Poll, "the stream found opencode down")
	f.oc.FailWith(0)
	assert.Equal(t, []string{KindStarting, KindText, KindDone}, kinds(askEvents(t, m, kitchen, "fourth")))
	assert.Equal(t, before+1, m.stream.opencodeRun(), "a new opencode run")
	assert.Equal(t, []string{KindText, KindDone}, kinds(askEvents(t, m, kitchen, "fifth")))
}
