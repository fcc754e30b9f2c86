package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
)

// A burst from the host is the host's: past the per-computer cap the API caller gets 429
// busy with Retry-After, and the computer, which reads and answers everything, stays.
func TestAPIBurstToOneComputerNeverClosesIt(t *testing.T) {
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
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: burst}}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	var badBusy []string
	for range burst {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/trapos/computers/7:/requests", strings.NewReader(`{"type":"ping","timeoutMs":60000}`))
			if !assert.NoError(t, err) {
				return
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var out APIResponse
			_ = json.Unmarshal(body, &out)
			mu.Lock()
			defer mu.Unlock()
			statuses[resp.StatusCode]++
			if resp.StatusCode == http.StatusTooManyRequests &&
				(out.Error == nil || out.Error.Code != protocol.CodeBusy || resp.Header.Get("Retry-After") == "") {
				badBusy = append(badBusy, string(body))
			}
		})
	}
	wg.Wait()
	t.Logf("statuses: %v", statuses)
	assert.Equal(t, burst, statuses[http.StatusOK]+statuses[http.StatusTooManyRequests], "only ok or busy: %v", statuses)
	assert.Positive(t, statuses[http.StatusOK])
	assert.Empty(t, badBusy, "a 429 must be busy with Retry-After")
	require.Len(t, h.gw.Computers(), 1, "the computer stays connected")
	for _, code := range []string{"1013", "1006"} {
		assert.Equal(t, 0.0, testutil.ToFloat64(m.closes.WithLabelValues(code)), "closed with %s", code)
	}
	assert.Equal(t, float64(statuses[http.StatusTooManyRequests]),
		testutil.ToFloat64(m.limits.WithLabelValues(limitGatewayRequestsInFlight))+testutil.ToFloat64(m.limits.WithLabelValues(limitSendQueueBytes)))
}

func TestGatewayRequestsPastTheCapAreBusy(t *testing.T) {
	h := newHarness(t, Config{MaxGatewayRequestsInFlight: 2}, nil)
	h.connect(t, "7:", "") // never answers
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	first := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	second := asyncRequest(h.gw, ctx, "7:", TypePing, nil)
	s := h.gw.registry.Lookup(Key{AccountID: LocalAccount, TraposID: "7:"})
	require.Eventually(t, func() bool { return s.pending.len() == 2 }, waitLimit, pollEvery, "two requests pending")
	_, err := h.gw.Request(ctx, LocalAccount, "7:", TypePing, nil)
	assert.Equal(t, protocol.CodeBusy, protocol.CodeOf(err))
	cancel()
	awaitResult(t, first)
	awaitResult(t, second)
	assert.False(t, s.isClosed())
}
