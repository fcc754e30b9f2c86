package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"fakecraft/fakecrafttest"

	"tests/internal/harness"
)

// waitingDoorProgram connects, then draws only when the test says: a tick line at each
// e2e_tick, "Tür offen" (the byte FC, as CC holds ü) at e2e_open; e2e_off turns the computer off.
const waitingDoorProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
print("e2e: the door waits")
local ticks = 0
while true do
  local event = os.pullEvent()
  if event == "e2e_tick" then
    ticks = ticks + 1
    print("tick " .. ticks)
  elseif event == "e2e_open" then
    print("T\252r offen")
  elseif event == "e2e_off" then
    os.shutdown()
  end
end
`

// screenWatchAnswers matches how many answers to screen.watch the gateway has read from computers.
var screenWatchAnswers = regexp.MustCompile(`trapos_gateway_frames_in_total\{event="computer_response",type="screen\.watch"\} (\d+)`)

// waitedScreen is wait_for_screen's result, as far as these tests read it.
type waitedScreen struct {
	Text     string `json:"text"`
	TimedOut bool   `json:"timedOut"`
	WaitedMs *int64 `json:"waitedMs"`
}

// TestTheAgentWaitsForTheScreen: over /mcp and through the stdio bridge, wait_for_screen on a
// booted computer answers once the program prints the text waited for (Tür as CC shows it),
// once the screen changes (no text), with the screen and timedOut at its timeout, and
// not_connected when the computer turns off mid-wait. The program draws only at the test's
// events, each sent once the wait's watch is asked for.
func TestTheAgentWaitsForTheScreen(t *testing.T) {
	// It waits for screens and the waits' own timeouts, and shares nothing (its own gateway and
	// computers): it runs beside the package's other tests that mostly wait.
	t.Parallel()
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	for i, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
			opts.ID, opts.Label = 12+i, "door"
			id := fmt.Sprintf("%d:door", opts.ID)
			opts.Settings["sandbox.allow_screen"] = "view"
			opts.Files = map[string]string{"/e2e.lua": waitingDoorProgram}
			c := fakecrafttest.StartWithin(t, opts, testTimeout)
			c.WaitFor(ctx, "e2e: the door waits")
			s := harness.ConnectMCP(ctx, t, g, "")
			if transport == "stdio" {
				s = harness.ConnectMCPStdio(ctx, t, gatewayBin, g)
			}
			// waiting starts a wait and returns once the computer answered the gateway's ask for
			// its screen's watch: from then on the wait watches, and what the program draws
			// reaches it. (Returning once the ask was sent, a computer turned off before it
			// answered was told "disconnected before it answered", not "while the wait
			// watched its screen", on a busy machine.)
			waiting := func(args map[string]any) <-chan *sdk.CallToolResult {
				t.Helper()
				before := metricCount(ctx, t, g, screenWatchAnswers)
				args["traposId"], args["timeoutMs"] = id, 60000
				done := harness.CallToolAsync(ctx, s, "wait_for_screen", args)
				require.Eventually(t, func() bool { return metricCount(ctx, t, g, screenWatchAnswers) > before }, testTimeout, pollInterval)
				return done
			}
			answer := func(done <-chan *sdk.CallToolResult) *sdk.CallToolResult {
				t.Helper()
				select {
				case res := <-done:
					return res
				case <-ctx.Done():
					t.Fatal("wait_for_screen never answered")
					return nil
				}
			}

			t.Run("the text", func(t *testing.T) {
				done := waiting(map[string]any{"text": "Tür offen"})
				select {
				case res := <-done:
					t.Fatalf("answered before the text showed: %v", harness.Texts(res))
				default:
				}
				c.QueueString("e2e_open")
				var out waitedScreen
				harness.ToolOK(t, answer(done), id, &out)
				assert.Contains(t, out.Text, "Tür offen")
				assert.False(t, out.TimedOut)
			})

			t.Run("a change", func(t *testing.T) {
				done := waiting(map[string]any{})
				// A tick at a time, each once the computer drew the last: the wait answers at
				// the first drawn after the screen it began on.
				var res *sdk.CallToolResult
				for n := 1; res == nil; n++ {
					c.QueueString("e2e_tick")
					c.WaitFor(ctx, fmt.Sprintf("tick %d", n))
					select {
					case res = <-done:
					default:
					}
				}
				var out waitedScreen
				harness.ToolOK(t, res, id, &out)
				assert.Contains(t, out.Text, "tick ")
				assert.False(t, out.TimedOut)
			})

			t.Run("its timeout", func(t *testing.T) {
				// A live view holds the watch, so the wait's first screen is there at once
				// and its short timeout is all waiting.
				view, leave := context.WithCancel(ctx)
				defer leave()
				req, err := http.NewRequestWithContext(view, http.MethodGet, g.URL("/trapos/computers/"+id+"/screen"), nil)
				require.NoError(t, err)
				req.Header.Set("Accept", "text/event-stream")
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				require.Equal(t, http.StatusOK, resp.StatusCode)
				readEvent(t, bufio.NewReader(resp.Body))

				res := harness.CallTool(ctx, t, s, "wait_for_screen", map[string]any{"traposId": id, "text": "never shown", "timeoutMs": 2000})
				var out waitedScreen
				harness.ToolOK(t, res, id, &out)
				assert.True(t, out.TimedOut)
				assert.Contains(t, out.Text, "tick ", "the screen as it is, the last subtest's ticks on it")
				require.NotNil(t, out.WaitedMs)
				assert.GreaterOrEqual(t, *out.WaitedMs, int64(2000))
				assert.Regexp(t, `^The screen did not show "never shown" within the \d+ ms waited \(timedOut true\): this is the screen as it is now\.`, harness.Texts(res)[1])
			})

			t.Run("the computer turned off", func(t *testing.T) {
				done := waiting(map[string]any{"text": "never shown"})
				c.QueueString("e2e_off")
				msg := harness.ToolError(t, answer(done), "not_connected")
				assert.Regexp(t, `^not_connected: computer `+regexp.QuoteMeta(id)+` disconnected while the wait watched its screen, \d+ ms in, before it showed "never shown" \(it may be rebooting, or it was shut down or its chunk unloaded\); ping with wait true waits for it to come back, and wait_for_screen then waits on$`, msg)
			})
		})
	}
}
