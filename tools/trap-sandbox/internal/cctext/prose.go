package cctext

import "strings"

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
// go through the text rule after (Wire): what a model writes in prose, and the gateway's own
// words ("…" of its clip marker as "..."). Never for code, a path or content that is stored or
// run: the twin would show the player other bytes than those the computer gets.
func Prose(text string) string {
	shown, _ := ProseFrom(Quoting{}, text)
	return shown
}

// euro is the euro sign, which prose shows as its currency code (euroCode): a German player's
// price read "5 ?".
const (
	euro     = '\u20AC'
	euroCode = "EUR"
)

// Quoting is where prose stands as to a double-quoted string (ASCII '"') on its line: open
// inside one, escaped right after a backslash in one. The zero value is a line's start.
type Quoting struct{ open, escaped bool }

// ProseFrom is Prose of text that goes on from q (a model's answer streamed in pieces: the
// Quoting the piece before returned), and where text leaves off. A euro sign is its currency
// code, except inside a double-quoted string: there it is the character itself, a string of
// code or the character a warning names, and the text rule shows it as the computer has it
// ('?'). The gateway's warning for a € it sent the model, quoted back to the player, read
// `"EUR" (U+20AC) … was sent as "?"`, and code the model proposed read print("5 EUR") where
// the computer would run print("5 ?"). A quote's string ends with its line, so a stray '"'
// (an inch mark) turns no price after it into '?' past it; typographic quotes are prose.
func ProseFrom(q Quoting, text string) (string, Quoting) {
	if isASCII(text) {
		return text, q.after(text)
	}
	if !strings.ContainsRune(text, euro) {
		return asciiTwins.Replace(text), q.after(text)
	}
	var b strings.Builder
	from := 0
	for i, r := range text {
		if r != euro {
			continue
		}
		b.WriteString(asciiTwins.Replace(text[from:i]))
		q = q.after(text[from:i])
		if q.open {
			b.WriteRune(euro) // the text rule's '?', as the computer has it
		} else {
			b.WriteString(euroCode)
		}
		q.escaped = false
		from = i + len(string(euro))
	}
	b.WriteString(asciiTwins.Replace(text[from:]))
	return b.String(), q.after(text[from:])
}

// after is where q stands after text.
func (q Quoting) after(text string) Quoting {
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n':
			q = Quoting{}
		case q.escaped:
			q.escaped = false
		case c == '\\' && q.open:
			q.escaped = true
		case c == '"':
			q.open = !q.open
		}
	}
	return q
}
