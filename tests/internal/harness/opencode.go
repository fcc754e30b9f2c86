package harness

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Facts about the real opencode server 1.18.33 the fake reproduces
// (see /work/shared/reference/opencode-server.md).
const (
	// OpencodeUser is the Basic Auth user opencode expects by default.
	OpencodeUser = "opencode"
	// OpencodeHealthPath is the probed endpoint.
	OpencodeHealthPath = "/global/health"
	// OpencodeHealthBody is the exact body of a healthy answer.
	OpencodeHealthBody = `{"healthy":true,"version":"1.18.33"}`
	// opencodeRealm is the WWW-Authenticate challenge of a 401.
	opencodeRealm = `Basic realm="Secure Area"`
	// opencodeUIBody stands in for the web UI opencode serves on any unknown path.
	opencodeUIBody = "<!doctype html><html><head><title>OpenCode</title></head><body></body></html>"
)

// FakeOpencode is an httptest server answering like a real opencode server whose
// OPENCODE_SERVER_PASSWORD is Password (empty: no auth).
type FakeOpencode struct {
	*httptest.Server
	// Password is the server's password.
	Password string
	// stall makes every request hang until the client gives up or the test ends.
	stall      bool
	released   chan struct{}
	healthHits atomic.Int64
}

// StartFakeOpencode starts a fake opencode server, closed when the test ends.
func StartFakeOpencode(t testing.TB, password string) *FakeOpencode {
	t.Helper()
	return startFake(t, &FakeOpencode{Password: password})
}

// StartStalledOpencode starts a server that accepts connections but never answers, like an
// opencode process that is stuck; requests end when the client cancels them.
func StartStalledOpencode(t testing.TB) *FakeOpencode {
	t.Helper()
	return startFake(t, &FakeOpencode{stall: true})
}

func startFake(t testing.TB, f *FakeOpencode) *FakeOpencode {
	f.released = make(chan struct{})
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	// Cleanups run last-in first-out: release stalled handlers, then Close (which waits for them).
	t.Cleanup(f.Close)
	t.Cleanup(func() { close(f.released) })
	return f
}

// HealthHits counts requests to the health endpoint that passed auth.
func (f *FakeOpencode) HealthHits() int64 { return f.healthHits.Load() }

func (f *FakeOpencode) serve(w http.ResponseWriter, r *http.Request) {
	if f.stall {
		select {
		case <-r.Context().Done():
		case <-f.released:
		}
		return
	}
	if f.Password != "" {
		user, pass, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(OpencodeUser)) != 1 ||
			subtle.ConstantTimeCompare([]byte(pass), []byte(f.Password)) != 1 {
			w.Header().Set("www-authenticate", opencodeRealm)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	if r.Method == http.MethodGet && (r.URL.Path == OpencodeHealthPath || r.URL.Path == OpencodeHealthPath+"/") {
		f.healthHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(OpencodeHealthBody))
		return
	}
	w.Header().Set("Content-Type", "text/html")
	_, _ = w.Write([]byte(opencodeUIBody))
}

// ClosedPortURL returns an http URL on loopback where nothing listens (a port that was just
// bound and released), for "connection refused".
func ClosedPortURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("reserve a port: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("release port: %v", err)
	}
	return "http://" + addr
}
