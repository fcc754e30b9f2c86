package e2e

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"
)

// chromiumPath finds a Chromium to drive; CI installs Debian's (.ci/run).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("the web console's browser test needs Chromium (apt-get install -y chromium; .ci/run installs it): none on PATH")
	return ""
}

// TestTheWebConsoleShowsAndDrivesAComputer drives the web console in a real headless
// browser: it logs in with the API token, opens a fakecraft computer, sees its prompt, types
// ls and sees the listing.
func TestTheWebConsoleShowsAndDrivesAComputer(t *testing.T) {
	browser := chromiumPath(t)
	ctx := testContext(t)
	const token = "console-token-7f3a"
	g := startGateway(t, opencodefake.Start(t, opencodefake.Options{}).URL, "--api-token", token)
	opts := computerOptions(t, g, sandboxPassword, "/e2e.lua")
	opts.ID, opts.Label = 11, "desk"
	opts.Settings["sandbox.allow_screen"] = "control"
	opts.Files = map[string]string{"/e2e.lua": deskProgram, "/door.lua": doorProgram}
	opts.Input = computer.Input(make(chan string))
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, markerAtPrompt)

	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()))
	defer cancelAlloc()
	page, closePage := chromedp.NewContext(alloc)
	defer closePage()

	// until waits for a JavaScript condition on the page.
	until := func(t *testing.T, what, js string) {
		t.Helper()
		_, err := chromedp.Run(page, chromedp.Poll[bool](js))
		require.NoError(t, err, "waiting for %s", what)
	}
	screenText := func() string {
		s, _ := chromedp.Run(page, chromedp.Text("#screen-text"))
		return s
	}

	require.NoError(t, chromedp.Do(page,
		chromedp.Navigate("http://"+g.Addr+"/console/"),
		chromedp.WaitVisible("#login"),
		chromedp.SendKeys("#token", token),
		chromedp.Click("#login button"),
	), "the page loads without the token and asks for it")
	until(t, "the computer in the list", `[...document.querySelectorAll("#computer-list a")].some(a => a.textContent === "`+deskTraposID+`")`)
	require.NoError(t, chromedp.Do(page, chromedp.Click(`#computer-list a`)))
	until(t, "the prompt", `document.getElementById("screen-text").textContent.includes("`+markerAtPrompt+`")`)
	require.True(t, strings.HasSuffix(screenText(), "\n>"), "the prompt is the last row:\n%s", screenText())

	require.NoError(t, chromedp.Do(page, chromedp.Focus("#screen"), chromedp.SendKeys("#screen", "ls\r")))
	until(t, "the listing", `document.getElementById("screen-text").textContent.includes("door.lua e2e.lua")`)
	require.Contains(t, screenText(), "> ls\n")
}
