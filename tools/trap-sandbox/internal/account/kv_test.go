package account_test

import (
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/account/accounttest"
)

// startJetStream runs an embedded NATS server with JetStream for one test and returns a
// JetStream client on it.
func startJetStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir()})
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(10*time.Second), "the embedded NATS server did not start")
	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	t.Cleanup(func() {
		nc.Close()
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return js
}

func TestKVStore(t *testing.T) {
	accounttest.Run(t, func(t *testing.T) account.Store {
		s, err := account.OpenKV(t.Context(), startJetStream(t))
		require.NoError(t, err)
		return s
	})
}

// TestKVStoreIsShared: two stores on one bucket (two replicas) see each other's writes, and a
// revocation by one is what the other reads next.
func TestKVStoreIsShared(t *testing.T) {
	js := startJetStream(t)
	a, err := account.OpenKV(t.Context(), js)
	require.NoError(t, err)
	b, err := account.OpenKV(t.Context(), js)
	require.NoError(t, err)
	require.NoError(t, a.CreateAccount(t.Context(), account.Account{ID: "alice", Role: account.RoleUser}))
	require.NoError(t, b.CreateCredential(t.Context(), account.Credential{Selector: "c1", Hash: []byte("h"), AccountID: "alice"}))
	_, err = a.RevokeCredential(t.Context(), "c1", time.Unix(5, 0))
	require.NoError(t, err)
	c, err := b.Credential(t.Context(), "c1")
	require.NoError(t, err)
	require.Equal(t, time.Unix(5, 0).UTC(), c.RevokedAt)
}
