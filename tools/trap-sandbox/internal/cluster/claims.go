package cluster

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"trap-sandbox/internal/gateway"
)

// Newest wins across replicas. A claim's revision in ClaimsBucket is its place in one total
// order over every write to the bucket, so whichever hello wrote its claim later is the newer
// one, wherever it landed. A replica closes its local socket (4009) when it learns of a later
// claim by another replica: from the bucket watcher, or, for a claim still being written when
// that news arrived, from reading the key back right after writing it.

// writeClaim claims s's computer for this replica and records the claim's revision. Without
// NATS the hello stands locally, and the claim is written when NATS is back (reclaim).
func (r *Router) writeClaim(s *gateway.Session) {
	if !r.nc.IsConnected() {
		r.log.Warn("NATS is unreachable: the computer is served here but not announced to the other replicas yet",
			"traposId", s.Key().TraposID)
		return
	}
	k := s.Key()
	key := claimKey(k)
	ctx, cancel := context.WithTimeout(r.ctx, r.cfg.OpTimeout)
	defer cancel()
	rev, err := r.claims.Put(ctx, key, encodeClaim(r.cfg.Replica, s.Computer()))
	if err != nil {
		r.log.Warn("cannot claim the computer in NATS: it is served here but not announced to the other replicas",
			"traposId", k.TraposID, "err", err)
		return
	}
	r.mu.Lock()
	if h := r.held[k]; h != nil && h.s == s {
		h.rev = rev
	}
	r.mu.Unlock()
	// A later claim that arrived at the watcher before rev was known was not acted on there.
	if e, err := r.claims.Get(ctx, key); err == nil && e.Revision() > rev && !r.ownClaim(e) {
		r.evictIfOlder(k, e.Revision())
	}
}

// deleteClaim withdraws the claim key at revision rev, unless a later write replaced it; it
// runs in the background, as Unregister is called while a session closes.
func (r *Router) deleteClaim(key string, rev uint64) {
	if !r.spawn(func() { r.deleteClaimNow(key, rev) }) {
		r.deleteClaimNow(key, rev) // closing: Close waits for nothing more, so do it here
	}
}

func (r *Router) deleteClaimNow(key string, rev uint64) {
	if !r.nc.IsConnected() {
		return // the claim ages out with this replica's heartbeat, or reclaim rewrites it
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.OpTimeout)
	defer cancel()
	err := r.claims.Delete(ctx, key, jetstream.LastRevision(rev))
	if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		r.log.Debug("cannot withdraw a claim", "key", key, "err", err)
	}
}

// ownClaim reports whether entry e is a claim by this replica.
func (r *Router) ownClaim(e jetstream.KeyValueEntry) bool {
	var c claim
	return json.Unmarshal(e.Value(), &c) == nil && c.Replica == r.cfg.Replica
}

// claimChanged applies one change of ClaimsBucket, in revision order (the watcher's goroutine).
func (r *Router) claimChanged(e jetstream.KeyValueEntry) {
	k, err := parseClaimKey(e.Key())
	if err != nil {
		r.log.Debug("ignored a claim with a foreign key", "key", e.Key(), "err", err)
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		r.claimDeleted(k, e)
		return
	}
	var c claim
	if err := json.Unmarshal(e.Value(), &c); err != nil || c.Replica == "" {
		r.log.Debug("ignored a claim that is not JSON", "key", e.Key())
		return
	}
	r.mu.Lock()
	if c.Replica == r.cfg.Replica {
		delete(r.remote, e.Key())
		// At start-up no socket is held yet: a claim in this replica's name is left over from
		// its previous run and would route nowhere.
		stale := !r.ready && r.held[k] == nil
		r.mu.Unlock()
		if stale {
			r.deleteClaim(e.Key(), e.Revision())
		}
		return
	}
	r.remote[e.Key()] = remoteClaim{claim: c, rev: e.Revision()}
	r.mu.Unlock()
	r.evictIfOlder(k, e.Revision())
}

// evictIfOlder closes the local socket of k (4009) if its claim is older than rev.
func (r *Router) evictIfOlder(k gateway.Key, rev uint64) {
	r.mu.Lock()
	var evict *gateway.Session
	if h := r.held[k]; h != nil && h.rev != 0 && h.rev < rev {
		evict = h.s
	}
	r.mu.Unlock()
	if evict != nil {
		r.log.Info("computer said hello on another replica: closing its socket here", "traposId", k.TraposID)
		evict.Evict()
	}
}

// claimDeleted applies a deleted claim. If the computer's socket is still here, the claim was
// withdrawn by a replica that took this one for dead; it is written again.
func (r *Router) claimDeleted(k gateway.Key, e jetstream.KeyValueEntry) {
	r.mu.Lock()
	delete(r.remote, e.Key())
	var rewrite *gateway.Session
	if h := r.held[k]; h != nil && h.rev != 0 && h.rev < e.Revision() {
		rewrite = h.s
		h.rev = 0
	}
	r.mu.Unlock()
	if rewrite != nil {
		r.spawn(func() { r.writeClaim(rewrite) })
	}
}

// reclaim runs when NATS is back: every socket held here whose claim is missing (written while
// NATS was away, or withdrawn meanwhile) is claimed now; one that another replica claimed later
// is closed.
func (r *Router) reclaim() {
	r.mu.Lock()
	hs := make(map[gateway.Key]held, len(r.held))
	for k, h := range r.held {
		hs[k] = *h
	}
	r.mu.Unlock()
	for k, h := range hs {
		if h.rev == 0 {
			r.writeClaim(h.s)
			continue
		}
		ctx, cancel := context.WithTimeout(r.ctx, r.cfg.OpTimeout)
		e, err := r.claims.Get(ctx, claimKey(k))
		cancel()
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			r.writeClaim(h.s)
		case err != nil:
			r.log.Debug("cannot check a claim after reconnecting", "traposId", k.TraposID, "err", err)
		case e.Revision() > h.rev && !r.ownClaim(e):
			r.evictIfOlder(k, e.Revision())
		}
	}
}
