package spelling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"trap-sandbox/internal/spelling"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"ping", "ping", 0}, {"pign", "ping", 2}, {"computer", "computers", 1},
		{"colors", "colours", 1}, {"lenght", "length", 2}, {"küche", "kuche", 1}, {"", "abc", 3},
	} {
		assert.Equal(t, tc.want, spelling.Distance(tc.a, tc.b), "%q %q", tc.a, tc.b)
		assert.Equal(t, tc.want, spelling.Distance(tc.b, tc.a), "%q %q", tc.b, tc.a)
	}
}

// TestNearest: a name in another case, or cut short, or by at most two letters is named; a
// word of fewer than four letters only in another case; none close is "".
func TestNearest(t *testing.T) {
	names := []string{"alice", "bob", "Küche"}
	for word, want := range map[string]string{
		"alcie": "alice", "ALICE": "alice", "alic": "alice", "alicee": "alice", "alixe": "alice",
		"BOB": "bob", "bo": "", "bbo": "", "küchen": "Küche", "kuche": "Küche",
		"carol": "", "": "", "axxxe": "",
	} {
		assert.Equal(t, want, spelling.Nearest(word, names), word)
	}
}
