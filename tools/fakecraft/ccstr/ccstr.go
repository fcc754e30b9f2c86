// Package ccstr turns text from outside a computer into the bytes CC: Tweaked's Java side
// would hand its Lua: CC strings are byte strings, and CC encodes a Java string one
// character per byte, so text enters as Latin-1. fakecraft's flags and standard input are
// UTF-8 text; this is the one place they become CC's bytes.
package ccstr

import "unicode/utf8"

// FromText is s as CC stores a string the host gives it (a label, a setting's value): each
// character up to U+00FF becomes that one byte, any other becomes '?'. A byte that is not
// UTF-8 passes unchanged: it already is a CC byte.
func FromText(s string) string {
	out := make([]byte, 0, len(s))
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, s[0])
		case r <= 0xFF:
			out = append(out, byte(r))
		default:
			out = append(out, '?')
		}
		s = s[n:]
	}
	return string(out)
}

// MaxPaste is the longest paste CC: Tweaked passes on (its clipboard normalisation).
const MaxPaste = 512

// Clipboard is what CC makes of pasted text: the first line, at most MaxPaste characters,
// each character its font cannot show (controls, U+007F–U+00A0, the soft hyphen, anything
// past U+00FF) replaced with '?', as CC's bytes.
func Clipboard(p []byte) string {
	out := make([]byte, 0, len(p))
	count := 0
	for len(p) > 0 && count < MaxPaste {
		r, n := utf8.DecodeRune(p)
		p = p[n:]
		if r == '\r' || r == '\n' {
			break
		}
		count++
		if (r >= ' ' && r <= '~') || (r >= 161 && r <= 172) || (r >= 174 && r <= 255) {
			out = append(out, byte(r))
		} else {
			out = append(out, '?')
		}
	}
	return string(out)
}
