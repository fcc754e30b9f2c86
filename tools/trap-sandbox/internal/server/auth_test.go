package server

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// apiModule mounts one API route and one open route, as the gateway does.
type apiModule struct{}

func (apiModule) Name() string { return "api" }

func (apiModule) Mount(routes *Routes) {
	routes.HandleAPIFunc("GET /api/thing", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "thing") })
	routes.HandleFunc("GET /api/open", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "open") })
}

func serve(s *Server, method, path, remote, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = remote
	req.Host = "127.0.0.1:4444" // httptest's example.com would be a foreign name (guard.go)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec
}

func TestAPIAuthWithToken(t *testing.T) {
	s := New(slog.New(slog.DiscardHandler), Config{APIToken: "tok3n", Metrics: prometheus.NewRegistry()}, apiModule{})
	for name, token := range map[string]string{"none": "", "wrong": "nope"} {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/api/thing", MetricsPath} {
				rec := serve(s, http.MethodGet, path, "127.0.0.1:5000", token)
				assert.Equal(t, http.StatusUnauthorized, rec.Code, path)
				assert.Contains(t, rec.Body.String(), "SANDBOX_API_TOKEN")
				assert.Contains(t, rec.Body.String(), `"code":"unauthorized"`)
				assert.NotEmpty(t, rec.Header().Get("WWW-Authenticate"))
			}
		})
	}
	assert.Equal(t, http.StatusOK, serve(s, http.MethodGet, "/api/thing", "192.0.2.7:5555", "tok3n").Code)
	assert.Equal(t, http.StatusOK, serve(s, http.MethodGet, MetricsPath, "192.0.2.7:5555", "tok3n").Code)
	for _, header := range []string{"bearer tok3n", "BEARER tok3n", "Bearer  tok3n"} {
		req := httptest.NewRequest(http.MethodGet, "/api/thing", nil)
		req.RemoteAddr, req.Host = "192.0.2.7:5555", "127.0.0.1:4444"
		req.Header.Set("Authorization", header)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		assert.Equal(t, http.StatusOK, rec.Code, "the scheme's name is case-insensitive (RFC 9110): %q", header)
	}
	assert.Equal(t, http.StatusOK, serve(s, http.MethodGet, "/api/open", "192.0.2.7:5555", "").Code, "open routes skip the check")
	assert.Equal(t, http.StatusOK, serve(s, http.MethodGet, HealthzPath, "192.0.2.7:5555", "").Code)
}

func TestAPIAuthWithoutTokenIsLoopbackOnly(t *testing.T) {
	s := New(slog.New(slog.DiscardHandler), Config{}, apiModule{})
	rec := serve(s, http.MethodGet, "/api/thing", "192.0.2.7:5555", "")
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Contains(t, rec.Body.String(), "set SANDBOX_API_TOKEN")
	for _, remote := range []string{"127.0.0.1:5555", "[::1]:5555"} {
		rec := serve(s, http.MethodGet, "/api/thing", remote, "")
		require.Equal(t, http.StatusOK, rec.Code, remote)
		assert.Equal(t, "thing", rec.Body.String())
	}
	assert.Equal(t, http.StatusNotFound, serve(s, http.MethodGet, MetricsPath, "127.0.0.1:5555", "").Code,
		"no registry, no /metrics")
}

// TestAnUnknownTokenFromLoopbackIsRefused: without SANDBOX_API_TOKEN a loopback client that
// sends no token is the host, but one that sends a token the gateway does not know was
// admitted as the host too, whatever it sent (a mistyped token, a computer's credential or
// an enrollment key in the wrong place): it meant to be someone, and is told it is nobody.
func TestAnUnknownTokenFromLoopbackIsRefused(t *testing.T) {
	s := New(slog.New(slog.DiscardHandler), Config{}, apiModule{})
	for token, want := range map[string]string{
		"garbage": "unknown token: this gateway has no SANDBOX_API_TOKEN, and the token is no account's; from this host send no token",
		"tsc_abcdefghijklm_abcdefghijklmnopqrstuvwxyz234567abcdefghijklm": "that token is a computer credential (tsc_…)",
		"tsk_abcdefghijklm_abcdefghijklmnopqrstuvwxyz234567abcdefghijklm": "that token is an enrollment key (tsk_…)",
	} {
		rec := serve(s, http.MethodGet, "/api/thing", "127.0.0.1:5555", token)
		assert.Equal(t, http.StatusUnauthorized, rec.Code, token)
		assert.Contains(t, rec.Body.String(), want, token)
		assert.NotContains(t, rec.Body.String(), token, "the token is never echoed")
		assert.NotEmpty(t, rec.Header().Get("WWW-Authenticate"))
	}
	req := httptest.NewRequest(http.MethodGet, "/api/thing", nil)
	req.RemoteAddr, req.Host = "127.0.0.1:5555", "127.0.0.1:4444"
	req.Header.Set("Authorization", "Bearer ")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code, "an empty token is none (a client's unset variable)")
}

// TestASecretOfTheWrongKindIsNamedFromAnywhere: a computer's credential or an enrollment
// key pasted where a token goes (the web console's field, from a player's own machine) was
// answered "the HTTP API answers only loopback clients" or, with SANDBOX_API_TOKEN, "send
// Authorization: Bearer <SANDBOX_API_TOKEN>", neither saying the secret was the wrong kind.
func TestASecretOfTheWrongKindIsNamedFromAnywhere(t *testing.T) {
	secrets := map[string]string{
		"tsc_abcdefghijklm_abcdefghijklmnopqrstuvwxyz234567abcdefghijklm": "that token is a computer credential (tsc_…)",
		"tsk_abcdefghijklm_abcdefghijklmnopqrstuvwxyz234567abcdefghijklm": "that token is an enrollment key (tsk_…)",
	}
	for name, cfg := range map[string]Config{"no API token": {}, "an API token": {APIToken: "tok3n"}} {
		s := New(slog.New(slog.DiscardHandler), cfg, apiModule{})
		for token, want := range secrets {
			rec := serve(s, http.MethodGet, "/api/thing", "192.0.2.7:5555", token)
			assert.Equal(t, http.StatusUnauthorized, rec.Code, name)
			assert.Contains(t, rec.Body.String(), want, name)
			assert.Contains(t, rec.Body.String(), "an account's API token (tsa_…)", name)
			assert.NotContains(t, rec.Body.String(), token, "the secret is never echoed")
			assert.NotEmpty(t, rec.Header().Get("WWW-Authenticate"))
		}
		rec := serve(s, http.MethodGet, "/api/thing", "192.0.2.7:5555", "garbage")
		assert.NotContains(t, rec.Body.String(), "that token is", "%s: any other token is no secret of a kind", name)
	}
}

// TestNoTokenIsNotParsed: every request without a token (the host's own, on loopback) asks
// otherSecret; parsing it as each kind of secret worded an error for each, four allocations a
// request on the API's hot path (issue 25). headerFlaw, which every request asks too, holds
// to the same.
func TestNoTokenIsNotParsed(t *testing.T) {
	for _, got := range []string{"", "tok3n", "tsa_abc_def"} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { _ = otherSecret(got) }), "%q", got)
		header := "Bearer " + got
		assert.Zero(t, testing.AllocsPerRun(100, func() { _ = headerFlaw(header, got, true) }), "%q", got)
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = headerFlaw("", "", false) }), "no header")
}

// TestAProxiedRequestIsNoLoopbackClients: a reverse proxy on the gateway's host (the TLS one
// docs/user-guide.md puts in front for wss://) connects from loopback for any client of the
// Internet, which then drove every computer without a token. A request it marks as forwarded
// is refused as a remote client's; with a token it is as any other.
func TestAProxiedRequestIsNoLoopbackClients(t *testing.T) {
	s := New(slog.New(slog.DiscardHandler), Config{}, apiModule{})
	for header, value := range map[string]string{"X-Forwarded-For": "203.0.113.9", "Forwarded": "for=203.0.113.9;proto=https", "X-Real-IP": "203.0.113.9"} {
		req := httptest.NewRequest(http.MethodGet, "/api/thing", nil)
		req.RemoteAddr, req.Host = "127.0.0.1:5555", "127.0.0.1:4444"
		req.Header.Set(header, value)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		assert.Equal(t, http.StatusForbidden, rec.Code, header)
		assert.Contains(t, rec.Body.String(), "this request came through a proxy ("+http.CanonicalHeaderKey(header)+"); set SANDBOX_API_TOKEN", header)
	}

	s = New(slog.New(slog.DiscardHandler), Config{APIToken: "tok3n"}, apiModule{})
	req := httptest.NewRequest(http.MethodGet, "/api/thing", nil)
	req.RemoteAddr, req.Host = "127.0.0.1:5555", "127.0.0.1:4444"
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	req.Header.Set("Authorization", "Bearer tok3n")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code, "with the token, through a proxy")
}

// TestTwoAuthorizationHeadersAreRefused: a request with two Authorization headers was served as
// the first one's token, where a proxy or a log in front of the gateway may read the last; it
// is refused whichever tokens they hold, the gateway's own or none valid. It is counted and
// logged as its own reason, duplicate_authorization: as bad_token ("unknown or wrong token")
// it sent the operator looking for a wrong token.
func TestTwoAuthorizationHeadersAreRefused(t *testing.T) {
	var log bytes.Buffer
	reg := prometheus.NewRegistry()
	s := New(slog.New(slog.NewTextHandler(&log, nil)), Config{APIToken: "tok3n", Metrics: reg}, apiModule{})
	for _, pair := range [][2]string{{"Bearer tok3n", "Bearer nope"}, {"Bearer nope", "Bearer tok3n"}, {"Bearer tok3n", "Bearer tok3n"}} {
		req := httptest.NewRequest(http.MethodGet, "/api/thing", nil)
		req.RemoteAddr, req.Host = "127.0.0.1:5000", "127.0.0.1:4444"
		req.Header.Add("Authorization", pair[0])
		req.Header.Add("Authorization", pair[1])
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		assert.Equal(t, http.StatusUnauthorized, rec.Code, "%q", pair)
		assert.Contains(t, rec.Body.String(), `"message":"the request has 2 Authorization headers, which readers may take differently: send one (Authorization: Bearer <token>)"`)
		assert.NotContains(t, rec.Body.String(), "tok3n")
	}
	assert.Equal(t, 3.0, counted(t, reg, "trapos_api_auth_refused_total", "reason", RefusalDuplicateAuthorization))
	assert.Equal(t, 0.0, counted(t, reg, "trapos_api_auth_refused_total", "reason", RefusalBadToken))
	assert.Contains(t, log.String(), `msg="host API request refused: more than one Authorization header (a client or a proxy in front adds one)" reason=duplicate_authorization remote=127.0.0.1:5000`)
	assert.NotContains(t, log.String(), "tok3n")
	open := New(slog.New(slog.DiscardHandler), Config{Metrics: prometheus.NewRegistry()}, apiModule{})
	req := httptest.NewRequest(http.MethodGet, "/api/thing", nil)
	req.RemoteAddr, req.Host = "127.0.0.1:5000", "127.0.0.1:4444"
	req.Header.Add("Authorization", "")
	req.Header.Add("Authorization", "Bearer nope")
	rec := httptest.NewRecorder()
	open.Handler().ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "a loopback client without a token sends none, not an empty one and another")
}

// TestATokenWrittenWithoutItsSchemeIsRefusedSayingHow: a token of the gateway's kinds sent
// without "Bearer" before it (Authorization: tsa_…, Token tsa_…) was no token at all, so a
// loopback script that meant to be one account was served as the host, every computer, and a
// remote one was told it was too far away; "Bearer" written twice (the word copied with the
// token) was an unknown token. Each is refused, 401, saying how to write the header, without
// echoing it; another scheme (a proxy's Basic) stays what it was, and the gateway's own token
// holding the word is still its token.
func TestATokenWrittenWithoutItsSchemeIsRefusedSayingHow(t *testing.T) {
	const tsa = "tsa_abcdefghijklm_abcdefghijklmnopqrstuvwxyz234567abcdefghijklm"
	const noScheme = `the Authorization header holds a token without \"Bearer\" before it: send Authorization: Bearer <token>, the token after the one word Bearer`
	const twice = `the Authorization header says \"Bearer\" twice (the token given begins with the word, which the client adds itself): send Authorization: Bearer <token>, the token after the one word Bearer`
	send := func(s *Server, remote, header string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/api/thing", nil)
		req.RemoteAddr, req.Host = remote, "127.0.0.1:4444"
		req.Header.Set("Authorization", header)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	for name, cfg := range map[string]Config{"no API token": {}, "an API token": {APIToken: "tok3n"}} {
		s := New(slog.New(slog.DiscardHandler), cfg, apiModule{})
		for _, remote := range []string{"127.0.0.1:5555", "192.0.2.7:5555"} {
			for header, want := range map[string]string{
				tsa:                     noScheme,
				"Token " + tsa:          noScheme,
				"Bearer Bearer " + tsa:  twice,
				"bearer  BEARER " + tsa: twice,
				"Bearer Bearer tok3n":   twice,
				"tsc_abc_def":           noScheme,
			} {
				rec := send(s, remote, header)
				assert.Equal(t, http.StatusUnauthorized, rec.Code, "%s, %s: %q", name, remote, header)
				assert.Contains(t, rec.Body.String(), want, "%s, %s: %q", name, remote, header)
				assert.NotContains(t, rec.Body.String(), tsa, "the header is never echoed")
				assert.NotEmpty(t, rec.Header().Get("WWW-Authenticate"))
			}
		}
	}
	s := New(slog.New(slog.DiscardHandler), Config{}, apiModule{})
	assert.Equal(t, http.StatusOK, send(s, "127.0.0.1:5555", "Basic Zm9vOmJhcg==").Code, "another scheme holds no token of the gateway's")
	s = New(slog.New(slog.DiscardHandler), Config{APIToken: "Bearer tok3n"}, apiModule{})
	assert.Equal(t, http.StatusOK, send(s, "192.0.2.7:5555", "Bearer Bearer tok3n").Code, "the gateway's own token, whatever it holds")
}
