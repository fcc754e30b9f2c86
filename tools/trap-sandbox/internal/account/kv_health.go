package account

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// bucketHealth remembers what the store's latest read or write of the bucket found: the
// bucket there, or gone (NATS restarted without its store, or an operator deleted it).
// /healthz reports it (KV.HealthDetail), and looks at the bucket itself only when nothing has
// for lookEvery: with the bucket gone every account token got 500 while /healthz said "nats:
// connected", and the operator's check saw nothing wrong; with the bucket lost and no traffic
// (no token checked, no hello), it said nothing until the first caller was refused. One is
// shared by a KV and its Latest view.
type bucketHealth struct {
	mu sync.Mutex
	// gone is whether the latest outcome was a bucket NATS no longer has.
	gone bool
	// at is when that outcome was seen (or the bucket last looked at: HealthDetail).
	at time.Time
	// checking is whether a HealthDetail is looking at the bucket, so that the looks of
	// several health checks at once are one.
	checking bool
	// now is the time (time.Now; a test's fake).
	now func() time.Time
}

// lookEvery bounds how often HealthDetail looks at the bucket itself: only when no read or
// write has said anything of it for that long (the traffic that shows it lost or back may
// not come: no caller right after NATS lost its store, none right after the operator gave it
// back). One look is one JetStream request (the bucket's status), a health check every 2 s
// makes one each 5 s at most, and a replica with traffic makes none. lookTimeout bounds one
// look, which holds that health check up (NATS connected but not answering).
const (
	lookEvery   = 5 * time.Second
	lookTimeout = time.Second
)

// saw records the outcome err of a read or write of the bucket (nil, or NATS's own error,
// before natsError words it). A key not found is the bucket answering; an error that says
// nothing of the bucket (NATS unreachable, a timeout) leaves what is known as it was.
func (h *bucketHealth) saw(err error) {
	var gone bool
	switch {
	case err == nil || errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyExists):
	case bucketGone(err):
		gone = true
	default:
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gone, h.at = gone, h.now()
}

// HealthDetail is the store's line for /healthz, or "" while the latest read or write of the
// bucket found it there (or none was made yet): with the bucket gone, ErrBucketGone's words
// (what is lost and the fix). When nothing has said anything of the bucket for lookEvery, it
// looks at the bucket first, so that the line comes within lookEvery of the bucket's loss,
// and goes within lookEvery of its return, traffic or not.
func (s *KV) HealthDetail() string {
	h := s.health
	h.mu.Lock()
	gone, look := h.gone, !h.checking && h.now().Sub(h.at) >= lookEvery
	if look {
		h.checking = true
	}
	h.mu.Unlock()
	if look {
		ctx, cancel := context.WithTimeout(context.Background(), lookTimeout)
		_, err := s.kv.Status(ctx)
		cancel()
		h.mu.Lock()
		// Looked at, whatever the answer (NATS unreachable says nothing of the bucket), so
		// that the looks stay lookEvery apart.
		h.checking, h.at = false, h.now()
		switch {
		case err == nil:
			h.gone = false
		case bucketGone(err):
			h.gone = true
		}
		gone = h.gone
		h.mu.Unlock()
	}
	if !gone {
		return ""
	}
	return "accounts: " + ErrBucketGone.Error()
}
