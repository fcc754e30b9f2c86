package e2e

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// metricsText is the gateway's /metrics as it reads now.
func metricsText(ctx context.Context, t *testing.T, g *harness.Gateway) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL("/metrics"), nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(body)
}

// metricCount is the count re captures in the gateway's /metrics (0 if absent).
func metricCount(ctx context.Context, t *testing.T, g *harness.Gateway, re *regexp.Regexp) int {
	t.Helper()
	m := re.FindStringSubmatch(metricsText(ctx, t, g))
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}
