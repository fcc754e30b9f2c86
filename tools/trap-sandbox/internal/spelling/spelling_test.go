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
