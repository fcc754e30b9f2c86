package link

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
)

// approverRevoked is what the computer's player reads when they say yes to a code whose
// approving token was revoked since (or whose approving admin account was removed).
const approverRevoked = "the API token that approved the link code was revoked since it approved it; " +
	"run sandbox link again for a new code, and have it approved again with a token that is not revoked"

// TestACodeApprovedWithATokenRevokedSinceDoesNotLink: a code approved with an API token that
// is revoked before the computer's player answers y no longer links the computer: a leaked
// token's approvals die with it. The player is told to have a new code approved, the operator
// reads a WARN naming the token, and no credential is issued. So for an admin's token that
// approved into another account, and for one whose admin account was removed since (its
// tokens with it). A code approved with the gateway's own token (no token to revoke), or with
// a token still good, links as before. On one gateway (SQLite) and on two replicas over NATS,
// the code asked for on replica A and approved and revoked through replica B.
func TestACodeApprovedWithATokenRevokedSinceDoesNotLink(t *testing.T) {
	for _, tc := range twoGatewaysStores() { // tc.stores: the store of A (asks, accepts) and of B (approves)
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			stores := tc.stores(t)
			clk := clock.NewFake(t0)
			onA, onB := account.New(stores[0], clk), account.New(stores[1], clk)
			a := newFixture(t, Config{Accounts: onA})
			b := newFixture(t, Config{Accounts: onB})
			for _, acc := range []struct {
				id   string
				role account.Role
			}{{"alice", account.RoleUser}, {"root", account.RoleAdmin}, {"root2", account.RoleAdmin}} {
				_, err := onB.AddAccount(ctx, acc.id, acc.role, "first")
				require.NoError(t, err)
			}
			token := func(of string) (account.Caller, string) {
				_, tok, err := onB.IssueToken(ctx, of, "laptop", time.Hour)
				require.NoError(t, err)
				acc, err := stores[1].Account(ctx, of)
				require.NoError(t, err)
				return account.Caller{Account: of, Admin: acc.Role == account.RoleAdmin, Token: tok.Selector}, tok.Selector
			}

			for i, step := range []struct {
				name    string
				approve func() (by account.Caller, revoke func())
				links   bool
			}{
				{"alice's token revoked", func() (account.Caller, func()) {
					c, sel := token("alice")
					return c, func() { _, err := onB.RevokeToken(ctx, "alice", sel); require.NoError(t, err) }
				}, false},
				{"an admin's token revoked", func() (account.Caller, func()) {
					c, sel := token("root")
					return c, func() { _, err := onB.RevokeToken(ctx, "root", sel); require.NoError(t, err) }
				}, false},
				{"the admin's account removed", func() (account.Caller, func()) {
					c, _ := token("root2")
					return c, func() { _, err := onB.RemoveAccount(ctx, "root2"); require.NoError(t, err) }
				}, false},
				{"a token still good", func() (account.Caller, func()) {
					c, _ := token("alice")
					return c, func() {}
				}, true},
				{"the gateway's own token", func() (account.Caller, func()) {
					return account.LocalAdmin, func() {}
				}, true},
			} {
				from := protocol.Requester{TraposID: string(rune('1'+i)) + ":kitchen", RemoteAddr: "10.0.0.5:40000", Socket: uint64(i + 1)}
				code := a.begin(from)
				by, revoke := step.approve()
				status, ans := b.api(by, "POST", "/trapos/link/approve", map[string]any{"code": code.Code, "account": "alice"})
				require.Equal(t, http.StatusOK, status, "%s: %+v", step.name, ans.Error)
				revoke()

				out, pe := a.call(from, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": true})
				creds, err := stores[0].Credentials(ctx, "alice")
				require.NoError(t, err)
				linked := false
				for _, c := range creds {
					linked = linked || c.ComputerID == account.ComputerID(from.TraposID)
				}
				if step.links {
					assert.Nil(t, pe, step.name)
					assert.Contains(t, string(out), `"account":"alice"`, step.name)
					assert.True(t, linked, step.name)
					continue
				}
				require.NotNil(t, pe, "%s: the computer was linked", step.name)
				assert.Equal(t, protocol.CodeLinkInvalid, pe.Code, step.name)
				assert.Equal(t, approverRevoked, pe.Message, step.name)
				assert.False(t, linked, "%s: a credential was issued", step.name)
				assert.Contains(t, a.logs.String(), `level=WARN msg="link refused: the API token that approved its code was revoked since" module=link traposId=`+
					from.TraposID+" accountId=alice approvedBy="+logValue(approver(by, "alice"))+" byToken="+by.Token, step.name)
			}
			assert.Equal(t, 3.0, a.outcome("refused"))
			assert.Equal(t, 2.0, a.outcome("accepted"))
		})
	}
}

// logValue is v as the module's text log shows it: quoted when it holds a space.
func logValue(v string) string {
	if strings.Contains(v, " ") {
		return strconv.Quote(v)
	}
	return v
}

// TestAComputersPassManagesNoEnrollmentKeys: the agent's pass for alice's 7:kitchen (a caller
// limited to that computer) makes, lists and revokes none of alice's enrollment keys, and
// approves no link code: a pass opens that computer's tools and manages nothing
// (account.Manage). Its revocation of alice's key went through, as if it were alice's token;
// its key and its listing were refused in a user token's words ("your token is account
// alice's: only an admin's token acts for account alice"), which tell an agent holding it
// neither what it holds nor who can do it: each refusal says both.
func TestAComputersPassManagesNoEnrollmentKeys(t *testing.T) {
	f := newFixture(t, Config{})
	pass := account.Caller{Account: "alice", Only: "7:kitchen"}
	status, ans := f.api(alice, "POST", KeysPath, map[string]any{"maxUses": 1})
	require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
	var k Key
	require.NoError(t, json.Unmarshal(ans.Payload, &k))

	refused := func(does, instead string) *protocol.Error {
		return &protocol.Error{Code: protocol.CodeForbidden, Message: "this caller is the agent's pass for computer 7:kitchen of account alice: " +
			"it reaches that computer alone and manages nothing of its account, so it " + does + "; the account's holder " +
			"does, with one of account alice's API tokens or an admin's (" + instead + ")"}
	}
	for _, tc := range []struct {
		method, path string
		body         any
		want         *protocol.Error
	}{
		{"POST", KeysPath, map[string]any{"maxUses": 1}, refused("makes no enrollment key", "trap-sandbox link key")},
		{"POST", KeysPath, map[string]any{"account": "alice", "maxUses": 1}, refused("makes no enrollment key", "trap-sandbox link key")},
		{"GET", KeysPath, nil, refused("lists no enrollment keys", "trap-sandbox link keys")},
		{"GET", KeysPath + "?account=alice", nil, refused("lists no enrollment keys", "trap-sandbox link keys")},
		{"POST", "/trapos/link/keys/" + k.ID + "/revoke", nil, refused("revokes no enrollment key", "trap-sandbox link revoke-key ID")},
		{"POST", "/trapos/link/approve", map[string]any{"code": "BCDF-GHJK"}, refused("approves no link code", "trap-sandbox link approve CODE")},
	} {
		status, ans = f.api(pass, tc.method, tc.path, tc.body)
		assert.Equal(t, http.StatusForbidden, status, "%s %s: %+v", tc.method, tc.path, ans.Error)
		assert.Equal(t, tc.want, ans.Error, "%s %s", tc.method, tc.path)
	}
	keys, err := f.accounts.Store().EnrollmentKeys(t.Context(), "alice")
	require.NoError(t, err)
	require.Len(t, keys, 1)
	assert.True(t, keys[0].RevokedAt.IsZero(), "the pass revoked alice's key")
}
