package link

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitLimit = 5 * time.Second

var t0 = time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)

// fakeGateway is the handler table and the wrong-secret budget, recorded.
type fakeGateway struct {
	handlers  map[string]protocol.RequestHandler
	mu        sync.Mutex
	wrong     []string
	computers []computer.Computer // guarded by mu
	held      chan struct{}       // when set, WrongSecret holds the answer back until it closes
}

func (g *fakeGateway) Computers() []computer.Computer {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.computers)
}

// ConnectedComputer finds a connected computer as the gateway's registry does, all of them
// here.
func (g *fakeGateway) ConnectedComputer(accountID, traposID string) (computer.Computer, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.computers {
		if c.AccountID == accountID && c.TraposID == traposID {
			return c, true
		}
	}
	return computer.Computer{}, false
}

// connect lists c as connected, as the gateway's registry would.
func (g *fakeGateway) connect(c computer.Computer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.computers = append(g.computers, c)
}

func (g *fakeGateway) Handle(typ string, h protocol.RequestHandler) { g.handlers[typ] = h }

func (g *fakeGateway) WrongSecret(ctx context.Context, remoteAddr string) error {
	g.mu.Lock()
	g.wrong = append(g.wrong, remoteAddr)
	held := g.held
	g.mu.Unlock()
	if held == nil {
		return nil
	}
	select { // the gateway holds the answer back past the address's budget
	case <-held:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wrongSecrets is how many wrong secrets were spent.
func (g *fakeGateway) wrongSecrets() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.wrong)
}

type fixture struct {
	t        *testing.T
	socketMu sync.Mutex
	sockets  map[uint64]socket // by Requester.Socket: the handlers' ctx, as the gateway's; guarded by socketMu
	clk      *clock.Fake
	accounts *account.Accounts
	mod      *Module
	gw       *fakeGateway
	reg      *prometheus.Registry
	mux      *http.ServeMux
	logs     *testkit.SyncBuffer // the module's log
}

func newFixture(t *testing.T, cfg Config) *fixture {
	clk := clock.NewFake(t0)
	accounts := account.New(account.NewMemory(), clk)
	for _, a := range []struct {
		id   string
		role account.Role
	}{{"alice", account.RoleUser}, {"bob", account.RoleUser}, {"root", account.RoleAdmin}} {
		_, err := accounts.AddAccount(t.Context(), a.id, a.role, "first")
		require.NoError(t, err)
	}
	if cfg.Accounts == nil {
		cfg.Accounts = accounts
	}
	cfg.Clock = clk
	f := &fixture{t: t, clk: clk, accounts: accounts, sockets: map[uint64]socket{}}
	f.start(cfg)
	return f
}

// start runs the module with cfg (its metrics and log the fixture's new ones), as the gateway
// starts it: a second start is the gateway run again on the same account store.
func (f *fixture) start(cfg Config) {
	f.reg = prometheus.NewRegistry()
	cfg.Metrics = f.reg
	f.logs = &testkit.SyncBuffer{}
	f.mod = New(cfg, slog.New(slog.NewTextHandler(f.logs, nil)))
	f.gw = &fakeGateway{handlers: map[string]protocol.RequestHandler{}}
	f.mod.Register(f.gw)
	f.mux = http.NewServeMux()
	f.mux.HandleFunc(ApprovePattern, f.mod.serveApprove)
	f.mux.HandleFunc("POST "+KeysPath, f.mod.serveNewKey)
	f.mux.HandleFunc("GET "+KeysPath, f.mod.serveKeys)
	f.mux.HandleFunc(RevokeKeyPattern, f.mod.serveRevokeKey)
}

// socket is a computer's socket as the handlers see it: the ctx the gateway gives every
// request on it ends when it closes.
type socket struct {
	ctx   context.Context
	close context.CancelFunc
}

// socketOf returns from's socket, opening it on first use (within the test's time limit).
func (f *fixture) socketOf(from protocol.Requester) socket {
	f.socketMu.Lock()
	defer f.socketMu.Unlock()
	s, ok := f.sockets[from.Socket]
	if !ok {
		ctx, cancel := context.WithTimeout(f.t.Context(), 6*waitLimit)
		f.t.Cleanup(cancel)
		s = socket{ctx: ctx, close: cancel}
		f.sockets[from.Socket] = s
	}
	return s
}

// disconnect closes from's socket, as a computer that went away.
func (f *fixture) disconnect(from protocol.Requester) { f.socketOf(from).close() }

var kitchen = protocol.Requester{AccountID: "", TraposID: "7:kitchen", RemoteAddr: "10.0.0.5:40000", Socket: 1}

// call runs a link request as the gateway would.
func (f *fixture) call(from protocol.Requester, typ string, payload any) (json.RawMessage, *protocol.Error) {
	f.t.Helper()
	raw, err := json.Marshal(payload)
	require.NoError(f.t, err)
	out, err := f.gw.handlers[typ](f.socketOf(from).ctx, from, raw)
	if err != nil {
		pe, ok := err.(*protocol.Error)
		require.True(f.t, ok, "a %s error is a protocol error: %v", typ, err)
		return nil, pe
	}
	return out, nil
}

func (f *fixture) begin(from protocol.Requester) CodeAnswer {
	f.t.Helper()
	out, pe := f.call(from, protocol.TypeLinkBegin, map[string]any{})
	require.Nil(f.t, pe)
	var a CodeAnswer
	require.NoError(f.t, json.Unmarshal(out, &a))
	return a
}

// api calls a host route as caller.
func (f *fixture) api(caller account.Caller, method, path string, body any) (int, server.Answer) {
	f.t.Helper()
	var rd bytes.Buffer
	if body != nil {
		require.NoError(f.t, json.NewEncoder(&rd).Encode(body))
	}
	r := httptest.NewRequest(method, path, &rd)
	r = r.WithContext(account.WithCaller(r.Context(), caller))
	w := httptest.NewRecorder()
	f.mux.ServeHTTP(w, r)
	var a server.Answer
	require.NoError(f.t, json.Unmarshal(w.Body.Bytes(), &a), "body: %s", w.Body.String())
	return w.Code, a
}

var (
	alice = account.Caller{Account: "alice"}
	bob   = account.Caller{Account: "bob"}
	root  = account.Caller{Account: "root", Admin: true}
)

func (f *fixture) outcome(o string) float64 {
	return testutil.ToFloat64(f.mod.outcomes.WithLabelValues(o))
}

// pollAsync runs link.poll in a goroutine.
func (f *fixture) pollAsync(from protocol.Requester, payload any) <-chan PollAnswer {
	ch := make(chan PollAnswer, 1)
	go func() {
		out, pe := f.call(from, protocol.TypeLinkPoll, payload)
		var a PollAnswer
		if pe == nil {
			_ = json.Unmarshal(out, &a)
		} else {
			a.State = account.LinkState("error: " + pe.Message)
		}
		ch <- a
	}()
	return ch
}

func await[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatal("no answer")
		var zero T
		return zero
	}
}

// TestACodeHasItsLifetimeLeftWhateverTheStoresClock: the store dates a code a moment after
// the module's now (its own clock); the computer is told the lifetime, not a few ms more,
// which sandbox link would show as a second more ("valid 4 s" for 3 s).
func TestACodeHasItsLifetimeLeftWhateverTheStoresClock(t *testing.T) {
	later := account.New(account.NewMemory(), clock.NewFake(t0.Add(7*time.Millisecond)))
	f := newFixture(t, Config{Accounts: later, CodeLifetime: 3 * time.Second})
	assert.EqualValues(t, 3000, f.begin(kitchen).ExpiresInMs)
}

func TestCodeApprovedAndAccepted(t *testing.T) {
	f := newFixture(t, Config{})
	code := f.begin(kitchen)
	assert.Regexp(t, `^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`, code.Code)
	assert.EqualValues(t, 600000, code.ExpiresInMs)
	assert.Equal(t, "trap-sandbox link approve "+code.Code, code.ApproveLine)

	out, pe := f.call(kitchen, protocol.TypeLinkPoll, map[string]any{"code": code.Code, "waitMs": 0})
	require.Nil(t, pe)
	assert.JSONEq(t, `{"state":"pending"}`, string(out))

	// A long poll waits for the approval, which wakes it at once.
	polled := f.pollAsync(kitchen, map[string]any{"code": code.Code})
	require.Eventually(t, func() bool { return f.clk.Armed() == 2 }, waitLimit, testkit.Poll, "the poll's deadline and recheck")
	status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": strings.ToLower(code.Code)})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	assert.JSONEq(t, `{"traposId":"7:kitchen","address":"10.0.0.5","account":"alice","expiresAt":"2026-12-02T01:10:00Z"}`, string(ans.Payload))
	assert.Equal(t, PollAnswer{State: account.LinkApproved, Account: "alice", ApprovedBy: "alice"}, await(t, polled))

	// A second approval (bob's, who read the code too) is told the code waits for its player.
	status, ans = f.api(bob, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, protocol.CodeLinkInvalid, ans.Error.Code)
	assert.Equal(t, "the link code was approved already: its computer asks its player whether to join the account that approved it "+
		"(if the question there names an account that is not yours, the player answers n and runs sandbox link again)", ans.Error.Message)

	out, pe = f.call(kitchen, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": true})
	require.Nil(t, pe)
	var acc AcceptAnswer
	require.NoError(t, json.Unmarshal(out, &acc))
	assert.Equal(t, "alice", acc.Account)
	c, err := f.accounts.AuthenticateComputer(t.Context(), acc.Credential, "7:kitchen", "")
	require.NoError(t, err)
	assert.Equal(t, "alice", c.AccountID)

	_, pe = f.call(kitchen, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": true})
	require.NotNil(t, pe)
	assert.Equal(t, protocol.CodeLinkInvalid, pe.Code)
	assert.Contains(t, pe.Message, "already used")

	assert.Equal(t, 1.0, f.outcome("issued"))
	assert.Equal(t, 1.0, f.outcome("approved"))
	assert.Equal(t, 1.0, f.outcome("accepted"))
	assert.Equal(t, 2.0, f.outcome("refused"))
	assert.Equal(t, 0.0, f.outcome("declined"))
}

// TestACodeIsTheAskingSocketsOnly: a bystander who read the code off the computer's screen
// and opens a link session of their own claiming the same traposId (a link session needs no
// secret) can neither poll nor accept it: the approval meant for the computer that shows the
// code stays that computer's.
func TestACodeIsTheAskingSocketsOnly(t *testing.T) {
	f := newFixture(t, Config{})
	code := f.begin(kitchen)
	status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)

	impostor := kitchen
	impostor.Socket, impostor.RemoteAddr = 2, "203.0.113.9:5000"
	for _, typ := range []string{protocol.TypeLinkPoll, protocol.TypeLinkAccept} {
		_, pe := f.call(impostor, typ, map[string]any{"code": code.Code, "accept": true, "waitMs": 0})
		require.NotNil(t, pe, typ)
		assert.Equal(t, protocol.CodeLinkInvalid, pe.Code)
		assert.Contains(t, pe.Message, "unknown link code", "as for a code that does not exist")
	}

	out, pe := f.call(kitchen, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": true})
	require.Nil(t, pe, "the computer that asked still accepts")
	var acc AcceptAnswer
	require.NoError(t, json.Unmarshal(out, &acc))
	assert.Equal(t, "alice", acc.Account)
}

func TestBystandersApprovalIsDeclined(t *testing.T) {
	f := newFixture(t, Config{})
	code := f.begin(kitchen)
	status, _ := f.api(bob, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	require.Equal(t, http.StatusOK, status)
	out, pe := f.call(kitchen, protocol.TypeLinkPoll, map[string]any{"code": code.Code})
	require.Nil(t, pe)
	assert.JSONEq(t, `{"state":"approved","account":"bob","approvedBy":"bob"}`, string(out), "the player sees who approved")
	out, pe = f.call(kitchen, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": false})
	require.Nil(t, pe)
	assert.JSONEq(t, `{}`, string(out))
	creds, err := f.accounts.Store().Credentials(t.Context(), "")
	require.NoError(t, err)
	assert.Empty(t, creds, "a declined code issues nothing")
	_, pe = f.call(kitchen, protocol.TypeLinkPoll, map[string]any{"code": code.Code})
	require.NotNil(t, pe)
	assert.Contains(t, pe.Message, "declined")
	assert.Equal(t, 1.0, f.outcome("declined"))
}

// TestAcceptingACodeWhoseAccountWasRemoved: bob approves the code, the player is shown bob,
// then bob is removed (the removal deletes the code) before the player answers y. The answer
// says that the approving account is gone, not "unknown link code (check it…)", which sent the
// player to check a code they never typed; a socket that was never told of the approval (a
// bystander claiming the computer's id) still hears of an unknown code, and nothing is issued.
func TestAcceptingACodeWhoseAccountWasRemoved(t *testing.T) {
	f := newFixture(t, Config{})
	code := f.begin(kitchen)
	status, ans := f.api(bob, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	out, pe := f.call(kitchen, protocol.TypeLinkPoll, map[string]any{"code": code.Code})
	require.Nil(t, pe)
	assert.JSONEq(t, `{"state":"approved","account":"bob","approvedBy":"bob"}`, string(out))
	_, err := f.accounts.RemoveAccount(t.Context(), "bob")
	require.NoError(t, err)

	impostor := kitchen
	impostor.Socket, impostor.RemoteAddr = 2, "203.0.113.9:5000"
	_, pe = f.call(impostor, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": true})
	require.NotNil(t, pe)
	assert.Contains(t, pe.Message, "unknown link code")

	_, pe = f.call(kitchen, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": true})
	require.NotNil(t, pe)
	assert.Equal(t, protocol.CodeLinkInvalid, pe.Code)
	assert.Equal(t, "the account that approved the link code is gone (removed since); run sandbox link again for a new code", pe.Message)
	creds, err := f.accounts.Store().Credentials(t.Context(), "")
	require.NoError(t, err)
	assert.Empty(t, creds)
	assert.Equal(t, 2.0, f.outcome("refused"))
}

func TestAnotherComputersCodeIsUnknown(t *testing.T) {
	f := newFixture(t, Config{})
	code := f.begin(kitchen)
	other := protocol.Requester{TraposID: "8:", RemoteAddr: "10.0.0.5:1"}
	for _, typ := range []string{protocol.TypeLinkPoll, protocol.TypeLinkAccept} {
		_, pe := f.call(other, typ, map[string]any{"code": code.Code, "accept": true})
		require.NotNil(t, pe)
		assert.Equal(t, protocol.CodeLinkInvalid, pe.Code)
		assert.Contains(t, pe.Message, "unknown link code")
	}
}

// A link session needs no secret, and sends link.poll and link.accept as fast as it likes, 16
// at a time: a code it was not given (another socket's, a made-up one) is refused from the
// module's memory, never looked up in the account store, a SQLite read or a round trip to NATS
// each, which such a flood from unauthenticated sockets would have the store spend for every
// computer's hello and every API token. With the store unable to answer, they are still the
// unknown codes they are.
func TestACodeTheSocketWasNotGivenIsNotLookedUp(t *testing.T) {
	store, err := account.OpenSQLite(t.Context(), t.TempDir())
	require.NoError(t, err)
	f := newFixture(t, Config{Accounts: account.New(store, clock.NewFake(t0))})
	code := f.begin(kitchen)
	madeUp := "B" + code.Code[1:]
	if madeUp == code.Code {
		madeUp = "C" + code.Code[1:]
	}
	require.NoError(t, store.Close())

	bystander := kitchen
	bystander.Socket = 2
	for _, typ := range []string{protocol.TypeLinkPoll, protocol.TypeLinkAccept} {
		for _, c := range []string{code.Code, madeUp, "not a code"} {
			_, pe := f.call(bystander, typ, map[string]any{"code": c, "accept": true, "waitMs": 0})
			require.NotNil(t, pe, "%s %s", typ, c)
			assert.Equal(t, protocol.CodeLinkInvalid, pe.Code, "%s %s", typ, c)
			assert.Contains(t, pe.Message, "unknown link code", "%s %s", typ, c)
		}
	}
}

// A link session needs only a code of its own (one link.begin) to send polls and accepts of it
// as fast as it likes, 16 at a time: the store reads the code at most once a second for them
// (5800 reads a second from one socket, polling with waitMs 0, before), and again at once when
// it changes here. An accept that cannot succeed is answered from that look too.
func TestASocketsOwnCodeCostsTheStoreOneLookASecond(t *testing.T) {
	store, err := account.OpenSQLite(t.Context(), t.TempDir())
	require.NoError(t, err)
	f := newFixture(t, Config{Accounts: account.New(store, clock.NewFake(t0))})
	code := f.begin(kitchen)
	pending := map[string]any{"code": code.Code, "waitMs": 0}
	out, pe := f.call(kitchen, protocol.TypeLinkPoll, pending)
	require.Nil(t, pe)
	assert.JSONEq(t, `{"state":"pending"}`, string(out))
	require.NoError(t, store.Close())

	for range 16 {
		out, pe := f.call(kitchen, protocol.TypeLinkPoll, pending)
		require.Nil(t, pe, "answered from the last look, not the closed store")
		assert.JSONEq(t, `{"state":"pending"}`, string(out))
	}
	_, pe = f.call(kitchen, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": true})
	require.NotNil(t, pe)
	assert.Equal(t, protocol.CodeLinkInvalid, pe.Code)
	assert.Equal(t, "the link code is not approved yet: wait until link.poll answers approved", pe.Message)

	f.clk.Advance(recheckEvery)
	raw, err := json.Marshal(pending)
	require.NoError(t, err)
	_, err = f.gw.handlers[protocol.TypeLinkPoll](f.socketOf(kitchen).ctx, kitchen, raw)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "database is closed", "a second later the store is asked again")
}

// heldStore is a store whose reads of a link code, while hold is set, read and then wait for
// it to be closed before they answer: a look under way, as long as a test needs.
type heldStore struct {
	account.Store
	reads atomic.Int32
	hold  atomic.Pointer[chan struct{}]
}

func (s *heldStore) LinkCode(ctx context.Context, id string) (account.LinkCode, error) {
	c, err := s.Store.LinkCode(ctx, id)
	s.reads.Add(1)
	if hold := s.hold.Load(); hold != nil {
		<-*hold
	}
	return c, err
}

// looksWaiting counts the goroutines in the link module's look that wait: on the store's read
// (heldStore) or on another look's read.
func looksWaiting() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, stack := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(stack, "link.(*Module).look(") &&
			(strings.Contains(stack, "(*heldStore).LinkCode(") || strings.Contains(stack, " [select")) {
			n++
		}
	}
	return n
}

// TestALookUnderWayIsTheOneRead: polls of a socket's own code at once wait for the one read
// of the store under way, rather than each reading it (a link session sends 16 at a time).
func TestALookUnderWayIsTheOneRead(t *testing.T) {
	store := &heldStore{Store: account.NewMemory()}
	f := newFixture(t, Config{Accounts: account.New(store, clock.NewFake(t0))})
	code := f.begin(kitchen)
	hold := make(chan struct{})
	store.hold.Store(&hold)
	before := store.reads.Load()
	pending := map[string]any{"code": code.Code, "waitMs": 0}
	first, second := f.pollAsync(kitchen, pending), f.pollAsync(kitchen, pending)
	require.Eventually(t, func() bool { return looksWaiting() == 2 }, waitLimit, testkit.Poll, "both polls in their look")
	close(hold)
	assert.Equal(t, account.LinkPending, await(t, first).State)
	assert.Equal(t, account.LinkPending, await(t, second).State)
	assert.Equal(t, int32(1), store.reads.Load()-before, "one read for both")
}

// TestALookThatBeganBeforeAChangeIsNotKept: a read of the store under way when the code is
// approved here may have read it before; kept as the last look, the poll's look after it
// began to listen took it, and the poll said pending (and would wait out its waitMs, the
// approval's wake-up gone) where it was approved.
func TestALookThatBeganBeforeAChangeIsNotKept(t *testing.T) {
	store := &heldStore{Store: account.NewMemory()}
	accounts := account.New(store, clock.NewFake(t0))
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	f := newFixture(t, Config{Accounts: accounts})
	code := f.begin(kitchen)
	hold := make(chan struct{})
	store.hold.Store(&hold)
	before := store.reads.Load()
	pending := map[string]any{"code": code.Code, "waitMs": 0}
	first := f.pollAsync(kitchen, pending)
	require.Eventually(t, func() bool { return store.reads.Load() > before }, waitLimit, testkit.Poll, "the poll's read")
	store.hold.Store(nil)
	status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	require.Equal(t, http.StatusOK, status, ans)
	close(hold)
	// The poll's first look read pending before the approval; its look after it began to
	// listen (poll: listen, then look) must not take that.
	assert.Equal(t, account.LinkApproved, await(t, first).State)
}

func TestPollHearsExpiry(t *testing.T) {
	f := newFixture(t, Config{})
	code := f.begin(kitchen)
	polled := f.pollAsync(kitchen, map[string]any{"code": code.Code, "waitMs": 5000})
	require.Eventually(t, func() bool { return f.clk.Armed() == 2 }, waitLimit, testkit.Poll, "the poll's timers")
	f.clk.Advance(4 * time.Second) // a recheck: still pending
	require.Eventually(t, func() bool { return f.clk.Armed() == 2 }, waitLimit, testkit.Poll, "the poll's timers again")
	f.clk.Advance(time.Second) // its deadline
	assert.Equal(t, account.LinkPending, await(t, polled).State)

	f.clk.Advance(account.LinkCodeTTL)
	out, pe := f.call(kitchen, protocol.TypeLinkPoll, map[string]any{"code": code.Code})
	require.Nil(t, pe)
	assert.JSONEq(t, `{"state":"expired"}`, string(out))
	status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "the link code has expired; run sandbox link again for a new code", ans.Error.Message, "a code's refusal speaks of no key")
	_, pe = f.call(kitchen, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": true})
	require.NotNil(t, pe)
	assert.Equal(t, "the link code has expired; run sandbox link again for a new code", pe.Message)
	assert.Equal(t, 1.0, f.outcome("expired"))
}

// TestCodesAreRateLimitedPerComputerPerAddressAndInTotal: a computer's own budget is a part of
// its address's, so one computer that asks in a loop leaves codes for the server's others.
func TestCodesAreRateLimitedPerComputerPerAddressAndInTotal(t *testing.T) {
	f := newFixture(t, Config{CodesPerComputer: 5, CodesPerAddress: 30, CodesGateway: 40})
	for range 5 {
		f.begin(kitchen)
	}
	_, pe := f.call(kitchen, protocol.TypeLinkBegin, map[string]any{})
	require.NotNil(t, pe)
	assert.Equal(t, protocol.CodeBusy, pe.Code)
	assert.Equal(t, "too many link codes from this computer; try again in 12 s", pe.Message)
	relabelled := kitchen
	relabelled.TraposID, relabelled.Socket = "7:pantry", 2
	_, pe = f.call(relabelled, protocol.TypeLinkBegin, map[string]any{})
	require.NotNil(t, pe, "a label is no other computer")
	assert.Equal(t, "too many link codes from this computer; try again in 12 s", pe.Message)
	onPassword := kitchen
	onPassword.AccountID, onPassword.Socket = "local", 3
	f.begin(onPassword) // the computer's socket on the shared password is not its claim in a link session

	computerAt := func(id int, addr string) protocol.Requester {
		return protocol.Requester{TraposID: fmt.Sprintf("%d:", id), RemoteAddr: addr, Socket: uint64(100 + id)}
	}
	for id := 10; id < 34; id++ {
		f.begin(computerAt(id, "10.0.0.5:1"))
	}
	_, pe = f.call(computerAt(34, "10.0.0.5:1"), protocol.TypeLinkBegin, map[string]any{})
	require.NotNil(t, pe, "the address's 30 are spent")
	assert.Equal(t, "too many link codes from this address, which every computer of a Minecraft server shares; try again in 2 s; "+
		"a computer whose daemon has been connected to the gateway a minute has codes of its own; "+
		"or link this one with an enrollment key from the account's holder (sandbox link KEY)", pe.Message)
	f.begin(computerAt(7, "10.0.0.6:1")) // another address has its own budget, and its own computer 7
	f.clk.Advance(2 * time.Second)
	f.begin(computerAt(34, "10.0.0.5:1")) // a token came back

	for i := range 9 {
		f.begin(computerAt(1, fmt.Sprintf("10.0.1.%d:1", i)))
	}
	_, pe = f.call(computerAt(1, "10.0.2.1:1"), protocol.TypeLinkBegin, map[string]any{})
	require.NotNil(t, pe, "the gateway's budget is spent")
	assert.Contains(t, pe.Message, "too many link codes from this gateway")
	assert.Equal(t, 4.0, f.outcome("refused"))
}

func TestEnrollmentKeyLinksAtOnce(t *testing.T) {
	f := newFixture(t, Config{})
	status, ans := f.api(root, "POST", KeysPath, map[string]any{"account": "alice", "maxUses": 1, "expiresInMs": 3600000})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	var k Key
	require.NoError(t, json.Unmarshal(ans.Payload, &k))
	assert.Equal(t, "alice", k.Account)
	assert.Equal(t, "root (admin)", k.CreatedBy)
	require.True(t, strings.HasPrefix(k.Secret, "tsk_"))

	out, pe := f.call(kitchen, protocol.TypeLinkBegin, map[string]any{"key": k.Secret})
	require.Nil(t, pe)
	var linked LinkedAnswer
	require.NoError(t, json.Unmarshal(out, &linked))
	assert.Equal(t, account.LinkApproved, linked.State)
	assert.Equal(t, "alice", linked.Account)
	_, err := f.accounts.AuthenticateComputer(t.Context(), linked.Credential, "7:x", "")
	require.NoError(t, err)

	_, pe = f.call(kitchen, protocol.TypeLinkBegin, map[string]any{"key": k.Secret})
	require.NotNil(t, pe)
	assert.Equal(t, protocol.CodeLinkInvalid, pe.Code)
	assert.Equal(t, "the enrollment key is used up (it linked 1 computer, its limit); ask the key's account holder for a new key (trap-sandbox link key)", pe.Message)
	assert.Empty(t, f.gw.wrong, "a used-up key is no guess")

	_, pe = f.call(kitchen, protocol.TypeLinkBegin, map[string]any{"key": testkit.WrongSecret(k.Secret)})
	require.NotNil(t, pe)
	assert.Equal(t, "unknown or wrong enrollment key: copy it whole, or ask whoever gave it to you for it again", pe.Message,
		"the player's fix, not the admin's command")
	_, pe = f.call(kitchen, protocol.TypeLinkBegin, map[string]any{"key": k.Secret[:len(k.Secret)-8]}) // cut short
	require.NotNil(t, pe)
	assert.Equal(t, "unknown or wrong enrollment key: copy it whole, or ask whoever gave it to you for it again", pe.Message)
	_, pe = f.call(kitchen, protocol.TypeLinkBegin, map[string]any{"key": "hunter2"})
	require.NotNil(t, pe)
	assert.Equal(t, []string{kitchen.RemoteAddr, kitchen.RemoteAddr, kitchen.RemoteAddr}, f.gw.wrong, "wrong keys spend the wrong-secret budget")

	status, ans = f.api(alice, "GET", KeysPath, nil)
	require.Equal(t, http.StatusOK, status)
	var keys []Key
	require.NoError(t, json.Unmarshal(ans.Payload, &keys))
	require.Len(t, keys, 1)
	assert.Equal(t, 1, keys[0].Uses)
	assert.Empty(t, keys[0].Secret, "a listing never shows the secret")
	status, _ = f.api(bob, "POST", "/trapos/link/keys/"+k.ID+"/revoke", nil)
	assert.Equal(t, http.StatusNotFound, status, "another account's key is as one that does not exist")
	status, _ = f.api(alice, "POST", "/trapos/link/keys/"+k.ID+"/revoke", nil)
	assert.Equal(t, http.StatusOK, status)
}

// A wrong key's answer is held back past the address's budget, and a link session (no secret)
// may send 16 requests at a time: each wrong key was read from the account store before it was
// held, 16 reads for each socket opened, where a hello reads one. A socket's second key while
// one is checked is refused at once, unread; another socket's is checked.
func TestOneEnrollmentKeyAtATimeOnASocket(t *testing.T) {
	f := newFixture(t, Config{})
	held := make(chan struct{})
	f.gw.held = held
	first := make(chan *protocol.Error, 1)
	go func() {
		_, pe := f.call(kitchen, protocol.TypeLinkBegin, map[string]any{"key": "tsk_abcdefgh_wrongwrongwrong"})
		first <- pe
	}()
	require.Eventually(t, func() bool { return f.gw.wrongSecrets() == 1 }, waitLimit, testkit.Poll, "the first key held back")

	_, pe := f.call(kitchen, protocol.TypeLinkBegin, map[string]any{"key": "tsk_bcdefghi_wrongwrongwrong"})
	require.NotNil(t, pe)
	assert.Equal(t, protocol.CodeBusy, pe.Code)
	assert.Equal(t, "an enrollment key is being checked on this connection already: wait for its answer", pe.Message)
	assert.Equal(t, 1, f.gw.wrongSecrets(), "not checked, so no wrong secret spent")

	other := kitchen
	other.Socket = 2
	second := make(chan *protocol.Error, 1)
	go func() {
		_, pe := f.call(other, protocol.TypeLinkBegin, map[string]any{"key": "tsk_cdefghij_wrongwrongwrong"})
		second <- pe
	}()
	require.Eventually(t, func() bool { return f.gw.wrongSecrets() == 2 }, waitLimit, testkit.Poll, "another socket's key is checked")
	close(held)
	for _, ch := range []chan *protocol.Error{first, second} {
		pe := await(t, ch)
		require.NotNil(t, pe)
		assert.Equal(t, protocol.CodeLinkInvalid, pe.Code)
	}
	_, pe = f.call(kitchen, protocol.TypeLinkBegin, map[string]any{"key": "tsk_defghijk_wrongwrongwrong"})
	require.NotNil(t, pe)
	assert.Equal(t, protocol.CodeLinkInvalid, pe.Code, "once answered, the socket's next key is checked")
}

// TestEnrollmentKeyChangesAreLogged: a key made or revoked through the API is an info line
// naming who and from where, as a token or credential made through the account API is (a key
// makes credentials); the key itself is in no line.
func TestEnrollmentKeyChangesAreLogged(t *testing.T) {
	f := newFixture(t, Config{})
	status, ans := f.api(root, "POST", KeysPath, map[string]any{"account": "alice", "maxUses": 20, "expiresInMs": 7200000})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	var k Key
	require.NoError(t, json.Unmarshal(ans.Payload, &k))
	status, ans = f.api(alice, "POST", KeysPath, map[string]any{"maxUses": 0, "expiresInMs": 0})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	var reusable Key
	require.NoError(t, json.Unmarshal(ans.Payload, &reusable))
	status, _ = f.api(bob, "POST", "/trapos/link/keys/"+k.ID+"/revoke", nil)
	require.Equal(t, http.StatusNotFound, status)
	status, _ = f.api(alice, "POST", "/trapos/link/keys/"+k.ID+"/revoke", nil)
	require.Equal(t, http.StatusOK, status)

	logs := f.logs.String()
	for _, want := range []string{
		`msg="enrollment key added" module=link account=alice keyId=` + k.ID + ` maxUses=20 expiresIn=2h0m0s by=root remote=192.0.2.1:1234`,
		`msg="enrollment key added" module=link account=alice keyId=` + reusable.ID + ` maxUses=any expiresIn=never by=alice remote=`,
		`msg="enrollment key revoked" module=link account=alice keyId=` + k.ID + ` by=alice remote=`,
	} {
		assert.Contains(t, logs, want)
	}
	assert.Equal(t, 1, strings.Count(logs, "enrollment key revoked"), "a refused revocation is not logged as made")
	for _, secret := range []string{k.Secret, reusable.Secret} {
		assert.NotContains(t, logs, secret)
	}
}

// TestLinksAreLoggedWithoutTheirSecrets: an approval is an info line naming who approved and
// from where; the credential a link makes (accepted on the computer, or by an enrollment key)
// is named by its id on the line of the link, never the credential itself.
func TestLinksAreLoggedWithoutTheirSecrets(t *testing.T) {
	f := newFixture(t, Config{})
	code := f.begin(kitchen)
	status, ans := f.api(root, "POST", "/trapos/link/approve", map[string]any{"code": code.Code, "account": "alice"})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	out, pe := f.call(kitchen, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": true})
	require.Nil(t, pe)
	var acc AcceptAnswer
	require.NoError(t, json.Unmarshal(out, &acc))

	status, ans = f.api(alice, "POST", KeysPath, map[string]any{"maxUses": 1})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	var k Key
	require.NoError(t, json.Unmarshal(ans.Payload, &k))
	hall := protocol.Requester{TraposID: "8:hall", RemoteAddr: "10.0.0.6:40000", Socket: 2}
	out, pe = f.call(hall, protocol.TypeLinkBegin, map[string]any{"key": k.Secret})
	require.Nil(t, pe)
	var linked LinkedAnswer
	require.NoError(t, json.Unmarshal(out, &linked))

	_, accID, ok := account.Identify(acc.Credential)
	require.True(t, ok)
	_, keyedID, ok := account.Identify(linked.Credential)
	require.True(t, ok)
	logs := f.logs.String()
	for _, want := range []string{
		`msg="link code approved" module=link traposId=7:kitchen accountId=alice approvedBy="root (admin)" remote=192.0.2.1:1234`,
		`msg="computer linked" module=link traposId=7:kitchen accountId=alice approvedBy="root (admin)" credentialId=` + accID,
		`msg="computer linked by enrollment key" module=link traposId=8:hall accountId=alice key=` + k.ID + ` credentialId=` + keyedID,
	} {
		assert.Contains(t, logs, want)
	}
	for _, secret := range []string{acc.Credential, linked.Credential, k.Secret} {
		assert.NotContains(t, logs, secret)
	}
}

// TestApprovingTheCodeOfAComputerThatLeft: a code whose socket closed cannot be accepted by
// anyone, so its approval answers not_connected, naming the computer, and approves nothing.
func TestApprovingTheCodeOfAComputerThatLeft(t *testing.T) {
	f := newFixture(t, Config{})
	code := f.begin(kitchen)
	other := protocol.Requester{TraposID: "8:attic", RemoteAddr: "10.0.0.6:40000", Socket: 2}
	stays := f.begin(other)
	f.disconnect(kitchen)
	require.Eventually(t, func() bool { gone, _ := f.mod.goneComputer(t.Context(), code.Code); return gone != "" }, waitLimit, testkit.Poll,
		"the socket's close is noted in a goroutine of its own")
	status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusNotFound, status)
	require.NotNil(t, ans.Error)
	assert.Equal(t, protocol.CodeNotConnected, ans.Error.Code)
	assert.Equal(t, "computer 7:kitchen, which showed this code, is not connected any more; run sandbox link on it again for a new code", ans.Error.Message)
	c, err := f.accounts.LinkStatus(t.Context(), code.Code, "")
	require.NoError(t, err)
	assert.Equal(t, account.LinkPending, c.State, "nothing approved")

	status, ans = f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": stays.Code})
	assert.Equal(t, http.StatusOK, status, "%+v", ans.Error)
}

// TestApprovingAgainTheCodeOfAComputerThatLeftAtItsQuestion: a computer that left while its
// player was asked (it rebooted, or a client before 0.5.26 took Ctrl-T there) can accept the
// code no more than one that left before the approval. Approved again, its code said the
// computer "asks its player whether to join", which nobody did; it answers as for a code
// whose computer left before the approval.
func TestApprovingAgainTheCodeOfAComputerThatLeftAtItsQuestion(t *testing.T) {
	f := newFixture(t, Config{})
	code := f.begin(kitchen)
	status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	_, pe := f.call(kitchen, protocol.TypeLinkPoll, map[string]any{"code": code.Code, "waitMs": 0})
	require.Nil(t, pe) // the computer asks its player now
	status, ans = f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusNotFound, status)
	require.NotNil(t, ans.Error)
	assert.Contains(t, ans.Error.Message, "its computer asks its player", "while it asks, the approval waits for its answer")

	f.disconnect(kitchen)
	require.Eventually(t, func() bool { gone, _ := f.mod.goneComputer(t.Context(), code.Code); return gone != "" }, waitLimit, testkit.Poll,
		"the socket's close is noted in a goroutine of its own")
	status, ans = f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusNotFound, status)
	require.NotNil(t, ans.Error)
	assert.Equal(t, protocol.CodeNotConnected, ans.Error.Code)
	assert.Equal(t, "computer 7:kitchen, which showed this code, is not connected any more; run sandbox link on it again for a new code", ans.Error.Message)
}

// TestApprovingACodeOfTheGatewaysEarlierRun: a code is bound to the socket that asked for it,
// which a restart of the gateway closed; the code stays in the store until it expires. Approved
// after the restart, it said the computer "asks its player to accept", and nobody could. A
// gateway without replicas knows every pending code older than its start is such a code; with
// replicas (Alone false) another replica may hold the code's socket, so the approval goes on.
func TestApprovingACodeOfTheGatewaysEarlierRun(t *testing.T) {
	for _, alone := range []bool{true, false} {
		t.Run(fmt.Sprintf("alone=%v", alone), func(t *testing.T) {
			f := newFixture(t, Config{Alone: alone})
			code := f.begin(kitchen)
			f.disconnect(kitchen) // the gateway stops: every socket closes
			f.clk.Advance(time.Second)
			f.start(Config{Accounts: f.accounts, Clock: f.clk, Alone: alone})

			status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
			c, err := f.accounts.LinkStatus(t.Context(), code.Code, "")
			require.NoError(t, err)
			if !alone {
				assert.Equal(t, http.StatusOK, status, "%+v", ans.Error)
				assert.Equal(t, account.LinkApproved, c.State)
				return
			}
			assert.Equal(t, http.StatusNotFound, status)
			require.NotNil(t, ans.Error)
			assert.Equal(t, protocol.CodeNotConnected, ans.Error.Code)
			assert.Equal(t, "computer 7:kitchen, which showed this code, lost its connection when the gateway restarted; run sandbox link on it again for a new code", ans.Error.Message)
			assert.Equal(t, account.LinkPending, c.State, "nothing approved")

			// A code the restarted gateway issued is approved as ever.
			fresh := f.begin(protocol.Requester{TraposID: "8:attic", RemoteAddr: "10.0.0.6:40000", Socket: 2})
			status, ans = f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": fresh.Code})
			assert.Equal(t, http.StatusOK, status, "%+v", ans.Error)
		})
	}
}

// TestApprovingACodeThatWouldReplaceAConnectedComputer: a link session needs no secret, so
// anyone can show a code for "7:kitchen"; if alice, whose 7:kitchen is connected, approved it
// (bob sent her the code), its credential would let bob's client say hello as her 7:kitchen
// and knock the real one off. The approval is refused, naming her computer and the fix, and
// approves nothing; into another account, or on the computer's own socket in alice, it is not.
func TestApprovingACodeThatWouldReplaceAConnectedComputer(t *testing.T) {
	f := newFixture(t, Config{})
	f.gw.connect(computer.Computer{AccountID: "alice", TraposID: "7:kitchen", RemoteAddr: "10.0.0.5:51000"})
	f.gw.connect(computer.Computer{AccountID: "bob", TraposID: "3:mine", RemoteAddr: "10.0.0.5:51001"})
	impostor := protocol.Requester{TraposID: "7:pantry", RemoteAddr: "10.0.0.5:52000", Socket: 5}
	code := f.begin(impostor)

	status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusForbidden, status)
	require.NotNil(t, ans.Error)
	assert.Equal(t, protocol.CodeForbidden, ans.Error.Code)
	assert.Equal(t, "account alice has computer 7:kitchen connected already (from 10.0.0.5); this code comes from another connection claiming computer 7, whose credential could take its place. "+
		"Approve only a code shown by a computer that is not linked yet: to link 7:kitchen anew, revoke its credential first (trap-sandbox computers revoke 7:kitchen); "+
		"for another computer with id 7 (on another Minecraft server), issue it a credential by hand (trap-sandbox credentials add alice)",
		ans.Error.Message)
	status, ans = f.api(root, "POST", "/trapos/link/approve", map[string]any{"code": code.Code, "account": "alice"})
	assert.Equal(t, http.StatusForbidden, status, "an admin approving into alice: %+v", ans.Error)
	c, err := f.accounts.LinkStatus(t.Context(), code.Code, "")
	require.NoError(t, err)
	assert.Equal(t, account.LinkPending, c.State, "nothing approved")
	assert.Equal(t, 2.0, f.outcome("refused"))

	status, ans = f.api(bob, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusOK, status, "bob has no computer 7: %+v", ans.Error)

	own := protocol.Requester{AccountID: "alice", TraposID: "7:kitchen", RemoteAddr: "10.0.0.5:51000", Socket: 6}
	code = f.begin(own)
	status, ans = f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusOK, status, "alice's 7:kitchen asking on its own socket: %+v", ans.Error)
}

// TestApprovingACodeForAComputerIdTheAccountHoldsACredentialFor: alice's 7:kitchen, linked,
// is off; a code claiming computer 7 (bob's client) is refused all the same, naming the
// credential, since its credential would take her computer's place when it comes back. Once
// that credential is revoked (the computer lost it), a code for computer 7 is approved.
func TestApprovingACodeForAComputerIdTheAccountHoldsACredentialFor(t *testing.T) {
	f := newFixture(t, Config{})
	first := f.begin(kitchen)
	status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": first.Code})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	_, pe := f.call(kitchen, protocol.TypeLinkAccept, map[string]any{"code": first.Code, "accept": true})
	require.Nil(t, pe)
	creds, err := f.accounts.Store().Credentials(t.Context(), "alice")
	require.NoError(t, err)
	require.Len(t, creds, 1)
	sel := creds[0].Selector

	impostor := protocol.Requester{TraposID: "7:kitchen", RemoteAddr: "10.0.0.5:52000", Socket: 5}
	code := f.begin(impostor)
	status, ans = f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusForbidden, status)
	require.NotNil(t, ans.Error)
	assert.Equal(t, protocol.CodeForbidden, ans.Error.Code)
	assert.Equal(t, "account alice holds a credential for computer 7 already ("+sel+"); this code comes from another connection claiming computer 7, whose credential could take that computer's place. "+
		"Approve only a code shown by a computer that is not linked yet: if computer 7 lost its credential, revoke it first (trap-sandbox credentials revoke "+sel+"); "+
		"for another computer with id 7 (on another Minecraft server), issue it a credential by hand (trap-sandbox credentials add alice)", ans.Error.Message)

	_, err = f.accounts.RevokeCredential(t.Context(), "alice", sel)
	require.NoError(t, err)
	status, ans = f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusOK, status, "%+v", ans.Error)
}

// TestAnEnrollmentKeyCannotTakeTheAccountsComputersPlace: a link session needs no secret, so
// whoever has alice's enrollment key (read off a turtle's screen as she typed it, or a reusable
// one she gave a helper) could claim computer 7 and get a credential for it; saying hello with
// it as 7:kitchen then knocked her connected 7:kitchen off (newest wins in an account; 4009,
// and it stops reconnecting) and answered the host in its place. As a code's approval is
// (TestApprovingACodeThatWouldReplaceAConnectedComputer), such a key link is refused, naming
// the computer or credential and the fix, and spends no use; a computer id the account holds
// nothing of links, and so does one whose credential was revoked.
// heldSeven is the refusal of an enrollment key of alice's used on a computer 7 while alice
// has a computer 7. The key holder is often alice, but a key may be read off a turtle's screen
// as it was typed, or handed to a helper: it says what to do (ask alice's holder) and no
// more of alice's computers than the id the key holder claimed, which the refusal itself
// tells: not its label, whether it is connected, or its credential's id.
const heldSeven = "account alice has a computer 7 already, which this one would replace: ask its holder to revoke that one's credential first (trap-sandbox credentials list), " +
	"or, for another computer 7, to add one by hand (trap-sandbox credentials add alice)"

func TestAnEnrollmentKeyCannotTakeTheAccountsComputersPlace(t *testing.T) {
	f := newFixture(t, Config{})
	f.gw.connect(computer.Computer{AccountID: "alice", TraposID: "7:kitchen", RemoteAddr: "10.0.0.5:51000"})
	status, ans := f.api(alice, "POST", KeysPath, map[string]any{"maxUses": 0, "expiresInMs": 3600000})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	var k Key
	require.NoError(t, json.Unmarshal(ans.Payload, &k))
	uses := func() int {
		t.Helper()
		status, ans := f.api(alice, "GET", KeysPath, nil)
		require.Equal(t, http.StatusOK, status)
		var keys []Key
		require.NoError(t, json.Unmarshal(ans.Payload, &keys))
		require.Len(t, keys, 1)
		return keys[0].Uses
	}

	impostor := protocol.Requester{TraposID: "7:kitchen", RemoteAddr: "10.0.0.5:52000", Socket: 5}
	_, pe := f.call(impostor, protocol.TypeLinkBegin, map[string]any{"key": k.Secret})
	require.NotNil(t, pe, "a credential for alice's computer 7 was issued to another connection")
	assert.Equal(t, protocol.CodeForbidden, pe.Code)
	assert.Equal(t, heldSeven, pe.Message, "the key holder learns that alice has a computer 7, not its label or that it is connected")
	assert.LessOrEqual(t, len(pe.Message), 256, "sandbox link shows 256 bytes of it")
	assert.Equal(t, 0, uses(), "no use spent")
	creds, err := f.accounts.Store().Credentials(t.Context(), "alice")
	require.NoError(t, err)
	assert.Empty(t, creds, "no credential issued")
	assert.Equal(t, 1.0, f.outcome("refused"))
	assert.Contains(t, f.logs.String(), `msg="enrollment key refused: its credential could take the place of a computer of the account" module=link traposId=7:kitchen accountId=alice remote=10.0.0.5:52000 held=7:kitchen`,
		"the operator's log names the computer the key holder is not told of")
	assert.Empty(t, f.gw.wrong, "a right key is no guess")

	turtle := protocol.Requester{TraposID: "8:turtle", RemoteAddr: "10.0.0.5:53000", Socket: 6}
	_, pe = f.call(turtle, protocol.TypeLinkBegin, map[string]any{"key": k.Secret})
	require.Nil(t, pe, "computer 8 is none of alice's yet")
	assert.Equal(t, 1, uses())
	creds, err = f.accounts.Store().Credentials(t.Context(), "alice")
	require.NoError(t, err)
	require.Len(t, creds, 1)
	sel := creds[0].Selector

	again := protocol.Requester{TraposID: "8:x", RemoteAddr: "10.0.0.5:54000", Socket: 7}
	_, pe = f.call(again, protocol.TypeLinkBegin, map[string]any{"key": k.Secret})
	require.NotNil(t, pe, "alice's computer 8 is off, but its credential would be taken over when it comes back")
	assert.Equal(t, protocol.CodeForbidden, pe.Code)
	assert.Equal(t, "account alice has a computer 8 already, which this one would replace: ask its holder to revoke that one's credential first (trap-sandbox credentials list), "+
		"or, for another computer 8, to add one by hand (trap-sandbox credentials add alice)", pe.Message,
		"the same words whether the account's computer is connected or off, without its credential's id")
	assert.NotContains(t, pe.Message, sel)
	assert.Contains(t, f.logs.String(), "traposId=8:x accountId=alice remote=10.0.0.5:54000 held="+sel+"\n", "the operator's log names the credential")
	assert.Equal(t, 1, uses())

	_, err = f.accounts.RevokeCredential(t.Context(), "alice", sel)
	require.NoError(t, err)
	_, pe = f.call(again, protocol.TypeLinkBegin, map[string]any{"key": k.Secret})
	assert.Nil(t, pe, "once its credential is revoked, computer 8 links anew")
	own := protocol.Requester{AccountID: "alice", TraposID: "7:kitchen", RemoteAddr: "10.0.0.5:51000", Socket: 8}
	_, pe = f.call(own, protocol.TypeLinkBegin, map[string]any{"key": k.Secret})
	assert.Nil(t, pe, "alice's 7:kitchen on its own socket in alice")
	status, ans = f.api(bob, "POST", KeysPath, map[string]any{"maxUses": 1})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	var bobs Key
	require.NoError(t, json.Unmarshal(ans.Payload, &bobs))
	_, pe = f.call(impostor, protocol.TypeLinkBegin, map[string]any{"key": bobs.Secret})
	assert.Nil(t, pe, "bob has no computer 7")
	_, pe = f.call(impostor, protocol.TypeLinkBegin, map[string]any{"key": bobs.Secret})
	require.NotNil(t, pe)
	assert.Equal(t, protocol.CodeLinkInvalid, pe.Code, "a used-up key learns nothing of the account's computers: %s", pe.Message)
}

func TestApproveRefusals(t *testing.T) {
	f := newFixture(t, Config{ApprovalsPerCaller: 3})
	code := f.begin(kitchen)
	status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code, "account": "bob"})
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, ans.Error.Message, "only an admin")
	status, ans = f.api(account.LocalAdmin, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, `name the account to link into with --account NAME ("account" in the body): the gateway's own token (SANDBOX_API_TOKEN, or a loopback call without a token) belongs to no account`,
		ans.Error.Message, "no token was given: the message says what to give")
	status, ans = f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": "BBBB-BBBB"})
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, protocol.CodeLinkInvalid, ans.Error.Code)
	status, _ = f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": "nonsense"})
	assert.Equal(t, http.StatusNotFound, status)
	status, _ = f.api(alice, "POST", "/trapos/link/approve", map[string]any{})
	assert.Equal(t, http.StatusBadRequest, status)
	status, ans = f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusTooManyRequests, status, "%+v", ans)
	assert.Contains(t, ans.Error.Message, "too many link approvals by account alice; try again in 20 s")
	status, ans = f.api(account.LocalAdmin, "POST", "/trapos/link/approve", map[string]any{"code": code.Code, "account": "alice"})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	out, _ := f.call(kitchen, protocol.TypeLinkPoll, map[string]any{"code": code.Code})
	assert.JSONEq(t, `{"state":"approved","account":"alice","approvedBy":"local"}`, string(out),
		"the gateway's own token is recorded as local, as the account commands record it")

	status, ans = f.api(account.LocalAdmin, "POST", KeysPath, map[string]any{"account": "alice"})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	var k Key
	require.NoError(t, json.Unmarshal(ans.Payload, &k))
	assert.Equal(t, account.Local, k.CreatedBy)
}

func TestBadPayloads(t *testing.T) {
	f := newFixture(t, Config{})
	for _, tc := range []struct {
		typ     string
		payload any
	}{
		{protocol.TypeLinkBegin, []int{1}},
		{protocol.TypeLinkPoll, map[string]any{}},
		{protocol.TypeLinkPoll, map[string]any{"code": "BCDF-GHJK", "waitMs": -1}},
		{protocol.TypeLinkAccept, map[string]any{"code": "BCDF-GHJK"}},
	} {
		_, pe := f.call(kitchen, tc.typ, tc.payload)
		require.NotNil(t, pe, "%s %v", tc.typ, tc.payload)
		assert.Equal(t, protocol.CodeBadPayload, pe.Code)
	}
}

func TestWithoutAccountsLinkIsDisabled(t *testing.T) {
	m := New(Config{}, slog.New(slog.DiscardHandler))
	gw := &fakeGateway{handlers: map[string]protocol.RequestHandler{}}
	m.Register(gw)
	for _, typ := range []string{protocol.TypeLinkBegin, protocol.TypeLinkPoll, protocol.TypeLinkAccept} {
		_, err := gw.handlers[typ](t.Context(), kitchen, json.RawMessage(`{}`))
		assert.Equal(t, protocol.CodeLinkDisabled, protocol.CodeOf(err), typ)
		// The computer prints it after "The gateway cannot link computers (link_disabled): ".
		assert.EqualError(t, err, "link_disabled: this gateway keeps no accounts: its operator starts it with a data directory (--data-dir) or --nats", typ)
	}
	w := httptest.NewRecorder()
	m.serveApprove(w, httptest.NewRequest("POST", "/trapos/link/approve", strings.NewReader(`{"code":"BCDF-GHJK"}`)))
	assert.Equal(t, http.StatusNotFound, w.Code)
	assert.Contains(t, w.Body.String(), "link_disabled")
}

// TestLinkBodiesAreReadAsTheAPIsAre: a link route's body over its limit is named as too large
// (413, with the limit), and a field of the wrong kind is named, as every API route's body's
// are (server.DecodeBody).
func TestLinkBodiesAreReadAsTheAPIsAre(t *testing.T) {
	f := newFixture(t, Config{})
	for _, path := range []string{"/trapos/link/approve", KeysPath} {
		status, ans := f.api(alice, "POST", path, map[string]any{"account": strings.Repeat("a", 5000)})
		assert.Equal(t, http.StatusRequestEntityTooLarge, status, path)
		require.NotNil(t, ans.Error, path)
		assert.Equal(t, protocol.CodeBadPayload, ans.Error.Code)
		assert.Contains(t, ans.Error.Message, "larger than 4096 bytes", path)
	}
	status, ans := f.api(alice, "POST", KeysPath, map[string]any{"maxUses": "three"})
	assert.Equal(t, http.StatusBadRequest, status)
	require.NotNil(t, ans.Error)
	assert.Equal(t, `"maxUses" must be a whole number (got a string)`, ans.Error.Message)
}

// TestAHandCredentialsComputerCannotBeTakenOverByALink: a credential made by hand is bound to
// no computer id, so it was not seen as holding one: alice's 7:kitchen on a hand credential,
// off, and anyone with her enrollment key (or a code she approved) claiming computer 7 got a
// credential bound to 7, whose hello as 7:kitchen then knocked hers off when it came back
// (newest wins in an account; 4009, and the one knocked off stops reconnecting), and back. A
// live hand credential holds the computer id of its last hello, as a linked one holds its own.
func TestAHandCredentialsComputerCannotBeTakenOverByALink(t *testing.T) {
	f := newFixture(t, Config{})
	ctx := t.Context()
	plain, hand, err := f.accounts.IssueCredential(ctx, "alice", "alice")
	require.NoError(t, err)
	_, err = f.accounts.AuthenticateComputer(ctx, plain, "7:kitchen", "10.0.0.5:51000") // its hello, then it went off
	require.NoError(t, err)
	status, ans := f.api(alice, "POST", KeysPath, map[string]any{"maxUses": 0, "expiresInMs": 3600000})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	var k Key
	require.NoError(t, json.Unmarshal(ans.Payload, &k))

	impostor := protocol.Requester{TraposID: "7:kitchen", RemoteAddr: "10.0.0.9:52000", Socket: 5}
	_, pe := f.call(impostor, protocol.TypeLinkBegin, map[string]any{"key": k.Secret})
	require.NotNil(t, pe, "a credential for computer 7 would take the place of alice's 7:kitchen on its hand credential")
	assert.Equal(t, protocol.CodeForbidden, pe.Code)
	assert.Equal(t, heldSeven, pe.Message)
	assert.Contains(t, f.logs.String(), "traposId=7:kitchen accountId=alice remote=10.0.0.9:52000 held="+hand.Selector+"\n")

	code := f.begin(impostor)
	status, ans = f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
	assert.Equal(t, http.StatusForbidden, status, "a code's approval is refused the same")
	require.NotNil(t, ans.Error)
	assert.Contains(t, ans.Error.Message, "account alice holds a credential for computer 7 already ("+hand.Selector+", last hello as 7:kitchen)")

	turtle := protocol.Requester{TraposID: "8:turtle", RemoteAddr: "10.0.0.5:53000", Socket: 6}
	_, pe = f.call(turtle, protocol.TypeLinkBegin, map[string]any{"key": k.Secret})
	assert.Nil(t, pe, "the hand credential holds computer 7 only, the id of its last hello")

	_, err = f.accounts.RevokeCredential(ctx, "alice", hand.Selector)
	require.NoError(t, err)
	_, pe = f.call(impostor, protocol.TypeLinkBegin, map[string]any{"key": k.Secret})
	assert.Nil(t, pe, "once the hand credential is revoked, computer 7 links")
}

// TestAPlayerRefusedDuringAFloodIsToldWhenItsOwnCodesStart: while a program's made-up ids
// spend the address's codes, a player whose computer's daemon has been connected less than a
// minute (just booted, or reconnected) is refused, as it could be one more made-up id; the
// refusal says in how long its own codes start, where it said only "try again in 2 s", which
// the program takes first each time. A computer not connected is told what earns them, and
// of an enrollment key.
func TestAPlayerRefusedDuringAFloodIsToldWhenItsOwnCodesStart(t *testing.T) {
	f := newFixture(t, Config{CodesPerComputer: 5, CodesPerAddress: 30, CodesGateway: 300})
	for id := 100; id < 130; id++ {
		f.begin(protocol.Requester{TraposID: fmt.Sprintf("%d:", id), RemoteAddr: "10.0.0.5:40000", Socket: uint64(id)})
	}
	f.gw.connect(computer.Computer{AccountID: account.Local, TraposID: "7:kitchen", RemoteAddr: "10.0.0.5:39000", ConnectedSince: t0.Add(-20 * time.Second)})
	_, pe := f.call(kitchen, protocol.TypeLinkBegin, map[string]any{})
	require.NotNil(t, pe, "connected 20 s: a loop could have made it up")
	assert.Equal(t, "too many link codes from this address, which every computer of a Minecraft server shares; try again in 2 s; "+
		"this computer has codes of its own once its daemon has been connected a minute, in 40 s", pe.Message)

	_, pe = f.call(protocol.Requester{TraposID: "8:", RemoteAddr: "10.0.0.5:40000", Socket: 300}, protocol.TypeLinkBegin, map[string]any{})
	require.NotNil(t, pe)
	assert.Contains(t, pe.Message, "; try again in 2 s; a computer whose daemon has been connected to the gateway a minute has codes of its own; "+
		"or link this one with an enrollment key from the account's holder (sandbox link KEY)")

	f.clk.Advance(40 * time.Second)
	for id := 130; id < 150; id++ { // the program takes the 20 codes that came back
		f.begin(protocol.Requester{TraposID: fmt.Sprintf("%d:", id), RemoteAddr: "10.0.0.5:40000", Socket: uint64(id)})
	}
	_, pe = f.call(protocol.Requester{TraposID: "150:", RemoteAddr: "10.0.0.5:40000", Socket: 150}, protocol.TypeLinkBegin, map[string]any{})
	require.NotNil(t, pe, "the address's codes are spent again")
	f.begin(kitchen) // as it was told: from its own codes
}

// TestAFloodOfMadeUpComputersLeavesAConnectedComputerItsCodes: a link session needs no secret,
// so one program on a Minecraft server, claiming a new computer id for each code, spent the
// codes of its address, which every computer of the server shares: the real players' sandbox
// link was refused for as long as it ran. A computer connected on the shared password from that
// address for a minute (the player's daemon; a loop claiming ids is not connected) spends its
// own bucket of codes past the address's, as its log lines do past the address's budget.
func TestAFloodOfMadeUpComputersLeavesAConnectedComputerItsCodes(t *testing.T) {
	f := newFixture(t, Config{CodesPerComputer: 5, CodesPerAddress: 30, CodesGateway: 300})
	for id := 100; id < 130; id++ { // the griefer: ever new ids, from the server's address
		f.begin(protocol.Requester{TraposID: fmt.Sprintf("%d:", id), RemoteAddr: "10.0.0.5:40000", Socket: uint64(id)})
	}
	_, pe := f.call(protocol.Requester{TraposID: "130:", RemoteAddr: "10.0.0.5:40000", Socket: 130}, protocol.TypeLinkBegin, map[string]any{})
	require.NotNil(t, pe, "the griefer's made-up ids have spent the address's 30")
	assert.Contains(t, pe.Message, "too many link codes from this address")

	// The player's computer: its daemon on the shared password for a minute, from the server's address.
	f.gw.connect(computer.Computer{AccountID: account.Local, TraposID: "7:kitchen", RemoteAddr: "10.0.0.5:39000", ConnectedSince: t0.Add(-time.Minute)})
	for range 5 {
		f.begin(kitchen) // sandbox link on it, its own link session
	}
	_, pe = f.call(kitchen, protocol.TypeLinkBegin, map[string]any{})
	require.NotNil(t, pe, "the computer's own bucket bounds it")
	assert.Equal(t, "too many link codes from this computer; try again in 12 s", pe.Message)

	for _, c := range []struct {
		why string
		pc  computer.Computer
	}{
		{"connected less than a minute: a loop could have made it up", computer.Computer{AccountID: account.Local, TraposID: "8:", RemoteAddr: "10.0.0.5:39001", ConnectedSince: t0.Add(-time.Minute + time.Second)}},
		{"connected from another address: another server's computer 9", computer.Computer{AccountID: account.Local, TraposID: "9:", RemoteAddr: "10.0.0.6:39002", ConnectedSince: t0.Add(-time.Hour)}},
		{"connected under another label: another claim", computer.Computer{AccountID: account.Local, TraposID: "10:hall", RemoteAddr: "10.0.0.5:39003", ConnectedSince: t0.Add(-time.Hour)}},
	} {
		f.gw.connect(c.pc)
		id := account.ComputerID(c.pc.TraposID)
		_, pe = f.call(protocol.Requester{TraposID: id + ":", RemoteAddr: "10.0.0.5:40000", Socket: 200}, protocol.TypeLinkBegin, map[string]any{})
		require.NotNil(t, pe, c.why)
		assert.Contains(t, pe.Message, "too many link codes from this address", c.why)
	}
}

// TestAKeysRequestNamesTheFieldItCannotUse: a new key's negative uses or lifetime is refused
// naming the field (it answered "the body is {…}"), and a lifetime past a token's cap (100
// years) too, where one past time.Duration's 292 years overflowed into a 500 from "the account
// store" and an ERROR in the log for a caller's typo.
func TestAKeysRequestNamesTheFieldItCannotUse(t *testing.T) {
	f := newFixture(t, Config{})
	for body, want := range map[string]string{
		`{"maxUses":-1}`:                   `"maxUses" must be 0 (any number of computers) or more (got -1)`,
		`{"expiresInMs":-5}`:               `"expiresInMs" must be a number of milliseconds from 1 to 3153600000000 (100 years), or 0 for a key that never expires (got -5)`,
		`{"expiresInMs":9000000000000000}`: `"expiresInMs" must be a number of milliseconds from 1 to 3153600000000 (100 years), or 0 for a key that never expires (got 9000000000000000)`,
	} {
		var req map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &req))
		status, ans := f.api(alice, "POST", KeysPath, req)
		assert.Equal(t, http.StatusBadRequest, status, body)
		require.NotNil(t, ans.Error, body)
		assert.Equal(t, protocol.CodeBadPayload, ans.Error.Code, body)
		assert.Equal(t, want, ans.Error.Message, body)
	}
	status, ans := f.api(alice, "POST", KeysPath, map[string]any{"expiresInMs": account.MaxTokenTTL.Milliseconds()})
	assert.Equal(t, http.StatusOK, status, "%+v", ans.Error)
}
