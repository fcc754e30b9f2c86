package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// dialFrom dials from the loopback address ip (127.0.0.0/8 is all loopback on Linux), so that
// the gateway counts the socket under that address.
func (h *harness) dialFrom(t *testing.T, ip, traposID string) *computer {
	t.Helper()
	return h.dialForwarded(t, ip, "", traposID)
}

// dialForwarded is dialFrom with an X-Forwarded-For header (none when forwardedFor is ""),
// as a reverse proxy at ip sends it.
func (h *harness) dialForwarded(t *testing.T, ip, forwardedFor, traposID string) *computer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var header http.Header
	if forwardedFor != "" {
		header = http.Header{"X-Forwarded-For": {forwardedFor}}
	}
	d := websocket.Dialer{NetDialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}
	conn, resp, err := d.DialContext(ctx, h.wsURL(), header)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() })
	return &computer{t: t, conn: conn, id: traposID}
}

func (g *Gateway) preHelloSockets() int {
	_, preHello := g.limits.counts()
	return preHello
}

// Finding 2 of issue 22: every computer of a Minecraft server shares its address, and a loop
// on one of them, without the password, spent the address's upgrade budget and its sockets
// before hello; the other computers got 429. Now the loop's sockets make room for them.
func TestALoopWithoutThePasswordCannotKeepItsNeighboursOut(t *testing.T) {
	m := newMetrics()
	const perAddress = 4
	h := newHarness(t, Config{Password: "right", UpgradeRate: 0.001, UpgradeBurst: 2, MaxUnauthenticatedPerAddress: perAddress,
		HelloTimeout: time.Hour, PressureHelloTimeout: time.Hour, Metrics: m}, nil)
	var loop []*computer
	for range 20 { // far past the address's upgrade burst and its cap on sockets before hello
		loop = append(loop, h.dial(t, ""))
	}
	require.Eventually(t, func() bool { return h.gw.preHelloSockets() == perAddress }, waitLimit, testkit.Poll, "the loop's oldest sockets to be evicted")
	for i := range 5 { // the neighbours, from the same address, each in on its first try
		h.connect(t, fmt.Sprintf("%d:", i+1), "right")
	}
	loop[0].expectClose(CloseNoHello, evictReason)
	// 16 of the loop's sockets made room for its own newer ones, one for the first neighbour;
	// the others found a place free (each neighbour's hello gives its place back).
	assert.Equal(t, 16.0+1, testutil.ToFloat64(m.evictions.WithLabelValues(evictedForAddress)))
	assert.Equal(t, 23.0, testutil.ToFloat64(m.limits.WithLabelValues(limitUpgradeRate)), "admitted under pressure, not refused")
	assert.Len(t, h.gw.Computers(), 5)
	assert.Equal(t, perAddress-1, h.gw.preHelloSockets(), "the loop's newest sockets stay, minus the one the last neighbour took")
	assert.Contains(t, h.logs.String(), "evicting a socket that has not said hello")
	// The operator learns what fills the address's cap and the fix when it is a restart.
	assert.Contains(t, h.logs.String(), "or a Minecraft server's restart with more computers than that: raise it to their number")
}

// Finding 3 of issue 22: sockets that never say hello, from 10 addresses each under its own
// cap, kept the connection cap full. Now they are evicted, oldest first.
func TestSocketsBeforeHelloFromManyAddressesCannotFillTheGateway(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{Password: "right", MaxConnections: 8, MaxUnauthenticated: 6, HelloTimeout: time.Hour, Metrics: m}, nil)
	for i := range 3 {
		h.connect(t, fmt.Sprintf("%d:", i+1), "right")
	}
	var silent []*computer
	for i := range 10 { // 10 addresses, 2 sockets each
		for range 2 {
			silent = append(silent, h.dialFrom(t, fmt.Sprintf("127.0.0.%d", i+2), ""))
		}
	}
	require.Eventually(t, func() bool { return h.gw.openSockets() == 8 }, waitLimit, testkit.Poll, "the gateway to hold 8 sockets")
	assert.Equal(t, 5, h.gw.preHelloSockets())
	// A computer with the password gets in, from any address, until computers fill the gateway.
	for i := range 5 {
		h.connect(t, fmt.Sprintf("%d:", i+10), "right")
	}
	assert.Zero(t, h.gw.preHelloSockets())
	assert.Len(t, h.gw.Computers(), 8)
	status, _ := h.dialRefused(t)
	assert.Equal(t, 503, status, "only authenticated computers fill the gateway")
	evictions := testutil.ToFloat64(m.evictions.WithLabelValues(evictedForConnections)) +
		testutil.ToFloat64(m.evictions.WithLabelValues(evictedForGateway))
	assert.Equal(t, 20.0, evictions, "every silent socket made room")
	silent[0].expectClose(CloseNoHello, evictReason)
}

// The gateway's oldest socket before hello makes room, whatever its address; over its own cap,
// an address gives up its own oldest.
func TestTheOldestSocketBeforeHelloMakesRoom(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{MaxUnauthenticated: 4, MaxUnauthenticatedPerAddress: 3, HelloTimeout: time.Hour, Metrics: m}, nil)
	oldest := h.dialFrom(t, "127.0.0.3", "")
	a := []*computer{h.dialFrom(t, "127.0.0.2", ""), h.dialFrom(t, "127.0.0.2", ""), h.dialFrom(t, "127.0.0.2", "")}
	h.dialFrom(t, "127.0.0.4", "")
	oldest.expectClose(CloseNoHello, evictReason)
	assert.Equal(t, 1.0, testutil.ToFloat64(m.evictions.WithLabelValues(evictedForGateway)))

	h.dialFrom(t, "127.0.0.2", "") // a fourth from .2: over its cap of 3
	a[0].expectClose(CloseNoHello, evictReason)
	assert.Equal(t, 1.0, testutil.ToFloat64(m.evictions.WithLabelValues(evictedForAddress)))
	a[1].id = "9:" // still open: it answers
	assert.True(t, a[1].hello("").OK)
}

// A socket admitted under pressure has PressureHelloTimeout to say hello; one admitted before
// the pressure keeps HelloTimeout.
func TestUnderPressureTheHelloDeadlineIsShort(t *testing.T) {
	fc := newFakeClock()
	h := newHarness(t, Config{Clock: fc, UpgradeRate: 0.001, UpgradeBurst: 1, HelloTimeout: time.Hour,
		PressureHelloTimeout: 2 * time.Second}, nil)
	calm := h.dial(t, "1:")
	pressed := h.dial(t, "2:")
	require.True(t, fc.WaitArmed(2, t.Context().Done()))
	fc.Advance(2 * time.Second)
	pressed.expectClose(CloseNoHello, "no hello in time")
	assert.True(t, calm.hello("").OK, "the first socket still has its hour")
}

func TestEvictedSocketsFreeTheirSlotsAndAreClosedAtOnce(t *testing.T) {
	h := newHarness(t, Config{MaxUnauthenticatedPerAddress: 1, HelloTimeout: time.Hour, CloseGrace: time.Hour}, nil)
	old := h.dial(t, "")
	h.dial(t, "")
	// The gateway does not wait its hour of close grace for the evicted peer's close frame.
	old.expectClose(CloseNoHello, evictReason)
	require.Eventually(t, func() bool { return h.gw.openSockets() == 1 && len(sessionsOf(h.gw)) == 1 }, waitLimit, testkit.Poll, "the evicted socket to end")
}

// A Minecraft server restarting its gateway while a loop on it opens 2 400 sockets a second
// that never say hello (as fast as one in-game computer could): its 2 000 computers come back
// 5 s plus 0-1 s after the restart, each saying hello a round trip (here a generous 200 ms)
// after its socket opens. With the default limits, not one of them is evicted before its
// hello: all are back on their first try.
func TestTheDefaultLimitsAdmitARestartStormBesideALoop(t *testing.T) {
	for _, spread := range []time.Duration{time.Second, 0} {
		t.Run(fmt.Sprintf("first tries spread over %s", spread), func(t *testing.T) {
			fc := newFakeClock()
			l := newLimiter(Config{Clock: fc}.withDefaults(), slog.New(slog.DiscardHandler))
			rnd := rand.New(rand.NewPCG(1, 2))
			const computers, loopPerSecond, roundTrip, step = 2000, 2400, 200 * time.Millisecond, 10 * time.Millisecond
			start := fc.Now()
			type pending struct {
				slot  *connSlot
				hello time.Duration // when its hello arrives
			}
			var waiting []pending
			type loopSocket struct {
				slot *connSlot
				end  time.Duration // its hello deadline
			}
			var loop []loopSocket
			tries := make([]time.Duration, computers)
			for i := range tries {
				tries[i] = 5*time.Second + time.Duration(rnd.Int64N(int64(spread)+1))
			}
			admitted, evictedLoop := 0, 0
			for at := time.Duration(0); at <= 12*time.Second; at += step {
				fc.Advance(start.Add(at).Sub(fc.Now()))
				for range loopPerSecond * int(step) / int(time.Second) {
					a := l.admit("10.1.2.3:1")
					require.NotNil(t, a)
					loop = append(loop, loopSocket{a, at + a.helloTimeout})
				}
				kept := loop[:0]
				for _, s := range loop {
					switch {
					case s.slot.evicted:
						evictedLoop++
					case s.end <= at:
						l.release(s.slot) // closed with 4008
					default:
						kept = append(kept, s)
					}
				}
				loop = kept
				for i, try := range tries {
					if try >= 0 && try <= at {
						a := l.admit("10.1.2.3:1")
						require.NotNil(t, a)
						waiting = append(waiting, pending{a, at + roundTrip})
						tries[i] = -1
					}
				}
				still := waiting[:0]
				for _, p := range waiting {
					if p.hello > at {
						still = append(still, p)
						continue
					}
					require.True(t, l.helloSucceeded(p.slot), "a computer was evicted before its hello")
					admitted++
				}
				waiting = still
			}
			assert.Equal(t, computers, admitted)
			assert.Positive(t, evictedLoop, "the loop filled the address's cap")
			_, preHello := l.counts()
			assert.LessOrEqual(t, preHello, DefaultMaxUnauthenticatedPerAddress)
			t.Logf("all %d in on their first try; %d of the loop's sockets evicted", admitted, evictedLoop)
		})
	}
}
