package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// Markers of proofProgram.
const (
	markerProofUp     = "e2e: connected"
	markerNotProved   = "e2e: status shown"
	markerProofBack   = "e2e: back"
	gatewayProofsFile = ".trapos-sandbox-gateways" // libsandboxuninstall's GATEWAY_PROOFS, on the overlay
)

// proofProgram waits until the daemon is connected and runs `sandbox status` (what a player
// reads), then waits until it is not and its lastError says a server did not prove itself:
// it runs `sandbox status` again, and waits to be connected again.
const proofProgram = harness.WaitConnectedLua + `
shell.run("sandbox", "status")
print("` + markerProofUp + `")
local shown = false
while true do
  local st = lib.requestStatus()
  if st ~= nil and not shown and not st.connected and tostring(st.lastError):find("did not prove", 1, true) then
    shell.run("sandbox", "status")
    print("` + markerNotProved + `")
    shown = true
  elseif st ~= nil and shown and st.connected then
    print("` + markerProofBack + `")
    break
  end
  sleep(0.2)
end
while true do sleep(1) end
`

// recordingServer is a WebSocket server that is not the gateway: it takes every upgrade on
// its listener and records every frame a computer sends it. With oldGateway set it answers as
// a gateway older than the proof does: a hello ok (no proves), any other request before it
// not_authenticated; else it answers nothing.
type recordingServer struct {
	srv        *httptest.Server
	oldGateway bool

	mu     sync.Mutex
	frames []string
	conns  []*websocket.Conn
	got    chan struct{} // closed at each frame, then made anew
}

func startRecordingServer(t *testing.T, ln net.Listener, oldGateway bool) *recordingServer {
	t.Helper()
	r := &recordingServer{oldGateway: oldGateway, got: make(chan struct{})}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.Listener = ln
	r.srv.Start()
	t.Cleanup(r.stop)
	return r
}

func (r *recordingServer) serve(w http.ResponseWriter, req *http.Request) {
	conn, err := (&websocket.Upgrader{}).Upgrade(w, req, nil)
	if err != nil {
		return
	}
	r.mu.Lock()
	r.conns = append(r.conns, conn)
	r.mu.Unlock()
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return
		}
		r.mu.Lock()
		r.frames = append(r.frames, string(data))
		close(r.got)
		r.got = make(chan struct{})
		r.mu.Unlock()
		if r.oldGateway {
			_ = conn.WriteJSON(oldGatewayAnswer(data))
		}
	}
}

// oldGatewayAnswer is what a gateway older than the proof answers a computer's request.
func oldGatewayAnswer(data []byte) map[string]any {
	var f struct {
		MessageID string `json:"messageId"`
		Type      string `json:"type"`
		Payload   struct {
			TraposID string `json:"traposId"`
		} `json:"payload"`
	}
	_ = json.Unmarshal(data, &f)
	answer := map[string]any{"event": harness.EventGatewayResponse, "messageId": f.MessageID, "type": f.Type}
	if f.Type == harness.TypeHello {
		answer["ok"], answer["traposReceiverId"] = true, f.Payload.TraposID
		answer["payload"] = map[string]any{"accountId": "local", "livenessMs": 70000}
	} else {
		answer["ok"], answer["error"] = false, map[string]any{"code": "not_authenticated", "message": "send hello first"}
	}
	return answer
}

// waitFrames waits until the server has recorded n frames, and returns them.
func (r *recordingServer) waitFrames(ctx context.Context, t *testing.T, n int) []string {
	t.Helper()
	for {
		r.mu.Lock()
		frames, got := append([]string(nil), r.frames...), r.got
		r.mu.Unlock()
		if len(frames) >= n {
			return frames
		}
		select {
		case <-got:
		case <-ctx.Done():
			require.FailNow(t, "the server did not get the frames", "%d of %d: %v", len(frames), n, frames)
		}
	}
}

// stop closes the server and every socket it took (the computer's included).
func (r *recordingServer) stop() {
	r.mu.Lock()
	for _, c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	r.srv.Close()
}

// TestAComputerGivesItsSecretOnlyToTheGatewayThatProvesItself: a computer connected to a
// gateway that proves itself records it; the gateway stops and another program takes its
// port. The computer asks that program for a proof, never sends it its hello or its secret,
// and its status names what happened and the fix, and that it still asks for the proof. The
// real gateway back on the port, the computer is in again by itself.
func TestAComputerGivesItsSecretOnlyToTheGatewayThatProvesItself(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	first := startGateway(t, oc.URL)
	opts := computerOptions(t, first, sandboxPassword, "/e2e.lua")
	opts.Overlay = t.TempDir()
	opts.Files = map[string]string{"/e2e.lua": proofProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerProofUp)
	record, err := os.ReadFile(filepath.Join(opts.Overlay, gatewayProofsFile))
	require.NoError(t, err, "the computer records the gateway that proves itself")
	assert.Contains(t, string(record), first.WebSocketURL())
	since := regexp.MustCompile(`\] = (\d+)`).FindStringSubmatch(string(record))
	require.Len(t, since, 2, "the record names when the gateway proved itself: %s", record)
	ms, err := strconv.ParseInt(since[1], 10, 64)
	require.NoError(t, err)
	required := "proof: required since " + time.UnixMilli(ms).UTC().Format("2006-01-02 15:04") + " UTC"
	connected, _, _ := strings.Cut(c.Output(), markerProofUp)
	assert.Contains(t, strings.Join(lines(connected), " "), required,
		"sandbox status says the computer asks its gateway for a proof from now on, since when the record says")

	addr := first.Addr
	require.NoError(t, first.Stop())
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	hostile := startRecordingServer(t, ln, false)

	c.WaitFor(ctx, markerNotProved)
	frames := hostile.waitFrames(ctx, t, 1)
	var prove struct {
		Event, Type string
		Payload     map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(frames[0]), &prove))
	assert.Equal(t, "computer_request", prove.Event)
	assert.Equal(t, "prove", prove.Type)
	assert.Equal(t, 2.0, prove.Payload["version"], "the computer holds the gateway's slow key, and asks for the slow proof: %s", frames[0])
	_, out, _ := strings.Cut(c.Output(), markerProofUp)
	assert.Contains(t, unwrapped(out), "did not prove it is the gateway this computer was set up with")
	assert.Contains(t, unwrapped(out), "run sandbox setup")
	assert.Contains(t, unwrapped(out), required,
		"beside the refusal, the status says the computer still asks for the proof")
	hostile.stop()

	ln, err = net.Listen("tcp", addr) // the hostile server's listener is closed: its port is free again
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	second := harness.Start(t, gatewayBin, harness.Options{
		Listen: addr,
		Args:   []string{"--password", sandboxPassword, "--opencode-url", oc.URL},
	})
	c.WaitFor(ctx, markerProofBack)
	assert.Contains(t, second.Log(), `msg="computer connected"`)

	hostile.mu.Lock()
	defer hostile.mu.Unlock()
	for _, f := range hostile.frames {
		assert.NotContains(t, f, `"hello"`, "no hello to a server that did not prove itself")
		assert.NotContains(t, f, sandboxPassword, "no secret to a server that did not prove itself")
	}
}

// TestAnOldRecordGainsTheSlowKeyAndOutlivesTheFastProof: a computer whose record of its
// gateway was written by client 0.5.33 (the URL and since, no key) asks for the fast proof, is
// in, and records the slow key its hello's answer gives; the gateway restarted with
// --password-proofs v2, which refuses the fast proof, proves itself to it the slow way, and it
// is in again by itself.
func TestAnOldRecordGainsTheSlowKeyAndOutlivesTheFastProof(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	first := startGateway(t, oc.URL)
	opts := computerOptions(t, first, sandboxPassword, "/e2e.lua")
	opts.Overlay = t.TempDir()
	opts.Files = map[string]string{"/e2e.lua": harness.WaitConnectedLua + `print("` + markerProofUp + `")
while true do sleep(1) end
`}
	const since = 1796620000000
	oldRecord := fmt.Sprintf("{\n  [ %q ] = %d,\n}\n", first.WebSocketURL(), since) // as 0.5.33 writes it
	require.NoError(t, os.WriteFile(filepath.Join(opts.Overlay, gatewayProofsFile), []byte(oldRecord), 0o600))
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerProofUp)
	assert.True(t, metric(ctx, t, first, `trapos_gateway_proofs_total{kind="password_v1"} 1`+"\n"),
		"a record without a key asks the fast way: %s", metricsText(ctx, t, first))
	record, err := os.ReadFile(filepath.Join(opts.Overlay, gatewayProofsFile))
	require.NoError(t, err)
	assert.Contains(t, string(record), strconv.Itoa(since), "proved since as before: %s", record)
	assert.Regexp(t, `proofKeys = \{\s*\[ "`+regexp.QuoteMeta(first.WebSocketURL())+`" \] = "[0-9a-f]{64}"`, string(record),
		"the hello's answer's key is recorded with the URL")

	addr := first.Addr
	require.NoError(t, first.Stop())
	second := harness.Start(t, gatewayBin, harness.Options{
		Listen: addr,
		Args:   []string{"--password", sandboxPassword, "--opencode-url", oc.URL, "--password-proofs", "v2"},
	})
	require.NoError(t, second.WaitLog(ctx, `msg="computer connected"`))
	assert.True(t, metric(ctx, t, second, `trapos_gateway_proofs_total{kind="password_v2"} 1`+"\n"), "%s", metricsText(ctx, t, second))
	assert.True(t, metric(ctx, t, second, `trapos_gateway_proofs_total{kind="password_v1"} 0`+"\n"))
}

// TestAComputerThatNeverSawAProofSaysHelloAsBefore: to a gateway older than the proof (it
// answers hello with no proves), a computer says hello at once as it always did, is
// connected, and records nothing; its status says that gateway does not prove itself.
func TestAComputerThatNeverSawAProofSaysHelloAsBefore(t *testing.T) {
	ctx := testContext(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	old := startRecordingServer(t, ln, true)
	opts := computerOptionsAt(t, "ws://"+ln.Addr().String(), sandboxPassword, "/e2e.lua")
	opts.Overlay = t.TempDir()
	opts.Files = map[string]string{"/e2e.lua": proofProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerProofUp)
	frames := old.waitFrames(ctx, t, 1)
	assert.Contains(t, frames[0], `"type":"hello"`)
	_, err = os.Stat(filepath.Join(opts.Overlay, gatewayProofsFile))
	assert.True(t, os.IsNotExist(err), "no record of a gateway that does not prove itself")
	assert.Contains(t, unwrapped(c.Output()), "proof: none: whatever answers at this URL is trusted",
		"sandbox status says the computer's secret is not protected")
}

// TestTheClientsHMACIsGos: libsandboxproof's SHA-256 and HMAC-SHA256, run on fakecraft, give
// what Go's crypto/sha256 and crypto/hmac give, for random keys and messages of every length
// around the block size (the seed is logged).
func TestTheClientsHMACIsGos(t *testing.T) {
	ctx := testContext(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	type testCase struct{ key, message []byte }
	var cases []testCase
	for i := range 80 {
		key := make([]byte, rng.IntN(140))
		message := make([]byte, i*3+rng.IntN(3)) // 0 to 240 bytes: every padding case
		for j := range key {
			key[j] = byte(rng.IntN(256))
		}
		for j := range message {
			message[j] = byte(rng.IntN(256))
		}
		cases = append(cases, testCase{key, message})
	}
	var lua strings.Builder
	lua.WriteString("local proof = require('/apis/libsandboxproof')\n")
	lua.WriteString("local function unhex(h) return (h:gsub('%x%x', function(b) return string.char(tonumber(b, 16)) end)) end\n")
	lua.WriteString("local out = fs.open('/out.txt', 'w')\n")
	for _, c := range cases {
		fmt.Fprintf(&lua, "out.writeLine(proof.toHex(proof.sha256(unhex(%q))) .. ' ' .. proof.toHex(proof.hmacSha256(unhex(%q), unhex(%q))))\n",
			hex.EncodeToString(c.message), hex.EncodeToString(c.key), hex.EncodeToString(c.message))
	}
	lua.WriteString("out.close()\n")
	opts := computerOptionsAt(t, "", "", "/hmac.lua")
	opts.Autostart = nil
	opts.Overlay = t.TempDir()
	opts.Files = map[string]string{"/hmac.lua": lua.String()}
	ok, out := runCommand(ctx, t, opts)
	require.True(t, ok, out)
	got, err := os.ReadFile(filepath.Join(opts.Overlay, "out.txt"))
	require.NoError(t, err, out)
	rows := strings.Split(strings.TrimSpace(string(got)), "\n")
	require.Len(t, rows, len(cases))
	for i, c := range cases {
		digest := sha256.Sum256(c.message)
		mac := hmac.New(sha256.New, c.key)
		mac.Write(c.message)
		assert.Equal(t, hex.EncodeToString(digest[:])+" "+hex.EncodeToString(mac.Sum(nil)), rows[i],
			"case %d: key of %d bytes, message of %d", i, len(c.key), len(c.message))
	}
}

// Markers of revokedProofProgram.
const (
	markerCutOff        = "e2e: cut off"
	markerRefusalReread = "e2e: refusal shown"
)

// revokedProofProgram waits until the daemon is connected, then until it is cut off for its
// credential, then has it try again (sandbox reconnect, as a reboot does) and waits until it
// stops at what the gateway, asked for its proof first, answered: it runs `sandbox status`,
// what a player reads.
const revokedProofProgram = harness.WaitConnectedLua + `
print("` + markerProofUp + `")
while true do
  local st = lib.requestStatus()
  if st ~= nil and not st.connected and tostring(st.lastError):find("revoked", 1, true) then break end
  sleep(0.2)
end
print("` + markerCutOff + `")
shell.run("sandbox", "reconnect")
while true do
  local st = lib.requestStatus()
  if st ~= nil and st.state == "unauthorized" then break end
  sleep(0.2)
end
shell.run("sandbox", "status")
print("` + markerRefusalReread + `")
while true do sleep(1) end
`

// TestARevokedComputerThatWaitsForAProofReadsWhy: a computer whose gateway proved itself to it
// asks for a proof before every hello, so with its credential revoked it sends no hello to be
// refused: the gateway refuses the prove in the hello's words, with its proof of the refusal,
// and the daemon stops as at a hello's refusal; the player reads the gateway's words with the
// fix (sandbox link). A made-up proof read "did not prove it is the gateway … another program
// may hold its port", and sent the player looking for an attacker where the operator had
// revoked the computer; the words without the proof (client 0.5.35) read as an unproven
// server's ("gave no proof it is the gateway, and says: …"), and the daemon kept trying.
func TestARevokedComputerThatWaitsForAProofReadsWhy(t *testing.T) {
	ctx := testContext(t)
	dataDir := "--data-dir=" + t.TempDir()
	token := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "alice", dataDir))
	credential := lastLineOf(gatewayCLI(ctx, t, "credentials", "add", "alice", dataDir))
	g := startGateway(t, opencodefake.ClosedPortURL(t), dataDir)
	opts := computerOptions(t, g, credential, "/e2e.lua")
	opts.ID, opts.Label = 11, "desk"
	opts.Overlay = t.TempDir()
	opts.Files = map[string]string{"/e2e.lua": revokedProofProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerProofUp)
	record, err := os.ReadFile(filepath.Join(opts.Overlay, gatewayProofsFile))
	require.NoError(t, err, "the computer records the gateway that proves itself to its credential")
	assert.Contains(t, string(record), g.WebSocketURL())

	selector := strings.Split(credential, "_")[1]
	gatewayCLI(ctx, t, "credentials", "revoke", selector, "--url="+g.URL(""), "--api-token="+token)
	c.WaitFor(ctx, markerCutOff)
	c.WaitFor(ctx, markerRefusalReread)
	status := unwrapped(afterLast(c.Output(), markerCutOff))
	assert.Contains(t, status, "this computer's credential was revoked on the gateway; link it again with: sandbox link")
	assert.NotContains(t, status, "gave no proof")
	assert.NotContains(t, status, "another program may hold its port")
	assert.Contains(t, g.Log(), `msg="prove refused: the computer's credential is revoked"`)
	assert.Contains(t, g.Log(), "credentialId="+selector)
}
