package cluster

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/testkit"
)

// A network blip cuts both replicas off from NATS (which keeps its store) and leaves computer
// 9:blip's socket on A half-open; its daemon reconnects through the load balancer to B, which
// serves the hello locally. When NATS is back, the newer hello (B's) keeps the computer and
// A's socket closes with 4009, whichever replica claims again first. Revisions cannot order
// two hellos that neither replica could write while NATS was away: A's claim, written over
// B's by a plain Put, was the later one when A reconnected second, so that B closed the
// computer's live socket with 4009 (terminal for the daemon: stranded until `sandbox
// reconnect`) and the half-open one kept it. The hello times (the gateways' clock, moved
// between the hellos) order them instead. The same when only A was cut off and B, connected,
// wrote its claim at the hello.
func TestTheNewerHelloMadeDuringAnOutageKeepsTheComputer(t *testing.T) {
	for _, tt := range []struct {
		name      string
		aBefore   bool   // A's socket said hello before the outage (its claim is in the bucket)
		bCut      bool   // B is cut off from NATS too
		firstBack string // the replica whose link to NATS comes back first
	}{
		{"both during, a back first", false, true, "a"},
		{"both during, b back first", false, true, "b"},
		{"a before, a back first", true, true, "a"},
		{"a before, b back first", true, true, "b"},
		{"only a cut off", false, false, "b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestCluster(t)
			cut := map[string]*cuttableProxy{
				"a": newCuttableProxy(t, tc.ns.Addr().String()),
				"b": newCuttableProxy(t, tc.ns.Addr().String()),
			}
			a := tc.startReplicaVia("a", gateway.Config{Clock: tc.clock}, cut["a"].url())
			b := tc.startReplicaVia("b", gateway.Config{Clock: tc.clock}, cut["b"].url())
			watcher := tc.startReplica("w") // reads the bucket throughout, and routes
			var old *computer
			if tt.aBefore {
				old = a.connect(t, "9:blip")
				b.waitComputers(t, "9:blip@a")
			}

			cut["a"].setCut(true)
			cut["b"].setCut(tt.bCut)
			require.Eventually(t, func() bool { return !a.nc.IsConnected() && b.nc.IsConnected() != tt.bCut },
				waitLimit, testkit.Poll, "A (and B if cut) to notice NATS is gone")
			if !tt.aBefore {
				old = a.connect(t, "9:blip")
			}
			tc.clock.Advance(time.Second) // the daemon reconnects a while after its last frame on A
			newer := b.connect(t, "9:blip")

			second := map[string]string{"a": "b", "b": "a"}[tt.firstBack]
			cut[tt.firstBack].setCut(false)
			if tt.firstBack == "b" || !tt.aBefore {
				waitClaim(t, watcher.router.claims, "9:blip", tt.firstBack)
			} else {
				require.Eventually(t, func() bool { return a.nc.IsConnected() }, waitLimit, testkit.Poll, "A to reconnect")
			}
			cut[second].setCut(false)

			code, _ := old.closeCode()
			assert.Equal(t, gateway.CloseReplaced, code, "the half-open socket on A closes as replaced")
			waitClaim(t, watcher.router.claims, "9:blip", "b")
			watcher.waitComputers(t, "9:blip@b")
			a.waitComputers(t, "9:blip@b")
			pending := a.request("9:blip", gateway.TypePing, nil, waitLimit)
			newer.answerRequest(pending, gateway.TypePing, map[string]any{"traposId": "9:blip"})
			assert.Equal(t, http.StatusOK, await(t, pending).status, "the newer socket on B keeps the computer")
		})
	}
}
