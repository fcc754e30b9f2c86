package computer

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// TooLongMessage is the error CC raises in code that runs too long without yielding. As in
// CC, it carries the position of the Lua code it stopped (gopher-lua raises it between two
// instructions: "file:line: Too long without yielding") and is bare when it stops a Go
// library function (the pattern matcher, strlib.go).
const TooLongMessage = "Too long without yielding"

// DefaultYieldTimeout is CC's limit on a single resume of the computer before TooLongMessage.
const DefaultYieldTimeout = 7 * time.Second

// hardAbortGrace is how long CC waits after the soft abort before killing the computer.
const hardAbortGrace = 1500 * time.Millisecond

var errTooLong = errors.New(TooLongMessage)

// StoppedMessage is the error raised in the Lua code that runs when the host stops the
// computer (Run's ctx ends: fakecraft's --time-limit). It is not CC's: no CC computer is
// stopped this way, and the code it stops did nothing wrong.
const StoppedMessage = "Stopped by fakecraft's time limit"

var errStopped = errors.New(StoppedMessage)

// yieldGuard is the context.Context given to every Lua thread of a computer. gopher-lua
// checks Done before every instruction, so swapping the channel per resume turns it into
// CC's per-resume watchdog: the soft abort raises the error once, a hard abort keeps raising
// until the resume ends. It is never cancelled as a whole, and implements AfterFunc so that
// context.WithCancel children (gopher-lua makes one per coroutine) start no goroutine.
type yieldGuard struct {
	after   afterFunc  // starts the per-resume timers
	mu      sync.Mutex // serialises trip against arm/disarm so a late timer cannot leak into the next resume
	gen     uint64     // guarded by mu: which resume the timers belong to
	done    atomic.Pointer[chan struct{}]
	hard    atomic.Bool
	stopped atomic.Bool // abort, not the yield timeout, made the hard abort
	never   chan struct{}
}

// afterFunc calls f once d has passed, in a goroutine of its own, unless the returned stop
// is called first: time.AfterFunc's contract, which the guard's clock keeps.
type afterFunc func(d time.Duration, f func()) (stop func() bool)

// realAfter is the wall clock's afterFunc, the guard's unless a test gives it another.
func realAfter(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// newYieldGuard makes a guard whose timers run on after (nil: the wall clock).
func newYieldGuard(after afterFunc) *yieldGuard {
	if after == nil {
		after = realAfter
	}
	g := &yieldGuard{after: after, never: make(chan struct{})}
	g.done.Store(&g.never)
	return g
}

func (g *yieldGuard) Deadline() (time.Time, bool) { return time.Time{}, false }
func (g *yieldGuard) Done() <-chan struct{}       { return *g.done.Load() }
func (g *yieldGuard) Value(any) any               { return nil }

// Err is called by gopher-lua on the Lua goroutine right after Done fired; a soft abort
// re-arms the guard so the error is raised once. It holds mu: a hard abort (the hard timer,
// or the computer being stopped) landing between reading hard and re-arming would
// otherwise be overwritten, and the computer would run on.
func (g *yieldGuard) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped.Load() {
		return errStopped
	}
	if !g.hard.Load() {
		g.done.Store(&g.never)
	}
	return errTooLong
}

// abortMessage is the error a Go function that polls the guard (the pattern matcher)
// raises when it fired: TooLongMessage, or StoppedMessage when the host stopped the computer.
func abortMessage(L *lua.LState) string {
	if ctx := L.Context(); ctx != nil {
		return ctx.Err().Error()
	}
	return TooLongMessage
}

// AfterFunc never calls f: the guard as a whole is never cancelled.
func (g *yieldGuard) AfterFunc(func()) func() bool { return func() bool { return true } }

// trip raises the abort in whatever Lua code runs now, if resume gen is still running.
func (g *yieldGuard) trip(gen uint64, hard bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gen != g.gen {
		return
	}
	if hard {
		g.hard.Store(true)
	}
	ch := make(chan struct{})
	close(ch)
	g.done.Store(&ch)
}

// arm starts watching one resume and returns the function that ends the watch.
func (g *yieldGuard) arm(limit time.Duration) (disarm func()) {
	g.mu.Lock()
	g.gen++
	gen := g.gen
	g.mu.Unlock()
	stopSoft := g.after(limit, func() { g.trip(gen, false) })
	stopHard := g.after(limit+hardAbortGrace, func() { g.trip(gen, true) })
	return func() {
		stopSoft()
		stopHard()
		g.mu.Lock()
		defer g.mu.Unlock()
		g.gen++
		if !g.hard.Load() {
			g.done.Store(&g.never)
		}
	}
}

// abort hard-aborts whatever runs now and every later resume, as when the time limit ends.
func (g *yieldGuard) abort() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped.Store(true)
	g.hard.Store(true)
	ch := make(chan struct{})
	close(ch)
	g.done.Store(&ch)
}
