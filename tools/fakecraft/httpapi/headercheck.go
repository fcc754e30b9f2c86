package httpapi

import "strings"

// headerError is the message CC raises for a request header its Netty (4.1.82's
// DefaultHttpHeaders) refuses, or "". The value is checked first, as Netty converts it
// before it adds the name, and its fault names only the header; a name's fault names the
// character. Both are bytes, as CC's strings are.
func headerError(name, value string) string {
	if !validHeaderValue(value) {
		return "Failed to convert object value for header '" + name + "'"
	}
	if name == "" {
		return "empty headers are not allowed []"
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == 0, c == '\t', c == '\n', c == 0x0b, c == '\f', c == '\r', c >= 0x1c && c <= 0x1f,
			c == ' ', c == ',', c == ':', c == ';', c == '=':
			return `a header name cannot contain the following prohibited characters: =,;: \t\r\n\v\f: ` + string([]byte{c})
		case c > 127:
			return "a header name cannot contain non-ASCII character: " + string([]byte{c})
		}
	}
	return ""
}

// validHeaderValue reports whether Netty takes v: no NUL, vertical tab or form feed, and a
// CR or LF only as an obsolete line folding (CR LF or a lone LF, then a space or a tab),
// so never at the end.
func validHeaderValue(v string) bool {
	const plain, afterCR, afterLF = 0, 1, 2
	state := plain
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == 0 || c == 0x0b || c == '\f' {
			return false
		}
		switch {
		case state == afterCR && c != '\n', state == afterLF && c != ' ' && c != '\t':
			return false
		case state == afterCR:
			state = afterLF
		case state == afterLF:
			state = plain
		case c == '\r':
			state = afterCR
		case c == '\n':
			state = afterLF
		}
	}
	return state == plain
}

// unfold turns each line folding of a value Netty took (CR LF or LF, then spaces and tabs)
// into one space, as a server reads it: Go's client refuses to send a CR or LF at all.
func unfold(v string) string {
	if !strings.ContainsAny(v, "\r\n") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\r':
		case '\n':
			for i+1 < len(v) && (v[i+1] == ' ' || v[i+1] == '\t') {
				i++
			}
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
