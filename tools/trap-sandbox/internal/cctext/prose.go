package cctext

import "strings"

// asciiTwins holds the characters past U+00FF that prose (a model's answer, a message) uses all
// the time and that have a plain twin CC can show: typographic quotes, dashes and the ellipsis,
// the bullet, common arrows and comparisons, the euro sign (as its currency code: a German
// player's price read "5 ?"), spaces of other widths. By the text rule alone each would be '?',
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
	"\u2026", "...", "\u2022", "*", "\u20AC", "EUR",
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
	if isASCII(text) {
		return text
	}
	return asciiTwins.Replace(text)
}
