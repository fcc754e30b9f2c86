package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"

	"tests/internal/harness"
)

// redrawProgram redraws every cell of the screen with a new character and colours, as fast
// as the computer lets it (one redraw per resume).
const redrawProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
print("` + markerAtPrompt + `")
local n, fg = 0, ("0123456789abcdef"):rep(4):sub(1, 51)
while true do
  n = n + 1
  local ch = string.char(65 + n % 26)
  for y = 1, 19 do
    term.setCursorPos(1, y)
    term.blit(ch:rep(51), fg, ("f"):rep(51))
  end
  sleep(0)
end
`

// BenchmarkScreenWatchOfAWholeScreenRedraw: a computer (real time, no time scale) redraws its
// whole screen without pause while the host watches it through the gateway's stream; it
// reports the frames per second the host receives and the computer's screen.update bytes per
// frame (docs/performance.md). Run: go test -run '^$' -bench ScreenWatch -benchtime 200x ./tests/e2e
func BenchmarkScreenWatchOfAWholeScreenRedraw(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	g := startGateway(b, opencodefake.Start(b, opencodefake.Options{}).URL)
	opts := computerOptions(b, g, sandboxPassword, "/redraw.lua")
	opts.ID, opts.Label = 11, "desk"
	opts.TimeScale = 1
	opts.Settings["sandbox.allow_screen"] = "view"
	opts.Files = map[string]string{"/redraw.lua": redrawProgram}
	opts.Input = computer.Input(make(chan string))
	c := fakecrafttest.StartWithin(b, opts, testTimeout)
	c.WaitFor(ctx, markerAtPrompt)

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+g.Addr+"/trapos/computers/"+deskTraposID+"/screen", nil)
	require.NoError(b, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b, err)
	defer resp.Body.Close()
	require.Equal(b, http.StatusOK, resp.StatusCode)
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	next := func() {
		for {
			line, err := r.ReadString('\n')
			require.NoError(b, err)
			if line == "\n" {
				return
			}
		}
	}
	next() // the first, whole frame
	updates0, bytes0 := screenCounters(ctx, b, g)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		next()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	updates, bytes := screenCounters(ctx, b, g)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "frames/s")
	if updates > updates0 {
		b.ReportMetric((bytes-bytes0)/(updates-updates0), "B/update")
	}
}

var counterLine = regexp.MustCompile(`(?m)^(trapos_gateway_screen_update(?:s|_bytes)_total) (\S+)$`)

// screenCounters reads the screen module's update and byte counters from /metrics.
func screenCounters(ctx context.Context, tb testing.TB, g *harness.Gateway) (updates, bytes float64) {
	tb.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+g.Addr+"/metrics", nil)
	require.NoError(tb, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	for _, m := range counterLine.FindAllStringSubmatch(string(body), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		require.NoError(tb, err)
		if m[1] == "trapos_gateway_screen_updates_total" {
			updates = v
		} else {
			bytes = v
		}
	}
	return updates, bytes
}
