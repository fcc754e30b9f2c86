package server

import (
	"net/http"
	"strings"
	"time"
)

// Time bounds of a plain HTTP request (every one but a WebSocket upgrade, whose connection the
// module takes over with deadlines of its own). ReadHeaderTimeout bounds the headers; these
// bound the rest, so a client that announces a body and never sends it, or never reads the
// answer, holds its connection for a bounded time.
const (
	// DefaultBodyReadTimeout bounds reading a request's body, from its headers on.
	DefaultBodyReadTimeout = 10 * time.Second
	// DefaultResponseWriteTimeout bounds the whole request, answer included: an API request
	// may wait up to 60 s for a computer (timeoutMs), and then its answer must get out.
	DefaultResponseWriteTimeout = 75 * time.Second
)

// bounded sets the body-read and write deadlines of every plain request, and asks for the
// connection to be closed after an error answer to a request with a body: net/http would
// otherwise read the unread rest of the body to reuse the connection, which a client that
// never sends it can hold.
func (s *Server) bounded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWebSocketUpgrade(r) {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&closeOnError{ResponseWriter: w, hasBody: s.setDeadlines(w, r)}, r)
	})
}

// setDeadlines sets plain request r's write deadline and, when it has a body, its body's read
// deadline (bounded), and reports whether it has a body. A method of its own, not in bounded's
// closure: inlined into New, the closure is compiled as part of a big function, which inlines
// no http.NewResponseController, and the controller then cost an allocation a request.
func (s *Server) setDeadlines(w http.ResponseWriter, r *http.Request) (hasBody bool) {
	rc := http.NewResponseController(w)
	now := time.Now()
	if !isEventStream(r) {
		_ = rc.SetWriteDeadline(now.Add(s.responseWriteTimeout))
	}
	hasBody = r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
	if hasBody {
		// Only the body is bounded: once it is read, net/http keeps reading in the
		// background to notice a client that goes away, and a deadline left in place
		// would cancel a long request (an API call waits up to 60 s for a computer).
		// net/http lifts it itself when the body has been read to its end: it clears
		// the connection's read deadline as it starts that background read
		// (TestTheBodyDeadlineEndsWithTheBody holds it to that).
		_ = rc.SetReadDeadline(now.Add(s.bodyReadTimeout))
	}
	return hasBody
}

// isEventStream reports whether r asks for a server-sent event stream (MCP's GET /mcp), which
// lives as long as its client wants: it gets no overall write deadline.
func isEventStream(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// isWebSocketUpgrade reports whether r asks for a WebSocket (the header tokens gorilla checks).
func isWebSocketUpgrade(r *http.Request) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") && headerHasToken(r.Header, "Upgrade", "websocket")
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// closeOnError adds Connection: close to an error answer (status 400 and up) of a request
// that came with a body.
type closeOnError struct {
	http.ResponseWriter
	hasBody     bool
	wroteHeader bool
}

func (c *closeOnError) WriteHeader(status int) {
	if !c.wroteHeader {
		c.wroteHeader = true
		if c.hasBody && status >= http.StatusBadRequest {
			c.Header().Set("Connection", "close")
		}
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *closeOnError) Write(b []byte) (int, error) {
	if !c.wroteHeader {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (c *closeOnError) Unwrap() http.ResponseWriter { return c.ResponseWriter }
