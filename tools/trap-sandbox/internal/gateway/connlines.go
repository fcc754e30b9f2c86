package gateway

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"

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
// Past its address's budget a computer's line spends a small budget of its own (ownLineBurst,
// ownLineEvery), if it has one: a computer that said hello with a credential of its own has
// its credential's from the start, as a flood cannot make one up; one that said hello with
// the shared password has its traposId's once a socket of it stayed open ownBudgetAfter,
// which a loop saying hello under ever new ids never does. So a computer that was connected
// a minute, and came back while a flood from its address runs, has its connect line written,
// and a takeover of it is written (its replacement line and the newcomer's connect line)
// even when its own connect line was left out, which is then written late, at its first ping
// past that minute (lateConnectLine). Each kind of own budget is kept for the
// ownLineBudgets most recently used, the least recently used forgotten: naming ever new ids
// takes holding a socket a minute for each, and credentials are the account store's.
//
// A line past the budgets is left out and counted; the count is logged in a WARN, at most
// once a minute per address (the gateway's warnThrottle).
type connLines struct {
	limit rate.Limit
	burst int

	mu          sync.Mutex
	addrs       map[string]*lineState // guarded by mu
	computers   *ownBudgets           // guarded by mu; by account and traposId
	credentials *ownBudgets           // guarded by mu; by credential selector
	swept       time.Time             // guarded by mu
}

// The own line budget of a computer (connLines): two connect lines with their endings, then
// a token each ownLineEvery (a connect line each 20 minutes); ownLineBudgets of each kind
// at most, which together write about 55 lines a second at most, an address's budget aside.
// A socket of a computer open ownBudgetAfter gives its traposId a budget.
const (
	ownLineBurst   = 2 * connectLineTokens
	ownLineEvery   = 10 * time.Minute
	ownLineBudgets = 16384
	ownBudgetAfter = time.Minute
)

// ownBudgets is a bounded set of own line budgets, the most recently used first.
type ownBudgets struct {
	max   int // a test's smaller than ownLineBudgets
	byKey map[string]*list.Element
	order *list.List // values are *ownBudget
}

type ownBudget struct {
	key    string
	bucket *rate.Limiter
}

func newOwnBudgets(capacity int) *ownBudgets {
	return &ownBudgets{max: capacity, byKey: make(map[string]*list.Element), order: list.New()}
}

// get is key's budget, marked most recently used; a new one (full) when create is set, the
// least recently used forgotten past max; nil for none.
func (o *ownBudgets) get(key string, create bool) *ownBudget {
	if e := o.byKey[key]; e != nil {
		o.order.MoveToFront(e)
		return e.Value.(*ownBudget)
	}
	if !create {
		return nil
	}
	b := &ownBudget{key: key, bucket: rate.NewLimiter(rate.Every(ownLineEvery), ownLineBurst)}
	o.byKey[key] = o.order.PushFront(b)
	for o.order.Len() > o.max {
		oldest := o.order.Back()
		o.order.Remove(oldest)
		delete(o.byKey, oldest.Value.(*ownBudget).key)
	}
	return b
}

// ownLine names the own budget a line of a computer may spend (connLines.take).
type ownLine struct {
	credential bool   // key is a credential's selector, else an account and traposId
	key        string // "" for none
	create     bool   // the computer has earned one: a credential, or a socket open long enough
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
	return &connLines{limit: limit, burst: cfg.ConnectionLinesBurst, addrs: make(map[string]*lineState),
		computers: newOwnBudgets(ownLineBudgets), credentials: newOwnBudgets(ownLineBudgets), swept: cfg.Clock.Now()}
}

// take spends tokens of remoteAddr's budget at now for a line, or past it, of own's budget.
// Past both it counts the line left out and returns false with the count since the last
// reset.
func (c *connLines) take(remoteAddr string, own ownLine, tokens int, now time.Time) (ok bool, leftOut int) {
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
	var budget *ownBudget
	if own.key != "" {
		budget = c.budgetsOf(own).get(own.key, own.create) // marked used whoever pays
	}
	if st.bucket.AllowN(now, tokens) {
		return true, 0
	}
	if budget != nil && budget.bucket.AllowN(now, tokens) {
		return true, 0
	}
	st.leftOut++
	return false, st.leftOut
}

// earn gives own its budget if it has earned one (a computer whose socket stayed open long
// enough ends, its line paid for by its connect line), marked most recently used.
func (c *connLines) earn(own ownLine) {
	if c.limit == rate.Inf || own.key == "" || !own.create {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budgetsOf(own).get(own.key, true)
}

// budgetsOf is the kind of own budget own is.
func (c *connLines) budgetsOf(own ownLine) *ownBudgets {
	if own.credential {
		return c.credentials
	}
	return c.computers
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

// lateConnectLine writes, at a ping's tick (now), the connect line of a computer whose line
// was left out at its hello, once its socket has stayed open ownBudgetAfter: it has a budget
// of its own then (connLines), which a loop saying hello under made-up ids never earns. The
// line says when it connected (connectedSince) and that it is late, and the older client's
// line follows it as at a hello (noteClientVersion). Tried once.
func (s *Session) lateConnectLine(now time.Time) {
	if !s.connectLeftOut.Load() || now.Sub(s.connectedSince) < ownBudgetAfter || !s.connectLeftOut.CompareAndSwap(true, false) {
		return
	}
	if !s.connectLineAllowed() {
		return
	}
	s.mu.Lock()
	key, clientVersion := s.key, s.clientVersion
	s.mu.Unlock()
	s.log().Info("computer connected", "accountId", key.AccountID, "traposId", clip(key.TraposID), "clientVersion", clip(clientVersion),
		"connectedSince", s.connectedSince, "late", true)
	s.noteClientVersion(key, clientVersion) // as after a connect line written at the hello
}

// endLineAllowed says whether a line of s's ending (replaced, disconnected) may be written:
// always when its connect line was, which paid for it; else as another line.
func (s *Session) endLineAllowed() bool {
	if s.connectLogged.Load() {
		s.gw.lines.earn(s.ownLine(s.gw.cfg.Clock.Now())) // its line is paid; its budget is still earned
		return true
	}
	return s.lineAllowed(1)
}

// lineAllowed says whether a line about s connecting that spends tokens may be written. Past
// its address's budget and its own (connLines) the line is left out, and a WARN (at most once a minute per address)
// says so with the number left out since the previous one.
func (s *Session) lineAllowed(tokens int) bool {
	lines := s.gw.lines
	now := s.gw.cfg.Clock.Now()
	ok, leftOut := lines.take(s.remoteAddr, s.ownLine(now), tokens, now)
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

// ownLine is the own line budget s's lines may spend at now (connLines): its credential's,
// or its traposId's, which it earns by a socket open ownBudgetAfter.
func (s *Session) ownLine(now time.Time) ownLine {
	s.mu.Lock()
	key, credential, authenticated := s.key, s.credential, s.authenticated
	s.mu.Unlock()
	switch {
	case !authenticated:
		return ownLine{}
	case credential != "":
		return ownLine{credential: true, key: credential, create: true}
	default:
		return ownLine{key: key.AccountID + "\x00" + key.TraposID, create: now.Sub(s.connectedSince) >= ownBudgetAfter}
	}
}

// refusedCredentialLine writes the WARN msg of a hello (or a prove) of traposID refused for its
// credential, named by its selector (revoked, or linked to another computer id), once a minute per credential with the
// count of the others (warnEach): not from its address's line budget, which a flood of hellos
// with the shared password spends, so that the flood cannot hide a revoked credential used.
// Only a credential the account store holds is refused so (a made-up one is a wrong secret),
// so ever new ones cannot be made up to fill the log; an address names
// logthrottle.MaxItemsPerGroup credentials a minute at most.
func (s *Session) refusedCredentialLine(msg, selector, traposID string, attrs ...any) {
	s.gw.limits.warns.warnEach(msg, s.remoteAddr, selector,
		append([]any{"traposId", clip(traposID), "credentialId", clip(selector)}, attrs...)...)
}
