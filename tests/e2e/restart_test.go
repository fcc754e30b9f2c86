package e2e

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// Markers the restart program prints, so the test can follow it.
const (
	markerFirstOK   = "e2e: first health ok"
	markerFailed    = "e2e: health failed"
	markerRecovered = "e2e: health ok again"
	markerGaveUp    = "e2e: gave up"
)

// restartProgram runs `sandbox health` every half (scaled) second: it reports the first
// success, the first failure after it, and the first success after that. maxRounds bounds it
// (400 rounds of at least 0.5 s scaled are over 50 s of real time at timeScale 4).
const restartProgram = `
local maxRounds = 400
local stage = "start"
for _ = 1, maxRounds do
  local ok = shell.run("sandbox", "health")
  if stage == "start" and ok then
    print("` + markerFirstOK + `")
    stage = "up"
  elseif stage == "up" and not ok then
    print("` + markerFailed + `")
    stage = "down"
  elseif stage == "down" and ok then
    print("` + markerRecovered + `")
    return
  end
  sleep(0.5)
end
error("` + markerGaveUp + `", 0)
`

// TestGatewayRestartUnderRunningComputer: the gateway goes away under a booted computer and
// comes back on the same port; the daemon reconnects by itself and `sandbox health` works again.
func TestGatewayRestartUnderRunningComputer(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	first := startGateway(t, oc.URL)
	opts := computerOptions(t, first, sandboxPassword, "/e2e.lua")
	opts.Files = map[string]string{"/e2e.lua": restartProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)

	c.WaitFor(ctx, markerFirstOK)
	require.NoError(t, first.Stop(), "SIGTERM must end the gateway with status 0")
	c.WaitFor(ctx, markerFailed)

	second := harness.Start(t, gatewayBin, harness.Options{
		Listen: net.JoinHostPort("127.0.0.1", first.Port()),
		Args:   []string{"--password", sandboxPassword, "--opencode-url", oc.URL},
	})
	c.WaitFor(ctx, markerRecovered)
	res, err := c.Wait(ctx)
	require.NoError(t, err)
	require.NoError(t, res.Err)
	assert.True(t, res.OK, c.Output())
	assert.Contains(t, second.Log(), `msg="computer connected"`, "the daemon must reconnect to the new gateway")

	out := lines(c.Output())
	// The first failed run explains it: the daemon lost the gateway (closed with 1001, going
	// away), and the try the run asked for found nothing on its port.
	failed := slices.Index(out, markerFailed)
	require.Positive(t, failed, "no failure marker in:\n%s", c.Output())
	assertRetryRowsBefore(t, out, failed, nothingAnswers(t, first, out[:failed]))

	// The last health run (after the restart) printed the full healthy report.
	require.GreaterOrEqual(t, len(out), 4)
	assert.Equal(t, []string{"sandboxOk: true", "opencodeOk: true", agentOffLine, markerRecovered}, out[len(out)-4:])
}

// TestSocketDroppedUnderRunningComputer: the network drops the computer's socket (the gateway
// stays up) and refuses new connections for a while; the daemon keeps retrying on its
// reconnect timer and `sandbox health` works again once connections are allowed.
func TestSocketDroppedUnderRunningComputer(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := startGateway(t, oc.URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Files = map[string]string{"/e2e.lua": restartProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)

	c.WaitFor(ctx, markerFirstOK)
	c.HTTP.Refuse(true)
	c.HTTP.DropAll()
	c.WaitFor(ctx, markerFailed)
	// Let at least one reconnect attempt (5 s scaled, 1.25 s real) hit the refusal.
	c.WaitFor(ctx, "Not connected to the gateway: nothing answers at")
	c.HTTP.Refuse(false)

	c.WaitFor(ctx, markerRecovered)
	res, err := c.Wait(ctx)
	require.NoError(t, err)
	require.NoError(t, res.Err)
	assert.True(t, res.OK, c.Output())
	assert.Equal(t, 2, strings.Count(g.Log(), `msg="computer connected"`),
		"one connection before the drop and one after:\n%s", g.Log())

	out := lines(c.Output())
	failed := slices.Index(out, markerFailed)
	require.Positive(t, failed, "no failure marker in:\n%s", c.Output())
	// The socket dropped, and the try the run asked for was refused.
	assertRetryRowsBefore(t, out, failed, nothingAnswers(t, g, out[:failed]))
	require.GreaterOrEqual(t, len(out), 4)
	assert.Equal(t, []string{"sandboxOk: true", "opencodeOk: true", agentOffLine, markerRecovered}, out[len(out)-4:])
}

// answeredUntil is the minute `sandbox health` names as the one the gateway last answered at
// (the computer's clock, which its time scale runs ahead of the test's).
var answeredUntil = regexp.MustCompile(`answered until (\d\d:\d\d UTC)`)

// nothingAnswers is what `sandbox health` says when the try it asked for found nothing
// listening at g's address, where g answered the computer since it booted: that the gateway
// stopped, with the minute it last answered, which the rows out (the screen before it) name.
func nothingAnswers(t *testing.T, g *harness.Gateway, out []string) string {
	t.Helper()
	minute := answeredUntil.FindStringSubmatch(strings.Join(out, " "))
	require.NotNil(t, minute, "no minute the gateway last answered in:\n%s", strings.Join(out, "\n"))
	return "Not connected to the gateway: nothing answers at " + g.Addr + ": the gateway there answered until " +
		minute[1] + " and stopped (its operator restarts it)"
}

// assertRetryRowsBefore: the screen rows just before out[at] are advice, word-wrapped as print
// shows it, and the seconds to the daemon's next try as its status said them: the first try
// after a loss is 5 s away plus up to 1 s of jitter (libsandboxdaemon), so 1 to 6 s when
// `sandbox health` asked; which one depends on how soon it asked (a try `sandbox health`
// asked for, which failed at once, leaves 5 to 6 s).
func assertRetryRowsBefore(t *testing.T, out []string, at int, advice string) {
	t.Helper()
	const firstRetryMax = 6
	for seconds := 1; seconds <= firstRetryMax; seconds++ {
		rows := screen(fmt.Sprintf("%s; the daemon retries in %d s", advice, seconds))
		if at >= len(rows) && slices.Equal(rows, out[at-len(rows):at]) {
			return
		}
	}
	t.Errorf("the rows before %q are not %q with 1 to %d s to the next try:\n%s",
		out[at], advice, firstRetryMax, strings.Join(out[:at], "\n"))
}

// restartAskProgram waits for its computer to connect, then, each round, for the daemon to
// have failed to reach a stopped gateway, says so, and waits for e2e_go (the gateway is back).
// If the daemon still waits out its reconnect delay then, with a second or more to go, it
// runs `sandbox health`; if its own try came first (the gateway took that long to start),
// the round is missed and the test stops the gateway again.
const restartAskProgram = `
local lib = require('/apis/libsandbox')
local function untilStatus(wanted)
  while true do
    local s = lib.requestStatus()
    if s ~= nil and wanted(s) then return s end
    sleep(0.1)
  end
end
untilStatus(function(s) return s.connected end)
print("e2e: connected")
for round = 1, 5 do
  untilStatus(function(s) return s.state == "waiting" and (s.lastError or ""):find("^Could not connect") ~= nil end)
  print("e2e: down " .. round)
  os.pullEvent("e2e_go")
  local s = lib.requestStatus()
  if s.state == "waiting" and (s.retryInMs or 0) >= 1000 then
    print("e2e: round " .. round .. " asks")
    local ok = shell.run("sandbox", "health")
    print(ok and "e2e: health ok" or "e2e: health failed")
    print("e2e: round " .. round .. " over")
    return
  end
  print("e2e: round " .. round .. " missed (" .. s.state .. ")")
  print("e2e: round " .. round .. " over")
end
error("e2e: the daemon never waited when the gateway came back", 0)
`

// TestHealthRightAfterRestartTriesNow: `sandbox health` typed right after the gateway came
// back, while the daemon still waits out its reconnect delay (5 to 6 s after a failed try),
// makes it try now and shows the gateway healthy, not the last failure ("nothing answers").
func TestHealthRightAfterRestartTriesNow(t *testing.T) {
	ctx := testContext(t)
	oc := opencodefake.Start(t, opencodefake.Options{})
	g := startGateway(t, oc.URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Files = map[string]string{"/e2e.lua": restartAskProgram}
	// Real time: the gateway's start takes real time, which must fit in the daemon's wait.
	opts.TimeScale = 1
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, "e2e: connected")

	for round := 1; ; round++ {
		require.NoError(t, g.Stop(), "SIGTERM must end the gateway with status 0")
		c.WaitFor(ctx, fmt.Sprintf("e2e: down %d", round))
		g = harness.Start(t, gatewayBin, harness.Options{
			Listen: g.Addr,
			Args:   []string{"--password", sandboxPassword, "--opencode-url", oc.URL},
		})
		c.QueueString("e2e_go")
		c.WaitFor(ctx, fmt.Sprintf("e2e: round %d over", round))
		if strings.Contains(c.Output(), fmt.Sprintf("e2e: round %d asks", round)) {
			break
		}
	}
	res, err := c.Wait(ctx)
	require.NoError(t, err)
	require.NoError(t, res.Err)
	assert.True(t, res.OK, c.Output())
	out := lines(c.Output())
	asked := slices.IndexFunc(out, func(l string) bool { return strings.HasSuffix(l, " asks") })
	require.Positive(t, asked, c.Output())
	assert.Equal(t, []string{"sandboxOk: true", "opencodeOk: true", agentOffLine, "e2e: health ok"}, out[asked+1:asked+5],
		"health typed while the daemon waited must show the gateway that is back:\n%s", c.Output())
}
