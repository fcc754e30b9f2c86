package account

import (
	"cmp"
	"slices"
	"time"
)

// ownedSecret is an account's secret as a Store keeps it: a Token, a Credential or an
// EnrollmentKey. Every store finds one by its selector and lists an account's in one order
// (listOwned); what this interface gives is all those rules need of each kind.
type ownedSecret[T any] interface {
	Token | Credential | EnrollmentKey
	// owned says whose secret it is and when it was made.
	owned() (selector, accountID string, created time.Time)
	// withOwnHash is a copy whose Hash shares no memory with the receiver's: a store hands
	// out copies, so a caller that changes one cannot change what the store keeps.
	withOwnHash() T
}

func (t Token) owned() (string, string, time.Time) { return t.Selector, t.AccountID, t.Created }
func (t Token) withOwnHash() Token {
	t.Hash = slices.Clone(t.Hash)
	return t
}

func (c Credential) owned() (string, string, time.Time) { return c.Selector, c.AccountID, c.Created }
func (c Credential) withOwnHash() Credential {
	c.Hash = slices.Clone(c.Hash)
	return c
}

func (k EnrollmentKey) owned() (string, string, time.Time) { return k.Selector, k.AccountID, k.Created }
func (k EnrollmentKey) withOwnHash() EnrollmentKey {
	k.Hash = slices.Clone(k.Hash)
	return k
}

// listOwned keeps the secrets of accountID ("": every account's) and orders them as
// Store.Tokens, Store.Credentials and Store.EnrollmentKeys list them: oldest first, then by
// selector (the SQLite store says the same in SQL: ORDER BY created, selector).
func listOwned[T ownedSecret[T]](all []T, accountID string) []T {
	var out []T
	for _, s := range all {
		if _, owner, _ := s.owned(); accountID == "" || owner == accountID {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b T) int {
		aSelector, _, aCreated := a.owned()
		bSelector, _, bCreated := b.owned()
		return cmp.Or(aCreated.Compare(bCreated), cmp.Compare(aSelector, bSelector))
	})
	return out
}

// secretTable is a Memory store's secrets of one kind, by selector; the store's mu guards it.
// Each method hands out and keeps copies (withOwnHash).
type secretTable[T ownedSecret[T]] struct {
	kind string // "token", "credential", "enrollment key": what its errors name
	rows map[string]T
}

func newSecretTable[T ownedSecret[T]](kind string) secretTable[T] {
	return secretTable[T]{kind: kind, rows: map[string]T{}}
}

// create adds s: ErrNotFound when its account is not in accounts, ErrExists when its
// selector is taken.
func (t secretTable[T]) create(accounts map[string]Account, s T) error {
	selector, owner, _ := s.owned()
	if _, ok := accounts[owner]; !ok {
		return notFound("account", owner)
	}
	if _, ok := t.rows[selector]; ok {
		return exists(t.kind, selector)
	}
	t.rows[selector] = s.withOwnHash()
	return nil
}

// get returns the secret of selector, or ErrNotFound.
func (t secretTable[T]) get(selector string) (T, error) {
	s, ok := t.rows[selector]
	if !ok {
		var none T
		return none, notFound(t.kind, selector)
	}
	return s.withOwnHash(), nil
}

// list returns accountID's secrets ("": every account's) in listOwned's order.
func (t secretTable[T]) list(accountID string) []T {
	all := make([]T, 0, len(t.rows))
	for _, s := range t.rows {
		all = append(all, s)
	}
	out := listOwned(all, accountID)
	for i := range out {
		out[i] = out[i].withOwnHash() // only what is handed out, not every account's
	}
	return out
}

// update applies change to the secret of selector and keeps the result, unless change
// returns an error (then nothing changes and that error is returned); ErrNotFound if there
// is none.
func (t secretTable[T]) update(selector string, change func(*T) error) (T, error) {
	s, ok := t.rows[selector]
	var none T
	if !ok {
		return none, notFound(t.kind, selector)
	}
	s = s.withOwnHash()
	if err := change(&s); err != nil {
		return none, err
	}
	t.rows[selector] = s
	return s.withOwnHash(), nil
}

// remove deletes accountID's secrets and returns their selectors, in listOwned's order.
func (t secretTable[T]) remove(accountID string) []string {
	selectors := []string{}
	for _, s := range t.list(accountID) {
		selector, _, _ := s.owned()
		delete(t.rows, selector)
		selectors = append(selectors, selector)
	}
	return selectors
}
