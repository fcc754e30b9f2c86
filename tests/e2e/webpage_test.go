package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// attackPage is another site's page, opened in the operator's browser on the gateway's host.
// It tries each way a page reaches a gateway on 127.0.0.1 that has no password and no API
// token (a single-player world's): it opens the computers' WebSocket and says hello as the
// player's computer 0:, answering whatever the host then asks it; it posts a lua.exec to the
// host API as a form would (text/plain, no CORS consent needed); and it sets window.done.
const attackPage = `<!doctype html><script>
const gateway = "127.0.0.1:%s";
window.ws = "";
const socket = new Promise(resolve => {
  const ws = new WebSocket("ws://" + gateway + "/trapos/ws");
  ws.onopen = () => ws.send(JSON.stringify({event: "computer_request", traposSenderId: "0:", messageId: "page-hello",
    type: "hello", payload: {traposId: "0:", secret: ""}}));
  ws.onmessage = e => {
    const f = JSON.parse(e.data);
    if (f.messageId === "page-hello") { window.ws = "hello answered ok=" + f.ok; resolve(); return; }
    if (f.event === "gateway_request") ws.send(JSON.stringify({event: "computer_response", traposSenderId: "0:",
      messageId: f.messageId, type: f.type, ok: true, payload: {traposId: "0:", by: "the web page"}}));
  };
  ws.onclose = e => { window.ws += " closed " + e.code; resolve(); };
});
const csrf = fetch("http://" + gateway + "/trapos/computers/0%%3A/requests", {method: "POST", mode: "no-cors",
  headers: {"Content-Type": "text/plain"}, body: JSON.stringify({type: "lua.exec", payload: {code: "return 1"}})})
  .then(() => "answered", e => "failed: " + e);
Promise.all([socket, csrf]).then(([, c]) => { window.csrf = c; window.done = true; });
</script>`

// TestAWebPageInTheOperatorsBrowserReachesNoComputer: a page of another site, in a real
// browser on the gateway's host, neither takes the place of the player's computer on the
// computers' WebSocket (Chromium sends its Origin, which no computer sends: 403, logged), nor
// gets a request to it through the host API, nor reads the API by rebinding a name of its own
// to 127.0.0.1. The player's computer keeps its socket and answers the host itself.
func TestAWebPageInTheOperatorsBrowserReachesNoComputer(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t, "evil.test", "rebind.test")
	g := harness.Start(t, gatewayBin, harness.Options{Args: []string{"--opencode-url", opencodefake.ClosedPortURL(t)}})

	player, err := harness.Dial(ctx, g.WebSocketURL(), "0:")
	require.NoError(t, err)
	t.Cleanup(func() { _ = player.Close() })
	require.NoError(t, player.MustHello(ctx, ""))
	var mu sync.Mutex
	var asked []string // the types the host sent the player's computer
	go func() {
		for {
			f, err := player.Next(ctx)
			if err != nil {
				return
			}
			if f.Event != harness.EventGatewayRequest {
				continue
			}
			mu.Lock()
			asked = append(asked, f.Type)
			mu.Unlock()
			_ = player.WriteJSON(map[string]any{"event": harness.EventComputerResponse, "traposSenderId": "0:",
				"messageId": f.MessageID, "type": f.Type, "ok": true, "payload": map[string]any{"traposId": "0:", "by": "the player"}})
		}
	}()

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, attackPage, g.Port())
	}))
	t.Cleanup(site.Close)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://evil.test:"+site.URL[strings.LastIndex(site.URL, ":")+1:]+"/")))
	until(t, "the page's attempts to end", `window.done === true`)
	shown, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[window.ws, window.csrf]`))
	require.NoError(t, err)
	assert.Equal(t, " closed 1006", shown[0], "the page's socket was refused before any frame")
	assert.Equal(t, "answered", shown[1], "the API answered the page's post (a refusal the page cannot read)")
	require.NoError(t, g.WaitLog(ctx, `msg="refused a computer socket opened by a web page`), g.Log())
	assert.Contains(t, g.Log(), "origin=http://evil.test:")

	// A page on a name of its own that resolves to 127.0.0.1 (DNS rebinding) is same-origin
	// with the gateway, and still reads nothing of the API.
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://rebind.test:"+g.Port()+"/console/")))
	status, err := chromedp.Run(page, chromedp.Evaluate[int](`fetch("/trapos/computers").then(r => r.status)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, status)

	mu.Lock()
	assert.Empty(t, asked, "the host asked the player's computer nothing on the page's behalf")
	mu.Unlock()
	code, answer := postRequest(ctx, t, g, "0:", `{"type":"ping"}`)
	require.Equal(t, http.StatusOK, code, "%+v", answer.Error)
	assert.Equal(t, "the player", answer.Payload["by"], "the player's computer kept its socket")
}

// TestTheWebConsoleShowsAHostileLabelAndScreenAsText: a player names their computer with HTML
// (a name tag sets any label) and draws HTML on its screen; the operator's web console shows
// both as the text they are, in the list, the view's title and the screen, and makes no
// element of them (the page's CSP would stop an inline handler too: this holds without it).
func TestTheWebConsoleShowsAHostileLabelAndScreenAsText(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	const id = `7:<b>x<img src=x onerror="document.title='pwned'">` // its screen shows id[2:5], "<b>"
	c := connectScreenComputer(ctx, t, g, id, sandboxPassword)

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/")))
	const noMarkup = `document.querySelectorAll("b, img").length === 0 && document.title !== "pwned"`
	until(t, "the label in the list, as text", `[...document.querySelectorAll("#computer-list a")].some(a => a.textContent === `+jsString(t, id)+`)`)
	until(t, "no element made of the label", noMarkup)
	require.NoError(t, chromedp.Do(page, chromedp.Click(`#computer-list a`)))
	until(t, "the view's title, as text", `document.getElementById("viewer-id").textContent === `+jsString(t, id))
	select {
	case <-c.watch:
	case <-ctx.Done():
		t.Fatal("no computer was asked for its screen")
	}
	until(t, "the screen's <b>, as text", `document.getElementById("screen-text").textContent.startsWith("<b>")`)
	until(t, "no element made of the label or the screen", noMarkup)
}

// openerPage is another site's page that opens the web console of the gateway on 127.0.0.1
// (port %s) at the player's computer 7:door, on a click (a link "see your gateway"), and keeps
// the window's handle: with it a page may navigate that window at any moment, so while the
// operator types on the door's screen it turns the console to its own player's computer 9:evil
// (a fragment change the console follows), which gets what is typed next.
const openerPage = `<!doctype html><button id="open" onclick="window.w = window.open('http://127.0.0.1:%[1]s/console/#/computer/7%%3Adoor')">open</button>`

// TestAWebPageCannotDriveAConsoleItOpened: the console's page says Cross-Origin-Opener-Policy
// same-origin, so a window another site's page opened on it is no longer that page's to reach:
// its handle reads closed, the console has no opener, and the page's navigation to another
// computer's view changes nothing. Without it the page kept a handle to the operator's console.
func TestAWebPageCannotDriveAConsoleItOpened(t *testing.T) {
	ctx := testContext(t)
	page, _ := consolePage(ctx, t, "evil.test")
	g := startGateway(t, opencodefake.ClosedPortURL(t))
	door := connectScreenComputer(ctx, t, g, "7:door", sandboxPassword)
	connectScreenComputer(ctx, t, g, "9:evil", sandboxPassword) // the page's player's own

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, openerPage, g.Port())
	}))
	t.Cleanup(site.Close)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://evil.test:"+site.URL[strings.LastIndex(site.URL, ":")+1:]+"/")))
	opened := chromedp.WaitNewTarget(page, func(i *target.Info) bool { return strings.Contains(i.URL, "/console/") })
	require.NoError(t, chromedp.Do(page, chromedp.Click("#open")))
	var popupID target.ID
	select {
	case popupID = <-opened:
	case <-ctx.Done():
		t.Fatal("the page opened no console window")
	}
	popup, closePopup := chromedp.NewContext(page, chromedp.WithTargetID(popupID))
	t.Cleanup(closePopup)
	select {
	case <-door.watch:
	case <-ctx.Done():
		t.Fatal("the console the page opened did not open 7:door's screen")
	}
	_, err := chromedp.Run(popup, chromedp.Poll[bool](`document.getElementById("viewer-id").textContent === "7:door"`))
	require.NoError(t, err, "the console shows 7:door")

	severed, err := chromedp.Run(page, chromedp.Evaluate[bool](`window.w.closed`))
	require.NoError(t, err)
	assert.True(t, severed, "the page's handle to the console reads closed")
	noOpener, err := chromedp.Run(popup, chromedp.Evaluate[bool](`window.opener === null`))
	require.NoError(t, err)
	assert.True(t, noOpener, "the console has no opener")
	_, err = chromedp.Run(page, chromedp.Evaluate[bool](`try { window.w.location = "http://127.0.0.1:`+g.Port()+`/console/#/computer/9%3Aevil"; } catch (e) {} true`))
	require.NoError(t, err)
	hash, err := chromedp.Run(popup, chromedp.Evaluate[string](`location.hash`))
	require.NoError(t, err)
	assert.Equal(t, "#/computer/7%3Adoor", hash, "the page's navigation reached the console")
}
