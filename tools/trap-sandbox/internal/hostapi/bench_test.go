package hostapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit/daemonfake"
)

// BenchmarkPingThroughTheAPI is the server's side of the bench's phase (b) without sockets:
// the middleware (deadlines, guard, auth) and the /requests route, on a transport that
// answers at once. Its allocations per request are the figure to watch (-benchmem).
func BenchmarkPingThroughTheAPI(b *testing.B) {
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
