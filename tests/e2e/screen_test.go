package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// Fixtures of the screen tests.
const (
	// screenTraposID is the computer whose screen the host reads and types on.
	screenTraposID = "8:desk"
	// markerPrompt: the computer is connected and a shell is about to show its prompt.
	markerPrompt = "e2e: at the prompt"
	// screenProgram connects, then leaves the player at an interactive shell. Nothing types
	// into it but screen.input (the computer has no fakecraft input).
	screenProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
print("` + markerPrompt + `")
shell.run("shell")
`
	// screenPoll is how often the test reads the screen again while waiting for a change.
	screenPoll = 100 * time.Millisecond
)

// screenRead is the payload of screen.read.
type screenRead struct {
	Width  int `json:"width"`
	Height int `json:"height"`
	Cursor struct {
		X     int  `json:"x"`
		Y     int  `json:"y"`
		Blink bool `json:"blink"`
	} `json:"cursor"`
	Rows []struct {
		Text string `json:"text"`
		FG   string `json:"fg"`
		BG   string `json:"bg"`
	} `json:"rows"`
	Palette []string `json:"palette"`
}

// readScreen asks the computer for its screen through the host API.
func readScreen(ctx context.Context, t *testing.T, g *harness.Gateway) screenRead {
	t.Helper()
	status, got := postRequest(ctx, t, g, screenTraposID, `{"type":"screen.read","payload":{},"timeoutMs":10000}`)
	require.Equal(t, http.StatusOK, status, "%+v", got)
	require.True(t, got.OK, "%+v", got.Error)
	raw, err := json.Marshal(got.Payload)
	require.NoError(t, err)
	var s screenRead
	require.NoError(t, json.Unmarshal(raw, &s))
	return s
}

// screenRows are the screen's rows, trailing spaces trimmed.
func screenRows(s screenRead) []string {
	rows := make([]string, len(s.Rows))
	for i, r := range s.Rows {
		rows[i] = strings.TrimRight(r.Text, " ")
	}
	return rows
}

// typeText sends text as screen.input char events (\n is Enter).
func typeText(ctx context.Context, t *testing.T, g *harness.Gateway, text string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"type":      "screen.input",
		"payload":   map[string]any{"events": []map[string]any{{"type": "char", "text": text}}},
		"timeoutMs": 10000,
	})
	require.NoError(t, err)
	status, got := postRequest(ctx, t, g, screenTraposID, string(body))
	require.Equal(t, http.StatusOK, status)
	require.True(t, got.OK, "%+v", got.Error)
	assert.Equal(t, float64(len(text)+strings.Count(text, "\n")), got.Payload["queued"])
}

// waitForScreen polls screen.read until cond holds on its rows, and returns them (nothing
// tells the raw API that the screen changed; a watch is the gateway screen module's).
func waitForScreen(ctx context.Context, t *testing.T, g *harness.Gateway, what string, cond func(rows []string) bool) []string {
	t.Helper()
	for {
		rows := screenRows(readScreen(ctx, t, g))
		if cond(rows) {
			return rows
		}
		select {
		case <-ctx.Done():
			require.FailNow(t, "the screen never showed "+what, "last:\n%s", strings.Join(rows, "\n"))
		case <-time.After(screenPoll):
		}
	}
}

func hasRow(rows []string, want string) bool {
	for _, r := range rows {
		if r == want {
			return true
		}
	}
	return false
}

// TestScreenReadAndInputThroughTheGateway: the host reads a booted computer's screen and
// types on it with the raw host API, through the real gateway binary.
func TestScreenReadAndInputThroughTheGateway(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 8, "desk"
	opts.Settings["sandbox.allow_screen"] = "control"
	opts.Files = map[string]string{"/e2e.lua": screenProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerPrompt)

	// The mirror is whole from boot: the lines printed before this request are on it.
	rows := waitForScreen(ctx, t, g, "the prompt", func(rows []string) bool {
		return hasRow(rows, markerPrompt) && hasRow(rows, ">")
	})
	s := readScreen(ctx, t, g)
	assert.Equal(t, 51, s.Width)
	assert.Equal(t, 19, s.Height)
	assert.Len(t, s.Palette, 16)
	assert.True(t, s.Cursor.Blink, "the prompt blinks its cursor:\n%s", strings.Join(rows, "\n"))

	t.Run("ls shows the listing", func(t *testing.T) {
		typeText(ctx, t, g, "ls\n")
		rows := waitForScreen(ctx, t, g, "the listing of /", func(rows []string) bool {
			joined := strings.Join(rows, "\n")
			return strings.Contains(joined, "> ls") && strings.Contains(joined, "e2e.lua") &&
				strings.Contains(joined, "servers")
		})
		s := readScreen(ctx, t, g)
		for i, r := range s.Rows {
			assert.Len(t, r.FG, s.Width, "row %d fg", i+1)
			assert.Len(t, r.BG, s.Width, "row %d bg", i+1)
		}
		assert.Contains(t, strings.Join(rows, "\n"), "apis")
	})

	t.Run("lua then 1+1 shows 2", func(t *testing.T) {
		typeText(ctx, t, g, "lua\n1+1\n")
		waitForScreen(ctx, t, g, "2 under lua> 1+1", func(rows []string) bool {
			for i, r := range rows {
				if strings.HasSuffix(r, "> 1+1") && i+1 < len(rows) && rows[i+1] == "2" {
					return true
				}
			}
			return false
		})
	})

	t.Run("input outside the list is refused and nothing typed", func(t *testing.T) {
		status, got := postRequest(ctx, t, g, screenTraposID,
			`{"type":"screen.input","payload":{"events":[{"type":"char","text":"x"},{"type":"websocket_message"}]},"timeoutMs":10000}`)
		require.Equal(t, http.StatusOK, status)
		assert.False(t, got.OK)
		require.NotNil(t, got.Error)
		assert.Equal(t, "bad_payload", got.Error.Code)
		assert.Contains(t, got.Error.Message, `unknown input type "websocket_message"`)
	})
}

// TestTheScreenIsMirroredAgainAfterSandboxStopAndReconnect: `sandbox stop` takes the daemon's
// mirror off the terminal; `sandbox reconnect` puts it back, so the host reads what is drawn
// from then on. It read the screen of the stop, frozen, until the computer rebooted (played:
// the web console showed `> sandbox stop` on a computer long past it).
func TestTheScreenIsMirroredAgainAfterSandboxStopAndReconnect(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	const back = "e2e: drawn after the reconnect"
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 8, "desk"
	opts.Settings["sandbox.allow_screen"] = "view"
	opts.Files = map[string]string{"/e2e.lua": `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
shell.run("sandbox", "stop")
term.clear()
term.setCursorPos(1, 1)
print("e2e: drawn while stopped")
if not shell.run("sandbox", "reconnect") then error("e2e: not reconnected", 0) end
print("` + back + `")
shell.run("shell")
`}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, back)

	// Printed before the read was asked, on the computer that answers it: on the mirror now.
	s := readScreen(ctx, t, g)
	rows := screenRows(s)
	assert.True(t, hasRow(rows, back), "the screen as the host reads it:\n%s", strings.Join(rows, "\n"))
	// Cleared while the daemon was stopped: health's lines are gone from the screen, and from
	// the mirror, which starts blank again as at boot (what was drawn meanwhile is unknown).
	assert.NotContains(t, strings.Join(rows, "\n"), "sandboxOk", "the screen of the stop, frozen")
}

// TestABasicComputerRefusesMouseInputThroughTheAPI: a basic computer's client refuses a mouse
// event in screen.input, naming why, as CC gives the mouse to advanced computers only; the
// caller of POST …/requests and of POST …/input reads that refusal, and nothing of the request
// is typed. Before, the client queued the click, and a program there got a mouse_click no
// player can make on a basic computer.
func TestABasicComputerRefusesMouseInputThroughTheAPI(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label, opts.Basic = 8, "desk", true
	opts.Settings["sandbox.allow_screen"] = "control"
	opts.Files = map[string]string{"/e2e.lua": screenProgram}
	fakecrafttest.StartWithin(t, opts, testTimeout).WaitFor(ctx, markerPrompt)
	waitForScreen(ctx, t, g, "the prompt", func(rows []string) bool { return hasRow(rows, ">") })

	const refusal = "mouse events reach advanced computers only: this one is a basic computer; nothing was queued"
	for _, ev := range []string{
		`{"type":"click","button":1,"x":1,"y":1}`,
		`{"type":"mouse_click","button":1,"x":1,"y":1}`,
		`{"type":"drag","button":1,"x":1,"y":1}`,
		`{"type":"mouse_up","button":1,"x":1,"y":1}`,
		`{"type":"scroll","direction":1,"x":1,"y":1}`,
	} {
		status, got := postRequest(ctx, t, g, screenTraposID,
			`{"type":"screen.input","payload":{"events":[{"type":"char","text":"x"},`+ev+`]},"timeoutMs":10000}`)
		require.Equal(t, http.StatusOK, status, ev)
		require.False(t, got.OK, ev)
		require.NotNil(t, got.Error, ev)
		assert.Equal(t, "bad_payload", got.Error.Code, ev)
		assert.Equal(t, "events[1]: "+refusal, got.Error.Message, ev)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL("/trapos/computers/8:desk/input"),
		strings.NewReader(`{"events":[{"type":"char","text":"yz"},{"type":"key","name":"a"},{"type":"click","button":2,"x":3,"y":4}]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var input apiAnswer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&input))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.False(t, input.OK)
	require.NotNil(t, input.Error)
	assert.Equal(t, "bad_payload", input.Error.Code)
	assert.Equal(t, "events[2]: "+refusal, input.Error.Message, "the click's place in the whole input")

	// None of the refused requests' keys were typed: the line holds only what is typed now.
	typeText(ctx, t, g, "ls\n")
	rows := waitForScreen(ctx, t, g, "the listing of /", func(rows []string) bool {
		return strings.Contains(strings.Join(rows, "\n"), "e2e.lua")
	})
	assert.True(t, hasRow(rows, "> ls"), "the refused requests typed nothing:\n%s", strings.Join(rows, "\n"))
}
