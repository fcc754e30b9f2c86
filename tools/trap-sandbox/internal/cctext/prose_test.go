package cctext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestProseShowsTypographyAsItsTwinsOnCC: a model's prose through Prose and the text rule
// reads on the computer as written, where the rule alone made each of these characters '?'.
func TestProseShowsTypographyAsItsTwinsOnCC(t *testing.T) {
	for _, tc := range []struct{ name, text, cc string }{
		{"quotes", "It’s “quoted” and ‘single’, „low“", `It's "quoted" and 'single', "low"`},
		{"dashes", "an en–dash, an em—dash, −5, non‑breaking", "an en-dash, an em--dash, -5, non-breaking"},
		{"a dash between blanks keeps to the word before it", "text – en, text — em", "text\u00a0- en, text\u00a0-- em"},
		{"a streamed dash whose blank after it comes later", "text –", "text\u00a0-"},
		{"ellipsis", "wait…", "wait..."},
		{"bullet", "• first", "* first"},
		{"arrows and comparisons", "a → b ← c ⇒ d, x ≤ 1 ≥ 0 ≠ 2", "a -> b <- c => d, x <= 1 >= 0 != 2"},
		{"spaces", "thin\u2009space, prix\u202F: 5\u2007€, zero\u200Bwidth", "thin space, prix\u00a0: 5\u00a0EUR, zerowidth"},
		{"the euro sign as its currency code", "Ein Diamant kostet 5 €, 64 × 5 € = 320€", "Ein Diamant kostet 5 EUR, 64 × 5 EUR = 320EUR"},
		{"Latin-1 and the rest as the rule says", "café ☃ 😀 日本", "caf\u00e9 ? ? ??"},
		{"ASCII unchanged", "plain `code` -- ok...", "plain `code` -- ok..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc, _ := ToCC("", Prose(tc.text))
			assert.Equal(t, tc.cc, FromCC([]byte(cc)))
		})
	}
}

// TestProseLeavesAQuotedEuroSignToTheTextRule: a model's € is EUR where it is a price, but a €
// inside a double-quoted string on its line is the character itself, which the player sees as
// the computer has it ('?'): the warning the gateway sent the model for it, quoted back to the
// player, read `"EUR" (U+20AC) at content 1:17 ... was sent as "?"` (played against opencode
// 1.18.33 with a stand-in model), and code the model proposes read print("5 EUR") where the
// computer runs print("5 ?"). Streamed in pieces, each piece goes on from where the one before
// left off (ProseFrom).
func TestProseLeavesAQuotedEuroSignToTheTextRule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces []string
		cc     string
	}{
		{"the warning quoted back", []string{`"€" (U+20AC) at content 1:17 is outside CC's character set and was sent as "?"`},
			`"?" (U+20AC) at content 1:17 is outside CC's character set and was sent as "?"`},
		{"the warning's JSON", []string{`{"char":"€","message":"\"€\" (U+20AC) at content"}`}, `{"char":"?","message":"\"?\" (U+20AC) at content"}`},
		{"a string of code", []string{`print("Preis: 5 €")`}, `print("Preis: 5 ?")`},
		{"streamed apart from its quote", []string{`print("Preis: 5 `, `€") -- 5 €`}, `print("Preis: 5 ?") -- 5 EUR`},
		{"an escape streamed apart from its quote", []string{`"say \`, `"hi\" €" and 5 €`}, `"say \"hi\" ?" and 5 EUR`},
		{"a price after a quoted word", []string{`"Diamant": 5 €`}, `"Diamant": 5 EUR`},
		{"a stray quote ends with its line", []string{"a 5\" screen\nPreis: 5 €"}, "a 5\" screen\nPreis: 5 EUR"},
		{"typographic quotes are prose", []string{"„5 €“ and “€”"}, `"5 EUR" and "EUR"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q Quoting
			var out strings.Builder
			for _, p := range tc.pieces {
				var shown string
				shown, q = ProseFrom(q, p)
				out.WriteString(shown)
			}
			cc, _ := ToCC("", out.String())
			assert.Equal(t, tc.cc, FromCC([]byte(cc)))
		})
	}
}

// TestProseTellsASingleQuotedStringFromAnApostrophe: a € in a single-quoted string (Lua's
// print('Preis: 5 €')) is the character as the computer has it, as in a double-quoted one; it
// read print('Preis: 5 EUR'). An apostrophe in prose is no quote: a ' opens a string only after
// a character that is no letter or digit and ends it only before one (ProseFrom), so a price
// after it's or the players' stays EUR.
func TestProseTellsASingleQuotedStringFromAnApostrophe(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces []string
		cc     string
	}{
		// A string: the character.
		{"a string of code", []string{`print('Preis: 5 €')`}, `print('Preis: 5 ?')`},
		{"an assignment", []string{`local preis = '5 €'`}, `local preis = '5 ?'`},
		{"in inline code", []string{"`'€'`"}, "`'?'`"},
		{"a list of strings", []string{`{'a','€'}`}, `{'a','?'}`},
		{"streamed apart from its quote", []string{`print('Preis: 5 `, `€') -- 5 €`}, `print('Preis: 5 ?') -- 5 EUR`},
		{"an escaped quote does not end it", []string{`print('it\'s 5 €')`}, `print('it\'s 5 ?')`},
		{"an apostrophe inside does not end it", []string{`'it's 5 €'`}, `'it's 5 ?'`},
		{"an apostrophe inside streamed apart from its letter", []string{`'it'`, `s 5 €'`}, `'it's 5 ?'`},
		{"a double quote inside", []string{`'say "hi" for 5 €'`}, `'say "hi" for 5 ?'`},
		{"an apostrophe inside a double-quoted string", []string{`"it's 5 €"`}, `"it's 5 ?"`},
		// Prose: EUR.
		{"an apostrophe between letters", []string{"it's 5 €, isn't it"}, "it's 5 EUR, isn't it"},
		{"a plural's apostrophe", []string{"the players' shop: 5 €"}, "the players' shop: 5 EUR"},
		{"an apostrophe after a letter past ASCII", []string{"the café's cake: 5 €"}, "the caf\u00e9's cake: 5 EUR"},
		{"a price after a string", []string{`'Diamant': 5 €`}, `'Diamant': 5 EUR`},
		{"a price after a string streamed apart from its quote", []string{`x = 'a'`, ` costs 5 €`}, `x = 'a' costs 5 EUR`},
		{"a price right after a string's end", []string{`'a'€`}, `'a'EUR`},
		{"a stray quote ends with its line", []string{"' is a quote\nPreis: 5 €"}, "' is a quote\nPreis: 5 EUR"},
		{"typographic quotes are prose", []string{"‘5 €’ and it’s 5 €"}, "'5 EUR' and it's 5 EUR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q Quoting
			var out strings.Builder
			for _, p := range tc.pieces {
				var shown string
				shown, q = ProseFrom(q, p)
				out.WriteString(shown)
			}
			cc, _ := ToCC("", out.String())
			assert.Equal(t, tc.cc, FromCC([]byte(cc)))
		})
	}
}

// TestAnAnswersQuotedStringIsShownAsTheComputerHasIt: a model's answer keeps every character
// of an ASCII-quoted string for the text rule, not only a €: the warning for an em dash the
// gateway sent the model, quoted back (played against opencode 1.18.33 with a stand-in model
// that echoed run_lua's result), read `"char":"--"` and `""--" (U+2014) at code 4:26 is outside
// CC's character set`, two ASCII characters, and the code print("Tür — 5 €") read print("Tür
// -- 5 ?"), half the computer's bytes. Outside the string the twins stay; the gateway's own
// words (Prose) keep them in a quoted value too, its clip marker's "…" among them.
func TestAnAnswersQuotedStringIsShownAsTheComputerHasIt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces []string
		cc     string
	}{
		{"the warning's JSON", []string{`{"char":"—","message":"\"—\" (U+2014) at code 4:26"}`}, `{"char":"?","message":"\"?\" (U+2014) at code 4:26"}`},
		{"a string of code", []string{`print("Tür — 5 €") -- prints “Tür — 5 €”`}, "print(\"Tür ? 5 ?\") -- prints \"Tür\u00a0-- 5 EUR\""},
		{"streamed apart from its quote", []string{`print('it`, `’s “ok”…') — done`}, "print('it?s ?ok??')\u00a0-- done"},
		{"a line break ends it", []string{"say \"a 5\" screen\nit’s — ok"}, "say \"a 5\" screen\nit's\u00a0-- ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q Quoting
			var out strings.Builder
			for _, p := range tc.pieces {
				var shown string
				shown, q = ProseFrom(q, p)
				out.WriteString(shown)
			}
			cc, _ := ToCC("", out.String())
			assert.Equal(t, tc.cc, FromCC([]byte(cc)))
		})
	}
	cc, _ := ToCC("", Prose(`no turn "turn_ab…(cut, 300 bytes)" — it’s gone, 5 €`))
	assert.Equal(t, "no turn \"turn_ab...(cut, 300 bytes)\"\u00a0-- it's gone, 5 EUR", FromCC([]byte(cc)))
}
