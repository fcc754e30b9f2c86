package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"trap-sandbox/internal/account"
)

// Routes is what a module mounts its routes on. The server owns what every module shares:
// Handle is for routes that authenticate themselves (the computers' WebSocket), HandleAPI
// for the host API, which gets the server's one auth check (Bearer SANDBOX_API_TOKEN, or
// loopback only when no token is set).
type Routes struct {
	mux      *http.ServeMux
	apiToken string
	accounts *account.Accounts      // nil: no accounts, only apiToken or loopback
	passes   *account.Passes        // nil: no gateway passes
	refused  *prometheus.CounterVec // the API auth's refusals by reason; nil without metrics
	guard    guard                  // guard.go: JSON POSTs, and without a token no foreign Origin or Host
}

// Handle registers a route without the API auth check.
func (r *Routes) Handle(pattern string, h http.Handler) { r.mux.Handle(pattern, h) }

// HandleFunc is Handle for a function.
func (r *Routes) HandleFunc(pattern string, h http.HandlerFunc) { r.mux.Handle(pattern, h) }

// HandleAPI registers a host API route behind the API auth check and the browser guard. The
// auth answers first, so a client with a wrong or missing token is told that before anything
// about its request (a 401 rather than a 415 it would fix in vain); the guard still refuses
// what a web page sends before the route runs.
func (r *Routes) HandleAPI(pattern string, h http.Handler) {
	r.mux.Handle(pattern, apiAuth(r.apiToken, r.accounts, r.passes, r.refused, r.guard.wrap(h)))
}

// HandleAPIFunc is HandleAPI for a function.
func (r *Routes) HandleAPIFunc(pattern string, h http.HandlerFunc) { r.HandleAPI(pattern, h) }
