package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveShort serves with short header/idle timeouts and returns the address.
func serveShort(t *testing.T) string {
	t.Helper()
	s := New(slog.New(slog.DiscardHandler), Config{ShutdownTimeout: time.Second})
	s.readHeaderTimeout = 100 * time.Millisecond
	s.idleTimeout = 100 * time.Millisecond
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return")
		}
	})
	return l.Addr().String()
}

// readUntilClosed reads until the server closes the connection; it fails if our own 5 s
// deadline comes first.
func readUntilClosed(t *testing.T, conn net.Conn) string {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	data, err := io.ReadAll(conn)
	require.NoError(t, err, "the server should have closed the connection")
	return string(data)
}

func TestSlowHeadersAreCut(t *testing.T) {
	addr := serveShort(t)
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n") // headers never end
	require.NoError(t, err)
	out := readUntilClosed(t, conn)
	assert.NotContains(t, out, "200 OK")
}

func TestIdleKeepAliveIsClosed(t *testing.T) {
	addr := serveShort(t)
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	out := readUntilClosed(t, conn) // the answer, then the close once idle
	assert.True(t, strings.HasPrefix(out, "HTTP/1.1 200 OK"), out)
}
