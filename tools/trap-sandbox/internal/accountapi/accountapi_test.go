package accountapi_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/accountapi"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// apiToken is the gateway's own SANDBOX_API_TOKEN in these tests.
const apiToken = "gateway-tok3n"

// syncBuffer is a log sink the server's goroutines write while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fixture is a real HTTP server with the account API on a memory store holding root (an
// admin), alice and bob (users), each with a token and a credential.
type fixture struct {
	url      string
	accounts *account.Accounts
	clk      *clock.Fake
	token    map[string]account.NewAccount
	cred     map[string]account.NewCredential
	revoked  chan string
	removed  chan []string // the account removed, then its credentials
	log      *syncBuffer
	metrics  *prometheus.Registry
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureOn(t, account.NewMemory())
}

// newFixtureOn is newFixture on store.
func newFixtureOn(t *testing.T, store account.Store) *fixture {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC))
	f := &fixture{accounts: account.New(store, clk), clk: clk, token: map[string]account.NewAccount{},
		cred: map[string]account.NewCredential{}, revoked: make(chan string, 16), removed: make(chan []string, 4), log: &syncBuffer{}, metrics: prometheus.NewRegistry()}
	op := f.accounts.Manage(account.OperatorCaller)
	for _, id := range []string{"root", "alice", "bob"} {
		role := account.RoleUser
		if id == "root" {
			role = account.RoleAdmin
		}
		n, err := op.AddAccount(t.Context(), id, role)
		require.NoError(t, err)
		f.token[id] = n
		c, err := op.AddCredential(t.Context(), id)
		require.NoError(t, err)
		f.cred[id] = c
	}
	logger := slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mod := accountapi.New(f.accounts, logger).Metrics(f.metrics).OnCredentialRevoked(func(sel string) { f.revoked <- sel }).
		OnAccountRemoved(func(id string, creds []string) ([]string, []string) {
			f.removed <- append([]string{id}, creds...)
			return []string{"7:kitchen"}, []string{"8:desk"}
		})
	s := server.New(logger, server.Config{APIToken: apiToken, Accounts: f.accounts, Metrics: f.metrics}, mod)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

func (f *fixture) client(token string) accountapi.Client {
	return accountapi.Client{URL: f.url, Token: token}
}

// TestRoutesPermissions is the permission matrix over HTTP: an admin account's token and the
// gateway's SANDBOX_API_TOKEN manage every account; a user's token its own tokens and
// credentials, and gets "needs an admin token" for adding an account; another account's
// records answer exactly as ones that do not exist; no token gets nothing.
// postAccount POSTs body as is to the accounts route with the host's token, for the bodies the
// typed client cannot send; it returns the status and the answer.
func (f *fixture) postAccount(t *testing.T, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url+accountapi.AccountsPath, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestRoutesPermissions(t *testing.T) {
	f := newFixture(t)
	t.Run("wrong token", func(t *testing.T) {
		_, err := f.client("tsa_nope_nope").AddAccount(t.Context(), "carol-wrong", account.RoleUser)
		var e *accountapi.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, http.StatusUnauthorized, e.Status)
		// Worded as every client command words the API auth's refusal (hostapi's Refusal): it
		// said "the gateway at … refused the token: …" here and "… answered 401: …" there.
		assert.Equal(t, "the gateway at "+f.url+" answered 401: unknown or wrong account token: check it, or ask the account's holder or an admin for a new one (trap-sandbox tokens add)"+
			" (the token refused is the one given with --api-token or SANDBOX_API_TOKEN)", e.Message)
		assert.NotContains(t, e.Message, "give an account's token", "a token was given: one fix, the gateway's")
	})
	callers := map[string]string{"admin": f.token["root"].Secret, "api token": apiToken, "user": f.token["alice"].Secret, "none": ""}
	for name, token := range callers {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			c := f.client(token)
			admin := name == "admin" || name == "api token"
			newName := "carol-" + strings.ReplaceAll(name, " ", "-")

			n, err := c.AddAccount(ctx, newName, account.RoleUser)
			switch {
			case admin:
				require.NoError(t, err)
				assert.Equal(t, newName, n.Account.ID)
				assert.NotEmpty(t, n.Account.CreatedBy)
				got, err := f.accounts.Authenticate(ctx, n.Secret)
				require.NoError(t, err, "the printed token works at once")
				assert.Equal(t, newName, got.ID)
			case name == "user":
				require.ErrorIs(t, err, account.ErrForbidden)
				assert.Contains(t, err.Error(), "needs an admin token")
			default:
				var e *accountapi.Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, http.StatusUnauthorized, e.Status)
				assert.True(t, strings.HasPrefix(e.Message, "the gateway at "+f.url+" answered 401: "), e.Message)
				assert.True(t, strings.HasSuffix(e.Message, "(give the API token with --api-token or SANDBOX_API_TOKEN)"), "the gateway's own token is one too: %s", e.Message)
			}
			if name == "none" {
				for _, call := range []func() error{
					func() error { _, err := c.Accounts(ctx); return err },
					func() error { _, err := c.Tokens(ctx, "alice"); return err },
					func() error { _, err := c.RevokeToken(ctx, f.token["alice"].Token.Selector); return err },
					func() error { _, err := c.Credentials(ctx, ""); return err },
					func() error { _, err := c.AddCredential(ctx, "alice"); return err },
				} {
					var e *accountapi.Error
					require.ErrorAs(t, call(), &e)
					assert.Equal(t, http.StatusUnauthorized, e.Status)
				}
				return
			}

			list, err := c.Accounts(ctx)
			require.NoError(t, err)
			var ids []string
			for _, a := range list {
				ids = append(ids, a.ID)
			}
			if admin {
				assert.Subset(t, ids, []string{"alice", "bob", "root", newName})
			} else {
				assert.Equal(t, []string{"alice"}, ids, "a user sees its own account only")
			}

			// bob's records, for alice, answer as zed's (an account that does not exist).
			if !admin {
				_, errBob := c.Tokens(ctx, "bob")
				_, errZed := c.Tokens(ctx, "zed")
				require.ErrorIs(t, errBob, account.ErrNotFound)
				assert.Equal(t, strings.ReplaceAll(errZed.Error(), "zed", "bob"), errBob.Error())
				_, errBob = c.Credentials(ctx, "bob")
				require.ErrorIs(t, errBob, account.ErrNotFound)
				_, errBob = c.AddToken(ctx, "bob", "x", 0)
				require.ErrorIs(t, errBob, account.ErrNotFound)
				_, errBob = c.AddCredential(ctx, "bob")
				require.ErrorIs(t, errBob, account.ErrNotFound)
				_, errBob = c.RevokeToken(ctx, f.token["bob"].Token.Selector)
				_, errZed = c.RevokeToken(ctx, "nosuchtoken")
				require.ErrorIs(t, errBob, account.ErrNotFound)
				assert.Equal(t, strings.ReplaceAll(errZed.Error(), "nosuchtoken", f.token["bob"].Token.Selector), errBob.Error())
				_, errBob = c.RevokeCredential(ctx, f.cred["bob"].Credential.Selector)
				require.ErrorIs(t, errBob, account.ErrNotFound)
			}

			// alice's own, by alice or an admin: list, add, revoke.
			tok, err := c.AddToken(ctx, "alice", "laptop", 2*time.Hour)
			require.NoError(t, err)
			assert.Equal(t, f.clk.Now().Add(2*time.Hour), tok.Token.ExpiresAt)
			_, err = f.accounts.Authenticate(ctx, tok.Secret)
			require.NoError(t, err)
			toks, err := c.Tokens(ctx, "alice")
			require.NoError(t, err)
			assert.NotEmpty(t, toks)
			for _, tk := range toks {
				assert.Equal(t, "alice", tk.AccountID)
				assert.Empty(t, tk.Hash, "no hash leaves the gateway")
			}
			revoked, err := c.RevokeToken(ctx, tok.Token.Selector)
			require.NoError(t, err)
			assert.Equal(t, f.clk.Now(), revoked.RevokedAt)
			_, err = f.accounts.Authenticate(ctx, tok.Secret)
			require.ErrorIs(t, err, account.ErrRevoked)

			cred, err := c.AddCredential(ctx, "alice")
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(cred.Secret, "tsc_"))
			creds, err := c.Credentials(ctx, "")
			require.NoError(t, err)
			owners := map[string]bool{}
			for _, cr := range creds {
				owners[cr.AccountID] = true
			}
			if admin {
				assert.True(t, owners["bob"], "an admin's \"\" is every account's")
			} else {
				assert.Equal(t, map[string]bool{"alice": true}, owners)
			}
			rc, err := c.RevokeCredential(ctx, cred.Credential.Selector)
			require.NoError(t, err)
			assert.False(t, rc.RevokedAt.IsZero())
			select {
			case sel := <-f.revoked:
				assert.Equal(t, cred.Credential.Selector, sel, "the gateway is told, to close the computer's socket")
			default:
				t.Fatal("the revocation did not reach the gateway")
			}
		})
	}
	logged := f.log.String()
	for _, n := range f.token {
		assert.NotContains(t, logged, n.Secret[len(n.Secret)-12:], "no secret in the log")
	}
}

// TestRoutesBadInput: bad input gets 400 bad_payload naming what is wrong; a name taken gets
// 409 exists; the service goes on.
func TestRoutesBadInput(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	c := f.client(apiToken)
	_, err := c.AddAccount(ctx, "Bad Name!", account.RoleUser)
	require.ErrorIs(t, err, account.ErrInvalid)
	assert.Contains(t, err.Error(), "use 1 to 63 characters")
	_, err = c.AddAccount(ctx, "alice", account.RoleUser)
	require.ErrorIs(t, err, account.ErrExists)
	_, err = c.AddToken(ctx, "alice", "", 0)
	require.ErrorIs(t, err, account.ErrInvalid)
	assert.Contains(t, err.Error(), "needs a name")

	userTok := f.client(f.token["alice"].Secret)
	for _, name := range []string{"a\x00b\nc", "ci\u2028root", "x\u009b2J", strings.Repeat("n", account.MaxTokenName+1)} {
		_, err = userTok.AddToken(ctx, "", name, 0)
		require.ErrorIs(t, err, account.ErrInvalid, "%q: a user's token cannot forge a line of the admin's listing", name)
		assert.Contains(t, err.Error(), "token name ", "%q", name)
	}
	// A lifetime past the cap is told the cap, not "give a positive number" (it is one).
	_, err = c.AddToken(ctx, "alice", "big", 1000000*time.Hour)
	require.ErrorIs(t, err, account.ErrInvalid)
	assert.Equal(t, "expiresInSeconds 3600000000: give a number of seconds from 1 to 3153600000 (100 years), or 0 for a token that never expires", err.Error())
	toks, err := c.Tokens(ctx, "alice")
	require.NoError(t, err)
	assert.Len(t, toks, 1, "none was made")

	for _, body := range []string{`{"id":`, `{"id":"x","role":"admin"}`, `[]`} {
		status, answer := f.postAccount(t, body)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Contains(t, answer, `"code":"bad_payload"`, body)
	}
	_, err = c.AddAccount(ctx, "dave", account.RoleAdmin)
	require.NoError(t, err, "the service goes on")
}

// A body of the wrong shape is told in the API's terms (server.BodyError), not in the words
// encoding/json has for the Go struct behind the route, and its message starts with them: it
// was "invalid: …", the store's word for the kind, which the code (bad_payload) says.
func TestABadBodyNamesTheField(t *testing.T) {
	f := newFixture(t)
	for body, want := range map[string]string{
		`{"id":5}`:            `"message":"\"id\" must be a string (got a number)"`,
		`{"id":"x","age":1}`:  `"message":"the body has a field the route does not take, \"age\": send a JSON object {\"id\":..., \"admin\":...}"`,
		`{"id":"x","ID":"y"}`: `"message":"the body names the keys \"id\" and \"ID\", which the gateway reads as one`,
	} {
		status, answer := f.postAccount(t, body)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Contains(t, answer, want, body)
		assert.NotContains(t, answer, "Go struct", body)
	}
}

// TestABodyTooLargeSaysSo: a body over the route's limit is answered 413 with the limit, in
// the API's error shape, not as JSON cut short.
func TestABodyTooLargeSaysSo(t *testing.T) {
	f := newFixture(t)
	status, answer := f.postAccount(t, `{"id":"`+strings.Repeat("a", 5<<20)+`"}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status)
	assert.JSONEq(t, `{"ok":false,"error":{"code":"bad_payload","message":"the body is larger than 65536 bytes, the most this route takes: send a smaller one"}}`, answer)
}

// TestNoAccounts: a gateway without an account store answers every route with the fix.
func TestNoAccounts(t *testing.T) {
	s := server.New(slog.New(slog.DiscardHandler), server.Config{}, accountapi.New(nil, slog.New(slog.DiscardHandler)).Metrics(prometheus.NewRegistry()))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	_, err := accountapi.Client{URL: ts.URL}.Accounts(context.Background())
	var e *accountapi.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusServiceUnavailable, e.Status)
	assert.Equal(t, accountapi.CodeNoAccounts, e.Code)
	assert.Contains(t, e.Message, "--data-dir")
}

// TestNoGatewayNamesTheFixOnce: nothing listening at --url is said once, with its fix (the
// account commands added "(is it running there? --url names it)" to a message that says so).
func TestNoGatewayNamesTheFixOnce(t *testing.T) {
	_, err := accountapi.Client{URL: "http://127.0.0.1:1"}.Accounts(t.Context())
	assert.EqualError(t, err, "no gateway is listening at http://127.0.0.1:1 (connection refused): start it (trap-sandbox), or give its URL with --url or SANDBOX_URL")
}

// TestGatewayErrorsNamedOnce: a URL that is no gateway URL, or a gateway that takes the call
// and never answers, is said as the other client commands say it, with no hint of the account
// commands' own (they added "(is it running there? --url names it)" to a malformed URL, where
// nothing can run, and to a hung gateway, which runs).
func TestGatewayErrorsNamedOnce(t *testing.T) {
	_, err := accountapi.Client{URL: "127.0.0.1:4444"}.Accounts(t.Context())
	assert.EqualError(t, err, hostapi.CheckURL("127.0.0.1:4444").Error())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	held := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			held <- c // taken, never answered
		}
	}()
	t.Cleanup(func() {
		select {
		case c := <-held:
			_ = c.Close()
		default:
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	url := "http://" + ln.Addr().String()
	_, err = accountapi.Client{URL: url}.Accounts(ctx)
	assert.EqualError(t, err, hostapi.SilentGatewayError{URL: url}.Error())
}

// TestAnHTTPSURLForAPlainGatewayIsSaidAsTheOtherCommandsSayIt: the client's own words about
// a URL that reaches no gateway's API (here https:// for a gateway serving plain HTTP) read as
// every other command reads them, where the account commands put the code in front
// ("accounts list: internal: the gateway at …").
func TestAnHTTPSURLForAPlainGatewayIsSaidAsTheOtherCommandsSayIt(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	url := "https://" + strings.TrimPrefix(srv.URL, "http://")
	_, err := accountapi.Client{URL: url}.Accounts(t.Context())
	_, want := hostapi.HTTP{URL: url}.Computers(t.Context())
	require.Error(t, want)
	assert.EqualError(t, err, want.(*protocol.Error).Message)
	assert.True(t, strings.HasPrefix(err.Error(), "the gateway at "+url+" answers plain HTTP"), err.Error())
}

// TestMetrics: the gauges are the store's counts at the scrape.
func TestMetrics(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	c := f.client(apiToken)
	_, err := c.RevokeCredential(ctx, f.cred["bob"].Credential.Selector)
	require.NoError(t, err)
	_, err = c.AddToken(ctx, "alice", "short", time.Minute)
	require.NoError(t, err)
	f.clk.Advance(time.Minute)

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url+server.MetricsPath, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	body := string(b)
	for _, line := range []string{
		`trapos_accounts{role="admin"} 1`,
		`trapos_accounts{role="user"} 2`,
		`trapos_account_tokens{state="active"} 3`,
		`trapos_account_tokens{state="expired"} 1`,
		`trapos_account_tokens{state="revoked"} 0`,
		`trapos_account_credentials{state="active"} 2`,
		`trapos_account_credentials{state="revoked"} 1`,
		`trapos_api_auth_refused_total{reason="bad_token"} 0`,
	} {
		assert.Contains(t, body, line+"\n")
	}
}

// TestRemoveAccountRoute: DELETE /trapos/accounts/{name} removes an account for an admin only
// (a user's token: 403 naming the token that would do), never the caller's own nor the last
// admin (403 with the fix), an unknown one is 404; a removal answers what went, hands the
// credentials to the gateway (which closes their computers and says which), logs who did it,
// and the account's token is refused from the next request; the gauges count what is left.
func TestRemoveAccountRoute(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	status := func(err error) int {
		t.Helper()
		var e *accountapi.Error
		require.ErrorAs(t, err, &e)
		return e.Status
	}

	_, err := f.client(f.token["alice"].Secret).RemoveAccount(ctx, "bob")
	assert.Equal(t, http.StatusForbidden, status(err))
	assert.ErrorIs(t, err, account.ErrForbidden)
	assert.True(t, strings.HasPrefix(err.Error(), `removing an account needs an admin token, and this one is of "alice", a user`),
		"the message is the sentence, not \"forbidden: …\" (the code says that): %s", err)
	_, err = f.client(f.token["alice"].Secret).RemoveAccount(ctx, "alice")
	assert.Equal(t, http.StatusForbidden, status(err), "a user does not remove its own account either")

	root := f.client(f.token["root"].Secret)
	_, err = root.RemoveAccount(ctx, "root")
	assert.Equal(t, http.StatusForbidden, status(err))
	assert.Contains(t, err.Error(), "an admin does not remove itself")
	_, err = root.RemoveAccount(ctx, "zed")
	assert.Equal(t, http.StatusNotFound, status(err))
	assert.ErrorIs(t, err, account.ErrNotFound)
	_, err = f.client(apiToken).RemoveAccount(ctx, "root")
	assert.Equal(t, http.StatusForbidden, status(err))
	assert.Contains(t, err.Error(), "the last admin account: add another first (trap-sandbox accounts add NAME --admin)")
	assert.Empty(t, f.removed, "a refusal closes nothing")

	r, err := root.RemoveAccount(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, "alice", r.Account.ID)
	assert.Equal(t, []string{f.token["alice"].Token.Selector}, r.Tokens)
	assert.Equal(t, []string{f.cred["alice"].Credential.Selector}, r.Credentials)
	assert.Equal(t, []string{"7:kitchen"}, r.Closed, "the computers the gateway closed")
	assert.Equal(t, []string{"8:desk"}, r.NotClosed, "and those an older replica holds")
	assert.Equal(t, []string{"alice", f.cred["alice"].Credential.Selector}, <-f.removed)
	assert.Contains(t, f.log.String(), `msg="account API: account removed" account=alice role=user tokens=1 credentials=1 enrollmentKeys=0 linkCodes=0 by=root`)

	_, err = f.client(f.token["alice"].Secret).Accounts(ctx)
	assert.Equal(t, http.StatusUnauthorized, status(err), "the removed account's token is refused at once")
	_, err = root.RemoveAccount(ctx, "alice")
	assert.Equal(t, http.StatusNotFound, status(err))

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url+server.MetricsPath, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(b), `trapos_accounts{role="user"} 1`+"\n")
	assert.Contains(t, string(b), `trapos_account_tokens{state="active"} 2`+"\n")
}

// TestRoutesOtherUser: bob's token reaches nothing of alice's (each answered as a record that
// does not exist), and alice's token and credential still work after bob's tries.
func TestRoutesOtherUser(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	bob := f.client(f.token["bob"].Secret)
	aliceToken, aliceCred := f.token["alice"].Token.Selector, f.cred["alice"].Credential.Selector
	for name, call := range map[string]func() error{
		"tokens list":        func() error { _, err := bob.Tokens(ctx, "alice"); return err },
		"tokens add":         func() error { _, err := bob.AddToken(ctx, "alice", "mine-now", 0); return err },
		"tokens revoke":      func() error { _, err := bob.RevokeToken(ctx, aliceToken); return err },
		"credentials list":   func() error { _, err := bob.Credentials(ctx, "alice"); return err },
		"credentials add":    func() error { _, err := bob.AddCredential(ctx, "alice"); return err },
		"credentials revoke": func() error { _, err := bob.RevokeCredential(ctx, aliceCred); return err },
	} {
		err := call()
		require.ErrorIs(t, err, account.ErrNotFound, name)
		var e *accountapi.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, http.StatusNotFound, e.Status, name)
	}
	// An account named is told apart from a record not found, so the CLI names the fix (another
	// token), yet alice's and one that does not exist answer the same.
	_, errAlice := bob.Tokens(ctx, "alice")
	_, errNobody := bob.Tokens(ctx, "zed")
	for _, err := range []error{errAlice, errNobody} {
		require.ErrorIs(t, err, account.ErrNotReached)
	}
	assert.Equal(t, strings.Replace(errAlice.Error(), `"alice"`, `"zed"`, 1), errNobody.Error())
	_, err := f.client(f.token["root"].Secret).Tokens(ctx, "zed")
	require.ErrorIs(t, err, account.ErrNotFound)
	assert.NotErrorIs(t, err, account.ErrNotReached, "an admin's is an account that does not exist")
	list, err := bob.Accounts(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "bob", list[0].ID)
	_, err = f.accounts.Authenticate(ctx, f.token["alice"].Secret)
	require.NoError(t, err, "alice's token still works")
	_, err = f.accounts.AuthenticateComputer(ctx, f.cred["alice"].Secret, "7:", "127.0.0.1:1")
	require.NoError(t, err, "alice's credential still works")
	toks, err := f.accounts.Store().Tokens(ctx, "alice")
	require.NoError(t, err)
	assert.Len(t, toks, 1, "bob gave alice no token")
}

// TestChangesAreLoggedWithoutTheirSecrets: every change made through the API is one info
// line naming who made it and what changed, so an operator can tell who issued or revoked a
// token from the log; the secrets it returned are in no line, and a refused change logs none.
func TestChangesAreLoggedWithoutTheirSecrets(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	root := f.client(f.token["root"].Secret)

	n, err := root.AddAccount(ctx, "dave", account.RoleUser)
	require.NoError(t, err)
	tok, err := root.AddToken(ctx, "dave", "laptop", time.Hour)
	require.NoError(t, err)
	_, err = root.RevokeToken(ctx, tok.Token.Selector)
	require.NoError(t, err)
	forever, err := root.AddToken(ctx, "dave", "ci", 0)
	require.NoError(t, err)
	cred, err := f.client(apiToken).AddCredential(ctx, "dave")
	require.NoError(t, err)
	_, err = root.RevokeCredential(ctx, cred.Credential.Selector)
	require.NoError(t, err)
	_, err = f.client(f.token["alice"].Secret).AddAccount(ctx, "mallory", account.RoleAdmin)
	require.ErrorIs(t, err, account.ErrForbidden)

	logs := f.log.String()
	for _, want := range []string{
		`msg="account API: account added" account=dave role=user tokenId=` + n.Token.Selector + ` by=root remote=127.0.0.1:`,
		`msg="account API: token added" account=dave tokenId=` + tok.Token.Selector + ` name=laptop expiresIn=1h0m0s by=root`,
		`msg="account API: token added" account=dave tokenId=` + forever.Token.Selector + ` name=ci expiresIn=never by=root`,
		`msg="account API: token revoked" account=dave tokenId=` + tok.Token.Selector + ` name=laptop by=root`,
		`msg="account API: credential added" account=dave credentialId=` + cred.Credential.Selector + ` by=local`,
		`msg="account API: credential revoked" account=dave credentialId=` + cred.Credential.Selector,
	} {
		assert.Contains(t, logs, want)
	}
	assert.NotContains(t, logs, "mallory", "a refused change is not logged as made")
	for _, secret := range []string{n.Secret, tok.Secret, forever.Secret, cred.Secret, f.token["root"].Secret, apiToken} {
		assert.NotContains(t, logs, secret)
	}
}

// TestALoggedTokenNameIsShownAsTokensListShowsIt: the audit line of a token added or revoked
// names it as tokens list shows it (cctext.ShowName), where it was the name raw: a name kept
// before the rules, lаptop with a Cyrillic а, read as laptop, and a space after another as
// one.
func TestALoggedTokenNameIsShownAsTokensListShowsIt(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	root := f.client(f.token["root"].Secret)
	require.NoError(t, f.accounts.Store().CreateToken(ctx, account.Token{Selector: "legacy", Hash: []byte("h"), AccountID: "alice", Name: "l\u0430ptop"}))
	_, err := root.RevokeToken(ctx, "legacy")
	require.NoError(t, err)
	spaced, err := root.AddToken(ctx, "alice", "my  pc", 0)
	require.NoError(t, err)
	logs := f.log.String()
	assert.Contains(t, logs, `msg="account API: token revoked" account=alice tokenId=legacy name=l\u0430ptop by=root`)
	assert.Contains(t, logs, `msg="account API: token added" account=alice tokenId=`+spaced.Token.Selector+` name="my \\x20pc" expiresIn=never by=root`)
}

// fullStore is a memory store on a disk that filled up once full is set: it reads, but
// refuses to add a token or revoke a credential, as SQLite on a full disk does.
type fullStore struct {
	*account.Memory
	full atomic.Bool
}

func (s *fullStore) refusal() error {
	return &fs.PathError{Op: "write", Path: "/srv/ts/accounts.db-wal", Err: syscall.ENOSPC}
}

func (s *fullStore) CreateToken(ctx context.Context, tok account.Token) error {
	if s.full.Load() {
		return fmt.Errorf("add token: %w", s.refusal())
	}
	return s.Memory.CreateToken(ctx, tok)
}

func (s *fullStore) CreateTokenIf(ctx context.Context, tok account.Token, check func([]account.Token) error) error {
	if s.full.Load() {
		return fmt.Errorf("add token: %w", s.refusal())
	}
	return s.Memory.CreateTokenIf(ctx, tok, check)
}

func (s *fullStore) RevokeCredential(ctx context.Context, selector string, at time.Time) (account.Credential, error) {
	if s.full.Load() {
		return account.Credential{}, fmt.Errorf("revoke credential %q: %w", selector, s.refusal())
	}
	return s.Memory.RevokeCredential(ctx, selector, at)
}

// TestAFullDiskIsSaidToTheCaller: a change the store cannot write for want of room (a full
// disk) answered "the account store failed; try again", which trying again never fixes, and
// the player holding a user's token could not tell the operator what to do. The answer says
// the disk is full and whose fix that is; the gateway's log has the store's own words.
func TestAFullDiskIsSaidToTheCaller(t *testing.T) {
	store := &fullStore{Memory: account.NewMemory()}
	f := newFixtureOn(t, store)
	store.full.Store(true)
	alice := f.client(f.token["alice"].Secret)
	_, errAdd := alice.AddToken(t.Context(), "", "laptop", 0)
	_, errRevoke := alice.RevokeCredential(t.Context(), f.cred["alice"].Credential.Selector)
	for _, err := range []error{errAdd, errRevoke} {
		var e *accountapi.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, http.StatusInternalServerError, e.Status)
		assert.Equal(t, "the gateway could not write its account store: its disk is full; ask the gateway's operator to make room (its log names the store), then try again", err.Error())
	}
	assert.Contains(t, f.log.String(), "accounts.db-wal: no space left on device", "the log has the store's own words")
}

// TestAStoreFailureIsLoggedWithTheStoresFile: the gateway's log of a SQLite store that failed
// after the start read err="add token: …" alone, while the caller was sent to the log for the
// store: the operator could not tell which file it was. The log names it; the caller reads
// no path of the host.
func TestAStoreFailureIsLoggedWithTheStoresFile(t *testing.T) {
	dir := t.TempDir()
	store, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	f := newFixtureOn(t, store)
	path := filepath.Join(dir, account.DBFile)
	db, err := sql.Open("sqlite", path) // another process on the file, as an operator's sqlite3 would be
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(t.Context(), "CREATE TRIGGER no_tokens BEFORE INSERT ON tokens BEGIN SELECT RAISE(FAIL, 'disk I/O error'); END")
	require.NoError(t, err)

	_, err = f.client(f.token["alice"].Secret).AddToken(t.Context(), "", "laptop", 0)
	var e *accountapi.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusInternalServerError, e.Status)
	assert.NotContains(t, err.Error(), dir)
	// Who met it, from where, with which token, as the lines of the changes say (the failure's
	// line had no caller at all): never the token's secret.
	assert.Regexp(t, `msg="account API: the account store failed" err="the account store `+regexp.QuoteMeta(path)+`: add token: constraint failed: disk I/O error \(1811\)" by=alice remote=127\.0\.0\.1:\d+ byToken=`+f.token["alice"].Token.Selector+`\n`, f.log.String())
	assert.NotContains(t, f.log.String(), f.token["alice"].Secret)
}

// TestAnEmptyListingIsAnArray: an account without credentials listed them as null (the store
// gives none as nil), where docs/http-api.md and every other listing answer an array.
func TestAnEmptyListingIsAnArray(t *testing.T) {
	f := newFixture(t)
	dave, err := f.accounts.Manage(account.OperatorCaller).AddAccount(t.Context(), "dave", account.RoleUser)
	require.NoError(t, err)
	for _, path := range []string{accountapi.CredentialsPath, accountapi.CredentialsPath + "?account=dave"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.url+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+dave.Secret)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, resp.Body.Close())
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
		assert.JSONEq(t, `[]`, string(b), path)
	}
}

// TestARevocationTakesNoFields: a revocation sent with a field ({"dryRun":true}, a misspelt
// flag of a script's) is refused and revokes nothing, where the body was not read and the
// token or credential was revoked all the same; {} and no body at all revoke.
func TestARevocationTakesNoFields(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	post := func(path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+apiToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	tok := "/trapos/tokens/" + f.token["alice"].Token.Selector + "/revoke"
	cred := "/trapos/credentials/" + f.cred["alice"].Credential.Selector + "/revoke"
	for _, path := range []string{tok, cred} {
		status, body := post(path, `{"dryRun":true}`)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Contains(t, body, `"message":"the body has a field the route does not take, \"dryRun\": send a JSON object {}"`)
	}
	toks, err := f.accounts.Manage(account.OperatorCaller).Tokens(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, toks[0].RevokedAt.IsZero(), "the token is not revoked")
	select {
	case sel := <-f.revoked:
		t.Fatalf("credential %s revoked", sel)
	default:
	}

	status, body := post(tok, `{}`)
	assert.Equal(t, http.StatusOK, status, body)
	status, body = post(cred, ``)
	assert.Equal(t, http.StatusOK, status, body)
	select {
	case sel := <-f.revoked: // sent before the answer
		assert.Equal(t, f.cred["alice"].Credential.Selector, sel)
	default:
		t.Fatal("the credential's socket was not closed")
	}
}
