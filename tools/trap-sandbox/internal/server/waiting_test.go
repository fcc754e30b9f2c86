package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// TestTheOldestConnectionWaitingForARequestIsClosedPastTheCap: connections that send half a
// header, or go idle after a request, held an open file each until their timeout (10 s, 2 min)
// whatever their number, so a flood of them from one address took every file. Past the cap
// the oldest waiting one is closed; the others, and requests, are served as ever.
func TestTheOldestConnectionWaitingForARequestIsClosedPastTheCap(t *testing.T) {
	logs := &testkit.SyncBuffer{}
	reg := prometheus.NewRegistry()
	s := New(slog.New(slog.NewTextHandler(logs, nil)), Config{Metrics: reg, ShutdownTimeout: time.Second})
	s.waiting.max = 3
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	dial := func(send string) net.Conn {
		c, err := net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		_, err = io.WriteString(c, send)
		require.NoError(t, err)
		return c
	}
	answered := func(c net.Conn) {
		t.Helper()
		_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}

	halfHeader := dial("GET /healthz HTTP/1.1\r\nHost: x\r\n") // the oldest
	silent := dial("")
	idle := dial("")
	answered(idle) // then idle: waiting again
	requestLine := dial("GET /trapos/ws HTTP/1.1\r\n")

	out := readUntilClosed(t, halfHeader)
	assert.NotContains(t, out, "200 OK", "closed unanswered")
	answered(silent) // the others were left alone
	answered(idle)
	assert.Equal(t, 1.0, testutil.ToFloat64(s.waiting.closed))
	assert.Equal(t, 1, strings.Count(logs.String(), "closed the oldest connection waiting for a request"), logs.String())

	// A connection that closes, or whose request is served and closed, waits no more.
	for _, c := range []net.Conn{silent, idle, requestLine} {
		require.NoError(t, c.Close())
	}
	require.Eventually(t, func() bool { return s.waiting.count() == 0 }, 5*time.Second, testkit.Poll, "closed by the client")
	for range 5 {
		readUntilClosed(t, dial("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
	}
	require.Eventually(t, func() bool { return s.waiting.count() == 0 }, 5*time.Second, testkit.Poll, "served and closed")
	assert.Equal(t, 1.0, testutil.ToFloat64(s.waiting.closed), "none closed for the cap meanwhile")
}
