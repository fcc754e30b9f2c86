package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// TestAReplicaWhoseHeartbeatsStoppedSaysSoWhenItRunsAgain: a replica whose process did not run
// for longer than --nats-replica-ttl (played: SIGSTOP for 42 s, then SIGCONT) was taken for dead
// by the others ("another replica sent no heartbeat within --nats-replica-ttl: taken for dead",
// its computers gone from their lists) and then alive again, while its own log said nothing of
// either: an operator reading it saw no gap. As it runs again it says how long its heartbeats
// stopped and what the others made of it. The shared clock's jump stands for the stop.
func TestAReplicaWhoseHeartbeatsStoppedSaysSoWhenItRunsAgain(t *testing.T) {
	tc := newTestCluster(t)
	a := tc.startReplica("a")
	line := `level=WARN msg="this replica's heartbeats stopped for longer than --nats-replica-ttl (its process did not run: SIGSTOP, a paused VM or container, a host out of CPU or memory; or its heartbeat loop was held up): ` +
		`the other replicas took it for dead meanwhile, and its computers left their lists until this heartbeat" replica=a component=cluster`
	require.Eventually(t, func() bool {
		a.router.tickMu.Lock()
		defer a.router.tickMu.Unlock()
		return !a.router.lastTick.IsZero()
	}, waitLimit, testkit.Poll, "the replica's first heartbeat tick")

	tc.clock.Advance(testReplicaTTL + time.Minute)
	require.Eventually(t, func() bool { return strings.Contains(tc.logs.String(), line) }, waitLimit, testkit.Poll, "the line of the stopped heartbeats")
	for l := range strings.Lines(tc.logs.String()) {
		if strings.Contains(l, line) {
			assert.Contains(t, l, " stoppedFor=1h1m", "how long, at least")
		}
	}
	assert.Equal(t, 1, strings.Count(tc.logs.String(), line), "once for one stop")
}
