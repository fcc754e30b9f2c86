package account_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
)

// TestRevocationFeedListsWhatAnotherProcessRevoked: the gateway's store (with the feed) and a
// command's store (another *sql.DB on the same file, as `trap-sandbox credentials revoke`
// beside a running gateway) share a data directory; the feed lists each credential the
// command revokes at its next look, nothing while the file is unchanged, and a revocation
// that commits well after its own time all the same.
func TestRevocationFeedListsWhatAnotherProcessRevoked(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	gateway, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer gateway.Close()
	command, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer command.Close()

	clk := clock.NewFake(time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC))
	accounts, selectors := aliceWithCredentials(ctx, t, command, clk, 3)
	// One revoked before the gateway starts: its hello is refused, the feed has no socket to close.
	_, err = accounts.RevokeCredential(ctx, "", selectors[0])
	require.NoError(t, err)
	clk.Advance(2 * time.Minute)

	feed, err := gateway.FollowRevocations(ctx, clk.Now())
	require.NoError(t, err)
	defer feed.Close()
	got, err := feed.Next(ctx, clk.Now())
	require.NoError(t, err)
	assert.Empty(t, got, "revoked two minutes before the gateway started")

	_, err = accounts.RevokeCredential(ctx, "", selectors[1])
	require.NoError(t, err)
	clk.Advance(account.RevocationPeriod)
	got, err = feed.Next(ctx, clk.Now())
	require.NoError(t, err)
	assert.Equal(t, []string{selectors[1]}, got, "the command's revocation, at the next look")

	clk.Advance(account.RevocationPeriod)
	got, err = feed.Next(ctx, clk.Now())
	require.NoError(t, err)
	assert.Empty(t, got, "the file did not change: nothing is read")

	// A revocation timed before the last look that commits after it (it waited for another
	// writer) is listed at the look after (with the one before it, again).
	revokedAt := clk.Now().Add(-10 * time.Second)
	_, err = command.RevokeCredential(ctx, selectors[2], revokedAt)
	require.NoError(t, err)
	clk.Advance(account.RevocationPeriod)
	got, err = feed.Next(ctx, clk.Now())
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{selectors[1], selectors[2]}, got)
}

// TestRevocationFeedListsTheGatewaysOwnRevocations: a revocation through the gateway's own
// store (its API, which also closes the socket itself) is listed as well; closing twice is
// harmless.
func TestRevocationFeedListsTheGatewaysOwnRevocations(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := account.OpenSQLite(ctx, t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	clk := clock.NewFake(time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC))
	accounts, selectors := aliceWithCredentials(ctx, t, s, clk, 1)
	feed, err := s.FollowRevocations(ctx, clk.Now())
	require.NoError(t, err)
	defer feed.Close()
	got, err := feed.Next(ctx, clk.Now())
	require.NoError(t, err)
	assert.Empty(t, got)

	_, err = accounts.RevokeCredential(ctx, "alice", selectors[0])
	require.NoError(t, err)
	clk.Advance(account.RevocationPeriod)
	got, err = feed.Next(ctx, clk.Now())
	require.NoError(t, err)
	assert.Equal(t, []string{selectors[0]}, got)
}

// TestRevocationFeedListsRemovedAccountsCredentials: removing an account on the data directory
// (`trap-sandbox accounts remove` beside a running gateway) lists its credentials at the
// gateway's next look, as revoking them would: their rows are gone, their computers' sockets
// must close all the same.
func TestRevocationFeedListsRemovedAccountsCredentials(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	gateway, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer gateway.Close()
	command, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer command.Close()
	clk := clock.NewFake(time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC))
	accounts, selectors := aliceWithCredentials(ctx, t, command, clk, 2)
	feed, err := gateway.FollowRevocations(ctx, clk.Now())
	require.NoError(t, err)
	defer feed.Close()
	got, err := feed.Next(ctx, clk.Now())
	require.NoError(t, err)
	assert.Empty(t, got)

	_, err = accounts.RemoveAccount(ctx, "alice")
	require.NoError(t, err)
	clk.Advance(account.RevocationPeriod)
	got, err = feed.Next(ctx, clk.Now())
	require.NoError(t, err)
	assert.ElementsMatch(t, selectors, got, "the removed account's credentials, at the next look")
}

// aliceWithCredentials makes the account alice in store, with n credentials issued at clk's
// time; it returns Accounts on store and the credentials' selectors.
func aliceWithCredentials(ctx context.Context, t *testing.T, store account.Store, clk clock.Clock, n int) (*account.Accounts, []string) {
	t.Helper()
	accounts := account.New(store, clk)
	_, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "operator")
	require.NoError(t, err)
	var selectors []string
	for range n {
		_, c, err := accounts.IssueCredential(ctx, "alice", "operator")
		require.NoError(t, err)
		selectors = append(selectors, c.Selector)
	}
	return accounts, selectors
}
