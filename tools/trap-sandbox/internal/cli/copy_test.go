package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cluster"
)

// TestAccountsCopyCarriesTheStoreIntoNATS: accounts copy writes the data directory's accounts
// into the replicas' bucket, where the account commands on NATS find them (the same token ids);
// run again it writes nothing twice, and carries a revocation made on the file meanwhile,
// telling the running replicas (trapos.revoked). Without --nats, or through a gateway, it says
// what it needs.
func TestAccountsCopyCarriesTheStoreIntoNATS(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	url := startNATS(t)
	alice := lastLineOf(mustRun(t, "accounts", "add", "alice", "--data-dir", dir))
	cred := lastLineOf(mustRun(t, "credentials", "add", "alice", "--data-dir", dir))
	store := filepath.Join(dir, account.DBFile)

	out, errOut, err := runWith(t, "", "accounts", "copy", "--data-dir", dir, "--nats", url)
	require.NoError(t, err)
	assert.Empty(t, errOut)
	assert.Equal(t, "copied the account store "+store+" into the NATS key-value bucket trapos_accounts: 1 account copied; 1 API token copied; "+
		"1 computer credential copied; 0 enrollment keys copied\n"+
		"the replicas take these tokens and linked computers now; once no gateway runs on this data directory, move accounts.db with its -wal and -shm out of it (docs/scale-out.md, From one gateway to replicas)\n", out)
	tokenID := strings.SplitN(alice, "_", 3)[1]
	assert.Contains(t, mustRun(t, "tokens", "list", "--nats", url), tokenID)

	nc, err := natsgo.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	revoked, err := nc.SubscribeSync(cluster.RevocationSubject)
	require.NoError(t, err)
	require.NoError(t, nc.Flush())
	credID := strings.SplitN(cred, "_", 3)[1]
	mustRun(t, "credentials", "revoke", credID, "--data-dir", dir)
	out = mustRun(t, "accounts", "copy", "--data-dir", dir, "--nats", url)
	assert.Contains(t, out, ": 0 accounts copied, 1 there already; 0 API tokens copied, 1 there already; "+
		"0 computer credentials copied, 1 there already (1 brought up to date); 0 enrollment keys copied\n")
	msg, err := revoked.NextMsg(10 * time.Second)
	require.NoError(t, err)
	assert.Contains(t, string(msg.Data), credID)
	assert.Regexp(t, credID+` .* \d{4}-\d\d-\d\dT\S+Z\n$`, mustRun(t, "credentials", "list", "--nats", url), "REVOKED, its last column, has a time")

	_, _, err = runWith(t, "", "accounts", "copy", "--data-dir", dir)
	require.EqualError(t, err, "accounts copy: --nats (SANDBOX_NATS_URL) is missing: it writes the data directory's store into the replicas' NATS bucket trapos_accounts; "+
		"give the replicas' --nats URL and NATS credentials (docs/scale-out.md, From one gateway to replicas)")
	_, _, err = runWith(t, "", "accounts", "copy", "--data-dir", dir, "--nats-user", "sandbox")
	require.ErrorContains(t, err, "--nats-user (SANDBOX_NATS_USER) set without --nats (SANDBOX_NATS_URL): it writes")
	_, _, err = runWith(t, "", "accounts", "copy", "--url", "http://127.0.0.1:4444", "--nats", url)
	require.ErrorContains(t, err, "not through a gateway's API")
	_, _, err = runWith(t, "", "accounts", "copy", "--data-dir", t.TempDir(), "--nats", url)
	require.ErrorContains(t, err, "no account store at ")
}

// TestAccountsCopyBesideARunningGatewaySaysWhatItMisses: a copy of a store that a gateway (another
// process) has open copies, and says on stderr that what the gateway does from then on is not
// in it, and how to catch up.
func TestAccountsCopyBesideARunningGatewaySaysWhatItMisses(t *testing.T) {
	if dir := os.Getenv(holdStoreEnv); dir != "" {
		holdStore(t, dir)
		return
	}
	clearEnv(t)
	dir := t.TempDir()
	url := startNATS(t)
	mustRun(t, "accounts", "add", "alice", "--data-dir", dir)
	holdingStore(t, dir, "TestAccountsCopyBesideARunningGatewaySaysWhatItMisses")
	out, errOut, err := runWith(t, "", "accounts", "copy", "--data-dir", dir, "--nats", url)
	require.NoError(t, err)
	assert.Contains(t, out, ": 1 account copied; 1 API token copied;")
	assert.Equal(t, "trap-sandbox: a gateway has this store open: what it changes from now on is not in the copy; stop it, then run this again, "+
		"which carries a new account, token or link and a revocation (an account removed there meanwhile stays in the bucket: remove it with --nats too)\n", errOut)
}
