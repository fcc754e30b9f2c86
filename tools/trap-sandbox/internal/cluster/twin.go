package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Twins: two replicas of one name. checkNameFree refuses, at start, a name that a running
// replica answers under; but two replicas of one name started at the same moment (an
// orchestrator starting two copies of one configuration, two hosts given one SANDBOX_REPLICA)
// both find it free, and each would then take the other's claims for its own: each deletes the
// other's claims as those of its previous run, and the first goodbye takes both out of every
// list. So each process has an instance id of its own, in its heartbeat, and watches its own
// name in ReplicasBucket.
//
// The rule: a heartbeat under this replica's name with another instance id is a twin's if it
// arrives after this instance's own first heartbeat came back through the watcher. The watcher
// applies the bucket's changes in revision order, so such a heartbeat was written after this
// replica began announcing itself, which a crashed or stopped process cannot do. The last
// heartbeat of this name's previous run, still in the bucket after a crash, was written
// before, and never again; a twin writes one every heartbeat interval. A heartbeat without an
// instance id is an older trap-sandbox's (or the previous run's, of an older trap-sandbox):
// never a twin, so a twin of an older trap-sandbox is not caught (docs/scale-out.md).
//
// Of two twins the newer yields: the later Started, or of two started at the same instant the
// greater instance id, so both judge alike and exactly one yields. The older writes its own
// heartbeat again at once whenever it sees a twin's, so that the twin sees one under the name
// after its own and yields even if it started first to write. The newer stops as
// checkNameFree would have stopped it at start (Failed, Err: the serve command closes its
// sockets and exits): its last heartbeat says it yielded (the older, which logged the twin at
// the first heartbeat it saw of it, writes its own again over it), and its goodbye deletes
// nothing, the heartbeat under the name being the older's. What the twin did to the older's claims mends itself: a claim of the
// older's that the twin deleted as stale is written again by the older (claimDeleted), and a
// claim the twin wrote in the name for a socket of its own the older withdraws as stale
// (claimChanged), and one it wrote on a computer that has a socket on the older too is taken by
// the older as its claim (trackOwnClaimLocked), so that its withdrawal does not miss it; once
// the twin is leaving it deletes no claim any more, so the older's rewrites stay.

// nameChecked, when a test sets it, is told each time a router has found its name free
// (checkNameFree), before it subscribes under it: a test holds a router there to start a second
// one of the same name, which finds the name free too. nil otherwise.
var nameChecked func(replica string)

// twinLine is what the older of two twins logs, once a twin.
const twinLine = "a second replica runs under this replica's name, started after this one or at the same instant; the newer of the two stops, and this one, the older, serves on: give each replica its own --replica (SANDBOX_REPLICA)"

// nameFix is what the operator does about a replica name that is taken.
const nameFix = "Give each replica its own --replica (SANDBOX_REPLICA), or stop the other one first"

// newInstanceID is a process's own id among the replicas, whatever their names.
func newInstanceID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail
	return hex.EncodeToString(b[:])
}

// newerThan reports whether the replica of heartbeat a started after that of b: the later
// Started, or of two started at the same instant the greater instance id.
func newerThan(a, b heartbeatValue) bool {
	if !a.Started.Equal(b.Started) {
		return a.Started.After(b.Started)
	}
	return a.Instance > b.Instance
}

// ownNameChanged applies a change of this replica's own entry in ReplicasBucket (the
// watcher's goroutine): its own heartbeat coming back, or a twin's.
func (r *Router) ownNameChanged(e jetstream.KeyValueEntry) {
	if e.Operation() != jetstream.KeyValuePut {
		return // this replica's goodbye, or an operator's purge: its next heartbeat writes it again
	}
	var beat heartbeatValue
	if json.Unmarshal(e.Value(), &beat) != nil || beat.Instance == "" {
		return // an older trap-sandbox's: never taken for a twin
	}
	mine := r.ownHeartbeat()
	r.mu.Lock()
	if beat.Instance == r.instance {
		r.seenOwnBeat = true
		r.mu.Unlock()
		return
	}
	if !r.seenOwnBeat || r.leaving {
		// Written before this replica's first heartbeat: its previous run's, which never comes
		// again (a live twin writes again within a heartbeat interval). Or this replica is
		// stopping anyway.
		r.mu.Unlock()
		return
	}
	if newerThan(mine, beat) {
		r.leaving = true
		r.mu.Unlock()
		r.yield(beat)
		return
	}
	// Logged and counted at the first heartbeat seen of the twin, not at its last (Yielded):
	// the bucket keeps one revision a key, and a watcher behind the writes may never see a
	// heartbeat that the next one replaced; of a twin that runs, one is seen every interval.
	// That the newer one stops is the rule both apply (newerThan), not news from it.
	logged := !r.twins[beat.Instance]
	if logged {
		r.twins[beat.Instance] = true
	}
	r.mu.Unlock()
	if logged {
		r.twinsSeen.Add(1)
		r.log.Error(twinLine, "otherStarted", beat.Started, "otherInstance", beat.Instance)
	}
	// The twin's heartbeat replaced this one's: written again at once, so that the twin sees
	// the older one under the name after its own (and yields), and the name's heartbeat is the
	// survivor's in the end.
	r.spawn(func() {
		if err := r.heartbeat(r.ctx); err != nil {
			r.log.Debug("heartbeat failed", "err", err)
		}
	})
}

// yield gives the name up to older, an older twin: the router fails (Failed) with the error
// the start-time check would have given, once its last heartbeat has told the older one.
// r.leaving is set: from here on it writes no heartbeat and no claim, withdraws none, and its
// goodbye (Leave) deletes nothing.
func (r *Router) yield(older heartbeatValue) {
	err := yieldError(r.cfg.Replica, older, r.ownHeartbeat())

	r.log.Error("another replica runs under this replica's name: this one, the newer, stops", "otherStarted", older.Started, "otherInstance", older.Instance)
	last := func() {
		r.beatMu.Lock()
		defer r.beatMu.Unlock()
		beat := r.ownHeartbeat()
		beat.Yielded = true
		b, _ := json.Marshal(beat)
		ctx, cancel := r.opContext(r.ctx)
		defer cancel()
		if _, err := r.replicas.Put(ctx, escapeToken(r.cfg.Replica), b); err != nil {
			r.log.Debug("cannot tell the older replica of this name that this one yields", "err", err)
		}
	}
	if !r.spawn(func() { last(); r.giveUp(err) }) {
		r.giveUp(err) // closing already
	}
}

// yieldError is why the replica of heartbeat mine, named replica, gives the name up to older
// (newerThan): the other one started earlier, or at the same instant and its instance id is
// the smaller; the message says which, with the times.
func yieldError(replica string, older, mine heartbeatValue) error {
	if older.Started.Equal(mine.Started) {
		return fmt.Errorf("the replica name %q is taken: another replica started under it at the same instant as this one (%s), and of the two the one with the smaller instance id keeps it (%s; this one %s). "+nameFix,
			replica, mine.Started.UTC().Format(time.RFC3339Nano), older.Instance, mine.Instance)
	}
	return fmt.Errorf("the replica name %q is taken: another replica runs under it, started before this one, and the older of the two keeps it (started %s; this one %s). "+nameFix,
		replica, older.Started.UTC().Format(time.RFC3339Nano), mine.Started.UTC().Format(time.RFC3339Nano))
}

// giveUp ends the router's service for good, with err; only the first call counts.
func (r *Router) giveUp(err error) {
	r.failOnce.Do(func() {
		r.mu.Lock()
		r.failErr = err
		r.mu.Unlock()
		close(r.failed)
	})
}

// Failed is closed when the router has given up for good (Err says why): the replica must
// stop, as if it had not started (the serve command closes its sockets and exits with Err).
// A replica of the same name that started at the same moment and is the older of the two is
// the one reason.
func (r *Router) Failed() <-chan struct{} { return r.failed }

// Err is why the router failed (Failed), or nil while it serves.
func (r *Router) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failErr
}
