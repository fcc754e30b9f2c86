package account_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"trap-sandbox/internal/account"
)

// A context carries its caller as given, the gateway's own (LocalAdmin, put in a context once
// made, without an allocation a request) as every other; one that carries none reaches nothing.
func TestAContextCarriesItsCaller(t *testing.T) {
	ctx := context.Background()
	for _, c := range []account.Caller{
		account.LocalAdmin,
		{Account: account.Local},
		{Account: "alice", Admin: true},
		{Account: "alice", Only: "5:desk", Token: "sel", Until: time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)},
	} {
		assert.Equal(t, c, account.CallerFrom(account.WithCaller(ctx, c)))
	}
	assert.Equal(t, account.Caller{}, account.CallerFrom(ctx))
	assert.False(t, account.CallerFrom(ctx).Reaches(account.Local))
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { account.WithCaller(ctx, account.LocalAdmin) }), "the context alone")
}
