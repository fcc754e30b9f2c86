// Package ccstr is the one place where text crosses a computer's edge. CC strings are byte
// strings; CC: Tweaked's Java side holds a Lua string as a Java string of one character per
// byte (U+0000–U+00FF) and encodes a Java string back one byte per character.
//
// Text from outside (fakecraft's flags, standard input, a paste, a websocket's close reason,
// which Netty decodes as UTF-8, a host file's name) enters that way: FromText, Clipboard,
// Label; a file name goes back to the host disk as ToText, and so does an http or websocket
// URL, which Netty then writes as UTF-8. What leaves
// goes out the way CC hands it over: as its font draws it on a screen (Glyph) or in a
// transcript (Shown), or decoded as UTF-8 where CC decodes it (DecodeUTF8: a websocket's
// text frames). HTTP bodies and websocket
// messages received cross as bytes, in both directions, and need nothing here.
package ccstr

import (
	"unicode/utf8"
)

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

// ToText is s as CC's Java side hands a string to Java code that wants text and draws
// nothing (a file name on the host disk): each byte is the character of that code point
// (U+0000–U+00FF), UTF-8 encoded. FromText(ToText(s)) is s.
func ToText(s string) string {
	if isASCII(s) {
		return s
	}
	out := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = rune(s[i])
	}
	return string(out)
}

// allowed reports whether CC's font can show c; CC turns anything else a person types,
// pastes or names a computer with into '?'.
func allowed(c rune) bool {
	return (c >= ' ' && c <= '~') || (c >= 161 && c <= 172) || (c >= 174 && c <= 255)
}

// MaxLabel is the longest computer label CC keeps, in characters (bytes).
const MaxLabel = 32

// Label is label as os.setComputerLabel stores it: its first MaxLabel bytes, each one the
// font cannot show replaced with '?'.
func Label(label string) string {
	if len(label) > MaxLabel {
		label = label[:MaxLabel]
	}
	out := []byte(label)
	for i, c := range out {
		if !allowed(rune(c)) {
			out[i] = '?'
		}
	}
	return string(out)
}

// OptLabel is an optional label (a computer's, a disk's) as CC stores it: nil, none, stays
// nil; a text is Label's. The empty string is a label, not none: CC keeps
// os.setComputerLabel("") as "" (its OSAPI maps only nil to none), and says so back.
func OptLabel(label *string) *string {
	if label == nil {
		return nil
	}
	s := Label(*label)
	return &s
}

// MaxPaste is the longest paste CC: Tweaked passes on (its clipboard normalisation).
const MaxPaste = 512

// Clipboard is what CC makes of pasted text: the first line, at most MaxPaste characters,
// each character its font cannot show (controls, U+007F–U+00A0, the soft hyphen, anything
// past U+00FF) replaced with '?', as CC's bytes. Characters are a Java string's: one past
// U+FFFF (an emoji) is two UTF-16 chars, so it becomes "??" and counts twice towards
// MaxPaste, which may cut between the two.
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
		switch {
		case allowed(r):
			out = append(out, byte(r))
		case r > 0xFFFF && count < MaxPaste:
			count++
			out = append(out, '?', '?')
		default:
			out = append(out, '?')
		}
	}
	return string(out)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
