package ccformat

import (
	"errors"
	"math"
	"strconv"
)

// ParseNumber reads text as a number exactly as CC: Tweaked's Cobalt VM does (its
// NumberParser, behind tonumber, string-to-number conversions and the lexer's numerals), or
// says it is none. base is 2..36; 10 and 16 also take a 0x prefix, which makes the text
// hexadecimal.
//
// Cobalt's rules, which differ from C Lua's strtod in places a program can see:
//   - spaces, \t, \n, \r, \v and \f around the text are ignored; then one + or - sign;
//   - the digits are first read as a whole number in base, accumulated in a Java long that
//     wraps silently: 0xffffffffffffffff is -1 and 99999999999999999999 is
//     7766279631452241919 (Cobalt issue #88, fixed after the 0.9.4 that CC 1.113 runs);
//   - failing that, base 10 reads a decimal with Java's Double.parseDouble over the
//     characters 0-9 . e E + - only (so "1e400" is inf, and a second sign after the first
//     is Java's to judge: "--1" is 1), base 16 a hexadecimal fraction with an optional
//     binary exponent ("0x1.8p1" is 3; at most 30 significant digits), other bases nothing.
func ParseNumber(text string, base int) (float64, bool) {
	if base < 2 || base > 36 {
		return 0, false
	}
	start, end := 0, len(text)
	for start < end && isCobaltSpace(text[start]) {
		start++
	}
	for start < end && isCobaltSpace(text[end-1]) {
		end--
	}
	neg := false
	if start < end {
		switch text[start] {
		case '+':
			start++
		case '-':
			start++
			neg = true
		}
	}
	if start >= end {
		return 0, false
	}
	if (base == 10 || base == 16) && text[start] == '0' && start+1 < end && (text[start+1] == 'x' || text[start+1] == 'X') {
		base = 16
		start += 2
		if start >= end {
			return 0, false
		}
	}
	s := text[start:end]
	v, ok := scanLong(s, base)
	if !ok {
		switch base {
		case 10:
			v, ok = scanDouble(s)
		case 16:
			v, ok = scanHexDouble(s)
		}
	}
	if !ok {
		return 0, false
	}
	if neg {
		v = 0 - v // "-0" is 0: Cobalt has no negative zero (lua.WithoutNegativeZero)
	}
	return v, true
}

// isCobaltSpace is Cobalt's StringLib.isWhitespace (C's isspace in the C locale).
func isCobaltSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// scanLong reads s as a whole number in base, wrapping as a Java long does.
func scanLong(s string, base int) (float64, bool) {
	var x int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var digit int64
		switch {
		case c >= '0' && c <= '9':
			digit = int64(c - '0')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			digit = int64(c|0x20-'a') + 10
		default:
			return 0, false
		}
		if digit >= int64(base) {
			return 0, false
		}
		x = x*int64(base) + digit // wraps on overflow, as Java's long arithmetic does
	}
	return float64(x), true
}

// scanDouble is Java's Double.parseDouble restricted to the characters Cobalt lets through.
// Go's ParseFloat reads the same grammar over those characters (one optional sign, digits
// with an optional point, an optional exponent); out of range is ±inf or 0, as in Java.
func scanDouble(s string) (float64, bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
		default:
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return v, true
		}
		return 0, false
	}
	return v, true
}

// maxHexDigits is how many significant hexadecimal digits Cobalt reads in a fraction before
// giving up on the number.
const maxHexDigits = 30

// scanHexDouble reads hexadecimal digits with an optional point and an optional binary
// exponent (p or P, a sign, decimal digits), as Cobalt's scanHexDouble: the mantissa is a
// wrapping Java long, the exponent a wrapping Java int.
func scanHexDouble(s string) (float64, bool) {
	var mantissa int64
	var exponent int32
	sig, leading := 0, 0
	dot := false
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if dot {
				return 0, false
			}
			dot = true
			continue
		}
		v, ok := hexValue(c)
		if !ok {
			break // an exponent separator, checked below
		}
		if sig == 0 && c == '0' {
			leading++
		} else {
			sig++
			if sig > maxHexDigits {
				return 0, false
			}
			mantissa = mantissa*16 + int64(v)
		}
		if dot {
			exponent--
		}
	}
	if sig+leading == 0 {
		return 0, false // "0x." is no number
	}
	exponent *= 4
	if i < len(s) {
		if s[i] != 'p' && s[i] != 'P' {
			return 0, false
		}
		i++
		expNeg := false
		if i < len(s) {
			switch s[i] {
			case '+':
				i++
			case '-':
				i++
				expNeg = true
			}
		}
		if i >= len(s) {
			return 0, false
		}
		var given int32
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			given = given*10 + int32(c-'0')
		}
		if expNeg {
			given = -given
		}
		exponent += given
	}
	return math.Ldexp(float64(mantissa), int(exponent)), true
}

func hexValue(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
