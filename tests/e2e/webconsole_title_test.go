package e2e

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"
)

// awaitingScreen is the console's status while a view's stream is open and its computer's
// first frame has not come (console.js's awaitingScreen).
const awaitingScreen = "Connected: waiting for the computer's screen"

// TestTheWebConsoleNamesTheComputerInTheTabsTitle: a tab viewing a computer is titled with its
// traposId, non-ASCII as it is, and the computer's state while it is away ("— waiting");
// the list is titled as the console again. A label of markup is the title's text, cut to 40
// characters. Before, every tab said "trap-sandbox console", and several computers open in
// tabs could not be told apart.
func TestTheWebConsoleNamesTheComputerInTheTabsTitle(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	title := func(want string) string { return `document.title === ` + jsString(t, want) }

	kitchen := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{screen: rigScreen})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche")))
	until(t, "the computer's traposId alone, its screen live", rigLive+` && `+title("5:küche"))
	require.NoError(t, kitchen.ws.Close())
	until(t, "the computer away", `document.getElementById("status").textContent.startsWith("not_connected: ") && `+
		title("5:küche — waiting"))
	connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{screen: rigScreen})
	until(t, "the computer back", rigLive+` && `+title("5:küche"))

	_, err := chromedp.Run(page, chromedp.Evaluate[string](`location.hash = "#"`))
	require.NoError(t, err)
	until(t, "the list, titled as the console", `!document.getElementById("computers").hidden && `+title("trap-sandbox console"))

	hostile := `7:<img src=x onerror="document.title='pwned'">` + strings.Repeat("ö", 60)
	connectScreenComputer(ctx, t, g, hostile, sandboxPassword)
	_, err = chromedp.Run(page, chromedp.Evaluate[string](`location.hash = "#/computer/" + `+jsString(t, url.PathEscape(hostile))))
	require.NoError(t, err)
	cut := string([]rune(hostile)[:39]) + "…"
	until(t, "the label's first 39 characters, as text", `document.getElementById("status").textContent === "Live" && `+title(cut))
	made, err := chromedp.Run(page, chromedp.Evaluate[int](`document.querySelectorAll("img").length`))
	require.NoError(t, err)
	assert.Zero(t, made, "no element made of the label")
}

// TestTheWebConsoleSaysLiveOnlyOnceTheComputersScreenIsShown: a computer that comes back has
// its stream open before its first frame; until it comes, the view shows the last session's
// screen, greyed, and the status says it waits for the computer's screen, then Live with the
// frame, never Live over the greyed screen (every status the page shows is recorded with the
// screen's state then). Before, it said Live as the stream opened, over the old screen.
func TestTheWebConsoleSaysLiveOnlyOnceTheComputersScreenIsShown(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	first := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{screen: rigScreen})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche")))
	until(t, "the screen", rigLive)
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`window.statuses = [];
		new MutationObserver(() => statuses.push([document.getElementById("status").textContent,
			document.getElementById("viewer").classList.contains("stale")]))
			.observe(document.getElementById("status"), { childList: true, characterData: true, subtree: true });
		true`))
	require.NoError(t, err)
	require.NoError(t, first.ws.Close())
	until(t, "the computer gone", `document.getElementById("status").textContent.startsWith("not_connected: ")`)

	back := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{}) // answers screen.watch, draws when told
	back.watched(ctx, t)
	until(t, "the stream open, the last screen greyed", `document.getElementById("status").textContent === `+
		jsString(t, awaitingScreen)+` && document.getElementById("viewer").classList.contains("stale")`)
	back.draw(ctx, t, "new")
	until(t, "Live with the new screen", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent === "new" && !document.getElementById("viewer").classList.contains("stale")`)
	statuses, err := chromedp.Run(page, chromedp.Evaluate[[][]any](`statuses`))
	require.NoError(t, err)
	for _, s := range statuses {
		assert.False(t, s[0] == "Live" && s[1] == true, "Live said over the greyed screen: %v", statuses)
	}
}

// TestTheWebConsoleSendsNoKeysTypedOnTheGreyedScreen: between a computer's stream opening
// again and its first frame the view shows the last session's screen, greyed; a key typed on
// it is not sent (a person cannot see what it types there), and the status says so, while
// Ctrl, down on the computer since before it went, let go there, still reaches it (a computer
// that never draws must not keep it held). Once the computer's screen is shown, keys go. Before,
// the open stream counted as live: "x", typed on the greyed screen, reached the computer.
func TestTheWebConsoleSendsNoKeysTypedOnTheGreyedScreen(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	first := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{screen: rigScreen})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche")))
	until(t, "the screen", rigLive)
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"),
		keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "Control", "ControlLeft", 17)))
	assert.Equal(t, `{"events":[{"type":"key","name":"leftCtrl"}]}`, first.input(ctx, t), "Ctrl down")
	require.NoError(t, first.ws.Close())
	until(t, "the computer gone", `document.getElementById("status").textContent.startsWith("not_connected: ")`)

	back := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{}) // answers screen.watch, draws when told
	back.watched(ctx, t)
	until(t, "the stream open, the last screen greyed", `document.getElementById("status").textContent === `+
		jsString(t, awaitingScreen)+` && document.getElementById("viewer").classList.contains("stale")`)
	require.NoError(t, chromedp.Do(page, keyboardKey(input.DispatchKeyEventTypeKeyUp, "Control", "ControlLeft", 17)))
	assert.Equal(t, `{"events":[{"type":"key_up","name":"leftCtrl"}]}`, back.input(ctx, t), "Ctrl let go on the computer")
	require.NoError(t, chromedp.Do(page, keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "x", "KeyX", 88),
		keyboardKey(input.DispatchKeyEventTypeKeyUp, "x", "KeyX", 88)))
	until(t, "the status saying the key was not sent", `document.getElementById("status").textContent === `+
		jsString(t, awaitingScreen+": keys typed on the greyed screen are not sent")+
		` && document.getElementById("viewer").classList.contains("stale")`)

	back.draw(ctx, t, "new")
	until(t, "Live with the new screen", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent === "new"`)
	require.NoError(t, chromedp.Do(page, keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "y", "KeyY", 89),
		keyboardKey(input.DispatchKeyEventTypeKeyUp, "y", "KeyY", 89)))
	got := back.input(ctx, t)
	assert.NotContains(t, got, `"x"`, "the key typed on the greyed screen")
	assert.Contains(t, got, `{"type":"key","name":"y"}`, "the key typed on the computer's screen")
}

// TestTheWebConsoleSendsNoReleaseOfAKeyPressedOnTheGreyedScreen: a key pressed on the greyed
// screen (its press not sent) and let go once the computer's screen is shown sends nothing:
// the computer never got the key down, and CC never delivers a key_up without its key. Keys
// typed after it go as ever. Before, its release went alone, a key_up of a key the computer's
// program never saw pressed, ahead of the next key.
func TestTheWebConsoleSendsNoReleaseOfAKeyPressedOnTheGreyedScreen(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	first := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{screen: rigScreen})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche")))
	until(t, "the screen", rigLive)
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen")))
	require.NoError(t, first.ws.Close())
	until(t, "the computer gone", `document.getElementById("status").textContent.startsWith("not_connected: ")`)

	back := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{}) // answers screen.watch, draws when told
	back.watched(ctx, t)
	until(t, "the stream open, the last screen greyed", `document.getElementById("status").textContent === `+
		jsString(t, awaitingScreen)+` && document.getElementById("viewer").classList.contains("stale")`)
	require.NoError(t, chromedp.Do(page, keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "x", "KeyX", 88)))
	until(t, "the status saying the key was not sent", `document.getElementById("status").textContent === `+
		jsString(t, awaitingScreen+": keys typed on the greyed screen are not sent"))

	back.draw(ctx, t, "new")
	until(t, "Live with the new screen", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent === "new"`)
	require.NoError(t, chromedp.Do(page, keyboardKey(input.DispatchKeyEventTypeKeyUp, "x", "KeyX", 88),
		keyboardKey(input.DispatchKeyEventTypeRawKeyDown, "y", "KeyY", 89),
		keyboardKey(input.DispatchKeyEventTypeKeyUp, "y", "KeyY", 89)))
	got, _ := back.events(ctx, func(events []string) bool { return len(events) > 0 && events[len(events)-1] == "key_up y" })
	assert.Equal(t, []string{"key y", "char y", "key_up y"}, got, "the key typed live alone, no release of x")
}

// TestTheWebConsoleHoldsNoCtrlTappedOnTheGreyedScreen: the on-screen Ctrl tapped on the greyed
// screen is not sent, and so is not shown held either: a character typed once the screen is
// the computer's goes as typed, with its character. Before, the button showed Ctrl held, and
// the next character went as a key with Ctrl, typing nothing, to a computer that never got Ctrl.
func TestTheWebConsoleHoldsNoCtrlTappedOnTheGreyedScreen(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 640, chromedp.EmulateMobile, chromedp.EmulateTouch)))
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	first := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{screen: rigScreen})
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/5%3Ak%C3%BCche")))
	until(t, "the screen", rigLive)
	require.NoError(t, first.ws.Close())
	until(t, "the computer gone", `document.getElementById("status").textContent.startsWith("not_connected: ")`)

	back := connectConsoleComputer(ctx, t, g, "5:küche", consoleComputerHooks{}) // answers screen.watch, draws when told
	back.watched(ctx, t)
	until(t, "the stream open, the last screen greyed", `document.getElementById("status").textContent === `+
		jsString(t, awaitingScreen)+` && document.getElementById("viewer").classList.contains("stale")`)
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`document.getElementById("ctrl").click(), true`))
	require.NoError(t, err)
	until(t, "the status saying the key was not sent", `document.getElementById("status").textContent === `+
		jsString(t, awaitingScreen+": keys typed on the greyed screen are not sent"))
	pressed, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("ctrl").getAttribute("aria-pressed")`))
	require.NoError(t, err)
	assert.Equal(t, "false", pressed, "Ctrl not shown held")

	back.draw(ctx, t, "new")
	until(t, "Live with the new screen", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent === "new"`)
	insertAtTheEnd(t, page, "#type-text", "s")
	got, _ := back.events(ctx, func(events []string) bool { return len(events) > 0 && events[len(events)-1] == "key_up s" })
	assert.Equal(t, []string{"key s", "char s", "key_up s"}, got, "s typed, with its character")
}
