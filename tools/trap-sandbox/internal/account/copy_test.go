package account_test

import (
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
)

// gatewayStore is a single gateway's accounts.db as its players left it: alice (a user) with
// a token, a linked computer (7:kitchen) and an enrollment key used once; bob with a token
// and a revoked one, and a computer credential revoked; root, an admin. It returns the store
// and the secrets, by name.
func gatewayStore(t *testing.T) (*account.SQLite, map[string]string) {
	t.Helper()
	ctx := t.Context()
	s, err := account.OpenSQLite(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	acc := account.New(s, clock.Real{})
	secrets := map[string]string{}
	for _, name := range []string{"alice", "bob"} {
		secrets[name], err = acc.AddAccount(ctx, name, account.RoleUser, "laptop")
		require.NoError(t, err)
	}
	secrets["root"], err = acc.AddAccount(ctx, "root", account.RoleAdmin, "ops")
	require.NoError(t, err)
	var old account.Token
	secrets["bob-old"], old, err = acc.IssueToken(ctx, "bob", "old phone", 0)
	require.NoError(t, err)
	_, err = acc.RevokeToken(ctx, "", old.Selector)
	require.NoError(t, err)

	code, _, err := acc.BeginLink(ctx, "7:kitchen", "10.0.0.7:5000", 0)
	require.NoError(t, err)
	_, err = acc.ApproveLink(ctx, code, "alice", "alice")
	require.NoError(t, err)
	secrets["kitchen"], _, err = acc.AcceptLink(ctx, code, "7:kitchen", true)
	require.NoError(t, err)
	_, err = acc.AuthenticateComputer(ctx, secrets["kitchen"], "7:kitchen", "10.0.0.7")
	require.NoError(t, err)
	secrets["key"], _, err = acc.IssueEnrollmentKey(ctx, "alice", "alice", 2, 0)
	require.NoError(t, err)
	secrets["turtle"], _, err = acc.LinkWithKey(ctx, secrets["key"], "12:turtle")
	require.NoError(t, err)

	var gone account.Credential
	secrets["bob-pc"], gone, err = acc.IssueCredential(ctx, "bob", "bob")
	require.NoError(t, err)
	_, err = acc.RevokeCredential(ctx, "", gone.Selector)
	require.NoError(t, err)
	return s, secrets
}

// gatewayRunsOn is the single gateway going on after a first copy, on file (gatewayStore's,
// with its secrets): the kitchen's credential revoked (its selector returned) and a new token
// issued to alice.
func gatewayRunsOn(t *testing.T, file *account.SQLite, secrets map[string]string) (kitchenSelector, token string) {
	t.Helper()
	ctx := t.Context()
	acc := account.New(file, clock.Real{})
	kitchen, err := acc.AuthenticateComputer(ctx, secrets["kitchen"], "7:kitchen", "10.0.0.7")
	require.NoError(t, err)
	_, err = acc.RevokeCredential(ctx, "", kitchen.Selector)
	require.NoError(t, err)
	token, _, err = acc.IssueToken(ctx, "alice", "ci", 0)
	require.NoError(t, err)
	return kitchen.Selector, token
}

// natsServer is a NATS server with JetStream whose store survives a restart (stop, then start
// again on the same directory), as nats-server -sd does.
type natsServer struct {
	t   *testing.T
	dir string
	ns  *natsserver.Server
	nc  *nats.Conn
}

func startNATSServer(t *testing.T) *natsServer {
	n := &natsServer{t: t, dir: t.TempDir()}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) start() {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: n.dir})
	require.NoError(n.t, err)
	go ns.Start()
	require.True(n.t, ns.ReadyForConnections(10*time.Second), "the embedded NATS server did not start")
	// No reconnects: a write while the server is away fails at once, as a command's does.
	nc, err := nats.Connect(ns.ClientURL(), nats.NoReconnect())
	require.NoError(n.t, err)
	n.ns, n.nc = ns, nc
}

func (n *natsServer) stop() {
	if n.ns == nil {
		return
	}
	n.nc.Close()
	n.ns.Shutdown()
	n.ns.WaitForShutdown()
	n.ns = nil
}

func (n *natsServer) bucket() *account.KV {
	js, err := jetstream.New(n.nc)
	require.NoError(n.t, err)
	kv, err := account.OpenKV(n.t.Context(), js)
	require.NoError(n.t, err)
	return kv
}

// TestCopyToKVKeepsEverySecretWorking: after the copy the replicas' bucket takes every token,
// linked computer and enrollment key of the gateway's store, each with the hash it had (no
// secret is made or read), and refuses the revoked ones.
func TestCopyToKVKeepsEverySecretWorking(t *testing.T) {
	ctx := t.Context()
	file, secrets := gatewayStore(t)
	kv := startNATSServer(t).bucket()
	snap, err := file.Snapshot(ctx)
	require.NoError(t, err)

	report, err := account.CopyToKV(ctx, snap, kv)
	require.NoError(t, err)
	assert.Equal(t, account.CopyReport{Accounts: account.CopyCount{Copied: 3}, Tokens: account.CopyCount{Copied: 4},
		Credentials: account.CopyCount{Copied: 3}, EnrollmentKeys: account.CopyCount{Copied: 1}}, report)

	for _, ft := range snap.Tokens {
		bt, err := kv.Token(ctx, ft.Selector)
		require.NoError(t, err)
		assert.Equal(t, ft, bt, "the token as the file holds it, hash and times included")
	}
	for _, fc := range snap.Credentials {
		bc, err := kv.Credential(ctx, fc.Selector)
		require.NoError(t, err)
		assert.Equal(t, fc, bc, "the credential as the file holds it, hash, computer and times included")
	}
	onNATS := account.New(kv, clock.Real{})
	for _, name := range []string{"alice", "bob", "root"} {
		a, err := onNATS.Authenticate(ctx, secrets[name])
		require.NoError(t, err, name)
		assert.Equal(t, name, a.ID)
	}
	_, err = onNATS.Authenticate(ctx, secrets["bob-old"])
	assert.ErrorIs(t, err, account.ErrRevoked)
	c, err := onNATS.AuthenticateComputer(ctx, secrets["kitchen"], "7:kitchen", "10.0.0.7")
	require.NoError(t, err)
	assert.Equal(t, "alice", c.AccountID)
	_, err = onNATS.AuthenticateComputer(ctx, secrets["kitchen"], "8:attic", "10.0.0.7")
	assert.ErrorAs(t, err, new(*account.WrongComputerError), "still bound to computer 7")
	_, err = onNATS.AuthenticateComputer(ctx, secrets["turtle"], "12:turtle", "10.0.0.7")
	require.NoError(t, err)
	_, err = onNATS.AuthenticateComputer(ctx, secrets["bob-pc"], "3:", "10.0.0.3")
	assert.ErrorIs(t, err, account.ErrRevoked)
	// The key linked one of its two computers on the gateway: one more, then it is used up.
	_, _, err = onNATS.LinkWithKey(ctx, secrets["key"], "13:")
	require.NoError(t, err)
	_, _, err = onNATS.LinkWithKey(ctx, secrets["key"], "14:")
	assert.ErrorIs(t, err, account.ErrUsedUp)

}

// TestCopyToKVAddsAKeysUsesOnTheGatewayToTheReplicas: a key of 2 uses, used once on the
// gateway, copied; then the gateway, not stopped, links a computer with it, and so do the
// replicas: each store counted 2, its limit, and 3 computers were linked. A second copy makes
// the bucket's count 3 (the larger count, 2, let the key look as if it had linked 2), and a
// third, with nothing new on the gateway, adds nothing.
func TestCopyToKVAddsAKeysUsesOnTheGatewayToTheReplicas(t *testing.T) {
	ctx := t.Context()
	file, secrets := gatewayStore(t)
	kv := startNATSServer(t).bucket()
	copyNow := func() account.CopyReport {
		t.Helper()
		snap, err := file.Snapshot(ctx)
		require.NoError(t, err)
		r, err := account.CopyToKV(ctx, snap, kv)
		require.NoError(t, err)
		return r
	}
	uses := func() int {
		t.Helper()
		keys, err := kv.EnrollmentKeys(ctx, "alice")
		require.NoError(t, err)
		require.Len(t, keys, 1)
		return keys[0].Uses
	}
	copyNow()
	require.Equal(t, 1, uses())
	_, _, err := account.New(file, clock.Real{}).LinkWithKey(ctx, secrets["key"], "13:")
	require.NoError(t, err, "the gateway, not stopped, links a computer")
	onNATS := account.New(kv, clock.Real{})
	_, _, err = onNATS.LinkWithKey(ctx, secrets["key"], "14:")
	require.NoError(t, err, "and so do the replicas: each store has counted 1 of 2")

	assert.Equal(t, account.CopyCount{Present: 1, Updated: 1}, copyNow().EnrollmentKeys)
	assert.Equal(t, 3, uses(), "the gateway's link since the copy added to the replicas' count")
	_, _, err = onNATS.LinkWithKey(ctx, secrets["key"], "15:")
	require.ErrorIs(t, err, account.ErrUsedUp)
	assert.EqualError(t, err, "the enrollment key is used up (it linked 3 computers, more than its limit of 2)")

	assert.Equal(t, account.CopyCount{Present: 1}, copyNow().EnrollmentKeys, "nothing new on the gateway")
	assert.Equal(t, 3, uses())
}

// TestCopyToKVTwiceCatchesUp: a second copy writes nothing again; after the gateway ran on (a
// revocation, a token, a hello), it carries what is new and the revocation, which it reports
// for the replicas to close the socket.
func TestCopyToKVTwiceCatchesUp(t *testing.T) {
	ctx := t.Context()
	file, secrets := gatewayStore(t)
	kv := startNATSServer(t).bucket()
	copyNow := func() account.CopyReport {
		t.Helper()
		snap, err := file.Snapshot(ctx)
		require.NoError(t, err)
		r, err := account.CopyToKV(ctx, snap, kv)
		require.NoError(t, err)
		return r
	}
	copyNow()
	assert.Equal(t, account.CopyReport{Accounts: account.CopyCount{Present: 3}, Tokens: account.CopyCount{Present: 4},
		Credentials: account.CopyCount{Present: 3}, EnrollmentKeys: account.CopyCount{Present: 1}}, copyNow(), "nothing new")

	kitchenSelector, ci := gatewayRunsOn(t, file, secrets)

	again := copyNow()
	assert.Equal(t, account.CopyCount{Copied: 1, Present: 4}, again.Tokens)
	assert.Equal(t, account.CopyCount{Present: 3, Updated: 1}, again.Credentials)
	assert.Equal(t, []string{kitchenSelector}, again.Revoked)
	onNATS := account.New(kv, clock.Real{})
	_, err := onNATS.AuthenticateComputer(ctx, secrets["kitchen"], "7:kitchen", "10.0.0.7")
	assert.ErrorIs(t, err, account.ErrRevoked)
	_, err = onNATS.Authenticate(ctx, ci)
	assert.NoError(t, err)
}

// TestCopyToKVRefusesAnAccountMadeAgainOnNATS: alice made on NATS too (another account of the
// same name) stops the copy before it writes anything, naming her; an account made on NATS
// only is no conflict and is left as it is.
func TestCopyToKVRefusesAnAccountMadeAgainOnNATS(t *testing.T) {
	ctx := t.Context()
	file, secrets := gatewayStore(t)
	kv := startNATSServer(t).bucket()
	onNATS := account.New(kv, clock.Real{})
	natsAlice, err := onNATS.AddAccount(ctx, "alice", account.RoleUser, "laptop")
	require.NoError(t, err)
	_, err = onNATS.AddAccount(ctx, "carol", account.RoleUser, "laptop")
	require.NoError(t, err)
	snap, err := file.Snapshot(ctx)
	require.NoError(t, err)

	_, err = account.CopyToKV(ctx, snap, kv)
	var conflict *account.CopyConflictError
	require.ErrorAs(t, err, &conflict)
	require.Len(t, conflict.Conflicts, 1)
	assert.Contains(t, conflict.Conflicts[0], `account "alice" as another account`)
	assert.Contains(t, err.Error(), "nothing was copied: the bucket trapos_accounts holds account \"alice\" as another account")
	all, err := kv.Accounts(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 2, "bob and root not copied")
	toks, err := kv.Tokens(ctx, "")
	require.NoError(t, err)
	assert.Len(t, toks, 2)
	_, err = onNATS.Authenticate(ctx, natsAlice)
	assert.NoError(t, err, "NATS's alice untouched")

	_, err = onNATS.RemoveAccount(ctx, "alice")
	require.NoError(t, err)
	report, err := account.CopyToKV(ctx, snap, kv)
	require.NoError(t, err)
	assert.Equal(t, 1, report.OnlyInBucket, "carol")
	_, err = onNATS.Authenticate(ctx, secrets["alice"])
	assert.NoError(t, err)
}

// TestCopyToKVLeavesAnAccountRemovedOnTheReplicasRemoved: alice copied, then removed on the
// replicas (accounts remove alice --nats: a player banned there), and the copy run again (the
// gateway ran on meanwhile): alice stays removed, her token and computer refused, and the
// report names her; bob, brought forward as before, is no part of it.
func TestCopyToKVLeavesAnAccountRemovedOnTheReplicasRemoved(t *testing.T) {
	ctx := t.Context()
	file, secrets := gatewayStore(t)
	kv := startNATSServer(t).bucket()
	snap, err := file.Snapshot(ctx)
	require.NoError(t, err)
	_, err = account.CopyToKV(ctx, snap, kv)
	require.NoError(t, err)
	onNATS := account.New(kv, clock.Real{})
	_, err = onNATS.RemoveAccount(ctx, "alice")
	require.NoError(t, err)

	report, err := account.CopyToKV(ctx, snap, kv)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice"}, report.RemovedInBucket)
	assert.Equal(t, account.CopyCount{Present: 2}, report.Accounts, "bob and root; alice neither copied nor there")
	_, err = kv.Account(ctx, "alice")
	assert.ErrorIs(t, err, account.ErrNotFound, "alice stays removed")
	_, err = onNATS.Authenticate(ctx, secrets["alice"])
	assert.Error(t, err, "her token refused")
	_, err = onNATS.AuthenticateComputer(ctx, secrets["kitchen"], "7:kitchen", "10.0.0.7")
	assert.Error(t, err, "her computer refused")
	_, err = onNATS.Authenticate(ctx, secrets["bob"])
	assert.NoError(t, err)
}

// TestCopyToKVCutOffLeavesEachAccountWholeOrUnusable: NATS gone at every write of a copy in
// turn: the copy says how far it came; each account is then either whole on the bucket (every
// token of it works) or not usable at all (none does), and the same copy, run again once NATS
// is back, finishes it.
func TestCopyToKVCutOffLeavesEachAccountWholeOrUnusable(t *testing.T) {
	ctx := t.Context()
	file, secrets := gatewayStore(t)
	snap, err := file.Snapshot(ctx)
	require.NoError(t, err)
	tokensOf := map[string][]string{"alice": {secrets["alice"]}, "bob": {secrets["bob"]}, "root": {secrets["root"]}}
	const writes = 3 + 4 + 3 + 1 // accounts, tokens, credentials, keys
	for cut := range writes {
		n := startNATSServer(t)
		kv := n.bucket()
		w := 0
		_, err := account.CopyToKVForTest(ctx, snap, kv, func() {
			if w == cut {
				n.stop()
			}
			w++
		})
		var cutErr *account.CopyCutError
		require.ErrorAs(t, err, &cutErr, "cut at write %d", cut)

		n.start()
		kv = n.bucket()
		onNATS := account.New(kv, clock.Real{})
		whole := 0
		for _, a := range snap.Accounts {
			_, err := kv.Account(ctx, a.ID)
			if err == nil {
				whole++
			}
			for _, tok := range tokensOf[a.ID] {
				_, aerr := onNATS.Authenticate(ctx, tok)
				assert.Equal(t, err == nil, aerr == nil, "cut at write %d: account %s listed (%v) but its token: %v", cut, a.ID, err, aerr)
			}
		}
		assert.Equal(t, cutErr.Whole, whole, "cut at write %d", cut)

		_, err = account.CopyToKV(ctx, snap, kv)
		require.NoError(t, err, "cut at write %d, then again", cut)
		for name, toks := range tokensOf {
			_, err := onNATS.Authenticate(ctx, toks[0])
			assert.NoError(t, err, "cut at write %d, then again: %s", cut, name)
		}
		_, err = onNATS.AuthenticateComputer(ctx, secrets["kitchen"], "7:kitchen", "10.0.0.7")
		assert.NoError(t, err, "cut at write %d, then again", cut)
		n.stop()
	}
}

// TestCopyToKVCarriesARevocationBeforeWhatIsNew: the gateway ran on after a first copy (alice's
// kitchen revoked, a token issued to her), and the second copy is cut off at each of its writes
// in turn: the new token never works on the replicas while the kitchen's credential, revoked
// on the file, still does there.
func TestCopyToKVCarriesARevocationBeforeWhatIsNew(t *testing.T) {
	ctx := t.Context()
	file, secrets := gatewayStore(t)
	first, err := file.Snapshot(ctx)
	require.NoError(t, err)
	_, ci := gatewayRunsOn(t, file, secrets)
	second, err := file.Snapshot(ctx)
	require.NoError(t, err)

	const writes = 2 // the kitchen's revocation, the new token
	for cut := range writes {
		n := startNATSServer(t)
		_, err := account.CopyToKV(ctx, first, n.bucket())
		require.NoError(t, err)
		w := 0
		_, err = account.CopyToKVForTest(ctx, second, n.bucket(), func() {
			if w == cut {
				n.stop()
			}
			w++
		})
		require.ErrorAs(t, err, new(*account.CopyCutError), "cut at write %d", cut)

		n.start()
		onNATS := account.New(n.bucket(), clock.Real{})
		_, tokErr := onNATS.Authenticate(ctx, ci)
		_, credErr := onNATS.AuthenticateComputer(ctx, secrets["kitchen"], "7:kitchen", "10.0.0.7")
		assert.False(t, tokErr == nil && credErr == nil, "cut at write %d: the new token works and so does the revoked credential", cut)
		n.stop()
	}
}

// TestCopyToKVStampsTheSecretsOfAnOlderStore: a secret of an older trap-sandbox carries no
// stamp of its account; copied, it gets its account's, so that an account made again under
// the name on NATS does not inherit it.
func TestCopyToKVStampsTheSecretsOfAnOlderStore(t *testing.T) {
	ctx := t.Context()
	file, _ := gatewayStore(t)
	require.NoError(t, file.CreateToken(ctx, account.Token{Selector: "old", Hash: []byte("h"), AccountID: "bob", Name: "from 0.4"}))
	kv := startNATSServer(t).bucket()
	snap, err := file.Snapshot(ctx)
	require.NoError(t, err)
	_, err = account.CopyToKV(ctx, snap, kv)
	require.NoError(t, err)
	bob, err := file.Account(ctx, "bob")
	require.NoError(t, err)
	tok, err := kv.Token(ctx, "old")
	require.NoError(t, err)
	assert.True(t, bob.Created.Equal(tok.AccountCreated), "%v, want %v", tok.AccountCreated, bob.Created)
	_, err = account.CopyToKV(ctx, snap, kv)
	assert.NoError(t, err, "the stamped token is the same on a second copy")
}
