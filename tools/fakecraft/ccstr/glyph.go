package ccstr

import (
	"strings"
	"unicode/utf8"
)

// lowGlyphs are the pictures CC's font has for bytes 0-31, the code page 437 symbols
// (from CC: Tweaked's term_font.png); 0, 9, 10 and 13 are blank there.
var lowGlyphs = [32]rune{
	' ', '☺', '☻', '♥', '♦', '♣', '♠', '•', '◘', ' ', ' ', '♂', '♀', ' ', '♪', '♫',
	'►', '◄', '↕', '‼', '¶', '§', '▬', '↨', '↑', '↓', '→', '←', '∟', '↔', '▲', '▼',
}

// Glyph is the character CC's font draws for byte c, as UTF-8: ASCII as is, 0-31 their
// code page 437 symbols, 127 a checkerboard, 128-159 the 2x3 "teletext" blocks (Unicode's
// sextants), 160-255 Latin-1.
func Glyph(c byte) string {
	switch {
	case c >= 32 && c < 127:
		return string(rune(c))
	case c < 32:
		return string(lowGlyphs[c])
	case c == 127:
		return "▒"
	case c < 160:
		return sextant(int(c - 128))
	}
	return string(rune(c))
}

// Shown is s as text for a reader outside the computer (a transcript, a log): printable ASCII,
// tabs and line breaks as they were written (print's tab separators stay tabs, a message's
// lines stay lines), every other byte as CC's font draws it (Glyph): 128-255 in UTF-8, and
// the control bytes (ESC, BEL, CR, backspace, DEL, ...) as their pictures, as the screen shows
// them. Written as they were, a program's "\27]52;c;...\7" or "\27[2J" drove the terminal
// the transcript was printed on (set its clipboard or title, cleared it), and "\r" wrote a
// line over the one before it, where CC's screen shows a row of glyphs.
func Shown(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; passesAsWritten(c) {
			b.WriteByte(c)
		} else {
			b.WriteString(Glyph(c))
		}
	}
	return b.String()
}

// passesAsWritten reports whether Shown keeps byte c as it is: printable ASCII, tab, line feed.
func passesAsWritten(c byte) bool {
	return c >= 32 && c < 127 || c == '\t' || c == '\n'
}

// isPlain reports whether Shown returns s unchanged.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if !passesAsWritten(s[i]) {
			return false
		}
	}
	return true
}

// sextant is the block character with the cells of bits set: 1 top left, 2 top right,
// 4 middle left, 8 middle right, 16 bottom left (CC's layout, which is also Unicode's
// sextant numbering). Unicode leaves out the patterns that older blocks already have.
func sextant(bits int) string {
	switch bits {
	case 0:
		return " "
	case 21:
		return "▌"
	}
	n := bits - 1
	if bits > 21 {
		n--
	}
	var b [4]byte
	return string(b[:utf8.EncodeRune(b[:], rune(0x1FB00+n))])
}
