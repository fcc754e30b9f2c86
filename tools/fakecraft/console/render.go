package console

import (
	"bytes"
	"fmt"

	"fakecraft/ccstr"
	"fakecraft/computer"
)

// ColourMode is how the renderer names colours to the real terminal.
type ColourMode int

// Colour modes: 24-bit RGB (the palette as it is), or the nearest of xterm's 256.
const (
	Colour256 ColourMode = iota
	TrueColour
)

// Renderer turns terminal snapshots into ANSI output for a real terminal, sending only
// the cells that changed since the last frame. The computer's screen is drawn at the top
// left corner of the real one.
type Renderer struct {
	Mode ColourMode
	// Width and Height are the real terminal's size in cells (0: unknown, no limit). A
	// smaller terminal shows the screen's top left corner: a row drawn past its right edge
	// would wrap onto the next and, at the bottom, scroll the terminal.
	Width, Height int
	prev          *computer.Snapshot
	buf           bytes.Buffer
}

// fits reports whether the computer's cell x, y (0-based) is on the real terminal.
func (r *Renderer) fits(x, y int) bool {
	return (r.Width <= 0 || x < r.Width) && (r.Height <= 0 || y < r.Height)
}

// mouseOn asks the terminal for mouse reports: presses and releases (1000), drags (1002),
// in SGR form (1006), which has no limit on the column. mouseOff turns them off again.
const (
	mouseOn  = "\x1b[?1000h\x1b[?1002h\x1b[?1006h"
	mouseOff = "\x1b[?1006l\x1b[?1002l\x1b[?1000l"
)

// Start is the output that prepares the real terminal: the alternate screen, cleared,
// bracketed paste and mouse reports on, a blinking underline cursor (CC's) hidden until a
// program shows it.
func Start() []byte { return start(mouseOn) }

// StartWithoutMouse is Start with the mouse reports off, for a view that sends no clicks:
// while they are on, the terminal gives its user's mouse to the program, and text cannot be
// selected with it. MouseReports turns them on when clicks are sent.
func StartWithoutMouse() []byte { return start("") }

func start(mouse string) []byte {
	return []byte("\x1b[?1049h\x1b[?2004h" + mouse + "\x1b[0m\x1b[2J\x1b[3 q\x1b[?25l")
}

// MouseReports is the output that turns the terminal's mouse reports on or off (Stop turns
// them off whichever they are).
func MouseReports(on bool) []byte {
	if on {
		return []byte(mouseOn)
	}
	return []byte(mouseOff)
}

// Stop is the output that gives the real terminal back as it was.
func Stop() []byte {
	return []byte("\x1b[0m\x1b[0 q\x1b[?25h" + mouseOff + "\x1b[?2004l\x1b[?1049l")
}

// Invalidate makes the next frame redraw every cell (after the real screen was cleared).
func (r *Renderer) Invalidate() { r.prev = nil }

// Frame returns the output that turns the last frame into s.
func (r *Renderer) Frame(s *computer.Snapshot) []byte {
	r.buf.Reset()
	r.buf.WriteString("\x1b[?25l")
	palette := s.Palette
	if !s.Colour {
		palette = Greyscale(palette)
	}
	paletteChanged := r.prev == nil || r.prev.Palette != s.Palette || r.prev.Colour != s.Colour
	var fg, bg int = -1, -1
	w, h := s.Size()
	if r.prev != nil {
		if pw, ph := r.prev.Size(); pw != w || ph != h {
			r.prev = nil // another computer's screen: draw it whole
			paletteChanged = true
		}
	}
	for y := range h {
		cursorAt := -1 // column the real cursor is known to be at on this row
		for x, cell := range s.Cells[y][:w] {
			if !r.fits(x, y) || !paletteChanged && r.prev.Cells[y][x] == cell {
				continue
			}
			if cursorAt != x {
				fmt.Fprintf(&r.buf, "\x1b[%d;%dH", y+1, x+1)
			}
			if int(cell.FG) != fg || int(cell.BG) != bg {
				r.colours(palette[cell.FG&15], palette[cell.BG&15])
				fg, bg = int(cell.FG), int(cell.BG)
			}
			r.buf.WriteString(ccstr.Glyph(cell.Char))
			cursorAt = x + 1
		}
	}
	r.buf.WriteString("\x1b[0m")
	x, y := s.CursorX, s.CursorY
	if s.Blink && x >= 1 && x <= w && y >= 1 && y <= h && r.fits(x-1, y-1) {
		fmt.Fprintf(&r.buf, "\x1b[%d;%dH\x1b[?25h", y, x)
	}
	snap := *s
	r.prev = &snap
	return r.buf.Bytes()
}

// colours writes the SGR sequence for a foreground and background RGB.
func (r *Renderer) colours(fg, bg uint32) {
	if r.Mode == TrueColour {
		fmt.Fprintf(&r.buf, "\x1b[38;2;%d;%d;%d;48;2;%d;%d;%dm",
			fg>>16&0xFF, fg>>8&0xFF, fg&0xFF, bg>>16&0xFF, bg>>8&0xFF, bg&0xFF)
		return
	}
	fmt.Fprintf(&r.buf, "\x1b[38;5;%d;48;5;%dm", nearest256(fg), nearest256(bg))
}

// Greyscale is how a basic computer shows the palette: each colour as the grey of the
// average of its channels cut to a whole step, never rounded, as CC: Tweaked draws monochrome
// terminals (its Palette: (int) of the channels' average times 255, each channel a float of
// byte/255; for every byte colour that is the integer division here, TestGreyscaleIsCCs).
// The gateway's agent and its terminal view (trap-sandbox screen) read a basic computer's
// palette through it; the web console's page has the same rule in its JavaScript (colourOf).
func Greyscale(p [16]uint32) [16]uint32 {
	for i, c := range p {
		g := (c>>16&0xFF + c>>8&0xFF + c&0xFF) / 3
		p[i] = g<<16 | g<<8 | g
	}
	return p
}

// cubeLevels are the channel values of xterm's 6x6x6 colour cube (indices 16-231).
var cubeLevels = [6]int{0, 95, 135, 175, 215, 255}

// nearest256 is the xterm-256 colour closest to rgb: a cube colour or one of the 24 greys
// (232-255), whichever is nearer. The 16 system colours are skipped: terminals theme them.
func nearest256(rgb uint32) int {
	r, g, b := int(rgb>>16&0xFF), int(rgb>>8&0xFF), int(rgb&0xFF)
	level := func(v int) int {
		best := 0
		for i, l := range cubeLevels {
			if abs(l-v) < abs(cubeLevels[best]-v) {
				best = i
			}
		}
		return best
	}
	ri, gi, bi := level(r), level(g), level(b)
	cube := 16 + 36*ri + 6*gi + bi
	cubeDist := sq(cubeLevels[ri]-r) + sq(cubeLevels[gi]-g) + sq(cubeLevels[bi]-b)
	avg := (r + g + b) / 3
	gi2 := (avg - 3) / 10
	if gi2 < 0 {
		gi2 = 0
	} else if gi2 > 23 {
		gi2 = 23
	}
	gv := 8 + 10*gi2
	greyDist := sq(gv-r) + sq(gv-g) + sq(gv-b)
	if greyDist < cubeDist {
		return 232 + gi2
	}
	return cube
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sq(v int) int { return v * v }
