package agent

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
)

// wireText turns host text (UTF-8, as opencode and the model write it) into wire text by the
// text rule (cctext: é is the CC byte E9, a character CC's charset lacks is '?', as CC does
// with what a player pastes).
func wireText(s string) string {
	w, _ := cctext.Wire("", s) // the replacements are the model's text, nobody to warn
	return w
}

// proseText is wireText of prose the player reads (the answer, a retry's or a failure's
// message): its typographic quotes, dashes and ellipses as their plain twins first
// (cctext.Prose), where the rule alone made each a '?'. Never a path, code or content: the
// player is shown those as the computer gets them.
func proseText(s string) string { return wireText(cctext.Prose(s)) }

// hostText turns wire text from a computer (one code point per CC byte) into host text for
// the model: the bytes read as Latin-1, which is what the code points already are; only
// invalid UTF-8 (impossible after JSON decoding) is made valid.
func hostText(s string) string { return strings.ToValidUTF8(s, "?") }

// systemText tells the agent which computer asked (p: its ai.ask) and that it may act only
// on it, and what the computer's owner allows now with what follows from it; it is appended
// to opencode's system prompt on every turn.
func systemText(traposID string, p askPayload) string {
	id, label, _ := strings.Cut(traposID, ":")
	var b strings.Builder
	fmt.Fprintf(&b, "You are answering a player at an in-game ComputerCraft computer: traposId %q (computer id %s", traposID, id)
	if label != "" {
		fmt.Fprintf(&b, ", label %q", label)
	}
	if p.Kind != nil {
		fmt.Fprintf(&b, ", a %s", *p.Kind)
	}
	if p.Screen != nil {
		fmt.Fprintf(&b, ", screen %dx%d characters", p.Screen.Width, p.Screen.Height)
	}
	if p.Colour != nil {
		if *p.Colour {
			b.WriteString(", colour")
		} else {
			b.WriteString(", monochrome")
		}
	}
	b.WriteString("). ")
	fmt.Fprintf(&b, "You may act only on that computer: pass traposId %q to the trap-sandbox tools; calls aimed at any other computer are refused. ", traposID)
	b.WriteString(ownerOf(p).text())
	if bytes.Equal(p.Markdown, []byte("true")) {
		// The ai command lays out these (client 0.5.18; inline code from 0.5.19, in the code
		// colour: 0.5.18 shows its backticks, which read as well). It shows **bold** without
		// its marks from 0.5.19 (CC has no bold face), _italic_ from 0.5.20 (a link as its text
		// and URL); tables as typed before 0.5.21, which lays them out (in columns, or a line a
		// cell on a narrow screen): still "no tables", for the clients before it.
		b.WriteString("The player reads your answer on that small screen: short paragraphs; '- ' and '1. ' lists, headings, code in fences (```lua) and `inline code` are laid out for it, " +
			"so give code in a fence, and a command, file name or setting as `inline code`; no tables, no **bold** or _italic_ marks; characters outside Latin-1 show as '?'.")
	} else {
		// An earlier client, or a program of the player's, shows the answer as it comes: a
		// fence's ``` lines would show too.
		b.WriteString("The player reads your answer on that small screen as plain text, every mark shown as typed: short lines, no Markdown (no fences, tables or **bold**); characters outside Latin-1 show as '?'.")
	}
	return b.String()
}

// owner is what a computer's owner allows now, as its ai.ask said it (client 0.5.17 and
// later): allowed, computer.info's reading of sandbox.allow_files, allow_exec and
// allow_screen, and confirm, whether sandbox.ai_confirm puts each change to the player. Only
// a value a client sends is kept; any other (a hostile or altered client's: another level, a
// wrong type, a long string) is left unsaid, never passed to the model as the gateway's words.
type owner struct {
	files, screen string // a known level, or "" (not said)
	exec, confirm *bool  // nil: not said
}

// ownerOf reads what p says the owner allows, keeping only known values.
func ownerOf(p askPayload) owner {
	var o owner
	var allowed map[string]json.RawMessage
	if json.Unmarshal(p.Allowed, &allowed) == nil {
		o.files = levelIn(allowed["files"], computer.FilesNone, computer.FilesRead, computer.FilesWrite)
		o.screen = levelIn(allowed["screen"], computer.ScreenNone, computer.ScreenView, computer.ScreenControl)
		o.exec = boolOf(allowed["exec"])
	}
	o.confirm = boolOf(p.Confirm)
	return o
}

// levelIn is raw's level when it is one of levels, else "".
func levelIn(raw json.RawMessage, levels ...string) string {
	var level string
	if json.Unmarshal(raw, &level) != nil || !slices.Contains(levels, level) {
		return ""
	}
	return level
}

// boolOf is raw's boolean, or nil when it holds none (null too, which encoding/json would
// read as false).
func boolOf(raw json.RawMessage) *bool {
	var v *bool
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// text says what the owner allows in plain words, each with what follows for the agent's
// tools: what the settings refuse is not tried (the model called write_file at allow_files
// read, got forbidden, and only then told the player), but shown to the player with the line
// that allows it. A computer that said nothing (a client before 0.5.17) gets the general
// sentence.
func (o owner) text() string {
	if o == (owner{}) {
		return "Writes, deletes and runs may need the player's approval; a refusal comes back as the tool's error, so tell the player instead of retrying. " +
			"What the computer allows is in its sandbox settings; " + computer.OwnersSettings + ". "
	}
	var b strings.Builder
	b.WriteString("What the computer's owner allows now (" + computer.OwnersSettings + "; the computer still checks each call, and a refusal comes back as the tool's error naming the line that allows it, which the player's screen shows them: do not retry, nor say that line again): ")
	const (
		writes = "write_file, delete_file, move_file or make_dir"
		show   = "instead, put the code in your answer for the player to save, name the file, and say the owner can allow writes with: " + computer.AllowFilesWrite
	)
	switch o.files {
	case computer.FilesWrite:
		b.WriteString("files may be read and written (sandbox.allow_files write)")
		if o.exec != nil && !*o.exec {
			b.WriteString(", except the computer's settings, its startup files and the sandbox's own files, which also need: " + computer.AllowExec)
		}
		b.WriteString(". ")
	case computer.FilesRead:
		b.WriteString("files may be read (list_files, read_file) but not changed (sandbox.allow_files read): do not call " + writes + "; " + show + ". ")
	case computer.FilesNone:
		b.WriteString("files may not even be read (sandbox.allow_files none): do not call list_files, read_file, " + writes +
			"; ask the player for what you need to see (reads need: " + computer.AllowFilesRead + "); " + show + ". ")
	}
	if o.exec != nil {
		if *o.exec {
			b.WriteString("Lua and programs may run (sandbox.allow_exec true): run_lua, run_program. ")
		} else {
			b.WriteString("Lua and programs may not run (sandbox.allow_exec false): do not call run_lua or run_program; instead give the player the code or command to run themselves, and say the owner can allow runs with: " + computer.AllowExec + ". ")
		}
	}
	switch o.screen {
	case computer.ScreenControl:
		b.WriteString("The host's console may see the screen and type on it (sandbox.allow_screen control); you have no tool for the screen. ")
	case computer.ScreenView:
		b.WriteString("The host's console may see the screen, not type on it (sandbox.allow_screen view); you have no tool for the screen. ")
	case computer.ScreenNone:
		b.WriteString("The host may not see the screen (sandbox.allow_screen none); you have no tool for the screen either. ")
	}
	// Whether the player is asked is said only where a change may be allowed at all.
	mayChange := o.files != computer.FilesRead && o.files != computer.FilesNone || o.exec == nil || *o.exec
	if o.confirm != nil && mayChange {
		if *o.confirm {
			b.WriteString("Each write, delete, move, new directory and run that these allow is first shown to the player (sandbox.ai_confirm true), a write with what it changes, a run with its code, and the player allows or refuses it: if they refuse, ask what they want instead of retrying. ")
		} else {
			b.WriteString("The owner turned the player's questions off (sandbox.ai_confirm false): each write, delete, move, new directory and run that these allow happens at once, unseen by the player first, so say what you will change before you call the tool. ")
		}
	}
	return b.String()
}

// settingRefused follows the computer's refusal of a change its owner's settings do not allow,
// in what the model reads. opencode puts "The user rejected permission to use this specific
// tool call" before it, which a model passed on to the player as the player's own no; and the
// player's screen shows the refusal, with the line that allows it, as the tool's line, which a
// model told to pass that line on said a second time.
const settingRefused = "This is the computer owner's setting, not the player's answer. " +
	"The player's screen shows this refusal and its set line already: do not retry the call, and do not repeat the line; " +
	"give the player what you meant to do instead (the code to save, the command to run)."

// sortTurns orders a listing by account, computer (as the computers' lists: the computer's
// id as a number) and session.
func sortTurns(ts []TurnInfo) {
	slices.SortFunc(ts, func(a, b TurnInfo) int {
		return cmp.Or(cmp.Compare(a.AccountID, b.AccountID), cctext.CompareTraposIDs(a.TraposID, b.TraposID),
			cmp.Compare(a.Session, b.Session))
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
	tr.quoting[partID] = t.m.relayText(t, tr.quoting[partID], delta)
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
		t.m.relayText(t, tr.quoting[p.ID], p.Text[len(done):])
	}
}

// spokenDuration is d as a player reads it in a sentence: "1 min", "3 min", "90 s". Go's
// own form, which the operator's flags take, read "The player did not answer within 1m0s" on a
// computer's screen. A duration of no whole second (a test's) keeps Go's form.
func spokenDuration(d time.Duration) string {
	switch {
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return d.String()
}
