package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"

	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// The link flow end to end (docs/protocol.md, "Linking a computer"): a fakecraft computer runs
// the real `sandbox link` against the real gateway with an account store; the account holder
// approves the code with the real CLI; the player types y; the daemon says hello with the
// credential it saved, as alice's computer, and still does after the gateway restarts.

// linkCode is the code line `sandbox link` prints (RFC 8628's base-20 alphabet, XXXX-XXXX).
var linkCode = regexp.MustCompile(`Link code: ([BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}) \(valid 10 min\)`)

// linkProgram links the computer, waits for the daemon to say hello with what it saved, shows
// its status, and holds the computer (and its daemon's socket) until one more line is typed.
const linkProgram = `
shell.run("sandbox", ...)
local status = require('/apis/libsandbox').awaitConnection(60)
print("account after link: " .. tostring(status and status.account))
shell.run("sandbox", "status")
print("holding")
read()
`

// statusProgram shows the daemon's status once it is connected.
const statusProgram = `
local status = require('/apis/libsandbox').awaitConnection(60)
print("connected after boot: " .. tostring(status and status.connected))
shell.run("sandbox", "status")
`

// startLinking starts computer id:label on g, its disk overlay, running linkProgram with args
// after `sandbox link`; the player's lines are typed through input.
func startLinking(t *testing.T, g *harness.Gateway, id int, label, overlay string, args ...string) (c *fakecrafttest.Computer, input chan<- string) {
	t.Helper()
	lines := make(chan string)
	opts := computerOptions(t, g, sandboxPassword, "/link.lua", append([]string{"link"}, args...)...)
	opts.ID, opts.Label = id, label
	opts.Overlay = overlay
	opts.Files = map[string]string{"/link.lua": linkProgram}
	opts.Input = computer.Input(lines)
	return fakecrafttest.StartWithin(t, opts, testTimeout), lines
}

// codeShown waits until c's sandbox link waits for its code's approval and returns the code.
func codeShown(ctx context.Context, t *testing.T, c *fakecrafttest.Computer) string {
	t.Helper()
	c.WaitFor(ctx, "Waiting... (Ctrl-T to cancel)")
	m := linkCode.FindStringSubmatch(c.Output())
	require.NotNil(t, m, "no code line; transcript:\n%s", c.Output())
	return m[1]
}

// runGatewayCLI runs the gateway binary's subcommand args and returns its stdout, stderr and
// exit code.
func runGatewayCLI(ctx context.Context, t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, gatewayBin, args...)
	// A race-built binary otherwise sleeps 1 s at exit.
	cmd.Env = append(harness.CleanEnv(), "GORACE=atexit_sleep_ms=0")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return out.String(), errOut.String(), exitErr.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), errOut.String(), 0
}

// gatewayCLI is runGatewayCLI for a command that must succeed: its stdout.
func gatewayCLI(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := runGatewayCLI(ctx, t, args...)
	require.Equal(t, 0, code, "trap-sandbox %s: %s%s", strings.Join(args, " "), errOut, out)
	return out
}

// lastLineOf is the last non-empty line of out (where the CLI prints a secret).
func lastLineOf(out string) string {
	ls := lines(out)
	if len(ls) == 0 {
		return ""
	}
	return ls[len(ls)-1]
}

// TestLinkAComputerToAnAccount: the code flow (approve, accept, connected as alice, again
// after a gateway restart), a player who declines (the code is spent), and an enrollment key
// (no code, no question).
func TestLinkAComputerToAnAccount(t *testing.T) {
	ctx := testContext(t)
	dataDir := "--data-dir=" + t.TempDir()
	alice := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "alice", dataDir))
	require.True(t, strings.HasPrefix(alice, "tsa_"), "alice's token: %q", alice)
	ocURL := opencodefake.ClosedPortURL(t)
	g := startGateway(t, ocURL, dataDir)
	top := t // the gateway restarted in a subtest serves the later ones too

	t.Run("a code approved on the host and accepted by the player", func(t *testing.T) {
		disk := t.TempDir()
		c, input := startLinking(t, g, 7, "kitchen", disk)
		code := codeShown(ctx, t, c)
		assert.Contains(t, lines(c.Output()), "  trap-sandbox link approve "+code)

		approved := gatewayCLI(ctx, t, "link", "approve", code, "--url="+g.URL(""), "--api-token="+alice)
		assert.Contains(t, approved, "approved computer 7:kitchen")
		typeLine(ctx, t, input, "y") // read() asks only once the code is approved
		c.WaitFor(ctx, "holding")
		out := c.Output()
		assert.Contains(t, out, "Approved by account alice")
		assert.Contains(t, out, "Link this computer to alice? [y/N]")
		assert.Contains(t, out, "Linked to alice.")
		assert.Contains(t, lines(out), "account after link: alice", out)
		assert.Contains(t, lines(out), "account: alice", out)
		assert.NotContains(t, out, "tsc_", "the credential is never shown")

		listed := gatewayCLI(ctx, t, "computers", "--url="+g.URL(""), "--api-token="+alice)
		assert.Contains(t, listed, "7:kitchen", "alice's token lists the linked computer")
		assert.Contains(t, listed, "alice")
		typeLine(ctx, t, input, "")
		_, err := c.Wait(ctx)
		require.NoError(t, err)

		// The credential is on the computer's disk: after a gateway restart (the same data
		// directory, the same address) it boots into alice's account again.
		require.NoError(t, g.Stop())
		g = harness.Start(top, gatewayBin, harness.Options{Listen: g.Addr,
			Args: []string{"--password", sandboxPassword, "--opencode-url", ocURL, dataDir}})
		again := computerOptions(t, g, sandboxPassword, "/status.lua")
		again.ID, again.Label = 7, "kitchen"
		again.Overlay = disk
		again.Files = map[string]string{"/status.lua": statusProgram}
		ok, out := runCommand(ctx, t, again)
		assert.True(t, ok, out)
		assert.Contains(t, lines(out), "connected after boot: true", out)
		assert.Contains(t, lines(out), "account: alice", out)
	})

	t.Run("a player who declines stays unlinked and the code is spent", func(t *testing.T) {
		c, input := startLinking(t, g, 9, "gate", t.TempDir())
		code := codeShown(ctx, t, c)
		// Approved by a token that is not the player's choice: the player says no.
		gatewayCLI(ctx, t, "link", "approve", code, "--url="+g.URL(""), "--api-token="+alice)
		typeLine(ctx, t, input, "n")
		c.WaitFor(ctx, "holding")
		out := c.Output()
		assert.Contains(t, lines(out), "Not linked.", out)
		assert.Contains(t, lines(out), "account: local", "still on the shared password: %s", out)
		_, errOut, status := runGatewayCLI(ctx, t, "link", "approve", code, "--url="+g.URL(""), "--api-token="+alice)
		assert.NotEqual(t, 0, status, "a declined code cannot be approved again")
		assert.Contains(t, errOut, "link_invalid")
		typeLine(ctx, t, input, "")
		_, err := c.Wait(ctx)
		require.NoError(t, err)
	})

	t.Run("Ctrl-T at the question declines the code, as n does", func(t *testing.T) {
		c, input := startLinking(t, g, 11, "barn", t.TempDir())
		code := codeShown(ctx, t, c)
		gatewayCLI(ctx, t, "link", "approve", code, "--url="+g.URL(""), "--api-token="+alice)
		// Printed right before the question, with no yield between: the Ctrl-T reaches read().
		c.WaitFor(ctx, "Approved by account alice.")
		c.QueueString("terminate")
		c.WaitFor(ctx, "holding")
		out := c.Output()
		// On a row of its own, saying what became of the code (it said "Cancelled." after the
		// question's prompt).
		assert.Contains(t, strings.Join(lines(out), " "),
			"Link this computer to alice? [y/N] Terminated: the code was declined; this computer is not linked.", out)
		assert.Contains(t, lines(out), "Link this computer to alice? [y/N]", "the question's row ends before it: %s", out)
		assert.Contains(t, lines(out), "account: local", "still on the shared password: %s", out)
		// The gateway heard the decline: the approver is told the player said no, not that the
		// computer still asks.
		_, errOut, status := runGatewayCLI(ctx, t, "link", "approve", code, "--url="+g.URL(""), "--api-token="+alice)
		assert.NotEqual(t, 0, status, "a declined code cannot be approved again")
		assert.Contains(t, errOut, "declined on the computer")
		typeLine(ctx, t, input, "")
		_, err := c.Wait(ctx)
		require.NoError(t, err)
	})

	t.Run("a code whose account is removed before the player answers says so", func(t *testing.T) {
		bob := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "bob", dataDir))
		c, input := startLinking(t, g, 10, "mill", t.TempDir())
		gatewayCLI(ctx, t, "link", "approve", codeShown(ctx, t, c), "--url="+g.URL(""), "--api-token="+bob)
		c.WaitFor(ctx, "Approved by account bob.")
		removed := gatewayCLI(ctx, t, "accounts", "remove", "bob", dataDir)
		assert.Contains(t, removed, "1 approved link code")
		typeLine(ctx, t, input, "y") // read() asks only once the code is approved
		c.WaitFor(ctx, "holding")
		out := strings.Join(lines(c.Output()), " ")
		assert.Contains(t, out, "Link this computer to bob? [y/N]", out)
		assert.Contains(t, out, "the account that approved the link code is gone (removed since)", out)
		assert.NotContains(t, out, "unknown link code", out)
		assert.Contains(t, out, "account: local", "still on the shared password: %s", out)
		typeLine(ctx, t, input, "")
		_, err := c.Wait(ctx)
		require.NoError(t, err)
	})

	t.Run("a code whose approving token is revoked before the player answers says so", func(t *testing.T) {
		laptop := lastLineOf(gatewayCLI(ctx, t, "tokens", "add", "alice", "laptop", dataDir))
		c, input := startLinking(t, g, 12, "loft", t.TempDir())
		gatewayCLI(ctx, t, "link", "approve", codeShown(ctx, t, c), "--url="+g.URL(""), "--api-token="+laptop)
		c.WaitFor(ctx, "Approved by account alice.")
		gatewayCLI(ctx, t, "tokens", "revoke", strings.Split(laptop, "_")[1], dataDir) // it leaked
		typeLine(ctx, t, input, "y")
		c.WaitFor(ctx, "holding")
		out := strings.Join(lines(c.Output()), " ")
		assert.Contains(t, out, "The gateway refused the code (link_invalid): the API token that approved the link code was revoked since it approved it; "+
			"run sandbox link again for a new code, and have it approved again with a token that is not revoked", out)
		assert.Contains(t, out, "account: local", "still on the shared password: %s", out)
		typeLine(ctx, t, input, "")
		_, err := c.Wait(ctx)
		require.NoError(t, err)
	})

	t.Run("an enrollment key links at once", func(t *testing.T) {
		key := lastLineOf(gatewayCLI(ctx, t, "link", "key", "--account", "alice", dataDir))
		require.True(t, strings.HasPrefix(key, "tsk_"), "the key: %q", key)
		c, input := startLinking(t, g, 8, "farm", t.TempDir(), key)
		c.WaitFor(ctx, "holding")
		out := c.Output()
		assert.Contains(t, lines(out), "Linked to alice.", out)
		assert.NotContains(t, out, "[y/N]", "a key asks nothing")
		assert.Contains(t, lines(out), "account: alice", out)
		assert.NotContains(t, out, "tsc_")
		typeLine(ctx, t, input, "")
		_, err := c.Wait(ctx)
		require.NoError(t, err)
	})
}

// relinkProgram links the computer with the key it is given, runs `sandbox link` again while
// the daemon is connected as the account, waits for the host to revoke its credential (the
// daemon's socket closes with 4003), and runs `sandbox link` once more.
const relinkProgram = `
shell.run("sandbox", "link", ...)
local status = require('/apis/libsandbox').awaitConnection(60)
print("account after link: " .. tostring(status and status.account))
shell.run("sandbox", "link")
print("refused; revoke it now")
repeat
  local _, _, _, code = os.pullEvent("websocket_closed")
until code == 4003
shell.run("sandbox", "link")
print("holding")
read()
`

// TestLinkedComputerLinksAnewOnlyOnceRevoked: `sandbox link` on a computer connected with its
// account's credential is refused, naming the host's command, and opens no session; once that
// command has revoked the credential, `sandbox link` shows a code, and the account approves
// it (its old credential for that computer id no longer stands in the way). The gateway
// proved itself to the linked computer, so the link session asks for its proof first: it
// gets the gateway's proved refusal of the revoked credential, and links on that socket (a
// gateway that gave no proof with it linked nothing: client 0.5.36).
func TestLinkedComputerLinksAnewOnlyOnceRevoked(t *testing.T) {
	ctx := testContext(t)
	dataDir := "--data-dir=" + t.TempDir()
	alice := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "alice", dataDir))
	key := lastLineOf(gatewayCLI(ctx, t, "link", "key", "--account", "alice", dataDir))
	g := startGateway(t, opencodefake.ClosedPortURL(t), dataDir)

	input := make(chan string)
	opts := computerOptions(t, g, sandboxPassword, "/relink.lua", key)
	opts.ID, opts.Label = 7, "kitchen"
	opts.Overlay = t.TempDir()
	opts.Files = map[string]string{"/relink.lua": relinkProgram}
	opts.Input = computer.Input(input)
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, "refused; revoke it now")
	out := c.Output()
	assert.Contains(t, lines(out), "account after link: alice", out)
	refusal := append(screen("This computer is linked to alice already. To link it anew, first revoke its credential on the host:"),
		"  trap-sandbox computers revoke 7:kitchen")
	assert.Contains(t, strings.Join(lines(out), "\n"), strings.Join(refusal, "\n"), out)
	assert.NotContains(t, out, "Link code:", "a linked computer asks for no code")

	// The command as the refusal names it, with the account's token.
	revoked := gatewayCLI(ctx, t, "computers", "revoke", "7:kitchen", "--url="+g.URL(""), "--api-token="+alice)
	assert.Contains(t, revoked, "computer 7:kitchen of alice: credential")
	c.WaitFor(ctx, "Waiting... (Ctrl-T to cancel)")
	m := linkCode.FindStringSubmatch(c.Output())
	require.NotNil(t, m, "no code line; transcript:\n%s", c.Output())
	approved := gatewayCLI(ctx, t, "link", "approve", m[1], "--url="+g.URL(""), "--api-token="+alice)
	assert.Contains(t, approved, "approved computer 7:kitchen")
	typeLine(ctx, t, input, "y")
	c.WaitFor(ctx, "holding")
	out = c.Output()
	assert.Contains(t, out, "Link this computer to alice? [y/N]")
	assert.Contains(t, g.Log(), `msg="prove refused: the computer's credential is revoked"`, "the link session asked for the proof")
	assert.NotContains(t, out, "tsc_", "the credential is never shown")
	typeLine(ctx, t, input, "")
	_, err := c.Wait(ctx)
	require.NoError(t, err)
}

// relinkWithKeyProgram links the computer with the key it is given, waits for the host to
// revoke its credential (the daemon's socket closes with 4003), and links it with the key again.
const relinkWithKeyProgram = `
local key = ...
shell.run("sandbox", "link", key)
require('/apis/libsandbox').awaitConnection(60)
print("linked; revoke it now")
repeat
  local _, _, _, code = os.pullEvent("websocket_closed")
until code == 4003
shell.run("sandbox", "link", key)
local status = require('/apis/libsandbox').awaitConnection(60)
print("account after relink: " .. tostring(status and status.account))
`

// TestARevokedComputerLinksAgainWithAKey: the key's way back, as the code's above: a
// computer whose gateway proved itself to it links again with an enrollment key once its
// credential was revoked, through the gateway's proved refusal of that credential. A key is a
// secret, and goes only to a server that proved itself: client 0.5.35 refused it here ("a key
// goes only to a server that proves itself: run sandbox link without it for a code").
func TestARevokedComputerLinksAgainWithAKey(t *testing.T) {
	ctx := testContext(t)
	dataDir := "--data-dir=" + t.TempDir()
	alice := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "alice", dataDir))
	key := lastLineOf(gatewayCLI(ctx, t, "link", "key", "--account", "alice", "--uses", "2", dataDir))
	g := startGateway(t, opencodefake.ClosedPortURL(t), dataDir)

	opts := computerOptions(t, g, sandboxPassword, "/relink.lua", key)
	opts.ID, opts.Label = 7, "kitchen"
	opts.Overlay = t.TempDir()
	opts.Files = map[string]string{"/relink.lua": relinkWithKeyProgram}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, "linked; revoke it now")
	record, err := os.ReadFile(filepath.Join(opts.Overlay, gatewayProofsFile))
	require.NoError(t, err, "the gateway proved itself to the linked computer")
	assert.Contains(t, string(record), g.WebSocketURL())

	gatewayCLI(ctx, t, "computers", "revoke", "7:kitchen", "--url="+g.URL(""), "--api-token="+alice)
	_, err = c.Wait(ctx)
	require.NoError(t, err)
	out := c.Output()
	assert.Contains(t, lines(out), "account after relink: alice", out)
	assert.Equal(t, 2, strings.Count(out, "Linked to alice."), out)
	assert.NotContains(t, out, "Not linked", out)
	assert.Contains(t, g.Log(), `msg="prove refused: the computer's credential is revoked"`, "the link session asked for the proof")
}

// typeLine types line on the computer once it reads one.
func typeLine(ctx context.Context, t *testing.T, input chan<- string, line string) {
	t.Helper()
	select {
	case input <- line:
	case <-ctx.Done():
		t.Fatalf("the computer never asked for a line (%q): %v", line, ctx.Err())
	}
}

// TestACodeAskedForBeforeARestartIsNotApproved: the gateway stops while `sandbox link` waits
// for its code's approval; the player reads that the session closed and to run it again once
// the gateway is back (not at once: it is down), which its connected daemon's status shows, and
// the account holder who approves the old code on the restarted gateway reads the same, not
// that the computer asks its player (nobody could accept: a code is its socket's).
func TestACodeAskedForBeforeARestartIsNotApproved(t *testing.T) {
	ctx := testContext(t)
	dataDir := "--data-dir=" + t.TempDir()
	alice := lastLineOf(gatewayCLI(ctx, t, "accounts", "add", "alice", dataDir))
	ocURL := opencodefake.ClosedPortURL(t)
	g := startGateway(t, ocURL, dataDir)

	opts := computerOptions(t, g, sandboxPassword, "/link.lua", "link")
	opts.ID, opts.Label = 7, "kitchen"
	opts.Files = map[string]string{"/link.lua": `shell.run("sandbox", ...) print("link ended")`}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, "Waiting... (Ctrl-T to cancel)")
	m := linkCode.FindStringSubmatch(c.Output())
	require.NotNil(t, m, "no code line; transcript:\n%s", c.Output())

	require.NoError(t, g.Stop())
	c.WaitFor(ctx, "link ended")
	assert.Contains(t, strings.Join(lines(c.Output()), " "), "Link session closed: the gateway stopped (going away); run sandbox link again once it is back (sandbox status shows when it is connected)", c.Output())
	g = harness.Start(t, gatewayBin, harness.Options{Listen: g.Addr,
		Args: []string{"--password", sandboxPassword, "--opencode-url", ocURL, dataDir}})

	out, errOut, code := runGatewayCLI(ctx, t, "link", "approve", m[1], "--url="+g.URL(""), "--api-token="+alice)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, errOut, "computer 7:kitchen, which showed this code, lost its connection when the gateway restarted; run sandbox link on it again for a new code")
	_, err := c.Wait(ctx)
	require.NoError(t, err)
}

// TestALinkSessionEvictedForRoomSaysTheGatewayIsBusy: a gateway at its connection cap makes
// room for a newcomer by closing its oldest link session (docs/protocol.md, Admission). The
// player had said hello and waited for the code's approval, and read "no hello in time": the
// words of a silent socket's eviction. They read that the gateway is busy, and to run sandbox
// link again.
func TestALinkSessionEvictedForRoomSaysTheGatewayIsBusy(t *testing.T) {
	ctx := testContext(t)
	dataDir := "--data-dir=" + t.TempDir()
	gatewayCLI(ctx, t, "accounts", "add", "alice", dataDir)
	// Room for the computer's daemon and its link session, not one socket more.
	g := startGateway(t, opencodefake.ClosedPortURL(t), dataDir, "--max-connections=2")

	opts := computerOptions(t, g, sandboxPassword, "/link.lua")
	opts.ID, opts.Label = 7, "kitchen"
	// The daemon's socket is connected first: an authenticated computer is never evicted.
	opts.Files = map[string]string{"/link.lua": `
require('/apis/libsandbox').awaitConnection(60)
shell.run("sandbox", "link")
print("link ended")`}
	c := fakecrafttest.StartWithin(t, opts, testTimeout)
	c.WaitFor(ctx, "Waiting... (Ctrl-T to cancel)")

	newcomer, resp, err := websocket.DefaultDialer.DialContext(ctx, g.WebSocketURL(), nil)
	require.NoError(t, err)
	resp.Body.Close()
	t.Cleanup(func() { newcomer.Close() })
	c.WaitFor(ctx, "link ended")
	out := strings.Join(lines(c.Output()), " ")
	assert.Contains(t, out, "The gateway is busy: it closed the link session to make room for newer connections. Run sandbox link again", out)
	assert.NotContains(t, out, "no hello in time", out)
	_, err = c.Wait(ctx)
	require.NoError(t, err)
}
