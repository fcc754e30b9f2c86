package computer

import (
	"bytes"
	"io"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// Terminal size of a CC: Tweaked computer.
const (
	TermWidth  = 51
	TermHeight = 19
)

// Colour values CC's colors API uses for the defaults.
const (
	colourWhite = 1
	colourBlack = 32768
)

// Terminal is the computer's 51x19 text screen plus the transcript: every piece of text
// written to it, with a line break each time the cursor leaves a row or the screen scrolls,
// so lines that scroll off the top are kept (as CraftOS-PC's headless mode prints them).
// mu guards every field because Screen and Transcript are read from other goroutines.
type Terminal struct {
	mu         sync.Mutex
	grid       [TermHeight][]byte
	x, y       int // 1-based cursor; may be off-screen
	textColour int
	bgColour   int
	blink      bool
	colour     bool
	line       bytes.Buffer // transcript text of the current row, not yet ended
	transcript bytes.Buffer
	out        io.Writer
	outErr     error
	// onBlink, when set, hears every setCursorBlink (the old and the new state), outside mu.
	onBlink func(was, on bool)
}

// NewTerminal returns a cleared terminal that copies finished transcript lines to out
// (which may be nil). colour says whether it is an advanced (colour) terminal.
func NewTerminal(out io.Writer, colour bool) *Terminal {
	t := &Terminal{x: 1, y: 1, textColour: colourWhite, bgColour: colourBlack, colour: colour, out: out}
	for i := range t.grid {
		t.grid[i] = bytes.Repeat([]byte{' '}, TermWidth)
	}
	return t
}

// endLine finishes the current transcript line. Caller holds mu.
func (t *Terminal) endLine() {
	t.line.WriteByte('\n')
	t.transcript.Write(t.line.Bytes())
	if t.out != nil && t.outErr == nil {
		_, t.outErr = t.out.Write(t.line.Bytes())
	}
	t.line.Reset()
}

// Flush ends a partly written transcript line, as at shutdown.
func (t *Terminal) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.line.Len() > 0 {
		t.endLine()
	}
}

// Write puts text at the cursor and moves the cursor past it; text outside the screen is clipped.
func (t *Terminal) Write(text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.line.WriteString(text)
	if t.y >= 1 && t.y <= TermHeight {
		row := t.grid[t.y-1]
		for i := 0; i < len(text); i++ {
			col := t.x + i
			if col >= 1 && col <= TermWidth {
				row[col-1] = printable(text[i])
			}
		}
	}
	t.x += len(text)
}

// printable maps control characters to spaces as CC's terminal does for display.
func printable(c byte) byte {
	if c < 32 {
		return ' '
	}
	return c
}

// SetCursorPos moves the cursor; leaving the row ends the transcript line.
func (t *Terminal) SetCursorPos(x, y int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if y != t.y {
		t.endLine()
	}
	t.x, t.y = x, y
}

// Scroll moves the screen contents up by n rows (down when negative) and ends the transcript line.
func (t *Terminal) Scroll(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n == 0 {
		return
	}
	t.endLine()
	var next [TermHeight][]byte
	for i := range next {
		src := i + n
		if src >= 0 && src < TermHeight {
			next[i] = t.grid[src]
		} else {
			next[i] = bytes.Repeat([]byte{' '}, TermWidth)
		}
	}
	t.grid = next
}

// Clear blanks the screen.
func (t *Terminal) Clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.grid {
		t.grid[i] = bytes.Repeat([]byte{' '}, TermWidth)
	}
}

// ClearLine blanks the cursor's row.
func (t *Terminal) ClearLine() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.y >= 1 && t.y <= TermHeight {
		t.grid[t.y-1] = bytes.Repeat([]byte{' '}, TermWidth)
	}
}

// Screen returns the 19 rows of the screen, trailing spaces trimmed, joined with newlines.
func (t *Terminal) Screen() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	rows := make([]string, TermHeight)
	for i, r := range t.grid {
		rows[i] = strings.TrimRight(string(r), " ")
	}
	return strings.Join(rows, "\n")
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
	return t.textColour
}

// checkColour validates a colors.* value (one bit of the low 16).
func checkColour(L *lua.LState, n int) int {
	c := int(L.CheckNumber(n))
	if c <= 0 || c > 0xFFFF || c&(c-1) != 0 {
		L.RaiseError("Colour out of range")
	}
	return c
}

// install builds the native term table.
func (t *Terminal) install(L *lua.LState) *lua.LTable {
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
			t.Write(text)
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
			t.mu.Unlock()
			if t.onBlink != nil {
				t.onBlink(was, on)
			}
			return 0
		},
		"getSize": func(L *lua.LState) int {
			L.Push(lua.LNumber(TermWidth))
			L.Push(lua.LNumber(TermHeight))
			return 2
		},
		"isColour": func(L *lua.LState) int { L.Push(lua.LBool(t.colour)); return 1 },
		"setTextColour": func(L *lua.LState) int {
			c := checkColour(L, 1)
			t.mu.Lock()
			t.textColour = c
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
			L.Push(lua.LNumber(t.bgColour))
			return 1
		},
	}
	tbl := L.NewTable()
	for name, fn := range fns {
		tbl.RawSetString(name, L.NewFunction(fn))
	}
	for british, american := range map[string]string{
		"isColour": "isColor", "setTextColour": "setTextColor", "getTextColour": "getTextColor",
		"setBackgroundColour": "setBackgroundColor", "getBackgroundColour": "getBackgroundColor",
	} {
		tbl.RawSetString(american, tbl.RawGetString(british))
	}
	return tbl
}
