// Package table writes the CLI's tables: cells separated by tabs and rows by newlines, each
// column padded to its widest cell, laid out as text/tabwriter lays them out, but measured in
// the columns a terminal draws the text in (Columns), where tabwriter counts characters: a
// token named 台所 takes four columns, not two, and a decomposed é (e and U+0301) one, not two,
// so the cells after either stay under their headers.
package table

import (
	"unicode"

	"golang.org/x/text/width"
)

// Columns is how many columns a terminal draws s in, the sum of its characters' (a byte that
// is not UTF-8 counts one):
//   - two for a wide or fullwidth character (Unicode's East Asian Width W and F: 台, キ, Ａ, and
//     the emoji drawn as pictures, 🍳);
//   - none for a combining mark (the U+0301 of a decomposed é, a variation selector), a format
//     character (a zero-width space or joiner; not the soft hyphen or an Arabic number sign,
//     which terminals draw) and a Hangul vowel or final consonant that joins the syllable
//     before it, as the character they join to holds the column;
//   - one for every other, the ambiguous ones included (East Asian Width A: é, ß, ±, °, ½, the
//     soft hyphen, much of Latin-1 and so most of CC's characters above 0xA0 as cctext maps
//     them): terminals draw them one column wide (xterm, GNOME's VTE, Konsole, iTerm2, Windows
//     Terminal, the C library's wcwidth) unless set to draw them wide for CJK text, and
//     counted two, every label with an é would push its row out of line instead;
//   - none for a control character, which draws nothing (no table holds one: the Writer shows
//     it as \xNN, as every listing does, and a format character as \uXXXX).
//
// It counts a character at a time, as wcwidth does: an emoji joined of several (👩‍🍳, a
// woman, a zero-width joiner and a cook, four columns here) or made a picture by a variation
// selector (❤️, one here) is drawn in two by a terminal that draws such a sequence as one
// picture, and its row would lean by the difference there. A table's cell has the joiner
// escaped (the Writer's 👩\u200d🍳, drawn as counted); the variation selector stays.
func Columns(s string) int {
	n := 0
	for _, r := range s { // a byte that is not UTF-8 is U+FFFD here, one column
		n += runeColumns(r)
	}
	return n
}

// runeColumns is Columns of the one character r. golang.org/x/text/width gives a character's
// East Asian Width alone (a combining accent is ambiguous there, a control neutral), so the
// characters that take no column are told apart first.
func runeColumns(r rune) int {
	switch {
	case r == '\u00ad', unicode.Is(unicode.Prepended_Concatenation_Mark, r):
		// Format characters that terminals draw: the soft hyphen as a hyphen, an Arabic
		// number sign (U+0600) as the sign.
		return 1
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return 0
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r >= 0x1160 && r <= 0x11ff, r >= 0xd7b0 && r <= 0xd7ff:
		// Hangul jungseong and jongseong: a decomposed syllable's vowel and final consonant.
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}
