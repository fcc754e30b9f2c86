package gateway

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Names of the limits, as metric labels and in logs.
const (
	limitMaxConnections   = "max_connections"
	limitUpgradeRate      = "upgrade_rate"
	limitRequestsInFlight = "requests_in_flight"
	// limitGatewayRequestsInFlight and limitSendQueueBytes refuse a host request with busy.
	limitGatewayRequestsInFlight = "gateway_requests_in_flight"
	limitSendQueueBytes          = "send_queue_bytes"
)

// refusalLogEvery bounds refusal logs to one per (limit, address) per period, so a client
// hammering the gateway cannot flood the log.
const refusalLogEvery = time.Minute

// limiterSweepEvery is how often idle per-IP buckets and log marks are forgotten; a bucket
// idle this long is full again anyway, so forgetting it changes nothing.
const limiterSweepEvery = time.Minute

// limiter holds the per-remote-IP upgrade buckets and the refusal-log throttle.
type limiter struct {
	log   *slog.Logger
	limit rate.Limit
	burst int
	off   bool

	mu        sync.Mutex // guards the fields below
	buckets   map[string]*ipBucket
	loggedAt  map[string]time.Time // key: limit + " " + address
	lastSweep time.Time
}

type ipBucket struct {
	lim      *rate.Limiter
	lastSeen time.Time
}

func newLimiter(cfg Config, logger *slog.Logger) *limiter {
	return &limiter{
		log:       logger,
		limit:     rate.Limit(cfg.UpgradeRate),
		burst:     cfg.UpgradeBurst,
		off:       cfg.UpgradeRate < 0,
		buckets:   make(map[string]*ipBucket),
		loggedAt:  make(map[string]time.Time),
		lastSweep: time.Now(),
	}
}

// hostOf is the IP part of a remote address (the whole string if it has no port).
func hostOf(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

// allowUpgrade takes one token from the remote IP's bucket; false means refuse (and it logs
// the refusal, throttled).
func (l *limiter) allowUpgrade(remoteAddr string) bool {
	if l.off {
		return true
	}
	ip := hostOf(remoteAddr)
	now := time.Now()
	l.mu.Lock()
	l.sweepLocked(now)
	b := l.buckets[ip]
	if b == nil {
		b = &ipBucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[ip] = b
	}
	b.lastSeen = now
	ok := b.lim.AllowN(now, 1)
	l.mu.Unlock()
	if !ok {
		l.logRefusal(limitUpgradeRate, ip, "rate", float64(l.limit), "burst", l.burst)
	}
	return ok
}

// logRefusal logs that limit refused address, at most once per refusalLogEvery per pair.
func (l *limiter) logRefusal(limit, address string, attrs ...any) {
	key := limit + " " + hostOf(address)
	now := time.Now()
	l.mu.Lock()
	l.sweepLocked(now)
	last, seen := l.loggedAt[key]
	if seen && now.Sub(last) < refusalLogEvery {
		l.mu.Unlock()
		return
	}
	l.loggedAt[key] = now
	l.mu.Unlock()
	l.log.Warn("limit reached, refusing (further refusals for this address are not logged for a minute)",
		append([]any{"limit", limit, "remote", address}, attrs...)...)
}

// sweepLocked forgets idle buckets and old log marks; l.mu must be held.
func (l *limiter) sweepLocked(now time.Time) {
	if now.Sub(l.lastSweep) < limiterSweepEvery {
		return
	}
	l.lastSweep = now
	for ip, b := range l.buckets {
		if now.Sub(b.lastSeen) >= limiterSweepEvery {
			delete(l.buckets, ip)
		}
	}
	for k, at := range l.loggedAt {
		if now.Sub(at) >= refusalLogEvery {
			delete(l.loggedAt, k)
		}
	}
}
