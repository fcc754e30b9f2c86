package hostapi

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// callNameMaxBytes bounds an input's call and after names (InputBody).
const callNameMaxBytes = 64

// afterArrivalWithin is how long an input named after an earlier call waits for that call to
// reach the gateway: one still on its way (sent first, on a slower connection) arrives about
// as soon, and one that never comes (its page's browser gave it up, the network cut it) holds
// the later input back no longer than this.
const afterArrivalWithin = 5 * time.Second

// namedCallsKept bounds how long the gateway remembers an ended named call, for a later input
// naming it that comes after its end (its answer crossed the later call on the way), and
// namedCallsMax how many it remembers at once, the oldest ended forgotten first.
const (
	namedCallsKept = time.Minute
	namedCallsMax  = 4096
)

// inputOrder keeps the named inputs (InputBody.Call) of this gateway, so that an input named
// after one (InputBody.After) is typed once it ended: a page's release sent as the page is left
// goes beside its call still on the way, and reached the computer first, before the press it
// lets go. The one home of that order.
type inputOrder struct {
	mu    sync.Mutex
	calls map[callKey]*namedCall
	ended []callKey // in the order they ended, for forgetting them
	// arrivalWithin is afterArrivalWithin, unless a test sets a shorter wait.
	arrivalWithin time.Duration
}

// callKey is a named call of computer traposID's input.
type callKey struct{ traposID, name string }

// namedCall is a named call the gateway has seen arrive (begun), or that a later input waits
// for (waiters); ended is closed once it has been typed or refused, at endedAt.
type namedCall struct {
	begun   bool
	waiters int
	ended   chan struct{}
	endedAt time.Time
}

// testHookAwaitingCall, when set (by a test), runs once an input has begun waiting for the
// call it is named after.
var testHookAwaitingCall func(traposID, name string)

// begin records the arrival of computer traposID's input named name, and returns the func
// that records its end (the input typed or refused). A name already begun (a caller's
// mistake) orders nothing more: its end is the first's.
func (o *inputOrder) begin(traposID, name string) (end func()) {
	if name == "" {
		return func() {}
	}
	key := callKey{traposID, name}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.calls == nil {
		o.calls = map[callKey]*namedCall{}
	}
	c := o.calls[key]
	if c != nil && c.begun {
		return func() {}
	}
	if c == nil {
		c = &namedCall{ended: make(chan struct{})}
		o.calls[key] = c
	}
	c.begun = true
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		c.endedAt = time.Now()
		close(c.ended)
		o.ended = append(o.ended, key)
		o.forget(c.endedAt)
	}
}

// forget drops the ended calls older than namedCallsKept, and the oldest past namedCallsMax
// (an input still waiting on one holds it itself: it has ended).
func (o *inputOrder) forget(now time.Time) {
	n := 0
	for ; n < len(o.ended); n++ {
		c := o.calls[o.ended[n]]
		if len(o.ended)-n <= namedCallsMax && now.Sub(c.endedAt) < namedCallsKept {
			break
		}
		delete(o.calls, o.ended[n])
	}
	o.ended = o.ended[n:]
}

// await waits until computer traposID's call named name has ended: at once when it has, for
// at most afterArrivalWithin when it has not arrived by then, else until it ends. ctx ending
// first (the input's timeout) is a timeout error: nothing of the input was typed.
func (o *inputOrder) await(ctx context.Context, traposID, name string) error {
	if name == "" {
		return nil
	}
	key := callKey{traposID, name}
	o.mu.Lock()
	if o.calls == nil {
		o.calls = map[callKey]*namedCall{}
	}
	c := o.calls[key]
	if c == nil {
		c = &namedCall{ended: make(chan struct{})}
		o.calls[key] = c
	}
	c.waiters++
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		c.waiters--
		if c.waiters == 0 && !c.begun && o.calls[key] == c {
			delete(o.calls, key) // it never came: nothing to remember
		}
	}()
	if hook := testHookAwaitingCall; hook != nil {
		hook(traposID, name)
	}
	arrival := time.NewTimer(cmp.Or(o.arrivalWithin, afterArrivalWithin))
	defer arrival.Stop()
	for {
		select {
		case <-c.ended:
			return nil
		case <-arrival.C:
			o.mu.Lock()
			begun := c.begun
			o.mu.Unlock()
			if !begun {
				return nil // it never came: this input goes on its own
			}
		case <-ctx.Done():
			return protocol.Errorf(protocol.CodeTimeout, "this input to computer %s goes after the call %q, which had not ended when this call's time ran out: nothing of it was typed",
				cctext.ShowTraposID(traposID), name)
		}
	}
}

// validCallName is "" when name (the body's field) is a call's name, else why not.
func validCallName(field, name string) string {
	if len(name) > callNameMaxBytes {
		return fmt.Sprintf("%q is %d bytes; a call's name is %d bytes at most", field, len(name), callNameMaxBytes)
	}
	return ""
}
