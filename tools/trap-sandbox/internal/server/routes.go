package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/protocol"
)

// Routes is what a module mounts its routes on. The server owns what every module shares:
// Handle is for routes that authenticate themselves (the computers' WebSocket), HandleAPI
// for the host API, which gets the server's one auth check (Bearer SANDBOX_API_TOKEN, or
// loopback only when no token is set).
type Routes struct {
	mux      *http.ServeMux
	log      *slog.Logger
	apiToken string
	accounts *account.Accounts // nil: no accounts, only apiToken or loopback
	passes   *account.Passes   // nil: no gateway passes
	refused  *refusals         // the API auth's refusals: counted by reason, logged
	guard    guard             // guard.go: JSON POSTs, and without a token no foreign Origin or Host
	api      map[string]bool   // the patterns registered by HandleAPI (noRoute tells them apart)
	noRoute  map[string]bool   // the patterns handleNoRoute registered (allowed passes over them)
}

// Handle registers a route without the API auth check.
func (r *Routes) Handle(pattern string, h http.Handler) { r.mux.Handle(pattern, h) }

// HandleFunc is Handle for a function.
func (r *Routes) HandleFunc(pattern string, h http.HandlerFunc) { r.mux.Handle(pattern, h) }

// HandleAPI registers a host API route behind the API auth check and the browser guard. The
// auth answers first, so a client with a wrong or missing token is told that before anything
// about its request (a 401 rather than a 415 it would fix in vain); the guard still refuses
// what a web page sends before the route runs. takes are the query parameters the route takes
// (most: none): any other, or one given twice, is refused, 400 bad_payload, after the auth
// (refuseQuery).
func (r *Routes) HandleAPI(pattern string, h http.Handler, takes ...QueryParam) {
	if r.api == nil {
		r.api = map[string]bool{}
	}
	r.api[pattern] = true
	r.mux.Handle(pattern, r.behindAuth(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if refuseQuery(w, req, takes) {
			return
		}
		h.ServeHTTP(w, req)
	})))
}

// behindAuth is h behind the API auth check and the browser guard.
func (r *Routes) behindAuth(h http.Handler) http.Handler {
	return apiAuth(r.log, r.apiToken, r.accounts, r.passes, r.refused, r.guard.wrap(h))
}

// HandleAPIFunc is HandleAPI for a function.
func (r *Routes) HandleAPIFunc(pattern string, h http.HandlerFunc, takes ...QueryParam) {
	r.HandleAPI(pattern, h, takes...)
}

// apiPrefix is the path the host API answers under: an unknown route or method there is
// answered in the API's error shape (answerNoRoute), not net/http's plain text. The computers'
// routes under /trapos/ (the WebSocket, the installer) are registered with their own patterns,
// which win over it. An API route outside it (/metrics, /mcp) has its path's other methods
// and the paths under it answered so too (apiPaths).
const apiPrefix = "/trapos/"

// routeMethods are the methods noRoute looks for on a path.
var routeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete}

// apiPaths are the patterns answerNoRoute answers: apiPrefix, and for each API route outside
// it, the paths under its path (/mcp/, which net/http answered "404 page not found") and, when
// each of its path's routes has a method, its path's other methods (POST /metrics).
func (r *Routes) apiPaths() []string {
	paths := []string{apiPrefix}
	anyMethod := map[string]bool{} // a path with a route of any method (/mcp)
	var outside []string
	for pattern := range r.api {
		path := pattern
		if _, p, hasMethod := strings.Cut(pattern, " "); hasMethod {
			path = p
		} else {
			anyMethod[path] = true
		}
		if !strings.HasPrefix(path, apiPrefix) && !slices.Contains(outside, path) {
			outside = append(outside, path)
		}
	}
	slices.Sort(outside)
	for _, path := range outside {
		if !strings.HasSuffix(path, "/") {
			paths = append(paths, path+"/")
		}
		if !anyMethod[path] {
			paths = append(paths, path)
		}
	}
	return paths
}

// handleNoRoute registers noRoute at every API path (apiPaths), and at /healthz, which is no
// API route, its other methods' JSON 405 (answerOtherMethod) without the auth.
func (r *Routes) handleNoRoute() {
	r.noRoute = map[string]bool{HealthzPath: true}
	r.mux.Handle(HealthzPath, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		allowed, _ := r.allowed(req)
		answerOtherMethod(w, req, allowed)
	}))
	// Behind the auth, not the guard: a POST the route does not take is told so, not to
	// send JSON, and a 404 or 405 gives a page nothing to act on.
	apiAnswer := apiAuth(r.log, r.apiToken, r.accounts, r.passes, r.refused, http.HandlerFunc(r.answerNoRoute))
	for _, prefix := range r.apiPaths() {
		r.noRoute[prefix] = true
		r.mux.Handle(prefix, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if allowed, api := r.allowed(req); len(allowed) > 0 && !api {
				// A computers' route (the WebSocket, the installer) asked with another
				// method: net/http's answer, as before, and no API auth.
				w.Header().Set("Allow", strings.Join(allowed, ", "))
				http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
				return
			}
			apiAnswer.ServeHTTP(w, req)
		}))
	}
}

// allowed lists the methods that have a route at req's path, and whether those routes are
// API routes.
func (r *Routes) allowed(req *http.Request) (methods []string, api bool) {
	for _, m := range routeMethods {
		probe := *req
		probe.Method = m
		if _, pattern := r.mux.Handler(&probe); pattern != "" && !r.noRoute[pattern] {
			methods = append(methods, m)
			api = api || r.api[pattern]
		}
	}
	return methods, api
}

// answerNoRoute answers, once the API auth admitted it, a request no API route takes: 405
// bad_payload with Allow when the path is a route's with another method, else 404 not_found.
func (r *Routes) answerNoRoute(w http.ResponseWriter, req *http.Request) {
	if allowed, _ := r.allowed(req); len(allowed) > 0 {
		answerOtherMethod(w, req, allowed)
		return
	}
	if trimmed := strings.TrimSuffix(req.URL.Path, "/"); trimmed != req.URL.Path && trimmed != "" {
		probe, u := *req, *req.URL
		u.Path, u.RawPath = trimmed, ""
		probe.URL = &u
		if allowed, api := r.allowed(&probe); len(allowed) > 0 && api {
			// /mcp/ for /mcp: a client's URL with a slash the route has not.
			WriteError(w, http.StatusNotFound, protocol.CodeNotFound,
				fmt.Sprintf(NoRouteAnswer+"%s: the route is %s, without the last /", clipHeader(req.URL.Path), clipHeader(trimmed)))
			return
		}
	}
	if strings.HasPrefix(req.URL.Path, doubledPrefix) {
		// A client's base URL that ends in /trapos (--url http://host:4444/trapos) doubles it.
		WriteError(w, http.StatusNotFound, protocol.CodeNotFound,
			fmt.Sprintf(NoRouteAnswer+"%s: the client's URL ends in /trapos, which the routes begin with; give the gateway's root (http://host:4444, --url or SANDBOX_URL)", clipHeader(req.URL.Path)))
		return
	}
	WriteError(w, http.StatusNotFound, protocol.CodeNotFound,
		fmt.Sprintf(NoRouteAnswer+"%s (docs/http-api.md lists them)", clipHeader(req.URL.Path)))
}

// answerOtherMethod answers a request to a route's path with a method none of its routes
// takes: 405 bad_payload naming the methods they take (allowed), with Allow.
func answerOtherMethod(w http.ResponseWriter, req *http.Request, allowed []string) {
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	WriteError(w, http.StatusMethodNotAllowed, protocol.CodeBadPayload,
		fmt.Sprintf("%s is not a method of %s: it takes %s (docs/http-api.md)", clipHeader(req.Method), clipHeader(req.URL.Path), strings.Join(allowed, ", ")))
}

// NoRouteAnswer begins the answer to a path no API route has (answerNoRoute): a client
// tells by it a route its gateway is too old for.
const NoRouteAnswer = "no API route at "

// doubledPrefix begins the path of a request whose client put /trapos in its base URL too.
const doubledPrefix = "/trapos/trapos/"
