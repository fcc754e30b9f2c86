package gateway

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"trap-sandbox/internal/server"
)

// connLines bounds the connect and disconnect lines one address writes (and the INFO lines of
// a hello refused for its revoked or misplaced credential, and of a computer replaced) (IPv6: its /64,
// server.AddressKey), with a token bucket per address (Config.ConnectionLinesRate and
// ConnectionLinesBurst): the computers of a Minecraft server share its address, and a loop
// there saying hello under ever new ids wrote every line it could (4 000 a second, 700 KB).
// A line past the bucket is left out and counted; the count is logged in a WARN, at most
// once a minute per address (the gateway's warnThrottle).
type connLines struct {
	limit rate.Limit
	burst int

	mu    sync.Mutex
	addrs map[string]*lineState // guarded by mu
	swept time.Time             // guarded by mu
}

type lineState struct {
	bucket  *rate.Limiter
	leftOut int // lines left out since the last WARN
}

func newConnLines(cfg Config) *connLines {
	limit := rate.Limit(cfg.ConnectionLinesRate)
	if cfg.ConnectionLinesRate < 0 {
		limit = rate.Inf
	}
	return &connLines{limit: limit, burst: cfg.ConnectionLinesBurst, addrs: make(map[string]*lineState), swept: cfg.Clock.Now()}
}

// take spends a line of remoteAddr's budget at now. Past it, it counts the line left out and
// returns false with the count since the last reset.
func (c *connLines) take(remoteAddr string, now time.Time) (ok bool, leftOut int) {
	if c.limit == rate.Inf {
		return true, 0
	}
	key := server.AddressKey(remoteAddr)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweepLocked(now)
	st := c.addrs[key]
	if st == nil {
		st = &lineState{bucket: rate.NewLimiter(c.limit, c.burst)}
		c.addrs[key] = st
	}
	if st.bucket.AllowN(now, 1) {
		return true, 0
	}
	st.leftOut++
	return false, st.leftOut
}

// reset starts remoteAddr's count of lines left out again (its WARN was written).
func (c *connLines) reset(remoteAddr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.addrs[server.AddressKey(remoteAddr)]; st != nil {
		st.leftOut = 0
	}
}

// sweepLocked forgets, once a minute, the addresses whose bucket is full again and that have
// no count to report: a full bucket is what a new one is. c.mu must be held.
func (c *connLines) sweepLocked(now time.Time) {
	if now.Sub(c.swept) < limiterSweepEvery {
		return
	}
	c.swept = now
	for key, st := range c.addrs {
		if st.leftOut == 0 && st.bucket.TokensAt(now) >= float64(c.burst) {
			delete(c.addrs, key)
		}
	}
}

// lineAllowed says whether a connect or disconnect line of s may be written. Past its
// address's budget the line is left out, and a WARN (at most once a minute per address)
// says so with the number left out since the previous one.
func (s *Session) lineAllowed() bool {
	lines := s.gw.lines
	ok, leftOut := lines.take(s.remoteAddr, s.gw.cfg.Clock.Now())
	if ok {
		return true
	}
	s.gw.cfg.Metrics.limited(limitLogLines)
	if s.gw.limits.warns.warn("computers from this address connect and disconnect faster than the log takes: their lines are left out (trapos_gateway_limited_total counts them as log_lines)",
		s.remoteAddr, "linesLeftOut", leftOut, "rate", float64(lines.limit), "burst", lines.burst) {
		lines.reset(s.remoteAddr)
	}
	return false
}
