// Package logthrottle writes a repeated WARN (or ERROR) line at most once a minute per key,
// counting the lines it left out, so a busy server's repeated failure does not flood the log.
// The gateway keys its lines by message and address (and, for a line that names a computer's
// credential, by the credential too: LogItem); the agent by the cause of a failure.
package logthrottle

import (
	"context"
	"log/slog"
	"slices"
	"strings"
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
	// stopped is set by Stop: LogBurst sets no timer from then on, and a timer that fired
	// anyway writes nothing. Guarded by mu.
	stopped bool
	// flushing counts LogBurst's end-of-minute lines being written (flushBurst), which Stop
	// waits for: each is added under mu while stopped is unset.
	flushing sync.WaitGroup
}

type keyState struct {
	loggedAt   time.Time
	suppressed int
	// flush is LogBurst's timer that writes the suppressed count at the end of the minute
	// (burst's line); nil when none is set.
	flush clock.Timer
	burst burstLine
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
// line it counts) with suppressedSinceLast. Its timer runs on the Throttle's clock; Stop ends
// it, writing the count at once. After Stop it is Log.
func (w *Throttle) LogBurst(level slog.Level, key, msg string, attrs ...any) bool {
	now := w.clock.Now()
	w.mu.Lock()
	if st := w.state[key]; st != nil && now.Sub(st.loggedAt) < Every && st.flush == nil && !w.stopped {
		st.burst = burstLine{level: level, msg: msg, attrs: append([]any(nil), attrs...)}
		st.flush = w.clock.AfterFunc(st.loggedAt.Add(Every).Sub(now), func() { w.flushBurst(key) })
	}
	w.mu.Unlock()
	return w.log1(level, key, "", msg, attrs)
}

// burstLine is the line LogBurst writes again at the end of a key's minute, with the count.
type burstLine struct {
	level slog.Level
	msg   string
	attrs []any
}

// flushBurst writes LogBurst's line of key with the count suppressed since its last, if any:
// its timer's function. After Stop it writes nothing (Stop wrote the count).
func (w *Throttle) flushBurst(key string) {
	w.mu.Lock()
	st := w.state[key]
	if st == nil || w.stopped {
		w.mu.Unlock()
		return
	}
	line, suppressed := st.takeBurstLocked(w.clock.Now())
	if suppressed == 0 {
		w.mu.Unlock()
		return
	}
	w.flushing.Add(1)
	w.mu.Unlock()
	defer w.flushing.Done()
	w.write(line.level, line.msg, line.attrs, suppressed)
}

// takeBurstLocked ends st's burst: its timer is dropped (not stopped: the caller stops it if
// it may still fire) and its line returned with the count to write, now its last line's time
// (no count: nothing to write). The Throttle's mu must be held.
func (st *keyState) takeBurstLocked(now time.Time) (burstLine, int) {
	st.flush = nil
	line, suppressed := st.burst, st.suppressed
	st.burst = burstLine{}
	if suppressed > 0 {
		st.loggedAt, st.suppressed = now, 0
	}
	return line, suppressed
}

// Stop ends LogBurst's timers, so that none writes after the Throttle's owner has stopped (the
// gateway's last line is "stopped"): the count each would have written at the end of its
// minute is written now, not lost (the lines in the order of their keys). A line a timer is
// writing as Stop is called is written before Stop returns. Log, LogItem and LogBurst go on
// writing after Stop as Log does, with no timer. Stop may be called more than once.
func (w *Throttle) Stop() {
	w.mu.Lock()
	w.stopped = true
	now := w.clock.Now()
	type due struct {
		key        string
		line       burstLine
		suppressed int
	}
	var dues []due
	for key, st := range w.state {
		if st.flush == nil {
			continue
		}
		st.flush.Stop()
		if line, suppressed := st.takeBurstLocked(now); suppressed > 0 {
			dues = append(dues, due{key, line, suppressed})
		}
	}
	w.mu.Unlock()
	w.flushing.Wait()
	slices.SortFunc(dues, func(a, b due) int { return strings.Compare(a.key, b.key) })
	for _, d := range dues {
		w.write(d.line.level, d.line.msg, d.line.attrs, d.suppressed)
	}
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
			if st.flush != nil {
				st.flush.Stop() // it would find no count to write; and Stop would not find it
			}
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
