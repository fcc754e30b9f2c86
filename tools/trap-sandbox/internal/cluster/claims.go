package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"trap-sandbox/internal/gateway"
)

// Newest wins across replicas. A claim's revision in ClaimsBucket is its place in one total
// order over every write to the bucket, so whichever hello wrote its claim later is the newer
// one, wherever it landed. A replica closes its local socket (4009) when it learns of a later
// claim by another replica: from the bucket watcher, or, for a claim still being written when
// that news arrived, from reading the key back right after writing it.
//
// Only a claim by a live replica counts (presence.go). Every replica writes its heartbeat
// before it serves a hello, so the claimant's heartbeat arrives before its claims, or within a
// heartbeat interval at worst (two buckets, two watchers). A later claim by a replica not
// alive is doubted: the socket stays; if the claimant's heartbeat arrives, the claim is acted on
// then (believeClaimsOf); if none has arrived a heartbeat interval later, the claim was not
// written by a replica for a hello, and the holder writes its own claim again so that routing
// finds the socket (settleDoubts).
//
// A NATS restarted without its store has lost the bucket, and the one the replicas create
// again numbers its writes from 1: a claim a replica wrote before is compared with the new
// bucket's by whether it is still there, not by revision. After a reconnection (reclaim), a
// socket's claim found missing, or replaced by a claim at a revision that is not later, is gone
// (held.gone), and every claim of the computer in the bucket from then on is later than it.
//
// A claim that NATS, connected, did not take (a JetStream over a limit of the bucket, or
// electing a leader), or could not be checked after a reconnection, leaves the computer unknown
// to the other replicas: it is tried again at every heartbeat tick until NATS takes it
// (held.unannounced, retryClaims), logged once and counted (trapos_gateway_claims_unannounced).
// A hello whose claim never got a revision is ordered by what this replica knew at the hello:
// it is later than the claim it replaced there (held.over), which its claim is written over, and
// earlier than any other claim of the computer, which closes its socket (4009).
//
// A hello made while NATS was unreachable (held.offline) knew nothing of the hellos the other
// replicas served meanwhile: a computer whose socket went half-open in the blip that cut NATS
// off reconnects to another replica, and both replicas claim it when NATS is back. Its claim is
// written over the claim its hello replaced, or where there is none; over any other only if
// that claim's hello is earlier (claim.ConnectedSince), and otherwise its socket is the older
// one and closes (claimOver). Hello times come from two replicas' clocks: a skew between them
// larger than the time between the two hellos orders them wrongly. That time is at least the
// daemon's reconnection after the old socket's last frame (seconds), and NTP keeps replicas'
// clocks within milliseconds, so the skew that matters is a misconfigured host's; revisions,
// which need no clock, order every hello made while NATS was reachable.

// claimWritten, when a test sets it, is told each time writeClaim has written a claim (its
// key), before the claim's revision is recorded; nil otherwise.
var claimWritten func(key string)

// claimWriting, when a test sets it, is told each time writeClaimBy is about to write a claim
// (the replica's name, the key), NATS connected when it looked; nil otherwise.
var claimWriting func(replica, key string)

// writeClaim claims h's computer for this replica and records the claim's revision, if h is
// still the computer's hold here. Without NATS the hello stands locally, and the claim is
// written when NATS is back (reclaim). Once the replica is leaving, nothing is claimed: its
// sockets are closing, and the others have dropped its computers.
func (r *Router) writeClaim(h *held) { _ = r.writeClaimBy(h, r.claims.Put) }

// claimAgain writes the claim of h, whose claim is gone from the bucket (reclaim), only where
// the bucket still has none: a claim written since reclaim read none, by a hello on another
// replica, is later than this socket's hello and is acted on as such (laterClaimRead), where
// overwriting it would have closed the newer socket and kept this one.
func (r *Router) claimAgain(h *held) error {
	return r.writeClaimBy(h, func(ctx context.Context, key string, value []byte) (uint64, error) {
		return r.claims.Create(ctx, key, value)
	})
}

// claimOver writes the claim of h, whose hello's claim could not be written (reclaim,
// retryClaims), over the claim that the hello replaced (held.over) only, or where the bucket has
// none: a claim written since, by a hello on another replica after this one, is acted on as
// later (laterClaimRead), where overwriting it would close the newer socket and keep this one.
// A hello made while NATS was away (held.offline) goes over another claim too if that claim's
// hello is earlier (claimOverEarlier).
func (r *Router) claimOver(h *held) error {
	r.mu.Lock()
	over, offline := h.over, h.offline
	r.mu.Unlock()
	return r.writeClaimBy(h, func(ctx context.Context, key string, value []byte) (uint64, error) {
		if over != 0 {
			rev, err := r.claims.Update(ctx, key, value, over)
			if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
				return rev, err
			}
		}
		// No claim known at the hello, or the one it replaced was replaced or withdrawn since.
		if offline {
			return r.claimOverEarlier(ctx, h, key, value)
		}
		return r.claims.Create(ctx, key, value)
	})
}

// claimOverEarlier writes value, the claim of h, whose hello was made while NATS was away, where
// the bucket has no claim of the computer, or over the claim there if that one's hello is
// earlier than h's. If it is not, h's socket is the older one: h is marked as an unannounced
// hello (held.unannounced, claimedBefore) and ErrKeyExists returned, so that writeClaimBy acts on
// the claim as later (laterClaimRead: 4009 if its claimant is alive). A claim that changes while
// it is compared is compared again.
func (r *Router) claimOverEarlier(ctx context.Context, h *held, key string, value []byte) (uint64, error) {
	for {
		rev, err := r.claims.Create(ctx, key, value)
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return rev, err
		}
		e, err := r.claims.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // withdrawn since
		}
		if err != nil {
			return 0, err
		}
		var there claim
		notAClaim := json.Unmarshal(e.Value(), &there) != nil || there.Replica == "" // claimChanged ignores it too
		if notAClaim || there.ConnectedSince.Before(h.c.ConnectedSince) {
			rev, err = r.claims.Update(ctx, key, value, e.Revision())
			if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
				continue // written again since
			}
			return rev, err
		}
		r.mu.Lock()
		if r.held[h.key()] == h && h.offline {
			h.offline, h.unannounced = false, true
		}
		r.mu.Unlock()
		return 0, jetstream.ErrKeyExists
	}
}

// writeClaimBy is writeClaim, the claim written by write (the bucket's Put, Create or Update).
// It returns the write's error when NATS, connected, did not take the claim: the claim is then
// tried again at every heartbeat tick (retryClaims).
func (r *Router) writeClaimBy(h *held, write func(ctx context.Context, key string, value []byte) (uint64, error)) error {
	k := h.key()
	if r.isLeaving() {
		return nil
	}
	if !r.nc.IsConnected() {
		r.markOffline(k, h)
		r.log.Warn("NATS is unreachable: the computer is served here but not announced to the other replicas yet",
			"traposId", k.TraposID)
		return nil
	}
	key := claimKey(k)
	r.mu.Lock()
	retried := h.unannounced // a success is logged: the failure was
	r.mu.Unlock()
	ctx, cancel := r.opContext(r.ctx)
	defer cancel()
	if claimWriting != nil {
		claimWriting(r.cfg.Replica, key)
	}
	rev, err := write(ctx, key, encodeClaim(r.cfg.Replica, h.c, h.credential))
	if errors.Is(err, jetstream.ErrKeyExists) { // claimAgain or claimOver, too late
		if e, err := r.claims.Get(ctx, key); err == nil {
			r.laterClaimRead(k, e)
		}
		return nil
	}
	if err != nil && !r.nc.IsConnected() {
		// The link dropped as the claim was written: as for a hello made while NATS was away.
		// A claim that reached NATS all the same is this socket's, found by reclaim.
		r.markOffline(k, h)
		r.log.Warn("NATS is unreachable: the computer is served here but not announced to the other replicas yet",
			"traposId", k.TraposID, "err", err)
		return err
	}
	if err != nil {
		if r.markUnannounced(k, h) {
			r.log.Warn("cannot claim the computer in NATS: it is served here but not announced to the other replicas; trying again at every heartbeat",
				"traposId", k.TraposID, "err", err)
		}
		return err
	}
	if claimWritten != nil {
		claimWritten(key)
	}
	r.mu.Lock()
	cur := r.held[k]
	if cur == h && (h.gone || h.rev < rev) {
		h.claimedAt(rev) // of two writes of h at once, the later revision is the claim
	}
	r.mu.Unlock()
	if retried && cur == h {
		r.log.Info("claimed the computer in NATS: the other replicas find it now", "traposId", k.TraposID)
	}
	if cur != h {
		// Released (its socket closed) or replaced by a newer socket's claim while this one
		// was being written: the Release found no revision to withdraw, and the watcher may
		// have applied this claim while the computer was still held (claimChanged leaves it
		// then). It is withdrawn at its revision (a claim written after it stays), and a
		// newer socket's claim, which it may have overwritten, is written again after that.
		r.withdrawLate(key, rev, cur)
		return nil
	}
	// What arrived at the watcher before rev was known was not acted on there: a later claim,
	// or a withdrawal of this one (claimDeleted had no revision to tell it from a withdrawal of
	// an earlier claim), by a replica that took this one for dead, or a twin of its name
	// taking the claim for its previous run's (twin.go). The socket is still here: claimed again.
	e, err := r.claims.Get(ctx, key)
	switch {
	case err == nil && e.Revision() > rev:
		r.laterClaimRead(k, e)
	case errors.Is(err, jetstream.ErrKeyNotFound):
		r.mu.Lock()
		again := r.held[k] == h && h.rev == rev // else claimDeleted has seen to it, or it was released
		if again {
			h.rev = 0 // being written again
		}
		r.mu.Unlock()
		if again {
			r.spawn(func() { r.writeClaim(h) })
		}
	}
	return nil
}

// markOffline marks h, k's socket here, as a hello whose claim NATS could not be reached for
// (held.offline): reclaim writes it, ordered by hello time (claimOver). Nothing is marked if the
// socket was released meanwhile.
func (r *Router) markOffline(k gateway.Key, h *held) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held[k] == h {
		h.offline = true
	}
}

// markUnannounced marks the claim of h, k's socket here, as not known to be in the bucket
// (held.unannounced), and reports whether it was not marked so yet (the failure to log: once
// per computer, not per try). Nothing is marked if the socket was released meanwhile.
func (r *Router) markUnannounced(k gateway.Key, h *held) (first bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held[k] != h {
		return false
	}
	first = !h.unannounced
	h.unannounced = true
	return first
}

// unannounced counts the sockets held here whose claim is not known to be in the bucket.
func (r *Router) unannounced() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, h := range r.held {
		if h.unannounced {
			n++
		}
	}
	return n
}

// retryClaims runs at every heartbeat tick, in a goroutine of its own (a try waits up to
// OpTimeout): the claims that NATS, connected, did not take or could not be checked for after
// a reconnection (held.unannounced) are tried again, by reclaim's rules, until the first that
// fails again (NATS still refuses; the rest wait for the next tick).
func (r *Router) retryClaims() {
	type claimed struct {
		k   gateway.Key
		h   *held
		rev uint64
	}
	var todo []claimed
	r.mu.Lock()
	if r.retrying {
		r.mu.Unlock()
		return
	}
	for k, h := range r.held {
		if h.unannounced {
			todo = append(todo, claimed{k, h, h.rev})
		}
	}
	if len(todo) == 0 {
		r.mu.Unlock()
		return
	}
	r.retrying = true
	r.mu.Unlock()
	retry := func() {
		defer func() {
			r.mu.Lock()
			r.retrying = false
			r.mu.Unlock()
		}()
		for _, c := range todo {
			r.mu.Lock()
			due := r.held[c.k] == c.h && c.h.unannounced && c.h.rev == c.rev // else seen to since
			r.mu.Unlock()
			if !due {
				continue
			}
			if !r.nc.IsConnected() {
				return // reclaim sees to them all when NATS is back
			}
			var err error
			if c.rev == 0 {
				err = r.claimOver(c.h)
			} else {
				err = r.checkClaim(c.k, c.h, c.rev)
			}
			if err != nil {
				return
			}
		}
	}
	if !r.spawn(retry) {
		r.mu.Lock()
		r.retrying = false
		r.mu.Unlock()
	}
}

// withdrawLate withdraws the claim key at revision rev, written for a socket that was released
// or replaced (by newer, nil if none) while it was being written, in the background.
func (r *Router) withdrawLate(key string, rev uint64, newer *held) {
	if newer == nil {
		r.deleteClaim(key, rev, gateway.Bye{})
		return
	}
	withdraw := func() {
		r.deleteClaimNow(context.Background(), key, rev, gateway.Bye{})
		r.writeClaim(newer)
	}
	if !r.spawn(withdraw) {
		r.deleteClaimNow(context.Background(), key, rev, gateway.Bye{}) // closing: nothing more is claimed
	}
}

// deleteClaim withdraws the claim key at revision rev, unless a later write replaced it, saying
// bye when the computer said one (the zero Bye: none); it runs in the background, as
// Unregister is called while a session closes.
func (r *Router) deleteClaim(key string, rev uint64, bye gateway.Bye) {
	// Not bounded by r.ctx: the sockets close before Close, and their claims are withdrawn then.
	if !r.spawn(func() { r.deleteClaimNow(context.Background(), key, rev, bye) }) {
		r.deleteClaimNow(context.Background(), key, rev, bye) // closing: Close waits for nothing more, so do it here
	}
}

// deleteClaimNow withdraws the claim key at revision rev, within OpTimeout and ctx, saying bye
// (withdrawal) when it is not the zero Bye.
func (r *Router) deleteClaimNow(ctx context.Context, key string, rev uint64, bye gateway.Bye) {
	if !r.nc.IsConnected() {
		return // the claim ages out with this replica's heartbeat, or reclaim rewrites it
	}
	ctx, cancel := r.opContext(ctx)
	defer cancel()
	var err error
	if bye.Reason == "" {
		err = r.claims.Delete(ctx, key, jetstream.LastRevision(rev))
	} else {
		err = r.withdrawClaimSaying(ctx, key, rev, bye)
	}
	if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		r.log.Debug("cannot withdraw a claim", "key", key, "err", err)
	}
}

// withdrawClaimSaying is KeyValue.Delete of the claim key at revision rev, as the nats.go
// client writes a delete marker (the KV-Operation header), with bye as its body (withdrawal):
// a watcher reads it as the entry's value. Nothing else reads a delete marker's body.
func (r *Router) withdrawClaimSaying(ctx context.Context, key string, rev uint64, bye gateway.Bye) error {
	body, err := json.Marshal(withdrawal{Bye: bye.Reason, RelabelledTo: bye.To})
	if err != nil {
		return err
	}
	m := nats.NewMsg("$KV." + ClaimsBucket + "." + key)
	m.Header.Set("KV-Operation", "DEL")
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(rev, 10))
	m.Data = body
	_, err = r.js.PublishMsg(ctx, m)
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		return jetstream.ErrKeyRevisionMismatch
	}
	return err
}

// claimantOf is the replica entry e claims the computer for ("" if e is not a claim).
func claimantOf(e jetstream.KeyValueEntry) string {
	var c claim
	if json.Unmarshal(e.Value(), &c) != nil {
		return ""
	}
	return c.Replica
}

// claimChanged applies one change of ClaimsBucket, in revision order (the watcher's goroutine).
func (r *Router) claimChanged(e jetstream.KeyValueEntry) {
	k, err := parseClaimKey(e.Key())
	if err != nil {
		r.log.Debug("ignored a claim with a foreign key", "key", e.Key(), "err", err)
		return
	}
	r.markerRead(e)
	if e.Operation() != jetstream.KeyValuePut {
		r.claimDeleted(k, e)
		return
	}
	var c claim
	if err := json.Unmarshal(e.Value(), &c); err != nil || c.Replica == "" {
		r.unreadableClaim(k, e)
		return
	}
	if local := r.attached(); local != nil {
		// The computer said hello by this traposId: a relabel remembered here that sends a
		// caller to another one is over, as on the replica of the hello (Register).
		local.ClaimMade(k)
	}
	r.mu.Lock()
	r.claimMovedLocked(k, c.Replica, c.ConnectedSince.UnixNano(), gateway.Bye{})
	if c.Replica == r.cfg.Replica {
		r.remote.delete(k)
		// A claim in this replica's name for a socket it does not hold would route nowhere:
		// at start-up, one left over from its previous run (the other replicas keep such claims
		// while this replica is not alive, presence.go, so between its first heartbeat and
		// these deletes they may list the previous run's computers as on it; a request they
		// route here meanwhile is answered not_connected, which is the truth); after a
		// reconnection (the watcher reads the bucket again, rewatch), one whose socket closed
		// while NATS was away, when Release could not withdraw it. A hello here marks its socket
		// held before it writes the claim, so no live claim is taken for stale. Once leaving,
		// the claims are the others' to sweep. One on a socket held here, written after its
		// claim (by a twin), is the claim to withdraw from now on.
		stale := r.held[k] == nil && !r.leaving
		if !stale {
			r.trackOwnClaimLocked(k, e.Revision())
		}
		r.mu.Unlock()
		if stale {
			r.deleteClaim(e.Key(), e.Revision(), gateway.Bye{})
		}
		return
	}
	c.AccountID = k.AccountID // the key is what lookups go by
	r.remote.put(k, newRemoteClaim(c, e.Revision()))
	r.mu.Unlock()
	r.evictIfOlder(k, e.Revision(), c.Replica)
}

// unreadableClaim applies e, a write to k's key in ClaimsBucket that is not a claim (not JSON,
// or naming no replica): no replica writes one, another NATS client did (an operator's typo, a
// confused client). It is taken as a claim by a replica that sends no heartbeat, but with no
// heartbeat to wait for: if the computer is held here it is claimed again at once, over it, or
// the other replicas would not find the computer until this one reconnects. The value is not
// logged (a claim names a credential's selector; whatever was written there may be worse).
func (r *Router) unreadableClaim(k gateway.Key, e jetstream.KeyValueEntry) {
	r.mu.Lock()
	h := r.held[k]
	again := h != nil && h.claimedBefore(e.Revision()) && !r.leaving
	if again {
		h.rev = 0 // being written again
	}
	r.mu.Unlock()
	if !again {
		r.log.Debug("ignored a claim that cannot be read", "key", e.Key())
		return
	}
	r.log.Warn("ignored a claim that cannot be read (not JSON, or naming no replica) on a computer held here: another NATS client writes claims? Fence the replicas' buckets (docs/scale-out.md, Security). Claiming the computer again",
		"key", e.Key(), "traposId", k.TraposID)
	r.spawn(func() { r.writeClaim(h) })
}

// trackOwnClaimLocked takes rev, a claim in this replica's name on k, as the claim of k's
// socket held here if it is later than the one recorded: another writer in this replica's name
// (a twin, twin.go) replaced the claim, and the withdrawal (Release) is conditional on the
// revision in the bucket, so with the older one it would fail and leave the claim for good. A
// claim still being written (rev 0) is left alone: an earlier revision taken meanwhile would
// make evictIfOlder judge this hello by it, and writeClaim reads the key back after writing.
// r.mu is held.
func (r *Router) trackOwnClaimLocked(k gateway.Key, rev uint64) {
	if h := r.held[k]; h != nil && h.claimedBefore(rev) {
		h.claimedAt(rev)
	}
}

// doubt is a later claim on a computer held here, by a replica that was not alive when the
// claim arrived.
type doubt struct {
	rev      uint64
	claimant string
	since    time.Time // by cfg.Clock
}

// laterClaimRead acts on e, k's claim as read from the bucket, later than the one this replica
// wrote for its socket: another replica's evicts the socket if it is the older
// (evictIfOlder); one in this replica's own name is tracked as the socket's claim
// (trackOwnClaimLocked); one that cannot be read is claimed over as the watcher would
// (unreadableClaim), which found the socket's claim still being written when it read it.
func (r *Router) laterClaimRead(k gateway.Key, e jetstream.KeyValueEntry) {
	claimant := claimantOf(e)
	if claimant == "" {
		r.unreadableClaim(k, e)
		return
	}
	if claimant != r.cfg.Replica {
		r.evictIfOlder(k, e.Revision(), claimant)
		return
	}
	r.mu.Lock()
	r.trackOwnClaimLocked(k, e.Revision())
	r.mu.Unlock()
}

// evictIfOlder closes the local socket of k (4009) if its claim is older than rev, written by
// claimant, and claimant is alive; if claimant is not alive, the claim is doubted instead.
func (r *Router) evictIfOlder(k gateway.Key, rev uint64, claimant string) {
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	h := r.held[k]
	if h == nil || !h.claimedBefore(rev) {
		r.mu.Unlock()
		return
	}
	if !r.aliveLocked(claimant, now) {
		if d, ok := r.doubted[k]; !ok || d.rev < rev {
			r.doubted[k] = doubt{rev: rev, claimant: claimant, since: now}
		}
		r.mu.Unlock()
		r.log.Debug("a later claim by a replica not alive: keeping the socket for now", "traposId", k.TraposID, "claimant", claimant)
		return
	}
	delete(r.doubted, k)
	hold, local := h.hold, r.local
	r.mu.Unlock()
	// "claimant", not "replica": every line already names the replica that logs it.
	r.log.Info("computer said hello on another replica: closing its socket here", "traposId", k.TraposID, "claimant", claimant)
	if local != nil {
		local.Evict(k, hold)
	}
}

// settleDoubts runs at every heartbeat tick: a doubted claim whose claimant has sent no
// heartbeat within a heartbeat interval is not believed, and the socket's claim is written
// again (after it, so routing finds the socket here).
func (r *Router) settleDoubts() {
	now := r.cfg.Clock.Now()
	type reclaim struct {
		h        *held
		claimant string
	}
	var again []reclaim
	r.mu.Lock()
	for k, d := range r.doubted {
		h := r.held[k]
		switch {
		case h == nil || !h.claimedBefore(d.rev) || r.aliveLocked(d.claimant, now):
			delete(r.doubted, k) // settled otherwise: gone, rewritten, or believed (believeClaimsOf)
		case now.Sub(d.since) >= r.cfg.HeartbeatInterval:
			delete(r.doubted, k)
			h.rev = 0 // being written again
			again = append(again, reclaim{h, d.claimant})
		}
	}
	r.mu.Unlock()
	for _, a := range again {
		r.logDoubtIgnored(a.h.c.TraposID, a.claimant)
		r.spawn(func() { r.writeClaim(a.h) })
	}
}

// logDoubtIgnored logs that a claim on traposID, held here, by claimant, a replica that sends
// no heartbeat, was not believed, and the computer is claimed again.
func (r *Router) logDoubtIgnored(traposID, claimant string) {
	r.log.Warn("ignored a claim on a computer held here, by a replica that sends no heartbeat: another NATS client writes claims? Fence the replicas' buckets (docs/scale-out.md, Security). Claiming the computer again",
		"traposId", traposID, "claimant", claimant)
}

// believeClaimsOf acts on the claims of replica, which has just become alive (a claim may
// arrive before its writer's first heartbeat): a socket held here whose claim is older than
// replica's closes (4009).
func (r *Router) believeClaimsOf(replica string) {
	type later struct {
		k   gateway.Key
		rev uint64
	}
	var found []later
	r.mu.Lock()
	for k, h := range r.held {
		if c, ok := r.remote.get(k); ok && c.replica() == replica && h.claimedBefore(c.rev) {
			found = append(found, later{k, c.rev})
		}
	}
	r.mu.Unlock()
	for _, l := range found {
		r.evictIfOlder(l.k, l.rev, replica)
	}
}

// claimDeleted applies a deleted claim. If the computer's socket is still here, the claim was
// withdrawn by a replica that took this one for dead, or it was a later claim doubted here
// (by a replica that sends no heartbeat), which a sweep withdrew before settleDoubts did
// without it: it is written again, and a doubted claim is logged as settleDoubts logs it.
func (r *Router) claimDeleted(k gateway.Key, e jetstream.KeyValueEntry) {
	var w withdrawal // a withdrawal that says nothing (or cannot be read) names no bye
	if len(e.Value()) > 0 && json.Unmarshal(e.Value(), &w) != nil {
		w = withdrawal{}
	}
	if local := r.attached(); local != nil {
		// Before the claim goes from the list: a caller here never finds neither. The gateway
		// takes a relabel's new id only for the same computer id (gateway.RelabelledTo), as
		// it words a screen's end below.
		local.ClaimWithdrawn(k, gateway.Bye{Reason: w.Bye, To: w.RelabelledTo}, e.Created())
	}
	r.mu.Lock()
	r.remote.delete(k)
	r.claimMovedLocked(k, "", 0, gateway.Bye{Reason: w.Bye, To: w.RelabelledTo})
	var rewrite *held
	d, doubted := r.doubted[k]
	if h := r.held[k]; h != nil && h.claimedBefore(e.Revision()) {
		rewrite = h
		h.rev = 0
		delete(r.doubted, k)
	}
	r.mu.Unlock()
	if rewrite != nil {
		if doubted && d.rev < e.Revision() {
			r.logDoubtIgnored(k.TraposID, d.claimant)
		}
		r.spawn(func() { r.writeClaim(rewrite) })
	}
}

// reclaimRead, when a test sets it, is told each time reclaim has read the claim of a computer
// held here (the replica's name, the key), before it acts on what it read; nil otherwise.
var reclaimRead func(replica, key string)

// reclaim runs when NATS is back: every socket held here whose claim is missing (its hello made
// while NATS was away, withdrawn meanwhile, or lost with the bucket) is claimed now; one that
// another replica claimed later, in the bucket NATS kept or in the one it lost its store for,
// or by a later hello while NATS was away (claimOver), is closed.
func (r *Router) reclaim() {
	type claimed struct {
		h       *held
		rev     uint64
		offline bool
	}
	r.mu.Lock()
	hs := make(map[gateway.Key]claimed, len(r.held))
	for k, h := range r.held {
		hs[k] = claimed{h, h.rev, h.offline}
	}
	r.mu.Unlock()
	for k, c := range hs {
		if c.offline {
			_ = r.claimOver(c.h) // a failure is tried again at the heartbeat ticks
			continue
		}
		if c.rev == 0 {
			r.writeClaim(c.h)
			continue
		}
		_ = r.checkClaim(k, c.h, c.rev) // a failure is tried again at the heartbeat ticks
	}
}

// checkClaim checks that the claim of h, k's socket here, of revision rev, is still in the
// bucket (reclaim, retryClaims): one found missing is written again, one replaced later is
// acted on. It returns the error of a read or write that NATS, connected, did not answer.
func (r *Router) checkClaim(k gateway.Key, h *held, rev uint64) error {
	ctx, cancel := r.opContext(r.ctx)
	e, err := r.claims.Get(ctx, claimKey(k))
	cancel()
	if reclaimRead != nil {
		reclaimRead(r.cfg.Replica, claimKey(k))
	}
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		// Withdrawn meanwhile, or lost with a bucket that NATS has created again (restarted
		// without its store), whose revisions start again from 1: the claim's revision is
		// the new write's (claimedAt), or Release would withdraw it at the lost revision,
		// fail, and leave the claim for good.
		if r.markGone(k, h, rev) {
			return r.claimAgain(h)
		}
	case err != nil:
		if !r.nc.IsConnected() {
			return err // reclaim checks it when NATS is back
		}
		if r.markUnannounced(k, h) {
			r.log.Warn("cannot check a claim after reconnecting: the other replicas may not find the computer; trying again at every heartbeat",
				"traposId", k.TraposID, "err", err)
		}
		return err
	case e.Revision() > rev:
		r.laterClaimRead(k, e)
	case e.Revision() < rev || claimantOf(e) != r.cfg.Replica:
		// Another claim, at a revision not later than this socket's: a bucket replaces a
		// claim only by a later revision, so NATS has lost the one this socket's claim was
		// in, and this claim was written in the new bucket since, by a hello later than this
		// socket's (on another replica: the computer's newer socket, this one half-open).
		if r.markGone(k, h, rev) {
			r.laterClaimRead(k, e)
		}
	default: // the socket's claim, where it was
		r.mu.Lock()
		late := r.held[k] == h && h.rev == rev && h.unannounced
		if late {
			h.claimedAt(rev)
		}
		r.mu.Unlock()
		if late {
			r.log.Info("checked the computer's claim in NATS: the other replicas find it", "traposId", k.TraposID)
		}
	}
	return nil
}

// markGone marks the claim of revision rev of h, k's socket here, as gone from the bucket
// (held.gone), and reports whether it did: not if the socket was released, or its claim
// written or found again meanwhile.
func (r *Router) markGone(k gateway.Key, h *held, rev uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held[k] != h || h.rev != rev {
		return false
	}
	h.gone = true
	return true
}
