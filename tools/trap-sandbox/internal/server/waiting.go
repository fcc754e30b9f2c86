package server

import (
	"container/list"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/logthrottle"
)

// maxWaitingConns bounds the connections that wait for a request, both listeners together:
// opened and not yet through their first request's header (readHeaderTimeout, 10 s), or idle
// between requests (idleTimeout, 2 min). Nothing else bounded them but the open-files limit:
// one address that opened them faster than they timed out (2 000 a second, half a header
// each, fill 20 000 files; one whole request then silence holds a file for 2 minutes) held
// every file, and no computer got in until they timed out. Past it, the oldest is closed: a
// computer, a browser or a proxy sends its request within a round trip of connecting, so the
// oldest is one that sends none. A computer's socket, once upgraded, and a request being
// served are not waiting.
//
// Only a connection the gateway has begun to read (readingConn) is closed so: past the cap,
// the oldest of those. One accepted but not read yet is one the gateway has not looked at (its
// header may be all there): a Minecraft server's restart, 6 000 computers upgrading at once
// from one address on 2 loaded cores, had 781 of them closed unread, each daemon back only
// 5 s later. Those are closed, the oldest first, only past twice the cap.
const maxWaitingConns = 4096

// readingListener accepts readingConns.
type readingListener struct{ net.Listener }

func (l readingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if c != nil {
		c = &readingConn{Conn: c}
	}
	return c, err
}

// readingConn is an accepted connection that says whether it has been read: its server
// goroutine asked it for its request.
type readingConn struct {
	net.Conn
	read atomic.Bool
}

func (c *readingConn) Read(p []byte) (int, error) {
	if !c.read.Load() {
		c.read.Store(true)
	}
	return c.Conn.Read(p)
}

// CloseWrite is the connection's own (net/http half-closes a connection it refuses).
func (c *readingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// beenRead reports whether c has been read (a connection not accepted as a readingConn
// counts as read).
func beenRead(c net.Conn) bool {
	rc, ok := c.(*readingConn)
	return !ok || rc.read.Load()
}

// waitingConns are the connections that wait for a request, oldest first.
type waitingConns struct {
	max     int
	closed  prometheus.Counter // nil without metrics
	warns   *logthrottle.Throttle
	mu      sync.Mutex
	oldest  *list.List                 // of net.Conn; guarded by mu
	element map[net.Conn]*list.Element // guarded by mu
}

func newWaitingConns(logger *slog.Logger, reg prometheus.Registerer) *waitingConns {
	w := &waitingConns{max: maxWaitingConns, warns: logthrottle.New(logger, clock.Real{}),
		oldest: list.New(), element: make(map[net.Conn]*list.Element)}
	if reg != nil {
		w.closed = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trapos_http_waiting_closed_total",
			Help: "Connections closed because more than " + strconv.Itoa(maxWaitingConns) +
				" waited for a request (opened without sending one, or idle between requests): the oldest goes.",
		})
		reg.MustRegister(w.closed)
	}
	return w
}

// connState is the http.Server's ConnState hook: a connection waits from when it is accepted
// and whenever it is idle between requests, until its next request's header is read
// (requestBegan), it is hijacked (a computer's WebSocket) or it closes. A request's first
// byte (StateActive) ends no wait: a header sent a byte at a time is still waiting.
func (w *waitingConns) connState(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew, http.StateIdle:
		w.wait(c)
	case http.StateHijacked, http.StateClosed:
		w.done(c)
	}
}

// wait puts c at the end of the queue and closes the oldest past max.
func (w *waitingConns) wait(c net.Conn) {
	w.mu.Lock()
	if e := w.element[c]; e != nil {
		w.oldest.Remove(e)
	}
	w.element[c] = w.oldest.PushBack(c)
	evict := w.evictLocked()
	waiting := w.oldest.Len()
	w.mu.Unlock()
	if evict == nil {
		return
	}
	// Counted and logged before the close: whoever sees the connection end (its client, a
	// test) then finds it in the metric and the log, never a moment before they say so.
	if w.closed != nil {
		w.closed.Inc()
	}
	w.warns.Log(slog.LevelWarn, "waiting", "closed the oldest connection waiting for a request: more connections were open without sending one (or idle between requests) than the gateway keeps, so that a flood of them cannot take every open file",
		"remote", evict.RemoteAddr().String(), "waiting", waiting, "max", w.max)
	_ = evict.Close() // its goroutine's read fails, and net/http forgets it
}

// evictLocked takes the connection to close off the queue, nil when none is closed: past max,
// the oldest that has been read; past twice max, the oldest.
func (w *waitingConns) evictLocked() net.Conn {
	if w.oldest.Len() <= w.max {
		return nil
	}
	e := w.oldest.Front()
	if w.oldest.Len() <= 2*w.max {
		for e != nil && !beenRead(e.Value.(net.Conn)) {
			e = e.Next()
		}
		if e == nil {
			return nil
		}
	}
	c := w.oldest.Remove(e).(net.Conn)
	delete(w.element, c)
	return c
}

// done takes c off the queue, if it is on it.
func (w *waitingConns) done(c net.Conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.element[c]; e != nil {
		w.oldest.Remove(e)
		delete(w.element, c)
	}
}

// connKey is the request context's key of its connection (http.Server.ConnContext).
type connKey struct{}

func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// requestBegan takes a request's connection off the queue: its header is read, and the
// request is served.
func (w *waitingConns) requestBegan(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
			w.done(c)
		}
		next.ServeHTTP(rw, r)
	})
}

// count is how many connections wait.
func (w *waitingConns) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.oldest.Len()
}
