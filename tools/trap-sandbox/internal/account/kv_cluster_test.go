package account_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/account/accounttest"
	"trap-sandbox/internal/clock"
)

// TestKVApprovalIsLookedAtOnTheBucketsLeader: on a NATS cluster whose bucket has three stream
// replicas (as scale-out.md has the operator make it there), a replica connected to a
// follower takes a player's yes. After the credential's add and before the look, the follower
// stops applying what the stream leader sends it (its Raft messages held), and the API token
// that approved the code is revoked through the leader. The look reads through the leader
// alone, no direct get (which any of the three, the lagging follower too, may answer), and
// sees the revocation: the credential is refused and deleted.
func TestKVApprovalIsLookedAtOnTheBucketsLeader(t *testing.T) {
	ctx := t.Context()
	b := accounttest.StartReplicatedKV(t)
	cl, leader, follower, operator, replica := b.Cluster, b.Leader, b.Follower, b.Operator, b.Replica
	stream := kvStream
	alice := account.Account{ID: "alice", Role: account.RoleUser, Created: time.Unix(100, 0).UTC()}
	require.NoError(t, operator.CreateAccount(ctx, alice))
	// CreateToken looks for its account through the leader; the replica's direct gets find
	// the token once every replica has it and answers them.
	require.NoError(t, operator.CreateToken(ctx, account.Token{Selector: "t1", Hash: []byte("h"), AccountID: "alice"}))
	require.Eventually(t, func() bool {
		for range 9 { // each of the three replicas answers some
			if _, err := replica.Token(ctx, "t1"); err != nil {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "the replica reads the token")

	cred := account.Credential{Selector: "c1", Hash: []byte("h"), AccountID: "alice", ComputerID: "7", AccountCreated: alice.Created}
	var directGets uint64
	release := func() {}
	err := account.CreateApprovedCredentialForTest(ctx, replica, cred, "t1", true, func() {
		release = cl.HoldRaft(leader, follower)
		_, err := operator.RevokeToken(ctx, "t1", time.Unix(200, 0))
		require.NoError(t, err)
		require.Less(t, cl.LastSeq(follower, stream), cl.LastSeq(leader, stream),
			"the follower has not applied the revocation: the lag this test plays")
		directGets = cl.DirectGets(stream)
	})
	assert.Equal(t, directGets, cl.DirectGets(stream), "the look made no direct get, which a lagging follower may answer")
	require.ErrorIs(t, err, account.ErrApprovalRevoked, "the look saw the revocation made before it")
	assert.NotContains(t, err.Error(), "left without its secret", "the refused credential is deleted")
	release()
	assert.Eventually(t, func() bool {
		for range 9 { // each of the three replicas answers some
			if _, err := operator.Credential(ctx, "c1"); !errors.Is(err, account.ErrNotFound) {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "the refused credential is deleted")
}

// TestKVLatestCredentialIsReadOnTheBucketsLeader: a replica that hears a credential's
// revocation on the bus confirms it with the store (gateway.storeRevoked) a moment after it
// was written; on a cluster whose bucket has stream replicas, its connection on a follower
// that lags, Latest(store).Credential reads through the leader, no direct get (which the lagging
// follower may answer: the revocation ignored as unconfirmed, the computer left connected),
// and sees it.
func TestKVLatestCredentialIsReadOnTheBucketsLeader(t *testing.T) {
	ctx := t.Context()
	b := accounttest.StartReplicatedKV(t)
	require.NoError(t, b.Operator.CreateAccount(ctx, account.Account{ID: "alice", Role: account.RoleUser}))
	require.NoError(t, b.Operator.CreateCredential(ctx, account.Credential{Selector: "c1", Hash: []byte("h"), AccountID: "alice"}))
	require.Eventually(t, func() bool {
		for range 9 {
			if _, err := b.Replica.Credential(ctx, "c1"); err != nil {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "the replica reads the credential")

	b.Cluster.HoldRaft(b.Leader, b.Follower)
	_, err := b.Operator.RevokeCredential(ctx, "c1", time.Unix(200, 0))
	require.NoError(t, err)
	require.Less(t, b.Cluster.LastSeq(b.Follower, kvStream), b.Cluster.LastSeq(b.Leader, kvStream),
		"the follower has not applied the revocation: the lag this test plays")
	directGets := b.Cluster.DirectGets(kvStream)
	c, err := account.Latest(b.Replica).Credential(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, directGets, b.Cluster.DirectGets(kvStream), "no direct get, which a lagging follower may answer")
	assert.Equal(t, time.Unix(200, 0).UTC(), c.RevokedAt, "the revocation written a moment ago")
}

// TestKVATokenRevokedJustNowIsSeenOnTheBucketsLeader: an input relayed to the replica holding
// the computer's socket checks its caller's token by id (TokenStillOpens) between its parts,
// a moment after the token may have been revoked through another replica. On a cluster whose
// bucket has stream replicas, the holder's connection on a follower that lags, the check reads
// the token through the leader, no direct get (which the lagging follower may answer with the
// token live: the input typed on to its end), and sees the revocation.
func TestKVATokenRevokedJustNowIsSeenOnTheBucketsLeader(t *testing.T) {
	ctx := t.Context()
	b := accounttest.StartReplicatedKV(t)
	require.NoError(t, b.Operator.CreateAccount(ctx, account.Account{ID: "alice", Role: account.RoleUser}))
	require.NoError(t, b.Operator.CreateToken(ctx, account.Token{Selector: "t1", Hash: []byte("h"), AccountID: "alice", Name: "laptop"}))
	require.Eventually(t, func() bool {
		for range 9 { // each of the three replicas answers some
			if _, err := b.Replica.Token(ctx, "t1"); err != nil {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "the replica reads the token")
	holder := account.New(b.Replica, clock.Real{})
	require.NoError(t, holder.TokenStillOpens(ctx, "t1"))

	b.Cluster.HoldRaft(b.Leader, b.Follower)
	_, err := b.Operator.RevokeToken(ctx, "t1", time.Unix(200, 0))
	require.NoError(t, err)
	require.Less(t, b.Cluster.LastSeq(b.Follower, kvStream), b.Cluster.LastSeq(b.Leader, kvStream),
		"the follower has not applied the revocation: the lag this test plays")
	directGets := b.Cluster.DirectGets(kvStream)
	err = holder.TokenStillOpens(ctx, "t1")
	assert.Equal(t, directGets, b.Cluster.DirectGets(kvStream), "no direct get, which a lagging follower may answer")
	require.ErrorIs(t, err, account.ErrRevoked, "the revocation written a moment ago")
	assert.Equal(t, `the token "laptop" was revoked`, err.Error())
}

// TestKVAWriteRightAfterItsAccountsAddReadsItOnTheLeader: a script runs accounts add and then
// tokens add (or credentials add, or enrollment add) through a replica connected to a
// follower that lags (its Raft traffic held after the account's add). The write's look for
// its account reads through the bucket's stream leader, no direct get, which the lagging
// follower may answer without the account ("account \"alice\": not found"), and finds it.
func TestKVAWriteRightAfterItsAccountsAddReadsItOnTheLeader(t *testing.T) {
	ctx := t.Context()
	b := accounttest.StartReplicatedKV(t)
	b.Cluster.HoldRaft(b.Leader, b.Follower)
	require.NoError(t, b.Replica.CreateAccount(ctx, account.Account{ID: "alice", Role: account.RoleUser}))
	require.Less(t, b.Cluster.LastSeq(b.Follower, kvStream), b.Cluster.LastSeq(b.Leader, kvStream),
		"the follower has not applied the account's add: the lag this test plays")
	directGets := b.Cluster.DirectGets(kvStream)
	require.NoError(t, b.Replica.CreateToken(ctx, account.Token{Selector: "t1", Hash: []byte("h"), AccountID: "alice"}))
	require.NoError(t, b.Replica.CreateCredential(ctx, account.Credential{Selector: "c1", Hash: []byte("h"), AccountID: "alice"}))
	require.NoError(t, b.Replica.CreateEnrollmentKey(ctx, account.EnrollmentKey{Selector: "e1", Hash: []byte("h"), AccountID: "alice"}))
	assert.Equal(t, directGets, b.Cluster.DirectGets(kvStream), "no direct get, which a lagging follower may answer")
}

// TestKVCommandsRightAfterAnAddReadOnTheLeader: a script runs accounts add, then credentials
// list, tokens add, tokens list, accounts list, link approve (a computer's code into the
// account) and tokens revoke, then credentials add, list and revoke, then link key and
// revoke-key, every call through a replica connected to a follower that lags (its Raft
// traffic held from before the adds). Each call reads what it relies on or shows as last
// written, through the bucket's stream leader: the account (to list, approve into, stamp a
// secret with), the records listed, and the secret a revocation revokes; no direct get, which
// the lagging follower may answer ("not found", or the removed incarnation of an account made
// again under its name, whose stamp opens nothing), no listing's consumer on it (which lists
// no record added since it lags).
func TestKVCommandsRightAfterAnAddReadOnTheLeader(t *testing.T) {
	ctx := t.Context()
	b := accounttest.StartReplicatedKV(t)
	a := account.New(b.Replica, clock.Real{})
	m := a.Manage(account.Caller{Admin: true})
	code, _, err := account.New(b.Operator, clock.Real{}).BeginLink(ctx, "7:kitchen", "10.0.0.5:1", 0)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		for range 9 { // each of the three replicas answers some
			if _, err := a.LinkStatus(ctx, code, ""); err != nil {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "the replica reads the link code")

	whileLagging(t, b, func() {
		added, err := m.AddAccount(ctx, "alice", account.RoleUser)
		require.NoError(t, err, "accounts add")
		assert.Equal(t, "alice", added.Account.ID)
		creds, err := m.Credentials(ctx, "alice")
		require.NoError(t, err, "credentials list right after accounts add")
		assert.Empty(t, creds)
		tok, err := m.AddToken(ctx, "alice", "ci", 0)
		require.NoError(t, err, "tokens add right after accounts add")
		assert.Equal(t, added.Account.Created, tok.Token.AccountCreated, "the token is stamped with the account added")
		toks, err := m.Tokens(ctx, "alice")
		require.NoError(t, err, "tokens list right after tokens add")
		assert.Len(t, toks, 2, "the account's first token and the one added a moment ago")
		accs, err := m.Accounts(ctx)
		require.NoError(t, err, "accounts list right after accounts add")
		require.Len(t, accs, 1)
		assert.Equal(t, 2, accs[0].Tokens)
		_, err = a.ApproveLink(ctx, code, "alice", "alice")
		require.NoError(t, err, "link approve into the account right after accounts add")
		revoked, err := m.RevokeToken(ctx, tok.Token.Selector)
		require.NoError(t, err, "tokens revoke right after tokens add")
		assert.False(t, revoked.RevokedAt.IsZero())
	})
	whileLagging(t, b, func() {
		cred, err := m.AddCredential(ctx, "alice")
		require.NoError(t, err, "credentials add")
		creds, err := m.Credentials(ctx, "alice")
		require.NoError(t, err, "credentials list right after credentials add")
		assert.Len(t, creds, 1, "the credential added a moment ago")
		revoked, err := m.RevokeCredential(ctx, cred.Credential.Selector)
		require.NoError(t, err, "credentials revoke right after credentials add")
		assert.False(t, revoked.RevokedAt.IsZero())
	})
	whileLagging(t, b, func() {
		_, key, err := a.IssueEnrollmentKey(ctx, "alice", "alice", 0, 0)
		require.NoError(t, err, "link key")
		key, err = a.RevokeEnrollmentKey(ctx, "alice", key.Selector)
		require.NoError(t, err, "link revoke-key right after link key")
		assert.False(t, key.RevokedAt.IsZero())
	})
}

// whileLagging runs steps on b with the Raft traffic of the follower's replica of the bucket's
// stream held from their start (the JetStream meta group's passes: a listing's consumer is
// placed as ever, and may be on the follower, which lists what it had applied), then
// checks that the follower lagged (it has not applied what they wrote) and that they made no
// direct get, which the lagging follower may answer. Keep steps to a few calls: a follower
// that hears nothing from its leader for the election timeout (4 s at least) calls an
// election, and the leader the test knows may step down.
func whileLagging(t *testing.T, b accounttest.ReplicatedKV, steps func()) {
	t.Helper()
	release := b.Cluster.HoldStreamRaft(b.Leader, b.Follower, kvStream)
	directGets := b.Cluster.DirectGets(kvStream)
	steps()
	require.Less(t, b.Cluster.LastSeq(b.Follower, kvStream), b.Cluster.LastSeq(b.Leader, kvStream),
		"the follower has not applied what the steps wrote: the lag this test plays")
	assert.Equal(t, directGets, b.Cluster.DirectGets(kvStream), "no direct get, which a lagging follower may answer")
	release()
}

// TestKVAnUpdateRefusedForAMovedRevisionReadsAgainOnTheLeader: a replica connected to a
// follower changes an enrollment key (a link spending a use) while the operator changes it
// through the leader, and the follower lags (its Raft traffic held). The replica's write,
// made on the revision it read before, is refused (the leader checks it: nothing is written
// over), and its retry reads the key through the leader, no direct get, which the lagging
// follower may answer with the revision refused again until the retries run out. Both
// changes are kept.
func TestKVAnUpdateRefusedForAMovedRevisionReadsAgainOnTheLeader(t *testing.T) {
	ctx := t.Context()
	b := accounttest.StartReplicatedKV(t)
	require.NoError(t, b.Operator.CreateAccount(ctx, account.Account{ID: "alice", Role: account.RoleUser}))
	require.NoError(t, b.Operator.CreateEnrollmentKey(ctx, account.EnrollmentKey{Selector: "e1", Hash: []byte("h"), AccountID: "alice"}))
	require.Eventually(t, func() bool {
		for range 9 { // each of the three replicas answers some
			if _, err := b.Replica.EnrollmentKey(ctx, "e1"); err != nil {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "the replica reads the key")

	var directGets uint64
	changes := 0
	k, err := b.Replica.UpdateEnrollmentKey(ctx, "e1", func(k *account.EnrollmentKey) error {
		changes++
		if changes == 1 {
			b.Cluster.HoldStreamRaft(b.Leader, b.Follower, kvStream)
			_, err := b.Operator.UpdateEnrollmentKey(ctx, "e1", func(k *account.EnrollmentKey) error {
				k.Uses++
				return nil
			})
			require.NoError(t, err)
			require.Less(t, b.Cluster.LastSeq(b.Follower, kvStream), b.Cluster.LastSeq(b.Leader, kvStream),
				"the follower has not applied the operator's change: the lag this test plays")
			directGets = b.Cluster.DirectGets(kvStream)
		}
		k.Uses++
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, changes, "the write made on the moved revision was refused, and made again")
	assert.Equal(t, directGets, b.Cluster.DirectGets(kvStream), "the retry made no direct get, which a lagging follower may answer")
	assert.Equal(t, 2, k.Uses, "both uses are counted")
	k, err = account.Latest(b.Operator).EnrollmentKey(ctx, "e1")
	require.NoError(t, err)
	assert.Equal(t, 2, k.Uses, "both uses are counted")
}

// TestKVRemoveAccountRightAfterItsAddsReadsOnTheLeader: a script adds an account with a
// token, a credential and an enrollment key and removes it at once, every call through a
// replica connected to a follower that lags (its Raft traffic held). The removal reads the
// account, and lists its records, through the bucket's stream leader: no direct get (which
// the lagging follower may answer: "not found"), no listing by KeyValue.ListKeys (whose
// consumer the servers may place on the follower, which lists no record added since it
// lags: the record left behind, unreported). Each removal finds and deletes every record.
func TestKVRemoveAccountRightAfterItsAddsReadsOnTheLeader(t *testing.T) {
	ctx := t.Context()
	b := accounttest.StartReplicatedKV(t)
	require.NoError(t, b.Operator.CreateAccount(ctx, account.Account{ID: "root", Role: account.RoleAdmin}))
	// Several accounts: which replica a listing's consumer is placed on is the servers'
	// pick, the lagging follower among them.
	names := []string{"alice", "bob", "carol", "dave"}
	for _, id := range names {
		role := account.RoleUser
		if id == "dave" {
			role = account.RoleAdmin // its removal counts the admins: root is one
		}
		whileLagging(t, b, func() {
			require.NoError(t, b.Replica.CreateAccount(ctx, account.Account{ID: id, Role: role}))
			require.NoError(t, b.Replica.CreateToken(ctx, account.Token{Selector: "t-" + id, Hash: []byte("h"), AccountID: id}))
			require.NoError(t, b.Replica.CreateCredential(ctx, account.Credential{Selector: "c-" + id, Hash: []byte("h"), AccountID: id}))
			require.NoError(t, b.Replica.CreateEnrollmentKey(ctx, account.EnrollmentKey{Selector: "e-" + id, Hash: []byte("h"), AccountID: id}))
			r, err := b.Replica.RemoveAccount(ctx, id, time.Now())
			require.NoError(t, err, "accounts remove %s right after accounts add", id)
			assert.Equal(t, []string{"t-" + id}, r.Tokens, "%s's token is removed", id)
			assert.Equal(t, []string{"c-" + id}, r.Credentials, "%s's credential is removed", id)
			assert.Equal(t, []string{"e-" + id}, r.EnrollmentKeys, "%s's enrollment key is removed", id)
		})
	}
	latest := account.Latest(b.Operator)
	for _, id := range names {
		_, err := latest.Account(ctx, id)
		require.ErrorIs(t, err, account.ErrNotFound)
	}
	toks, err := latest.Tokens(ctx, "")
	require.NoError(t, err)
	assert.Empty(t, toks, "no token is left behind")
	creds, err := latest.Credentials(ctx, "")
	require.NoError(t, err)
	assert.Empty(t, creds, "no credential is left behind")
	keys, err := latest.EnrollmentKeys(ctx, "")
	require.NoError(t, err)
	assert.Empty(t, keys, "no enrollment key is left behind")
}

// TestKVABoundCredentialRightAfterAnotherOfItsIDIsRefused: two links of one computer id into
// an account, one right after the other, through a replica connected to a follower that lags
// (its Raft traffic held). The second looks at the id's record and the account's credentials
// through the bucket's stream leader: no direct get, no listing by KeyValue.ListKeys (whose
// consumer the servers may place on the follower, which lists no credential added since it
// lags), so it sees the first and is refused (*HeldIDError), where a second credential was
// bound to the id.
func TestKVABoundCredentialRightAfterAnotherOfItsIDIsRefused(t *testing.T) {
	ctx := t.Context()
	b := accounttest.StartReplicatedKV(t)
	require.NoError(t, b.Operator.CreateAccount(ctx, account.Account{ID: "alice", Role: account.RoleUser}))
	for _, id := range []string{"1", "2", "3", "4", "5", "6", "7", "8"} { // which replica a listing's consumer is placed on is the servers' pick
		whileLagging(t, b, func() {
			require.NoError(t, b.Replica.CreateBoundCredential(ctx, account.Credential{Selector: "a" + id, Hash: []byte("h"), AccountID: "alice", ComputerID: id}))
			err := b.Replica.CreateBoundCredential(ctx, account.Credential{Selector: "b" + id, Hash: []byte("h"), AccountID: "alice", ComputerID: id})
			var held *account.HeldIDError
			require.ErrorAs(t, err, &held, "computer %s's second link", id)
			assert.Equal(t, "a"+id, held.Held.Selector)
		})
	}
	creds, err := account.Latest(b.Operator).Credentials(ctx, "alice")
	require.NoError(t, err)
	assert.Len(t, creds, 8, "one credential for each computer id")
}

// kvStream is the bucket's stream.
const kvStream = "KV_" + account.KVBucket
