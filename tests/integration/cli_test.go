// The client subcommands (docs/http-api.md) of the real binary against a running gateway, and
// the gateway's graceful shutdown with a host request in flight.

package integration

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// runCLI runs the gateway binary with args (a client subcommand) and the extra environment,
// and returns its stdout, stderr and exit code.
func runCLI(ctx context.Context, t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, gatewayBin, args...)
	// A race-built binary otherwise sleeps 1 s at exit.
	cmd.Env = append(append(harness.CleanEnv(), "GORACE=atexit_sleep_ms=0"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	default:
		require.NoError(t, err)
	}
	return out.String(), errOut.String(), code
}

// answerRequests answers every gateway_request on c with ok:true and {traposId, type} until
// the socket closes (when the test ends).
func answerRequests(ctx context.Context, c *harness.Computer, traposID string) {
	go func() {
		_ = c.Answer(ctx, func(f harness.Frame) *harness.Reply {
			return &harness.Reply{Payload: map[string]any{"traposId": traposID, "type": f.Type}}
		})
	}()
}

func TestCLICommands(t *testing.T) {
	ctx := testContext(t)
	before := time.Now()
	g := startGateway(t)
	url := "--url=" + g.URL("")
	_, errOut, code := runCLI(ctx, t, nil, "ping", url, "9:gone")
	assert.Equal(t, 1, code)
	const prefix = `^trap-sandbox: computer 9:gone ping: the gateway answered not_connected: the computer is not connected; `
	firstMinute := `no computer is connected, and the gateway started \d+s ago: ` +
		`after a restart they reconnect within about 6 s \(a minute at most after restarts close together\), so ask again then; if none does, run sandbox status on it in game to see why\n$`
	assert.Regexp(t, prefix+inFirstMinute(before, firstMinute, `no computer is connected at all: run sandbox status on it in game to see why\n$`), errOut,
		"with no computer connected to a gateway just started, they may still be reconnecting; then the fix is on the computer")

	const id = "48:den/x"
	answerRequests(ctx, connect(ctx, t, g, id), id)

	out, errOut, code := runCLI(ctx, t, nil, "computers", url)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	assert.Regexp(t, `^TRAPOS ID\s+ACCOUNT\s+CLIENT\s+CONNECTED SINCE\s+REMOTE\s+LAST FRAME$`, lines[0])
	assert.Regexp(t, `^48:den/x\s+local\s+-\s+\S+\s+127\.0\.0\.1:\d+\s+\S+$`, lines[1])

	out, errOut, code = runCLI(ctx, t, nil, "ping", url, id)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `^pong from 48:den/x in \S+: \{"traposId":"48:den/x"\}\n$`, out)

	out, errOut, code = runCLI(ctx, t, nil, "request", url, id, "inventory", `{"slot":3}`)
	require.Equal(t, 0, code, errOut)
	assert.JSONEq(t, `{"traposId":"48:den/x","type":"inventory"}`, out)

	_, errOut, code = runCLI(ctx, t, nil, "ping", url, "9:gone")
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: computer 9:gone ping: the gateway answered not_connected: the computer is not connected; trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers)\n", errOut,
		"the hint is the gateway's, once")

	_, errOut, code = runCLI(ctx, t, nil, "ping", url, "küche")
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: computer küche ping: the gateway answered not_connected: the computer is not connected; a traposId is <id>:<label> (7:kitchen; 7: for a computer without a label), "+
		"and this one names no id: sandbox status on a computer in game says its own; trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers)\n", errOut,
		"a name with no id is told what a traposId is, once")

	_, errOut, code = runCLI(ctx, t, nil, "ping", url, "48")
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: computer 48 ping: the gateway answered not_connected: the computer is not connected; did you mean \"48:den/x\"?\n", errOut,
		"the computer meant is named once")

	_, errOut, code = runCLI(ctx, t, nil, "request", url, id, "ping", `{bad`)
	assert.Equal(t, 2, code, "a usage error, as a --timeout out of range")
	assert.Contains(t, errOut, `request: <json>: "{bad" is not JSON`)
}

// TestCLIScreenWithoutATerminalSaysSoOnce: the screen viewer with no terminal on stdin
// (here /dev/null) says so in one line that names trap-sandbox once, then the command, as
// main words every command's error (it said "trap-sandbox: trap-sandbox screen needs a
// terminal …").
func TestCLIScreenWithoutATerminalSaysSoOnce(t *testing.T) {
	ctx := testContext(t)
	_, errOut, code := runCLI(ctx, t, nil, "screen", "--url=http://127.0.0.1:1", "7:x")
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: screen: stdin is not a terminal, which it needs for your keys; `trap-sandbox screen --url http://127.0.0.1:1 7:x --once` reads the screen once\n", errOut)
}

func TestCLIWithAPIToken(t *testing.T) {
	ctx := testContext(t)
	const token = "api-token-5d1e"
	g := startGateway(t, "--api-token", token)
	const id = "49:"
	answerRequests(ctx, connect(ctx, t, g, id), id)
	url := "--url=" + g.URL("")

	_, errOut, code := runCLI(ctx, t, nil, "computers", url)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "answered 401")
	assert.Contains(t, errOut, "--api-token or SANDBOX_API_TOKEN")
	_, errOut, code = runCLI(ctx, t, []string{"SANDBOX_API_TOKEN=" + sandboxPassword}, "computers", url)
	assert.Equal(t, 1, code, "the computers' password does not open the API")
	assert.Contains(t, errOut, "401")

	out, errOut, code := runCLI(ctx, t, []string{"SANDBOX_API_TOKEN=" + token, "SANDBOX_URL=" + g.URL("")}, "ping", id)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "pong from 49:")
}

func TestShutdownFailsRequestsInFlight(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t)
	c := connect(ctx, t, g, "50:")
	result := postRequest(ctx, t, g, "50:", map[string]any{"type": "ping", "timeoutMs": 60000})
	_, err := c.Next(ctx) // the computer has the request and never answers it
	require.NoError(t, err)

	closed := make(chan int, 1)
	go func() { // reading answers the gateway's close frame at once
		ce, err := c.ExpectClose(ctx)
		if err != nil {
			closed <- 0
			return
		}
		closed <- ce.Code
	}()

	require.NoError(t, g.Stop(), "SIGTERM with a request in flight must still end the gateway with status 0")
	r := await(ctx, t, result)
	assert.Equal(t, http.StatusNotFound, r.Status)
	require.NotNil(t, r.Error)
	assert.Equal(t, "not_connected", r.Error.Code)
	// The computer had the request: it may have run it (played: an exec of sleep(20) went on
	// running on the computer, while the caller read only "the gateway is shutting down").
	assert.Equal(t, "the gateway is shutting down; it may have done what it was asked all the same: check before you ask again", r.Error.Message)
	assert.Equal(t, harness.CloseGoingAway, <-closed)
}

// inFirstMinute is the pattern a gateway started after before answers in: first while it is
// surely in its first minute (computer.ReconnectWindow: it says its computers may still be
// reconnecting), either once a minute has passed since before, which a busy machine running
// -race can take between the start and the request: the gateway may have left it then.
func inFirstMinute(before time.Time, first, after string) string {
	if time.Since(before) < time.Minute {
		return "(?:" + first + ")"
	}
	return "(?:" + first + "|" + after + ")"
}
