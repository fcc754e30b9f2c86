package speaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"fakecraft/peripheral"
)

// clockHost is a computer whose clock moves only when the test ticks it.
type clockHost struct {
	now    time.Time
	afters []func()
	events []string
}

func (h *clockHost) QueueEvent(name string, args ...lua.LValue) {
	h.events = append(h.events, name)
}
func (h *clockHost) Do(fn func(L *lua.LState))  { panic("not used") }
func (h *clockHost) Go(fn func())               { panic("not used") }
func (h *clockHost) AtShutdown(fn func())       { panic("not used") }
func (h *clockHost) Done() <-chan struct{}      { return nil }
func (h *clockHost) Now() time.Time             { return h.now }
func (h *clockHost) StartTimer(float64) int     { panic("not used") }
func (h *clockHost) CancelTimer(int)            {}
func (h *clockHost) After(_ float64, fn func()) { h.afters = append(h.afters, fn) }

// tick advances the clock by one tick and runs what waited for it.
func (h *clockHost) tick() {
	h.now = h.now.Add(50 * time.Millisecond)
	due := h.afters
	h.afters = nil
	for _, fn := range due {
		fn()
	}
}

// playAudio calls the speaker's playAudio with n samples and returns its answer.
func playAudio(t *testing.T, s *Speaker, a *peripheral.Access, n int) bool {
	L := lua.NewState()
	defer L.Close()
	buf := L.NewTable()
	for i := 1; i <= n; i++ {
		buf.Append(lua.LNumber(0))
	}
	L.Push(buf)
	require.Equal(t, 1, s.Methods()["playAudio"](L, a))
	return L.Get(-1) == lua.LTrue
}

// TestAudioIsSentHalfASecondAhead: the first buffer goes to the players on the next tick
// (speaker_audio_empty), the next one only when what was sent has half a second left, as
// CC's DfpwmState times it.
func TestAudioIsSentHalfASecondAhead(t *testing.T) {
	h := &clockHost{now: time.Unix(1000, 0)}
	s := New()
	a := peripheral.NewAccess("top", 1, h, nil)
	s.Attach(a)

	require.True(t, playAudio(t, s, a, SampleRate)) // one second
	assert.False(t, playAudio(t, s, a, SampleRate), "one buffer waits at a time")
	h.tick()
	assert.Equal(t, []string{"speaker_audio_empty"}, h.events)

	require.True(t, playAudio(t, s, a, SampleRate))
	ticks := 0
	for len(h.events) == 1 {
		h.tick()
		ticks++
		require.Less(t, ticks, 100)
	}
	// Sent at 1000.05 for a second: the next goes at 1000.55, 10 ticks after 1000.05.
	assert.Equal(t, 10, ticks)
	assert.Equal(t, []string{"speaker_audio_empty", "speaker_audio_empty"}, h.events)
}
