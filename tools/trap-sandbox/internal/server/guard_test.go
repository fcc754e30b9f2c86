package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guardedModule has one API route (POST and GET) and one computer route.
type guardedModule struct{}

func (guardedModule) Name() string { return "api" }

func (guardedModule) Mount(routes *Routes) {
	routes.HandleAPIFunc("/api/thing", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "done") })
	routes.HandleFunc("POST /computer/route", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "done") })
}

type guardCase struct {
	name, method, path, contentType, host, origin string
	status                                        int
}

func runGuardCases(t *testing.T, cfg Config, token string, cases []guardCase) {
	t.Helper()
	srv := httptest.NewServer(New(slog.New(slog.DiscardHandler), cfg, guardedModule{}).Handler())
	defer srv.Close()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(`{}`))
			require.NoError(t, err)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			assert.Equal(t, tc.status, resp.StatusCode, "%s", body)
		})
	}
}

// What a web page the host user visits can send, in loopback mode: each is refused.
func TestTheAPIRefusesCrossSiteAndRebindingRequests(t *testing.T) {
	const json = "application/json"
	runGuardCases(t, Config{PublicURL: "https://mc.example.org/sandbox"}, "", []guardCase{
		{"a form POST (text/plain, no preflight)", "POST", "/api/thing", "text/plain", "", "http://evil.example", 415},
		{"a POST without a content type", "POST", "/api/thing", "", "", "", 415},
		{"JSON from a foreign origin", "POST", "/api/thing", json, "", "http://evil.example", 403},
		{"a null origin (sandboxed frame)", "POST", "/api/thing", json, "", "null", 403},
		{"a rebound name reading the listing", "GET", "/api/thing", "", "evil.example:4444", "", 403},
		{"a rebound name with a same-origin Origin", "POST", "/api/thing", json, "evil.example", "http://evil.example", 403},
		{"a rebound public-looking name", "GET", "/api/thing", "", "mc.example.org.evil.example", "", 403},
		// What the CLI, opencode's MCP client and curl send: allowed.
		{"the CLI", "POST", "/api/thing", json, "", "", 200},
		{"JSON with a charset", "POST", "/api/thing", "application/json; charset=utf-8", "", "", 200},
		{"JSON in capitals", "POST", "/api/thing", "Application/JSON", "", "", 200},
		{"a type that starts like JSON", "POST", "/api/thing", "application/jsonx", "", "", 415},
		{"localhost", "GET", "/api/thing", "", "localhost:4444", "", 200},
		{"an IPv6 literal", "GET", "/api/thing", "", "[::1]:4444", "", 200},
		{"the public URL's host", "GET", "/api/thing", "", "MC.example.org", "", 200},
		{"the gateway's own origin", "POST", "/api/thing", json, "localhost:4444", "http://localhost:4444", 200},
		// A computer's route is not the API's: no guard.
		{"a computer route", "POST", "/computer/route", "text/plain", "any.name", "http://evil.example", 200},
	})
}

// TestTheAPIRefusesWhatAnotherSitesPageSends: an <img> or <script> on any page makes the
// browser GET the API with no Origin; its Sec-Fetch-Site says the page is another site's (a
// page on localhost:8080 is the same site as localhost:4444). Without a token that is
// refused; the console's own calls (same-origin), an address typed in the browser (none) and
// clients that send no such header (the CLI, curl) are not. With a token it is left alone.
func TestTheAPIRefusesWhatAnotherSitesPageSends(t *testing.T) {
	for _, tc := range []struct {
		token, site string
		status      int
	}{
		{"", "cross-site", http.StatusForbidden},
		{"", "same-site", http.StatusForbidden},
		{"", "same-origin", http.StatusOK},
		{"", "none", http.StatusOK},
		{"", "", http.StatusOK},
		{"tok", "cross-site", http.StatusOK},
	} {
		t.Run(tc.token+" "+tc.site, func(t *testing.T) {
			s := New(slog.New(slog.DiscardHandler), Config{APIToken: tc.token}, guardedModule{})
			req := httptest.NewRequest(http.MethodGet, "/api/thing", nil)
			req.RemoteAddr, req.Host = "127.0.0.1:5000", "127.0.0.1:4444"
			if tc.site != "" {
				req.Header.Set("Sec-Fetch-Site", tc.site)
			}
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			assert.Equal(t, tc.status, rec.Code, rec.Body.String())
			if tc.status == http.StatusForbidden {
				assert.Contains(t, rec.Body.String(), "other sites' web pages (Sec-Fetch-Site "+tc.site+"); set SANDBOX_API_TOKEN")
			}
		})
	}
}

// With a token nothing rides on ambient trust: Host and Origin are left alone, but a POST
// still has to be JSON.
func TestWithATokenOnlyTheContentTypeIsChecked(t *testing.T) {
	runGuardCases(t, Config{APIToken: "tok"}, "tok", []guardCase{
		{"a remote name", "GET", "/api/thing", "", "gateway.lan:4444", "", 200},
		{"a browser client", "POST", "/api/thing", "application/json", "gateway.lan", "https://dash.example", 200},
		{"a form POST", "POST", "/api/thing", "text/plain", "gateway.lan", "", 415},
	})
}

// A wrong token is what the client must fix first: it is refused as such whatever else is
// wrong with the request (before, a POST without a JSON type was told 415 and then, fixed,
// 401).
func TestAWrongTokenIsRefusedBeforeTheContentType(t *testing.T) {
	runGuardCases(t, Config{APIToken: "tok"}, "wrong", []guardCase{
		{"a POST without a content type", "POST", "/api/thing", "", "", "", 401},
		{"a form POST", "POST", "/api/thing", "text/plain", "gateway.lan", "", 401},
		{"a JSON POST", "POST", "/api/thing", "application/json", "", "", 401},
	})
}

func TestTokenMatchesIsExact(t *testing.T) {
	assert.True(t, SecretMatches("abc", "abc"))
	assert.False(t, SecretMatches("abc", "abcd"))
	assert.False(t, SecretMatches("", "abc"))
}
