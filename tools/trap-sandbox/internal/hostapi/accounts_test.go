package hostapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// TestGatewayTransportServesTheCaller: the in-process Transport shows each caller its own
// account's computers; an admin reaches any, its own account's first when several accounts
// have the traposId, and is told which accounts when none is its own; no caller reaches none.
func TestGatewayTransportServesTheCaller(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.Real{})
	creds, tokens := map[string]string{}, map[string]string{}
	for _, id := range []string{"alice", "bob", "root"} {
		role := account.RoleUser
		if id == "root" {
			role = account.RoleAdmin
		}
		var err error
		tokens[id], err = accounts.AddAccount(t.Context(), id, role, "first")
		require.NoError(t, err)
		creds[id], _, err = accounts.IssueCredential(t.Context(), id, "root")
		require.NoError(t, err)
	}
	logger := slog.New(slog.DiscardHandler)
	gw := gateway.New(gateway.Config{Accounts: accounts}, logger, nil)
	srv := httptest.NewServer(server.New(logger, server.Config{Accounts: accounts}, gw, hostapi.New(computer.New(hostapi.NewGateway(gw)))).Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		assert.NoError(t, gw.Shutdown(ctx))
		srv.Close()
	})
	for _, c := range []struct{ account, traposID string }{{"alice", "0:"}, {"bob", "0:"}, {"bob", "5:"}, {"root", "5:"}} {
		connectAs(t, gw, srv, c.traposID, creds[c.account], func(string, json.RawMessage) map[string]any {
			return map[string]any{"ok": true, "payload": map[string]any{"traposId": c.account + "'s " + c.traposID}}
		})
	}
	client := computer.New(hostapi.NewGateway(gw))
	as := func(c account.Caller) context.Context { return account.WithCaller(t.Context(), c) }
	alice, root := as(account.Caller{Account: "alice"}), as(account.Caller{Account: "root", Admin: true})

	list, err := client.Computers(alice)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "alice", list[0].AccountID)
	list, err = client.Computers(root)
	require.NoError(t, err)
	assert.Len(t, list, 4)
	list, err = client.Computers(t.Context())
	require.NoError(t, err)
	assert.Empty(t, list, "no caller, no computers")

	p, err := client.Ping(alice, "0:", 0)
	require.NoError(t, err)
	assert.Equal(t, "alice's 0:", p.TraposID)
	_, err = client.Ping(alice, "5:", 0)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err))
	assert.Equal(t, "not_connected: computer 5: is not connected; this token reaches account alice's computers only; trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers)",
		err.Error(), "as any computer that is not connected, with the caller's own reach: no hint names another account's")

	p, err = client.Ping(root, "5:", 0)
	require.NoError(t, err)
	assert.Equal(t, "root's 5:", p.TraposID, "the admin's own account first")
	_, err = client.Ping(root, "0:", 0)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err))
	assert.ErrorContains(t, err, "connected in several accounts (alice, bob)")
	ambiguous, ok := errors.AsType[*protocol.Error](err)
	require.True(t, ok)
	assert.Equal(t, []string{"alice", "bob"}, ambiguous.Accounts)
	// The API's answer names them as a field too: a client (the web console) tells "which
	// one?" from a computer that is away, and does not ask again.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/trapos/computers/0:/requests", strings.NewReader(`{"type":"ping"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tokens["root"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.JSONEq(t, `{"ok":false,"error":{"code":"not_connected","accounts":["alice","bob"],
		"message":"computer 0: is connected in several accounts (alice, bob): use one of those accounts' tokens to reach it"}}`, string(body))

	// A caller limited to one computer (the agent's pass for bob's 5:) reaches it alone: not
	// bob's 0:, not root's 5:, whatever it names.
	only := as(account.Caller{Account: "bob", Only: "5:"})
	list, err = client.Computers(only)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, [2]string{"bob", "5:"}, [2]string{list[0].AccountID, list[0].TraposID})
	p, err = client.Ping(only, "5:", 0)
	require.NoError(t, err)
	assert.Equal(t, "bob's 5:", p.TraposID)
	_, err = client.Ping(only, "0:", 0)
	assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err))
	assert.ErrorContains(t, err, "reaches only computer 5:")
}

// TestSeveralAccountsWithLocalNameTheGatewaysToken: when one of the accounts that have a
// traposId is local (the shared password's computers), no token reaches its computer, the
// gateway's own neither: any computer with the shared password may say hello under any
// traposId, so a player's program saying hello as bob's linked 20: took the operator's requests
// meant for bob's computer (the list showing it as bob's, its link in the web console the same).
// The answer names the accounts, and the fix for local's; a traposId of local's alone is the
// gateway's own caller's as ever.
func TestSeveralAccountsWithLocalNameTheGatewaysToken(t *testing.T) {
	accounts := account.New(account.NewMemory(), clock.Real{})
	var creds []string
	for _, id := range []string{"alice", "bob", "root"} {
		role := account.RoleUser
		if id == "root" {
			role = account.RoleAdmin
		}
		_, err := accounts.AddAccount(t.Context(), id, role, "first")
		require.NoError(t, err)
		cred, _, err := accounts.IssueCredential(t.Context(), id, "root")
		require.NoError(t, err)
		creds = append(creds, cred)
	}
	logger := slog.New(slog.DiscardHandler)
	gw := gateway.New(gateway.Config{Password: "pw", Accounts: accounts}, logger, nil)
	srv := httptest.NewServer(server.New(logger, server.Config{Accounts: accounts}, gw).Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		assert.NoError(t, gw.Shutdown(ctx))
		srv.Close()
	})
	answersAs := func(who string) func(string, json.RawMessage) map[string]any {
		return func(string, json.RawMessage) map[string]any {
			return map[string]any{"ok": true, "payload": map[string]any{"who": who}}
		}
	}
	for _, c := range []struct{ traposID, secret string }{{"20:", creds[1]}, {"20:", "pw"}, {"21:", creds[0]}, {"21:", creds[1]}, {"21:", "pw"}, {"22:", "pw"}} {
		connectAs(t, gw, srv, c.traposID, c.secret, answersAs(c.traposID+" "+c.secret))
	}
	client := computer.New(hostapi.NewGateway(gw))
	root := account.WithCaller(t.Context(), account.Caller{Account: "root", Admin: true})
	host := account.WithCaller(t.Context(), account.LocalAdmin)
	const fix = "no token reaches local's while another account has this traposId connected, since any computer with the shared password may say hello under it: " +
		"give that computer a label of its own in game (label set NAME), or link it (sandbox link)"

	for name, ctx := range map[string]context.Context{"an admin": root, "the gateway's own caller": host} {
		_, err := client.Ping(ctx, "20:", 0)
		assert.Equal(t, protocol.CodeNotConnected, protocol.CodeOf(err), name)
		assert.EqualError(t, err, "not_connected: computer 20: is connected in several accounts (bob, local): use bob's token to reach bob's; "+fix, name)
		_, err = client.Ping(ctx, "21:", 0)
		assert.EqualError(t, err, "not_connected: computer 21: is connected in several accounts (alice, bob, local): use alice's or bob's token to reach theirs; "+fix, name)
	}
	bob := account.WithCaller(t.Context(), account.Caller{Account: "bob"})
	answer, _, err := client.Request(bob, "20:", "ping", nil, 0)
	require.NoError(t, err)
	assert.JSONEq(t, `{"who":"20: `+creds[1]+`"}`, string(answer), "bob's token reaches bob's")
	answer, _, err = client.Request(host, "22:", "ping", nil, 0)
	require.NoError(t, err, "local's alone is the gateway's own caller's")
	assert.JSONEq(t, `{"who":"22: pw"}`, string(answer))

	// The computer meant is named once, however many accounts have it: "did you mean "20:"
	// or "20:"?" offered a choice that is none (asking for it says which accounts have it).
	_, err = client.Ping(root, "20", 0)
	assert.EqualError(t, err, `not_connected: computer 20 is not connected; did you mean "20:"?`)
	_, err = client.Ping(root, "21", 0)
	assert.EqualError(t, err, `not_connected: computer 21 is not connected; did you mean "21:"?`)
}

// connectAs says hello as traposID with secret and answers every gateway_request with
// answer(type, payload) → the computer_response's fields, until the test ends.
func connectAs(t *testing.T, gw *gateway.Gateway, srv *httptest.Server, traposID, secret string, answer func(typ string, payload json.RawMessage) map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	before := len(gw.Computers())
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+gateway.WebSocketPath, nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() })
	require.NoError(t, conn.WriteJSON(map[string]any{"event": "computer_request", "traposSenderId": traposID,
		"messageId": "hello", "type": "hello", "payload": map[string]any{"traposId": traposID, "secret": secret}}))
	go func() {
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			f, err := protocol.DecodeFrame(data)
			if err != nil || f.Event != protocol.EventGatewayRequest {
				continue
			}
			out := answer(f.Type, f.Payload)
			out["event"], out["traposSenderId"], out["messageId"], out["type"] = "computer_response", traposID, f.MessageID, f.Type
			if conn.WriteJSON(out) != nil {
				return
			}
		}
	}()
	require.Eventually(t, func() bool { return len(gw.Computers()) > before }, testTimeout, 5*time.Millisecond)
}
