package gateway

import (
	"container/heap"
	"time"
)

// Admission. Every computer of a Minecraft server reaches the gateway from the server's one
// address, and a socket proves nothing until its hello: at the upgrade, a computer with the
// password and a loop without one look the same. So no budget that a socket spends before its
// hello may refuse an upgrade, or one in-game loop would lock its neighbours out. Instead:
//
//   - Nothing is refused while a socket without a good hello is open anywhere: to make room
//     (the connection cap, the gateway's cap on sockets before hello, or the address's), the
//     newcomer evicts the oldest socket before hello of the address that holds the most (its
//     own address, when that one is over its cap). A computer says hello within a round trip
//     of opening, so it is never the oldest for long; a socket that never says hello is.
//     Authenticated computers are never evicted: HTTP 503 only when they fill the gateway.
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

// Caps an eviction makes room under (the label of trapos_gateway_evicted_before_hello_total).
const (
	evictedForAddress     = "address"     // MaxUnauthenticatedPerAddress
	evictedForGateway     = "gateway"     // MaxUnauthenticated
	evictedForConnections = "connections" // MaxConnections
)

// admission is one socket's claim on the gateway's capacity, from admit to release: a
// connection slot, and until its hello succeeds a place in its address's queue of sockets
// before hello. Its fields are guarded by limiter.mu.
type admission struct {
	addr    *addrState
	session *Session // set by bind; nil while the upgrade runs
	// prev and next link the address's queue while preHello is set.
	prev, next *admission
	preHello   bool
	open       bool // holds a connection slot
	evicted    bool
	// helloTimeout is HelloTimeout, or PressureHelloTimeout when admitted under pressure.
	helloTimeout time.Duration
}

// maxPreHello is the gateway's cap on sockets before hello: MaxUnauthenticated, and never
// more than the connection cap.
func (l *limiter) maxPreHello() int { return min(l.cfg.MaxUnauthenticated, l.cfg.MaxConnections) }

// admit decides on a new socket from remoteAddr. It returns its admission, after evicting
// the socket that makes room for it if one must go; nil means the gateway is full of
// authenticated computers (HTTP 503).
func (l *limiter) admit(remoteAddr string) *admission {
	now := l.clock.Now()
	l.mu.Lock()
	st := l.stateLocked(remoteAddr, now)
	overRate := l.cfg.UpgradeRate >= 0 && !st.upgrades.AllowN(now, 1)
	var victim *admission
	evictedFor := ""
	switch {
	case st.preHello >= l.cfg.MaxUnauthenticatedPerAddress:
		victim, evictedFor = st.first, evictedForAddress
	case l.preHello >= l.maxPreHello():
		victim, evictedFor = l.heavy.top(), evictedForGateway
	case l.open >= l.cfg.MaxConnections:
		victim, evictedFor = l.heavy.top(), evictedForConnections
		if victim == nil {
			open := l.open
			l.mu.Unlock()
			l.metrics.limited(limitMaxConnections)
			l.logRefusal(limitMaxConnections, remoteAddr, "max", l.cfg.MaxConnections, "open", open)
			return nil
		}
	}
	if victim != nil {
		l.leaveQueueLocked(victim)
		l.open--
		victim.open, victim.evicted = false, true
	}
	a := &admission{addr: st, open: true, helloTimeout: l.cfg.HelloTimeout}
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
		l.warns.warn("evicting a socket that has not said hello, to make room", victim.addr.key,
			"cap", evictedFor, "for", remoteAddr)
		if evict != nil {
			evict.evict()
		}
	}
	return a
}

// bind ties a to its session once the upgrade succeeded; false means a was evicted meanwhile
// (the caller closes the socket).
func (l *limiter) bind(a *admission, s *Session) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.evicted {
		return false
	}
	a.session = s
	return true
}

// helloSucceeded moves a out of its address's queue: an authenticated computer is never
// evicted. False means a was evicted first (its close is under way).
func (l *limiter) helloSucceeded(a *admission) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.evicted {
		return false
	}
	l.leaveQueueLocked(a)
	return true
}

// release gives back what a holds; the socket has ended (or its upgrade failed). Later calls
// do nothing.
func (l *limiter) release(a *admission) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.leaveQueueLocked(a)
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

// joinQueueLocked appends a to its address's queue of sockets before hello.
func (l *limiter) joinQueueLocked(a *admission) {
	st := a.addr
	a.preHello, a.prev, a.next = true, st.last, nil
	if st.last != nil {
		st.last.next = a
	} else {
		st.first = a
	}
	st.last = a
	st.preHello++
	l.preHello++
	l.heavy.changed(st)
}

// leaveQueueLocked takes a out of its address's queue, if it is in it.
func (l *limiter) leaveQueueLocked(a *admission) {
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
	a.preHello, a.prev, a.next = false, nil, nil
	st.preHello--
	l.preHello--
	l.heavy.changed(st)
}

// addrHeap is a max-heap of the addresses with sockets before hello, by how many they hold.
type addrHeap []*addrState

func (h addrHeap) Len() int           { return len(h) }
func (h addrHeap) Less(i, j int) bool { return h[i].preHello > h[j].preHello }
func (h addrHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex, h[j].heapIndex = i, j
}

// Push and Pop implement heap.Interface; use changed instead.
func (h *addrHeap) Push(x any) {
	st := x.(*addrState)
	st.heapIndex = len(*h)
	*h = append(*h, st)
}

func (h *addrHeap) Pop() any {
	old := *h
	st := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	st.heapIndex = -1
	return st
}

// changed restores the heap after st's count of sockets before hello changed: st joins when it
// has some, leaves when it has none.
func (h *addrHeap) changed(st *addrState) {
	switch {
	case st.heapIndex < 0 && st.preHello > 0:
		heap.Push(h, st)
	case st.heapIndex >= 0 && st.preHello == 0:
		heap.Remove(h, st.heapIndex)
	case st.heapIndex >= 0:
		heap.Fix(h, st.heapIndex)
	}
}

// top is the oldest socket before hello of the address that holds the most; nil if none.
func (h addrHeap) top() *admission {
	if len(h) == 0 {
		return nil
	}
	return h[0].first
}
