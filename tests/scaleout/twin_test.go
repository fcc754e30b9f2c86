package scaleout

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/twinfake"

	"tests/internal/harness"
)

// TestAReplicaExitsForAnOlderReplicaOfItsName: two replicas given one name at the same moment
// both pass the check at start; once the newer sees the older's heartbeat under its name
// (here written by the test over each of the replica's own, as an older replica writes it),
// it exits with status 1 and the start-time check's words, and leaves the name's heartbeat in
// place.
func TestAReplicaExitsForAnOlderReplicaOfItsName(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	bus := harness.StartNATS(t, natsBin)
	a := startReplica(t, bus, "a")

	nc, err := nats.Connect(bus.URL)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, "trapos_replicas")
	require.NoError(t, err)
	require.NoError(t, twinfake.Outbeat(ctx, kv, "a", []byte(`{"replica":"a","started":"2026-01-01T00:00:00Z","closesRemoved":true,"instance":"0123456789abcdef"}`)))

	select {
	case <-a.Exited():
	case <-time.After(waitLimit):
		t.Fatal("the newer replica of the name did not exit")
	}
	err = a.Kill() // it has exited already: this collects its status
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exit status 1")
	assert.Contains(t, a.Log(), `trap-sandbox: serve: the replica name "a" is taken: another replica runs under it, started before this one, and the older of the two keeps it (started 2026-01-01T00:00:00Z; this one `)
	assert.Contains(t, a.Log(), `). Give each replica its own --replica (SANDBOX_REPLICA), or stop the other one first`)
	assert.Contains(t, a.Log(), `msg="closed every socket: going away"`)
	e, err := kv.Get(ctx, "a")
	require.NoError(t, err, "the heartbeat under the name is not deleted")
	assert.Contains(t, string(e.Value()), `"yielded":true`)
}
