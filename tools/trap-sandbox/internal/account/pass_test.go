package account_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"trap-sandbox/internal/account"
)

func TestCallerLimitedToOneComputer(t *testing.T) {
	only := account.Caller{Account: "alice", Only: "5:desk"}
	assert.True(t, only.ReachesComputer("alice", "5:desk"))
	assert.False(t, only.ReachesComputer("alice", "6:vault"), "another computer of its account")
	assert.False(t, only.ReachesComputer("local", "5:desk"), "the same traposId in another account")
	assert.False(t, only.Reaches("alice"), "no whole account")
	assert.True(t, account.Caller{Account: "alice"}.ReachesComputer("alice", "6:vault"))
	assert.True(t, account.LocalAdmin.ReachesComputer("alice", "6:vault"))
}

func TestPasses(t *testing.T) {
	p := account.NewPasses()
	pass := account.NewPass()
	assert.True(t, account.IsPass(pass))
	assert.True(t, account.IsSecret(pass))
	assert.False(t, account.IsPass("tsa_x_y"))
	_, ok := p.Caller(pass)
	assert.False(t, ok, "not granted yet")
	c := account.Caller{Account: "alice", Only: "5:desk"}
	p.Grant(pass, c)
	got, ok := p.Caller(pass)
	assert.True(t, ok)
	assert.Equal(t, c, got)
	_, ok = p.Caller(account.NewPass())
	assert.False(t, ok)
	p.Revoke(pass)
	_, ok = p.Caller(pass)
	assert.False(t, ok)
}
