package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bodyModule has one API route that reads its whole body.
type bodyModule struct{}

func (bodyModule) Name() string { return "body" }

func (bodyModule) Mount(routes *Routes) {
	routes.HandleAPIFunc("POST /body/read", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "cannot read the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, "read")
	})
}

// serveHeld serves bodyModule with a short body deadline and the given shutdown timeout; it
// returns the address, a function that stops the server, and one that waits for Serve's result.
func serveHeld(t *testing.T, shutdown time.Duration) (string, context.CancelFunc, func() error) {
	t.Helper()
	s := New(slog.New(slog.DiscardHandler), Config{ShutdownTimeout: shutdown}, bodyModule{})
	s.bodyReadTimeout = 100 * time.Millisecond
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	wait := sync.OnceValue(func() error { return <-done })
	t.Cleanup(func() {
		cancel()
		_ = wait()
	})
	return l.Addr().String(), cancel, wait
}

// holdBody sends a request that announces a body it never sends.
func holdBody(t *testing.T, addr, method, path string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = io.WriteString(conn, method+" "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
	require.NoError(t, err)
	return conn
}

func TestAHeldBodyIsCutAtItsDeadline(t *testing.T) {
	addr, _, _ := serveHeld(t, time.Second)
	conn := holdBody(t, addr, http.MethodPost, "/body/read")
	out := readUntilClosed(t, conn)
	assert.True(t, strings.HasPrefix(out, "HTTP/1.1 400"), out)
	assert.Contains(t, out, "Connection: close")
}

func TestAnErrorAnswerToARequestWithAnUnreadBodyClosesTheConnection(t *testing.T) {
	addr, _, _ := serveHeld(t, time.Second)
	conn := holdBody(t, addr, http.MethodPost, HealthzPath) // 405: the body is never read
	out := readUntilClosed(t, conn)
	assert.True(t, strings.HasPrefix(out, "HTTP/1.1 405"), out)
	assert.Contains(t, out, "Connection: close")
}

func TestShutdownSucceedsInBoundedTimeWhateverAClientHolds(t *testing.T) {
	addr, stop, done := serveHeld(t, 50*time.Millisecond)
	holdBody(t, addr, http.MethodPost, "/body/read")
	stop()
	assert.NoError(t, done(), "a client holding a connection must not fail the shutdown")
}

// slowModule answers after its body is read and release is closed: a request that lasts
// longer than the body deadline.
type slowModule struct{ release chan struct{} }

func (slowModule) Name() string { return "slow" }

func (m slowModule) Mount(routes *Routes) {
	routes.HandleAPIFunc("POST /slow", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-m.release:
		case <-r.Context().Done():
			return // the deadline cancelled it: no answer
		}
		_, _ = io.WriteString(w, "answered")
	})
}

// Once the body is in, the body deadline no longer applies: a request may wait longer for
// its answer (an API call waits up to 60 s for a computer). net/http lifts it as it starts
// its background read at the body's end, and bounded relies on that.
func TestTheBodyDeadlineEndsWithTheBody(t *testing.T) {
	release := make(chan struct{})
	s := New(slog.New(slog.DiscardHandler), Config{ShutdownTimeout: time.Second}, slowModule{release})
	s.bodyReadTimeout = 50 * time.Millisecond
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	defer func() { cancel(); <-done }()

	answered := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, "http://"+l.Addr().String()+"/slow", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		answered <- string(body)
	}()
	// Wait past the body deadline by the server's own clock: a second request's body, sent
	// slowly, is cut by it, so the first one has lived longer than its deadline too.
	conn := holdBody(t, l.Addr().String(), http.MethodPost, "/slow")
	readUntilClosed(t, conn)
	close(release)
	assert.Equal(t, "answered", <-answered)
}
