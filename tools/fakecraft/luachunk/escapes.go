package luachunk

import (
	"strconv"
	"strings"
)

// needsEscapePass says whether src may hold an escape gopher-lua's lexer does not know
// (\x, \z, \u{...}) or takes where Cobalt refuses it (a decimal escape past 255); most
// chunks have none, and skip the pass.
func needsEscapePass(src string) bool {
	for i := strings.IndexByte(src, '\\'); i >= 0 && i+1 < len(src); {
		switch src[i+1] {
		case 'x', 'z', 'u':
			return true
		case '2', '3', '4', '5', '6', '7', '8', '9':
			if v, _ := decimalEscape(src[i+1:]); v > 255 {
				return true
			}
		}
		j := strings.IndexByte(src[i+2:], '\\')
		if j < 0 {
			return false
		}
		i += 2 + j
	}
	return false
}

// rewriteEscapes turns Lua 5.2/5.3 escapes that gopher-lua's lexer (Lua 5.1) lacks into
// ones it has, leaving everything else byte for byte: \xHH and \u{H...} become \ddd
// escapes, \z drops the whitespace after it. Newlines that \z swallowed are put back after
// the string's closing quote so later line numbers do not move. malformed is whether a
// string holds an escape Cobalt refuses and gopher-lua would take (\xZZ, \u{110000}, \300):
// the chunk does not compile, and the syntax checker says why.
func rewriteEscapes(src string) (out string, malformed bool) {
	var b strings.Builder
	b.Grow(len(src) + 16)
	n := len(src)
	i := 0
	for i < n {
		c := src[i]
		switch {
		case c == '-' && i+1 < n && src[i+1] == '-':
			end := skipComment(src, i)
			b.WriteString(src[i:end])
			i = end
		case c == '[' && longBracket(src, i) >= 0:
			end := skipLong(src, i, longBracket(src, i))
			b.WriteString(src[i:end])
			i = end
		case c == '"' || c == '\'':
			var bad bool
			i, bad = rewriteString(&b, src, i)
			malformed = malformed || bad
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), malformed
}

// longBracket returns the level of a long bracket opening at i ([[ is 0, [=[ is 1), or -1.
func longBracket(src string, i int) int {
	j := i + 1
	for j < len(src) && src[j] == '=' {
		j++
	}
	if j < len(src) && src[j] == '[' {
		return j - i - 1
	}
	return -1
}

// skipLong returns the index after the long string or comment opening at i.
func skipLong(src string, i, level int) int {
	closer := "]" + strings.Repeat("=", level) + "]"
	start := i + level + 2
	end := strings.Index(src[start:], closer)
	if end < 0 {
		return len(src) // unterminated: the lexer reports it
	}
	return start + end + len(closer)
}

// skipComment returns the index after the comment starting at i ("--").
func skipComment(src string, i int) int {
	j := i + 2
	if j < len(src) && src[j] == '[' {
		if level := longBracket(src, j); level >= 0 {
			return skipLong(src, j, level)
		}
	}
	if k := strings.IndexByte(src[j:], '\n'); k >= 0 {
		return j + k
	}
	return len(src)
}

// rewriteString copies the quoted string starting at i, rewriting its escapes, and returns
// the index after it and whether an escape in it is one Cobalt refuses.
func rewriteString(b *strings.Builder, src string, i int) (next int, malformed bool) {
	quote := src[i]
	b.WriteByte(quote)
	i++
	newlines := 0
	n := len(src)
	for i < n {
		c := src[i]
		if c == quote {
			b.WriteByte(c)
			i++
			break
		}
		if c == '\n' {
			break // unterminated: leave it to the lexer
		}
		if c != '\\' || i+1 >= n {
			b.WriteByte(c)
			i++
			continue
		}
		switch e := src[i+1]; {
		case e == 'x' && i+3 < n && isHex(src[i+2]) && isHex(src[i+3]):
			v, _ := strconv.ParseUint(src[i+2:i+4], 16, 8)
			writeByteEscape(b, byte(v))
			i += 4
		case e == 'z':
			i += 2
			for i < n && isSpace(src[i]) {
				if src[i] == '\n' {
					newlines++
				}
				i++
			}
		case e == 'u':
			v, end, ok := unicodeEscape(src[i+2:])
			if !ok {
				b.WriteString(src[i : i+2]) // malformed: left for the checker
				malformed = true
				i += 2
				continue
			}
			for _, by := range utf8Extended(v) {
				writeByteEscape(b, by)
			}
			i += 2 + end
		case e == 'x', isDigitByte(e) && !validDecimalEscape(src[i+1:]):
			b.WriteString(src[i : i+2]) // malformed: left for the checker
			malformed = true
			i += 2
		default:
			// Any other escape (\n, \\, \", \ddd, \<newline>) is the lexer's: copy it whole.
			b.WriteString(src[i : i+2])
			i += 2
		}
	}
	for ; newlines > 0; newlines-- {
		b.WriteByte('\n')
	}
	return i, malformed
}

// decimalEscape reads the up to three digits of a \ddd escape at the start of s: their
// value and how many there are.
func decimalEscape(s string) (value, digits int) {
	for digits < 3 && digits < len(s) && isDigitByte(s[digits]) {
		value = value*10 + int(s[digits]-'0')
		digits++
	}
	return value, digits
}

// validDecimalEscape says whether the \ddd escape at the start of s is one Cobalt takes:
// at most 255 ("escape sequence too large").
func validDecimalEscape(s string) bool {
	v, _ := decimalEscape(s)
	return v <= 255
}

// unicodeEscape reads the {XXX} of a \u{XXX} escape at the start of s as Cobalt's lexer
// does: one hex digit or more (leading zeros too) naming at most U+10FFFF. It returns the
// code point and the length read, '}' included; ok false when Cobalt refuses it.
func unicodeEscape(s string) (v uint32, n int, ok bool) {
	if len(s) == 0 || s[0] != '{' {
		return 0, 0, false
	}
	n = 1
	for n < len(s) && isHex(s[n]) {
		d, _ := strconv.ParseUint(s[n:n+1], 16, 8)
		v = v<<4 | uint32(d)
		if v > maxUnicode {
			return 0, 0, false
		}
		n++
	}
	if n == 1 || n >= len(s) || s[n] != '}' {
		return 0, 0, false
	}
	return v, n + 1, true
}

func writeByteEscape(b *strings.Builder, v byte) {
	b.WriteByte('\\')
	b.WriteByte('0' + v/100)
	b.WriteByte('0' + v/10%10)
	b.WriteByte('0' + v%10)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// utf8Extended encodes a code point as Lua 5.3's \u{} does: UTF-8 extended to 31 bits (up
// to six bytes), surrogates included.
func utf8Extended(x uint32) []byte {
	if x < 0x80 {
		return []byte{byte(x)}
	}
	var buf [6]byte
	n := 0
	mfb := uint32(0x3f) // largest value that fits in the first byte
	for {
		buf[5-n] = byte(0x80 | (x & 0x3f))
		n++
		x >>= 6
		mfb >>= 1
		if x <= mfb {
			break
		}
	}
	buf[5-n] = byte((^mfb << 1) | x)
	n++
	return buf[6-n:]
}
