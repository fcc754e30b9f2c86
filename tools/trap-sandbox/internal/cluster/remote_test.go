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
		doubted: make(map[gateway.Key]doubt), markers: make(map[string]marker)}
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
	list := r.liveRemote()
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
	assert.Len(t, r.liveRemote(), 2)
}

// BenchmarkRemoteClaims measures what each replica keeps per computer another replica holds,
// and what applying a claim costs: it applies 10 000 claims as the claims watcher delivers
// them and reports the live heap they leave (bytes/claim: what every other replica keeps per
// computer, which the Go heap doubles in resident memory), and the allocations the applying
// made (allocs/claim, alloc-bytes/claim: garbage but for what is kept).
// go test -run '^$' -bench RemoteClaims ./internal/cluster
func BenchmarkRemoteClaims(b *testing.B) {
	const claims = 10_000
	entries := make([]entry, claims)
	for i := range entries {
		entries[i] = claimEntry(fmt.Sprintf("r%d", 2+i%5), "local", fmt.Sprintf("%d:computer", i), uint64(i+1))
	}
	for b.Loop() {
		r := bareRouter("r1")
		before := memStats()
		for _, e := range entries {
			r.claimChanged(e)
		}
		after := memStats()
		if r.remote.len() != claims {
			b.Fatalf("%d claims kept, want %d", r.remote.len(), claims)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/claims, "bytes/claim")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/claims, "allocs/claim")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/claims, "alloc-bytes/claim")
		runtime.KeepAlive(r)
	}
	runtime.KeepAlive(entries)
}

// memStats is the runtime's memory figures after a collection (HeapAlloc: the live heap).
func memStats() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

func TestARemoteClaimGivesBackItsAddressAndCredential(t *testing.T) {
	for _, tc := range []struct{ addr, credential string }{
		{"127.3.0.1:10003", ""},            // IPv4 and port: kept as a number
		{"203.0.113.9:65535", "sel123"},    // the same, with a credential
		{"0.0.0.0:0", ""},                  // the smallest
		{"[2001:db8::1]:443", "sel123"},    // IPv6: kept as text
		{"127.0.0.1", ""},                  // no port
		{"127.000.000.001:80", "x"},        // not as netip writes it: kept as text, as written
		{"", "sel"},                        // none
		{"[::ffff:1.2.3.4]:80", ""},        // IPv4-mapped IPv6 is not IPv4
		{"pipe", "sel123-with-more-to-it"}, // anything else a claim may say
	} {
		c := newRemoteClaim(claim{Replica: "r2", AccountID: "alice", RemoteAddr: tc.addr, Credential: tc.credential,
			ConnectedSince: time.Unix(1_700_000_000, 5)}, 9)
		assert.Equal(t, tc.addr, c.remoteAddr(), "%+v", tc)
		assert.Equal(t, tc.credential, c.credential(), "%+v", tc)
		assert.Equal(t, "alice", c.account())
		assert.Equal(t, "r2", c.replica())
	}
	_, packed := packIPv4("127.3.0.1:10003")
	assert.True(t, packed, "an IPv4 address and port take no text")
}

func FuzzRemoteClaimGivesBackItsAddressAndCredential(f *testing.F) {
	for _, s := range [][2]string{{"127.3.0.1:10003", ""}, {"[2001:db8::1]:443", "sel"}, {"1.2.3.4:05", "x"}, {"", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, addr, credential string) {
		c := newRemoteClaim(claim{Replica: "r2", AccountID: "a", RemoteAddr: addr, Credential: credential}, 1)
		if c.remoteAddr() != addr || c.credential() != credential {
			t.Fatalf("kept %q and %q as %q and %q", addr, credential, c.remoteAddr(), c.credential())
		}
	})
}
