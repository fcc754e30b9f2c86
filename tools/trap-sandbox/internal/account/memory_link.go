package account

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// memoryLinks are a Memory store's link codes and enrollment keys, guarded by its mu.
type memoryLinks struct {
	codes map[string]LinkCode
	keys  map[string]EnrollmentKey
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
	if _, ok := m.accounts[k.AccountID]; !ok {
		return notFound("account", k.AccountID)
	}
	if _, ok := m.links.keys[k.Selector]; ok {
		return exists("enrollment key", k.Selector)
	}
	k.Hash = slices.Clone(k.Hash)
	m.links.keys[k.Selector] = k
	return nil
}

// EnrollmentKey implements Store.
func (m *Memory) EnrollmentKey(_ context.Context, selector string) (EnrollmentKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.links.keys[selector]
	if !ok {
		return EnrollmentKey{}, notFound("enrollment key", selector)
	}
	k.Hash = slices.Clone(k.Hash)
	return k, nil
}

// EnrollmentKeys implements Store.
func (m *Memory) EnrollmentKeys(_ context.Context, accountID string) ([]EnrollmentKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []EnrollmentKey
	for _, k := range m.links.keys {
		if accountID == "" || k.AccountID == accountID {
			k.Hash = slices.Clone(k.Hash)
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b EnrollmentKey) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Selector, b.Selector))
	})
	return out, nil
}

// UpdateEnrollmentKey implements Store.
func (m *Memory) UpdateEnrollmentKey(_ context.Context, selector string, change func(*EnrollmentKey) error) (EnrollmentKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.links.keys[selector]
	if !ok {
		return EnrollmentKey{}, notFound("enrollment key", selector)
	}
	k.Hash = slices.Clone(k.Hash)
	if err := change(&k); err != nil {
		return EnrollmentKey{}, err
	}
	m.links.keys[selector] = k
	return k, nil
}
