package account

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// Memory is a Store in memory, for tests and for a gateway that must keep nothing.
type Memory struct {
	mu          sync.Mutex // guards the maps
	accounts    map[string]Account
	tokens      map[string]Token
	credentials map[string]Credential
	links       memoryLinks // memory_link.go
}

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	return &Memory{accounts: map[string]Account{}, tokens: map[string]Token{}, credentials: map[string]Credential{},
		links: memoryLinks{codes: map[string]LinkCode{}, keys: map[string]EnrollmentKey{}}}
}

var _ Store = (*Memory)(nil)

// CreateAccount implements Store.
func (m *Memory) CreateAccount(_ context.Context, a Account) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.accounts[a.ID]; ok {
		return exists("account", a.ID)
	}
	m.accounts[a.ID] = a
	return nil
}

// Account implements Store.
func (m *Memory) Account(_ context.Context, id string) (Account, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.accounts[id]
	if !ok {
		return Account{}, notFound("account", id)
	}
	return a, nil
}

// Accounts implements Store.
func (m *Memory) Accounts(context.Context) ([]Account, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Account, 0, len(m.accounts))
	for _, a := range m.accounts {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Account) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// CreateToken implements Store.
func (m *Memory) CreateToken(_ context.Context, t Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.accounts[t.AccountID]; !ok {
		return notFound("account", t.AccountID)
	}
	if _, ok := m.tokens[t.Selector]; ok {
		return exists("token", t.Selector)
	}
	t.Hash = slices.Clone(t.Hash)
	m.tokens[t.Selector] = t
	return nil
}

// Token implements Store.
func (m *Memory) Token(_ context.Context, selector string) (Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[selector]
	if !ok {
		return Token{}, notFound("token", selector)
	}
	t.Hash = slices.Clone(t.Hash)
	return t, nil
}

// Tokens implements Store.
func (m *Memory) Tokens(_ context.Context, accountID string) ([]Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Token
	for _, t := range m.tokens {
		if accountID == "" || t.AccountID == accountID {
			t.Hash = slices.Clone(t.Hash)
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b Token) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Selector, b.Selector))
	})
	return out, nil
}

// RevokeToken implements Store.
func (m *Memory) RevokeToken(_ context.Context, selector string, at time.Time) (Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[selector]
	if !ok {
		return Token{}, notFound("token", selector)
	}
	if t.RevokedAt.IsZero() {
		t.RevokedAt = at
		m.tokens[selector] = t
	}
	t.Hash = slices.Clone(t.Hash)
	return t, nil
}

// CreateCredential implements Store.
func (m *Memory) CreateCredential(_ context.Context, c Credential) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.accounts[c.AccountID]; !ok {
		return notFound("account", c.AccountID)
	}
	if _, ok := m.credentials[c.Selector]; ok {
		return exists("credential", c.Selector)
	}
	c.Hash = slices.Clone(c.Hash)
	m.credentials[c.Selector] = c
	return nil
}

// Credential implements Store.
func (m *Memory) Credential(_ context.Context, selector string) (Credential, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.credentials[selector]
	if !ok {
		return Credential{}, notFound("credential", selector)
	}
	c.Hash = slices.Clone(c.Hash)
	return c, nil
}

// Credentials implements Store.
func (m *Memory) Credentials(_ context.Context, accountID string) ([]Credential, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Credential
	for _, c := range m.credentials {
		if accountID == "" || c.AccountID == accountID {
			c.Hash = slices.Clone(c.Hash)
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Credential) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Selector, b.Selector))
	})
	return out, nil
}

// RevokeCredential implements Store.
func (m *Memory) RevokeCredential(_ context.Context, selector string, at time.Time) (Credential, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.credentials[selector]
	if !ok {
		return Credential{}, notFound("credential", selector)
	}
	if c.RevokedAt.IsZero() {
		c.RevokedAt = at
		m.credentials[selector] = c
	}
	c.Hash = slices.Clone(c.Hash)
	return c, nil
}

// SeeCredential implements Store.
func (m *Memory) SeeCredential(_ context.Context, selector string, at time.Time, traposID, remoteAddr string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.credentials[selector]
	if !ok {
		return notFound("credential", selector)
	}
	c.LastSeen, c.LastTraposID, c.RemoteAddr = at, traposID, remoteAddr
	m.credentials[selector] = c
	return nil
}

// SeeToken implements Store.
func (m *Memory) SeeToken(_ context.Context, selector string, at time.Time, remoteAddr string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[selector]
	if !ok {
		return notFound("token", selector)
	}
	t.LastUsed, t.RemoteAddr = at, remoteAddr
	m.tokens[selector] = t
	return nil
}

// Close implements Store; a Memory store needs no closing.
func (m *Memory) Close() error { return nil }
