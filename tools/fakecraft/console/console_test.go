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
	lua "github.com/yuin/gopher-lua"

	"fakecraft/computer"
	"fakecraft/fakecrafttest"
)

// recorder is a Computer with a real terminal that records what the console asks of it.
type recorder struct {
	term *computer.Terminal
	mu   sync.Mutex
	got  []string
	seen chan struct{}
}

func newRecorder() *recorder {
	return &recorder{term: computer.NewTerminal(nil, true), seen: make(chan struct{}, 64)}
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
	r.seen <- struct{}{}
}

func (r *recorder) Terminal() *computer.Terminal { return r.term }
func (r *recorder) QueueEvent(name string, args ...lua.LValue) {
	parts := []string{name}
	for _, a := range args {
		parts = append(parts, a.String())
	}
	r.note(strings.Join(parts, " "))
}
func (r *recorder) Terminate()              { r.note("TERMINATE") }
func (r *recorder) Shutdown()               { r.note("SHUTDOWN") }
func (r *recorder) Reboot()                 { r.note("REBOOT") }
func (r *recorder) QueueLength() int        { return 0 }
func (r *recorder) Popped() <-chan struct{} { return nil }

// waitUntil waits until ok holds, checking again each time changed's channel says something
// arrived.
func waitUntil(t *testing.T, ctx context.Context, changed func() <-chan struct{}, ok func() bool) {
	t.Helper()
	for {
		ch := changed()
		if ok() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("timed out")
		}
	}
}

func TestAttachDeliversInputAndDrawsChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, typing := io.Pipe()
	out := &fakecrafttest.Output{}
	con := New(in, out, TrueColour)
	comp := newRecorder()
	attached, detach := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- con.Attach(attached, comp) }()

	_, err := typing.Write([]byte("a\x14\x14\x12\x12\x13\x13"))
	require.NoError(t, err)
	// A held shortcut's keys go up after it acted, when the hold ends: Ctrl-T's and Ctrl-R's
	// at the next shortcut, Ctrl-S's when its repeats stop (the decoder's clock: read lets
	// them go), as a player's in CC, where the program that Ctrl-R or Ctrl-S stops sees no
	// key_up.
	held := func(code, action string) []string {
		return []string{"key 341 false", "key " + code + " false", action, "key_up " + code, "key_up 341"}
	}
	want := []string{"key 65 false", "char a", "key_up 65"}
	want = append(want, held("84", "TERMINATE")...)
	want = append(want, held("82", "REBOOT")...)
	want = append(want, held("83", "SHUTDOWN")...)
	waitUntil(t, ctx, func() <-chan struct{} { return comp.seen }, func() bool {
		comp.mu.Lock()
		defer comp.mu.Unlock()
		return len(comp.got) >= len(want)
	})
	comp.mu.Lock()
	assert.Equal(t, want, comp.got)
	comp.mu.Unlock()

	comp.term.Write("hello")
	waitUntil(t, ctx, out.Changed, func() bool { return strings.Contains(out.String(), "hello") })

	before := len(out.String())
	con.Redraw()
	waitUntil(t, ctx, out.Changed, func() bool { return strings.Contains(out.String()[before:], clearScreen) })

	detach()
	assert.ErrorIs(t, <-done, context.Canceled)
	require.NoError(t, typing.Close())
	con.Close()
}

func TestAttachEndsWhenInputEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	con := New(strings.NewReader("x"), io.Discard, Colour256)
	defer con.Close()
	comp := newRecorder()
	assert.ErrorIs(t, con.Attach(ctx, comp), ErrInputClosed)
}
