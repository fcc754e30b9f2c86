package server

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/protocol"
)

// guard defends the host API against the user's own browser. Without SANDBOX_API_TOKEN the
// API trusts every loopback client, and a web page the user visits is one: it may POST to the
// API (a "simple" cross-origin request needs no CORS consent), or rebind its own DNS name to
// 127.0.0.1 and then read the answers as same-origin. So on every API route:
//   - a POST must say Content-Type: application/json, which a page cannot send cross-origin
//     without a CORS preflight that the API never grants (HTTP 415 otherwise);
//   - without a token, a request with an Origin header other than the gateway's own is
//     refused (HTTP 403), and so is one whose Host is a DNS name the gateway does not answer
//     to: only localhost, IP literals (a rebinding needs a name) and the --public-url host;
//   - without a token, so is one a browser marks as sent by another site's page
//     (Sec-Fetch-Site: cross-site or same-site): an <img> or <script> GET carries no Origin,
//     yet would start a screen watch or fetch a computer's file.
//
// With a token nothing rides on ambient trust (a browser never adds the Bearer header by
// itself), so Origin and Host are left alone. Routes a computer needs (Routes.Handle) are not
// guarded: CC sends no Origin, and computers reach the gateway by any name.
type guard struct {
	tokenSet   bool
	publicHost string // the --public-url's host name, lower case; "" when none
}

func newGuard(cfg Config) guard {
	g := guard{tokenSet: cfg.APIToken != ""}
	if u, err := url.Parse(cfg.PublicURL); err == nil && cfg.PublicURL != "" {
		g.publicHost = strings.ToLower(u.Hostname())
	}
	return g
}

func (g guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !isJSON(r.Header.Get("Content-Type")) {
			WriteError(w, http.StatusUnsupportedMediaType, protocol.CodeBadPayload,
				"the API takes JSON: send Content-Type: application/json")
			return
		}
		if got, bearer := bearerToken(r.Header.Get("Authorization")); g.tokenSet || bearer && strings.HasPrefix(got, string(account.KindToken)+"_") {
			next.ServeHTTP(w, r) // an account's token is no ambient trust either
			return
		}
		if !g.hostAllowed(r.Host) {
			WriteError(w, http.StatusForbidden, protocol.CodeUnauthorized,
				"the API answers only requests to localhost, an IP address or the --public-url host (a foreign Host header is how a web page reaches it by DNS rebinding); set SANDBOX_API_TOKEN to allow other names")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r.Host) {
			WriteError(w, http.StatusForbidden, protocol.CodeUnauthorized,
				"the API refuses requests from web pages (Origin "+clipHeader(origin)+"); set SANDBOX_API_TOKEN to allow browser clients")
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
			WriteError(w, http.StatusForbidden, protocol.CodeUnauthorized,
				"the API refuses requests from other sites' web pages (Sec-Fetch-Site "+clipHeader(site)+"); set SANDBOX_API_TOKEN to allow browser clients")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true // what every client sends: no parsing (ParseMediaType allocates)
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/json"
}

// hostAllowed reports whether a Host header names the gateway in a way no rebinding page can.
func (g guard) hostAllowed(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
	switch {
	case name == "":
		return false
	case net.ParseIP(name) != nil:
		return true
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return true
	default:
		return g.publicHost != "" && name == g.publicHost
	}
}

// sameOrigin reports whether origin is the gateway's own (http or https on the requested Host).
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// clipHeader keeps a client's header, or a request's path, short in an answer: cut at a
// character's start, since a path holds any UTF-8 (cut inside é, it read as U+FFFD).
func clipHeader(v string) string {
	const max = 100
	if len(v) <= max {
		return v
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "…"
}
