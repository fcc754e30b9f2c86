// Package opencodetest provides a fake opencode server that answers like the real one
// (opencode 1.18.33, see /work/shared/reference/opencode-server.md), for probe tests.
package opencodetest

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Version is what the fake reports in its health body.
const Version = "1.18.33"

// HealthBody is the exact body of the real server's 200 health answer.
const HealthBody = `{"healthy":true,"version":"` + Version + `"}`

// spa stands in for the web UI opencode serves on any unknown path.
const spa = `<!doctype html><html><head><title>OpenCode</title></head><body><div id="root"></div></body></html>`

// Server imitates opencode: with a password, every route needs Basic Auth
// (username:password) and a failure is a 401 with an empty body, no Content-Type and
// `www-authenticate: Basic realm="Secure Area"`; GET /global/health answers HealthBody as
// application/json; any other path answers the web UI as 200 text/html. Without a password the
// Authorization header is ignored entirely.
type Server struct {
	Username, Password string
	requests           atomic.Int32
	lastHadAuth        atomic.Bool
}

// Requests returns how many requests arrived.
func (s *Server) Requests() int32 { return s.requests.Load() }

// LastHadAuth reports whether the last request carried an Authorization header.
func (s *Server) LastHadAuth() bool { return s.lastHadAuth.Load() }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.lastHadAuth.Store(r.Header.Get("Authorization") != "")
	if s.Password != "" {
		user, pass, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(s.Username)) != 1 ||
			subtle.ConstantTimeCompare([]byte(pass), []byte(s.Password)) != 1 {
			// Set lower-case like the real server; Go's Header.Get still finds it.
			w.Header()["www-authenticate"] = []string{`Basic realm="Secure Area"`}
			w.Header()["Content-Length"] = []string{"0"}
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	if r.Method == http.MethodGet && strings.TrimSuffix(r.URL.Path, "/") == "/global/health" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(HealthBody))
		return
	}
	w.Header().Set("Content-Type", "text/html")
	_, _ = w.Write([]byte(spa))
}

// Start runs a fake opencode with the given credentials (password "" means no auth) until the
// test ends, and returns it with its base URL.
func Start(t testing.TB, username, password string) (*Server, string) {
	t.Helper()
	fake := &Server{Username: username, Password: password}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return fake, srv.URL
}

// StartHandler runs h as a misbehaving "opencode" until the test ends and returns its URL.
func StartHandler(t testing.TB, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Hanging never answers: it holds each request until the client gives up.
func Hanging(w http.ResponseWriter, r *http.Request) {
	<-r.Context().Done()
}

// Status answers every request with code and a short text body.
func Status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, http.StatusText(code), code)
	}
}

// ClosedPortURL returns an http URL on 127.0.0.1 where nothing listens (connection refused).
func ClosedPortURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("reserve a port: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("free the port: %v", err)
	}
	return "http://" + addr
}
