package ccstr

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestFromText(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"ascii":            {"kitchen", "kitchen"},
		"latin-1 as bytes": {"küche", "k\xfcche"},
		"past U+00FF":      {"a€b", "a?b"},
		"raw byte kept":    {"k\xfcche", "k\xfcche"},
		"empty":            {"", ""},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, FromText(tc.in))
		})
	}
}

func TestToText(t *testing.T) {
	assert.Equal(t, "kitchen", ToText("kitchen"))
	assert.Equal(t, "küche\u009b", ToText("k\xfcche\x9b"))
	for _, b := range allBytes() {
		assert.Equal(t, string([]byte{b}), FromText(ToText(string([]byte{b}))), "byte %d", b)
	}
}

func TestClipboard(t *testing.T) {
	assert.Equal(t, "k\xfcche", Clipboard([]byte("küche\nsecond line")))
	assert.Equal(t, "a?b?", Clipboard([]byte("a\tb€")))
	long := make([]byte, MaxPaste+10)
	for i := range long {
		long[i] = 'x'
	}
	assert.Len(t, Clipboard(long), MaxPaste)

	// Minecraft's clipboard is a Java string: a character past U+FFFF (an emoji) is two
	// UTF-16 chars, each one CC cannot show, and both count towards the 512.
	assert.Equal(t, "a??b", Clipboard([]byte("a😀b")))
	emojis := []byte(strings.Repeat("x", MaxPaste-3) + "😀😀")
	assert.Equal(t, strings.Repeat("x", MaxPaste-3)+"???", Clipboard(emojis), "cut inside the second's pair")
}

func TestLabel(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"kept":                 {"kitchen", "kitchen"},
		"latin-1 kept":         {"k\xfcche", "k\xfcche"},
		"controls become ?":    {"a\nb\x7fc\xa0d\xade", "a?b?c?d?e"},
		"cut to 32, then ?":    {strings.Repeat("x", 31) + "\n\n", strings.Repeat("x", 31) + "?"},
		"cut to 32 characters": {strings.Repeat("L", 40), strings.Repeat("L", 32)},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, Label(tc.in))
		})
	}
}

func TestGlyph(t *testing.T) {
	assert.Equal(t, "a", Glyph('a'))
	assert.Equal(t, "é", Glyph(0xe9))
	assert.Equal(t, " ", Glyph(0), "blank in CC's font")
	assert.Equal(t, " ", Glyph('\n'))
	assert.Equal(t, "☺", Glyph(1))
	assert.Equal(t, "►", Glyph(16))
	assert.Equal(t, "▼", Glyph(31))
	assert.Equal(t, "▒", Glyph(127))
	assert.Equal(t, " ", Glyph(128))
	assert.Equal(t, "\U0001FB00", Glyph(129), "top-left sextant")
	assert.Equal(t, "▌", Glyph(128+21), "left half")
	assert.Equal(t, "\U0001FB14", Glyph(128+22), "after the skipped left half")
	assert.Equal(t, "\U0001FB1D", Glyph(159), "sextant-12345: all but the bottom right")
}

func TestShown(t *testing.T) {
	assert.Equal(t, "plain text", Shown("plain text"))
	assert.Equal(t, "küche", Shown("k\xfcche"))
	assert.Equal(t, "a\tb\nc \U0001FB00", Shown("a\tb\nc \x81"), "printable ASCII, tabs and line breaks as written")
	assert.Equal(t, "►☺▒", Shown("\x10\x01\x7f"), "control bytes as the font draws them")
	assert.True(t, utf8.ValidString(Shown(string(allBytes()))))
}

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestDecodeUTF8(t *testing.T) {
	cases := map[string]string{
		"plain":             "plain",
		"é":                 "é",
		"\xff\xff":          "\uFFFD\uFFFD",
		"\xe2\x82A":         "\uFFFDA",
		"\xed\xa0\x80":      "\uFFFD\uFFFD\uFFFD", // an encoded surrogate is not UTF-8
		"\xc0\xaf":          "\uFFFD\uFFFD",       // overlong
		"\xf0\x9f\x98\x80x": "\U0001F600x",
		"\xf0\x9f\x98":      "\uFFFD",
	}
	for in, want := range cases {
		assert.Equal(t, want, DecodeUTF8(in), "%q", in)
	}
}
