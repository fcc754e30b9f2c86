package computer

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// MaxTypedEvents bounds the os events one TypeInput queues: 256 screen.input requests' worth,
// a Type field's 4096 characters typed as keys (a key, its char and its key_up each) with room
// to spare, typed in seconds.
const MaxTypedEvents = 256 * MaxInputEvents

// PartlyTyped is TypeInput's error once the computer took some of the input's requests and a
// later one failed: the requests after it were not sent (the input would go on with a hole in
// it), and those before it are typed, which a caller must not type again.
type PartlyTyped struct {
	// Err is the failed request's error.
	Err error
	// Queued is the input's os events (InputCost) in the requests the computer took before
	// it: the events of SplitInput's first parts (TypedPart).
	Queued int
}

// Error is the failed request's error's.
func (e *PartlyTyped) Error() string { return e.Err.Error() }

// Unwrap is the failed request's error, so its code and ByComputer read through.
func (e *PartlyTyped) Unwrap() error { return e.Err }

// TypedPart is the events of events' first requests (SplitInput's parts) whose os events add
// up to queued: what a PartlyTyped input typed, its texts as the computer got them (CC's
// bytes, as TypeInput cuts them: é written as e and U+0301 is one character).
func TypedPart(events []InputEvent, queued int) []InputEvent {
	var typed []InputEvent
	for _, part := range InputRequests(events) {
		cost := EventsCost(part)
		if cost > queued {
			break
		}
		typed, queued = append(typed, part...), queued-cost
	}
	return typed
}

// InputRequests is the screen.input requests TypeInput sends for events, in order: their texts
// as CC's bytes (the text rule), cut by SplitInput.
func InputRequests(events []InputEvent) [][]InputEvent {
	wire, _ := wireInput(events)
	return SplitInput(wire)
}

// InputTyper is a Transport that types a whole input in one call of its own: the HTTP API's
// client, whose gateway splits the input and holds the computer's input turn over its
// requests (POST …/input). TypeInput uses it; the gateway in-process is none.
type InputTyper interface {
	TypeInput(ctx context.Context, traposID string, events []InputEvent, timeout time.Duration) (int, []cctext.Replacement, error)
}

// ErrNoWholeInput is an InputTyper's answer when its gateway types no whole input: one older
// than POST …/input, which answers it no API route. TypeInput then types the input itself,
// part by part, as callers of such a gateway always did: nothing of the input was typed.
var ErrNoWholeInput = errors.New("the gateway types no whole input (older than POST …/input)")

// TypeInput types events on the computer whole, as its keyboard and mouse would: in as many
// screen.input requests as they take (SplitInput), one after another, holding the computer's
// input turn over them all (InputTurn), so no other caller's input lands between its parts.
// timeout bounds the whole call, the wait for the turn included. It returns how many events
// the computer queued (InputCost, over the requests it took) and the characters of the texts
// CC's charset could not hold, each named by its event's place in events. A refusal names an
// event by its place in events too; once a request after the first fails, the error is a
// *PartlyTyped saying what was typed. It is the one home of "split an input and hold the
// turn": MCP's send_keys, send_text and click, the HTTP API's …/input (the web console's keys and
// Type field) and trap-sandbox screen use it.
func (c *Client) TypeInput(ctx context.Context, traposID string, events []InputEvent, timeout time.Duration) (int, []cctext.Replacement, error) {
	timeout = bound(timeout, DefaultTimeout)
	if n := EventsCost(events); n > MaxTypedEvents {
		return 0, nil, protocol.Errorf(protocol.CodeBadPayload, "the input is %d events of the computer's queue (a character is one, a line break or a key press and release two); one input types %d at most: send it in several",
			n, MaxTypedEvents)
	}
	if t, ok := c.transport.(InputTyper); ok {
		queued, reps, err := t.TypeInput(ctx, traposID, events, timeout)
		if !errors.Is(err, ErrNoWholeInput) {
			return queued, reps, err
		}
		// An older gateway: its input turn is not held across the parts (another caller's
		// keys may land between them, as they could with it before); this client's own are.
	}
	// The texts become CC's bytes once, whole (a replacement is named by its place in its
	// whole text), and are cut as the computer counts them: a byte an event (é written as e
	// and U+0301 is one).
	wire, reps := wireInput(events)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	typing, release, err := c.InputTurn(ctx, traposID)
	if err != nil {
		return 0, reps, err
	}
	defer release()
	parts, places := splitInput(wire)
	queued := 0
	for k, part := range parts {
		if _, err := c.sendWire(typing, traposID, part, remaining(typing)); err != nil {
			err = placedIn(err, places[k])
			if k > 0 {
				err = &PartlyTyped{Err: err, Queued: queued}
			}
			return queued, reps, err
		}
		queued += EventsCost(part)
	}
	return queued, reps, nil
}

// EventsCost is the os events events queue on the computer (InputCost of each).
func EventsCost(events []InputEvent) int {
	n := 0
	for _, e := range events {
		n += InputCost(e)
	}
	return n
}

// placedIn names the event the computer refused ("events[3]: unknown key name …", its place
// in the request) by its place in the whole input: places[i] is the place of the request's
// event i. A key name the computer does not know gets the CC name meant after its words
// (KeyRefusalHint), as send_keys' refusal has it.
func placedIn(err error, places []int) error {
	pe, i, rest, ok := RefusedEvent(err)
	if !ok || !pe.ByComputer || i >= len(places) {
		return err
	}
	// The place and the hint are the host's words; the computer's are the rest (what it said
	// of the event).
	return pe.WithHostWordsAround("events["+strconv.Itoa(places[i])+"]", rest, KeyRefusalHint(rest))
}

// RefusedEvent reads the event a computer's bad_payload refusal of a screen.input names by
// its place in the request ("events[4]: unknown key name …", libsandboxscreen's words): the
// error, the place, and the words after "events[4]" (": unknown key name …"), for a caller
// to name the event in its own terms.
func RefusedEvent(err error) (pe *protocol.Error, place int, rest string, ok bool) {
	if !errors.As(err, &pe) || pe.Code != protocol.CodeBadPayload {
		return nil, 0, "", false
	}
	after, found := strings.CutPrefix(pe.Message, "events[")
	end := strings.Index(after, "]")
	if !found || end < 0 {
		return nil, 0, "", false
	}
	i, convErr := strconv.Atoi(after[:end])
	if convErr != nil || i < 0 {
		return nil, 0, "", false
	}
	return pe, i, after[end+1:], true
}
