package agent

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"trap-sandbox/internal/protocol"
)

// Event kinds and done reasons of ai.poll (docs/protocol.md, "The agent").
const (
	KindText     = "text"
	KindTool     = "tool"
	KindConfirm  = "confirm"
	KindStarting = "starting"
	KindRetry    = "retry"
	KindCut      = "cut"
	KindError    = "error"
	KindDone     = "done"

	ReasonStop         = "stop"
	ReasonAborted      = "aborted"
	ReasonError        = "error"
	ReasonDeadline     = "deadline"
	ReasonDisconnected = "disconnected"
)

// Event is one entry of a turn's stream. Text fields hold wire text (the text rule applied).
type Event struct {
	Seq       int    `json:"seq"`
	Kind      string `json:"kind"`
	Text      string `json:"text,omitempty"`
	Tool      string `json:"tool,omitempty"`
	Detail    string `json:"detail,omitempty"`
	State     string `json:"state,omitempty"`
	ConfirmID string `json:"confirmId,omitempty"`
	Action    string `json:"action,omitempty"`
	Bytes     *int   `json:"bytes,omitempty"`
	Message   string `json:"message,omitempty"`
	Attempt   int    `json:"attempt,omitempty"`
	Code      string `json:"code,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Error is a tool's failure, on a tool event in state error.
	Error string `json:"error,omitempty"`
	// Full is, on a confirm event of a run, its whole code or command line when Detail shows
	// only part of it (cut, or its lines joined): the player reads it before answering.
	Full string `json:"full,omitempty"`
	// Content is, on a confirm event of a write_file of at most contentMax bytes, the bytes it
	// stores, as wire text (nil for a longer one, and "" for an empty file): the player reads
	// them, or what they change of the file there, before answering. Full stays a run's, so a
	// client from before it (0.5.14) asks as before, naming the file and its size.
	Content *string `json:"content,omitempty"`
	// Request is, on a confirm event, the request the tool will send the computer (its type
	// and the payload's paths), so the computer checks its own settings before it asks the
	// player.
	Request *ConfirmRequest `json:"request,omitempty"`
}

// ConfirmRequest is the request a confirmed change will be: the type and the paths the
// computer's permission check reads (path, or from and to), never the content.
type ConfirmRequest struct {
	Type    string            `json:"type"`
	Payload map[string]string `json:"payload"`
}

// size is what an event weighs against a poll reply's text budget.
func (e *Event) size() int {
	n := len(e.Text) + len(e.Detail) + len(e.Full) + len(e.Message) + len(e.Error) + 64
	if e.Content != nil {
		n += len(*e.Content)
	}
	if e.Request != nil {
		for _, v := range e.Request.Payload {
			n += len(v) + 16
		}
	}
	return n
}

// Sizes of the relay (docs/protocol.md): a text event holds at most textEventBytes, a poll
// reply at most pollTextBytes of event text, a turn's answer at most Config.AnswerCap.
const (
	textEventBytes = 4 << 10
	pollTextBytes  = 16 << 10
	// maxPollEvents bounds the number of events in one reply whatever their size.
	maxPollEvents = 256
)

// turn is one question and its answer: the events the computer polls, and what the gateway
// needs to end it.
type turn struct {
	m      *Module
	tr     *tracker
	id     string
	caller callerKey
	sess   *session
	ctx    context.Context
	// cancel ends the turn with its cause (errAborted, errDeadline, errDisconnected).
	cancel  context.CancelCauseFunc
	started time.Time
	// calledAt is when the turn began to call opencode, by the module's clock (Config.Clock):
	// how long its failed call waited is the player's wait (diagnose).
	calledAt time.Time

	mu          sync.Mutex
	events      []Event
	delivered   int  // highest seq a poll reply carried
	textBytes   int  // answer bytes relayed so far
	cut         bool // the answer passed the cap
	done        bool
	doneAt      time.Time
	firstTextAt time.Time
	changed     chan struct{} // closed and replaced when an event is added
	// confirms waits for the player's answers, by confirmId.
	confirms map[string]chan confirmAnswer
	// opencodeID is the opencode session the turn runs on, set once it is known.
	opencodeID string
	// abortFailing is set while the turn's last abort on opencode failed (abortUntilStopped):
	// opencode hung or failing, so the turn stops only once its operator fixes it.
	abortFailing atomic.Bool
}

func newTurn(id string, caller callerKey, sess *session, parent context.Context) *turn {
	ctx, cancel := context.WithCancelCause(parent)
	return &turn{id: id, caller: caller, sess: sess, ctx: ctx, cancel: cancel, started: time.Now(),
		changed: make(chan struct{}), confirms: map[string]chan confirmAnswer{}}
}

// add appends an event (its seq assigned) unless the turn is done, and wakes pollers.
func (t *turn) add(e Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addLocked(e)
}

func (t *turn) addLocked(e Event) {
	if t.done {
		return
	}
	e.Seq = len(t.events) + 1
	t.events = append(t.events, e)
	if e.Kind == KindDone {
		t.done = true
		t.doneAt = time.Now()
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// addText relays answer text (already wire text): appended to the last text event while no
// poll has carried it and it has room, split so no event passes textEventBytes, cut at the
// turn's cap with one cut event. It reports whether this was the turn's first text.
func (t *turn) addText(text string, capBytes int) (first bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done || t.cut || text == "" {
		return false
	}
	if t.firstTextAt.IsZero() {
		t.firstTextAt = time.Now()
		first = true
	}
	if t.textBytes+len(text) > capBytes {
		text = clipUTF8(text, capBytes-t.textBytes)
		t.cut = true
	}
	t.textBytes += len(text)
	for text != "" {
		n := len(t.events)
		if n > 0 && t.events[n-1].Kind == KindText && t.events[n-1].Seq > t.delivered {
			if chunk := clipUTF8(text, textEventBytes-len(t.events[n-1].Text)); chunk != "" {
				t.events[n-1].Text += chunk
				text = text[len(chunk):]
				close(t.changed)
				t.changed = make(chan struct{})
				continue
			}
		}
		chunk := clipUTF8(text, textEventBytes) // never empty: a character is at most 4 bytes
		t.addLocked(Event{Kind: KindText, Text: chunk})
		text = text[len(chunk):]
	}
	if t.cut {
		t.addLocked(Event{Kind: KindCut, Message: fmt.Sprintf("over %d KiB; ask for less", capBytes>>10)})
	}
	return first
}

// clipUTF8 is the longest prefix of s of at most n bytes that ends on a whole character.
func clipUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// poll returns the events after seq after, at most pollTextBytes of them (at least one),
// waiting up to wait for one to come. done is true once the done event is in this reply or
// was in an earlier one.
func (t *turn) poll(ctx context.Context, after int, wait time.Duration) (events []Event, done bool) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		t.mu.Lock()
		if after < len(t.events) {
			budget := pollTextBytes
			for _, e := range t.events[max(after, 0):] {
				if len(events) > 0 && (budget-e.size() < 0 || len(events) == maxPollEvents) {
					break
				}
				budget -= e.size()
				events = append(events, e)
			}
			last := events[len(events)-1]
			t.delivered = max(t.delivered, last.Seq)
			done = last.Kind == KindDone
			t.mu.Unlock()
			return events, done
		}
		done = t.done && after >= len(t.events)
		changed := t.changed
		t.mu.Unlock()
		if done {
			return []Event{}, true
		}
		select {
		case <-changed:
		case <-timer.C:
			return []Event{}, false
		case <-ctx.Done():
			return []Event{}, false
		}
	}
}

// askConfirm registers a confirmation and returns its id and the channel the answer comes on.
func (t *turn) askConfirm(id string) chan confirmAnswer {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := make(chan confirmAnswer, 1)
	t.confirms[id] = ch
	return ch
}

func (t *turn) dropConfirm(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.confirms, id)
}

// confirmAnswer is the computer's answer to a confirm event: allowed, or refused, with the
// computer's own reason when it refused without asking (its settings would refuse the request).
type confirmAnswer struct {
	allow  bool
	reason string
}

// answerConfirm delivers the computer's answer; false when no such confirmation waits.
func (t *turn) answerConfirm(id string, a confirmAnswer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch, ok := t.confirms[id]
	if !ok {
		return false
	}
	delete(t.confirms, id)
	ch <- a
	return true
}

func (t *turn) isDone() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done
}

// stopping reports whether the turn has ended for its computer (its done event came, or it
// was stopped: Q or Ctrl-T, its deadline, the computer gone) while its session stays busy
// until opencode has stopped it: there is nothing left for the player to stop, and a player
// who had just pressed Q read "wait or stop it (Q, Ctrl-T)" while opencode was slow to answer
// the abort.
func (t *turn) stopping() bool {
	return t.isDone() || t.ctx.Err() != nil
}

// stillStopping is the busy answer to a question, or a reset (then: what to do, "ask in a
// moment" or "reset soon"), while the turn stops. While opencode does not take its aborts
// (hung: played with SIGSTOP), the wait has no end the player can see: "ask in a moment" read
// the same each time for as long as it hung, and the fix is the gateway's operator's.
func (t *turn) stillStopping(session, then string) error {
	if t.abortFailing.Load() {
		return protocol.Errorf(protocol.CodeBusy, "the last answer%s is still stopping: opencode does not answer "+
			"(tell the gateway's operator)", session)
	}
	return protocol.Errorf(protocol.CodeBusy, "the last answer%s is still stopping: %s", session, then)
}

func (t *turn) opencodeSessionID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.opencodeID
}

func (t *turn) setOpencodeID(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.opencodeID = id
}
