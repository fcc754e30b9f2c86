// Package logthrottle writes a repeated WARN (or ERROR) line at most once a minute per key,
// counting the lines it left out, so a busy server's repeated failure does not flood the log.
// The gateway keys its lines by message and address; the agent by the cause of a failure.
package logthrottle

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"trap-sandbox/internal/clock"
)

// Every is how often one key's line is written; what comes in between is counted and
// reported with the next line (suppressedSinceLast).
const Every = time.Minute

// ForgetAfter is how long a key's state is kept after its line was last written when lines
// were suppressed since: the count waits for the key's next line that long, then the key is
// forgotten, so that ever new keys (addresses) do not grow the throttle for good.
const ForgetAfter = 10 * Every

// Throttle writes a line per key at most once per Every, with the number of lines it
// suppressed since the last one. Its zero value is not usable; use New.
type Throttle struct {
	log   *slog.Logger
	clock clock.Clock

	mu    sync.Mutex
	state map[string]*keyState // guarded by mu
	swept time.Time            // guarded by mu
}

type keyState struct {
	loggedAt   time.Time
	suppressed int
}

// New returns a Throttle writing to logger, on clock c.
func New(logger *slog.Logger, c clock.Clock) *Throttle {
	return &Throttle{log: logger, clock: c, state: make(map[string]*keyState), swept: c.Now()}
}

// Log writes msg at level with attrs unless a line of key was written less than Every ago
// (then it counts it); it reports whether it wrote. A written line ends with
// suppressedSinceLast (when lines were suppressed since the key's last) and
// repeatsLoggedEvery.
func (w *Throttle) Log(level slog.Level, key, msg string, attrs ...any) bool {
	now := w.clock.Now()
	w.mu.Lock()
	w.sweepLocked(now)
	st := w.state[key]
	if st != nil && now.Sub(st.loggedAt) < Every {
		st.suppressed++
		w.mu.Unlock()
		return false
	}
	suppressed := 0
	if st == nil {
		st = &keyState{}
		w.state[key] = st
	} else {
		suppressed = st.suppressed
	}
	st.loggedAt, st.suppressed = now, 0
	w.mu.Unlock()
	attrs = append([]any(nil), attrs...)
	if suppressed > 0 {
		attrs = append(attrs, "suppressedSinceLast", suppressed)
	}
	w.log.Log(context.Background(), level, msg, append(attrs, "repeatsLoggedEvery", Every)...)
	return true
}

// sweepLocked forgets keys not repeated for a while (ForgetAfter when repeats were
// suppressed since, whose count is then lost); w.mu must be held.
func (w *Throttle) sweepLocked(now time.Time) {
	if now.Sub(w.swept) < Every {
		return
	}
	w.swept = now
	for k, st := range w.state {
		if idle := now.Sub(st.loggedAt); (idle >= Every && st.suppressed == 0) || idle >= ForgetAfter {
			delete(w.state, k)
		}
	}
}
