package hostapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit/daemonfake"
)

// BenchmarkPingThroughTheAPI is the server's side of the bench's phase (b) without sockets:
// the middleware (deadlines, guard, auth) and the /requests route, on a transport that
// answers at once. Its allocations per request are the figure to watch (reported without
// -benchmem too).
func BenchmarkPingThroughTheAPI(b *testing.B) {
	b.ReportAllocs()
	h := server.New(slog.New(slog.DiscardHandler), server.Config{}, hostapi.New(computer.New(daemonfake.NewLocal(nil)))).Handler()
	const body = `{"type":"ping","payload":{},"timeoutMs":10000}`
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/trapos/computers/7:/requests", strings.NewReader(body))
		req.RemoteAddr, req.Host = "127.0.0.1:40000", "127.0.0.1:4444"
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkPingOverLoopback is phase (b) of the bench in one process: keep-alive HTTP clients
// POST pings over loopback to the server as the binary serves it (server.Serve, metrics on),
// and the gateway forwards each to a computer on a real WebSocket. Its ns/op includes the
// clients and the computers, so compare runs A/B (benchstat); its allocations per op are the
// whole round trip's.
func BenchmarkPingOverLoopback(b *testing.B) {
	b.ReportAllocs()
	const computers, clientsPerProc = 8, 8 // 16 clients on 2 cores, as the bench
	logger := slog.New(slog.DiscardHandler)
	reg := prometheus.NewRegistry()
	gw := gateway.New(gateway.Config{Metrics: gateway.NewMetrics(reg)}, logger, nil)
	srv := server.New(logger, server.Config{Metrics: reg}, gw, hostapi.New(computer.New(hostapi.NewGateway(gw))))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	base := "http://" + l.Addr().String()
	for i := range computers {
		dialCtx, dialCancel := context.WithTimeout(ctx, testTimeout)
		stop, err := (&daemonfake.Daemon{ID: i}).Connect(dialCtx, base+gateway.WebSocketPath, "")
		dialCancel()
		require.NoError(b, err)
		defer stop()
	}
	defer func() {
		cancel()
		require.NoError(b, <-served)
	}()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	body := []byte(`{"type":"ping","payload":{},"timeoutMs":10000}`)
	var next atomic.Int64
	b.SetParallelism(clientsPerProc)
	b.ResetTimer()
	cpuBefore := processCPU(b)
	defer func() { b.ReportMetric(float64(processCPU(b)-cpuBefore)/float64(b.N), "cpu-ns/op") }()
	b.RunParallel(func(pb *testing.PB) {
		url := fmt.Sprintf("%s/trapos/computers/%d:/requests", base, next.Add(1)%computers)
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			data, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(data, []byte(`"ok":true`)) {
				b.Errorf("status %d, %v: %s", resp.StatusCode, err, data)
				return
			}
		}
	})
}
