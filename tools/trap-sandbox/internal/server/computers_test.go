package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// computerLikeModule mounts a computer's route (the WebSocket's path), which says whether it
// came through the computers' port, and an API route.
type computerLikeModule struct{ echoModule }

func (m *computerLikeModule) Mount(routes *Routes) {
	routes.HandleFunc("GET /trapos/ws", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "via computers port: "+strconv.FormatBool(ViaComputersPort(r)))
	})
	routes.HandleAPIFunc("GET /trapos/computers", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "[]")
	})
}

func request(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// serveBothPorts serves a server of one computer-like module on a main listener and a
// computers-only one, both on loopback; stop cancels it and waits for it to return.
func serveBothPorts(t *testing.T) (mod *computerLikeModule, main, computers net.Listener, stop func()) {
	t.Helper()
	mod = &computerLikeModule{echoModule{name: "alpha", prefix: "/alpha/"}}
	s := New(slog.New(slog.DiscardHandler), Config{ShutdownTimeout: time.Second}, mod)
	main, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	computers, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeWithComputersPort(ctx, main, computers) }()
	return mod, main, computers, func() { cancelAndWaitServe(t, cancel, done) }
}

// TestTheComputersPortServesComputerPathsOnly: the second listener serves the computers' paths
// with the same handlers, marked as come through it, and answers anything else (the host API
// above all, which trusts loopback clients) 404 with one line naming --listen; the main
// listener is as before. Both stop together.
func TestTheComputersPortServesComputerPathsOnly(t *testing.T) {
	mod, main, computers, stop := serveBothPorts(t)
	mainURL, computersURL := "http://"+main.Addr().String(), "http://"+computers.Addr().String()

	status, body := request(t, http.MethodGet, computersURL+"/trapos/ws")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "via computers port: true", body)
	status, body = request(t, http.MethodGet, mainURL+"/trapos/ws")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "via computers port: false", body)
	status, body = request(t, http.MethodGet, computersURL+"/healthz")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ok\n", body)

	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/trapos/computers"},
		{http.MethodPost, "/trapos/ws"},
		{http.MethodGet, "/alpha/hello"},
		{http.MethodGet, "/"},
		{http.MethodGet, "/trapos/install%2F"}, // the mux's one segment "install/": the API's 404
		{http.MethodGet, "/trapos/files%2fapis%2Fx.lua"},
	} {
		status, body := request(t, r.method, computersURL+r.path)
		assert.Equal(t, http.StatusNotFound, status, r.path)
		assert.Equal(t, ComputersOnlyAnswer, body, r.path)
	}
	status, body = request(t, http.MethodGet, mainURL+"/trapos/computers")
	assert.Equal(t, http.StatusOK, status, "loopback without a token on the main port")
	assert.Equal(t, "[]", body)

	stop()
	assert.Equal(t, 1, mod.shutdowns)
	for _, l := range []net.Listener{main, computers} {
		_, err := net.DialTimeout("tcp", l.Addr().String(), time.Second)
		assert.Error(t, err, "%s is closed", l.Addr())
	}
}

// TestTheComputersPortRedirectsTheInstallersAndTheWebSocketsPathAsTheMainPortDoes: on the
// computers' port, the installer's and the WebSocket's path in a form that is not clean (a
// doubled slash, as a player types after a URL that ends in one: //trapos/install; a . or ..
// segment) is answered as on the main port, a 307 to the clean path, whose redirect followed
// reaches the computer's route there; it answered ComputersOnlyAnswer, 404, where the main
// port installed. Any other path not in its clean form (one cleaned to the host API's, a
// file's, /healthz), a slash sent as %2F, or another method, is still refused there.
func TestTheComputersPortRedirectsTheInstallersAndTheWebSocketsPathAsTheMainPortDoes(t *testing.T) {
	_, main, computers, stop := serveBothPorts(t)
	defer stop()
	mainURL, computersURL := "http://"+main.Addr().String(), "http://"+computers.Addr().String()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	answer := func(method, url string) (status int, location, body string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
		require.NoError(t, err)
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header.Get("Location"), string(b)
	}

	for _, tc := range []struct{ method, path, location string }{
		{http.MethodGet, "//trapos/install", "/trapos/install"},
		{http.MethodHead, "//trapos/install", "/trapos/install"},
		{http.MethodGet, "///trapos/install", "/trapos/install"},
		{http.MethodGet, "/trapos//install", "/trapos/install"},
		{http.MethodGet, "//trapos/install/", "/trapos/install/"},
		{http.MethodGet, "/trapos/./install", "/trapos/install"},
		{http.MethodGet, "/trapos/files/../install", "/trapos/install"},
		{http.MethodGet, "//trapos/ws", "/trapos/ws"},
		{http.MethodGet, "//trapos/ws?x=1", "/trapos/ws?x=1"},
	} {
		for _, base := range []string{mainURL, computersURL} {
			status, location, _ := answer(tc.method, base+tc.path)
			assert.Equal(t, http.StatusTemporaryRedirect, status, "%s %s%s", tc.method, base, tc.path)
			assert.Equal(t, tc.location, location, "%s %s%s", tc.method, base, tc.path)
		}
	}
	status, body := request(t, http.MethodGet, computersURL+"//trapos/ws")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "via computers port: true", body, "the redirect followed")

	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "//trapos/computers"},
		{http.MethodGet, "/trapos/install/../computers"},
		{http.MethodGet, "//trapos/files/apis/x.lua"},
		{http.MethodGet, "//healthz"},
		{http.MethodGet, "//trapos/ws/"},
		{http.MethodGet, "//trapos/install/x"},
		{http.MethodGet, "//trapos/install%2F"},
		{http.MethodGet, "//trapos%2Finstall"},
		{http.MethodGet, "/trapos//install%2f"},
		{http.MethodPost, "//trapos/install"},
		{http.MethodPost, "//trapos/ws"},
	} {
		status, _, body := answer(r.method, computersURL+r.path)
		assert.Equal(t, http.StatusNotFound, status, "%s %s", r.method, r.path)
		assert.Equal(t, ComputersOnlyAnswer, body, "%s %s", r.method, r.path)
	}
}

// TestIsComputerRequest: GET of the computers' paths, in their clean form only: the mux would
// redirect /trapos/files/../computers to an API path, and a client follows a redirect.
func TestIsComputerRequest(t *testing.T) {
	for _, tc := range []struct {
		method, target string
		want           bool
	}{
		{"GET", "/trapos/ws", true},
		{"HEAD", "/trapos/install", true},
		{"GET", "/trapos/files/apis/libsandbox.lua", true},
		{"GET", "/healthz", true},
		{"GET", "/trapos/files/", true}, // the installer answers it (404)
		{"GET", "/trapos/files/../computers", false},
		{"GET", "/trapos/files//apis/x.lua", false},
		{"GET", "/trapos/ws/", false},
		{"GET", "/trapos/install/", true}, // the install line copied with a slash
		{"GET", "/trapos/install/x", false},
		{"GET", "/trapos/install//", false},
		{"POST", "/trapos/ws", false},
		{"GET", "/trapos/computers", false},
		{"GET", "/trapos/wsx", false},
		{"GET", "/metrics", false},
		{"GET", "/mcp", false},
		{"GET", "/console/", false},
	} {
		r, err := http.NewRequest(tc.method, "http://gw"+tc.target, nil)
		require.NoError(t, err)
		r.URL.Path = tc.target // as the server reads it, without the client's cleaning
		assert.Equal(t, tc.want, IsComputerRequest(r), "%s %s", tc.method, tc.target)
	}
	// A slash sent as %2F is none to the mux, which routes by the path as sent.
	for _, target := range []string{"/trapos/install%2F", "/trapos/install%2f", "/trapos/files%2Fapis/x.lua", "/trapos/files/apis%2Fx.lua"} {
		r, err := http.NewRequest(http.MethodGet, "http://gw"+target, nil)
		require.NoError(t, err)
		assert.False(t, IsComputerRequest(r), target)
	}
	r, err := http.NewRequest(http.MethodGet, "http://gw/trapos/files/apis/k%C3%BCche%20x.lua", nil)
	require.NoError(t, err)
	assert.True(t, IsComputerRequest(r), "another escape is the character it stands for")
	assert.True(t, strings.HasSuffix(ComputersOnlyAnswer, "\n"))
}
