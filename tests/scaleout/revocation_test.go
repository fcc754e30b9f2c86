package scaleout

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer/machine"
	"fakecraft/fakecrafttest"
	"fakecraft/httpapi"

	"trap-sandbox/testkit"

	"tests/internal/harness"
	"tests/internal/repo"
)

// Markers the revoked computer's program prints.
const (
	markerUp   = "e2e: connected"
	markerGone = "e2e: gone:"
)

// revokedProgram waits until the daemon is connected, then until it is not, waits longer than
// two of the daemon's reconnect delays (5 s each, in the computer's scaled time) and shows
// `sandbox status`.
const revokedProgram = harness.WaitConnectedLua + `
print("` + markerUp + `")
while true do
  local st = lib.requestStatus()
  if st ~= nil and not st.connected then
    print("` + markerGone + ` " .. tostring(st.lastError))
    break
  end
  sleep(0.2)
end
sleep(12)
shell.run("sandbox", "status")
`

// daemonComputer is a TrapOS computer with the packages' autostart daemons (the real Lua
// daemon), its sandbox.url and sandbox.password set, running program.
func daemonComputer(t *testing.T, url, password, program string) *fakecrafttest.Computer {
	t.Helper()
	return daemonComputerWith(t, map[string]string{"sandbox.url": url, "sandbox.password": password}, program)
}

// daemonComputerWith is daemonComputer with its settings as given (sandbox.url, .password and
// what its owner allows).
func daemonComputerWith(t *testing.T, settings map[string]string, program string) *fakecrafttest.Computer {
	t.Helper()
	root, err := repo.Root()
	require.NoError(t, err)
	auto, err := machine.Autostart(filepath.Join(root, "packages"), nil)
	require.NoError(t, err)
	return fakecrafttest.StartWithin(t, machine.Options{
		Root:      filepath.Join(root, "trapos"),
		Settings:  settings,
		TimeScale: 4, // the daemon's 5 s reconnect delay takes 1.25 s
		HTTP:      httpapi.Options{AllowPrivate: true},
		Program:   "/e2e.lua",
		Files:     map[string]string{"/e2e.lua": program},
		Autostart: auto,
	}, 3*waitLimit)
}

// cli runs the real binary with args and returns its stdout; it must succeed.
func cli(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, gatewayBin, args...)
	cmd.Env = append(harness.CleanEnv(), "GORACE=atexit_sleep_ms=0")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), errOut.String())
	return out.String()
}

// TestRevocationReachesTheReplicaThatHoldsTheComputer: a computer whose socket is on replica
// B is revoked through replica A (`computers revoke`, alice's token): B closes its socket
// with 4003 revoked, and its daemon (the real Lua daemon) stops trying and says why. A
// credential revoked on the bucket the replicas share (`credentials revoke --nats`, not
// through a gateway) closes its computer's socket on B too.
func TestRevocationReachesTheReplicaThatHoldsTheComputer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	alice := accountsCLI(ctx, t, nats, "accounts", "add", "alice")
	daemonCred := accountsCLI(ctx, t, nats, "credentials", "add", "alice")
	socketCred := accountsCLI(ctx, t, nats, "credentials", "add", "alice")
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")

	c := daemonComputer(t, b.WebSocketURL(), daemonCred, revokedProgram)
	c.WaitFor(ctx, markerUp)
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "b", listComputers(ct, a)["0:"]) },
		waitLimit, testkit.Poll, "A to list the computer on B")

	out := cli(ctx, t, "computers", "revoke", "--url", a.URL(""), "--api-token", alice, "0:")
	assert.Contains(t, out, "computer 0: of alice: credential ")
	assert.Contains(t, out, "; replica b, which holds its socket, closes it (at once, or once it is back on NATS)\n", "A names the replica that closes it")
	c.WaitFor(ctx, markerGone)
	res, err := c.Wait(ctx)
	require.NoError(t, err)
	require.NoError(t, res.Err, c.Output())
	// The terminal wraps at 51 columns: compare words.
	words := strings.Join(strings.Fields(c.Output()), " ")
	assert.Contains(t, words, markerGone+" revoked: this computer's credential was revoked", c.Output())
	assert.Contains(t, words, "connected: false state: revoked traposId: 0:", c.Output())
	assert.Contains(t, words, "fix: this computer's credential was revoked on the gateway; link it again with: sandbox link")
	// Any retry would have reached B within the 12 s the program waited.
	assert.Len(t, regexp.MustCompile(`msg="computer connected" .*accountId=alice traposId=0: `).FindAllString(b.Log(), -1), 1,
		"one hello:\n%s", b.Log())
	assert.NotContains(t, b.Log(), "hello refused: the computer's credential is revoked", "no retry")
	assert.Regexp(t, `msg="computer closed: its credential was revoked" .*traposId=0:\n`, b.Log())
	assert.Regexp(t, `msg="computer disconnected" .*traposId=0: code=4003 byGateway=true reason=revoked\n`, b.Log())

	// The bucket's own command, beside the running replicas.
	s, err := harness.Dial(ctx, b.WebSocketURL(), "8:")
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.MustHello(ctx, socketCred))
	out = cli(ctx, t, "credentials", "revoke", strings.SplitN(socketCred, "_", 3)[1], "--nats", nats.URL)
	assert.Contains(t, out, "the replica that holds its computer closes its socket now")
	ce, err := s.ExpectClose(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4003, ce.Code)
	assert.Equal(t, "revoked", ce.Text)
}

// TestRemovingAnAccountReachesEveryReplica: an account whose computer's socket is on replica
// B is removed through replica A (`accounts remove`, an admin's token): B closes the socket
// with 4003 revoked, the computer's daemon (the real Lua daemon) stops trying and says why,
// A's answer names the computer, and the account's token is refused on every replica. An
// account removed on the bucket the replicas share (`accounts remove --nats`, not through a
// gateway) has its computer's socket on B closed too.
func TestRemovingAnAccountReachesEveryReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	root := accountsCLI(ctx, t, nats, "accounts", "add", "root", "--admin")
	alice := accountsCLI(ctx, t, nats, "accounts", "add", "alice")
	aliceCred := accountsCLI(ctx, t, nats, "credentials", "add", "alice")
	accountsCLI(ctx, t, nats, "accounts", "add", "bob")
	bobCred := accountsCLI(ctx, t, nats, "credentials", "add", "bob")
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")

	c := daemonComputer(t, b.WebSocketURL(), aliceCred, revokedProgram)
	c.WaitFor(ctx, markerUp)
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "b", listComputers(ct, a)["0:"]) },
		waitLimit, testkit.Poll, "A to list the computer on B")

	out := cli(ctx, t, "accounts", "remove", "alice", "--url", a.URL(""), "--api-token", root)
	assert.Equal(t, "account alice (user) removed from the gateway at "+a.URL("")+": 1 API token, 1 computer credential, 0 enrollment keys, 0 approved link codes\n"+
		"closed its connected computers (4003 revoked, their daemons stop): 0:; its tokens are refused from the next request\n", out)
	c.WaitFor(ctx, markerGone)
	res, err := c.Wait(ctx)
	require.NoError(t, err)
	require.NoError(t, res.Err, c.Output())
	words := strings.Join(strings.Fields(c.Output()), " ")
	assert.Contains(t, words, markerGone+" revoked:", c.Output())
	assert.Contains(t, words, "connected: false state: revoked traposId: 0:", c.Output())
	assert.Regexp(t, `msg="computer disconnected" .*traposId=0: code=4003 byGateway=true reason=revoked\n`, b.Log())
	assert.NotContains(t, b.Log(), "ignored a revocation heard on the bus")
	for _, g := range []*harness.Gateway{a, b} {
		status, body := getWithToken(ctx, t, g, alice)
		assert.Equal(t, 401, status, body)
	}

	// The bucket's own command, beside the running replicas.
	s, err := harness.Dial(ctx, b.WebSocketURL(), "8:")
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.MustHello(ctx, bobCred))
	out = cli(ctx, t, "accounts", "remove", "bob", "--nats", nats.URL)
	assert.Contains(t, out, "account bob (user) removed from the NATS key-value bucket trapos_accounts: 1 API token, 1 computer credential")
	assert.Contains(t, out, "the replicas that hold its computers close them now (4003 revoked)")
	ce, err := s.ExpectClose(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4003, ce.Code)
	assert.Equal(t, "revoked", ce.Text)
}
