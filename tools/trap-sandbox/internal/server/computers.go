package server

import (
	"net/http"
	"path"
	"slices"
	"strings"
)

// ComputerPaths are the paths a computer asks for, all with GET: its WebSocket, the installer,
// the client's files the installer fetches (a path ending in / is a prefix), and /healthz.
// They (with ComputerPathsWithSlash) are all that --computers-listen serves and all that a
// reverse proxy in front of the gateway needs to pass (docs/public-ports.md); everything else
// there, the host API, the web console, /mcp and /metrics, is for the host's own clients on
// --listen. A test in internal/cli checks them against the gateway's and the installer's own
// routes.
var ComputerPaths = []string{"/trapos/ws", "/trapos/install", "/trapos/files/", HealthzPath}

// ComputerPathsWithSlash are the ComputerPaths a computer may also ask for with a slash after
// them, each served as the path without: the install line, as a URL is copied. Only these:
// /trapos/ws/ is no computer's.
var ComputerPathsWithSlash = []string{"/trapos/install/"}

// ComputerPathsRedirected are the ComputerPaths (and ComputerPathsWithSlash) that the
// computers-only listener, asked for one in a form that is not clean (a doubled slash, as a
// player types after a URL that ends in one: //trapos/install; a . or .. segment), redirects
// to it as --listen does (redirectToCleanPath's 307), where it answered ComputersOnlyAnswer:
// the installer's and the WebSocket's, whose URLs a player types. A redirect leads to no other
// path, so nothing else is opened on that port; any other path not in its clean form is still
// answered ComputersOnlyAnswer there.
var ComputerPathsRedirected = []string{"/trapos/install", "/trapos/install/", "/trapos/ws"}

// ComputersOnlyAnswer is the one line the computers-only listener answers anything else with.
const ComputersOnlyAnswer = "this port (--computers-listen) serves computers only (GET /trapos/ws, /trapos/install, /trapos/files/..., /healthz): the host API, the web console, /mcp and /metrics are on --listen\n"

// IsComputerRequest reports whether r is one a computer makes: GET (or HEAD) of one of
// ComputerPaths or ComputerPathsWithSlash, the path in its clean form (a path with .. or //
// would be redirected by the mux to one that may not be a computer's), with no slash sent
// as %2F: the mux routes by the path as sent, where /trapos/install%2F is one segment,
// "install/", no computer's route, and reached the host API's "no API route" 404.
func IsComputerRequest(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if strings.Contains(strings.ToUpper(r.URL.EscapedPath()), "%2F") { // no file name holds a slash
		return false
	}
	p := r.URL.Path
	if clean := path.Clean(p); clean != p && clean+"/" != p {
		return false
	}
	if slices.Contains(ComputerPathsWithSlash, p) {
		return true
	}
	for _, allowed := range ComputerPaths {
		if p == allowed || strings.HasSuffix(allowed, "/") && strings.HasPrefix(p, allowed) && len(p) > len(allowed) {
			return true
		}
	}
	return false
}

// isRedirectedComputerRequest reports whether r is a GET (or HEAD) of one of
// ComputerPathsRedirected in a form that is not clean, with no slash sent as %2F: one that
// redirectToCleanPath answers with a 307 to that path.
func isRedirectedComputerRequest(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	escaped := r.URL.EscapedPath()
	if strings.Contains(strings.ToUpper(escaped), "%2F") {
		return false
	}
	clean := cleanEscapedPath(escaped)
	return clean != escaped && slices.Contains(ComputerPathsRedirected, clean)
}

// computersOnly serves h's computer requests (IsComputerRequest, and those h redirects to one
// of ComputerPathsRedirected) and answers anything else 404 with ComputersOnlyAnswer: deny by
// default, so a route added later stays off this port unless ComputerPaths names it.
func computersOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !IsComputerRequest(r) && !isRedirectedComputerRequest(r) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(ComputersOnlyAnswer))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// computersPortKey marks the context of a connection accepted by the computers-only listener.
type computersPortKey struct{}

// ViaComputersPort reports whether r came through the computers-only listener
// (--computers-listen), where nothing but ComputerPaths is served: a program that opened it
// reached no host API there, whatever its address.
func ViaComputersPort(r *http.Request) bool {
	via, _ := r.Context().Value(computersPortKey{}).(bool)
	return via
}
