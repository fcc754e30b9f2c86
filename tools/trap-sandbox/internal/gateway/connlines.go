package gateway

import (
	"container/list"
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
// out spends a token. A hello refused for its credential spends none (refusedCredentialLine).
//
// Past its address's budget a computer's line spends its own budget, if it has one (a small
// bucket, ownLineBurst and ownLineEvery): a computer that said hello with a credential of its
// own has its credential's, which a flood cannot make up; one that said hello with the shared
// password has its traposId's once the log named it (a connect line of it was written from
// its address's budget), so that a computer the log showed before, reconnecting while a
// flood from its address runs, and its takeover, are written. Made-up ids are never named
// during a flood: they get no line. The own budgets are kept for the ownLineBudgets most
// recently used, the oldest forgotten.
//
// A line past the budgets is left out and counted; the count is logged in a WARN, at most
// once a minute per address (the gateway's warnThrottle).
type connLines struct {
	limit rate.Limit
	burst int
	// ownMax is how many own budgets are kept (ownLineBudgets; a test's smaller).
	ownMax int

	mu    sync.Mutex
	addrs map[string]*lineState    // guarded by mu
	own   map[string]*list.Element // guarded by mu; values are *ownBudget, in ownOrder
	order *list.List               // guarded by mu; own budgets, most recently used first
	swept time.Time                // guarded by mu
}

// The own line budget of a computer (connLines): two connect lines with their endings, then
// one token each ownLineEvery. A loop saying hello again and again under one named id (or
// one credential) writes a connect line each 10 minutes; ownLineBudgets of them at most
// write ownLineBudgets/ownLineEvery lines a second (14), an address's budget aside.
const (
	ownLineBurst   = 2 * connectLineTokens
	ownLineEvery   = 5 * time.Minute
	ownLineBudgets = 4096
)

type ownBudget struct {
	key    string
	bucket *rate.Limiter
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
	return &connLines{limit: limit, burst: cfg.ConnectionLinesBurst, ownMax: ownLineBudgets,
		addrs: make(map[string]*lineState), own: make(map[string]*list.Element), order: list.New(), swept: cfg.Clock.Now()}
}

// ownBudgetKey names the own line budget of a computer that said hello as key with
// credential (its selector; "" for the shared password).
func ownBudgetKey(key Key, credential string) string {
	if credential != "" {
		return "credential\x00" + credential
	}
	return "computer\x00" + key.AccountID + "\x00" + key.TraposID
}

// take spends tokens of remoteAddr's budget at now for a line, or past it, of the own budget
// ownKey names, if it has one: from the start when fromStart is set, else once the address's
// budget paid for a line of it (the log named its computer). Past both it counts the line
// left out and returns false with the count since the last reset.
func (c *connLines) take(remoteAddr, ownKey string, fromStart bool, tokens int, now time.Time) (ok bool, leftOut int) {
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
	own := c.ownLocked(ownKey, fromStart)
	if st.bucket.AllowN(now, tokens) {
		if own == nil {
			c.ownLocked(ownKey, true)
		}
		return true, 0
	}
	if own != nil && own.bucket.AllowN(now, tokens) {
		return true, 0
	}
	st.leftOut++
	return false, st.leftOut
}

// ownLocked is the own budget ownKey names, marked most recently used; a new one (full) when
// create is set, the least recently used forgotten past ownMax; nil for none. c.mu must be
// held.
func (c *connLines) ownLocked(ownKey string, create bool) *ownBudget {
	if e := c.own[ownKey]; e != nil {
		c.order.MoveToFront(e)
		return e.Value.(*ownBudget)
	}
	if !create {
		return nil
	}
	b := &ownBudget{key: ownKey, bucket: rate.NewLimiter(rate.Every(ownLineEvery), ownLineBurst)}
	c.own[ownKey] = c.order.PushFront(b)
	for c.order.Len() > c.ownMax {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.own, oldest.Value.(*ownBudget).key)
	}
	return b
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
// its address's budget and its own (connLines) the line is left out, and a WARN (at most once a minute per address)
// says so with the number left out since the previous one.
func (s *Session) lineAllowed(tokens int) bool {
	lines := s.gw.lines
	s.mu.Lock()
	key, credential := s.key, s.credential
	s.mu.Unlock()
	// A credential of the computer's own has its budget from the start: it cannot be made up.
	ok, leftOut := lines.take(s.remoteAddr, ownBudgetKey(key, credential), credential != "", tokens, s.gw.cfg.Clock.Now())
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
