package account_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
)

// TestReservedNamesAreNoAccounts: the names the gateway uses for itself (the built-in local
// account, the audit's operator and admin) cannot be taken, and an account of such a name
// that a store holds from before opens nothing: its user token must not reach the built-in
// account's computers.
func TestReservedNamesAreNoAccounts(t *testing.T) {
	ctx := t.Context()
	store := account.NewMemory()
	accounts := account.New(store, clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
	for _, name := range []string{account.Local, account.Operator, "admin"} {
		err := account.CheckName(name)
		require.ErrorIs(t, err, account.ErrInvalid, name)
		assert.Contains(t, err.Error(), `account name "`+name+`" is the gateway's own`)
		assert.Contains(t, err.Error(), "choose another name")
		_, err = accounts.Manage(account.OperatorCaller).AddAccount(ctx, name, account.RoleUser)
		require.ErrorIs(t, err, account.ErrInvalid, name)

		// A store made before the names were reserved.
		require.NoError(t, store.CreateAccount(ctx, account.Account{ID: name, Role: account.RoleUser}))
		plain, _, err := accounts.IssueToken(ctx, name, "first", 0)
		require.NoError(t, err)
		_, err = accounts.AuthenticateFrom(ctx, plain, "192.0.2.7:5555")
		require.ErrorIs(t, err, account.ErrReserved, name)
		assert.Contains(t, err.Error(), `account "`+name+`"`)
	}
	assert.NoError(t, account.CheckName("locals"))
	assert.NoError(t, account.CheckName("admins"))
}

// TestCheckTokenName: a token's name is any printable text up to MaxTokenName characters;
// control characters (C0, DEL, C1), line and paragraph separators and bidirectional controls
// are refused, so no name breaks or forges a line of a listing, and so is what prints as
// another character or as none (a no-break space, a soft hyphen, a zero-width character, a
// byte order mark, another space than ' '), so no name lists as another.
func TestCheckTokenName(t *testing.T) {
	for name, ok := range map[string]bool{
		"laptop":                  true,
		"Alice's phone (ünïcode)": true,
		strings.Repeat("é", 64):   true,
		"":                        false,
		"a\x00b\nc":               false,
		"tab\there":               false,
		"del\x7f":                 false,
		"csi\u009b2J":             false,
		"line\u2028sep":           false,
		"para\u2029sep":           false,
		"rlo\u202eevil":           false,
		"bad\xffutf8":             false,
		"台所 🍳":                    true,
		"a\u200bb":                false,
		"a\u200cb":                false,
		"a\u200db":                false,
		"a\u2060b":                false,
		"\ufeffab":                false,
		"a\u00a0b":                false,
		"a\u00adb":                false,
		"a\u2009b":                false,
		"a\u3164b":                false,
		strings.Repeat("n", 65):   false,
	} {
		err := account.CheckTokenName(name)
		if ok {
			assert.NoError(t, err, "%q", name)
			continue
		}
		require.ErrorIs(t, err, account.ErrInvalid, "%q", name)
		assert.NotContains(t, err.Error(), "\n", "%q: the message is one line", name)
	}
	err := account.CheckTokenName("a\u200bb")
	require.ErrorIs(t, err, account.ErrInvalid)
	assert.Equal(t, `token name "a\u200bb" holds U+200B, which prints as a space, a hyphen or nothing, so the name would look like another `+
		`(a listing shows it as \u200b): give it without that character (a plain space for a space)`, err.Error())
}

// TestATokensLifetimeIsCapped: a lifetime up to MaxTokenTTL is given; a longer one is refused
// with the cap in the message (not "must be positive": it is), as through the API, so the
// store's own commands cannot make a token the API could not.
func TestATokensLifetimeIsCapped(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
	_, err := accounts.AddAccount(t.Context(), "alice", account.RoleUser, "first")
	require.NoError(t, err)
	_, tok, err := accounts.IssueToken(t.Context(), "alice", "century", account.MaxTokenTTL)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2126, 11, 7, 0, 0, 0, 0, time.UTC), tok.ExpiresAt, "100 years of 365 days")
	_, _, err = accounts.IssueToken(t.Context(), "alice", "big", 1000000*time.Hour)
	require.ErrorIs(t, err, account.ErrInvalid)
	assert.EqualError(t, err, "a token's lifetime is at most 876000h0m0s (100 years), got 1000000h0m0s")
}

// TestTokenStillOpensAsItsSecretWould: TokenStillOpens, the check of a token by its id alone
// (an input relayed to another replica, whose caller's secret was checked as it began),
// refuses a token exactly when Authenticate would refuse its secret now, with the same error:
// revoked, expired, its account removed; an id of no token opens nothing either.
func TestTokenStillOpensAsItsSecretWould(t *testing.T) {
	ctx := t.Context()
	clk := clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	accounts := account.New(account.NewMemory(), clk)
	_, err := accounts.AddAccount(ctx, "root", account.RoleAdmin, "first")
	require.NoError(t, err)
	_, err = accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	same := func(plain, why string) error {
		t.Helper()
		_, byPlain := accounts.Authenticate(ctx, plain)
		byID := accounts.TokenStillOpens(ctx, account.TokenID(plain))
		assert.Equal(t, byPlain, byID, why)
		return byID
	}

	laptop, _, err := accounts.IssueToken(ctx, "alice", "laptop", 0)
	require.NoError(t, err)
	require.NoError(t, same(laptop, "a token that opens the API"))
	_, err = accounts.RevokeToken(ctx, "alice", account.TokenID(laptop))
	require.NoError(t, err)
	assert.ErrorIs(t, same(laptop, "revoked"), account.ErrRevoked)

	hour, _, err := accounts.IssueToken(ctx, "alice", "for an hour", time.Hour)
	require.NoError(t, err)
	clk.Advance(time.Hour - time.Second)
	require.NoError(t, same(hour, "before its expiry"))
	clk.Advance(time.Second)
	assert.ErrorIs(t, same(hour, "at its expiry"), account.ErrExpired)

	ci, _, err := accounts.IssueToken(ctx, "alice", "ci", 0)
	require.NoError(t, err)
	_, err = accounts.RemoveAccount(ctx, "alice")
	require.NoError(t, err)
	assert.ErrorIs(t, same(ci, "its account removed"), account.ErrBadSecret)

	assert.ErrorIs(t, accounts.TokenStillOpens(ctx, "nosuchid"), account.ErrBadSecret, "an id of no token")
}
