package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
)

// inputWait bounds how long a permission ask waits for its tool call's arguments: they come
// on the stream right after the ask (opencode's asks for MCP tools carry none).
const inputWait = 5 * time.Second

// tracker is what a turn remembers of the stream to read it: the role of each message, the
// type of each part, each tool call's input and state, and the last session error.
type tracker struct {
	mu        sync.Mutex
	roles     map[string]string // messageID → role
	partTypes map[string]string // partID → type
	calls     map[string]*call  // callID → call
	lastError string            // the last session.error's data.message
	errored   chan struct{}     // closed at the first session.error other than an abort
	busySeen  bool              // session.status busy came: an idle after it is this turn's
	lastRetry string            // the reason the turn's last retry event carried
	idle      chan struct{}     // closed at this turn's session.idle

	// relayMu orders the answer's text: held while text is relayed, from the stream or when
	// the turn settles (text.go), and guarding the fields below.
	relayMu sync.Mutex
	// relayed is, by part id, the text of each part relayed so far (host text); a builder, as
	// a part grows by thousands of small deltas.
	relayed map[string]*strings.Builder
	// quoting is, by part id, where the text relayed so far leaves off (cctext.ProseFrom): a
	// piece goes on inside a quoted string an earlier one opened.
	quoting map[string]cctext.Quoting
	// gap is set when the event stream dropped during the turn: from then on its text may
	// miss words, so none is relayed live; the turn's end relays it all, in order.
	gap bool
	// settled is set when the turn's end relayed what was missing: the stream's late text
	// is then not relayed again.
	settled bool
}

type call struct {
	tool    string
	input   json.RawMessage
	state   string
	arrived chan struct{} // closed once input is known
}

func newTracker() *tracker {
	return &tracker{roles: map[string]string{}, partTypes: map[string]string{}, calls: map[string]*call{},
		errored: make(chan struct{}), idle: make(chan struct{}), relayed: map[string]*strings.Builder{},
		quoting: map[string]cctext.Quoting{}}
}

func (tr *tracker) callLocked(id string) *call {
	c := tr.calls[id]
	if c == nil {
		c = &call{arrived: make(chan struct{})}
		tr.calls[id] = c
	}
	return c
}

// inputOf waits for the input of tool call callID, at most inputWait or until done closes.
func (tr *tracker) inputOf(callID string, done <-chan struct{}) json.RawMessage {
	tr.mu.Lock()
	c := tr.callLocked(callID)
	tr.mu.Unlock()
	timer := time.NewTimer(inputWait)
	defer timer.Stop()
	select {
	case <-c.arrived:
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return c.input
	case <-timer.C:
	case <-done:
	}
	return nil
}

// waitError returns the session error's message, waiting at most wait for one to come.
func (tr *tracker) waitError(wait time.Duration) string {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-tr.errored:
	case <-timer.C:
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.lastError
}

// retryReason is the reason a retry event carries: the one the last retry carried when this
// is the same failure (the same words before the first colon), so a computer, which shows a
// reason only when it changes, shows only the attempt. opencode 1.18.33 gives the retries of
// a provider it cannot reach two details in turn ("Cannot connect to API: Unable to connect.
// Is the computer able to access the url?", "Cannot connect to API: Was there a typo in the
// url or port?"): five reasons of three rows each filled the screen.
func (tr *tracker) retryReason(reason string) string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	kind := func(s string) string {
		k, _, _ := strings.Cut(s, ": ")
		return k
	}
	if tr.lastRetry == "" || kind(reason) != kind(tr.lastRetry) {
		tr.lastRetry = reason
	}
	return tr.lastRetry
}

// markGap notes that the event stream dropped while the turn ran.
func (tr *tracker) markGap() {
	tr.relayMu.Lock()
	defer tr.relayMu.Unlock()
	tr.gap = true
}

// streamWhole reports whether the stream carried the whole turn: it never dropped during it
// and the turn's session.idle came (the events before idle are the turn's last).
func (tr *tracker) streamWhole() bool {
	tr.relayMu.Lock()
	gap := tr.gap
	tr.relayMu.Unlock()
	select {
	case <-tr.idle:
		return !gap
	default:
		return false
	}
}

// waitIdle waits for the turn's session.idle, at most wait: the sync reply can overtake the
// stream's last events (the final tool state, the last text), which come before idle. Idle
// may never come (seen with 1.18.x plugin sessions), hence the bound. It ends with ctx (the
// module's): a closing gateway reads the stream no more, so idle cannot come, and Close
// waited out the whole bound for each turn it stopped.
func (tr *tracker) waitIdle(ctx context.Context, c clock.Clock, wait time.Duration) {
	timer := c.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-tr.idle:
	case <-timer.C():
	case <-ctx.Done():
	}
}

// observe takes one event of the turn's session.
func (t *turn) observe(typ string, p *eventProps) {
	tr := t.tr
	switch typ {
	case "message.updated":
		if p.Info != nil {
			tr.mu.Lock()
			tr.roles[p.Info.ID] = p.Info.Role
			tr.mu.Unlock()
		}
	case "message.part.delta":
		tr.mu.Lock()
		text := p.Field == "text" && tr.partTypes[p.PartID] == "text" && tr.roles[p.MessageID] == "assistant"
		tr.mu.Unlock()
		if text {
			t.relayDelta(p.PartID, p.Delta)
		}
	case "message.part.updated":
		if p.Part != nil && p.Part.Type != "" {
			t.observePart(p)
		}
	case "session.idle":
		tr.mu.Lock()
		if tr.busySeen {
			select {
			case <-tr.idle:
			default:
				close(tr.idle)
			}
		}
		tr.mu.Unlock()
	case "session.status":
		if p.Status != nil && p.Status.Type == "busy" {
			tr.mu.Lock()
			tr.busySeen = true
			tr.mu.Unlock()
		}
		if p.Status != nil && p.Status.Type == "retry" {
			t.add(Event{Kind: KindRetry, Message: tr.retryReason(proseText(firstLine(p.Status.Message))), Attempt: p.Status.Attempt})
		}
	case "session.error":
		if p.Error != nil {
			tr.mu.Lock()
			if p.Error.Name != "MessageAbortedError" { // an abort is the gateway's own doing
				select {
				case <-tr.errored:
				default:
					close(tr.errored)
				}
				tr.lastError = firstLine(p.Error.Data.Message)
				if tr.lastError == "" {
					tr.lastError = p.Error.Name
				}
			}
			tr.mu.Unlock()
		}
	case "permission.asked":
		if p.Tool != nil {
			t.m.wg.Add(1)
			go func() {
				defer t.m.wg.Done()
				t.m.answerAsk(t, p.ID, p.Permission, p.Tool.CallID)
			}()
		}
	}
}

func (t *turn) observePart(p *eventProps) {
	tr := t.tr
	part := p.Part
	tr.mu.Lock()
	tr.partTypes[part.ID] = part.Type
	if part.Type != "tool" {
		tr.mu.Unlock()
		return
	}
	c := tr.callLocked(part.CallID)
	c.tool = part.Tool
	arrived := false
	if len(part.State.Input) > 0 && string(part.State.Input) != "{}" && c.input == nil && part.State.Status != "pending" {
		c.input = part.State.Input
		arrived = true
	}
	status := part.State.Status
	changed := status != c.state && (status == "running" || status == "completed" || status == "error")
	if changed {
		c.state = status
	}
	input := c.input
	tr.mu.Unlock()
	if changed {
		name := strings.TrimPrefix(part.Tool, toolPrefix)
		detail, _ := describe(name, input)
		e := Event{Kind: KindTool, Tool: wireText(name), Detail: wireText(detail), State: status}
		if status == "error" {
			e.Error = proseText(firstLine(playerReason(part.State.Error)))
		}
		t.add(e)
	}
	// Only now is an ask waiting for the input told (answerAsk): its question comes after the
	// tool's line, as the player reads them, never before it (then the line came twice).
	if arrived {
		close(c.arrived)
	}
}

// rejectFeedback is what opencode (1.18.33) writes before a reject's message in the tool's
// error. The model needs it (it says the user refused); the player reads only the gateway's
// own reason, as the gateway wrote it.
const rejectFeedback = "The user rejected permission to use this specific tool call with the following feedback: "

// playerReason is a tool error as the player reads it.
func playerReason(err string) string {
	if reason, ok := strings.CutPrefix(strings.TrimSpace(err), rejectFeedback); ok {
		return reason
	}
	return err
}
