// Package logthrottle writes a repeated WARN (or ERROR) line at most once a minute per key,
// counting the lines it left out, so a busy server's repeated failure does not flood the log.
// The gateway keys its lines by message and address (and, for a line that names a computer's
// credential, by the credential too: LogItem); the agent by the cause of a failure.
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

// MaxItemsPerGroup is how many items of one group (the credentials said hello with from one
// address) LogItem keeps lines of their own for at once: a Minecraft server's computers share
// its address, and each is named; past it, a further item's line is the group's (Log's).
const MaxItemsPerGroup = 16

// MaxItems is how many items of all groups together LogItem keeps lines of their own for at
// once, so that ever new items from ever new addresses cannot write more than that many
// lines a minute beyond one per group.
const MaxItems = 256

// Throttle writes a line per key at most once per Every, with the number of lines it
// suppressed since the last one. Its zero value is not usable; use New.
type Throttle struct {
	log   *slog.Logger
	clock clock.Clock

	mu      sync.Mutex
	state   map[string]*keyState // guarded by mu
	itemsOf map[string]int       // LogItem's keys in state per group; guarded by mu
	items   int                  // LogItem's keys in state; guarded by mu
	swept   time.Time            // guarded by mu
}

type keyState struct {
	loggedAt   time.Time
	suppressed int
	// flush is LogBurst's timer that writes the suppressed count at the end of the minute;
	// nil when none is set.
	flush clock.Timer
	// group is the group of a LogItem key, "" for Log's.
	group string
}

// New returns a Throttle writing to logger, on clock c.
func New(logger *slog.Logger, c clock.Clock) *Throttle {
	return &Throttle{log: logger, clock: c, state: make(map[string]*keyState), itemsOf: make(map[string]int), swept: c.Now()}
}

// Log writes msg at level with attrs unless a line of key was written less than Every ago
// (then it counts it); it reports whether it wrote. A written line ends with
// suppressedSinceLast (when lines were suppressed since the key's last) and
// repeatsLoggedEvery.
func (w *Throttle) Log(level slog.Level, key, msg string, attrs ...any) bool {
	return w.log1(level, key, "", msg, attrs)
}

// LogBurst is Log for a failure that comes in a burst and then stops (a frozen Minecraft
// server's computers, all dropped within a minute, come back once it runs again): no next
// line of key would carry the count of those it suppressed, so when the key's minute ends
// with lines suppressed, the line is written again then (msg, with the attrs of the first
// line it counts) with suppressedSinceLast. Its timer runs on the Throttle's clock.
func (w *Throttle) LogBurst(level slog.Level, key, msg string, attrs ...any) bool {
	now := w.clock.Now()
	w.mu.Lock()
	if st := w.state[key]; st != nil && now.Sub(st.loggedAt) < Every && st.flush == nil {
		attrs := append([]any(nil), attrs...)
		st.flush = w.clock.AfterFunc(st.loggedAt.Add(Every).Sub(now), func() { w.flushBurst(level, key, msg, attrs) })
	}
	w.mu.Unlock()
	return w.log1(level, key, "", msg, attrs)
}

// flushBurst writes LogBurst's line of key with the count suppressed since its last, if any.
func (w *Throttle) flushBurst(level slog.Level, key, msg string, attrs []any) {
	w.mu.Lock()
	st := w.state[key]
	if st == nil {
		w.mu.Unlock()
		return
	}
	st.flush = nil
	suppressed := st.suppressed
	if suppressed == 0 {
		w.mu.Unlock()
		return
	}
	st.loggedAt, st.suppressed = w.clock.Now(), 0
	w.mu.Unlock()
	w.write(level, msg, attrs, suppressed)
}

// LogItem is Log for one item of a group (a computer's credential, of the address it said
// hello from; group is Log's key): each item has its line once per Every, so that the
// computers behind one address are each named, not one of them with a count of the others
// (a computer refused stops retrying: no later line would carry the count). While its group
// already has MaxItemsPerGroup items, or all groups MaxItems, a new item's line is the
// group's (Log's, counted with it), so that ever new items (made-up credential ids) cannot
// fill the log.
func (w *Throttle) LogItem(level slog.Level, group, item, msg string, attrs ...any) bool {
	return w.log1(level, group, group+"\x00"+item, msg, attrs)
}

// log1 writes msg for itemKey (the key of an item of group, "" for Log) or, when that is
// "" or no new item fits, for group.
func (w *Throttle) log1(level slog.Level, group, itemKey, msg string, attrs []any) bool {
	now := w.clock.Now()
	w.mu.Lock()
	w.sweepLocked(now)
	key := group
	if itemKey != "" {
		if _, known := w.state[itemKey]; known || (w.itemsOf[group] < MaxItemsPerGroup && w.items < MaxItems) {
			key = itemKey
		}
	}
	st := w.state[key]
	if st != nil && now.Sub(st.loggedAt) < Every {
		st.suppressed++
		w.mu.Unlock()
		return false
	}
	suppressed := 0
	if st == nil {
		st = &keyState{}
		if key != group {
			st.group = group
			w.itemsOf[group]++
			w.items++
		}
		w.state[key] = st
	} else {
		suppressed = st.suppressed
	}
	st.loggedAt, st.suppressed = now, 0
	w.mu.Unlock()
	w.write(level, msg, attrs, suppressed)
	return true
}

// write writes msg with attrs, then suppressedSinceLast (when lines were suppressed) and
// repeatsLoggedEvery.
func (w *Throttle) write(level slog.Level, msg string, attrs []any, suppressed int) {
	attrs = append([]any(nil), attrs...)
	if suppressed > 0 {
		attrs = append(attrs, "suppressedSinceLast", suppressed)
	}
	w.log.Log(context.Background(), level, msg, append(attrs, "repeatsLoggedEvery", Every)...)
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
			if st.group != "" {
				w.items--
				if w.itemsOf[st.group]--; w.itemsOf[st.group] == 0 {
					delete(w.itemsOf, st.group)
				}
			}
		}
	}
}
