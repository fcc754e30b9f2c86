package console

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"fakecraft/computer"
)

// TestFrameOfAPocketComputer: a pocket computer's 26x20 screen is drawn whole, its 20th
// row too (a snapshot held 51x19 cells), and nothing right of its 26th column.
func TestFrameOfAPocketComputer(t *testing.T) {
	r := Renderer{Mode: TrueColour}
	s := blankSnapshot()
	s.Width, s.Height = computer.PocketWidth, computer.PocketHeight
	s.Cells[19][25] = computer.Cell{Char: 'z', FG: 0, BG: 15}
	s.Cells[0][26] = computer.Cell{Char: 'X', FG: 0, BG: 15} // past its edge: not its screen
	out := string(r.Frame(&s))
	assert.Contains(t, out, "\x1b[20;1H", "the 20th row is drawn")
	assert.Contains(t, out, "z")
	assert.NotContains(t, out, "X")
	assert.Equal(t, computer.PocketWidth*computer.PocketHeight-1, strings.Count(out, " "))

	// The cursor on the 20th row shows; past the 26th column it does not.
	s.Blink = true
	s.CursorX, s.CursorY = 3, 20
	assert.True(t, strings.HasSuffix(string(r.Frame(&s)), "\x1b[20;3H\x1b[?25h"))
	s.CursorX = 27
	assert.NotContains(t, string(r.Frame(&s)), "?25h")
}

// TestDecoderMouseOnAPocketComputer: the mouse reports are cells of the computer on show:
// on a pocket computer's 26x20 a click at column 27 is off its screen, one on row 20 is on
// it, and a drag off it is held to its 26x20 edge.
func TestDecoderMouseOnAPocketComputer(t *testing.T) {
	ev := func(name string, button, x, y int) Event { return Event{Name: name, Button: button, X: x, Y: y} }
	d := Decoder{Screen: func() (int, int) { return computer.PocketWidth, computer.PocketHeight }}
	assert.Empty(t, events(d.Feed([]byte("\x1b[<0;27;1M"))))
	assert.Equal(t, []Event{ev("mouse_click", 1, 26, 20)}, events(d.Feed([]byte("\x1b[<0;26;20M"))))
	assert.Equal(t, []Event{ev("mouse_drag", 1, 26, 20), ev("mouse_up", 1, 26, 20)},
		events(d.Feed([]byte("\x1b[<32;80;30M\x1b[<0;80;30m"))))
}
