package logthrottle

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// The computers behind one address (a Minecraft server's) are each named, once a minute,
// up to MaxItemsPerGroup of an address and MaxItems in all; made-up items past them write
// their group's one line a minute, and items gone quiet make room again.
func TestItemsOfAGroupHaveLinesOfTheirOwnWithinBounds(t *testing.T) {
	fc := newFakeClock()
	var logs testkit.SyncBuffer
	w := New(slog.New(slog.NewTextHandler(&logs, nil)), fc)
	for i := range MaxItemsPerGroup {
		assert.True(t, w.LogItem(slog.LevelWarn, "refused 10.0.0.1", fmt.Sprint("cred", i), "refused", "credentialId", i))
	}
	assert.False(t, w.LogItem(slog.LevelWarn, "refused 10.0.0.1", "cred0", "refused"), "an item's repeat waits its minute")
	assert.True(t, w.LogItem(slog.LevelWarn, "refused 10.0.0.1", "one too many", "refused"), "past the bound: the address's line")
	assert.False(t, w.LogItem(slog.LevelWarn, "refused 10.0.0.1", "two too many", "refused"), "counted with the address's line")
	assert.Equal(t, MaxItemsPerGroup+1, strings.Count(logs.String(), "msg=refused"))

	for g := 1; g < MaxItems/MaxItemsPerGroup; g++ {
		for i := range MaxItemsPerGroup {
			require.True(t, w.LogItem(slog.LevelWarn, fmt.Sprint("refused 10.0.1.", g), fmt.Sprint("cred", i), "refused"))
		}
	}
	assert.True(t, w.LogItem(slog.LevelWarn, "refused 10.0.2.1", "cred0", "refused"), "all groups' items at the bound: the address's line")
	assert.False(t, w.LogItem(slog.LevelWarn, "refused 10.0.2.1", "cred1", "refused"), "counted with it")

	fc.Advance(Every)
	w.Log(slog.LevelWarn, "another", "another line") // sweeps: the items not repeated are forgotten
	w.mu.Lock()
	assert.Equal(t, 1, w.items, "only cred0 of 10.0.0.1, repeated since its line, is kept")
	w.mu.Unlock()
	assert.True(t, w.LogItem(slog.LevelWarn, "refused 10.0.2.1", "cred2", "refused"), "room again: a line of its own")
	assert.True(t, w.LogItem(slog.LevelWarn, "refused 10.0.0.1", "cred0", "refused", "credentialId", 0))
	assert.Contains(t, logs.String(), "msg=refused credentialId=0 suppressedSinceLast=1 repeatsLoggedEvery=1m0s")
}

// A burst that stops (a frozen Minecraft server's 2 000 computers, dropped within a second)
// has its count written at the end of its minute, not only with a next line that may never
// come; a key with nothing suppressed writes nothing more.
func TestABurstsCountIsWrittenAtTheEndOfItsMinute(t *testing.T) {
	fc := newFakeClock()
	var logs testkit.SyncBuffer
	w := New(slog.New(slog.NewTextHandler(&logs, nil)), fc)
	assert.True(t, w.LogBurst(slog.LevelWarn, "quiet", "it failed once", "n", 0))
	assert.True(t, w.LogBurst(slog.LevelWarn, "a", "they fail", "n", 1))
	for i := 2; i <= 2000; i++ {
		assert.False(t, w.LogBurst(slog.LevelWarn, "a", "they fail", "n", i))
	}
	assert.Equal(t, 2, strings.Count(logs.String(), "\n"), "one line per key until the minute ends")
	assert.Equal(t, 1, fc.Armed(), "one timer for the burst, none for the quiet key")
	fc.Advance(Every - time.Nanosecond)
	assert.Equal(t, 2, strings.Count(logs.String(), "\n"))
	fc.Advance(time.Nanosecond) // the timer writes in a goroutine of its own
	require.Eventually(t, func() bool { return strings.Count(logs.String(), "\n") == 3 }, time.Minute, testkit.Poll, "the burst's count")
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	assert.Contains(t, lines[2], `level=WARN msg="they fail" n=2 suppressedSinceLast=1999 repeatsLoggedEvery=1m0s`)
	fc.Advance(ForgetAfter)
	assert.Len(t, strings.Split(strings.TrimSpace(logs.String()), "\n"), 3, "the count is written once")
	assert.Equal(t, 0, fc.Armed())
}

// TestStopWritesABurstsCountAtOnceAndNothingAfter: a burst's end-of-minute timer is stopped by
// Stop, which writes its count at once: the timer wrote its line up to a minute after the
// gateway's "stopped", and a count lost with the timer would be lost for good. Nothing is
// written after Stop, and a LogBurst then sets no timer.
func TestStopWritesABurstsCountAtOnceAndNothingAfter(t *testing.T) {
	fc := newFakeClock()
	var logs testkit.SyncBuffer
	w := New(slog.New(slog.NewTextHandler(&logs, nil)), fc)
	assert.True(t, w.LogBurst(slog.LevelWarn, "quiet", "it failed once", "n", 0))
	assert.True(t, w.LogBurst(slog.LevelWarn, "b", "they fail too", "n", 1))
	assert.False(t, w.LogBurst(slog.LevelWarn, "b", "they fail too", "n", 2))
	assert.True(t, w.LogBurst(slog.LevelWarn, "a", "they fail", "n", 1))
	for i := 2; i <= 50; i++ {
		assert.False(t, w.LogBurst(slog.LevelWarn, "a", "they fail", "n", i))
	}
	require.Equal(t, 2, fc.Armed(), "a timer for each burst")
	fc.Advance(Every / 2)

	w.Stop()
	assert.Equal(t, 0, fc.Armed(), "Stop leaves no timer")
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 5, "the three first lines, then each burst's count at once")
	assert.Contains(t, lines[3], `level=WARN msg="they fail" n=2 suppressedSinceLast=49 repeatsLoggedEvery=1m0s`)
	assert.Contains(t, lines[4], `level=WARN msg="they fail too" n=2 suppressedSinceLast=1 repeatsLoggedEvery=1m0s`)

	assert.False(t, w.LogBurst(slog.LevelWarn, "a", "they fail", "n", 51), "the count starts again from the line Stop wrote")
	assert.Equal(t, 0, fc.Armed(), "no timer after Stop")
	fc.Advance(ForgetAfter)
	assert.Equal(t, 5, strings.Count(logs.String(), "\n"), "nothing after Stop")
	w.Stop() // a second Stop has nothing to write
	assert.Equal(t, 5, strings.Count(logs.String(), "\n"))
}
