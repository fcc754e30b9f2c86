// Package embeddednats runs a real NATS server with JetStream inside a test, for the tests
// that need replicas' shared bucket without the nats-server binary (tests/ starts that one).
package embeddednats

import (
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// readyWait bounds the wait for the server to take connections.
const readyWait = 10 * time.Second

// Start runs a NATS server with JetStream on a random loopback port until the test ends and
// returns its client URL.
func Start(t *testing.T) string {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatalf("embedded NATS server: %v", err)
	}
	go ns.Start()
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	if !ns.ReadyForConnections(readyWait) {
		t.Fatal("the embedded NATS server did not start")
	}
	return ns.ClientURL()
}

// JetStream returns a JetStream client on a connection of its own to url (one replica's),
// closed when the test ends.
func JetStream(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connect to NATS at %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("JetStream on %s: %v", url, err)
	}
	return js
}
