package accounttest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
)

// RunRevokedAsItLinks: a player's yes to a link code is taken on the gateway whose store is
// gateway, and in the instant between the code's use (after the approval was checked) and the
// issue of the computer's credential, something happens through other (another replica's
// connection to the bucket, or an account command beside the gateway on its data directory;
// the suite passes one store as both). Each time the credential is refused and none is left
// that opens the account:
//   - the API token that approved the code is revoked: ErrApprovalRevoked;
//   - the admin account whose token approved the code into another account is removed (its
//     token is gone with it): ErrApprovalRevoked;
//   - the account the code was approved into is removed and made again under its name (a new
//     account, which inherits nothing of the removed one): ErrCodeUnknown, as a code the
//     removal deleted.
func RunRevokedAsItLinks(t *testing.T, gateway, other account.Store) {
	ctx := ctxOf(t)
	clk := clock.NewFake(t0)
	hooked := &betweenUseAndIssue{Store: gateway}
	a := account.New(hooked, clk)
	operator := account.New(other, clk)
	tokens := map[string]string{} // account → the id of its first API token
	for _, acc := range []struct {
		id   string
		role account.Role
	}{{"alice", account.RoleUser}, {"bob", account.RoleUser}, {"carol", account.RoleUser}, {"root", account.RoleAdmin}, {"ops", account.RoleAdmin}} {
		plain, err := a.AddAccount(ctx, acc.id, acc.role, "laptop")
		require.NoError(t, err)
		tokens[acc.id] = account.TokenID(plain)
	}
	approved := func(traposID, into, by, token string) string {
		t.Helper()
		code, _, err := a.BeginLink(ctx, traposID, "10.0.0.5:1", 0)
		require.NoError(t, err)
		_, err = a.ApproveLinkWithToken(ctx, code, into, by, token)
		require.NoError(t, err)
		return code
	}
	noLiveCredential := func(accountID, why string) {
		t.Helper()
		creds, err := other.Credentials(ctx, accountID)
		require.NoError(t, err)
		for _, c := range creds {
			assert.False(t, c.RevokedAt.IsZero(), "%s: credential %s of %s (computer %s) opens the account", why, c.Selector, accountID, c.ComputerID)
		}
	}

	t.Run("TokenRevoked", func(t *testing.T) {
		code := approved("7:kitchen", "alice", "alice", tokens["alice"])
		hooked.arm(func() {
			_, err := operator.RevokeToken(ctx, "alice", tokens["alice"])
			require.NoError(t, err)
		})
		plain, _, err := a.AcceptLinkExclusive(ctx, code, "7:kitchen", true)
		require.True(t, hooked.ran(), "the revocation came between the code's use and the credential's issue")
		require.ErrorIs(t, err, account.ErrApprovalRevoked)
		assert.Empty(t, plain)
		noLiveCredential("alice", "a credential issued after its approving token was revoked")
	})

	t.Run("AdminRemoved", func(t *testing.T) {
		code := approved("8:hall", "bob", "root (admin)", tokens["root"])
		hooked.arm(func() {
			_, err := operator.RemoveAccount(ctx, "root")
			require.NoError(t, err)
		})
		plain, _, err := a.AcceptLink(ctx, code, "8:hall", true)
		require.True(t, hooked.ran())
		require.ErrorIs(t, err, account.ErrApprovalRevoked, "the approving token went with its account")
		assert.Empty(t, plain)
		noLiveCredential("bob", "a credential issued after the admin whose token approved it was removed")
	})

	t.Run("AccountRemovedAndMadeAgain", func(t *testing.T) {
		code := approved("9:turtle", "carol", account.Local, "")
		hooked.arm(func() {
			_, err := operator.RemoveAccount(ctx, "carol")
			require.NoError(t, err)
			clk.Advance(time.Second) // the new carol is another incarnation of the name
			_, err = operator.AddAccount(ctx, "carol", account.RoleUser, "laptop")
			require.NoError(t, err)
		})
		plain, _, err := a.AcceptLink(ctx, code, "9:turtle", true)
		require.True(t, hooked.ran())
		require.ErrorIs(t, err, account.ErrCodeUnknown, "the account that approved the code is gone")
		assert.Empty(t, plain)
		creds, err := other.Credentials(ctx, "carol")
		require.NoError(t, err)
		assert.Empty(t, creds, "the new carol holds no credential of the old one's code")
	})
}

// betweenUseAndIssue is a store that runs an armed step once, right after an update marks a
// link code accepted: AcceptLink has checked the approval and used the code, and has not
// issued the computer's credential yet.
type betweenUseAndIssue struct {
	account.Store
	mu    sync.Mutex
	step  func()
	fired bool
}

// arm sets the step the next accept runs.
func (s *betweenUseAndIssue) arm(step func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.step, s.fired = step, false
}

// ran reports whether the armed step ran.
func (s *betweenUseAndIssue) ran() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fired
}

func (s *betweenUseAndIssue) UpdateLinkCode(ctx context.Context, id string, change func(*account.LinkCode) error) (account.LinkCode, error) {
	c, err := s.Store.UpdateLinkCode(ctx, id, change)
	if err == nil && c.State == account.LinkAccepted {
		s.mu.Lock()
		step := s.step
		s.step, s.fired = nil, step != nil
		s.mu.Unlock()
		if step != nil {
			step()
		}
	}
	return c, err
}
