package gateway

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

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

// The gateway tells each computer once that its client is older, and what it remembers for
// that stays bounded however many labels computers say hello with.
func TestClientVersionsRememberABoundedNumberOfComputers(t *testing.T) {
	var v clientVersions
	assert.True(t, v.first(Key{TraposID: "1:"}))
	assert.False(t, v.first(Key{TraposID: "1:"}), "told once")
	for i := range 3 * maxWarnedClients {
		v.first(Key{TraposID: "7:" + strconv.Itoa(i)})
	}
	assert.LessOrEqual(t, len(v.warned), maxWarnedClients)
}
