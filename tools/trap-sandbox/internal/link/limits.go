package link

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limits is a token bucket per key (an address, an account), each holding perMinute and
// refilled evenly over a minute, and optionally one bucket for all keys together; times come
// from the module's clock.
type limits struct {
	perKey int
	global *rate.Limiter // nil: none

	mu   sync.Mutex // guards keys
	keys map[string]*rate.Limiter
}

// sweepAbove is how many keys are kept before full buckets are forgotten (a full bucket is
// the same as a new one).
const sweepAbove = 1024

func newLimits(perKey, global int) *limits {
	l := &limits{perKey: perKey, keys: map[string]*rate.Limiter{}}
	if global > 0 {
		l.global = rate.NewLimiter(perMinute(global), global)
	}
	return l
}

func perMinute(n int) rate.Limit { return rate.Limit(float64(n) / 60) }

// The buckets take names, as the refusals name them.
const (
	overKey    = "this address"
	overGlobal = "this gateway"
)

// take spends one token of key's bucket and the global one at now. When either is empty it
// spends nothing and returns how long until a token and which bucket (overKey or overGlobal;
// "" when the token was spent).
func (l *limits) take(key string, now time.Time) (time.Duration, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.keys) > sweepAbove {
		for k, lim := range l.keys {
			if lim.TokensAt(now) >= float64(l.perKey) {
				delete(l.keys, k)
			}
		}
	}
	lim := l.keys[key]
	if lim == nil {
		lim = rate.NewLimiter(perMinute(l.perKey), l.perKey)
		l.keys[key] = lim
	}
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, overKey
	}
	if l.global != nil {
		g := l.global.ReserveN(now, 1)
		if d := g.DelayFrom(now); d > 0 {
			g.CancelAt(now)
			r.CancelAt(now)
			return d, overGlobal
		}
	}
	return 0, ""
}
