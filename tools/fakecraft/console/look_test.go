package console

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"
)

// screen is a monitor the console can show: a real terminal, and the touches it was given.
type screen struct {
	term    *computer.Terminal
	mu      sync.Mutex
	touches [][2]int
	touched chan struct{}
}

func newScreen(w, h int) *screen {
	return &screen{term: computer.NewSizedTerminal(w, h, true), touched: make(chan struct{}, 8)}
}

func (s *screen) Terminal() *computer.Terminal { return s.term }
func (s *screen) Touch(x, y int) {
	s.mu.Lock()
	s.touches = append(s.touches, [2]int{x, y})
	s.mu.Unlock()
	s.touched <- struct{}{}
}

// TestLookAtAMonitorAndTouchIt: holding Ctrl-L shows the world's monitors in turn, then the
// computer's screen again; on a monitor's view a click touches the monitor at its cell
// (CC's monitor_touch is the monitor's to send) and no key or click reaches the computer,
// as a player looking at a monitor is not at the computer; Ctrl-T, R and S still act on it.
func TestLookAtAMonitorAndTouchIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, typing := io.Pipe()
	out := &fakecrafttest.Output{}
	con := New(in, out, TrueColour)
	defer con.Close()
	top, hall := newScreen(18, 5), newScreen(7, 5)
	top.term.Write("on top")
	hall.term.Write("hall")
	con.LookAround(func() []Sight {
		return []Sight{{"computer 1's top", top}, {"cable office's monitor_0", hall}}
	})
	comp := newRecorder()
	comp.term.Write("prompt")
	attached, detach := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- con.Attach(attached, comp) }()
	waitUntil(t, ctx, out.Changed, func() bool { return strings.Contains(out.String(), "prompt") })

	write := func(s string) {
		_, err := typing.Write([]byte(s))
		require.NoError(t, err)
	}
	write("\x0c\x0c")
	waitUntil(t, ctx, out.Changed, func() bool {
		return strings.Contains(out.String(), "on top") &&
			strings.Contains(out.String(), "computer 1's top, a monitor (18x5): a click touches it")
	})
	// A click past the computer's 51 columns but on the monitor's 18 is the monitor's cell.
	write("\x1b[<2;17;4Mx\x1b[<2;17;4m\x14\x14")
	select {
	case <-top.touched:
	case <-ctx.Done():
		t.Fatal("no touch")
	}
	// The first Ctrl-L of the hold was an ordinary key, typed while the computer was on show.
	ctrlL := []string{"key 341 false", "key 76 false", "key_up 76", "key_up 341"}
	waitUntil(t, ctx, func() <-chan struct{} { return comp.seen }, func() bool {
		comp.mu.Lock()
		defer comp.mu.Unlock()
		return len(comp.got) > len(ctrlL)
	})
	assert.Equal(t, [][2]int{{17, 4}}, top.touches)
	assert.Equal(t, append(ctrlL, "TERMINATE"), comp.got, "only the shortcut reached the computer")

	write("\x0c\x0c")
	waitUntil(t, ctx, out.Changed, func() bool { return strings.Contains(out.String(), "cable office's monitor_0, a monitor (7x5)") })
	write("a\x0c\x0c") // back to the computer: its keys and clicks are its own again
	write("b\x1b[<0;3;2M")
	waitUntil(t, ctx, func() <-chan struct{} { return comp.seen }, func() bool {
		comp.mu.Lock()
		defer comp.mu.Unlock()
		return len(comp.got) >= len(ctrlL)+5
	})
	assert.Equal(t, append(ctrlL, "TERMINATE", "key 66 false", "char b", "key_up 66", "mouse_click 1 3 2"), comp.got)
	assert.Empty(t, hall.touches)

	detach()
	assert.ErrorIs(t, <-done, context.Canceled)
	require.NoError(t, typing.Close())
}
