// Package accounttest is the conformance suite every account.Store passes: one set of
// tests, run on the memory store, the SQLite store and any store added later; and the
// replicated accounts bucket the NATS store's cluster tests start (StartReplicatedKV).
package accounttest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/testkit"
)

// Open returns a new, empty store for one test; the suite closes it.
type Open func(t *testing.T) account.Store

// t0 is the suite's time: UTC, with nanoseconds, so a store that rounds or shifts times fails.
var t0 = time.Date(2026, 12, 1, 23, 30, 0, 123456789, time.UTC)

// Run runs the suite on the stores open makes.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		run  func(*testing.T, account.Store)
	}{
		{"Accounts", testAccounts},
		{"Tokens", testTokens},
		{"Credentials", testCredentials},
		{"SecretsAreCopies", testSecretsAreCopies},
		{"Concurrent", testConcurrent},
		{"TokenIf", testTokenIf},
		{"AccountIf", testAccountIf},
		{"IssueAndCheck", testIssueAndCheck},
		{"Audit", testAudit},
		{"LinkCodes", testLinkCodes},
		{"EnrollmentKeys", testEnrollmentKeys},
		{"LinkOnce", testLinkOnce},
		{"LinkFlow", testLinkFlow},
		{"LinkWithKey", testLinkWithKey},
		{"BoundCredential", testBoundCredential},
		{"RemoveAccount", testRemoveAccount},
		{"SkewedClocks", testSkewedClocks},
		{"RevokedAsItLinks", func(t *testing.T, s account.Store) { RunRevokedAsItLinks(t, s, s) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { assert.NoError(t, s.Close()) })
			tc.run(t, s)
		})
	}
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testAccounts(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	all, err := s.Accounts(ctx)
	require.NoError(t, err)
	assert.Empty(t, all)

	bob := account.Account{ID: "bob", Role: account.RoleUser, Created: t0, CreatedBy: "alice"}
	alice := account.Account{ID: "alice", Role: account.RoleAdmin, Created: t0.Add(time.Second), CreatedBy: account.Operator}
	require.NoError(t, s.CreateAccount(ctx, bob))
	require.NoError(t, s.CreateAccount(ctx, alice))
	err = s.CreateAccount(ctx, account.Account{ID: "bob", Role: account.RoleAdmin, Created: t0})
	require.ErrorIs(t, err, account.ErrExists)

	got, err := s.Account(ctx, "bob")
	require.NoError(t, err)
	assert.Equal(t, bob, got, "a second create with the same id changes nothing")
	_, err = s.Account(ctx, "carol")
	require.ErrorIs(t, err, account.ErrNotFound)

	all, err = s.Accounts(ctx)
	require.NoError(t, err)
	assert.Equal(t, []account.Account{alice, bob}, all, "by id")
}

func testTokens(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	require.NoError(t, s.CreateAccount(ctx, account.Account{ID: "alice", Role: account.RoleUser, Created: t0}))
	require.NoError(t, s.CreateAccount(ctx, account.Account{ID: "bob", Role: account.RoleUser, Created: t0}))

	older := account.Token{Selector: "sel2", Hash: []byte("0123456789abcdef0123456789abcdef"), AccountID: "alice", Name: "laptop",
		Created: t0, ExpiresAt: t0.Add(24 * time.Hour), CreatedBy: "root", AccountCreated: t0}
	newer := account.Token{Selector: "sel1", Hash: []byte("fedcba9876543210fedcba9876543210"), AccountID: "alice", Name: "ci",
		Created: t0.Add(time.Minute)}
	bobs := account.Token{Selector: "sel3", Hash: []byte("x"), AccountID: "bob", Name: "bob", Created: t0}
	require.NoError(t, s.CreateToken(ctx, newer))
	require.NoError(t, s.CreateToken(ctx, older))
	require.NoError(t, s.CreateToken(ctx, bobs))
	require.ErrorIs(t, s.CreateToken(ctx, account.Token{Selector: "sel1", Hash: []byte("y"), AccountID: "bob", Name: "dup", Created: t0}), account.ErrExists)
	require.ErrorIs(t, s.CreateToken(ctx, account.Token{Selector: "sel9", Hash: []byte("y"), AccountID: "carol", Name: "x", Created: t0}), account.ErrNotFound)

	got, err := s.Token(ctx, "sel2")
	require.NoError(t, err)
	assert.Equal(t, older, got)
	_, err = s.Token(ctx, "nope")
	require.ErrorIs(t, err, account.ErrNotFound)

	list, err := s.Tokens(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, []account.Token{older, newer}, list, "the account's own, oldest first")
	list, err = s.Tokens(ctx, "carol")
	require.NoError(t, err)
	assert.Empty(t, list)
	list, err = s.Tokens(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []account.Token{older, bobs, newer}, list, "every account's, oldest first (then by id)")

	require.NoError(t, s.SeeToken(ctx, "sel1", t0.Add(2*time.Minute), "10.0.0.9:4000"))
	require.ErrorIs(t, s.SeeToken(ctx, "nope", t0, ""), account.ErrNotFound)
	got, err = s.Token(ctx, "sel1")
	require.NoError(t, err)
	used := newer
	used.LastUsed, used.RemoteAddr = t0.Add(2*time.Minute), "10.0.0.9:4000"
	assert.Equal(t, used, got, "the last use is kept, the rest unchanged")

	revoked, err := s.RevokeToken(ctx, "sel2", t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Hour), revoked.RevokedAt)
	again, err := s.RevokeToken(ctx, "sel2", t0.Add(2*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Hour), again.RevokedAt, "a second revocation keeps the first time")
	got, err = s.Token(ctx, "sel2")
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Hour), got.RevokedAt)
	got, err = s.Token(ctx, "sel1")
	require.NoError(t, err)
	assert.True(t, got.RevokedAt.IsZero(), "only the one token is revoked")
	_, err = s.RevokeToken(ctx, "nope", t0)
	require.ErrorIs(t, err, account.ErrNotFound)
}

// testSecretsAreCopies: what a store is given and what it hands out are copies, down to the
// hash's bytes: a caller that scribbles on a secret it created or read changes nothing the
// store keeps (an in-memory store that kept or returned the caller's slice would).
func testSecretsAreCopies(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	require.NoError(t, s.CreateAccount(ctx, account.Account{ID: "alice", Role: account.RoleUser, Created: t0}))
	// Each kind: create one with hash; then every way to read it, each returning the hash it
	// handed out (the last one, read once more at the end, what the store holds).
	kinds := []struct {
		name   string
		create func(hash []byte) error
		reads  []func() ([]byte, error)
	}{
		{"token", func(hash []byte) error {
			return s.CreateToken(ctx, account.Token{Selector: "t1", Hash: hash, AccountID: "alice", Created: t0})
		}, []func() ([]byte, error){
			func() ([]byte, error) { tok, err := only(s.Tokens(ctx, "alice")); return tok.Hash, err },
			func() ([]byte, error) { tok, err := s.RevokeToken(ctx, "t1", t0); return tok.Hash, err },
			func() ([]byte, error) { tok, err := s.Token(ctx, "t1"); return tok.Hash, err },
		}},
		{"credential", func(hash []byte) error {
			return s.CreateCredential(ctx, account.Credential{Selector: "c1", Hash: hash, AccountID: "alice", Created: t0})
		}, []func() ([]byte, error){
			func() ([]byte, error) { c, err := only(s.Credentials(ctx, "alice")); return c.Hash, err },
			func() ([]byte, error) { c, err := s.RevokeCredential(ctx, "c1", t0); return c.Hash, err },
			func() ([]byte, error) { c, err := s.Credential(ctx, "c1"); return c.Hash, err },
		}},
		{"enrollment key", func(hash []byte) error {
			return s.CreateEnrollmentKey(ctx, account.EnrollmentKey{Selector: "k1", Hash: hash, AccountID: "alice", Created: t0})
		}, []func() ([]byte, error){
			func() ([]byte, error) { k, err := only(s.EnrollmentKeys(ctx, "alice")); return k.Hash, err },
			func() ([]byte, error) {
				k, err := s.UpdateEnrollmentKey(ctx, "k1", func(k *account.EnrollmentKey) error { k.Uses++; return nil })
				return k.Hash, err
			},
			func() ([]byte, error) { k, err := s.EnrollmentKey(ctx, "k1"); return k.Hash, err },
		}},
	}
	scribble := func(hash []byte) {
		for i := range hash {
			hash[i] = '!'
		}
	}
	for _, kind := range kinds {
		given := []byte(kind.name + " hash")
		require.NoError(t, kind.create(given), kind.name)
		scribble(given)
		for _, read := range kind.reads {
			got, err := read()
			require.NoError(t, err, kind.name)
			assert.Equal(t, []byte(kind.name+" hash"), got, "%s: a scribble on a copy reached the store", kind.name)
			scribble(got)
		}
		got, err := kind.reads[len(kind.reads)-1]()
		require.NoError(t, err, kind.name)
		assert.Equal(t, []byte(kind.name+" hash"), got, "%s: a scribble on the last copy reached the store", kind.name)
	}
}

// only is the one item of a listing, or an error saying how many there were: a broken store
// then fails the test instead of panicking it.
func only[T any](list []T, err error) (T, error) {
	var none T
	if err == nil && len(list) != 1 {
		err = fmt.Errorf("listed %d, want 1", len(list))
	}
	if err != nil {
		return none, err
	}
	return list[0], nil
}

func testCredentials(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	require.NoError(t, s.CreateAccount(ctx, account.Account{ID: "alice", Role: account.RoleUser, Created: t0}))
	require.NoError(t, s.CreateAccount(ctx, account.Account{ID: "bob", Role: account.RoleUser, Created: t0}))

	a := account.Credential{Selector: "c1", Hash: []byte("hash-a"), AccountID: "alice", ApprovedBy: "alice", Created: t0, AccountCreated: t0}
	b := account.Credential{Selector: "c2", Hash: []byte("hash-b"), AccountID: "bob", ApprovedBy: "root", Created: t0.Add(time.Second)}
	require.NoError(t, s.CreateCredential(ctx, a))
	require.NoError(t, s.CreateCredential(ctx, b))
	require.ErrorIs(t, s.CreateCredential(ctx, account.Credential{Selector: "c1", Hash: []byte("h"), AccountID: "bob", Created: t0}), account.ErrExists)
	require.ErrorIs(t, s.CreateCredential(ctx, account.Credential{Selector: "c9", Hash: []byte("h"), AccountID: "carol", Created: t0}), account.ErrNotFound)

	got, err := s.Credential(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, a, got)
	_, err = s.Credential(ctx, "nope")
	require.ErrorIs(t, err, account.ErrNotFound)

	require.NoError(t, s.SeeCredential(ctx, "c1", t0.Add(time.Minute), "7:base", "10.0.0.1:5000"))
	require.ErrorIs(t, s.SeeCredential(ctx, "nope", t0, "", ""), account.ErrNotFound)
	seen := a
	seen.LastSeen, seen.LastTraposID, seen.RemoteAddr = t0.Add(time.Minute), "7:base", "10.0.0.1:5000"
	got, err = s.Credential(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, seen, got)

	list, err := s.Credentials(ctx, "bob")
	require.NoError(t, err)
	assert.Equal(t, []account.Credential{b}, list)
	list, err = s.Credentials(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []account.Credential{seen, b}, list, "every account's, oldest first")

	revoked, err := s.RevokeCredential(ctx, "c2", t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Hour), revoked.RevokedAt)
	again, err := s.RevokeCredential(ctx, "c2", t0.Add(2*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Hour), again.RevokedAt)
	_, err = s.RevokeCredential(ctx, "nope", t0)
	require.ErrorIs(t, err, account.ErrNotFound)
}

// testConcurrent has many goroutines write and read at once: every write lands, none fails
// with a busy or locked database.
func testConcurrent(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	require.NoError(t, s.CreateAccount(ctx, account.Account{ID: "alice", Role: account.RoleUser, Created: t0}))
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*3)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				sel := fmt.Sprintf("w%d-%d", w, i)
				errs <- s.CreateToken(ctx, account.Token{Selector: sel, Hash: []byte(sel), AccountID: "alice", Name: sel, Created: t0})
				_, err := s.Token(ctx, sel)
				errs <- err
				_, err = s.RevokeToken(ctx, sel, t0)
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	list, err := s.Tokens(ctx, "alice")
	require.NoError(t, err)
	assert.Len(t, list, workers*each)
}

// testTokenIf: CreateTokenIf shows its check the account's tokens, revoked ones too, and adds
// nothing when the check refuses; of many at once for one account, each check sees the tokens
// added before it, so a check that takes one token of a name lets one in.
func testTokenIf(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	for _, id := range []string{"alice", "bob"} {
		require.NoError(t, s.CreateAccount(ctx, account.Account{ID: id, Role: account.RoleUser, Created: t0}))
	}
	tok := func(sel, accountID, name string) account.Token {
		return account.Token{Selector: sel, Hash: []byte(sel), AccountID: accountID, Name: name, Created: t0}
	}
	errTaken := errors.New("taken")
	unlike := func(name string) func([]account.Token) error {
		return func(toks []account.Token) error {
			for _, tok := range toks {
				if tok.Name == name {
					return fmt.Errorf("%w by %s", errTaken, tok.Selector)
				}
			}
			return nil
		}
	}
	const racers = 6
	var wg sync.WaitGroup
	errs := make(chan error, racers)
	for i := range racers {
		wg.Go(func() { errs <- s.CreateTokenIf(ctx, tok(fmt.Sprintf("t%d", i), "alice", "laptop"), unlike("laptop")) })
	}
	wg.Wait()
	close(errs)
	added := 0
	for err := range errs {
		if err == nil {
			added++
			continue
		}
		require.ErrorIs(t, err, errTaken)
	}
	assert.Equal(t, 1, added, "one laptop for alice")
	toks, err := s.Tokens(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, toks, 1, "the refused ones are not kept")

	require.NoError(t, s.CreateTokenIf(ctx, tok("b1", "bob", "laptop"), unlike("laptop")), "bob's tokens are his own")
	_, err = s.RevokeToken(ctx, toks[0].Selector, t0)
	require.NoError(t, err)
	var seen []account.Token
	require.NoError(t, s.CreateTokenIf(ctx, tok("again", "alice", "ci"), func(toks []account.Token) error {
		seen = toks
		return nil
	}))
	require.Len(t, seen, 1, "a revoked token is shown to the check")
	assert.False(t, seen[0].RevokedAt.IsZero())
	require.ErrorIs(t, s.CreateTokenIf(ctx, tok("again", "bob", "x"), unlike("x")), account.ErrExists, "a taken selector")
	require.ErrorIs(t, s.CreateTokenIf(ctx, tok("c1", "carol", "x"), unlike("x")), account.ErrNotFound, "no such account")
}

// testAccountIf: CreateAccountIf shows its check every account and adds the account and its
// first token, or neither when the check refuses or the id is taken; of many at once, each
// check sees the accounts added before it, so a check that takes no second account lets one in.
func testAccountIf(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	errTaken := errors.New("taken")
	alone := func(accounts []account.Account) error {
		if len(accounts) > 0 {
			return fmt.Errorf("%w by %s", errTaken, accounts[0].ID)
		}
		return nil
	}
	add := func(id string, check func([]account.Account) error) error {
		return s.CreateAccountIf(ctx, account.Account{ID: id, Role: account.RoleUser, Created: t0},
			account.Token{Selector: "t-" + id, Hash: []byte(id), AccountID: id, Name: "first", Created: t0}, check)
	}
	const racers = 6
	var wg sync.WaitGroup
	errs := make(chan error, racers)
	for i := range racers {
		wg.Go(func() { errs <- add(fmt.Sprintf("a%d", i), alone) })
	}
	wg.Wait()
	close(errs)
	added := 0
	for err := range errs {
		if err == nil {
			added++
			continue
		}
		require.ErrorIs(t, err, errTaken)
	}
	assert.Equal(t, 1, added, "one account")
	accounts, err := s.Accounts(ctx)
	require.NoError(t, err)
	require.Len(t, accounts, 1, "the refused ones are not kept")
	toks, err := s.Tokens(ctx, "")
	require.NoError(t, err)
	require.Len(t, toks, 1, "nor their tokens")
	assert.Equal(t, accounts[0].ID, toks[0].AccountID)

	var seen []account.Account
	require.NoError(t, add("bob", func(accounts []account.Account) error {
		seen = accounts
		return nil
	}))
	assert.Equal(t, accounts, seen, "the check sees every account")
	require.ErrorIs(t, add("bob", func([]account.Account) error { return nil }), account.ErrExists, "a taken id")
}

// testIssueAndCheck runs account.Accounts on the store: what a token or credential opens,
// and when it stops opening it.
func testIssueAndCheck(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	clk := clock.NewFake(t0)
	a := account.New(s, clk)

	aliceToken, err := a.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	rootToken, err := a.AddAccount(ctx, "root", account.RoleAdmin, "first")
	require.NoError(t, err)
	_, err = a.AddAccount(ctx, "alice", account.RoleAdmin, "again")
	require.ErrorIs(t, err, account.ErrExists)

	got, err := a.Authenticate(ctx, aliceToken)
	require.NoError(t, err)
	assert.Equal(t, account.Account{ID: "alice", Role: account.RoleUser, Created: t0}, got)
	got, err = a.Authenticate(ctx, rootToken)
	require.NoError(t, err)
	assert.Equal(t, account.RoleAdmin, got.Role)

	_, err = a.Authenticate(ctx, testkit.WrongSecret(aliceToken))
	require.ErrorIs(t, err, account.ErrBadSecret, "a wrong secret with a real selector")
	_, err = a.Authenticate(ctx, "hunter2")
	require.ErrorIs(t, err, account.ErrBadSecret)

	short, tok, err := a.IssueToken(ctx, "alice", "short", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, t0.Add(time.Hour), tok.ExpiresAt)
	_, err = a.Authenticate(ctx, short)
	require.NoError(t, err)
	clk.Advance(time.Hour)
	_, err = a.Authenticate(ctx, short)
	require.ErrorIs(t, err, account.ErrExpired)
	_, err = a.Authenticate(ctx, aliceToken)
	require.NoError(t, err, "a token without expiry lives on")

	toks, err := s.Tokens(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, toks, 2)
	first := toks[0]
	if first.Name != "first" {
		first = toks[1]
	}
	_, err = a.RevokeToken(ctx, "root", first.Selector)
	require.ErrorIs(t, err, account.ErrNotFound, "another account's token is as one that does not exist")
	_, err = a.RevokeToken(ctx, "alice", first.Selector)
	require.NoError(t, err)
	_, err = a.Authenticate(ctx, aliceToken)
	require.ErrorIs(t, err, account.ErrRevoked)

	cred, c, err := a.IssueCredential(ctx, "alice", "root")
	require.NoError(t, err)
	_, err = a.Authenticate(ctx, cred)
	require.ErrorIs(t, err, account.ErrBadSecret, "a computer's credential is not an API token")
	seen, err := a.AuthenticateComputer(ctx, cred, "7:", "10.0.0.2:1")
	require.NoError(t, err)
	assert.Equal(t, "alice", seen.AccountID)
	assert.Equal(t, "root", seen.ApprovedBy)
	stored, err := s.Credential(ctx, c.Selector)
	require.NoError(t, err)
	assert.Equal(t, clk.Now(), stored.LastSeen)
	assert.Equal(t, "7:", stored.LastTraposID)
	_, err = a.AuthenticateComputer(ctx, short, "7:", "")
	require.ErrorIs(t, err, account.ErrBadSecret, "an API token is not a computer's credential")
	_, err = a.RevokeCredential(ctx, "", c.Selector)
	require.NoError(t, err, "an admin revokes any")
	_, err = a.AuthenticateComputer(ctx, cred, "7:", "")
	require.ErrorIs(t, err, account.ErrRevoked)
}

// testAudit runs account.Accounts on the store: who made what, and a token's last use and
// address as API calls record them (at most once a SeenEvery per address).
func testAudit(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	clk := clock.NewFake(t0)
	a := account.New(s, clk)

	_, root, err := a.AddAccountBy(ctx, "root", account.RoleAdmin, "first", account.Operator)
	require.NoError(t, err)
	assert.Equal(t, account.Operator, root.CreatedBy)
	alice, tok, err := a.AddAccountBy(ctx, "alice", account.RoleUser, "first", "root")
	require.NoError(t, err)
	acc, err := s.Account(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, account.Account{ID: "alice", Role: account.RoleUser, Created: t0, CreatedBy: "root"}, acc)
	_, laptop, err := a.IssueTokenBy(ctx, "alice", "laptop", 0, "alice")
	require.NoError(t, err)
	stored, err := s.Token(ctx, laptop.Selector)
	require.NoError(t, err)
	assert.Equal(t, "alice", stored.CreatedBy)

	lastUse := func() (time.Time, string) {
		t.Helper()
		got, err := s.Token(ctx, tok.Selector)
		require.NoError(t, err)
		return got.LastUsed, got.RemoteAddr
	}
	when, addr := lastUse()
	assert.True(t, when.IsZero(), "never used")
	assert.Empty(t, addr)

	clk.Advance(time.Second)
	first := clk.Now()
	_, err = a.AuthenticateFrom(ctx, alice, "10.0.0.5:1000")
	require.NoError(t, err)
	when, addr = lastUse()
	assert.Equal(t, first, when)
	assert.Equal(t, "10.0.0.5", addr, "the host: the port changes with every connection")

	clk.Advance(account.SeenEvery - time.Nanosecond)
	_, err = a.AuthenticateFrom(ctx, alice, "10.0.0.5:1001")
	require.NoError(t, err)
	when, _ = lastUse()
	assert.Equal(t, first, when, "the same host within SeenEvery writes nothing")

	_, err = a.AuthenticateFrom(ctx, alice, "[2001:db8::6]:2000")
	require.NoError(t, err)
	when, addr = lastUse()
	assert.Equal(t, clk.Now(), when, "another address is recorded at once")
	assert.Equal(t, "2001:db8::6", addr)

	clk.Advance(account.SeenEvery)
	_, err = a.AuthenticateFrom(ctx, alice, "[2001:db8::6]:2000")
	require.NoError(t, err)
	when, _ = lastUse()
	assert.Equal(t, clk.Now(), when, "a SeenEvery later, the time moves on")

	_, err = a.Authenticate(ctx, alice)
	require.NoError(t, err)
	_, err = a.AuthenticateFrom(ctx, alice+"x", "10.0.0.7:1")
	require.ErrorIs(t, err, account.ErrBadSecret)
	_, addr = lastUse()
	assert.Equal(t, "2001:db8::6", addr, "a refused secret records nothing")
}

// testRemoveAccount: removing an account deletes it with its tokens, credentials, enrollment
// keys and the link codes approved into it, says which, and touches no other account's; its
// name may be taken again, and the secrets it had are refused (unknown) from then on.
func testRemoveAccount(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	clk := clock.NewFake(t0)
	a := account.New(s, clk)
	_, err := a.AddAccount(ctx, "root", account.RoleAdmin, "first")
	require.NoError(t, err)
	aliceToken, err := a.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	laptopToken, laptop, err := a.IssueToken(ctx, "alice", "laptop", 0)
	require.NoError(t, err)
	aliceCred, cred, err := a.IssueCredential(ctx, "alice", "root")
	require.NoError(t, err)
	aliceKey, key, err := a.IssueEnrollmentKey(ctx, "alice", "root", 0, time.Hour)
	require.NoError(t, err)
	bobToken, err := a.AddAccount(ctx, "bob", account.RoleUser, "first")
	require.NoError(t, err)
	bobCred, _, err := a.IssueCredential(ctx, "bob", "root")
	require.NoError(t, err)
	// A code approved into alice, waiting for its computer's player; one approved into bob.
	approved := func(traposID, into string) (string, account.LinkCode) {
		code, _, err := a.BeginLink(ctx, traposID, "10.0.0.5", 0)
		require.NoError(t, err)
		c, err := a.ApproveLink(ctx, code, into, "root")
		require.NoError(t, err)
		return code, c
	}
	aliceCode, aliceCodeRecord := approved("7:kitchen", "alice")
	bobCode, _ := approved("8:hall", "bob")

	_, err = s.RemoveAccount(ctx, "carol", t0)
	require.ErrorIs(t, err, account.ErrNotFound)
	_, err = s.RemoveAccount(ctx, "root", t0)
	require.ErrorIs(t, err, account.ErrForbidden, "the store refuses the last admin account")
	_, err = s.Account(ctx, "root")
	require.NoError(t, err)

	r, err := s.RemoveAccount(ctx, "alice", t0.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, "alice", r.Account.ID)
	assert.Equal(t, account.RoleUser, r.Account.Role)
	assert.Len(t, r.Tokens, 2)
	assert.Contains(t, r.Tokens, laptop.Selector)
	assert.Equal(t, []string{cred.Selector}, r.Credentials)
	assert.Equal(t, []string{key.Selector}, r.EnrollmentKeys)
	assert.Equal(t, 1, r.LinkCodes)

	_, err = s.Account(ctx, "alice")
	require.ErrorIs(t, err, account.ErrNotFound)
	for _, list := range []func() (int, error){
		func() (int, error) { l, err := s.Tokens(ctx, "alice"); return len(l), err },
		func() (int, error) { l, err := s.Credentials(ctx, "alice"); return len(l), err },
		func() (int, error) { l, err := s.EnrollmentKeys(ctx, "alice"); return len(l), err },
	} {
		n, err := list()
		require.NoError(t, err)
		assert.Zero(t, n, "nothing of alice's is left")
	}
	_, err = a.Authenticate(ctx, aliceToken)
	require.ErrorIs(t, err, account.ErrBadSecret)
	_, err = a.AuthenticateComputer(ctx, aliceCred, "7:kitchen", "10.0.0.5:1")
	require.ErrorIs(t, err, account.ErrBadSecret)
	_, _, err = a.LinkWithKey(ctx, aliceKey, "9:turtle")
	require.Error(t, err, "the removed account's enrollment key links nothing")
	_, _, err = a.AcceptLink(ctx, aliceCode, "7:kitchen", true)
	require.Error(t, err, "the code approved into alice gives no credential")

	// bob keeps everything.
	acc, err := a.Authenticate(ctx, bobToken)
	require.NoError(t, err)
	assert.Equal(t, "bob", acc.ID)
	_, err = a.AuthenticateComputer(ctx, bobCred, "8:hall", "10.0.0.6:1")
	require.NoError(t, err)
	_, err = a.LinkStatus(ctx, bobCode, "8:hall")
	require.NoError(t, err)

	// A token and a credential left behind by the removal (the NATS bucket has no
	// transactions: one added while the account was being removed stays) are nobody's.
	stray := account.New(leftovers{Store: s, token: laptop, cred: cred}, clk)
	_, err = stray.Authenticate(ctx, laptopToken)
	require.ErrorIs(t, err, account.ErrBadSecret, "a token of a removed account")
	_, err = stray.AuthenticateComputer(ctx, aliceCred, "7:kitchen", "10.0.0.5:1")
	require.ErrorIs(t, err, account.ErrBadSecret, "a credential of a removed account")

	// The name is free again, with nothing of the old account's.
	clk.Advance(time.Minute)
	_, err = a.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	toks, err := s.Tokens(ctx, "alice")
	require.NoError(t, err)
	assert.Len(t, toks, 1)
	_, err = a.Authenticate(ctx, aliceToken)
	require.ErrorIs(t, err, account.ErrBadSecret, "the old token stays refused")
	_, err = stray.Authenticate(ctx, laptopToken)
	require.ErrorIs(t, err, account.ErrBadSecret, "a leftover token is not the new alice's")
	_, err = stray.AuthenticateComputer(ctx, aliceCred, "7:kitchen", "10.0.0.5:1")
	require.ErrorIs(t, err, account.ErrBadSecret, "a leftover credential is not the new alice's")

	// The old alice's records put back by hand, as the NATS bucket may hold them beside the
	// new alice: none opens her.
	require.NoError(t, s.CreateToken(ctx, laptop))
	require.NoError(t, s.CreateCredential(ctx, cred))
	require.NoError(t, s.CreateEnrollmentKey(ctx, key))
	require.NoError(t, s.CreateLinkCode(ctx, aliceCodeRecord))
	_, err = a.Authenticate(ctx, laptopToken)
	require.ErrorIs(t, err, account.ErrBadSecret, "a leftover token in the store")
	_, err = a.AuthenticateComputer(ctx, aliceCred, "7:kitchen", "10.0.0.5:1")
	require.ErrorIs(t, err, account.ErrBadSecret, "a leftover credential in the store")
	_, _, err = a.LinkWithKey(ctx, aliceKey, "9:turtle")
	require.ErrorIs(t, err, account.ErrBadSecret, "a leftover enrollment key links nothing into the new alice")
	_, _, err = a.AcceptLink(ctx, aliceCode, "7:kitchen", true)
	require.ErrorIs(t, err, account.ErrCodeUnknown, "a leftover approved code gives no credential in the new alice")
	k, err := s.EnrollmentKey(ctx, key.Selector)
	require.NoError(t, err)
	assert.Zero(t, k.Uses, "the leftover key spent no use")
	creds, err := s.Credentials(ctx, "alice")
	require.NoError(t, err)
	assert.Len(t, creds, 1, "only the leftover credential put back: none was issued")
}

// leftovers is a store that still holds a token and a credential its RemoveAccount deleted,
// as the NATS bucket does for one added while their account was being removed.
type leftovers struct {
	account.Store
	token account.Token
	cred  account.Credential
}

func (l leftovers) Token(ctx context.Context, selector string) (account.Token, error) {
	if selector == l.token.Selector {
		return l.token, nil
	}
	return l.Store.Token(ctx, selector)
}

func (l leftovers) Credential(ctx context.Context, selector string) (account.Credential, error) {
	if selector == l.cred.Selector {
		return l.cred, nil
	}
	return l.Store.Credential(ctx, selector)
}

// testSkewedClocks: secrets issued by a machine whose clock is behind the one that made their
// account (the operator's laptop running `accounts add --nats`, another replica, a host whose
// clock stepped back) work: whose a secret is does not hang on comparing two clocks.
func testSkewedClocks(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	maker := account.New(s, clock.NewFake(t0.Add(time.Minute)))
	issuer := account.New(s, clock.NewFake(t0.Add(30*time.Second))) // 30s behind the maker
	first, err := maker.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)

	tok, _, err := issuer.IssueToken(ctx, "alice", "laptop", 0)
	require.NoError(t, err)
	cred, _, err := issuer.IssueCredential(ctx, "alice", "root")
	require.NoError(t, err)
	key, _, err := issuer.IssueEnrollmentKey(ctx, "alice", "root", 0, time.Hour)
	require.NoError(t, err)
	linked, _, err := issuer.LinkWithKey(ctx, key, "7:kitchen")
	require.NoError(t, err)
	code, _, err := issuer.BeginLink(ctx, "8:hall", "10.0.0.6", 0)
	require.NoError(t, err)
	_, err = issuer.ApproveLink(ctx, code, "alice", "root")
	require.NoError(t, err)
	accepted, _, err := issuer.AcceptLink(ctx, code, "8:hall", true)
	require.NoError(t, err)

	// Either machine checks them.
	for _, a := range []*account.Accounts{maker, issuer} {
		for _, plain := range []string{first, tok} {
			acc, err := a.Authenticate(ctx, plain)
			require.NoError(t, err, "a token issued 30s before its account on another clock")
			assert.Equal(t, "alice", acc.ID)
		}
		_, err = a.AuthenticateComputer(ctx, cred, "5:desk", "10.0.0.5:1")
		require.NoError(t, err, "a credential issued 30s before its account on another clock")
		_, err = a.AuthenticateComputer(ctx, linked, "7:kitchen", "10.0.0.5:1")
		require.NoError(t, err, "a credential linked with a key")
		_, err = a.AuthenticateComputer(ctx, accepted, "8:hall", "10.0.0.6:1")
		require.NoError(t, err, "a credential linked with a code")
	}

	// A token or credential of an older trap-sandbox carries no stamp: it is its account's
	// while the account exists.
	old := account.New(unstamped{s}, clock.NewFake(t0))
	_, err = old.Authenticate(ctx, tok)
	require.NoError(t, err, "a token without a stamp")
	c, err := old.AuthenticateComputer(ctx, cred, "5:desk", "10.0.0.5:1")
	require.NoError(t, err, "a credential without a stamp")
	acc, err := s.Account(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, c.AccountCreated.Equal(acc.Created),
		"the hello learns its account's stamp from the store (the agent tells a re-created account by it): %v, want %v", c.AccountCreated, acc.Created)
}

// unstamped is a store whose tokens and credentials read as an older trap-sandbox wrote them:
// without their account's stamp.
type unstamped struct{ account.Store }

func (u unstamped) Token(ctx context.Context, selector string) (account.Token, error) {
	t, err := u.Store.Token(ctx, selector)
	t.AccountCreated = time.Time{}
	return t, err
}

func (u unstamped) Credential(ctx context.Context, selector string) (account.Credential, error) {
	c, err := u.Store.Credential(ctx, selector)
	c.AccountCreated = time.Time{}
	return c, err
}
