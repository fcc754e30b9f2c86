package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/testkit"
)

// sharedAccounts is the account store of a test's replicas (in memory, one for all, as the
// NATS bucket is for real replicas), with alice and one credential of hers.
func sharedAccounts(t *testing.T) (accounts *account.Accounts, credential, selector string) {
	t.Helper()
	accounts = account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	credential, c, err := accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	return accounts, credential, c.Selector
}

// alicesComputerOnB starts replicas a and b on accounts (sharedAccounts) and connects alice's
// computer 7: to b with credential, returning once a lists it there.
func alicesComputerOnB(t *testing.T, tc *testCluster, accounts *account.Accounts, credential string) (a, b *replica, c *computer) {
	t.Helper()
	a = tc.startReplicaWith("a", gateway.Config{Accounts: accounts})
	b = tc.startReplicaWith("b", gateway.Config{Accounts: accounts})
	c = b.connectWith(t, "7:", credential)
	a.waitComputers(t, "7:@b")
	return a, b, c
}

// connectWith dials r and completes a hello as traposID with secret.
func (r *replica) connectWith(t testing.TB, traposID, secret string) *computer {
	t.Helper()
	c := r.dial(t, traposID)
	c.send(map[string]any{"event": "computer_request", "traposSenderId": traposID, "messageId": "hello-1",
		"type": gateway.TypeHello, "payload": map[string]any{"traposId": traposID, "secret": secret, "clientVersion": testClientVersion}})
	resp := c.read()
	require.True(t, resp.OK, "hello failed: %+v", resp.Error)
	return c
}

// revoke is POST …/revoke on r (a loopback caller: every account's computers).
func (r *replica) revoke(t *testing.T, traposID string) (int, string) {
	t.Helper()
	resp, err := client().Post(r.srv.URL+"/trapos/computers/"+traposID+"/revoke", "application/json", nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// Revoking a computer through a replica that does not hold its socket closes the socket on
// the replica that does (4003), at once: the revocation is announced on the bus.
func TestRevokingThroughAnyReplicaClosesTheSocketWhereItIs(t *testing.T) {
	tc := newTestCluster(t)
	accounts, credential, selector := sharedAccounts(t)
	a, _, c := alicesComputerOnB(t, tc, accounts, credential)

	status, body := a.revoke(t, "7:")
	require.Equal(t, http.StatusOK, status, body)
	var rev gateway.Revoked
	var ans struct{ Payload json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(body), &ans))
	require.NoError(t, json.Unmarshal(ans.Payload, &rev))
	assert.Equal(t, gateway.Revoked{TraposID: "7:", AccountID: "alice", Credential: selector, Replica: "b"}, rev, "B holds its socket")

	code, reason := c.closeCode()
	assert.Equal(t, gateway.CloseRevoked, code)
	assert.Equal(t, "revoked", reason)
	a.waitComputers(t)
	cr, err := accounts.Store().Credential(t.Context(), selector)
	require.NoError(t, err)
	assert.False(t, cr.RevokedAt.IsZero(), "revoked in the store")
}

// A traposId's byte that is not UTF-8 (%FC, from a Latin-1 terminal) stands for itself, by
// the text rule: revoking 7:k%FCche revokes 7:küche (it was not connected).
func TestRevokingTakesARawByteOfTheTraposIdAsItself(t *testing.T) {
	tc := newTestCluster(t)
	accounts, credential, _ := sharedAccounts(t)
	a := tc.startReplicaWith("a", gateway.Config{Accounts: accounts})
	c := a.connectWith(t, "7:küche", credential)

	status, body := a.revoke(t, "7:k%FCche")
	require.Equal(t, http.StatusOK, status, body)
	code, _ := c.closeCode()
	assert.Equal(t, gateway.CloseRevoked, code)
}

// A revocation published on the bus by another client, for a credential the store does not
// say is revoked, closes nothing: the replica holding its socket checks the store first, and
// logs the forgery (a replica holding none does nothing).
// Once the store says it (a revocation made by the account commands on the shared bucket),
// the same message closes the socket.
func TestAForgedRevocationClosesNothing(t *testing.T) {
	tc := newTestCluster(t)
	accounts, credential, selector := sharedAccounts(t)
	a, _, c := alicesComputerOnB(t, tc, accounts, credential)

	rogue := tc.busClient(t)
	require.NoError(t, PublishRevocation(rogue, selector))
	const ignored = "ignored a revocation heard on the bus: the account store says the credential is not revoked"
	require.Eventually(t, func() bool { return strings.Contains(tc.logs.String(), ignored) }, waitLimit, testkit.Poll,
		"B to check the store and ignore the forged revocation")
	pending := a.request("7:", gateway.TypePing, nil, waitLimit)
	c.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "7:"})
	assert.Equal(t, http.StatusOK, await(t, pending).status, "the socket is still open, and A reaches it")

	_, err := accounts.RevokeCredential(context.Background(), "", selector)
	require.NoError(t, err)
	require.NoError(t, PublishRevocation(rogue, selector))
	code, _ := c.closeCode()
	assert.Equal(t, gateway.CloseRevoked, code)
	assert.Equal(t, 1, strings.Count(tc.logs.String(), ignored), "A holds no socket of the credential: it does not even ask the store")
}

// Removing an account through a replica that does not hold its computer's socket closes the
// socket on the replica that does (4003), at once: each of its credentials is announced on
// the bus, and the holder, finding the credential gone from the store (removed with its
// account), takes that as the store's word. The removing replica says which computers it
// closed.
func TestRemovingAnAccountClosesItsComputersOnEveryReplica(t *testing.T) {
	tc := newTestCluster(t)
	accounts, credential, _ := sharedAccounts(t)
	_, err := accounts.AddAccount(t.Context(), "root", account.RoleAdmin, "first")
	require.NoError(t, err)
	a, _, c := alicesComputerOnB(t, tc, accounts, credential)

	removed, err := accounts.RemoveAccount(t.Context(), "alice")
	require.NoError(t, err)
	closed, notClosed := a.gw.AccountRemoved("alice", removed.Credentials)
	assert.Equal(t, []string{"7:"}, closed)
	assert.Empty(t, notClosed)
	code, reason := c.closeCode()
	assert.Equal(t, gateway.CloseRevoked, code)
	assert.Equal(t, "revoked", reason)
	a.waitComputers(t)
	assert.NotContains(t, tc.logs.String(), "ignored a revocation heard on the bus")
}

// An account removed while a replica of a trap-sandbox from before accounts remove holds one
// of its computers (a rolling upgrade): that replica ignores the credential heard on the bus
// (the store no longer has it), so the removing replica does not count the computer as
// closed but as left connected; every newer replica warns once that the older one is there.
func TestAnOlderReplicasComputerIsNotCountedAsClosed(t *testing.T) {
	tc := newTestCluster(t)
	accounts, _, selector := sharedAccounts(t)
	a := tc.startReplicaWith("a", gateway.Config{Accounts: accounts})
	b := tc.startReplicaWith("b", gateway.Config{Accounts: accounts})

	// Replica "old" writes its heartbeat (without closesRemoved) and its claim by hand.
	js, err := jetstream.New(a.nc)
	require.NoError(t, err)
	ctx := t.Context()
	replicas, err := js.KeyValue(ctx, ReplicasBucket)
	require.NoError(t, err)
	claims, err := js.KeyValue(ctx, ClaimsBucket)
	require.NoError(t, err)
	hb, _ := json.Marshal(map[string]any{"replica": "old", "started": time.Now()})
	_, err = replicas.Put(ctx, escapeToken("old"), hb)
	require.NoError(t, err)
	kitchen := gateway.Computer{AccountID: "alice", TraposID: "7:kitchen", RemoteAddr: "127.0.0.2:1", ConnectedSince: time.Now()}
	_, err = claims.Put(ctx, claimKey(gateway.Key{AccountID: kitchen.AccountID, TraposID: kitchen.TraposID}), encodeClaim("old", kitchen, selector))
	require.NoError(t, err)
	a.waitComputers(t, "7:kitchen@old")
	b.waitComputers(t, "7:kitchen@old")
	// A replica warns right after it takes the heartbeat in, which the listing can show first.
	const older = `level=WARN msg="another replica runs an older trap-sandbox, which does not close the computers of an account removed on another replica: upgrade every replica (docs/scale-out.md)" replica=%s component=cluster other=old`
	for _, r := range []string{"a", "b"} {
		require.Eventually(t, func() bool { return strings.Contains(tc.logs.String(), fmt.Sprintf(older, r)) }, waitLimit, testkit.Poll,
			"%s to warn of the older replica", r)
	}

	removed, err := accounts.RemoveAccount(ctx, "alice")
	require.NoError(t, err)
	closed, notClosed := a.gw.AccountRemoved("alice", removed.Credentials)
	assert.Empty(t, closed)
	assert.Equal(t, []string{"7:kitchen"}, notClosed)

	for _, r := range []string{"a", "b"} {
		assert.Equal(t, 1, strings.Count(tc.logs.String(), fmt.Sprintf(older, r)), "%s warns, once", r)
	}
	// Nor of the new ones: only their coming is logged (presence.go).
	for _, r := range []string{"a", "b"} {
		assert.NotContains(t, tc.logs.String(), "upgrade every replica (docs/scale-out.md)\" replica=a component=cluster other="+r)
		assert.NotContains(t, tc.logs.String(), "upgrade every replica (docs/scale-out.md)\" replica=b component=cluster other="+r)
	}
}

// pausingStore is the replicas' account store, whose hellos as computer paused wait at the
// record of their last hello (after the store took the credential, before the replica
// registers the computer) until the test lets them go.
type pausingStore struct {
	*account.Memory
	paused  string
	seeing  chan struct{}
	proceed chan struct{}
}

func (p pausingStore) SeeCredential(ctx context.Context, selector string, at time.Time, traposID, remoteAddr string) error {
	if traposID == p.paused {
		p.seeing <- struct{}{}
		<-p.proceed
	}
	return p.Memory.SeeCredential(ctx, selector, at, traposID, remoteAddr)
}

// A credential revoked through one replica while another checks a hello made with it: the
// holder's walk over its sockets, when the announcement came, missed the computer not
// registered yet, and it stayed connected there. It is closed as its hello ends (4003). Here
// the holder has another socket of the same credential (an issued one, good for any
// computer id), whose close says that the announcement was heard.
func TestARevocationHeardDuringAHelloClosesItsComputer(t *testing.T) {
	store := pausingStore{Memory: account.NewMemory(), paused: "7:", seeing: make(chan struct{}), proceed: make(chan struct{})}
	proceed := sync.OnceFunc(func() { close(store.proceed) })
	t.Cleanup(proceed)
	accounts := account.New(store, clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	credential, cr, err := accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	tc := newTestCluster(t)
	a := tc.startReplicaWith("a", gateway.Config{Accounts: accounts})
	b := tc.startReplicaWith("b", gateway.Config{Accounts: accounts})
	other := b.connectWith(t, "8:", credential)
	c := b.dial(t, "7:")
	c.send(map[string]any{"event": "computer_request", "traposSenderId": "7:", "messageId": "hello-1",
		"type": gateway.TypeHello, "payload": map[string]any{"traposId": "7:", "secret": credential, "clientVersion": testClientVersion}})
	<-store.seeing

	_, err = accounts.RevokeCredential(t.Context(), "", cr.Selector)
	require.NoError(t, err)
	a.gw.CredentialRevoked(cr.Selector) // as a's API does once the store has it: announced on the bus
	code, _ := other.closeCode()
	require.Equal(t, gateway.CloseRevoked, code, "b heard the revocation")
	proceed()

	code, reason := c.closeCode()
	assert.Equal(t, gateway.CloseRevoked, code)
	assert.Equal(t, "revoked", reason)
	a.waitComputers(t)
}

// floodedLocal is a replica's gateway.Local whose checks of the revocations heard on the bus
// that name a credential flood-… wait for release, as on a slow account store: the
// subscription's slots stay taken, and what comes next waits in NATS's buffer of it.
type floodedLocal struct {
	gateway.Local
	release chan struct{}
	waiting atomic.Int64 // the flood's checks waiting for release
}

func (l *floodedLocal) RevocationHeard(ctx context.Context, selector string) {
	if !strings.HasPrefix(selector, "flood-") {
		l.Local.RevocationHeard(ctx, selector)
		return
	}
	l.waiting.Add(1)
	select {
	case <-l.release:
	case <-ctx.Done():
	}
}

// A flood on trapos.revoked outruns what NATS's buffer of the subscription holds, and NATS
// drops the rest (1 000 000 messages published in 2.6 s by one client dropped 226 685 of them
// here, with the default buffer): a real revocation among them closed nothing, its computer
// served until its next hello, and each overflow was a log line of its own. Once NATS drops
// any, the replica asks the account store about every credential it holds, a line of the log
// for each check: the revoked one's socket closes (4003) while the flood still waits.
func TestARevocationDroppedFromAFloodStillClosesItsSocket(t *testing.T) {
	tc := newTestCluster(t)
	accounts, credential, selector := sharedAccounts(t)
	a := tc.startReplicaWith("a", gateway.Config{Accounts: accounts})
	c := a.connectWith(t, "7:", credential)
	local := &floodedLocal{Local: a.router.attached(), release: make(chan struct{})}
	a.router.Attach(local)
	t.Cleanup(func() { close(local.release) }) // before the replica stops
	const buffer = 16                          // messages; the default is 500 000
	require.NoError(t, a.router.revSub.SetPendingLimits(buffer, -1))

	bus := tc.busClient(t)
	flood := func(from, to int) {
		for i := from; i < to; i++ {
			require.NoError(t, bus.Publish(RevocationSubject, fmt.Appendf(nil, `{"credential":"flood-%d"}`, i)))
		}
	}
	// The checks under way and the message waiting for a slot first: published with the rest,
	// NATS could drop some of the first ones while the subscription still took them, and then
	// buffer the revocation (not drop it) behind the checks that wait for ever.
	flood(0, maxRevocationChecks+1)
	require.Eventually(t, func() bool {
		msgs, _, err := a.router.revSub.Pending()
		return err == nil && local.waiting.Load() == maxRevocationChecks && msgs == 1
	}, waitLimit, testkit.Poll, "the checks under way, one message waiting for a slot")
	// The buffer, and more.
	flood(maxRevocationChecks+1, maxRevocationChecks+1+buffer+100)
	_, err := accounts.RevokeCredential(t.Context(), "", selector)
	require.NoError(t, err)
	require.NoError(t, PublishRevocation(bus, selector))

	code, _ := c.closeCode()
	assert.Equal(t, gateway.CloseRevoked, code)
	// The check may close the socket before the flood's tail has reached the replica (the
	// store said revoked already): its drops are counted as they come.
	require.Eventually(t, func() bool {
		dropped, err := a.router.revSub.Dropped()
		return err == nil && dropped > 100
	}, waitLimit, testkit.Poll, "NATS dropped the flood's tail and the revocation behind it")
	// One line a minute, not one for each overflow, nor for each check: a check that ends
	// between two drops of the flood is followed by another, as the scheduler has it.
	logs := tc.logs.String()
	assert.Equal(t, 1, strings.Count(logs, revocationsDroppedLine), "a line a minute, not one for each overflow or check")
	assert.NotContains(t, logs, "slow consumer")
}

// Nothing announced on the bus while a replica is cut off from NATS reaches it: a revocation
// made meanwhile closed nothing there, its computer served until its next hello. Once back,
// the replica asks the account store about every credential it holds.
func TestARevocationAnnouncedWhileAReplicaWasAwayClosesItsSocketOnceBack(t *testing.T) {
	tc := newTestCluster(t)
	accounts, credential, selector := sharedAccounts(t)
	a, cut := tc.startCuttableReplica("a", gateway.Config{Accounts: accounts})
	c := a.connectWith(t, "7:", credential)
	other := tc.startReplicaWith("b", gateway.Config{Accounts: accounts})

	cut.setCut(true)
	require.Eventually(t, func() bool { return !a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to lose NATS")
	status, body := other.revoke(t, "7:")
	require.Equal(t, http.StatusOK, status, body) // revoked in the store, announced to nobody who holds it
	cr, err := accounts.Store().Credential(t.Context(), selector)
	require.NoError(t, err)
	require.False(t, cr.RevokedAt.IsZero())
	cut.setCut(false)

	code, _ := c.closeCode()
	assert.Equal(t, gateway.CloseRevoked, code)
	require.Eventually(t, func() bool {
		return strings.Contains(tc.logs.String(), revocationsWhileAwayLine+"\" replica=a component=cluster credentials=1 revoked=1")
	}, waitLimit, testkit.Poll, "A to say what it checked")
}

// An account removed, and made again under its name, while a replica holding one of its
// computers was cut off from NATS: the removal deleted the credential (no revocation mark to
// read), and the new alice is another account. Once back, the replica finds the credential
// gone and closes the socket as a revoked one's; the old alice's computer does not go on as
// the new alice's.
func TestAnAccountRemovedWhileAReplicaWasAwayLosesItsComputerThereOnceBack(t *testing.T) {
	tc := newTestCluster(t)
	accounts, credential, _ := sharedAccounts(t)
	a, cut := tc.startCuttableReplica("a", gateway.Config{Accounts: accounts})
	c := a.connectWith(t, "7:", credential)

	cut.setCut(true)
	require.Eventually(t, func() bool { return !a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to lose NATS")
	_, err := accounts.RemoveAccount(t.Context(), "alice")
	require.NoError(t, err)
	_, err = accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	cut.setCut(false)

	code, _ := c.closeCode()
	assert.Equal(t, gateway.CloseRevoked, code)
	require.Eventually(t, func() bool {
		return strings.Contains(tc.logs.String(), revocationsWhileAwayLine+"\" replica=a component=cluster credentials=1 revoked=1")
	}, waitLimit, testkit.Poll, "A to say what it checked")
}

// kvAccounts is the NATS bucket's account store, as a replica opens it: on a connection of
// its own to natsURL (cli's serve), which the test closes at its end.
func kvAccounts(t *testing.T, tc *testCluster, natsURL, name string) (*account.Accounts, *nats.Conn) {
	t.Helper()
	nc, err := Connect(t.Context(), ConnOptions{URL: natsURL, Name: name, ReconnectWait: testReconnectWait, SecondConnection: true},
		slog.New(slog.NewTextHandler(tc.logs, nil)))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	kv, err := account.OpenKV(t.Context(), js)
	require.NoError(t, err)
	return account.New(kv, clock.Real{}), nc
}

// A replica reads the account store on a connection of its own, which reconnects on its own
// schedule. When the router's connection is back first, the check it starts then reads the
// store while the store's connection is still away, and fails; once that one is back too, the
// replica checks again, and closes the socket of a credential revoked meanwhile, where it left
// it open until the computer's next hello (played: nats-server restarted, the check failed
// with "NATS is not reachable (reconnecting)" 2 ms after the router's "NATS connection back").
func TestARevocationMissedWhileAwayIsCheckedOnceTheAccountStoresConnectionIsBackToo(t *testing.T) {
	tc := newTestCluster(t)
	storeLink := newCuttableProxy(t, tc.ns.Addr().String())
	accounts, storeConn := kvAccounts(t, tc, storeLink.url(), "a accounts")
	others, _ := kvAccounts(t, tc, tc.url(), "b accounts")
	_, err := others.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	credential, _, err := others.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)

	a, routerLink := tc.startCuttableReplica("a", gateway.Config{Accounts: accounts})
	a.router.FollowAccountStore(storeConn)
	c := a.connectWith(t, "7:", credential)
	b := tc.startReplicaWith("b", gateway.Config{Accounts: others})
	b.waitComputers(t, "7:@a")

	routerLink.setCut(true)
	storeLink.setCut(true)
	require.Eventually(t, func() bool { return !a.nc.IsConnected() && !storeConn.IsConnected() }, waitLimit, testkit.Poll, "A to lose NATS")
	status, body := b.revoke(t, "7:")
	require.Equal(t, http.StatusOK, status, body) // revoked in the store, announced to nobody who holds it

	routerLink.setCut(false)
	require.Eventually(t, func() bool {
		return strings.Contains(tc.logs.String(), "the account store's connection to NATS is not back; checking them again once it is")
	}, waitLimit, testkit.Poll, "A's check on its router's return to fail")
	storeLink.setCut(false)

	code, _ := c.closeCode()
	assert.Equal(t, gateway.CloseRevoked, code)
	require.Eventually(t, func() bool {
		return strings.Contains(tc.logs.String(), revocationsWhileAwayLine+"\" replica=a component=cluster credentials=1 revoked=1")
	}, waitLimit, testkit.Poll, "A to say what it checked")
	assert.NotContains(t, tc.logs.String(), "their sockets stay open until their next hello")
}
