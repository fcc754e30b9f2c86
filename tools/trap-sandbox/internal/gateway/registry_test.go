package gateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func sessionFor(account, traposID string) *Session {
	return &Session{key: Key{AccountID: account, TraposID: traposID}, authenticated: true}
}

func TestMemoryRegistryNewestWins(t *testing.T) {
	r := NewMemoryRegistry()
	first := sessionFor(LocalAccount, "7:")
	second := sessionFor(LocalAccount, "7:")

	assert.Nil(t, r.Register(first))
	assert.Same(t, first, r.Lookup(Key{LocalAccount, "7:"}))

	assert.Same(t, first, r.Register(second), "the older session is handed back to be closed")
	assert.Same(t, second, r.Lookup(Key{LocalAccount, "7:"}))

	r.Unregister(first) // the replaced session ending must not evict its successor
	assert.Same(t, second, r.Lookup(Key{LocalAccount, "7:"}))

	assert.Nil(t, r.Register(second), "registering the same session again replaces nothing")

	r.Unregister(second)
	assert.Nil(t, r.Lookup(Key{LocalAccount, "7:"}))
	assert.Empty(t, r.Sessions())
}

func TestMemoryRegistryKeysByAccountAndID(t *testing.T) {
	r := NewMemoryRegistry()
	a := sessionFor("a", "7:")
	b := sessionFor("b", "7:")
	c := sessionFor("a", "7:x")
	for _, s := range []*Session{a, b, c} {
		assert.Nil(t, r.Register(s))
	}
	assert.Len(t, r.Sessions(), 3)
	assert.Same(t, b, r.Lookup(Key{"b", "7:"}))
	assert.Nil(t, r.Lookup(Key{"c", "7:"}))
}

func TestSortComputers(t *testing.T) {
	cs := []Computer{{AccountID: "b", TraposID: "1:"}, {AccountID: "a", TraposID: "2:"}, {AccountID: "a", TraposID: "10:"}}
	sortComputers(cs)
	assert.Equal(t, []Computer{{AccountID: "a", TraposID: "10:"}, {AccountID: "a", TraposID: "2:"}, {AccountID: "b", TraposID: "1:"}}, cs)
}
