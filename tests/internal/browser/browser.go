// Package browser drives the web console in a real headless Chromium, for the tests of every
// package that serves it (tests/e2e: one gateway; tests/scaleout: a replica).
package browser

import (
	"context"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// ChromiumPath finds a Chromium to drive; CI installs Debian's (.ci/run). Without one the test
// is skipped, naming how to install it.
func ChromiumPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("the web console's browser test needs Chromium (apt-get install -y chromium; .ci/run installs it): none on PATH")
	return ""
}

// ConsolePage is a headless Chromium page for the web console, in a browser started with the
// options extra too; the test's cleanup closes it. until waits for a JavaScript condition on
// the page, and on failure says what the page showed: its status and the screen as text.
func ConsolePage(ctx context.Context, t *testing.T, extra ...chromedp.ExecAllocatorOption) (page context.Context, until func(t *testing.T, what, js string)) {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		// A page gone back to is loaded anew, as a closed tab reopened is (never from memory).
		chromedp.Flag("disable-back-forward-cache", true),
		chromedp.UserDataDir(t.TempDir()),
	}, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	page, closePage := chromedp.NewContext(alloc)
	t.Cleanup(closePage)
	return page, func(t *testing.T, what, js string) {
		t.Helper()
		_, err := chromedp.Run(page, chromedp.Poll[bool](js))
		if err != nil {
			shown, _ := chromedp.Run(page, chromedp.Evaluate[[]string](`[document.getElementById("status").textContent,
				document.getElementById("screen-text").textContent]`))
			require.NoError(t, err, "waiting for %s; the page showed %q", what, shown)
		}
	}
}
