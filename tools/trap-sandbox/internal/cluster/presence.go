package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
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
// minute to stop. To the others a deleted heartbeat means "not alive from now on": its
// computers leave the lists and the requests routed to it fail at once, and its claims, kept
// as they are, are withdrawn by the sweep twice ReplicaTTL after the goodbye (lastSeen), each
// delete conditional on the revision seen, so a computer that said hello elsewhere meanwhile
// keeps its newer claim. Nothing more is kept per claim: at 100 000 computers each replica
// holds some 83 000 of the others' claims. A heartbeat that comes back makes the replica alive
// again with all its claims: one deleted by someone else (an operator purging the bucket)
// costs its computers a heartbeat interval, not a sweep and their claims written again (as it
// did while the others set a stopped replica's claims aside until the sweep). A replica
// restarted under the same name deletes the claims of its previous run itself (claimChanged);
// until then the others list those computers as on it, and it answers not_connected for them.

// heartbeatValue is a replica's entry in ReplicasBucket.
type heartbeatValue struct {
	Replica string    `json:"replica"`
	Started time.Time `json:"started"`
	// ClosesRemoved says that the replica closes the computers of an account removed on
	// another one (a credential heard on the bus that the store no longer holds); a replica
	// of a trap-sandbox from before accounts remove does not say it, nor do it.
	ClosesRemoved bool `json:"closesRemoved,omitempty"`
	// Instance is the writing process's own id, so that two replicas of one name tell each
	// other apart (twin.go); a trap-sandbox from before it writes none.
	Instance string `json:"instance,omitempty"`
	// Yielded is the last heartbeat of a twin that gives the name up to the older one
	// (twin.go); the older writes its own heartbeat again over it, as over any of the twin's.
	Yielded bool `json:"yielded,omitempty"`
	// Relays says that the replica answers the modules' relayed messages (relay.go: the live
	// screens of computers held by another replica); one of a trap-sandbox from before them
	// does not say it, and is sent none.
	Relays bool `json:"relays,omitempty"`
	// Settings are the writer's settings that every replica must share (settings.go); a
	// trap-sandbox from before that check writes none.
	Settings Settings `json:"settings,omitzero"`
}

// readHeartbeat decodes value, an entry of ReplicasBucket; false if it is not a heartbeat (not
// JSON, or naming no replica: every trap-sandbox has written its name there), which another
// NATS client wrote (an operator's typo, a confused client).
func readHeartbeat(value []byte) (heartbeatValue, bool) {
	var beat heartbeatValue
	if json.Unmarshal(value, &beat) != nil || beat.Replica == "" {
		return heartbeatValue{}, false
	}
	return beat, true
}

// ownHeartbeat is this replica's heartbeat as it writes it.
func (r *Router) ownHeartbeat() heartbeatValue {
	return heartbeatValue{Replica: r.cfg.Replica, Started: r.started, ClosesRemoved: true, Relays: true, Instance: r.instance,
		Settings: r.cfg.Settings}
}

// heartbeat writes this replica's heartbeat once, unless it is leaving.
func (r *Router) heartbeat(ctx context.Context) error {
	r.beatMu.Lock() // a goodbye (Leave) is never followed by a heartbeat written before it
	defer r.beatMu.Unlock()
	if r.isLeaving() {
		return nil
	}
	ctx, cancel := r.opContext(ctx)
	defer cancel()
	b, _ := json.Marshal(r.ownHeartbeat())
	if _, err := r.replicas.Put(ctx, escapeToken(r.cfg.Replica), b); err != nil {
		return fmt.Errorf("write the heartbeat of replica %s: %w", r.cfg.Replica, opError(ctx, err))
	}
	return nil
}

// Leave implements gateway.Leaver: the replica is stopping. It deletes its heartbeat, so every
// other replica drops its computers from the lists and fails the requests routed to it at
// once; from now on it writes no claim and withdraws none (the others sweep them). A replica
// cut off from NATS says nothing: the others find out as they do of a crash, and so does one
// that gave its name up to an older twin (twin.go): the heartbeat under the name is the twin's.
//
// The gateway is stopping (Shutdown calls Leave before it closes any socket): the lifelines of
// computers held elsewhere (Holding) end now, with the cause its own sockets end with
// (gateway.ErrShuttingDown, marked stopping), so a live screen watched here through another
// replica ends as one of a computer of its own does, before the HTTP server's shutdown waits
// for its stream; at Close it hung until the shutdown's deadline cut it with no end event.
func (r *Router) Leave() {
	r.mu.Lock()
	if !r.left {
		r.left = true
		r.endLifelinesLocked(func(l *lifeline) bool { return l.computer }, func(*lifeline) error { return gateway.ErrShuttingDown })
	}
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
	ctx, cancel := r.opContext(context.Background())
	defer cancel()
	if err := r.replicas.Delete(ctx, escapeToken(r.cfg.Replica)); err != nil {
		r.log.Warn("cannot say goodbye to the other replicas: they drop this replica's computers when its heartbeat is older than --nats-replica-ttl", "err", err)
	}
}

// Leaving implements gateway.Leaver: the replica has said goodbye (Leave), or gave its name up
// to an older twin and is about to stop (twin.go).
func (r *Router) Leaving() bool { return r.isLeaving() }

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
		r.tick()
	}
}

// tick is one tick of heartbeatLoop: the heartbeat, the sweep, the doubts settled, the
// claims retried, the buckets watched again after a rewatch that failed, and the holders
// watched.
func (r *Router) tick() {
	r.tickMu.Lock()
	defer r.tickMu.Unlock()
	now := r.cfg.Clock.Now()
	since := now.Sub(r.lastTick)
	stopped := !r.lastTick.IsZero() && since > r.cfg.ReplicaTTL
	r.lastTick = now
	if !r.nc.IsConnected() {
		return // the ticks go on while NATS is away: a stop is one of the process's own
	}
	if err := r.heartbeat(r.ctx); err != nil {
		r.log.Debug("heartbeat failed", "err", err)
	} else if stopped {
		r.log.Warn(heartbeatsStoppedLine, "stoppedFor", since.Round(time.Second), "replicaTTL", r.cfg.ReplicaTTL)
	}
	r.startSweep()
	r.settleDoubts()
	r.retryClaims()
	r.rewatchIfUnwatched()
	r.watchHolders()
	r.logSilentReplicas()
	r.checkDroppedRevocations()
}

// Log lines of the other replicas' presence: an operator reads in any replica's log when
// another one came, stopped or went silent (docs/scale-out.md, What happens when something fails).
const (
	replicaAliveLine   = "another replica is alive: its computers are listed and reached through it"
	replicaStoppedLine = "another replica stopped (it said goodbye): its computers reconnect to the others"
	// replicaSilentLine says where the silent replica's computers go by why it is silent: a
	// replica cut off from NATS keeps serving its own, which "reconnect to the others" denied
	// (played: replica c cut off kept 11:schuppen while a's log said it reconnected).
	replicaSilentLine = "another replica sent no heartbeat within --nats-replica-ttl: taken for dead (crashed, its machine gone, hung, or cut off from NATS); its computers leave the lists: those of a replica that crashed reconnect to the others, one cut off from NATS keeps serving its own"
	// heartbeatsStoppedLine is this replica's own side of replicaSilentLine, logged by the
	// first heartbeat after the ticks stopped for longer than ReplicaTTL: nothing else in its
	// log shows the gap the others saw.
	heartbeatsStoppedLine = "this replica's heartbeats stopped for longer than --nats-replica-ttl (its process did not run: SIGSTOP, a paused VM or container, a host out of CPU or memory; or its heartbeat loop was held up): " +
		"the other replicas took it for dead meanwhile, and its computers left their lists until this heartbeat"
)

// logSilentReplicas logs each other replica logged as alive that has since sent no heartbeat
// within ReplicaTTL: nothing else says so, as nothing arrives from a replica that crashed.
func (r *Router) logSilentReplicas() {
	now := r.cfg.Clock.Now()
	silent := map[string]time.Time{}
	r.mu.Lock()
	for name := range r.logged {
		if !r.aliveLocked(name, now) {
			delete(r.logged, name)
			silent[name] = r.lastSeen[name]
		}
	}
	r.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(silent)) {
		r.log.Warn(replicaSilentLine, "other", name, "lastHeartbeat", silent[name].UTC().Format(time.RFC3339), "replicaTTL", r.cfg.ReplicaTTL)
	}
}

// heartbeatApplying, when a test sets it, runs before the watcher applies each change of
// ReplicasBucket, with the watching replica's name and the change's key (a test holds a
// watch's read with it); nil otherwise.
var heartbeatApplying func(replica, key string)

// heartbeatArrived applies one change of ReplicasBucket (the watcher's goroutine).
func (r *Router) heartbeatArrived(e jetstream.KeyValueEntry) {
	if heartbeatApplying != nil {
		heartbeatApplying(r.cfg.Replica, e.Key())
	}
	name, err := unescapeToken(e.Key())
	if err != nil {
		return
	}
	if name == r.cfg.Replica {
		r.ownNameChanged(e)
		return
	}
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	wasUnreadable := r.unreadable[name]
	delete(r.unreadable, name) // unless this is unreadable too: see below
	if e.Operation() != jetstream.KeyValuePut {
		// A replica that shut down cleanly deletes its heartbeat (Leave): it is gone now, not
		// in a TTL. Its claims stay where they are, neither listed nor routed to while it is
		// not alive, and the sweep deletes them twice ReplicaTTL from now. If the heartbeat
		// was deleted by someone else (an operator purging the bucket) while the replica
		// lives on, its next heartbeat brings its computers back at once.
		r.lastSeen[name] = now
		r.stopped[name] = true
		wasLogged := r.logged[name]
		delete(r.logged, name)
		r.mu.Unlock()
		if wasLogged {
			r.log.Info(replicaStoppedLine, "other", name)
		}
		r.failRoutesTo(name, "has stopped")
		return
	}
	beat, ok := readHeartbeat(e.Value())
	if !ok {
		// No sign of life, nor of an older trap-sandbox: a live replica of the name comes
		// back with its next heartbeat, and one not alive stays so. Logged once while the
		// key holds no heartbeat.
		r.unreadable[name] = true
		r.mu.Unlock()
		if !wasUnreadable {
			r.log.Warn("cannot read the heartbeat under a key of "+ReplicasBucket+" (not JSON, or naming no replica): ignored; another NATS client writes heartbeats? Fence the replicas' buckets (docs/scale-out.md, Security)",
				"key", e.Key())
		}
		return
	}
	wasAlive := r.aliveLocked(name, now)
	r.lastSeen[name] = now
	delete(r.stopped, name)
	wasOlder, known := r.older[name]
	r.older[name] = !beat.ClosesRemoved
	r.noRelays[name] = !beat.Relays
	came := !r.logged[name]
	r.logged[name] = true
	r.mu.Unlock()
	if came {
		r.log.Info(replicaAliveLine, "other", name)
	}
	if !beat.ClosesRemoved && (!known || !wasOlder) {
		r.log.Warn("another replica runs an older trap-sandbox, which does not close the computers of an account removed on another replica: upgrade every replica (docs/scale-out.md)", "other", name)
	}
	r.judgeSettings(name, beat.Settings)
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

// sweep withdraws the claims of replicas silent for twice ReplicaTTL (or that said goodbye
// that long ago: lastSeen is the goodbye then), so that a replica that died or stopped for good
// leaves nothing behind. Each withdrawal names the revision it saw, so a computer that has
// meanwhile said hello elsewhere keeps its newer claim. Then it purges the delete markers of
// computers that left (purgeMarkers, markers.go). It stops when the router closes; the next
// replica's sweep, or this one's after a restart, does the rest.
func (r *Router) sweep() {
	now := r.cfg.Clock.Now()
	type stale struct {
		k   gateway.Key
		rev uint64
	}
	var gone []stale
	r.mu.Lock()
	r.remote.all(func(traposID string, c remoteClaim) {
		if now.Sub(r.lastSeenLocked(c.replica())) >= 2*r.cfg.ReplicaTTL {
			gone = append(gone, stale{k: gateway.Key{AccountID: c.account(), TraposID: traposID}, rev: c.rev})
		}
	})
	r.mu.Unlock()
	for _, s := range gone {
		if r.ctx.Err() != nil {
			return
		}
		r.deleteClaimNow(r.ctx, claimKey(s.k), s.rev, gateway.Bye{})
	}
	r.purgeMarkers()
}

// OlderReplicas lists, sorted, the replicas whose heartbeat in nc's ReplicasBucket does not
// say closesRemoved: of a trap-sandbox from before accounts remove, they keep a removed
// account's computers connected (`accounts remove --nats` says so). No bucket: none. Its
// error is NATS's, which the caller words as what failing to look means to its reader.
func OlderReplicas(ctx context.Context, nc *nats.Conn) ([]string, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	kv, err := js.KeyValue(ctx, ReplicasBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var older []string
	for _, key := range keys {
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // it stopped meanwhile
		}
		if err != nil {
			return nil, err
		}
		beat, ok := readHeartbeat(e.Value())
		if !ok || beat.ClosesRemoved {
			continue // not a heartbeat (heartbeatArrived logs it), or a replica that closes them
		}
		name, err := unescapeToken(key)
		if err != nil {
			name = key
		}
		older = append(older, name)
	}
	slices.Sort(older)
	return older, nil
}
