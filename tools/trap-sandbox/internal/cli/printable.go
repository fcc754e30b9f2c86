package cli

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// printable makes text from a computer or the gateway safe for the operator's terminal: a
// label or an error message may hold escape sequences (colours, cursor moves, a cleared
// screen) or line breaks that forge output. C0 and C1 control characters, DEL and invalid
// UTF-8 are shown as Go-style escapes (\x1b, \u009b); everything else passes as it is.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == utf8.RuneError
}

// printableLines is printable for multi-line output (indented JSON): it keeps the line breaks.
func printableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = printable(l)
	}
	return strings.Join(lines, "\n")
}

// printableMessage is printable for a computer's error message, which may show a screen (a
// lua.exec or shell.run past its timeout answers with what its screen showed): the line
// breaks are kept and every line after the first is indented, so none passes for a line of
// the CLI's own.
func printableMessage(s string) string {
	return strings.ReplaceAll(printableLines(s), "\n", "\n  ")
}
