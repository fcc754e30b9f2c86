package computer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"fakecraft/ccstr"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// Cursor is where the computer's cursor is (1-based) and whether it blinks.
type Cursor struct {
	X     int  `json:"x"`
	Y     int  `json:"y"`
	Blink bool `json:"blink"`
}

// Row is one row of a screen: Text is host text (byte N is U+00NN, the text rule), FG and BG
// are blit strings, one colour digit (0-9a-f) per cell.
type Row struct {
	Text string `json:"text"`
	FG   string `json:"fg"`
	BG   string `json:"bg"`
}

// Screen is the computer's own screen (screen.read's answer, docs/screen.md), its text as host
// text.
type Screen struct {
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Colour bool   `json:"colour"`
	Cursor Cursor `json:"cursor"`
	// FG and BG are the colours the next write uses (a colour's number, 1 to 32768).
	FG      int      `json:"fg"`
	BG      int      `json:"bg"`
	Rows    []Row    `json:"rows"`
	Palette []string `json:"palette"`
	// UnknownRows are the rows (1-based) the computer's mirror has not seen drawn whole since
	// it started (the boot's first lines, what was drawn while its daemon was stopped): they
	// may show more on the computer than Rows hold. A client before 0.5.25 sends none.
	UnknownRows []int `json:"unknownRows,omitempty"`
	// Monitor and TextScale are a monitor's screen's (ReadMonitor): its name, host text, and
	// its text scale (0.5 to 5).
	Monitor   string  `json:"monitor,omitempty"`
	TextScale float64 `json:"textScale,omitempty"`
	// Monitors name the monitors attached to the computer, host text, in its own screen's
	// answer (client 0.5.29 on; nil from an older client, empty for none).
	Monitors []string `json:"monitors,omitempty"`
	// MonitorsLeftOut counts the monitors attached that Monitors leaves out (client 0.5.32
	// on): it names MaxMonitorNames at most, each of MaxMonitorNameBytes at most, so that a
	// computer on a cable with hundreds of them answers within a frame. Each is read by its
	// name all the same. The gateway holds every client's answer to it (boundMonitors).
	MonitorsLeftOut int `json:"monitorsLeftOut,omitempty"`
}

// Text is the screen as text: each row without its trailing spaces, down to the last row that
// shows something, joined by "\n". A row's control characters that CC's font draws blank
// (NUL, tab, line break, carriage return: a program's term.write("a\nb")) are spaces here, as
// on the screen: kept, a line break split the row, and every row under it read one too low.
func (s Screen) Text() string {
	lines := make([]string, len(s.Rows))
	last := 0
	for i, r := range s.Rows {
		lines[i] = strings.TrimRight(strings.Map(blankDrawn, r.Text), " ")
		if lines[i] != "" {
			last = i + 1
		}
	}
	return strings.Join(lines[:last], "\n")
}

// Shows reports whether part (host text, one row's: no line break) is drawn within one row of
// the screen, each row whole, its trailing spaces too (a prompt's "Password: " ends in one), and
// its control characters that CC's font draws blank as spaces, as Text gives them.
func (s Screen) Shows(part string) bool {
	for _, r := range s.Rows {
		if strings.Contains(strings.Map(blankDrawn, r.Text), part) {
			return true
		}
	}
	return false
}

// Suggestion is where a program reading input draws a suggestion after the cursor (Screen.Suggested).
type Suggestion struct {
	// Row is the cursor's row; From and To are the suggestion's first and last columns (1-based).
	Row, From, To int
}

// suggestionGreys are the blit digits of CC's grey and light grey, the colours its read() and
// edit draw a completion in.
const suggestionGreys = "78"

// Suggested finds a completion drawn after the cursor, as CC's read() (the shell's and the lua
// prompt's line) and edit draw one for the word being typed: from the cursor to the row's last
// character, in one colour pair that is grey where the typed character before the cursor's is
// not (read() writes it in grey, edit on a grey background). Text shows it as though it were
// typed: an agent read "> edit" where the player had typed "ed" and saw "it" in grey. ok is
// false when the cursor does not blink (nothing reads input), stands at a row's start or after
// a space (no word is being typed), or the cells after it are blank or of several colours
// (the rest of a line of syntax-highlighted code in edit).
func (s Screen) Suggested() (Suggestion, bool) {
	c := s.Cursor
	if !c.Blink || c.Y < 1 || c.Y > len(s.Rows) || c.X < 2 {
		return Suggestion{}, false
	}
	row := s.Rows[c.Y-1]
	cells := []rune(strings.Map(blankDrawn, row.Text))
	n := min(len(cells), len(row.FG), len(row.BG))
	at, before := c.X-1, c.X-2
	if at >= n || cells[before] == ' ' {
		return Suggestion{}, false
	}
	last := -1
	for i := n - 1; i >= at; i-- {
		if cells[i] != ' ' {
			last = i
			break
		}
	}
	if last < 0 {
		return Suggestion{}, false
	}
	fg, bg := row.FG[at], row.BG[at]
	for i := at; i <= last; i++ {
		if row.FG[i] != fg || row.BG[i] != bg {
			return Suggestion{}, false
		}
	}
	greyFG := strings.IndexByte(suggestionGreys, fg) >= 0 && fg != row.FG[before]
	greyBG := strings.IndexByte(suggestionGreys, bg) >= 0 && bg != row.BG[before]
	if !greyFG && !greyBG {
		return Suggestion{}, false
	}
	return Suggestion{Row: c.Y, From: c.X, To: last + 1}, true
}

// blankDrawn is r, or a space for a control character CC's font draws blank (ccstr.Glyph).
func blankDrawn(r rune) rune {
	if r < ' ' && ccstr.Glyph(byte(r)) == " " {
		return ' '
	}
	return r
}

// Equal reports whether two screens show the same thing (the cursor and palette included).
func (s Screen) Equal(o Screen) bool {
	if s.Width != o.Width || s.Height != o.Height || s.Colour != o.Colour || s.Cursor != o.Cursor ||
		s.FG != o.FG || s.BG != o.BG || len(s.Rows) != len(o.Rows) || len(s.Palette) != len(o.Palette) {
		return false
	}
	for i := range s.Rows {
		if s.Rows[i] != o.Rows[i] {
			return false
		}
	}
	for i := range s.Palette {
		if s.Palette[i] != o.Palette[i] {
			return false
		}
	}
	return true
}

// PaletteProblem says what is wrong with a palette a computer sent ("" when nothing): at most
// 16 colours, each #rrggbb. It reaches every viewer as it is, the web console's CSS and the
// agent's read_screen among them, so a hostile computer's text must not pass for a colour
// there (a CSS value such as url(…) makes the console's page fetch what the computer names).
func PaletteProblem(palette []string) string {
	if len(palette) > 16 {
		return fmt.Sprintf("the palette has %d colours; a screen has 16", len(palette))
	}
	for i, c := range palette {
		if !isHexColour(c) {
			return fmt.Sprintf("palette colour %d is %s, not #rrggbb", i, strconv.Quote(clipText(c)))
		}
	}
	return ""
}

func isHexColour(c string) bool {
	if len(c) != 7 || c[0] != '#' {
		return false
	}
	for i := 1; i < 7; i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(c[i])) {
			return false
		}
	}
	return true
}

// clipText keeps a computer's string short in a message.
func clipText(s string) string {
	if len(s) > 20 {
		return strings.ToValidUTF8(s[:20], "") + "…"
	}
	return s
}

// SizeProblem says what is wrong with the size of a screen a computer sent ("" when nothing):
// 1 to protocol.MaxScreenSide cells each way, CC: Tweaked's largest terminal. Past it a screen
// is no computer's: 1024×1024 cells of changing colours took a browser 14 s a frame to draw,
// and the web console's tab hung.
func SizeProblem(width, height int) string {
	if width < 1 || height < 1 || width > protocol.MaxScreenSide || height > protocol.MaxScreenSide {
		return fmt.Sprintf("the size %d×%d is not a screen's (CC's are 1 to %d cells each way)", width, height, protocol.MaxScreenSide)
	}
	return ""
}

// RowProblem says what is wrong with row y of a screen width cells wide that a computer sent,
// its text still the wire's ("" when nothing): a row is as wide as the screen at most, in the
// computer's cells (\u00e9 is one). A longer one would reach every viewer and the agent.
func RowProblem(y int, r Row, width int) string {
	if n := max(protocol.WireLen(r.Text), len(r.FG), len(r.BG)); n > width {
		return fmt.Sprintf("row %d has %d cells; the screen is %d wide", y, n, width)
	}
	return ""
}

// problem says what is wrong with screen.read's answer s, as the computer sent it ("" when
// nothing): its size, its rows (no more than it is high, each no wider than it), the rows it
// names unknown (rows of it) and its palette. The frame limit bounds the answer's bytes, not the screen it describes: a hostile
// computer's 40000 empty rows, or its width of a billion cells, reached the CLI, MCP's
// read_screen (the agent's context) and Settle as they were.
func (s Screen) problem() string {
	if why := SizeProblem(s.Width, s.Height); why != "" {
		return why
	}
	if len(s.Rows) > s.Height {
		return fmt.Sprintf("it has %d rows; the screen is %d high", len(s.Rows), s.Height)
	}
	for i, r := range s.Rows {
		if why := RowProblem(i+1, r, s.Width); why != "" {
			return why
		}
	}
	if why := UnknownRowsProblem(s.UnknownRows, s.Height); why != "" {
		return why
	}
	if s.TextScale != 0 {
		if why := TextScaleProblem(s.TextScale); why != "" {
			return why
		}
	}
	return PaletteProblem(s.Palette)
}

// TextScaleProblem says what is wrong with a monitor's text scale that a computer sent ("" when
// nothing): CC's monitors take 0.5 to 5 in steps of 0.5 (setTextScale refuses any other). A
// hostile computer's -1 or 1e308 reached every viewer, and trap-sandbox screen's status line
// printed 1e308 as 309 digits.
func TextScaleProblem(scale float64) string {
	if !(scale >= 0.5 && scale <= 5) || math.Mod(scale, 0.5) != 0 {
		return fmt.Sprintf("the text scale %s is not a monitor's (CC's are 0.5 to 5, in steps of 0.5)", strconv.FormatFloat(scale, 'g', 6, 64))
	}
	return ""
}

// UnknownRowsProblem says what is wrong with the rows a computer names unknown (screen.read's
// and screen.update's unknownRows) on a screen height rows high ("" when nothing): each a row
// of it, no more of them than it has.
func UnknownRowsProblem(rows []int, height int) string {
	if len(rows) > height {
		return fmt.Sprintf("it names %d unknown rows; the screen is %d high", len(rows), height)
	}
	for _, y := range rows {
		if y < 1 || y > height {
			return fmt.Sprintf("it names row %d as unknown; the screen has rows 1 to %d", y, height)
		}
	}
	return ""
}

// FromWire turns the rows' and the monitors' names' wire text into host text (the fields a
// computer sends as bytes).
func (s *Screen) FromWire(traposID string) error {
	for i := range s.Rows {
		text, err := cctext.FromWire(s.Rows[i].Text)
		if err != nil {
			return protocol.Errorf(protocol.CodeInternal, "computer %s sent a screen row that is not bytes: %v", cctext.ShowTraposID(traposID), err)
		}
		s.Rows[i].Text = text
	}
	names := []*string{&s.Monitor}
	for i := range s.Monitors {
		names = append(names, &s.Monitors[i])
	}
	for _, name := range names {
		text, err := cctext.FromWire(*name)
		if err != nil {
			return protocol.Errorf(protocol.CodeInternal, "computer %s sent a monitor's name that is not bytes: %v", cctext.ShowTraposID(traposID), err)
		}
		*name = text
	}
	return nil
}

// ReadScreen reads the computer's screen once (screen.read; needs sandbox.allow_screen view).
func (c *Client) ReadScreen(ctx context.Context, traposID string, timeout time.Duration) (Screen, error) {
	return c.readScreen(ctx, traposID, bound(timeout, DefaultTimeout))
}

// ReadMonitor reads the screen of the computer's monitor named monitor (host text: a side, or a
// wired modem's monitor_0) once: screen.read {monitor}, client 0.5.29 on (the gateway refuses
// it to an older one, which would answer with the computer's own screen); needs view. A name
// that is no monitor of the computer's is the computer's bad_payload, naming its monitors.
func (c *Client) ReadMonitor(ctx context.Context, traposID, monitor string, timeout time.Duration) (Screen, error) {
	name, err := MonitorWire(monitor)
	if err != nil {
		return Screen{}, err
	}
	if len(name) > protocol.MaxFrameBytes {
		// No frame holds it, whatever the transport: through the host API the body's limit
		// refused it first, in words of a body the caller never wrote (the stdio bridge).
		return Screen{}, monitorNameTooLong(monitor)
	}
	s, err := c.readScreenOf(ctx, traposID, struct {
		Monitor string `json:"monitor"`
	}{name}, bound(timeout, DefaultTimeout))
	return s, MonitorNameTooLong(err, monitor)
}

// sides are CC's six sides, by the names a computer's peripherals on them have.
var sides = []string{"top", "bottom", "left", "right", "front", "back"}

// MonitorName is monitor as the computer names it: a side's name in lower case, as CC reads a
// side in any case (peripheral.wrap("Top") is the monitor on top, and the client keeps its
// mirror as top's), any other name (a wired modem's monitor_0) as it is. Read by "Top", a
// monitor's answer said "monitor": "Top" beside monitors' "top", and watched by "TOP" and
// "top" it took two of the computer's 8 watches, each for the same monitor.
func MonitorName(monitor string) string {
	if lower := strings.ToLower(monitor); slices.Contains(sides, lower) {
		return lower
	}
	return monitor
}

// MonitorWire is monitor as a request to the computer names it (MonitorName, on the wire, by
// the text rule: cctext.Wire, so a byte that is not UTF-8 stands for itself and a character
// written decomposed is composed). A name holding a character CC cannot hold is refused with
// bad_payload naming the character and its place, as a path holding one is (cctext.PathToCC):
// sent as '?', it had the computer answer 'no monitor named "?"', a name the caller never gave
// (read_screen's monitor "€", the screen stream's ?monitor=€, trap-sandbox screen --monitor €).
func MonitorWire(monitor string) (string, error) {
	name := MonitorName(monitor)
	wire, reps := cctext.Wire("monitor", name)
	if len(reps) > 0 {
		// The report places it by line and column; the name's place counts the lines before.
		at := reps[0].Column
		for _, line := range strings.SplitAfter(cctext.Composed(name), "\n")[:reps[0].Line-1] {
			at += utf8.RuneCountInString(line)
		}
		return "", protocol.Errorf(protocol.CodeBadPayload, "%q (%s) at character %d of the monitor name is outside CC's character set, so no monitor is named so: "+
			"name one of the computer's (a side such as top, or a wired modem's monitor_0)", reps[0].Char, reps[0].CodePoint, at)
	}
	return wire, nil
}

// MonitorNamedBack is monitor as an answer names it back to the caller who named it (the
// screen stream's error, protocol.Error's Monitor): as the gateway asks the computer for it
// (MonitorName), or "" for a name no computer's monitor can have, which is not echoed (a
// stream's query may hold 600 KB): one the client would not name in its list (isMonitorName: over
// MaxMonitorNameBytes of CC's bytes, or holding a character no byte is, which MonitorWire
// refused unsent).
func MonitorNamedBack(monitor string) string {
	if !isMonitorName(monitor) {
		return ""
	}
	return MonitorName(monitor)
}

// MonitorNameTooLong is err, the answer to a request naming monitor (screen.read's, or
// screen.watch's), with the gateway's refusal of a request too large for a frame
// (protocol.FrameTooLargeMessage) worded by the monitor's name, the only text of the caller's
// in it: "send a smaller payload" named nothing a caller sent (a GET of the screen stream, an
// agent's read_screen or wait_for_screen). Any other err is returned as it is.
func MonitorNameTooLong(err error, monitor string) error {
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Code != protocol.CodeBadPayload || pe.ByComputer || pe.Message != protocol.FrameTooLargeMessage {
		return err
	}
	return monitorNameTooLong(monitor)
}

// monitorNameTooLong refuses monitor, a name no request to the computer holds.
func monitorNameTooLong(monitor string) *protocol.Error {
	return protocol.Errorf(protocol.CodeBadPayload, "the monitor name is %d bytes, more than a request to the computer holds (128 KiB, CC: Tweaked's limit), so no monitor is named so: "+
		"name one of the computer's (a side such as top, or a wired modem's monitor_0)", len(monitor))
}

func (c *Client) readScreen(ctx context.Context, traposID string, timeout time.Duration) (Screen, error) {
	return c.readScreenOf(ctx, traposID, struct{}{}, timeout)
}

func (c *Client) readScreenOf(ctx context.Context, traposID string, payload any, timeout time.Duration) (Screen, error) {
	var w wireScreen
	if err := c.call(ctx, traposID, protocol.TypeScreenRead, payload, timeout, &w); err != nil {
		return Screen{}, err
	}
	s := w.screen()
	if s.Rows == nil {
		s.Rows = []Row{}
	}
	if why := s.problem(); why != "" {
		return Screen{}, protocol.Errorf(protocol.CodeInternal, "computer %s answered screen.read with a screen that is not one: %s", c.shownID(traposID), why)
	}
	return s, s.FromWire(c.listedID(traposID))
}

// Input event types (screen.input's fixed list; the computer refuses any other).
const (
	InputKey   = "key"
	InputKeyUp = "key_up"
	InputChar  = "char"
	InputPaste = "paste"
	InputClick = "click"
	InputDrag  = "drag" // client 0.5.21 on: an older one refuses it (the gateway says so)
	// InputMouseClick and InputMouseUp are a button pressed and held (a drag's press, its
	// drags after it) and let go, apart, as CC's mouse_click and mouse_up; InputClick is both
	// at once. Client 0.5.22 on: an older one refuses them (the gateway says so).
	InputMouseClick = "mouse_click"
	InputMouseUp    = "mouse_up"
	InputScroll     = "scroll"
	InputTerminate  = "terminate"
)

// InputEvent is one event of screen.input: which fields count depends on Type.
type InputEvent struct {
	Type string `json:"type"`
	// Name is a key's name as keys.getName gives it (enter, leftCtrl, a): key and key_up.
	Name string `json:"name,omitempty"`
	// Held marks a key event as a repeat of a key held down.
	Held bool `json:"held,omitempty"`
	// Text is host text: char (each character one char event, "\n" Enter) and paste.
	Text string `json:"text,omitempty"`
	// Button is 1 (left), 2 (right) or 3 (middle): click, mouse_click, drag (the button held)
	// and mouse_up.
	Button int `json:"button,omitempty"`
	// X and Y are the cell (1-based): click, mouse_click, drag, mouse_up and scroll.
	X int `json:"x,omitempty"`
	Y int `json:"y,omitempty"`
	// Direction is -1 (up) or 1 (down): scroll.
	Direction int `json:"direction,omitempty"`
}

// KeyPress is the events of pressing and releasing a key, or a chord ("leftCtrl+s": the
// keys before the last are held while it is pressed, then released in reverse order). The
// name "terminate" is CC's terminate event (what holding Ctrl+T does).
func KeyPress(chord string) []InputEvent {
	if chord == InputTerminate {
		return []InputEvent{{Type: InputTerminate}}
	}
	names := strings.Split(chord, "+")
	if slices.Contains(names, "") { // no key is named "", so this is no chord: let the computer name it
		names = []string{chord}
	}
	var evs []InputEvent
	for _, n := range names {
		evs = append(evs, InputEvent{Type: InputKey, Name: n})
	}
	for i := len(names) - 1; i >= 0; i-- {
		evs = append(evs, InputEvent{Type: InputKeyUp, Name: names[i]})
	}
	return evs
}

// MaxInputEvents is the most os events one screen.input queues (the daemon's
// MAX_INPUT_EVENTS, half of CC's event queue): a request that would queue more is refused.
const MaxInputEvents = 128

// InputCost is how many os events e queues on the computer: one per character of a char
// text as the text rule reads it, composed (cctext.Composed: é written as e and U+0301 is one,
// the byte E9, as TypeInput sends it), a line break two (key enter and key_up enter); two for a
// click, one for any other. The web console's inputCost counts alike.
func InputCost(e InputEvent) int {
	switch e.Type {
	case InputChar:
		return utf8.RuneCountInString(cctext.Composed(e.Text)) + strings.Count(e.Text, "\n")
	case InputClick:
		return 2
	}
	return 1
}

// SplitInput cuts events into lists of at most MaxInputEvents os events, in order, one
// screen.input request each (sent one after another: the computer has taken the events of a
// request from its queue before it handles the next): a char text is cut between
// characters, any other event stays whole.
func SplitInput(events []InputEvent) [][]InputEvent {
	parts, _ := splitInput(events)
	return parts
}

// splitInput is SplitInput, with the place in events of each event of each part (a char text
// cut over several parts has the same place in each).
func splitInput(events []InputEvent) (parts [][]InputEvent, places [][]int) {
	var cur []InputEvent
	var at []int
	n := 0
	flush := func() {
		if len(cur) > 0 {
			parts, places = append(parts, cur), append(places, at)
		}
		cur, at, n = nil, nil, 0
	}
	for i, e := range events {
		if e.Type != InputChar {
			c := InputCost(e)
			if n+c > MaxInputEvents {
				flush()
			}
			cur, at, n = append(cur, e), append(at, i), n+c
			continue
		}
		text := e.Text
		for text != "" {
			cut := 0 // the bytes of text that fit
			for cut < len(text) {
				r, size := utf8.DecodeRuneInString(text[cut:])
				c := 1
				if r == '\n' {
					c = 2
				}
				if n+c > MaxInputEvents {
					break
				}
				n, cut = n+c, cut+size
			}
			if cut == 0 {
				flush()
				continue
			}
			part := e
			part.Text = text[:cut]
			cur, at = append(cur, part), append(at, i)
			text = text[cut:]
			if text != "" {
				flush()
			}
		}
	}
	flush()
	return parts, places
}

// SendInput queues events on the computer as its keyboard and mouse would (screen.input;
// needs sandbox.allow_screen control). It takes the computer's input turn for its request
// (InputTurn), unless ctx holds it already: a caller whose input takes several requests holds
// the turn over them all, and each request after the first asks StillAuthorized first. It returns how many events were queued and the
// characters of the texts CC's charset could not hold (sent as '?'), each text named by its
// place in the request ("events[0].text"), as the computer names it in a refusal and the
// HTTP API in its warnings ("payload.events[0].text").
func (c *Client) SendInput(ctx context.Context, traposID string, events []InputEvent, timeout time.Duration) (int, []cctext.Replacement, error) {
	wire, reps := wireInput(events)
	n, err := c.sendWire(ctx, traposID, wire, timeout)
	return n, reps, err
}

// sendWire is SendInput of events whose texts are wire text already (wireInput's).
func (c *Client) sendWire(ctx context.Context, traposID string, wire []InputEvent, timeout time.Duration) (int, error) {
	var ans struct {
		Queued int `json:"queued"`
	}
	timeout = bound(timeout, DefaultTimeout)
	turn := heldTurn(ctx, traposID)
	if turn == nil {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		ctx, release, err := c.InputTurn(ctx, traposID)
		if err != nil {
			return 0, err
		}
		defer release()
		err = c.call(ctx, traposID, protocol.TypeScreenInput, map[string]any{"events": wire}, remaining(ctx), &ans)
		return ans.Queued, err
	}
	if turn.sent > 0 {
		if err := c.StillAuthorized(ctx); err != nil {
			return 0, stopped(err, "the rest of the input was not sent")
		}
	}
	turn.sent++
	err := c.call(ctx, traposID, protocol.TypeScreenInput, map[string]any{"events": wire}, timeout, &ans)
	return ans.Queued, err
}

// wireInput is events with their texts as CC's bytes (the text rule; a paste's as CC pastes,
// cctext.PasteWire), and the characters CC's
// charset could not hold (sent as '?'), each text named by its place ("events[0].text").
func wireInput(events []InputEvent) ([]InputEvent, []cctext.Replacement) {
	var reps []cctext.Replacement
	wire := make([]InputEvent, len(events))
	for i, e := range events {
		if e.Text != "" {
			var r []cctext.Replacement
			toWire := cctext.Wire
			if e.Type == InputPaste { // an emoji is two ?, as CC pastes it
				toWire = cctext.PasteWire
			}
			e.Text, r = toWire("events["+strconv.Itoa(i)+"].text", e.Text)
			reps = cctext.Join(reps, r)
		}
		wire[i] = e
	}
	return wire, reps
}

// Settled is what Settle saw: the last screen read, and whether it stayed the same for the
// whole quiet time before the call's time ran out.
type Settled struct {
	Screen  Screen
	Settled bool
}

// Settle reads the screen until it has stayed the same for quiet (the programs on the
// computer have drawn what the last input made them draw), bounded by timeout: then the
// last screen read comes back with Settled false. A computer draws at most once per tick
// (50 ms), so quiet should be some ticks. It reads at least every settlePoll, so a
// computer that goes away meanwhile is told at once rather than after a long quiet (a
// send_text given settleMs 25000 answered not_connected 25 s after the computer left).
func (c *Client) Settle(ctx context.Context, traposID string, quiet, timeout time.Duration) (Settled, error) {
	ctx, cancel := context.WithTimeout(ctx, bound(timeout, DefaultTimeout))
	defer cancel()
	deadline, _ := ctx.Deadline()
	last, err := c.readScreen(ctx, traposID, time.Until(deadline))
	if err != nil {
		return Settled{}, err
	}
	since := time.Now() // when last was first read
	timer := time.NewTimer(min(quiet, settlePoll))
	defer timer.Stop()
	for {
		if time.Until(deadline) < quiet-time.Since(since) {
			return Settled{Screen: last}, nil
		}
		select {
		case <-ctx.Done():
			return Settled{Screen: last}, nil
		case <-timer.C:
		}
		left := time.Until(deadline)
		if left <= 0 {
			return Settled{Screen: last}, nil
		}
		s, err := c.readScreen(ctx, traposID, left)
		if protocol.CodeOf(err) == protocol.CodeTimeout && ctx.Err() != nil {
			return Settled{Screen: last}, nil // the last read was cut off by the call's end
		}
		if err != nil {
			return Settled{}, err
		}
		if !s.Equal(last) {
			last, since = s, time.Now()
		} else if time.Since(since) >= quiet {
			return Settled{Screen: s, Settled: true}, nil
		}
		timer.Reset(min(quiet-time.Since(since), settlePoll))
	}
}

// settlePoll is the longest Settle waits between two reads of the screen: how soon it
// hears that the computer went away during a long quiet.
const settlePoll = 500 * time.Millisecond
