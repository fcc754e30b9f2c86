package table

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/text/width"

	"trap-sandbox/internal/cctext"
)

func TestColumnsCountsWhatATerminalDraws(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want int
	}{
		{"ascii", "laptop", 6},
		{"empty", "", 0},
		{"kanji are wide", "台所", 4},
		{"katakana are wide", "キッチン", 8},
		{"hangul syllables are wide", "부엌", 4},
		{"fullwidth forms are wide", "ＡＢ", 4},
		{"halfwidth katakana are narrow", "ｷｯﾁﾝ", 4},
		{"an emoji drawn as a picture is wide", "🍳", 2},
		{"a precomposed é is one", "caf\u00e9", 4},
		{"a combining accent takes none", "cafe\u0301", 4},
		{"an enclosing mark takes none", "1\u20e3", 1},
		{"a zero-width space takes none", "a\u200bb", 2},
		{"a decomposed hangul syllable is its leading consonant's two", "\u1100\u1161\u11a8", 2},
		{"a soft hyphen is drawn as a hyphen", "a\u00adb", 3},
		{"an arabic number sign is drawn", "\u0600١٢", 3},
		{"a no-break space is a space", "a\u00a0b", 3},
		{"control characters draw nothing", "a\x1b\u009bb", 2},
		{"a byte that is not UTF-8 is one", "a\xffb", 3},
		{"joined emoji count character by character", "👩\u200d🍳", 4},
		{"a variation selector takes none", "\u2764\ufe0f", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Columns(tc.text), "%q", tc.text)
		})
	}
}

// TestAmbiguousCharactersAreNarrow: Unicode leaves their width to the context; outside a
// CJK setting terminals draw them one column wide, and so do the tables.
func TestAmbiguousCharactersAreNarrow(t *testing.T) {
	for _, r := range "é±°½×ßαД─│┌\u00ad" {
		assert.Equal(t, width.EastAsianAmbiguous, width.LookupRune(r).Kind(), "%q is ambiguous", r)
		assert.Equal(t, 1, Columns(string(r)), "%q", r)
	}
}

// TestCCCharactersAreOneColumnEach: a label or a file name read from a computer holds CC's
// bytes as cctext maps them: printable ASCII and Latin-1 (U+00A0–U+00FF), all drawn one
// column wide (most of Latin-1 is East Asian ambiguous), and the control bytes and CC's
// drawing characters 0x80–0x9F as \xNN once shown, four columns of ASCII.
func TestCCCharactersAreOneColumnEach(t *testing.T) {
	for b := 0x20; b <= 0xff; b++ {
		text := cctext.FromCC([]byte{byte(b)})
		switch {
		case b >= 0x7f && b <= 0x9f:
			shown := cctext.Show(text, false)
			assert.Len(t, shown, 4, "byte %#x", b)
			assert.Equal(t, 4, Columns(shown), "byte %#x shown as %q", b, shown)
		default:
			assert.Equal(t, 1, Columns(text), "byte %#x (%q)", b, text)
		}
	}
}
