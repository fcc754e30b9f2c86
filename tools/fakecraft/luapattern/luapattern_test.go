package luapattern

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// find is string.find without init: the 1-based span of the first match and its captures.
func find(t *testing.T, src, pat string) (int, int, []string) {
	t.Helper()
	m := New(src, pat, nil)
	p := 0
	if len(pat) > 0 && pat[0] == '^' {
		p = 1
	}
	for s := 0; s <= len(src); s++ {
		e, err := m.Match(s, p)
		require.NoError(t, err)
		if e >= 0 {
			var caps []string
			for i := 0; i < m.Level(); i++ {
				text, _, _, err := m.Capture(i, s, e)
				require.NoError(t, err)
				caps = append(caps, text)
			}
			return s + 1, e, caps
		}
		if p == 1 {
			break
		}
	}
	return 0, 0, nil
}

func TestMatches(t *testing.T) {
	tests := []struct {
		src, pat string
		start    int
		end      int
		caps     []string
	}{
		{"hello world", "o w", 5, 7, nil},
		{"hello world", "^hello", 1, 5, nil},
		{"hello world", "^world", 0, 0, nil},
		{"hello", "l+", 3, 4, nil},
		{"hello", "l-o", 3, 5, nil},
		{"key = value", "(%w+)%s*=%s*(%w+)", 1, 11, []string{"key", "value"}},
		{"a\tb c", "[^%g ]", 2, 2, nil}, // %g: printable but not space
		{"THE (quick) fox", "%f[%a]%a+", 1, 3, nil},
		{"THE (quick) fox", "%b()", 5, 11, nil},
		{"abcabc", "(abc)%1", 1, 6, []string{"abc"}},
		{"x = 1", "%d$", 5, 5, nil},
		{"aaa", "a?b?", 1, 1, nil},
		{"[x]", "[%[]", 1, 1, nil},
		{"a-b", "[a-]", 1, 1, nil},
	}
	for _, tt := range tests {
		s, e, caps := find(t, tt.src, tt.pat)
		assert.Equal(t, []any{tt.start, tt.end, tt.caps}, []any{s, e, caps}, "%q in %q", tt.pat, tt.src)
	}
}

func TestMalformedPatterns(t *testing.T) {
	for pat, msg := range map[string]string{
		"%":   "malformed pattern (ends with '%')",
		"[a":  "malformed pattern (missing ']')",
		"(a":  "unfinished capture",
		"a)":  "invalid pattern capture",
		"%1":  "invalid capture index",
		"%fa": "missing '[' after '%f' in pattern",
		"%b":  "malformed pattern (missing arguments to '%b')",
	} {
		m := New("aaa", pat, nil)
		e, err := m.Match(0, 0)
		if err == nil && e >= 0 {
			_, _, _, err = m.Capture(0, 0, e)
		}
		assert.EqualError(t, err, msg, pat)
	}
}

func TestStopEndsARunawayMatch(t *testing.T) {
	src := make([]byte, 10000)
	for i := range src {
		src[i] = 'a'
	}
	polls := 0
	m := New(string(src), ".-.-.-.-b$", func() bool { polls++; return polls > 3 })
	_, err := m.Match(0, 0)
	assert.ErrorIs(t, err, ErrStopped)
}
