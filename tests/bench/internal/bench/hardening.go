package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"tests/internal/harness"
)

// HardeningConfig sizes the two hardening figures.
type HardeningConfig struct {
	// Hostile is how many sockets from one address flood the gateway before hello without
	// reading (issue: 250 pushed the old gateway to 2.6 GB).
	Hostile int
	// Flood is how long they flood.
	Flood time.Duration
	// Storm is how many computers of one address reconnect after a gateway restart.
	Storm   int
	WorkDir string
	// Progress receives progress lines; nil discards them.
	Progress io.Writer
}

// HardeningResult holds the figures.
type HardeningResult struct {
	RSSBefore, RSSPeak int64
	// HostileSockets counts the hostile sockets opened (each reopened when the gateway closed
	// it), HostileBytes the bytes they sent.
	HostileSockets, HostileBytes int64
	// StormBack is how long after the new gateway answered /healthz the last computer's hello
	// succeeded; StormRefused counts upgrades refused meanwhile (HTTP 429/503).
	StormBack    time.Duration
	StormRefused int64
}

// reconnectDelay is the daemon's: 5 s plus 0-1 s.
func reconnectDelay(rnd *rand.Rand) time.Duration {
	return 5*time.Second + time.Duration(rnd.Int64N(int64(time.Second)))
}

// Hardening runs the real gateway binary as shipped (default limits) and measures its peak
// memory under hostile sockets, then the time a restart storm from one address takes.
func Hardening(ctx context.Context, cfg HardeningConfig) (res HardeningResult, err error) {
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	fmt.Fprintln(progress, "building the gateway…")
	bin, err := harness.BuildGateway(ctx, cfg.WorkDir, false)
	if err != nil {
		return res, err
	}
	addr, err := freeAddr()
	if err != nil {
		return res, err
	}
	env := []string{"OPENCODE_URL=http://127.0.0.1:1", gatewayDataEnv(cfg.WorkDir)}
	gw, err := startServer(ctx, "gateway", addr, bin, []string{"--listen", addr}, env)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(progress, "flooding with %d hostile sockets for %s…\n", cfg.Hostile, cfg.Flood)
	var sockets, sent atomic.Int64
	res.RSSBefore, res.RSSPeak, err = floodPeak(ctx, gw, cfg.Hostile, cfg.Flood, &sockets, &sent)
	res.HostileSockets, res.HostileBytes = sockets.Load(), sent.Load()
	if stopErr := gw.stop(); err != nil || stopErr != nil {
		return res, errors.Join(err, stopErr)
	}

	// The storm: a fresh gateway, the computers connected, then a restart on the same port.
	first, err := startServer(ctx, "gateway", addr, bin, []string{"--listen", addr}, env)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(progress, "connecting %d computers, then restarting the gateway…\n", cfg.Storm)
	stormCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var connected, refused atomic.Int64
	var mu sync.Mutex
	var lastHello time.Time
	var wg sync.WaitGroup
	for i := range cfg.Storm {
		wg.Go(func() {
			stormComputer(stormCtx, first.wsURL(), traposID(i), uint64(i), &connected, &refused, func(at time.Time) {
				mu.Lock()
				lastHello = at
				mu.Unlock()
			})
		})
	}
	defer wg.Wait()
	if err := waitCount(ctx, &connected, int64(cfg.Storm), 2*time.Minute); err != nil {
		_ = first.stop()
		return res, fmt.Errorf("first connect: %w", err)
	}
	if err := first.stop(); err != nil {
		return res, err
	}
	connected.Store(0)
	refused.Store(0)
	second, err := startServer(ctx, "gateway", addr, bin, []string{"--listen", addr}, env)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, second.stop()) }()
	up := time.Now()
	if err := waitCount(ctx, &connected, int64(cfg.Storm), 2*time.Minute); err != nil {
		return res, fmt.Errorf("after the restart: %w", err)
	}
	mu.Lock()
	res.StormBack = lastHello.Sub(up)
	mu.Unlock()
	res.StormRefused = refused.Load()
	cancel()
	return res, nil
}

// floodPeak keeps n sockets that never read sending pre-hello requests with the longest
// messageId allowed, for d, sampling the gateway's VmRSS; it returns the RSS before and the peak.
func floodPeak(ctx context.Context, gw *server, n int, d time.Duration, sockets, sent *atomic.Int64) (before, peak int64, err error) {
	if before, err = gw.rss(); err != nil {
		return 0, 0, err
	}
	frame := []byte(`{"event":"computer_request","messageId":"` + strings.Repeat("m", 8000) + `","type":"probe_gateway"}`)
	floodCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for range n {
		// Each worker is one hostile socket at a time: closed by the gateway, it dials again.
		wg.Go(func() {
			for floodCtx.Err() == nil {
				ws, resp, dialErr := websocket.DefaultDialer.DialContext(floodCtx, gw.wsURL(), nil)
				if resp != nil && resp.Body != nil {
					_ = resp.Body.Close()
				}
				if dialErr != nil {
					time.Sleep(10 * time.Millisecond) // refused by the per-address caps
					continue
				}
				sockets.Add(1)
				for floodCtx.Err() == nil {
					_ = ws.SetWriteDeadline(time.Now().Add(time.Second))
					if ws.WriteMessage(websocket.TextMessage, frame) != nil {
						break
					}
					sent.Add(int64(len(frame)))
				}
				_ = ws.Close()
			}
		})
	}
	peak = before
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for floodCtx.Err() == nil {
		if rss, rssErr := gw.rss(); rssErr == nil {
			peak = max(peak, rss)
		}
		select {
		case <-tick.C:
		case <-floodCtx.Done():
		}
	}
	wg.Wait()
	return before, peak, nil
}

// stormComputer behaves like the daemon: connect, hello, hold the socket; on a refusal or a
// lost socket wait 5-6 s and try again, until ctx ends.
func stormComputer(ctx context.Context, wsURL, id string, seed uint64, connected, refused *atomic.Int64, hello func(time.Time)) {
	rnd := rand.New(rand.NewPCG(seed, 7))
	for ctx.Err() == nil {
		c, err := dialComputer(ctx, wsURL, id, nil)
		if err != nil {
			if errors.Is(err, websocket.ErrBadHandshake) {
				refused.Add(1) // HTTP 429/503: the gateway's limits
			}
		} else {
			hello(time.Now())
			connected.Add(1)
			_ = c.ws.SetReadDeadline(time.Time{})
			for {
				if _, _, err := c.ws.ReadMessage(); err != nil {
					break
				}
			}
			_ = c.ws.Close()
			if ctx.Err() != nil {
				return
			}
		}
		select {
		case <-time.After(reconnectDelay(rnd)):
		case <-ctx.Done():
			return
		}
	}
}

// waitCount waits until n reaches want.
func waitCount(ctx context.Context, n *atomic.Int64, want int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for n.Load() < want {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d computers connected within %s", n.Load(), want, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
