package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
)

// TestBehindATrustedProxyEachClientHasItsOwnLimits: every computer behind a reverse proxy
// reaches the gateway from the proxy's address, so one guessing computer spent the wrong-secret
// budget of every other client of the proxy. With the proxy trusted (--trusted-proxies) each
// client the proxy names has its own budget, and the computers list shows its address; a peer
// that is no trusted proxy is counted by its own address whatever X-Forwarded-For it writes.
func TestBehindATrustedProxyEachClientHasItsOwnLimits(t *testing.T) {
	m := newMetrics()
	proxies, err := server.ParseTrustedProxies("127.0.0.1")
	require.NoError(t, err)
	h := newHarnessBehind(t, proxies, Config{Clock: newFakeClock(), Password: "right", HelloTimeout: time.Hour,
		FailedHelloBurst: 1, FailedHelloRate: 1, Metrics: m})
	heldBack := func(n float64) func() bool {
		return func() bool { return testutil.ToFloat64(m.limits.WithLabelValues(limitFailedHellos)) == n }
	}
	guess := func(from, forwardedFor string) *computer {
		c := h.dialForwarded(t, from, forwardedFor, "7:")
		c.request("h", TypeHello, map[string]any{"traposId": "7:", "secret": "guess"})
		return c
	}
	answeredAtOnce := func(c *computer) {
		t.Helper()
		assert.Equal(t, protocol.CodeUnauthorized, c.read().Error.Code)
		c.expectClose(CloseUnauthorized, "unauthorized")
	}

	answeredAtOnce(guess("127.0.0.1", "203.0.113.5, 198.51.100.7")) // the guesser's burst
	guess("127.0.0.1", "198.51.100.7")
	require.Eventually(t, heldBack(1), waitLimit, testkit.Poll, "the guesser's next answer waits")
	// Another server's computer behind the same proxy: its own budget, though the guesser
	// writes its address into the header (left of the proxy's entry, which is the guesser's).
	guess("127.0.0.1", "198.51.100.8, 198.51.100.7")
	require.Eventually(t, heldBack(2), waitLimit, testkit.Poll, "a client's own claim does not move it")
	answeredAtOnce(guess("127.0.0.1", "198.51.100.8"))

	// A peer the gateway does not trust: its header counts for nothing.
	answeredAtOnce(guess("127.0.0.2", "198.51.100.9"))
	guess("127.0.0.2", "198.51.100.10")
	require.Eventually(t, heldBack(3), waitLimit, testkit.Poll, "the untrusted peer's second guess is its own address's")

	h.connect(t, "8:", "right")
	require.True(t, h.dialForwarded(t, "127.0.0.1", "198.51.100.8", "9:").hello("right").OK)
	require.True(t, h.dialForwarded(t, "127.0.0.3", "198.51.100.11", "10:").hello("right").OK)
	remote := map[string]string{}
	for _, c := range h.gw.Computers() {
		remote[c.TraposID] = c.RemoteAddr
	}
	assert.True(t, strings.HasPrefix(remote["8:"], "127.0.0.1:"), "no header: the proxy's own client (%s)", remote["8:"])
	assert.Equal(t, "198.51.100.8", remote["9:"], "the proxy's client")
	assert.True(t, strings.HasPrefix(remote["10:"], "127.0.0.3:"), "an untrusted peer's header is ignored (%s)", remote["10:"])
}
