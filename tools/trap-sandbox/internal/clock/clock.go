// Package clock is the time source of the gateway's timers and expiries that tests move
// rather than wait out (a socket's liveness, request timeouts, rate limits, tokens' and link
// codes' expiry, the cluster router's heartbeats and its bound on a NATS operation, the age
// of the opencode prober's last result and its probe's timeout, MCP's waits for a screen and
// for a computer to connect, the HTTP API client's wait for the gateway's answer): tests drive
// them with a Fake instead of sleeping. It is the one way time is injected: a part that needs
// a settable time takes a Clock, not a func() time.Time.
package clock

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that sends on C() once d has passed.
	NewTimer(d time.Duration) Timer
	// AfterFunc returns a timer that calls f in a goroutine of its own once d has passed, as
	// time.AfterFunc does: it holds no goroutine and no channel while it waits. Its C() is nil.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a one-shot timer like time.Timer (Go 1.23+ semantics: after Stop or Reset no stale
// value is received).
type Timer interface {
	C() <-chan time.Time
	// Reset makes the timer fire d from now.
	Reset(d time.Duration)
	Stop()
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return realTimer{time.AfterFunc(d, f)} }

// WithTimeout is context.WithTimeout on c: the context ends d from now on c's time, so a
// Fake's Advance ends it, with Err and context.Cause context.DeadlineExceeded, as
// context.WithTimeout's does: code written for a deadline (a timeout told from a cancel by
// errors.Is(err, context.DeadlineExceeded)) reads it the same, its children's too. On Real it
// is context.WithTimeout itself (its Deadline the wall clock's end, which code that sends a
// request with the time left reads, and children that follow it without a goroutine); on
// another clock, whose time is not the wall clock's, its Deadline is ctx's. Call the returned
// cancel when done, as with context.WithTimeout.
func WithTimeout(ctx context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	if _, wall := c.(Real); wall {
		return context.WithTimeout(ctx, d)
	}
	inner, cancel := context.WithCancelCause(ctx)
	t := &timeoutCtx{Context: inner, done: make(chan struct{})}
	stopFollowing := context.AfterFunc(inner, t.end) // ctx ended
	timer := c.AfterFunc(d, func() {
		cancel(context.DeadlineExceeded)
		t.end()
	})
	return t, func() {
		stopFollowing()
		timer.Stop()
		cancel(context.Canceled)
		t.end()
	}
}

// timeoutCtx is WithTimeout's context on a clock other than the wall's: inner (a
// context.WithCancelCause of the parent) gives its values and cause, and done and err are its
// own, so that the end its timer cancels inner with reads as context.DeadlineExceeded. Its Done is not inner's, so a child context ends by
// its Err rather than by inner's (context.Canceled).
type timeoutCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
	err  error // set before done is closed
}

func (t *timeoutCtx) Done() <-chan struct{} { return t.done }

func (t *timeoutCtx) Err() error {
	select {
	case <-t.done:
		return t.err
	default:
		return nil
	}
}

// end closes done once inner has ended: with DeadlineExceeded when that was its cause (the
// timer's, or the parent's deadline), else with inner's error.
func (t *timeoutCtx) end() {
	t.once.Do(func() {
		t.err = t.Context.Err()
		if errors.Is(context.Cause(t.Context), context.DeadlineExceeded) {
			t.err = context.DeadlineExceeded
		}
		close(t.done)
	})
}

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time   { return t.t.C }
func (t realTimer) Reset(d time.Duration) { t.t.Reset(d) }
func (t realTimer) Stop()                 { t.t.Stop() }

// Fake is a clock that moves only when Advance is called. Its zero value is not usable; use
// NewFake.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	timers  map[*fakeTimer]struct{} // armed timers
	changed chan struct{}           // closed and replaced whenever the set of armed timers changes
}

// NewFake returns a Fake clock reading start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, timers: make(map[*fakeTimer]struct{}), changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when Advance reaches now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// AfterFunc returns a timer that calls f in a goroutine of its own when Advance reaches now+d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	t := &fakeTimer{f: f, fn: fn}
	t.Reset(d)
	return t
}

// Advance moves the clock forward by d and fires every timer that is due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	now := f.now
	for t := range f.timers {
		if !t.due.After(now) {
			delete(f.timers, t)
			t.fire(now)
		}
	}
	f.signalLocked()
	f.mu.Unlock()
}

// Armed is how many timers are waiting to fire.
func (f *Fake) Armed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// WaitArmed blocks until at least n timers are armed or done is closed, and reports whether
// they are. Tests use it to know a goroutine has set its timer before they Advance.
func (f *Fake) WaitArmed(n int, done <-chan struct{}) bool {
	for {
		f.mu.Lock()
		armed, changed := len(f.timers), f.changed
		f.mu.Unlock()
		if armed >= n {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
}

// NextDue is when the earliest armed timer fires (zero if none is armed).
func (f *Fake) NextDue() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var next time.Time
	for t := range f.timers {
		if next.IsZero() || t.due.Before(next) {
			next = t.due
		}
	}
	return next
}

func (f *Fake) signalLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

type fakeTimer struct {
	f   *Fake
	c   chan time.Time // nil for an AfterFunc timer
	fn  func()         // an AfterFunc timer's function
	due time.Time      // guarded by f.mu
}

// fire delivers the timer at now: a value on C, or a call of its function. Called with f.mu held.
func (t *fakeTimer) fire(now time.Time) {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.c <- now:
	default:
	}
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Reset(d time.Duration) {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.drain()
	t.due = t.f.now.Add(d)
	if d <= 0 {
		delete(t.f.timers, t)
		t.fire(t.f.now)
	} else {
		t.f.timers[t] = struct{}{}
	}
	t.f.signalLocked()
}

func (t *fakeTimer) Stop() {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.drain()
	delete(t.f.timers, t)
	t.f.signalLocked()
}

// drain drops a fired value nobody received, as time.Timer does since Go 1.23.
func (t *fakeTimer) drain() {
	select {
	case <-t.c:
	default:
	}
}
