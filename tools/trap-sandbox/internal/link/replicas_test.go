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
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
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
