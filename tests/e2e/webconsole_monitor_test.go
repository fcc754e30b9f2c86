package e2e

import (
	"maps"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"
	"fakecraft/world"

	"trap-sandbox/testkit/opencodefake"
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

// TestTheWebConsolePicksAMonitorAndShowsItReadOnly: the view of a computer with a monitor
// offers it beside the computer's own screen; picked, the view shows the monitor live, read
// only (no keys, Type, Paste or Terminate, and what is typed on its screen reaches nothing),
// its tab titled with it; picked back, the computer's own screen takes the keys again. The
// monitor taken off ends its view, saying so.
func TestTheWebConsolePicksAMonitorAndShowsItReadOnly(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-monitor-9b2e"
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	spec := world.Spec{Computers: []world.ComputerSpec{{ID: 5, Label: "k\xfcche", Peripherals: map[string]string{"top": "monitor:2:1"}}}}
	w := fakecrafttest.NewWorld(t, spec)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.Label = spec.Computers[0].Label
	maps.Copy(opts.Settings, map[string]string{"sandbox.allow_screen": "control"})
	opts.Files = map[string]string{"/e2e.lua": monitorDeskProgram}
	opts.Input = computer.Input(make(chan string))
	fakecrafttest.StartWithin(t, w.At(5).Options(opts), testTimeout).WaitFor(ctx, markerAtPrompt)

	const own, monitorView = "#/computer/5%3Ak%C3%BCche", "#/computer/5%3Ak%C3%BCche/monitor/top"
	logIn(t, page, "http://"+g.Addr+"/console/"+own, token)
	until(t, "the prompt", liveAtThePrompt)
	until(t, "the picker, with the monitor", `!document.getElementById("viewer-screens").hidden &&
		[...document.getElementById("viewer-screen").options].map(o => o.value + "=" + o.text).join() === "=its own screen,top=monitor top"`)

	pick := func(value string) {
		_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
			const picker = document.getElementById("viewer-screen");
			picker.value = "`+value+`";
			picker.dispatchEvent(new Event("change"));
			true
		}`))
		require.NoError(t, err)
	}
	pick("top")
	until(t, "the monitor, live", `location.hash === "`+monitorView+`" && document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.startsWith("on the monitor")`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[document.title, document.getElementById("viewer-screen").value,
		...["touch", "paste-form", "terminate"].map(id => document.getElementById(id).offsetParent === null),
		document.getElementById("viewer-monitor").textContent]`))
	require.NoError(t, err)
	assert.Equal(t, []any{"5:küche — monitor top", "top", true, true, true, "— monitor top (read only: a monitor takes no keys)"}, shown)

	// Typed on the monitor's view, x reaches nothing: the shell's next line is id alone.
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "x")))
	pick("")
	until(t, "the computer's own screen again", `location.hash === "`+own+`" && `+liveAtThePrompt)
	visible, err := chromedp.Run(page, chromedp.Evaluate[bool](`document.getElementById("terminate").offsetParent !== null`))
	require.NoError(t, err)
	assert.True(t, visible, "the computer's own screen takes keys")
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "id\r")))
	until(t, "the command run", `document.getElementById("screen-text").textContent.includes("\n> id\nThis is computer #5")`)

	pick("top")
	until(t, "the monitor again", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.startsWith("on the monitor")`)
	require.True(t, w.At(5).Detach("top"))
	until(t, "the view ended, saying why", `document.getElementById("status").textContent ===
		"not_found: computer 5:küche says the screen watch ended: monitor top was taken off the computer (broken, or its modem switched off); watch it again once it is back"`)
}
