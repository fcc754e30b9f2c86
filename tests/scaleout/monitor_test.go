package scaleout

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer/machine"
	"fakecraft/fakecrafttest"
	"fakecraft/httpapi"
	"fakecraft/world"

	"trap-sandbox/testkit"

	"tests/internal/browser"
	"tests/internal/harness"
	"tests/internal/repo"
)

// monitorTickingProgram waits until the daemon is connected, then every half second prints a
// new line on the computer's screen and writes the same count on the monitor on its top:
// two screens that keep changing, each its own way.
const monitorTickingProgram = harness.WaitConnectedLua + `
local top = peripheral.wrap("top")
print("` + markerUp + `")
for i = 1, 100000 do
  print("tick " .. i)
  top.clear()
  top.setCursorPos(1, 1)
  top.write("mon " .. i)
  sleep(0.5)
end
`

// monitorKitchen is computer 5:küche, the real Lua daemon connected to url, with a monitor two
// blocks wide on its top, whose owner lets the host watch its screen, running
// monitorTickingProgram. It returns once the program runs, with the world, in which the
// monitor can be taken off.
func monitorKitchen(ctx context.Context, t *testing.T, url string) *fakecrafttest.World {
	t.Helper()
	return monitorKitchenWith(ctx, t, url, map[string]string{"top": "monitor:2:1"})
}

// monitorKitchenWith is monitorKitchen with peripherals attached (a monitor on its top
// among them, where the program writes).
func monitorKitchenWith(ctx context.Context, t *testing.T, url string, peripherals map[string]string) *fakecrafttest.World {
	t.Helper()
	spec := world.Spec{Computers: []world.ComputerSpec{{ID: 5, Label: "k\xfcche", Peripherals: peripherals}}}
	w := fakecrafttest.NewWorld(t, spec)
	root, err := repo.Root()
	require.NoError(t, err)
	auto, err := machine.Autostart(filepath.Join(root, "packages"), nil)
	require.NoError(t, err)
	opts := w.At(5).Options(machine.Options{
		Root:      filepath.Join(root, "trapos"),
		Label:     spec.Computers[0].Label,
		Settings:  map[string]string{"sandbox.url": url, "sandbox.password": "pw", "sandbox.allow_screen": "view"},
		TimeScale: 4, // the daemon's 5 s reconnect delay takes 1.25 s
		HTTP:      httpapi.Options{AllowPrivate: true},
		Program:   "/e2e.lua",
		Files:     map[string]string{"/e2e.lua": monitorTickingProgram},
		Autostart: auto,
	})
	fakecrafttest.StartWithin(t, opts, 3*waitLimit).WaitFor(ctx, markerUp)
	return w
}

// monitorFrame is a frame of a monitor's stream, as these tests read it.
type monitorFrame struct {
	Width     int     `json:"width"`
	Height    int     `json:"height"`
	Monitor   string  `json:"monitor"`
	TextScale float64 `json:"textScale"`
	Rows      []struct {
		Text string `json:"text"`
	} `json:"rows"`
}

func decodeMonitorFrame(t *testing.T, data string) monitorFrame {
	t.Helper()
	var f monitorFrame
	require.NoError(t, json.Unmarshal([]byte(data), &f), data)
	require.NotEmpty(t, f.Rows, data)
	return f
}

// screenRefusal is GET …/screen's answer on g that is no stream: its status and body.
func screenRefusal(t *testing.T, g *harness.Gateway, traposID, monitor string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, screenURL(g, traposID, monitor), nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NotEqual(t, "text/event-stream", resp.Header.Get("Content-Type"), "a stream, not a refusal")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// TestAMonitorIsWatchedThroughAnyReplica: the monitor of a computer (the real Lua daemon, in
// a fakecraft world) whose socket is on replica A is watched through replica B, the real
// binaries on a real nats-server, on every host surface, as through A: the host API's stream
// (the monitor's frames, live, apart from the computer's own screen's), `trap-sandbox screen
// --monitor top --once`, MCP's wait_for_screen and the web console's view of the monitor. A
// monitor the computer does not have is refused through B word for word as through A, the
// computer's own refusal; the viewer leaving stops the monitor's watch on the computer; and
// the monitor taken off ends B's stream and B's web console's view with the computer's words.
func TestAMonitorIsWatchedThroughAnyReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 4*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")
	w := monitorKitchen(ctx, t, a.WebSocketURL())
	const id = "5:küche"
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "a", listComputers(ct, b)[id]) },
		waitLimit, testkit.Poll, "B to list the computer on A")

	// The host API's stream of the monitor through B: the monitor's frames, live.
	own := openLiveScreen(ctx, t, b, id)
	assert.NotContains(t, own.frameWith(t, "tick "), `"monitor"`, "the computer's own screen is no monitor's")
	s := openLiveMonitor(ctx, t, b, id, "top")
	_, data := s.next(t)
	first := decodeMonitorFrame(t, data)
	assert.Equal(t, []any{"top", 1.0, 18, 5}, []any{first.Monitor, first.TextScale, first.Width, first.Height}, "monitor top, two blocks wide at text scale 1")
	assert.True(t, strings.HasPrefix(first.Rows[0].Text, "mon "), "the monitor's own text: %q", first.Rows[0].Text)
	for {
		// The monitor keeps changing: a later count shows up, and no frame is the computer's.
		name, data := s.next(t)
		require.Equal(t, "frame", name, "the stream ended: %s", data)
		f := decodeMonitorFrame(t, data)
		require.True(t, strings.HasPrefix(f.Rows[0].Text, "mon "), "a frame of the monitor's: %q", f.Rows[0].Text)
		if f.Rows[0].Text != first.Rows[0].Text {
			break
		}
	}

	// A monitor the computer does not have: its own refusal, through B as through A.
	status, onA := screenRefusal(t, a, id, "right")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, `{"ok":false,"error":{"code":"bad_payload","message":"no monitor named \"right\": this computer's monitors are top","monitor":"right","refused":true}}`, onA)
	status, onB := screenRefusal(t, b, id, "right")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, onA, onB)

	// The CLI reads the monitor once through B.
	printed := cli(ctx, t, "screen", id, "--monitor", "top", "--once", "--url", "http://"+b.Addr)
	assert.Regexp(t, `^mon [0-9]+\n`, printed)

	// MCP's wait_for_screen waits on the monitor through B.
	mcp := harness.ConnectMCP(ctx, t, b, "")
	var waited struct {
		Text    string `json:"text"`
		Monitor string `json:"monitor"`
	}
	harness.ToolOK(t, harness.CallTool(ctx, t, mcp, "wait_for_screen", map[string]any{"traposId": id, "monitor": "top", "text": "mon "}), id, &waited)
	assert.Equal(t, "top", waited.Monitor)
	assert.Regexp(t, `^mon [0-9]+$`, waited.Text)

	// The viewer leaving B stops the monitor's watch on the computer (the computer's own
	// screen's goes on: its viewer stays).
	s.close()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		_, body := get(ct, a, "/metrics")
		assert.Contains(ct, body, `trapos_gateway_frames_out_total{event="gateway_request",replica="a",type="screen.unwatch"} 1`)
	}, waitLimit, testkit.Poll, "A to stop the monitor's watch once its viewer left B")

	// B's web console shows the monitor, live and read only.
	page, until := browser.ConsolePage(ctx, t)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate(b.URL("/console/#/computer/5%3Ak%C3%BCche/monitor/top"))))
	until(t, "B's console to show the monitor live", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.startsWith("mon ") &&
		document.getElementById("viewer-monitor").textContent === "— monitor top, text scale 1 (read only: a monitor takes no keys)"`)

	// The monitor taken off ends B's stream of it with the computer's words, its own end, and
	// B's console's view says so.
	s = openLiveMonitor(ctx, t, b, id, "top")
	s.frameWith(t, "mon ")
	require.True(t, w.At(5).Detach("top"))
	for {
		name, data := s.next(t)
		if name == "frame" {
			continue
		}
		require.Equal(t, "end", name)
		assert.JSONEq(t, `{"ok":false,"error":{"code":"not_found","message":"computer 5:küche says the screen watch ended: monitor top was taken off the computer `+
			`(broken, or its modem switched off); watch it again once it is back","monitor":"top","refused":true}}`, data)
		break
	}
	until(t, "B's console to say the monitor was taken off", `document.getElementById("status").textContent ===
		"not_found: computer 5:küche says the screen watch ended: monitor top was taken off the computer (broken, or its modem switched off); watch it again once it is back"`)
	// The computer's own screen was never the monitor's: its stream goes on.
	own.frameWith(t, "tick ")
}
