package gateway

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"trap-sandbox/internal/clock"
)

// Names of the limits, as metric labels and in logs.
const (
	limitMaxConnections   = "max_connections"
	limitUpgradeRate      = "upgrade_rate"
	limitUnauthenticated  = "unauthenticated_sockets"
	limitFailedHellos     = "failed_hellos"
	limitRequestsInFlight = "requests_in_flight"
	// limitGatewayRequestsInFlight and limitSendQueueBytes refuse a host request with busy.
	limitGatewayRequestsInFlight = "gateway_requests_in_flight"
	limitSendQueueBytes          = "send_queue_bytes"
)

// limiterSweepEvery is how often idle per-address state is forgotten; a bucket idle this
// long is full again anyway, so forgetting it changes nothing.
const limiterSweepEvery = time.Minute

// limiter holds the per-address limits of sockets before hello: the upgrade token bucket,
// the failed-hello token bucket and the count of unauthenticated sockets. An address is an
// IPv4 address or an IPv6 /64 (addressKey): one host usually owns a whole /64.
type limiter struct {
	cfg   Config
	clock clock.Clock
	warns *warnThrottle

	mu        sync.Mutex // guards the fields below
	addrs     map[string]*addrState
	lastSweep time.Time
}

type addrState struct {
	upgrades     *rate.Limiter
	failedHellos *rate.Limiter
	unauth       int // sockets from this address without a good hello yet
	lastSeen     time.Time
}

func newLimiter(cfg Config, logger *slog.Logger) *limiter {
	return &limiter{
		cfg:       cfg,
		clock:     cfg.Clock,
		warns:     newWarnThrottle(logger, cfg.Clock),
		addrs:     make(map[string]*addrState),
		lastSweep: cfg.Clock.Now(),
	}
}

// hostOf is the IP part of a remote address (the whole string if it has no port).
func hostOf(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

// addressKey is what per-address limits count by: the IPv4 address, or the /64 of an IPv6
// one (an IPv4-mapped IPv6 address counts as its IPv4 address).
func addressKey(remoteAddr string) string {
	ip, err := netip.ParseAddr(hostOf(remoteAddr))
	if err != nil {
		return hostOf(remoteAddr)
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	prefix, _ := ip.Prefix(64)
	return prefix.String()
}

// stateLocked returns the state of remoteAddr's address, creating it; l.mu must be held.
func (l *limiter) stateLocked(remoteAddr string, now time.Time) *addrState {
	l.sweepLocked(now)
	key := addressKey(remoteAddr)
	st := l.addrs[key]
	if st == nil {
		st = &addrState{
			upgrades:     rate.NewLimiter(rate.Limit(l.cfg.UpgradeRate), l.cfg.UpgradeBurst),
			failedHellos: rate.NewLimiter(rate.Limit(l.cfg.FailedHelloRate), l.cfg.FailedHelloBurst),
		}
		l.addrs[key] = st
	}
	st.lastSeen = now
	return st
}

// admit decides whether a new socket from remoteAddr may upgrade: a token from its
// address's upgrade bucket, and room under the address's cap on unauthenticated sockets.
// It returns "" and counts the socket as unauthenticated, or names the limit that refused.
func (l *limiter) admit(remoteAddr string) string {
	now := l.clock.Now()
	l.mu.Lock()
	st := l.stateLocked(remoteAddr, now)
	refused := ""
	switch {
	case st.unauth >= l.cfg.MaxUnauthenticatedPerAddress:
		refused = limitUnauthenticated
	case l.cfg.UpgradeRate >= 0 && !st.upgrades.AllowN(now, 1):
		refused = limitUpgradeRate
	default:
		st.unauth++
	}
	unauth := st.unauth
	l.mu.Unlock()
	switch refused {
	case limitUnauthenticated:
		l.logRefusal(refused, remoteAddr, "max", l.cfg.MaxUnauthenticatedPerAddress, "open", unauth)
	case limitUpgradeRate:
		l.logRefusal(refused, remoteAddr, "rate", l.cfg.UpgradeRate, "burst", l.cfg.UpgradeBurst)
	}
	return refused
}

// leaveUnauthenticated gives back the unauthenticated slot admit counted, once the socket's
// hello has succeeded or it has ended without one.
func (l *limiter) leaveUnauthenticated(remoteAddr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st := l.addrs[addressKey(remoteAddr)]; st != nil && st.unauth > 0 {
		st.unauth--
	}
}

// helloFailed counts a failed hello from remoteAddr and returns how long its answer must
// wait: nothing within the address's burst, then one answer per 1/FailedHelloRate, capped at
// maxFailedHelloDelay. A socket waiting for its verdict keeps its unauthenticated slot, so
// one address cannot try more secrets at once than MaxUnauthenticatedPerAddress.
func (l *limiter) helloFailed(remoteAddr string) time.Duration {
	now := l.clock.Now()
	l.mu.Lock()
	st := l.stateLocked(remoteAddr, now)
	delay := st.failedHellos.ReserveN(now, 1).DelayFrom(now)
	l.mu.Unlock()
	return min(delay, maxFailedHelloDelay)
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
		if st.unauth == 0 && now.Sub(st.lastSeen) >= limiterSweepEvery {
			delete(l.addrs, key)
		}
	}
}
