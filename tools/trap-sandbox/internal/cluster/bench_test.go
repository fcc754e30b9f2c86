package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// benchComputers is how many computers the benchmark spreads over its three replicas.
const benchComputers = 1000

// BenchmarkRequest measures a gateway→computer ping through the Go API (what the HTTP API and
// MCP call) with 1 000 computers over 3 replicas on one embedded NATS server: "direct" asks
// the replica holding the computer's socket (no hop), "routed" asks another replica, which
// sends it over NATS. Run it alone, once: go test -run '^$' -bench Request ./internal/cluster
// (docs/performance.md has the figures).
func BenchmarkRequest(b *testing.B) {
	tc := newTestCluster(b)
	tc.logs = &testkit.SyncBuffer{} // the replicas log at debug level; keep it out of the figures' way
	var replicas []*replica
	for _, name := range []string{"a", "b", "c"} {
		replicas = append(replicas, tc.startReplicaWith(name, gateway.Config{UpgradeRate: -1}))
	}
	ids := make([]string, benchComputers)
	holder := make([]int, benchComputers)
	var answering sync.WaitGroup
	for i := range ids {
		ids[i] = fmt.Sprintf("%d:bench", i)
		holder[i] = i % len(replicas)
		c := replicas[holder[i]].connect(b, ids[i])
		answering.Go(func() { answerPings(c) })
	}
	for _, r := range replicas {
		require.Eventually(b, func() bool { return len(r.gw.Computers()) == benchComputers }, waitLimit, testkit.Poll, "every replica to list every computer")
	}

	run := func(name string, asker func(i int) *replica) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			i := 0
			for b.Loop() {
				k := i % benchComputers
				i++
				resp, err := asker(k).gw.Request(ctx, gateway.LocalAccount, ids[k], gateway.TypePing, nil)
				if err != nil || !resp.OK {
					b.Fatalf("ping %s: %v %+v", ids[k], err, resp.Error)
				}
			}
		})
	}
	run("direct", func(k int) *replica { return replicas[holder[k]] })
	run("routed", func(k int) *replica { return replicas[(holder[k]+1)%len(replicas)] })

	for _, r := range replicas {
		r.stop() // closes every socket; the answering goroutines end
	}
	answering.Wait()
}

// answerPings answers every gateway_request on c's socket with ok until the socket closes.
func answerPings(c *computer) {
	_ = c.conn.SetReadDeadline(time.Time{}) // hello's read set one; the benchmark may run longer
	for {
		_, data, err := c.conn.ReadMessage()
		if err != nil {
			return
		}
		f, err := protocol.DecodeFrame(data)
		if err != nil || f.Event != protocol.EventGatewayRequest {
			continue
		}
		out, _ := json.Marshal(map[string]any{"event": "computer_response", "traposSenderId": c.id,
			"messageId": f.MessageID, "type": f.Type, "ok": true, "payload": map[string]string{"traposId": c.id}})
		if c.conn.WriteMessage(websocket.TextMessage, out) != nil {
			return
		}
	}
}
