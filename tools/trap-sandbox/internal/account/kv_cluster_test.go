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
// that lags, LatestCredential reads through the leader, no direct get (which the lagging
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
	c, err := account.LatestCredential(ctx, b.Replica, "c1")
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

// kvStream is the bucket's stream.
const kvStream = "KV_" + account.KVBucket
