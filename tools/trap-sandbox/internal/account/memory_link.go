package account

import (
	"context"
	"time"
)

// memoryLinks are a Memory store's link codes and enrollment keys, guarded by its mu.
type memoryLinks struct {
	codes map[string]LinkCode
	keys  secretTable[EnrollmentKey]
}

// CreateLinkCode implements Store.
func (m *Memory) CreateLinkCode(_ context.Context, c LinkCode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.links.codes[c.ID]; ok {
		return exists("link code", c.ID)
	}
	m.links.codes[c.ID] = c
	return nil
}

// LinkCode implements Store.
func (m *Memory) LinkCode(_ context.Context, id string) (LinkCode, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.links.codes[id]
	if !ok {
		return LinkCode{}, notFound("link code", id)
	}
	return c, nil
}

// UpdateLinkCode implements Store.
func (m *Memory) UpdateLinkCode(_ context.Context, id string, change func(*LinkCode) error) (LinkCode, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.links.codes[id]
	if !ok {
		return LinkCode{}, notFound("link code", id)
	}
	if err := change(&c); err != nil {
		return LinkCode{}, err
	}
	m.links.codes[id] = c
	return c, nil
}

// DeleteLinkCodes implements Store.
func (m *Memory) DeleteLinkCodes(_ context.Context, before time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, c := range m.links.codes {
		if c.ExpiresAt.Before(before) {
			delete(m.links.codes, id)
			n++
		}
	}
	return n, nil
}

// CreateEnrollmentKey implements Store.
func (m *Memory) CreateEnrollmentKey(_ context.Context, k EnrollmentKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.links.keys.create(m.accounts, k)
}

// EnrollmentKey implements Store.
func (m *Memory) EnrollmentKey(_ context.Context, selector string) (EnrollmentKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.links.keys.get(selector)
}

// EnrollmentKeys implements Store.
func (m *Memory) EnrollmentKeys(_ context.Context, accountID string) ([]EnrollmentKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.links.keys.list(accountID), nil
}

// UpdateEnrollmentKey implements Store.
func (m *Memory) UpdateEnrollmentKey(_ context.Context, selector string, change func(*EnrollmentKey) error) (EnrollmentKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.links.keys.update(selector, change)
}
