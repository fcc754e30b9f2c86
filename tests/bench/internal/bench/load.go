package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Bounds of the load clients.
const (
	// DialTimeout bounds one TCP connect plus WebSocket handshake plus hello round trip.
	DialTimeout = 10 * time.Second
	// RoundTripTimeout bounds one request/reply; a slower answer fails the phase.
	RoundTripTimeout = 10 * time.Second
	// maxSamplesPerWorker caps the latencies one worker keeps, so memory stays bounded.
	maxSamplesPerWorker = 1 << 20
	// pingBody is the HTTP API request of phase (b).
	pingBody = `{"type":"ping","payload":{},"timeoutMs":10000}`
)

// computer is one raw client socket that said hello.
type computer struct {
	id string
	ws *websocket.Conn
}

// traposID names computer i.
func traposID(i int) string { return strconv.Itoa(i) + ":bench" }

// ComputersPerSourceAddress is how many load clients share one loopback source address: the
// kernel gives one source address about 28 000 ports (ip_local_port_range), so computer i
// dials from 127.0.k.1 with k = i / ComputersPerSourceAddress; the first block lets the kernel
// pick (127.0.0.1, as every client did before there were more).
const ComputersPerSourceAddress = 10000

// sourceAddr is the local address computer i dials from; nil: the kernel's choice.
func sourceAddr(i int) *net.TCPAddr {
	k := i / ComputersPerSourceAddress
	if k == 0 {
		return nil
	}
	return &net.TCPAddr{IP: net.IPv4(127, byte(k>>8), byte(k), 1)}
}

// dialComputer connects to wsURL from the loopback address from (nil: the kernel's choice)
// and completes hello as traposID id.
func dialComputer(ctx context.Context, wsURL, id string, from *net.TCPAddr) (*computer, error) {
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	nd := &net.Dialer{}
	if from != nil {
		nd.LocalAddr = from
	}
	d := websocket.Dialer{HandshakeTimeout: DialTimeout, NetDialContext: nd.DialContext}
	ws, resp, err := d.DialContext(ctx, wsURL, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	c := &computer{id: id, ws: ws}
	hello := fmt.Sprintf(`{"event":"computer_request","traposSenderId":%q,"messageId":"hello","type":"hello","payload":{"traposId":%q,"secret":""}}`, id, id)
	deadline, _ := ctx.Deadline()
	if _, err := c.roundTrip([]byte(hello), "hello", deadline); err != nil {
		_ = ws.Close()
		return nil, fmt.Errorf("hello: %w", err)
	}
	_ = ws.SetReadDeadline(time.Time{})
	return c, nil
}

// roundTrip writes a request frame and reads frames until the gateway_response for msgID.
func (c *computer) roundTrip(req []byte, msgID string, deadline time.Time) (wireFrame, error) {
	var f wireFrame
	if err := c.ws.SetWriteDeadline(deadline); err != nil {
		return f, fmt.Errorf("set write deadline: %w", err)
	}
	if err := c.ws.WriteMessage(websocket.TextMessage, req); err != nil {
		return f, fmt.Errorf("write: %w", err)
	}
	if err := c.ws.SetReadDeadline(deadline); err != nil {
		return f, fmt.Errorf("set read deadline: %w", err)
	}
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return f, fmt.Errorf("read: %w", err)
		}
		f = wireFrame{}
		if err := json.Unmarshal(data, &f); err != nil {
			return f, fmt.Errorf("decode %q: %w", data, err)
		}
		if f.Event != "gateway_response" || f.MessageID != msgID {
			continue
		}
		if f.OK == nil || !*f.OK {
			return f, fmt.Errorf("answer not ok: %s", data)
		}
		return f, nil
	}
}

// connectAll opens n computers with at most conc dials in flight. On error it closes what it
// opened.
func connectAll(ctx context.Context, wsURL string, n, conc int) ([]*computer, error) {
	cs := make([]*computer, n)
	err := runAll(ctx, n, conc, func(ctx context.Context, i int) error {
		c, err := dialComputer(ctx, wsURL, traposID(i), sourceAddr(i))
		if err != nil {
			return fmt.Errorf("computer %d: %w", i, err)
		}
		cs[i] = c
		return nil
	})
	if err != nil {
		closeAll(cs)
		return nil, err
	}
	return cs, nil
}

// closeAll drops every socket without a close handshake, as CC does.
func closeAll(cs []*computer) {
	for _, c := range cs {
		if c != nil {
			_ = c.ws.Close()
		}
	}
}

// Rate is the outcome of a throughput phase.
type Rate struct {
	// Count is the number of completed round trips.
	Count int
	// PerSecond is Count divided by the measured wall time.
	PerSecond float64
	// P50 and P99 are latency percentiles of one round trip.
	P50, P99 time.Duration
	// ServerCPU is the server process's CPU time (user + system) per round trip.
	ServerCPU time.Duration
	// BenchCPU is the bench's own CPU time per round trip: its computers and HTTP clients,
	// which share the machine's cores with the server.
	BenchCPU time.Duration
}

func rateOf(samples [][]time.Duration, elapsed time.Duration) Rate {
	all := slices.Concat(samples...)
	slices.Sort(all)
	r := Rate{Count: len(all)}
	if elapsed > 0 {
		r.PerSecond = float64(len(all)) / elapsed.Seconds()
	}
	if len(all) > 0 {
		r.P50 = all[len(all)*50/100]
		r.P99 = all[min(len(all)-1, len(all)*99/100)]
	}
	return r
}

// probeLoad runs phase (a): every computer sends probe_gateway back-to-back for d.
func probeLoad(ctx context.Context, cs []*computer, d time.Duration) (Rate, error) {
	samples := make([][]time.Duration, len(cs))
	start := time.Now()
	end := start.Add(d)
	err := runAll(ctx, len(cs), len(cs), func(gctx context.Context, i int) error {
		c := cs[i]
		{
			for n := 0; n < maxSamplesPerWorker && time.Now().Before(end) && gctx.Err() == nil; n++ {
				msgID := "p" + strconv.Itoa(n)
				req := fmt.Appendf(nil, `{"event":"computer_request","traposSenderId":%q,"messageId":%q,"type":"probe_gateway","payload":{}}`, c.id, msgID)
				t0 := time.Now()
				f, err := c.roundTrip(req, msgID, t0.Add(RoundTripTimeout))
				if err != nil {
					return fmt.Errorf("probe_gateway from %s: %w", c.id, err)
				}
				samples[i] = append(samples[i], time.Since(t0))
				if n == 0 && !bytes.Contains(f.Payload, []byte(`"opencodeOk":true`)) {
					return fmt.Errorf("probe_gateway from %s: opencode not healthy: %s", c.id, f.Payload)
				}
			}
			return nil
		}
	})
	return rateOf(samples, time.Since(start)), err
}

// answerPings makes each computer answer every gateway_request ping with its traposId until
// its socket is closed; wait returns once all readers ended.
func answerPings(cs []*computer) (wait func()) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { _ = answerGatewayPings(c) })
	}
	return wg.Wait
}

// httpLoad runs phase (b): clients HTTP workers POST ping to the computers round-robin for d.
func httpLoad(ctx context.Context, baseURL string, cs []*computer, clients int, d time.Duration) (Rate, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxIdleConns: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: RoundTripTimeout}
	samples := make([][]time.Duration, clients)
	var next atomic.Int64
	start := time.Now()
	end := start.Add(d)
	err := runAll(ctx, clients, clients, func(gctx context.Context, w int) error {
		{
			for n := 0; n < maxSamplesPerWorker && time.Now().Before(end) && gctx.Err() == nil; n++ {
				c := cs[int(next.Add(1))%len(cs)]
				u := baseURL + "/trapos/computers/" + url.PathEscape(c.id) + "/requests"
				t0 := time.Now()
				if err := postPing(gctx, client, u, c.id); err != nil {
					return err
				}
				samples[w] = append(samples[w], time.Since(t0))
			}
			return nil
		}
	})
	return rateOf(samples, time.Since(start)), err
}

func postPing(ctx context.Context, client *http.Client, u, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader([]byte(pingBody)))
	if err != nil {
		return fmt.Errorf("ping %s: %w", id, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("ping %s: %w", id, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, baselineBodyBytes))
	if err != nil {
		return fmt.Errorf("ping %s: read answer: %w", id, err)
	}
	var out struct {
		OK      bool `json:"ok"`
		Payload struct {
			TraposID string `json:"traposId"`
		} `json:"payload"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil || !out.OK || out.Payload.TraposID != id {
		return fmt.Errorf("ping %s: status %d, answer %s", id, resp.StatusCode, body)
	}
	return nil
}

// errNoSamples reports a phase that completed no round trip.
var errNoSamples = errors.New("no round trip completed")

// runAll calls fn(ctx, i) for i in [0, n) with at most limit calls running; the first error
// cancels ctx for the others and is returned.
func runAll(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, limit)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}
