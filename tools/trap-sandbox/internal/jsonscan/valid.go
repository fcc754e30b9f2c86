// Package jsonscan checks JSON text without decoding it. The gateway checks every frame a
// computer sends and every host API request body before it walks them by hand (protocol,
// hostapi), so the check is on the path of every request: it is done here in one pass over
// the bytes, with the answers of encoding/json's Valid (valid_test.go holds it to them).
package jsonscan

// MaxDepth is how many arrays and objects may nest, as in encoding/json.
const MaxDepth = 10000

// Valid reports whether data is one JSON value, with nothing but JSON whitespace around it,
// exactly as encoding/json's Valid does: RFC 8259's grammar, strings checked for control
// characters and escapes but not for UTF-8 (encoding/json turns invalid UTF-8 into U+FFFD
// when it decodes), arrays and objects nested at most MaxDepth deep.
func Valid(data []byte) bool {
	var open containers
	i := SkipSpace(data, 0)
	for {
		// A value starts at i (-1: what came before it was not JSON).
		if i < 0 || i >= len(data) {
			return false
		}
		switch c := data[i]; c {
		case '{', '[':
			isObject := c == '{'
			if !open.push(isObject) {
				return false
			}
			i = SkipSpace(data, i+1)
			if i < len(data) && data[i] == closer(isObject) {
				open.pop()
				i++
				break // an empty one is a whole value
			}
			if isObject {
				i = memberValue(data, i)
			}
			continue // to its first value
		case '"':
			i = stringEnd(data, i)
		case 't':
			i = literalEnd(data, i, "true")
		case 'f':
			i = literalEnd(data, i, "false")
		case 'n':
			i = literalEnd(data, i, "null")
		default:
			i = numberEnd(data, i)
		}
		if i < 0 {
			return false
		}
		// A whole value ends at i: close what ends with it, up to the next value or the end.
		for {
			i = SkipSpace(data, i)
			if open.depth == 0 {
				return i == len(data)
			}
			if i >= len(data) {
				return false
			}
			isObject := open.top()
			if data[i] == ',' {
				i = SkipSpace(data, i+1)
				if isObject {
					i = memberValue(data, i)
				}
				break
			}
			if data[i] != closer(isObject) {
				return false
			}
			open.pop()
			i++
		}
	}
}

// containers is the stack of the arrays and objects open around the scan, one bit each
// (set: an object). The first 64 levels take no allocation.
type containers struct {
	depth int
	low   uint64   // levels 1 to 64
	high  []uint64 // levels 65 and up, when there are any
}

func (s *containers) push(isObject bool) bool {
	if s.depth == MaxDepth {
		return false
	}
	d := s.depth
	s.depth++
	word, bit := &s.low, uint(d%64)
	if d >= 64 {
		n := d/64 - 1
		if n == len(s.high) {
			s.high = append(s.high, 0)
		}
		word = &s.high[n]
	}
	if isObject {
		*word |= 1 << bit
	} else {
		*word &^= 1 << bit
	}
	return true
}

func (s *containers) pop() { s.depth-- }

// top reports whether the innermost open container is an object.
func (s *containers) top() bool {
	d := s.depth - 1
	word := s.low
	if d >= 64 {
		word = s.high[d/64-1]
	}
	return word&(1<<uint(d%64)) != 0
}

func closer(isObject bool) byte {
	if isObject {
		return '}'
	}
	return ']'
}

// SkipSpace returns the index of the first byte at or after i that is not JSON whitespace
// (space, tab, line feed, carriage return), or len(data).
func SkipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		}
		break
	}
	return i
}

// memberValue reads an object member's name and colon at i and returns where its value
// starts, or -1 when they are not there.
func memberValue(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = stringEnd(data, i); i < 0 {
		return -1
	}
	i = SkipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return SkipSpace(data, i+1)
}

// inString marks the bytes a string's scan stops at: its end, an escape, and the control
// characters JSON does not allow in it.
var inString = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// stringEnd returns the index just past the string that starts with its quote at i, or -1.
func stringEnd(data []byte, i int) int {
	for i++; i < len(data); i++ {
		for _, c := range data[i:] { // the bytes that need nothing, quickly
			if inString[c] {
				break
			}
			i++
		}
		if i == len(data) {
			break
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		}
		// An escape.
		if i++; i >= len(data) {
			return -1
		}
		switch data[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if i+4 >= len(data) || !isHex(data[i+1]) || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) {
				return -1
			}
			i += 4
		default:
			return -1
		}
	}
	return -1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func literalEnd(data []byte, i int, literal string) int {
	if len(data)-i < len(literal) || string(data[i:i+len(literal)]) != literal {
		return -1
	}
	return i + len(literal)
}

// numberEnd returns the index just past the number that starts at i, or -1: a minus sign,
// an integer part without leading zeros, a fraction, an exponent.
func numberEnd(data []byte, i int) int {
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		i = skipDigits(data, i+1)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		if i = digitsEnd(data, i+1); i < 0 {
			return -1
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i = digitsEnd(data, i); i < 0 {
			return -1
		}
	}
	return i
}

// digitsEnd returns the index past the one or more digits at i, or -1 when there is none.
func digitsEnd(data []byte, i int) int {
	if end := skipDigits(data, i); end > i {
		return end
	}
	return -1
}

// skipDigits returns the index past the digits at i, if any.
func skipDigits(data []byte, i int) int {
	for i < len(data) && '0' <= data[i] && data[i] <= '9' {
		i++
	}
	return i
}
