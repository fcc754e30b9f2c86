package link

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit/embeddednats"
)

// barrier holds the first n arrivals until all n have arrived (or their ctx ends).
type barrier struct {
	mu   sync.Mutex
	left int
	all  chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{left: n, all: make(chan struct{})} }

func (b *barrier) arrive(ctx context.Context) {
	b.mu.Lock()
	if b.left == 0 {
		b.mu.Unlock()
		return // past the barrier's arrivals
	}
	b.left--
	if b.left == 0 {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-ctx.Done():
	}
}

// lookTogether is a store whose first reads of an account's credentials (the link module's
// look whether the account holds a computer id, heldID) wait at gate for each other: link
// sessions that all looked before any of them added its credential, whatever the scheduler
// does.
type lookTogether struct {
	account.Store
	gate *barrier
}

func (s lookTogether) Credentials(ctx context.Context, accountID string) ([]account.Credential, error) {
	creds, err := s.Store.Credentials(ctx, accountID)
	s.gate.arrive(ctx)
	return creds, err
}

// TestTwoLinkSessionsClaimingOneComputerIdWithOneKeyAtOnce: two link sessions claiming
// computer 7 with one of alice's keys, both looking whether alice holds computer 7 before
// either has its credential, on one gateway (its SQLite store) and on two replicas over NATS
// (each its own connection to the bucket). Both found 7 free, and both were issued a
// credential for alice's computer 7: whichever said hello second knocked the other off. Now
// the store adds one of them in the same step as its look, and the other is refused as a key
// used on a computer whose id the account holds, its use given back.
func TestTwoLinkSessionsClaimingOneComputerIdWithOneKeyAtOnce(t *testing.T) {
	for _, tc := range twoGatewaysStores() { // tc.stores: the store of each session's gateway
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
			defer cancel()
			stores := tc.stores(t)
			gate := newBarrier(2)
			clk := clock.NewFake(t0)
			var gateways [2]*fixture
			var accounts [2]*account.Accounts
			for i, s := range stores {
				accounts[i] = account.New(lookTogether{Store: s, gate: gate}, clk)
				if i == 1 && s == stores[0] {
					gateways[1] = gateways[0] // one gateway: both sessions on it
					continue
				}
				gateways[i] = newFixture(t, Config{Accounts: accounts[i]})
			}
			_, err := accounts[0].AddAccount(ctx, "alice", account.RoleUser, "first")
			require.NoError(t, err)
			key, _, err := accounts[0].IssueEnrollmentKey(ctx, "alice", "alice", 0, time.Hour)
			require.NoError(t, err)

			sessions := [2]protocol.Requester{
				{TraposID: "7:kitchen", RemoteAddr: "10.0.0.5:52000", Socket: 1},
				{TraposID: "7:", RemoteAddr: "10.0.0.9:53000", Socket: 2},
			}
			errs := make(chan error, 2)
			raw, err := json.Marshal(map[string]any{"key": key})
			require.NoError(t, err)
			for i, from := range sessions {
				g := gateways[i]
				go func() {
					_, err := g.gw.handlers[protocol.TypeLinkBegin](g.socketOf(from).ctx, from, raw)
					errs <- err
				}()
			}
			var linked int
			var refused []*protocol.Error
			for range sessions {
				select {
				case err := <-errs:
					if err == nil {
						linked++
						continue
					}
					pe, ok := err.(*protocol.Error)
					require.True(t, ok, "a protocol error: %v", err)
					refused = append(refused, pe)
				case <-ctx.Done():
					t.Fatal("no answer to both link sessions")
				}
			}
			require.Equal(t, 1, linked, "exactly one of the two link sessions claiming computer 7 gets a credential")
			require.Len(t, refused, 1)
			assert.Equal(t, protocol.CodeForbidden, refused[0].Code, refused[0].Message)
			assert.Equal(t, heldSeven, refused[0].Message)

			creds, err := stores[0].Credentials(ctx, "alice")
			require.NoError(t, err)
			require.Len(t, creds, 1, "one credential for alice's computer 7")
			assert.Equal(t, "7", creds[0].ComputerID)
			keys, err := stores[1].EnrollmentKeys(ctx, "alice")
			require.NoError(t, err)
			require.Len(t, keys, 1)
			assert.Equal(t, 1, keys[0].Uses, "the refused session's use given back")
		})
	}
}

// TestAnAcceptedCodeCannotTakeTheAccountsComputersPlace: a code's approval looks whether the
// account holds the code's computer id (takesPlace), but its player answers minutes later; a
// computer 7 linked into the account meanwhile (by a key, or by another code claiming 7
// approved and accepted first) was then joined by a second credential for computer 7, and the
// two knocked each other off. The later accept is refused as a key would be, and the account
// keeps one credential for computer 7.
func TestAnAcceptedCodeCannotTakeTheAccountsComputersPlace(t *testing.T) {
	for _, tc := range []struct {
		name     string
		meantime func(f *fixture)
	}{
		{"a key linked computer 7 meanwhile", func(f *fixture) {
			key, _, err := f.accounts.IssueEnrollmentKey(f.t.Context(), "alice", "alice", 0, time.Hour)
			require.NoError(f.t, err)
			turtle := protocol.Requester{TraposID: "7:turtle", RemoteAddr: "10.0.0.9:53000", Socket: 9}
			_, pe := f.call(turtle, protocol.TypeLinkBegin, map[string]any{"key": key})
			require.Nil(f.t, pe, "alice holds no computer 7 yet")
		}},
		{"another code for computer 7 was accepted first", func(f *fixture) {
			other := protocol.Requester{TraposID: "7:", RemoteAddr: "10.0.0.9:53000", Socket: 9}
			code := f.begin(other)
			status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
			require.Equal(f.t, http.StatusOK, status, "%+v", ans.Error)
			f.clk.Advance(recheckEvery) // the socket's last look is past
			_, pe := f.call(other, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": true})
			require.Nil(f.t, pe)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			code := f.begin(kitchen)
			status, ans := f.api(alice, "POST", "/trapos/link/approve", map[string]any{"code": code.Code})
			require.Equal(t, http.StatusOK, status, "%+v", ans.Error)
			tc.meantime(f)
			f.clk.Advance(recheckEvery)

			_, pe := f.call(kitchen, protocol.TypeLinkAccept, map[string]any{"code": code.Code, "accept": true})
			require.NotNil(t, pe, "a second credential for alice's computer 7 was issued")
			assert.Equal(t, protocol.CodeForbidden, pe.Code)
			assert.Equal(t, heldSeven, pe.Message)
			creds, err := f.accounts.Store().Credentials(t.Context(), "alice")
			require.NoError(t, err)
			assert.Len(t, creds, 1, "one credential for alice's computer 7")
			assert.Contains(t, f.logs.String(), `msg="link code refused: its credential could take the place of a computer of the account" module=link traposId=7:kitchen accountId=alice`)
		})
	}
}

// twoGateways names a way two gateways share their accounts, and makes the two stores.
type twoGateways struct {
	name   string
	stores func(t *testing.T) [2]account.Store
}

// twoGatewaysStores are the account stores of two gateways that share their accounts, each
// way the gateway keeps them: one gateway's SQLite file (the same store twice), and two
// replicas' stores over one NATS server.
func twoGatewaysStores() []twoGateways {
	return []twoGateways{
		{"one gateway", func(t *testing.T) [2]account.Store {
			s, err := account.OpenSQLite(t.Context(), t.TempDir())
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return [2]account.Store{s, s}
		}},
		{"two replicas over NATS", func(t *testing.T) [2]account.Store {
			url := embeddednats.Start(t)
			var out [2]account.Store
			for i := range out {
				s, err := account.OpenKV(t.Context(), embeddednats.JetStream(t, url))
				require.NoError(t, err)
				out[i] = s
			}
			return out
		}},
	}
}
