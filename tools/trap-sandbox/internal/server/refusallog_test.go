package server

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"

	"trap-sandbox/testkit"
)

// TestARefusedAPIRequestIsLogged: a refusal of the API auth was only counted on /metrics,
// so a monitoring job or script whose token was wrong or revoked, or a guesser, left no line
// in the log. Each reason is now a WARN per address at most once a minute, naming the
// address and the route, never the token.
func TestARefusedAPIRequestIsLogged(t *testing.T) {
	var logs testkit.SyncBuffer
	s := New(slog.New(slog.NewTextHandler(&logs, nil)), Config{APIToken: "the-right-token", Metrics: prometheus.NewRegistry()}, apiModule{})

	assert.Equal(t, http.StatusUnauthorized, serve(s, http.MethodGet, MetricsPath, "192.0.2.7:5000", "a-stale-token-xyz").Code)
	assert.Equal(t, http.StatusUnauthorized, serve(s, http.MethodGet, "/api/thing", "192.0.2.7:5001", "a-stale-token-xyz").Code)
	assert.Equal(t, http.StatusUnauthorized, serve(s, http.MethodGet, "/api/thing", "192.0.2.8:5000", "").Code)
	assert.Equal(t, http.StatusOK, serve(s, http.MethodGet, "/api/thing", "192.0.2.9:5000", "the-right-token").Code)

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if assert.Len(t, lines, 2, logs.String()) { // the second refusal of 192.0.2.7 is counted, not logged
		assert.Contains(t, lines[0], `level=WARN msg="host API request refused: missing or wrong SANDBOX_API_TOKEN" reason=wrong_api_token remote=192.0.2.7:5000 method=GET path=/metrics repeatsLoggedEvery=1m0s`)
		assert.Contains(t, lines[1], `reason=wrong_api_token remote=192.0.2.8:5000 method=GET path=/api/thing`)
	}
	// An IPv6 host owns its /64: one line for all of its addresses.
	assert.Equal(t, http.StatusUnauthorized, serve(s, http.MethodGet, "/api/thing", "[2001:db8:1:2::7]:5000", "").Code)
	assert.Equal(t, http.StatusUnauthorized, serve(s, http.MethodGet, "/api/thing", "[2001:db8:1:2:ffff::8]:5000", "").Code)
	assert.Equal(t, 1, strings.Count(logs.String(), "remote=[2001:db8:1:2:"), logs.String())
	assert.NotContains(t, logs.String(), "a-stale-token-xyz")
	assert.NotContains(t, logs.String(), "the-right-token")

	var openLogs testkit.SyncBuffer
	open := New(slog.New(slog.NewTextHandler(&openLogs, nil)), Config{}, apiModule{})
	assert.Equal(t, http.StatusForbidden, serve(open, http.MethodGet, "/api/thing", "192.0.2.7:5000", "").Code)
	assert.Contains(t, openLogs.String(), `level=WARN msg="host API request refused: a remote client (or one through a proxy) and no SANDBOX_API_TOKEN set" reason=not_loopback remote=192.0.2.7:5000`)
}
