package link

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
	"trap-sandbox/testkit/embeddednats"
)

// peersOf is two replicas' link modules wired to each other as the cluster's Peer wires them;
// a replica set to nil is one that cannot tell (an older trap-sandbox, no answer in time).
type peersOf map[string]*Module

func (p peersOf) Others() []string {
	var out []string
	for name := range p {
		out = append(out, name)
	}
	return out
}

func (p peersOf) Send(ctx context.Context, replica, accountID, traposID string, msg json.RawMessage, _ time.Duration) (json.RawMessage, error) {
	m := p[replica]
	if m == nil {
		return nil, errors.New("replica " + replica + " relays nothing for link")
	}
	return m.Relayed(ctx, "b", accountID, traposID, msg)
}

// TestApprovingThroughAnotherReplica: a code asked for on replica A and approved through
// replica B is refused as on one gateway when its socket on A closed, or A restarted since
// (every socket of its earlier run closed), naming the computer as the lists show it; it is
// approved while the socket is open on A, and whenever A cannot tell. B approved them all, and
// nobody could accept them.
func TestApprovingThroughAnotherReplica(t *testing.T) {
	lookAlike := protocol.Requester{TraposID: "7:kit\u00a0chen", RemoteAddr: "10.0.0.5:40000", Socket: 1}
	for _, tt := range []struct {
		name  string
		leave func(a *fixture, code string)
		peer  bool // whether A answers B
		want  string
	}{
		{"open", func(*fixture, string) {}, true, ""},
		{"closed", func(a *fixture, code string) {
			a.disconnect(lookAlike)
			require.Eventually(t, func() bool { gone, _ := a.mod.goneComputer(t.Context(), code); return gone != "" }, waitLimit, testkit.Poll,
				"the socket's close is noted in a goroutine of its own")
		}, true, `computer 7:kit\xa0chen, which showed this code, is not connected any more; run sandbox link on it again for a new code`},
		{"restarted", func(a *fixture, _ string) {
			a.disconnect(lookAlike)
			a.start(Config{Accounts: a.accounts, Clock: a.clk})
		}, true, `computer 7:kit\xa0chen, which showed this code, is not connected any more; run sandbox link on it again for a new code`},
		{"cannot tell", func(a *fixture, _ string) { a.disconnect(lookAlike) }, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newFixture(t, Config{})
			b := newFixture(t, Config{})
			b.start(Config{Accounts: a.accounts, Clock: a.clk})
			code := a.begin(lookAlike)
			tt.leave(a, code.Code)
			peer := a.mod
			if !tt.peer {
				peer = nil
			}
			b.mod.OnReplica(peersOf{"a": peer})

			status, ans := b.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
			c, err := a.accounts.LinkStatus(t.Context(), code.Code, "")
			require.NoError(t, err)
			if tt.want == "" {
				assert.Equal(t, http.StatusOK, status, "%+v", ans.Error)
				assert.Equal(t, account.LinkApproved, c.State)
				return
			}
			assert.Equal(t, http.StatusNotFound, status)
			require.NotNil(t, ans.Error)
			assert.Equal(t, &protocol.Error{Code: protocol.CodeNotConnected, Message: tt.want}, ans.Error)
			assert.Equal(t, account.LinkPending, c.State, "nothing approved")
		})
	}
}

// TestApprovalsSplitOverReplicasHitTheOneBudget: an account's approvals that a balancer
// spreads over two replicas on one accounts bucket spend one budget (10 a minute), as on one
// gateway: each replica's own budget gave it 10 more, so N replicas gave N × 10 tries a minute
// at guessing a code. The budget refills for both.
func TestApprovalsSplitOverReplicasHitTheOneBudget(t *testing.T) {
	ns := embeddednats.Start(t)
	store := func() *account.Accounts {
		s, err := account.OpenKV(t.Context(), embeddednats.JetStream(t, ns))
		require.NoError(t, err)
		return account.New(s, clock.Real{})
	}
	shared := store()
	for _, id := range []string{"alice", "bob"} {
		_, err := shared.AddAccount(t.Context(), id, account.RoleUser, "first")
		require.NoError(t, err)
	}
	a := newFixture(t, Config{Accounts: shared})
	b := newFixture(t, Config{Accounts: store()})
	guess := func(f *fixture) (int, *protocol.Error) {
		status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": "BCDF-GHJK"})
		return status, ans.Error
	}
	for i := range DefaultApprovalsPerCaller {
		status, pe := guess(map[bool]*fixture{true: a, false: b}[i%2 == 0])
		require.Equal(t, http.StatusNotFound, status, "guess %d: %+v", i, pe)
		require.Equal(t, protocol.CodeLinkInvalid, pe.Code)
	}
	for _, f := range []*fixture{a, b} {
		status, pe := guess(f)
		assert.Equal(t, http.StatusTooManyRequests, status, "%+v", pe)
		assert.Equal(t, &protocol.Error{Code: protocol.CodeBusy, Message: "too many link approvals by account alice; try again in 6 s"}, pe)
	}
	status, ans := b.api(bob, "POST", "/trapos/link/approve", map[string]any{"code": "BCDF-GHJK"})
	assert.Equal(t, http.StatusNotFound, status, "another account's budget: %+v", ans.Error)

	a.clk.Advance(6 * time.Second) // one attempt again, for whichever replica asks first
	b.clk.Advance(6 * time.Second)
	status, _ = guess(b)
	assert.Equal(t, http.StatusNotFound, status)
	status, _ = guess(a)
	assert.Equal(t, http.StatusTooManyRequests, status)
}
