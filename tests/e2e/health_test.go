package e2e

import (
	"bufio"
	"errors"
	"net"
	"net/textproto"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// agentOffLine is what `sandbox health` adds on a gateway that runs without --ai-model (as
// startGateway's do): whose fix it is that ai cannot ask, whatever opencode's state.
const agentOffLine = "The agent is off: its operator must set --ai-model"

// agentDownLine is what `sandbox health` adds when the gateway's agent is on and opencode
// does not answer it: whose fix that is, and what still works.
const agentDownLine = "The agent is down on the gateway's host: its operator must start or fix it (the detail above says why). " +
	"Only ai needs it; files, Lua and the screen still work."

// TestHealthOpencodeHealthy: both sides healthy, no detail line; the agent is off.
func TestHealthOpencodeHealthy(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := startGateway(t, oc.URL)
	ok, out := runCommand(ctx, t, computerOptions(t, g, sandboxPassword, "sandbox", "health"))
	assert.True(t, ok, out)
	assert.Equal(t, []string{"sandboxOk: true", "opencodeOk: true", agentOffLine}, lines(out))
	assert.EqualValues(t, 1, oc.HealthHits(), "the gateway probes opencode once per health request")
}

// TestHealthOpencodeRefused: opencode's port refuses connections.
func TestHealthOpencodeRefused(t *testing.T) {
	ctx := testContext(t)
	url := opencodefake.ClosedPortURL(t)
	g := startGateway(t, url)
	ok, out := runCommand(ctx, t, computerOptions(t, g, sandboxPassword, "sandbox", "health"))
	assert.True(t, ok, "an unhealthy opencode is a report, not a command failure: %s", out)
	assert.Equal(t, hangingScreen(
		"sandboxOk: true",
		"opencodeOk: false",
		"opencodeDetail: opencode at "+url+": connection refused",
		agentOffLine, // not the down line: starting opencode would not turn the agent on
	), lines(out))
}

// TestHealthAgentOn: with the agent on, a healthy opencode adds nothing, one without the
// agent's model adds that, and one that is down adds whose fix it is; each says whose fix.
func TestHealthAgentOn(t *testing.T) {
	ctx := testContext(t)
	w := newAIWorld(t)
	g := w.gateway(t, harness.Options{})
	ok, out := runCommand(ctx, t, computerOptions(t, g, sandboxPassword, "sandbox", "health"))
	assert.True(t, ok, out)
	assert.Equal(t, []string{"sandboxOk: true", "opencodeOk: true"}, lines(out))

	// opencode answers, but has no such model (its provider has no key there): it said
	// opencodeOk: true alone, and every ai question failed
	missing := harness.Start(t, gatewayBin, harness.Options{
		// each probe re-runs the model check and waits for it to say the fault again: a
		// minute, not the shipped second, which a loaded machine's check may take
		Args: []string{"--password", sandboxPassword, "--opencode-url", w.oc.URL, "--ai-model", "anthropic/claude-sonnet-4-5", "--ai-dir", t.TempDir(),
			"--ai-check-wait", "1m"},
		Env: []string{"OPENCODE_SERVER_PASSWORD=" + aiOCPassword},
	})
	ok, out = runCommand(ctx, t, computerOptions(t, missing, sandboxPassword, "sandbox", "health"))
	assert.True(t, ok, out)
	assert.Equal(t, hangingScreen(
		"sandboxOk: true",
		"opencodeOk: true",
		"The agent cannot answer (tell the gateway's operator): opencode lacks the agent's model (--ai-model): its provider has no key there, or the name is wrong",
	), lines(out))
	// and ai says so at once, without taking the question (it failed a turn later), and ai
	// alone before its prompt
	for _, args := range [][]string{{"ai", "hello"}, {"ai"}} {
		ok, out = runCommand(ctx, t, computerOptions(t, missing, sandboxPassword, args[0], args[1:]...))
		assert.False(t, ok, out)
		assert.Equal(t, screen(
			"The agent is unavailable (tell the gateway's operator): opencode lacks the agent's model (--ai-model): its provider has no key there, or the name is wrong",
		), lines(out), "%v", args)
	}

	url := opencodefake.ClosedPortURL(t)
	down := startGateway(t, url, "--ai-model", aiModel, "--ai-dir", t.TempDir())
	ok, out = runCommand(ctx, t, computerOptions(t, down, sandboxPassword, "sandbox", "health"))
	assert.True(t, ok, out)
	assert.Equal(t, hangingScreen(
		"sandboxOk: true",
		"opencodeOk: false",
		"opencodeDetail: opencode at "+url+": connection refused",
		agentDownLine,
	), lines(out))
}

// TestHealthOpencodeUnauthorized: opencode wants a password the gateway does not have.
func TestHealthOpencodeUnauthorized(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{Password: "opencode-pw-e2e-77aa"})
	g := startGateway(t, oc.URL)
	ok, out := runCommand(ctx, t, computerOptions(t, g, sandboxPassword, "sandbox", "health"))
	assert.True(t, ok, out)
	assert.Equal(t, hangingScreen(
		"sandboxOk: true",
		"opencodeOk: false",
		"opencodeDetail: opencode at "+oc.URL+": answered 401, wanting a password the gateway does not send: its operator must give the gateway opencode's server password, --opencode-password (OPENCODE_SERVER_PASSWORD)",
		agentOffLine,
	), lines(out))
	assert.Zero(t, oc.HealthHits(), "no probe may pass opencode's auth")
}

// TestHealthOpencodeStalled: opencode accepts but never answers; the gateway's probe timeout
// answers the computer long before the command's own request timeout would.
func TestHealthOpencodeStalled(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.StartStalled(t)
	g := startGateway(t, oc.URL, "--probe-timeout", shortProbeTimeout)
	ok, out := runCommand(ctx, t, computerOptions(t, g, sandboxPassword, "sandbox", "health"))
	assert.True(t, ok, out)
	// Had the probe outlived the command's timeout, it would print "The gateway did not answer
	// within 10 seconds" instead of these lines.
	assert.Equal(t, hangingScreen(
		"sandboxOk: true",
		"opencodeOk: false",
		"opencodeDetail: opencode at "+oc.URL+": no answer within "+shortProbeTimeout,
		agentOffLine,
	), lines(out))
}

// TestHealthThroughAURLThatLostASlash: a sandbox.url typed with one slash after ws: (or none),
// or without the colon (ws//), reaches the gateway it names. Given to CC as it stands, ws://
// went in front of it and the daemon looked up a host named "ws": the player read Unknown
// host: ws does not resolve.
func TestHealthThroughAURLThatLostASlash(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	for _, url := range []string{"ws:/" + g.Addr, "ws:" + g.Addr, "ws//" + g.Addr} {
		ok, out := runCommand(ctx, t, computerOptionsAt(t, url, sandboxPassword, "sandbox", "health"))
		assert.True(t, ok, "%s: %s", url, out)
		assert.Equal(t, "sandboxOk: true", lines(out)[0], "%s: %s", url, out)
	}
}

// TestHealthAtAServerThatIsNotTheGateway: sandbox.url names a port where another server
// answers the gateway's path, opencode with its password (401) on a port of its own. The
// advice was that the path is wrong, offering the URL the computer already had; it is the
// server that is wrong.
func TestHealthAtAServerThatIsNotTheGateway(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{Password: "opencode-pw-e2e-77aa"})
	hostPort := strings.TrimPrefix(oc.URL, "http://")
	for _, url := range []string{"ws://" + hostPort, "ws://" + hostPort + "/trapos/ws"} {
		ok, out := runCommand(ctx, t, computerOptionsAt(t, url, sandboxPassword, "sandbox", "health"))
		assert.False(t, ok, "%s: %s", url, out)
		// its rows joined: where they break depends on the port's digits
		assert.Equal(t, "Not connected to the gateway: the server at "+hostPort+" is not a trap-sandbox gateway "+
			"(401 Unauthorized): check the port (the install line's; 4444 unless the operator chose another) and, "+
			"behind a reverse proxy, the path. Fix it with: sandbox setup", strings.Join(lines(out), " "), url)
	}
}

// TestHealthAtAServerThatClosesUnanswered: sandbox.url names a port where a server accepts
// the connection, reads the WebSocket upgrade and closes without a word. CC says "Connection
// closed", as for a gateway that stops, and the advice was that the gateway "stopped or
// restarted": the player waited for a gateway that was never there. A daemon that never
// reached a gateway at this URL says it is probably not the gateway's port.
func TestHealthAtAServerThatClosesUnanswered(t *testing.T) {
	ctx := testContext(t)
	hostPort := startClosingServer(t)
	ok, out := runCommand(ctx, t, computerOptionsAt(t, "ws://"+hostPort, sandboxPassword, "sandbox", "health"))
	assert.False(t, ok, out)
	// its rows joined: where they break depends on the port's digits; the next try is 5 s
	// plus up to 1 s of jitter after the failure, and health asks at once (assertRetryRowsBefore)
	assert.Regexp(t, "^"+regexp.QuoteMeta("Not connected to the gateway: the server at "+hostPort+" accepted the "+
		"connection and closed it without answering the WebSocket upgrade (Connection closed): unless the gateway "+
		"there is just starting, it is not the gateway's port: check the port (the install line's; 4444 unless the "+
		"operator chose another). Fix it with: sandbox setup; the daemon retries in ")+"[1-6] s$",
		strings.Join(lines(out), " "))
}

// startClosingServer listens on a loopback port where each connection's request is read to
// its blank line and the connection closed unanswered; it returns the port's host:port. The
// request read whole, the close is a FIN the client reads as the end of the stream.
func startClosingServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := l.Accept()
			if err != nil {
				if !errors.Is(err, net.ErrClosed) {
					t.Errorf("accept: %v", err)
				}
				return
			}
			request := textproto.NewReader(bufio.NewReader(conn))
			for line, err := request.ReadLine(); err == nil && line != ""; line, err = request.ReadLine() {
			}
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
	})
	return l.Addr().String()
}

// TestHealthAtTheInstallersURL: sandbox.url names the installer's URL, the install line made
// ws://. CC reads at most 8 KiB of an answer to the upgrade, and the installer's page is far
// longer: the socket fails with "Message is too large" before its 200 OK is looked at, which
// the player read with no fix. It is a wrong path, and says so.
func TestHealthAtTheInstallersURL(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	ok, out := runCommand(ctx, t, computerOptionsAt(t, "ws://"+g.Addr+"/trapos/install", sandboxPassword, "sandbox", "health"))
	assert.False(t, ok, out)
	// its rows joined: where they break depends on the port's digits
	assert.Equal(t, "Not connected to the gateway: the URL's path is wrong (its answer is a page, not a WebSocket: "+
		"Message is too large): use ws://"+g.Addr+" or ws://"+g.Addr+"/trapos/ws. Fix it with: sandbox setup",
		strings.Join(lines(out), " "))
}

// TestADaemonWhoseURLIsNotTextRuns: `set sandbox.url true` (or digits) before the daemon
// defined the setting, or a server's default as here, stores a boolean (a number). Read as a
// string, it stopped the daemon at every boot with a traceback on the screen ("The sandbox
// daemon is not running" after it); a value that is not text or a number reads as not set
// (and a number as its digits, as a numeric sandbox.password is sent: libsandboxsettings_spec,
// whose URL would send the daemon to a DNS lookup here).
func TestADaemonWhoseURLIsNotTextRuns(t *testing.T) {
	ctx := testContext(t)
	_, out := runCommand(ctx, t, computerOptionsAt(t, "true", sandboxPassword, "sandbox", "status"))
	assert.Contains(t, lines(out), "state: dormant", out)
	assert.Contains(t, lines(out), "fix: sandbox.url is not set. Run: sandbox setup", out)
	assert.NotContains(t, out, "not running", out)
	assert.NotContains(t, out, "string expected", out)
}
