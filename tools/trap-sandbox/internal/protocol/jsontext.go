package protocol

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The helpers below read and write just enough JSON text for frames. The reading ones assume
// the text is valid JSON (the caller ran jsonscan.Valid), so they never check anything.

// stringEnd returns the index just past the JSON string that starts (with its quote) at i.
func stringEnd(data []byte, i int) int {
	for i++; ; i++ {
		switch data[i] {
		case '\\':
			i++ // the escaped byte cannot end the string
		case '"':
			return i + 1
		}
	}
}

// valueEnd returns the index just past the JSON value that starts at i.
func valueEnd(data []byte, i int) int {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch data[i] {
			case '"':
				i = stringEnd(data, i) - 1 // brackets inside strings do not count
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
	default: // a number, true, false or null: it runs up to the next delimiter
		for i < len(data) && !isDelimiter(data[i]) {
			i++
		}
		return i
	}
}

func isDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// decodeString returns the value of the JSON string token raw, exactly as json.Unmarshal into
// a string would.
func decodeString(raw []byte) string {
	if body, ok := plainString(raw); ok {
		return string(body)
	}
	// Escapes, or invalid UTF-8 that json.Unmarshal turns into U+FFFD: rare enough to leave to
	// encoding/json.
	var s string
	_ = json.Unmarshal(raw, &s) // cannot fail: raw is a valid string token
	return s
}

// plainString returns the bytes between the quotes of the JSON string token raw, and whether
// they are its value as they are: no escapes and valid UTF-8. (Valid JSON has no raw control
// characters in strings.)
func plainString(raw []byte) ([]byte, bool) {
	body := raw[1 : len(raw)-1]
	return body, bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body)
}

const hexDigits = "0123456789abcdef"

// writeJSONString writes s as a JSON string exactly as encoding/json does: ", \ and control
// characters escaped (\b \f \n \r \t by name, the rest as \u00XX), each byte of invalid UTF-8
// as \ufffd, U+2028 and U+2029 as \u2028 and \u2029, and <, > and & as \u003c, \u003e and
// \u0026 only when escapeHTML is set.
func writeJSONString(buf *bytes.Buffer, s string, escapeHTML bool) {
	buf.WriteByte('"')
	start := 0 // s[start:i] is still to be written as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			escape := asciiEscape(c, escapeHTML)
			if escape == "" {
				i++
				continue
			}
			buf.WriteString(s[start:i])
			if escape == `\u00` {
				buf.WriteString(escape)
				buf.WriteByte(hexDigits[c>>4])
				buf.WriteByte(hexDigits[c&0xF])
			} else {
				buf.WriteString(escape)
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		var escape string
		switch {
		case r == utf8.RuneError && size == 1:
			escape = `\ufffd`
		case r == '\u2028':
			escape = `\u2028`
		case r == '\u2029':
			escape = `\u2029`
		}
		if escape != "" {
			buf.WriteString(s[start:i])
			buf.WriteString(escape)
			start = i + size
		}
		i += size
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}

// asciiEscape returns how writeJSONString spells the ASCII byte c: "" to keep it as it is,
// `\u00` for a \u00XX escape (the caller adds the two hex digits), or the whole escape.
func asciiEscape(c byte, escapeHTML bool) string {
	switch c {
	case '"':
		return `\"`
	case '\\':
		return `\\`
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '<', '>', '&':
		if escapeHTML {
			return `\u00`
		}
		return ""
	}
	if c < ' ' {
		return `\u00`
	}
	return ""
}
