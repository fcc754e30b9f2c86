package console

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"fakecraft/fakecrafttest"
)

// typedText is what the char events of a recorder's log spell.
func typedText(got []string) string {
	var b strings.Builder
	for _, s := range got {
		if c, ok := strings.CutPrefix(s, "char "); ok {
			b.WriteString(c)
		}
	}
	return b.String()
}

// TestDecoderSplitAnywhereKeepsEveryKey: input cut by the end of a read at any byte (a
// terminal hands over what has arrived; tmux writes a send-keys string as it likes) decodes
// to the same events as in one read: no key lost, none doubled, the order kept. The one
// exception is by design: an ESC that ends a read is the Esc key (a Ctrl press).
func TestDecoderSplitAnywhereKeepsEveryKey(t *testing.T) {
	stream := "clear\rai write\x1b[A\x1bOB\x1b[3~\x1b[<0;5;6M\x1b[<0;5;6m" +
		"h\xc3\xa9\x1b[200~pasted\x1b[201~\x1bx done\r"
	var whole Decoder
	want := events(whole.Feed([]byte(stream)))
	require.NotEmpty(t, want)
	for i := 1; i < len(stream); i++ {
		for j := i; j < len(stream); j++ {
			parts := []string{stream[:i], stream[i:j], stream[j:]}
			if strings.HasSuffix(parts[0], "\x1b") || strings.HasSuffix(parts[1], "\x1b") {
				continue // a lone Esc press, by design
			}
			var d Decoder
			var got []Event
			for _, p := range parts {
				got = append(got, events(d.Feed([]byte(p)))...)
			}
			if !assert.Equal(t, want, got, "cut at %d and %d: %q", i, j, parts) {
				return
			}
		}
	}
}

// countingRecorder is a recorder whose event queue holds queued events until the test pops
// them, as a computer busy running a program does.
type countingRecorder struct {
	*recorder
	queued atomic.Int64
	popped chan struct{}
}

func (r *countingRecorder) QueueEvent(name string, args ...lua.LValue) {
	r.queued.Add(1)
	r.recorder.QueueEvent(name, args...)
}
func (r *countingRecorder) QueueLength() int        { return int(r.queued.Load()) }
func (r *countingRecorder) Popped() <-chan struct{} { return r.popped }

// pop takes n events from the queue, as the computer's program does.
func (r *countingRecorder) pop(n int) {
	r.queued.Add(int64(-n))
	select {
	case r.popped <- struct{}{}:
	default:
	}
}

// TestNoKeyTypedDuringARedrawIsLost: `clear` and the next command typed at once, in reads cut
// anywhere, while the screen is cleared, redrawn and the real terminal resized (as `clear`
// at the shell's prompt does), reach the computer whole and in order; so do keys typed while
// a busy computer's queue is full (the keyboard waits for room, nothing is dropped).
func TestNoKeyTypedDuringARedrawIsLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	in, typing := io.Pipe()
	out := &fakecrafttest.Output{}
	con := New(in, out, TrueColour)
	comp := &countingRecorder{recorder: newRecorder(), popped: make(chan struct{}, 1)}
	comp.seen = make(chan struct{}, 4096)
	attached, detach := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- con.Attach(attached, comp) }()

	line := "clear\rai write poem.txt about the sea\r"
	var typed strings.Builder
	wrote := make(chan error, 1)
	go func() {
		for cut := 1; cut < len(line); cut += 3 {
			for _, part := range []string{line[:cut], line[cut:]} {
				comp.term.Clear() // the computer redraws while the keys arrive
				comp.term.SetCursorPos(1, 1)
				comp.term.Write("> ")
				con.Resize(80, 25)
				if _, err := typing.Write([]byte(part)); err != nil {
					wrote <- err
					return
				}
			}
		}
		wrote <- nil
	}()
	for cut := 1; cut < len(line); cut += 3 {
		typed.WriteString(line)
	}
	want := strings.ReplaceAll(typed.String(), "\r", "")
	text := func() string {
		comp.mu.Lock()
		defer comp.mu.Unlock()
		return typedText(comp.got)
	}
	// The queue fills past the keyboard's room: the rest waits, then arrives as it empties.
	for len(text()) < len(want) {
		waitUntil(t, ctx, func() <-chan struct{} { return comp.seen }, func() bool {
			return comp.QueueLength() > inputRoom-3 || len(text()) == len(want)
		})
		comp.pop(comp.QueueLength())
	}
	assert.Equal(t, want, text())
	require.NoError(t, <-wrote)

	detach()
	assert.ErrorIs(t, <-done, context.Canceled)
	require.NoError(t, typing.Close())
	con.Close()
}
