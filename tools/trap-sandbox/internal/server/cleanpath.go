package server

import (
	"net/http"
	"path"
	"strings"
)

// redirectToCleanPath answers a request whose path has . or .. segments or repeated slashes
// with a 307 to its clean form, as the mux would (its request sanitizing, documented in
// docs/http-api.md's file routes), but with the path as the client escaped it. The mux of Go
// 1.26 cleans the escaped path and escapes it again (golang/go#79897): a traposId such as
// 5:k%C3%BCche, or a file name's %20, was redirected to 5:k%25C3%25BCche, another computer,
// and a%2520b, another file. Any other request goes on to next unchanged.
func redirectToCleanPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect { // not canonicalized, as by the mux
			next.ServeHTTP(w, r)
			return
		}
		escaped := r.URL.EscapedPath()
		clean := cleanEscapedPath(escaped)
		if clean == escaped {
			next.ServeHTTP(w, r)
			return
		}
		if r.URL.RawQuery != "" {
			clean += "?" + r.URL.RawQuery
		}
		// Set, not http.Redirect: it would read the path's escapes as its own to clean.
		w.Header().Set("Location", clean)
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
}

// cleanEscapedPath is the mux's clean form of an escaped path: rooted, without . and ..
// segments or repeated slashes, a trailing slash kept.
func cleanEscapedPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean
}
