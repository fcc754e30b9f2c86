package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
)

// accountsHarness is a gateway with the shared password "pw" and accounts alice and bob,
// each with one computer credential.
func accountsHarness(t *testing.T) (h *harness, accounts *account.Accounts, alice, bob string) {
	t.Helper()
	accounts = account.New(account.NewMemory(), clock.Real{})
	for _, id := range []string{"alice", "bob"} {
		_, err := accounts.AddAccount(t.Context(), id, account.RoleUser, "first")
		require.NoError(t, err)
	}
	var err error
	alice, _, err = accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	bob, _, err = accounts.IssueCredential(t.Context(), "bob", "bob")
	require.NoError(t, err)
	return newHarness(t, Config{Password: "pw", Accounts: accounts}, nil), accounts, alice, bob
}

func helloAccount(t *testing.T, f protocol.Frame) string {
	t.Helper()
	var ans helloAnswer
	require.NoError(t, json.Unmarshal(f.Payload, &ans))
	return ans.AccountID
}

// TestCredentialHelloIsTheAccounts: a computer's own credential makes it its account's; the
// shared password still makes it local's.
func TestCredentialHelloIsTheAccounts(t *testing.T) {
	h, _, alice, _ := accountsHarness(t)
	c := h.dial(t, "7:")
	resp := c.hello(alice)
	require.True(t, resp.OK, "%+v", resp.Error)
	assert.Equal(t, "alice", helloAccount(t, resp))
	p := h.dial(t, "7:")
	resp = p.hello("pw")
	require.True(t, resp.OK, "%+v", resp.Error)
	assert.Equal(t, LocalAccount, helloAccount(t, resp))
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 2 }, waitLimit, testkit.Poll, "both computers 7: listed")
}

// TestHelloSaysHowTheCredentialWasMade: hello's answer says credentialKind "issued" for a
// credential issued by hand (credentials add; any computer id), "linked" for one sandbox link
// or an enrollment key made (bound to the computer's id), and nothing for the shared password,
// so that sandbox status does not call a credential set by hand linked.
func TestHelloSaysHowTheCredentialWasMade(t *testing.T) {
	h, accounts, alice, _ := accountsHarness(t)
	key, _, err := accounts.IssueEnrollmentKey(t.Context(), "alice", "alice", 0, 0)
	require.NoError(t, err)
	linked, _, err := accounts.LinkWithKey(t.Context(), key, "8:")
	require.NoError(t, err)
	for _, tc := range []struct{ traposID, secret, want string }{
		{"7:", alice, `{"accountId":"alice","credentialKind":"issued","livenessMs":70000,"proves":true}`},
		{"8:", linked, `{"accountId":"alice","credentialKind":"linked","livenessMs":70000,"proves":true}`},
		{"9:", "pw", `{"accountId":"local","livenessMs":70000,"proves":true,"proofKey":"0c95d5a72967a63dbfafb363075baa097cb5457564dc6525dd3de5235a1884c7"}`},
	} {
		resp := h.dial(t, tc.traposID).hello(tc.secret)
		require.True(t, resp.OK, "%+v", resp.Error)
		assert.JSONEq(t, tc.want, string(resp.Payload), tc.traposID)
	}
}

// TestNoCredentialEvictsAnotherAccountsComputer: the shared password or bob's credential
// claiming alice's traposId registers beside it; alice's socket stays, and requests for
// alice's 7: still reach alice's computer.
func TestNoCredentialEvictsAnotherAccountsComputer(t *testing.T) {
	h, _, alice, bob := accountsHarness(t)
	a := h.connect(t, "7:", alice)
	h.connect(t, "7:", "pw")
	h.connect(t, "7:", bob)
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 3 }, waitLimit, testkit.Poll, "three computers 7:")
	ch := make(chan requestResult, 1)
	go func() {
		resp, err := h.gw.Request(t.Context(), "alice", "7:", "ping", nil)
		ch <- requestResult{resp, err}
	}()
	req := a.answerNext(func(protocol.Frame) map[string]any {
		return map[string]any{"ok": true, "payload": map[string]any{"me": "alice"}}
	})
	assert.Equal(t, "ping", req.Type)
	res := awaitResult(t, ch)
	require.NoError(t, res.err)
	assert.JSONEq(t, `{"me":"alice"}`, string(res.resp.Payload))

	// alice's own credential on a new socket replaces alice's (newest wins within an account).
	h.connect(t, "7:", alice)
	a.expectClose(CloseReplaced, "replaced")
}

// TestRevokedCredential: revoking closes the live socket with 4003 at once, and its next
// hello is refused with 4003 too; a wrong credential is a wrong secret (4001).
func TestRevokedCredential(t *testing.T) {
	h, accounts, alice, _ := accountsHarness(t)
	a := h.connect(t, "7:", alice)
	creds, err := accounts.Store().Credentials(t.Context(), "alice")
	require.NoError(t, err)
	require.Len(t, creds, 1)
	_, err = accounts.RevokeCredential(t.Context(), "alice", creds[0].Selector)
	require.NoError(t, err)
	assert.True(t, h.gw.RevokeCredential(creds[0].Selector))
	a.expectClose(CloseRevoked, "revoked")

	again := h.dial(t, "7:")
	resp := again.hello(alice)
	require.False(t, resp.OK)
	assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
	// sandbox status shows it as lastError above the client's fix: it named sandbox setup
	// alone, where the fix below it says sandbox link first (a player who linked has no
	// credential to set).
	assert.Equal(t, "this computer's credential was revoked (link it again with: sandbox link, or set a new credential with: sandbox setup)",
		resp.Error.Message)
	again.expectClose(CloseRevoked, "revoked")

	wrong := h.dial(t, "8:")
	resp = wrong.hello(testkit.WrongSecret(alice)) // not alice[:n-2]+"zz": one secret in 1024 ends in zz
	require.False(t, resp.OK)
	wrong.expectClose(CloseUnauthorized, "unauthorized")
	assert.NotContains(t, h.logs.String(), alice[len(alice)-10:], "no secret in the log")
}

// TestPasswordThatLooksLikeACredential: a SANDBOX_PASSWORD beginning with tsc_ (the
// credentials' prefix) is still the shared password; another tsc_ secret is still checked
// as a credential and refused.
func TestPasswordThatLooksLikeACredential(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.Real{})
	h := newHarness(t, Config{Password: "tsc_our-long-shared-secret", Accounts: accounts}, nil)
	c := h.dial(t, "7:")
	resp := c.hello("tsc_our-long-shared-secret")
	require.True(t, resp.OK, "%+v", resp.Error)
	assert.Equal(t, LocalAccount, helloAccount(t, resp))

	wrong := h.dial(t, "8:")
	resp = wrong.hello("tsc_our-long-shared-secreT")
	require.False(t, resp.OK)
	assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
	wrong.expectClose(CloseUnauthorized, "unauthorized")
}

// fullStore is a store that can read but not write the hello's record, as on a full disk.
type fullStore struct{ *account.Memory }

func (fullStore) SeeCredential(context.Context, string, time.Time, string, string) error {
	return errors.New("database or disk is full (13)")
}

// TestCredentialHelloStandsWhenItsRecordFails: a store that cannot record the last hello (a
// full data directory) still admits a linked computer, as it still admits an account's API
// call, and the log says why the record is missing: in the store's words alone, which name the
// full disk and the fix (played: "(is the data directory's disk full?)" asked before an err=
// that said so, and asked it of replicas too, whose store is NATS).
func TestCredentialHelloStandsWhenItsRecordFails(t *testing.T) {
	accounts := account.New(fullStore{account.NewMemory()}, clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	alice, _, err := accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	c := h.dial(t, "7:")
	resp := c.hello(alice)
	require.True(t, resp.OK, "%+v", resp.Error)
	assert.Equal(t, "alice", helloAccount(t, resp))
	assert.Contains(t, h.logs.String(), `msg="hello admitted, but the account store could not record it (its time and address; err says why)"`)
	assert.Contains(t, h.logs.String(), "disk is full")
	assert.NotContains(t, h.logs.String(), "data directory")
	assert.NotContains(t, h.logs.String(), alice[len(alice)-10:], "no secret in the log")
}

// switchedStore is a store whose credentials cannot be read while down is set.
type switchedStore struct {
	*account.Memory
	down *atomic.Bool
}

func (s switchedStore) Credential(ctx context.Context, selector string) (account.Credential, error) {
	if s.down.Load() {
		return account.Credential{}, errors.New("read credential: context deadline exceeded")
	}
	return s.Memory.Credential(ctx, selector)
}

// A replica that missed revocations on the bus (Local.RevocationsMissed) asks the store about
// every credential it holds and closes the sockets of those revoked (4003), not the others; a
// store it cannot read leaves the sockets open (their next hello asks it again) and says so,
// with how many it could not check.
func TestMissedRevocationsAreCheckedAgainstTheStore(t *testing.T) {
	down := new(atomic.Bool)
	accounts := account.New(switchedStore{Memory: account.NewMemory(), down: down}, clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	first, one, err := accounts.IssueCredential(t.Context(), "alice", "one")
	require.NoError(t, err)
	second, _, err := accounts.IssueCredential(t.Context(), "alice", "two")
	require.NoError(t, err)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	revoked := h.connect(t, "7:", first)
	kept := h.connect(t, "8:", second)
	_, err = accounts.RevokeCredential(t.Context(), "alice", one.Selector)
	require.NoError(t, err)

	down.Store(true)
	checked, revokedN := local{h.gw}.RevocationsMissed(t.Context())
	assert.Equal(t, [2]int{0, 0}, [2]int{checked, revokedN}, "credentials checked, revoked")
	assert.Contains(t, h.logs.String(), "cannot check every credential held here for a revocation this replica may have missed")
	assert.Contains(t, h.logs.String(), "unchecked=2")
	revoked.request("still", protocol.TypeProbeGateway, nil)
	assert.True(t, revoked.read().OK, "left open while the store cannot say")

	down.Store(false)
	checked, revokedN = local{h.gw}.RevocationsMissed(t.Context())
	assert.Equal(t, [2]int{2, 1}, [2]int{checked, revokedN}, "credentials checked, revoked")
	revoked.expectClose(CloseRevoked, "revoked")
	kept.request("probe", protocol.TypeProbeGateway, nil)
	assert.True(t, kept.read().OK, "a credential not revoked keeps its socket")
}

// hangingStore is a store whose credential reads, once hang is set, wait for their context
// to end, as NATS's bucket behind a partition: each read says on entered that it began, and
// inFlight and most count the reads waiting at once.
type hangingStore struct {
	*account.Memory
	hang           *atomic.Bool
	entered        chan string
	inFlight, most *atomic.Int32
}

func (s hangingStore) Credential(ctx context.Context, selector string) (account.Credential, error) {
	if !s.hang.Load() {
		return s.Memory.Credential(ctx, selector)
	}
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	s.entered <- selector
	<-ctx.Done()
	return account.Credential{}, fmt.Errorf("read credential: %w", context.Cause(ctx))
}

// A check for missed revocations against a store that hangs is bounded as a whole: it reads
// missedRevocationReads credentials at once, each until revocationCheckTimeout, and ends at
// missedRevocationCheckLimit with what it could not read counted unchecked. It read one
// credential after another, 5 s each: 20 held took 100 s (a replica with thousands, hours).
func TestAMissedRevocationCheckAgainstAHangingStoreIsBounded(t *testing.T) {
	const held = 20
	clk := newFakeClock()
	store := hangingStore{Memory: account.NewMemory(), hang: new(atomic.Bool),
		entered: make(chan string, held), inFlight: new(atomic.Int32), most: new(atomic.Int32)}
	accounts := account.New(store, clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts, Clock: clk}, nil)
	for i := range held {
		secret, _, err := accounts.IssueCredential(t.Context(), "alice", fmt.Sprintf("c%d", i))
		require.NoError(t, err)
		h.connect(t, fmt.Sprintf("%d:", i+1), secret)
	}

	store.hang.Store(true)
	type result struct{ checked, revoked int }
	done := make(chan result, 1)
	go func() {
		c, r := local{h.gw}.RevocationsMissed(t.Context())
		done <- result{c, r}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard: the check waits on the fake clock only
	defer cancel()
	began := func(n int) {
		t.Helper()
		for range n {
			select {
			case <-store.entered:
			case <-ctx.Done():
				require.FailNow(t, "the store was not read", "%d reads expected", n)
			}
		}
	}
	began(missedRevocationReads)
	clk.Advance(revocationCheckTimeout) // the first reads end, the next ones begin
	began(missedRevocationReads)
	clk.Advance(missedRevocationCheckLimit - revocationCheckTimeout)
	select {
	case r := <-done:
		assert.Equal(t, result{0, 0}, r, "credentials checked, revoked")
	case <-ctx.Done():
		require.FailNow(t, "the check did not end at its limit")
	}
	assert.LessOrEqual(t, store.most.Load(), int32(missedRevocationReads), "reads at once")
	assert.Contains(t, h.logs.String(), "cannot check every credential held here for a revocation this replica may have missed")
	assert.Contains(t, h.logs.String(), "unchecked=20")
	assert.Contains(t, h.logs.String(), "the check took its limit of 30s")
}

// downStore is a store that cannot be read, as NATS's bucket while NATS is down.
type downStore struct{ *account.Memory }

func (downStore) Credential(context.Context, string) (account.Credential, error) {
	return account.Credential{}, errors.New("read credential: context deadline exceeded")
}

// TestAStoreOutageIsLoggedOnceAMinutePerAddress: while the store is out, each computer with
// a credential retries its hello every few seconds, each refused with "try again later"; the
// soak (NATS down) logged one ERROR line per retry and computer. One line an address a minute
// now, with the count of the others at the next.
func TestAStoreOutageIsLoggedOnceAMinutePerAddress(t *testing.T) {
	accounts := account.New(downStore{account.NewMemory()}, clock.Real{})
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	for _, id := range []string{"7:", "8:", "7:"} {
		c := h.dial(t, id)
		resp := c.hello("tsc_abcdefghijkl_0123456789abcdefghijklmnopqrstuv")
		require.False(t, resp.OK)
		assert.Equal(t, protocol.CodeInternal, resp.Error.Code)
		assert.Contains(t, resp.Error.Message, "try again later")
		c.expectClose(CloseGoingAway, "")
	}
	logs := h.logs.String()
	assert.Equal(t, 1, strings.Count(logs, "hello: the account store failed"), "%s", logs)
	assert.Contains(t, logs, `level=ERROR msg="hello: the account store failed"`)
}

// fedRevocations is a RevocationSource whose every answer the test gives: the loop asks only
// as fast as the test answers.
type fedRevocations chan fedAnswer

type fedAnswer struct {
	revoked []string
	err     error
}

func (f fedRevocations) Next(ctx context.Context, _ time.Time) ([]string, error) {
	select {
	case a := <-f:
		return a.revoked, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestFollowRevocationsClosesWhatTheStoreLists: a credential the store lists as revoked (by
// another process) closes its socket with 4003, and only its (not bob's, not the shared
// password's, whose credential is ""); a store that cannot be read is
// said once, and again when it can; the loop ends with its context.
func TestFollowRevocationsClosesWhatTheStoreLists(t *testing.T) {
	h, accounts, alice, bob := accountsHarness(t)
	a := h.connect(t, "7:", alice)
	h.connect(t, "8:", bob)
	h.connect(t, "9:", "pw") // the shared password: no credential, whatever a store lists
	creds, err := accounts.Store().Credentials(t.Context(), "alice")
	require.NoError(t, err)
	require.Len(t, creds, 1)

	src := make(fedRevocations)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.gw.FollowRevocations(ctx, src, time.Millisecond) // the loop waits on src, not on the period
	}()
	src <- fedAnswer{revoked: []string{creds[0].Selector, "not-held-here", ""}}
	a.expectClose(CloseRevoked, "revoked")

	src <- fedAnswer{err: errors.New("disk I/O error")}
	src <- fedAnswer{err: errors.New("disk I/O error")}
	src <- fedAnswer{}
	src <- fedAnswer{} // taken once the loop is done with the answer before
	logs := h.logs.String()
	assert.Equal(t, 1, strings.Count(logs, "computer closed: its credential was revoked"), logs)
	assert.Equal(t, 1, strings.Count(logs, "cannot look for credentials revoked by another process"), logs)
	assert.Equal(t, 1, strings.Count(logs, "looking for credentials revoked by another process again"), logs)

	cancel()
	<-done
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 2 }, waitLimit, testkit.Poll, "alice's computer leaves the list")
	var accountsLeft []string
	for _, c := range h.gw.Computers() {
		accountsLeft = append(accountsLeft, c.AccountID)
	}
	assert.ElementsMatch(t, []string{"bob", LocalAccount}, accountsLeft, "bob's computer stays, and the shared password's")
}

// TestRevokeIsLoggedWithoutItsSecret: a computer revoked through the API is one info line as
// a credential revoked through the account API is: which computer, account and credential,
// who (the caller's account; local for the gateway's own token or loopback) and from where;
// never the credential itself. A refused revocation logs none.
func TestRevokeIsLoggedWithoutItsSecret(t *testing.T) {
	h, _, alice, bob := accountsHarness(t)
	a := h.connect(t, "7:", alice)
	b := h.connect(t, "8:", bob)
	h.connect(t, "9:", "pw")

	// alice's own token, from her laptop: the handler as the API's auth would call it.
	r := httptest.NewRequest(http.MethodPost, "/trapos/computers/7:/revoke", nil)
	r.SetPathValue("traposId", "7:")
	r.RemoteAddr = "192.0.2.7:5555"
	r = r.WithContext(account.WithCaller(r.Context(), account.Caller{Account: "alice"}))
	w := httptest.NewRecorder()
	h.gw.serveRevoke(w, r)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	a.expectClose(CloseRevoked, "revoked")

	// A loopback client without a token, through the server: the gateway's own caller.
	for _, id := range []string{"8:", "9:"} {
		resp, err := h.srv.Client().Post(h.srv.URL+"/trapos/computers/"+id+"/revoke", "application/json", strings.NewReader("{}"))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		if id == "8:" {
			require.Equal(t, http.StatusOK, resp.StatusCode)
		} else {
			require.Equal(t, http.StatusForbidden, resp.StatusCode, "the shared password has no credential to revoke")
		}
	}
	b.expectClose(CloseRevoked, "revoked")

	// A computer not connected (a stolen one that stays away): the answer says how its
	// credential is revoked all the same, besides the computers meant or listed.
	for id, want := range map[string]string{
		"5:gone": `computer 5:gone is not connected; trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers); to revoke the credential of a computer that is not connected: trap-sandbox credentials list (its TRAPOSID column), then trap-sandbox credentials revoke ID`,
		"9:x":    `computer 9:x is not connected; did you mean "9:"?; to revoke the credential of a computer that is not connected: trap-sandbox credentials list (its TRAPOSID column), then trap-sandbox credentials revoke ID`,
	} {
		resp, err := h.srv.Client().Post(h.srv.URL+"/trapos/computers/"+id+"/revoke", "application/json", strings.NewReader("{}"))
		require.NoError(t, err)
		var ans server.Answer
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&ans))
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusNotFound, resp.StatusCode, id)
		require.NotNil(t, ans.Error, id)
		assert.Equal(t, protocol.CodeNotConnected, ans.Error.Code, id)
		assert.Equal(t, want, ans.Error.Message, id)
	}

	_, aliceID, ok := account.Identify(alice)
	require.True(t, ok)
	_, bobID, ok := account.Identify(bob)
	require.True(t, ok)
	logs := h.logs.String()
	assert.Contains(t, logs, `msg="computer revoked" module=trapos-cloud-gateway traposId=7: account=alice credentialId=`+aliceID+` by=alice remote=192.0.2.7:5555`)
	assert.Contains(t, logs, `msg="computer revoked" module=trapos-cloud-gateway traposId=8: account=bob credentialId=`+bobID+` by=local remote=127.0.0.1:`)
	assert.Equal(t, 2, strings.Count(logs, `msg="computer revoked"`), "the refused 9: is not logged as revoked")
	for _, secret := range []string{alice, bob} {
		assert.NotContains(t, logs, secret)
	}
}

// TestAWrongCredentialIsRefusedAsACredential: a credential the gateway does not know is
// answered as one, naming where credentials are listed, and never points at SANDBOX_PASSWORD
// on a gateway that has none set.
func TestAWrongCredentialIsRefusedAsACredential(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	alice, _, err := accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	for _, password := range []string{"", "pw"} {
		h := newHarness(t, Config{Password: password, Accounts: accounts}, nil)
		c := h.dial(t, "7:")
		resp := c.hello(alice + " ")
		require.False(t, resp.OK, "password %q", password)
		assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
		assert.Contains(t, resp.Error.Message, "not a computer credential of this gateway", "password %q", password)
		assert.Contains(t, resp.Error.Message, "trap-sandbox credentials list", "password %q", password)
		if password == "" {
			assert.NotContains(t, resp.Error.Message, "SANDBOX_PASSWORD", "no password is set")
		} else {
			assert.Contains(t, resp.Error.Message, "nor SANDBOX_PASSWORD")
		}
		c.expectClose(CloseUnauthorized, "unauthorized")
	}
}

// TestAccountRemovedClosesItsCredentialsComputers: an account's removal closes the computers
// that said hello with its credentials (4003) and names them; another account's computer and
// a shared-password computer stay, even when a store made before "local" was reserved holds an
// account of that name, which shares its accountId with the shared-password computers.
func TestAccountRemovedClosesItsCredentialsComputers(t *testing.T) {
	h, accounts, alice, bob := accountsHarness(t)
	ctx := t.Context()
	require.NoError(t, accounts.Store().CreateAccount(ctx, account.Account{ID: account.Local, Role: account.RoleUser}))
	legacy, _, err := accounts.IssueCredential(ctx, account.Local, "operator")
	require.NoError(t, err)
	a := h.connect(t, "7:kitchen", alice)
	a2 := h.connect(t, "9:", alice)
	h.connect(t, "8:", bob)
	h.connect(t, "1:", "pw")
	old := h.connect(t, "2:", legacy)

	removed, err := accounts.RemoveAccount(ctx, "alice")
	require.NoError(t, err)
	closed, notClosed := h.gw.AccountRemoved("alice", removed.Credentials)
	assert.Equal(t, []string{"7:kitchen", "9:"}, closed)
	assert.Empty(t, notClosed)
	a.expectClose(CloseRevoked, "revoked")
	a2.expectClose(CloseRevoked, "revoked")

	removed, err = accounts.RemoveAccount(ctx, account.Local)
	require.NoError(t, err)
	closed, _ = h.gw.AccountRemoved(account.Local, removed.Credentials)
	assert.Equal(t, []string{"2:"}, closed, "not the shared-password computer")
	old.expectClose(CloseRevoked, "revoked")
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 2 }, waitLimit, testkit.Poll, "bob's 8: and the shared 1: stay")
	var left []string
	for _, c := range h.gw.Computers() {
		left = append(left, c.AccountID+"/"+c.TraposID)
	}
	assert.Equal(t, []string{"bob/8:", "local/1:"}, left)
}

// TestAnAPITokenAsAComputersSecretNamesTheFix: an API token set as a computer's
// sandbox.password (where anyone who opens the computer reads it) was answered "wrong secret
// (check … SANDBOX_PASSWORD)", and taken without a word by a gateway without a password. Now
// the answer names the token to revoke, and a WARN names it to the operator either way; both
// by its id, never the token. An enrollment key is told to link instead.
func TestAnAPITokenAsAComputersSecretNamesTheFix(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	token, tok, err := accounts.IssueToken(t.Context(), "alice", "laptop", 0)
	require.NoError(t, err)
	key, _, err := accounts.IssueEnrollmentKey(t.Context(), "alice", "alice", 1, 0)
	require.NoError(t, err)
	const warning = `msg="hello with an API token as the computer's secret: anyone who opens the computer reads it; revoke it (trap-sandbox tokens revoke ID) and link the computer (sandbox link)"`

	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	c := h.dial(t, "7:")
	resp := c.hello(token)
	require.False(t, resp.OK)
	assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
	assert.Equal(t, "wrong secret: it is an API token (tsa_...), for the host's API, never a computer's: anyone who opens the computer reads its settings, so revoke it (trap-sandbox tokens revoke "+
		tok.Selector+") and give the computer a credential of its own (sandbox link)", resp.Error.Message)
	c.expectClose(CloseUnauthorized, "unauthorized")
	c = h.dial(t, "7:")
	resp = c.hello(key)
	require.False(t, resp.OK)
	assert.Equal(t, "wrong secret: it is an enrollment key (tsk_...), which links a computer instead: sandbox link KEY", resp.Error.Message)
	c.expectClose(CloseUnauthorized, "unauthorized")
	logs := h.logs.String()
	assert.Contains(t, logs, warning)
	assert.Contains(t, logs, "tokenId="+tok.Selector)
	assert.NotContains(t, logs, token)
	assert.NotContains(t, logs, key)

	h = newHarness(t, Config{Accounts: accounts}, nil) // no password: any secret is taken
	c = h.dial(t, "7:")
	resp = c.hello(token)
	require.True(t, resp.OK, "%+v", resp.Error)
	assert.Contains(t, h.logs.String(), warning, "taken, but named to the operator")
	assert.NotContains(t, h.logs.String(), token)
}

// TestATokenShapedSecretIsNotAToken: a hello secret shaped like an API token but not one the
// store takes (tsa_<an id read in a listing>_x, or an id that does not exist) made the gateway
// tell the operator to revoke that token, which was never exposed, and named it back to the
// socket. Now both are answered as any wrong secret, alike, so the answer tells nothing of the
// id. A gateway without a store goes by the shape: an id as the gateway issues them is warned
// of, one longer than any it issues (2000 bytes) is no token's and is neither warned of nor
// logged (account's bound on a selector).
func TestATokenShapedSecretIsNotAToken(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	_, tok, err := accounts.IssueToken(t.Context(), "alice", "laptop", 0)
	require.NoError(t, err)
	const warning = `hello with an API token as the computer's secret`

	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	for _, forged := range []string{"tsa_" + tok.Selector + "_x", "tsa_nosuchtokenid_x"} {
		c := h.dial(t, "7:")
		resp := c.hello(forged)
		require.False(t, resp.OK)
		assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
		assert.Equal(t, "wrong secret (check the computer's sandbox.password against SANDBOX_PASSWORD)", resp.Error.Message, forged)
		c.expectClose(CloseUnauthorized, "unauthorized")
	}
	assert.NotContains(t, h.logs.String(), warning)
	assert.NotContains(t, h.logs.String(), tok.Selector)

	h = newHarness(t, Config{Password: "pw"}, nil)
	c := h.dial(t, "7:")
	resp := c.hello("tsa_" + tok.Selector + "_x")
	require.False(t, resp.OK)
	c.expectClose(CloseUnauthorized, "unauthorized")
	assert.Contains(t, h.logs.String(), warning)
	assert.Contains(t, h.logs.String(), "tokenId="+tok.Selector)

	long := strings.Repeat("a", 2000)
	h = newHarness(t, Config{Password: "pw"}, nil)
	c = h.dial(t, "7:")
	resp = c.hello("tsa_" + long + "_x")
	require.False(t, resp.OK)
	c.expectClose(CloseUnauthorized, "unauthorized")
	assert.NotContains(t, h.logs.String(), warning)
	assert.NotContains(t, h.logs.String(), long[:100], "no id of it in the log")
}

// TestARecreatedAccountIsAnotherRequester: an account removed and made again under the same
// name is another account to the modules too: its computers' requests carry the new
// account's creation stamp, so what a module keeps of the removed one's (the agent's
// conversations) is not theirs. A computer on the shared password carries none.
func TestARecreatedAccountIsAnotherRequester(t *testing.T) {
	ctx := t.Context()
	clk := clock.NewFake(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	accounts := account.New(account.NewMemory(), clk)
	seen := make(chan protocol.Requester, 1)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil, func(gw *Gateway) {
		gw.Handle("who", func(_ context.Context, from protocol.Requester, _ json.RawMessage) (json.RawMessage, error) {
			seen <- from
			return nil, nil
		})
	})
	ask := func(c *computer) protocol.Requester {
		t.Helper()
		c.request("w1", "who", map[string]any{})
		require.True(t, c.read().OK)
		return <-seen
	}
	newAlice := func() (string, time.Time) {
		t.Helper()
		_, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
		require.NoError(t, err)
		acc, err := accounts.Store().Account(ctx, "alice")
		require.NoError(t, err)
		cred, _, err := accounts.IssueCredential(ctx, "alice", "alice")
		require.NoError(t, err)
		return cred, acc.Created
	}

	cred, created := newAlice()
	first := ask(h.connect(t, "7:kitchen", cred))
	assert.Equal(t, "alice", first.AccountID)
	require.False(t, created.IsZero())
	assert.True(t, first.AccountCreated.Equal(created), "the account's stamp: %v, want %v", first.AccountCreated, created)

	removed, err := accounts.RemoveAccount(ctx, "alice")
	require.NoError(t, err)
	h.gw.AccountRemoved("alice", removed.Credentials)
	clk.Advance(time.Minute)
	cred, created = newAlice()
	second := ask(h.connect(t, "7:kitchen", cred))
	assert.Equal(t, "alice", second.AccountID)
	assert.True(t, second.AccountCreated.Equal(created), "the new account's stamp: %v, want %v", second.AccountCreated, created)
	assert.False(t, second.AccountCreated.Equal(first.AccountCreated), "another account than the removed one")

	local := ask(h.connect(t, "7:kitchen", "pw"))
	assert.Equal(t, LocalAccount, local.AccountID)
	assert.True(t, local.AccountCreated.IsZero(), "the shared password has no stamp")
}

// TestAnUnknownCredentialIsNamedToTheOperator: after a backup was restored (or the gateway
// started on another data directory), each computer linked since then says hello with a
// credential the store does not hold; its operator read "hello rejected: wrong secret", as for
// a mistyped password, and nothing of linking again. The line says what it is, and which one.
func TestAnUnknownCredentialIsNamedToTheOperator(t *testing.T) {
	elsewhere := account.New(account.NewMemory(), clock.Real{})
	_, err := elsewhere.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	linked, _, err := elsewhere.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	_, id, ok := account.Identify(linked)
	require.True(t, ok)

	h := newHarness(t, Config{Password: "pw", Accounts: account.New(account.NewMemory(), clock.Real{})}, nil)
	c := h.dial(t, "7:")
	require.False(t, c.hello(linked).OK)
	c.expectClose(CloseUnauthorized, "unauthorized")
	w := h.dial(t, "8:")
	require.False(t, w.hello("pw-mistyped").OK)
	w.expectClose(CloseUnauthorized, "unauthorized")
	logs := h.logs.String()
	assert.Contains(t, logs, `msg="hello rejected: a computer credential the account store does not hold (made on another gateway or data directory, after the backup it was restored from, or its account removed); the computer links again: sandbox link" module=trapos-cloud-gateway remote=`)
	assert.Contains(t, logs, "traposId=7: credentialId="+id)
	assert.Contains(t, logs, `msg="hello rejected: wrong secret" module=trapos-cloud-gateway remote=`)
	assert.NotContains(t, logs, linked)
}

// TestAnUnknownCredentialOnAReplicaNamesTheCopy: a replica refusing a linked computer whose
// credential the bucket lacks said "made on another gateway or data directory, after the
// backup it was restored from"; on replicas that is most likely a single gateway's account
// store not copied into NATS yet (played: replicas started before accounts copy), whose fix
// is the copy, then sandbox reconnect on the computer, not a new link. The line says so.
func TestAnUnknownCredentialOnAReplicaNamesTheCopy(t *testing.T) {
	elsewhere := account.New(account.NewMemory(), clock.Real{})
	_, err := elsewhere.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	linked, _, err := elsewhere.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)

	h := newHarness(t, Config{Password: "pw", Replica: "a", Accounts: account.New(account.NewMemory(), clock.Real{})}, nil)
	c := h.dial(t, "7:")
	require.False(t, c.hello(linked).OK)
	c.expectClose(CloseUnauthorized, "unauthorized")
	assert.Contains(t, h.logs.String(), `msg="hello rejected: a computer credential the account store (NATS) does not hold (made on a gateway without --nats `+
		`whose accounts.db was not copied into NATS: trap-sandbox accounts copy, then sandbox reconnect on the computer; or its account removed); `+
		`else the computer links again: sandbox link" module=trapos-cloud-gateway remote=`)
}

// The computers of one Minecraft server share its address, and after a restored backup each
// of them is refused its credential, once (a refused daemon stops retrying): the operator read
// one line naming one computer (its address's minute), and of the others a count that only a
// later line would have carried, which never came. Each is named.
func TestEveryUnknownCredentialOfAnAddressIsNamed(t *testing.T) {
	elsewhere := account.New(account.NewMemory(), clock.Real{})
	_, err := elsewhere.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	h := newHarness(t, Config{Password: "pw", Accounts: account.New(account.NewMemory(), clock.Real{})}, nil)
	var ids []string
	for _, traposID := range []string{"7:", "8:", "9:"} {
		linked, _, err := elsewhere.IssueCredential(t.Context(), "alice", "alice")
		require.NoError(t, err)
		_, id, ok := account.Identify(linked)
		require.True(t, ok)
		ids = append(ids, traposID+" credentialId="+id)
		c := h.dial(t, traposID)
		require.False(t, c.hello(linked).OK)
		c.expectClose(CloseUnauthorized, "unauthorized")
	}
	logs := h.logs.String()
	for _, named := range ids {
		assert.Contains(t, logs, "traposId="+named)
	}
	assert.Equal(t, 3, strings.Count(logs, "hello rejected: a computer credential the account store does not hold"))
}

// pausingStore is a store whose hellos with a credential wait, at the record of their last
// hello (after the store took the credential, before the gateway registers the computer),
// until the test lets them go.
type pausingStore struct {
	*account.Memory
	seeing  chan struct{} // a hello waits in SeeCredential
	proceed chan struct{} // closed: it goes on
}

func (p pausingStore) SeeCredential(ctx context.Context, selector string, at time.Time, traposID, remoteAddr string) error {
	p.seeing <- struct{}{}
	<-p.proceed
	return p.Memory.SeeCredential(ctx, selector, at, traposID, remoteAddr)
}

// A credential revoked (or its account removed) while a hello with it is between the store's
// check and the computer's registration: the revocation closed the sockets registered then,
// which did not include this one, and the computer stayed connected with a credential the
// store refuses, reached by its account's host callers and asking its agent, until it
// reconnected. It is closed as revoked (4003) as the hello ends.
func TestARevocationDuringAHelloClosesItsComputer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		revoke func(t *testing.T, gw *Gateway, accounts *account.Accounts, selector string)
	}{
		{"revoked", func(t *testing.T, gw *Gateway, accounts *account.Accounts, selector string) {
			_, err := accounts.RevokeCredential(t.Context(), "", selector)
			require.NoError(t, err)
			gw.CredentialRevoked(selector) // as the API's revoke does once the store has it
		}},
		{"account removed", func(t *testing.T, gw *Gateway, accounts *account.Accounts, _ string) {
			removed, err := accounts.RemoveAccount(t.Context(), "alice")
			require.NoError(t, err)
			gw.AccountRemoved("alice", removed.Credentials)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := pausingStore{Memory: account.NewMemory(), seeing: make(chan struct{}), proceed: make(chan struct{})}
			proceed := sync.OnceFunc(func() { close(store.proceed) })
			t.Cleanup(proceed)
			accounts := account.New(store, clock.Real{})
			_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
			require.NoError(t, err)
			alice, c, err := accounts.IssueCredential(t.Context(), "alice", "alice")
			require.NoError(t, err)
			h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)

			a := h.dial(t, "7:")
			a.request("hello-1", TypeHello, map[string]any{"traposId": "7:", "secret": alice})
			<-store.seeing // the store took the credential; the computer is not registered yet
			tc.revoke(t, h.gw, accounts, c.Selector)
			proceed()

			a.read() // the hello's answer
			a.expectClose(CloseRevoked, "revoked")
			require.Eventually(t, func() bool { return len(h.gw.Computers()) == 0 }, waitLimit, testkit.Poll)
		})
	}
}

// readCountingStore counts the reads of one credential's record (Credential), and, once held
// is set, keeps each such read waiting until the test lets them go.
type readCountingStore struct {
	*account.Memory
	selector string
	held     chan struct{} // closed: reads of selector wait for proceed
	reading  chan struct{} // a read of selector has begun
	proceed  chan struct{} // closed: the reads go on
	reads    *atomic.Int64
}

func (p readCountingStore) Credential(ctx context.Context, selector string) (account.Credential, error) {
	select {
	case <-p.held:
		if selector == p.selector {
			p.reads.Add(1)
			p.reading <- struct{}{}
			<-p.proceed
		}
	default:
	}
	return p.Memory.Credential(ctx, selector)
}

// A revocation heard on the bus is a hint the account store must confirm, and anyone who can
// publish on trapos.revoked can repeat one, made up, naming the credential of a computer held
// here (the claims on the bus carry it). Each message asked the store on its own, at once: a
// flood of them was as many reads in flight, each holding a goroutine for up to
// revocationCheckTimeout. One check of a credential runs at a time; messages heard meanwhile
// are one more check after it (a revocation made while the first read was under way is seen).
func TestARepeatedRevocationIsOneStoreReadAtATime(t *testing.T) {
	const heard = 50
	memory := account.NewMemory()
	store := readCountingStore{Memory: memory, held: make(chan struct{}), reading: make(chan struct{}, heard),
		proceed: make(chan struct{}), reads: new(atomic.Int64)}
	proceed := sync.OnceFunc(func() { close(store.proceed) })
	t.Cleanup(proceed)
	accounts := account.New(&store, clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	alice, c, err := accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	store.selector = c.Selector
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	computer := h.connect(t, "7:", alice)
	close(store.held)

	returned := make(chan struct{}, heard)
	for range heard {
		go func() {
			defer func() { returned <- struct{}{} }()
			h.gw.revocationHeard(t.Context(), c.Selector) // as the router calls it: a goroutine per message
		}()
	}
	<-store.reading // the first check waits on the store
	for i := range heard - 1 {
		select {
		case <-returned:
		case <-time.After(waitLimit):
			t.Fatalf("only %d of the %d other messages were done with while a check was under way: each waits on a read of its own (%d reads)",
				i, heard-1, store.reads.Load())
		}
	}
	proceed()
	<-returned
	assert.LessOrEqual(t, store.reads.Load(), int64(2), "the first check and one after it")
	computer.request("after", protocol.TypeProbeGateway, nil)
	assert.True(t, computer.read().OK, "made up: the computer stays connected")
	assert.Equal(t, 1, strings.Count(h.logs.String(), "ignored a revocation heard on the bus: the account store says the credential is not revoked"),
		"once a minute for each credential")
}

// recordCountingStore counts the records of a hello (SeeCredential, a write) and the reads
// of a credential.
type recordCountingStore struct {
	*account.Memory
	records, reads *atomic.Int64
}

func (p recordCountingStore) SeeCredential(ctx context.Context, selector string, at time.Time, traposID, remoteAddr string) error {
	p.records.Add(1)
	return p.Memory.SeeCredential(ctx, selector, at, traposID, remoteAddr)
}

func (p recordCountingStore) Credential(ctx context.Context, selector string) (account.Credential, error) {
	p.reads.Add(1)
	return p.Memory.Credential(ctx, selector)
}

// A computer may say hello again on its socket (docs/protocol.md), and a hostile one (any
// player's linked computer) can do it as fast as it writes frames: each was a hello to the
// account store, its credential read and its last hello written (SQLite's one writer, or a
// round trip to NATS), for nothing but an answer the socket already had. The same hello again
// is answered from the socket's own; another secret is checked as before.
func TestTheSameHelloAgainDoesNotAskTheStore(t *testing.T) {
	store := recordCountingStore{Memory: account.NewMemory(), records: new(atomic.Int64), reads: new(atomic.Int64)}
	accounts := account.New(store, clock.Real{})
	for _, id := range []string{"alice", "bob"} {
		_, err := accounts.AddAccount(t.Context(), id, account.RoleUser, "first")
		require.NoError(t, err)
	}
	alice, _, err := accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	bob, _, err := accounts.IssueCredential(t.Context(), "bob", "bob")
	require.NoError(t, err)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	c := h.connect(t, "7:", alice)
	first := c.hello(alice) // the answer a hello on the socket gets; connect's was the same
	records, reads := store.records.Load(), store.reads.Load()

	const again = 200
	for i := range again {
		c.request(fmt.Sprintf("again-%d", i), TypeHello, map[string]any{"traposId": "7:", "secret": alice, "clientVersion": "0.5.21"})
	}
	for i := range again {
		resp := c.read()
		require.Equal(t, fmt.Sprintf("again-%d", i), resp.MessageID)
		require.True(t, resp.OK, "%+v", resp.Error)
		require.JSONEq(t, string(first.Payload), string(resp.Payload), "the same answer")
	}
	assert.Equal(t, records, store.records.Load(), "hellos recorded in the store")
	assert.Equal(t, reads, store.reads.Load(), "credentials read from the store")

	// Another account's credential is checked, and refused on this socket as before.
	c.request("bob", TypeHello, map[string]any{"traposId": "7:", "secret": bob})
	resp := c.read()
	assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "already registered")
	// A wrong secret still ends the socket.
	c.request("wrong", TypeHello, map[string]any{"traposId": "7:", "secret": "nope"})
	assert.Equal(t, protocol.CodeUnauthorized, c.read().Error.Code)
	c.expectClose(CloseUnauthorized, "unauthorized")
}

// A socket stays the credential it registered with (docs/protocol.md): a second credential of
// the same account said on it is answered ok and changes nothing, so revoking that one leaves
// the socket open and revoking the first closes it. A rotated credential says hello on a new
// socket, as the client does.
func TestASecondCredentialOnASocketLeavesItTheFirsts(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	first, one, err := accounts.IssueCredential(t.Context(), "alice", "one")
	require.NoError(t, err)
	second, two, err := accounts.IssueCredential(t.Context(), "alice", "two")
	require.NoError(t, err)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	c := h.connect(t, "7:", first)

	c.request("second", TypeHello, map[string]any{"traposId": "7:", "secret": second})
	resp := c.read()
	require.True(t, resp.OK, "%+v", resp.Error)
	_, err = accounts.RevokeCredential(t.Context(), "alice", two.Selector)
	require.NoError(t, err)
	assert.False(t, h.gw.RevokeCredential(two.Selector), "the socket is not the second credential's")
	c.request("probe", protocol.TypeProbeGateway, nil)
	assert.True(t, c.read().OK, "the socket serves on")

	_, err = accounts.RevokeCredential(t.Context(), "alice", one.Selector)
	require.NoError(t, err)
	assert.True(t, h.gw.RevokeCredential(one.Selector))
	c.expectClose(CloseRevoked, "revoked")
}

// A computer holding two good credentials of its account (or saying hello under two labels)
// alternated them on its registered socket: the same hello again is answered from the
// socket's own, but each other one went to the account store, a credential read and a hello
// written, as fast as it wrote frames. A socket's other hellos reach the store a few times;
// then they are refused without it, and the socket goes on serving.
func TestAlternatingHellosReachTheStoreAFewTimesASocket(t *testing.T) {
	store := recordCountingStore{Memory: account.NewMemory(), records: new(atomic.Int64), reads: new(atomic.Int64)}
	accounts := account.New(store, clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	first, _, err := accounts.IssueCredential(t.Context(), "alice", "one")
	require.NoError(t, err)
	second, _, err := accounts.IssueCredential(t.Context(), "alice", "two")
	require.NoError(t, err)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	c := h.connect(t, "7:", first)
	reads := store.reads.Load()

	const rounds = 100
	for i := range rounds {
		secret, traposID := second, "7:"
		if i%3 == 2 {
			secret, traposID = first, "8:other" // another label: refused, but it asked the store
		}
		c.request(fmt.Sprintf("other-%d", i), TypeHello, map[string]any{"traposId": traposID, "secret": secret})
		c.request(fmt.Sprintf("same-%d", i), TypeHello, map[string]any{"traposId": "7:", "secret": first})
	}
	refused := 0
	for i := range rounds {
		resp := c.read()
		require.Equal(t, fmt.Sprintf("other-%d", i), resp.MessageID)
		if !resp.OK && strings.Contains(resp.Error.Message, "say that hello on a new socket") {
			assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)
			refused++
		}
		resp = c.read()
		require.Equal(t, fmt.Sprintf("same-%d", i), resp.MessageID)
		require.True(t, resp.OK, "the socket's own hello: %+v", resp.Error)
	}
	assert.Equal(t, rounds-maxOtherHellosOnASocket, refused, "hellos refused without the store")
	assert.LessOrEqual(t, store.reads.Load()-reads, int64(maxOtherHellosOnASocket), "credentials read from the store")

	c.request("after", protocol.TypeProbeGateway, nil)
	assert.True(t, c.read().OK, "the socket serves on")
	// A new socket says the other hello, as the client does.
	c2 := h.connect(t, "7:", second)
	c.expectClose(CloseReplaced, "replaced")
	c2.request("after", protocol.TypeProbeGateway, nil)
	assert.True(t, c2.read().OK)
}

// A revocation heard on the bus naming a credential no socket here said hello with is
// dropped at once: whoever can publish on trapos.revoked may send them as fast as NATS takes
// them, and each walked every socket of the replica (a copy of the registry's list, then each
// socket's lock), ten thousand computers' worth for each message. The registry counts the
// credentials it holds: the check allocates nothing, however many computers are connected.
func TestAMadeUpRevocationWalksNoSocket(t *testing.T) {
	h, _, alice, _ := accountsHarness(t)
	_, selector, ok := account.Identify(alice)
	require.True(t, ok)
	first := h.connect(t, "7:", alice)
	h.connect(t, "8:", "pw")
	require.Len(t, h.gw.Computers(), 2)
	allocs := testing.AllocsPerRun(100, func() {
		h.gw.revocationHeard(t.Context(), "cred-nobody-holds")
	})
	assert.Zero(t, allocs, "allocations for each made-up revocation")

	// The count follows the sockets: held while one is registered with it, through newest
	// wins, and no longer once the last leaves.
	assert.True(t, h.gw.holdsCredential(selector))
	newer := h.connect(t, "7:", alice)
	first.expectClose(CloseReplaced, "replaced")
	assert.True(t, h.gw.holdsCredential(selector), "the newer socket holds it")
	require.NoError(t, newer.conn.Close())
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 1 }, waitLimit, testkit.Poll)
	assert.False(t, h.gw.holdsCredential(selector))
}

// TestAnAccountHoldsHalfTheConnectionCapAtMost: a credential says hello under any label of its
// computer id (one set by hand under any id), each a socket that is never evicted, and an
// account's token makes credentials as it likes: one account filled the connection cap (20 000
// sockets from one script), and every other account's computers got 503. An account other than
// local now holds half of it at most: past that a hello of a new computer of the account is
// refused busy, naming why; its own computers say hello again as ever, other accounts' and
// local's are served, and a place freed is taken again.
func TestAnAccountHoldsHalfTheConnectionCapAtMost(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.Real{})
	for _, id := range []string{"alice", "bob"} {
		_, err := accounts.AddAccount(t.Context(), id, account.RoleUser, "first")
		require.NoError(t, err)
	}
	alice, _, err := accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	bob, _, err := accounts.IssueCredential(t.Context(), "bob", "bob")
	require.NoError(t, err)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts, MaxConnections: 8}, nil)

	held := map[string]*computer{}
	for _, id := range []string{"7:a", "7:b", "7:c", "7:d"} {
		held[id] = h.connect(t, id, alice)
	}
	over := h.dial(t, "7:e")
	resp := over.hello(alice)
	require.False(t, resp.OK, "a fifth computer of alice's was taken")
	assert.Equal(t, protocol.CodeBusy, resp.Error.Code)
	assert.Equal(t, "account alice has 4 computers connected to this gateway, the most one account may (half of its "+
		"--max-connections): close some, or ask the gateway's operator", resp.Error.Message)
	_ = over.conn.Close()

	// Its own computer again (newest wins), another account's and local's are served.
	h.connect(t, "7:a", alice)
	held["7:a"].expectClose(CloseReplaced, "replaced")
	h.connect(t, "8:a", bob)
	h.connect(t, "9:a", "pw")

	// A place alice frees is hers again.
	_ = held["7:b"].conn.Close()
	require.Eventually(t, func() bool { return accountComputers(h, "alice") == 3 }, waitLimit, testkit.Poll, "7:b unregistered")
	h.connect(t, "7:e", alice)
}

// Two hellos of new computers of one account that holds its share but one, said at the same
// moment, take one place between them: the share is checked and the socket counted in one
// step under the registry's lock. Before, the check and the count were two steps, both hellos
// passed the check before either was counted, and the account held one computer past its share.
// The hook holds each hello that passed the check, just before its socket is registered.
func TestTwoHellosAtOnceTakeTheAccountsLastPlaceOnce(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	alice, _, err := accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	racing := map[string]bool{"7:x": true, "7:y": true}
	passed := make(chan string, len(racing))
	release := make(chan struct{})
	h := newHarness(t, Config{Password: "pw", Accounts: accounts, MaxConnections: 8}, nil, func(gw *Gateway) {
		gw.testHookBeforeRegister = func(k Key) {
			if racing[k.TraposID] {
				passed <- k.TraposID
				<-release
			}
		}
	})
	most := h.gw.cfg.maxAccountConnections()
	for i := range most - 1 {
		h.connect(t, fmt.Sprintf("7:%d", i), alice)
	}

	type answer struct {
		id   string
		text string
		err  error
	}
	answers := make(chan answer, len(racing))
	for id := range racing {
		c := h.dial(t, id)
		c.request("hello-1", TypeHello, map[string]any{"traposId": id, "secret": alice})
		go func() {
			text, err := c.readText()
			answers <- answer{id, text, err}
		}()
	}
	// Both hellos have passed the check (held by the hook), or one has and the other was
	// answered: each is held where the race was, or past it.
	var got []answer
	held := 0
	for held+len(got) < len(racing) {
		select {
		case <-passed:
			held++
		case a := <-answers:
			got = append(got, a)
		case <-time.After(waitLimit):
			require.FailNow(t, "the hellos neither passed the check nor were answered")
		}
	}
	close(release)
	for len(got) < len(racing) {
		got = append(got, <-answers)
	}

	taken := 0
	for _, a := range got {
		require.NoError(t, a.err, "the answer to %s's hello", a.id)
		f, err := protocol.DecodeFrame([]byte(a.text))
		require.NoError(t, err)
		if f.OK {
			taken++
			continue
		}
		assert.Equal(t, protocol.CodeBusy, f.Error.Code, "%s: %+v", a.id, f.Error)
	}
	assert.Equal(t, 1, taken, "hellos of new computers taken at once")
	assert.Equal(t, most, accountComputers(h, "alice"), "alice's computers connected")
}

// accountComputers is how many computers of accountID are registered on h's gateway.
func accountComputers(h *harness, accountID string) int {
	n := 0
	for _, s := range h.gw.registry.Sessions() {
		if s.Key().AccountID == accountID {
			n++
		}
	}
	return n
}

// accountPlaces is how many places of its share accountID holds on gw: its computers
// registered or whose hello holds one.
func accountPlaces(gw *Gateway, accountID string) int {
	gw.registry.mu.Lock()
	defer gw.registry.mu.Unlock()
	return gw.registry.accounts[accountID]
}

// A hello that took a place in its account's share and ended before its socket was registered
// gives the place back: here a registered socket saying hello as another computer of its
// account, refused not_authenticated, again and again, leaves the account's last place free,
// and free by the time the refusal is answered (the computer may follow it at once with a hello
// that needs the place).
func TestAHelloRefusedAfterItsPlaceGivesItBack(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	alice, _, err := accounts.IssueCredential(t.Context(), "alice", "alice")
	require.NoError(t, err)
	placesAnswered := make(chan int, 3)
	h := newHarness(t, Config{Password: "pw", Accounts: accounts, MaxConnections: 8}, nil, func(gw *Gateway) {
		gw.testHookAfterRefusedHello = func() { placesAnswered <- accountPlaces(gw, "alice") }
	})
	most := h.gw.cfg.maxAccountConnections()
	var first *computer
	for i := range most - 1 {
		c := h.connect(t, fmt.Sprintf("7:%d", i), alice)
		if first == nil {
			first = c
		}
	}
	for i := range 3 {
		first.request(fmt.Sprintf("other-%d", i), TypeHello, map[string]any{"traposId": "7:other", "secret": alice})
		resp := first.read()
		require.False(t, resp.OK)
		assert.Equal(t, protocol.CodeNotAuthenticated, resp.Error.Code)
		assert.Equal(t, most-1, <-placesAnswered, "alice's places as hello %d is answered", i)
	}
	h.connect(t, "7:last", alice)
	assert.Equal(t, most, accountComputers(h, "alice"))
	over := h.dial(t, "7:over")
	assert.Equal(t, protocol.CodeBusy, over.hello(alice).Error.Code, "the share is full now")
}

// TestAHelloWithoutASecretOnAGatewayWithAccounts: a computer with no sandbox.password, on a
// gateway with accounts, is told it sent no secret and both ways in: the password, or a
// credential of its own by linking (it was told "wrong secret", a password it does not have).
func TestAHelloWithoutASecretOnAGatewayWithAccounts(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.Real{})
	h := newHarness(t, Config{Password: "pw", Accounts: accounts}, nil)
	c := h.dial(t, "7:")
	resp := c.hello("")
	require.False(t, resp.OK)
	assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
	assert.Equal(t, "no secret sent (sandbox.password is not set): this gateway wants SANDBOX_PASSWORD or a linked credential (sandbox setup, or sandbox link)", resp.Error.Message)
	c.expectClose(CloseUnauthorized, "unauthorized")
}

// TestWhetherAnAccountHoldsAComputerCredentialIsKeptAWhile: a not_connected of an account
// with none of its computers connected asks whether it holds a computer credential (its hint
// says how to link one), and the web console asks again every 2 s while it waits; on the
// replicas' NATS store each ask listed every credential of the bucket. An answer stands
// linkedAnswerLife on the gateway's clock.
func TestWhetherAnAccountHoldsAComputerCredentialIsKeptAWhile(t *testing.T) {
	ctx := t.Context()
	clk := clock.NewFake(time.Date(2026, 12, 6, 21, 0, 0, 0, time.UTC))
	store := &countedCredentials{Memory: account.NewMemory()}
	accounts := account.New(store, clk)
	_, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "laptop")
	require.NoError(t, err)
	gw := New(Config{Password: "pw", Accounts: accounts, Clock: clk}, slog.New(slog.DiscardHandler), nil)

	for range 3 {
		holding, err := gw.ComputerCredentials(ctx, "alice")
		require.NoError(t, err)
		assert.Equal(t, account.HoldsNone, holding)
	}
	assert.EqualValues(t, 1, store.lists.Load(), "one listing for three asks")

	_, _, err = accounts.IssueCredential(ctx, "alice", "alice")
	require.NoError(t, err)
	clk.Advance(linkedAnswerLife - time.Millisecond)
	holding, err := gw.ComputerCredentials(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, account.HoldsNone, holding, "the answer still stands")
	clk.Advance(time.Millisecond)
	holding, err = gw.ComputerCredentials(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, account.HoldsOne, holding, "asked again once it is linkedAnswerLife old")
	assert.EqualValues(t, 2, store.lists.Load())
}

// countedCredentials counts the listings of an account's credentials.
type countedCredentials struct {
	*account.Memory
	lists atomic.Int64
}

func (s *countedCredentials) Credentials(ctx context.Context, accountID string) ([]account.Credential, error) {
	s.lists.Add(1)
	return s.Memory.Credentials(ctx, accountID)
}

// revokeAs asks the revocation of computer traposID as caller, through the route's handler.
func revokeAs(t *testing.T, h *harness, caller account.Caller, traposID string) (int, server.Answer) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/trapos/computers/"+traposID+"/revoke", nil)
	r.SetPathValue("traposId", traposID)
	r = r.WithContext(account.WithCaller(r.Context(), caller))
	w := httptest.NewRecorder()
	h.gw.serveRevoke(w, r)
	var ans server.Answer
	require.NoError(t, json.NewDecoder(w.Body).Decode(&ans))
	return w.Code, ans
}

// TestRevokingARelabelledComputerByItsOldIDNamesItsNewOne: the list read just before a
// computer's label changed names its old traposId; revoking by it answers, as every other
// route does for a minute, the id to revoke it by, to the callers that reach its account (its
// own, an admin), and revokes nothing; another account hears it is not connected.
func TestRevokingARelabelledComputerByItsOldIDNamesItsNewOne(t *testing.T) {
	h, accounts, alice, _ := accountsHarness(t)
	c := h.connect(t, "6:keller", alice)
	c.request("bye-1", TypeBye, map[string]any{"reason": "relabelled", "traposId": "6:cellar"})
	require.True(t, c.read().OK)
	c.expectClose(CloseBye, ByeRelabelled)
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 0 }, waitLimit, testkit.Poll, "the relabelled socket to leave")

	const relabelled = "computer 6:keller was relabelled: it is 6:cellar now; ask it by that id"
	for _, caller := range []account.Caller{{Account: "alice"}, {Account: LocalAccount, Admin: true}} {
		code, ans := revokeAs(t, h, caller, "6:keller")
		assert.Equal(t, http.StatusNotFound, code, caller.Account)
		require.NotNil(t, ans.Error, caller.Account)
		assert.Equal(t, protocol.CodeNotConnected, ans.Error.Code, caller.Account)
		assert.Equal(t, relabelled, ans.Error.Message, caller.Account)
		assert.Equal(t, "6:cellar", ans.Error.RelabelledTo, caller.Account)
	}
	_, ans := revokeAs(t, h, account.Caller{Account: "bob"}, "6:keller")
	require.NotNil(t, ans.Error)
	assert.True(t, strings.HasPrefix(ans.Error.Message, "computer 6:keller is not connected; "), ans.Error.Message)
	assert.Contains(t, ans.Error.Message, revokeOfflineHint)
	assert.Empty(t, ans.Error.RelabelledTo, "another account's computer is not this one")

	creds, err := accounts.Store().Credentials(t.Context(), "alice")
	require.NoError(t, err)
	require.Len(t, creds, 1)
	assert.True(t, creds[0].RevokedAt.IsZero(), "nothing revoked")
}
