package link

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/account/accounttest"
	"trap-sandbox/internal/clock"
)

// TestAKeyMadeOnAClusterIsListedAndRevokedAtOnce: on a NATS cluster whose accounts bucket has
// three stream replicas, a replica connected to a follower that lags (the Raft traffic of its
// replica of the bucket's stream held) makes an enrollment key (link key), lists the
// account's keys (link keys) and revokes it (link revoke-key) right after. The look for the
// account, the listing and the revocation read through the stream's leader: no direct get,
// which the lagging follower may answer without the key, and no listing's consumer on it:
// the key is listed and revoked.
func TestAKeyMadeOnAClusterIsListedAndRevokedAtOnce(t *testing.T) {
	ctx := t.Context()
	kv := accounttest.StartReplicatedKV(t)
	accounts := account.New(kv.Replica, clock.Real{})
	_, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	f := newFixture(t, Config{Accounts: accounts})

	kv.Cluster.HoldStreamRaft(kv.Leader, kv.Follower, "KV_"+account.KVBucket)
	directGets := kv.Cluster.DirectGets("KV_" + account.KVBucket)
	status, ans := f.api(root, "POST", KeysPath, map[string]any{"account": "alice", "maxUses": 1})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	var k Key
	require.NoError(t, json.Unmarshal(ans.Payload, &k))
	status, ans = f.api(root, "GET", KeysPath+"?account=alice", nil)
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	var keys []Key
	require.NoError(t, json.Unmarshal(ans.Payload, &keys))
	require.Len(t, keys, 1, "the key made a moment ago is listed")
	assert.Equal(t, k.ID, keys[0].ID)
	status, ans = f.api(root, "POST", "/trapos/link/keys/"+k.ID+"/revoke", nil)
	require.Equal(t, http.StatusOK, status, "the key made a moment ago is revoked: %+v", ans.Error)
	require.Less(t, kv.Cluster.LastSeq(kv.Follower, "KV_"+account.KVBucket), kv.Cluster.LastSeq(kv.Leader, "KV_"+account.KVBucket),
		"the follower has not applied the key: the lag this test plays")
	assert.Equal(t, directGets, kv.Cluster.DirectGets("KV_"+account.KVBucket), "no direct get, which a lagging follower may answer")
}
