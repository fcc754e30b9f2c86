package gateway

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// sessionGoroutines counts the goroutines running a Session's code, and those among them in
// its reader.
func sessionGoroutines(t *testing.T) (all, readers int) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, pprof.Lookup("goroutine").WriteTo(&buf, 2))
	for g := range strings.SplitSeq(buf.String(), "\n\n") {
		if strings.Contains(g, "gateway.(*Session).") {
			all++
			if strings.Contains(g, "gateway.(*Session).readLoop") {
				readers++
			}
		}
	}
	return all, readers
}

// An idle authenticated computer costs one goroutine, its reader: its writer exists only
// while frames wait, its liveness clocks hold none (issue 25: memory per idle computer).
func TestAnIdleComputerHoldsOnlyItsReadersGoroutine(t *testing.T) {
	h := newHarness(t, Config{}, nil)
	const computers = 5
	for i := range computers {
		c := h.connect(t, string(rune('1'+i))+":idle", "")
		// A request and its answer start a writer, which ends with the queue.
		c.request("m", "probe_gateway", nil)
		resp := c.read()
		require.Equal(t, "m", resp.MessageID)
		require.True(t, resp.OK)
	}
	require.Eventually(t, func() bool {
		all, readers := sessionGoroutines(t)
		return all == computers && readers == computers
	}, waitLimit, testkit.Poll, "one goroutine per idle computer, its reader")
}
