package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/testkit"
)

// callerModule answers the caller the API auth put in the request's context.
type callerModule struct{}

func (callerModule) Name() string { return "caller" }

func (callerModule) Mount(routes *Routes) {
	routes.HandleAPIFunc("GET /api/caller", func(w http.ResponseWriter, r *http.Request) {
		c := account.CallerFrom(r.Context())
		_, _ = io.WriteString(w, c.Account)
		if c.Admin {
			_, _ = io.WriteString(w, " admin")
		}
		if c.Only != "" {
			_, _ = io.WriteString(w, " only "+c.Only)
		}
	})
}

// TestAPIAuthWithAPass: a gateway pass opens the caller it was granted for, from loopback
// beside the API token; an unknown pass is refused, never taken for something else.
func TestAPIAuthWithAPass(t *testing.T) {
	passes := account.NewPasses()
	pass := account.NewPass()
	passes.Grant(pass, account.Caller{Account: "alice", Only: "5:desk"})
	s := New(slog.New(slog.DiscardHandler), Config{APIToken: "tok3n", Passes: passes}, callerModule{})
	rec := serve(s, http.MethodGet, "/api/caller", "127.0.0.1:5000", pass)
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "alice only 5:desk", rec.Body.String())

	rec = serve(s, http.MethodGet, "/api/caller", "127.0.0.1:5000", account.NewPass())
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Contains(t, rec.Body.String(), "unknown gateway pass")
	noPasses := New(slog.New(slog.DiscardHandler), Config{APIToken: "tok3n"}, callerModule{})
	assert.Equal(t, http.StatusUnauthorized, serve(noPasses, http.MethodGet, "/api/caller", "127.0.0.1:5000", pass).Code)
}

// TestAPIAuthWithAccounts: an account's token is its account from any address, an admin's
// is admin; SANDBOX_API_TOKEN and a loopback client without a token stay local's admin; a
// wrong, revoked or expired account token is refused with why, even from loopback.
func TestAPIAuthWithAccounts(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	accounts := account.New(account.NewMemory(), clk)
	alice, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	root, err := accounts.AddAccount(ctx, "root", account.RoleAdmin, "first")
	require.NoError(t, err)
	short, tok, err := accounts.IssueToken(ctx, "alice", "short", time.Hour)
	require.NoError(t, err)

	for name, cfg := range map[string]Config{"no api token": {}, "api token": {APIToken: "tok3n"}} {
		t.Run(name, func(t *testing.T) {
			cfg.Accounts = accounts
			s := New(slog.New(slog.DiscardHandler), cfg, callerModule{})
			get := func(remote, token string) (int, string) {
				rec := serve(s, http.MethodGet, "/api/caller", remote, token)
				return rec.Code, rec.Body.String()
			}
			code, body := get("192.0.2.7:5555", alice)
			assert.Equal(t, http.StatusOK, code, body)
			assert.Equal(t, "alice", body)
			code, body = get("192.0.2.7:5555", root)
			assert.Equal(t, http.StatusOK, code, body)
			assert.Equal(t, "root admin", body)
			code, body = get("127.0.0.1:1", testkit.WrongSecret(alice))
			assert.Equal(t, http.StatusUnauthorized, code, "a wrong account token is refused, even from loopback")
			assert.Contains(t, body, "unknown or wrong account token")
			if cfg.APIToken != "" {
				code, body = get("192.0.2.7:5555", "tok3n")
			} else {
				code, body = get("127.0.0.1:1", "")
			}
			assert.Equal(t, http.StatusOK, code, body)
			assert.Equal(t, "local admin", body)
		})
	}

	s := New(slog.New(slog.DiscardHandler), Config{Accounts: accounts}, callerModule{})
	clk.Advance(time.Hour)
	rec := serve(s, http.MethodGet, "/api/caller", "192.0.2.7:5555", short)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	// A sentence, not an error chain (`the token "short": expired: ask …`).
	assert.Contains(t, rec.Body.String(), `the token \"short\" has expired: ask the account's holder or an admin for a new one`)
	_, err = accounts.RevokeToken(ctx, "alice", tok.Selector)
	require.NoError(t, err)
	toks, err := accounts.Store().Tokens(ctx, "alice")
	require.NoError(t, err)
	for _, tk := range toks {
		_, err = accounts.RevokeToken(ctx, "", tk.Selector)
		require.NoError(t, err)
	}
	rec = serve(s, http.MethodGet, "/api/caller", "192.0.2.7:5555", alice)
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "a revoked token stops at the next request")
	assert.Regexp(t, `the token \\"[a-z]+\\" was revoked: ask the account's holder or an admin for a new one`, rec.Body.String())
}

// TestARefusedTokenIsNamedAsTokensListNamesIt: the 401 of a revoked or expired token names it
// as tokens list shows it (cctext.ShowName), where it was quoted raw: a name kept before the
// rules, lаptop with a Cyrillic а, read as laptop, and a no-break space as \u00a0 where the
// listing says \xa0.
func TestARefusedTokenIsNamedAsTokensListNamesIt(t *testing.T) {
	ctx := t.Context()
	clk := clock.NewFake(time.Date(2026, 12, 8, 3, 0, 0, 0, time.UTC))
	memory := account.NewMemory()
	accounts := account.New(memory, clk)
	_, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	for kept, shown := range map[string]string{
		`l\u0430ptop`:    `l\x5cu0430ptop`, // a backslash that would start an escape
		"l\u0430ptop":    `l\u0430ptop`,
		"my\u00a0pc":     `my\xa0pc`,
		"Alice's \"pc\"": `Alice's "pc"`,
	} {
		t.Run(shown, func(t *testing.T) {
			plain, tok, err := accounts.IssueToken(ctx, "alice", "x", time.Hour)
			require.NoError(t, err)
			s := New(slog.New(slog.DiscardHandler), Config{Accounts: account.New(renamed{memory, kept}, clk)}, callerModule{})
			_, err = accounts.RevokeToken(ctx, "alice", tok.Selector)
			require.NoError(t, err)
			rec := serve(s, http.MethodGet, "/api/caller", "192.0.2.7:5555", plain)
			assert.Equal(t, http.StatusUnauthorized, rec.Code)
			var answer Answer
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &answer), rec.Body.String())
			require.NotNil(t, answer.Error, rec.Body.String())
			assert.Equal(t, `the token "`+shown+`" was revoked: ask the account's holder or an admin for a new one (trap-sandbox tokens add)`, answer.Error.Message)
		})
	}
}

// renamed is a store whose tokens read with the name name, as a store written before the
// rules of a token's name may hold it.
type renamed struct {
	account.Store
	name string
}

func (r renamed) Token(ctx context.Context, selector string) (account.Token, error) {
	t, err := r.Store.Token(ctx, selector)
	t.Name = r.name
	return t, err
}

// TestAPIAuthRefusesAReservedAccountsToken: an account named as the built-in one ("local")
// that a store holds from before the names were reserved is not the built-in account: its
// token is refused, saying why, and never admitted as local's.
func TestAPIAuthRefusesAReservedAccountsToken(t *testing.T) {
	ctx := t.Context()
	store := account.NewMemory()
	accounts := account.New(store, clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
	require.NoError(t, store.CreateAccount(ctx, account.Account{ID: account.Local, Role: account.RoleUser}))
	plain, _, err := accounts.IssueToken(ctx, account.Local, "first", 0)
	require.NoError(t, err)
	s := New(slog.New(slog.DiscardHandler), Config{Accounts: accounts}, callerModule{})
	rec := serve(s, http.MethodGet, "/api/caller", "192.0.2.7:5555", plain)
	assert.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `of account \"local\": the account's name is the gateway's own`)
	assert.Contains(t, rec.Body.String(), "trap-sandbox accounts add NAME")
}

// TestMetricsAreForAdmins: /metrics holds gateway-wide numbers (accounts, tokens, every
// connected computer), so a user account's token (or a pass limited to one computer) gets
// 403; an admin account's token, SANDBOX_API_TOKEN and a loopback client without a token read
// them as before.
func TestMetricsAreForAdmins(t *testing.T) {
	ctx := t.Context()
	accounts := account.New(account.NewMemory(), clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
	alice, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	root, err := accounts.AddAccount(ctx, "root", account.RoleAdmin, "first")
	require.NoError(t, err)
	passes := account.NewPasses()
	pass := account.NewPass()
	passes.Grant(pass, account.Caller{Account: "root", Admin: true, Only: "5:desk"})
	for name, cfg := range map[string]Config{"no api token": {}, "api token": {APIToken: "tok3n"}} {
		t.Run(name, func(t *testing.T) {
			cfg.Accounts, cfg.Passes, cfg.Metrics = accounts, passes, prometheus.NewRegistry()
			s := New(slog.New(slog.DiscardHandler), cfg, callerModule{})
			rec := serve(s, http.MethodGet, MetricsPath, "192.0.2.7:5555", alice)
			assert.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
			assert.Contains(t, rec.Body.String(), `"code":"forbidden"`)
			assert.Contains(t, rec.Body.String(), `the gateway's metrics are for an admin, and this token is of \"alice\", a user`)
			assert.Equal(t, http.StatusForbidden, serve(s, http.MethodGet, MetricsPath, "127.0.0.1:5555", pass).Code, "a pass for one computer")
			assert.Equal(t, http.StatusOK, serve(s, http.MethodGet, MetricsPath, "192.0.2.7:5555", root).Code)
			if cfg.APIToken != "" {
				assert.Equal(t, http.StatusOK, serve(s, http.MethodGet, MetricsPath, "192.0.2.7:5555", "tok3n").Code)
			} else {
				assert.Equal(t, http.StatusOK, serve(s, http.MethodGet, MetricsPath, "127.0.0.1:5555", "").Code)
			}
			assert.Equal(t, http.StatusOK, serve(s, http.MethodGet, "/api/caller", "192.0.2.7:5555", alice).Code, "the user's other routes stand")
		})
	}
}

// unreachableStore is an account store whose token reads fail, as the NATS one's do while
// NATS is away.
type unreachableStore struct{ account.Store }

func (unreachableStore) Token(context.Context, string) (account.Token, error) {
	return account.Token{}, errors.New("read token: context deadline exceeded")
}

// TestAPIAuthLogsAStoreThatFails: a token that cannot be checked is a 500 that tells the
// caller what to do (a player with a token, who cannot read the log, was told only that the
// store failed), and the gateway's log says why, once per request.
func TestAPIAuthLogsAStoreThatFails(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	memory := account.NewMemory()
	alice, err := account.New(memory, clk).AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	var logs testkit.SyncBuffer
	s := New(slog.New(slog.NewTextHandler(&logs, nil)), Config{Accounts: account.New(unreachableStore{memory}, clk)}, callerModule{})
	rec := serve(s, http.MethodGet, "/api/caller", "192.0.2.7:5555", alice)
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Contains(t, rec.Body.String(), "cannot check the token: the account store failed; try again, and if it fails again, ask the gateway's operator (its log says why)")
	assert.NotContains(t, rec.Body.String(), "deadline")
	assert.Contains(t, logs.String(), `level=ERROR msg="API auth: cannot check an account token: the account store failed" err="read token: context deadline exceeded"`)
	assert.NotContains(t, logs.String(), alice, "the token is never logged")
}

// TestARelayedInputsTokenIdOnlyStopsIt: the holder's check of a relayed input's tokenId (a
// message on the replicas' bus, which a forger there could write). The id of a token that still
// opens the API, of whatever account (an admin types into another account's computer), types
// on: the bus is trusted (docs/scale-out.md, Security), and a message without an id types
// whole anyway. An id of no token, or no token's shape (600 KB, bytes that are not UTF-8, as
// JSON decodes them), stops the input at its next part, unauthorized, as a revoked one does.
func TestARelayedInputsTokenIdOnlyStopsIt(t *testing.T) {
	ctx := t.Context()
	accounts := account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	_, err = accounts.AddAccount(ctx, "bob", account.RoleUser, "first")
	require.NoError(t, err)
	_, bobs, err := accounts.IssueToken(ctx, "bob", "laptop", time.Hour)
	require.NoError(t, err)
	assert.Nil(t, TokenStillAuthorized(accounts, bobs.Selector)(ctx), "another account's token that opens the API")
	for name, id := range map[string]string{"no token's": "nosuchid", "600 KB": string(make([]byte, 600_000)), "not UTF-8": "\ufffd\ufffd"} {
		pe := TokenStillAuthorized(accounts, id)(ctx)
		require.NotNil(t, pe, name)
		assert.Equal(t, "unauthorized", string(pe.Code), name)
		assert.Less(t, len(pe.Message), 300, name)
	}
	_, err = accounts.RevokeToken(ctx, "bob", bobs.Selector)
	require.NoError(t, err)
	pe := TokenStillAuthorized(accounts, bobs.Selector)(ctx)
	require.NotNil(t, pe)
	assert.Contains(t, pe.Message, "revoked")
}
