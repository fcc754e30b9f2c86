package console

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"fakecraft/computer"
)

func blankSnapshot() computer.Snapshot {
	var s computer.Snapshot
	for y := range s.Cells {
		for x := range s.Cells[y] {
			s.Cells[y][x] = computer.Cell{Char: ' ', FG: 0, BG: 15}
		}
	}
	s.Palette = computer.DefaultPalette
	s.Colour = true
	s.CursorX, s.CursorY = 1, 1
	return s
}

func TestFrameSendsOnlyChangedCells(t *testing.T) {
	r := Renderer{Mode: TrueColour}
	s := blankSnapshot()
	first := string(r.Frame(&s))
	assert.Contains(t, first, "\x1b[1;1H")
	assert.Contains(t, first, "\x1b[38;2;240;240;240;48;2;17;17;17m", "white on black, CC's RGB")

	s.Cells[2][4] = computer.Cell{Char: 'h', FG: 14, BG: 15}
	s.Cells[2][5] = computer.Cell{Char: 'i', FG: 14, BG: 15}
	second := string(r.Frame(&s))
	assert.Equal(t, "\x1b[?25l\x1b[3;5H\x1b[38;2;204;76;76;48;2;17;17;17mhi\x1b[0m", second)
}

func TestFrameShowsTheBlinkingCursor(t *testing.T) {
	r := Renderer{}
	s := blankSnapshot()
	s.Blink = true
	s.CursorX, s.CursorY = 7, 3
	assert.True(t, strings.HasSuffix(string(r.Frame(&s)), "\x1b[3;7H\x1b[?25h"))
	s.Blink = false
	assert.NotContains(t, string(r.Frame(&s)), "?25h")
}

func TestFrameRedrawsAllWhenThePaletteChanges(t *testing.T) {
	r := Renderer{Mode: TrueColour}
	s := blankSnapshot()
	r.Frame(&s)
	s.Palette[15] = 0x000080
	out := string(r.Frame(&s))
	assert.Equal(t, computer.TermWidth*computer.TermHeight, strings.Count(out, " "))
	assert.Contains(t, out, "48;2;0;0;128m")
}

func TestBasicComputerIsGreyscale(t *testing.T) {
	r := Renderer{Mode: TrueColour}
	s := blankSnapshot()
	s.Colour = false
	s.Cells[0][0] = computer.Cell{Char: 'x', FG: 14, BG: 15} // red: (204+76+76)/3 = 118
	assert.Contains(t, string(r.Frame(&s)), "38;2;118;118;118;")
}

// TestGreyscaleIsCCs: each colour's grey is the one CC: Tweaked computes, for every byte
// colour: its Palette takes the channels as floats of byte/255 (Colour, decodeRGB8) and
// shows (int)((r + g + b) / 3 * 255), a cut, not a rounding. Where the two differ (a sum 2
// past a multiple of 3: CC's lime #7fcc19 is 118, rounded 119) the surfaces disagreed.
func TestGreyscaleIsCCs(t *testing.T) {
	ccGrey := func(rgb uint32) uint32 {
		channel := func(b uint32) float64 { return float64(float32(b) / 255) }
		sum := channel(rgb>>16&0xFF) + channel(rgb>>8&0xFF) + channel(rgb&0xFF)
		g := uint32(sum / 3 * 255)
		return g<<16 | g<<8 | g
	}
	edges := [16]uint32{0x7FCC19, 0x020000, 0xE57FD8, 0xFFFFFE, 0x4C99B2, 0xB266E5, 0x7F664C, 0xCC4C4C}
	assert.Equal(t, [16]uint32{0x767676, 0, 0xBEBEBE, 0xFEFEFE, 0x878787, 0xA9A9A9, 0x656565, 0x767676}, Greyscale(edges),
		"the channels' average cut, where rounding goes a step up")
	for rgb := uint32(0); rgb <= 0xFFFFFF; rgb += 16 {
		var p [16]uint32
		for i := range p {
			p[i] = rgb + uint32(i)
		}
		got := Greyscale(p)
		for i, c := range p {
			if want := ccGrey(c); got[i] != want {
				t.Fatalf("Greyscale(#%06x) = #%06x, CC shows #%06x", c, got[i], want)
			}
		}
	}
}

func TestNearest256(t *testing.T) {
	assert.Equal(t, 231, nearest256(0xFFFFFF))
	assert.Equal(t, 16, nearest256(0x000000))
	assert.Equal(t, 233, nearest256(0x111111), "CC's black is a dark grey")
	assert.Equal(t, 167, nearest256(0xCC4C4C), "CC's red")
}

// TestFrameDrawsCCGlyphs: the screen shows each byte as CC's font draws it, so a label or
// text typed as CC's bytes reads right in the real terminal.
func TestFrameDrawsCCGlyphs(t *testing.T) {
	var r Renderer
	s := blankSnapshot()
	for i, c := range []byte("k\xfcche\x10\x81") {
		s.Cells[0][i] = computer.Cell{Char: c, FG: 0, BG: 15}
	}
	assert.Contains(t, string(r.Frame(&s)), "küche►\U0001FB00")
}
