// Package fakecrafttest boots fakecraft computers inside Go tests: write files, run a
// program, watch the transcript, queue events (or flood the queue), terminate, and reach the
// http API's fault hooks. Every computer is stopped and waited for in t.Cleanup.
package fakecrafttest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/computer"
	"fakecraft/computer/machine"
)

// DefaultTimeLimit bounds a computer started by Start when the test sets none.
const DefaultTimeLimit = 30 * time.Second

// YieldTimeout is how long one resume of a computer under test may run before "Too long
// without yielding", when its options set none. CC's limit (computer.DefaultYieldTimeout, 7 s)
// is wall time: a resume that takes 100 ms on an idle machine can take longer than that under
// -race on a loaded 2-core one, and a test must not depend on the machine's speed. A test of
// the limit itself sets opts.YieldTimeout (to CC's value or a shorter one).
const YieldTimeout = 30 * time.Second

// stopWait bounds the wait for a computer told to stop. A stop hard-aborts whatever Lua
// runs, so a computer that outlasts it is stuck in Go no abort reaches (a library function
// that never checks, a deadlock): the test fails naming it instead of hanging until go
// test's own timeout. A variable so this package's tests can shorten it.
var stopWait = 30 * time.Second

// Computer is a running fakecraft computer under test.
type Computer struct {
	*machine.Machine
	t      testing.TB
	id     int
	out    *Output
	done   chan struct{}
	res    computer.Result
	err    error
	cancel context.CancelFunc
}

// Start boots a computer with opts on its own goroutine. opts.Stdout, when set, also gets
// the transcript. The computer is terminated and waited for when the test ends, or after
// DefaultTimeLimit.
func Start(t testing.TB, opts machine.Options) *Computer {
	t.Helper()
	return StartWithin(t, opts, DefaultTimeLimit)
}

// StartWithin is Start for a computer that may run up to limit (a long transfer under -race).
func StartWithin(t testing.TB, opts machine.Options, limit time.Duration) *Computer {
	t.Helper()
	c := &Computer{t: t, id: opts.ID, out: &Output{}, done: make(chan struct{})}
	if opts.YieldTimeout == 0 {
		opts.YieldTimeout = YieldTimeout
	}
	if opts.Stdout != nil {
		opts.Stdout = multiWriter{opts.Stdout, c.out}
	} else {
		opts.Stdout = c.out
	}
	m, err := machine.New(opts)
	if err != nil {
		t.Fatalf("fakecraft: %v", err)
	}
	c.Machine = m
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	c.cancel = cancel
	go func() {
		defer close(c.done)
		c.res, c.err = m.Run(ctx)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// Said, because what follows (a socket closed, a test waiting for output) would
			// not say it: a computer that outlived its limit is stopped mid-test.
			t.Logf("fakecraft: computer %d stopped: it ran past its time limit of %v (StartWithin sets a longer one)", opts.ID, limit)
		}
	}()
	t.Cleanup(c.Stop)
	return c
}

type multiWriter [2]interface{ Write([]byte) (int, error) }

func (w multiWriter) Write(p []byte) (int, error) {
	for _, x := range w {
		if _, err := x.Write(p); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Run boots a computer, waits until it shuts down (bounded by ctx: the computer may run
// until ctx's deadline, or DefaultTimeLimit when ctx has none) and returns the result and the
// transcript.
func Run(ctx context.Context, t testing.TB, opts machine.Options) (computer.Result, string) {
	t.Helper()
	limit := DefaultTimeLimit
	if deadline, ok := ctx.Deadline(); ok {
		limit = time.Until(deadline)
	}
	c := StartWithin(t, opts, limit)
	res, err := c.Wait(ctx)
	if err != nil {
		t.Fatalf("fakecraft: %v\ntranscript:\n%s", err, c.Output())
	}
	return res, c.Output()
}

// Output is the transcript so far (finished lines).
func (c *Computer) Output() string { return c.out.String() }

// Wait waits for the computer to shut down, or ctx to end (then it stops the computer and
// returns ctx's error, or the error naming a computer that would not stop).
func (c *Computer) Wait(ctx context.Context) (computer.Result, error) {
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		if err := c.stop(); err != nil {
			return computer.Result{}, err
		}
		return c.res, ctx.Err()
	}
}

// Stop ends the computer at once (as its time limit would) and waits for it; the test fails
// when it does not stop within stopWait.
func (c *Computer) Stop() {
	c.t.Helper()
	if err := c.stop(); err != nil {
		c.t.Error(err)
	}
}

// stop cancels the computer's run and waits up to stopWait for it to end; the error names
// the computer and shows every goroutine's stack, the stuck one among them.
func (c *Computer) stop() error {
	c.cancel()
	timer := time.NewTimer(stopWait)
	defer timer.Stop()
	select {
	case <-c.done:
		return nil
	case <-timer.C:
	}
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return fmt.Errorf("fakecraft: computer %d did not stop within %v of being told to; transcript:\n%s\ngoroutines:\n%s",
		c.id, stopWait, c.Output(), buf)
}

// WaitFor waits until the transcript contains text, or fails the test when ctx ends first.
func (c *Computer) WaitFor(ctx context.Context, text string) {
	c.t.Helper()
	for {
		changed := c.out.Changed()
		if strings.Contains(c.Output(), text) {
			return
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("fakecraft: %q never appeared; transcript:\n%s", text, c.Output())
		case <-c.done:
			if !strings.Contains(c.Output(), text) {
				c.t.Fatalf("fakecraft: computer stopped before %q appeared; transcript:\n%s", text, c.Output())
			}
			return
		case <-changed:
		}
	}
}

// Flood queues n copies of an event with no arguments, as a burst of network events would;
// the queue keeps at most computer.EventQueueLimit.
func (c *Computer) Flood(name string, n int) {
	for i := 0; i < n; i++ {
		c.QueueEvent(name)
	}
}

// QueueString queues an event whose arguments are strings.
func (c *Computer) QueueString(name string, args ...string) {
	vals := make([]lua.LValue, len(args))
	for i, a := range args {
		vals[i] = lua.LString(a)
	}
	c.QueueEvent(name, vals...)
}
