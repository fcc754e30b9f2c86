package logthrottle

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"trap-sandbox/internal/clock"
	"trap-sandbox/testkit"
)

func newFakeClock() *clock.Fake { return clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)) }

func TestALineIsWrittenOnceAMinutePerKeyWithTheCount(t *testing.T) {
	fc := newFakeClock()
	var logs testkit.SyncBuffer
	w := New(slog.New(slog.NewTextHandler(&logs, nil)), fc)
	assert.True(t, w.Log(slog.LevelWarn, "a", "it fails", "n", 1))
	assert.False(t, w.Log(slog.LevelWarn, "a", "it fails", "n", 2))
	assert.False(t, w.Log(slog.LevelWarn, "a", "it fails", "n", 3))
	assert.True(t, w.Log(slog.LevelWarn, "b", "it fails", "n", 4), "another key has its own minute")
	fc.Advance(Every)
	assert.True(t, w.Log(slog.LevelWarn, "a", "it fails", "n", 5))
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if assert.Len(t, lines, 3) {
		assert.Contains(t, lines[0], `level=WARN msg="it fails" n=1 repeatsLoggedEvery=1m0s`)
		assert.Contains(t, lines[2], `n=5 suppressedSinceLast=2 repeatsLoggedEvery=1m0s`)
	}
}

// A line suppressed for a key keeps its count for that key's next line, but not for the
// server's life: wrong secrets from ever new addresses (a /48 holds 65 536 /64s), each twice,
// grew the throttle by one entry per address for good.
func TestTheThrottleForgetsKeysGoneQuiet(t *testing.T) {
	fc := newFakeClock()
	w := New(slog.New(slog.DiscardHandler), fc)
	for i := range 100 {
		key := fmt.Sprintf("hello rejected: wrong secret 10.0.0.%d", i)
		assert.True(t, w.Log(slog.LevelWarn, key, "hello rejected: wrong secret"))
		assert.False(t, w.Log(slog.LevelWarn, key, "hello rejected: wrong secret"), "suppressed, counted for its next line")
	}
	fc.Advance(ForgetAfter)
	w.Log(slog.LevelWarn, "hello rejected: wrong secret 10.0.1.1", "hello rejected: wrong secret") // sweeps
	w.mu.Lock()
	defer w.mu.Unlock()
	assert.Len(t, w.state, 1, "only the line just written is kept")
}
