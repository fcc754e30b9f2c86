package gateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// TestComputersAreListedByTheirIDAsANumber: the host's lists (the API, trap-sandbox computers,
// MCP's list_computers, the web console) put 10:shed and 107:shed before 7:kitchen, ordered
// as text; a person looks for 7 between 2 and 10.
func TestComputersAreListedByTheirIDAsANumber(t *testing.T) {
	h := newHarness(t, Config{Password: "pw"}, nil)
	for _, id := range []string{"10:shed", "7:kitchen", "107:shed", "2:door", "7:attic"} {
		h.connect(t, id, "pw")
	}
	require.Eventually(t, func() bool { return len(h.gw.Computers()) == 5 }, waitLimit, testkit.Poll, "five computers listed")
	var ids []string
	for _, c := range h.gw.Computers() {
		ids = append(ids, c.TraposID)
	}
	assert.Equal(t, []string{"2:door", "7:attic", "7:kitchen", "10:shed", "107:shed"}, ids)
}
