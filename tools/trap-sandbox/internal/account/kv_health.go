package account

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// bucketHealth remembers what the store's latest read or write of the bucket found: the
// bucket there, or gone (NATS restarted without its store). /healthz reports it
// (KV.HealthDetail) without a read of its own per check: with the bucket gone every account
// token got 500 while /healthz said "nats: connected", and the operator's check saw nothing
// wrong. One is shared by a KV and its Latest view.
type bucketHealth struct {
	mu sync.Mutex
	// gone is whether the latest outcome was a bucket NATS no longer has.
	gone bool
	// at is when that outcome was seen (or last checked again: goneRecheck).
	at time.Time
	// checking is whether a HealthDetail is checking the bucket again, so that the checks
	// of several health checks at once are one.
	checking bool
	// now is the time (time.Now; a test's fake).
	now func() time.Time
}

// goneRecheckEvery bounds how often HealthDetail looks at the bucket itself while the latest
// outcome was a gone bucket: the traffic that would show it back (a token check, a hello) may
// not come right after the operator gave NATS its store back and looks at /healthz.
// goneRecheckTimeout bounds one such look, which holds that health check up.
const (
	goneRecheckEvery   = 5 * time.Second
	goneRecheckTimeout = time.Second
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
// (what is lost and the fix). While it is gone, the bucket is looked at again at most every
// goneRecheckEvery, so that the line goes once NATS has it back, traffic or not.
func (s *KV) HealthDetail() string {
	h := s.health
	h.mu.Lock()
	gone, recheck := h.gone, h.gone && !h.checking && h.now().Sub(h.at) >= goneRecheckEvery
	if recheck {
		h.checking = true
	}
	h.mu.Unlock()
	if recheck {
		ctx, cancel := context.WithTimeout(context.Background(), goneRecheckTimeout)
		_, err := s.kv.Status(ctx)
		cancel()
		h.mu.Lock()
		// Looked at, whatever the answer (NATS unreachable says nothing of the bucket), so
		// that the looks stay goneRecheckEvery apart.
		h.checking, h.at = false, h.now()
		if err == nil {
			h.gone = false
		}
		gone = h.gone
		h.mu.Unlock()
	}
	if !gone {
		return ""
	}
	return "accounts: " + ErrBucketGone.Error()
}
