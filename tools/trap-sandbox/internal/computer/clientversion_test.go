package computer

import (
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
		if got := OlderVersion(c.have, c.want); got != c.older {
			t.Errorf("OlderVersion(%q, %q) = %v", c.have, c.want, got)
		}
	}
}

// A client takes the screen.input events of the first list whatever its version, and each
// added since from the version that brought it.
func TestTakesInput(t *testing.T) {
	for _, c := range []struct {
		client, typ string
		takes       bool
	}{
		{"", InputClick, true}, {"0.5.14", InputScroll, true},
		{"0.5.20", InputDrag, false}, {"0.5.21", InputDrag, true}, {"", InputDrag, false},
		{"0.5.21", InputMouseClick, false}, {"0.5.21", InputMouseUp, false},
		{"0.5.22", InputMouseClick, true}, {"0.6.0", InputMouseUp, true},
	} {
		assert.Equal(t, c.takes, TakesInput(c.client, c.typ), "%s on %q", c.typ, c.client)
	}
}
