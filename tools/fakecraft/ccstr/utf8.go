package ccstr

import (
	"strings"
	"unicode/utf8"
)

// DecodeUTF8 is s decoded as UTF-8 the way CC's Java side decodes bytes it sends as text
// (a websocket's text frame): Java's decoder with REPLACE turns every maximal ill-formed
// subsequence into one U+FFFD (so "\xE2\x82A" gives one, "\xFF\xFF" two).
func DecodeUTF8(s string) string {
	if utf8.ValidString(s) { // same definition of well-formed as Java's
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			b.WriteByte(c)
			i++
			continue
		}
		need, lo, hi := utf8Lead(c)
		if need == 0 {
			b.WriteString("\uFFFD")
			i++
			continue
		}
		j := i + 1
		ok := true
		for k := 0; k < need; k++ {
			if j >= len(s) {
				ok = false
				break
			}
			cc := s[j]
			l, h := byte(0x80), byte(0xBF)
			if k == 0 {
				l, h = lo, hi
			}
			if cc < l || cc > h {
				ok = false
				break
			}
			j++
		}
		if ok {
			b.WriteString(s[i:j])
		} else {
			b.WriteString("\uFFFD")
		}
		i = j
	}
	return b.String()
}

// utf8Lead returns how many continuation bytes lead byte c needs and the allowed range of
// the first one; need is 0 for a byte that cannot start a sequence.
func utf8Lead(c byte) (need int, lo, hi byte) {
	switch {
	case c >= 0xC2 && c <= 0xDF:
		return 1, 0x80, 0xBF
	case c == 0xE0:
		return 2, 0xA0, 0xBF
	case c == 0xED: // no UTF-16 surrogates
		return 2, 0x80, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		return 2, 0x80, 0xBF
	case c == 0xF0:
		return 3, 0x90, 0xBF
	case c >= 0xF1 && c <= 0xF3:
		return 3, 0x80, 0xBF
	case c == 0xF4:
		return 3, 0x80, 0x8F
	}
	return 0, 0, 0
}
