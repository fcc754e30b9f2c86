package accounttest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/testkit/embeddednats"
)

// ReplicatedKV is the accounts bucket with three stream replicas on a three-server NATS
// cluster, as docs/scale-out.md has the operator make it: Operator's connection is on its
// stream leader, Replica's on a follower, which a test can make lag (Cluster.HoldRaft).
type ReplicatedKV struct {
	Cluster           *embeddednats.Cluster
	Leader, Follower  string
	Operator, Replica *account.KV
}

// StartReplicatedKV starts the cluster and opens the bucket from both of its ends; the
// cluster stops when t ends.
func StartReplicatedKV(t *testing.T) ReplicatedKV {
	t.Helper()
	ctx := t.Context()
	cl := embeddednats.StartCluster(t, 3)
	leader, follower := cl.ReplicatedBucket(account.KVBucket)
	operator, err := account.OpenKV(ctx, embeddednats.JetStream(t, cl.URL(leader)))
	require.NoError(t, err)
	replica, err := account.OpenKV(ctx, embeddednats.JetStream(t, cl.URL(follower)))
	require.NoError(t, err)
	return ReplicatedKV{Cluster: cl, Leader: leader, Follower: follower, Operator: operator, Replica: replica}
}
