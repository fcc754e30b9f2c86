package computer

import (
	"bytes"
	"io"
	"math"
	"math/bits"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccstr"
)

// Terminal size of a CC: Tweaked computer.
const (
	TermWidth  = 51
	TermHeight = 19
)

// Colour indices (the exponent of a colors.* value, also its blit digit) of the defaults.
const (
	colourWhite = 0
	colourBlack = 15
)

// DefaultPalette is CC: Tweaked's default RGB for each of the 16 colours, by index
// (colors.white = index 0 … colors.black = index 15).
var DefaultPalette = [16]uint32{
	0xF0F0F0, 0xF2B233, 0xE57FD8, 0x99B2F2, 0xDEDE6C, 0x7FCC19, 0xF2B2CC, 0x4C4C4C,
	0x999999, 0x4C99B2, 0xB266E5, 0x3366CC, 0x7F664C, 0x57A64E, 0xCC4C4C, 0x111111,
}

// Cell is one character of the screen with its colour indices (0-15). Char is the CC byte
// as written (control characters included, as CC's terminal keeps them); ccstr.Glyph is
// how it looks.
type Cell struct {
	Char   byte
	FG, BG uint8
}

// Snapshot is a copy of everything visible on the terminal, for a renderer.
type Snapshot struct {
	Cells [TermHeight][TermWidth]Cell
	// CursorX and CursorY are 1-based and may be off-screen.
	CursorX, CursorY int
	Blink            bool
	// CursorFG is the text colour index, the colour CC draws the blinking cursor in.
	CursorFG uint8
	Palette  [16]uint32
	Colour   bool
}

// Terminal is a text screen: the computer's (51x19, with its transcript: every piece of
// text written to it, with a line break each time the cursor leaves a row or the screen
// scrolls, so lines that scroll off the top are kept, as CraftOS-PC's headless mode prints
// them) or a monitor's (any size, resizable, no transcript). mu guards every field because
// Screen, Snapshot and Transcript are read from other goroutines.
type Terminal struct {
	mu         sync.Mutex
	w, h       int
	grid       [][]Cell // h rows of w cells
	transcribe bool     // keep the transcript (the computer's own screen)
	x, y       int      // 1-based cursor; may be off-screen
	textColour uint8
	bgColour   uint8
	blink      bool
	colour     bool
	palette    [16]uint32
	line       []byte // transcript text of the current row by column, not yet ended
	inked      []bool // by column of line: held a non-blank character at some point
	transcript bytes.Buffer
	out        io.Writer
	outErr     error
	// onBlink, when set, hears every setCursorBlink (the old and the new state), outside mu.
	onBlink func(was, on bool)
	changed chan struct{} // capacity 1: the screen changed since the last receive
}

// NewTerminal returns a cleared computer screen (51x19) that keeps a transcript and copies
// its finished lines to out (which may be nil). colour says whether it is an advanced
// (colour) terminal.
func NewTerminal(out io.Writer, colour bool) *Terminal {
	t := NewSizedTerminal(TermWidth, TermHeight, colour)
	t.out, t.transcribe = out, true
	return t
}

// NewSizedTerminal returns a cleared w x h screen without a transcript (a monitor's).
func NewSizedTerminal(w, h int, colour bool) *Terminal {
	t := &Terminal{
		x: 1, y: 1, textColour: colourWhite, bgColour: colourBlack, colour: colour,
		palette: DefaultPalette, changed: make(chan struct{}, 1),
	}
	t.setSize(w, h)
	return t
}

// setSize makes a blank w x h grid. Caller holds mu (or owns t).
func (t *Terminal) setSize(w, h int) {
	t.w, t.h = w, h
	t.grid = make([][]Cell, h)
	for i := range t.grid {
		t.grid[i] = make([]Cell, w)
		t.blankRow(i)
	}
}

// Resize changes the screen's size, clearing it if the size changed (as a monitor's does
// when its text scale changes) and reports whether it did.
func (t *Terminal) Resize(w, h int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w == t.w && h == t.h {
		return false
	}
	t.setSize(w, h)
	t.touch()
	return true
}

// CursorPos returns the cursor's position (1-based, possibly off the screen).
func (t *Terminal) CursorPos() (x, y int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.x, t.y
}

// Size returns the screen's width and height in characters.
func (t *Terminal) Size() (w, h int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w, t.h
}

// Changed receives a value after the screen, cursor or palette changed. A renderer waits
// on it, then takes a Snapshot.
func (t *Terminal) Changed() <-chan struct{} { return t.changed }

// touch notes a visible change. Caller holds mu.
func (t *Terminal) touch() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// blankRow fills row i (0-based) with spaces in the current colours. Caller holds mu.
func (t *Terminal) blankRow(i int) {
	for j := range t.grid[i] {
		t.grid[i][j] = Cell{Char: ' ', FG: t.textColour, BG: t.bgColour}
	}
}

// endLine finishes the current transcript line. When text after the last character still
// showing was blanked again (read's completion hint, erased at Enter) the blanks after it
// are left out; blanks that were only ever blanks (a prompt's "> ") stay. Caller holds mu.
func (t *Terminal) endLine() {
	if !t.transcribe {
		return
	}
	last := len(t.line)
	for last > 0 && t.line[last-1] == ' ' {
		last--
	}
	end := len(t.line)
	for i := last; i < len(t.line); i++ {
		if t.inked[i] {
			end = last
			break
		}
	}
	// The transcript is text outside the computer (bytes past ASCII as CC's font shows them).
	line := ccstr.Shown(string(t.line[:end])) + "\n"
	t.transcript.WriteString(line)
	if t.out != nil && t.outErr == nil {
		_, t.outErr = io.WriteString(t.out, line)
	}
	t.line = t.line[:0]
	t.inked = t.inked[:0]
}

// Flush ends a partly written transcript line, as at shutdown.
func (t *Terminal) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.line) > 0 {
		t.endLine()
	}
}

// Write puts text at the cursor in the current colours and moves the cursor past it; text
// outside the screen is clipped.
func (t *Terminal) Write(text string) {
	t.blit(text, nil, nil)
}

// blit writes text with per-character colour indices (nil: the current colours).
func (t *Terminal) blit(text string, fg, bg []uint8) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// The transcript keeps what ends up in each column, so text redrawn in place (read's
	// line editor, tabulated columns) reads as it looks on screen. Past the right edge only
	// text that continues the line is kept: a cursor far off the screen pads nothing.
	for i := 0; i < len(text) && t.transcribe; i++ {
		col := t.x + i
		if col < 1 || (col > t.w && col > len(t.line)+1) {
			continue
		}
		for len(t.line) < col {
			t.line = append(t.line, ' ')
			t.inked = append(t.inked, false)
		}
		t.line[col-1] = text[i]
		if text[i] != ' ' {
			t.inked[col-1] = true
		}
	}
	if t.y >= 1 && t.y <= t.h {
		row := t.grid[t.y-1]
		for i := 0; i < len(text); i++ {
			col := t.x + i
			if col >= 1 && col <= t.w {
				cell := Cell{Char: text[i], FG: t.textColour, BG: t.bgColour}
				if fg != nil {
					cell.FG, cell.BG = fg[i], bg[i]
				}
				row[col-1] = cell
			}
		}
	}
	t.x += len(text)
	t.touch()
}

// SetCursorPos moves the cursor; leaving the row ends the transcript line.
func (t *Terminal) SetCursorPos(x, y int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if y != t.y {
		t.endLine()
	}
	t.x, t.y = x, y
	t.touch()
}

// Scroll moves the screen contents up by n rows (down when negative) and ends the
// transcript line. New rows are blank in the current background colour.
func (t *Terminal) Scroll(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n == 0 {
		return
	}
	t.endLine()
	// Rows move; the ones scrolled off come back blank on the other side.
	rows := make([][]Cell, t.h)
	spare := 0
	for i := range rows {
		if src := i + n; src >= 0 && src < t.h {
			rows[i] = t.grid[src]
		}
	}
	for i := range rows {
		if rows[i] != nil {
			continue
		}
		for ; spare < t.h; spare++ {
			if src := spare - n; src < 0 || src >= t.h {
				break
			}
		}
		rows[i] = t.grid[spare]
		spare++
	}
	t.grid = rows
	for i := range rows {
		if src := i + n; src < 0 || src >= t.h {
			t.blankRow(i)
		}
	}
	t.touch()
}

// Clear blanks the screen in the current background colour.
func (t *Terminal) Clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.grid {
		t.blankRow(i)
	}
	t.touch()
}

// ClearLine blanks the cursor's row in the current background colour.
func (t *Terminal) ClearLine() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.y >= 1 && t.y <= t.h {
		t.blankRow(t.y - 1)
	}
	t.touch()
}

// Screen returns the 19 rows of the screen as text (each character as CC's font shows it,
// in UTF-8), trailing spaces trimmed, joined with newlines.
func (t *Terminal) Screen() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	rows := make([]string, t.h)
	for i, r := range t.grid {
		var b strings.Builder
		for _, c := range r {
			b.WriteString(ccstr.Glyph(c.Char))
		}
		rows[i] = strings.TrimRight(b.String(), " ")
	}
	return strings.Join(rows, "\n")
}

// Snapshot copies the visible state of the computer's screen (a larger screen's top left
// 51x19 corner).
func (t *Terminal) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Snapshot{
		CursorX: t.x, CursorY: t.y, Blink: t.blink, CursorFG: t.textColour,
		Palette: t.palette, Colour: t.colour,
	}
	for y := 0; y < min(t.h, TermHeight); y++ {
		copy(s.Cells[y][:], t.grid[y])
	}
	return s
}

// Row returns row y (1-based) of the screen: its cells, a copy.
func (t *Terminal) Row(y int) []Cell {
	t.mu.Lock()
	defer t.mu.Unlock()
	if y < 1 || y > t.h {
		return nil
	}
	return append([]Cell(nil), t.grid[y-1]...)
}

// Transcript returns every finished transcript line so far.
func (t *Terminal) Transcript() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.transcript.String()
}

// TextColour returns the current text colour (a colors.* value).
func (t *Terminal) TextColour() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return 1 << t.textColour
}

// checkColour validates a colors.* value and returns its index. Like CC, any number is
// accepted and its highest set bit of the low 16 chosen; nothing set is an error.
func checkColour(L *lua.LState, n int) uint8 {
	f := float64(L.CheckNumber(n))
	if math.IsNaN(f) || math.IsInf(f, 0) {
		L.RaiseError("Colour out of range")
	}
	c := int64(f)
	if c <= 0 || c > 0xFFFF {
		L.RaiseError("Colour out of range")
	}
	return uint8(bits.Len64(uint64(c)) - 1)
}

// blitColours turns a blit colour string into indices; a character that is not a hex
// digit keeps the fallback index, as CC's terminal does.
func blitColours(s string, fallback uint8) []uint8 {
	out := make([]uint8, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			out[i] = c - '0'
		case c >= 'a' && c <= 'f':
			out[i] = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			out[i] = c - 'A' + 10
		default:
			out[i] = fallback
		}
	}
	return out
}

// channel turns a palette component in [0,1] into a byte.
func channel(f float64) uint32 {
	if f < 0 {
		f = 0
	} else if f > 1 {
		f = 1
	}
	return uint32(f*255 + 0.5)
}

// install builds the native term table.
func (t *Terminal) install(L *lua.LState) *lua.LTable {
	fns := t.Functions()
	tbl := L.NewTable()
	for name, fn := range fns {
		tbl.RawSetString(name, L.NewFunction(fn))
	}
	for british, american := range TermAliases {
		tbl.RawSetString(american, tbl.RawGetString(british))
	}
	return tbl
}

// Functions are the term API's functions drawing on t, by their British names (see
// TermAliases): the native term table, and a monitor's methods.
func (t *Terminal) Functions() map[string]lua.LGFunction {
	fns := map[string]lua.LGFunction{
		"write": func(L *lua.LState) int {
			v := L.CheckAny(1)
			t.Write(toStringMeta(L, v))
			return 0
		},
		"blit": func(L *lua.LState) int {
			text, fg, bg := L.CheckString(1), L.CheckString(2), L.CheckString(3)
			if len(fg) != len(text) || len(bg) != len(text) {
				L.RaiseError("Arguments must be the same length")
			}
			t.blit(text, blitColours(fg, colourWhite), blitColours(bg, colourBlack))
			return 0
		},
		"scroll":    func(L *lua.LState) int { t.Scroll(L.CheckInt(1)); return 0 },
		"clear":     func(L *lua.LState) int { t.Clear(); return 0 },
		"clearLine": func(L *lua.LState) int { t.ClearLine(); return 0 },
		"getCursorPos": func(L *lua.LState) int {
			t.mu.Lock()
			x, y := t.x, t.y
			t.mu.Unlock()
			L.Push(lua.LNumber(x))
			L.Push(lua.LNumber(y))
			return 2
		},
		"setCursorPos": func(L *lua.LState) int {
			t.SetCursorPos(int(L.CheckNumber(1)), int(L.CheckNumber(2)))
			return 0
		},
		"getCursorBlink": func(L *lua.LState) int {
			t.mu.Lock()
			defer t.mu.Unlock()
			L.Push(lua.LBool(t.blink))
			return 1
		},
		"setCursorBlink": func(L *lua.LState) int {
			on := L.CheckBool(1)
			t.mu.Lock()
			was := t.blink
			t.blink = on
			t.touch()
			t.mu.Unlock()
			if t.onBlink != nil {
				t.onBlink(was, on)
			}
			return 0
		},
		"getSize": func(L *lua.LState) int {
			w, h := t.Size()
			L.Push(lua.LNumber(w))
			L.Push(lua.LNumber(h))
			return 2
		},
		"isColour": func(L *lua.LState) int { L.Push(lua.LBool(t.colour)); return 1 },
		"setTextColour": func(L *lua.LState) int {
			c := checkColour(L, 1)
			t.mu.Lock()
			t.textColour = c
			t.touch()
			t.mu.Unlock()
			return 0
		},
		"getTextColour": func(L *lua.LState) int { L.Push(lua.LNumber(t.TextColour())); return 1 },
		"setBackgroundColour": func(L *lua.LState) int {
			c := checkColour(L, 1)
			t.mu.Lock()
			t.bgColour = c
			t.mu.Unlock()
			return 0
		},
		"getBackgroundColour": func(L *lua.LState) int {
			t.mu.Lock()
			defer t.mu.Unlock()
			L.Push(lua.LNumber(int(1) << t.bgColour))
			return 1
		},
		"setPaletteColour": func(L *lua.LState) int {
			c := checkColour(L, 1)
			var rgb uint32
			if L.GetTop() == 2 {
				rgb = uint32(L.CheckNumber(2)) & 0xFFFFFF
			} else {
				r, g, b := float64(L.CheckNumber(2)), float64(L.CheckNumber(3)), float64(L.CheckNumber(4))
				rgb = channel(r)<<16 | channel(g)<<8 | channel(b)
			}
			t.mu.Lock()
			t.palette[c] = rgb
			t.touch()
			t.mu.Unlock()
			return 0
		},
		"getPaletteColour": func(L *lua.LState) int {
			c := checkColour(L, 1)
			t.mu.Lock()
			rgb := t.palette[c]
			t.mu.Unlock()
			L.Push(lua.LNumber(float64(rgb>>16&0xFF) / 255))
			L.Push(lua.LNumber(float64(rgb>>8&0xFF) / 255))
			L.Push(lua.LNumber(float64(rgb&0xFF) / 255))
			return 3
		},
	}
	return fns
}

// TermAliases are the American spellings of the term API's British names: each is the
// same function.
var TermAliases = map[string]string{
	"isColour": "isColor", "setTextColour": "setTextColor", "getTextColour": "getTextColor",
	"setBackgroundColour": "setBackgroundColor", "getBackgroundColour": "getBackgroundColor",
	"setPaletteColour": "setPaletteColor", "getPaletteColour": "getPaletteColor",
}
