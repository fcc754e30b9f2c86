package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/logthrottle"
	"trap-sandbox/internal/protocol"
)

// apiAuth authenticates a request and puts its caller (account.Caller) in the request's context.
// It guards every module's host API routes and /metrics:
//   - an account's API token (tsa_…, when accounts is set) is that account, admin or not;
//   - a gateway pass (tsp_…, when passes is set) is the caller it was granted for: one
//     computer of its account (the agent's MCP connection for that computer);
//   - SANDBOX_API_TOKEN, when token is set, is account.LocalAdmin, as before accounts;
//   - with no token set, a loopback client that sends no token is account.LocalAdmin;
//   - anything else is refused (a token this gateway does not know too, even from loopback).
//
// SANDBOX_PASSWORD never opens the API: any player can read it from a computer's .settings.
// An account token's use is recorded on it (when, from which address: its audit fields); each
// refusal counts in refused by its reason (Refusal*).
func apiAuth(logger *slog.Logger, token string, accounts *account.Accounts, passes *account.Passes, refused *refusals, next http.Handler) http.Handler {
	tokenHash := sha256.Sum256([]byte(token)) // once, not per request
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := len(r.Header.Values("Authorization")); n > 1 {
			// RFC 9110 allows the header once. Of two, the gateway took the first, where a proxy
			// or a log in front may read the last (alice's token, then an admin's, was alice's).
			refused.refuse(r, RefusalDuplicateAuthorization)
			w.Header().Set("WWW-Authenticate", `Bearer realm="trap-sandbox"`)
			writeAuthError(w, http.StatusUnauthorized, fmt.Sprintf(
				"the request has %d Authorization headers, which readers may take differently: send one (Authorization: Bearer <token>)", n))
			return
		}
		header := r.Header.Get("Authorization")
		got, bearer := bearerToken(header)
		if why := headerFlaw(header, got, bearer); why != "" && (token == "" || !secretHashMatches(got, tokenHash)) {
			// The caller meant to send a token and wrote the header wrong: refused with how to
			// write it, where a loopback caller was served as the host (every computer, for a
			// script that meant to be alice) and a remote one was told it was too far away.
			reason := RefusalBadToken
			if token != "" {
				reason = RefusalWrongAPIToken
			}
			refused.refuse(r, reason)
			w.Header().Set("WWW-Authenticate", `Bearer realm="trap-sandbox"`)
			writeAuthError(w, http.StatusUnauthorized, why)
			return
		}
		// serveAs serves the request as the caller c, with still its StillAuthorized check when
		// its credentials can be revoked: one copy of the request for both.
		serveAs := func(c account.Caller, still func(context.Context) *protocol.Error) {
			ctx := account.WithCaller(r.Context(), c)
			if still != nil {
				ctx = WithStillAuthorized(ctx, still)
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		}
		count := func(reason string) { refused.refuse(r, reason) }
		if bearer && accounts != nil && strings.HasPrefix(got, string(account.KindToken)+"_") {
			a, tok, err := accounts.AuthenticateTokenFrom(r.Context(), got, ClientAddr(r))
			if err != nil {
				reason := refusalOf(err)
				count(reason)
				if reason == RefusalStoreFailed {
					// The caller is told no more than that (500); the operator is told why.
					logger.Error("API auth: cannot check an account token: the account store failed", "err", err)
				}
				refuseToken(w, err)
				return
			}
			// Its secret checked now, the call's later checks read the token by its id as last
			// written (TokenStillAuthorized), as the replica holding a computer checks a caller
			// of another replica's: on a NATS cluster a follower that has not applied a
			// revocation made through another replica a moment ago would let the input go on.
			serveAs(account.Caller{Account: a.ID, Admin: a.Role == account.RoleAdmin, Token: tok.Selector, Until: tok.ExpiresAt},
				TokenStillAuthorized(accounts, tok.Selector))
			return
		}
		if bearer && passes != nil && strings.HasPrefix(got, string(account.KindPass)+"_") {
			c, ok := passes.Caller(got)
			if !ok {
				count(RefusalBadToken)
				w.Header().Set("WWW-Authenticate", `Bearer realm="trap-sandbox"`)
				writeAuthError(w, http.StatusUnauthorized, unknownPass)
				return
			}
			serveAs(c, func(context.Context) *protocol.Error {
				if _, ok := passes.Caller(got); !ok {
					return protocol.Errorf(protocol.CodeUnauthorized, "%s", unknownPass)
				}
				return nil
			})
			return
		}
		if token != "" {
			if !bearer || !secretHashMatches(got, tokenHash) {
				count(RefusalWrongAPIToken)
				w.Header().Set("WWW-Authenticate", `Bearer realm="trap-sandbox"`)
				msg := "missing or wrong API token (send Authorization: Bearer <SANDBOX_API_TOKEN> or an account's token)"
				if other := otherSecret(got); bearer && other != "" {
					msg = other + "; send the gateway's SANDBOX_API_TOKEN or an account's API token (tsa_…)"
				}
				writeAuthError(w, http.StatusUnauthorized, msg)
				return
			}
			serveAs(account.LocalAdmin, nil)
			return
		}
		if other := otherSecret(got); bearer && other != "" {
			// From anywhere: a secret of the wrong kind pasted where a token goes (the web
			// console's field) is told what it is, not that the caller is too far away.
			count(RefusalBadToken)
			w.Header().Set("WWW-Authenticate", `Bearer realm="trap-sandbox"`)
			writeAuthError(w, http.StatusUnauthorized, other+fromAnywhere)
			return
		}
		if !IsLoopback(r.RemoteAddr) {
			count(RefusalNotLoopback)
			writeAuthError(w, http.StatusForbidden,
				"the HTTP API answers only loopback clients or an account's token; set SANDBOX_API_TOKEN or create an account (trap-sandbox accounts add) to allow remote clients")
			return
		}
		if header := ForwardedBy(r); header != "" {
			// A reverse proxy on this host (the TLS one for wss://) connects from loopback on
			// behalf of any client of the Internet: its requests are no loopback client's.
			count(RefusalNotLoopback)
			writeAuthError(w, http.StatusForbidden,
				"the HTTP API answers only loopback clients without a token, and this request came through a proxy ("+header+"); set SANDBOX_API_TOKEN or use an account's token (trap-sandbox accounts add) to reach the API through it")
			return
		}
		if bearer && got != "" {
			// A loopback client without a token is the host; one that sends a token this gateway
			// does not know meant to be someone (a mistyped or stale token, a computer's secret in
			// the wrong place): admitting it as the host would hide that, and act for everyone.
			count(RefusalBadToken)
			w.Header().Set("WWW-Authenticate", `Bearer realm="trap-sandbox"`)
			writeAuthError(w, http.StatusUnauthorized, unknownBearer())
			return
		}
		serveAs(account.LocalAdmin, nil)
	})
}

// unknownBearer is the answer to a token sent to a gateway without SANDBOX_API_TOKEN that is
// no account's (nor a pass it granted) nor one of the gateway's other secrets (otherSecret).
func unknownBearer() string {
	return "unknown token: this gateway has no SANDBOX_API_TOKEN, and the token is no account's" + fromAnywhere
}

// fromAnywhere is what opens the API of a gateway without SANDBOX_API_TOKEN.
const fromAnywhere = "; from this host send no token, or an account's API token (tsa_…)"

// otherSecret names got by its kind when it has the shape of one of the gateway's secrets that
// never open the API (a computer's credential, an enrollment key), never echoing it; "" for
// anything else.
func otherSecret(got string) string {
	if !strings.HasPrefix(got, string(account.KindCredential)+"_") && !strings.HasPrefix(got, string(account.KindEnrollment)+"_") {
		// Every request without a token asks (a loopback caller's, the host's own): no
		// parsing, which words an error for each kind it is not, on that path.
		return ""
	}
	switch kind, _, _ := account.Identify(got); kind {
	case account.KindCredential:
		return "that token is a computer credential (tsc_…), a computer's hello secret, which never opens the API"
	case account.KindEnrollment:
		return "that token is an enrollment key (tsk_…), which links computers (sandbox link) and never opens the API"
	}
	return ""
}

// headerFlaw says how an Authorization header that carries a token is written wrong, or "":
// a token of the gateway's kinds (tsa_…, tsp_…, tsc_…, tsk_…) without the Bearer scheme before
// it (Authorization: tsa_…, or Token tsa_…), and "Bearer" written twice (a client that adds the
// word before a token copied with it). Any other scheme (a proxy's Basic) is no token of the
// gateway's, and stays what it was. got and bearer are bearerToken's; the header is never
// echoed.
func headerFlaw(header, got string, bearer bool) string {
	const how = "send Authorization: Bearer <token>, the token after the one word Bearer"
	if header == "" {
		return "" // every request of the host's own (loopback, no token): nothing to read
	}
	if bearer {
		if scheme, _, ok := strings.Cut(got, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return `the Authorization header says "Bearer" twice (the token given begins with the word, which the client adds itself): ` + how
		}
		return ""
	}
	for _, word := range strings.Fields(header) {
		for _, kind := range []account.Kind{account.KindToken, account.KindPass, account.KindCredential, account.KindEnrollment} {
			if strings.HasPrefix(word, string(kind)+"_") {
				return `the Authorization header holds a token without "Bearer" before it: ` + how
			}
		}
	}
	return ""
}

// bearerToken is the credential of an Authorization header of the Bearer scheme, whose name
// is case-insensitive (RFC 9110 §11.1: "bearer tok" is "Bearer tok" too).
func bearerToken(header string) (string, bool) {
	scheme, credential, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(credential, " "), true
}

// adminOnly admits an admin caller (an admin account's token, SANDBOX_API_TOKEN, a loopback
// client when it is unset) to next, and answers any other 403: the gateway-wide numbers of
// /metrics (accounts, tokens, every connected computer) are no user's to read.
func adminOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := account.CallerFrom(r.Context())
		if !c.Admin || c.Only != "" {
			WriteError(w, http.StatusForbidden, protocol.CodeForbidden, fmt.Sprintf(
				"the gateway's metrics are for an admin, and this token is of %q, a user: use an admin account's token or the gateway's SANDBOX_API_TOKEN", c.Account))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Reasons of the API's refusals (the label of trapos_api_auth_refused_total).
const (
	RefusalBadToken      = "bad_token"       // an account token that is unknown or wrong; a token no token of the gateway's is
	RefusalRevoked       = "revoked"         // an account token that was revoked
	RefusalExpired       = "expired"         // an account token past its expiry
	RefusalWrongAPIToken = "wrong_api_token" // no token, or not SANDBOX_API_TOKEN, where it is set
	RefusalNotLoopback   = "not_loopback"    // no token set and the client is not on loopback
	RefusalStoreFailed   = "store_failed"    // the account store could not check the token
	// RefusalDuplicateAuthorization is a request with more than one Authorization header,
	// whatever they hold: counted as bad_token it sent the operator looking for a wrong token
	// where a client or a proxy in front adds a second header.
	RefusalDuplicateAuthorization = "duplicate_authorization"
)

// refusals counts the API auth's refusals by reason and logs each as a WARN, at most once
// a minute per reason and address (a scraper with a stale token asks every few seconds): the
// operator sees a monitoring job or a script that lost its token, and a guesser, in the log
// as on /metrics. The line names the reason, the address and the route, never the token.
type refusals struct {
	counter *prometheus.CounterVec // nil without metrics
	warns   *logthrottle.Throttle
}

func newRefusals(logger *slog.Logger, reg prometheus.Registerer) *refusals {
	f := &refusals{warns: logthrottle.New(logger, clock.Real{})}
	if reg != nil {
		f.counter = newRefusedCounter(reg)
	}
	return f
}

// maxLoggedPath bounds the route in a refusal's line: the client chooses it.
const maxLoggedPath = 200

func (f *refusals) refuse(r *http.Request, reason string) {
	if f == nil {
		return
	}
	if f.counter != nil {
		f.counter.WithLabelValues(reason).Inc()
	}
	if reason == RefusalStoreFailed {
		return // the gateway's own failure, logged as an ERROR with why
	}
	client := ClientAddr(r)
	attrs := []any{"reason", reason, "remote", client}
	if client != r.RemoteAddr {
		attrs = append(attrs, "proxy", r.RemoteAddr) // a trusted proxy's client (--trusted-proxies)
	}
	f.warns.Log(slog.LevelWarn, reason+" "+AddressKey(client), "host API request refused: "+refusalWords[reason],
		append(attrs, "method", r.Method, "path", cctext.Clip(r.URL.Path, maxLoggedPath))...)
}

// refusalWords says each refusal's reason in the operator's log.
var refusalWords = map[string]string{
	RefusalBadToken:               "unknown or wrong token",
	RefusalRevoked:                "revoked account token",
	RefusalExpired:                "expired account token",
	RefusalWrongAPIToken:          "missing or wrong SANDBOX_API_TOKEN",
	RefusalNotLoopback:            "a remote client (or one through a proxy) and no SANDBOX_API_TOKEN set",
	RefusalDuplicateAuthorization: "more than one Authorization header (a client or a proxy in front adds one)",
}

// newRefusedCounter registers the refusal counter on reg, every reason at 0.
func newRefusedCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trapos_api_auth_refused_total",
		Help: "Host API requests refused by the API auth, by reason: bad_token (an account token, or without SANDBOX_API_TOKEN a token that is no account's), revoked, expired (an account token), wrong_api_token (SANDBOX_API_TOKEN set, not given), not_loopback (no token set, a remote client), store_failed, duplicate_authorization (more than one Authorization header).",
	}, []string{"reason"})
	for _, r := range []string{RefusalBadToken, RefusalRevoked, RefusalExpired, RefusalWrongAPIToken, RefusalNotLoopback, RefusalStoreFailed, RefusalDuplicateAuthorization} {
		c.WithLabelValues(r)
	}
	reg.MustRegister(c)
	return c
}

func refusalOf(err error) string {
	switch {
	case errors.Is(err, account.ErrRevoked):
		return RefusalRevoked
	case errors.Is(err, account.ErrExpired):
		return RefusalExpired
	case errors.Is(err, account.ErrBadSecret), errors.Is(err, account.ErrReserved):
		return RefusalBadToken
	}
	return RefusalStoreFailed
}

// unknownPass is the answer to a gateway pass the gateway does not (or no longer) honour.
const unknownPass = "unknown gateway pass: this gateway grants a computer's pass when the computer asks the agent, and honours it while it runs"

// refuseToken answers an account token that opened nothing, with why (never the token).
func refuseToken(w http.ResponseWriter, err error) {
	if refusalOf(err) == RefusalStoreFailed {
		WriteError(w, http.StatusInternalServerError, protocol.CodeInternal, "cannot check the token: the account store failed; try again, and if it fails again, ask the gateway's operator (its log says why)")
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="trap-sandbox"`)
	writeAuthError(w, http.StatusUnauthorized, tokenRefusal(err))
}

// tokenRefusal says why an account token opens nothing (ErrRevoked, ErrExpired, ErrBadSecret,
// ErrReserved) and what to do.
func tokenRefusal(err error) string {
	switch {
	case errors.Is(err, account.ErrRevoked), errors.Is(err, account.ErrExpired):
		return err.Error() + ": ask the account's holder or an admin for a new one (trap-sandbox tokens add)"
	case errors.Is(err, account.ErrReserved):
		return err.Error() + ", so its tokens open nothing: an admin makes its holder an account of another name (trap-sandbox accounts add NAME)"
	}
	return "unknown or wrong account token: check it, or ask the account's holder or an admin for a new one (trap-sandbox tokens add)"
}

// stillAuthorizedKey is the request context's key of its StillAuthorized check.
type stillAuthorizedKey struct{}

// StillAuthorized tells an answer that lasts (the screen's stream) whether the credentials its
// request was authorized with still open the API: nil, or the unauthorized error a new request
// with them would get (an account token revoked or expired since, a gateway pass that ended).
// Such an answer asks before each thing it sends, so a revoked token sees nothing more, as it
// is refused from the next request on. SANDBOX_API_TOKEN and loopback cannot be revoked: nil.
func StillAuthorized(ctx context.Context) *protocol.Error {
	if check, ok := ctx.Value(stillAuthorizedKey{}).(func(context.Context) *protocol.Error); ok {
		return check(ctx)
	}
	return nil
}

// StillAuthorizedCheck is ctx's StillAuthorized check itself, nil when its caller's credentials
// cannot be revoked: for an input relayed to another replica, whose holder asks this replica
// to run it when it cannot check the credentials itself (a gateway pass).
func StillAuthorizedCheck(ctx context.Context) func(context.Context) *protocol.Error {
	check, _ := ctx.Value(stillAuthorizedKey{}).(func(context.Context) *protocol.Error)
	return check
}

// WithStillAuthorized is ctx with still as its StillAuthorized check: for a call made here on
// behalf of a caller whose request was authorized on another replica (an input relayed to the
// replica holding the computer's socket), which must stop as it would there.
func WithStillAuthorized(ctx context.Context, still func(context.Context) *protocol.Error) context.Context {
	return context.WithValue(ctx, stillAuthorizedKey{}, still)
}

// TokenStillAuthorized is the StillAuthorized check of a caller that came with the account API
// token of id tokenID, its secret checked when its call began (here, or on another replica for
// an input relayed to the one holding the computer): it refuses as a new request with the
// token's secret would, reading the token as last written (account.Accounts.TokenStillOpens).
func TokenStillAuthorized(accounts *account.Accounts, tokenID string) func(context.Context) *protocol.Error {
	return func(ctx context.Context) *protocol.Error {
		return stillRefusal(accounts.TokenStillOpens(ctx, tokenID))
	}
}

// stillRefusal is the StillAuthorized answer to err, an account token's check: nil when it
// still opens the API, and when the store cannot answer now (a store's hiccup ends no call).
func stillRefusal(err error) *protocol.Error {
	if err == nil || refusalOf(err) == RefusalStoreFailed {
		return nil
	}
	return protocol.Errorf(protocol.CodeUnauthorized, "%s", tokenRefusal(err))
}

// SecretMatches compares a secret (the API token, a computer's hello secret) with the one
// wanted, in constant time. Hashing first hides the wanted secret's length too
// (ConstantTimeCompare returns at once on a length mismatch).
func SecretMatches(got, want string) bool {
	return secretHashMatches(got, sha256.Sum256([]byte(want)))
}

// secretHashMatches is SecretMatches with the wanted secret's SHA-256 already computed.
func secretHashMatches(got string, want [sha256.Size]byte) bool {
	g := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(g[:], want[:]) == 1
}

// TokenFlaw says why an API token cannot arrive whole in an Authorization header, or "" when
// it can: HTTP carries no control character (a line break or carriage return copied with the
// token, a CRLF environment file), and it drops the spaces and tabs at a header value's ends.
// atEnds tells the second case: a client may send such a token (the gateway's own has no such
// ends: it refuses one at start), but no client can send it to a gateway that wants it.
func TokenFlaw(token string) (why string, atEnds bool) {
	if strings.ContainsFunc(token, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
		return "holds a control character (a line break or carriage return copied with it?)", false
	}
	if strings.Trim(token, " \t") != token {
		return "has a space or tab at its start or end", true
	}
	return "", false
}

// Who is what each log line of a change made, or a failure met, through the API's auth ends
// with: who asked (by, the caller's account; "local" for SANDBOX_API_TOKEN or a loopback client
// without one), from where (remote, ClientAddr) and, when an account's API token did, which one
// (byToken, its id, never its secret), so that what a leaked token did can be found.
func Who(r *http.Request) []any {
	caller := account.CallerFrom(r.Context())
	return append([]any{"by", caller.Account, "remote", ClientAddr(r)}, caller.ByToken()...)
}

// ForwardedBy names the header that marks r as forwarded by a proxy (Forwarded,
// X-Forwarded-For, X-Real-IP: what reverse proxies add), or "".
func ForwardedBy(r *http.Request) string {
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Real-Ip"} {
		if _, ok := r.Header[h]; ok {
			return h
		}
	}
	return ""
}

// IsLoopback reports whether remoteAddr (host:port, or a bare host) is a loopback address:
// a client on this machine, which the API trusts without a token when none is set.
func IsLoopback(remoteAddr string) bool {
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
