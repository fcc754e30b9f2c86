package gateway

import "testing"

func TestOlderVersion(t *testing.T) {
	for _, c := range []struct {
		have, want string
		older      bool
	}{
		{"0.1.0", "0.2.0", true}, {"0.2.0", "0.2.0", false}, {"0.10.0", "0.9.9", false},
		{"1.0.0", "0.9.0", false}, {"0.2.1", "0.2.10", true}, {"", "0.2.0", true},
		{"x", "0.2.0", true}, {"0.1", "0.2.0", true}, {"0.1.0", "", false},
	} {
		if got := olderVersion(c.have, c.want); got != c.older {
			t.Errorf("olderVersion(%q, %q) = %v", c.have, c.want, got)
		}
	}
}
