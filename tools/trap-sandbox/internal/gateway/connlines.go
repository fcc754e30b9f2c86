package gateway

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/server"
)

// connLines bounds the lines about computers connecting that one address writes (IPv6: its
// /64, server.AddressKey), with a token bucket per address (Config.ConnectionLinesRate and
// ConnectionLinesBurst): the computers of a Minecraft server share its address, and a loop
// there saying hello under ever new ids wrote every line it could (4 000 a second, 700 KB).
// A connect line spends connectLineTokens, its own and its disconnect line's; a computer
// whose connect line was written has its ending written whatever the bucket holds (its
// disconnect line, and the line of its replacement by a newer connection), so that a flood
// from the address cannot hide what becomes of a computer the log showed connecting (a
// player there taking 5:küche over). The ending of a computer whose connect line was left
// out spends a token. A hello refused for its credential spends none (refusedCredentialLine). A line past the bucket is left out and counted; the count is logged in a WARN, at
// most once a minute per address (the gateway's warnThrottle).
type connLines struct {
	limit rate.Limit
	burst int

	mu    sync.Mutex
	addrs map[string]*lineState // guarded by mu
	swept time.Time             // guarded by mu
}

// connectLineTokens is what a connect line spends of its address's budget: one for itself,
// one for its computer's disconnect line, which is then always written (endLineAllowed).
const connectLineTokens = 2

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

// take spends tokens of remoteAddr's budget at now for a line. Past it, it counts the line
// left out and returns false with the count since the last reset.
func (c *connLines) take(remoteAddr string, tokens int, now time.Time) (ok bool, leftOut int) {
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
	if st.bucket.AllowN(now, tokens) {
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

// connectLineAllowed says whether s's connect line may be written, and spends its
// ending's share of the budget with it.
func (s *Session) connectLineAllowed() bool {
	if !s.lineAllowed(connectLineTokens) {
		return false
	}
	s.connectLogged.Store(true)
	return true
}

// endLineAllowed says whether a line of s's ending (replaced, disconnected) may be written:
// always when its connect line was, which paid for it; else as another line.
func (s *Session) endLineAllowed() bool {
	return s.connectLogged.Load() || s.lineAllowed(1)
}

// lineAllowed says whether a line about s connecting that spends tokens may be written. Past
// its address's budget the line is left out, and a WARN (at most once a minute per address)
// says so with the number left out since the previous one.
func (s *Session) lineAllowed(tokens int) bool {
	lines := s.gw.lines
	ok, leftOut := lines.take(s.remoteAddr, tokens, s.gw.cfg.Clock.Now())
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

// refusedCredentialLine writes the WARN msg of a hello of traposID refused for its credential
// secret (revoked, or linked to another computer id), once a minute per credential with the
// count of the others (warnEach): not from its address's line budget, which a flood of hellos
// with the shared password spends, so that the flood cannot hide a revoked credential used.
// Only a credential the account store holds is refused so (a made-up one is a wrong secret),
// so ever new ones cannot be made up to fill the log; an address names
// logthrottle.MaxItemsPerGroup credentials a minute at most.
func (s *Session) refusedCredentialLine(msg, secret, traposID string, attrs ...any) {
	_, selector, _ := account.Identify(secret)
	s.gw.limits.warns.warnEach(msg, s.remoteAddr, selector,
		append([]any{"traposId", clip(traposID), "credentialId", clip(selector)}, attrs...)...)
}
