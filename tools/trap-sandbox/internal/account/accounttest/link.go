package accounttest

import (
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

var errRefused = errors.New("refused by the change")

func testLinkCodes(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	c := account.LinkCode{ID: "aa11", TraposID: "7:kitchen", RemoteAddr: "10.0.0.5:4000", Created: t0, ExpiresAt: t0.Add(10 * time.Minute),
		State: account.LinkPending}
	old := account.LinkCode{ID: "bb22", TraposID: "8:", Created: t0.Add(-time.Hour), ExpiresAt: t0.Add(-50 * time.Minute), State: account.LinkPending}
	require.NoError(t, s.CreateLinkCode(ctx, c))
	require.NoError(t, s.CreateLinkCode(ctx, old))
	require.ErrorIs(t, s.CreateLinkCode(ctx, account.LinkCode{ID: "aa11", State: account.LinkPending}), account.ErrExists)

	got, err := s.LinkCode(ctx, "aa11")
	require.NoError(t, err)
	assert.Equal(t, c, got)
	_, err = s.LinkCode(ctx, "nope")
	require.ErrorIs(t, err, account.ErrNotFound)

	_, err = s.UpdateLinkCode(ctx, "aa11", func(c *account.LinkCode) error {
		c.State = account.LinkDeclined
		return errRefused
	})
	require.ErrorIs(t, err, errRefused)
	got, err = s.LinkCode(ctx, "aa11")
	require.NoError(t, err)
	assert.Equal(t, c, got, "a refused change writes nothing")

	approved, err := s.UpdateLinkCode(ctx, "aa11", func(c *account.LinkCode) error {
		c.State, c.AccountID, c.ApprovedBy, c.ApprovedAt = account.LinkApproved, "alice", "alice", t0.Add(time.Minute)
		c.AccountCreated, c.ApprovedToken = t0, "tok1"
		return nil
	})
	require.NoError(t, err)
	want := c
	want.State, want.AccountID, want.ApprovedBy, want.ApprovedAt = account.LinkApproved, "alice", "alice", t0.Add(time.Minute)
	want.AccountCreated, want.ApprovedToken = t0, "tok1"
	assert.Equal(t, want, approved)
	got, err = s.LinkCode(ctx, "aa11")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = s.UpdateLinkCode(ctx, "nope", func(*account.LinkCode) error { return nil })
	require.ErrorIs(t, err, account.ErrNotFound)

	n, err := s.DeleteLinkCodes(ctx, t0.Add(-10*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "only the code that expired before then")
	_, err = s.LinkCode(ctx, "bb22")
	require.ErrorIs(t, err, account.ErrNotFound)
	_, err = s.LinkCode(ctx, "aa11")
	require.NoError(t, err)

	// A linked credential keeps the computer it is bound to.
	require.NoError(t, s.CreateAccount(ctx, account.Account{ID: "alice", Role: account.RoleUser, Created: t0}))
	cred := account.Credential{Selector: "c1", Hash: []byte("h"), AccountID: "alice", ApprovedBy: "alice", Created: t0, ComputerID: "7"}
	require.NoError(t, s.CreateCredential(ctx, cred))
	gotCred, err := s.Credential(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, cred, gotCred)
}

func testEnrollmentKeys(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	require.NoError(t, s.CreateAccount(ctx, account.Account{ID: "alice", Role: account.RoleUser, Created: t0}))
	require.NoError(t, s.CreateAccount(ctx, account.Account{ID: "bob", Role: account.RoleUser, Created: t0}))
	a := account.EnrollmentKey{Selector: "k2", Hash: []byte("hash-a"), AccountID: "alice", CreatedBy: "alice", Created: t0,
		ExpiresAt: t0.Add(24 * time.Hour), MaxUses: 3, AccountCreated: t0}
	b := account.EnrollmentKey{Selector: "k1", Hash: []byte("hash-b"), AccountID: "bob", CreatedBy: "root", Created: t0.Add(time.Second)}
	require.NoError(t, s.CreateEnrollmentKey(ctx, a))
	require.NoError(t, s.CreateEnrollmentKey(ctx, b))
	require.ErrorIs(t, s.CreateEnrollmentKey(ctx, account.EnrollmentKey{Selector: "k1", Hash: []byte("h"), AccountID: "alice", Created: t0}), account.ErrExists)
	require.ErrorIs(t, s.CreateEnrollmentKey(ctx, account.EnrollmentKey{Selector: "k9", Hash: []byte("h"), AccountID: "carol", Created: t0}), account.ErrNotFound)

	got, err := s.EnrollmentKey(ctx, "k2")
	require.NoError(t, err)
	assert.Equal(t, a, got)
	_, err = s.EnrollmentKey(ctx, "nope")
	require.ErrorIs(t, err, account.ErrNotFound)

	list, err := s.EnrollmentKeys(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, []account.EnrollmentKey{a, b}, list, "every account's, oldest first")
	list, err = s.EnrollmentKeys(ctx, "bob")
	require.NoError(t, err)
	assert.Equal(t, []account.EnrollmentKey{b}, list)

	used, err := s.UpdateEnrollmentKey(ctx, "k2", func(k *account.EnrollmentKey) error {
		k.Uses, k.LastUsed = k.Uses+1, t0.Add(time.Hour)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 1, used.Uses)
	_, err = s.UpdateEnrollmentKey(ctx, "k2", func(k *account.EnrollmentKey) error {
		k.Uses = 99
		return errRefused
	})
	require.ErrorIs(t, err, errRefused)
	revoked, err := s.UpdateEnrollmentKey(ctx, "k2", func(k *account.EnrollmentKey) error {
		k.RevokedAt = t0.Add(2 * time.Hour)
		return nil
	})
	require.NoError(t, err)
	want := a
	want.Uses, want.LastUsed, want.RevokedAt = 1, t0.Add(time.Hour), t0.Add(2*time.Hour)
	assert.Equal(t, want, revoked)
	got, err = s.EnrollmentKey(ctx, "k2")
	require.NoError(t, err)
	assert.Equal(t, want, got, "a refused change writes nothing")
	_, err = s.UpdateEnrollmentKey(ctx, "nope", func(*account.EnrollmentKey) error { return nil })
	require.ErrorIs(t, err, account.ErrNotFound)
}

// testLinkOnce: many accepts of one approved code at once, and many uses of a one-use key:
// exactly one wins each.
func testLinkOnce(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	a := account.New(s, clock.NewFake(t0))
	_, err := a.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	code, _, err := a.BeginLink(ctx, "7:kitchen", "10.0.0.5:1", 0)
	require.NoError(t, err)
	_, err = a.ApproveLink(ctx, code, "alice", "alice")
	require.NoError(t, err)
	key, _, err := a.IssueEnrollmentKey(ctx, "alice", "alice", 1, time.Hour)
	require.NoError(t, err)

	const racers = 8
	var wg sync.WaitGroup
	codeWins, keyWins := make(chan string, racers), make(chan string, racers)
	codeErrs, keyErrs := make(chan error, racers), make(chan error, racers)
	for range racers {
		wg.Go(func() {
			cred, _, err := a.AcceptLink(ctx, code, "7:kitchen", true)
			if err != nil {
				codeErrs <- err
				return
			}
			codeWins <- cred
		})
		wg.Go(func() {
			cred, _, err := a.LinkWithKey(ctx, key, "9:")
			if err != nil {
				keyErrs <- err
				return
			}
			keyWins <- cred
		})
	}
	wg.Wait()
	close(codeWins)
	close(keyWins)
	close(codeErrs)
	close(keyErrs)
	assert.Len(t, codeWins, 1, "one accept wins")
	assert.Len(t, keyWins, 1, "one use of a one-use key wins")
	for err := range codeErrs {
		require.ErrorIs(t, err, account.ErrCodeUsed)
	}
	for err := range keyErrs {
		require.ErrorIs(t, err, account.ErrUsedUp)
	}
	creds, err := s.Credentials(ctx, "alice")
	require.NoError(t, err)
	assert.Len(t, creds, 2, "one credential from the code, one from the key")
}

// testLinkFlow runs the link code's life on Accounts with a fake clock.
func testLinkFlow(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	clk := clock.NewFake(t0)
	a := account.New(s, clk)
	_, err := a.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)

	code, c, err := a.BeginLink(ctx, "7:kitchen", "10.0.0.5:1", 0)
	require.NoError(t, err)
	canon, err := account.NormalizeCode(code)
	require.NoError(t, err)
	assert.Equal(t, code, canon)
	assert.Regexp(t, `^[BCDFGHJKLMNPQRSTVWXZ]{8}$`, code)
	assert.NotContains(t, c.ID, code, "only the hash is stored")
	assert.Equal(t, t0.Add(account.LinkCodeTTL), c.ExpiresAt)

	typed := strings8(code)
	got, err := a.LinkStatus(ctx, typed, "7:kitchen")
	require.NoError(t, err, "typed in lower case with the dash")
	assert.Equal(t, account.LinkPending, got.StateAt(clk.Now()))
	_, err = a.LinkStatus(ctx, code, "8:kitchen")
	require.ErrorIs(t, err, account.ErrCodeUnknown, "another computer's code is as one that does not exist")
	_, err = a.LinkStatus(ctx, "BBBBBBBB", "7:kitchen")
	require.ErrorIs(t, err, account.ErrCodeUnknown)

	_, _, err = a.AcceptLink(ctx, code, "7:kitchen", true)
	require.ErrorIs(t, err, account.ErrCodeNotApproved)
	_, err = a.ApproveLink(ctx, code, "carol", "carol")
	require.ErrorIs(t, err, account.ErrNotFound, "no such account")
	approved, err := a.ApproveLink(ctx, code, "alice", "alice (token laptop)")
	require.NoError(t, err)
	assert.Equal(t, "7:kitchen", approved.TraposID)
	assert.Equal(t, "10.0.0.5:1", approved.RemoteAddr)
	_, err = a.ApproveLink(ctx, code, "alice", "alice")
	require.ErrorIs(t, err, account.ErrCodeUsed, "one approval per code")
	_, _, err = a.AcceptLink(ctx, code, "8:", true)
	require.ErrorIs(t, err, account.ErrCodeUnknown, "only the asking computer accepts")

	cred, used, err := a.AcceptLink(ctx, code, "7:kitchen", true)
	require.NoError(t, err)
	assert.Equal(t, account.LinkAccepted, used.State)
	assert.Equal(t, "alice", used.AccountID)
	_, _, err = a.AcceptLink(ctx, code, "7:kitchen", true)
	require.ErrorIs(t, err, account.ErrCodeUsed)
	_, err = a.ApproveLink(ctx, code, "alice", "alice")
	require.ErrorIs(t, err, account.ErrCodeUsed, "an approval after the accept")

	// The credential is alice's and bound to computer 7, whatever its label.
	seen, err := a.AuthenticateComputer(ctx, cred, "7:renamed", "10.0.0.5:2")
	require.NoError(t, err)
	assert.Equal(t, "alice", seen.AccountID)
	assert.Equal(t, "alice (token laptop)", seen.ApprovedBy)
	_, err = a.AuthenticateComputer(ctx, cred, "8:kitchen", "10.0.0.5:2")
	var wrong *account.WrongComputerError
	require.ErrorAs(t, err, &wrong)
	assert.Equal(t, "7", wrong.ComputerID)

	// Declined: used up, no credential.
	declined, _, err := a.BeginLink(ctx, "7:kitchen", "10.0.0.5:1", 0)
	require.NoError(t, err)
	_, err = a.ApproveLink(ctx, declined, "alice", "bystander")
	require.NoError(t, err)
	plain, _, err := a.AcceptLink(ctx, declined, "7:kitchen", false)
	require.NoError(t, err)
	assert.Empty(t, plain)
	_, _, err = a.AcceptLink(ctx, declined, "7:kitchen", true)
	require.ErrorIs(t, err, account.ErrCodeDeclined)
	_, err = a.ApproveLink(ctx, declined, "alice", "alice")
	require.ErrorIs(t, err, account.ErrCodeDeclined)

	// Expired: refused to approve and to accept; a late poll hears why.
	late, _, err := a.BeginLink(ctx, "7:kitchen", "10.0.0.5:1", 0)
	require.NoError(t, err)
	lateApproved, _, err := a.BeginLink(ctx, "7:kitchen", "10.0.0.5:1", 0)
	require.NoError(t, err)
	_, err = a.ApproveLink(ctx, lateApproved, "alice", "alice")
	require.NoError(t, err)
	clk.Advance(account.LinkCodeTTL)
	_, err = a.ApproveLink(ctx, late, "alice", "alice")
	require.ErrorIs(t, err, account.ErrExpired)
	_, _, err = a.AcceptLink(ctx, lateApproved, "7:kitchen", true)
	require.ErrorIs(t, err, account.ErrExpired)
	st, err := a.LinkStatus(ctx, late, "7:kitchen")
	require.NoError(t, err)
	assert.Equal(t, account.LinkExpired, st.StateAt(clk.Now()))

	creds, err := s.Credentials(ctx, "alice")
	require.NoError(t, err)
	assert.Len(t, creds, 1, "only the accepted code gave a credential")
	assert.Equal(t, "7", creds[0].ComputerID)

	// Pruned a lifetime after expiry.
	clk.Advance(account.LinkCodeTTL + time.Second)
	n, err := a.PruneLinkCodes(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	_, err = a.LinkStatus(ctx, late, "7:kitchen")
	require.ErrorIs(t, err, account.ErrCodeUnknown)
}

// strings8 writes a canonical code as a person might type it: lower case, with the dash.
func strings8(code string) string {
	b := []byte(account.FormatCode(code))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func testLinkWithKey(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	clk := clock.NewFake(t0)
	a := account.New(s, clk)
	_, err := a.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)

	twice, k, err := a.IssueEnrollmentKey(ctx, "alice", "root", 2, 24*time.Hour)
	require.NoError(t, err)
	assert.True(t, account.IsSecret(twice))
	assert.Regexp(t, `^tsk_`, twice)
	assert.Equal(t, t0.Add(24*time.Hour), k.ExpiresAt)
	for _, id := range []string{"1:", "2:"} {
		cred, used, err := a.LinkWithKey(ctx, twice, id)
		require.NoError(t, err)
		assert.Equal(t, "alice", used.AccountID)
		c, err := a.AuthenticateComputer(ctx, cred, id+"x", "")
		require.NoError(t, err)
		assert.Equal(t, "root (key "+k.Selector+")", c.ApprovedBy)
	}
	_, _, err = a.LinkWithKey(ctx, twice, "3:")
	require.ErrorIs(t, err, account.ErrUsedUp)

	_, _, err = a.LinkWithKey(ctx, testkit.WrongSecret(twice), "3:")
	require.ErrorIs(t, err, account.ErrBadSecret, "a wrong secret with a real selector")
	_, _, err = a.LinkWithKey(ctx, "tsk_nope_nope", "3:")
	require.ErrorIs(t, err, account.ErrBadSecret)
	_, _, err = a.LinkWithKey(ctx, "hunter2", "3:")
	require.ErrorIs(t, err, account.ErrBadSecret)

	many, mk, err := a.IssueEnrollmentKey(ctx, "alice", "alice", 0, time.Hour)
	require.NoError(t, err)
	for i := range 3 {
		_, _, err := a.LinkWithKey(ctx, many, string(rune('4'+i))+":")
		require.NoError(t, err, "a reusable key links any number")
	}
	_, err = a.RevokeEnrollmentKey(ctx, "bob", mk.Selector)
	require.ErrorIs(t, err, account.ErrNotFound, "another account's key is as one that does not exist")
	_, err = a.RevokeEnrollmentKey(ctx, "alice", mk.Selector)
	require.NoError(t, err)
	_, _, err = a.LinkWithKey(ctx, many, "9:")
	require.ErrorIs(t, err, account.ErrRevoked)

	short, _, err := a.IssueEnrollmentKey(ctx, "alice", "alice", 0, time.Hour)
	require.NoError(t, err)
	clk.Advance(time.Hour)
	_, _, err = a.LinkWithKey(ctx, short, "9:")
	require.ErrorIs(t, err, account.ErrExpired)

	_, _, err = a.IssueEnrollmentKey(ctx, "carol", "carol", 1, time.Hour)
	require.ErrorIs(t, err, account.ErrNotFound)
}

// testBoundCredential: CreateBoundCredential adds a credential bound to a computer id unless
// its account holds a live one bound to it, in one step: of many at once for one id, one is
// added and the others are told which one the account holds.
func testBoundCredential(t *testing.T, s account.Store) {
	ctx := ctxOf(t)
	for _, id := range []string{"alice", "bob"} {
		require.NoError(t, s.CreateAccount(ctx, account.Account{ID: id, Role: account.RoleUser, Created: t0}))
	}
	bound := func(sel, accountID, computerID string) account.Credential {
		return account.Credential{Selector: sel, Hash: []byte(sel), AccountID: accountID, ComputerID: computerID, Created: t0}
	}
	const racers = 6
	var wg sync.WaitGroup
	errs := make(chan error, racers)
	for i := range racers {
		wg.Go(func() { errs <- s.CreateBoundCredential(ctx, bound(fmt.Sprintf("c%d", i), "alice", "7")) })
	}
	wg.Wait()
	close(errs)
	added := 0
	for err := range errs {
		if err == nil {
			added++
			continue
		}
		var held *account.HeldIDError
		require.ErrorAs(t, err, &held)
		assert.Equal(t, "7", held.Held.ComputerID)
		assert.Equal(t, "alice", held.Held.AccountID)
	}
	assert.Equal(t, 1, added, "one credential for alice's computer 7")
	creds, err := s.Credentials(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, creds, 1, "the refused ones are not kept")
	winner := creds[0].Selector

	require.NoError(t, s.CreateBoundCredential(ctx, bound("b7", "bob", "7")), "bob's computer 7 is another")
	require.NoError(t, s.CreateBoundCredential(ctx, bound("a8", "alice", "8")), "alice's computer 8 is another")
	require.NoError(t, s.CreateCredential(ctx, bound("byhand", "alice", "")), "a credential by hand is bound to no id")
	var held *account.HeldIDError
	require.ErrorAs(t, s.CreateBoundCredential(ctx, bound("again", "alice", "7")), &held)
	assert.Equal(t, winner, held.Held.Selector)
	_, err = s.RevokeCredential(ctx, winner, t0)
	require.NoError(t, err)
	require.NoError(t, s.CreateBoundCredential(ctx, bound("again", "alice", "7")), "once revoked, computer 7 links anew")
	require.ErrorIs(t, s.CreateBoundCredential(ctx, bound("again", "bob", "9")), account.ErrExists, "a taken selector")
	require.ErrorIs(t, s.CreateBoundCredential(ctx, bound("c9", "carol", "9")), account.ErrNotFound, "no such account")
}
