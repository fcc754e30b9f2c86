package luachunk

import (
	"math"
	"strconv"
	"strings"

	"fakecraft/ccformat"
)

// The numerals pass makes every number literal mean what it means in CC. Cobalt's lexer
// reads a numeral as Lua 5.2's does (a digit, or a point and a digit, then hexadecimal
// digits, points and exponents with their signs) and converts it with the NumberParser that
// ccformat.ParseNumber follows; gopher-lua's lexer reads less (no hexadecimal fractions or
// binary exponents: 0x1p4 is two tokens) and converts with Go's ParseInt, which reads 0012
// as octal and gives up, with NaN, past 64 bits where Cobalt wraps. Where the two disagree
// the numeral is rewritten to a text gopher-lua reads as Cobalt's value; a numeral Cobalt
// cannot convert (1a, 2..3, 1e) makes the chunk a syntax error, "malformed number".

// rewriteNumerals returns src with each numeral gopher-lua would misread replaced by one it
// reads right (src itself when there is none, the usual case), and whether some numeral is
// malformed (the chunk must then fail to compile).
func rewriteNumerals(src string) (out string, malformed bool) {
	var b *strings.Builder
	copied := 0 // src[:copied] is in b
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '-' && i+1 < n && src[i+1] == '-':
			i = skipComment(src, i)
		case c == '[' && longBracket(src, i) >= 0:
			i = skipLong(src, i, longBracket(src, i))
		case c == '"' || c == '\'':
			i = skipQuoted(src, i)
		case isNameStart(c):
			for i++; i < n && isNameChar(src[i]); i++ {
			}
		case c == '.' && i+1 < n && src[i+1] == '.':
			i += 2
			if i < n && src[i] == '.' {
				i++
			}
		case isDigitByte(c) || c == '.' && i+1 < n && isDigitByte(src[i+1]):
			end := cobaltNumeralEnd(src, i)
			value, ok := ccformat.ParseNumber(src[i:end], 10)
			if !ok {
				return src, true
			}
			if !gopherReads(src, i, end, value) {
				if b == nil {
					b = &strings.Builder{}
					b.Grow(n + 16)
				}
				b.WriteString(src[copied:i])
				b.WriteString(numeralText(value))
				copied = end
			}
			i = end
		default:
			i++
		}
	}
	if b == nil {
		return src, false
	}
	b.WriteString(src[copied:])
	return b.String(), false
}

// cobaltNumeralEnd is where the numeral starting at i ends, read as Cobalt's readNumeral
// reads it: after the first digit (or the point and the digit), any run of hexadecimal
// digits and points, each exponent letter (e/E, or p/P after 0x) taking a sign after it.
func cobaltNumeralEnd(src string, i int) int {
	n := len(src)
	if src[i] == '.' {
		i++
	}
	first := src[i]
	i++
	exp1, exp2 := byte('E'), byte('e')
	if first == '0' && i < n && (src[i] == 'x' || src[i] == 'X') {
		i++
		exp1, exp2 = 'P', 'p'
	}
	for i < n {
		if src[i] == exp1 || src[i] == exp2 {
			i++
			if i < n && (src[i] == '+' || src[i] == '-') {
				i++
			}
		}
		if i < n && (isHex(src[i]) || src[i] == '.') {
			i++
		} else {
			break
		}
	}
	return i
}

// gopherReads says whether gopher-lua's lexer, starting at i, reads exactly src[i:end] as
// one numeral whose value is want. It follows gopher-lua v1.1.2's Scanner.scanNumber and
// its parseNumber (ParseInt with base prefixes, then ParseFloat; an error compiles as NaN).
func gopherReads(src string, i, end int, want float64) bool {
	n := len(src)
	var text []byte
	peek := func(j int) byte {
		if j < n {
			return src[j]
		}
		return 0
	}
	ch := src[i]
	j := i + 1
	if ch == '0' {
		if p := peek(j); p == 'x' || p == 'X' {
			j++
			k := j
			for k < n && isHex(src[k]) {
				k++
			}
			if k == j {
				return false // gopher-lua: "illegal hexadecimal number"
			}
			return k == end && gopherValue(src[i:k]) == want
		}
		if p := peek(j); p != '.' && isDigitByte(p) {
			ch = src[j] // gopher-lua drops the first of two leading zeros
			j++
		}
	}
	text = append(text, ch)
	for isDigitByte(peek(j)) {
		text = append(text, src[j])
		j++
	}
	if peek(j) == '.' {
		text = append(text, '.')
		j++
		for isDigitByte(peek(j)) {
			text = append(text, src[j])
			j++
		}
	}
	if p := peek(j); p == 'e' || p == 'E' {
		text = append(text, p)
		j++
		if p := peek(j); p == '-' || p == '+' {
			text = append(text, p)
			j++
		}
		if j >= n {
			return false
		}
		// gopher-lua takes the next character whatever it is, then digits.
		text = append(text, src[j])
		j++
		for isDigitByte(peek(j)) {
			text = append(text, src[j])
			j++
		}
	}
	if j != end {
		return false
	}
	got := gopherValue(string(text))
	return got == want || math.IsNaN(got) && math.IsNaN(want)
}

// gopherValue is the number gopher-lua compiles a numeral's text to.
func gopherValue(text string) float64 {
	if v, err := strconv.ParseInt(text, 0, 64); err == nil {
		return float64(v)
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// exactIntegers is 2^53: whole numbers below it print exactly as integers.
const exactIntegers = 1 << 53

// numeralText is a text gopher-lua reads as v: a plain numeral where there is one, else a
// parenthesised expression (a negative value from a wrapped long, or inf), which is an
// expression wherever a numeral can be.
func numeralText(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "(1/0)"
	case v < 0:
		return "(-" + numeralText(-v) + ")"
	case v == math.Trunc(v) && v < exactIntegers:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// skipQuoted returns the index after the quoted string starting at i (or at the line end
// where it is unfinished, which the lexer reports).
func skipQuoted(src string, i int) int {
	quote := src[i]
	n := len(src)
	for i++; i < n; i++ {
		switch src[i] {
		case quote:
			return i + 1
		case '\\':
			i++ // the escaped character, a newline included
			if i < n && src[i] == 'z' {
				// \z skips the whitespace after it, newlines included.
				for i+1 < n && isSpace(src[i+1]) {
					i++
				}
			}
		case '\n', '\r':
			return i
		}
	}
	return n
}

func isNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isNameChar(c byte) bool { return isNameStart(c) || isDigitByte(c) }

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }
