package link

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limits is a token bucket per key of each of its tiers (a computer, an address, an account),
// each holding the tier's perMinute and refilled evenly over a minute, and optionally one
// bucket for all keys together; times come from the module's clock.
type limits struct {
	global *rate.Limiter // nil: none

	mu    sync.Mutex // guards every tier's keys
	tiers []*tier
}

// tier is one kind of key's buckets: name is how a refusal names the bucket.
type tier struct {
	name   string
	perKey int
	keys   map[string]*rate.Limiter
}

// sweepAbove is how many keys a tier keeps before full buckets are forgotten (a full bucket
// is the same as a new one).
const sweepAbove = 1024

// newLimits returns limits with a tier per name (its keys' budget in perKey, in the same
// order) and a global bucket of global a minute (0: none).
func newLimits(global int, names []string, perKey ...int) *limits {
	l := &limits{}
	for i, name := range names {
		l.tiers = append(l.tiers, &tier{name: name, perKey: perKey[i], keys: map[string]*rate.Limiter{}})
	}
	if global > 0 {
		l.global = rate.NewLimiter(perMinute(global), global)
	}
	return l
}

func perMinute(n int) rate.Limit { return rate.Limit(float64(n) / 60) }

// The buckets take names, as the refusals name them.
const (
	overComputer = "this computer"
	overAddress  = "this address"
	overAccount  = "this account"
	overGlobal   = "this gateway"
)

// take spends one token of each tier's bucket of its key (keys in the tiers' order) and of
// the global one at now; a tier whose key is "" is not spent. When any is empty it spends
// nothing and returns how long until a token and the first empty bucket's name ("" when the
// tokens were spent).
func (l *limits) take(now time.Time, keys ...string) (time.Duration, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var taken []*rate.Reservation
	cancel := func() {
		for _, r := range taken {
			r.CancelAt(now)
		}
	}
	for i, t := range l.tiers {
		if keys[i] == "" {
			continue
		}
		r := t.bucket(keys[i], now).ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			cancel()
			return d, t.name
		}
		taken = append(taken, r)
	}
	if l.global != nil {
		g := l.global.ReserveN(now, 1)
		if d := g.DelayFrom(now); d > 0 {
			g.CancelAt(now)
			cancel()
			return d, overGlobal
		}
	}
	return 0, ""
}

// bucket returns key's bucket, made full on first use. The caller holds the limits' mu.
func (t *tier) bucket(key string, now time.Time) *rate.Limiter {
	if len(t.keys) > sweepAbove {
		for k, lim := range t.keys {
			if lim.TokensAt(now) >= float64(t.perKey) {
				delete(t.keys, k)
			}
		}
	}
	lim := t.keys[key]
	if lim == nil {
		lim = rate.NewLimiter(perMinute(t.perKey), t.perKey)
		t.keys[key] = lim
	}
	return lim
}
