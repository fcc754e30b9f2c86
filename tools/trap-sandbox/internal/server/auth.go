package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"

	"trap-sandbox/internal/protocol"
)

// apiAuth admits a request with the right Bearer token when token is set, else only loopback
// clients. It guards every module's host API routes and /metrics. SANDBOX_PASSWORD never
// opens the API: any player can read it from a computer's .settings.
func apiAuth(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || !SecretMatches(got, token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="trap-sandbox"`)
				writeAuthError(w, http.StatusUnauthorized,
					"missing or wrong API token (send Authorization: Bearer <SANDBOX_API_TOKEN>)")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if !isLoopback(r.RemoteAddr) {
			writeAuthError(w, http.StatusForbidden,
				"the HTTP API answers only loopback clients; set SANDBOX_API_TOKEN to allow remote clients")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// SecretMatches compares a secret (the API token, a computer's hello secret) with the one
// wanted, in constant time. Hashing first hides the wanted secret's length too
// (ConstantTimeCompare returns at once on a length mismatch).
func SecretMatches(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

func isLoopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeAuthError answers an auth failure in the API's error shape.
func writeAuthError(w http.ResponseWriter, status int, message string) {
	WriteError(w, status, protocol.CodeUnauthorized, message)
}
