package cctext

import (
	"strings"
	"unicode"
)

// asciiTwins holds the characters past U+00FF that prose (a model's answer, a message) uses all
// the time and that have a plain twin CC can show: typographic quotes, dashes and the ellipsis,
// the bullet, common arrows and comparisons, spaces of other widths (and the euro sign, as
// ProseFrom says). By the text rule alone each would be '?',
// and an answer read "It?s ?quoted? ? an em dash" on the computer. A narrow or
// figure space, which keeps two words together, becomes CC's no-break space (the byte A0),
// and a zero-width character nothing. A dash after a blank keeps to the word before it
// (the blank before it is A0): the ai command wraps at blanks, and "text" / "- en dash" read
// as a list item on a pocket computer. The blank after the dash is not looked for: a model's
// tokens carry the blank before a word, so the answer streams " —" and " yes" in two deltas,
// each through Prose alone. The pairs are compared in order: those first.
var asciiTwins = strings.NewReplacer(
	" \u2013", "\u00A0-", " \u2014", "\u00A0--",
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'", "\u2032", "'", "\u2039", "<", "\u203A", ">",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`, "\u2033", `"`,
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2212", "-", "\u2014", "--", "\u2015", "--",
	"\u2026", "...", "\u2022", "*",
	"\u2192", "->", "\u2190", "<-", "\u21D2", "=>", "\u2264", "<=", "\u2265", ">=", "\u2260", "!=",
	"\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ", "\u2008", " ", "\u2009", " ",
	"\u200A", " ", "\u205F", " ", "\u2007", "\u00A0", "\u202F", "\u00A0",
	"\u200B", "", "\u200C", "", "\u200D", "", "\u2060", "", "\uFEFF", "",
)

// Prose is text for a player to read with the characters asciiTwins lists as their twins, to
// go through the text rule after (Wire): the gateway's own words ("…" of its clip marker as
// "...", inside a quoted value too) and opencode's (a tool's error, a provider's failure); a
// euro sign is its currency code outside a quoted string, as ProseFrom says. Never for code, a
// path or content that is stored or run: the twin would show the player other bytes than
// those the computer gets.
func Prose(text string) string {
	shown, _ := prose(Quoting{}, text, false)
	return shown
}

// euro is the euro sign, which prose shows as its currency code (euroCode): a German player's
// price read "5 ?".
const (
	euro     = '\u20AC'
	euroCode = "EUR"
)

// Quoting is where prose stands as to a quoted string on its line (see ProseFrom). The zero
// value is a line's start.
type Quoting struct {
	// quote is the ASCII quote mark ('"' or '\'') of the string open, 0 outside one.
	quote rune
	// escaped is set right after a backslash inside a string: the next character is its own.
	escaped bool
	// closing is set after a '\'' inside a single-quoted string, which ends it unless a letter
	// or digit follows (then it was an apostrophe: 'it's 5 €'). The next character, perhaps in
	// the next piece, settles it.
	closing bool
	// afterWord is set when the character before is a letter or digit, so that a '\'' is an
	// apostrophe (it's, players'), not a string's start.
	afterWord bool
}

// ProseFrom is Prose of a model's answer streamed in pieces, text going on from q (the
// Quoting the piece before returned), and where text leaves off. Outside a quoted string a
// euro sign is its currency code and asciiTwins' characters their twins; inside one every
// character is itself, a string of code or the character a warning names, and the text rule
// shows it as the computer has it ('?'). The gateway's warning for a € it sent the model,
// quoted back to the player, read `"EUR" (U+20AC) … was sent as "?"`, and one for an em dash
// `"--" (U+2014) … is outside CC's character set` (its JSON "char":"--"), naming two ASCII
// characters; code the model proposed read print("5 EUR") or print("Tür -- 5 ?") where the
// computer would run print("5 ?") and print("Tür ? 5 ?").
//
// A string is ASCII-quoted on one line, and a backslash in it escapes the next character.
// A double quote always opens or ends one. A single quote is also prose's apostrophe (it's 5 €,
// isn't it; the players' 5 €), so it opens a string only after a character that is no letter or
// digit (a line's start, a blank, '(', '=', ',', a backtick: print('5 €'), x = '5 €') and ends
// one only before such a character ('5 €') or the line's end); one between letters (it's) is
// part of the string or the prose it stands in. An apostrophe after a non-letter ('90s, 5 €'s)
// opens a string to its line's end as a stray '"' (an inch mark) does; Lua's call without
// parentheses, print'5 €', is a price. A string ends with its line, so a stray quote turns no
// price past its line into '?'; typographic quotes are prose.
func ProseFrom(q Quoting, text string) (string, Quoting) {
	return prose(q, text, true)
}

// prose is Prose (quotedAsIs false: only a quoted euro sign is kept) and ProseFrom (true: a
// quoted string is kept whole) of text going on from q.
func prose(q Quoting, text string, quotedAsIs bool) (string, Quoting) {
	if isASCII(text) {
		return text, q.after(text)
	}
	var b strings.Builder
	// write puts a run of text all outside or all inside a quoted string.
	write := func(run string, quoted bool) {
		switch {
		case !quoted:
			b.WriteString(asciiTwins.Replace(strings.ReplaceAll(run, string(euro), euroCode)))
		case quotedAsIs:
			b.WriteString(run) // the text rule's '?' for what CC lacks, as the computer has it
		default:
			b.WriteString(asciiTwins.Replace(run))
		}
	}
	from, inside := 0, false
	for i, r := range text {
		var quoted bool
		quoted, q = q.next(r)
		if quoted != inside {
			write(text[from:i], inside)
			from, inside = i, quoted
		}
	}
	write(text[from:], inside)
	return b.String(), q
}

// after is where q stands after text.
func (q Quoting) after(text string) Quoting {
	for _, r := range text {
		_, q = q.next(r)
	}
	return q
}

// next is whether r, coming where q stands, is inside a quoted string, and where q stands
// after it.
func (q Quoting) next(r rune) (quoted bool, after Quoting) {
	if r == '\n' {
		return false, Quoting{}
	}
	word := unicode.IsLetter(r) || unicode.IsDigit(r)
	if q.closing {
		q.closing = false
		if !word {
			q.quote = 0 // the '\'' ended the string
		}
	}
	quoted = q.quote != 0
	switch {
	case q.escaped:
		q.escaped = false
	case q.quote != 0 && r == '\\':
		q.escaped = true
	case q.quote == '"' && r == '"':
		q.quote = 0
	case q.quote == '\'' && r == '\'':
		q.closing = true
	case q.quote == 0 && r == '"', q.quote == 0 && r == '\'' && !q.afterWord:
		q.quote = r
	}
	q.afterWord = word
	return quoted, q
}
