package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/testkit"
)

// TestAReplicaReadsTheClaimsWhenMarkersArePurgedAsItReadsThem: nats.go's watcher says it has
// read a bucket's contents at its start once it has received as many entries as were
// pending then, or an entry says none is pending any more. The server writes that into each
// entry as it sends it: markers purged (purgeMarkers) after the last claim before them was
// sent, and before they were, left the claim saying "5 more", and the 5 never came. The
// replica's /healthz said "reading the other replicas' computers" until 5 later changes came.
//
// The server is made to wait between the last claim and the markers by flow control: it
// stops sending once 2 MB are on their way to a client, until that client has taken them; A's
// watcher is held at its first claim, so its buffer of 256 fills and it takes nothing more.
// Three big claims after the small ones carry the server over the 2 MB.
func TestAReplicaReadsTheClaimsWhenMarkersArePurgedAsItReadsThem(t *testing.T) {
	tc := newTestCluster(t)
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	nc, err := nats.Connect(tc.url())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	claimsCfg, _ := (&Router{}).bucketConfigs()
	claims, err := bucket(ctx, js, claimsCfg)
	require.NoError(t, err)

	// The claims of replica c, which is not running: no replica withdraws them.
	const small, big, markers = 300, 3, 5
	put := func(i int, pad string) uint64 {
		k := gateway.Key{AccountID: gateway.LocalAccount, TraposID: strconv.Itoa(i) + ":pc"}
		v, err := json.Marshal(map[string]string{"replica": "c", "accountId": k.AccountID, "traposId": k.TraposID, "pad": pad})
		require.NoError(t, err)
		rev, err := claims.Put(ctx, claimKey(k), v)
		require.NoError(t, err)
		return rev
	}
	for i := range small {
		put(i, "")
	}
	var lastClaim uint64
	for i := range big {
		lastClaim = put(small+i, strings.Repeat("x", 900_000))
	}
	type markerAt struct {
		key string
		rev uint64
	}
	stream, err := js.Stream(ctx, "KV_"+ClaimsBucket)
	require.NoError(t, err)
	var left []markerAt
	for i := range markers {
		key := claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: strconv.Itoa(i) + ":pc"})
		require.NoError(t, claims.Delete(ctx, key)) // the computer left
		m, err := stream.GetLastMsgForSubject(ctx, "$KV."+ClaimsBucket+"."+key)
		require.NoError(t, err)
		left = append(left, markerAt{key, m.Sequence})
	}

	// A starts, and its watcher is held at its first claim.
	reached, release := make(chan struct{}), make(chan struct{})
	var reachOnce, releaseOnce sync.Once
	held := func() {
		reachOnce.Do(func() { close(reached) })
		select {
		case <-release:
		case <-ctx.Done(): // the test has failed: let A stop
		}
	}
	anc, err := Connect(ctx, ConnOptions{URL: tc.url(), Name: "a", ReconnectWait: testReconnectWait}, slog.New(slog.NewTextHandler(tc.logs, nil)))
	require.NoError(t, err)
	a, err := newRouter(ctx, anc, Config{Replica: "a", HeartbeatInterval: testHeartbeat, ReplicaTTL: testReplicaTTL, Clock: tc.clock},
		slog.New(slog.NewTextHandler(tc.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", "a"), held)
	require.NoError(t, err)
	defer a.Close()
	defer releaseOnce.Do(func() { close(release) }) // before Close, which waits for the watcher
	<-reached

	// The server has sent the last claim, and waits for A's watcher before the markers.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		consumers := stream.ListConsumers(ctx)
		var delivered []uint64
		for ci := range consumers.Info() {
			delivered = append(delivered, ci.Delivered.Stream)
		}
		assert.NoError(c, consumers.Err())
		assert.Equal(c, []uint64{lastClaim}, delivered, "the stream's one consumer (A's claims watcher) has sent up to the last claim")
	}, waitLimit, testkit.Poll, "the server to send A's watcher the claims")

	// The markers are purged, as the purging replica's sweep purges them.
	for _, m := range left {
		require.NoError(t, stream.Purge(ctx, jetstream.WithPurgeSubject("$KV."+ClaimsBucket+"."+m.key), jetstream.WithPurgeSequence(m.rev+1)))
	}
	assert.Contains(t, a.HealthDetail(), "reading the other replicas' computers")
	releaseOnce.Do(func() { close(release) })

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NotContains(c, a.HealthDetail(), "reading")
	}, waitLimit, testkit.Poll, "A to have read the claims")
	assert.Contains(t, tc.logs.String(), fmt.Sprintf(`msg="read the other replicas' computers" replica=a component=cluster computers=%d `, small-markers+big))
}
