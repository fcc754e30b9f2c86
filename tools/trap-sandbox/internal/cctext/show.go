package cctext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clip cuts s to at most maxBytes (at a rune boundary) and marks the cut with the length s
// had: "…(cut, N bytes)". A peer's text (a traposId, an error code, what a server sent) goes
// into a log line or a message bounded this way.
func Clip(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(cut, " + strconv.Itoa(len(s)) + " bytes)"
}

// Show makes text safe for an operator's terminal: a label, an error message or a program's
// output may hold escape sequences (colours, cursor moves, a cleared screen) or line breaks
// that forge output. Control characters (U+0000–U+001F, U+007F–U+009F) and bytes that are not
// UTF-8 are shown as \xNN (C1 included: \x9b, not a code point), bidirectional controls and
// the line and paragraph separators as \uXXXX (no CC string holds one: a hostile client's
// would reorder or break the rest of the terminal's line); everything else passes. keepLines keeps \n, \t and the \r of a \r\n (a file written on Windows), for
// program output and file text; a lone \r, which would let a line overwrite itself, is shown.
func Show(s string, keepLines bool) string {
	if !needsEscape(s, keepLines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t' || isCRLF(s, i)):
			b.WriteRune(r)
		case isControl(r) || BreaksLine(r):
			writeEscape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || BreaksLine(r) || (isControl(r) && !(keepLines && (r == '\n' || r == '\t' || isCRLF(s, i)))) {
			return true
		}
		i += n
	}
	return false
}

// isCRLF reports whether s holds \r\n at i.
func isCRLF(s string, i int) bool {
	return strings.HasPrefix(s[i:], "\r\n")
}

// BreaksLine reports the characters above U+00FF that reorder or break a terminal's line:
// the bidirectional controls and the line and paragraph separators.
func BreaksLine(r rune) bool {
	return r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}

// isControl reports C0, DEL and C1 control characters.
func isControl(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f)
}

// looksLikeAnother reports the two characters of CC's set above the controls that a terminal
// prints as another's or as none: the no-break space (U+00A0), a space, and the soft hyphen
// (U+00AD), nothing. A name holding one lists as another name would, so ShowTraposID and
// ShowPath escape both.
func looksLikeAnother(r rune) bool {
	return r == '\u00a0' || r == '\u00ad'
}

// IsText reports whether CC bytes read as text: no control bytes but \t, \n and \r. Such a
// file goes to a host as text (FromCC); any other as bytes (base64, octet-stream).
func IsText(cc []byte) bool {
	for _, c := range cc {
		if isControl(rune(c)) && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// escapedInJSON reports the characters ShowJSON escapes, which Go's JSON encoder writes raw:
// DEL, C1 and those that reorder a terminal's line (BreaksLine; the encoder escapes U+2028
// and U+2029 itself).
func escapedInJSON(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r <= 0x9f) || BreaksLine(r)
}

// ShowJSON is Show for JSON: data with the characters a terminal acts on that Go's encoder
// writes raw (escapedInJSON's) as JSON escapes, \u009b; Show's \x9b is not JSON. data must be
// JSON (or JSON lines): outside a string JSON holds only ASCII, so each such character is in a
// string, where its escape is the same character, and the JSON decodes as before. Every JSON
// the host's surfaces print or send goes through it (the CLI's exec and request, MCP's
// results and the stdio bridge's messages, and every JSON the gateway answers over HTTP: the
// host API's answers, the screen's stream, /mcp).
func ShowJSON(data []byte) []byte {
	var out []byte
	for i := 0; i < len(data); {
		if c := data[i]; c < 0x7f {
			// ASCII but DEL, most of every JSON: the host API's answers go through here.
			if out != nil {
				out = append(out, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if !escapedInJSON(r) {
			if out != nil {
				out = append(out, data[i:i+n]...)
			}
			i += n
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(data)+16), data[:i]...)
		}
		out = fmt.Appendf(out, `\u%04x`, r)
		i += n
	}
	if out == nil {
		return data
	}
	return out
}
