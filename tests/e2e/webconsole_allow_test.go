package e2e

import (
	"context"
	"net"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shownInViewer is which of the viewer's parts a person sees: the screen, the phone's keys and
// Type field (shown in a narrow window), Paste, Terminate, the screen as text, the way back to
// the list, and the note saying what the owner allows.
const shownInViewer = `Object.fromEntries(["screen", "touch", "paste-form", "terminate", "screen-text", "back", "viewer-note"].map((id) =>
	[id, ((el) => !!el && el.getClientRects().length > 0)(id === "back" ? document.querySelector("#viewer .controls a") : document.getElementById(id))]))`

// openDesk opens the desk computer's view in a page of a narrow window (a phone's: its keys
// and Type field shown) with token.
func openDesk(ctx context.Context, t *testing.T, addr, token string) (page context.Context, until func(t *testing.T, what, js string)) {
	t.Helper()
	page, until = consolePage(ctx, t)
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 740), chromedp.Navigate("http://"+addr+"/console/#/computer/11%3Adesk"),
		chromedp.WaitVisible("#login"), chromedp.SendKeys("#token", token), chromedp.Click("#login button")))
	return page, until
}

// TestTheWebConsoleShowsAPrivateScreenAsItsOwnersSetting: a computer whose owner keeps the
// screen private (sandbox.allow_screen none, the default) shows no screen and none of the
// input controls, each of which could only be refused (it showed an empty one-cell screen,
// the keys, Paste and Terminate), but a note naming the owner's setting and the line that
// shows it, and the way back to the list; the status has the computer's own words.
func TestTheWebConsoleShowsAPrivateScreenAsItsOwnersSetting(t *testing.T) {
	ctx := testContext(t)
	const token = "console-private-5d0c"
	g, _ := deskAcrossRestarts(ctx, t, token, "")
	page, until := openDesk(ctx, t, g.Addr, token)
	until(t, "the refusal", `document.getElementById("status").textContent.startsWith("forbidden: ")`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[map[string]bool](shownInViewer))
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"screen": false, "touch": false, "paste-form": false, "terminate": false, "screen-text": false,
		"back": true, "viewer-note": true}, shown)
	words, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[document.getElementById("viewer-note").textContent, document.getElementById("status").textContent]`))
	require.NoError(t, err)
	assert.Contains(t, words[0], "keeps its screen private (sandbox.allow_screen none)")
	assert.Contains(t, words[0], "set sandbox.allow_screen view")
	assert.Contains(t, words[1], "sandbox.allow_screen view")
}

// TestTheWebConsoleShowsAViewOnlyScreenWithoutItsInputs: a computer whose owner lets its
// screen be viewed, not controlled (sandbox.allow_screen view), shows its screen; once its
// input is refused, the keys, Type, Paste and Terminate go (they stayed, each refused again)
// and a note says why and names the setting that allows them.
func TestTheWebConsoleShowsAViewOnlyScreenWithoutItsInputs(t *testing.T) {
	ctx := testContext(t)
	const token = "console-viewonly-1f7a"
	g, _ := deskAcrossRestarts(ctx, t, token, "view")
	page, until := openDesk(ctx, t, g.Addr, token)
	until(t, "the prompt", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("screen-text").textContent.includes("`+markerAtPrompt+`")`)
	require.NoError(t, chromedp.Do(page, chromedp.Click(`#touch [data-key="enter"]`)))
	until(t, "the refusal", `document.getElementById("status").textContent.startsWith("forbidden: ")`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[map[string]bool](shownInViewer))
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"screen": true, "touch": false, "paste-form": false, "terminate": false, "screen-text": true,
		"back": true, "viewer-note": true}, shown)
	words, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[document.getElementById("viewer-note").textContent, document.getElementById("status").textContent]`))
	require.NoError(t, err)
	assert.Contains(t, words[0], "viewed, not typed on (sandbox.allow_screen view)")
	assert.Contains(t, words[0], "set sandbox.allow_screen control")
	assert.Contains(t, words[1], "forbidden: ")
}

// TestTheWebConsoleSendsABrowsersPersonBackToTheList: a computer that is not connected is
// answered with the page's own way to the connected ones, Back to the list, in place of the
// CLI's, MCP's and the API's, which a person in a browser has none of; and no screen or input
// controls are shown for it.
func TestTheWebConsoleSendsABrowsersPersonBackToTheList(t *testing.T) {
	ctx := testContext(t)
	const token = "console-gone-8b2d"
	g, _ := deskAcrossRestarts(ctx, t, token, "view")
	page, until := consolePage(ctx, t)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/99%3Agone"),
		chromedp.WaitVisible("#login"), chromedp.SendKeys("#token", token), chromedp.Click("#login button")))
	until(t, "the answer", `document.getElementById("status").textContent.startsWith("not_connected: ")`)
	shown, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	assert.Equal(t, "not_connected: computer 99:gone is not connected; Back to the list (below) shows the connected ones (waiting for it to come back)", shown)
	// Nor is there a screen, or anything to type on (an empty one-cell screen, Paste and
	// Terminate), before the computer's screen is first live.
	parts, err := chromedp.Run(page, chromedp.Evaluate[map[string]bool](shownInViewer))
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"screen": false, "touch": false, "paste-form": false, "terminate": false, "screen-text": false,
		"back": true, "viewer-note": false}, parts)
}

// TestTheWebConsoleSaysWhoseListIsEmpty: a user account's token, which reaches that account's
// computers only, is told whose list has none ("No computer is connected" sent its holder
// looking for why none was, when alice's is); the list of one with a computer is no different.
func TestTheWebConsoleSaysWhoseListIsEmpty(t *testing.T) {
	ctx := testContext(t)
	dataDir, alice, g, _ := accountsDesk(ctx, t, "alice")
	bob := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "bob", dataDir))
	for token, want := range map[string]string{
		bob:   "No computer of account bob is connected (this token reaches that account's computers only).",
		alice: "",
	} {
		page, until := consolePage(ctx, t, "console.test")
		_, port, err := net.SplitHostPort(g.Addr)
		require.NoError(t, err)
		require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://console.test:"+port+"/console/"), chromedp.WaitVisible("#login"),
			chromedp.SendKeys("#token", token), chromedp.Click("#login button")))
		until(t, "the list", `!document.getElementById("computers").hidden`)
		shown, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("no-computers").hidden ? "" : document.getElementById("no-computers").textContent`))
		require.NoError(t, err)
		assert.Equal(t, want, shown)
	}
}
