package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
	"trap-sandbox/testkit/opencodefake"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"
	"fakecraft/pocket"

	"tests/internal/browser"
	"tests/internal/harness"
)

// consolePage is a headless Chromium page for the web console; hosts are extra names the
// browser resolves to 127.0.0.1 (a gateway reached by a name other than localhost). until
// waits for a JavaScript condition on the page.
func consolePage(ctx context.Context, t *testing.T, hosts ...string) (page context.Context, until func(t *testing.T, what, js string)) {
	t.Helper()
	var extra []chromedp.ExecAllocatorOption
	if len(hosts) > 0 {
		var rules []string
		for _, h := range hosts {
			rules = append(rules, "MAP "+h+" 127.0.0.1")
		}
		extra = append(extra, chromedp.Flag("host-resolver-rules", strings.Join(rules, ", ")))
	}
	return consolePageWith(ctx, t, extra...)
}

// consolePageWith is consolePage in a browser started with the options extra too.
func consolePageWith(ctx context.Context, t *testing.T, extra ...chromedp.ExecAllocatorOption) (page context.Context, until func(t *testing.T, what, js string)) {
	t.Helper()
	return browser.ConsolePage(ctx, t, extra...)
}

// logIn opens the web console at url (its list, or a computer's view by its fragment:
// …/console/#/computer/11%3Adesk) and logs in with token, typed into the form as a person does.
func logIn(t *testing.T, page context.Context, url, token string) {
	t.Helper()
	require.NoError(t, chromedp.Do(page, chromedp.Navigate(url), chromedp.WaitVisible("#login"),
		chromedp.SendKeys("#token", token), chromedp.Click("#login button")))
}

// liveAtThePrompt is true in a page whose view is live and shows its computer's shell at the
// prompt (markerAtPrompt printed): what a test waits for (until) before it types.
const liveAtThePrompt = `document.getElementById("status").textContent === "Live" &&
	document.getElementById("screen-text").textContent.includes("` + markerAtPrompt + `")`

// TestTheWebConsoleShowsAndDrivesAComputer drives the web console in a real headless
// browser: it logs in with the API token, opens a fakecraft computer, sees its prompt, types
// ls and sees the listing.
func TestTheWebConsoleShowsAndDrivesAComputer(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-tökén-日本-7f3a" // a token is any text: sent as UTF-8, as the CLI does
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL, "--api-token", token)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 11, "desk"
	opts.Settings["sandbox.allow_screen"] = "control"
	opts.Files = map[string]string{"/e2e.lua": deskProgram, "/door.lua": doorProgram, "/blocks.lua": blocksProgram}
	opts.Input = computer.Input(make(chan string))
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerAtPrompt)

	screenText := func() string {
		s, _ := chromedp.Run(page, chromedp.Text("#screen-text"))
		return s
	}

	require.NoError(t, chromedp.Do(page,
		chromedp.Navigate("http://"+g.Addr+"/console/"),
		chromedp.WaitVisible("#login"),
	), "the page loads without the token and asks for it")
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`document.getElementById("token").value = "`+token+`"; true`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page, chromedp.Click("#login button")))
	until(t, "the computer in the list", `[...document.querySelectorAll("#computer-list a")].some(a => a.textContent === "`+deskTraposID+`")`)
	// A single gateway names no replica: its list has no replica column (docs/scale-out.md).
	columns, err := chromedp.Run(page, chromedp.Evaluate[int](`document.getElementById("replica-column").hidden ? document.querySelector("#computer-list tr").cells.length : -1`))
	require.NoError(t, err)
	assert.Equal(t, 6, columns, "the replica column is hidden and no row has its cell")
	// The list refreshes every 2 s: one still loading when the computer is opened must not
	// cover its view. Hold the list's answers until the view is open.
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`{
		const gate = new Promise((resolve) => { window.releaseList = resolve; });
		const fetchNow = window.fetch;
		window.fetch = async (url, options) => {
			const res = await fetchNow(url, options);
			if (url === "/trapos/computers") await gate;
			return res;
		};
		window.listLoaded = loadList();
		true
	}`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page, chromedp.Click(`#computer-list a`)))
	until(t, "the view", `!document.getElementById("viewer").hidden`)
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`window.releaseList(); window.listLoaded.then(() => true)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	until(t, "the prompt", `document.getElementById("screen-text").textContent.includes("`+markerAtPrompt+`")`)
	visible, err := chromedp.Run(page, chromedp.Evaluate[[]bool](`["viewer", "computers"].map((id) => !document.getElementById(id).hidden)`))
	require.NoError(t, err)
	require.Equal(t, []bool{true, false}, visible, "the view stays, the list stays hidden")
	require.True(t, strings.HasSuffix(screenText(), "\n>"), "the prompt is the last row:\n%s", screenText())
	seams, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#screen .row")].flatMap((row, y) =>
		[...row.children].filter(span => span.getBoundingClientRect().height !== row.getBoundingClientRect().height)
			.map(span => "row " + (y + 1) + ": " + span.getBoundingClientRect().height + " of " + row.getBoundingClientRect().height))`))
	require.NoError(t, err)
	assert.Empty(t, seams, "each run's background fills its row's height: no line between rows")

	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.SendKeys("#screen", "ls\r")))
	until(t, "the listing", `document.getElementById("screen-text").textContent.includes("door.lua")`)
	require.Contains(t, screenText(), "> ls\n")

	// CC's block characters are drawn, not left to a font (DejaVu has no sextants): 149 is the
	// left column (3 sixths), 129 the top left one; the text keeps Unicode's characters.
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "blocks\r")))
	until(t, "the blocks", `document.getElementById("screen-text").textContent.includes("\n▌🬀\n")`)
	sixths, err := chromedp.Run(page, chromedp.Evaluate[[]int](`[...document.querySelectorAll("#screen .block")].filter(b => b.textContent !== " ")
		.map(b => getComputedStyle(b).backgroundImage.split("linear-gradient").length - 1)`))
	require.NoError(t, err)
	assert.Equal(t, []int{3, 1}, sixths, "each block character's sixths, drawn as its background")
	// A soft hyphen (173) is a cell on CC's screen; a browser draws it as nothing, which
	// pulled the rest of its row one cell left.
	until(t, "the soft hyphen", `document.getElementById("screen-text").textContent.includes("\n|-|\n")`)
	// CC's font has no picture for 9, 10 and 13, and its notes at 14 and 15 (code page 437
	// has ○ ◙ ♪ ♫ ☼ at 9, 10, 13, 14 and 15).
	until(t, "the control bytes", `document.getElementById("screen-text").textContent.includes("\n|  ♪♫|\n")`)
	widths, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`[...document.querySelectorAll("#screen .row")].map(row =>
		Math.round([...row.children].reduce((sum, span) => sum + span.getBoundingClientRect().width, 0)))`))
	require.NoError(t, err)
	for y, w := range widths {
		assert.Equal(t, widths[0], w, "row %d's cells span the screen's width, as every row's do", y+1)
	}

	// In a window narrower than the screen (a phone's), the screen is drawn smaller, whole: it
	// scrolled sideways in its box, a row's end out of sight. The page, its header and its
	// controls stay in the window.
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640)))
	overflow, err := chromedp.Run(page, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth - document.documentElement.clientWidth,
		document.getElementById("screen").scrollWidth - document.getElementById("screen").clientWidth,
		Math.round(parseFloat(getComputedStyle(document.getElementById("screen")).fontSize))]`))
	require.NoError(t, err)
	assert.Equal(t, 0, overflow[0], "the page is no wider than the window, with the keys a phone has no keyboard for")
	assert.Equal(t, 0, overflow[1], "the screen is whole in the window")
	assert.GreaterOrEqual(t, overflow[2], 8, "its text no smaller than 8 px")
	assert.Less(t, overflow[2], 16, "smaller than a desktop's")
	// A long status (a computer gone, a refusal) goes under the title: the title took three
	// lines beside it ("trap-", "sandbox", "console").
	lines, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`{
		const status = document.getElementById("status"), saved = status.textContent;
		status.textContent = "not_connected: computer 5:kitchen is not connected; no computer is connected at all (waiting for it to come back)";
		const title = document.createRange(); // its lines: the tops of its text's boxes
		title.selectNodeContents(document.querySelector("header h1 a").firstChild);
		const shown = [new Set([...title.getClientRects()].map((box) => Math.round(box.top))).size,
			document.documentElement.scrollWidth - document.documentElement.clientWidth];
		status.textContent = saved;
		shown
	}`))
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 0}, lines, "the title on one line, the page in the window")
	const touchKeys = `getComputedStyle(document.getElementById("touch")).display`
	shown, err := chromedp.Run(page, chromedp.Evaluate[string](touchKeys))
	require.NoError(t, err)
	assert.Equal(t, "block", shown, "a phone's window shows the on-screen keys and the Type field")
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(800, 600)))
	shown, err = chromedp.Run(page, chromedp.Evaluate[string](touchKeys))
	require.NoError(t, err)
	assert.Equal(t, "none", shown, "a desktop's window, with its keyboard, does not")
	size, err := chromedp.Run(page, chromedp.Evaluate[float64](`parseFloat(getComputedStyle(document.getElementById("screen")).fontSize)`))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, size, 16.0, "a desktop's window draws the screen at its full size, or larger")

	// The numeric keypad's keys and F13-F25 go by CC's names too.
	names, err := chromedp.Run(page, chromedp.Evaluate[[]string](`["Numpad5", "NumpadAdd", "NumpadDecimal", "NumpadEnter", "F13", "F25"].map(keyName)`))
	require.NoError(t, err)
	assert.Equal(t, []string{"numPad5", "numPadAdd", "numPadDecimal", "numPadEnter", "f13", "f25"}, names)

	// AltGr (Ctrl+Alt to Windows) types its character: @ is AltGr+Q on a German keyboard.
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`{
		const screen = document.getElementById("screen");
		for (const type of ["keydown", "keyup"]) {
			screen.dispatchEvent(new KeyboardEvent(type, { key: "@", code: "KeyQ", ctrlKey: true, altKey: true, modifierAltGraph: true, bubbles: true }));
		}
		true
	}`))
	require.NoError(t, err)
	until(t, "the @ typed with AltGr", `document.getElementById("screen-text").textContent.endsWith("\n> @")`)

	// The computer goes away: the view says so; it comes back: the view shows it again.
	c.Stop()
	until(t, "the computer gone", `document.getElementById("status").textContent.startsWith("not_connected: ") &&
		document.getElementById("status").textContent.includes("waiting for it to come back")`)
	opts.Input = computer.Input(make(chan string))
	again := fakecrafttest.StartWithin(t, opts, testTimeout)
	again.WaitFor(ctx, markerAtPrompt)
	until(t, "the computer back in the view", `document.getElementById("status").textContent === "Live" &&
		!document.getElementById("screen-text").textContent.includes("blocks") &&
		document.getElementById("screen-text").textContent.includes("`+markerAtPrompt+`")`)

	// A link with a broken %-escape is not a computer: the list, not an error and a stale view.
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/%E0%A4"; true`))
	require.NoError(t, err)
	until(t, "the list", `!document.getElementById("computers").hidden && document.getElementById("viewer").hidden`)
}

// clicksProgram prints each click and scroll it gets, with its cell, and each paste.
const clicksProgram = `while true do
  local e, b, x, y = os.pullEvent()
  if e == "mouse_click" or e == "mouse_scroll" then print(e:sub(7) .. " " .. b .. " " .. x .. " " .. y) end
  if e == "paste" then print("paste " .. b) end
end`

// TestTheWebConsoleDrawsAPocketComputerAndClicksItsCells: in a phone's window the computer
// list scrolls in its box (its table made the whole page scroll sideways, 332 px), a pocket
// computer's 26x20 screen is drawn at its size, whole in the window, and a click or the wheel on the view
// reaches the computer at the cell under the pointer, as CC counts them (the view only
// focused the screen: paint, or any program that takes clicks, could not be used); a paste
// of characters CC has not says they went as "?".
func TestTheWebConsoleDrawsAPocketComputerAndClicksItsCells(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-pocket-4c1d"
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 12, "pocket"
	opts.Pocket = pocket.New(nil)
	opts.Settings["sandbox.allow_screen"] = "control"
	opts.Files = map[string]string{"/e2e.lua": deskProgram, "/clicks.lua": clicksProgram}
	opts.Input = computer.Input(make(chan string))
	fakecrafttest.StartWithin(t, opts, testTimeout).WaitFor(ctx, markerAtPrompt)

	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640)))
	logIn(t, page, "http://"+g.Addr+"/console/#/computer/12%3Apocket", token)
	until(t, "the prompt", liveAtThePrompt)
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = ""; true`))
	require.NoError(t, err)
	until(t, "the list", `!document.getElementById("computers").hidden && document.querySelectorAll("#computer-list a").length > 0`)
	listOverflow, err := chromedp.Run(page, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
	require.NoError(t, err)
	assert.Equal(t, 0, listOverflow, "the list is no wider than a phone's window")
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/12%3Apocket"; true`))
	require.NoError(t, err)
	until(t, "the prompt again", liveAtThePrompt)
	size, err := chromedp.Run(page, chromedp.Evaluate[[]int](`{
		const rows = [...document.querySelectorAll("#screen .row")];
		const screen = document.getElementById("screen");
		[rows.length, ...new Set(rows.map(row => [...row.textContent].length)),
			document.documentElement.scrollWidth - document.documentElement.clientWidth, screen.scrollWidth - screen.clientWidth]
	}`))
	require.NoError(t, err)
	assert.Equal(t, []int{20, 26, 0, 0}, size, "20 rows of 26 cells, whole in a phone's window: no scrolling")

	// A phone shows no keyboard for the screen: a command typed in the Paste box runs with the
	// Enter button (the paste sent no Enter, so nothing could be run from a phone).
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`document.getElementById("paste-text").value = "id"; true`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page, chromedp.Click("#paste-form button"), chromedp.Click("#enter")))
	until(t, "the command run", `document.getElementById("screen-text").textContent.includes("\n> id\nThis is computer #12")`)

	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "clicks\r")))
	until(t, "the program", `document.getElementById("screen-text").textContent.endsWith("> clicks")`)
	// The middle of a cell: the last one (26, 20), then (3, 2) with the right button.
	at := func(x, y int) string {
		return fmt.Sprintf(`{
			const row = document.querySelectorAll("#screen .row")[%d].getBoundingClientRect();
			[row.left + row.width / 26 * (%d + 0.5), row.top + row.height / 2]
		}`, y-1, x-1)
	}
	for _, c := range []struct {
		x, y   int
		button chromedp.MouseOption
		want   string
	}{{26, 20, chromedp.ButtonLeft, "click 1 26 20"}, {3, 2, chromedp.ButtonRight, "click 2 3 2"}} {
		xy, err := chromedp.Run(page, chromedp.Evaluate[[]float64](at(c.x, c.y)))
		require.NoError(t, err)
		require.NoError(t, chromedp.Do(page, chromedp.MouseClickXY(xy[0], xy[1], c.button)))
		until(t, c.want, `document.getElementById("screen-text").textContent.endsWith("\n`+c.want+`")`)
	}
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`{
		const row = document.querySelectorAll("#screen .row")[4].getBoundingClientRect();
		document.getElementById("screen").querySelector(".row:nth-child(5) span").dispatchEvent(new WheelEvent("wheel",
			{ deltaY: 120, clientX: row.left + row.width / 26 * 7.5, clientY: row.top + 1, bubbles: true, cancelable: true }));
		true
	}`))
	require.NoError(t, err)
	until(t, "the scroll", `document.getElementById("screen-text").textContent.endsWith("\nscroll 1 8 5")`)

	// A paste beyond CC's characters reaches the computer as "?" (the gateway's warning), an
	// emoji as "??", as CC pastes it (it was one): the status says which were replaced, where
	// the view said nothing.
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`document.getElementById("paste-text").value = "日本 ok 😀"; true`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page, chromedp.Click("#paste-form button")))
	until(t, "the characters sent as ?", `document.getElementById("status").textContent ===
		"Sent as ?: 日本😀 (a computer types characters up to U+00FF only)"`)
	until(t, "the paste on the computer", `document.getElementById("screen-text").textContent.endsWith("\npaste ?? ok ??")`)

}

// TestTheWebConsoleNamesAnOlderClientsFix: a computer whose client predates the screen (0.3.0
// answers screen.watch unknown_type) is not "waiting for it to come back" in the view, asked
// again every 2 s: the view says which client it runs and that the install line upgrades it.
func TestTheWebConsoleNamesAnOlderClientsFix(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	// The 0.3.0 daemon: its hello names its client, and it handles no screen.* type.
	connectConsoleComputer(ctx, t, g, "7:old", consoleComputerHooks{helloVersion: "0.3.0",
		unknownType: func(string) bool { return true }})

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Aold")))
	until(t, "the refusal", `document.getElementById("status").textContent.startsWith("unknown_type: ")`)
	shown, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	assert.Contains(t, shown, "(its client, trapos-sandbox 0.3.0, is older than the ")
	assert.Contains(t, shown, "run the gateway's install line on the computer to upgrade it, then reboot it)")
	assert.NotContains(t, shown, "waiting for it to come back")
}

// TestTheWebConsoleSaysWhenItsInputsScriptDidNotLoad: a reverse proxy that passes the page,
// console.js and console.css but not inputs.js (docs/reverse-proxy.md's location before the
// console had it) left console.js to stop at its first use of the list, and the page showed
// its title alone, with no word of why. It says which file did not load and what passes it.
func TestTheWebConsoleSaysWhenItsInputsScriptDidNotLoad(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	gateway, err := url.Parse("http://" + g.Addr)
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(gateway)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/console/inputs.js" {
			http.NotFound(w, r)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	require.NoError(t, chromedp.Do(page, chromedp.Navigate(proxy.URL+"/console/")))
	until(t, "the page's word on inputs.js", `document.getElementById("status").textContent.includes("inputs.js")`)
	shown, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	assert.Equal(t, "This page's inputs.js did not load: a reverse proxy in front of the gateway must pass GET /console/inputs.js too (docs/reverse-proxy.md).", shown)
}

// TestTheWebConsoleTakesAnInputsScriptWithoutANewerType: during a rollout a replica of an
// older build serves inputs.js without a newer input type (here mouse_up). console.js threw
// at its first look at the missing type (olderVersion's want[i] of null) and the page showed
// its title alone. A type the served list does not name is one no client is known to take:
// the view goes live and sends a press as a click (the press apart from its release unknown).
func TestTheWebConsoleTakesAnInputsScriptWithoutANewerType(t *testing.T) {
	ctx := testContext(t)
	const token = "console-rollout-5e1b" // the API answers no client through a proxy without one
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	connectConsoleComputer(ctx, t, g, "11:desk", consoleComputerHooks{clientVersion: "0.5.22", screen: idScreen("11:desk")})
	gateway, err := url.Parse("http://" + g.Addr)
	require.NoError(t, err)
	older := httputil.NewSingleHostReverseProxy(gateway)
	mouseUp := regexp.MustCompile(`"mouse_up":"[^"]*",?`)
	older.ModifyResponse = func(res *http.Response) error {
		if res.Request.URL.Path != "/console/inputs.js" {
			return nil
		}
		script, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err != nil {
			return err
		}
		if !mouseUp.Match(script) {
			return fmt.Errorf("the gateway's inputs.js names no mouse_up to leave out: %s", script)
		}
		script = mouseUp.ReplaceAll(script, nil)
		res.Body = io.NopCloser(bytes.NewReader(script))
		res.ContentLength = int64(len(script))
		res.Header.Set("Content-Length", strconv.Itoa(len(script)))
		return nil
	}
	proxy := httptest.NewServer(older)
	t.Cleanup(proxy.Close)

	logIn(t, page, proxy.URL+"/console/#/computer/11%3Adesk", token)
	until(t, "the list without mouse_up", `!("mouse_up" in inputTypesSince) && "mouse_click" in inputTypesSince`)
	until(t, "the screen, its client's version learnt", `document.getElementById("status").textContent === "Live" && view.drags`)
	pressApart, err := chromedp.Run(page, chromedp.Evaluate[bool](`view.pressApart`))
	require.NoError(t, err)
	assert.False(t, pressApart, "a press apart from its release, which the served list does not name")
}

// TestTheWebConsoleWatchesABusyComputerAgain: a host keeps a computer as busy as the gateway
// lets it, so the view's screen.watch is refused busy (429, Retry-After: 1). The view says so
// and asks again, and shows the screen once the host's requests end. Before, it took the busy
// answer, which says "retry shortly", as final: it never asked again, and the view stayed
// dead until the person reopened it.
func TestTheWebConsoleWatchesABusyComputerAgain(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectConsoleComputer(ctx, t, g, "7:busy", consoleComputerHooks{screen: rigScreen})
	c.fill(ctx)

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Abusy")))
	until(t, "the busy answer", `document.getElementById("status").textContent.startsWith("busy: ")`)
	shown, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(shown, "; retry shortly (trying again)"), "the view says it asks again: %q", shown)

	c.release()
	until(t, "the view live once the host's jobs end", rigLive)
}

// TestTheWebConsoleSendsKeysAgainWhenTheComputerIsBusy: keys typed on a live view while the
// host's requests fill the computer are refused busy; the view says so, sends them again
// after the answer's Retry-After, and they reach the computer, in order, once the host's
// requests end (the view live again). Before, a busy answer dropped them.
func TestTheWebConsoleSendsKeysAgainWhenTheComputerIsBusy(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:busy")
	c.fill(ctx)

	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.SendKeys("#screen", "ab")))
	until(t, "the busy answer to the keys", `document.getElementById("status").textContent.endsWith("; retry shortly (sending the keys again)")`)
	select {
	case payload := <-c.inputs:
		t.Fatalf("keys reached a computer the gateway says is busy: %s", payload)
	default:
	}

	c.release()
	var typed []string
	for len(typed) < 2 {
		select {
		case payload := <-c.inputs:
			var p struct {
				Events []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"events"`
			}
			require.NoError(t, json.Unmarshal([]byte(payload), &p))
			for _, e := range p.Events {
				if e.Type == "char" {
					typed = append(typed, e.Text)
				}
			}
		case <-ctx.Done():
			t.Fatalf("the keys refused busy never reached the computer (typed so far: %q)", typed)
		}
	}
	assert.Equal(t, []string{"a", "b"}, typed, "both keys, in order")
	until(t, "the view live again", `document.getElementById("status").textContent === "Live"`)
}

// watchConsoleComputer starts a gateway and a consoleComputer traposID on it that draws
// rigScreen, and opens its live view in a new console page.
func watchConsoleComputer(ctx context.Context, t *testing.T, traposID string) (page context.Context, until func(t *testing.T, what, js string), c *consoleComputer) {
	t.Helper()
	page, until = consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c = connectConsoleComputer(ctx, t, g, traposID, consoleComputerHooks{screen: rigScreen})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/"+url.QueryEscape(traposID))))
	until(t, "the view live", rigLive)
	return page, until, c
}

// fill has the host start jobs one by one until the gateway refuses one busy (429): the
// computer, holding them, then has no request slot for the console.
func (c *consoleComputer) fill(ctx context.Context) {
	c.t.Helper()
	job := `{"type":"lua.exec","payload":{"code":"return 1"},"timeoutMs":60000}`
	for {
		done := make(chan busyOutcome, 1)
		go func() { done <- postBusyRequest(ctx, c.g, c.id, job) }()
		select {
		case f := <-c.held:
			c.jobs, c.frames = append(c.jobs, done), append(c.frames, f)
			continue
		case o := <-done:
			require.Equal(c.t, http.StatusTooManyRequests, o.status, o.body)
		case <-ctx.Done():
			c.t.Fatal("the host's job neither reached the computer nor was refused")
		}
		return
	}
}

// release answers the jobs the computer holds and checks the host got each answer.
func (c *consoleComputer) release() {
	c.t.Helper()
	for _, f := range c.frames {
		c.answer(f, map[string]any{})
	}
	for _, done := range c.jobs {
		o := <-done
		assert.Equal(c.t, http.StatusOK, o.status, o.body)
	}
	c.jobs, c.frames = nil, nil
}

// blocksProgram writes CC's block characters 149 (the left column) and 129 (the top left
// sixth), then a soft hyphen between bars, then the control bytes 9, 13, 14 and 15 between
// bars (term.write draws them as CC's font does: blank, blank, ♪, ♫).
const blocksProgram = `print(string.char(149, 129)) print("|\173|") term.write("|" .. string.char(9, 13, 14, 15) .. "|") print()`

// accountsDesk starts a gateway on a data directory of its own (dataDir, the flag) with the
// account name, whose API token it returns, and the account's computer 11:desk at its prompt,
// which lets the host view its screen; what is sent on player is typed there.
func accountsDesk(ctx context.Context, t *testing.T, name string) (dataDir, token string, g *harness.Gateway, player chan string) {
	t.Helper()
	return accountsDeskWith(ctx, t, name, "view", map[string]string{"/e2e.lua": deskProgram})
}

// accountsDeskWith is accountsDesk whose owner sets sandbox.allow_screen to allowScreen, its
// disk holding files (the shell's program, /e2e.lua, among them).
func accountsDeskWith(ctx context.Context, t *testing.T, name, allowScreen string, files map[string]string) (dataDir, token string, g *harness.Gateway, player chan string) {
	t.Helper()
	dataDir = "--data-dir=" + t.TempDir()
	token = lastLineOf(gatewayCLI(ctx, t, "accounts", "add", name, dataDir))
	cred := lastLineOf(gatewayCLI(ctx, t, "credentials", "add", name, dataDir))
	g = startGateway(t, opencodefake.ClosedPortURL(t), dataDir)
	opts := computerOptions(t, g, cred, "/e2e.lua")
	opts.ID, opts.Label = 11, "desk"
	opts.Settings["sandbox.allow_screen"] = allowScreen
	opts.Files = files
	player = make(chan string, 1)
	opts.Input = computer.Input(player)
	fakecrafttest.StartWithin(t, opts, testTimeout).WaitFor(ctx, markerAtPrompt)
	return dataDir, token, g, player
}

// refuseAWrongToken opens g's console by the name console.test, which asks for a token (the
// API answers a browser without one only by localhost or an IP), and logs in with a token
// like token but wrong: the form says the gateway refused it.
func refuseAWrongToken(t *testing.T, page context.Context, until func(t *testing.T, what, js string), g *harness.Gateway, token string) {
	t.Helper()
	_, port, err := net.SplitHostPort(g.Addr)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://console.test:"+port+"/console/")))
	until(t, "the token form, the gateway's reason for its operator", `!document.getElementById("login").hidden &&
		!document.getElementById("login-operator").hidden &&
		document.getElementById("login-operator").textContent.includes("localhost, an IP address")`)
	// What the player reads is in a player's words: the form before any token said "the
	// gateway's own (SANDBOX_API_TOKEN)", and, as the player's error, the gateway's reason
	// (set SANDBOX_API_TOKEN to allow other names), which only its operator can act on.
	player, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[document.getElementById("login-error").textContent,
		[...document.querySelectorAll("#login p:not(#login-operator)")].map((p) => p.textContent.replace(/\s+/g, " ")).join(" ")]`))
	require.NoError(t, err)
	assert.Empty(t, player[0], "no error before the player gave a token")
	for _, operators := range []string{"SANDBOX_API_TOKEN", "trap-sandbox accounts", "Host header"} {
		assert.NotContains(t, player[1], operators, "the player's part of the form")
	}
	assert.Contains(t, player[1], "Ask the gateway's operator, or an admin of your account")
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#token", testkit.WrongSecret(token)), chromedp.Click("#login button")))
	until(t, "the wrong token refused, saying why", `document.getElementById("login-error").textContent === `+jsString(t, unknownTokenWords))
}

// whereTokensComeFrom ends the token form's words for a token the gateway refused: who gives
// one, and where they read how (docs/screen.md).
const whereTokensComeFrom = "Ask the gateway's operator, or an admin of your account, for an API token: " +
	"how they make one is in trap-sandbox's docs/accounts.md (Accounts and API tokens). " +
	"The gateway's password, which a computer's install asks for, is not one."

// unknownTokenWords are the token form's words for a token the gateway does not know.
const unknownTokenWords = "The gateway does not know this token: check that you copied all of it, and nothing else. " + whereTokensComeFrom

// TestTheWebConsoleTellsAPersonWhyTheirTokenIsRefused: the token form says why the gateway
// refused a token in a person's words, and where a token comes from, telling no more than the
// API's answer: a token it does not know, a computer's credential pasted where a token goes, a
// revoked token (by its name, as the API says it). Before, the form showed the API's words for
// a program calling it: "missing or wrong API token (send Authorization: Bearer
// <SANDBOX_API_TOKEN> or an account's token)"; on a gateway without SANDBOX_API_TOKEN, reached
// by a name, "from this host send no token", which a browser there cannot do.
func TestTheWebConsoleTellsAPersonWhyTheirTokenIsRefused(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	dataDir := "--data-dir=" + t.TempDir()
	gatewayCLI(ctx, t, "accounts", "add", "carol", dataDir) // her first token, "first"
	revoked := lastLineOf(gatewayCLI(ctx, t, "tokens", "add", "carol", "laptop", dataDir))
	gatewayCLI(ctx, t, "tokens", "revoke", revoked, dataDir)
	credential := lastLineOf(gatewayCLI(ctx, t, "credentials", "add", "carol", dataDir))
	const apiToken = "console-refusals-5e2b"
	g := startGateway(t, opencodefake.ClosedPortURL(t), dataDir, "--api-token", apiToken)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate(g.URL("/console/")), chromedp.WaitVisible("#login")))
	for _, c := range []struct{ what, token, words string }{
		{"a token the gateway does not know", testkit.WrongSecret(apiToken), unknownTokenWords},
		{"a computer's credential", credential, "This is a computer's credential (tsc_…), which a computer says hello with: it never opens the console. " + whereTokensComeFrom},
		{"a revoked token", revoked, `The gateway refused this token: the token "laptop" was revoked, and it opens nothing now. ` + whereTokensComeFrom},
	} {
		require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#token", c.token), chromedp.Click("#login button")))
		until(t, c.what+" refused, in a person's words", `document.getElementById("login-error").textContent === `+jsString(t, c.words)+
			` && document.getElementById("status").textContent === "The gateway refused the token: log in with another."`)
		_, err := chromedp.Run(page, chromedp.Evaluate[bool](`document.getElementById("login-error").textContent = ""; true`))
		require.NoError(t, err)
	}
}

// TestTheWebConsoleTakesAnAccountsTokenWhereTheAPIRefusesWithout: on a gateway without
// SANDBOX_API_TOKEN the API answers a browser only on loopback and by localhost or an IP
// (403 otherwise); an account's token opens it from anywhere. The console reached by another
// name asks for a token with the gateway's reason, and alice's token shows alice's computer.
func TestTheWebConsoleTakesAnAccountsTokenWhereTheAPIRefusesWithout(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t, "console.test")
	dataDir, alice, g, player := accountsDesk(ctx, t, "alice")
	refuseAWrongToken(t, page, until, g, alice)
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#token", alice), chromedp.Click("#login button")))
	until(t, "alice's computer in the list", `[...document.querySelectorAll("#computer-list a")].some(a => a.textContent === "`+deskTraposID+`")`)
	accounts, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#computer-list tr")].map(tr => tr.cells[1].textContent)`))
	require.NoError(t, err)
	assert.Equal(t, []string{"alice"}, accounts, "the list names each computer's account")

	// Her token revoked while she watches: the next frame is not shown; the form says why.
	require.NoError(t, chromedp.Do(page, chromedp.Click(`#computer-list a`)))
	until(t, "the prompt", `document.getElementById("screen-text").textContent.includes("`+markerAtPrompt+`")`)
	gatewayCLI(ctx, t, "tokens", "revoke", alice, dataDir)
	player <- "ls"
	until(t, "the token form, saying the token was revoked", `!document.getElementById("login").hidden &&
		document.getElementById("login-error").textContent.includes("revoked")`)
	text, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("screen-text").textContent`))
	require.NoError(t, err)
	assert.NotContains(t, text, "> ls", "nothing drawn after the revocation reaches the page")
}

// TestTheWebConsoleForgetsATokenTheGatewayRefuses: the console reached by a name other than
// localhost (so the API wants a token) keeps a token only once the gateway takes it. A wrong
// one given at login is refused and forgotten: not kept in the tab, not left in the field, no
// Log out; a computer's link opened then brings the form back with the status cleared, not
// "Connecting…" beside it. Dave's token, revoked while he watches his computer, brings back the
// form saying so, the status saying the token was refused (it stayed "Live"), and it too is
// forgotten. Before, both tokens stayed in the tab, in the field, with Log out.
func TestTheWebConsoleForgetsATokenTheGatewayRefuses(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t, "console.test")
	dataDir, dave, g, player := accountsDesk(ctx, t, "dave")

	// What the tab keeps of a token, and what its header says: the token in sessionStorage,
	// the form's field, whether Log out shows, the status.
	const kept = `[sessionStorage.getItem("trap-sandbox-token"), document.getElementById("token").value,
		!document.getElementById("logout").hidden, document.getElementById("status").textContent]`
	const refusedStatus = "The gateway refused the token: log in with another."
	refuseAWrongToken(t, page, until, g, dave)
	state, err := chromedp.Run(page, chromedp.Evaluate[[]any](kept))
	require.NoError(t, err)
	require.Equal(t, []any{nil, "", false, refusedStatus}, state, "the wrong token not kept, nor shown logged in; the status says it was refused")

	// A computer's link opened now asks for a token again: the view's "Connecting…" does not
	// stay beside the form (open() names the computer in the view, which the form then hides).
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/11%3Adesk"; true`))
	require.NoError(t, err)
	until(t, "the token form again, after the view was opened", `document.getElementById("viewer-id").textContent === "11:desk" &&
		!document.getElementById("login").hidden && document.getElementById("viewer").hidden`)
	state, err = chromedp.Run(page, chromedp.Evaluate[[]any](kept))
	require.NoError(t, err)
	assert.Equal(t, []any{nil, "", false, ""}, state, "no token, and no status beside the form")

	// Dave's own token opens the link's view; the tab keeps it, and offers to log it out.
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#token", dave), chromedp.Click("#login button")))
	until(t, "dave's screen", liveAtThePrompt)
	state, err = chromedp.Run(page, chromedp.Evaluate[[]any](`[sessionStorage.getItem("trap-sandbox-token"), !document.getElementById("logout").hidden]`))
	require.NoError(t, err)
	require.Equal(t, []any{dave, true}, state, "the token the gateway took is kept, with Log out")

	// Revoked while he watches: the next frame brings back the form (the gateway checks the
	// token before each frame); the header no longer says "Live", and the token is forgotten.
	gatewayCLI(ctx, t, "tokens", "revoke", dave, dataDir)
	player <- "ls"
	until(t, "the token form, saying the token was revoked", `!document.getElementById("login").hidden &&
		document.getElementById("login-error").textContent === `+jsString(t, `The gateway refused this token: the token "first" was revoked, and it opens nothing now. `+whereTokensComeFrom))
	state, err = chromedp.Run(page, chromedp.Evaluate[[]any](kept))
	require.NoError(t, err)
	assert.Equal(t, []any{nil, "", false, refusedStatus}, state, "the revoked token not kept, nor shown logged in; not Live")
}

// TestTheWebConsoleStopsAtAComputerOfSeveralAccountsAndLogsOut: alice's and bob's computers
// are both 11:desk; an admin's token cannot say which one it means, and asking again would
// not either: the view shows the gateway's answer, naming the accounts, and stops (it said
// "waiting for it to come back", and asked every 2 s). Log out forgets the token and lands
// where a reload would: on this loopback gateway without SANDBOX_API_TOKEN, the list (it
// brought back the token form, which a reload replaced with the list); Log in with a token
// brings the form, and alice's token then opens her computer.
func TestTheWebConsoleStopsAtAComputerOfSeveralAccountsAndLogsOut(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	dataDir := "--data-dir=" + t.TempDir()
	root := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "root", "--admin", dataDir))
	alice := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "alice", dataDir))
	gatewayCLI(ctx, t, "accounts", "add", "bob", dataDir)
	g := startGateway(t, opencodefake.ClosedPortURL(t), dataDir)
	for _, owner := range []string{"alice", "bob"} {
		opts := computerOptions(t, g, lastLineOf(gatewayCLI(ctx, t, "credentials", "add", owner, dataDir)), "/e2e.lua")
		opts.ID, opts.Label = 11, "desk"
		opts.Settings["sandbox.allow_screen"] = "view"
		opts.Files = map[string]string{"/e2e.lua": deskProgram}
		opts.Input = computer.Input(make(chan string))
		fakecrafttest.StartWithin(t, opts, testTimeout).WaitFor(ctx, markerAtPrompt)
	}

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/")))
	until(t, "the list, without a token on loopback", `!document.getElementById("computers").hidden`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[bool](`!document.getElementById("logout").hidden`))
	require.NoError(t, err)
	assert.False(t, shown, "no Log out without a token")
	// The token as the form would keep it: on loopback, a gateway without SANDBOX_API_TOKEN
	// asks for none.
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`sessionStorage.setItem("trap-sandbox-token", "`+root+`"); true`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/11%3Adesk"), chromedp.Reload()))
	until(t, "the gateway's answer", `document.getElementById("status").textContent.startsWith("not_connected: ")`)
	status, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	assert.Equal(t, "not_connected: computer 11:desk is connected in several accounts (alice, bob): use one of those accounts' tokens to reach it (Log out to give one of those tokens.)",
		status, "the accounts and the way to pick one; not waiting for the computer to come back")

	require.NoError(t, chromedp.Do(page, chromedp.Click("#logout")))
	// Where a reload lands: this gateway answers loopback without a token, and showed the
	// token form, which the next reload replaced with the list.
	until(t, "the list", `!document.getElementById("computers").hidden && document.querySelectorAll("#computer-list tr").length === 2`)
	state, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[sessionStorage.getItem("trap-sandbox-token"), document.getElementById("logout").hidden,
		location.hash, document.getElementById("status").textContent, document.getElementById("login").hidden, document.getElementById("login-open").hidden]`))
	require.NoError(t, err)
	assert.Equal(t, []any{nil, true, "", "Logged out: no tab of this console holds the token now.", true, false}, state,
		"the token forgotten, no Log out, no computer's view left in the address; the list, and Log in with a token")

	require.NoError(t, chromedp.Do(page, chromedp.Click("#login-open"), chromedp.WaitVisible("#login")))
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#token", alice), chromedp.Click("#login button")))
	until(t, "alice's computer in the list", `[...document.querySelectorAll("#computer-list tr")].map(tr => tr.cells[1].textContent).join() === "alice"`)
	shown, err = chromedp.Run(page, chromedp.Evaluate[bool](`!document.getElementById("logout").hidden`))
	require.NoError(t, err)
	assert.True(t, shown, "Log out while the tab holds a token")
	require.NoError(t, chromedp.Do(page, chromedp.Click(`#computer-list a`)))
	until(t, "alice's screen", liveAtThePrompt)
}

// TestTheWebConsoleLogsOutEveryTab: each tab keeps its own token (a computer's link opened in
// a new tab asks for it again), so a player watching their computer in one tab and the list in
// another logs in twice; Log out in one is for both. The other tab, live on the computer's
// screen, brings back the token form saying why, holds no token and stops watching; neither
// tab keeps what it showed (the list, the screen) or a text not pasted yet in the page. Before, the other tab stayed
// live with its token for the next person at the machine.
func TestTheWebConsoleLogsOutEveryTab(t *testing.T) {
	ctx := testContext(t)
	viewTab, until := consolePage(ctx, t, "console.test")
	_, erin, g, _ := accountsDesk(ctx, t, "erin")
	console := "http://console.test:" + g.Port() + "/console/"
	logIn(t, viewTab, console+"#/computer/11%3Adesk", erin)
	until(t, "erin's screen", liveAtThePrompt)

	// A text in the Paste field, not pasted yet (typed there on a computer the owner let be
	// controlled; this one is only viewed, which hides the field).
	_, err := chromedp.Run(viewTab, chromedp.Evaluate[bool](`document.getElementById("paste-text").value = "door-secret"; true`))
	require.NoError(t, err)

	listTab, closeListTab := chromedp.NewContext(viewTab) // a second tab of the same browser
	t.Cleanup(closeListTab)
	require.NoError(t, chromedp.Do(listTab, chromedp.Navigate(console), chromedp.WaitVisible("#login"),
		chromedp.SendKeys("#token", erin), chromedp.Click("#login button"), chromedp.WaitVisible("#logout")))
	_, err = chromedp.Run(listTab, chromedp.Poll[bool](`document.querySelectorAll("#computer-list a").length === 1`))
	require.NoError(t, err)

	require.NoError(t, chromedp.Do(listTab, chromedp.Click("#logout")))
	const state = `[sessionStorage.getItem("trap-sandbox-token"), document.getElementById("status").textContent,
		document.getElementById("login").hidden, document.getElementById("logout").hidden,
		document.getElementById("computer-list").textContent, document.getElementById("screen-text").textContent,
		document.getElementById("paste-text").value]`
	shown, err := chromedp.Run(listTab, chromedp.Evaluate[[]any](state))
	require.NoError(t, err)
	assert.Equal(t, []any{nil, "Logged out: no tab of this console holds the token now.", false, true, "", "", ""}, shown,
		"the tab that logged out: no token, the form, no list left in the page")
	until(t, "the other tab's token form", `!document.getElementById("login").hidden`)
	shown, err = chromedp.Run(viewTab, chromedp.Evaluate[[]any](state))
	require.NoError(t, err)
	assert.Equal(t, []any{nil, "Logged out in another tab: this tab no longer holds the token either.", false, true, "", "", ""}, shown,
		"the other tab: no token, the form, no screen nor text not pasted left in the page")
}

// TestTheWebConsoleForgetsTheTokenOfAReopenedTab: a tab closed and reopened (Ctrl+Shift+T, the
// browser's History) gets its sessionStorage back, the token too, and a restored tab's page is
// loaded from the history (back_forward: Chromium 156 reopening a closed tab under Xvfb says
// so; DevTools cannot reopen a closed tab, so here the page is gone back to, never from
// memory). Such a page forgets the token and asks again, saying why; a reload keeps it. The
// next person at a shared machine reopened the tab the last one closed and found the console
// logged in, where docs/screen.md said the token was gone with the tab.
func TestTheWebConsoleForgetsTheTokenOfAReopenedTab(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-reopened-4c1a"
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	logIn(t, page, g.URL("/console/#/computer/9%3Aaway"), token)
	viewing := `document.getElementById("login").hidden && sessionStorage.getItem("trap-sandbox-token") === "` + token + `" &&
		document.getElementById("status").textContent.startsWith("not_connected: computer 9:away is not connected")`
	until(t, "the view, the token kept", viewing)
	require.NoError(t, chromedp.Do(page, chromedp.Reload(), chromedp.WaitReady("#login")))
	until(t, "the view reloaded, the token still kept", viewing)

	require.NoError(t, chromedp.Do(page, chromedp.Navigate(g.URL("/healthz")), chromedp.NavigateBack(), chromedp.WaitReady("#login")))
	until(t, "the token form, saying why", `!document.getElementById("login").hidden &&
		document.getElementById("status").textContent === "This tab was reopened: log in again (a tab keeps no token past its closing)."`)
	kept, err := chromedp.Run(page, chromedp.Evaluate[any](`sessionStorage.getItem("trap-sandbox-token")`))
	require.NoError(t, err)
	assert.Nil(t, kept, "the tab holds no token")
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#token", token), chromedp.Click("#login button")))
	until(t, "the view again once logged in", viewing)
}

// TestTheWebConsoleKeepsSayingWhyAComputerLeft: alice's computer, cut off while she watches it
// (its credential revoked), does not come back by itself; the view says so, and goes on saying
// so while it looks for the computer again. The gateway's answer to those looks knows only that
// the computer is not connected, and put "no computer of account alice is connected (its token
// reaches that account's computers only): …" over the reason two seconds after it was shown:
// alice's own computer, as if it were another account's.
func TestTheWebConsoleKeepsSayingWhyAComputerLeft(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t, "console.test")
	_, alice, g, _ := accountsDesk(ctx, t, "alice")
	logIn(t, page, "http://console.test:"+g.Port()+"/console/#/computer/11%3Adesk", alice)
	until(t, "alice's screen", liveAtThePrompt)
	// The page's looks for the screen, counted as it asks.
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`window.looks = 0; const pageFetch = window.fetch;
		window.fetch = (url, options) => { if (String(url).endsWith("/screen")) window.looks++; return pageFetch(url, options); }; true`))
	require.NoError(t, err)

	gatewayCLI(ctx, t, "computers", "revoke", deskTraposID, "--url="+g.URL(""), "--api-token="+alice)
	const cutOff = "not_connected: computer 11:desk was cut off: its credential was revoked; it connects again once linked anew (sandbox link on it) or given a new credential (waiting for it to come back)"
	until(t, "the view saying the computer was cut off", `document.getElementById("status").textContent === `+jsString(t, cutOff))
	// Two looks since: the first one's answer is shown before the second starts.
	until(t, "two looks for the computer since", `window.looks >= 2`)
	assert.Equal(t, cutOff, statusOf(t, page), "why the computer left, while the view looks for it")
}

// TestTheWebConsoleSaysTheGatewayStoppedAndComesBackWithIt: the gateway stopping (SIGTERM)
// under an open view is not the computer leaving: the view says the gateway is shutting down,
// then that the connection to it was lost, and shows the computer again once a gateway is back
// on that address and the computer has reconnected to it.
func TestTheWebConsoleSaysTheGatewayStoppedAndComesBackWithIt(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-restart-9b2e"
	g, restart := deskAcrossRestarts(ctx, t, token, "view")

	logIn(t, page, "http://"+g.Addr+"/console/#/computer/11%3Adesk", token)
	until(t, "the prompt", liveAtThePrompt)
	// Every status the view shows from now on, however briefly.
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`window.statuses = [];
		new MutationObserver(() => statuses.push(document.getElementById("status").textContent))
			.observe(document.getElementById("status"), { childList: true, characterData: true, subtree: true });
		true`))
	require.NoError(t, err)

	require.NoError(t, g.Stop())
	until(t, "the connection lost", `statuses.includes("The connection to the gateway was lost (waiting for it to come back)")`)
	statuses, err := chromedp.Run(page, chromedp.Evaluate[[]string](`statuses`))
	require.NoError(t, err)
	assert.Equal(t, "not_connected: the gateway is shutting down (waiting for it to come back)", statuses[0],
		"the gateway's own word that it stopped, not that the computer disconnected")
	stale, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[document.getElementById("viewer").classList.contains("stale"),
		getComputedStyle(document.getElementById("screen")).opacity, document.getElementById("screen-text").textContent]`))
	require.NoError(t, err)
	assert.Equal(t, true, stale[0], "the last screen greyed: it showed the prompt and cursor as live")
	assert.Equal(t, "0.5", stale[1])
	assert.Contains(t, stale[2], markerAtPrompt, "the last screen stays in view")

	restart()
	until(t, "the computer back in the view", `document.getElementById("status").textContent === "Live"`)
	text, err := chromedp.Run(page, chromedp.Text("#screen-text"))
	require.NoError(t, err)
	assert.Contains(t, text, markerAtPrompt)
	until(t, "the screen no longer greyed", `!document.getElementById("viewer").classList.contains("stale")`)
}

// TestTheWebConsoleWaitsForAComputerAfterARestartWithoutAskingThePlayerTo: in a gateway's first
// minute, a computer not connected yet was answered with the words the gateway gives a caller
// that asks once (the CLI, a script): "…after a restart they reconnect within about 6 s (…), so
// ask again then; …". The page asks again by itself, every 2 s, and says it waits: the player
// was told to do what the page does, and reloaded it. The page shows the answer's
// waitingMessage instead, the gateway's words for a caller that waits: the rest (how long, and
// the fix in game if none comes back) without that instruction.
func TestTheWebConsoleWaitsForAComputerAfterARestartWithoutAskingThePlayerTo(t *testing.T) {
	ctx := testContext(t)
	const token = "console-firstminute-6d1f"
	before := time.Now() // the gateway starts after it: a minute since is at least its first
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	page, until := consolePage(ctx, t)
	logIn(t, page, "http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche", token)
	until(t, "the answer", `document.getElementById("status").textContent.startsWith("not_connected: ")`)
	status, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	if time.Since(before) < time.Minute { // the gateway's first minute: its hint for a restart
		assert.Regexp(t, `^not_connected: computer 5:küche is not connected; no computer is connected, and the gateway started \d+s ago: `+
			`after a restart they reconnect within about 6 s \(a minute at most after restarts close together\); `+
			`if none does, run sandbox status on it in game to see why \(waiting for it to come back\)$`, status)
	}
	assert.NotContains(t, status, "ask again", "the page asks again itself")
}

// TestTheWebConsoleTellsAnAccountWithNoComputerToLinkOne: an account that has never linked a
// computer, its token's holder opening a computer's view in the gateway's first minute, was
// told that no computer of the account had connected since the gateway started and that they
// reconnect within about 6 s: there was nothing to wait for. The view, and the CLI with the
// same token, say how to link one instead; the view shows those words as they are, where it
// added its own "(waiting for it to come back)" after them, which told the player to wait.
func TestTheWebConsoleTellsAnAccountWithNoComputerToLinkOne(t *testing.T) {
	ctx := testContext(t)
	dataDir := "--data-dir=" + t.TempDir()
	alice := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "alice", dataDir))
	g := startGateway(t, opencodefake.ClosedPortURL(t), dataDir)
	const link = `computer 6:tasche is not connected; account alice has no computer linked yet (its token reaches that account's computers only): ` +
		`run sandbox link on the computer in game and approve its code with trap-sandbox link approve CODE (docs/accounts.md, Linking a computer)`

	page, until := consolePage(ctx, t, "console.test") // a name, not loopback: the token is asked for
	_, port, err := net.SplitHostPort(g.Addr)
	require.NoError(t, err)
	logIn(t, page, "http://console.test:"+port+"/console/#/computer/6%3Atasche", alice)
	until(t, "the answer", `document.getElementById("status").textContent.startsWith("not_connected: ")`)
	status, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	assert.Equal(t, "not_connected: "+link, status, "the gateway's words as they are: no computer comes back, the page's waiting words told the player to wait")

	_, errOut, code := runGatewayCLI(ctx, t, "ping", "6:tasche", "--url="+g.URL(""), "--api-token="+alice)
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: computer 6:tasche ping: the gateway answered not_connected: the computer "+strings.TrimPrefix(link, "computer 6:tasche ")+"\n", errOut)
}

// TestTheWebConsoleSendsNoKeysWhileTheGatewayIsAway: the view of a computer whose gateway
// stopped still shows its last screen, and the person may go on typing on it. Those keys, a
// paste and Terminate go nowhere and leave the status saying why (the gateway's words, then
// the connection lost, "waiting for it to come back"): they replaced it with "Input failed:
// Failed to fetch", the browser's words, which no longer said that the view waits and comes
// back. Nor are they kept for later: once the view is live again, only what is typed then is
// typed on the computer.
func TestTheWebConsoleSendsNoKeysWhileTheGatewayIsAway(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-away-4c1d"
	g, restart := deskAcrossRestarts(ctx, t, token, "control")

	logIn(t, page, "http://"+g.Addr+"/console/#/computer/11%3Adesk", token)
	until(t, "the prompt", liveAtThePrompt)
	require.NoError(t, g.Stop())
	until(t, "the connection lost", `document.getElementById("status").textContent === "The connection to the gateway was lost (waiting for it to come back)"`)
	// Every status the view shows from now on, however briefly.
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`window.statuses = [];
		new MutationObserver(() => statuses.push(document.getElementById("status").textContent))
			.observe(document.getElementById("status"), { childList: true, characterData: true, subtree: true });
		true`))
	require.NoError(t, err)

	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.SendKeys("#screen", "ls\r"),
		chromedp.SendKeys("#paste-text", "ls"), chromedp.Click("#paste-form button"), chromedp.Click("#terminate")))
	// Whatever was sent has been answered, or has failed, once the view's input queue settles.
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`view.queue.then(() => true)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	notWaiting, err := chromedp.Run(page, chromedp.Evaluate[[]string](`statuses.filter((s) => !s.endsWith("(waiting for it to come back)"))`))
	require.NoError(t, err)
	assert.Empty(t, notWaiting, "every status while the gateway is away says the view waits for it")
	shown, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	assert.Equal(t, "The connection to the gateway was lost (waiting for it to come back)", shown)

	restart()
	until(t, "the computer back in the view", `document.getElementById("status").textContent === "Live"`)
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.SendKeys("#screen", "id\r")))
	until(t, "what is typed once the view is back", `document.getElementById("screen-text").textContent.includes("> id\n")`)
	text, err := chromedp.Run(page, chromedp.Text("#screen-text"))
	require.NoError(t, err)
	assert.NotContains(t, text, "> ls", "nothing typed while the gateway was away reaches the computer")
}

// TestTheWebConsolesTypeFieldKeepsNothingUnsent: what is typed in the Type field while the
// gateway is away is not sent (as the keys on the screen are not), and the field no longer
// shows it: it kept "abc", which the computer never got, as if typed, and what was typed after
// it once the view was back went on from there (the field "abcid", the computer's line "id").
// The field shows what the computer got: nothing of it.
func TestTheWebConsolesTypeFieldKeepsNothingUnsent(t *testing.T) {
	ctx := testContext(t)
	const token = "console-typeaway-8e2c"
	g, restart := deskAcrossRestarts(ctx, t, token, "control")
	page, until := openDesk(ctx, t, g.Addr, token) // a phone's window: the Type field shown
	until(t, "the prompt", liveAtThePrompt)
	require.NoError(t, g.Stop())
	until(t, "the connection lost", `document.getElementById("status").textContent === "The connection to the gateway was lost (waiting for it to come back)"`)

	for _, ch := range []string{"a", "b", "c"} {
		insertAtTheEnd(t, page, "#type-text", ch)
	}
	field, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("type-text").value`))
	require.NoError(t, err)
	assert.Equal(t, "", field, "nothing typed in the field reached the computer")

	restart()
	until(t, "the computer back in the view", `document.getElementById("status").textContent === "Live"`)
	insertAtTheEnd(t, page, "#type-text", "id")
	require.NoError(t, chromedp.Do(page, chromedp.Click(`#touch [data-key="enter"]`)))
	until(t, "what is typed once the view is back", `document.getElementById("screen-text").textContent.includes("> id\n")`)
	text, err := chromedp.Run(page, chromedp.Text("#screen-text"))
	require.NoError(t, err)
	assert.NotContains(t, text, "abc", "nothing typed while the gateway was away reaches the computer")
}

// heldProgram prints each press and release of a mouse button it gets, with its button and
// cell, and each key and key_up but Enter's (the one that started it).
const heldProgram = `while true do
  local e, a, x, y = os.pullEvent()
  if e == "mouse_click" or e == "mouse_up" then print(e:sub(7) .. " " .. a .. " " .. x .. " " .. y)
  elseif (e == "key" or e == "key_up") and a ~= keys.enter then print(e .. " " .. keys.getName(a)) end
end`

// heldOnTheDesk is a console page logged in with token to the desk of deskAcrossRestarts (its
// owner lets the host control its screen), which runs heldProgram (runHeld).
func heldOnTheDesk(ctx context.Context, t *testing.T, token string) (page context.Context, until func(t *testing.T, what, js string), g *harness.Gateway, restart func()) {
	t.Helper()
	page, until = consolePage(ctx, t)
	g, restart = deskAcrossRestarts(ctx, t, token, "control")
	logIn(t, page, "http://"+g.Addr+"/console/#/computer/11%3Adesk", token)
	until(t, "the prompt", liveAtThePrompt)
	runHeld(t, page, until)
	return page, until, g, restart
}

// runHeld runs heldProgram (held.lua) from the shell of page's live view, typed on its screen.
func runHeld(t *testing.T, page context.Context, until func(t *testing.T, what, js string)) {
	t.Helper()
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.SendKeys("#screen", "held\r")))
	until(t, "the program", `document.getElementById("screen-text").textContent.endsWith("> held")`)
}

// TestTheWebConsoleLetsGoWhatWasHeldWhileTheGatewayWasAway: a mouse button and a key held on
// the screen, then let go while the gateway is away (restarted: the computer's program runs on,
// and its daemon connects to the new gateway), are let go on the computer once the view is live
// again, before anything typed since; a key pressed and let go while away is not sent at all.
// Before, the releases were dropped with the rest, and the computer held the button and Ctrl
// down for ever.
func TestTheWebConsoleLetsGoWhatWasHeldWhileTheGatewayWasAway(t *testing.T) {
	ctx := testContext(t)
	page, until, g, restart := heldOnTheDesk(ctx, t, "console-held-5f0a")
	xy := cellPoint(t, page, 3.5, 2)
	require.NoError(t, chromedp.Do(page, leftButton(input.DispatchMouseEventTypeMousePressed, xy, 1),
		keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "Control", "ControlLeft", 17)))
	until(t, "the button and Ctrl down", `document.getElementById("screen-text").textContent.endsWith("\nclick 1 3 2\nkey leftCtrl")`)

	require.NoError(t, g.Stop())
	until(t, "the connection lost", `!view.live &&
		document.getElementById("status").textContent === "The connection to the gateway was lost (waiting for it to come back)"`)
	require.NoError(t, chromedp.Do(page, leftButton(input.DispatchMouseEventTypeMouseReleased, xy, 0),
		keyboardKey(input.DispatchKeyEventTypeKeyUp, "Control", "ControlLeft", 17),
		keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "b", "KeyB", 66), keyboardKey(input.DispatchKeyEventTypeKeyUp, "b", "KeyB", 66)))
	letGo, err := chromedp.Run(page, chromedp.Evaluate[bool](`view.held === null && view.down.size === 0`))
	require.NoError(t, err)
	require.True(t, letGo, "the page let go of the button and the keys")

	restart()
	until(t, "the computer back in the view", `document.getElementById("status").textContent === "Live"`)
	require.NoError(t, chromedp.Do(page, keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "x", "KeyX", 88),
		keyboardKey(input.DispatchKeyEventTypeKeyUp, "x", "KeyX", 88)))
	until(t, "the releases, then the key typed since", `document.getElementById("screen-text").textContent.endsWith(
		"\nclick 1 3 2\nkey leftCtrl\nup 1 3 2\nkey_up leftCtrl\nkey x\nkey_up x")`)
}

// TestTheWebConsoleLetsGoAButtonWhoseReleaseFoundTheComputerGone: a button let go as its
// computer's socket drops, the release's call answered not_connected before the view knew the
// computer was gone, is let go on the computer once it is back and the view live again, before
// a key typed since. Before, that release was lost, the button held on the computer for ever.
func TestTheWebConsoleLetsGoAButtonWhoseReleaseFoundTheComputerGone(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	first := connectReleaseComputer(ctx, t, g, "14:rig", true)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/14%3Arig")))
	until(t, "the screen", rigLive)
	xy := cellPoint(t, page, 3.5, 1)
	require.NoError(t, chromedp.Do(page, leftButton(input.DispatchMouseEventTypeMousePressed, xy, 1)))
	assert.Contains(t, first.input(ctx, t), `"type":"mouse_click"`)
	require.NoError(t, chromedp.Do(page, leftButton(input.DispatchMouseEventTypeMouseReleased, xy, 0)))
	assert.Contains(t, first.input(ctx, t), `"type":"mouse_up"`, "the release, which the computer never answers")
	until(t, "the computer gone", `!view.live`)
	// The release's call answered (not_connected) before the computer is back.
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`view.queue.then(() => true)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)

	second := connectReleaseComputer(ctx, t, g, "14:rig", false)
	until(t, "the view live again", `document.getElementById("status").textContent === "Live"`)
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "x")))
	var got []string
	for !strings.Contains(strings.Join(got, ""), `"key_up"`) {
		got = append(got, second.input(ctx, t))
	}
	all := strings.Join(got, "")
	up, key := strings.Index(all, `"type":"mouse_up","button":1,"x":3,"y":1`), strings.Index(all, `"type":"key"`)
	assert.True(t, up >= 0 && up < key, "the release, then the key typed since: %s", all)
}

// TestTheWebConsoleLetsGoAKeyWhoseReleaseGotNoAnswer: Ctrl let go on a computer's screen, the
// call carrying its key_up cut by the network (a proxy cuts it) while the screen's stream stays
// open, is let go on the computer by the view's next call. Before, the release was owed until
// the stream opened again, which it never did: the computer held Ctrl down. Once it went, the
// status says Live again, not the call's "Input failed". The computer is one on a raw socket,
// with no clock of its own: its stream ends only when the page or the gateway ends it. (On a
// fakecraft desk the stream reopened some 20 s later all the same: its daemon's liveness, 70 s
// of silence from the gateway, runs on fakecraft's clock, 4 times as fast in these tests
// (timeScale), and dropped the socket 17.5 s after the gateway's last frame, the Ctrl key's;
// the test counted on the release going first.) The page's two ways, the release sent again
// (Live) or owed to a reopen (before), are the events the test waits for.
func TestTheWebConsoleLetsGoAKeyWhoseReleaseGotNoAnswer(t *testing.T) {
	ctx := testContext(t)
	const token = "console-unanswered-7c41" // the API answers no client through a proxy without one
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	c := connectReleaseComputer(ctx, t, g, "14:rig", false)
	// The calls carrying a key_up are cut, from Ctrl's on (the browser tries a request cut on a
	// reused connection once more, itself), until the page says its call failed.
	var cutting, cut atomic.Bool
	proxy := inputCuttingProxy(t, g, func(_ *http.Request, body []byte) bool {
		if bytes.Contains(body, []byte(`"key_up"`)) && cutting.Load() {
			cut.Store(true)
			return true
		}
		return false
	})
	opened := openRig(t, page, until, proxy.URL, token)

	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"),
		keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "Control", "ControlLeft", 17)))
	assert.Equal(t, `{"events":[{"type":"key","name":"leftCtrl"}]}`, c.input(ctx, t), "Ctrl down")
	cutting.Store(true)
	require.NoError(t, chromedp.Do(page, keyboardKey(input.DispatchKeyEventTypeKeyUp, "Control", "ControlLeft", 17)))
	until(t, "the release's call failed", `document.getElementById("status").textContent.startsWith("Input failed: ")`)
	cutting.Store(false)
	until(t, "the release sent again, or owed to a reopen", `document.getElementById("status").textContent === "Live" || view.owed.length > 0`)
	assert.True(t, cut.Load(), "the release's first call was cut")
	owed, err := chromedp.Run(page, chromedp.Evaluate[int](`view.owed.length`))
	require.NoError(t, err)
	require.Zero(t, owed, "the release left to a reopen of the stream, which does not come")
	assert.Equal(t, `{"events":[{"type":"key_up","name":"leftCtrl"}]}`, c.input(ctx, t), "Ctrl let go")
	again, err := chromedp.Run(page, chromedp.Evaluate[int](`view.live ? view.opened : -1`))
	require.NoError(t, err)
	assert.Equal(t, opened, again, "the stream stayed open: the release went on the view's next call")
}

// inputCuttingProxy is a reverse proxy in front of g, as a network between the browser and the
// gateway: it cuts the connection of each call r of the API's …/input whose body cut says to
// (the page's fetch gets no answer; the gateway never sees the call), and passes on everything
// else. cut may hold the call first, as a slow network does.
func inputCuttingProxy(t *testing.T, g *harness.Gateway, cut func(r *http.Request, body []byte) bool) *httptest.Server {
	t.Helper()
	return inputProxy(t, g, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if cut(r, body) {
			panic(http.ErrAbortHandler) // the connection cut: the page's fetch gets no answer
		}
		return false
	})
}

// inputProxy is a reverse proxy in front of g, as a network between the browser and the
// gateway: each call of the API's …/input goes to onInput with its body (read whole, and put
// back for the gateway), which answers it itself (true) or lets it through; everything else
// passes on. A body that cannot be read cuts the connection, as a network that failed.
func inputProxy(t *testing.T, g *harness.Gateway, onInput func(w http.ResponseWriter, r *http.Request, body []byte) (answered bool)) *httptest.Server {
	t.Helper()
	gateway, err := url.Parse(g.URL(""))
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(gateway)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/input") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				panic(http.ErrAbortHandler)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if onInput(w, r, body) {
				return
			}
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy
}

// TestTheWebConsoleSendsARetriedReleaseBeforeKeysTypedSince: a let go on a computer's screen,
// the call carrying its release cut by the network while the screen's stream stays open (the
// proxy cuts every call of that release alone until the computer got b), then b typed, reach
// the computer in the order the player made them: key a, key_up a, key b, key_up b. Before,
// the release was tried again beside the view's calls (letGo), b went at once, and the
// computer got a's release after b: key a, key b, key_up b, key_up a.
func TestTheWebConsoleSendsARetriedReleaseBeforeKeysTypedSince(t *testing.T) {
	ctx := testContext(t)
	const token = "console-in-order-3b9d" // the API answers no client through a proxy without one
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	c := connectReleaseComputer(ctx, t, g, "14:rig", false)
	var bWent atomic.Bool
	proxy := inputCuttingProxy(t, g, func(_ *http.Request, body []byte) bool {
		var call struct{ Events []map[string]any }
		if err := json.Unmarshal(body, &call); err != nil {
			return false // the gateway's to refuse
		}
		if len(call.Events) == 1 && call.Events[0]["type"] == "key_up" && call.Events[0]["name"] == "a" {
			return !bWent.Load()
		}
		if bytes.Contains(body, []byte(`"name":"b"`)) {
			bWent.Store(true)
		}
		return false
	})
	opened := openRig(t, page, until, proxy.URL, token)

	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "a", "KeyA", 65),
		keyboardKey(input.DispatchKeyEventTypeKeyUp, "a", "KeyA", 65)))
	until(t, "the release's call failed", `document.getElementById("status").textContent.startsWith("Input failed: ")`)
	require.NoError(t, chromedp.Do(page, keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "b", "KeyB", 66),
		keyboardKey(input.DispatchKeyEventTypeKeyUp, "b", "KeyB", 66)))
	var keys []string
	for !slices.Contains(keys, "key_up a") || !slices.Contains(keys, "key_up b") {
		var call struct{ Events []map[string]any }
		require.NoError(t, json.Unmarshal([]byte(c.input(ctx, t)), &call))
		for _, e := range call.Events {
			if e["type"] == "key" || e["type"] == "key_up" {
				keys = append(keys, fmt.Sprint(e["type"], " ", e["name"]))
			}
		}
	}
	assert.Equal(t, []string{"key a", "key_up a", "key b", "key_up b"}, keys, "the keys in the order the player made them")
	again, err := chromedp.Run(page, chromedp.Evaluate[int](`view.live ? view.opened : -1`))
	require.NoError(t, err)
	assert.Equal(t, opened, again, "the stream stayed open: the release went on the view's calls")
}

// TestTheWebConsoleLetsGoAKeyHeldAsItsTabIsLeft: Ctrl held on a computer's screen as the tab
// closes, or as it navigates away, is let go on the computer, over a network slow enough that
// the release's call is still on its way once the page is gone (a proxy holds it until then).
// Before, a page navigated away sent no release at all, and one closed sent it by a call the
// browser cancelled with the page: the computer held Ctrl down for ever.
func TestTheWebConsoleLetsGoAKeyHeldAsItsTabIsLeft(t *testing.T) {
	ctx := testContext(t)
	const token = "console-left-4e2a" // sent as ever: the call that outlives its page passes the API's guard
	browser, _ := consolePage(ctx, t)
	require.NoError(t, chromedp.Do(browser)) // the browser, whose tabs each case opens
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	c := connectReleaseComputer(ctx, t, g, "14:rig", false)
	for _, leave := range []struct {
		name string
		how  func(tab context.Context) error
	}{
		{"the tab closed", func(tab context.Context) error {
			return chromedp.Do(tab, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
				_, err := cdp.Call(ctx, target, page.Close, cdp.Empty{})
				return err
			}))
		}},
		{"another page opened in the tab", func(tab context.Context) error { return chromedp.Do(tab, chromedp.Navigate("about:blank")) }},
	} {
		t.Run(leave.name, func(t *testing.T) {
			left := make(chan struct{})
			proxy, fate := releaseOutlivingProxy(t, g, left, nil)
			tab, closeTab := chromedp.NewContext(browser)
			t.Cleanup(closeTab)
			logIn(t, tab, proxy.URL+"/console/#/computer/14%3Arig", token)
			_, err := chromedp.Run(tab, chromedp.Poll[bool](rigLive))
			require.NoError(t, err)
			require.NoError(t, chromedp.Do(tab, chromedp.Focus("#screen"),
				keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "Control", "ControlLeft", 17)))
			assert.Equal(t, `{"events":[{"type":"key","name":"leftCtrl"}]}`, c.input(ctx, t), "Ctrl down")
			require.NoError(t, leave.how(tab))
			letGoAsThePageIsLeft(ctx, t, c, left, fate)
		})
	}
}

// TestTheWebConsoleLetsGoAKeyAfterItsPressAsItsTabIsLeft: a key held on a computer's screen as
// another page opens in the tab, the call carrying its press still on its way (a proxy holds
// it), reaches the computer pressed, then let go, however late that call arrives: the release
// sent as the page is left goes beside it and overtakes it on the network (the proxy passes
// the press on only once the gateway has answered the release, or, the release named after
// it, once the release has gone to the gateway). Before, the gateway typed the release as it
// came, and the computer got the key let go, then pressed: held down for ever.
func TestTheWebConsoleLetsGoAKeyAfterItsPressAsItsTabIsLeft(t *testing.T) {
	ctx := testContext(t)
	page, _, c := aPressOnItsWay(ctx, t, "console-left-order-5d1c")

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("about:blank")))
	assert.Equal(t, []string{"key a", "key_up a"}, keysUntil(ctx, t, c, "key_up a"), "pressed, then let go")
}

// TestTheWebConsoleLetsGoAKeyOfAViewClosedAsItsTabIsLeft: a key held on a computer's screen as
// another computer's view opens, the call carrying its press still on its way (a proxy holds
// it, as TestTheWebConsoleLetsGoAKeyAfterItsPressAsItsTabIsLeft), then the tab left, is let go
// on the computer after its press, whether or not the browser settles that call for the page
// as it goes. Before, the closed view's release waited for that call's answer, which a page gone
// need not get (the release never sent); Chromium settled it as the page went and the release
// went then, beside the call, not after it: the computer got the release first.
func TestTheWebConsoleLetsGoAKeyOfAViewClosedAsItsTabIsLeft(t *testing.T) {
	ctx := testContext(t)
	page, until, c := aPressOnItsWay(ctx, t, "console-closed-left-8a2e")
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/99%3Aother"; true`))
	require.NoError(t, err)
	until(t, "the other computer's view", `document.getElementById("status").textContent.startsWith("not_connected: computer 99:other")`)

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("about:blank")))
	assert.Equal(t, []string{"key a", "key_up a"}, keysUntil(ctx, t, c, "key_up a"), "pressed, then let go")
}

// aPressOnItsWay opens the rig computer's screen (14:rig) through a proxy that holds the first
// call carrying a key's press (pressHoldingProxy; token is the API's, which a proxied client
// needs), presses a there and returns once that call is held.
func aPressOnItsWay(ctx context.Context, t *testing.T, token string) (page context.Context, until func(t *testing.T, what, js string), c *consoleComputer) {
	t.Helper()
	page, until = consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	c = connectReleaseComputer(ctx, t, g, "14:rig", false)
	proxy, pressHeld := pressHoldingProxy(t, g)
	openRig(t, page, until, proxy.URL, token)
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "a", "KeyA", 65)))
	waitFor(ctx, t, pressHeld, "the press's call")
	return page, until, c
}

// waitFor waits for ch to be closed or to send, failing the test as what never came.
func waitFor[T any](ctx context.Context, t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		require.FailNow(t, what+" never came")
	}
}

// keysUntil is the keys (key, key_up) c gets, as "key a", up to and with last.
func keysUntil(ctx context.Context, t *testing.T, c *consoleComputer, last string) []string {
	t.Helper()
	var keys []string
	for !slices.Contains(keys, last) {
		var call struct{ Events []map[string]any }
		require.NoError(t, json.Unmarshal([]byte(c.input(ctx, t)), &call))
		for _, e := range call.Events {
			if e["type"] == "key" || e["type"] == "key_up" {
				keys = append(keys, fmt.Sprint(e["type"], " ", e["name"]))
			}
		}
	}
	return keys
}

// pressHoldingProxy is a proxy to g, a network on which one call overtakes another: it holds
// the first call to …/input that presses a key (pressHeld is closed then) until a call that
// lets one go (key_up) comes, which it passes on first, and the press after it: once the
// gateway has answered the release, or, when the release is to be typed after another call
// (…/input's after, which the gateway holds it for), once the release has gone on to the
// gateway.
func pressHoldingProxy(t *testing.T, g *harness.Gateway) (proxy *httptest.Server, pressHeld <-chan struct{}) {
	t.Helper()
	held, letPress := make(chan struct{}), make(chan struct{})
	var holding atomic.Bool
	var pressGoes sync.Once
	proxy = inputProxy(t, g, func(_ http.ResponseWriter, r *http.Request, body []byte) bool {
		var call struct {
			Events []map[string]any
			After  string
		}
		_ = json.Unmarshal(body, &call) // the gateway's to refuse
		release := slices.ContainsFunc(call.Events, func(e map[string]any) bool { return e["type"] == "key_up" })
		switch {
		case release && call.After != "":
			pressGoes.Do(func() { close(letPress) })
		case release:
			defer pressGoes.Do(func() { close(letPress) })
		case slices.ContainsFunc(call.Events, func(e map[string]any) bool { return e["type"] == "key" }) && holding.CompareAndSwap(false, true):
			close(held)
			select {
			case <-letPress:
			case <-r.Context().Done():
				panic(http.ErrAbortHandler)
			}
		}
		return false
	})
	return proxy, held
}

// TestTheWebConsoleKeepsItsKeepaliveCallsWithinTheBrowsersBudget: four views of a computer,
// each closed with a text's call on its way (a proxy holds it; a text's call takes up to a
// minute, and is not aborted with its view), its body as large as a call that outlives its page
// may be, leave the fifth view's keys and the releases sent as the page is left room: Ctrl goes
// down, and is let go as another page opens in the tab by a call that outlives the page (the
// proxy holds it until the page is gone, as TestTheWebConsoleLetsGoAKeyHeldAsItsTabIsLeft).
// Before, each of those four calls outlived the page (keepalive), the browser's 64 KiB of them
// in flight were full, and it refused the next: Ctrl's call failed ("Input failed"). Kept
// within the budget but with no reserve for the releases, the release went as the page's own
// call, cancelled with it.
func TestTheWebConsoleKeepsItsKeepaliveCallsWithinTheBrowsersBudget(t *testing.T) {
	ctx := testContext(t)
	const token = "console-budget-7c1f" // the API answers no client through a proxy without one
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	c := connectReleaseComputer(ctx, t, g, "14:rig", false)
	left, held := make(chan struct{}), make(chan struct{}, 8)
	proxy, fate := releaseOutlivingProxy(t, g, left, held)
	openRig(t, page, until, proxy.URL, token)
	for range 4 {
		// A text whose call's body is keepaliveMaxBytes, the most a call that outlives its page may have.
		_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
			const empty = JSON.stringify({ events: [{ type: "char", text: "" }], timeoutMs: inputTimeoutMs, call: pageName + "." + (calls + 1) }).length;
			send([{ type: "char", text: "x".repeat(keepaliveMaxBytes - empty) }]);
			true
		}`))
		require.NoError(t, err)
		select {
		case <-held:
		case <-ctx.Done():
			require.FailNow(t, "the text's call never reached the proxy")
		}
		_, err = chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/99%3Aother"; true`))
		require.NoError(t, err)
		until(t, "the other computer's view", `document.getElementById("status").textContent.startsWith("not_connected: computer 99:other")`)
		_, err = chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/14%3Arig"; true`))
		require.NoError(t, err)
		until(t, "the rig's view again", rigLive)
	}
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"),
		keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "Control", "ControlLeft", 17)))
	until(t, "Ctrl's call answered", `view.pending.length === 0 && !view.sending`)
	status, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("status").textContent`))
	require.NoError(t, err)
	require.Equal(t, "Live", status, "Ctrl's call")
	assert.Equal(t, `{"events":[{"type":"key","name":"leftCtrl"}]}`, c.input(ctx, t), "Ctrl down")
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("about:blank")))
	letGoAsThePageIsLeft(ctx, t, c, left, fate)
}

// letGoAsThePageIsLeft closes left (the page is gone) and checks that Ctrl's release, held
// by releaseOutlivingProxy until then, outlived the page and reached c.
func letGoAsThePageIsLeft(ctx context.Context, t *testing.T, c *consoleComputer, left chan struct{}, fate <-chan string) {
	t.Helper()
	close(left)
	select {
	case f := <-fate:
		require.Equal(t, "followed", f, "the release's call, held until the page was left")
	case <-ctx.Done():
		require.FailNow(t, "the release's call was neither cancelled nor followed once the page was left")
	}
	assert.Equal(t, `{"events":[{"type":"key_up","name":"leftCtrl"}]}`, c.input(ctx, t), "Ctrl let go as the page was left")
}

// releaseOutlivingProxy is a proxy to g that holds each call of a release (key_up) to …/input
// until left is closed (the page gone), then answers it with a redirect to itself, which only
// a call that outlived its page follows (the browser's, not the gone page's), and passes the
// call so followed on. fate learns each held call's end: "cancelled" (the browser gave it up)
// or "followed". It waits on those events, not on a moment after the page was left: a cancel
// that came a little after it would be missed, and the call passed on, a page's own call too.
// If texts is not nil, a call of a text (char) is held as well, and never passed on: texts
// learns each, which ends when the browser gives it up or the page is left.
func releaseOutlivingProxy(t *testing.T, g *harness.Gateway, left <-chan struct{}, texts chan<- struct{}) (*httptest.Server, <-chan string) {
	t.Helper()
	fate := make(chan string, 16)
	proxy := inputProxy(t, g, func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		switch {
		case r.URL.Query().Has("outlived"):
			fate <- "followed"
			// The proxy's own mark, not the page's: the gateway refuses a query parameter
			// …/input does not take.
			r.URL.RawQuery = ""
		case texts != nil && bytes.Contains(body, []byte(`"type":"char"`)):
			texts <- struct{}{}
			select {
			case <-left:
			case <-r.Context().Done():
			}
			panic(http.ErrAbortHandler)
		case bytes.Contains(body, []byte(`"key_up"`)):
			select {
			case <-left:
				http.Redirect(w, r, r.URL.Path+"?outlived", http.StatusTemporaryRedirect)
			case <-r.Context().Done(): // the browser gave the call up
				fate <- "cancelled"
				panic(http.ErrAbortHandler)
			}
			return true
		}
		return false
	})
	return proxy, fate
}

// TestTheWebConsoleLetsGoWhatIsHeldAsItsViewCloses: a mouse button and Ctrl held on the desk's
// screen as another computer's view is opened (the desk's view closes: the page sees them let
// go no more) are let go on the desk. Before, they were dropped with the view, and the desk
// held them down for ever: reopened, its program had had no release.
func TestTheWebConsoleLetsGoWhatIsHeldAsItsViewCloses(t *testing.T) {
	ctx := testContext(t)
	page, until, _, _ := heldOnTheDesk(ctx, t, "console-closed-2d8e")
	require.NoError(t, chromedp.Do(page, leftButton(input.DispatchMouseEventTypeMousePressed, cellPoint(t, page, 3.5, 2), 1),
		keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "Control", "ControlLeft", 17)))
	until(t, "the button and Ctrl down", `document.getElementById("screen-text").textContent.endsWith("\nclick 1 3 2\nkey leftCtrl")`)

	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/99%3Aother"; true`))
	require.NoError(t, err)
	until(t, "the other computer's view", `document.getElementById("status").textContent.startsWith("not_connected: computer 99:other")`)
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/11%3Adesk"; true`))
	require.NoError(t, err)
	until(t, "the desk's releases", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.endsWith("\nclick 1 3 2\nkey leftCtrl\nup 1 3 2\nkey_up leftCtrl")`)
}

// TestTheWebConsoleLetsGoWhatWasHeldWhenItsTokenWasRefused: Ctrl held on the desk's screen as
// the gateway refuses the view's token (revoked; the next frame, drawn for another caller's
// key, ends the view) is let go on the desk once the tab is given another token: the closed
// view's release, refused with the revoked one, goes with it. Before, it was dropped with the
// view, and the desk held Ctrl down for ever.
func TestTheWebConsoleLetsGoWhatWasHeldWhenItsTokenWasRefused(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t, "console.test")
	dataDir, first, g, _ := accountsDeskWith(ctx, t, "dave", "control", map[string]string{"/e2e.lua": deskProgram, "/held.lua": heldProgram})
	second := lastLineOf(gatewayCLI(ctx, t, "tokens", "add", "dave", "laptop", dataDir))
	logIn(t, page, "http://console.test:"+g.Port()+"/console/#/computer/11%3Adesk", first)
	until(t, "the prompt", liveAtThePrompt)
	runHeld(t, page, until)
	require.NoError(t, chromedp.Do(page, keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "Control", "ControlLeft", 17)))
	until(t, "Ctrl down", `document.getElementById("screen-text").textContent.endsWith("\nkey leftCtrl")`)

	// The page's calls to …/input from now on, by the token they carry ("" none).
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
		window.inputCalls = {};
		const pageFetch = window.fetch;
		window.fetch = (url, options) => {
			if (String(url).endsWith("/input")) {
				const auth = ((options && options.headers && options.headers.Authorization) || "").replace("Bearer ", "");
				inputCalls[auth] = (inputCalls[auth] || 0) + 1;
			}
			return pageFetch(url, options);
		};
		true
	}`))
	require.NoError(t, err)
	gatewayCLI(ctx, t, "tokens", "revoke", first, dataDir)
	gatewayCLI(ctx, t, "request", deskTraposID, "screen.input", `{"events":[{"type":"key","name":"x"},{"type":"key_up","name":"x"}]}`,
		"--url="+g.URL(""), "--api-token="+second)
	until(t, "the token form, saying the token was revoked", `!document.getElementById("login").hidden &&
		document.getElementById("login-error").textContent.includes("revoked")`)
	// The release is tried with the revoked token and with none (the tab's now), each refused
	// once; then it waits for a login, asking no more (each refusal is counted by the gateway).
	until(t, "the release waiting for a login", `logins.length === 1`)
	calls, err := chromedp.Run(page, chromedp.Evaluate[map[string]int](`inputCalls`))
	require.NoError(t, err)
	assert.Equal(t, map[string]int{first: 1, "": 1}, calls)
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#token", second), chromedp.Click("#login button")))
	until(t, "the desk's release, after the other caller's key", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.endsWith("\nkey leftCtrl\nkey x\nkey_up x\nkey_up leftCtrl")`)
}

// TestTheWebConsoleLetsGoAKeyWhoseReleaseWaitedOnABusyComputerAsItsViewCloses: Ctrl let go on
// the screen of a computer the host's requests fill, its key_up refused busy and waiting to be
// sent again, as another computer's view is opened, is let go on the busy computer once it
// takes input again. Before, the call waiting on the busy answer dropped it with the view.
func TestTheWebConsoleLetsGoAKeyWhoseReleaseWaitedOnABusyComputerAsItsViewCloses(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:busy")
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "Control", "ControlLeft", 17)))
	assert.Contains(t, <-c.inputs, `"type":"key","name":"leftCtrl"`)
	c.fill(ctx)
	require.NoError(t, chromedp.Do(page, keyboardKey(input.DispatchKeyEventTypeKeyUp, "Control", "ControlLeft", 17)))
	until(t, "the busy answer to the release", `document.getElementById("status").textContent.endsWith("; retry shortly (sending the keys again)")`)

	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/99%3Aother"; true`))
	require.NoError(t, err)
	until(t, "the other computer's view", `document.getElementById("status").textContent.startsWith("not_connected: computer 99:other")`)
	c.release()
	select {
	case payload := <-c.inputs:
		assert.Contains(t, payload, `"type":"key_up","name":"leftCtrl"`)
	case <-ctx.Done():
		t.Fatal("the release never reached the busy computer")
	}
}

// consoleComputer is a computer on a raw socket for the web console's tests, in one loop: it
// says hello on g as id and answers the gateway's requests: computer.info as a client of
// hooks.clientVersion (without allowed: older than 0.5.15 or not, it says no more), each
// screen.watch with watch 1 and then hooks.screen's frame, screen.input with queued 1, passing
// each on (inputs), lua.exec (the host's job) once the test releases it (fill, release), and
// any other with an empty payload. A test draws more (draw, drawScreen).
type consoleComputer struct {
	t       *testing.T
	g       *harness.Gateway
	ws      *harness.Computer
	id      string
	watch   chan struct{}
	inputs  chan string
	held    chan harness.Frame
	jobs    []chan busyOutcome // the host's jobs the computer holds (fill), and their answers
	frames  []harness.Frame
	waiting sync.Map // the messageId of a frame drawScreen sent -> the chan its answer goes on
	// refuseInput is the screen.input the computer refuses forbidden, counted from 1 (0: none).
	refuseInput atomic.Int64
}

// consoleComputerHooks are what a test of the web console makes of its consoleComputer.
type consoleComputerHooks struct {
	// secret is the one its hello gives; with none, the gateway's password.
	secret string
	// helloVersion is the clientVersion its hello names; with none, its hello names none.
	helloVersion string
	// clientVersion is the client computer.info names; with none, computer.info names none.
	clientVersion string
	// screen is the frame (screen.update's payload but its watch and seq) sent after each
	// screen.watch's answer; with none, the test draws.
	screen map[string]any
	// goesAt reports whether the screen.input of payload is the one the computer goes at: it
	// closes its socket then, the request unanswered, as a computer shut down then would.
	goesAt func(payload string) bool
	// unknownType reports whether its client predates requests of typ: it refuses them
	// unknown_type, as such a daemon does.
	unknownType func(typ string) bool
	// monitors, when set, are the monitors its screen.read names (wire text), with screen as its
	// own screen; a screen.watch of one is answered and sent screen naming it, its name sent on
	// monitorsWatched.
	monitors        []string
	monitorsWatched chan<- string
	// refusesWatch, when set, is the error (code and message) the computer answers a
	// screen.watch of monitor ("": its own screen) with, or "" to take it; the name of a
	// monitor refused goes on monitorsWatched too, before the refusal.
	refusesWatch func(monitor string) (code, message string)
	// endsWatch, when set, is called on each screen.watch the computer takes: a code and a
	// message make it end the watch at once with them (its screen.update's ended), before any
	// frame; "" sends screen as ever.
	endsWatch func() (code, message string)
}

// rigLive is true in a console page whose view of a computer showing rigScreen is live.
const rigLive = `document.getElementById("status").textContent === "Live" &&
	document.getElementById("screen-text").textContent.startsWith("rig")`

// openRig logs page in to the console at base (a gateway's or a proxy's address) with token,
// opens 14:rig, a computer showing rigScreen, and waits for its view to be live; it reports
// how many times the view has opened the computer's stream (view.opened).
func openRig(t *testing.T, page context.Context, until func(t *testing.T, what, js string), base, token string) (opened int) {
	t.Helper()
	logIn(t, page, base+"/console/#/computer/14%3Arig", token)
	until(t, "the screen", rigLive)
	opened, err := chromedp.Run(page, chromedp.Evaluate[int](`view.opened`))
	require.NoError(t, err)
	return opened
}

// rigScreen is a consoleComputer's screen of one row, "rig".
var rigScreen = map[string]any{"width": 3, "height": 1, "cursor": map[string]any{"x": 1, "y": 1, "blink": false},
	"rows": map[string]any{"1": map[string]any{"text": "rig", "fg": "000", "bg": "000"}}, "palette": []string{"#f0f0f0"}}

// idScreen is the screen of one row of three cells a consoleComputer named id shows: id's
// characters 2 to 4 (a test tells computers apart by it).
func idScreen(id string) map[string]any {
	return map[string]any{"width": 3, "height": 1, "cursor": map[string]any{"x": 1, "y": 1, "blink": false},
		"rows": map[string]any{"1": map[string]any{"text": id[2:5], "fg": "000", "bg": "fff"}}, "palette": []string{"#f0f0f0"}}
}

// connectScreenComputer is a consoleComputer saying hello with secret, of a client older than
// 0.5.15 (its computer.info without allowed), that shows idScreen on each watch.
func connectScreenComputer(ctx context.Context, t *testing.T, g *harness.Gateway, id, secret string) *consoleComputer {
	t.Helper()
	return connectConsoleComputer(ctx, t, g, id, consoleComputerHooks{secret: secret, clientVersion: "0.5.14", screen: idScreen(id)})
}

// connectReleaseComputer is a consoleComputer whose client takes a press apart from its release
// (0.5.23), showing rigScreen; one that goes closes its socket on the first release it gets
// (mouse_up), unanswered.
func connectReleaseComputer(ctx context.Context, t *testing.T, g *harness.Gateway, id string, goes bool) *consoleComputer {
	t.Helper()
	hooks := consoleComputerHooks{clientVersion: "0.5.23", screen: rigScreen}
	if goes {
		hooks.goesAt = func(payload string) bool { return strings.Contains(payload, `"mouse_up"`) }
	}
	return connectConsoleComputer(ctx, t, g, id, hooks)
}

func connectConsoleComputer(ctx context.Context, t *testing.T, g *harness.Gateway, id string, hooks consoleComputerHooks) *consoleComputer {
	t.Helper()
	ws, err := harness.Dial(ctx, "ws://"+g.Addr+"/trapos/ws", id)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	hello := map[string]any{"traposId": id, "secret": cmp.Or(hooks.secret, sandboxPassword)}
	if hooks.helloVersion != "" {
		hello["clientVersion"] = hooks.helloVersion
	}
	said, err := ws.Request(ctx, harness.TypeHello, hello)
	require.NoError(t, err)
	require.True(t, said.OK != nil && *said.OK, "hello: %+v", said.Error)
	c := &consoleComputer{t: t, g: g, ws: ws, id: id, watch: make(chan struct{}, 1), inputs: make(chan string, 64),
		held: make(chan harness.Frame, 64)}
	go func() {
		inputs := 0
		for {
			f, err := ws.Next(ctx)
			if err != nil {
				return
			}
			if f.Event == harness.EventGatewayResponse {
				if answer, ok := c.waiting.LoadAndDelete(f.MessageID); ok {
					answer.(chan harness.Frame) <- f
				}
				continue
			}
			if f.Event != harness.EventGatewayRequest {
				continue
			}
			if hooks.unknownType != nil && hooks.unknownType(f.Type) {
				c.refuse(f, "unknown_type", "this computer does not handle requests of type "+f.Type)
				continue
			}
			payload := map[string]any{}
			switch f.Type {
			case harness.TypeComputerInfo:
				payload = map[string]any{"traposId": id}
				if hooks.clientVersion != "" {
					payload["clientVersion"] = hooks.clientVersion
				}
			case "screen.watch":
				if hooks.refusesWatch != nil {
					var watched struct {
						Monitor string `json:"monitor"`
					}
					_ = json.Unmarshal(f.Payload, &watched)
					if code, message := hooks.refusesWatch(watched.Monitor); code != "" {
						if watched.Monitor != "" && hooks.monitorsWatched != nil {
							hooks.monitorsWatched <- watched.Monitor
						}
						c.refuse(f, code, message)
						continue
					}
				}
				payload = map[string]any{"watchId": 1}
			case "screen.read":
				if hooks.monitors != nil {
					payload = maps.Clone(hooks.screen)
					payload["colour"], payload["fg"], payload["bg"], payload["monitors"] = true, 1, 32768, hooks.monitors
					payload["rows"] = []any{map[string]any{"text": "rig", "fg": "000", "bg": "000"}}
					payload["palette"] = slices.Repeat([]string{"#f0f0f0"}, 16)
				}
			case "screen.input":
				c.inputs <- string(f.Payload)
				if hooks.goesAt != nil && hooks.goesAt(string(f.Payload)) {
					_ = ws.Close()
					return
				}
				if inputs++; int64(inputs) == c.refuseInput.Load() {
					c.refuse(f, "forbidden", "sandbox.allow_screen is view: the screen can be viewed, not typed on")
					continue
				}
				payload = map[string]any{"queued": 1}
			case "lua.exec":
				c.held <- f
				continue
			}
			c.answer(f, payload)
			if f.Type != "screen.watch" {
				continue
			}
			if hooks.endsWatch != nil {
				if code, message := hooks.endsWatch(); code != "" {
					_ = ws.WriteJSON(c.frame(harness.NewMessageID(), map[string]any{"ended": map[string]any{"code": code, "message": message}}))
					continue
				}
			}
			if hooks.screen != nil {
				screen := hooks.screen
				var watched struct {
					Monitor *string `json:"monitor"`
				}
				if _ = json.Unmarshal(f.Payload, &watched); watched.Monitor != nil && hooks.monitorsWatched != nil {
					screen = maps.Clone(screen)
					screen["monitor"] = *watched.Monitor
					hooks.monitorsWatched <- *watched.Monitor
				}
				_ = ws.WriteJSON(c.frame(harness.NewMessageID(), screen))
			}
			select {
			case c.watch <- struct{}{}:
			default:
			}
		}
	}()
	return c
}

// answer answers the gateway's request f with payload.
func (c *consoleComputer) answer(f harness.Frame, payload any) {
	_ = c.ws.WriteJSON(map[string]any{"event": harness.EventComputerResponse, "traposSenderId": c.id,
		"messageId": f.MessageID, "type": f.Type, "ok": true, "payload": payload})
}

// refuse answers the gateway's request f with an error.
func (c *consoleComputer) refuse(f harness.Frame, code, message string) {
	_ = c.ws.WriteJSON(map[string]any{"event": harness.EventComputerResponse, "traposSenderId": c.id,
		"messageId": f.MessageID, "type": f.Type, "ok": false, "error": map[string]any{"code": code, "message": message}})
}

// frame is the screen.update of messageID that sends screen (width, height, cursor, rows,
// palette) as the whole frame of an advanced computer.
func (c *consoleComputer) frame(messageID string, screen map[string]any) map[string]any {
	payload := map[string]any{"watchId": 1, "seq": 1, "colour": true, "fg": 1, "bg": 32768}
	for k, v := range screen {
		payload[k] = v
	}
	return map[string]any{"event": harness.EventComputerRequest, "traposSenderId": c.id,
		"messageId": messageID, "type": "screen.update", "payload": payload}
}

// input is the payload of the next screen.input the computer gets.
func (c *consoleComputer) input(ctx context.Context, t *testing.T) string {
	t.Helper()
	select {
	case payload := <-c.inputs:
		return payload
	case <-ctx.Done():
		t.Fatal("the computer got no screen.input")
		return ""
	}
}

// watched waits for the gateway's screen.watch.
func (c *consoleComputer) watched(ctx context.Context, t *testing.T) {
	t.Helper()
	select {
	case <-c.watch:
	case <-ctx.Done():
		t.Fatal("the view never watched the screen")
	}
}

// draw sends the whole screen, one row of text, and waits for the gateway's answer.
func (c *consoleComputer) draw(ctx context.Context, t *testing.T, text string) {
	t.Helper()
	blit := fmt.Sprintf("%0*d", len(text), 0)
	c.drawScreen(ctx, t, map[string]any{"width": len(text), "height": 1,
		"cursor":  map[string]any{"x": 1, "y": 1, "blink": false},
		"rows":    map[string]any{"1": map[string]any{"text": text, "fg": blit, "bg": blit}},
		"palette": []string{"#f0f0f0"}})
}

// drawScreen sends screen (width, height, cursor, rows, palette) as the whole frame of an
// advanced computer, and waits for the gateway's answer.
func (c *consoleComputer) drawScreen(ctx context.Context, t *testing.T, screen map[string]any) {
	t.Helper()
	messageID, answer := harness.NewMessageID(), make(chan harness.Frame, 1)
	c.waiting.Store(messageID, answer)
	require.NoError(t, c.ws.WriteJSON(c.frame(messageID, screen)))
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a generous bound: only a failure waits it
	defer cancel()
	select {
	case f := <-answer:
		require.True(t, f.OK != nil && *f.OK, "screen.update: %+v", f.Error)
	case <-ctx.Done():
		t.Fatal("the gateway did not answer screen.update")
	}
}

// TestTheWebConsolesListSaysWhatItNoLongerKnows: while the gateway cannot be reached, the
// computer list stops calling its rows connected (they are what the gateway last said, and a
// stopped gateway's computers are not) and says the connection was lost, in the viewer's
// words rather than the browser's ("Failed to fetch"); once the gateway and the computer are
// back, the list is live again.
func TestTheWebConsolesListSaysWhatItNoLongerKnows(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	const token = "console-list-7e3a"
	g, restart := deskAcrossRestarts(ctx, t, token, "")

	const rows = `[...document.querySelectorAll("#computer-list tr")].map(tr => tr.cells[0].textContent + " " + tr.cells[2].textContent).join()`
	logIn(t, page, "http://"+g.Addr+"/console/", token)
	until(t, "the computer listed", rows+` === "11:desk connected"`)

	require.NoError(t, g.Stop())
	until(t, "the connection lost", `document.getElementById("status").textContent === "The connection to the gateway was lost (waiting for it to come back)"`)
	state, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[`+rows+`, document.getElementById("computer-list").classList.contains("stale")]`))
	require.NoError(t, err)
	assert.Equal(t, []any{"11:desk unknown", true}, state, "the last list kept, greyed, none of it called connected")

	restart()
	until(t, "the list live again", rows+` === "11:desk connected" && !document.getElementById("computer-list").classList.contains("stale") &&
		document.getElementById("status").textContent === ""`)
}

// deskAcrossRestarts starts a gateway whose API takes token and the desk computer (11:desk,
// sandbox.allow_screen set to allowScreen unless it is empty) at its prompt; restart starts a
// gateway again, as it was, on the address of the one the test stopped (the computer
// reconnects to it by itself).
func deskAcrossRestarts(ctx context.Context, t *testing.T, token, allowScreen string) (g *harness.Gateway, restart func()) {
	t.Helper()
	ocURL := opencodefake.ClosedPortURL(t)
	g = startGateway(t, ocURL, "--api-token", token)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 11, "desk"
	if allowScreen != "" {
		opts.Settings["sandbox.allow_screen"] = allowScreen
	}
	opts.Files = map[string]string{"/e2e.lua": deskProgram, "/held.lua": heldProgram}
	opts.Input = computer.Input(make(chan string))
	fakecrafttest.StartWithin(t, opts, testTimeout).WaitFor(ctx, markerAtPrompt)
	return g, func() {
		harness.Start(t, gatewayBin, harness.Options{Listen: g.Addr,
			Args: []string{"--password", sandboxPassword, "--opencode-url", ocURL, "--api-token", token}})
	}
}

// TestTheWebConsoleTellsLookAlikeComputersApart: a computer named 7:kitchen with a no-break
// space after it (a label a name tag can set) lists beside 7:kitchen as 7:kitchen\xa0, and its
// link opens it, not the computer it imitates.
func TestTheWebConsoleTellsLookAlikeComputersApart(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	watched := make(chan string, 2)
	for _, id := range []string{"7:kitchen", "7:kitchen\u00a0"} {
		c := connectScreenComputer(ctx, t, g, id, sandboxPassword)
		go func() {
			select {
			case <-c.watch:
				watched <- id
			case <-ctx.Done():
			}
		}()
	}

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/")))
	const links = `[...document.querySelectorAll("#computer-list a")].map(a => a.textContent).sort().join(" | ")`
	until(t, "both computers in the list", links+` === "7:kitchen | 7:kitchen\\xa0"`)
	require.NoError(t, chromedp.Do(page, chromedp.Click(`#computer-list a[href$="%5Cxa0"]`)))
	until(t, "the look-alike's view", `document.getElementById("viewer-id").textContent === "7:kitchen\\xa0"`)
	select {
	case id := <-watched:
		assert.Equal(t, "7:kitchen\u00a0", id, "the link opened the computer it named")
	case <-ctx.Done():
		t.Fatal("no computer was asked for its screen")
	}
}

// TestTheWebConsoleFollowsARelabelledComputer: a computer relabelled in game (label set) while
// its screen is viewed says bye, relabelled, and hello under its new traposId; the view follows
// it there instead of waiting for the old name to come back.
func TestTheWebConsoleFollowsARelabelledComputer(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	dial := func(id string) *consoleComputer { return connectScreenComputer(ctx, t, g, id, sandboxPassword) }
	old := dial("7:old")

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Aold")))
	<-old.watch
	until(t, "the old name's screen", `document.getElementById("status").textContent === "Live"`)

	// The daemon's relabel: bye on the old socket, dropped at once, and hello under the new name.
	require.NoError(t, old.ws.WriteJSON(map[string]any{"event": harness.EventComputerRequest, "traposSenderId": "7:old",
		"messageId": harness.NewMessageID(), "type": "bye", "payload": map[string]any{"reason": "relabelled", "traposId": "7:new"}}))
	require.NoError(t, old.ws.Close())
	until(t, "the relabel said", `document.getElementById("status").textContent.includes("was relabelled: it is 7:new now")`)
	renamed := dial("7:new")
	select {
	case <-renamed.watch:
	case <-ctx.Done():
		t.Fatal("the view did not follow the computer to its new name")
	}
	until(t, "the new name's view", `document.getElementById("viewer-id").textContent === "7:new" && location.hash === "#/computer/7%3Anew"`)
}

// relabelAway has computer c say bye, relabelled to to, drop its socket, and waits until the
// gateway lists it no more: what asks for its old name now comes after the relabel.
func relabelAway(t *testing.T, g *harness.Gateway, c *consoleComputer, to string) {
	t.Helper()
	require.NoError(t, c.ws.WriteJSON(map[string]any{"event": harness.EventComputerRequest, "traposSenderId": c.id,
		"messageId": harness.NewMessageID(), "type": "bye", "payload": map[string]any{"reason": "relabelled", "traposId": to}}))
	require.NoError(t, c.ws.Close())
	require.Eventually(t, func() bool { return !slices.Contains(connectedComputers(t, g), c.id) }, time.Minute, 20*time.Millisecond,
		"the gateway to let %s go", c.id)
}

// TestTheWebConsoleViewOpenedJustAfterARelabelFollowsIt: a view opened on a computer's old
// name a moment after it was relabelled in game (the player's link, a reload) says so and opens
// the new name once the computer is back under it. It said "not connected; did you mean …?
// (waiting for it to come back)" and waited for the old name for good.
func TestTheWebConsoleViewOpenedJustAfterARelabelFollowsIt(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	dial := func(id string) *consoleComputer { return connectScreenComputer(ctx, t, g, id, sandboxPassword) }
	relabelAway(t, g, dial("6:keller"), "6:cellar")

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/6%3Akeller")))
	until(t, "the relabel said", `document.getElementById("status").textContent === "not_connected: computer 6:keller was relabelled: it is 6:cellar now; ask it by that id"`)
	renamed := dial("6:cellar")
	select {
	case <-renamed.watch:
	case <-ctx.Done():
		t.Fatal("the view did not follow the computer to its new name")
	}
	until(t, "the new name's view", `document.getElementById("viewer-id").textContent === "6:cellar" && location.hash === "#/computer/6%3Acellar"`)
}

// TestOnlyTheComputersAccountHearsItsRelabelJustAfter: a request naming alice's relabelled
// computer by its old name hears its new one with alice's token and an admin's, never with
// bob's, who hears only that 6:keller is not connected: another account's new label is not
// his to learn.
func TestOnlyTheComputersAccountHearsItsRelabelJustAfter(t *testing.T) {
	ctx := testContext(t)
	dataDir := "--data-dir=" + t.TempDir()
	tokens := map[string]string{"root": lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "root", "--admin", dataDir))}
	creds := map[string]string{}
	for _, owner := range []string{"alice", "bob"} {
		tokens[owner] = lastLineOf(gatewayCLI(ctx, t, "accounts", "add", owner, dataDir))
		creds[owner] = lastLineOf(gatewayCLI(ctx, t, "credentials", "add", owner, dataDir))
	}
	g := startGateway(t, opencodefake.ClosedPortURL(t), dataDir)
	relabelAway(t, g, connectScreenComputer(ctx, t, g, "6:keller", creds["alice"]), "6:cellar")
	// Bob's own computer of that id: the did-you-mean of his own account, no more.
	connectScreenComputer(ctx, t, g, "6:bob", creds["bob"])

	asked := func(who string) (int, map[string]any) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL("/trapos/computers/6:keller/requests"), strings.NewReader(`{"type":"ping"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tokens[who])
		req.Header.Set("Content-Type", "application/json")
		resp, err := harness.HTTPClient().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var answer struct {
			Error map[string]any `json:"error"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&answer))
		return resp.StatusCode, answer.Error
	}
	for _, who := range []string{"alice", "root"} {
		status, e := asked(who)
		assert.Equal(t, http.StatusNotFound, status, who)
		assert.Equal(t, "computer 6:keller was relabelled: it is 6:cellar now; ask it by that id", e["message"], who)
		assert.Equal(t, "6:cellar", e["relabelledTo"], who)
	}
	status, e := asked("bob")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, `computer 6:keller is not connected; did you mean "6:bob"?`, e["message"])
	assert.NotContains(t, e, "relabelledTo")
}

// TestTheWebConsoleFollowsARelabelledComputerInItsOwnAccount: an admin's list spans accounts.
// Alice's 7:old, watched by the admin, becomes 7:new while bob has a 7:new of his own: the view
// does not open bob's computer (it opened the first listed 7:new), but waits for alice's; once
// both accounts have 7:new, it says so as for any traposId of several accounts.
func TestTheWebConsoleFollowsARelabelledComputerInItsOwnAccount(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	dataDir := "--data-dir=" + t.TempDir()
	root := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "root", "--admin", dataDir))
	creds := map[string]string{}
	for _, owner := range []string{"alice", "bob"} {
		gatewayCLI(ctx, t, "accounts", "add", owner, dataDir)
		creds[owner] = lastLineOf(gatewayCLI(ctx, t, "credentials", "add", owner, dataDir))
	}
	g := startGateway(t, opencodefake.ClosedPortURL(t), dataDir)
	dial := func(owner, id string) *consoleComputer { return connectScreenComputer(ctx, t, g, id, creds[owner]) }
	old := dial("alice", "7:old")
	bobs := dial("bob", "7:new")

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/")))
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`sessionStorage.setItem("trap-sandbox-token", "`+root+`"); true`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Aold"), chromedp.Reload()))
	<-old.watch
	until(t, "alice's 7:old, its account known", `document.getElementById("status").textContent === "Live" && view && view.accountId === "alice"`)

	require.NoError(t, old.ws.WriteJSON(map[string]any{"event": harness.EventComputerRequest, "traposSenderId": "7:old",
		"messageId": harness.NewMessageID(), "type": "bye", "payload": map[string]any{"reason": "relabelled", "traposId": "7:new"}}))
	require.NoError(t, old.ws.Close())
	until(t, "the relabel said", `document.getElementById("status").textContent.includes("was relabelled: it is 7:new now")`)
	// The view looks for alice's 7:new in the list (at least twice, retryMs apart) and finds
	// only bob's: it opens nothing.
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`window.lists = 0; const f = window.fetch;
		window.fetch = (path, o) => { if (path === "/trapos/computers") lists++; return f(path, o); }; true`))
	require.NoError(t, err)
	until(t, "two looks at the list", `lists >= 2`)
	select {
	case <-bobs.watch:
		t.Fatal("the view opened bob's 7:new")
	default:
	}
	hash, err := chromedp.Run(page, chromedp.Evaluate[string](`location.hash`))
	require.NoError(t, err)
	assert.Equal(t, "#/computer/7%3Aold", hash, "still on the name it watched")

	dial("alice", "7:new")
	until(t, "both accounts' 7:new said", `document.getElementById("status").textContent.startsWith("not_connected: computer 7:new is connected in several accounts (alice, bob)")`)
	select {
	case <-bobs.watch:
		t.Fatal("the view opened bob's 7:new")
	default:
	}
}

// TestTheWebConsoleLosesNoKeyOfAFastTypist: keys typed faster than a request's round trip (300
// typed at once, as a fast typist's or a held key's pile up on a slow link) all reach the
// computer, in order, each once, in few requests: what is typed while one is on its way goes
// in the next. Before, each key press was a request of its own, and past 64 waiting the rest
// were dropped, unsaid.
func TestTheWebConsoleLosesNoKeyOfAFastTypist(t *testing.T) {
	ctx := testContext(t)
	page, _, c := watchConsoleComputer(ctx, t, "7:fast")

	var want strings.Builder
	for i := range 300 {
		want.WriteByte(byte('a' + i%26))
	}
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
		const screen = document.getElementById("screen");
		for (const key of "`+want.String()+`") {
			const code = "Key" + key.toUpperCase();
			for (const type of ["keydown", "keyup"]) screen.dispatchEvent(new KeyboardEvent(type, { key, code, bubbles: true, cancelable: true }));
		}
		true
	}`))
	require.NoError(t, err)
	got, requests := c.events(ctx, func(events []string) bool { return len(typedText(events)) == len(want.String()) })
	assert.Equal(t, want.String(), typedText(got), "every key, in order, once")
	assert.Less(t, requests, 30, "the keys waiting go together")
	assert.Equal(t, "Live", statusOf(t, page))
}

// TestTheWebConsoleSaysItDropsKeysHeldOnABusyComputer: a key held down on a computer the
// host's requests fill: its repeats wait for the computer up to 256 key presses; past them
// the status says they were not sent and to type them again once it says Live (before, they
// were dropped past 64, unsaid). Once the computer takes requests again the 256 reach it, in
// order, then the key let go, and the status says Live.
func TestTheWebConsoleSaysItDropsKeysHeldOnABusyComputer(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:busy")
	c.fill(ctx)

	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`
		window.key = (type, repeat) => document.getElementById("screen").dispatchEvent(
			new KeyboardEvent(type, { key: "a", code: "KeyA", repeat, bubbles: true, cancelable: true }));
		key("keydown", false), true`))
	require.NoError(t, err)
	until(t, "the busy answer to the key", `document.getElementById("status").textContent.endsWith("; retry shortly (sending the keys again)")`)
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`for (let i = 0; i < 299; i++) key("keydown", true); key("keyup", false), true`))
	require.NoError(t, err)
	until(t, "the keys not sent said", `document.getElementById("status").textContent ===
		"Keys not sent: 256 wait for the busy computer. Type them again once it says Live."`)
	c.release()
	got, _ := c.events(ctx, func(events []string) bool { return len(events) > 0 && events[len(events)-1] == "key_up a" })
	assert.Equal(t, strings.Repeat("a", 256), typedText(got), "the key's 256 presses, then the key let go")
	until(t, "the view live again", `document.getElementById("status").textContent === "Live"`)
}

// TestTheWebConsoleLetsGoCtrlWithAKeyItDropsOnABusyComputer: past the 256 presses waiting for
// a busy computer, a key tapped with the on-screen Ctrl held is not sent, but Ctrl's release,
// which went with it, still is: the computer got Ctrl down. A key pressed then (b), its press
// not sent, sends no release either, which CC never delivers without its press. Before, the
// whole call was dropped, Ctrl's release too, and the computer held Ctrl down for ever; and
// b's release went alone.
func TestTheWebConsoleLetsGoCtrlWithAKeyItDropsOnABusyComputer(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:busy")
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`document.getElementById("ctrl").click(), true`))
	require.NoError(t, err)
	assert.Equal(t, `{"events":[{"type":"key","name":"leftCtrl"}]}`, c.input(ctx, t), "the on-screen Ctrl down")
	c.fill(ctx)

	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`
		window.key = (type, name, repeat) => document.getElementById("screen").dispatchEvent(
			new KeyboardEvent(type, { key: name, code: "Key" + name.toUpperCase(), repeat, bubbles: true, cancelable: true }));
		key("keydown", "a", false), true`))
	require.NoError(t, err)
	until(t, "the busy answer to the key", `document.getElementById("status").textContent.endsWith("; retry shortly (sending the keys again)")`)
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`for (let i = 0; i < 299; i++) key("keydown", "a", true); true`))
	require.NoError(t, err)
	until(t, "the keys not sent said", `document.getElementById("status").textContent ===
		"Keys not sent: 256 wait for the busy computer. Type them again once it says Live."`)
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`document.querySelector("#touch [data-key=enter]").click();
		key("keydown", "b", false), key("keyup", "b", false), key("keyup", "a", false), true`))
	require.NoError(t, err)
	c.release()
	got, _ := c.events(ctx, func(events []string) bool { return len(events) > 0 && events[len(events)-1] == "key_up a" })
	assert.Contains(t, got, "key_up leftCtrl", "Ctrl let go")
	assert.NotContains(t, got, "key enter", "the key tapped with Ctrl, not sent")
	assert.NotContains(t, got, "key_up b", "no release of b, whose press was not sent")
}

// TestTheWebConsoleSaysItDropsKeysHeldBehindARetriedRelease: a key held on a live view while a
// release waits to be tried again (its call cut by the network; the proxy then holds the next
// call that carries it) queues 256 presses at most, as behind a busy computer: the next are
// not sent, and the view says so; once the release goes, the 256, then the key let go, reach
// the computer, and the view says Live. Before, nothing bounded them: a key held while the
// gateway did not answer queued presses without end.
func TestTheWebConsoleSaysItDropsKeysHeldBehindARetriedRelease(t *testing.T) {
	ctx := testContext(t)
	const token = "console-held-behind-2f6b" // the API answers no client through a proxy without one
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	c := connectReleaseComputer(ctx, t, g, "14:rig", false)
	const passing, cutting, holding, passingAgain = 0, 1, 2, 3
	var phase atomic.Int32
	held, goOn := make(chan struct{}, 1), make(chan struct{})
	proxy := inputCuttingProxy(t, g, func(r *http.Request, body []byte) bool {
		if !bytes.Contains(body, []byte(`"key_up"`)) {
			return false
		}
		switch phase.Load() {
		case cutting:
			return true
		case holding:
			if phase.CompareAndSwap(holding, passingAgain) {
				held <- struct{}{}
				select {
				case <-goOn:
				case <-r.Context().Done():
					return true
				}
			}
		}
		return false
	})
	openRig(t, page, until, proxy.URL, token)
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"),
		keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "Control", "ControlLeft", 17)))
	assert.Equal(t, `{"events":[{"type":"key","name":"leftCtrl"}]}`, c.input(ctx, t), "Ctrl down")
	phase.Store(cutting)
	require.NoError(t, chromedp.Do(page, keyboardKey(input.DispatchKeyEventTypeKeyUp, "Control", "ControlLeft", 17)))
	until(t, "the release's call failed", `document.getElementById("status").textContent.startsWith("Input failed: ")`)
	phase.Store(holding)
	waitFor(ctx, t, held, "the release tried again")

	waiting, err := chromedp.Run(page, chromedp.Evaluate[int](`
		window.key = (type, repeat) => document.getElementById("screen").dispatchEvent(
			new KeyboardEvent(type, { key: "a", code: "KeyA", repeat, bubbles: true, cancelable: true }));
		key("keydown", false);
		for (let i = 0; i < 299; i++) key("keydown", true);
		key("keyup", false);
		view.presses`))
	require.NoError(t, err)
	assert.Equal(t, 256, waiting, "the presses waiting behind the release")
	until(t, "the keys not sent said", `document.getElementById("status").textContent ===
		"Keys not sent: 256 wait for the gateway to take the keys before them. Type them again once it says Live."`)
	close(goOn)
	assert.Contains(t, c.input(ctx, t), `{"type":"key_up","name":"leftCtrl"}`, "Ctrl let go first")
	got, _ := c.events(ctx, func(events []string) bool { return len(events) > 0 && events[len(events)-1] == "key_up a" })
	assert.Equal(t, strings.Repeat("a", 256), typedText(got), "the key's 256 presses, then the key let go")
	until(t, "the view live again", `document.getElementById("status").textContent === "Live"`)
}

// events reads the screen.input requests the computer gets until done says the events so far
// ("key a", "char a", "key_up a") are all, and reports them and how many requests carried them.
func (c *consoleComputer) events(ctx context.Context, done func([]string) bool) (events []string, requests int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a generous bound: only a failure waits it
	defer cancel()
	for !done(events) {
		select {
		case payload := <-c.inputs:
			var p struct {
				Events []struct{ Type, Name, Text string } `json:"events"`
			}
			require.NoError(c.t, json.Unmarshal([]byte(payload), &p))
			requests++
			for _, e := range p.Events {
				events = append(events, e.Type+" "+e.Name+e.Text)
			}
		case <-ctx.Done():
			c.t.Fatalf("the computer got no more input; so far %d events in %d requests: %.300q", len(events), requests, events)
		}
	}
	return events, requests
}

// typedText is the characters of events (as consoleComputer.events reports them).
func typedText(events []string) string {
	var b strings.Builder
	for _, e := range events {
		if text, ok := strings.CutPrefix(e, "char "); ok {
			b.WriteString(text)
		}
	}
	return b.String()
}

func statusOf(t *testing.T, page context.Context) string {
	t.Helper()
	s, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	return s
}

// TestTheWebConsoleSaysLiveAgainAfterKeysSentAsQuestionMarks: the status naming a character
// sent as "?" (€ pasted) gives way to Live once the next keys go through without one, once it
// has been read (TestTheWebConsoleKeepsCharactersSentAsQuestionMarksUpToBeRead). Before, it
// said "Sent as ?: €" for as long as the view stayed open, whatever was typed after.
func TestTheWebConsoleSaysLiveAgainAfterKeysSentAsQuestionMarks(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:euro")

	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#paste-text", "5 €"), chromedp.Click("#paste-form button")))
	until(t, "the € named", `document.getElementById("status").textContent === "Sent as ?: € (a computer types characters up to U+00FF only)"`)
	c.events(ctx, func(events []string) bool { return len(events) == 1 })
	wordsRead(t, page)
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.SendKeys("#screen", "a")))
	c.events(ctx, func(events []string) bool { return typedText(events) == "a" })
	until(t, "Live again", `document.getElementById("status").textContent === "Live"`)
}

// TestTheWebConsoleNamesEveryCharacterSentAsQuestionMarks: € typed on the screen, then 😀 in a
// call of its own, are both named as sent as ?, until keys typed since go through. Before, the
// second answer's words replaced the first's: the status named 😀 alone, though the computer
// got a ? for the € too.
func TestTheWebConsoleNamesEveryCharacterSentAsQuestionMarks(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:euro")
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.SendKeys("#screen", "€")))
	until(t, "the € named", `document.getElementById("status").textContent === "Sent as ?: € (a computer types characters up to U+00FF only)"`)
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "😀")))
	until(t, "both named", `document.getElementById("status").textContent === "Sent as ?: €😀 (a computer types characters up to U+00FF only)"`)
	c.events(ctx, func(events []string) bool { return typedText(events) == "??" })
	wordsRead(t, page)
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "a")))
	until(t, "Live again", `document.getElementById("status").textContent === "Live"`)
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "€")))
	until(t, "the € named afresh", `document.getElementById("status").textContent === "Sent as ?: € (a computer types characters up to U+00FF only)"`)
}

// TestTheWebConsoleKeepsCharactersSentAsQuestionMarksUpToBeRead: 5€ typed mid-line, then
// Enter, named the € as sent as "?" and put Live back at Enter's answer, a moment later: the
// player only ever saw Live. The words stay up to be read, past the answers to keys typed
// on at once, until they have been up sentAsQReadMs (the page's clock, now, stands still here
// until the test moves it on: no machine is slow enough to pass it).
func TestTheWebConsoleKeepsCharactersSentAsQuestionMarksUpToBeRead(t *testing.T) {
	ctx := testContext(t)
	page, until, c := watchConsoleComputer(ctx, t, "7:euro")
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`window.frozenAt = Date.now(); now = () => window.frozenAt; true`))
	require.NoError(t, err)
	const euro = "Sent as ?: € (a computer types characters up to U+00FF only)"

	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.SendKeys("#screen", "5€")))
	until(t, "the € named", `document.getElementById("status").textContent === `+jsString(t, euro))
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "\r")))
	c.events(ctx, func(events []string) bool { return slices.Contains(events, "key_up enter") })
	until(t, "every answer read", everyKeyAnswered)
	assert.Equal(t, euro, statusOf(t, page), "Enter's answer leaves the € named")
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "a")))
	c.events(ctx, func(events []string) bool { return slices.Contains(events, "key_up a") })
	until(t, "every answer read", everyKeyAnswered)
	assert.Equal(t, euro, statusOf(t, page), "and so does the next key's, while the words are new")

	wordsRead(t, page)
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "b")))
	until(t, "Live again", `document.getElementById("status").textContent === "Live"`)
}

// everyKeyAnswered is true once the page's view has sent every key typed on it and read the
// answers.
const everyKeyAnswered = `!view.sending && view.pending.length === 0`

// wordsRead moves the page's clock (now) on past sentAsQReadMs: the status's words naming
// characters sent as "?" have been read, and the next answer that says nothing puts Live back.
func wordsRead(t *testing.T, page context.Context) {
	t.Helper()
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`now = () => Date.now() + sentAsQReadMs; true`))
	require.NoError(t, err)
}

// dragsProgram prints each press, drag and release it gets, with its button and cell.
const dragsProgram = `while true do
  local e, b, x, y = os.pullEvent()
  if e == "mouse_click" or e == "mouse_drag" or e == "mouse_up" then print(e:sub(7) .. " " .. b .. " " .. x .. " " .. y) end
end`

// TestTheWebConsoleDragsOnTheScreen: the pointer moved over the screen with its button held
// reaches the computer as CC's mouse_drag, one for each cell it moves onto, at that cell (a
// move inside a cell sends none), so paint draws along it from a browser; the press is CC's
// mouse_click and the release its mouse_up where the button is let go (off the screen, at the
// nearest cell, as CC does). Before, the page sent the press alone (screen.input had no drag,
// and paint could only be dotted), then the press's mouse_up with it, before the drags: a
// program that ends a stroke on mouse_up saw it end at the press.
func TestTheWebConsoleDragsOnTheScreen(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	at := openDragsProgram(ctx, t, page, until, false)
	require.NoError(t, chromedp.Do(page,
		leftButton(input.DispatchMouseEventTypeMousePressed, at(3.5, 2), 1),
		leftButton(input.DispatchMouseEventTypeMouseMoved, at(3.8, 2), 1), // the same cell
		leftButton(input.DispatchMouseEventTypeMouseMoved, at(4.2, 2), 1),
		leftButton(input.DispatchMouseEventTypeMouseMoved, at(4.7, 2), 1), // the same cell
		leftButton(input.DispatchMouseEventTypeMouseMoved, at(5.5, 3), 1),
		leftButton(input.DispatchMouseEventTypeMouseReleased, at(5.5, 3), 0),
		leftButton(input.DispatchMouseEventTypeMouseMoved, at(7.5, 3), 0), // no button held: no drag
	))
	until(t, "the drags", `document.getElementById("screen-text").textContent.endsWith("\nclick 1 3 2\ndrag 1 4 2\ndrag 1 5 3\nup 1 5 3")`)
	require.NoError(t, chromedp.Do(page, leftButton(input.DispatchMouseEventTypeMousePressed, at(1.5, 1), 1),
		leftButton(input.DispatchMouseEventTypeMouseReleased, at(1.5, 1), 0)))
	until(t, "the next click", `document.getElementById("screen-text").textContent.endsWith("\nup 1 5 3\nclick 1 1 1\nup 1 1 1")`)
	// Dragged off the screen's left edge and let go there: the drag and the release at the
	// nearest cell, the first of the row.
	require.NoError(t, chromedp.Do(page,
		leftButton(input.DispatchMouseEventTypeMousePressed, at(2.5, 3), 1),
		leftButton(input.DispatchMouseEventTypeMouseMoved, at(-0.5, 3), 1),
		leftButton(input.DispatchMouseEventTypeMouseReleased, at(-0.5, 3), 0)))
	until(t, "the drag off the screen", `document.getElementById("screen-text").textContent.endsWith("\nup 1 1 1\nclick 1 2 3\ndrag 1 1 3\nup 1 1 3")`)
}

// TestTheWebConsoleSendsNoMouseToABasicComputer: a basic computer (its frames' colour false)
// gets no mouse event from the console, as CC fires none on one (only advanced computers
// take the mouse): a click, a drag and the wheel on its screen send nothing, and the keys typed
// after them go as ever. Before, the page sent them as to an advanced computer, and a program
// on a basic one got a mouse_click no player there can make.
func TestTheWebConsoleSendsNoMouseToABasicComputer(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	basic := map[string]any{"colour": false}
	for k, v := range rigScreen {
		basic[k] = v
	}
	c := connectConsoleComputer(ctx, t, g, "6:keller", consoleComputerHooks{clientVersion: "0.5.23", screen: basic})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/6%3Akeller")))
	until(t, "the screen", rigLive)
	at := func(x float64) []float64 { return cellPoint(t, page, x, 1) }
	require.NoError(t, chromedp.Do(page, leftButton(input.DispatchMouseEventTypeMousePressed, at(1.5), 1),
		leftButton(input.DispatchMouseEventTypeMouseMoved, at(2.5), 1),
		leftButton(input.DispatchMouseEventTypeMouseReleased, at(2.5), 0),
		chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
			xy := at(2.5)
			_, err := cdp.Call(ctx, target, input.DispatchMouseEvent, input.DispatchMouseEventParams{
				Type: input.DispatchMouseEventTypeMouseWheel, X: xy[0], Y: xy[1], DeltaX: 0.01, DeltaY: 100}) // deltaX is required, and 0 is left out
			return err
		}),
		keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "y", "KeyY", 89),
		keyboardKey(input.DispatchKeyEventTypeKeyUp, "y", "KeyY", 89)))
	got, _ := c.events(ctx, func(events []string) bool { return len(events) > 0 && events[len(events)-1] == "key_up y" })
	assert.Equal(t, []string{"key y", "char y", "key_up y"}, got, "the key alone, no mouse event")
}

// TestTheWebConsoleSaysABasicComputerIsOne: the view's heading says a basic computer (its
// frames' colour false) is one, in CC's words and what it lacks, so a player who sees greys and
// clicks that do nothing knows why; an advanced computer's says nothing, also when opened after
// a basic one. Before, the page never said it.
func TestTheWebConsoleSaysABasicComputerIsOne(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	basic, advanced := idScreen("6:keller"), idScreen("7:dachs")
	basic["colour"], advanced["colour"] = false, true
	connectConsoleComputer(ctx, t, g, "6:keller", consoleComputerHooks{clientVersion: "0.5.26", screen: basic})
	connectConsoleComputer(ctx, t, g, "7:dachs", consoleComputerHooks{clientVersion: "0.5.26", screen: advanced})
	// shows is the condition that computer shown's screen (its text) is live and the heading
	// says kind after its traposId ("" for nothing).
	shows := func(shown, kind string) string {
		return fmt.Sprintf(`document.getElementById("status").textContent === "Live" &&
			document.getElementById("screen-text").textContent === %q &&
			document.getElementById("viewer-id").parentElement.innerText.trim() === %q`,
			shown, strings.TrimSpace("Computer "+map[string]string{"kel": "6:keller", "dac": "7:dachs"}[shown]+" "+kind))
	}
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/7%3Adachs")))
	until(t, "the advanced computer, its heading saying nothing more", shows("dac", ""))
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/6%3Akeller"; true`))
	require.NoError(t, err)
	until(t, "the basic computer, its heading saying so", shows("kel", "(a basic computer: no colour, no mouse)"))
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/7%3Adachs"; true`))
	require.NoError(t, err)
	until(t, "the advanced computer again, its heading saying nothing more", shows("dac", ""))
}

// openDragsProgram opens a computer running dragsProgram in page's console (on a phone's
// touch screen, 360×640, when phone) and returns the point at (x, y) in cells from 1: x 3.5 is
// the middle of the third cell.
func openDragsProgram(ctx context.Context, t *testing.T, page context.Context, until func(t *testing.T, what, js string), phone bool) (at func(x, y float64) []float64) {
	t.Helper()
	const token = "console-drags-2d7c"
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 13, "easel"
	opts.Settings["sandbox.allow_screen"] = "control"
	opts.Files = map[string]string{"/e2e.lua": deskProgram, "/drags.lua": dragsProgram}
	opts.Input = computer.Input(make(chan string))
	fakecrafttest.StartWithin(t, opts, testTimeout).WaitFor(ctx, markerAtPrompt)

	if phone {
		require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640, chromedp.EmulateTouch)))
	}
	logIn(t, page, "http://"+g.Addr+"/console/#/computer/13%3Aeasel", token)
	until(t, "the prompt", liveAtThePrompt)
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#screen", "drags\r")))
	until(t, "the program", `document.getElementById("screen-text").textContent.endsWith("> drags")`)
	return func(x, y float64) []float64 { return cellPoint(t, page, x, y) }
}

// cellPoint is the point in page of its screen's column x of row y, as CC counts cells (from
// 1: x 3.5 is the middle of cell 3, x -0.5 left of the screen), in the middle of the row.
func cellPoint(t *testing.T, page context.Context, x, y float64) []float64 {
	t.Helper()
	xy, err := chromedp.Run(page, chromedp.Evaluate[[]float64](fmt.Sprintf(`{
		const screen = document.getElementById("screen"), row = screen.querySelectorAll(".row")[%d].getBoundingClientRect();
		[row.left + row.width / +screen.dataset.width * (%f - 1), row.top + row.height / 2]
	}`, int(y)-1, x)))
	require.NoError(t, err)
	return xy
}

// leftButton is the browser's left mouse button at point xy, as typ (pressed, moved, released)
// with buttons held after it (1: the left).
func leftButton(typ input.DispatchMouseEventType, xy []float64, buttons int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, input.DispatchMouseEvent, input.DispatchMouseEventParams{
			Type: typ, X: xy[0], Y: xy[1], Button: input.MouseButtonLeft, Buttons: buttons, ClickCount: 1})
		return err
	})
}

// keyboardKey is a key of the browser's keyboard going down or up (typ): its key, its code (its
// place) and its virtual key code.
func keyboardKey(typ input.DispatchKeyEventType, key, code string, vk int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, input.DispatchKeyEvent, input.DispatchKeyEventParams{
			Type: typ, Key: key, Code: code, WindowsVirtualKeyCode: vk})
		return err
	})
}

// TestTheWebConsoleDrawsWithAFingerOnAPhone: a finger drawn over the screen of a phone's touch
// screen is a drag on the computer, as the mouse's is (its touch, moves and lift CC's
// mouse_click, mouse_drag and mouse_up), not a scroll of the page, which a finger drawn below
// the screen still scrolls. Before, the page scrolled and the computer got nothing.
func TestTheWebConsoleDrawsWithAFingerOnAPhone(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	at := openDragsProgram(ctx, t, page, until, true)
	touch := func(typ input.DispatchTouchEventType, xy []float64) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
			p := input.DispatchTouchEventParams{Type: typ, TouchPoints: []*input.TouchPoint{}}
			if xy != nil {
				p.TouchPoints = []*input.TouchPoint{{X: xy[0], Y: xy[1]}}
			}
			_, err := cdp.Call(ctx, target, input.DispatchTouchEvent, p)
			return err
		})
	}
	scrolled := func() float64 {
		y, err := chromedp.Run(page, chromedp.Evaluate[float64](`window.scrollY`))
		require.NoError(t, err)
		return y
	}
	require.Zero(t, scrolled())
	require.NoError(t, chromedp.Do(page,
		touch(input.DispatchTouchEventTypeTouchStart, at(3.5, 8)),
		touch(input.DispatchTouchEventTypeTouchMove, at(3.5, 6)),
		touch(input.DispatchTouchEventTypeTouchMove, at(4.5, 4)),
		touch(input.DispatchTouchEventTypeTouchMove, at(4.5, 2)),
		touch(input.DispatchTouchEventTypeTouchEnd, nil)))
	until(t, "the finger's drag", `document.getElementById("screen-text").textContent.endsWith("\nclick 1 3 8\ndrag 1 3 6\ndrag 1 4 4\ndrag 1 4 2\nup 1 4 2")`)
	assert.Zero(t, scrolled(), "the page did not scroll under the finger's drag on the screen")

	// Below the screen (its text), a finger's drag scrolls the page as ever.
	below, err := chromedp.Run(page, chromedp.Evaluate[[]float64](`{
		const box = document.getElementById("screen-text").getBoundingClientRect();
		[box.left + 20, Math.min(box.top + 40, window.innerHeight - 20)]
	}`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(page,
		touch(input.DispatchTouchEventTypeTouchStart, below),
		touch(input.DispatchTouchEventTypeTouchMove, []float64{below[0], below[1] - 100}),
		touch(input.DispatchTouchEventTypeTouchMove, []float64{below[0], below[1] - 200}),
		touch(input.DispatchTouchEventTypeTouchEnd, nil)))
	until(t, "the page scrolled", `window.scrollY > 0`)
}

// TestTheWebConsoleSendsAnOlderClientTheMouseItTakes: a computer whose client is older than
// 0.5.21 (computer.info says which) would refuse a drag, and the keys sent in the same call with
// it: the view sends it the press alone, as a click, and says once why the moves do not reach
// it. One of 0.5.21 takes drags but not a press apart from its release (0.5.22's mouse_click
// and mouse_up): it gets the click, then the drags, and the view says once that its release
// comes at the press.
func TestTheWebConsoleSendsAnOlderClientTheMouseItTakes(t *testing.T) {
	for _, c := range []struct{ client, sent, said string }{
		{"0.5.14", "click", "This computer's client is older than trapos-sandbox 0.5.21 and takes no drag: " +
			"a press reaches it, not the moves after it. The gateway's install line run on it upgrades it."},
		{"0.5.21", "click,drag,drag", "This computer's client is older than trapos-sandbox 0.5.22: a drag reaches it, " +
			"its release (mouse_up) at the press, not where the pointer lets go. The gateway's install line run on it upgrades it."},
	} {
		t.Run(c.client, func(t *testing.T) {
			ctx := testContext(t)
			const token = "console-nodrag-6c3a"
			g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
			connectConsoleComputer(ctx, t, g, "11:desk", consoleComputerHooks{clientVersion: c.client, screen: idScreen("11:desk")}) // a 3x1 screen
			page, until := openDesk(ctx, t, g.Addr, token)
			until(t, "the screen", `document.getElementById("status").textContent === "Live" && document.querySelectorAll("#screen .row").length === 1`)
			_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{
				// The input as sent, answered as the gateway answers input the computer took.
				const sent = window.sent = [];
				const fetchNow = window.fetch;
				window.fetch = (url, options) => {
					if (!url.endsWith("/input")) return fetchNow(url, options);
					sent.push(...JSON.parse(options.body).events.map((e) => e.type));
					return Promise.resolve(new Response('{"ok":true,"payload":{"queued":1}}', { headers: { "Content-Type": "application/json" } }));
				};
				const row = document.querySelector("#screen .row"), box = row.getBoundingClientRect();
				const pointer = (type, x, buttons) => row.firstElementChild.dispatchEvent(new PointerEvent(type,
					{ pointerId: 1, isPrimary: true, pointerType: "mouse", clientX: box.left + box.width / 3 * x, clientY: box.top + 1,
						button: type === "pointermove" ? -1 : 0, buttons, bubbles: true, cancelable: true }));
				pointer("pointerdown", 0.5, 1);
				pointer("pointermove", 1.5, 1);
				pointer("pointermove", 2.5, 1);
				pointer("pointerup", 2.5, 0);
				true
			}`))
			require.NoError(t, err)
			// What waits behind the call on its way goes once it is answered (send).
			until(t, "the input sent", `!view.sending && view.pending.length === 0 && window.sent.length > 0`)
			got, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[window.sent.join(), document.getElementById("status").textContent]`))
			require.NoError(t, err)
			assert.Equal(t, []string{c.sent, c.said}, got)
		})
	}
}

// TestTheWebConsoleGreysTheLastSessionsScreenUntilTheNewOneComes: a computer that comes back
// has its stream open before its first frame (a loaded computer's may take a while; a client
// before 0.5.21 could lose its watch and send none): until that frame the view shows the
// screen of its last session, greyed, not ungreyed as the computer's own.
func TestTheWebConsoleGreysTheLastSessionsScreenUntilTheNewOneComes(t *testing.T) {
	ctx := testContext(t)
	const token = "console-lastsession-8d1f"
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	first := connectScreenComputer(ctx, t, g, "11:desk", sandboxPassword) // one frame: ":de"
	page, until := openDesk(ctx, t, g.Addr, token)
	until(t, "the screen", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent === ":de" && !document.getElementById("viewer").classList.contains("stale")`)
	require.NoError(t, first.ws.Close())
	until(t, "the computer gone", `document.getElementById("status").textContent.startsWith("not_connected: ")`)
	connectConsoleComputer(ctx, t, g, "11:desk", consoleComputerHooks{}) // back, answering screen.watch with no frame
	until(t, "the stream open again", `document.getElementById("status").textContent === `+jsString(t, awaitingScreen))
	shown, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[document.getElementById("viewer").classList.contains("stale"),
		document.getElementById("screen-text").textContent]`))
	require.NoError(t, err)
	assert.Equal(t, []any{true, ":de"}, shown, "the last session's screen, greyed")
}

// TestTheWebConsoleSaysAComputerLeftBeforeItDrew: a computer that answers screen.watch and
// leaves before its first frame (a client before 0.5.21 could lose its watch and send none; any
// computer can go in between) ends the view as one that drew does. The gateway tied a watch to
// the computer's socket only at its first frame: the stream got no end, and the page said
// "Live" for ever.
func TestTheWebConsoleSaysAComputerLeftBeforeItDrew(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectConsoleComputer(ctx, t, g, "5:x", consoleComputerHooks{}) // answers screen.watch, never draws
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ax")))
	until(t, "the stream open", `document.getElementById("status").textContent === `+jsString(t, awaitingScreen))
	c.watched(ctx, t)
	require.NoError(t, c.ws.Close())
	until(t, "the computer gone", `document.getElementById("status").textContent.startsWith("not_connected: computer 5:x disconnected")`)
}

// TestTheWebConsoleKeepsAPasteItCouldNotSend: a paste given while the view is not live (its
// computer gone) is not sent, and its text stays in its field, to paste once the view says
// Live again. Before, the field was emptied as if the text had gone to the computer: the
// player's text was lost, unsaid.
func TestTheWebConsoleKeepsAPasteItCouldNotSend(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	first := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{screen: rigScreen})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche")))
	until(t, "the screen", rigLive)
	require.NoError(t, first.ws.Close())
	until(t, "the computer gone", `document.getElementById("status").textContent.startsWith("not_connected: computer 5:küche disconnected")`)
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#paste-text", "grüße"), chromedp.Click("#paste-form button")))
	kept, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("paste-text").value`))
	require.NoError(t, err)
	assert.Equal(t, "grüße", kept, "the text not sent stays in its field")

	back := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{screen: rigScreen})
	until(t, "the view live again", `document.getElementById("status").textContent === "Live"`)
	require.NoError(t, chromedp.Do(page, chromedp.Click("#paste-form button")))
	assert.Equal(t, `{"events":[{"type":"paste","text":"grüße"}]}`, back.input(ctx, t), "the kept text pasted")
	until(t, "the field emptied once the paste went", `document.getElementById("paste-text").value === ""`)
}

// TestTheWebConsoleDrawsABasicComputersGreysAsCCDoes: a basic computer's colours are drawn as
// the greys CC: Tweaked shows, the average of the channels cut to a whole step (Palette's
// (int) cast), never rounded: the page drew CC's lime (#7fcc19) as 119 where CC shows 118, as
// the host's terminal and the agent's palette (console.Greyscale) do. Each colour here is at the
// rule's edge: its channels' sum is 2 past a multiple of 3, where rounding goes up.
func TestTheWebConsoleDrawsABasicComputersGreysAsCCDoes(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{screen: map[string]any{
		"colour": false, "width": 5, "height": 1, "cursor": map[string]any{"x": 1, "y": 1, "blink": false},
		"rows":    map[string]any{"1": map[string]any{"text": "abcde", "fg": "01234", "bg": "43210"}},
		"palette": []string{"#7fcc19", "#020000", "#e57fd8", "#ffffff", "#fffffe"}}})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche")))
	until(t, "the screen", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent === "abcde"`)
	drawn, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#screen .row span")]
		.map((span) => span.textContent + " " + getComputedStyle(span).color + " on " + getComputedStyle(span).backgroundColor)`))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"a rgb(118, 118, 118) on rgb(254, 254, 254)",
		"b rgb(0, 0, 0) on rgb(255, 255, 255)",
		"c rgb(190, 190, 190) on rgb(190, 190, 190)",
		"d rgb(255, 255, 255) on rgb(0, 0, 0)",
		"e rgb(254, 254, 254) on rgb(118, 118, 118)",
	}, drawn, "CC's greys: the channels' average, cut")
}

// TestTheWebConsoleNamesTheRowsTheComputerHasNotSeen: rows the computer's mirror has not seen
// drawn whole (a frame's unknownRows: the boot's first lines) are marked on the screen and
// named under it, so that their blank is not taken for the computer's; once every row is seen
// the marks and the line go. The page showed them as blank rows without a word.
func TestTheWebConsoleNamesTheRowsTheComputerHasNotSeen(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	blank := map[string]any{"text": "   ", "fg": "000", "bg": "fff"}
	c := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{screen: map[string]any{
		"width": 3, "height": 5, "cursor": map[string]any{"x": 1, "y": 5, "blink": false},
		"rows":        map[string]any{"1": blank, "2": blank, "3": blank, "4": blank, "5": map[string]any{"text": "rig", "fg": "000", "bg": "fff"}},
		"palette":     []string{"#f0f0f0"},
		"unknownRows": []int{1, 2, 4}}})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche")))
	until(t, "the screen", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.endsWith("rig")`)
	shown := func() []any {
		t.Helper()
		got, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[
			[...document.querySelectorAll("#screen .row")].map((row, y) => row.classList.contains("unseen") ? y + 1 : 0).filter((y) => y).join(),
			document.getElementById("unseen-rows").hidden, document.getElementById("unseen-rows").textContent]`))
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, []any{"1,2,4", false, "Rows not yet seen whole: 1-2, 4 (the computer may show more there)."}, shown(),
		"the rows marked, and named under the screen")

	c.drawScreen(ctx, t, map[string]any{"width": 3, "height": 5, "cursor": map[string]any{"x": 1, "y": 5, "blink": false},
		"rows": map[string]any{"5": map[string]any{"text": "ok ", "fg": "000", "bg": "fff"}}})
	until(t, "the next frame", `document.getElementById("screen-text").textContent.endsWith("ok")`)
	assert.Equal(t, []any{"", true, ""}, shown(), "every row seen: nothing marked, nothing said")

	// A monitor's rows not yet seen are the monitor's: the computer's own screen shows others.
	connectConsoleComputer(ctx, t, g, "6:rig", consoleComputerHooks{helloVersion: "0.5.31", clientVersion: "0.5.31", monitors: []string{"top"},
		monitorsWatched: make(chan string, 4), screen: map[string]any{"width": 3, "height": 2, "cursor": map[string]any{"x": 1, "y": 2, "blink": false},
			"rows": map[string]any{"1": blank, "2": map[string]any{"text": "mon", "fg": "000", "bg": "fff"}}, "palette": []string{"#f0f0f0"}, "unknownRows": []int{1}}})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/6%3Arig/monitor/top")))
	until(t, "the monitor", `document.getElementById("status").textContent === "Live" && location.hash.endsWith("/monitor/top") &&
		document.getElementById("screen-text").textContent.endsWith("mon")`)
	assert.Equal(t, []any{"1", false, "Rows not yet seen whole: 1 (monitor top may show more there)."}, shown())
}

// TestTheWebConsoleShowsNoScreenOrKeysBeforeTheFirstFrame: a view opened anew whose stream is
// open and whose computer has not drawn yet says so over no screen, with no keys, Type, Paste or
// Terminate, as before its stream opened: they would go nowhere (a press is not sent until the
// first frame). It showed an empty screen, a dark square of its border, and all of them (seen
// opening paint x's computer on a phone's window while its first frame was on its way); they
// come with the first frame.
func TestTheWebConsoleShowsNoScreenOrKeysBeforeTheFirstFrame(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	c := connectConsoleComputer(ctx, t, g, "5:x", consoleComputerHooks{}) // answers screen.watch, draws when told
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ax")))
	until(t, "the stream open", `document.getElementById("status").textContent === `+jsString(t, awaitingScreen))
	c.watched(ctx, t)
	const shown = `["screen", "touch", "paste-form", "terminate", "screen-text"].filter((id) =>
		getComputedStyle(document.getElementById(id)).display !== "none")`
	before, err := chromedp.Run(page, chromedp.Evaluate[[]string](shown))
	require.NoError(t, err)
	assert.Empty(t, before, "shown before the computer's first frame")
	c.drawScreen(ctx, t, blankScreen(51, 19))
	until(t, "the first frame", `document.getElementById("status").textContent === "Live"`)
	after, err := chromedp.Run(page, chromedp.Evaluate[[]string](shown))
	require.NoError(t, err)
	assert.Equal(t, []string{"screen", "touch", "paste-form", "terminate", "screen-text"}, after, "shown with the first frame")
}

// TestTheWebConsoleBacksOffFromAStreamItsComputerEndsAtOnce: a computer that takes the watch and
// ends its stream at once, before its first frame, with an end of its own (a broken or hostile
// client) is shown ending it, in its words as text, and asked again after 2 s, then 4, 8 and
// 16 s, as one that refuses the watch is. Before, every open tab asked it again every 2 s for
// as long as it stayed open. One that ends the stream once it has shown its screen a while
// (the owner withdrawing it; shownAWhile) is watched again after 2 s, as before, and the looks
// start from 2 s again. The page's waits are held and ended by the test (holdPagesWaits), each
// watch counted.
func TestTheWebConsoleBacksOffFromAStreamItsComputerEndsAtOnce(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	var ending atomic.Bool
	ending.Store(true)
	watched := make(chan bool, 16) // each watch the computer takes: whether it ends it at once
	c := connectConsoleComputer(ctx, t, g, "14:rig", consoleComputerHooks{clientVersion: "0.5.31", screen: rigScreen,
		endsWatch: func() (string, string) {
			ends := ending.Load()
			watched <- ends
			if !ends {
				return "", ""
			}
			return "out_of_order", "my screen <b>is</b> broken"
		}})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/")))
	until(t, "the list", `!document.getElementById("computers").hidden`)
	holdPagesWaits(t, page)
	watches := 0
	aWatch := func(ends bool) {
		t.Helper()
		select {
		case ended := <-watched:
			watches++
			assert.Equal(t, ends, ended)
		case <-ctx.Done():
			t.Fatal("the computer got no screen.watch")
		}
	}

	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/14%3Arig"; true`))
	require.NoError(t, err)
	aWatch(true)
	const ended = "forbidden: computer 14:rig says my screen <b>is</b> broken"
	until(t, "the end", `document.getElementById("status").textContent.startsWith("`+ended+`")`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[document.getElementById("status").textContent, document.querySelectorAll("b").length, document.title]`))
	require.NoError(t, err)
	assert.Equal(t, []any{ended + " (asking again in 2 s, and at once when you come back to this page or reload it)", 0.0, "14:rig — refused"}, shown,
		"the computer's words, as text, and when the page asks again")

	var waits []float64
	for range 4 {
		waits = append(waits, heldWait(t, page, until))
		aWatch(true)
	}
	assert.Equal(t, []float64{2000, 4000, 8000, 16000}, waits, "the waits before each watch after the first")
	until(t, "the fifth end", `document.getElementById("status").textContent === "`+ended+` (asking again in 30 s, and at once when you come back to this page or reload it)"`)

	// Its screen shown a while, then the stream ended by the computer (the owner withdrawing
	// it): the end said as before, and watched again after 2 s.
	ending.Store(false)
	waits = append(waits, heldWait(t, page, until))
	aWatch(false)
	until(t, "the screen, live", rigLive)
	shownAWhile(t, page)
	require.NoError(t, c.ws.WriteJSON(c.frame(harness.NewMessageID(), map[string]any{"ended": map[string]any{"code": "forbidden", "message": "the owner withdrew sandbox.allow_screen"}})))
	until(t, "the stream ended", `document.getElementById("status").textContent === "forbidden: computer 14:rig says the owner withdrew sandbox.allow_screen (waiting for it to come back)"`)
	title, err := chromedp.Run(page, chromedp.Evaluate[string](`document.title`))
	require.NoError(t, err)
	assert.Equal(t, "14:rig — waiting", title)
	waits = append(waits, heldWait(t, page, until))
	aWatch(false)
	until(t, "the screen, live again", rigLive)
	assert.Equal(t, []float64{30000, 2000}, waits[4:], "the wait before the watch that showed the screen, and after its end")
	assert.Equal(t, 7, watches)
}

// shownAWhile moves the page's clock (now) on by shownAWhileMs: the stream open in it has
// shown the screen a while, and its computer's end of it is the owner withdrawing it.
func shownAWhile(t *testing.T, page context.Context) {
	t.Helper()
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{ const was = now; now = () => was() + shownAWhileMs; true }`))
	require.NoError(t, err)
}

// TestTheWebConsoleBacksOffFromAStreamItsComputerEndsAfterAFrame: a computer that takes the
// watch, sends a frame and ends its stream (a broken or hostile client) is shown ending it, in
// its words as text, and asked again after 2 s, then 4, 8, 16 and 30 s, as one that ends it
// before its first frame is. Before, the frame started the looks from 2 s again, and every
// open tab asked it again every 2 s for as long as it stayed open. One that ends the stream
// once it has shown the screen for 30 s (the owner withdrawing it) is watched again after 2 s,
// and the looks start from 2 s again. The page's clock is held (now) and moved on by the test,
// its waits held and ended by it (holdPagesWaits), each watch counted.
func TestTheWebConsoleBacksOffFromAStreamItsComputerEndsAfterAFrame(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	watched := make(chan struct{}, 16)
	c := connectConsoleComputer(ctx, t, g, "14:rig", consoleComputerHooks{clientVersion: "0.5.31", screen: rigScreen,
		endsWatch: func() (string, string) {
			watched <- struct{}{}
			return "", ""
		}})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/")))
	until(t, "the list", `!document.getElementById("computers").hidden`)
	holdPagesWaits(t, page)
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`{ const at = Date.now(); now = () => at; true }`))
	require.NoError(t, err)
	watches := 0
	// shownThenEnded waits for the computer's next watch and the screen it shows live, then
	// ends the stream as the computer, with message.
	shownThenEnded := func(message string) {
		t.Helper()
		select {
		case <-watched:
			watches++
		case <-ctx.Done():
			t.Fatal("the computer got no screen.watch")
		}
		until(t, "the screen, live", rigLive)
		require.NoError(t, c.ws.WriteJSON(c.frame(harness.NewMessageID(), map[string]any{"ended": map[string]any{"code": "out_of_order", "message": message}})))
	}
	const ended = "forbidden: computer 14:rig says my screen <b>is</b> broken"
	askingAgain := func(s int) string {
		return fmt.Sprintf("%s (asking again in %d s, and at once when you come back to this page or reload it)", ended, s)
	}

	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`location.hash = "#/computer/14%3Arig"; true`))
	require.NoError(t, err)
	shownThenEnded("my screen <b>is</b> broken")
	until(t, "the end", `document.getElementById("status").textContent.startsWith("`+ended+`")`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[document.getElementById("status").textContent, document.querySelectorAll("b").length, document.title]`))
	require.NoError(t, err)
	assert.Equal(t, []any{askingAgain(2), 0.0, "14:rig — refused"}, shown, "the computer's words, as text, and when the page asks again")

	var waits []float64
	for _, next := range []int{4, 8, 16, 30, 30} {
		waits = append(waits, heldWait(t, page, until))
		shownThenEnded("my screen <b>is</b> broken")
		until(t, "the end, said with the next wait", `document.getElementById("status").textContent === `+strconv.Quote(askingAgain(next)))
	}
	assert.Equal(t, []float64{2000, 4000, 8000, 16000, 30000}, waits, "the waits before each watch after the first")

	// Its screen shown for 30 s, then the stream ended by the computer (the owner withdrawing
	// it): the end said as before, and watched again after 2 s; a stream it ends at once after
	// that is asked again after 2 s, the looks from the first.
	waits = append(waits, heldWait(t, page, until))
	select {
	case <-watched:
		watches++
	case <-ctx.Done():
		t.Fatal("the computer got no screen.watch")
	}
	until(t, "the screen, live", rigLive)
	shownAWhile(t, page)
	require.NoError(t, c.ws.WriteJSON(c.frame(harness.NewMessageID(), map[string]any{"ended": map[string]any{"code": "forbidden", "message": "the owner withdrew sandbox.allow_screen"}})))
	until(t, "the stream ended", `document.getElementById("status").textContent === "forbidden: computer 14:rig says the owner withdrew sandbox.allow_screen (waiting for it to come back)"`)
	title, err := chromedp.Run(page, chromedp.Evaluate[string](`document.title`))
	require.NoError(t, err)
	assert.Equal(t, "14:rig — waiting", title)
	waits = append(waits, heldWait(t, page, until))
	shownThenEnded("my screen <b>is</b> broken")
	until(t, "the end, from the first look", `document.getElementById("status").textContent === `+strconv.Quote(askingAgain(2)))
	assert.Equal(t, []float64{30000, 2000}, waits[5:], "the wait before the watch that showed the screen a while, and after its end")
	assert.Equal(t, 8, watches)
}
