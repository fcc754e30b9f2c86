package luachunk

import (
	"strconv"
	"strings"
)

// needsEscapePass says whether src may hold an escape gopher-lua's lexer does not know
// (\x, \z, \u{...}); most chunks have none, and skip the pass.
func needsEscapePass(src string) bool {
	for i := strings.IndexByte(src, '\\'); i >= 0 && i+1 < len(src); {
		switch src[i+1] {
		case 'x', 'z', 'u':
			return true
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
// the string's closing quote so later line numbers do not move.
func rewriteEscapes(src string) string {
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
			i = rewriteString(&b, src, i)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
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
// the index after it.
func rewriteString(b *strings.Builder, src string, i int) int {
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
		case e == 'u' && i+2 < n && src[i+2] == '{':
			j := i + 3
			for j < n && isHex(src[j]) {
				j++
			}
			if j == i+3 || j >= n || src[j] != '}' || j-(i+3) > 8 {
				b.WriteString(src[i : i+2]) // malformed: leave it
				i += 2
				continue
			}
			v, _ := strconv.ParseUint(src[i+3:j], 16, 32)
			if v > 0x7FFFFFFF {
				b.WriteString(src[i : i+2])
				i += 2
				continue
			}
			for _, by := range utf8Extended(uint32(v)) {
				writeByteEscape(b, by)
			}
			i = j + 1
		default:
			// Any other escape (\n, \\, \", \ddd, \<newline>) is the lexer's: copy it whole.
			b.WriteString(src[i : i+2])
			i += 2
		}
	}
	for ; newlines > 0; newlines-- {
		b.WriteByte('\n')
	}
	return i
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
