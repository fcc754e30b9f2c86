package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"tests/bench/internal/bench"
)

// TestMain runs the tests with a user's data directory of their own (on Linux
// $XDG_DATA_HOME/trap-sandbox; HOME stays, which Go's own caches follow, for the gateway's
// build) and fails them if a gateway they started wrote into it: it must keep its store in the
// run's work directory.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "bench-hardening-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	data := filepath.Join(home, "data")
	if err := os.Setenv("XDG_DATA_HOME", data); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if _, err := os.Stat(filepath.Join(data, "trap-sandbox")); err == nil {
			fmt.Fprintln(os.Stderr, "FAIL: a gateway wrote into the user's data directory (give it SANDBOX_DATA_DIR in the run's work directory)")
			code = 1
		}
		_ = os.RemoveAll(home)
		os.Exit(code)
	}))
}

// TestHardeningSmall runs both measurements at a tiny size: the flood, the restart and the
// computers' reconnects (5-6 s, as the daemon waits) all happen against the real binary.
func TestHardeningSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := bench.Hardening(ctx, bench.HardeningConfig{Hostile: 5, Flood: 200 * time.Millisecond, Storm: 20, WorkDir: t.TempDir()})
	require.NoError(t, err)
	assert.Positive(t, res.RSSBefore)
	assert.GreaterOrEqual(t, res.RSSPeak, res.RSSBefore)
	assert.Positive(t, res.StormBack, "the computers came back after the new gateway was up")
}

// TestAdmissionSmall runs the admission phases at a tiny size against the real binary: every
// computer gets in, and each figure is measured. Beside the loop every computer's first try
// is in as well: the loop drops its own sockets, so none of the computers' is ever the oldest
// socket before hello for long. Beside the sockets without hello it is not asserted: there a
// computer's socket is evicted once it is the oldest of the --max-connections sockets before
// hello, HoldCap of them renewed at Holders × HoldRate a second (20 at 150 a second: 133 ms
// here), so whether its hello comes first is the machine's speed (at a load of 10 its
// round trip took 170 ms, and every first try was evicted with 4008); the bench's own exit code
// judges that figure at its real size (go run ./tests/bench/hardening: 2 s of margin).
func TestAdmissionSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := bench.Admission(ctx, bench.AdmissionConfig{Neighbours: 3, LoopWorkers: 2, Holders: 3, HoldEach: 10, HoldRate: 50,
		HoldCap: 20, Guessers: 3, SilenceWorkers: 2, Attack: 300 * time.Millisecond, Silence: 50 * time.Millisecond, WorkDir: t.TempDir()})
	require.NoError(t, err)
	for name, f := range map[string]bench.NeighbourFigures{"beside the loop": res.Loop, "beside the sockets without hello": res.Spread} {
		// Each figure named with the rest, so that a failure says which phase, and how it went.
		assert.Equal(t, 3, f.In, "%s: %+v", name, f)
		assert.GreaterOrEqual(t, f.Tries, f.In, "%s: %+v", name, f)
		assert.Positive(t, f.AttackRate, "%s: %+v", name, f)
	}
	assert.Positive(t, res.Loop.FirstTry, "beside the loop: %+v", res.Loop)
	assert.Positive(t, res.Answered)
	assert.Positive(t, res.SilenceGuesses)
}
