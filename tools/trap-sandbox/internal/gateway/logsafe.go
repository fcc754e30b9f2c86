package gateway

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
)

// maxLoggedBytes bounds every client-supplied value in a log line (a traposId, a type, an
// error text): a 128 KiB type must not become a 128 KiB log line per frame.
const maxLoggedBytes = 200

// clip returns s cut to maxLoggedBytes (at a rune boundary) and marked as cut, with the
// length it had.
func clip(s string) string { return cctext.Clip(s, maxLoggedBytes) }

// quoteClipped is clip for a value shown inside a message to a peer: quoted, at most
// maxLoggedBytes of it.
func quoteClipped(s string) string {
	if len(s) <= maxLoggedBytes {
		return strconv.Quote(s)
	}
	return strconv.Quote(clip(s))
}

// warnEvery is how often one kind of WARN line is written per address; what comes in
// between is counted and reported with the next line.
const warnEvery = time.Minute

// warnForgetAfter is how long a WARN line's state is kept after it was last written when lines
// were suppressed since: the count waits for the address's next line that long, then the
// address is forgotten, so that ever new addresses do not grow the throttle for good.
const warnForgetAfter = 10 * warnEvery

// warnThrottle writes a repeated WARN (or ERROR) line (same message, same address) at most
// once per warnEvery, with the number of lines it suppressed since the last one.
type warnThrottle struct {
	log   *slog.Logger
	clock clock.Clock

	mu    sync.Mutex
	state map[string]*warnState // key: message + " " + address key
	swept time.Time
}

type warnState struct {
	loggedAt   time.Time
	suppressed int
}

func newWarnThrottle(logger *slog.Logger, c clock.Clock) *warnThrottle {
	return &warnThrottle{log: logger, clock: c, state: make(map[string]*warnState), swept: c.Now()}
}

// warn logs msg for address (grouped by addressKey: an IPv6 /64 is one address) unless it
// was logged for it less than warnEvery ago; it reports whether it logged.
func (w *warnThrottle) warn(msg, address string, attrs ...any) bool {
	return w.logAt(slog.LevelWarn, msg, address, attrs...)
}

// error is warn at ERROR: a failure of the gateway's own (its account store), which every
// computer's retry would otherwise log again every few seconds.
func (w *warnThrottle) error(msg, address string, attrs ...any) bool {
	return w.logAt(slog.LevelError, msg, address, attrs...)
}

func (w *warnThrottle) logAt(level slog.Level, msg, address string, attrs ...any) bool {
	key := msg + " " + addressKey(address)
	now := w.clock.Now()
	w.mu.Lock()
	w.sweepLocked(now)
	st := w.state[key]
	if st != nil && now.Sub(st.loggedAt) < warnEvery {
		st.suppressed++
		w.mu.Unlock()
		return false
	}
	suppressed := 0
	if st == nil {
		st = &warnState{}
		w.state[key] = st
	} else {
		suppressed = st.suppressed
	}
	st.loggedAt, st.suppressed = now, 0
	w.mu.Unlock()
	attrs = append([]any{"remote", address}, attrs...)
	if suppressed > 0 {
		attrs = append(attrs, "suppressedSinceLast", suppressed)
	}
	w.log.Log(context.Background(), level, msg, append(attrs, "repeatsLoggedEvery", warnEvery)...)
	return true
}

// sweepLocked forgets lines not repeated for a while (warnForgetAfter when repeats were
// suppressed since, whose count is then lost); w.mu must be held.
func (w *warnThrottle) sweepLocked(now time.Time) {
	if now.Sub(w.swept) < warnEvery {
		return
	}
	w.swept = now
	for k, st := range w.state {
		if idle := now.Sub(st.loggedAt); (idle >= warnEvery && st.suppressed == 0) || idle >= warnForgetAfter {
			delete(w.state, k)
		}
	}
}
