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
