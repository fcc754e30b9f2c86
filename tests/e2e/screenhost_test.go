package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"

	"tests/internal/harness"
)

// screenOut is the screen tools' result, as far as these tests read it.
type screenOut struct {
	Width   int    `json:"width"`
	Height  int    `json:"height"`
	Text    string `json:"text"`
	Settled *bool  `json:"settled"`
}

// TestTheHostSeesAndDrivesTheComputersScreen: on a fakecraft computer whose owner allows
// screen control, MCP's read_screen shows what ls printed at the player's prompt, send_text
// types at the prompt ("lua\n1+1\n" shows 2), edit started at the prompt shows on the screen
// and is left with the keys (and with clicks: its menu's button and its Exit), a text longer than one request (with a tab) is saved by edit, and the live view over the host API stops the computer's watch
// when its viewer goes away; its frames carry the colours the next write uses.
func TestTheHostSeesAndDrivesTheComputersScreen(t *testing.T) {
	// It waits for the screen to settle after each input, and shares nothing (its own gateway
	// and computer): it runs beside the package's other tests that mostly wait.
	t.Parallel()
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 11, "desk"
	opts.Settings["sandbox.allow_screen"] = "control"
	opts.Files = map[string]string{"/e2e.lua": deskProgram, "/door.lua": doorProgram}
	opts.Input = computer.Input(make(chan string)) // the player types nothing
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerAtPrompt)
	s := harness.ConnectMCP(ctx, t, g, "")

	send := func(t *testing.T, tool string, args map[string]any) screenOut {
		t.Helper()
		args["traposId"] = deskTraposID
		var out screenOut
		harness.ToolOK(t, harness.CallTool(ctx, t, s, tool, args), deskTraposID, &out)
		require.NotNil(t, out.Settled)
		assert.True(t, *out.Settled, "the screen settled:\n%s", out.Text)
		return out
	}
	read := func(t *testing.T) screenOut {
		t.Helper()
		var out screenOut
		harness.ToolOK(t, harness.CallTool(ctx, t, s, "read_screen", map[string]any{"traposId": deskTraposID}), deskTraposID, &out)
		return out
	}
	lastRow := func(text string) string {
		rows := strings.Split(text, "\n")
		return rows[len(rows)-1]
	}

	t.Run("read_screen after ls shows the listing", func(t *testing.T) {
		send(t, "send_text", map[string]any{"text": "ls\n"})
		out := read(t)
		assert.Equal(t, computer.TermWidth, out.Width)
		assert.Equal(t, computer.TermHeight, out.Height)
		assert.Contains(t, out.Text, markerAtPrompt, "the mirror holds what was drawn before")
		assert.Regexp(t, `(?s)\n> ls\n.*door\.lua e2e\.lua\n>$`, out.Text)
		assert.Equal(t, ">", lastRow(out.Text), "back at the prompt")
	})

	t.Run("send_text lua then 1+1 shows 2", func(t *testing.T) {
		out := send(t, "send_text", map[string]any{"text": "lua\n1+1\n"})
		assert.Regexp(t, `(?m)^lua> 1\+1\n2\n`, out.Text)
		out = send(t, "send_text", map[string]any{"text": "exit()\n"})
		assert.Equal(t, ">", lastRow(out.Text), "lua left, back at the prompt")
	})

	t.Run("edit shows on the screen and is left with the keys", func(t *testing.T) {
		out := send(t, "send_text", map[string]any{"text": "edit /door.lua\n"})
		rows := strings.Split(out.Text, "\n")
		assert.Equal(t, doorProgram, rows[0], "edit draws the file from the top")
		assert.Contains(t, out.Text, "to access menu") // Press Ctrl or click here to access menu, on a colour computer
		out = send(t, "send_keys", map[string]any{"keys": []string{"leftCtrl"}})
		assert.Contains(t, out.Text, "Exit", "the menu is open")
		// Left from the first item wraps to the last, Exit.
		out = send(t, "send_keys", map[string]any{"keys": []string{"left", "enter"}})
		assert.NotContains(t, out.Text, "to access menu")
		assert.Equal(t, ">", lastRow(out.Text), "edit left, back at the prompt")
	})

	t.Run("click opens edit's menu and picks Exit, as a player's mouse does", func(t *testing.T) {
		out := send(t, "send_text", map[string]any{"text": "edit /door.lua\n"})
		require.Contains(t, lastRow(out.Text), "click here to access menu")
		// The bottom row's words are edit's menu button; its items are the same row's words.
		out = send(t, "click", map[string]any{"x": 3, "y": computer.TermHeight})
		require.True(t, strings.HasPrefix(lastRow(out.Text), "[Save] Exit"), "the menu is open: %q", lastRow(out.Text))
		out = send(t, "click", map[string]any{"x": strings.Index(lastRow(out.Text), "Exit") + 1, "y": computer.TermHeight})
		assert.Equal(t, ">", lastRow(out.Text), "edit left, back at the prompt")
	})

	t.Run("a text longer than one request, with a tab, is saved byte for byte", func(t *testing.T) {
		send(t, "send_text", map[string]any{"text": "edit /notes.txt\n"})
		// More events than one screen.input queues (128): send_text sends it in two.
		long := "café " + strings.Repeat("x", 130)
		send(t, "send_text", map[string]any{"text": long + "\n\tü"})
		out := send(t, "send_keys", map[string]any{"keys": []string{"leftCtrl", "enter"}})
		assert.Contains(t, out.Text, "Saved to notes.txt")
		out = send(t, "send_keys", map[string]any{"keys": []string{"leftCtrl", "left", "enter"}})
		assert.Equal(t, ">", lastRow(out.Text), "edit left, back at the prompt")
		got, err := c.FS.ReadFile("/notes.txt")
		require.NoError(t, err)
		assert.Equal(t, "caf\xe9 "+strings.Repeat("x", 130)+"\n    \xfc\n", string(got), "é and ü as CC's bytes; Tab is edit's indent of four spaces")
	})

	t.Run("a completion drawn in grey is said to be no typed text", func(t *testing.T) {
		// The shell draws "it" after "ed" in grey, and the text reads "> edit".
		res := harness.CallTool(ctx, t, s, "send_text", map[string]any{"traposId": deskTraposID, "text": "ed"})
		var out screenOut
		harness.ToolOK(t, res, deskTraposID, &out)
		assert.Equal(t, "> edit", lastRow(out.Text))
		assert.Regexp(t, `^Row \d+, columns 5-6, from the cursor on, are drawn in grey: a completion the program suggests for the word being typed .*Tab takes it`, harness.Texts(res)[1])
		send(t, "send_keys", map[string]any{"keys": []string{"backspace", "backspace"}})

		// edit draws its completion on grey at the end of the line typed.
		send(t, "send_text", map[string]any{"text": "edit /hint.lua\n"})
		res = harness.CallTool(ctx, t, s, "send_text", map[string]any{"traposId": deskTraposID, "text": "pri"})
		harness.ToolOK(t, res, deskTraposID, &out)
		assert.True(t, strings.HasPrefix(out.Text, "print(\n"), out.Text)
		assert.Regexp(t, `^Row 1, columns 4-6, from the cursor on, are drawn in grey: `, harness.Texts(res)[1])
		res = harness.CallTool(ctx, t, s, "send_keys", map[string]any{"traposId": deskTraposID, "keys": []string{"tab"}})
		harness.ToolOK(t, res, deskTraposID, &out)
		assert.True(t, strings.HasPrefix(out.Text, "print(\n"), "Tab took it: %s", out.Text)
		assert.NotContains(t, harness.Texts(res)[1], "drawn in grey", "what Tab took is typed")
		out = send(t, "send_keys", map[string]any{"keys": []string{"leftCtrl", "left", "enter"}})
		assert.Equal(t, ">", lastRow(out.Text), "edit left, back at the prompt")
	})

	t.Run("the live view stops the watch when its viewer goes away", func(t *testing.T) {
		viewer, leave := context.WithCancel(ctx)
		req, err := http.NewRequestWithContext(viewer, http.MethodGet, "http://"+g.Addr+"/trapos/computers/"+deskTraposID+"/screen", nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		r := bufio.NewReader(resp.Body)
		frame := readEvent(t, r)
		assert.Contains(t, frame, `"width":51`, "the first frame is the whole screen")
		assert.Contains(t, frame, "> ", "with the prompt")
		var colours struct{ FG, BG int }
		require.NoError(t, json.Unmarshal([]byte(frame), &colours))
		assert.Equal(t, struct{ FG, BG int }{1, 32768}, colours, "the shell types white on black, as screen.read says")
		// Typing changes the screen: the next frame shows it.
		send(t, "send_text", map[string]any{"text": "hello"})
		for !strings.Contains(frame, "> hello") {
			frame = readEvent(t, r)
		}
		leave()
		require.Eventually(t, func() bool {
			return metric(ctx, t, g, `trapos_gateway_frames_out_total{event="gateway_request",type="screen.unwatch"} 1`)
		}, testTimeout, pollInterval, "the gateway stops the computer's watch when the viewer leaves")
	})
}

// readEvent returns the data of the next server-sent event on r.
func readEvent(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var data string
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimSuffix(line, "\n")
		if line == "" && data != "" {
			return data
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = d
		}
	}
}

// metric reports whether the gateway's /metrics holds line.
func metric(ctx context.Context, t *testing.T, g *harness.Gateway, line string) bool {
	t.Helper()
	return strings.Contains(metricsText(ctx, t, g), line)
}
