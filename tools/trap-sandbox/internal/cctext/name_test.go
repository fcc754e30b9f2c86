package cctext_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"trap-sandbox/internal/cctext"
)

// TestNamesThatLookAlikeHaveOneKey: two names a person reading a listing cannot tell apart
// have one NameKey: é composed and e with U+0301, Latin a and Cyrillic а, a word written in
// Cyrillic letters that look Latin, l beside I and 1, a space more between words or at the
// end; names that differ to the eye keep theirs (a capital, another letter).
func TestNamesThatLookAlikeHaveOneKey(t *testing.T) {
	for _, pair := range [][2]string{
		{"caf\u00e9", "cafe\u0301"},
		{"laptop", "l\u0430ptop"},
		{"copy", "\u0441\u043e\u0440\u0443"},
		{"laptop", "Iaptop"},
		{"ci1", "cil"},
		{"my laptop", "my  laptop "},
		{"good", "g\u03bfod"},
	} {
		assert.Equal(t, cctext.NameKey(pair[0]), cctext.NameKey(pair[1]), "%+q and %+q look alike", pair[0], pair[1])
	}
	for _, pair := range [][2]string{
		{"laptop", "Laptop"},
		{"laptop", "laptops"},
		{"caf\u00e9", "cafe"},
		{"台所", "台所 🍳"},
	} {
		assert.NotEqual(t, cctext.NameKey(pair[0]), cctext.NameKey(pair[1]), "%+q and %+q do not", pair[0], pair[1])
	}
}

// TestAWordMixingScriptsIsFound: a word holding letters of two scripts (Latin with a
// Cyrillic а or a Greek ο) is found, with its scripts; words of one script each, digits and
// punctuation, and the scripts a language writes together (Japanese's kanji and kana, with
// Latin) are not.
func TestAWordMixingScriptsIsFound(t *testing.T) {
	for name, want := range map[string][]string{
		"l\u0430ptop":     {"Latin", "Cyrillic"},
		"my g\u03bfod pc": {"Latin", "Greek"},
		"\u0430bc-2":      {"Cyrillic", "Latin"},
	} {
		word, scripts := cctext.MixedScripts(name)
		assert.NotEmpty(t, word, "%+q", name)
		assert.Equal(t, want, scripts, "%+q", name)
	}
	word, _ := cctext.MixedScripts("my g\u03bfod pc")
	assert.Equal(t, "g\u03bfod", word)
	for _, name := range []string{"laptop", "Alice's phone (ünïcode)", "ноутбук Alice", "π-calc", "台所 🍳", "🍳 キッチン", "台所kitchen", "한국어 PC", "ci 2", ""} {
		word, scripts := cctext.MixedScripts(name)
		assert.Empty(t, word, "%+q", name)
		assert.Empty(t, scripts, "%+q", name)
	}
}

// TestShowNameSpellsOutANameKeptBeforeTheRule: a name as the rule keeps names (NFC, a script
// a word) is shown as ShowDistinct shows it; one that is not (kept before the rule) is spelled
// out, every character beyond ASCII as its escape, so it never lists as the name it looks
// like; spell spells out any name (a listing's twins); a backslash that would start an escape
// is \x5c, so no name reads as another's escape, and a space no listing would show (at an end,
// a second one) is \x20.
func TestShowNameSpellsOutANameKeptBeforeTheRule(t *testing.T) {
	for name, want := range map[string]string{
		"laptop":            "laptop",
		"caf\u00e9":         "caf\u00e9",
		"台所 🍳":              "台所 🍳",
		"a\u200bb":          `a\u200bb`,
		"a\u00a0b":          `a\xa0b`,
		"x\ny":              `x\x0ay`,
		"bad\xff":           `bad\xff`,
		"cafe\u0301":        `cafe\u0301`,
		"l\u0430ptop":       `l\u0430ptop`,
		"caf\u00e9 l\u0430": `caf\xe9 l\u0430`,
		`l\u0430ptop`:       `l\x5cu0430ptop`,
		`C:\work`:           `C:\work`,
		"my laptop":         "my laptop",
		" my  laptop ":      `\x20my \x20laptop\x20`,
	} {
		assert.Equal(t, want, cctext.ShowName(name, false), "%+q", name)
	}
	assert.Equal(t, `\u0441\u043e\u0440\u0443`, cctext.ShowName("\u0441\u043e\u0440\u0443", true))
	assert.Equal(t, `caf\xe9`, cctext.ShowName("caf\u00e9", true))
	assert.Equal(t, "laptop", cctext.ShowName("laptop", true))
	assert.True(t, cctext.KeptAsARule("caf\u00e9"))
	assert.False(t, cctext.KeptAsARule("cafe\u0301"))
	assert.False(t, cctext.KeptAsARule("l\u0430ptop"))
}
