package e2e

import (
	"context"
	"net"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"
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
	require.NoError(t, chromedp.Do(page, chromedp.EmulateViewport(360, 740)))
	logIn(t, page, "http://"+addr+"/console/#/computer/11%3Adesk", token)
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
// screen be viewed, not controlled (sandbox.allow_screen view), shows its screen without the
// keys, Type, Paste and Terminate (they stayed, each refused again), and a note says why and
// names the setting that allows them; a key typed on the screen itself is refused, in the
// computer's words.
func TestTheWebConsoleShowsAViewOnlyScreenWithoutItsInputs(t *testing.T) {
	ctx := testContext(t)
	const token = "console-viewonly-1f7a"
	g, _ := deskAcrossRestarts(ctx, t, token, "view")
	page, until := openDesk(ctx, t, g.Addr, token)
	until(t, "the prompt", liveAtThePrompt)
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.KeyEvent(kb.Enter)))
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
	logIn(t, page, "http://"+g.Addr+"/console/#/computer/99%3Agone", token)
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
		logIn(t, page, "http://console.test:"+port+"/console/", token)
		until(t, "the list", `!document.getElementById("computers").hidden`)
		shown, err := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("no-computers").hidden ? "" : document.getElementById("no-computers").textContent`))
		require.NoError(t, err)
		assert.Equal(t, want, shown)
	}
}

// TestTheWebConsoleShowsAViewOnlyScreenAsSuchFromTheStart: a computer whose owner lets its
// screen be viewed only (sandbox.allow_screen view) showed the keys, Type, Paste and Terminate
// until the first key was refused. The console asks the computer what its owner allows
// (computer.info) before it watches, so the live screen comes without them, and nothing typed
// was needed to learn it.
func TestTheWebConsoleShowsAViewOnlyScreenAsSuchFromTheStart(t *testing.T) {
	ctx := testContext(t)
	const token = "console-viewfirst-4e1b"
	g, _ := deskAcrossRestarts(ctx, t, token, "view")
	page, until := openDesk(ctx, t, g.Addr, token)
	until(t, "the prompt", liveAtThePrompt)
	shown, err := chromedp.Run(page, chromedp.Evaluate[map[string]bool](shownInViewer))
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"screen": true, "touch": false, "paste-form": false, "terminate": false, "screen-text": true,
		"back": true, "viewer-note": true}, shown)
	words, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[document.getElementById("viewer-note").textContent, document.getElementById("status").textContent]`))
	require.NoError(t, err)
	assert.Contains(t, words[0], "viewed, not typed on (sandbox.allow_screen view)")
	assert.Contains(t, words[0], "this page looks again by itself")
	assert.Equal(t, "Live", words[1], "nothing was refused to learn it")
}

// deskOwned starts the desk computer (sandbox.allow_screen allowScreen; "" leaves it unset)
// at its shell, where ownerSets types what its owner would, set sandbox.allow_screen level,
// and waits until it ran.
func deskOwned(ctx context.Context, t *testing.T, token, allowScreen string) (addr string, ownerSets func(t *testing.T, level string)) {
	t.Helper()
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 11, "desk"
	if allowScreen != "" {
		opts.Settings["sandbox.allow_screen"] = allowScreen
	}
	opts.Files = map[string]string{"/e2e.lua": deskProgram, "/said.lua": `print("e2e: the owner set " .. ...)`}
	typed := make(chan string)
	opts.Input = computer.Input(typed)
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerAtPrompt)
	return g.Addr, func(t *testing.T, level string) {
		t.Helper()
		for _, line := range []string{"set sandbox.allow_screen " + level, "said " + level} {
			select {
			case typed <- line:
			case <-ctx.Done():
				t.Fatalf("the computer's shell never asked for a line; transcript:\n%s", c.Output())
			}
		}
		c.WaitFor(ctx, "e2e: the owner set "+level)
	}
}

// TestTheWebConsoleLooksAgainWhenTheOwnerAllowsTheScreen: a private screen's view never
// looked again (the person had to reload once the owner showed it), nor did a view-only
// one's once the owner allowed control. The view looks again by itself, after 2 s doubling
// to 30 s, and at once when the page regains the focus: the private one goes live, viewed
// only, then gains its keys, Type, Paste and Terminate, and a key it sends goes through.
func TestTheWebConsoleLooksAgainWhenTheOwnerAllowsTheScreen(t *testing.T) {
	// It waits for the view's looks, seconds apart, and shares nothing (its own gateway, computer
	// and browser): it runs beside the package's other tests that mostly wait.
	t.Parallel()
	ctx := testContext(t)
	const token = "console-lookagain-9c3d"
	addr, ownerSets := deskOwned(ctx, t, token, "")
	page, until := openDesk(ctx, t, addr, token)
	until(t, "the refusal", `document.getElementById("viewer").classList.contains("private")`)

	// By itself: no reload, no focus.
	ownerSets(t, "view")
	until(t, "the screen, viewed only", `document.getElementById("status").textContent === "Live" &&
		document.getElementById("viewer").classList.contains("view-only") &&
		document.getElementById("screen-text").textContent.includes("e2e: the owner set view")`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[map[string]bool](shownInViewer))
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"screen": true, "touch": false, "paste-form": false, "terminate": false, "screen-text": true,
		"back": true, "viewer-note": true}, shown)

	// At once when the page regains the focus (the person back from the computer).
	ownerSets(t, "control")
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`window.dispatchEvent(new Event("focus"))`))
	require.NoError(t, err)
	until(t, "the controls", `!document.getElementById("viewer").classList.contains("view-only")`)
	shown, err = chromedp.Run(page, chromedp.Evaluate[map[string]bool](shownInViewer))
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"screen": true, "touch": true, "paste-form": true, "terminate": true, "screen-text": true,
		"back": true, "viewer-note": false}, shown)
	require.NoError(t, chromedp.Do(page, chromedp.SendKeys("#type-text", "said typed"), chromedp.Click(`#touch [data-key="enter"]`)))
	until(t, "the typed line run", `document.getElementById("screen-text").textContent.includes("e2e: the owner set typed")`)
	status, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	assert.Equal(t, "Live", status)
}

// TestTheWebConsoleKeepsAnOlderClientsControls: a computer whose client is older than 0.5.15
// answers computer.info without allowed; not reported is not none or view, so its view keeps
// the keys, Type, Paste and Terminate until a refusal says otherwise, as before.
func TestTheWebConsoleKeepsAnOlderClientsControls(t *testing.T) {
	ctx := testContext(t)
	const token = "console-older-2a6f"
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", token)
	connectScreenComputer(ctx, t, g, "11:desk", sandboxPassword)
	page, until := openDesk(ctx, t, g.Addr, token)
	until(t, "the screen", `document.getElementById("status").textContent === "Live"`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[map[string]bool](shownInViewer))
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"screen": true, "touch": true, "paste-form": true, "terminate": true, "screen-text": true,
		"back": true, "viewer-note": false}, shown)
}

// TestTheWebConsoleLooksAtOnceWhenThePersonCameBackDuringALook: the window regaining the
// focus while a view was asking the computer (no wait under way to cut short) was lost, and
// the next look came a backoff later, up to 30 s; it now comes at once. A backoff of 30 s
// against a timer of 1 s: the order of the two, not the machine's speed, decides.
func TestTheWebConsoleLooksAtOnceWhenThePersonCameBackDuringALook(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", "console-cameback-4e1a")
	page, _ := consolePage(ctx, t)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/"), chromedp.WaitVisible("#login")))
	got, err := chromedp.Run(page, chromedp.Evaluate[[]string](`(async () => {
		const visible = document.visibilityState;
		window.dispatchEvent(new Event("focus")); // back, while no look waits
		const looks = [];
		for (let i = 0; i < 2; i++) {
			const v = { abort: new AbortController() };
			looks.push(await Promise.race([lookAgain(v, { ms: 15000 }).then(() => "at once"),
				new Promise((resolve) => setTimeout(() => resolve("a backoff later"), 1000))]));
			v.abort.abort();
		}
		return [visible, ...looks];
	})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, []string{"visible", "at once", "a backoff later"}, got, "the second look has no coming back of its own")
}

// TestTheWebConsoleLooksAgainOnceAViewOnlyComputerSaysSo: a view made view-only by a refused
// key before the computer said what its owner allows (its computer.info not answered in
// time) stayed without looking again when a later computer.info said view: viewOnly returned
// at once for a view already view-only, so the look for control never started. The page's
// api is replaced by an answer of computer.info (a white-box check: making a real
// computer's first computer.info fail and a later one answer is not cheap).
func TestTheWebConsoleLooksAgainOnceAViewOnlyComputerSaysSo(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", "console-saysso-7b2e")
	page, _ := consolePage(ctx, t)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/"), chromedp.WaitVisible("#login")))
	got, err := chromedp.Run(page, chromedp.Evaluate[[]bool](`(async () => {
		const v = { traposId: "7:kitchen", abort: new AbortController() };
		view = v;
		viewOnly(v); // a key refused forbidden; the computer has not said what its owner allows
		const lookingBefore = v.lookingForControl === true;
		api = async () => new Response(JSON.stringify({ ok: true,
			payload: { allowed: { files: "none", exec: false, screen: "view" } } }), { status: 200 });
		await learnAccess(v);
		const looking = v.lookingForControl === true;
		const said = document.getElementById("viewer-note").textContent.includes("this page looks again by itself");
		v.abort.abort();
		return [lookingBefore, looking, said];
	})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, true}, got, "not looking before it said; looking, and saying so, after")
}

// TestTheWebConsoleSaysLiveOnceTheOwnerAllowsControlAgain: a key refused forbidden while the
// owner had made the screen view-only put the refusal in the status (`forbidden: screen.input
// needs sandbox.allow_screen control (it is view); the owner can allow it with: …`). Once the
// owner allowed control again the view got its keys, Paste and Terminate back, and the status
// went on telling the player to ask the owner for what they now had, until a key went
// through. The status says Live with the controls.
func TestTheWebConsoleSaysLiveOnceTheOwnerAllowsControlAgain(t *testing.T) {
	ctx := testContext(t)
	const token = "console-allowagain-3b8e"
	addr, ownerSets := deskOwned(ctx, t, token, "control")
	page, until := openDesk(ctx, t, addr, token)
	until(t, "the prompt", liveAtThePrompt)

	ownerSets(t, "view")
	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.KeyEvent(kb.Enter)))
	until(t, "the refusal", `document.getElementById("status").textContent.startsWith("forbidden: ") &&
		document.getElementById("viewer").classList.contains("view-only")`)

	ownerSets(t, "control")
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](`window.dispatchEvent(new Event("focus"))`))
	require.NoError(t, err)
	until(t, "the controls", `!document.getElementById("viewer").classList.contains("view-only")`)
	status, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	assert.Equal(t, "Live", status, "nothing is refused now, and nothing was typed since")
}

// TestTheWebConsoleSaysLiveOnceARefusedReleaseGoesThrough: a key refused forbidden while the
// screen was view-only took its release with it, which the view sends again (retryReleases).
// Once the owner allowed control, that release went through before the computer said so
// (learnAccess), and gave the view its controls back under the refusal's words, which
// nothing took off: the status told the player to ask the owner for what they had.
// (TestTheWebConsoleSaysLiveOnceTheOwnerAllowsControlAgain failed so on a loaded machine,
// where the owner's two lines took longer than the release's retry.) The page's api answers
// the release; the view is the page's own.
func TestTheWebConsoleSaysLiveOnceARefusedReleaseGoesThrough(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--api-token", "console-releaselive-4d1f")
	page, _ := consolePage(ctx, t)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/"), chromedp.WaitVisible("#login")))
	got, err := chromedp.Run(page, chromedp.Evaluate[[]string](`(async () => {
		const v = Object.assign(newView("11:desk"), { live: true, shownLive: true });
		view = v;
		v.sends = 1; // the key and its release, in one call
		say(v, "forbidden: screen.input needs sandbox.allow_screen control (it is view); the owner can allow it with: set sandbox.allow_screen control");
		note("view-only", "The owner of this computer lets its screen be viewed, not typed on.");
		api = async () => new Response(JSON.stringify({ ok: true, payload: {} }), { status: 200 });
		await sendInput(v, [{ type: "key_up", key: 28 }], 1); // the release, sent again
		const controls = document.getElementById("viewer").classList.contains("view-only") ? "view-only" : "controls";
		v.abort.abort();
		return [controls, document.getElementById("status").textContent === liveWords(v) ? "Live" : document.getElementById("status").textContent];
	})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, []string{"controls", "Live"}, got, "the release went through: the owner allows control, and the refusal no longer holds")
}
