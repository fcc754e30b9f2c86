package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// holdAfterNameCheck makes the routers that start from now on wait, each, after finding their
// name free and before subscribing under it, until the test lets them on: checked tells that a
// router got there, and letOn(i) lets the i-th one (from 0) on.
func holdAfterNameCheck(t *testing.T, routers int) (checked <-chan string, letOn func(i int)) {
	t.Helper()
	arrived := make(chan string, routers)
	gates := make([]chan struct{}, routers)
	opens := make([]sync.Once, routers)
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	letOn = func(i int) { opens[i].Do(func() { close(gates[i]) }) }
	var mu sync.Mutex
	next := 0
	nameChecked = func(replica string) {
		mu.Lock()
		i := next
		next++
		mu.Unlock()
		arrived <- replica
		<-gates[i]
	}
	t.Cleanup(func() {
		for i := range gates {
			letOn(i) // a test that failed midway leaves no router waiting
		}
		nameChecked = nil
	})
	return arrived, letOn
}

// awaitChecked waits until a router has found its name free (holdAfterNameCheck).
func awaitChecked(t *testing.T, checked <-chan string) {
	t.Helper()
	select {
	case <-checked:
	case <-time.After(waitLimit):
		t.Fatal("no router got past the name check")
	}
}

// openTwins opens two routers named "a" that both find the name free: the first (the older,
// its metrics in olderReg when not nil) waits after its check while the second makes its own.
// Neither goes on until letOn(0) (the older) or letOn(1) (the newer); each sends its outcome
// on its channel.
func openTwins(t *testing.T, tc *testCluster, olderReg prometheus.Registerer) (older, newer <-chan openedRouter, letOn func(i int)) {
	t.Helper()
	checked, letOn := holdAfterNameCheck(t, 2)
	olderOpened, newerOpened := make(chan openedRouter, 1), make(chan openedRouter, 1)
	go func() { olderOpened <- tc.openRouter("a", tc.url(), olderReg) }()
	awaitChecked(t, checked)
	go func() { newerOpened <- tc.openRouter("a", tc.url(), nil) }()
	awaitChecked(t, checked)
	return olderOpened, newerOpened, letOn
}

// counterValue is the value of the counter name gathered from reg (0 if it has no sample).
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			require.Len(t, f.GetMetric(), 1)
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// Two replicas of one name started at the same moment (two copies of one configuration) both
// find the name free at start. Each took the other's claims for those of its own previous run
// and deleted them, so the computers on the older one flickered out of every list, and nothing
// ever noticed. Now the newer one fails as the start-time check would have failed it, and the
// older one serves on: it logs the twin once, counts it, and its computers' claims are its
// own again.
func TestTwoReplicasOfOneNameStartedAtOnceLeaveTheOlderServing(t *testing.T) {
	tc := newTestCluster(t)
	c := tc.startReplica("c") // a third replica, which lists and routes to "a"
	reg := prometheus.NewRegistry()
	olderOpened, newerOpened, letOn := openTwins(t, tc, reg)

	// The older one starts and serves two computers before the newer one goes on.
	letOn(0)
	opened := <-olderOpened
	require.NoError(t, opened.err)
	older := tc.serveReplica(opened, gateway.Config{})
	kitchen := older.connect(t, "1:kitchen")
	mill := older.connect(t, "2:mill")
	c.waitComputers(t, "1:kitchen@a", "2:mill@a")

	// The older one's heartbeats wait while the newer one starts, so that the newer one, not
	// finding the older one under the name yet, takes its claims for its previous run's and
	// deletes them, as twins did before they found each other.
	claimRev := func() uint64 {
		e, err := c.router.claims.Get(t.Context(), claimKey(gateway.Key{AccountID: gateway.LocalAccount, TraposID: "1:kitchen"}))
		if err != nil {
			return 0
		}
		return e.Revision()
	}
	written := claimRev()
	releaseBeats := holdBeats(t, older.router)
	letOn(1)
	opened = <-newerOpened
	require.NoError(t, opened.err, "the newer one found the name free too")
	newer := tc.serveReplica(opened, gateway.Config{})
	require.Eventually(t, func() bool { return claimRev() > written }, waitLimit, testkit.Poll,
		"the newer one to delete the older one's claim, and the older one to write it again")
	waitOwnBeatBack(t, newer.router) // or it takes the older one's heartbeat for its previous run's
	releaseBeats()
	select {
	case <-newer.router.Failed():
	case <-time.After(waitLimit):
		t.Fatal("the newer replica of the name did not give it up")
	}
	assert.Regexp(t, `^`+regexp.QuoteMeta(`the replica name "a" is taken: another replica runs under it, started before this one, and the older of the two keeps it (started `)+
		`\S+; this one \S+\)\. `+regexp.QuoteMeta(`Give each replica its own --replica (SANDBOX_REPLICA), or stop the other one first`)+`$`,
		newer.router.Err().Error())
	newer.stop() // as the serve command does when the router fails
	assert.NoError(t, older.router.Err(), "the older one serves on")

	// The older one logs the twin once, and its heartbeat is its own again.
	logged := `level=ERROR msg="` + twinLine
	require.Eventually(t, func() bool { return strings.Contains(tc.logs.String(), logged) }, waitLimit, testkit.Poll)
	assert.True(t, strings.HasPrefix(twinLine, "a second replica runs under this replica's name, started after this one or at the same instant; "),
		"not \"at the same moment\": the twin may have started hours later (a replica hung meanwhile)")
	require.Eventually(t, func() bool {
		e, err := c.router.replicas.Get(t.Context(), escapeToken("a"))
		if err != nil {
			return false
		}
		var beat heartbeatValue
		return json.Unmarshal(e.Value(), &beat) == nil && beat.Instance == older.router.instance && !beat.Yielded
	}, waitLimit, testkit.Poll, "the heartbeat under the name to be the older one's")
	assert.Equal(t, 1, strings.Count(tc.logs.String(), logged), tc.logs.String())
	assert.Equal(t, 1.0, counterValue(t, reg, "trapos_gateway_replica_name_twins_total"))

	// Its computers are listed, claimed and reachable through the third replica.
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Equal(ct, map[string]string{"1:kitchen": "a", "2:mill": "a"}, claimsInBucket(ct, c.router))
	}, waitLimit, testkit.Poll, "the older one's claims")
	c.waitComputers(t, "1:kitchen@a", "2:mill@a")
	for _, computer := range []*computer{kitchen, mill} {
		pong := c.request(computer.id, gateway.TypePing, nil, waitLimit)
		computer.answerRequest(pong, gateway.TypePing, map[string]any{"traposId": computer.id})
		res := await(t, pong)
		assert.Equal(t, http.StatusOK, res.status, "%s: %+v", computer.id, res.body.Error)
	}
}

// The newer of two twins takes no computer on from the moment it yields: its goodbye writes no
// claim, so a computer taken on there until it stops would be announced to no replica. A new
// socket is refused (503), and a hello on a socket opened before is answered not_connected
// and closed with 1001; before, that hello was answered ok and the computer served unannounced.
func TestAYieldingTwinTakesNoComputerOn(t *testing.T) {
	tc := newTestCluster(t)
	olderOpened, newerOpened, letOn := openTwins(t, tc, nil)
	letOn(0)
	opened := <-olderOpened
	require.NoError(t, opened.err)
	older := tc.serveReplica(opened, gateway.Config{})
	// The older one's heartbeats wait, so that the newer one does not find it, and yield,
	// before the socket below is open.
	releaseOlderBeats := holdBeats(t, older.router)
	letOn(1)
	opened = <-newerOpened
	require.NoError(t, opened.err)
	newer := tc.serveReplica(opened, gateway.Config{})
	early := newer.dial(t, "1:early")
	// A hello without a traposId is answered and the socket stays: its session runs.
	early.send(map[string]any{"event": "computer_request", "traposSenderId": "", "messageId": "probe-1",
		"type": gateway.TypeHello, "payload": map[string]any{}})
	require.Equal(t, "probe-1", early.read().MessageID)

	// The newer one's last heartbeat, which ends its yield (Failed, then the stop), waits for
	// the heartbeat lock: it is leaving meanwhile, its gateway not stopped yet. Held, the newer
	// one writes no heartbeat again, so it must have seen its first come back before the older
	// one's replaces it (.ci/run once saw the newer one never yield: its watcher had missed it).
	waitOwnBeatBack(t, newer.router)
	releaseNewerBeats := holdBeats(t, newer.router)
	releaseOlderBeats() // the older one's heartbeat: the newer one yields
	// The clock moves on while the test waits, as it does for replicas that run: should the
	// newer one not take in the heartbeat the older one writes at once (.ci/run once waited 10 s
	// for it in vain), the older one's next heartbeat, every interval, makes it yield, as it
	// would outside a test.
	require.Eventually(t, func() bool {
		if newer.router.Leaving() {
			return true
		}
		tc.clock.Advance(testHeartbeat)
		return false
	}, waitLimit, testkit.Poll, "the newer one to yield")

	status, _ := newer.dialRefused(t, "a new socket on the yielding twin")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	answer := early.hello()
	require.False(t, answer.OK, "a hello on the yielding twin")
	assert.Equal(t, protocol.CodeNotConnected, answer.Error.Code)
	code, _ := early.closeCode()
	assert.Equal(t, websocket.CloseGoingAway, code)

	releaseNewerBeats()
	select {
	case <-newer.router.Failed():
	case <-time.After(waitLimit):
		t.Fatal("the newer replica of the name did not give it up")
	}
	newer.stop()
}

// A replica restarted under its name after a crash finds its previous run's last heartbeat in
// the bucket, written by another instance: that one is not a twin (it never writes again), and
// the restarted replica serves.
func TestARestartedReplicaIsNotTakenForATwinOfItsPreviousRun(t *testing.T) {
	tc := newTestCluster(t)
	a, b := tc.startReplica("a"), tc.startReplica("b")
	a.connect(t, "1:left")
	b.waitComputers(t, "1:left@a")
	crashed := a.router.instance
	a.kill()
	e, err := b.router.replicas.Get(t.Context(), escapeToken("a"))
	require.NoError(t, err)
	var left heartbeatValue
	require.NoError(t, json.Unmarshal(e.Value(), &left))
	require.Equal(t, crashed, left.Instance, "the crashed run's heartbeat is in the bucket")

	restarted := tc.startReplica("a")
	require.NotEqual(t, crashed, restarted.router.instance)
	// The watcher applies the bucket in revision order: once the restarted replica's own
	// heartbeat has come back, the previous run's has been applied before it.
	waitOwnBeatBack(t, restarted.router)
	select {
	case <-restarted.router.Failed():
		t.Fatalf("the restarted replica took its previous run for a twin: %v", restarted.router.Err())
	default:
	}
	restarted.connect(t, "2:new")
	b.waitComputers(t, "2:new@a")
	assert.NotContains(t, tc.logs.String(), "under this replica's name")
}

// Of two twins exactly one is the newer: the later start, or at the same instant the greater
// instance id.
func TestExactlyOneOfTwoTwinsIsTheNewer(t *testing.T) {
	at := time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		x, y heartbeatValue
	}{
		{"later start", heartbeatValue{Started: at.Add(time.Nanosecond), Instance: "00"}, heartbeatValue{Started: at, Instance: "ff"}},
		{"same start", heartbeatValue{Started: at, Instance: "b1"}, heartbeatValue{Started: at.In(time.FixedZone("x", 3600)), Instance: "a2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.True(t, newerThan(tt.x, tt.y))
			assert.False(t, newerThan(tt.y, tt.x))
		})
	}
}

// A client of the bus that writes a heartbeat in a live replica's name, with an instance id of
// its own and an earlier start (or the same start and a smaller instance id), makes that
// replica stop: it is taken for an older replica of the name. The bus is trusted with that, as
// with every heartbeat (docs/scale-out.md, Security: give the replicas a NATS account of their
// own); this pins what such a forgery does, so that a change of the twin rule shows here. The
// replica's error says which of the two it was: an earlier start is not "the same moment".
func TestAForgedOlderHeartbeatStopsTheReplicaOfItsName(t *testing.T) {
	for _, tt := range []struct {
		name    string
		earlier time.Duration // how much earlier the forged heartbeat says it started
		want    func(a *replica) string
	}{
		{"an earlier start", 6*time.Hour + 30*time.Minute, func(a *replica) string {
			return fmt.Sprintf(`the replica name "a" is taken: another replica runs under it, started before this one, and the older of the two keeps it (started %s; this one %s). `+nameFix,
				a.router.started.Add(-6*time.Hour-30*time.Minute).UTC().Format(time.RFC3339Nano), a.router.started.UTC().Format(time.RFC3339Nano))
		}},
		{"the same instant", 0, func(a *replica) string {
			return fmt.Sprintf(`the replica name "a" is taken: another replica started under it at the same instant as this one (%s), and of the two the one with the smaller instance id keeps it (0000000000000000; this one %s). `+nameFix,
				a.router.started.UTC().Format(time.RFC3339Nano), a.router.instance)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestCluster(t)
			a := tc.startReplica("a")
			waitOwnBeatBack(t, a.router)
			require.NotEqual(t, "0000000000000000", a.router.instance)

			// a's heartbeats wait while the forged one is under its name: the bucket keeps one
			// revision a key, so a's next heartbeat would replace the forged one before a's
			// watcher was sent it, and a would never see it. Seen, it yields (Leaving); its last
			// heartbeat, then Failed, waits for the release.
			releaseBeats := holdBeats(t, a.router)
			forged, err := json.Marshal(heartbeatValue{Replica: "a", Started: a.router.started.Add(-tt.earlier), Instance: "0000000000000000"})
			require.NoError(t, err)
			_, err = a.router.replicas.Put(t.Context(), escapeToken("a"), forged)
			require.NoError(t, err)
			require.Eventually(t, a.router.Leaving, waitLimit, testkit.Poll, "a to take the forged heartbeat for an older twin's")
			releaseBeats()
			select {
			case <-a.router.Failed():
			case <-time.After(waitLimit):
				t.Fatal("the replica did not take the forged heartbeat for an older twin's")
			}
			assert.Equal(t, tt.want(a), a.router.Err().Error())
		})
	}
}
