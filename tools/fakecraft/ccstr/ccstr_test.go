package ccstr

import (
	"testing"

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

func TestClipboard(t *testing.T) {
	assert.Equal(t, "k\xfcche", Clipboard([]byte("küche\nsecond line")))
	assert.Equal(t, "a?b?", Clipboard([]byte("a\tb€")))
	long := make([]byte, MaxPaste+10)
	for i := range long {
		long[i] = 'x'
	}
	assert.Len(t, Clipboard(long), MaxPaste)
}
