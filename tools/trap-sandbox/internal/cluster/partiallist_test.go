package cluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/testkit"
)

// TestAReplicaCutOffFromNATSListsOnlyItsOwnComputersAtOnce: from the moment a replica loses
// NATS its list holds only the computers whose sockets it holds, as its X-Trapos-Partial-List
// says, not the others' claims it read before until --nats-replica-ttl passes (played: replica
// c cut off listed 5:küche of replica a, under the header saying it listed only its own, and a
// ping of 5:küche through c answered not_connected, "NATS is unreachable"). The replica TTL is
// an hour here, so the others' claims are still fresh when the list is read. Back on NATS, it
// lists the others' computers again.
func TestAReplicaCutOffFromNATSListsOnlyItsOwnComputersAtOnce(t *testing.T) {
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	c, cutC := tc.startCuttableReplica("c", gateway.Config{})
	a.connect(t, "5:küche")
	c.connect(t, "11:schuppen")
	c.waitComputers(t, "11:schuppen@c", "5:küche@a")

	cutC.setCut(true)
	require.Eventually(t, func() bool { return !c.nc.IsConnected() }, waitLimit, testkit.Poll, "C to notice NATS is gone")
	assert.Equal(t, []string{"11:schuppen@c"}, c.computers(t), "the list of a replica cut off")
	assert.Contains(t, c.router.PartialList(), "only the computers it holds are listed")

	cutC.setCut(false)
	c.waitComputers(t, "11:schuppen@c", "5:küche@a")
	assert.Empty(t, c.router.PartialList())
}
