package account_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
)

// managed is a memory store with root (an admin), alice and bob (users), a token and a
// credential each.
type managed struct {
	accounts *account.Accounts
	clk      *clock.Fake
	token    map[string]string // account → its first token's selector
	cred     map[string]string // account → a credential's selector
}

func newManaged(t *testing.T) managed {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC))
	m := managed{accounts: account.New(account.NewMemory(), clk), clk: clk, token: map[string]string{}, cred: map[string]string{}}
	op := m.accounts.Manage(account.OperatorCaller)
	for _, id := range []string{"root", "alice", "bob"} {
		role := account.RoleUser
		if id == "root" {
			role = account.RoleAdmin
		}
		n, err := op.AddAccount(t.Context(), id, role)
		require.NoError(t, err)
		m.token[id] = n.Token.Selector
		c, err := op.AddCredential(t.Context(), id)
		require.NoError(t, err)
		m.cred[id] = c.Credential.Selector
	}
	return m
}

// TestManagePermissions is the permission matrix: an admin (an admin account, or the
// gateway's own SANDBOX_API_TOKEN/loopback caller) manages every account; a user its own
// tokens and credentials; another account's are answered as ones that do not exist; a caller
// without an account reaches nothing (one limited to one computer, the agent's pass, neither:
// TestManageOfAPassSaysWhatItIs).
func TestManagePermissions(t *testing.T) {
	callers := map[string]account.Caller{
		"admin":    {Account: "root", Admin: true},
		"local":    account.LocalAdmin,
		"user":     {Account: "alice"},
		"nobody":   {},
		"operator": account.OperatorCaller,
	}
	admin := map[string]bool{"admin": true, "local": true, "operator": true}
	reachesNothing := map[string]bool{"nobody": true}
	for name, caller := range callers {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			m := newManaged(t)
			mg := m.accounts.Manage(caller)

			n, err := mg.AddAccount(ctx, "carol", account.RoleUser)
			if admin[name] {
				require.NoError(t, err)
				assert.Equal(t, caller.Account, n.Account.CreatedBy)
				assert.Equal(t, caller.Account, n.Token.CreatedBy)
				got, err := m.accounts.Authenticate(ctx, n.Secret)
				require.NoError(t, err)
				assert.Equal(t, "carol", got.ID, "the secret opens the new account")
			} else {
				require.ErrorIs(t, err, account.ErrForbidden)
				assert.Contains(t, err.Error(), "needs an admin token")
			}

			list, err := mg.Accounts(ctx)
			require.NoError(t, err)
			var ids []string
			for _, a := range list {
				ids = append(ids, a.ID)
			}
			switch {
			case admin[name]:
				assert.Equal(t, []string{"alice", "bob", "carol", "root"}, ids)
			case name == "user":
				assert.Equal(t, []string{"alice"}, ids, "a user sees its own account only")
			default:
				assert.Empty(t, ids)
			}

			// Another account's tokens and credentials, and one that does not exist, answer
			// the same: not found.
			for _, other := range []string{"bob", "zed"} {
				_, errList := mg.Tokens(ctx, other)
				_, errAdd := mg.AddToken(ctx, other, "x", 0)
				_, errCreds := mg.Credentials(ctx, other)
				_, errCred := mg.AddCredential(ctx, other)
				if admin[name] && other == "bob" {
					assert.NoError(t, errList)
					assert.NoError(t, errAdd)
					assert.NoError(t, errCreds)
					assert.NoError(t, errCred)
					continue
				}
				for _, err := range []error{errList, errAdd, errCreds, errCred} {
					require.ErrorIs(t, err, account.ErrNotFound, other)
					assert.Contains(t, err.Error(), `account "`+other+`"`)
					if !admin[name] {
						// Its fix is another token, whether the account exists or not.
						assert.ErrorIs(t, err, account.ErrNotReached, other)
						assert.Equal(t, `account "`+other+`": not found (this token reaches its own account only)`, err.Error())
					}
				}
			}
			_, err = mg.RevokeToken(ctx, m.token["bob"])
			_, errCred := mg.RevokeCredential(ctx, m.cred["bob"])
			if admin[name] {
				assert.NoError(t, err)
				assert.NoError(t, errCred)
			} else {
				assert.ErrorIs(t, err, account.ErrNotFound)
				assert.ErrorIs(t, errCred, account.ErrNotFound)
			}

			// Its own: a user lists, adds and revokes its own tokens and credentials ("" is
			// its own account).
			own := []string{"alice"}
			if name == "user" {
				own = append(own, "")
			}
			for _, id := range own {
				toks, err := mg.Tokens(ctx, id)
				newTok, errAdd := mg.AddToken(ctx, id, "laptop", time.Hour)
				creds, errCreds := mg.Credentials(ctx, id)
				newCred, errCred := mg.AddCredential(ctx, id)
				if reachesNothing[name] {
					assert.ErrorIs(t, err, account.ErrNotFound)
					assert.ErrorIs(t, errAdd, account.ErrNotFound)
					assert.ErrorIs(t, errCreds, account.ErrNotFound)
					assert.ErrorIs(t, errCred, account.ErrNotFound)
					continue
				}
				if id == "" { // an admin's "": every account's
					continue
				}
				require.NoError(t, err)
				require.NoError(t, errAdd)
				require.NoError(t, errCreds)
				require.NoError(t, errCred)
				assert.Equal(t, "alice", toks[0].AccountID)
				assert.Equal(t, "alice", creds[0].AccountID)
				assert.Equal(t, caller.Account, newTok.Token.CreatedBy)
				assert.Equal(t, caller.Account, newCred.Credential.ApprovedBy)
				assert.Equal(t, m.clk.Now().Add(time.Hour), newTok.Token.ExpiresAt)
				revoked, err := mg.RevokeToken(ctx, newTok.Token.Selector)
				require.NoError(t, err)
				assert.False(t, revoked.RevokedAt.IsZero())
				rc, err := mg.RevokeCredential(ctx, newCred.Credential.Selector)
				require.NoError(t, err)
				assert.False(t, rc.RevokedAt.IsZero())
			}
			if reachesNothing[name] {
				_, err := mg.RevokeToken(ctx, m.token["alice"])
				assert.ErrorIs(t, err, account.ErrNotFound)
			}
		})
	}
}

// TestManageOfAPassSaysWhatItIs: a caller limited to one computer (the agent's pass for
// alice's 7:desk) manages nothing of its account, not even its own tokens (a token it could
// mint would reach every computer of the account), and each refusal says what it is and who
// does it instead. It was refused in a user token's words, as if its own account were
// another's: `account "alice": not found (this token reaches its own account only)`.
func TestManageOfAPassSaysWhatItIs(t *testing.T) {
	ctx := t.Context()
	m := newManaged(t)
	mg := m.accounts.Manage(account.Caller{Account: "alice", Only: "7:desk"})
	const pass = "this caller is the agent's pass for computer 7:desk of account alice: it reaches that computer alone and manages nothing of its account, so it "
	holder := func(does, command string) string {
		return pass + does + "; the account's holder does, with one of account alice's API tokens or an admin's (" + command + ")"
	}
	_, errAddAccount := mg.AddAccount(ctx, "carol", account.RoleUser)
	_, errAccounts := mg.Accounts(ctx)
	_, errTokens := mg.Tokens(ctx, "alice")
	_, errOwnTokens := mg.Tokens(ctx, "")
	_, errAddToken := mg.AddToken(ctx, "alice", "laptop", 0)
	_, errRevokeToken := mg.RevokeToken(ctx, m.token["alice"])
	_, errCreds := mg.Credentials(ctx, "alice")
	_, errAddCred := mg.AddCredential(ctx, "alice")
	_, errRevokeCred := mg.RevokeCredential(ctx, m.cred["alice"])
	_, errRemove := mg.RemoveAccount(ctx, "bob")
	for err, want := range map[error]string{
		errAddAccount:  pass + "adds no account; adding an account needs an admin token (an admin account's, or the gateway's SANDBOX_API_TOKEN; trap-sandbox accounts add)",
		errAccounts:    holder("lists no accounts", "trap-sandbox accounts list"),
		errTokens:      holder("lists no API tokens", "trap-sandbox tokens list"),
		errOwnTokens:   holder("lists no API tokens", "trap-sandbox tokens list"),
		errAddToken:    holder("makes no API token", "trap-sandbox tokens add"),
		errRevokeToken: holder("revokes no API token", "trap-sandbox tokens revoke ID"),
		errCreds:       holder("lists no computer credentials", "trap-sandbox credentials list"),
		errAddCred:     holder("makes no computer credential", "trap-sandbox credentials add"),
		errRevokeCred:  holder("revokes no computer credential", "trap-sandbox credentials revoke ID"),
		errRemove:      pass + "removes no account; removing an account needs an admin token (an admin account's, or the gateway's SANDBOX_API_TOKEN; trap-sandbox accounts remove)",
	} {
		require.ErrorIs(t, err, account.ErrForbidden, want)
		assert.Equal(t, "forbidden: "+want, err.Error())
	}
	everyone := m.accounts.Manage(account.OperatorCaller)
	accounts, err := everyone.Accounts(ctx)
	require.NoError(t, err)
	assert.Len(t, accounts, 3, "no account added or removed")
	toks, err := everyone.Tokens(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, toks, 1, "no token made")
	assert.True(t, toks[0].RevokedAt.IsZero(), "none revoked")
	creds, err := everyone.Credentials(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, creds, 1, "no credential made")
	assert.True(t, creds[0].RevokedAt.IsZero(), "none revoked")
}

// TestManageRemoveAccount: only an admin removes an account, never its own (through the API it
// would cut the branch it sits on) nor the last admin; each refusal says what would do, and
// an unknown account is not found. What is removed is gone for the other callers too.
func TestManageRemoveAccount(t *testing.T) {
	ctx := t.Context()
	m := newManaged(t)
	for name, caller := range map[string]account.Caller{
		"user":   {Account: "alice"},
		"nobody": {},
		"pass":   {Account: "alice", Only: "7:desk"},
	} {
		_, err := m.accounts.Manage(caller).RemoveAccount(ctx, "alice")
		require.ErrorIs(t, err, account.ErrForbidden, name)
		assert.Contains(t, err.Error(), "removing an account needs an admin token", name)
	}
	root := m.accounts.Manage(account.Caller{Account: "root", Admin: true})
	_, err := root.RemoveAccount(ctx, "root")
	require.ErrorIs(t, err, account.ErrForbidden)
	assert.Contains(t, err.Error(), `account "root" is the one whose token makes this call`)
	_, err = root.RemoveAccount(ctx, "zed")
	require.ErrorIs(t, err, account.ErrNotFound)

	op := m.accounts.Manage(account.OperatorCaller)
	_, err = op.RemoveAccount(ctx, "root")
	require.ErrorIs(t, err, account.ErrForbidden)
	assert.Contains(t, err.Error(), `account "root" is the last admin account: add another first (trap-sandbox accounts add NAME --admin)`)

	r, err := root.RemoveAccount(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, []string{m.token["alice"]}, r.Tokens)
	assert.Equal(t, []string{m.cred["alice"]}, r.Credentials)
	_, err = op.Tokens(ctx, "alice")
	require.ErrorIs(t, err, account.ErrNotFound)

	// An account named "local" (a store made before the name was reserved) is not the
	// gateway's own token's: that token removes it.
	require.NoError(t, m.accounts.Store().CreateAccount(ctx, account.Account{ID: account.Local, Role: account.RoleUser}))
	_, err = m.accounts.Manage(account.LocalAdmin).RemoveAccount(ctx, account.Local)
	require.NoError(t, err)

	// With a second admin, the first may go (by the operator, or the other admin).
	_, err = op.AddAccount(ctx, "root2", account.RoleAdmin)
	require.NoError(t, err)
	_, err = m.accounts.Manage(account.Caller{Account: "root2", Admin: true}).RemoveAccount(ctx, "root")
	require.NoError(t, err)
	c, err := m.accounts.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[account.Role]int{account.RoleAdmin: 1, account.RoleUser: 1}, c.Accounts, "the gauges count what is left")
}

// TestManageAccountsShowLastUse: the account listing carries its tokens' latest use.
func TestManageAccountsShowLastUse(t *testing.T) {
	ctx := context.Background()
	m := newManaged(t)
	mg := m.accounts.Manage(account.OperatorCaller)
	tok, err := mg.AddToken(ctx, "alice", "laptop", 0)
	require.NoError(t, err)
	m.clk.Advance(time.Minute)
	_, err = m.accounts.AuthenticateFrom(ctx, tok.Secret, "10.1.2.3:4")
	require.NoError(t, err)
	list, err := mg.Accounts(ctx)
	require.NoError(t, err)
	for _, a := range list {
		if a.ID != "alice" {
			assert.True(t, a.LastUsed.IsZero(), a.ID)
			continue
		}
		assert.Equal(t, 2, a.Tokens)
		assert.Equal(t, m.clk.Now(), a.LastUsed)
		assert.Equal(t, "10.1.2.3", a.RemoteAddr)
		assert.Equal(t, account.Operator, a.CreatedBy)
	}
}

func TestCount(t *testing.T) {
	ctx := t.Context()
	m := newManaged(t)
	mg := m.accounts.Manage(account.OperatorCaller)
	_, err := mg.AddToken(ctx, "alice", "short", time.Minute)
	require.NoError(t, err)
	_, err = mg.RevokeToken(ctx, m.token["bob"])
	require.NoError(t, err)
	_, err = mg.RevokeCredential(ctx, m.cred["bob"])
	require.NoError(t, err)
	m.clk.Advance(time.Minute)
	c, err := m.accounts.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[account.Role]int{account.RoleAdmin: 1, account.RoleUser: 2}, c.Accounts)
	assert.Equal(t, map[string]int{account.StateActive: 2, account.StateRevoked: 1, account.StateExpired: 1}, c.Tokens)
	assert.Equal(t, map[string]int{account.StateActive: 2, account.StateRevoked: 1}, c.Credentials)
}

// TestWhatAnExpiringTokenMakesExpiresWithIt: a caller whose token expires at until makes
// tokens, accounts' first tokens and enrollment keys that expire by until: one asked to never
// expire or to outlive it is cut to it (and says so), a shorter one stands.
func TestWhatAnExpiringTokenMakesExpiresWithIt(t *testing.T) {
	m := newManaged(t)
	ctx := t.Context()
	now := m.clk.Now()
	until := now.Add(time.Hour)
	alice := m.accounts.Manage(account.Caller{Account: "alice", Until: until})
	root := m.accounts.Manage(account.Caller{Account: "root", Admin: true, Until: until})

	for _, c := range []struct {
		ttl  time.Duration
		want time.Time
		cut  bool
	}{{0, until, true}, {2 * time.Hour, until, true}, {time.Minute, now.Add(time.Minute), false}, {time.Hour, until, true}} {
		n, err := alice.AddToken(ctx, "alice", "asked "+c.ttl.String(), c.ttl)
		require.NoError(t, err)
		assert.Equal(t, c.want, n.Token.ExpiresAt, "asked %s", c.ttl)
		assert.Equal(t, c.cut, n.ExpiresWithCaller, "asked %s", c.ttl)
	}
	n, err := root.AddAccount(ctx, "carol", account.RoleUser)
	require.NoError(t, err)
	assert.Equal(t, until, n.Token.ExpiresAt, "an account's first token")
	assert.True(t, n.ExpiresWithCaller)
	_, k, err := m.accounts.IssueEnrollmentKeyBy(ctx, "alice", "alice", 0, 0, until)
	require.NoError(t, err)
	assert.Equal(t, until, k.ExpiresAt, "a key")

	forever, err := m.accounts.Manage(account.Caller{Account: "alice"}).AddToken(ctx, "alice", "forever", 0)
	require.NoError(t, err)
	assert.True(t, forever.Token.ExpiresAt.IsZero(), "a token that never expires makes one that never does")
	assert.False(t, forever.ExpiresWithCaller)
}

// TestAWholeSecretGivenForAnIDIsNotEchoed: a user revoking another account's token, credential
// or enrollment key by the whole secret (POST /trapos/tokens/tsa_…_…/revoke) is told not found,
// as by its id, and the answer names the secret by its kind and id alone: it echoed the
// secret whole, into the answer and whatever logs or shows it.
func TestAWholeSecretGivenForAnIDIsNotEchoed(t *testing.T) {
	m := newManaged(t)
	ctx := t.Context()
	op := m.accounts.Manage(account.OperatorCaller)
	tok, err := op.AddToken(ctx, "bob", "laptop", 0)
	require.NoError(t, err)
	cred, err := op.AddCredential(ctx, "bob")
	require.NoError(t, err)
	alice := m.accounts.Manage(account.Caller{Account: "alice"})
	for what, secret := range map[string]string{"token": tok.Secret, "credential": cred.Secret} {
		var err error
		if what == "token" {
			_, err = alice.RevokeToken(ctx, secret)
		} else {
			_, err = alice.RevokeCredential(ctx, secret)
		}
		require.ErrorIs(t, err, account.ErrNotFound, what)
		_, _, secretPart := strings.Cut(strings.TrimPrefix(secret, secret[:4]), "_")
		assert.NotContains(t, err.Error(), secretPart, what)
		kind, selector, _ := account.Identify(secret)
		assert.Equal(t, fmt.Sprintf(`%s "%s_%s_…" (a whole secret, shown without its secret part: its id is %q): not found`, what, kind, selector, selector), err.Error())
	}
	assert.Equal(t, `"7:kitchen"`, account.ShowID("7:kitchen"), "any other id as it is")
}
