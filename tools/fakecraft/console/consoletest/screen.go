// Package consoletest reads what fakecraft's console draws, as a real terminal would, so
// tests can wait for text to appear on screen. It understands the ANSI sequences the
// console sends (cursor position, colours, clear, cursor visibility) and UTF-8 text, and
// does what a real terminal does with text past its right edge (autowrap: the next row,
// scrolling at the bottom) and with a cursor position past its edges (held to them).
package consoletest

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Screen is a terminal's cell grid fed with output bytes. Safe for concurrent use.
type Screen struct {
	mu            sync.Mutex
	width, height int
	cells         [][]rune
	fg            [][]string // SGR foreground of each cell, as sent ("38;5;185"), "" for default
	curFG         string
	x, y          int // 0-based cursor; x may be width: the next character wraps
	cursorVisible bool
	noWrap        bool // autowrap (DECAWM, ESC[?7h) is off: ESC[?7l
	pending       []byte
	changed       chan struct{}
}

// NewScreen returns a blank screen of the given size.
func NewScreen(width, height int) *Screen {
	s := &Screen{width: width, height: height, changed: make(chan struct{}, 1)}
	s.clear()
	return s
}

func (s *Screen) clear() {
	s.cells = make([][]rune, s.height)
	s.fg = make([][]string, s.height)
	for i := range s.cells {
		s.cells[i] = []rune(strings.Repeat(" ", s.width))
		s.fg[i] = make([]string, s.width)
	}
}

// Changed receives a value after output was written.
func (s *Screen) Changed() <-chan struct{} { return s.changed }

// Write feeds terminal output.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := append(s.pending, p...)
	s.pending = nil
	for len(buf) > 0 {
		n := s.step(buf)
		if n == 0 {
			s.pending = append([]byte(nil), buf...)
			break
		}
		buf = buf[n:]
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

// step interprets the start of buf and returns how many bytes it used (0: incomplete).
func (s *Screen) step(buf []byte) int {
	if buf[0] == 0x1b {
		if len(buf) < 2 {
			return 0
		}
		if buf[1] != '[' {
			return 2
		}
		i := 2
		for i < len(buf) && buf[i] >= 0x20 && buf[i] <= 0x3f {
			i++
		}
		if i >= len(buf) {
			return 0
		}
		s.csi(string(buf[2:i]), buf[i])
		return i + 1
	}
	if !utf8.FullRune(buf) {
		return 0
	}
	r, n := utf8.DecodeRune(buf)
	switch r {
	case '\r':
		s.x = 0
	case '\n':
		s.lineFeed()
	default:
		if s.x >= s.width {
			if s.noWrap {
				s.x = s.width - 1
			} else {
				s.x = 0
				s.lineFeed()
			}
		}
		s.cells[s.y][s.x] = r
		s.fg[s.y][s.x] = s.curFG
		s.x++
	}
	return n
}

// lineFeed moves the cursor down a row, scrolling the screen up at the bottom.
func (s *Screen) lineFeed() {
	if s.y < s.height-1 {
		s.y++
		return
	}
	s.cells = append(s.cells[1:], []rune(strings.Repeat(" ", s.width)))
	s.fg = append(s.fg[1:], make([]string, s.width))
}

func (s *Screen) csi(params string, final byte) {
	switch final {
	case 'H':
		row, col := 1, 1
		parts := strings.Split(params, ";")
		if len(parts) >= 1 && parts[0] != "" {
			row = atoi(parts[0])
		}
		if len(parts) >= 2 && parts[1] != "" {
			col = atoi(parts[1])
		}
		s.x, s.y = min(max(col, 1), s.width)-1, min(max(row, 1), s.height)-1
	case 'm':
		s.sgr(params)
	case 'J':
		if params == "2" {
			s.clear()
		}
	case 'h', 'l':
		switch params {
		case "?25":
			s.cursorVisible = final == 'h'
		case "?7":
			s.noWrap = final == 'l'
		}
	}
}

// sgr follows the foreground colour: 38;5;n and 38;2;r;g;b set it, 0 (or nothing) resets.
func (s *Screen) sgr(params string) {
	parts := strings.Split(params, ";")
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "", "0":
			s.curFG = ""
		case "38":
			if i+2 < len(parts) && parts[i+1] == "5" {
				s.curFG = strings.Join(parts[i:i+3], ";")
				i += 2
			} else if i+4 < len(parts) && parts[i+1] == "2" {
				s.curFG = strings.Join(parts[i:i+5], ";")
				i += 4
			}
		case "48":
			if i+1 < len(parts) && parts[i+1] == "5" {
				i += 2
			} else {
				i += 4
			}
		}
	}
}

// Foreground is the SGR foreground the cell at x, y (1-based) was drawn with, as sent
// ("38;5;185"), or "" for the terminal's default.
func (s *Screen) Foreground(x, y int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fg[y-1][x-1]
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// Text is the screen's rows, trailing spaces trimmed, joined with newlines.
func (s *Screen) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := make([]string, len(s.cells))
	for i, r := range s.cells {
		rows[i] = strings.TrimRight(string(r), " ")
	}
	return strings.Join(rows, "\n")
}

// Row is one row of the screen (0-based), trailing spaces trimmed.
func (s *Screen) Row(y int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimRight(string(s.cells[y]), " ")
}

// Cursor is the cursor position (1-based) and whether it is shown.
func (s *Screen) Cursor() (x, y int, visible bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.x + 1, s.y + 1, s.cursorVisible
}
