package gateway

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/opencode"
	"trap-sandbox/internal/protocol"
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

// An idle computer's reader waits for its next frame without a buffer: one grown by the last
// frame (1 KiB or more) would be held by every idle computer (issue 25: memory per idle
// computer).
func TestAnIdleComputerHoldsNoFrameBuffer(t *testing.T) {
	var held atomic.Int64
	frameBufferTaken = func(delta int) { held.Add(int64(delta)) }
	t.Cleanup(func() { frameBufferTaken = nil }) // after the harness's own cleanup: its readers have ended
	h := newHarness(t, Config{}, nil)
	for i := range 5 {
		c := h.connect(t, fmt.Sprintf("%d:idle", i), "")
		c.request("m", protocol.TypeProbeGateway, nil) // a frame after hello too
		require.True(t, c.read().OK)
	}
	require.Eventually(t, func() bool { return held.Load() == 0 }, waitLimit, testkit.Poll,
		"frame buffers held by idle readers: %d", held.Load())
}

// freshProber always has a fresh result: every probe_gateway is a quick answer.
type freshProber struct{}

func (freshProber) Probe(context.Context) opencode.Health { return opencode.Health{OK: true} }

func (freshProber) Recent(time.Duration) (opencode.Health, bool) {
	return opencode.Health{OK: true}, true
}

// A quick answer runs on the reader (decode, answer, encode, write): the path must fit the
// reader's stack as hello left it, or every computer that ever asked probe_gateway would keep
// a stack twice as big while idle (a goroutine's stack keeps the size it grew to).
func TestAQuickAnswerKeepsTheReadersStackSmall(t *testing.T) {
	h := newHarness(t, Config{}, freshProber{})
	const computers = 200
	cs := make([]*computer, computers)
	for i := range cs {
		cs[i] = h.connect(t, fmt.Sprintf("%d:stack", i), "")
	}
	stacks := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.StackInuse)
	}
	before := stacks()
	for i, c := range cs {
		c.request(fmt.Sprint("p", i), protocol.TypeProbeGateway, nil)
		resp := c.read()
		require.True(t, resp.OK)
	}
	grown := (stacks() - before) / computers
	assert.Less(t, grown, int64(1024), "stack bytes per computer after a quick answer (a reader's stack that doubled: 4096)")
}
