package server

import (
	"log/slog"
	"net/http"
	"runtime/debug"
)

// panicMsg is the ERROR line of a request whose handler panicked.
const panicMsg = "a request's handler panicked (a bug of trap-sandbox's): its connection was closed unanswered; the gateway serves on"

// recovered logs a panic of next's handler as one ERROR line with its stack, then lets net/http
// close the connection unanswered (http.ErrAbortHandler, which it does not log again). net/http
// recovers a handler's panic by itself, but says so only to the server's ErrorLog, which is kept
// at debug for the clients' noise (TLS probes, bad requests): a bug that broke requests left
// nothing in a log at info, the level a service runs at. The path is logged without its query.
func recovered(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil || p == http.ErrAbortHandler { // net/http compares it so too
				return
			}
			logger.Error(panicMsg, "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			panic(http.ErrAbortHandler)
		}()
		next.ServeHTTP(w, r)
	})
}
