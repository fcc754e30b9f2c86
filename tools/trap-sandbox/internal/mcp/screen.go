package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"fakecraft/console"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
)

// The screen tools read and drive the computer's own screen (the one the player sees), not a
// job's: run_lua and run_program run on a screen of their own and return it as output
// (docs/capabilities.md), so their results carry no computer screen. To watch a program on
// the computer's screen, start it with send_text ("edit notes\n") and read what it drew.

// defaultSettle is how long the screen must stay the same before send_keys, send_text and
// click answer: some ticks (a computer draws at most once per 50 ms tick).
const defaultSettle = 300 * time.Millisecond

// ScreenInput is read_screen's input.
type ScreenInput struct {
	TraposID  string `json:"traposId" jsonschema:"the computer, as list_computers shows it (e.g. 7:kitchen)"`
	Monitor   string `json:"monitor,omitempty" jsonschema:"read this monitor attached to the computer instead of its own screen: its name, a side (top) or a wired modem's (monitor_0), as the computer's own screen's monitors names them"`
	Colours   bool   `json:"colours,omitempty" jsonschema:"also return each row's colours (blit strings) and the palette"`
	Cursor    bool   `json:"cursor,omitempty" jsonschema:"also return the cursor's position (1-based) and whether it blinks"`
	TimeoutMs int64  `json:"timeoutMs,omitempty" jsonschema:"how long the whole call may take, in milliseconds (default 10000)"`
}

// KeysInput is send_keys' input.
type KeysInput struct {
	TraposID string   `json:"traposId" jsonschema:"the computer, as list_computers shows it (e.g. 7:kitchen)"`
	Keys     []string `json:"keys" jsonschema:"keys to press and release in order, by CC's key names (keys.getName): enter, backspace, up, left, tab, leftCtrl, a, one, f1; a chord holds the keys before its last: leftShift+tab; terminate is CC's terminate event (holding Ctrl+T); at most 2048 keys a call"`
	SettleInput
}

// TextInput is send_text's input.
type TextInput struct {
	TraposID string `json:"traposId" jsonschema:"the computer, as list_computers shows it (e.g. 7:kitchen)"`
	Text     string `json:"text" jsonschema:"text to type, each character one CC char event (no key event); a line break presses Enter, a tab Tab (é is one byte, others become ? and are named in warnings); at most 4096 key events a call (a line break is two)"`
	SettleInput
}

// ClickInput is click's input.
type ClickInput struct {
	TraposID string `json:"traposId" jsonschema:"the computer, as list_computers shows it (e.g. 7:kitchen)"`
	X        int    `json:"x" jsonschema:"the cell's column, 1 at the left, as read_screen's cursor counts"`
	Y        int    `json:"y" jsonschema:"the cell's row, 1 at the top (multishell's tab bar is row 1 while two programs run)"`
	Button   int    `json:"button,omitempty" jsonschema:"the mouse button: 1 left (the default), 2 right, 3 middle"`
	SettleInput
}

// SettleInput is the arguments of the tools that send input and answer with the screen once
// it settles (send_keys, send_text, click; sendAndSettle): how long the screen must stay
// unchanged, what the answer holds, and how long the whole call may take.
type SettleInput struct {
	SettleMs int64 `json:"settleMs,omitempty" jsonschema:"how long the screen must stay unchanged before the call answers, in milliseconds (default 300; below timeoutMs)"`
	Colours  bool  `json:"colours,omitempty" jsonschema:"also return each row's colours (blit strings) and the palette"`
	Cursor   bool  `json:"cursor,omitempty" jsonschema:"also return the cursor's position (1-based) and whether it blinks"`
	// TimeoutMs bounds the input and the wait for the screen to settle.
	TimeoutMs int64 `json:"timeoutMs,omitempty" jsonschema:"how long the whole call may take, in milliseconds (default 10000); past it the screen is returned as it is, with settled false"`
}

// ScreenOutput is the screen as the screen tools return it.
type ScreenOutput struct {
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Text   string `json:"text" jsonschema:"the screen's rows without trailing spaces, down to the last that shows something, joined by line breaks; a character is the byte CC holds (a byte E9 is é), and CC's font draws the bytes below 32 as code page 437's symbols (16 ►, 30 ▲; 0, 9, 10 and 13 blank, given as spaces), 127 as a checker (paint's empty canvas) and 128-159 as 2x3 blocks"`
	// Cursor is set when asked for.
	Cursor *computer.Cursor `json:"cursor,omitempty"`
	// Rows, Palette and Colour are set when colours are asked for.
	Rows    []computer.Row `json:"rows,omitempty" jsonschema:"each row's text and colours: fg and bg hold one colour digit (0-9a-f, a palette index) per cell"`
	Palette []string       `json:"palette,omitempty" jsonschema:"the 16 colours as #rrggbb, by index 0-f, as the screen shows them (greys on a basic computer)"`
	Colour  *bool          `json:"colour,omitempty" jsonschema:"false on a basic computer, which draws every colour as a grey (the palette then holds the greys it shows)"`
	// UnknownRows are the rows the computer has not seen drawn whole since it began mirroring
	// its screen (computer.Screen's): they may show more on the computer than Text does.
	UnknownRows []int `json:"unknownRows,omitempty" jsonschema:"rows (1-based) the computer has not seen drawn whole since it began mirroring its screen (its boot's first lines, what was drawn while its sandbox daemon was stopped): they may show more on the computer than here, where they read blank, until a program draws them again (clear at the shell redraws them all)"`
	// Monitor and TextScale are a monitor's screen's (read_screen's monitor).
	Monitor   string  `json:"monitor,omitempty" jsonschema:"the monitor read (read_screen's monitor)"`
	TextScale float64 `json:"textScale,omitempty" jsonschema:"the monitor's text scale, 0.5 to 5: its size in characters follows from it"`
	// Monitors are the computer's, named with its own screen.
	Monitors        []string `json:"monitors,omitempty" jsonschema:"the monitors attached to the computer, each read with read_screen's monitor and waited on with wait_for_screen's (left out when there is none)"`
	MonitorsLeftOut int      `json:"monitorsLeftOut,omitempty" jsonschema:"how many more monitors are attached than monitors names (it names 64 at most, none with a name over 64 bytes); each is read by its name all the same"`
	// Settled is set by send_keys, send_text and click: whether the screen stopped changing.
	Settled *bool `json:"settled,omitempty" jsonschema:"send_keys, send_text and click: false when the screen was still changing at the call's end"`
	// Relabelled is computer.Client.RelabelledByRun's after send_keys, send_text and click:
	// the input changed the computer's label (label set typed at the shell).
	Relabelled string `json:"relabelled,omitempty" jsonschema:"send_keys, send_text and click: set when the computer's label changed (e.g. label set typed at the shell): its new traposId, and from when to ask it by that id"`
	// TimedOut and WaitedMs are wait_for_screen's: whether its timeoutMs passed first, and how
	// long it waited.
	TimedOut bool   `json:"timedOut,omitempty" jsonschema:"wait_for_screen: true when timeoutMs passed before the screen showed text (or, without text, changed): this is the screen as it was then"`
	WaitedMs *int64 `json:"waitedMs,omitempty" jsonschema:"wait_for_screen: how long it waited, in milliseconds"`
	// waitedFor says what a wait that timed out waited for, for its note: "did not change",
	// or "did not show \"Tür\""; waitedOn what it watched: "screen", or "monitor" for a wait
	// given one.
	waitedFor, waitedOn string
	// Warnings are the characters of send_text's text CC cannot hold.
	Warnings []cctext.Replacement `json:"warnings,omitempty" jsonschema:"characters CC cannot hold, sent as ?"`
	// suggested is the completion drawn after the cursor (computer.Screen.Suggested), which
	// the note names: its grey is in the colours only, and Text shows it as typed.
	suggested *computer.Suggestion
}

func (t *tools) registerScreen(r registrar) {
	addTool(r, "read_screen", "Read the screen", hints{readOnly: true}, "Read what a computer's own screen shows now (what the player sees): its text, and when asked its colours and cursor; its answer names the monitors attached (monitors). With monitor, read that monitor instead (what a program drew on it: monitor top edit, peripheral.wrap); a monitor is read, never typed on. Needs the owner's sandbox.allow_screen view or control.",
		func(in ScreenInput) string { return in.TraposID }, t.readScreen)
	addTool(r, "send_keys", "Press keys", runsProgram, "Press keys on a computer's keyboard, as the player would (e.g. [\"up\", \"enter\"]), wait until the screen stops changing, and return it. A key here is its key event alone and types no character (read() sees nothing of [\"y\"]): type characters with send_text. In edit, Ctrl alone opens the menu: [\"leftCtrl\", \"enter\"] saves and [\"leftCtrl\", \"left\", \"enter\"] exits (CC has no Ctrl+S). Needs the owner's sandbox.allow_screen control.",
		func(in KeysInput) string { return in.TraposID }, t.sendKeys)
	addTool(r, "send_text", "Type text", runsProgram, "Type text on a computer's keyboard, as the player would (\"ls\\n\" runs ls at the shell prompt), wait until the screen stops changing, and return it. Characters arrive as char events only: a program waiting for a key (os.pullEvent(\"key\"), \"press any key\", a y/n question read by key) needs send_keys. A program that sleeps or waits for another event meanwhile drops what arrives, as in CC: type once it reads (with cursor: true, blink is true while read() waits). Text joins what is already typed where the cursor is: at a prompt, a line left half-typed (\"ed\") runs with yours (\"ededit /x\"); where another may have typed, read_screen first, and clear such a line with send_keys [\"end\", \"backspace\", …] (one backspace a character). A program started on a monitor (monitor top edit) takes the keys and draws there, not on the screen returned: read it with read_screen's monitor. Needs the owner's sandbox.allow_screen control.",
		func(in TextInput) string { return in.TraposID }, t.sendText)
	addTool(r, "click", "Click the screen", runsProgram, "Click a cell of a computer's own screen with the mouse, as the player would (a press and its release), wait until the screen stops changing, and return it: what no key reaches on an advanced computer, such as multishell's tabs (row 1 while two programs run: a click on a tab's name shows that program, whose screen then takes the keys; the tab shown is the one drawn yellow on black, fg 4 on bg f in read_screen's colours), paint's palette and canvas, a program's buttons. x and y are the cell, 1-based, as read_screen's text and cursor count them. A basic computer takes no mouse, as in CC; a monitor takes no clicks from here (a player touches an advanced one). Needs the owner's sandbox.allow_screen control.",
		func(in ClickInput) string { return in.TraposID }, t.click)
	addTool(r, "wait_for_screen", "Wait for the screen", readOnly, "Wait until a computer's screen shows text (part of one row, e.g. \"Done\" or \"Password: \"), or, without text, until it changes, and return the screen then, as read_screen does: "+
		"for a program that takes a while (a build, a turtle digging, a door waiting for a redstone signal), instead of calling read_screen again and again. "+
		"At timeoutMs (default 10000, at most 60000) it returns the screen as it is then, with timedOut true: call it again to wait on. Its answer names the monitors attached (monitors); with monitor, wait on that monitor instead (client 0.5.31 on). "+
		"Needs the owner's sandbox.allow_screen view or control.",
		func(in WaitInput) string { return in.TraposID }, t.waitForScreen)
}

// screenOutput is s as the tools return it: the text, and what was asked for.
func screenOutput(s computer.Screen, colours, cursor bool) ScreenOutput {
	out := ScreenOutput{Width: s.Width, Height: s.Height, Text: s.Text(), UnknownRows: s.UnknownRows,
		Monitor: s.Monitor, TextScale: s.TextScale, Monitors: s.Monitors, MonitorsLeftOut: s.MonitorsLeftOut}
	if hint, ok := s.Suggested(); ok && s.Monitor == "" {
		out.suggested = &hint
	}
	if cursor {
		out.Cursor = &s.Cursor
	}
	if colours {
		colour := s.Colour
		out.Rows, out.Palette, out.Colour = s.Rows, s.Palette, &colour
		if !colour {
			out.Palette = greys(s.Palette)
		}
	}
	return out
}

// greys is palette as a basic computer shows it (an agent read a menu's red on a screen of
// greys). The computer's answer was refused unless each colour is #rrggbb, 16 at most
// (computer.PaletteProblem).
func greys(palette []string) []string {
	var rgb [16]uint32
	for i, hex := range palette[:min(len(palette), len(rgb))] {
		v, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
		rgb[i] = uint32(v)
	}
	grey := console.Greyscale(rgb)
	shown := make([]string, min(len(palette), len(grey)))
	for i := range shown {
		shown[i] = fmt.Sprintf("#%06x", grey[i])
	}
	return shown
}

func (t *tools) readScreen(ctx context.Context, in ScreenInput) (ScreenOutput, error) {
	read := t.client.ReadScreen
	if in.Monitor != "" {
		read = func(ctx context.Context, traposID string, timeout time.Duration) (computer.Screen, error) {
			return t.client.ReadMonitor(ctx, traposID, in.Monitor, timeout)
		}
	}
	s, err := read(ctx, in.TraposID, timeoutOf(in.TimeoutMs))
	if err != nil {
		return ScreenOutput{}, err
	}
	return screenOutput(s, in.Colours, in.Cursor), nil
}

// computerQueuedNothing ends a computer's refusal of a screen.input (libsandboxscreen): its
// request queued nothing.
const computerQueuedNothing = "; nothing was queued"

func (t *tools) sendKeys(ctx context.Context, in KeysInput) (ScreenOutput, error) {
	if len(in.Keys) == 0 {
		return ScreenOutput{}, protocol.Errorf(CodeBadArgument, "keys is empty: give at least one key name, e.g. [\"enter\"]")
	}
	var events []computer.InputEvent
	var keyOf []int // keyOf[i] is the place in in.Keys of events[i]
	for k, name := range in.Keys {
		if strings.TrimSpace(name) == "" {
			// Sent, it went without a name, which the computer called "nil".
			return ScreenOutput{}, protocol.Errorf(CodeBadArgument, "keys[%d] is empty: give CC's name of a key, e.g. \"enter\"; nothing was pressed", k)
		}
		press := computer.KeyPress(name)
		events = append(events, press...)
		for range press {
			keyOf = append(keyOf, k)
		}
	}
	if n := computer.EventsCost(events); n > maxInputEvents {
		return ScreenOutput{}, protocol.Errorf(CodeBadArgument, "keys are too many for one call: %d key events (a key is two, its press and release), %d at most; press them over several calls", n, maxInputEvents)
	}
	return t.sendAndSettle(ctx, in.TraposID, events, nil, in.SettleInput,
		func(err error) error { return namedByKey(err, keyOf) },
		func(sent []computer.InputEvent) string {
			return fmt.Sprintf("the first %d keys were pressed", keyOf[len(sent)-1]+1)
		})
}

// namedByKey names the key the computer refused by its place in send_keys' keys: the computer
// names an event by its place among the events ("events[4]: unknown key name …"), and a chord
// is several events, so events[4] may be keys[1].
func namedByKey(err error, keyOf []int) error {
	pe, i, rest, ok := computer.RefusedEvent(err)
	if !ok || i >= len(keyOf) {
		return err
	}
	// ': unknown key name "ctrl" (…)…': the key meant is named after the computer's words,
	// here or already by the gateway that typed the input (placedIn; through the stdio
	// bridge, the HTTP API's …/input), once either way.
	hint := computer.KeyRefusalHint(rest)
	words := strings.TrimSuffix(rest, hint)
	// The key's place and the hint are the host's words, not the computer's (Said).
	return pe.WithHostWordsAround(fmt.Sprintf("keys[%d]", keyOf[i]), words, hint)
}

func (t *tools) sendText(ctx context.Context, in TextInput) (ScreenOutput, error) {
	if in.Text == "" {
		return ScreenOutput{}, protocol.Errorf(CodeBadArgument, "text is empty: give the characters to type")
	}
	events, err := typing(in.Text)
	if err != nil {
		return ScreenOutput{}, err
	}
	if n := computer.EventsCost(events); n > maxInputEvents {
		return ScreenOutput{}, protocol.Errorf(CodeBadArgument, "text is too long to type in one call: %d key events (a character is one, a line break or a tab two), %d at most; type it over several calls, or put the file on the computer with write_file", n, maxInputEvents)
	}
	// The warnings name the tool's own argument and place a character in the whole text (the
	// requests' own name a part of it as events[0].text).
	_, warnings := cctext.Wire(cctext.TypedTextField, in.Text)
	return t.sendAndSettle(ctx, in.TraposID, events, warnings, in.SettleInput,
		func(err error) error { return err },
		func(sent []computer.InputEvent) string {
			n := 0
			for _, e := range sent {
				n += utf8.RuneCountInString(e.Text)
				if e.Type == computer.InputKey { // a tab
					n++
				}
			}
			return fmt.Sprintf("the first %d characters of text were typed", n)
		})
}

// click clicks the cell in.X, in.Y with in.Button (the left one unless given): CC's
// mouse_click and mouse_up there, as screen.input's click queues them. The computer checks the
// cell against its screen and refuses the mouse on a basic computer, in its own words.
func (t *tools) click(ctx context.Context, in ClickInput) (ScreenOutput, error) {
	button := in.Button
	if button == 0 {
		button = 1
	}
	if button < 1 || button > 3 {
		return ScreenOutput{}, protocol.Errorf(CodeBadArgument, "button must be 1 (left), 2 (right) or 3 (middle), not %d", in.Button)
	}
	if in.X < 1 || in.Y < 1 {
		return ScreenOutput{}, protocol.Errorf(CodeBadArgument, "x and y are a cell of the screen, from 1 at its top left (read_screen's width and height give its size), not %d, %d", in.X, in.Y)
	}
	events := []computer.InputEvent{{Type: computer.InputClick, Button: button, X: in.X, Y: in.Y}}
	return t.sendAndSettle(ctx, in.TraposID, events, nil, in.SettleInput,
		namedAsTheClick, func([]computer.InputEvent) string { return "the click was sent" })
}

// namedAsTheClick names the event the computer refused ("events[0]: x, y must be a cell of the
// 26x20 screen", "events[0]: mouse events reach advanced computers only: …") as the click, as
// click's caller knows it: it gave no events.
func namedAsTheClick(err error) error {
	pe, _, rest, ok := computer.RefusedEvent(err)
	if !ok {
		return err
	}
	return pe.WithHostWordsAround("the click", rest, "")
}

// typing is the events that type text as a player would: characters as char events (a line
// break is Enter there), a tab as the Tab key, which a player presses for it (edit indents,
// the shell completes). Any other control character (DEL and U+0080-U+009F too) is refused,
// named by its place.
func typing(text string) ([]computer.InputEvent, error) {
	var events []computer.InputEvent
	line, column, run := 1, 0, 0 // run: where the characters not yet in events start
	for i, r := range text {
		column++
		switch {
		case r == '\n':
			line, column = line+1, 0
		case r == '\t':
			if run < i {
				events = append(events, computer.InputEvent{Type: computer.InputChar, Text: text[run:i]})
			}
			events = append(events, computer.KeyPress("tab")...)
			run = i + 1
		case r < 0x20 || r >= 0x7f && r < 0xa0: // C0, DEL, C1: no key types one (U+0085 reached CC as byte 85, a block)
			return nil, protocol.Errorf(CodeBadArgument, "text has the control character U+%04X at %d:%d: send_text types characters, line breaks (\\n, Enter) and tabs (\\t, Tab); a line break is \\n alone, and other keys are pressed by name with send_keys (e.g. [\"backspace\"])", r, line, column)
		}
	}
	if run < len(text) {
		events = append(events, computer.InputEvent{Type: computer.InputChar, Text: text[run:]})
	}
	return events, nil
}

// maxInputEvents bounds the os events one send_keys or send_text queues: some screen.input
// requests' worth (computer.MaxInputEvents each).
const maxInputEvents = 32 * computer.MaxInputEvents

// givenOr is a milliseconds argument as the message names it: as given, or d and "(the
// default)" when not given.
func givenOr(ms int64, d time.Duration) string {
	if ms > 0 {
		return strconv.FormatInt(ms, 10)
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + " (the default)"
}

// sendAndSettle types events whole (computer.Client.TypeInput: in as many screen.input
// requests as they need, under the computer's input turn), then waits for the screen to
// settle, all within the call's timeout. warnings are the characters CC cannot hold, as the
// tool names them. A refused request's error goes through named (its event named by its place
// in events); when an earlier request was queued, done (given those events, as split) says
// what was, since that input is not undone.
func (t *tools) sendAndSettle(ctx context.Context, traposID string, events []computer.InputEvent, warnings []cctext.Replacement, how SettleInput,
	named func(err error) error, done func(sent []computer.InputEvent) string) (ScreenOutput, error) {
	timeout := timeoutOf(how.TimeoutMs)
	if timeout <= 0 {
		timeout = computer.DefaultTimeout
	}
	timeout = min(timeout, computer.MaxTimeout)
	settle := timeoutOf(how.SettleMs)
	if settle <= 0 {
		settle = defaultSettle
	}
	if settle >= timeout {
		// The screen could never be seen the same for settle: every answer would be settled
		// false, as if it were still changing.
		return ScreenOutput{}, protocol.Errorf(CodeBadArgument, "settleMs %s is not below the call's timeoutMs %s, so the screen could never be seen settled; give a shorter settleMs (default %d) or a longer timeoutMs",
			givenOr(how.SettleMs, settle), givenOr(how.TimeoutMs, timeout), defaultSettle.Milliseconds())
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	if settle >= time.Until(deadline) {
		// A call answers within callBound, whatever its timeoutMs: a settleMs that fits
		// timeoutMs 60000 but not that came back at once, typed and unsettled.
		return ScreenOutput{}, protocol.Errorf(CodeBadArgument, "settleMs %s is not below the %d ms a call may take at most (it answers before MCP clients give up on it, at 60000), so the screen could never be seen settled; give a shorter settleMs (default %d)",
			givenOr(how.SettleMs, settle), callBound.Milliseconds(), defaultSettle.Milliseconds())
	}
	// The computer's input turn is held over every request: no other caller's input lands
	// between two parts of this one (docs/mcp.md). It is released before the settle.
	if _, _, err := t.client.TypeInput(ctx, traposID, events, time.Until(deadline)); err != nil {
		var sent []computer.InputEvent // the events of the requests the computer took
		if partly, ok := errors.AsType[*computer.PartlyTyped](err); ok {
			sent, err = computer.TypedPart(events, partly.Queued), partly.Err
		}
		err = named(err)
		pe := asError(err)
		if len(sent) > 0 {
			// The computer's "nothing was queued" is of its own request, the one it refused;
			// the input's requests before it were typed, which done(sent) says.
			pe = pe.WithMessage(strings.TrimSuffix(pe.Message, computerQueuedNothing))
		}
		// A request the computer did not answer in time reached it, or may have: its
		// input may be typed all the same, and a call made again would type it twice.
		unanswered := pe.Code == protocol.CodeTimeout
		switch {
		case len(sent) > 0 && unanswered:
			err = inputSentError{pe.WithHostWords("", "; "+done(sent)+" before it, and the rest may have been too (read_screen shows the screen: check it before you send any of it again)")}
		case len(sent) > 0 && pe.Code == protocol.CodeUnauthorized:
			// The caller's token was revoked or expired between two requests: read_screen
			// with it is refused too, so no call is offered.
			err = inputSentError{pe.WithHostWords("", "; "+done(sent)+" before it")}
		case len(sent) > 0:
			err = inputSentError{pe.WithHostWords("", "; "+done(sent)+", none from there on (read_screen shows the screen)")}
		case unanswered:
			err = inputSentError{pe.WithHostWords("", "; the input may have been typed all the same (read_screen shows the screen: check it before you send it again)")}
		}
		return ScreenOutput{}, withWarnings(err, warnings)
	}
	got, err := t.client.Settle(ctx, traposID, settle, time.Until(deadline))
	if err != nil {
		// The input is queued: say so, or a retry would type it twice.
		pe := asError(err)
		if pe.Code == protocol.CodeNotConnected && (pe.Absent || pe.Left) && pe.RelabelledTo == "" {
			// Gone during the call, its screen unread until it is back. The gateway's words for
			// a computer no socket holds ("is not connected; no computer is connected at all:
			// run sandbox status on it in game") read as one that was never there, and named
			// no way to wait for it.
			return ScreenOutput{}, withWarnings(inputSentError{pe.WithMessage(fmt.Sprintf("computer %s went away while its screen settled, after the input was sent: "+
				"the input was typed, so do not send it again; ping with wait true waits for it to come back, and read_screen then shows the screen",
				cctext.ShowTraposID(traposID)))}, warnings)
		}
		sent := "; the input was sent before it (read_screen shows the screen)"
		if pe.Code == protocol.CodeNotConnected {
			// Gone (a relabel's): its screen cannot be read until it is back.
			sent = "; the input was sent before it went (read_screen shows the screen once it is connected again)"
		}
		return ScreenOutput{}, withWarnings(inputSentError{pe.WithHostWords("", sent)}, warnings)
	}
	out := screenOutput(got.Screen, how.Colours, how.Cursor)
	out.Settled, out.Warnings = &got.Settled, warnings
	out.Relabelled = t.client.RelabelledByRun(ctx, traposID)
	return out, nil
}

// note is what the screen tools say beside a screen still changing at the call's end, or with
// rows the computer has not seen drawn whole: settled and unknownRows mean so in the output
// schema only, which opencode does not hand the model. An agent read unknownRows [1 … 19]
// after a reboot with no word of what they are, and settled false after typing a program's
// name whose loop redraws the screen, no word that the input was typed; and a completion
// drawn in grey after the cursor, which text shows as typed (an agent read "> edit" where
// "ed" was typed); and monitors left out of monitors (monitorsLeftOut), which it would take
// for all the computer has. Its cells are named, never quoted: they are the computer's words. "" for
// a screen seen whole and settled (or read without waiting) with no completion on it.
func (o ScreenOutput) note() string {
	var notes []string
	if wait := o.waitNote(); wait != "" {
		notes = append(notes, wait)
	}
	if o.Settled != nil && !*o.Settled {
		notes = append(notes, "The screen was still changing when the call ended (settled false): a program keeps drawing on it, so this is one moment of it. "+
			"The input was typed: do not send it again. read_screen reads the screen again at once, without waiting for it to settle.")
	}
	if len(o.UnknownRows) > 0 {
		have := " have"
		if len(o.UnknownRows) == 1 {
			have = " has"
		}
		if o.Monitor != "" {
			// A monitor's rows are redrawn on the monitor: clear at the prompt clears the
			// computer's own screen. The monitor is not named (its name here is the computer's
			// words, which a note never quotes).
			notes = append(notes, rowsNamed(o.UnknownRows)+" (unknownRows)"+have+" not been seen drawn whole since the computer began mirroring this monitor "+
				"(what was drawn on it before, or while its sandbox daemon was stopped): they may show more on the monitor than here, "+
				"until a program draws them again (at the shell prompt, monitor, the monitor's name and clear redraw the whole monitor: monitor top clear for the one on top).")
		} else {
			notes = append(notes, rowsNamed(o.UnknownRows)+" (unknownRows)"+have+" not been seen drawn whole since the computer began mirroring its screen "+
				"(its boot's first lines, or what was drawn while its sandbox daemon was stopped): they may show more on the computer than here, "+
				"until a program draws them again (at the shell prompt, clear redraws the whole screen).")
		}
	}
	if n := o.MonitorsLeftOut; n > 0 {
		notes = append(notes, fmt.Sprintf("monitors names %d of the computer's monitors: %d more are attached (monitorsLeftOut), "+
			"as the list names %d at most, none with a name over %d bytes. read_screen reads any of them by its name (peripheral.getNames() names them all).",
			len(o.Monitors), n, computer.MaxMonitorNames, computer.MaxMonitorNameBytes))
	}
	if h := o.suggested; h != nil {
		cells := fmt.Sprintf("Row %d, columns %d-%d, from the cursor on, are", h.Row, h.From, h.To)
		if h.From == h.To {
			cells = fmt.Sprintf("Row %d, column %d, at the cursor, is", h.Row, h.From)
		}
		notes = append(notes, cells+" drawn in grey: a completion the program suggests for the word being typed (CC's shell, lua prompt and edit draw theirs so), "+
			"which text shows as though it were typed, but it is not: Tab takes it; typing on, or Enter, leaves it out.")
	}
	return strings.Join(notes, " ")
}

// rowsNamed names rows (1-based, ascending) for a sentence, runs as ranges: "Row 4",
// "Rows 1-19", "Rows 1, 3-5, 9".
func rowsNamed(rows []int) string {
	var runs []string
	for i := 0; i < len(rows); {
		j := i
		for j+1 < len(rows) && rows[j+1] == rows[j]+1 {
			j++
		}
		if j == i {
			runs = append(runs, strconv.Itoa(rows[i]))
		} else {
			runs = append(runs, fmt.Sprintf("%d-%d", rows[i], rows[j]))
		}
		i = j + 1
	}
	if len(rows) == 1 {
		return "Row " + runs[0]
	}
	return "Rows " + strings.Join(runs, ", ")
}
