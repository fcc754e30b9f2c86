package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/opencodefake"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"
)

// impostorAtPrompt is what the impostor's program prints at its prompt.
const impostorAtPrompt = "e2e: the impostor at the prompt"

// TestTheOperatorsConsoleOpensNoImpostorOfALinkedComputer: alice's linked 11:desk, and a
// player's computer on the shared password saying hello as 11:desk too (the password is all
// it needs). The operator's web console (loopback without a token: the gateway's own caller)
// lists both, each with its account; the row of alice's opened the impostor's screen, live,
// local's computer winning as that caller's own. Now it shows the gateway's answer naming the
// accounts, and no screen.
func TestTheOperatorsConsoleOpensNoImpostorOfALinkedComputer(t *testing.T) {
	ctx := testContext(t)
	page, until := consolePage(ctx, t)
	dataDir := "--data-dir=" + t.TempDir()
	gatewayCLI(ctx, t, "accounts", "add", "alice", dataDir)
	g := startGateway(t, opencodefake.ClosedPortURL(t), dataDir)
	aliceCred := lastLineOf(gatewayCLI(ctx, t, "credentials", "add", "alice", dataDir))
	for secret, marker := range map[string]string{aliceCred: markerAtPrompt, sandboxPassword: impostorAtPrompt} {
		opts := computerOptions(t, g, secret, "/e2e.lua")
		opts.ID, opts.Label = 11, "desk"
		opts.Settings["sandbox.allow_screen"] = "view"
		opts.Files = map[string]string{"/e2e.lua": `
if not shell.run("sandbox", "health") then error("e2e: not connected", 0) end
print("` + marker + `")
shell.run("shell")
`}
		opts.Input = computer.Input(make(chan string))
		fakecrafttest.StartWithin(t, opts, testTimeout).WaitFor(ctx, marker)
	}

	require.NoError(t, chromedp.Do(page, chromedp.Navigate("http://"+g.Addr+"/console/")))
	until(t, "both in the list", `[...document.querySelectorAll("#computer-list tr")].map(tr => tr.cells[1].textContent).sort().join() === "alice,local"`)
	_, err := chromedp.Run(page, chromedp.Evaluate[bool](
		`[...document.querySelectorAll("#computer-list tr")].find(tr => tr.cells[1].textContent === "alice").querySelector("a").click(); true`))
	require.NoError(t, err)
	until(t, "the gateway's answer, or a screen", `document.getElementById("status").textContent.startsWith("not_connected: ") ||
		document.getElementById("status").textContent === "Live"`)
	state, err := chromedp.Run(page, chromedp.Evaluate[[]any](`[document.getElementById("status").textContent, document.getElementById("screen-text").textContent.includes("`+impostorAtPrompt+`")]`))
	require.NoError(t, err)
	assert.Equal(t, []any{"not_connected: computer 11:desk is connected in several accounts (alice, local): use alice's token to reach alice's; " +
		"no token reaches local's while another account has this traposId connected, since any computer with the shared password may say hello under it: " +
		"give that computer a label of its own in game (label set NAME), or link it (sandbox link) (Log in with a token to give one of those tokens.)", false}, state,
		"the accounts named, not the impostor's screen")
}
