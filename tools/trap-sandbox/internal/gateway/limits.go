package gateway

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/server"
)

// Names of the limits, as metric labels and in logs.
const (
	limitMaxConnections = "max_connections"
	// limitUpgradeRate counts sockets admitted on probation (the short hello deadline) because
	// their address is over its upgrade rate; nothing is refused for it.
	limitUpgradeRate = "upgrade_rate"
	// limitFailedHellos and limitFailedHellosGlobal count wrong-secret answers held back by the
	// address's budget and by the gateway-wide one (an answer may count in both).
	limitFailedHellos       = "failed_hellos"
	limitFailedHellosGlobal = "failed_hellos_global"
	limitRequestsInFlight   = "requests_in_flight"
	// limitGatewayRequestsInFlight and limitSendQueueBytes refuse a host request with busy.
	limitGatewayRequestsInFlight = "gateway_requests_in_flight"
	limitSendQueueBytes          = "send_queue_bytes"
	// limitLogLines counts connect and disconnect lines left out of the log (connLines).
	limitLogLines = "log_lines"
	// limitAccountConnections counts hellos refused busy because their account holds its share
	// of the connection cap (Config.maxAccountConnections).
	limitAccountConnections = "account_connections"
	// limitScreenViewers counts screen streams and waits refused busy because their account
	// holds its most viewers of screens already (the screen module's LimitViewers).
	limitScreenViewers = "screen_viewers"
)

// limiterSweepEvery is how often idle per-address state is forgotten; a bucket idle this
// long is full again anyway, so forgetting it changes nothing.
const limiterSweepEvery = time.Minute

// maxTalliedAddresses bounds the per-address count of wrong secrets kept for the
// gateway-wide WARN line (guessTally); wrong secrets from further addresses are only summed.
const maxTalliedAddresses = 4096

// guessersNamed is how many addresses the gateway-wide wrong-secret WARN line names, those
// with the most wrong secrets first.
const guessersNamed = 10

// limiter holds the admission state of the gateway (admission.go: connection and pre-hello
// slots, eviction) and the budgets of wrong secrets, per address and gateway-wide. An address
// is an IPv4 address or an IPv6 /64 (server.AddressKey): one host usually owns a whole /64.
type limiter struct {
	cfg     Config
	clock   clock.Clock
	log     *slog.Logger
	warns   *warnThrottle
	metrics *Metrics // nil records nothing

	mu    sync.Mutex // guards the fields below
	addrs map[string]*addrState
	// oldest and newest are the ends of the gateway's queue of sockets before hello: the
	// oldest goes first when the gateway needs room (admission.go).
	oldest, newest *connSlot
	// links is the gateway's queue of link sessions given a code, oldest first: the connection
	// cap's room when no socket before hello is left (admission.go).
	links struct{ oldest, newest *connSlot }
	// open counts admitted sockets until they end; preHello those of them without a good
	// hello yet.
	open, preHello int
	lastSweep      time.Time
	// failedHellos is the gateway-wide budget of wrong secrets (each address has its own too).
	failedHellos *rate.Limiter
	guesses      guessTally
}

type addrState struct {
	key          string
	upgrades     *rate.Limiter
	failedHellos *rate.Limiter
	// first and last are the ends of the address's queue of sockets before hello, oldest
	// first; preHello is its length.
	first, last *connSlot
	preHello    int
	lastSeen    time.Time
}

func newLimiter(cfg Config, logger *slog.Logger) *limiter {
	return &limiter{
		cfg:          cfg,
		clock:        cfg.Clock,
		log:          logger,
		warns:        newWarnThrottle(logger, cfg.Clock),
		metrics:      cfg.Metrics,
		addrs:        make(map[string]*addrState),
		lastSweep:    cfg.Clock.Now(),
		failedHellos: rate.NewLimiter(rate.Limit(cfg.FailedHelloGlobalRate), cfg.FailedHelloGlobalBurst),
		guesses:      guessTally{counts: make(map[string]int)},
	}
}

// stateLocked returns the state of remoteAddr's address, creating it; l.mu must be held.
func (l *limiter) stateLocked(remoteAddr string, now time.Time) *addrState {
	l.sweepLocked(now)
	key := server.AddressKey(remoteAddr)
	st := l.addrs[key]
	if st == nil {
		st = &addrState{
			key:          key,
			upgrades:     rate.NewLimiter(rate.Limit(l.cfg.UpgradeRate), l.cfg.UpgradeBurst),
			failedHellos: rate.NewLimiter(rate.Limit(l.cfg.FailedHelloRate), l.cfg.FailedHelloBurst),
		}
		l.addrs[key] = st
	}
	st.lastSeen = now
	return st
}

// holdBack is how long a wrong secret's answer waits, and which budgets hold it back.
type holdBack struct {
	delay                time.Duration
	byAddress, byGateway bool
}

// count records the hold in the limits metric.
func (h holdBack) count(m *Metrics) {
	if h.byAddress {
		m.limited(limitFailedHellos)
	}
	if h.byGateway {
		m.limited(limitFailedHellosGlobal)
	}
}

// helloFailed counts a wrong secret from remoteAddr and returns how long its answer must wait:
// until both the address's budget (FailedHelloRate, FailedHelloBurst) and the gateway's
// (FailedHelloGlobalRate, FailedHelloGlobalBurst) have a token for it, at most
// maxFailedHelloDelay. A right secret spends neither budget and never waits: wrong secrets
// cannot lock the right ones out. Past the gateway-wide budget, one WARN line a minute names
// the addresses that sent the most wrong secrets.
func (l *limiter) helloFailed(remoteAddr string) holdBack {
	now := l.clock.Now()
	l.mu.Lock()
	st := l.stateLocked(remoteAddr, now)
	own := reserveWithin(st.failedHellos, now, maxFailedHelloDelay)
	global := reserveWithin(l.failedHellos, now, maxFailedHelloDelay)
	l.guesses.add(st.key, now, global > 0)
	var line []any
	if global > 0 {
		line = l.guesses.lineDue(now)
	}
	l.mu.Unlock()
	if line != nil {
		l.log.Warn("wrong secrets over the gateway-wide budget: their answers are held back",
			append(line, "rate", l.cfg.FailedHelloGlobalRate, "burst", l.cfg.FailedHelloGlobalBurst,
				"repeatsLoggedEvery", warnEvery)...)
	}
	return holdBack{delay: max(own, global), byAddress: own > 0, byGateway: global > 0}
}

// reserveWithin takes a token from lim and returns how long until it is due, at most limit.
// A token due later than limit is not taken: the answer waits limit anyway, and a debt that
// grew without bound would hold wrong secrets back long after a flood ended.
func reserveWithin(lim *rate.Limiter, now time.Time, limit time.Duration) time.Duration {
	r := lim.ReserveN(now, 1)
	if !r.OK() {
		return limit
	}
	delay := r.DelayFrom(now)
	if delay > limit {
		r.CancelAt(now)
		return limit
	}
	return delay
}

// guessTally counts wrong secrets per address for the gateway-wide WARN line: since the last
// line, or over the last warnEvery when there was none. It is guarded by limiter.mu.
type guessTally struct {
	since    time.Time
	counts   map[string]int
	total    int // wrong secrets counted, including those of addresses not kept in counts
	heldBack int // of which held back by the gateway-wide budget
	// lastLine is when the line was last written; suppressed counts the wrong secrets held
	// back by the gateway-wide budget since, that did not write one.
	lastLine   time.Time
	suppressed int
}

func (g *guessTally) add(key string, now time.Time, heldBack bool) {
	if now.Sub(g.since) >= warnEvery && now.Sub(g.lastLine) >= warnEvery {
		// No line in the last minute: start a fresh window.
		clear(g.counts)
		g.since, g.total, g.heldBack = now, 0, 0
	}
	if _, ok := g.counts[key]; ok || len(g.counts) < maxTalliedAddresses {
		g.counts[key]++
	}
	g.total++
	if heldBack {
		g.heldBack++
	}
}

// lineDue returns the attributes of the WARN line if one is due (at most one per warnEvery),
// naming the addresses with the most wrong secrets, and starts a new window; nil otherwise.
func (g *guessTally) lineDue(now time.Time) []any {
	if !g.lastLine.IsZero() && now.Sub(g.lastLine) < warnEvery {
		g.suppressed++
		return nil
	}
	keys := make([]string, 0, len(g.counts))
	for k := range g.counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if g.counts[a] != g.counts[b] {
			return g.counts[b] - g.counts[a]
		}
		return strings.Compare(a, b)
	})
	others := max(0, len(keys)-guessersNamed)
	named := make([]string, 0, guessersNamed)
	for _, k := range keys[:min(len(keys), guessersNamed)] {
		named = append(named, fmt.Sprintf("%s×%d", k, g.counts[k]))
	}
	attrs := []any{"addresses", strings.Join(named, " "), "otherAddresses", others,
		"wrongSecrets", g.total, "heldBack", g.heldBack, "window", now.Sub(g.since).Round(time.Second)}
	if g.suppressed > 0 {
		attrs = append(attrs, "suppressedSinceLast", g.suppressed)
	}
	clear(g.counts)
	g.since, g.total, g.heldBack, g.lastLine, g.suppressed = now, 0, 0, now, 0
	return attrs
}

// logRefusal logs that limit refused address, throttled per address.
func (l *limiter) logRefusal(limit, address string, attrs ...any) {
	l.warns.warn("limit reached, refusing", address, append([]any{"limit", limit}, attrs...)...)
}

// sweepLocked forgets idle addresses; l.mu must be held.
func (l *limiter) sweepLocked(now time.Time) {
	if now.Sub(l.lastSweep) < limiterSweepEvery {
		return
	}
	l.lastSweep = now
	for key, st := range l.addrs {
		if st.preHello == 0 && now.Sub(st.lastSeen) >= limiterSweepEvery {
			delete(l.addrs, key)
		}
	}
}
