package computer

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"sync"

	"fakecraft/ccstr"
)

// Terminal sizes of CC: Tweaked's computers (its Config's computerTermWidth/Height and
// pocketTermWidth/Height, the server's defaults).
const (
	TermWidth  = 51 // an ordinary or advanced computer's
	TermHeight = 19
	// PocketWidth and PocketHeight are a pocket computer's screen.
	PocketWidth  = 26
	PocketHeight = 20
	// MaxWidth and MaxHeight hold every computer's screen: a Snapshot's cells.
	MaxWidth  = TermWidth
	MaxHeight = PocketHeight
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
	// Width and Height are the screen's size: Cells holds it in its top left corner. Zero
	// means a computer's 51x19 (TermWidth, TermHeight), for a Snapshot built by hand.
	Width, Height int
	Cells         [MaxHeight][MaxWidth]Cell
	// CursorX and CursorY are 1-based and may be off-screen.
	CursorX, CursorY int
	Blink            bool
	// CursorFG is the text colour index, the colour CC draws the blinking cursor in.
	CursorFG uint8
	Palette  [16]uint32
	Colour   bool
}

// Size is the screen's size (Width and Height, or 51x19 when they are zero).
func (s *Snapshot) Size() (w, h int) {
	if s.Width <= 0 || s.Height <= 0 {
		return TermWidth, TermHeight
	}
	return min(s.Width, MaxWidth), min(s.Height, MaxHeight)
}

// Terminal is a text screen: the computer's (51x19, 26x20 on a pocket computer, with its
// transcript) or a monitor's (any size, resizable, no transcript). mu guards every field
// because Screen, Snapshot and Transcript are read from other goroutines.
//
// The transcript is the text written to the screen, a line for each stay of the cursor on a
// row: the line ends when the cursor leaves the row, the screen scrolls, or at the end
// (Flush), and then holds what the program wrote on the row that is still there, column by
// column, so lines that scroll off the top are kept, as CraftOS-PC's headless mode prints
// them. Text written over is gone, text blanked again at the row's end too (endLine), and a
// clear or clearLine erases all the line's text so far: the transcript never reports text
// the screen no longer showed when the line ended (a notice that clearLine erased). A row
// off the screen shows nothing and leaves no line. Two things are kept that the screen does
// not show: text written on past the right edge (the screen cuts it off; the transcript keeps
// it, so that a test sees a line too long for the screen), and a typed line whole where
// read() shows only its tail (restoreTyped). A line, once ended, stays: what happens to its
// row later (cleared, written over) is a later line's business.
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
	// typed is the line Input is typing (its bytes as the keys put them in CC), from when
	// its keys are queued until the row the cursor was on then, typedRow, which echoes it,
	// ends, or the computer took its Enter (Typing): that row may show only its tail
	// (restoreTyped).
	typed      []byte
	typedRow   int
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
	return newScreen(out, colour, TermWidth, TermHeight)
}

// newScreen is a computer's own screen of w x h (a pocket computer's is 26x20), with a
// transcript, as NewTerminal.
func newScreen(out io.Writer, colour bool, w, h int) *Terminal {
	t := NewSizedTerminal(w, h, colour)
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
// are left out; blanks that were only ever blanks (a prompt's "> ") stay. A row off the
// screen, which shows nothing, leaves no line. Caller holds mu.
func (t *Terminal) endLine() {
	if !t.transcribe || t.y < 1 || t.y > t.h {
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
	line := ccstr.Shown(string(t.restoreTyped(t.line[:end]))) + "\n"
	t.transcript.WriteString(line)
	if t.out != nil && t.outErr == nil {
		_, t.outErr = io.WriteString(t.out, line)
	}
	t.line = t.line[:0]
	t.inked = t.inked[:0]
}

// eraseLine forgets the transcript text of the cursor's row so far: the screen blanked the
// whole row (clear, clearLine), so none of it shows any more. What the program writes on
// the row next starts the line again, blanks before it as the screen shows them. Caller
// holds mu.
func (t *Terminal) eraseLine() {
	t.line = t.line[:0]
	t.inked = t.inked[:0]
}

// Typing says which line Input is typing now (nil: none), for the row that echoes it: the
// cursor's, where read() waits.
func (t *Terminal) Typing(line []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.typed, t.typedRow = line, t.y
}

// restoreTyped is the transcript text of a row, text, with the line being typed whole where
// the row shows only its tail. CC's read() scrolls a line left once it would pass the right
// edge, its first bytes going under the prompt's column, so a row that echoed a typed line
// as long as the row (a 49-byte wget line after "> ") kept only what it showed at the Enter
// ("> get run …"), though the whole line was typed and run. Such a row is full to the
// column before the cursor's, the last, and ends with a part of the line: the row's text
// before that part, then the whole line. A line read with a
// replacement character (a password's *) shows no part of it, and stays as it shows.
// Caller holds mu.
func (t *Terminal) restoreTyped(text []byte) []byte {
	if len(t.typed) == 0 || t.y != t.typedRow {
		return text
	}
	typed := t.typed
	t.typed = nil // its row ended: what the program prints next is no echo of it
	if len(text) < t.w-1 {
		return text
	}
	// The longest part that ends the row is the one shown: a line that repeats itself
	// ("yyyy") also ends with shorter parts of it, and one the row shows whole is kept.
	for cut := 0; cut < len(typed); cut++ {
		if tail := typed[cut:]; bytes.HasSuffix(text, tail) {
			return append(slices.Clip(text[:len(text)-len(tail)]), typed...)
		}
	}
	return text
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
	onScreen := t.y >= 1 && t.y <= t.h
	for i := 0; i < len(text) && t.transcribe && onScreen; i++ {
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
	if onScreen {
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
	t.eraseLine()
	t.touch()
}

// ClearLine blanks the cursor's row in the current background colour.
func (t *Terminal) ClearLine() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.y >= 1 && t.y <= t.h {
		t.blankRow(t.y - 1)
		t.eraseLine()
	}
	t.touch()
}

// Screen returns the rows of the screen as text (each character as CC's font shows it,
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
// MaxWidth x MaxHeight corner).
func (t *Terminal) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Snapshot{
		Width: min(t.w, MaxWidth), Height: min(t.h, MaxHeight),
		CursorX: t.x, CursorY: t.y, Blink: t.blink, CursorFG: t.textColour,
		Palette: t.palette, Colour: t.colour,
	}
	for y := 0; y < s.Height; y++ {
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

// CursorBlink reports whether the cursor blinks.
func (t *Terminal) CursorBlink() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.blink
}

// SetCursorBlink turns the cursor's blink on or off; onBlink hears the change (outside mu).
func (t *Terminal) SetCursorBlink(on bool) {
	t.mu.Lock()
	was := t.blink
	t.blink = on
	t.touch()
	t.mu.Unlock()
	if t.onBlink != nil {
		t.onBlink(was, on)
	}
}

// IsColour reports whether this is an advanced (colour) terminal.
func (t *Terminal) IsColour() bool { return t.colour }

// SetTextColour sets the colour (an index, 0-15) that text is written in from now on.
func (t *Terminal) SetTextColour(index uint8) {
	t.mu.Lock()
	t.textColour = index
	t.touch()
	t.mu.Unlock()
}

// BackgroundColour returns the current background colour (a colors.* value).
func (t *Terminal) BackgroundColour() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return 1 << t.bgColour
}

// SetBackgroundColour sets the colour (an index, 0-15) that writing and clearing paint
// behind text from now on. Nothing on the screen changes, so renderers are not told.
func (t *Terminal) SetBackgroundColour(index uint8) {
	t.mu.Lock()
	t.bgColour = index
	t.mu.Unlock()
}

// PaletteColour returns the RGB (0xRRGGBB) that colour index shows as.
func (t *Terminal) PaletteColour(index uint8) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.palette[index]
}

// SetPaletteColour makes colour index show as rgb (0xRRGGBB).
func (t *Terminal) SetPaletteColour(index uint8, rgb uint32) {
	t.mu.Lock()
	t.palette[index] = rgb
	t.touch()
	t.mu.Unlock()
}
