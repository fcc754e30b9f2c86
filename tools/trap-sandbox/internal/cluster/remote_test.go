package cluster

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/gateway"
)

// entry is a claims bucket entry as the watcher delivers it.
type entry struct {
	key   string
	value []byte
	rev   uint64
	op    jetstream.KeyValueOp
}

func (e entry) Bucket() string                  { return ClaimsBucket }
func (e entry) Key() string                     { return e.key }
func (e entry) Value() []byte                   { return e.value }
func (e entry) Revision() uint64                { return e.rev }
func (e entry) Created() time.Time              { return time.Time{} }
func (e entry) Delta() uint64                   { return 0 }
func (e entry) Operation() jetstream.KeyValueOp { return e.op }

// bareRouter is a Router with no NATS, enough for claimChanged and the lookups over the other
// replicas' claims.
func bareRouter(replica string) *Router {
	cfg, _ := Config{Replica: replica, Clock: clock.Real{}}.withDefaults()
	return &Router{cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		held: make(map[gateway.Key]*held), remote: newRemoteSet(), lastSeen: make(map[string]time.Time), stopped: make(map[string]bool),
		doubted: make(map[gateway.Key]doubt)}
}

// claimEntry is the entry of computer traposID of account held by replica, as a replica writes
// it; its key points into a longer string, as a key cut from a NATS subject does.
func claimEntry(replica, account, traposID string, rev uint64) entry {
	k := gateway.Key{AccountID: account, TraposID: traposID}
	subject := "$KV." + ClaimsBucket + "." + claimKey(k)
	c := gateway.Computer{AccountID: account, TraposID: traposID, RemoteAddr: fmt.Sprintf("127.%d.0.1:%d", rev%200, 10000+rev%50000),
		ConnectedSince: time.Unix(1_700_000_000, int64(rev)).UTC(), ClientVersion: "trapos-client 1.4.0"}
	return entry{key: subject[len(subject)-len(claimKey(k)):], value: encodeClaim(replica, c, ""), rev: rev, op: jetstream.KeyValuePut}
}

func TestTheOtherReplicasClaimsAreKeptByComputer(t *testing.T) {
	r := bareRouter("me")
	r.lastSeen["r2"] = time.Now()
	r.claimChanged(claimEntry("r2", "alice", "7:door", 1))
	r.claimChanged(claimEntry("r2", "bob", "7:door", 2)) // the same traposId in another account
	r.claimChanged(claimEntry("r2", "bob", "8:gate", 3))
	cred := claimEntry("r2", "carol", "9:vault", 4)
	cred.value = encodeClaim("r2", gateway.Computer{AccountID: "carol", TraposID: "9:vault", RemoteAddr: "127.0.0.1:1",
		ConnectedSince: time.Unix(1_700_000_000, 0).UTC()}, "sel123")
	r.claimChanged(cred)

	assert.Equal(t, 4, r.remote.len())
	assert.ElementsMatch(t, []string{"alice", "bob"}, r.RemoteAccounts("7:door"))
	assert.Equal(t, []string{"bob"}, r.RemoteAccounts("8:gate"))
	assert.Empty(t, r.RemoteAccounts("10:none"))
	assert.Equal(t, "sel123", r.RemoteCredential(gateway.Key{AccountID: "carol", TraposID: "9:vault"}))
	list := r.Remote()
	require.Len(t, list, 4)
	want := claimEntry("r2", "bob", "8:gate", 3)
	for _, c := range list {
		if c.AccountID == "bob" && c.TraposID == "8:gate" {
			assert.Equal(t, gateway.Computer{AccountID: "bob", TraposID: "8:gate", RemoteAddr: "127.3.0.1:10003",
				ConnectedSince: time.Unix(1_700_000_000, 3).UTC(), LastFrameAt: time.Unix(1_700_000_000, 3).UTC(),
				Replica: "r2", ClientVersion: "trapos-client 1.4.0"}, c, "from %s", want.value)
		}
	}

	// Withdrawing the first account's claim of a traposId leaves the other account's.
	r.claimChanged(entry{key: claimKey(gateway.Key{AccountID: "alice", TraposID: "7:door"}), rev: 5, op: jetstream.KeyValueDelete})
	assert.Equal(t, []string{"bob"}, r.RemoteAccounts("7:door"))
	r.claimChanged(entry{key: claimKey(gateway.Key{AccountID: "bob", TraposID: "7:door"}), rev: 6, op: jetstream.KeyValueDelete})
	assert.Empty(t, r.RemoteAccounts("7:door"))
	assert.Equal(t, 2, r.remote.len())

	// A replica not heard from holds nothing that counts.
	r.claimChanged(claimEntry("r3", "dave", "11:mill", 7))
	assert.Empty(t, r.RemoteAccounts("11:mill"))
	assert.Len(t, r.Remote(), 2)
}

// BenchmarkRemoteClaims measures what each replica keeps per computer another replica holds:
// it applies 10 000 claims as the claims watcher delivers them and reports the live heap they
// leave, per claim (bytes/claim). go test -run '^$' -bench RemoteClaims ./internal/cluster
func BenchmarkRemoteClaims(b *testing.B) {
	const claims = 10_000
	for b.Loop() {
		r := bareRouter("r1")
		before := liveHeap()
		for i := range claims { // each entry is garbage once applied, as the watcher's are
			r.claimChanged(claimEntry(fmt.Sprintf("r%d", 2+i%5), "local", fmt.Sprintf("%d:computer", i), uint64(i+1)))
		}
		after := liveHeap()
		if r.remote.len() != claims {
			b.Fatalf("%d claims kept, want %d", r.remote.len(), claims)
		}
		b.ReportMetric(float64(after-before)/claims, "bytes/claim")
		runtime.KeepAlive(r)
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
