package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/fakecrafttest"
	"fakecraft/peripheral/monitor"
	"fakecraft/world"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// monitorsProgram connects, runs /kitchen.lua on the top monitor as a player would (`monitor
// top kitchen`), draws on the left one through a peripheral.wrap at text scale 0.5, and on
// the office cable's monitor_0 through the wired modem's own callRemote, and waits.
const monitorsProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
shell.run("monitor", "top", "/kitchen.lua")
local left = peripheral.wrap("left")
left.setTextScale(0.5)
left.setBackgroundColour(colours.blue)
left.clear()
left.setCursorPos(2, 2)
left.write("drawn through a wrap")
local modem = peripheral.wrap("back")
modem.callRemote("monitor_0", "clear")
modem.callRemote("monitor_0", "setCursorPos", 1, 1)
modem.callRemote("monitor_0", "write", "asked the modem")
peripheral.call("back", "callRemote", "monitor_0", "setCursorPos", 3, 2)
peripheral.call("back", "callRemote", "monitor_0", "write", "twice")
print("e2e: monitors drawn")
while true do os.pullEvent("e2e_never") end
`

// kitchenProgram is what `monitor top kitchen` runs: it knows nothing of monitors.
const kitchenProgram = `
term.setBackgroundColour(colours.black)
term.clear()
term.setCursorPos(1, 1)
print("kitchen")
write("tea: ")
term.setTextColour(colours.lime)
print("ready")
`

// monitorScreen is read_screen's structured output as these tests read it.
type monitorScreen struct {
	Width     int      `json:"width"`
	Height    int      `json:"height"`
	Text      string   `json:"text"`
	Monitor   string   `json:"monitor"`
	TextScale float64  `json:"textScale"`
	Monitors  []string `json:"monitors"`
	Rows      []struct {
		Text string `json:"text"`
		FG   string `json:"fg"`
		BG   string `json:"bg"`
	} `json:"rows"`
}

// TestTheAgentReadsWhatProgramsDrewOnMonitors: a computer with two monitors and a wired modem
// whose cable has a third, whose owner allows viewing its screen, runs a program on the top
// one with the ROM's monitor program, draws on the left one through a wrap at text scale 0.5,
// and on the cable's monitor_0 through the modem's callRemote. MCP's read_screen names all
// three with the computer's own screen, and reads each as the monitor shows it (its text,
// colours, size and text scale), as `trap-sandbox screen --monitor top` prints it; a name
// that is no monitor is refused naming the monitors.
func TestTheAgentReadsWhatProgramsDrewOnMonitors(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	spec := world.Spec{Computers: []world.ComputerSpec{{ID: 5, Label: "k\xfcche",
		Peripherals: map[string]string{"top": "monitor:2:1", "left": "monitor:3:2", "right": "modem", "back": "wired_modem:office"}}},
		Cables: map[string]map[string]string{"office": {"monitor_0": "monitor:2:1"}}}
	w := fakecrafttest.NewWorld(t, spec)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Label = spec.Computers[0].Label
	maps.Copy(opts.Settings, map[string]string{"sandbox.allow_screen": "view"})
	opts.Files = map[string]string{"/e2e.lua": monitorsProgram, "/kitchen.lua": kitchenProgram}
	c := fakecrafttest.StartWithin(t, w.At(5).Options(opts), testTimeout)
	c.WaitFor(ctx, "e2e: monitors drawn")
	top := w.At(5).Peripherals().Get("top").(*monitor.Monitor)
	left := w.At(5).Peripherals().Get("left").(*monitor.Monitor)
	require.Equal(t, "kitchen\ntea: ready", strings.TrimRight(top.Screen(), "\n"), "the monitor shows what the program drew")

	s := harness.ConnectMCP(ctx, t, g, "")
	const id = "5:küche"
	read := func(t *testing.T, args map[string]any) monitorScreen {
		t.Helper()
		args["traposId"] = id
		var out monitorScreen
		harness.ToolOK(t, harness.CallTool(ctx, t, s, "read_screen", args), id, &out)
		return out
	}

	t.Run("the computer's own screen names its monitors", func(t *testing.T) {
		own := read(t, map[string]any{})
		assert.ElementsMatch(t, []string{"top", "left", "monitor_0"}, own.Monitors)
		assert.Empty(t, own.Monitor)
		assert.Contains(t, own.Text, "Running /kitchen.lua on monitor top", "the monitor program's own line is on the computer")
		assert.NotContains(t, own.Text, "tea: ready")
	})

	t.Run("monitor top shows what monitor top kitchen drew", func(t *testing.T) {
		out := read(t, map[string]any{"monitor": "top", "colours": true})
		assert.Equal(t, "top", out.Monitor)
		assert.Equal(t, strings.TrimRight(top.Screen(), "\n"), out.Text)
		w, h := top.Terminal().Size()
		assert.Equal(t, []int{w, h}, []int{out.Width, out.Height})
		assert.InDelta(t, 1, out.TextScale, 0)
		require.Len(t, out.Rows, h)
		assert.Equal(t, "000005555", out.Rows[1].FG[:9], "tea: in white, ready in lime (5)")
	})

	t.Run("monitor left shows what the wrap drew at scale 0.5", func(t *testing.T) {
		out := read(t, map[string]any{"monitor": "left", "colours": true})
		assert.Equal(t, strings.TrimRight(left.Screen(), "\n"), out.Text)
		assert.Equal(t, "\n drawn through a wrap", out.Text)
		w, h := left.Terminal().Size()
		assert.Equal(t, []int{w, h}, []int{out.Width, out.Height})
		assert.InDelta(t, 0.5, out.TextScale, 0)
		assert.Equal(t, strings.Repeat("b", w), out.Rows[0].BG, "the wrap cleared it blue")
	})

	t.Run("the cable's monitor_0 shows what the modem's callRemote drew", func(t *testing.T) {
		cabled := w.Cable("office").Remote("monitor_0").(*monitor.Monitor)
		out := read(t, map[string]any{"monitor": "monitor_0"})
		assert.Equal(t, "monitor_0", out.Monitor)
		assert.Equal(t, "asked the modem\n  twice", out.Text, "each call once: twice is where its setCursorPos put it")
		assert.Equal(t, strings.TrimRight(cabled.Screen(), "\n"), out.Text)
	})

	t.Run("trap-sandbox screen --monitor top prints it", func(t *testing.T) {
		out := gatewayCLI(ctx, t, "screen", "--url", "http://"+g.Addr, id, "--monitor", "top")
		assert.Equal(t, strings.TrimRight(top.Screen(), "\n")+"\n", out, "the rows as the monitor shows them, each seen whole since kitchen cleared it")
	})

	t.Run("a name that is no monitor is refused, naming the monitors", func(t *testing.T) {
		msg := harness.ToolError(t, harness.CallTool(ctx, t, s, "read_screen", map[string]any{"traposId": id, "monitor": "right"}), "bad_payload")
		assert.Contains(t, msg, `no monitor named "right": this computer's monitors are `)
		assert.Contains(t, msg, "top")
	})
}

// watchedMonitorProgram connects, draws on the top monitor, and draws again at each e2e_draw
// event (its text on the next row) and sets its text scale at each e2e_scale.
const watchedMonitorProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
local top = peripheral.wrap("top")
top.setTextScale(1)
top.clear()
top.setCursorPos(1, 1)
top.write("first")
print("e2e: monitor drawn")
local row = 1
while true do
  local event, arg = os.pullEvent()
  if event == "e2e_draw" then
    row = row + 1
    top.setCursorPos(1, row)
    top.write(arg)
  elseif event == "e2e_scale" then
    top.setTextScale(tonumber(arg))
  end
end
`

// TestAMonitorIsWatchedLive: the host API's live view of a computer's monitor (the stream's
// monitor parameter, screen.watch {monitor} on the computer) sends its screen whole, then each
// change a program draws on it and its new text scale, beside the computer's own screen's live
// view, which shows none of it; when the monitor is taken off the stream ends, saying so and
// naming it (monitor); a view of it then, asked for as Top, is refused naming it top.
func TestAMonitorIsWatchedLive(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	spec := world.Spec{Computers: []world.ComputerSpec{{ID: 5, Label: "k\xfcche", Peripherals: map[string]string{"top": "monitor:2:1"}}}}
	w := fakecrafttest.NewWorld(t, spec)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Label = spec.Computers[0].Label
	maps.Copy(opts.Settings, map[string]string{"sandbox.allow_screen": "view"})
	opts.Files = map[string]string{"/e2e.lua": watchedMonitorProgram}
	c := fakecrafttest.StartWithin(t, w.At(5).Options(opts), testTimeout)
	c.WaitFor(ctx, "e2e: monitor drawn")
	top := w.At(5).Peripherals().Get("top").(*monitor.Monitor)

	open := func(query string) *bufio.Reader {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+g.Addr+"/trapos/computers/5:k%C3%BCche/screen"+query, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return bufio.NewReader(resp.Body)
	}
	type frame struct {
		monitorScreen
		Seq int `json:"seq"`
	}
	next := func(r *bufio.Reader) frame {
		var f frame
		require.NoError(t, json.Unmarshal([]byte(readEvent(t, r)), &f))
		return f
	}
	text := func(f frame) string {
		var rows []string
		for _, r := range f.Rows {
			rows = append(rows, strings.TrimRight(r.Text, " "))
		}
		return strings.TrimRight(strings.Join(rows, "\n"), "\n")
	}

	monitorView := open("?monitor=top")
	own := open("")
	first := next(monitorView)
	assert.Equal(t, "top", first.Monitor)
	assert.InDelta(t, 1, first.TextScale, 0)
	width, height := top.Terminal().Size()
	assert.Equal(t, []int{width, height}, []int{first.Width, first.Height})
	assert.Equal(t, "first", text(first), "the monitor's screen, whole")
	ownFirst := next(own)
	assert.Empty(t, ownFirst.Monitor)
	assert.NotContains(t, text(ownFirst), "first", "the computer's own screen is another")

	c.QueueString("e2e_draw", "second")
	f := next(monitorView)
	for !strings.Contains(text(f), "second") {
		f = next(monitorView)
	}
	assert.Equal(t, "first\nsecond", text(f))
	assert.Equal(t, strings.TrimRight(top.Screen(), "\n"), text(f), "as the monitor shows it")

	c.QueueString("e2e_scale", "0.5")
	for f.TextScale != 0.5 {
		f = next(monitorView)
	}
	width, height = top.Terminal().Size()
	assert.Equal(t, []int{width, height}, []int{f.Width, f.Height}, "the monitor's size at its new scale")
	assert.Equal(t, "first\nsecond", text(f), "the top left kept")

	require.True(t, w.At(5).Detach("top"))
	var ended string
	for {
		line, err := monitorView.ReadString('\n')
		require.NoError(t, err)
		if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"ok":false`) {
			ended = data
			break
		}
	}
	assert.JSONEq(t, `{"ok":false,"error":{"code":"not_found","message":"computer 5:küche says the screen watch ended: monitor top was taken off the computer (broken, or its modem switched off); watch it again once it is back","monitor":"top","refused":true}}`, strings.TrimSpace(ended),
		"the computer's own end, said to be")

	// A view of a monitor that is not there is refused, naming the computer's monitors, and
	// naming the monitor as the computer was asked for it (CC reads a side in any case): a
	// viewer that typed Top names it top.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+g.Addr+"/trapos/computers/5:k%C3%BCche/screen?monitor=Top", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	var refused struct {
		Error struct{ Message, Monitor string }
	}
	require.NoError(t, json.Unmarshal(body, &refused), "%s", body)
	assert.Equal(t, `no monitor named "top": this computer has no monitor`, refused.Error.Message)
	assert.Equal(t, "top", refused.Error.Monitor)
}

// TestAMonitorMadeAndDrawnOnInOneRunLuaIsRead: an agent's run_lua attaches a monitor and draws
// on it without yielding (CraftOS-PC's periphemu, as a player placing one while a program
// runs), and read_screen reads what it drew at once. The daemon got the attach's peripheral
// event only after the job ended, and dropped the mirror the job's first call had started: the
// monitor read blank, every row unknown, until a program drew on it again.
func TestAMonitorMadeAndDrawnOnInOneRunLuaIsRead(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL)
	spec := world.Spec{Computers: []world.ComputerSpec{{ID: 5, Label: "k\xfcche"}}}
	w := fakecrafttest.NewWorld(t, spec)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Label = spec.Computers[0].Label
	maps.Copy(opts.Settings, map[string]string{"sandbox.allow_screen": "view", "sandbox.allow_exec": "true"})
	opts.Files = map[string]string{"/e2e.lua": harness.WaitConnectedLua + `
print("e2e: connected")
while true do os.pullEvent("e2e_never") end
`}
	c := fakecrafttest.StartWithin(t, w.At(5).Options(opts), testTimeout)
	c.WaitFor(ctx, "e2e: connected")

	s := harness.ConnectMCP(ctx, t, g, "")
	const id = "5:küche"
	var ran struct {
		Returns []any  `json:"returns"`
		Error   string `json:"error"`
	}
	harness.ToolOK(t, harness.CallTool(ctx, t, s, "run_lua", map[string]any{"traposId": id, "code": `
periphemu.create("right", "monitor", 2, 1)
local m = peripheral.wrap("right")
m.clear()
m.setCursorPos(2, 1)
m.write("made by run_lua")
return "drawn"`}), id, &ran)
	require.Empty(t, ran.Error)
	require.Equal(t, []any{"drawn"}, ran.Returns)
	right := w.At(5).Peripherals().Get("right").(*monitor.Monitor)

	var out monitorScreen
	harness.ToolOK(t, harness.CallTool(ctx, t, s, "read_screen", map[string]any{"traposId": id, "monitor": "right"}), id, &out)
	assert.Equal(t, " made by run_lua", out.Text)
	assert.Equal(t, strings.TrimRight(right.Screen(), "\n"), out.Text, "as the monitor shows it")
	var own monitorScreen
	harness.ToolOK(t, harness.CallTool(ctx, t, s, "read_screen", map[string]any{"traposId": id}), id, &own)
	assert.Equal(t, []string{"right"}, own.Monitors)
}
