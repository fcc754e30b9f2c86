package scaleout

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"

	"tests/internal/harness"
)

// accountsCLI runs an account command of the real binary against the replicas' shared store
// (--nats) and returns the last line it printed (a new secret, when it makes one).
func accountsCLI(ctx context.Context, t *testing.T, nats *harness.NATS, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, gatewayBin, append(args, "--nats", nats.URL)...)
	cmd.Env = append(harness.CleanEnv(), "GORACE=atexit_sleep_ms=0")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), errOut.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return lines[len(lines)-1]
}

func getWithToken(ctx context.Context, t testingT, g *harness.Gateway, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL("/trapos/computers"), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// TestAccountsAcrossReplicas: accounts live in the NATS bucket the replicas share: an account
// and a credential made once work on both replicas; alice's computer on replica B is listed
// for alice's token on replica A (and bob's token does not see it); a token revoked once stops
// on every replica, and a revoked credential is refused at its next hello on any replica.
func TestAccountsAcrossReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	alice := accountsCLI(ctx, t, nats, "accounts", "add", "alice")
	bob := accountsCLI(ctx, t, nats, "accounts", "add", "bob")
	cred := accountsCLI(ctx, t, nats, "credentials", "add", "alice")
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")

	c, err := harness.Dial(ctx, b.WebSocketURL(), "7:")
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.MustHello(ctx, cred))

	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		status, body := getWithToken(ctx, ct, a, alice)
		assert.Equal(ct, http.StatusOK, status, body)
		assert.Contains(ct, body, `"accountId":"alice"`)
	}, waitLimit, testkit.Poll, "alice's computer on b, listed on a for alice")
	status, body := getWithToken(ctx, t, a, bob)
	require.Equal(t, http.StatusOK, status, body)
	assert.NotContains(t, body, `"traposId"`, "bob sees none")

	id := strings.SplitN(alice, "_", 3)[1]
	accountsCLI(ctx, t, nats, "tokens", "revoke", id)
	for _, g := range []*harness.Gateway{a, b} {
		status, body = getWithToken(ctx, t, g, alice)
		assert.Equal(t, http.StatusUnauthorized, status, body)
		assert.Contains(t, body, "revoked")
	}

	credID := strings.SplitN(cred, "_", 3)[1]
	accountsCLI(ctx, t, nats, "credentials", "revoke", credID)
	again, err := harness.Dial(ctx, a.WebSocketURL(), "7:")
	require.NoError(t, err)
	defer again.Close()
	f, err := again.Hello(ctx, cred)
	require.NoError(t, err)
	require.NotNil(t, f.Error)
	assert.Equal(t, "unauthorized", f.Error.Code)
	ce, err := again.ExpectClose(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4003, ce.Code)
}

// TestAReplicaSaysItLeavesTheDataDirectorysStoreUnread: an operator who turned a gateway with
// accounts into replicas (played: the same data directory, --nats added) found every linked
// computer refused at its hello ("a computer credential the account store does not hold
// (made on another gateway or data directory, ...)") and its daemon stopped, every player's
// token refused, and nothing at the start said that the accounts were still in the data
// directory, which a replica does not read. The replica says so at start, naming the file; one
// on a data directory without a store says nothing of it.
func TestAReplicaSaysItLeavesTheDataDirectorysStoreUnread(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	dir := t.TempDir()
	cli(ctx, t, "accounts", "add", "alice", "--data-dir", dir)
	nats := harness.StartNATS(t, natsBin)
	a := harness.Start(t, gatewayBin, harness.Options{
		Args: append([]string{"--nats", nats.URL, "--replica", "a"}, replicaFlags...),
		Env:  []string{"SANDBOX_DATA_DIR=" + dir},
	})
	assert.Contains(t, a.Log(), `level=WARN msg="accounts: this replica keeps its accounts in NATS (the bucket trapos_accounts) and does not read the account store of its data directory: `+
		`the accounts, API tokens and linked computers made on a gateway without --nats are refused unless they were copied into NATS; `+
		`copy them with trap-sandbox accounts copy --data-dir DIR --nats URL (docs/scale-out.md, From one gateway to replicas), then move the file out of the data directory" replica=a store=`+filepath.Join(dir, "accounts.db"))

	b := startReplica(t, nats, "b")
	assert.NotContains(t, b.Log(), "does not read the account store of its data directory")
}

// TestAGatewaysAccountsCopiedIntoNATSWorkOnTheReplicas: docs/scale-out.md, From one gateway to
// replicas, played on the real binaries: on a single gateway alice has a token and has linked
// a computer (sandbox link, approved with her token, accepted on the computer); the gateway
// stops, `accounts copy` carries its data directory's store into NATS, and on the replicas the
// computer says hello with the credential it was given on the gateway (alice's, bound to it)
// and alice's token lists it, on the other replica.
func TestAGatewaysAccountsCopiedIntoNATSWorkOnTheReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	dir := t.TempDir()
	alice := strings.TrimSpace(lastLine(cli(ctx, t, "accounts", "add", "alice", "--data-dir", dir)))
	single := harness.Start(t, gatewayBin, harness.Options{Env: []string{"SANDBOX_DATA_DIR=" + dir}})
	c, code := beginLink(ctx, t, single, "7:kitchen")
	status, answer := approveLink(ctx, t, single, alice, code)
	require.Equal(t, http.StatusOK, status, answer)
	f, err := c.Request(ctx, "link.accept", map[string]any{"code": code, "accept": true})
	require.NoError(t, err)
	require.Nil(t, f.Error)
	var accepted struct{ Credential string }
	require.NoError(t, json.Unmarshal(f.Payload, &accepted))
	require.NoError(t, c.Close())
	require.NoError(t, single.Stop())

	nats := harness.StartNATS(t, natsBin)
	out := cli(ctx, t, "accounts", "copy", "--data-dir", dir, "--nats", nats.URL)
	assert.Contains(t, out, "1 account copied; 1 API token copied; 1 computer credential copied; 0 enrollment keys copied\n")
	a := startReplica(t, nats, "a")
	b := startReplica(t, nats, "b")

	kitchen, err := harness.Dial(ctx, b.WebSocketURL(), "7:kitchen")
	require.NoError(t, err)
	defer kitchen.Close()
	f, err = kitchen.Hello(ctx, accepted.Credential)
	require.NoError(t, err)
	require.Nil(t, f.Error, "the linked computer's hello on a replica")
	assert.Contains(t, string(f.Payload), `"accountId":"alice"`)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		status, body := getWithToken(ctx, ct, a, alice)
		assert.Equal(ct, http.StatusOK, status, body)
		assert.Contains(ct, body, `"traposId":"7:kitchen"`)
	}, waitLimit, testkit.Poll, "alice's token on replica a lists her computer on b")

	// Still bound to its computer: another computer id is refused with it.
	attic, err := harness.Dial(ctx, a.WebSocketURL(), "8:attic")
	require.NoError(t, err)
	defer attic.Close()
	f, err = attic.Hello(ctx, accepted.Credential)
	require.NoError(t, err)
	require.NotNil(t, f.Error)
	assert.Equal(t, "unauthorized", f.Error.Code)
}

// lastLine is out's last line.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// TestHealthzSaysWhenNATSLostTheAccountBucket: nats-server restarted without its store has no
// bucket trapos_accounts, every account token gets 500, and /healthz said "ok, nats:
// connected" all the same, so the operator's health check saw nothing wrong. It says what the
// replica's last read of the store found, or, with none for 5 s, what its own look at the
// bucket found: the bucket gone and what to do; and stops saying it once the bucket is there
// again.
func TestHealthzSaysWhenNATSLostTheAccountBucket(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	alice := accountsCLI(ctx, t, nats, "accounts", "add", "alice")
	a := startReplica(t, nats, "a")
	status, body := getWithToken(ctx, t, a, alice)
	require.Equal(t, http.StatusOK, status, body)
	const lost = "accounts: NATS has no bucket trapos_accounts any more (restarted without its store, -sd?): its accounts, " +
		"API tokens and computer credentials are unknown until it is back; give NATS its store back, or add the accounts " +
		"again with trap-sandbox accounts add --nats (docs/scale-out.md)\n"
	_, health := get(t, a, "/healthz")
	require.NotContains(t, health, "accounts:")

	require.NoError(t, nats.RestartWithStore(t.TempDir()))
	// With no caller refused first: /healthz looks at the bucket itself when nothing has for
	// 5 s (it said nothing until a token was refused).
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		_, health := get(ct, a, "/healthz")
		assert.Equal(ct, "ok\nnats: connected (replica a, 1 replica(s) alive)\n"+lost, health)
	}, waitLimit, testkit.Poll, "/healthz to say the bucket is lost, with no traffic")
	status, body = getWithToken(ctx, t, a, alice)
	assert.Equal(t, http.StatusInternalServerError, status, body)

	// An empty bucket made again (docs/scale-out.md's other fix): the line goes at the next read.
	bob := accountsCLI(ctx, t, nats, "accounts", "add", "bob")
	status, body = getWithToken(ctx, t, a, bob)
	require.Equal(t, http.StatusOK, status, body)
	_, health = get(t, a, "/healthz")
	assert.Equal(t, "ok\nnats: connected (replica a, 1 replica(s) alive)\n", health)
}
