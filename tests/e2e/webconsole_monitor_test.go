package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"
	"fakecraft/world"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// monitorDeskProgram connects, draws on the top monitor, then gives the player a shell, as
// deskProgram does.
const monitorDeskProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
local top = peripheral.wrap("top")
top.clear()
top.setCursorPos(1, 1)
top.write("on the monitor")
print("` + markerAtPrompt + `")
shell.run("shell")
`

// startKitchenWithAMonitor starts computer 5:küche with a monitor two blocks wide on top, its
// owner allowing its screen at allowScreen (view or control), running program, which prints
// markerAtPrompt once it has drawn on the monitor; the player types typed's lines. It returns
// once the program has printed it, with the world, in which the monitor is taken off and put
// back.
func startKitchenWithAMonitor(ctx context.Context, t *testing.T, g *harness.Gateway, allowScreen, program string, typed computer.Input) *fakecrafttest.World {
	t.Helper()
	spec := world.Spec{Computers: []world.ComputerSpec{{ID: 5, Label: "k\xfcche", Peripherals: map[string]string{"top": "monitor:2:1"}}}}
	w := fakecrafttest.NewWorld(t, spec)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Label = spec.Computers[0].Label
	opts.Settings["sandbox.allow_screen"] = allowScreen
	opts.Files = map[string]string{"/e2e.lua": program}
	opts.Input = typed
	fakecrafttest.StartWithin(t, w.At(5).Options(opts), testTimeout).WaitFor(ctx, markerAtPrompt)
	return w
}

// pickScreen picks value in the view's Show picker (a monitor's name, "" for the computer's
// own screen), as a player choosing it does: the picker's change opens it.
func pickScreen(t *testing.T, page context.Context, value string) {
	t.Helper()
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
		const picker = document.getElementById("viewer-screen");
		picker.value = `+jsString(t, value)+`;
		picker.dispatchEvent(new Event("change"));
		true
	}`))
	require.NoError(t, err)
}

// TestTheWebConsolePicksAMonitorAndShowsItReadOnly: the view of a computer with a monitor
// offers it beside the computer's own screen; picked, the view shows the monitor live, read
// only (no keys, Type, Paste or Terminate, and what is typed on its screen reaches nothing),
// its tab titled with it; picked back, the computer's own screen takes the keys again. The
// monitor taken off ends its view, saying so, and the picker offers it again only once the
// computer names it again; so does a link to it opened while it is off.
func TestTheWebConsolePicksAMonitorAndShowsItReadOnly(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-monitor-9b2e"
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	w := startKitchenWithAMonitor(ctx, t, g, "control", monitorDeskProgram, make(chan string))

	const own, monitorView = "#/computer/5%3Ak%C3%BCche", "#/computer/5%3Ak%C3%BCche/monitor/top"
	logIn(t, page, "http://"+g.Addr+"/console/"+own, token)
	until(t, "the prompt", liveAtThePrompt)
	until(t, "the picker, with the monitor", `!document.getElementById("viewer-screens").hidden &&
		[...document.getElementById("viewer-screen").options].map(o => o.value + "=" + o.text).join() === "=its own screen,top=monitor top"`)

	pickScreen(t, page, "top")
	until(t, "the monitor, live", `location.hash === "`+monitorView+`" && document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.startsWith("on the monitor")`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[document.title, document.getElementById("viewer-screen").value,
		...["touch", "paste-form", "terminate"].map(id => document.getElementById(id).offsetParent === null),
		document.getElementById("viewer-monitor").textContent]`))
	require.NoError(t, err)
	assert.Equal(t, []any{"5:küche — monitor top", "top", true, true, true, "— monitor top, text scale 1 (read only: a monitor takes no keys)"}, shown)

	// Typed on the monitor's view, x reaches nothing: the shell's next line is id alone. Nor
	// does its screen look, or read, as if it took keys: no text cursor, no border of a screen
	// that has the keyboard (#4c99b2) once clicked, and a screen reader hears it read only.
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "x")))
	screenLooks := `{
		const screen = document.getElementById("screen"), style = getComputedStyle(screen);
		[style.cursor, style.borderTopColor, screen.getAttribute("aria-label"), String(screen.getAttribute("aria-describedby"))]
	}`
	looks, err := chromedp.Run(page, chromedp.Evaluate[[]string](screenLooks))
	require.NoError(t, err)
	assert.Equal(t, []string{"default", "rgb(68, 68, 68)", "The monitor's screen: read only, it takes no keys", "null"}, looks)
	pickScreen(t, page, "")
	until(t, "the computer's own screen again", `location.hash === "`+own+`" && `+liveAtThePrompt)
	visible, err := chromedp.Run(page, chromedp.Evaluate[bool](`document.getElementById("terminate").offsetParent !== null`))
	require.NoError(t, err)
	assert.True(t, visible, "the computer's own screen takes keys")
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "id\r")))
	looks, err = chromedp.Run(page, chromedp.Evaluate[[]string](screenLooks))
	require.NoError(t, err)
	assert.Equal(t, []string{"text", "rgb(76, 153, 178)", "The computer's screen: click it, then type", "screen-help"}, looks)
	until(t, "the command run", `document.getElementById("screen-text").textContent.includes("\n> id\nThis is computer #5")`)

	pickScreen(t, page, "top")
	until(t, "the monitor again", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.startsWith("on the monitor")`)
	offered := `[...document.getElementById("viewer-screen").options].map(o => o.text + (o.disabled ? " [disabled]" : "") + (o.selected ? " [shown]" : "")).join()`
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`window.pickerShown = new Set();
		new MutationObserver(() => pickerShown.add(`+offered+`))
			.observe(document.getElementById("viewer-screens"), { attributes: true, childList: true, subtree: true });
		true`))
	require.NoError(t, err)
	require.True(t, w.At(5).Detach("top"))
	until(t, "the view ended, saying why", `document.getElementById("status").textContent ===
		"not_found: computer 5:küche says the screen watch ended: monitor top was taken off the computer (broken, or its modem switched off); watch it again once it is back"`)

	// The picker no longer offers it: it shows it, taken off, and it cannot be picked, from
	// the end on (every list it shows is recorded). Before, it was offered as a monitor still
	// there, and picking it again opened nothing; and until the page next asked the computer
	// for its monitors (2 s), the list from before offered it beside "monitor top (its view
	// ended)", as if it were back.
	until(t, "the picker, without the monitor", offered+` === "its own screen,monitor top (taken off) [disabled] [shown]"`)
	listed, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[...pickerShown]`))
	require.NoError(t, err)
	assert.Equal(t, []string{"its own screen,monitor top (taken off) [disabled] [shown]"}, listed)
	// Put back, the computer names it again (the picker asks it again, after 2 s at first) and
	// the picker offers it: picked, its view opens anew, live.
	require.NoError(t, w.At(5).Attach("top", "monitor:2:1"))
	until(t, "the picker, with the monitor back", offered+` === "its own screen,monitor top (its view ended) [disabled] [shown],monitor top"`)
	pickScreen(t, page, "top")
	until(t, "the monitor back, live", `location.hash === "`+monitorView+`" && document.getElementById("status").textContent === "Live" &&
		`+offered+` === "its own screen,monitor top [shown]"`)

	// A link kept to it, opened once it is off again, is shown as one not attached.
	require.True(t, w.At(5).Detach("top"))
	until(t, "the view ended again", `document.getElementById("status").textContent.startsWith("not_found: ")`)
	require.NoError(t, chromedp.Do(page, chromedp.Reload()))
	until(t, "the link's monitor, not attached", `document.getElementById("status").textContent ===
		'bad_payload: no monitor named "top": this computer has no monitor (waiting for it to be attached)' &&
		`+offered+` === "its own screen,monitor top (not attached) [disabled] [shown]"`)
}

// TestTheWebConsoleNamesAHandTypedMonitorAsTheComputerDoes: an address typed by hand naming a
// monitor on a side in another case (#…/monitor/Top: CC reads a side in any case, and the
// gateway asks for top) shows the monitor, and the page then names it as the computer does,
// from its first frame: the address says top, the heading and the tab's title say top, and the
// picker offers it once, never monitor top beside monitor Top (every list the picker shows is
// recorded). Before, the page kept Top as typed, and its picker offered both.
func TestTheWebConsoleNamesAHandTypedMonitorAsTheComputerDoes(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	startKitchenWithAMonitor(ctx, t, g, "view", monitorDeskProgram, make(chan string))

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche")))
	const offered = `[...document.getElementById("viewer-screen").options].map(o => o.value + "=" + o.text).join()`
	until(t, "the computer's own screen, the picker with the monitor", `document.getElementById("status").textContent === "Live" &&
		!document.getElementById("viewer-screens").hidden && `+offered+` === "=its own screen,top=monitor top"`)
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`window.pickerShown = [];
		new MutationObserver(() => { if (!document.getElementById("viewer-screens").hidden) pickerShown.push(`+offered+`); })
			.observe(document.getElementById("viewer-screens"), { attributes: true, childList: true, subtree: true });
		location.hash = "#/computer/5%3Ak%C3%BCche/monitor/Top";
		true`))
	require.NoError(t, err)
	until(t, "the monitor, live, named top", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.startsWith("on the monitor") &&
		location.hash === "#/computer/5%3Ak%C3%BCche/monitor/top" && !document.getElementById("viewer-screens").hidden`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[document.title, document.getElementById("viewer-monitor").textContent,
		`+offered+`, document.getElementById("viewer-screen").value, pickerShown.filter(list => list.includes("Top"))]`))
	require.NoError(t, err)
	assert.Equal(t, []any{"5:küche — monitor top", "— monitor top, text scale 1 (read only: a monitor takes no keys)",
		"=its own screen,top=monitor top", "top", []any{}}, shown)
}

// TestTheWebConsoleNamesALinksMonitorNotAttachedAndOpensItOnceAttached: an address typed by
// hand naming a side in another case that has no monitor (#…/monitor/Left) shows the computer's
// refusal and that the page waits for the monitor, and names it as the gateway asked the
// computer for it (the refusal's monitor field): the address, the heading, the tab's title and
// the picker say left. Once a monitor is attached on the left, the page opens its view by
// itself, live, the picker offering it once. Before, the page kept Left as typed from the
// refusal on (the picker showed "monitor Left (not attached)" beside the computer's "monitor
// left"); and once left was attached it opened nothing: the picker showed "monitor left (its
// view ended)", for a view that never started, beside "monitor left" to pick, under the
// refusal's words (every list the picker shows is recorded).
func TestTheWebConsoleNamesALinksMonitorNotAttachedAndOpensItOnceAttached(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	w := startKitchenWithAMonitor(ctx, t, g, "view", monitorDeskProgram, make(chan string))

	// A name no monitor can have (a character CC cannot hold), which the gateway refuses
	// without asking the computer, is not waited for: it never gets attached. Before, the
	// page said it waited for it to be attached, and asked the computer again, for good.
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche/monitor/%E2%82%AC")))
	until(t, "the gateway's refusal, not waited on", `document.getElementById("status").textContent === 'bad_payload: "€" (U+20AC) at character 1 of the monitor name `+
		`is outside CC\'s character set, so no monitor is named so: name one of the computer\'s (a side such as top, or a wired modem\'s monitor_0)' &&
		document.title.endsWith(" — not shown")`)

	const left = "#/computer/5%3Ak%C3%BCche/monitor/left"
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche/monitor/Left")))
	const offered = `[...document.getElementById("viewer-screen").options].map(o => o.value + "=" + o.text + (o.disabled ? " [disabled]" : "") + (o.selected ? " [shown]" : "")).join()`
	until(t, "the computer's refusal", `document.getElementById("status").textContent ===
		'bad_payload: no monitor named "left": this computer\'s monitors are top (waiting for it to be attached)' &&
		!document.getElementById("viewer-screens").hidden`)
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`window.pickerShown = [`+offered+`];
		new MutationObserver(() => { if (!document.getElementById("viewer-screens").hidden) pickerShown.push(`+offered+`); })
			.observe(document.getElementById("viewer-screens"), { attributes: true, childList: true, subtree: true });
		true`))
	require.NoError(t, err)
	shown, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[location.hash, document.title, document.getElementById("viewer-monitor").textContent, `+offered+`]`))
	require.NoError(t, err)
	assert.Equal(t, []any{left, "5:küche — monitor left — waiting", "— monitor left (read only: a monitor takes no keys)",
		"=its own screen,\x00taken off=monitor left (not attached) [disabled] [shown],top=monitor top"}, shown)

	// Attached, the computer names it (the page asks it again, after 2 s at first), and the
	// page opens its view, live, nothing picked.
	require.NoError(t, w.At(5).Attach("left", "monitor:2:1"))
	until(t, "the monitor left, live", `location.hash === "`+left+`" && document.getElementById("status").textContent === "Live"`)
	shown, err = chromedp.Run(page, chromedp.Evaluate[[]any](`[document.title, document.getElementById("viewer-monitor").textContent,
		`+offered+`, pickerShown.filter(list => list.includes("Left") || list.includes("its view ended"))]`))
	require.NoError(t, err)
	assert.Equal(t, []any{"5:küche — monitor left", "— monitor left, text scale 1 (read only: a monitor takes no keys)",
		"=its own screen,top=monitor top,left=monitor left [shown]", []any{}}, shown)
}

// monitorScaleProgram connects, draws on the top monitor, then sets the monitor's text scale
// to each line the player types and writes it there.
const monitorScaleProgram = `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
local top = peripheral.wrap("top")
top.clear()
top.setCursorPos(1, 1)
top.write("at 1")
print("` + markerAtPrompt + `")
while true do
  local scale = read()
  top.setTextScale(tonumber(scale))
  top.clear()
  top.setCursorPos(1, 1)
  top.write("at " .. scale)
end
`

// TestTheWebConsoleSaysAMonitorsTextScale: a monitor's view says the monitor's text scale in
// its heading, in a player's words (text scale 1), and again when a program changes it (text
// scale 0.5), as the monitor's characters grow twice as many across and down. Before, nothing
// told a monitor at 0.5 from a larger one at 1.
func TestTheWebConsoleSaysAMonitorsTextScale(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	typed := make(chan string, 1)
	startKitchenWithAMonitor(ctx, t, g, "view", monitorScaleProgram, typed)

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche/monitor/top")))
	const heading = `document.getElementById("viewer-monitor").textContent`
	until(t, "the monitor at text scale 1", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent === "at 1" &&
		`+heading+` === "— monitor top, text scale 1 (read only: a monitor takes no keys)"`)
	size := `[document.getElementById("screen").dataset.width, document.querySelectorAll("#screen .row").length].join("x")`
	at1, err := chromedp.Run(page, chromedp.Evaluate[string](size))
	require.NoError(t, err)

	typed <- "0.5"
	until(t, "the monitor at text scale 0.5", `document.getElementById("screen-text").textContent === "at 0.5" &&
		`+heading+` === "— monitor top, text scale 0.5 (read only: a monitor takes no keys)"`)
	at05, err := chromedp.Run(page, chromedp.Evaluate[string](size))
	require.NoError(t, err)
	assert.Equal(t, []string{"18x5", "36x10"}, []string{at1, at05}, "its characters across and down at 1 and at 0.5")
}

// TestTheWebConsolesMonitorPickerTakesHostileNamesAsText: the monitors a computer names (its
// screen.read's monitors, the computer's words) are the picker's text, never markup: a name of
// HTML makes no element and runs nothing, and of 10 000 names (an older client's, which names
// every one) the gateway passes on 64, the picker saying the 9939 others are not listed. Picked, each name
// reaches the computer's screen.watch whole through the page's address, its "/", "#", "%2F",
// space and ü %-escaped there (#/computer/ID/monitor/NAME), and back from the address typed.
func TestTheWebConsolesMonitorPickerTakesHostileNamesAsText(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	const html = `<img src=x onerror="document.title='pwned'">`
	const slashy = "a/b#c%2F d"
	names := []string{html, slashy, "k\u00fcche"} // küche on the wire: its byte FC
	for i := range 10_000 {
		names = append(names, fmt.Sprintf("m%04d", i))
	}
	watched := make(chan string, 4)
	connectConsoleComputer(ctx, t, g, "14:rig", consoleComputerHooks{helloVersion: "0.5.31", clientVersion: "0.5.31", screen: rigScreen,
		monitors: names, monitorsWatched: watched})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/14%3Arig")))
	until(t, "the picker with 64 names and the rest counted", rigLive+` && !document.getElementById("viewer-screens").hidden &&
		document.getElementById("viewer-screen").options.length === 66 &&
		document.getElementById("viewer-screen").options[65].text === "9939 more monitors, not listed"`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[document.querySelectorAll("img").length, document.title,
		...[1, 2, 3].map(i => document.getElementById("viewer-screen").options[i].value),
		document.getElementById("viewer-screen").options[1].text]`))
	require.NoError(t, err)
	cut := string([]rune(html)[:39]) + "…" // as a label is cut in the title
	assert.Equal(t, []any{0.0, "14:rig", html, slashy, "küche", "monitor " + cut}, shown, "text, never markup")

	for _, name := range []string{slashy, "küche", html} {
		pickScreen(t, page, name)
		wire := name
		if name == "küche" {
			wire = "k\u00fcche"
		}
		select {
		case got := <-watched:
			assert.Equal(t, wire, got, "the name whole at the computer")
		case <-ctx.Done():
			t.Fatalf("no screen.watch of monitor %q", name)
		}
		until(t, "the monitor "+name+" live", `document.getElementById("status").textContent === "Live" && view.monitor === `+jsString(t, name))
		// One %-escaped part of the address, "/" and "#" included, which reads back as the name.
		tail, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[location.hash.split("/").length, location.hash.indexOf("#", 1),
			decodeURIComponent(location.hash.split("/")[4])]`))
		require.NoError(t, err)
		assert.Equal(t, []any{5.0, -1.0, name}, tail, name)
	}
	made, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[document.querySelectorAll("img").length, document.title]`))
	require.NoError(t, err)
	assert.Equal(t, []any{0.0, "14:rig — monitor " + cut}, made, "the title's text, cut")

	// The address typed (a link shared) opens the same monitor.
	_, err = chromedp.Run(page, chromedp.Evaluate[string](`location.hash = "#/computer/14%3Arig/monitor/a%2Fb%23c%252F%20d"`))
	require.NoError(t, err)
	assert.Equal(t, slashy, <-watched)
	until(t, "a/b#c%2F d from the address", `document.getElementById("status").textContent === "Live" && view.monitor === `+jsString(t, slashy))
}

// TestAComputerWithManyMonitorsSaysSomeAreLeftOut: a computer whose wired modem reaches 70
// monitors names 64 in its screen.read (client 0.5.32 on) and counts the rest, where it named
// them all, so that hundreds of them (or long names) made its answer too big for a frame. Each
// surface that shows the list says some are left out: MCP's read_screen (in monitorsLeftOut
// and its note), the CLI (the computer's refusal of a name that is none of them), and the web
// console's Show picker; a monitor left out is read by its name all the same.
func TestAComputerWithManyMonitorsSaysSomeAreLeftOut(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-monitors-4c1a"
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	cable := map[string]string{}
	for i := range 70 {
		cable[fmt.Sprintf("monitor_%d", i)] = "monitor:2:1"
	}
	spec := world.Spec{Computers: []world.ComputerSpec{{ID: 5, Label: "k\xfcche", Peripherals: map[string]string{"back": "wired_modem:office"}}},
		Cables: map[string]map[string]string{"office": cable}}
	w := fakecrafttest.NewWorld(t, spec)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Label = spec.Computers[0].Label
	maps.Copy(opts.Settings, map[string]string{"sandbox.allow_screen": "control"})
	opts.Files = map[string]string{"/e2e.lua": `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
local n = 0
for _, name in ipairs(peripheral.getNames()) do
  if peripheral.hasType(name, "monitor") then
    peripheral.call(name, "clear")
    peripheral.call(name, "write", name)
    n = n + 1
  end
end
print("e2e: " .. n .. " monitors drawn")
print("` + markerAtPrompt + `")
shell.run("shell")
`}
	opts.Input = computer.Input(make(chan string))
	c := fakecrafttest.StartWithin(t, w.At(5).Options(opts), testTimeout)
	c.WaitFor(ctx, markerAtPrompt)
	require.Contains(t, c.Output(), "e2e: 70 monitors drawn")
	const id = "5:küche"

	s := harness.ConnectMCP(ctx, t, g, token)
	var own monitorScreen
	res := harness.CallTool(ctx, t, s, "read_screen", map[string]any{"traposId": id})
	harness.ToolOK(t, res, id, &own)
	assert.Len(t, own.Monitors, 64)
	var left []string
	for name := range cable {
		if !slices.Contains(own.Monitors, name) {
			left = append(left, name)
		}
	}
	require.Len(t, left, 6, "the monitors named are the cable's")
	assert.Contains(t, harness.Texts(res)[1], "monitors names 64 of the computer's monitors: 6 more are attached (monitorsLeftOut)")
	var leftOut struct {
		MonitorsLeftOut int `json:"monitorsLeftOut"`
	}
	harness.ToolOK(t, res, id, &leftOut)
	assert.Equal(t, 6, leftOut.MonitorsLeftOut)
	var far monitorScreen
	harness.ToolOK(t, harness.CallTool(ctx, t, s, "read_screen", map[string]any{"traposId": id, "monitor": left[0]}), id, &far)
	assert.Equal(t, left[0], far.Text, "a monitor left out of the list is read by its name")

	_, errOut, code := runGatewayCLI(ctx, t, "screen", "--url", "http://"+g.Addr, "--api-token", token, id, "--monitor", "nosuch", "--once")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, `no monitor named "nosuch": this computer's monitors are monitor_`)
	assert.Contains(t, errOut, " and 6 more, not named here")

	logIn(t, page, "http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche", token)
	until(t, "the prompt", liveAtThePrompt)
	until(t, "the picker, saying 6 more", `(() => {
		const options = [...document.getElementById("viewer-screen").options];
		return options.length === 66 && options[0].text === "its own screen" &&
			options[65].text === "6 more monitors, not listed" && options[65].disabled &&
			options.slice(1, 65).every(o => o.text.startsWith("monitor monitor_") && !o.disabled);
	})()`)
}

// TestTheWebConsoleFollowsARelabelledComputersMonitor: the view of a monitor whose computer is
// relabelled in game (label set) follows the computer to its new traposId on the same monitor,
// live. It opened the computer's own screen there (#/computer/5:keller), leaving the monitor
// the player had watched.
func TestTheWebConsoleFollowsARelabelledComputersMonitor(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	typed := make(chan string, 2)
	startKitchenWithAMonitor(ctx, t, g, "view", monitorDeskProgram, typed)

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche/monitor/top")))
	until(t, "the monitor, live", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.startsWith("on the monitor")`)
	// sandbox status makes the daemon look for a new label at once (it looks every 15 s).
	typed <- "label set keller"
	typed <- "sandbox status"
	until(t, "the monitor under the new name, live", `location.hash === "#/computer/5%3Akeller/monitor/top" &&
		document.getElementById("viewer-id").textContent === "5:keller" && document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.startsWith("on the monitor")`)
}

// holdPagesWaits replaces the page's timers of a second or more (the waits between its looks
// at a computer; console.js's, told by the stack that sets them) with waits the test ends
// (heldWait), each recorded with its length, and forgets that the page regained the focus
// before: the test reads the page's schedule, and decides when each wait is over, rather than
// timing it.
func holdPagesWaits(t *testing.T, page context.Context) {
	t.Helper()
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
		window.held = [];
		const setTimer = setTimeout, clearTimer = clearTimeout;
		let ids = 1e9;
		window.setTimeout = (fn, ms, ...args) => {
			// The page's own (chromedp's waits set theirs too).
			if (!(ms >= 1000) || !new Error().stack.includes("/console/console.js:")) return setTimer(fn, ms, ...args);
			held.push({ id: ++ids, ms, end: () => fn(...args) });
			return ids;
		};
		window.clearTimeout = (id) => {
			const i = held.findIndex((h) => h.id === id);
			if (i >= 0) held.splice(i, 1);
			else clearTimer(id);
		};
		cameBack = false;
		true
	}`))
	require.NoError(t, err)
}

// heldWait waits until the page waits on one of its timers held (holdPagesWaits), and only
// one, ends that wait and reports how long the page meant it to be, in ms.
func heldWait(t *testing.T, page context.Context, until func(t *testing.T, what, js string)) float64 {
	t.Helper()
	until(t, "the page waiting", `held.length === 1`)
	ms, err := chromedp.Run(page, chromedp.Evaluate[float64](`{ const h = held.shift(); h.end(); h.ms }`))
	require.NoError(t, err)
	return ms
}

// TestTheWebConsoleBacksOffFromAMonitorItsComputerRefuses: a computer that names a monitor but
// refuses its stream (a broken or hostile client: its own error, whatever its code, the
// gateway's words for a computer away or busy included) is shown refusing it, in its words as
// text, and asked again after 2 s, then 4, 8, 16 and every 30 s, at once when the page regains
// the focus; a stream that shows the monitor a while (shownAWhile) starts the looks from 2 s
// again. Before, the page asked it again every 2 s (its busy every second) for as long as the
// tab stayed open. The page's waits are held and ended by the test (holdPagesWaits), each
// watch the computer gets counted.
func TestTheWebConsoleBacksOffFromAMonitorItsComputerRefuses(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	codes := []string{"internal", "not_connected", "busy", "out_of_order"}
	var refusing atomic.Bool
	var refusals atomic.Int64
	refusing.Store(true)
	watched := make(chan string, 16)
	c := connectConsoleComputer(ctx, t, g, "14:rig", consoleComputerHooks{helloVersion: "0.5.31", clientVersion: "0.5.31", screen: rigScreen,
		monitors: []string{"top"}, monitorsWatched: watched,
		refusesWatch: func(string) (string, string) {
			if !refusing.Load() {
				return "", ""
			}
			return codes[(refusals.Add(1)-1)%int64(len(codes))], "monitor top <b>is</b> out of order"
		}})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/")))
	until(t, "the list", `!document.getElementById("computers").hidden`)
	holdPagesWaits(t, page)
	watches := 0
	aWatch := func() {
		t.Helper()
		select {
		case <-watched:
			watches++
		case <-ctx.Done():
			t.Fatal("the computer got no screen.watch")
		}
	}

	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/14%3Arig/monitor/top"; true`))
	require.NoError(t, err)
	aWatch()
	until(t, "the refusal", `document.getElementById("status").textContent.startsWith("internal: monitor top <b>is</b> out of order")`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[document.getElementById("status").textContent, document.querySelectorAll("b").length, document.title]`))
	require.NoError(t, err)
	assert.Equal(t, []any{"internal: monitor top <b>is</b> out of order (asking again in 2 s, and at once when you come back to this page or reload it)",
		0.0, "14:rig — monitor top — refused"}, shown, "the computer's words, as text, and when the page asks again")

	var waits []float64
	for range 5 {
		waits = append(waits, heldWait(t, page, until))
		aWatch()
	}
	assert.Equal(t, []float64{2000, 4000, 8000, 16000, 30000}, waits, "the waits before each watch after the first")
	until(t, "the sixth refusal", `document.getElementById("status").textContent.startsWith("not_connected: monitor top <b>is</b> out of order (asking again in 30 s,")`)

	// The focus regained: the next watch at once, its wait left unended; the one after it as
	// long as the last.
	until(t, "the page waiting", `held.length === 1`)
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`window.dispatchEvent(new Event("focus"))`))
	require.NoError(t, err)
	aWatch()
	waits = append(waits, heldWait(t, page, until))
	aWatch()
	until(t, "the page waiting again", `held.length === 1`)
	select {
	case monitor := <-watched:
		t.Fatalf("a watch of %q the page held no wait for", monitor)
	default:
	}
	assert.Equal(t, 8, watches)
	assert.Equal(t, 30000.0, waits[5], "the wait after the focus's watch")

	// Taken: the monitor live a while; its stream ended by the computer, the refusal that
	// follows is asked again after 2 s, not 30.
	refusing.Store(false)
	waits = append(waits, heldWait(t, page, until))
	aWatch()
	until(t, "the monitor, live", rigLive)
	shownAWhile(t, page)
	refusing.Store(true)
	require.NoError(t, c.ws.WriteJSON(map[string]any{"event": harness.EventComputerRequest, "traposSenderId": "14:rig",
		"messageId": harness.NewMessageID(), "type": "screen.update",
		"payload": map[string]any{"watchId": 1, "monitor": "top", "ended": map[string]any{"code": "forbidden", "message": "the owner withdrew sandbox.allow_screen"}}}))
	until(t, "the stream ended", `document.getElementById("status").textContent.startsWith("forbidden: computer 14:rig says")`)
	waits = append(waits, heldWait(t, page, until)) // retryMs, after a stream that ended
	aWatch()
	until(t, "refused again", `document.getElementById("status").textContent.endsWith("(asking again in 2 s, and at once when you come back to this page or reload it)")`)
	waits = append(waits, heldWait(t, page, until))
	aWatch()
	assert.Equal(t, []float64{30000, 2000, 2000}, waits[6:], "the looks from the first again once a stream opened")
}
