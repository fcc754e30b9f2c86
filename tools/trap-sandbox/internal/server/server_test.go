package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"trap-sandbox/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// echoModule mounts one route under its own prefix and records its shutdown.
type echoModule struct {
	name, prefix string
	mu           sync.Mutex
	shutdowns    int
	shutdownErr  error
}

func (m *echoModule) Name() string { return m.name }

func (m *echoModule) Mount(routes *Routes) {
	routes.HandleFunc("GET "+m.prefix+"hello", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, m.name)
	})
}

func (m *echoModule) Shutdown(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.shutdowns++
	return m.shutdownErr
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	return request(t, http.MethodGet, url)
}

func TestModulesAndHealthz(t *testing.T) {
	a := &echoModule{name: "alpha", prefix: "/alpha/"}
	b := &echoModule{name: "beta", prefix: "/beta/"}
	srv := httptest.NewServer(New(slog.New(slog.DiscardHandler), Config{}, a, b).Handler())
	t.Cleanup(srv.Close)

	status, body := get(t, srv.URL+"/healthz")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ok\n", body)

	status, body = get(t, srv.URL+"/alpha/hello")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "alpha", body)
	status, body = get(t, srv.URL+"/beta/hello")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "beta", body)

	status, _ = get(t, srv.URL+"/gamma/hello")
	assert.Equal(t, http.StatusNotFound, status)
}

func TestServeLogsAddressAndShutsDown(t *testing.T) {
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	mod := &echoModule{name: "alpha", prefix: "/alpha/"}
	s := New(logger, Config{ShutdownTimeout: time.Second}, mod)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()

	addrRE := regexp.MustCompile(`msg=listening addr=(\S+)`)
	var addr string
	deadline := time.Now().Add(5 * time.Second)
	for addr == "" && time.Now().Before(deadline) {
		if m := addrRE.FindStringSubmatch(logs.String()); m != nil {
			addr = m[1]
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, l.Addr().String(), addr, "the listening line names the real bound address")
	status, _ := get(t, "http://"+addr+"/healthz")
	assert.Equal(t, http.StatusOK, status)

	cancelAndWaitServe(t, cancel, done)
	assert.Equal(t, 1, mod.shutdowns)
	_, err = net.DialTimeout("tcp", addr, time.Second)
	assert.Error(t, err, "the listener is closed")
}

func TestServeReportsModuleShutdownErrors(t *testing.T) {
	broken := errors.New("cannot flush the registry")
	mod := &echoModule{name: "alpha", prefix: "/alpha/", shutdownErr: broken}
	s := New(slog.New(slog.DiscardHandler), Config{ShutdownTimeout: time.Second}, mod)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.Serve(ctx, l)
	assert.ErrorIs(t, err, broken)
	assert.Contains(t, err.Error(), "alpha")
}

// Peers that keep their sockets past the deadline are cut by the module: the clients' doing,
// so the shutdown still succeeds.
func TestServeTreatsAModuleCuttingAtTheDeadlineAsSuccess(t *testing.T) {
	mod := &echoModule{name: "alpha", prefix: "/alpha/", shutdownErr: fmt.Errorf("cut 3 sockets: %w", context.DeadlineExceeded)}
	s := New(slog.New(slog.DiscardHandler), Config{ShutdownTimeout: time.Second}, mod)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, s.Serve(ctx, l))
}

// cancelAndWaitServe ends a Serve by cancelling its context and waits for it to return nil.
func cancelAndWaitServe(t *testing.T, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}
