package cctext

import (
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
