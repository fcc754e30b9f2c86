// Package opencodefake is a fake opencode server for tests, the one copy the gateway's unit
// tests and the tests module share. It answers as the real server does (opencode 1.18.33,
// /work/shared/reference/opencode-server.md), failures included: Basic auth on every route
// but a few public ones, 401s with an empty body and the lower-case `www-authenticate`
// challenge, the health route, the web UI for any other path, and on demand a server that
// accepts and never answers (Stall; Unstall for one that is starting), one that fails
// every request (FailWith), or one that stops in the middle of a turn (Stop).
//
// Routes beyond health (sessions, prompts, the event stream, permission asks) are added with
// Handle, behind the same auth; the fake's own rules live in one place (ServeHTTP), so a
// route added later inherits them.
package opencodefake

import (
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Facts of the real server the fake reproduces.
const (
	// Version is what the health route reports.
	Version = "1.18.33"
	// DefaultUsername is the Basic Auth user when OPENCODE_SERVER_USERNAME is unset.
	DefaultUsername = "opencode"
	// HealthPath is the health route (GET only; a trailing slash is accepted too).
	HealthPath = "/global/health"
	// HealthBody is the exact body of a healthy answer, served as application/json.
	HealthBody = `{"healthy":true,"version":"` + Version + `"}`
	// Realm is the challenge every 401 carries, in a header named in lower case.
	Realm = `Basic realm="Secure Area"`
	// WebUI stands in for the single-page web UI opencode answers any unknown path with
	// (200 text/html; the real page is 2884 bytes).
	WebUI = `<!doctype html><html><head><title>OpenCode</title></head><body><div id="root"></div></body></html>`
)

const (
	// apiHealthPath is the v2 API's health: {"healthy":true}, no version. It needs auth too.
	apiHealthPath = "/api/health"
	// apiPrefix marks the v2 API, whose 401 carries a JSON body (seen on /api/health).
	apiPrefix = "/api/"
	// apiUnauthorized is that body.
	apiUnauthorized = `{"_tag":"UnauthorizedError","message":"Authentication required"}`
	// authTokenParam is the query parameter opencode reads credentials from before the
	// header: base64 of "user:password".
	authTokenParam = "auth_token"
)

// publicPaths answer GET without auth even when a password is set: the web app's manifest
// and icons. /global/health is not among them.
var publicPaths = map[string]string{
	"/site.webmanifest":             "application/manifest+json",
	"/web-app-manifest-192x192.png": "image/png",
	"/web-app-manifest-512x512.png": "image/png",
}

// basicScheme is how opencode reads the Authorization header: the scheme in any case, then
// any white space.
var basicScheme = regexp.MustCompile(`(?i)^Basic\s+(.+)$`)

// Options configure a fake.
type Options struct {
	// Username is the Basic Auth user (OPENCODE_SERVER_USERNAME); "" means DefaultUsername.
	Username string
	// Password is OPENCODE_SERVER_PASSWORD; "" turns auth off entirely (any Authorization
	// header is then ignored).
	Password string
}

// Server is a fake opencode: an http.Handler (New) or a running server (Start).
type Server struct {
	// URL is the base URL of a server from Start ("" for one from New).
	URL string
	// httpServer is the server Start runs it on (nil for one from New): Stop stops it.
	httpServer *httptest.Server

	username, password string
	mux                *http.ServeMux

	stalled  atomic.Bool
	failWith atomic.Int32
	// stopped is set by Stop: every request still in flight ends without an answer.
	stopped atomic.Bool
	// released is closed by Close: stalled requests end then, so the server can shut down.
	released  chan struct{}
	closeOnce sync.Once
	onClose   []func() // run by Close (the agent half's MCP connections)

	requests    atomic.Int64
	healthHits  atomic.Int64
	lastHadAuth atomic.Bool
}

// New returns a fake that is not listening yet: serve it with an httptest server of the
// test's own (and Close it when done if it may Stall).
func New(opts Options) *Server {
	s := &Server{username: opts.Username, password: opts.Password, mux: http.NewServeMux(),
		released: make(chan struct{})}
	if s.username == "" {
		s.username = DefaultUsername
	}
	s.mux.HandleFunc("/", s.serveWebUI)
	s.mux.HandleFunc(HealthPath, s.serveHealth)
	s.mux.HandleFunc(HealthPath+"/{$}", s.serveHealth)
	s.mux.HandleFunc(apiHealthPath, s.serveAPIHealth)
	return s
}

// Start runs a fake on a loopback port until the test ends and returns it, its URL set.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := New(opts)
	srv := httptest.NewServer(s)
	s.URL, s.httpServer = srv.URL, srv
	// Cleanups run last-in first-out: release stalled requests, then close the server
	// (which waits for its handlers).
	t.Cleanup(srv.Close)
	t.Cleanup(s.Close)
	return s
}

// StartStalled runs a fake that accepts connections and never answers (see Stall).
func StartStalled(t testing.TB) *Server {
	t.Helper()
	s := Start(t, Options{})
	s.Stall()
	return s
}

// StartFailing runs a fake that answers every request with status (see FailWith).
func StartFailing(t testing.TB, status int) *Server {
	t.Helper()
	s := Start(t, Options{})
	s.FailWith(status)
	return s
}

// Handle adds a route (a net/http ServeMux pattern such as "POST /session/{id}/abort")
// behind the fake's auth, counting and faults. Call it before the first request.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Stall makes every later request hang until the client gives up or the fake is closed, as
// a stuck opencode does (it accepts the connection and never answers).
func (s *Server) Stall() { s.stalled.Store(true) }

// Unstall ends a Stall for the requests that come after it; those that came during it hang on
// until the client gives up. That is opencode 1.18.33 starting: its port accepts connections
// seconds before it serves, and a request that came in between is never answered, though
// the next one is.
func (s *Server) Unstall() { s.stalled.Store(false) }

// FailWith makes every later request answer status with its standard text, before auth, as
// a crashed server or a proxy in front of a dead one does (500, 502, 503).
func (s *Server) FailWith(status int) { s.failWith.Store(int32(status)) }

// Close releases stalled requests. Start's cleanup calls it; a test serving New's handler
// itself calls it before closing its server.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.released)
		for _, f := range s.onClose {
			f()
		}
	})
}

// Stop stops a fake from Start as opencode 1.18.33 stops (SIGTERM), also in the middle of a
// turn: nothing listens on its port any more (connection refused), a request in flight gets
// no answer at all, its connection closed (a sync prompt too: curl read "empty reply from
// server", not the aborted turn's reply), and an event stream is cut, its chunked body
// unfinished (curl: "transfer closed with outstanding read data").
func (s *Server) Stop() {
	s.stopped.Store(true)
	s.httpServer.Listener.Close()
	s.Close()
	s.httpServer.Close()
}

// dropIfStopped ends the request without an answer when the fake was stopped (Stop): the
// connection closes, as when opencode's process goes.
func (s *Server) dropIfStopped() {
	if s.stopped.Load() {
		panic(http.ErrAbortHandler) // net/http closes the connection, and logs nothing
	}
}

// Requests counts every request that arrived, answered or not.
func (s *Server) Requests() int64 { return s.requests.Load() }

// HealthHits counts health requests that passed auth (a probe that got the healthy answer).
func (s *Server) HealthHits() int64 { return s.healthHits.Load() }

// LastHadAuth reports whether the last request carried an Authorization header.
func (s *Server) LastHadAuth() bool { return s.lastHadAuth.Load() }

// ServeHTTP applies the server-wide rules (faults, CORS preflight, public paths, auth) and
// hands what passes to the routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.lastHadAuth.Store(r.Header.Get("Authorization") != "")
	s.dropIfStopped() // a kept-alive connection outlives the listener
	if s.stalled.Load() {
		select {
		case <-r.Context().Done():
		case <-s.released:
		}
		s.dropIfStopped()
		return
	}
	if code := int(s.failWith.Load()); code != 0 {
		http.Error(w, http.StatusText(code), code)
		return
	}
	if r.Method == http.MethodOptions { // CORS preflight: never behind auth
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if contentType, public := publicPaths[r.URL.Path]; public && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", contentType)
		return
	}
	if !s.authorized(r) {
		// Header names as the real server sends them; Go's Header.Get still finds them.
		w.Header()["www-authenticate"] = []string{Realm}
		if strings.HasPrefix(r.URL.Path, apiPrefix) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(apiUnauthorized))
			return
		}
		w.Header()["Content-Length"] = []string{"0"}
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorized is opencode's check: no password, no auth; otherwise the auth_token query
// parameter first, then the Basic header, each base64 of "user:password" split at the first
// colon (undecodable counts as empty), both parts compared exactly.
func (s *Server) authorized(r *http.Request) bool {
	if s.password == "" {
		return true
	}
	encoded := r.URL.Query().Get(authTokenParam)
	if encoded == "" {
		m := basicScheme.FindStringSubmatch(r.Header.Get("Authorization"))
		if m == nil {
			return false
		}
		encoded = m[1]
	}
	decoded, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		decoded = nil
	}
	user, pass, _ := strings.Cut(string(decoded), ":")
	return subtle.ConstantTimeCompare([]byte(user), []byte(s.username)) == 1 &&
		subtle.ConstantTimeCompare([]byte(pass), []byte(s.password)) == 1
}

// serveHealth answers GET with HealthBody; any other method falls through to the web UI,
// as HEAD and POST do on the real server.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		s.serveWebUI(w, r)
		return
	}
	s.healthHits.Add(1)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(HealthBody))
}

func (s *Server) serveAPIHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		s.serveWebUI(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"healthy":true}`))
}

func (s *Server) serveWebUI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	_, _ = w.Write([]byte(WebUI))
}

// ClosedPortURL returns an http URL on loopback where nothing listens, for an opencode that is
// down: connection refused. The port stays held (ReservePort) until the test ends, so no other
// listener on the machine takes it and answers instead.
func ClosedPortURL(t testing.TB) string {
	t.Helper()
	addr, _ := ReservePort(t)
	return "http://" + addr
}

// ReservePort holds a loopback port where nothing listens and returns its host:port: a
// connection there is refused, and no other socket can bind it until release (or the test's
// end). A test that listens there itself later calls release just before.
func ReservePort(t testing.TB) (addr string, release func()) {
	t.Helper()
	addr, closeFn, err := reservePort()
	if err != nil {
		t.Fatalf("reserve a port: %v", err)
	}
	release = sync.OnceFunc(closeFn)
	t.Cleanup(release)
	return addr, release
}
