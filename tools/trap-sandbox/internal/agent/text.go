package agent

import (
	"fmt"
	"sort"
	"strings"

	"trap-sandbox/internal/cctext"
)

// wireText turns host text (UTF-8, as opencode and the model write it) into wire text by the
// text rule (cctext: é is the CC byte E9, a character CC's charset lacks is '?', as CC does
// with what a player pastes).
func wireText(s string) string {
	w, _ := cctext.Wire("", s) // the replacements are the model's text, nobody to warn
	return w
}

// hostText turns wire text from a computer (one code point per CC byte) into host text for
// the model: the bytes read as Latin-1, which is what the code points already are; only
// invalid UTF-8 (impossible after JSON decoding) is made valid.
func hostText(s string) string { return strings.ToValidUTF8(s, "?") }

// systemText tells the agent which computer asked and that it may act only on it; it is
// appended to opencode's system prompt on every turn.
func systemText(traposID string, kind *string, screen *struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}, colour *bool) string {
	id, label, _ := strings.Cut(traposID, ":")
	var b strings.Builder
	fmt.Fprintf(&b, "You are answering a player at an in-game ComputerCraft computer: traposId %q (computer id %s", traposID, id)
	if label != "" {
		fmt.Fprintf(&b, ", label %q", label)
	}
	if kind != nil {
		fmt.Fprintf(&b, ", a %s", *kind)
	}
	if screen != nil {
		fmt.Fprintf(&b, ", screen %dx%d characters", screen.Width, screen.Height)
	}
	if colour != nil {
		if *colour {
			b.WriteString(", colour")
		} else {
			b.WriteString(", monochrome")
		}
	}
	b.WriteString("). ")
	fmt.Fprintf(&b, "You may act only on that computer: pass traposId %q to the trap-sandbox tools; calls aimed at any other computer are refused. ", traposID)
	b.WriteString("Writes, deletes and runs may need the player's approval; a refusal comes back as the tool's error, so tell the player instead of retrying. ")
	b.WriteString("The player reads your answer on that small screen: plain text, short lines, no Markdown tables; characters outside Latin-1 show as '?'.")
	return b.String()
}

// sortTurns orders a listing by account, computer and session.
func sortTurns(ts []TurnInfo) {
	sort.Slice(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if a.AccountID != b.AccountID {
			return a.AccountID < b.AccountID
		}
		if a.TraposID != b.TraposID {
			return a.TraposID < b.TraposID
		}
		return a.Session < b.Session
	})
}

// The answer's text reaches the computer from the event stream's deltas, as it is written.
// The stream can drop mid-turn (opencode#38458) and lose words; so each text part's relayed
// text is kept by part id, and when the turn ends its messages' text parts, as opencode
// stored them, settle the rest: of each part, in order, exactly what the computer has not
// got. After a drop nothing more is relayed live (a part could miss words in its middle, and
// a later part would overtake what is missing): the rest comes at the turn's end.

// relayDelta relays one delta of an assistant text part, unless the stream dropped during
// the turn or the turn's end settled its text.
func (t *turn) relayDelta(partID, delta string) {
	tr := t.tr
	tr.relayMu.Lock()
	defer tr.relayMu.Unlock()
	if tr.gap || tr.settled {
		return
	}
	b := tr.relayed[partID]
	if b == nil {
		b = &strings.Builder{}
		tr.relayed[partID] = b
	}
	b.WriteString(delta)
	t.m.relayText(t, delta)
}

// settleText relays, at the turn's end, the text of parts (the turn's assistant messages'
// parts, in order) that the computer did not get: of a part whose relayed text begins its
// stored text, the rest (opencode's stored text can lack the last deltas' trailing spaces:
// then nothing); of a part never relayed, all of it. A part without an id (not opencode's
// shape) counts only when no text was relayed at all.
func (t *turn) settleText(parts []ocPart) {
	tr := t.tr
	tr.relayMu.Lock()
	defer tr.relayMu.Unlock()
	if tr.settled {
		return
	}
	tr.settled = true
	t.mu.Lock()
	none := t.textBytes == 0
	t.mu.Unlock()
	for _, p := range parts {
		if p.Type != "text" || p.Synthetic || p.Ignored || (p.ID == "" && !none) {
			continue
		}
		var done string
		if b := tr.relayed[p.ID]; b != nil {
			done = b.String()
		}
		if !strings.HasPrefix(p.Text, done) {
			continue
		}
		t.m.relayText(t, p.Text[len(done):])
	}
}
