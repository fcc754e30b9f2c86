package scaleout

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit"

	"tests/internal/harness"
)

// tickingProgram waits until the daemon is connected, then prints a new line every half
// second: a screen that keeps changing.
const tickingProgram = harness.WaitConnectedLua + `
print("` + markerUp + `")
for i = 1, 100000 do
  print("tick " .. i)
  sleep(0.5)
end
`

// screenComputer is a TrapOS computer with the real Lua daemon, connected to url, whose owner
// lets the host watch its screen, running program.
func screenComputer(t *testing.T, url, program string) *fakecrafttest.Computer {
	t.Helper()
	return daemonComputerWith(t, map[string]string{"sandbox.url": url, "sandbox.password": "pw", "sandbox.allow_screen": "view"}, program)
}

// liveScreen is GET …/screen on g, read event by event.
type liveScreen struct {
	resp  *http.Response
	r     *bufio.Reader
	leave context.CancelFunc
}

func openLiveScreen(ctx context.Context, t *testing.T, g *harness.Gateway, traposID string) *liveScreen {
	t.Helper()
	return openLiveMonitor(ctx, t, g, traposID, "")
}

// openLiveMonitor is openLiveScreen of the computer's monitor named monitor ("": its own
// screen).
func openLiveMonitor(ctx context.Context, t *testing.T, g *harness.Gateway, traposID, monitor string) *liveScreen {
	t.Helper()
	ctx, leave := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, screenURL(g, traposID, monitor), nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	s := &liveScreen{resp: resp, r: bufio.NewReader(resp.Body), leave: leave}
	t.Cleanup(s.close)
	return s
}

// screenURL is the host API's stream of traposID's screen on g, or of its monitor named monitor.
func screenURL(g *harness.Gateway, traposID, monitor string) string {
	u := g.URL("/trapos/computers/" + url.PathEscape(traposID) + "/screen")
	if monitor != "" {
		u += "?" + url.Values{"monitor": {monitor}}.Encode()
	}
	return u
}

// next returns the next event's name and data.
func (s *liveScreen) next(t *testing.T) (name, data string) {
	t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && name != "":
			return name, data
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// frameWith waits for a frame that shows text, and returns it.
func (s *liveScreen) frameWith(t *testing.T, text string) string {
	t.Helper()
	for {
		name, data := s.next(t)
		require.Equal(t, "frame", name, "the stream ended: %s", data)
		if strings.Contains(data, text) {
			return data
		}
	}
}

// end reads the stream past its frames to its next event, which must be its end, and returns
// the end's data.
func (s *liveScreen) end(t *testing.T) string {
	t.Helper()
	for {
		name, data := s.next(t)
		if name == "frame" {
			continue
		}
		require.Equal(t, "end", name)
		return data
	}
}

func (s *liveScreen) close() {
	s.leave()
	_ = s.resp.Body.Close()
}

// computerOnBListedOnA starts a nats-server, replicas a and b, and a computer (the real Lua
// daemon running tickingProgram) on b, and returns once a lists it: the set-up of a screen
// watched through another replica. The context bounds the test.
func computerOnBListedOnA(t *testing.T) (context.Context, *harness.Gateway, *harness.Gateway) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	t.Cleanup(cancel)
	nats := harness.StartNATS(t, natsBin)
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")
	c := screenComputer(t, b.WebSocketURL(), tickingProgram)
	c.WaitFor(ctx, markerUp)
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "b", listComputers(ct, a)["0:"]) },
		waitLimit, testkit.Poll, "A to list the computer on B")
	return ctx, a, b
}

// TestALiveScreenThroughAnyReplica: the screen of a computer (the real Lua daemon) whose socket
// is on replica B is watched through replica A, the real binaries on a real nats-server: its
// changes show up, the viewer leaving stops the watch on the computer, and B stopping ends a
// stream on A naming B.
func TestALiveScreenThroughAnyReplica(t *testing.T) {
	ctx, a, b := computerOnBListedOnA(t)

	s := openLiveScreen(ctx, t, a, "0:")
	first := s.frameWith(t, "tick ")
	var f struct {
		Width int `json:"width"`
	}
	require.NoError(t, json.Unmarshal([]byte(first), &f))
	assert.Equal(t, 51, f.Width, "the whole screen")
	// The screen keeps changing: a later tick shows up.
	s.frameWith(t, "tick 4")
	s.close()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		_, body := get(ct, b, "/metrics")
		assert.Contains(ct, body, `trapos_gateway_frames_out_total{event="gateway_request",replica="b",type="screen.unwatch"} 1`)
	}, waitLimit, testkit.Poll, "B to stop the computer's watch once the viewer left A")

	s = openLiveScreen(ctx, t, a, "0:")
	s.frameWith(t, "tick ")
	require.NoError(t, b.Stop())
	data := s.end(t)
	assert.Contains(t, data, `"code":"not_connected"`)
	assert.Contains(t, data, "replica b, which held its socket,")
}

// TestALiveScreenThroughAReplicaThatStops: the replica a viewer watches a computer of another
// replica through stopping (SIGTERM) ends the stream as it ends those of its own computers,
// marked stopping, so the CLI's view and the MCP bridge wait for another gateway, and its stop
// waits for no stream (no shutdown deadline passed). It ended "could not pass it on … watch it
// again", unmarked: the holder's words for a replica it gave up, which came first.
func TestALiveScreenThroughAReplicaThatStops(t *testing.T) {
	ctx, a, _ := computerOnBListedOnA(t)

	s := openLiveScreen(ctx, t, a, "0:")
	s.frameWith(t, "tick ")
	require.NoError(t, a.Stop())
	assert.JSONEq(t, `{"ok":false,"error":{"code":"not_connected","message":"the gateway is shutting down","stopping":true}}`, s.end(t))
	assert.NotContains(t, a.Log(), "shutdown deadline passed")
}
