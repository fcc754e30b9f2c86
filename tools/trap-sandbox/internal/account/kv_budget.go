package account

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SharedBudgets is implemented by a store that every replica of a cluster shares (KV): a rate
// budget kept there is one for all of them, where a budget in each replica's memory gives a
// caller whose requests a balancer spreads over N replicas N times as much.
type SharedBudgets interface {
	// TakeShared spends one token of the budget name (perMinute a minute, as many at once,
	// refilled evenly) at now and returns 0, or, when it has none, how long until it has one
	// (nothing spent).
	TakeShared(ctx context.Context, name string, perMinute int, now time.Time) (time.Duration, error)
}

var _ SharedBudgets = (*KV)(nil)

// kvBudget prefixes the shared budgets' records, one per budget name (the link module's: one
// per account that approved a link code), each a few bytes.
const kvBudget = "budget."

// kvBudgetRecord is a token bucket: its tokens as counted at At (the clock of the replica that
// counted them). A replica whose clock is behind At refills nothing until it has caught up, so
// a skew between replicas' clocks never adds tokens.
type kvBudgetRecord struct {
	Tokens float64   `json:"tokens"`
	At     time.Time `json:"at"`
}

// TakeShared implements SharedBudgets: a compare-and-swap of the budget's record, as kvChange
// makes one (a record made on its first take, full), so two replicas taking at once take two
// tokens.
func (s *KV) TakeShared(ctx context.Context, name string, perMinute int, now time.Time) (time.Duration, error) {
	key := kvKey(kvBudget, name)
	perSecond := float64(perMinute) / 60
	read := s
	for range kvRetries {
		r := kvBudgetRecord{Tokens: float64(perMinute), At: now}
		rev, err := read.get(ctx, "budget", key, name, &r)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return 0, err
		}
		if elapsed := now.Sub(r.At); elapsed > 0 {
			r.Tokens, r.At = min(float64(perMinute), r.Tokens+elapsed.Seconds()*perSecond), now
		}
		if r.Tokens < 1 {
			return time.Duration((1 - r.Tokens) / perSecond * float64(time.Second)), nil
		}
		r.Tokens--
		b, err := json.Marshal(r)
		if err != nil {
			return 0, err
		}
		if rev == 0 {
			_, err = s.kv.Create(ctx, key, b)
		} else {
			_, err = s.kv.Update(ctx, key, b, rev)
		}
		if err == nil {
			return 0, nil
		}
		if !revisionMoved(err) {
			return 0, fmt.Errorf("update budget %q: %w", name, natsError(err))
		}
		read = s.latest
	}
	return 0, fmt.Errorf("update budget %q: %d concurrent writers in a row; try again", name, kvRetries)
}
