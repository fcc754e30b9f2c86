package cluster

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// fillClaims makes the claims bucket's stream full, as an operator's limits on it reached do:
// JetStream refuses every claim, of a computer not in the bucket yet ("maximum messages
// exceeded") or in it ("maximum messages per subject exceeded"). With full false, it lifts the
// limits again.
func fillClaims(t testing.TB, nc *nats.Conn, full bool) {
	t.Helper()
	changeClaimsStream(t, nc, func(info *jetstream.StreamInfo) {
		cfg := &info.Config
		require.Equal(t, jetstream.DiscardNew, cfg.Discard, "a bucket refuses writes over its limits")
		cfg.MaxMsgs, cfg.DiscardNewPerSubject = -1, full
		if full {
			require.NotZero(t, info.State.Msgs, "a limit of 0 messages is none")
			cfg.MaxMsgs = int64(info.State.Msgs)
		}
	})
}

// changeClaimsStream updates the configuration of the claims bucket's stream as change edits
// it (info.Config), given the stream's state.
func changeClaimsStream(t testing.TB, nc *nats.Conn, change func(info *jetstream.StreamInfo)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	s, err := js.Stream(ctx, "KV_"+ClaimsBucket)
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	change(info)
	_, err = js.UpdateStream(ctx, info.Config)
	require.NoError(t, err)
}

// gaugeValue is the value of the gauge name gathered from reg.
func gaugeValue(t testingT, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			require.Len(t, f.GetMetric(), 1)
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	require.Failf(t, "no metric", "%s", name)
	return 0
}

// waitBeats waits until r has written n more heartbeats: n heartbeat ticks have passed.
func (r *replica) waitBeats(t testing.TB, n uint64) {
	t.Helper()
	from := r.heartbeatRevision(t)
	require.Eventually(t, func() bool { return r.heartbeatRevision(t) >= from+n }, waitLimit, testkit.Poll,
		"%d heartbeats of %s", n, r.name)
}

const unannouncedGauge = "trapos_gateway_claims_unannounced"

// A claim that NATS, connected, does not take (its JetStream over a limit of the bucket, or
// electing a leader) is written again at the heartbeat ticks: before, nothing tried again until
// the next reconnection, and for as long as the socket lived the other replicas answered its
// requests not_connected, with one WARN line and nothing else to tell the operator.
func TestAClaimNATSDidNotTakeIsWrittenOnceItDoes(t *testing.T) {
	tc := newTestCluster(t)
	reg := prometheus.NewRegistry()
	a, b := tc.startReplicaSettings("a", Settings{}, reg), tc.startReplica("b")
	b.connect(t, "1:marker")
	a.waitComputers(t, "1:marker@b")

	fillClaims(t, b.nc, true)
	c := a.connect(t, "8:base")
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Equal(ct, 1.0, gaugeValue(ct, reg, unannouncedGauge))
	}, waitLimit, testkit.Poll)
	res := await(t, b.request("8:base", gateway.TypePing, nil, waitLimit))
	assert.Equal(t, http.StatusNotFound, res.status)
	require.NotNil(t, res.body.Error)
	assert.Equal(t, protocol.CodeNotConnected, res.body.Error.Code)
	a.waitBeats(t, 3) // tries again while NATS still refuses: logged once
	assert.Equal(t, 1.0, gaugeValue(t, reg, unannouncedGauge))
	assert.Equal(t, 1, strings.Count(tc.logs.String(), "cannot claim the computer in NATS"), "logged once per computer, not per try")

	fillClaims(t, b.nc, false)
	waitClaim(t, b.router.claims, "8:base", "a")
	b.waitComputers(t, "1:marker@b", "8:base@a")
	pending := b.request("8:base", gateway.TypePing, nil, waitLimit)
	c.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "8:base"})
	assert.Equal(t, http.StatusOK, await(t, pending).status)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Zero(ct, gaugeValue(ct, reg, unannouncedGauge))
	}, waitLimit, testkit.Poll)
	// The line is written after the claim's state (and the gauge) changed: wait for it.
	const claimed = "claimed the computer in NATS: the other replicas find it now"
	require.Eventually(t, func() bool { return strings.Contains(tc.logs.String(), claimed) }, waitLimit, testkit.Poll)
	assert.Equal(t, 1, strings.Count(tc.logs.String(), claimed))
	assert.Zero(t, a.nc.Stats().Reconnects, "without a reconnection")
}

// A hello on another replica after the one whose claim NATS did not take is the later: the
// computer keeps that newer socket, and the older one closes with 4009, whichever replica's
// claim gets into the bucket first. Written again blindly (Put), the older hello's claim went
// over the newer one's, and closed the computer's newer socket.
func TestAHelloElsewhereAfterAClaimNATSDidNotTakeKeepsTheComputer(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	b.connect(t, "1:marker")
	a.waitComputers(t, "1:marker@b")

	fillClaims(t, b.nc, true)
	release := holdBeats(t, a.router) // A tries nothing again until B's claim is in
	old := a.connect(t, "8:base")
	require.Eventually(t, func() bool { return a.router.unannounced() == 1 }, waitLimit, testkit.Poll)
	fillClaims(t, b.nc, false)
	newer := b.connect(t, "8:base")
	rev := waitClaim(t, b.router.claims, "8:base", "b")
	release()

	code, _ := old.closeCode()
	assert.Equal(t, gateway.CloseReplaced, code)
	a.waitComputers(t, "1:marker@b", "8:base@b")
	a.waitBeats(t, 2)
	pending := a.request("8:base", gateway.TypePing, nil, waitLimit)
	newer.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "8:base"})
	assert.Equal(t, http.StatusOK, await(t, pending).status)
	e, err := b.router.claims.Get(t.Context(), claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: "8:base"}))
	require.NoError(t, err)
	assert.Equal(t, "b", claimantOf(e))
	assert.Equal(t, rev, e.Revision(), "b's claim was written over")
}

// A computer that moved to A (its socket on B half-open, say) while NATS did not take A's claim
// keeps its socket on A once NATS does: A's claim goes over B's, the one its hello replaced,
// and B closes the older socket with 4009.
func TestAClaimNATSDidNotTakeGoesOverTheOneItsHelloReplaced(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	old := b.connect(t, "8:base")
	a.waitComputers(t, "8:base@b")

	fillClaims(t, b.nc, true)
	newer := a.connect(t, "8:base")
	require.Eventually(t, func() bool { return a.router.unannounced() == 1 }, waitLimit, testkit.Poll)
	b.waitComputers(t, "8:base@b") // B still routes to its socket
	fillClaims(t, b.nc, false)

	code, _ := old.closeCode()
	assert.Equal(t, gateway.CloseReplaced, code)
	waitClaim(t, b.router.claims, "8:base", "a")
	b.waitComputers(t, "8:base@a")
	pending := b.request("8:base", gateway.TypePing, nil, waitLimit)
	newer.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "8:base"})
	assert.Equal(t, http.StatusOK, await(t, pending).status)
}

// setDirectGets lets the claims bucket answer reads (direct gets, which the replicas bound it
// for), or, with on false, leaves them unanswered, as a stream whose leader is being elected.
func setDirectGets(t testing.TB, nc *nats.Conn, on bool) {
	t.Helper()
	changeClaimsStream(t, nc, func(info *jetstream.StreamInfo) { info.Config.AllowDirect = on })
}

// A claim that could not be checked after a reconnection (its read unanswered) is checked
// again at the heartbeat ticks: after NATS lost its store, the computer is claimed again once
// NATS answers. Before, it stayed out of the new bucket, and the other replicas answered its
// requests not_connected, until the next reconnection.
func TestAClaimNotCheckedAfterReconnectingIsCheckedAtTheNextHeartbeats(t *testing.T) {
	// A's reconnection is held where it starts to read the new bucket (rewatch), before it
	// checks its claims (reclaim), while the test leaves the bucket's reads unanswered.
	holdA := newGate()
	watchersStopping = func(replica string, _ bool) {
		if replica == "a" {
			holdA.pass()
		}
	}
	t.Cleanup(func() { watchersStopping = nil }) // after the cluster's own cleanup
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	t.Cleanup(holdA.open) // before the replicas stop
	c := a.connect(t, "8:base")
	b.waitComputers(t, "8:base@a")

	tc.restartNATSWithoutItsStoreHolding(holdA, a, b)
	setDirectGets(t, b.nc, false)
	holdA.open()
	require.Eventually(t, func() bool { return a.router.unannounced() == 1 }, waitLimit, testkit.Poll, "A to fail to check its claim")
	a.waitBeats(t, 3)
	assert.Equal(t, 1, a.router.unannounced())
	assert.Equal(t, 1, strings.Count(tc.logs.String(), "cannot check a claim after reconnecting"), "logged once per computer, not per try")

	setDirectGets(t, b.nc, true)
	waitClaim(t, b.router.claims, "8:base", "a")
	pending := b.request("8:base", gateway.TypePing, nil, waitLimit)
	c.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "8:base"})
	assert.Equal(t, http.StatusOK, await(t, pending).status)
	require.Eventually(t, func() bool { return a.router.unannounced() == 0 }, waitLimit, testkit.Poll)
}
