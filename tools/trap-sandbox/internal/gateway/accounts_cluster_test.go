package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/account/accounttest"
	"trap-sandbox/internal/clock"
	"trap-sandbox/testkit"
)

// TestAHelloRightAfterARevocationHeardOnAClusterIsClosed: on a NATS cluster whose accounts
// bucket has three stream replicas, a replica connected to a follower hears a credential's
// revocation on the bus (it holds no socket of it), and then its computer says hello. The
// follower lags (its Raft traffic held): the hello's direct get is answered by it, the
// credential live (followerAnswers). The
// replica remembers the revocation it heard and reads the credential once more through the
// bucket's leader: the computer is closed as revoked, where it stayed connected.
func TestAHelloRightAfterARevocationHeardOnAClusterIsClosed(t *testing.T) {
	ctx := t.Context()
	kv := accounttest.StartReplicatedKV(t)
	cl, leader, follower, operatorKV, replicaKV := kv.Cluster, kv.Leader, kv.Follower, kv.Operator, kv.Replica
	operator := account.New(operatorKV, clock.Real{})
	_, err := operator.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	secret, c, err := operator.IssueCredential(ctx, "alice", "alice")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		for range 9 { // each of the three replicas answers some
			if _, err := replicaKV.Credential(ctx, c.Selector); err != nil {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "the replica reads the credential")

	stale, err := replicaKV.Credential(ctx, c.Selector) // the follower's copy, which it keeps while it lags
	require.NoError(t, err)
	release := cl.HoldRaft(leader, follower)
	t.Cleanup(release)
	_, err = operatorKV.RevokeCredential(ctx, c.Selector, time.Unix(200, 0))
	require.NoError(t, err)
	require.Less(t, cl.LastSeq(follower, "KV_"+account.KVBucket), cl.LastSeq(leader, "KV_"+account.KVBucket),
		"the follower has not applied the revocation: the lag this test plays")

	h := newHarness(t, Config{Password: "pw", Accounts: account.New(followerAnswers{replicaKV, stale}, clock.Real{})}, nil)
	h.gw.revocationHeard(ctx, c.Selector) // as the router calls it for the bus's message
	a := h.dial(t, "7:")
	resp := a.hello(secret)
	require.True(t, resp.OK, "the lagging follower answered the hello's read with the credential live: %+v", resp.Error)
	a.expectClose(CloseRevoked, "revoked")
	assert.Eventually(t, func() bool { return len(h.gw.Computers()) == 0 }, waitLimit, testkit.Poll)
}

// followerAnswers is the accounts bucket on the cluster whose hello reads (Credential, a
// direct get, which the stream's replicas answer as NATS routes it) get the lagging
// follower's answer: its copy of the credential as it was before the revocation (stale, read
// from the cluster). Which replica answers a direct get is the servers' pick; this plays the
// pick of the follower. Every other read, the Latest view's among them, is the bucket's own.
type followerAnswers struct {
	*account.KV
	stale account.Credential
}

func (f followerAnswers) Credential(ctx context.Context, selector string) (account.Credential, error) {
	if selector == f.stale.Selector {
		return f.stale, nil
	}
	return f.KV.Credential(ctx, selector)
}

// TestRecentRevocationsAreBounded: a revocation is recent for recentRevocationLife, and at
// most maxRecentRevocations are kept, the oldest forgotten first (a flood of made-up ones on
// the bus costs no more); one revoked again is recent from its last time.
func TestRecentRevocationsAreBounded(t *testing.T) {
	var r recentRevocations
	t0 := time.Unix(1000, 0)
	r.add([]string{"a", "b"}, t0)
	r.add([]string{"a"}, t0.Add(time.Minute))
	assert.True(t, r.has("b", t0.Add(recentRevocationLife-time.Second)))
	assert.False(t, r.has("b", t0.Add(recentRevocationLife)), "past its life")
	assert.True(t, r.has("a", t0.Add(recentRevocationLife)), "revoked again a minute later")
	flood := make([]string, maxRecentRevocations)
	for i := range flood {
		flood[i] = fmt.Sprint("made-up-", i)
	}
	r.add(flood, t0.Add(2*time.Minute))
	assert.False(t, r.has("a", t0.Add(2*time.Minute)), "the oldest forgotten past the bound")
	assert.True(t, r.has("made-up-0", t0.Add(2*time.Minute)))
	assert.LessOrEqual(t, len(r.at), maxRecentRevocations)
	assert.LessOrEqual(t, len(r.order), maxRecentRevocations)
}
