package httpapi

import (
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
)

// stringReader adapts a string for LState.Load.
func stringReader(s string) *strings.Reader { return strings.NewReader(s) }

// typeName is Lua's type(v), as it appears in CC's argument errors.
func typeName(v lua.LValue) string {
	return v.Type().String()
}

// rawToString converts v as CC's argument coercion does: Lua's tostring without __tostring.
// Numbers use %.14g like Lua 5.2 (gopher-lua's own formatting differs).
func rawToString(v lua.LValue) string {
	switch x := v.(type) {
	case lua.LString:
		return string(x)
	case lua.LNumber:
		return ccformat.FormatNumber(float64(x))
	default:
		return v.String()
	}
}

// toValidUTF8 decodes s as UTF-8 the way Java's decoder does with REPLACE: every maximal
// ill-formed subsequence becomes one U+FFFD (so "\xE2\x82A" gives one, "\xFF\xFF" two).
func toValidUTF8(s string) string {
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
