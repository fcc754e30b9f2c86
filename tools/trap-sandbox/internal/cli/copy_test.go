package cli

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
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

// TestAccountsCopyLeavesAnOlderStoreAsItWas: the copy of a store of an older trap-sandbox
// (schema 3) carries its accounts into NATS and leaves the data directory byte for byte as it
// was: not upgraded (still schema 3, which that trap-sandbox opens), no -wal or -shm left
// beside it, nothing said about an upgrade. The file is the operator's way back to one gateway.
func TestAccountsCopyLeavesAnOlderStoreAsItWas(t *testing.T) {
	clearEnv(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := schema3Store(t)
	url := startNATS(t)
	before := filesIn(t, dir)

	out, errOut, err := runWith(t, "", "accounts", "copy", "--data-dir", dir, "--nats", url)
	require.NoError(t, err)
	assert.Empty(t, errOut)
	assert.Contains(t, out, ": 1 account copied; 1 API token copied; 1 computer credential copied;")
	assert.Equal(t, before, filesIn(t, dir), "the data directory after the copy")
	assert.Equal(t, 3, schemaOf(t, dir), "an older trap-sandbox opens it")
	assert.Contains(t, mustRun(t, "credentials", "list", "--nats", url), "bob")
	assert.Empty(t, filesIn(t, tmp), "the copy read in its place is removed")

	// A store of a later trap-sandbox is refused, as before, naming it, and its copy removed.
	db, err := sql.Open("sqlite", filepath.Join(dir, account.DBFile))
	require.NoError(t, err)
	_, err = db.ExecContext(t.Context(), "PRAGMA user_version = 99")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, _, err = runWith(t, "", "accounts", "copy", "--data-dir", dir, "--nats", url)
	require.ErrorContains(t, err, "open "+filepath.Join(dir, account.DBFile)+": the database is of a newer trap-sandbox (schema 99, this one knows ")
	assert.Empty(t, filesIn(t, tmp), "the copy read in its place is removed")
}

// TestAccountsCopyAndBackupLeaveAKilledGatewaysWAL: a gateway killed (not stopped) leaves its
// latest changes in accounts.db-wal, with its -shm. A copy and a backup read them, and leave
// the three files byte for byte as they were: read-only, neither writes the -wal into the
// file as the last to close it, nor its place in the -wal into the -shm.
func TestAccountsCopyAndBackupLeaveAKilledGatewaysWAL(t *testing.T) {
	clearEnv(t)
	live := t.TempDir()
	mustRun(t, "accounts", "add", "alice", "--data-dir", live)
	s, err := account.OpenExistingSQLite(t.Context(), live)
	require.NoError(t, err)
	_, err = account.New(s, clock.Real{}).AddAccount(t.Context(), "bob", account.RoleUser, "first")
	require.NoError(t, err)
	// The files as the kill leaves them: bob only in the -wal, which the open s keeps.
	dir := t.TempDir()
	for _, name := range []string{account.DBFile, account.DBFile + "-wal", account.DBFile + "-shm"} {
		b, err := os.ReadFile(filepath.Join(live, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	require.NoError(t, s.Close())
	before := filesIn(t, dir)
	require.Len(t, before, 3)

	url := startNATS(t)
	out := mustRun(t, "accounts", "copy", "--data-dir", dir, "--nats", url)
	assert.Contains(t, out, ": 2 accounts copied;", "bob, from the -wal, too")
	assert.Equal(t, before, filesIn(t, dir), "the data directory after the copy")
	mustRun(t, "accounts", "backup", "--data-dir", dir, filepath.Join(t.TempDir(), "b.db"))
	assert.Equal(t, before, filesIn(t, dir), "the data directory after the backup")
}

// filesIn is every file in dir with its bytes' SHA-256.
func filesIn(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	return files
}

// schemaOf is the schema version of the store in dir (its user_version), read without
// upgrading it.
func schemaOf(t *testing.T, dir string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, account.DBFile)+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var version int
	require.NoError(t, db.QueryRowContext(t.Context(), "PRAGMA user_version").Scan(&version))
	return version
}

// TestAccountsCopyAgainSaysWhatTheReplicasRemoved: alice copied, removed on the replicas, and
// the copy run again: the copy says it left her out, and she stays removed.
func TestAccountsCopyAgainSaysWhatTheReplicasRemoved(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	url := startNATS(t)
	mustRun(t, "accounts", "add", "alice", "--data-dir", dir)
	mustRun(t, "accounts", "add", "bob", "--data-dir", dir)
	mustRun(t, "accounts", "copy", "--data-dir", dir, "--nats", url)
	mustRun(t, "accounts", "remove", "alice", "--nats", url)

	out := mustRun(t, "accounts", "copy", "--data-dir", dir, "--nats", url)
	assert.Contains(t, out, ": 0 accounts copied, 1 there already; 0 API tokens copied, 1 there already;")
	assert.Contains(t, out, "\nnot copied again: alice, removed on the replicas since an earlier copy (accounts remove --nats); to bring one back, add it there anew\n")
	assert.NotContains(t, mustRun(t, "accounts", "list", "--nats", url), "alice")
}

// TestAccountsCopyCutOffStillTellsTheReplicasOfItsRevocations: a second copy carries a
// revocation made on the file, then is cut off (NATS takes no write of an account record any
// more), and still tells the running replicas of the revocation it wrote (trapos.revoked): the
// run that finishes it finds the credential revoked in the bucket already and has nothing to
// tell, so the computer's socket stayed open on its replica until its next hello.
func TestAccountsCopyCutOffStillTellsTheReplicasOfItsRevocations(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	ns := startNATSServer(t, &natsserver.Options{})
	url := ns.ClientURL()
	mustRun(t, "accounts", "add", "alice", "--data-dir", dir)
	cred := lastLineOf(mustRun(t, "credentials", "add", "alice", "--data-dir", dir))
	mustRun(t, "accounts", "copy", "--data-dir", dir, "--nats", url)
	credID := strings.SplitN(cred, "_", 3)[1]
	mustRun(t, "credentials", "revoke", credID, "--data-dir", dir)
	mustRun(t, "accounts", "add", "bob", "--data-dir", dir)

	nc, err := natsgo.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	revoked, err := nc.SubscribeSync(cluster.RevocationSubject)
	require.NoError(t, err)
	require.NoError(t, nc.Flush())
	// The account records' subjects lead to no stream from here, as if NATS had lost the
	// bucket: NATS answers a write of one at once that nothing took it. (A write it drops, as
	// for a NATS user that may not make it, fails only when its time runs out: JetStream's 5 s.)
	require.NoError(t, ns.GlobalAccount().AddMapping("$KV."+account.KVBucket+".account.>", "nowhere.account.>"))
	_, _, err = runWith(t, "", "accounts", "copy", "--data-dir", dir, "--nats", url)
	require.ErrorContains(t, err, "the copy was cut off after 1 of 2 accounts")
	msg, err := revoked.NextMsg(10 * time.Second)
	require.NoError(t, err, "the replicas told of the revocation")
	assert.Contains(t, string(msg.Data), credID)
}
