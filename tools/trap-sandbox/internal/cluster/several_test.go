package cluster

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// watchScreen is GET …/screen on r as a viewer asks it (a loopback caller: an admin); a
// refused watch is an ordinary answer, which it returns with its status.
func (r *replica) watchScreen(t *testing.T, traposID string) (int, server.Answer) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, r.srv.URL+"/trapos/computers/"+url.PathEscape(traposID)+"/screen", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NotEqual(t, http.StatusOK, resp.StatusCode, "the watch was expected to be refused")
	var out server.Answer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// TestSeveralAccountsComputerIsNamedAsSuchThroughAnyReplica: alice's and bob's computers are
// both 7:door, both on replica b. An admin naming 7:door through replica a gets b's own
// answer: not_connected with the accounts that have it (error.accounts), so that the caller
// (the web console, the CLI) knows that only another token picks one, for a request and for
// a live screen alike.
func TestSeveralAccountsComputerIsNamedAsSuchThroughAnyReplica(t *testing.T) {
	tc := newTestCluster(t)
	accounts, alice, _ := sharedAccounts(t)
	_, err := accounts.AddAccount(t.Context(), "bob", account.RoleUser, "first")
	require.NoError(t, err)
	bob, _, err := accounts.IssueCredential(t.Context(), "bob", "bob")
	require.NoError(t, err)
	a := tc.startReplicaWith("a", gateway.Config{Accounts: accounts})
	b := tc.startReplicaWith("b", gateway.Config{Accounts: accounts})
	b.connectWith(t, "7:door", alice)
	b.connectWith(t, "7:door", bob)
	a.waitComputers(t, "7:door@b", "7:door@b")

	const message = "computer 7:door is connected in several accounts (alice, bob): use one of those accounts' tokens to reach it"
	want := &protocol.Error{Code: protocol.CodeNotConnected, Message: message, Accounts: []string{"alice", "bob"}}
	for _, r := range []*replica{b, a} {
		res := await(t, r.request("7:door", gateway.TypePing, nil, waitLimit))
		assert.Equal(t, http.StatusNotFound, res.status, "a request through replica %s", r.name)
		assert.Equal(t, want, res.body.Error, "a request through replica %s", r.name)

		status, answer := r.watchScreen(t, "7:door")
		assert.Equal(t, http.StatusNotFound, status, "a live screen through replica %s", r.name)
		assert.Equal(t, want, answer.Error, "a live screen through replica %s", r.name)
	}
}

// TestTheGatewaysOwnCallerPicksNoLocalComputerOfAnotherAccountsTraposIDThroughAnyReplica:
// alice's 7:door on replica b, and a computer on the shared password (local) saying hello as
// 7:door on replica a. The gateway's own caller (loopback) reached local's through a, its
// "own", which any player's program may be: through either replica it is told that several
// accounts have 7:door, for a request and for a live screen alike, whichever replica holds
// local's.
func TestTheGatewaysOwnCallerPicksNoLocalComputerOfAnotherAccountsTraposIDThroughAnyReplica(t *testing.T) {
	tc := newTestCluster(t)
	accounts, alice, _ := sharedAccounts(t)
	a := tc.startReplicaWith("a", gateway.Config{Accounts: accounts})
	b := tc.startReplicaWith("b", gateway.Config{Accounts: accounts})
	b.connectWith(t, "7:door", alice)
	a.connect(t, "7:door")
	a.waitComputers(t, "7:door@a", "7:door@b")
	b.waitComputers(t, "7:door@a", "7:door@b")

	for _, r := range []*replica{a, b} {
		res := await(t, r.request("7:door", gateway.TypePing, nil, waitLimit))
		assert.Equal(t, http.StatusNotFound, res.status, "a request through replica %s", r.name)
		require.NotNil(t, res.body.Error, "a request through replica %s", r.name)
		assert.Equal(t, []string{"alice", "local"}, res.body.Error.Accounts, "a request through replica %s", r.name)

		status, answer := r.watchScreen(t, "7:door")
		assert.Equal(t, http.StatusNotFound, status, "a live screen through replica %s", r.name)
		assert.Equal(t, []string{"alice", "local"}, answer.Error.Accounts, "a live screen through replica %s", r.name)
	}
}
