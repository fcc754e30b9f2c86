package cluster

import (
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// markerLifetime is how long a delete marker of ClaimsBucket stays after this replica read it,
// before the replica whose name sorts first among the live ones purges it from the stream. A
// computer that leaves leaves a marker under its key (its withdrawal, which says why), and NATS
// keeps a key's last message for good: without the purge the bucket held one marker per
// computer that ever connected (played: 4 000 that came and went left 4 000), and every
// replica's start read them all. Its body is read as it arrives (a bye's words, claimDeleted);
// after the hour nothing reads it, and a replica that reads the claims again finds the key
// empty, which means the same as the marker: no replica holds the computer.
const markerLifetime = time.Hour

// maxMarkerPurges bounds the purges of one sweep: a bucket that held the markers of every
// computer that ever left (a cluster upgraded to this) has tens of thousands, one purge each,
// and the claims of a replica that died wait for the sweep after. The rest go at the next
// sweeps, a heartbeat apart.
const maxMarkerPurges = 1000

// marker is a delete (or purge) marker of ClaimsBucket as this replica read it.
type marker struct {
	rev  uint64    // its revision: the purge removes it and what came before, never a later claim
	read time.Time // when this replica read it (its clock)
}

// markerRead applies e, a change of ClaimsBucket, to the markers: a marker is remembered, a
// claim written over one forgets it (the watcher's goroutine).
func (r *Router) markerRead(e jetstream.KeyValueEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Operation() == jetstream.KeyValuePut {
		delete(r.markers, e.Key())
		return
	}
	// A copy of the key, which points into the whole NATS message (remoteSet.put).
	r.markers[strings.Clone(e.Key())] = marker{rev: e.Revision(), read: r.cfg.Clock.Now()}
}

// purgeMarkers purges the markers read markerLifetime ago or more when this replica is the
// purger (the live replica whose name sorts first, so that one replica does it), and forgets
// them otherwise: the purger's purge sends nothing the watchers would see. A purge that fails
// is tried again at the next sweep. Each purge names the marker's subject and revision, so a
// claim written after the marker (the computer back) is kept. It runs in the sweep's goroutine.
func (r *Router) purgeMarkers() {
	now := r.cfg.Clock.Now()
	type old struct {
		key string
		rev uint64
	}
	var purge []old
	r.mu.Lock()
	purger := r.purgesMarkersLocked(now)
	for key, m := range r.markers {
		switch {
		case now.Sub(m.read) < markerLifetime:
		case purger:
			if len(purge) < maxMarkerPurges {
				purge = append(purge, old{key, m.rev})
			}
		default:
			delete(r.markers, key)
		}
	}
	r.mu.Unlock()
	if len(purge) == 0 {
		return
	}
	ctx, cancel := r.opContext(r.ctx)
	stream, err := r.js.Stream(ctx, "KV_"+ClaimsBucket)
	cancel()
	if err != nil {
		r.log.Debug("cannot purge the markers of computers that left", "markers", len(purge), "err", err)
		return
	}
	purged := 0
	for _, m := range purge {
		if r.ctx.Err() != nil {
			break
		}
		ctx, cancel := r.opContext(r.ctx)
		err := stream.Purge(ctx, jetstream.WithPurgeSubject("$KV."+ClaimsBucket+"."+m.key), jetstream.WithPurgeSequence(m.rev+1))
		cancel()
		if err != nil {
			r.log.Debug("cannot purge the marker of a computer that left", "key", m.key, "err", err)
			continue
		}
		purged++
		r.mu.Lock()
		if r.markers[m.key].rev == m.rev { // not a later marker read meanwhile
			delete(r.markers, m.key)
		}
		r.mu.Unlock()
	}
	r.log.Debug("purged the markers of computers that left", "purged", purged, "of", len(purge))
}

// purgesMarkersLocked says whether this replica purges the markers: no live replica's name
// sorts before its own. Two that both think so for a moment purge the same markers, which does
// no harm.
func (r *Router) purgesMarkersLocked(now time.Time) bool {
	for name := range r.lastSeen {
		if name < r.cfg.Replica && r.aliveLocked(name, now) {
			return false
		}
	}
	return true
}
