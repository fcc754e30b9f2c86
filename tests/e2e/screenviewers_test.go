package e2e

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// TestTheWebConsoleWaitsForItsAccountsScreenPlace: with --max-screen-viewers=1, a stream of
// the host's (loopback, the account local) holds local's one place, so the view's own stream
// is refused busy (429, Retry-After: 1). The view says why and that it asks again, and shows
// the screen once the other stream is closed.
func TestTheWebConsoleWaitsForItsAccountsScreenPlace(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	g := startGateway(t, opencodefake.ClosedPortURL(t), "--max-screen-viewers=1")
	connectConsoleComputer(ctx, t, g, "14:rig", consoleComputerHooks{screen: rigScreen})

	held, leave := context.WithCancel(ctx)
	defer leave()
	req, err := http.NewRequestWithContext(held, http.MethodGet, "http://"+g.Addr+"/trapos/computers/14:rig/screen", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "event: frame"), "the host's stream holds the place: %q", line)

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/#/computer/14%3Arig")))
	until(t, "the busy answer", `document.getElementById("status").textContent.startsWith("busy: account local already holds 1 screen waits and streams at once")`)
	shown, err := chromedp.Run(page, chromedp.Text("#status"))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(shown, "(trying again)"), "the view says it asks again: %q", shown)

	leave()
	until(t, "the view live once the host's stream is closed", rigLive)
}
