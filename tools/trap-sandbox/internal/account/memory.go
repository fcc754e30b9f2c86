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
	tokens      secretTable[Token]
	credentials secretTable[Credential]
	links       memoryLinks // memory_link.go
}

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	return &Memory{
		accounts:    map[string]Account{},
		tokens:      newSecretTable[Token]("token"),
		credentials: newSecretTable[Credential]("credential"),
		links:       memoryLinks{codes: map[string]LinkCode{}, keys: newSecretTable[EnrollmentKey]("enrollment key")},
	}
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

// CreateAccountIf implements Store: its look and its adds are under one hold of mu.
func (m *Memory) CreateAccountIf(_ context.Context, a Account, t Token, check func([]Account) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := make([]Account, 0, len(m.accounts))
	for _, acc := range m.accounts {
		all = append(all, acc)
	}
	slices.SortFunc(all, func(a, b Account) int { return cmp.Compare(a.ID, b.ID) })
	if err := check(all); err != nil {
		return err
	}
	if _, ok := m.accounts[a.ID]; ok {
		return exists("account", a.ID)
	}
	if _, err := m.tokens.get(t.Selector); err == nil {
		return exists("token", t.Selector)
	}
	m.accounts[a.ID] = a
	return m.tokens.create(m.accounts, t)
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
	return m.tokens.create(m.accounts, t)
}

// CreateTokenIf implements Store: its look and its add are under one hold of mu.
func (m *Memory) CreateTokenIf(_ context.Context, t Token, check func([]Token) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := check(m.tokens.list(t.AccountID)); err != nil {
		return err
	}
	return m.tokens.create(m.accounts, t)
}

// Token implements Store.
func (m *Memory) Token(_ context.Context, selector string) (Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tokens.get(selector)
}

// Tokens implements Store.
func (m *Memory) Tokens(_ context.Context, accountID string) ([]Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tokens.list(accountID), nil
}

// RevokeToken implements Store.
func (m *Memory) RevokeToken(_ context.Context, selector string, at time.Time) (Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tokens.update(selector, func(t *Token) error {
		if t.RevokedAt.IsZero() {
			t.RevokedAt = at
		}
		return nil
	})
}

// SeeToken implements Store.
func (m *Memory) SeeToken(_ context.Context, selector string, at time.Time, remoteAddr string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := m.tokens.update(selector, func(t *Token) error {
		t.LastUsed, t.RemoteAddr = at, remoteAddr
		return nil
	})
	return err
}

// CreateCredential implements Store.
func (m *Memory) CreateCredential(_ context.Context, c Credential) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.credentials.create(m.accounts, c)
}

// CreateBoundCredential implements Store: its look and its add are under one hold of mu.
func (m *Memory) CreateBoundCredential(_ context.Context, c Credential) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if held := heldBound(m.credentials.list(c.AccountID), c.ComputerID); held != nil {
		return &HeldIDError{Held: *held}
	}
	return m.credentials.create(m.accounts, c)
}

// CreateApprovedCredential implements Store: its looks and its add are under one hold of mu.
func (m *Memory) CreateApprovedCredential(_ context.Context, c Credential, approvedToken string, exclusive bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var acc *Account
	if a, ok := m.accounts[c.AccountID]; ok {
		acc = &a
	}
	var tok *Token
	if t, err := m.tokens.get(approvedToken); err == nil {
		tok = &t
	}
	if err := approvalStanding(c, acc, approvedToken, tok); err != nil {
		return err
	}
	if held := heldBound(m.credentials.list(c.AccountID), c.ComputerID); exclusive && held != nil {
		return &HeldIDError{Held: *held}
	}
	return m.credentials.create(m.accounts, c)
}

// Credential implements Store.
func (m *Memory) Credential(_ context.Context, selector string) (Credential, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.credentials.get(selector)
}

// Credentials implements Store.
func (m *Memory) Credentials(_ context.Context, accountID string) ([]Credential, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.credentials.list(accountID), nil
}

// RevokeCredential implements Store.
func (m *Memory) RevokeCredential(_ context.Context, selector string, at time.Time) (Credential, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.credentials.update(selector, func(c *Credential) error {
		if c.RevokedAt.IsZero() {
			c.RevokedAt = at
		}
		return nil
	})
}

// SeeCredential implements Store.
func (m *Memory) SeeCredential(_ context.Context, selector string, at time.Time, traposID, remoteAddr string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := m.credentials.update(selector, func(c *Credential) error {
		c.LastSeen, c.LastTraposID, c.RemoteAddr = at, traposID, remoteAddr
		return nil
	})
	return err
}

// Close implements Store; a Memory store needs no closing.
func (m *Memory) Close() error { return nil }

// RemoveAccount implements Store: under the store's lock, so it is one change.
func (m *Memory) RemoveAccount(_ context.Context, id string, _ time.Time) (Removed, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.accounts[id]
	if !ok {
		return Removed{}, notFound("account", id)
	}
	if a.Role == RoleAdmin {
		admins := 0
		for _, other := range m.accounts {
			if other.Role == RoleAdmin {
				admins++
			}
		}
		if admins <= 1 {
			return Removed{}, lastAdmin(id)
		}
	}
	r := Removed{Account: a, Tokens: m.tokens.remove(id), Credentials: m.credentials.remove(id), EnrollmentKeys: m.links.keys.remove(id)}
	for codeID, c := range m.links.codes {
		if c.AccountID == id {
			if c.State == LinkApproved {
				r.LinkCodes++
			}
			delete(m.links.codes, codeID)
		}
	}
	delete(m.accounts, id)
	return r, nil
}
