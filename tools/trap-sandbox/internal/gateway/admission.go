package gateway

import "time"

// Admission. Every computer of a Minecraft server reaches the gateway from the server's one
// address, and a socket proves nothing until its hello: at the upgrade, a computer with the
// password and a loop without one look the same. So no budget that a socket spends before its
// hello may refuse an upgrade, or one in-game loop would lock its neighbours out. Instead:
//
//   - Nothing is refused while a socket without a good hello is open anywhere: to make room
//     (the connection cap, the gateway's cap on sockets before hello, or the address's), the
//     newcomer evicts the oldest socket before hello: of its own address when that one is
//     over its cap, else of the whole gateway. A computer says hello within a round trip of
//     opening, so it is among the newest until it has; a socket that never says hello ages
//     until it is the oldest. Authenticated computers are never evicted: HTTP 503 only when
//     they fill the gateway. Nor, for the caps on sockets before hello, is a link session once
//     it holds a code: it waits minutes for the approval, the oldest of the queue, and a flood
//     would evict every player's code; the code budgets (link.begin) bound how many there are.
//     At the connection cap, with no socket before hello left, the oldest such link session
//     makes room: it never takes a computer's place.
//   - Under pressure (the address over its upgrade rate, or the gateway's sockets before
//     hello at half their cap), a new socket gets PressureHelloTimeout instead of
//     HelloTimeout.
//   - An evicted socket is closed with 4008 without waiting for the peer's close frame
//     (evictCloseTimeout), so that evictions cannot pile up open files.

// evictCloseTimeout bounds writing an evicted socket's last frames and its close frame: a peer
// that does not read holds its file only this long.
const evictCloseTimeout = 100 * time.Millisecond

// evictReason is the close reason of an evicted socket (code 4008).
const evictReason = "no hello in time (evicted: the gateway needed room)"

// evictLinkReason is the close reason of an evicted link session (code 4008 too): it said its
// hello (link:true) at once and waits for its code, or holds one at the connection cap, so
// "no hello in time" told its player a wrong reason; the gateway is busy, and `sandbox link`
// again finds room.
const evictLinkReason = "the gateway is busy (evicted: it needed room)"

// Caps an eviction makes room under (the label of trapos_gateway_evicted_before_hello_total).
const (
	evictedForAddress     = "address"     // MaxUnauthenticatedPerAddress
	evictedForGateway     = "gateway"     // MaxUnauthenticated
	evictedForConnections = "connections" // MaxConnections
)

// connSlot is what one socket holds of the gateway's capacity, from admit to release: a
// connection slot, and until its hello succeeds a place in its address's queue of sockets
// before hello. The admission above decides who gets one. Its fields are guarded by
// limiter.mu.
type connSlot struct {
	addr    *addrState
	session *Session // set by bind; nil while the upgrade runs
	// prev and next link the address's queue, older and newer the gateway's, while preHello
	// is set; older and newer link the gateway's queue of link sessions with a code instead
	// while linking is set.
	prev, next   *connSlot
	older, newer *connSlot
	preHello     bool
	linking      bool
	open         bool // holds a connection slot
	evicted      bool
	// helloTimeout is HelloTimeout, or PressureHelloTimeout when admitted under pressure.
	helloTimeout time.Duration
}

// maxPreHello is the gateway's cap on sockets before hello: MaxUnauthenticated, and never
// more than the connection cap.
func (l *limiter) maxPreHello() int { return min(l.cfg.MaxUnauthenticated, l.cfg.MaxConnections) }

// admit decides on a new socket from remoteAddr. It returns its connSlot, after evicting
// the socket that makes room for it if one must go; nil means the gateway is full of
// authenticated computers (HTTP 503).
func (l *limiter) admit(remoteAddr string) *connSlot {
	now := l.clock.Now()
	l.mu.Lock()
	st := l.stateLocked(remoteAddr, now)
	overRate := l.cfg.UpgradeRate >= 0 && !st.upgrades.AllowN(now, 1)
	var victim *connSlot
	evictedFor := ""
	switch {
	case st.preHello >= l.cfg.MaxUnauthenticatedPerAddress:
		victim, evictedFor = st.first, evictedForAddress
	case l.preHello >= l.maxPreHello():
		victim, evictedFor = l.oldest, evictedForGateway
	case l.open >= l.cfg.MaxConnections:
		victim, evictedFor = l.oldest, evictedForConnections
		if victim == nil {
			victim = l.links.oldest
		}
		if victim == nil {
			open := l.open
			l.mu.Unlock()
			l.metrics.limited(limitMaxConnections)
			l.logRefusal(limitMaxConnections, remoteAddr, "max", l.cfg.MaxConnections, "open", open)
			return nil
		}
	}
	victimLinks := false
	if victim != nil {
		victimLinks = victim.linking
		l.leaveQueueLocked(victim)
		l.leaveLinksLocked(victim)
		l.open--
		victim.open, victim.evicted = false, true
	}
	a := &connSlot{addr: st, open: true, helloTimeout: l.cfg.HelloTimeout}
	if overRate || 2*l.preHello >= l.maxPreHello() {
		a.helloTimeout = min(l.cfg.PressureHelloTimeout, l.cfg.HelloTimeout)
	}
	l.open++
	l.joinQueueLocked(a)
	var evict *Session
	if victim != nil {
		evict = victim.session // nil while its upgrade runs: bind will refuse it
	}
	l.mu.Unlock()

	if overRate {
		l.metrics.limited(limitUpgradeRate)
	}
	if victim != nil {
		l.metrics.evicted(evictedFor)
		what := "evicting a socket that has not said hello, to make room"
		switch {
		case victimLinks:
			what = "evicting a link session that holds a code, to make room"
		case evictedFor == evictedForAddress:
			// One address: a loop, or a Minecraft server whose computers all reconnect at once.
			what += ": more sockets from its address wait for their hello than --max-unauthenticated-per-address (SANDBOX_MAX_UNAUTHENTICATED_PER_ADDRESS) allows; " +
				"a loop that says nothing, or a Minecraft server's restart with more computers than that: raise it to their number (docs/protocol.md, Admission)"
		}
		l.warns.warn(what, victim.addr.key, "cap", evictedFor, "for", remoteAddr)
		if evict != nil {
			evict.evict()
		}
	}
	return a
}

// bind ties a to its session once the upgrade succeeded; false means a was evicted meanwhile
// (the caller closes the socket).
func (l *limiter) bind(a *connSlot, s *Session) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.evicted {
		return false
	}
	a.session = s
	return true
}

// helloSucceeded takes a out of the queues of sockets before hello: an authenticated computer
// is never evicted. False means a was evicted first (its close is under way).
func (l *limiter) helloSucceeded(a *connSlot) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.evicted {
		return false
	}
	l.leaveQueueLocked(a)
	l.leaveLinksLocked(a)
	return true
}

// linkCodeGiven moves a, a link session that link.begin gave a code (link.go), from the queues
// of sockets before hello to the gateway's queue of link sessions: the caps on sockets before
// hello no longer evict it (the code budgets pay for it), the connection cap still may.
func (l *limiter) linkCodeGiven(a *connSlot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.evicted || !a.preHello {
		return // evicted (its close is under way), or moved already
	}
	l.leaveQueueLocked(a)
	a.linking, a.older, a.newer = true, l.links.newest, nil
	if l.links.newest != nil {
		l.links.newest.newer = a
	} else {
		l.links.oldest = a
	}
	l.links.newest = a
}

// release gives back what a holds; the socket has ended (or its upgrade failed). Later calls
// do nothing.
func (l *limiter) release(a *connSlot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.leaveQueueLocked(a)
	l.leaveLinksLocked(a)
	if a.open {
		a.open = false
		l.open--
	}
}

// counts returns the admitted sockets and those of them before hello.
func (l *limiter) counts() (open, preHello int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, l.preHello
}

// joinQueueLocked appends a to its address's queue of sockets before hello, and the gateway's.
func (l *limiter) joinQueueLocked(a *connSlot) {
	st := a.addr
	a.preHello, a.prev, a.next = true, st.last, nil
	if st.last != nil {
		st.last.next = a
	} else {
		st.first = a
	}
	st.last = a
	a.older, a.newer = l.newest, nil
	if l.newest != nil {
		l.newest.newer = a
	} else {
		l.oldest = a
	}
	l.newest = a
	st.preHello++
	l.preHello++
}

// leaveQueueLocked takes a out of both queues, if it is in them.
func (l *limiter) leaveQueueLocked(a *connSlot) {
	if !a.preHello {
		return
	}
	st := a.addr
	if a.prev != nil {
		a.prev.next = a.next
	} else {
		st.first = a.next
	}
	if a.next != nil {
		a.next.prev = a.prev
	} else {
		st.last = a.prev
	}
	if a.older != nil {
		a.older.newer = a.newer
	} else {
		l.oldest = a.newer
	}
	if a.newer != nil {
		a.newer.older = a.older
	} else {
		l.newest = a.older
	}
	a.preHello, a.prev, a.next, a.older, a.newer = false, nil, nil, nil, nil
	st.preHello--
	l.preHello--
}

// leaveLinksLocked takes a out of the gateway's queue of link sessions, if it is in it.
func (l *limiter) leaveLinksLocked(a *connSlot) {
	if !a.linking {
		return
	}
	if a.older != nil {
		a.older.newer = a.newer
	} else {
		l.links.oldest = a.newer
	}
	if a.newer != nil {
		a.newer.older = a.older
	} else {
		l.links.newest = a.older
	}
	a.linking, a.older, a.newer = false, nil, nil
}
