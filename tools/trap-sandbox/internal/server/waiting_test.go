package server

import (
	"bufio"
	"context"
	"errors"
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
	// The three wait, each read by its goroutine, before a fourth comes: one not read yet is
	// closed only past twice the cap (TestAConnectionNotReadYetIsNotClosedForWaiting), and on
	// a loaded machine halfHeader's goroutine may not have read it when the fourth is accepted.
	require.Eventually(t, func() bool { return s.waiting.count() == 3 && s.waiting.allBeenRead() },
		5*time.Second, testkit.Poll, "three waiting, each read")
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

// TestAConnectionNotReadYetIsNotClosedForWaiting: a Minecraft server's restart (6 000
// computers upgrading at once from one address, on 2 loaded cores) had more than the cap
// accepted before the gateway read them, and the oldest, their headers all sent, were closed
// unread: 781 daemons came back 5 s later. Past the cap the oldest connection that has been
// read goes; one not read yet goes only past twice the cap.
func TestAConnectionNotReadYetIsNotClosedForWaiting(t *testing.T) {
	logs := &testkit.SyncBuffer{}
	w := newWaitingConns(slog.New(slog.NewTextHandler(logs, nil)), nil)
	w.max = 2
	accept := func() (*readingConn, net.Conn) {
		server, client := net.Pipe()
		t.Cleanup(func() { _ = server.Close(); _ = client.Close() })
		return &readingConn{Conn: server}, client
	}
	closed := func(client net.Conn) bool { // its peer, the gateway's end, closed
		if err := client.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
			return errors.Is(err, io.ErrClosedPipe)
		}
		_, err := client.Read(make([]byte, 1))
		return errors.Is(err, io.EOF)
	}
	unread, _ := accept()
	read, readClient := accept()
	go func() { _, _ = io.WriteString(readClient, "G") }()
	_, err := read.Read(make([]byte, 1)) // its goroutine read it: half a header, say
	require.NoError(t, err)
	w.wait(unread)
	w.wait(read)
	third, _ := accept()
	w.wait(third)
	assert.True(t, closed(readClient), "the oldest that was read is closed")
	assert.Equal(t, 2, w.count())
	w.mu.Lock()
	_, kept := w.element[unread]
	w.mu.Unlock()
	assert.True(t, kept, "the older one not read yet is kept")

	// Not read, any of them: kept up to twice the cap, then the oldest goes.
	fourth, _ := accept()
	w.wait(fourth)
	fifth, _ := accept()
	w.wait(fifth)
	assert.Equal(t, 4, w.count())
	sixth, _ := accept()
	w.wait(sixth)
	assert.Equal(t, 4, w.count())
	w.mu.Lock()
	_, kept = w.element[unread]
	w.mu.Unlock()
	assert.False(t, kept, "past twice the cap the oldest goes, read or not")
}

// allBeenRead reports whether every connection waiting has been read by its goroutine.
func (w *waitingConns) allBeenRead() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for e := w.oldest.Front(); e != nil; e = e.Next() {
		if !beenRead(e.Value.(net.Conn)) {
			return false
		}
	}
	return true
}
