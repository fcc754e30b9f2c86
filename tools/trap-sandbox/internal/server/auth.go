package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"strings"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/protocol"
)

// apiAuth admits a request and puts its caller (account.Caller) in the request's context.
// It guards every module's host API routes and /metrics:
//   - an account's API token (tsa_…, when accounts is set) is that account, admin or not;
//   - a gateway pass (tsp_…, when passes is set) is the caller it was granted for: one
//     computer of its account (the agent's MCP connection for that computer);
//   - SANDBOX_API_TOKEN, when token is set, is account.LocalAdmin, as before accounts;
//   - with no token set, a loopback client without an account token is account.LocalAdmin;
//   - anything else is refused.
//
// SANDBOX_PASSWORD never opens the API: any player can read it from a computer's .settings.
func apiAuth(token string, accounts *account.Accounts, passes *account.Passes, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		admit := func(c account.Caller) { next.ServeHTTP(w, r.WithContext(account.WithCaller(r.Context(), c))) }
		if bearer && accounts != nil && strings.HasPrefix(got, string(account.KindToken)+"_") {
			a, err := accounts.Authenticate(r.Context(), got)
			if err != nil {
				refuseToken(w, err)
				return
			}
			admit(account.Caller{Account: a.ID, Admin: a.Role == account.RoleAdmin})
			return
		}
		if bearer && passes != nil && strings.HasPrefix(got, string(account.KindPass)+"_") {
			c, ok := passes.Caller(got)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="trap-sandbox"`)
				writeAuthError(w, http.StatusUnauthorized,
					"unknown gateway pass: this gateway grants a computer's pass when the computer asks the agent, and honours it while it runs")
				return
			}
			admit(c)
			return
		}
		if token != "" {
			if !bearer || !SecretMatches(got, token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="trap-sandbox"`)
				writeAuthError(w, http.StatusUnauthorized,
					"missing or wrong API token (send Authorization: Bearer <SANDBOX_API_TOKEN> or an account's token)")
				return
			}
			admit(account.LocalAdmin)
			return
		}
		if !isLoopback(r.RemoteAddr) {
			writeAuthError(w, http.StatusForbidden,
				"the HTTP API answers only loopback clients or an account's token; set SANDBOX_API_TOKEN or create an account (trap-sandbox accounts add) to allow remote clients")
			return
		}
		admit(account.LocalAdmin)
	})
}

// refuseToken answers an account token that opened nothing, with why (never the token).
func refuseToken(w http.ResponseWriter, err error) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="trap-sandbox"`)
	switch {
	case errors.Is(err, account.ErrRevoked), errors.Is(err, account.ErrExpired):
		writeAuthError(w, http.StatusUnauthorized, err.Error()+": ask the account's holder or an admin for a new one (trap-sandbox tokens add)")
	case errors.Is(err, account.ErrBadSecret):
		writeAuthError(w, http.StatusUnauthorized, "unknown or wrong account token (trap-sandbox tokens add gives a new one)")
	default:
		WriteError(w, http.StatusInternalServerError, protocol.CodeInternal, "cannot check the token: the account store failed")
	}
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
