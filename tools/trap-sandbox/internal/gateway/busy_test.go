package gateway

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// A burst from the host is the host's: past the per-computer cap a request is busy (the HTTP
// API's 429 with Retry-After), and the computer, which reads and answers everything, stays.
func TestBurstToOneComputerNeverClosesIt(t *testing.T) {
	m := newMetrics()
	h := newHarness(t, Config{Metrics: m}, nil)
	c := h.connect(t, "7:", "")
	answered := make(chan int, 1)
	go func() { // a computer that reads fast and answers every request
		n := 0
		defer func() { answered <- n }()
		for {
			_ = c.conn.SetReadDeadline(time.Now().Add(waitLimit))
			_, data, err := c.conn.ReadMessage()
			if err != nil {
				return
			}
			f, err := protocol.DecodeFrame(data)
			if err != nil || f.Event != protocol.EventGatewayRequest {
				continue
			}
			n++
			resp := `{"event":"computer_response","traposSenderId":"7:","messageId":"` + f.MessageID +
				`","type":"ping","ok":true,"payload":{"traposId":"7:"}}`
			if c.conn.WriteMessage(websocket.TextMessage, []byte(resp)) != nil {
				return
			}
		}
	}()

	const burst = 600
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for range burst {
		wg.Go(func() {
			resp, err := h.gw.Request(ctx, LocalAccount, "7:", TypePing, nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				outcomes[string(protocol.CodeOf(err))]++
			case resp.OK:
				outcomes["ok"]++
			default:
				outcomes["computer_error"]++
			}
		})
	}
	wg.Wait()
	t.Logf("outcomes: %v", outcomes)
	assert.Equal(t, burst, outcomes["ok"]+outcomes[string(protocol.CodeBusy)], "only ok or busy: %v", outcomes)
	assert.Positive(t, outcomes["ok"])
	require.Len(t, h.gw.Computers(), 1, "the computer stays connected")
	for _, code := range []string{"1013", "1006"} {
		assert.Equal(t, 0.0, testutil.ToFloat64(m.closes.WithLabelValues(code)), "closed with %s", code)
	}
	assert.Equal(t, float64(outcomes[string(protocol.CodeBusy)]),
		testutil.ToFloat64(m.limits.WithLabelValues(limitGatewayRequestsInFlight))+testutil.ToFloat64(m.limits.WithLabelValues(limitSendQueueBytes)))
}

func TestGatewayRequestsPastTheCapAreBusy(t *testing.T) {
	// Two for the host's requests, one kept for the idle probe.
	h := newHarness(t, Config{MaxGatewayRequestsInFlight: 3}, nil)
	h.connect(t, "7:", "") // never answers
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	first := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	second := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	s := h.gw.registry.Lookup(Key{AccountID: LocalAccount, TraposID: "7:"})
	require.Eventually(t, func() bool { return s.pending.len() == 2 }, waitLimit, testkit.Poll, "two requests pending")
	_, err := h.gw.Request(ctx, LocalAccount, "7:", TypePing, nil)
	assert.Equal(t, protocol.CodeBusy, protocol.CodeOf(err))
	cancel()
	awaitResult(t, first)
	awaitResult(t, second)
	assert.False(t, s.isClosed())
}

// The gateway's own slot is neither taken by hosts nor counted against them, and it is free
// again once its answer is taken; a second request of the gateway's own waits for it.
func TestTheProbesSlotIsKeptFromHosts(t *testing.T) {
	p := newPendingTable(3)
	for _, id := range []string{"h1", "h2"} {
		_, err := p.add(id, byHost, "ping", time.Time{})
		require.NoError(t, err, id)
	}
	_, err := p.add("h3", byHost, "ping", time.Time{})
	assert.Equal(t, protocol.CodeBusy, protocol.CodeOf(err), "a host request in the probe's slot")
	_, err = p.add("probe1", byGateway, "ping", time.Time{})
	require.NoError(t, err, "the probe with the hosts' slots full")
	_, err = p.add("probe2", byGateway, "ping", time.Time{})
	assert.Equal(t, protocol.CodeBusy, protocol.CodeOf(err), "a second probe while the first waits")

	require.NotNil(t, p.take("h1"))
	_, err = p.add("h3", byHost, "ping", time.Time{})
	require.NoError(t, err, "a host's freed slot is the hosts' again")
	require.NotNil(t, p.take("probe1"))
	assert.Nil(t, p.take("probe1"), "an answer taken twice")
	_, err = p.add("h4", byHost, "ping", time.Time{})
	assert.Equal(t, protocol.CodeBusy, protocol.CodeOf(err), "the probe's freed slot is not the hosts'")
	_, err = p.add("probe2", byGateway, "ping", time.Time{})
	require.NoError(t, err, "the probe's slot is free again")
	assert.Equal(t, 3, p.len())
}

// A cap below 2 would leave hosts no request at all beside the probe's slot: it becomes 2.
func TestTheRequestCapLeavesHostsOne(t *testing.T) {
	assert.Equal(t, DefaultMaxGatewayRequestsInFlight, Config{}.withDefaults().MaxGatewayRequestsInFlight)
	assert.Equal(t, 2, Config{MaxGatewayRequestsInFlight: 1}.withDefaults().MaxGatewayRequestsInFlight)
	assert.Equal(t, 3, Config{MaxGatewayRequestsInFlight: 3}.withDefaults().MaxGatewayRequestsInFlight)
}
