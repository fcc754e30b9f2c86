package server

import (
	"crypto/subtle"
	"encoding/json"
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
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
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

func isLoopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeAuthError answers in the API's error shape {ok:false, error:{code, message}}.
func writeAuthError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		OK    bool            `json:"ok"`
		Error *protocol.Error `json:"error"`
	}{Error: &protocol.Error{Code: protocol.CodeUnauthorized, Message: message}})
}
