// Package ccformat is how CC: Tweaked's Cobalt VM turns numbers into text and back: it renders
// Lua values the way Cobalt prints them, for every fakecraft API that turns a number or string
// into text (tostring, %q, textutils, fs and websocket writes), and reads numbers the way
// Cobalt reads them (ParseNumber: tonumber, the lexer's numerals, string arguments), so none
// of them can drift apart.
package ccformat

import (
	"math"
	"strconv"
	"strings"
)

// int64Bound is 2^63: whole numbers in [-2^63, 2^63] print as integers, as Cobalt's
// LuaDouble.toString does. It tests `(long) v == v`, and Java compares a long with a double
// as doubles: 2^63 saturates to the long 2^63-1, which as a double is 2^63 again, so 2^63
// prints as 9223372036854775807.
const int64Bound = 9.223372036854775808e18

// numberPrecision is the %.14g precision Cobalt uses for numbers that are not whole.
const numberPrecision = 14

// FormatNumber renders a number exactly as CC: Tweaked's tostring does: whole values that
// fit in an int64 print as integers with no ".0", everything else as C's %.14g (so 0.1+0.2
// is "0.3" and 1e21 is "1e+21"), and the specials as "nan", "inf" and "-inf".
func FormatNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		// C may print "-nan" for a NaN with the sign bit set; CC's Java never does.
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	if f == math.Trunc(f) && f >= -int64Bound && f <= int64Bound {
		if f == int64Bound {
			return strconv.FormatInt(math.MaxInt64, 10)
		}
		return strconv.FormatInt(int64(f), 10)
	}
	return formatG14(f)
}

// formatG14 is C's printf("%.14g", f) for finite f. Go's 'g' verb already matches C here:
// it rounds to 14 significant digits, strips trailing zeros, switches to exponent form when
// the exponent is below -4 or at least 14, and writes the exponent with at least two digits
// ("1e-05", "1e+21"). TestFormatNumberMatchesC checks that against glibc's output.
func formatG14(f float64) string {
	return strconv.FormatFloat(f, 'g', numberPrecision, 64)
}

// Quote is C Lua's (and Cobalt's) string.format("%q"): quote, backslash and newline are
// escaped (newline as a backslash before a real newline), \r is written \r and NUL \000,
// and every other byte is kept raw.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString("\\\n")
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\000`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// NumberLiteral is string.format("%q", f) in Cobalt: a whole number as an integer (2^63
// as 9223372036854775807, as FormatNumber), the specials as expressions that read back
// ("(0/0)", "1e9999", "-1e9999"), anything else in hexadecimal ("0x1.8p+0"), so that the
// text reads back as exactly f.
func NumberLiteral(f float64) string {
	switch {
	case math.IsNaN(f):
		return "(0/0)"
	case math.IsInf(f, 1):
		return "1e9999"
	case math.IsInf(f, -1):
		return "-1e9999"
	case f == math.Trunc(f) && f >= -int64Bound && f <= int64Bound:
		return FormatNumber(f)
	}
	// Go writes the binary exponent with at least two digits (p+00); Cobalt with one.
	s := strconv.FormatFloat(f, 'x', -1, 64)
	p := strings.LastIndexByte(s, 'p')
	exp := strings.TrimLeft(s[p+2:], "0")
	if exp == "" {
		exp = "0"
	}
	return s[:p+2] + exp
}
