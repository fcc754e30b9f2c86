package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"trap-sandbox/internal/gateway"
)

// Presence. Each replica puts a heartbeat into ReplicasBucket every HeartbeatInterval; every
// replica notes, by its own clock, when it last saw each one. A replica is alive once heard
// from and until it has been silent for ReplicaTTL (or deleted its heartbeat on stopping);
// then its computers leave the lists, and the requests routed to it fail, at once. Its claims
// are withdrawn once it has been silent for twice ReplicaTTL, by whichever replica notices
// first (a replica that was only cut off writes its claims again when it is back:
// claimDeleted, reclaim). A claim by a replica that is not alive is not acted on (claims.go).
//
// A replica that stops cleanly says goodbye once for all its computers (Leave): it deletes its
// heartbeat before it closes its sockets, and withdraws no claim one by one. One delete per
// socket, each applied by every replica, made six replicas of 17 000 computers take half a
// minute to stop. The others set the claims of a replica that said goodbye aside at once
// (leftovers: listed and routed to no more, and not again if it restarts under its name) and
// delete them from the bucket twice ReplicaTTL later, each delete conditional on the revision
// they saw, so a computer that said hello elsewhere meanwhile keeps its newer claim. A replica
// restarted under the same name deletes the claims of its previous run itself (claimChanged).

// heartbeatValue is a replica's entry in ReplicasBucket.
type heartbeatValue struct {
	Replica string    `json:"replica"`
	Started time.Time `json:"started"`
}

// heartbeat writes this replica's heartbeat once, unless it is leaving.
func (r *Router) heartbeat(ctx context.Context) error {
	r.beatMu.Lock() // a goodbye (Leave) is never followed by a heartbeat written before it
	defer r.beatMu.Unlock()
	if r.isLeaving() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.OpTimeout)
	defer cancel()
	b, _ := json.Marshal(heartbeatValue{Replica: r.cfg.Replica, Started: r.started})
	if _, err := r.replicas.Put(ctx, escapeToken(r.cfg.Replica), b); err != nil {
		return fmt.Errorf("write the heartbeat of replica %s: %w", r.cfg.Replica, err)
	}
	return nil
}

// Leave implements gateway.Leaver: the replica is stopping. It deletes its heartbeat, so every
// other replica drops its computers from the lists and fails the requests routed to it at
// once; from now on it writes no claim and withdraws none (the others sweep them). A replica
// cut off from NATS says nothing: the others find out as they do of a crash.
func (r *Router) Leave() {
	r.mu.Lock()
	if r.leaving {
		r.mu.Unlock()
		return
	}
	r.leaving = true
	r.mu.Unlock()
	r.beatMu.Lock()
	defer r.beatMu.Unlock()
	if !r.nc.IsConnected() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.OpTimeout)
	defer cancel()
	if err := r.replicas.Delete(ctx, escapeToken(r.cfg.Replica)); err != nil {
		r.log.Warn("cannot say goodbye to the other replicas: they drop this replica's computers when its heartbeat is older than --nats-replica-ttl", "err", err)
	}
}

func (r *Router) isLeaving() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leaving
}

// heartbeatLoop beats every HeartbeatInterval until the router closes, and withdraws the claims
// of replicas long dead.
func (r *Router) heartbeatLoop() {
	timer := r.cfg.Clock.NewTimer(r.cfg.HeartbeatInterval)
	defer timer.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-timer.C():
		}
		timer.Reset(r.cfg.HeartbeatInterval)
		if !r.nc.IsConnected() {
			continue
		}
		if err := r.heartbeat(r.ctx); err != nil {
			r.log.Debug("heartbeat failed", "err", err)
		}
		r.startSweep()
		r.settleDoubts()
		r.watchHolders()
	}
}

// heartbeatArrived applies one change of ReplicasBucket (the watcher's goroutine).
func (r *Router) heartbeatArrived(e jetstream.KeyValueEntry) {
	name, err := unescapeToken(e.Key())
	if err != nil || name == r.cfg.Replica {
		return
	}
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	if e.Operation() != jetstream.KeyValuePut {
		// A replica that shut down cleanly deletes its heartbeat (Leave): it is gone now, not
		// in a TTL, and its claims are set aside for the sweep.
		r.lastSeen[name] = now
		r.stopped[name] = true
		r.setAsideLocked(name, now)
		r.mu.Unlock()
		r.failRoutesTo(name, "has stopped")
		return
	}
	wasAlive := r.aliveLocked(name, now)
	r.lastSeen[name] = now
	delete(r.stopped, name)
	r.mu.Unlock()
	if !wasAlive {
		r.believeClaimsOf(name)
	}
}

// aliveLocked reports whether replica has been heard from, within ReplicaTTL; r.mu is held.
func (r *Router) aliveLocked(replica string, now time.Time) bool {
	if replica == r.cfg.Replica {
		return true
	}
	t, heard := r.lastSeen[replica]
	return heard && !r.stopped[replica] && now.Sub(t) < r.cfg.ReplicaTTL
}

// alive is aliveLocked for a caller without r.mu.
func (r *Router) alive(replica string) bool {
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.aliveLocked(replica, now)
}

// lastSeenLocked is when replica's last heartbeat (or its deletion) arrived, for sweep; one
// never heard from counts from this router's start, so its claims are withdrawn twice
// ReplicaTTL after it. r.mu is held.
func (r *Router) lastSeenLocked(replica string) time.Time {
	if t, ok := r.lastSeen[replica]; ok {
		return t
	}
	return r.started
}

// aliveReplicas counts the live replicas, this one included.
func (r *Router) aliveReplicas() int {
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 1
	for name := range r.lastSeen {
		if name != r.cfg.Replica && r.aliveLocked(name, now) {
			n++
		}
	}
	return n
}

// startSweep sweeps in a goroutine of its own, unless a sweep is still running: a replica that
// stopped or died may leave tens of thousands of claims, one delete each, and the heartbeats
// must not wait for them (nor Close: the router's context ends a sweep).
func (r *Router) startSweep() {
	r.mu.Lock()
	if r.sweeping {
		r.mu.Unlock()
		return
	}
	r.sweeping = true
	r.mu.Unlock()
	done := func() {
		r.mu.Lock()
		r.sweeping = false
		r.mu.Unlock()
	}
	if !r.spawn(func() { defer done(); r.sweep() }) {
		done()
	}
}

// leftovers are the claims a replica left in the bucket when it said goodbye.
type leftovers struct {
	since  time.Time              // the goodbye, by cfg.Clock
	claims map[gateway.Key]uint64 // computer → the revision of its claim
}

// setAsideLocked moves the claims of replica, which said goodbye, out of the other replicas'
// computers into its leftovers. A replica that is leaving itself keeps them: it lists and
// sweeps nothing any more, and at 100 000 computers the move is not free. r.mu is held.
func (r *Router) setAsideLocked(replica string, now time.Time) {
	if r.leaving {
		return
	}
	var moved []gateway.Key
	l := r.leftovers[replica]
	r.remote.all(func(traposID string, c remoteClaim) {
		if c.replica() != replica {
			return
		}
		if l == nil {
			l = &leftovers{since: now, claims: make(map[gateway.Key]uint64)}
			r.leftovers[replica] = l
		}
		k := gateway.Key{AccountID: c.account(), TraposID: traposID}
		l.claims[k] = c.rev
		moved = append(moved, k)
	})
	for _, k := range moved {
		r.remote.delete(k)
	}
}

// leftoverLocked applies a change at revision rev of k's claim to the leftovers: it reports
// whether the change is a leftover claim itself (the bucket read again after a reconnection),
// and forgets a leftover that a later write replaced or deleted. r.mu is held.
func (r *Router) leftoverLocked(k gateway.Key, rev uint64) bool {
	for name, l := range r.leftovers {
		left, ok := l.claims[k]
		switch {
		case !ok:
			continue
		case left == rev:
			return true
		case left < rev:
			r.dropLeftoverLocked(name, k)
		}
	}
	return false
}

// dropLeftoverLocked forgets k among replica's leftovers; r.mu is held.
func (r *Router) dropLeftoverLocked(replica string, k gateway.Key) {
	l := r.leftovers[replica]
	if l == nil {
		return
	}
	delete(l.claims, k)
	if len(l.claims) == 0 {
		delete(r.leftovers, replica)
	}
}

// sweep withdraws the claims of replicas silent for twice ReplicaTTL, so that a replica that
// died for good leaves nothing behind, and the leftovers of replicas that said goodbye twice
// ReplicaTTL ago. The deletes name the revision they saw, so a computer that has meanwhile
// said hello elsewhere keeps its newer claim. It stops when the router closes; the next
// replica's sweep, or this one's after a restart, does the rest.
func (r *Router) sweep() {
	now := r.cfg.Clock.Now()
	type stale struct {
		k        gateway.Key
		rev      uint64
		leftover string // the replica whose leftover it is; "" for a claim of a silent replica
	}
	var gone []stale
	r.mu.Lock()
	r.remote.all(func(traposID string, c remoteClaim) {
		if now.Sub(r.lastSeenLocked(c.replica())) >= 2*r.cfg.ReplicaTTL {
			gone = append(gone, stale{k: gateway.Key{AccountID: c.account(), TraposID: traposID}, rev: c.rev})
		}
	})
	for name, l := range r.leftovers {
		if now.Sub(l.since) >= 2*r.cfg.ReplicaTTL {
			for k, rev := range l.claims {
				gone = append(gone, stale{k: k, rev: rev, leftover: name})
			}
		}
	}
	r.mu.Unlock()
	for _, s := range gone {
		if r.ctx.Err() != nil {
			return
		}
		if s.leftover != "" && !r.isLeftover(s.leftover, s.k, s.rev) {
			continue // another replica's sweep deleted it, or a hello replaced it
		}
		if r.deleteClaimNow(r.ctx, claimKey(s.k), s.rev) && s.leftover != "" {
			r.mu.Lock() // gone, by this delete or a later write: the watcher brings the change too
			if r.isLeftoverLocked(s.leftover, s.k, s.rev) {
				r.dropLeftoverLocked(s.leftover, s.k)
			}
			r.mu.Unlock()
		}
	}
}

// isLeftover reports whether k's claim at rev is still among replica's leftovers.
func (r *Router) isLeftover(replica string, k gateway.Key, rev uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.isLeftoverLocked(replica, k, rev)
}

func (r *Router) isLeftoverLocked(replica string, k gateway.Key, rev uint64) bool {
	l := r.leftovers[replica]
	return l != nil && l.claims[k] == rev
}
