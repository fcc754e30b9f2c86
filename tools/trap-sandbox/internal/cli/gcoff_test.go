package cli

import (
	"bytes"
	"log/slog"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTheCollectorOffIsSaidAtStart: GOGC=off turns the floor off without a word (the config
// line names the floor given), and without GOMEMLIMIT the heap grows unbounded: a warning
// naming both; with GOMEMLIMIT an info line; a floor of 0 is not named.
func TestTheCollectorOffIsSaidAtStart(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	sayCollectorOff(logger, 32, math.MaxInt64)
	assert.Contains(t, logs.String(), `level=WARN msg="GOGC=off in the gateway's environment turns Go's collector off: with no GOMEMLIMIT its memory grows until the machine runs out, `+
		`and --heap-floor-mib (SANDBOX_HEAP_FLOOR_MIB) 32 does nothing (no cycle to put a floor under); unset GOGC`)

	logs.Reset()
	sayCollectorOff(logger, 0, 512<<20)
	assert.Contains(t, logs.String(), `level=INFO msg="GOGC=off in the gateway's environment: Go collects only as its heap nears GOMEMLIMIT" GOGC=off GOMEMLIMIT=536870912`)
	assert.NotContains(t, logs.String(), "heap-floor-mib", "a floor turned off is not said to do nothing")
}
