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
func Show(s string, keepLines bool) string { return show(s, keepLines, false, false) }

// ShowDistinct is Show with the characters that print as another or as none
// (LooksLikeAnother) escaped too, \xNN up to U+00FF and \uXXXX above (\xa0, \u200b), so that
// no space, hyphen or nothing makes two texts that differ look alike (a letter like another,
// Cyrillic а for a, or é written as e and U+0301, is shown as it is: ShowName spells out a
// name that looks like another so), and a backslash that would start such an escape (before
// x, u or U) as \x5c, so that a text holding `\u200b` does not read as a zero-width space
// shown (StartsEscape; any other backslash passes: C:\dir). It is the one rule of what the
// host's own records name (an API token's name, an account's, who created one, an address:
// each cell of the CLI's tables that a record fills, and the CLI's messages naming them) and
// of a computer's fields (computer info's label). keepLines is Show's. A text made of parts
// shown already (a table's row, a message naming a computer by ShowTraposID) goes by
// ShowComposed instead: shown again here, 7:kitchen\xa0 would read 7:kitchen\x5cxa0.
func ShowDistinct(s string, keepLines bool) string { return show(s, keepLines, true, true) }

// ShowComposed is ShowDistinct leaving every backslash as it is, for a text whose parts may
// be shown already (by ShowDistinct, ShowTraposID, ShowName, ShowPath), so that showing it
// changes nothing of them: the cells of a table (table.Writer shows every cell so, whoever
// built the row), the gateway's messages and a computer's (which name a computer or a path in
// its shown form), a command line as typed. What it adds is for the part shown by none of
// those: no control character and nothing that prints as another passes raw.
func ShowComposed(s string, keepLines bool) string { return show(s, keepLines, true, false) }

// StartsEscape reports whether the backslash at s[i] would read as the start of an escape the
// host shows (\xNN, \uXXXX, \UXXXXXXXX): one before x, u or U, which ShowDistinct, ShowName and
// ShowTraposID show as \x5c. The one home of that rule.
func StartsEscape(s string, i int) bool {
	return s[i] == '\\' && i+1 < len(s) && strings.IndexByte("xuU", s[i+1]) >= 0
}

// show is Show, escaping LooksLikeAnother's characters too when distinct, and a backslash that
// starts an escape (StartsEscape) when backslashes.
func show(s string, keepLines, distinct, backslashes bool) string {
	if !needsEscape(s, keepLines, distinct, backslashes) {
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
		case escaped(r, distinct):
			writeEscape(&b, r)
		case backslashes && StartsEscape(s, i):
			b.WriteString(`\x5c`)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string, keepLines, distinct, backslashes bool) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (escaped(r, distinct) && !(keepLines && (r == '\n' || r == '\t' || isCRLF(s, i)))) ||
			(backslashes && StartsEscape(s, i)) {
			return true
		}
		i += n
	}
	return false
}

// escaped reports whether Show (ShowDistinct when distinct) escapes r.
func escaped(r rune, distinct bool) bool {
	return isControl(r) || BreaksLine(r) || (distinct && LooksLikeAnother(r))
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

// LooksLikeAnother reports the characters that a terminal prints as another's or as none, so
// that a name holding one lists as another name would: the no-break space (U+00A0) and every
// other space but ' ' (Unicode's Zs: U+2002, U+202F, U+3000 …), printed as a space; the soft
// hyphen (U+00AD), printed as a hyphen or as nothing; the format characters (Unicode's Cf: the
// zero-width space U+200B, the joiners U+200C and U+200D, the word joiner U+2060, the byte
// order mark U+FEFF, the bidirectional controls) and the others Unicode has drawn as nothing
// (Other_Default_Ignorable_Code_Point: U+034F, the Hangul fillers U+115F, U+3164, U+FFA0),
// but the format characters terminals draw (an Arabic number sign, U+0600, as table.Columns
// counts it). Of CC's characters (U+0000–U+00FF) only U+00A0 and U+00AD are; above them, no
// CC string holds one. The one home of that rule: ShowTraposID and ShowPath escape them in a
// label and a file's name, ShowDistinct in any text, and a token's name may not hold one
// (account.CheckTokenName; names that look alike by their letters: NameKey, MixedScripts).
func LooksLikeAnother(r rune) bool {
	if r < 0xa0 || unicode.Is(unicode.Prepended_Concatenation_Mark, r) {
		return false // ' ', the one space of Zs below U+00A0, included
	}
	return unicode.In(r, unicode.Zs, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point)
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
