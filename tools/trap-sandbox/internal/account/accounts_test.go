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
		"ноутбук Alice":           true,
		"l\u0430ptop":             false,
		"g\u03bfod":               false,
		"10k\u2126":               false,
		"10k \u2126":              true,
		"10k-\u03a9":              true,
		"10\u00b5F":               true,
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
	err = account.CheckTokenName("my l\u0430ptop")
	require.ErrorIs(t, err, account.ErrInvalid)
	assert.Equal(t, "token name \"my l\u0430ptop\" mixes scripts in one word, "+`l\u0430ptop (Latin and Cyrillic: \u0430 is Cyrillic); `+
		"a word of two scripts may hide a letter that looks like another's (a Cyrillic \u0430 for a Latin a), so each word of a name is of one script: "+
		"write it in one script", err.Error())
}

// TestAnOhmSignIsGreek: 10kΩ typed with the ohm sign (U+2126) is refused as a word of Latin
// and Greek, as Unicode counts the ohm sign (it is the Greek capital omega, U+03A9, which the
// name keeps it as: the same character to Unicode) and UTS #39 refuses Greek in a Latin word,
// where a look-alike (ο for o) would pass. The refusal says which letter is Greek, as which
// character it was typed, and the fix that passes: the two parts apart, each a word of one
// script.
func TestAnOhmSignIsGreek(t *testing.T) {
	_, err := account.TokenName("10k\u2126")
	require.ErrorIs(t, err, account.ErrInvalid)
	assert.Equal(t, "token name \"10k\u03a9\" mixes scripts in one word, "+`10k\u03a9 (Latin and Greek: \u03a9 is Greek, typed as \u2126, `+
		"which Unicode holds to be the same character); a word of two scripts may hide a letter that looks like another's (a Cyrillic \u0430 for "+
		"a Latin a), so each word of a name is of one script: part it where its script changes (10k \u03a9 or 10k-\u03a9), or write it in one script",
		err.Error())
	for _, fix := range []string{"10k \u03a9", "10k-\u03a9", "10k \u2126"} {
		name, err := account.TokenName(fix)
		require.NoError(t, err, "%q", fix)
		assert.Equal(t, strings.ReplaceAll(fix, "\u2126", "\u03a9"), name)
	}
}

// TestATokensNameIsKeptComposed: a token's name is kept in NFC (RFC 8265), so e and U+0301
// is kept as é, one character, as a name typed with é is: the two spellings are one name.
func TestATokensNameIsKeptComposed(t *testing.T) {
	ctx := t.Context()
	store := account.NewMemory()
	accounts := account.New(store, clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
	_, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "cafe\u0301")
	require.NoError(t, err)
	toks, err := store.Tokens(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, toks, 1)
	assert.Equal(t, "caf\u00e9", toks[0].Name, "the first token's name, composed")
	_, tok, err := accounts.IssueToken(ctx, "alice", "the cafe\u0301's", 0)
	require.NoError(t, err)
	assert.Equal(t, "the caf\u00e9's", tok.Name)
	name, err := account.TokenName("cafe\u0301")
	require.NoError(t, err)
	assert.Equal(t, "caf\u00e9", name)
}

// TestATokenNameLikeAnotherOfItsAccountIsRefused: a new token's name that a listing could not
// tell from the name of a token of the same account that still opens is refused, naming that
// token and the fix: the same name, the same written otherwise (e and U+0301), one whose
// letters look alike (Iaptop, a Cyrillic сору beside copy), a space more. Another account's
// tokens, and a token revoked or expired, leave the name free.
func TestATokenNameLikeAnotherOfItsAccountIsRefused(t *testing.T) {
	ctx := t.Context()
	clk := clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	accounts := account.New(account.NewMemory(), clk)
	for _, id := range []string{"alice", "bob"} {
		_, err := accounts.AddAccount(ctx, id, account.RoleUser, "first")
		require.NoError(t, err)
	}
	laptop, _, err := accounts.IssueToken(ctx, "alice", "laptop", 0)
	require.NoError(t, err)
	_, _, err = accounts.IssueToken(ctx, "alice", "café", 0)
	require.NoError(t, err)
	copyPlain, _, err := accounts.IssueToken(ctx, "alice", "copy", time.Hour)
	require.NoError(t, err)
	id := account.TokenID(laptop)

	_, _, err = accounts.IssueToken(ctx, "alice", "laptop", 0)
	require.ErrorIs(t, err, account.ErrInvalid)
	assert.Equal(t, `token name "laptop" is taken by token `+id+` of account alice: choose another name, or revoke that token first (trap-sandbox tokens revoke `+id+`)`, err.Error())
	_, _, err = accounts.IssueToken(ctx, "alice", "Iaptop", 0)
	require.ErrorIs(t, err, account.ErrInvalid)
	assert.Equal(t, `token name "Iaptop" looks like the name of token `+id+` of account alice, which a listing could not tell apart (spelled out: Iaptop and laptop): `+
		`choose another name, or revoke that token first (trap-sandbox tokens revoke `+id+`)`, err.Error())
	for _, name := range []string{"cafe\u0301", " caf\u00e9 ", "\u0441\u043e\u0440\u0443"} {
		_, _, err = accounts.IssueToken(ctx, "alice", name, 0)
		require.ErrorIs(t, err, account.ErrInvalid, "%+q", name)
	}
	_, _, err = accounts.IssueToken(ctx, "alice", "\u0441\u043e\u0440\u0443", 0)
	assert.Contains(t, err.Error(), `(spelled out: \u0441\u043e\u0440\u0443 and copy)`)

	_, _, err = accounts.IssueToken(ctx, "bob", "laptop", 0)
	require.NoError(t, err, "another account's token")
	_, _, err = accounts.IssueToken(ctx, "alice", "Laptop", 0)
	require.NoError(t, err, "a capital is told apart")
	_, err = accounts.RevokeToken(ctx, "alice", id)
	require.NoError(t, err)
	_, _, err = accounts.IssueToken(ctx, "alice", "laptop", 0)
	require.NoError(t, err, "a revoked token's name")
	clk.Advance(time.Hour)
	_, err = accounts.Authenticate(ctx, copyPlain)
	require.ErrorIs(t, err, account.ErrExpired)
	_, _, err = accounts.IssueToken(ctx, "alice", "\u0441\u043e\u0440\u0443", 0)
	require.NoError(t, err, "an expired token's name")
}

// TestAnAccountNameLikeAnotherIsRefused: a new account whose name a listing could not tell
// from an account's (a1ice beside alice, rnallory beside mallory) or from a name the gateway
// uses for itself (1ocal) is refused, naming it.
func TestAnAccountNameLikeAnotherIsRefused(t *testing.T) {
	ctx := t.Context()
	accounts := account.New(account.NewMemory(), clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
	for _, id := range []string{"alice", "mallory"} {
		_, err := accounts.AddAccount(ctx, id, account.RoleUser, "first")
		require.NoError(t, err)
	}
	_, err := accounts.AddAccount(ctx, "a1ice", account.RoleUser, "first")
	require.ErrorIs(t, err, account.ErrInvalid)
	assert.Equal(t, `account name "a1ice" looks like that of account "alice", which a listing could not tell apart: choose another name`, err.Error())
	_, err = accounts.Manage(account.OperatorCaller).AddAccount(ctx, "rnallory", account.RoleUser)
	require.ErrorIs(t, err, account.ErrInvalid)
	_, err = accounts.AddAccount(ctx, "1ocal", account.RoleUser, "first")
	require.ErrorIs(t, err, account.ErrInvalid)
	assert.Contains(t, err.Error(), `account name "1ocal" looks like "local", the gateway's own`)
	_, err = accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.ErrorIs(t, err, account.ErrExists, "the same name is taken, as before")
	_, err = accounts.AddAccount(ctx, "alicia", account.RoleUser, "first")
	require.NoError(t, err)
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
