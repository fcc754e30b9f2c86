package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fcomputer "fakecraft/computer"
	"fakecraft/console"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/screen"
	"trap-sandbox/internal/server"
	"trap-sandbox/testkit"
	"trap-sandbox/testkit/daemonfake"
)

// sendsTo is a viewer's send that hands each input to the test on sent, until the view's
// context ends.
func sendsTo(sent chan<- []computer.InputEvent) func(ctx context.Context, evs []computer.InputEvent) error {
	return func(ctx context.Context, evs []computer.InputEvent) error {
		select {
		case sent <- evs:
		case <-ctx.Done():
		}
		return nil
	}
}

// startViewer runs v until ctx ends or its input ends: typing is the person's terminal,
// streaming the gateway's event stream of the watch, both closed as the test ends; done gets
// what run returned.
func startViewer(ctx context.Context, t *testing.T, v *viewer) (typing, streaming *io.PipeWriter, done <-chan error) {
	t.Helper()
	typed, typing := io.Pipe()
	t.Cleanup(func() { _ = typing.Close() })
	stream, streaming := io.Pipe()
	t.Cleanup(func() { _ = streaming.Close() })
	ran := make(chan error, 1)
	go func() { ran <- v.run(ctx, typed, stream) }()
	return typing, streaming, ran
}

// TestTheScreenViewerDrawsFramesAndTypesKeysByName: a frame of the stream is drawn in
// colour (CC's glyphs, the palette's RGB); typed keys reach the computer as screen.input
// events by CC's key names, as fakecraft shell's decoder reads them; Ctrl-T held terminates,
// Ctrl-S held leaves.
func TestTheScreenViewerDrawsFramesAndTypesKeysByName(t *testing.T) {
	out := &testkit.SyncBuffer{}
	sent := make(chan []computer.InputEvent)
	v := &viewer{out: out, send: sendsTo(sent)}
	v.renderer.Mode = 1 // console.TrueColour
	typing, streaming, done := startViewer(t.Context(), t, v)

	fg := "4" + strings.Repeat("0", 50)
	_, err := fmt.Fprintf(streaming, "event: frame\ndata: {\"seq\":1,\"width\":51,\"height\":19,\"colour\":true,\"cursor\":{\"x\":4,\"y\":1,\"blink\":true},\"rows\":[{\"text\":\"> \\u0081é\",\"fg\":%q,\"bg\":%q}],\"palette\":[\"#f0f0f0\",\"#000000\",\"#000000\",\"#000000\",\"#dede6c\"]}\n\n", fg, strings.Repeat("f", 51))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "é") }, 5*time.Second, time.Millisecond)
	assert.Contains(t, out.String(), "\x1b[38;2;222;222;108;", "the prompt in the palette's yellow")
	assert.Contains(t, out.String(), "🬀", "byte 0x81 as CC's font draws it, never a raw control byte")
	assert.NotContains(t, out.String(), "\u0081")
	assert.NotContains(t, out.String(), "48;2;240;240;240m", "rows the frame lacks are blank on black, not white")

	_, err = typing.Write([]byte("l"))
	require.NoError(t, err)
	assert.Equal(t, []computer.InputEvent{{Type: "key", Name: "l"}, {Type: "char", Text: "l"}, {Type: "key_up", Name: "l"}}, <-sent)
	_, err = typing.Write([]byte("\r"))
	require.NoError(t, err)
	assert.Equal(t, []computer.InputEvent{{Type: "key", Name: "enter"}, {Type: "key_up", Name: "enter"}}, <-sent)
	_, err = typing.Write([]byte("é"))
	require.NoError(t, err)
	assert.Equal(t, []computer.InputEvent{{Type: "char", Text: "é"}}, <-sent, "a Latin-1 character is one CC byte")
	_, err = typing.Write([]byte("\x14"))
	require.NoError(t, err)
	<-sent // one Ctrl-T press is Ctrl+T
	_, err = typing.Write([]byte("\x14"))
	require.NoError(t, err)
	assert.Equal(t, []computer.InputEvent{{Type: "terminate"}}, <-sent, "Ctrl-T held terminates")
	_, err = typing.Write([]byte("\x13"))
	require.NoError(t, err)
	<-sent
	_, err = typing.Write([]byte("\x13"))
	require.NoError(t, err)
	assert.NoError(t, <-done, "Ctrl-S held leaves")
	_ = typing.Close()
	_ = streaming.Close()
}

// TestTheScreenViewerLetsAHeldCtrlTsKeysGoAfterItsTerminate: a held Ctrl-T reaches the
// computer in CC's order (TerminalWidget), as fakecraft shell sends it: Ctrl's and T's key at
// the first press, terminate at the terminal's first repeat, and T's and Ctrl's key_up when
// the hold ends, once the repeats stopped (console.RepeatGap after the last, on the view's
// clock) or at the next key typed. A tap's keys go up a second after it
// (console.FirstRepeatWait). The key_up went at once, before the terminate.
func TestTheScreenViewerLetsAHeldCtrlTsKeysGoAfterItsTerminate(t *testing.T) {
	sent := make(chan []computer.InputEvent)
	clk := clock.NewFake(time.Unix(0, 0))
	v := &viewer{out: io.Discard, held: clk, send: sendsTo(sent)}
	typing, _, done := startViewer(t.Context(), t, v)

	// letGoAt waits until the view waits for the keys to go up at at (the last key typed is
	// taken: typeOn returns once the view's reader has it).
	letGoAt := func(at time.Time, msg string) {
		t.Helper()
		require.Eventually(t, func() bool { return clk.NextDue().Equal(at) }, 5*time.Second, time.Millisecond, msg)
	}
	down := []computer.InputEvent{{Type: "key", Name: "leftCtrl"}, {Type: "key", Name: "t"}}
	up := []computer.InputEvent{{Type: "key_up", Name: "t"}, {Type: "key_up", Name: "leftCtrl"}}
	typeOn(t, typing, "\x14")
	assert.Equal(t, down, <-sent, "the first press: the keys go down, and stay")
	typeOn(t, typing, "\x14")
	assert.Equal(t, []computer.InputEvent{{Type: "terminate"}}, <-sent, "the first repeat: terminate")
	// Each repeat below comes after the clock moved, so the view's wait for the keys to go up
	// moves with it once the view has taken that repeat: letGoAt waits for it there. (Typed at
	// the same instant as the one before, a repeat the view had not taken yet was taken after
	// the clock's next advance, by the advanced clock, and held the keys down past the test's.)
	clk.Advance(time.Millisecond)
	typeOn(t, typing, "\x14")
	letGoAt(clk.Now().Add(console.RepeatGap), "the view waits for the repeats to stop")
	clk.Advance(console.RepeatGap - time.Millisecond)
	typeOn(t, typing, "\x14") // still held: nothing more
	letGoAt(clk.Now().Add(console.RepeatGap), "a repeat holds the keys down longer")
	clk.Advance(console.RepeatGap)
	assert.Equal(t, up, <-sent, "let go once the repeats stopped")

	clk.Advance(console.RepeatGap) // a new press
	typeOn(t, typing, "\x14")
	assert.Equal(t, down, <-sent)
	typeOn(t, typing, "\x14")
	assert.Equal(t, []computer.InputEvent{{Type: "terminate"}}, <-sent)
	typeOn(t, typing, "l")
	assert.Equal(t, append(append([]computer.InputEvent{}, up...), computer.InputEvent{Type: "key", Name: "l"},
		computer.InputEvent{Type: "char", Text: "l"}, computer.InputEvent{Type: "key_up", Name: "l"}), <-sent,
		"another key ends the hold: the keys go up before it")

	typeOn(t, typing, "\x14")
	assert.Equal(t, down, <-sent, "a tap")
	letGoAt(clk.Now().Add(console.FirstRepeatWait), "a tap's keys wait for a first repeat")
	clk.Advance(console.FirstRepeatWait)
	assert.Equal(t, up, <-sent, "a tap's keys go up when no repeat came")
	clk.Advance(console.RepeatGap)
	typeOn(t, typing, "\x14") // a late repeat: a hold after all, down again and terminate
	assert.Equal(t, append(append([]computer.InputEvent{}, down...), computer.InputEvent{Type: "terminate"}), <-sent)
	_ = typing.Close()
	assert.Equal(t, up, <-sent, "the input's end lets them go")
	assert.NoError(t, <-done)
}

// answeredSend is a viewer's send that hands each request's events to the test on sends and
// returns what the test answers on answers (until ctx ends).
func answeredSend(sends chan<- []computer.InputEvent, answers <-chan error) func(context.Context, []computer.InputEvent) error {
	return func(ctx context.Context, evs []computer.InputEvent) error {
		select {
		case sends <- evs:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case err := <-answers:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TestTheScreenViewerSendsKeysAgainWhileTheComputerIsBusy: a busy answer to typed keys (the
// host's other requests fill the computer for the moment; it says to retry shortly) does not
// end the view, as it did: the keys go again after the answer's Retry-After, those typed
// meanwhile wait behind them in order, and the screen keeps being drawn while they wait. Any
// other failure but forbidden (the view then stays, view-only) still ends the view with its
// reason.
func TestTheScreenViewerSendsKeysAgainWhileTheComputerIsBusy(t *testing.T) {
	out := &testkit.SyncBuffer{}
	sends := make(chan []computer.InputEvent)
	answers := make(chan error)
	v := &viewer{out: out, busyRetry: time.Millisecond, send: answeredSend(sends, answers)}
	typing, streaming, done := startViewer(t.Context(), t, v)
	keyA := []computer.InputEvent{{Type: "key", Name: "a"}, {Type: "char", Text: "a"}, {Type: "key_up", Name: "a"}}
	keyB := []computer.InputEvent{{Type: "key", Name: "b"}, {Type: "char", Text: "b"}, {Type: "key_up", Name: "b"}}
	busy := protocol.Errorf(protocol.CodeBusy, "the computer already has 31 requests in flight; retry shortly")

	_, err := typing.Write([]byte("a"))
	require.NoError(t, err)
	assert.Equal(t, keyA, <-sends)
	_, err = typing.Write([]byte("b"))
	require.NoError(t, err)
	_, err = fmt.Fprintf(streaming, "event: frame\ndata: {\"seq\":1,\"width\":51,\"height\":19,\"colour\":true,\"cursor\":{\"x\":1,\"y\":1,\"blink\":false},\"rows\":[{\"text\":\"drawn meanwhile\",\"fg\":%q,\"bg\":%q}]}\n\n",
		strings.Repeat("0", 15), strings.Repeat("f", 15))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "drawn meanwhile") }, 5*time.Second, time.Millisecond,
		"the screen is drawn while a key's send waits")
	answers <- busy
	assert.Equal(t, keyA, <-sends, "the busy computer's keys go again")
	answers <- busy
	assert.Equal(t, keyA, <-sends)
	answers <- nil
	assert.Equal(t, keyB, <-sends, "what was typed meanwhile follows, in order")
	answers <- nil

	_, err = typing.Write([]byte("c"))
	require.NoError(t, err)
	<-sends
	answers <- protocol.Errorf(protocol.CodeBadPayload, "screen.input queues 128 events at most per request; send the rest in another; nothing was queued")
	assert.EqualError(t, <-done, "bad_payload: screen.input queues 128 events at most per request; send the rest in another; nothing was queued",
		"any other failure ends the view (forbidden, a view-only computer's, does not: TestTheScreenViewerStaysUpOnAViewOnlyComputer)")
}

// awayClock is the clock of a view waiting for its computer in a test: the wait for the
// computer to come back (bound) ends when the test sends on deadline; every other wait, the
// view's looking again, is over at once. Each wait is recorded.
type awayClock struct {
	bound    time.Duration
	deadline chan time.Time
	busyClock
}

func (c *awayClock) after(d time.Duration) <-chan time.Time {
	if d == c.bound {
		c.mu.Lock()
		c.seen = append(c.seen, d)
		c.mu.Unlock()
		return c.deadline
	}
	return c.busyClock.after(d)
}

// awayView is a live view under test whose computer or gateway goes away: its stream and keys
// are pipes the test writes, its clock an awayClock whose bound is --wait (a minute), and each
// look again takes the answer the test sends on reopens.
type awayView struct {
	t                 *testing.T
	v                 *viewer
	out               *testkit.SyncBuffer
	sent              chan []computer.InputEvent // the keys the view sent to the computer
	clock             *awayClock
	reopens           chan func() (io.ReadCloser, error)
	typed             *io.PipeReader
	typing, streaming *io.PipeWriter
	done              chan error // the view's end
	fg                string     // the colour its frames draw in, a CC colour's digit
}

// startAwayView starts an awayView in a terminal width columns wide whose frames draw in the
// colour fg; its pipes close when the test ends.
func startAwayView(t *testing.T, width int, fg string) *awayView {
	t.Helper()
	a := &awayView{t: t, out: &testkit.SyncBuffer{}, sent: make(chan []computer.InputEvent, 16), fg: fg,
		clock:   &awayClock{bound: time.Minute, deadline: make(chan time.Time, 1)},
		reopens: make(chan func() (io.ReadCloser, error)), done: make(chan error, 1)}
	a.v = &viewer{out: a.out, after: a.clock.after, waitFor: time.Minute, size: termOf(width, 24),
		send: func(_ context.Context, evs []computer.InputEvent) error {
			a.sent <- evs
			return nil
		},
		reopen: func(ctx context.Context) (io.ReadCloser, error) {
			select {
			case answer := <-a.reopens:
				return answer()
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
	a.typed, a.typing = io.Pipe()
	t.Cleanup(func() { _ = a.typing.Close() })
	stream, streaming := io.Pipe()
	a.streaming = streaming
	t.Cleanup(func() { _ = streaming.Close() })
	go func() { a.done <- a.v.run(t.Context(), a.typed, stream) }()
	return a
}

// frame writes a frame of one row, text, to a stream of the view.
func (a *awayView) frame(w io.Writer, text string) {
	_, err := fmt.Fprintf(w, "event: frame\ndata: {\"seq\":1,\"width\":51,\"height\":19,\"colour\":true,\"cursor\":{\"x\":1,\"y\":1,\"blink\":false},\"rows\":[{\"text\":%q,\"fg\":%q,\"bg\":%q}]}\n\n",
		text, strings.Repeat(a.fg, len(text)), strings.Repeat("f", len(text)))
	require.NoError(a.t, err)
}

// TestTheScreenViewerWaitsForTheComputerToComeBack: a computer that goes away (a reboot
// typed in the view, its chunk unloaded: its stream ends not_connected) no longer ends the
// view, as it did: the last screen stays, greyed, the status line says why and that the view
// waits for it, the gateway is asked again with a growing wait until the computer is back,
// and the view is live again, keys typed while it was away not sent. A computer that stays
// away past the bound (--wait) ends the view with the reason and the bound; a relabelled
// computer or one cut off ends it at once, never asked again (the gateway shutting down:
// TestTheScreenViewerLooksAgainWhenItsGatewayStops).
func TestTheScreenViewerWaitsForTheComputerToComeBack(t *testing.T) {
	a := startAwayView(t, 100, "4")
	v, out, sent, clock, reopens, typed, typing, streaming, done, frame := a.v, a.out, a.sent, a.clock, a.reopens, a.typed, a.typing, a.streaming, a.done, a.frame
	const gone = "event: end\ndata: {\"ok\":false,\"error\":{\"code\":\"not_connected\",\"message\":\"computer 7: disconnected\"}}\n\n"
	frame(streaming, "> reboot")
	_, err := io.WriteString(streaming, gone)
	require.NoError(t, err)
	status := "computer 7: disconnected; waiting up to 1m0s for it to come back; Ctrl-S held leaves"
	require.Eventually(t, func() bool { return strings.Contains(out.String(), status) }, 5*time.Second, time.Millisecond,
		"the status line says why the view waits:\n%q", out.String())
	assert.Contains(t, out.String(), "\x1b[20;1H\x1b[0m\x1b[2K\x1b[7m"+status, "on the status line, under the screen")
	assert.Contains(t, out.String(), "\x1b[38;5;250;48;5;233m> reboot", "the last screen greyed: its yellow prompt as a grey")
	_, err = typing.Write([]byte("x"))
	require.NoError(t, err)
	_, err = typing.Write(nil) // the view has taken x's key
	require.NoError(t, err)

	reopens <- func() (io.ReadCloser, error) {
		return nil, protocol.Errorf(protocol.CodeNotConnected, "computer 7: is not connected")
	}
	back, backing := io.Pipe()
	defer backing.Close()
	reopens <- func() (io.ReadCloser, error) { return back, nil }
	frame(backing, "> back again")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "back again") }, 5*time.Second, time.Millisecond)
	_, err = typing.Write([]byte("y"))
	require.NoError(t, err)
	assert.Equal(t, []computer.InputEvent{{Type: "key", Name: "y"}, {Type: "char", Text: "y"}, {Type: "key_up", Name: "y"}}, <-sent,
		"the live view's keys reach the computer; x, typed while it was away, does not")
	assert.Equal(t, []time.Duration{time.Minute, 250 * time.Millisecond, 500 * time.Millisecond}, clock.waits(),
		"asked again after a growing wait")

	_, err = io.WriteString(backing, gone)
	require.NoError(t, err)
	// The bound is over while the gateway answers that the computer is still away. Whether the
	// view asks again before it sees the bound is the scheduler's choice (both are ready): the
	// gateway answers as often as it is asked, and the view ends with the bound either way.
	clock.deadline <- time.Time{}
	stillAway := func() (io.ReadCloser, error) {
		return nil, protocol.Errorf(protocol.CodeNotConnected, "computer 7: is not connected")
	}
	for ended := false; !ended; {
		select {
		case reopens <- stillAway:
		case err := <-done:
			assert.EqualError(t, err, "not_connected: computer 7: disconnected; it did not come back within 1m0s (--wait)")
			ended = true
		}
	}

	for _, why := range []string{
		`{"code":"not_connected","message":"computer 7:kitchen was relabelled: it is 7:pantry now; ask it by that id","relabelledTo":"7:pantry"}`,
		`{"code":"not_connected","message":"computer 7: was cut off: its credential was revoked; it connects again once linked anew (sandbox link on it) or given a new credential"}`,
		`{"code":"forbidden","message":"computer 7: says the screen watch ended: the owner withdrew sandbox.allow_screen"}`,
	} {
		err := v.run(t.Context(), typed, strings.NewReader("event: end\ndata: {\"ok\":false,\"error\":"+why+"}\n\n"))
		assert.ErrorContains(t, err, ": ", why)
		assert.NotContains(t, err.Error(), "did not come back", "ended at once: %s", why)
	}
}

// A computer that went away and is relabelled while the view waits for it (the gateway's
// answer names its new traposId, relabelledTo) never comes back under the old one: the view
// ends naming the new one, as when the stream itself ends with the relabel, where it asked
// for the old id until --wait ran out.
func TestTheScreenViewerWaitingForAComputerEndsWhenItWasRelabelled(t *testing.T) {
	clock := &busyClock{}
	relabelled := protocol.Errorf(protocol.CodeNotConnected, "computer 7:kitchen was relabelled: it is 7:pantry now; ask it by that id")
	relabelled.RelabelledTo = "7:pantry"
	asked := 0
	v := &viewer{out: io.Discard, after: clock.after, send: func(context.Context, []computer.InputEvent) error { return nil },
		reopen: func(ctx context.Context) (io.ReadCloser, error) {
			if asked++; asked > 3 { // a view that kept asking: ended here, not left to hang
				return nil, errors.New("asked again and again")
			}
			return nil, refusal{relabelled}
		}}
	typed, typing := io.Pipe()
	defer typing.Close()
	err := v.run(t.Context(), typed, strings.NewReader("event: end\ndata: {\"ok\":false,\"error\":{\"code\":\"not_connected\",\"message\":\"computer 7:kitchen disconnected\"}}\n\n"))
	assert.EqualError(t, err, "not_connected: computer 7:kitchen was relabelled: it is 7:pantry now; ask it by that id")
	assert.Equal(t, 1, asked, "not asked again")
}

func TestTheScreenViewerEndsWhenTheComputerGoesAway(t *testing.T) {
	v := &viewer{out: io.Discard, send: func(context.Context, []computer.InputEvent) error { return nil }}
	typed, typing := io.Pipe()
	defer typing.Close()
	err := v.run(t.Context(), typed, strings.NewReader("event: end\ndata: {\"ok\":false,\"error\":{\"code\":\"not_connected\",\"message\":\"computer 7: the computer disconnected\"}}\n\n"))
	assert.EqualError(t, err, "not_connected: computer 7: the computer disconnected")
}

// TestTheScreenViewerLeavesQuietlyOnASignal: SIGINT or SIGTERM (main's context) ends the
// view as Ctrl-S does, with no "context canceled" printed as if it had failed.
func TestTheScreenViewerLeavesQuietlyOnASignal(t *testing.T) {
	v := &viewer{out: io.Discard, send: func(context.Context, []computer.InputEvent) error { return nil }}
	typed, typing := io.Pipe()
	defer typing.Close()
	stream, streaming := io.Pipe()
	defer streaming.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.NoError(t, v.run(ctx, typed, stream))
}

// TestTheScreenStreamIsAskedForAsAnEventStream: the live view is asked for through the API's
// client (the token, Accept: text/event-stream, the traposId escaped in the path) and read as
// it comes; a refusal is the gateway's own words (the owner's, for the computer's refusal of
// the watch), and a wrong URL is named with its fix.
func TestTheScreenStreamIsAskedForAsAnEventStream(t *testing.T) {
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer tok":
			server.WriteError(w, http.StatusUnauthorized, protocol.CodeUnauthorized, "give a token")
		case r.URL.EscapedPath() == "/trapos/computers/9:/screen":
			// As the screen module answers the computer's refusal of the watch.
			server.WriteError(w, http.StatusForbidden, protocol.CodeForbidden,
				"screen.watch needs sandbox.allow_screen view (it is none); the owner can allow it with: set sandbox.allow_screen view")
		case r.URL.EscapedPath() != "/trapos/computers/7:k%C3%BCche/screen" || r.Header.Get("Accept") != "text/event-stream":
			server.WriteError(w, http.StatusNotFound, protocol.CodeNotConnected, "computer 8: is not connected")
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: frame\ndata: {}\n\n")
		}
	}))
	defer gw.Close()
	c := &ScreenCmd{APIFlags: APIFlags{URL: gw.URL, APIToken: "tok"}, TraposID: "7:küche"}
	body, err := c.stream(t.Context(), io.Discard)
	require.NoError(t, err)
	data, err := io.ReadAll(body)
	require.NoError(t, body.Close())
	require.NoError(t, err)
	assert.Equal(t, "event: frame\ndata: {}\n\n", string(data))

	c.TraposID = "8:"
	_, err = c.stream(t.Context(), io.Discard)
	assert.EqualError(t, err, "computer 8: screen: the gateway answered not_connected: the computer is not connected")
	c.TraposID = "9:"
	_, err = c.stream(t.Context(), io.Discard)
	assert.EqualError(t, err, "computer 9: screen: the computer answered forbidden: screen.watch needs sandbox.allow_screen view (it is none); the owner can allow it with: set sandbox.allow_screen view",
		"the owner's refusal is the computer's, as request screen.read words it: not a 403 of the gateway's, which reads as a token refused")
	c.APIToken = ""
	_, err = c.stream(t.Context(), io.Discard)
	assert.ErrorContains(t, err, "(give the API token with --api-token or SANDBOX_API_TOKEN)")
	c.URL = "ws://" + strings.TrimPrefix(gw.URL, "http://")
	_, err = c.stream(t.Context(), io.Discard)
	assert.ErrorContains(t, err, "is the computers' WebSocket URL: the API is at the same address with http://")
}

// TestTheLiveViewOfAComputerThatWentSaysToAskAgain: the live view asked for as its computer
// went away before it answered the watch says, as a read, to ask again once it is back, with
// the CLI's way to see it back, where the API's answer names the API's (GET /trapos/computers)
// and it said "check before you ask again".
func TestTheLiveViewOfAComputerThatWentSaysToAskAgain(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Label = "küche"
	d.List[0].TraposID = d.TraposID()
	d.Before = func(_ context.Context, _ int, typ string) error {
		if typ == protocol.TypeScreenWatch {
			return computer.LeftBeforeAnswer(d.TraposID(), false)
		}
		return nil
	}
	gw := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, screen.New(computer.New(d))).Handler())
	defer gw.Close()
	c := &ScreenCmd{APIFlags: APIFlags{URL: gw.URL}, TraposID: "7:küche"}
	_, err := c.stream(t.Context(), io.Discard)
	assert.EqualError(t, err, "computer 7:küche screen: the gateway answered not_connected: the computer disconnected before it answered; "+
		"a read changes nothing: ask again once it is back (trap-sandbox computers lists it then)")
}

// openTerminal opens a pseudo-terminal of cols×rows: ptmx, the terminal's side, resizes it;
// tty is what the command reads as its stdin. Both close when the test ends.
func openTerminal(t *testing.T, cols, rows uint16) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = ptmx.Close()
		_ = tty.Close()
	})
	require.NoError(t, pty.Setsize(ptmx, &pty.Winsize{Cols: cols, Rows: rows}))
	return ptmx, tty
}

// TestTheScreenViewerRefusesATerminalTooSmall: in a terminal too small for the view (narrower
// than a pocket computer's 26 columns, or under 4 rows), `trap-sandbox screen` says what it
// needs in one line and never opens the stream; a terminal of that size opens it, as does one
// smaller than the screen (40×10, where the view was refused: the screen's top left is shown).
func TestTheScreenViewerRefusesATerminalTooSmall(t *testing.T) {
	var streams atomic.Int32
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		streams.Add(1)
		server.WriteError(w, http.StatusNotFound, protocol.CodeNotConnected, "computer 7: is not connected")
	}))
	defer gw.Close()
	ptmx, tty := openTerminal(t, 25, 3)
	c := &ScreenCmd{APIFlags: APIFlags{URL: gw.URL}, TraposID: "7:", Colours: "256"}

	err := c.Run(t.Context(), Stdout{io.Discard}, Stdin{tty})
	require.Error(t, err)
	assert.Equal(t, "this terminal is 25×3, and the view needs 26×4 at least: make it larger (`trap-sandbox screen --url "+gw.URL+" 7: --once` reads the screen once)", err.Error())
	assert.Zero(t, streams.Load(), "nothing drawn, no watch started")

	for i, size := range []pty.Winsize{{Cols: 26, Rows: 4}, {Cols: 40, Rows: 10}} {
		require.NoError(t, pty.Setsize(ptmx, &size))
		err = c.Run(t.Context(), Stdout{io.Discard}, Stdin{tty})
		assert.ErrorContains(t, err, "not_connected", "a terminal of %d×%d opens the stream", size.Cols, size.Rows)
		assert.Equal(t, int32(i+1), streams.Load())
	}
}

// TestTheScreenViewerLooksAgainWhenItsGatewayStops: the gateway that served the view shutting
// down (its stream's end, "the gateway is shutting down") took the computer's socket with it,
// and the view ended at once, saying nothing of what to do. Behind a load balancer another
// replica at the same --url shows the computer once its daemon has connected there: the view
// waits for that, as for a computer that went away, saying so, and is live again. No gateway
// answering at --url (one gateway restarting, where nothing listens for a moment; a load
// balancer whose every replica is down, which answers its 502 page) is waited for too, said on
// the status line: the view ended at its first look, a quarter of a second after the stop, so a
// gateway restarted was not found again, and a balancer's 502 page was the view's last words.
// When --wait runs out with no gateway there, it ends saying the gateway stopped and what to
// do.
func TestTheScreenViewerLooksAgainWhenItsGatewayStops(t *testing.T) {
	stopping := endEvent(gateway.ErrShuttingDown)
	a := startAwayView(t, 120, "0")
	v, out, clock, reopens, typed, streaming, done, frame := a.v, a.out, a.clock, a.reopens, a.typed, a.streaming, a.done, a.frame

	// Behind a load balancer: another replica answers, the computer not yet connected there,
	// then shows it.
	frame(streaming, "> on replica a")
	_, err := io.WriteString(streaming, stopping)
	require.NoError(t, err)
	status := "the gateway is shutting down; waiting up to 1m0s for another gateway at --url; Ctrl-S held leaves"
	require.Eventually(t, func() bool { return strings.Contains(out.String(), status) }, 5*time.Second, time.Millisecond,
		"the status line says why the view waits:\n%q", out.String())
	reopens <- func() (io.ReadCloser, error) {
		return nil, protocol.Errorf(protocol.CodeNotConnected, "computer 7: is not connected")
	}
	back, backing := io.Pipe()
	defer backing.Close()
	reopens <- func() (io.ReadCloser, error) { return back, nil }
	frame(backing, "BBBBBBBBBBBBBBBB")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "BBBBBBBBBBBBBBBB") }, 5*time.Second, time.Millisecond)

	// One gateway restarting: nothing listens at --url for a moment, then it answers without
	// the computer, then with it; a balancer with every replica down answers its 502 page.
	_, err = io.WriteString(backing, stopping)
	require.NoError(t, err)
	mark := len(out.String())
	reopens <- func() (io.ReadCloser, error) { return nil, hostapi.NoGatewayError{URL: "http://127.0.0.1:4444"} }
	none := "no gateway answers at http://127.0.0.1:4444; waiting up to 1m0s for one to start there; Ctrl-S held leaves"
	require.Eventually(t, func() bool { return strings.Contains(out.String()[mark:], none) }, 5*time.Second, time.Millisecond,
		"the status line says the view waits for a gateway:\n%q", out.String())
	reopens <- func() (io.ReadCloser, error) {
		return nil, refusal{noGatewayBehind{url: "https://lb.example", error: protocol.Errorf(protocol.CodeInternal, "a proxy's 502 page")}}
	}
	mark = len(out.String())
	reopens <- func() (io.ReadCloser, error) {
		return nil, protocol.Errorf(protocol.CodeNotConnected, "computer 7: is not connected")
	}
	require.Eventually(t, func() bool { return strings.Contains(out.String()[mark:], status) }, 5*time.Second, time.Millisecond,
		"a gateway answers again: the view waits for the computer there:\n%q", out.String())
	assert.NotContains(t, out.String(), "502")
	again, returning := io.Pipe()
	defer returning.Close()
	reopens <- func() (io.ReadCloser, error) { return again, nil }
	frame(returning, "CCCCCCCCCCCCCCCC")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "CCCCCCCCCCCCCCCC") }, 5*time.Second, time.Millisecond)

	// Stopped for good: no gateway at --url when --wait runs out (as the view looks again).
	mark = len(out.String())
	_, err = io.WriteString(returning, stopping)
	require.NoError(t, err)
	noGateway := func() (io.ReadCloser, error) { return nil, hostapi.NoGatewayError{URL: "http://127.0.0.1:4444"} }
	reopens <- noGateway
	require.Eventually(t, func() bool { return strings.Contains(out.String()[mark:], none) }, 5*time.Second, time.Millisecond)
	clock.deadline <- time.Time{}
	reopens <- noGateway
	err = <-done
	stopped := "the gateway at http://127.0.0.1:4444 stopped: start it again, or point --url at another replica; none answered there within 1m0s (--wait)"
	assert.EqualError(t, err, stopped)
	c := &ScreenCmd{TraposID: "7:kitchen"}
	assert.EqualError(t, c.viewFailure("", err), "computer 7:kitchen screen: "+stopped)

	// Still away when --wait runs out: the computer did not come back, not "it", the gateway.
	v.reopen = func(context.Context) (io.ReadCloser, error) {
		return nil, protocol.Errorf(protocol.CodeNotConnected, "computer 7: is not connected")
	}
	clock.deadline <- time.Time{}
	err = v.run(t.Context(), typed, strings.NewReader(stopping))
	assert.EqualError(t, err, "not_connected: the gateway is shutting down; the computer did not come back within 1m0s (--wait)")
}

// TestTheScreenViewerDrawsInATerminalThatSaysNoSize: a terminal whose size reads 0×0 has none
// set (a pty whose opener never set it: script(1) run from a pipe, docker exec -t before its
// first resize); it is drawn in as one whose size cannot be read, not refused as "this one is
// 0×0: make it larger", which no one can do to it.
func TestTheScreenViewerDrawsInATerminalThatSaysNoSize(t *testing.T) {
	gw := stoppingGateway(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "event: frame\ndata: {\"seq\":1,\"width\":51,\"height\":19,\"colour\":true,\"cursor\":{\"x\":1,\"y\":1,\"blink\":false},\"rows\":[{\"text\":\"kitchen\",\"fg\":\"0000000\",\"bg\":\"fffffff\"}]}\n\n")
	})
	_, tty := openTerminal(t, 0, 0)
	c := untilStopped(&ScreenCmd{APIFlags: APIFlags{URL: gw.URL}, TraposID: "7:", Colours: "256"})

	var out bytes.Buffer
	err := c.Run(t.Context(), Stdout{&out}, Stdin{tty})
	assert.EqualError(t, err, "computer 7: screen: "+stoppedAt(gw), "drawn until the gateway stopped")
	assert.Contains(t, out.String(), "kitchen")
}

// TestTheScreenViewerReadsTheGatewayStoppingByItsMark: the view tells the gateway stopping
// from the computer leaving by the end's mark (Stopping), which the gateway sets, never by its
// words, which it compared before: a rewording of the gateway's words read as the computer
// gone, and the view waited "for it to come back" as its gateway stopped. The words alone (a
// gateway of a build before the mark) are the computer gone: the view looks again all the same.
func TestTheScreenViewerReadsTheGatewayStoppingByItsMark(t *testing.T) {
	for _, tc := range []struct {
		name               string
		why                *protocol.Error
		stopping, comeBack bool
	}{
		{"the gateway's own", gateway.ErrShuttingDown, true, false},
		{"reworded", &protocol.Error{Code: protocol.CodeNotConnected, Message: "the gateway stops", Stopping: true}, true, false},
		{"the words alone", &protocol.Error{Code: protocol.CodeNotConnected, Message: gateway.ErrShuttingDown.Message}, false, true},
		{"the computer gone", screen.Disconnected("7:"), false, true},
		{"the holder replica gone", &protocol.Error{Code: protocol.CodeNotConnected, Message: "computer 7: is not connected: replica b, which held its socket, has stopped", ReplicaGone: "b"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var end struct {
				Error *protocol.Error `json:"error"`
			}
			data, _ := strings.CutPrefix(strings.TrimSpace(endEvent(tc.why)), "event: end\ndata: ")
			require.NoError(t, json.Unmarshal([]byte(data), &end), "as the view reads the stream's end")
			why := streamEnded{why: end.Error}
			assert.Equal(t, tc.stopping, gatewayStopping(why), "gatewayStopping")
			assert.Equal(t, tc.comeBack, comesBack(why), "comesBack")
		})
	}
}

// endEvent is the screen stream's end event of why, as the gateway writes it: its marks
// (Stopping, Left) with its words. A handler's goroutine writes it: it takes no t.
func endEvent(why *protocol.Error) string {
	data, _ := json.Marshal(server.Answer{Error: why}) // strings and bools: it cannot fail
	return "event: end\ndata: " + string(data) + "\n\n"
}

// stoppingGateway is a gateway that serves one screen stream, frames drawing its frames, and
// stops as a real one does: the stream ends "the gateway is shutting down", and nothing listens
// at its address from then on. Closed when the test ends.
func stoppingGateway(t *testing.T, frames func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	t.Helper()
	var gw *httptest.Server
	gw = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/screen") {
			server.WriteError(w, http.StatusNotFound, protocol.CodeNotConnected, "computer 7: is not connected")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Connection", "close") // no connection kept for the view's next look
		frames(w, r)
		fmt.Fprint(w, endEvent(gateway.ErrShuttingDown))
		_ = gw.Listener.Close()
	}))
	t.Cleanup(gw.Close)
	return gw
}

// stoppedAt is how the view ends once stoppingGateway gw has stopped (untilStopped).
func stoppedAt(gw *httptest.Server) string {
	return "the gateway at " + gw.URL + " stopped: start it again, or point --url at another replica; none answered there within 1m0s (--wait)"
}

// untilStopped makes c's view, of a stoppingGateway, end once it has looked again for its
// computer and found no gateway: --wait is a minute, which runs out as the view asks for its
// second wait (stopClock), after its first look again was answered.
func untilStopped(c *ScreenCmd) *ScreenCmd {
	clock := &stopClock{bound: time.Minute, deadline: make(chan time.Time)}
	c.Wait, c.after = clock.bound, clock.after
	return c
}

// stopClock is the clock of a view whose gateway stopped for good: each look again waits as
// time.After does, and --wait (bound) runs out as the view asks for its second wait: its first
// look again has been answered by then.
type stopClock struct {
	bound    time.Duration
	deadline chan time.Time
	waits    atomic.Int32
}

func (c *stopClock) after(d time.Duration) <-chan time.Time {
	if d == c.bound {
		return c.deadline
	}
	if c.waits.Add(1) == 2 {
		close(c.deadline)
	}
	return time.After(d)
}

// TestTheScreenViewerFitsAPocketComputerInANarrowTerminal: a pocket computer's 26×20 screen
// fits a terminal 30 columns wide (a phone's), which was refused as narrower than 51; the
// first frame says the screen's size, and an ordinary computer's 51×19, which was refused
// there, is shown by its top left, the status line saying how much.
func TestTheScreenViewerFitsAPocketComputerInANarrowTerminal(t *testing.T) {
	var width atomic.Int32
	width.Store(26)
	pocket := func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "event: frame\ndata: {\"seq\":1,\"width\":%d,\"height\":%d,\"colour\":true,\"cursor\":{\"x\":1,\"y\":1,\"blink\":false},\"rows\":[{\"text\":\"pocket\",\"fg\":\"000000\",\"bg\":\"ffffff\"}]}\n\n", width.Load(), 19+width.Load()%2)
	}
	gw := stoppingGateway(t, pocket)
	_, tty := openTerminal(t, 30, 19)
	c := untilStopped(&ScreenCmd{APIFlags: APIFlags{URL: gw.URL}, TraposID: "7:", Colours: "256"})

	var out bytes.Buffer
	err := c.Run(t.Context(), Stdout{&out}, Stdin{tty})
	assert.EqualError(t, err, "computer 7: screen: "+stoppedAt(gw), "drawn until the gateway stopped")
	assert.Contains(t, out.String(), "pocket")

	width.Store(51)
	out.Reset()
	gw = stoppingGateway(t, pocket)
	c = untilStopped(&ScreenCmd{APIFlags: APIFlags{URL: gw.URL}, TraposID: "7:", Colours: "256"})
	err = c.Run(t.Context(), Stdout{&out}, Stdin{tty})
	assert.EqualError(t, err, "computer 7: screen: "+stoppedAt(gw), "drawn until the gateway stopped")
	assert.Contains(t, out.String(), "pocket")
	assert.Contains(t, out.String(), "\x1b[7m30×17 of 51×20 shown\x1b[0m")
}

// TestTheScreenViewerWaitsForABusyComputer: when the host's other requests take all of the
// computer's (busy, "retry shortly"), `trap-sandbox screen` says so once and asks again until
// the gateway answers otherwise, as the web console does; before, it ended at the first busy
// answer. The terminal is not raw while it waits: a SIGINT (main's context) ends the wait
// quietly.
func TestTheScreenViewerWaitsForABusyComputer(t *testing.T) {
	var asked atomic.Int32
	const busy = 2
	busyAnswered := make(chan struct{}, 1)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked.Add(1) <= busy {
			server.WriteAnswer(w, http.StatusTooManyRequests, server.Answer{Error: protocol.Errorf(protocol.CodeBusy,
				"the computer already has 31 requests in flight; retry shortly")})
			select {
			case busyAnswered <- struct{}{}:
			default:
			}
			return
		}
		server.WriteError(w, http.StatusNotFound, protocol.CodeNotConnected, "computer 7: is not connected")
	}))
	defer gw.Close()
	_, tty := openTerminal(t, 51, 19)
	clock := &busyClock{}
	c := &ScreenCmd{APIFlags: APIFlags{URL: gw.URL}, TraposID: "7:", Colours: "256", after: clock.after}

	out := &testkit.SyncBuffer{}
	err := c.Run(t.Context(), Stdout{out}, Stdin{tty})
	assert.EqualError(t, err, "computer 7: screen: the gateway answered not_connected: the computer is not connected",
		"the answer after the busy ones is the outcome")
	assert.Equal(t, int32(busy+1), asked.Load(), "asked again while busy")
	assert.Equal(t, []time.Duration{time.Second, time.Second}, clock.waits(), "the answer's Retry-After: 1")
	assert.Equal(t, "computer 7: screen: the gateway answered busy: the computer already has 31 requests in flight; retry shortly\n"+
		"Trying again every 1s (Ctrl-C to stop)…\n", out.String(), "said once")

	asked.Store(-1 << 20) // busy from now on
	select {
	case <-busyAnswered: // the first part's
	default:
	}
	ctx, cancel := context.WithCancel(t.Context())
	c.after = nil
	go func() {
		select {
		case <-busyAnswered:
		case <-ctx.Done():
		}
		cancel() // as main's context ends at SIGINT
	}()
	assert.NoError(t, c.Run(ctx, Stdout{io.Discard}, Stdin{tty}), "a signal while it waits ends it quietly")
}

// busyClock is the clock of a viewer's busy waits in a test: each wait is recorded and over
// at once.
type busyClock struct {
	mu   sync.Mutex
	seen []time.Duration
}

func (c *busyClock) after(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, d)
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

func (c *busyClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

// busyAnswers is a gateway's host API that answers busy with each Retry-After of retryAfter in
// turn ("" for none), then not_connected (the stream), or ok (anything else: a request);
// settled is closed at the first answer that is not busy.
func busyAnswers(t *testing.T, retryAfter ...string) (gw *httptest.Server, settled <-chan struct{}) {
	var asked atomic.Int32
	notBusy := make(chan struct{})
	var once sync.Once
	gw = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(asked.Add(1)) - 1
		if n >= len(retryAfter) {
			defer once.Do(func() { close(notBusy) })
			if r.Method == http.MethodGet {
				server.WriteError(w, http.StatusNotFound, protocol.CodeNotConnected, "computer 7: is not connected")
				return
			}
			server.WriteAnswer(w, http.StatusOK, server.Answer{OK: true, Payload: []byte(`{"queued":1}`)})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if retryAfter[n] != "" {
			w.Header().Set("Retry-After", retryAfter[n])
		}
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"ok":false,"error":{"code":"busy","message":"the computer already has 31 requests in flight; retry shortly"}}`))
	}))
	t.Cleanup(gw.Close)
	return gw, notBusy
}

// TestTheScreenViewerWaitsAsTheBusyAnswerSays: `trap-sandbox screen` waits for a busy
// computer as long as the busy answer's Retry-After says (it waited server.BusyRetry
// whatever the gateway said), as the web console does: at most a minute (a broken or hostile
// gateway's day must not hang it), and the default (1 s) when the header names no wait in
// seconds (none, 0, a date, a word), so that it never asks again in a loop. The view's keys
// wait the same.
func TestTheScreenViewerWaitsAsTheBusyAnswerSays(t *testing.T) {
	sayings := []string{"7", "86400", "99999999999999999999", "0", "-3", "soon", "Wed, 21 Oct 2015 07:28:00 GMT", ""}
	want := []time.Duration{7 * time.Second, time.Minute, time.Second, time.Second, time.Second, time.Second, time.Second, time.Second}

	gw, _ := busyAnswers(t, sayings...)
	_, tty := openTerminal(t, 51, 19)
	clock := &busyClock{}
	c := &ScreenCmd{APIFlags: APIFlags{URL: gw.URL}, TraposID: "7:", Colours: "256", after: clock.after}
	out := &testkit.SyncBuffer{}
	err := c.Run(t.Context(), Stdout{out}, Stdin{tty})
	assert.ErrorContains(t, err, "not_connected", "the answer after the busy ones is the outcome")
	assert.Equal(t, want, clock.waits())
	assert.Contains(t, out.String(), "Trying again every 7s (Ctrl-C to stop)…\n", "the first answer's wait")

	// The keys typed on the view, sent as screen.input requests through the host API.
	gw, settled := busyAnswers(t, sayings...)
	c = &ScreenCmd{APIFlags: APIFlags{URL: gw.URL}, TraposID: "7:"}
	keys := &busyClock{}
	v := &viewer{out: io.Discard, after: keys.after, busyRetry: server.BusyRetry,
		send: func(ctx context.Context, evs []computer.InputEvent) error {
			_, _, err := c.client().TypeInput(ctx, c.TraposID, evs, 0)
			return err
		}}
	queue := make(chan []computer.InputEvent, 1)
	queue <- []computer.InputEvent{{Type: "key", Name: "a"}}
	ctx, cancel := context.WithCancel(t.Context())
	sent := make(chan error)
	done := make(chan struct{})
	go func() {
		defer close(done)
		v.sendKeys(ctx, queue, sent)
	}()
	assert.NoError(t, <-sent, "the keys went through")
	<-settled
	cancel()
	<-done
	assert.Equal(t, want, keys.waits())
}

// TestTheScreenViewerNeedsATerminal: a pipe or a reader on stdin gets one line naming the
// way to read the screen without a terminal, not the ioctl's errno; that way runs as written,
// as every command line a message names (commandLine): the gateway's --url and a traposId
// one shell word (it said `trap-sandbox request 7:my door screen.read`, which went to the
// default URL and named the computer 7:my).
func TestTheScreenViewerNeedsATerminal(t *testing.T) {
	c := &ScreenCmd{APIFlags: APIFlags{URL: "http://127.0.0.1:1"}, TraposID: "7:my door", Colours: "256"}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	const want = "stdin is not a terminal, which it needs for your keys; `trap-sandbox screen --url http://127.0.0.1:1 '7:my door' --once` reads the screen once"
	for _, in := range []io.Reader{r, strings.NewReader("ls\n")} {
		err := c.Run(t.Context(), Stdout{io.Discard}, Stdin{in})
		require.Error(t, err)
		assert.Equal(t, want, err.Error())
	}
}

// TestTheScreenViewerMapsTextByTheRule: the stream's rows and the terminal's typed bytes cross
// by the text rule (cctext) as on every surface: the computer's byte E9 is é and back, and a
// character CC cannot hold is drawn as CC draws it, '?'.
func TestTheScreenViewerMapsTextByTheRule(t *testing.T) {
	var f screen.FrameJSON
	f.Rows = []computer.Row{{Text: "é日\u0080x"}}
	snap := snapshotOf(f)
	assert.Equal(t, []byte{0xe9, '?', 0x80, 'x', ' '}, []byte{snap.Cells[0][0].Char, snap.Cells[0][1].Char,
		snap.Cells[0][2].Char, snap.Cells[0][3].Char, snap.Cells[0][4].Char})

	evs, err := eventsOf(console.Input{Events: []console.Event{{Name: "char", Text: "\xe9"}, {Name: "paste", Text: "caf\xe9"}}}, &pointer{})
	require.NoError(t, err)
	assert.Equal(t, []computer.InputEvent{{Type: computer.InputChar, Text: "é"}, {Type: computer.InputPaste, Text: "café"}}, evs)

	// A bracketed paste goes as CC's own paste makes it (docs/screen.md): its first line, € as ?.
	var d console.Decoder
	inputs := d.Feed([]byte("\x1b[200~küche €\nzwei\x1b[201~"))
	require.Len(t, inputs, 1)
	evs, err = eventsOf(inputs[0], &pointer{})
	require.NoError(t, err)
	assert.Equal(t, []computer.InputEvent{{Type: computer.InputPaste, Text: "küche ?"}}, evs)
}

// TestTheScreenViewerShowsAPocketComputer: a pocket computer's frame (26×20) is drawn at its
// size, its 20th row too (frames were cut to 51×19), and the mouse's cells are its own: a
// click on its 20th row reaches it, one right of its 26th column does not.
func TestTheScreenViewerShowsAPocketComputer(t *testing.T) {
	out := &testkit.SyncBuffer{}
	sent := make(chan []computer.InputEvent)
	v := &viewer{out: out, send: sendsTo(sent)}
	typing, streaming, done := startViewer(t.Context(), t, v)

	rows := strings.Repeat(`{"text":""},`, 19) + `{"text":"bottom row"}`
	_, err := fmt.Fprintf(streaming, "event: frame\ndata: {\"seq\":1,\"width\":26,\"height\":20,\"colour\":true,\"cursor\":{\"x\":1,\"y\":20,\"blink\":false},\"rows\":[%s]}\n\n", rows)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "bottom row") }, 5*time.Second, time.Millisecond)
	assert.Contains(t, out.String(), "\x1b[20;1H")
	assert.NotContains(t, out.String(), "\x1b[1;27H", "nothing is drawn right of its 26 columns")

	_, err = typing.Write([]byte("\x1b[<0;30;1M\x1b[<0;26;20M"))
	require.NoError(t, err)
	assert.Equal(t, []computer.InputEvent{{Type: computer.InputClick, Button: 1, X: 26, Y: 20}}, <-sent)
	_, err = typing.Write([]byte("\x13"))
	require.NoError(t, err)
	<-sent
	_, err = typing.Write([]byte("\x13"))
	require.NoError(t, err)
	assert.NoError(t, <-done, "Ctrl-S held leaves")
	_ = typing.Close()
	_ = streaming.Close()
}

// TestTheScreenViewerSendsNoMouseToABasicComputer: on a basic computer (its frames' colour
// false) the terminal's clicks, drags and wheel send nothing, as CC fires no mouse event there,
// and the keys typed with them go as ever. Before, the view sent them, and the computer's client
// (0.5.26 on) refused the whole request, the keys typed with the click too.
func TestTheScreenViewerSendsNoMouseToABasicComputer(t *testing.T) {
	out := &testkit.SyncBuffer{}
	sent := make(chan []computer.InputEvent)
	v := &viewer{out: out, send: sendsTo(sent)}
	typing, streaming, done := startViewer(t.Context(), t, v)

	_, err := fmt.Fprint(streaming, "event: frame\ndata: {\"seq\":1,\"width\":51,\"height\":19,\"colour\":false,\"cursor\":{\"x\":1,\"y\":1,\"blink\":false},\"rows\":[{\"text\":\"greys\"}]}\n\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "greys") }, 5*time.Second, time.Millisecond)

	// A press, a drag, the release and the wheel, then a key, in one read.
	_, err = typing.Write([]byte("\x1b[<0;3;1M\x1b[<32;4;1M\x1b[<0;4;1m\x1b[<65;4;1Ma"))
	require.NoError(t, err)
	evs := <-sent
	for _, ev := range evs {
		assert.NotContains(t, []string{computer.InputClick, computer.InputMouseClick, computer.InputDrag,
			computer.InputMouseUp, computer.InputScroll}, ev.Type, "no mouse event: %+v", evs)
	}
	assert.Contains(t, evs, computer.InputEvent{Type: computer.InputChar, Text: "a"}, "the key goes: %+v", evs)
	_, err = typing.Write([]byte("\x13"))
	require.NoError(t, err)
	<-sent
	_, err = typing.Write([]byte("\x13"))
	require.NoError(t, err)
	assert.NoError(t, <-done, "Ctrl-S held leaves")
	_ = typing.Close()
	_ = streaming.Close()
}

// viewedThenControlled is a viewer's computer.info of a computer whose client is version: the
// first answer says the screen is only viewed, every later one that it is controlled. Each
// answer shows on the status line (runControlledView waits on it), so a test knows the view
// has taken the client's version before it moves the mouse.
func viewedThenControlled(version string) func(context.Context) (computer.Info, error) {
	var looks atomic.Int32
	return func(context.Context) (computer.Info, error) {
		screen := computer.ScreenControl
		if looks.Add(1) == 1 {
			screen = computer.ScreenView
		}
		return computer.Info{ClientVersion: version, Allowed: &computer.Allowed{Screen: screen}}, nil
	}
}

// runControlledView runs v (its info viewedThenControlled) until ctx ends or it leaves, and
// returns once its status line said view-only and then went with a key typed: the view is
// controlled. typing types at the view; done gets run's result.
func runControlledView(t *testing.T, ctx context.Context, v *viewer, out *testkit.SyncBuffer) (typing *io.PipeWriter, done chan error) {
	t.Helper()
	typed, typing := io.Pipe()
	t.Cleanup(func() { _ = typing.Close() })
	stream, streaming := io.Pipe()
	t.Cleanup(func() { _ = streaming.Close() })
	done = make(chan error, 1)
	go func() { done <- v.run(ctx, typed, stream) }()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "\x1b[7m"+viewOnlyStatus) },
		5*time.Second, time.Millisecond, "view-only at first: %q", out.String())
	typeOn(t, typing, "a") // asks again: controlled now
	require.Eventually(t, func() bool { return saysOnlyTheWayOut(out.String(), 20) },
		5*time.Second, time.Millisecond, "the status line goes")
	return typing, done
}

// TestTheScreenViewerDragsAsTheComputersClientTakes: the terminal's mouse reports (SGR: a
// press, moves with the button held, the release) reach a computer whose client takes a
// press apart from its release (0.5.22) as the web console sends a browser's: mouse_click,
// a drag a cell, and mouse_up where the button was let go, so paint draws along the drag and a
// program that ends a stroke on mouse_up ends it there. A client that takes drags but not the
// press apart (0.5.21) gets the press as a click, then the drags; an older one the click alone,
// as before (a drag would have it refuse the whole call). Before, every client got the click
// alone: the view sent no drag.
func TestTheScreenViewerDragsAsTheComputersClientTakes(t *testing.T) {
	drag := func(x, y int) computer.InputEvent {
		return computer.InputEvent{Type: computer.InputDrag, Button: 1, X: x, Y: y}
	}
	// Pressed on 3,2; moved within it, onto 4,2 and 5,3; let go on 5,3.
	const dragged = "\x1b[<0;3;2M\x1b[<32;3;2M\x1b[<32;4;2M\x1b[<32;5;3M"
	const letGo = "\x1b[<0;5;3m"
	for _, c := range []struct {
		name, client, typed string
		want                []computer.InputEvent
	}{
		{"0.5.22", "0.5.22", dragged + letGo, []computer.InputEvent{{Type: computer.InputMouseClick, Button: 1, X: 3, Y: 2}, drag(4, 2), drag(5, 3),
			{Type: computer.InputMouseUp, Button: 1, X: 5, Y: 3}}},
		// Ctrl-S held with the button still down: the view lets it go where it was, as it leaves.
		{"0.5.22 left while held", "0.5.22", dragged, []computer.InputEvent{{Type: computer.InputMouseClick, Button: 1, X: 3, Y: 2}, drag(4, 2), drag(5, 3),
			{Type: computer.InputMouseUp, Button: 1, X: 5, Y: 3}}},
		{"0.5.21", "0.5.21", dragged + letGo, []computer.InputEvent{{Type: computer.InputClick, Button: 1, X: 3, Y: 2}, drag(4, 2), drag(5, 3)}},
		{"0.5.20", "0.5.20", dragged + letGo, []computer.InputEvent{{Type: computer.InputClick, Button: 1, X: 3, Y: 2}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := &testkit.SyncBuffer{}
			sent := make(chan []computer.InputEvent, 16)
			v := &viewer{out: out, size: termOf(80, 24),
				send: func(_ context.Context, evs []computer.InputEvent) error {
					sent <- evs
					return nil
				},
				info: viewedThenControlled(c.client)}
			typing, done := runControlledView(t, t.Context(), v, out)

			typeOn(t, typing, c.typed)
			typeOn(t, typing, "\x13\x13") // Ctrl-S held leaves, once what was typed before it is sent
			require.NoError(t, <-done)
			close(sent)
			var got []computer.InputEvent // the mouse's: Ctrl-S's first press is a key for the computer
			for evs := range sent {
				for _, ev := range evs {
					if ev.Button != 0 {
						got = append(got, ev)
					}
				}
			}
			assert.Equal(t, c.want, got)
		})
	}
}

// TestTheScreenViewerLeftBySignalLetsGoAHeldButton: a SIGINT or SIGTERM from outside leaves the
// view as Ctrl-S held does (docs/screen.md), a button still held let go where it was: it
// returned at once, its sends cancelled with it, and a drag under way when the view was
// killed left the button down on the computer for ever (paint's stroke never ended).
func TestTheScreenViewerLeftBySignalLetsGoAHeldButton(t *testing.T) {
	sent := make(chan []computer.InputEvent, 16)
	out := &testkit.SyncBuffer{}
	v := &viewer{out: out, size: termOf(80, 24),
		send: func(ctx context.Context, evs []computer.InputEvent) error {
			if err := ctx.Err(); err != nil {
				return err // as the gateway's client: a call on an ended context goes nowhere
			}
			sent <- evs
			return nil
		},
		info: viewedThenControlled("0.5.22")}
	ctx, signalled := context.WithCancel(t.Context())
	defer signalled()
	typing, done := runControlledView(t, ctx, v, out)

	// Pressed on 3,2 and moved onto 4,3, the button still down.
	typeOn(t, typing, "\x1b[<0;3;2M\x1b[<32;4;3M")
	held := computer.InputEvent{Type: computer.InputDrag, Button: 1, X: 4, Y: 3}
	var got []computer.InputEvent
	for !slices.Contains(got, held) {
		got = append(got, <-sent...)
	}
	signalled() // SIGINT or SIGTERM
	require.NoError(t, <-done)
	close(sent)
	for evs := range sent {
		got = append(got, evs...)
	}
	assert.Equal(t, []computer.InputEvent{{Type: computer.InputMouseClick, Button: 1, X: 3, Y: 2}, held,
		{Type: computer.InputMouseUp, Button: 1, X: 4, Y: 3}}, got)
}

// TestTheScreenViewerSendsAReleasePastTheKeysWaiting: a button let go while the computer is
// busy and keysWaiting key presses wait already is let go on the computer all the same, as the
// web console sends a release however many presses wait: it was dropped with the presses past
// them, the press sent before them, and the computer held the button down for ever.
func TestTheScreenViewerSendsAReleasePastTheKeysWaiting(t *testing.T) {
	sends := make(chan []computer.InputEvent)
	answers := make(chan error)
	out := &testkit.SyncBuffer{}
	v := &viewer{out: out, size: termOf(80, 24), send: answeredSend(sends, answers),
		info: viewedThenControlled("0.5.22")}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	typing, done := runControlledView(t, ctx, v, out)

	typeOn(t, typing, "\x1b[<0;3;2M") // pressed on 3,2: its call waits for the busy computer
	assert.Equal(t, []computer.InputEvent{{Type: computer.InputMouseClick, Button: 1, X: 3, Y: 2}}, <-sends)
	typeOn(t, typing, strings.Repeat("x", keysWaiting+10)) // the presses that wait, and more
	typeOn(t, typing, "\x1b[<0;3;2m")                      // let go
	answers <- nil
	batch := <-sends
	chars := 0
	for _, ev := range batch {
		if ev.Type == computer.InputChar {
			chars++
		}
	}
	assert.Equal(t, keysWaiting, chars, "the presses that wait")
	assert.Equal(t, computer.InputEvent{Type: computer.InputMouseUp, Button: 1, X: 3, Y: 2}, batch[len(batch)-1], "the release, past them")
	answers <- nil
	cancel()
	require.NoError(t, <-done)
}

// TestTheScreenViewerKeepsEveryKeyOfABurst: keys that arrive together (tmux send-keys, a
// terminal's paste without bracketed paste) while the first of them is being sent all reach
// the computer, in order, those waiting together in one call however many requests they take
// (the gateway types it whole: computer.Client.TypeInput): the view dropped every key past the
// 64th waiting, as if the computer had been busy for long.
func TestTheScreenViewerKeepsEveryKeyOfABurst(t *testing.T) {
	sends := make(chan []computer.InputEvent)
	answers := make(chan error)
	v := &viewer{out: io.Discard, busyRetry: time.Millisecond, send: answeredSend(sends, answers)}
	ctx, cancel := context.WithCancel(t.Context())
	typing, _, done := startViewer(ctx, t, v)

	burst := strings.Repeat("x", 100)
	_, err := typing.Write([]byte("a" + burst))
	require.NoError(t, err)
	var text strings.Builder
	take := func() {
		evs := <-sends
		for _, ev := range evs {
			text.WriteString(ev.Text)
		}
		answers <- nil
	}
	for text.String() != "a"+burst {
		take()
	}
	_, err = typing.Write([]byte("!")) // typed once the burst has gone
	require.NoError(t, err)
	for !strings.HasSuffix(text.String(), "!") {
		take()
	}
	assert.Equal(t, "a"+burst+"!", text.String())
	cancel()
	assert.NoError(t, <-done)
}

// viewOnlyComputer connects a stand-in computer 7:kitchen whose owner allows its screen at
// level (sandbox.allow_screen) to a real gateway, its screen.input refused below control as
// the daemon refuses it, and returns it, its terminal and the command that views it.
func viewOnlyComputer(t *testing.T, level string, oldInfo bool) (*daemonfake.Daemon, *daemonfake.Terminal, *ScreenCmd) {
	t.Helper()
	base := startGatewayHTTP(t, "")
	term := daemonfake.NewTerminal()
	d := &daemonfake.Daemon{ID: 7, Label: "kitchen", AllowScreen: level, OldInfo: oldInfo}
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		if typ == protocol.TypeScreenInput {
			if refused := d.ScreenInputRefused(); refused != nil {
				return nil, refused
			}
		}
		return term.Exec(typ, p)
	}
	connectComputer(t, base, d)
	return d, term, &ScreenCmd{APIFlags: APIFlags{URL: base}, TraposID: "7:kitchen"}
}

// stepClock is a view's clock on a clock.Fake, each wait recorded.
type stepClock struct {
	*clock.Fake
	busyClock
}

func (c *stepClock) after(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.seen = append(c.seen, d)
	c.mu.Unlock()
	return c.NewTimer(d).C()
}

// typeOn types text on the view's terminal and returns once the view has taken it (the
// pipe's next write is read only then).
func typeOn(t *testing.T, typing io.Writer, text string) {
	t.Helper()
	_, err := typing.Write([]byte(text))
	require.NoError(t, err)
	_, err = typing.Write(nil)
	require.NoError(t, err)
}

// keysOf are the screen.input events of typed letters, as the terminal received them.
func keysOf(letters string) []map[string]any {
	var evs []map[string]any
	for _, l := range letters {
		evs = append(evs, map[string]any{"type": "key", "name": string(l)}, map[string]any{"type": "char", "text": string(l)},
			map[string]any{"type": "key_up", "name": string(l)})
	}
	return evs
}

// TestTheScreenViewerStaysUpOnAViewOnlyComputer: a computer whose owner allows its screen
// to be seen, not typed on (sandbox.allow_screen view), stays on screen: the view asks the
// computer what its owner allows (computer.info) before the first key, says on its status
// line that it is view-only and the line the owner types, and sends no key, Ctrl-T held
// neither, nor keeps them (the first key ended the view, exit status 1). It asks again
// after 2 s, twice as long each time up to 30 s, and at a key pressed, once a step; once
// the owner allows control the status line goes and the keys reach the computer.
func TestTheScreenViewerStaysUpOnAViewOnlyComputer(t *testing.T) {
	d, term, c := viewOnlyComputer(t, "view", false)
	clk := &stepClock{Fake: clock.NewFake(time.Unix(0, 0))}
	out := &testkit.SyncBuffer{}
	// Each computer.info the view asks is the test's to let through: asked says its number.
	var looks atomic.Int32
	asked := make(chan int32)
	v := &viewer{out: out, size: termOf(80, 24), after: clk.after,
		busyRetry: time.Millisecond, send: c.typeKeys,
		info: func(ctx context.Context) (computer.Info, error) {
			select {
			case asked <- looks.Add(1):
			case <-ctx.Done():
				return computer.Info{}, ctx.Err()
			}
			return c.info(ctx)
		}}
	typing, streaming, done := startViewer(t.Context(), t, v)
	_, err := fmt.Fprint(streaming, "event: frame\ndata: {\"seq\":1,\"width\":51,\"height\":19,\"colour\":true,\"cursor\":{\"x\":3,\"y\":1,\"blink\":true},\"rows\":[{\"text\":\"> \"}]}\n\n")
	require.NoError(t, err)

	assert.Equal(t, int32(1), <-asked, "asked before any key")
	const status = "view only: the owner allows typing with: set sandbox.allow_screen control"
	assert.LessOrEqual(t, len(status), 80, "one row of an 80-column terminal")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "\x1b[20;1H\x1b[0m\x1b[2K\x1b[7m"+status) },
		5*time.Second, time.Millisecond, "the status line says so: %q", out.String())
	assert.Equal(t, "off", mouseReports(out.String()), "no click is sent: the user's mouse selects text")
	typeOn(t, typing, "a")
	assert.Equal(t, int32(2), <-asked, "a key asks again")
	typeOn(t, typing, "b\x14\x14c") // Ctrl-T held: terminate
	clk.Advance(2 * time.Second)
	assert.Equal(t, int32(3), <-asked, "the step's end asks again; the keys after the first in the step asked nothing")
	require.True(t, clk.WaitArmed(1, t.Context().Done()))
	typeOn(t, typing, "d")
	assert.Equal(t, int32(4), <-asked, "a key of the next step asks again")
	for i, step := range []time.Duration{4, 8, 16, 30} {
		clk.Advance(step * time.Second)
		assert.Equal(t, int32(5+i), <-asked)
		require.True(t, clk.WaitArmed(1, t.Context().Done()))
	}
	assert.Equal(t, []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second},
		clk.waits(), "asked again after 2 s doubling, up to 30 s")

	d.SetScreen("control")
	clk.Advance(30 * time.Second)
	<-asked
	require.Eventually(t, func() bool { return saysOnlyTheWayOut(out.String(), 20) }, 5*time.Second, time.Millisecond,
		"the status line goes once the owner allows control")
	assert.Equal(t, "on", mouseReports(out.String()), "clicks are sent again")
	typeOn(t, typing, "y")
	require.Eventually(t, func() bool { return len(term.Events()) == 3 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, keysOf("y"), term.Events(), "the keys typed while view-only were neither sent nor kept: only y reached it")
	typeOn(t, typing, "\x13\x13")
	assert.NoError(t, <-done, "Ctrl-S held leaves")
}

// TestTheScreenViewerLearnsViewOnlyFromARefusedKey: a computer whose client is older than
// 0.5.15 does not say what its owner allows; the view learns it from the first key refused
// forbidden and stays, view-only, instead of ending. A key a step asks again by being sent
// (none else is); once the owner allows control the one that asks goes through, and the view
// is live again.
func TestTheScreenViewerLearnsViewOnlyFromARefusedKey(t *testing.T) {
	d, term, c := viewOnlyComputer(t, "view", true)
	clk := &stepClock{Fake: clock.NewFake(time.Unix(0, 0))}
	out := &testkit.SyncBuffer{}
	v := &viewer{out: out, size: termOf(80, 24), after: clk.after,
		busyRetry: time.Millisecond, send: c.typeKeys, info: c.info}
	typing, _, done := startViewer(t.Context(), t, v)

	typeOn(t, typing, "a")
	require.Eventually(t, func() bool {
		return strings.Contains(out.String(), "\x1b[7mview only: the owner allows typing with: set sandbox.allow_screen control")
	},
		5*time.Second, time.Millisecond, "the refused key makes the view view-only: %q", out.String())
	require.True(t, clk.WaitArmed(1, t.Context().Done()))
	d.SetScreen("control")
	typeOn(t, typing, "b") // the step's key: sent, and now typed
	require.Eventually(t, func() bool { return saysOnlyTheWayOut(out.String(), 20) }, 5*time.Second, time.Millisecond,
		"the key that went through brings the keys back")
	typeOn(t, typing, "c")
	require.Eventually(t, func() bool { return len(term.Events()) == 6 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, keysOf("bc"), term.Events())
	select {
	case err := <-done:
		t.Fatalf("the view ended: %v", err)
	default:
	}
	typeOn(t, typing, "\x13\x13")
	assert.NoError(t, <-done, "Ctrl-S held leaves")
}

// TestTheScreenViewerWrapsTheViewOnlyStatusInANarrowTerminal: in a phone's narrow terminal,
// under a pocket computer's screen, the view-only status line is wrapped over the rows the
// terminal has (cut with … where they do not suffice, the way out whole), the line the owner
// types whole.
func TestTheScreenViewerWrapsTheViewOnlyStatusInANarrowTerminal(t *testing.T) {
	v := &viewer{termW: 26, termH: 25}
	pocket := &fcomputer.Snapshot{Width: 26, Height: 20}
	out := string(v.draw(pocket, 26, 20, false, viewOnlyStatus))
	for i, line := range []string{"view only: the owner", "allows typing with: set", "sandbox.allow_screen", "control", "Ctrl-S held leaves"} {
		assert.Contains(t, out, fmt.Sprintf("\x1b[%d;1H\x1b[0m\x1b[2K\x1b[7m%s\x1b[0m", 21+i, line))
	}
	assert.Equal(t, []string{"view only: the owner", "allows typing with: set", "sandb…; Ctrl-S held leaves"}, statusLines(viewOnlyStatus, 26, 3),
		"too few rows: the last is cut, but for the way out")
	assert.Equal(t, []string{viewOnlyStatus + "; Ctrl-S held leaves"}, statusLines(viewOnlyStatus, 100, 5))
	cleared := string(v.draw(pocket, 26, 20, false, ""))
	assert.Contains(t, cleared, "\x1b[21;1H\x1b[0m\x1b[2K\x1b[7mCtrl-S held leaves\x1b[0m\x1b[22;1H\x1b[0m\x1b[2K\x1b[23;1H\x1b[0m\x1b[2K\x1b[24;1H\x1b[0m\x1b[2K\x1b[25;1H\x1b[0m\x1b[2K",
		"its rows cleared, but for the way out")
}

// saysOnlyTheWayOut reports whether the view's status line, last drawn at row, says the way out
// alone: the view has nothing else to say.
func saysOnlyTheWayOut(out string, row int) bool {
	at := fmt.Sprintf("\x1b[%d;1H\x1b[0m\x1b[2K", row)
	i := strings.LastIndex(out, at)
	return i >= 0 && strings.HasPrefix(out[i+len(at):], "\x1b[7m"+wayOut+"\x1b[0m")
}

// termOf is a viewer's size of a terminal of w×h (never the test's own tty).
func termOf(w, h int) func() (int, int) {
	return func() (int, int) { return w, h }
}

// TestTheViewIsLaidOutForTheTerminal: the status line takes the rows under the screen, at
// least one: where the terminal has none to spare (a 19-row computer's screen in 19 or 20
// rows, a pocket computer's 20 in 19), the screen is cut to the rows above the line, which says
// how much is shown first and ends with the way out, whole however narrow the terminal is.
// A terminal too small for anything useful says so in one line with the size it needs.
func TestTheViewIsLaidOutForTheTerminal(t *testing.T) {
	const away = "computer 5:küche disconnected; waiting up to 5m0s for it to come back"
	for _, c := range []struct {
		name               string
		termW, termH, w, h int
		message            string
		want               layout
	}{
		{"a screen that fits exactly, nothing to say", 51, 19, 51, 19, "", layout{shownW: 51, shownH: 19, statusRow: 20}},
		{"a row to spare, nothing to say", 80, 24, 51, 19, "", layout{shownW: 51, shownH: 19, statusRow: 20, status: []string{wayOut}}},
		{"the computer away in 60×20", 60, 20, 51, 19, away, layout{shownW: 51, shownH: 18, statusRow: 19,
			status: []string{"18 of 19 rows shown; computer 5:küche disconnected; waiting", "up to 5m0s for it to come back; Ctrl-S held leaves"}}},
		{"the computer away in 51×19", 51, 19, 51, 19, away, layout{shownW: 51, shownH: 16, statusRow: 17,
			status: []string{"16 of 19 rows shown; computer 5:küche disconnected;", "waiting up to 5m0s for it to come back", "Ctrl-S held leaves"}}},
		{"a view-only computer's first rows in 60×20", 60, 20, 51, 19, liveStatus(true, []int{1, 2, 3}, ""), layout{shownW: 51, shownH: 17, statusRow: 18,
			status: []string{"17 of 19 rows shown; view only: the owner allows typing", "with: set sandbox.allow_screen control; rows not yet seen",
				"whole: 1-3 (the computer may show more…; Ctrl-S held leaves"}}},
		{"a pocket computer in 30×19", 30, 19, 26, 20, "", layout{shownW: 26, shownH: 17, statusRow: 18,
			status: []string{"17 of 20 rows shown", "Ctrl-S held leaves"}}},
		{"a computer in a phone's 40×10", 40, 10, 51, 19, "", layout{shownW: 40, shownH: 9, statusRow: 10,
			status: []string{"40×9 of 51×19 shown; Ctrl-S held leaves"}}},
		{"a turtle in 80×24", 80, 24, 39, 13, away, layout{shownW: 39, shownH: 13, statusRow: 14,
			status: []string{away, "Ctrl-S held leaves"}}},
		{"a monitor at scale 0.5 in 100×30", 100, 30, 82, 40, "monitor top, read only: keys are not sent; text scale 0.5",
			layout{shownW: 51, shownH: 20, statusRow: 21, status: []string{"51×20 of 82×40 shown; monitor top, read only: keys are not sent; text scale 0.5; Ctrl-S held leaves"}}},
		{"a terminal too small", 25, 3, 51, 19, away, layout{statusRow: 1, tooSmall: true,
			status: []string{"too small: the view needs", "26×4; Ctrl-S held leaves"}}},
		{"a terminal too small for more than a line", 70, 1, 51, 19, away, layout{statusRow: 1, tooSmall: true,
			status: []string{"too small: the view needs 26×4; Ctrl-S held leaves"}}},
		{"a terminal whose size is not known: wrapped at the screen's width", 0, 0, 26, 20, away, layout{shownW: 26, shownH: 20, statusRow: 21,
			status: []string{"computer 5:küche", "disconnected; waiting up", "to 5m0s for it to come", "back; Ctrl-S held leaves"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := lay(c.termW, c.termH, c.w, c.h, c.message)
			assert.Equal(t, c.want, got)
			width := cmp.Or(c.termW, c.w) // a terminal whose size is not known: the screen's
			for _, line := range got.status {
				assert.LessOrEqual(t, utf8.RuneCountInString(line), width, "within the terminal: %q", line)
			}
			if c.termH > 0 {
				assert.LessOrEqual(t, got.statusRow-1+len(got.status), c.termH, "within the terminal")
			}
			assert.True(t, len(got.status) == 0 || strings.HasSuffix(got.status[len(got.status)-1], wayOut), "the way out ends it")
		})
	}
}

// TestTheScreenViewerKeepsTheWayOutInAShortTerminal: a computer that goes away from a view in a
// 60×20 terminal (one row under its screen) says how to leave on the status line: the line was
// cut at 60 columns, and "Ctrl-S held leaves", the only way out the view tells of, was lost.
func TestTheScreenViewerKeepsTheWayOutInAShortTerminal(t *testing.T) {
	out := &testkit.SyncBuffer{}
	v := &viewer{out: out, size: termOf(60, 20), send: func(context.Context, []computer.InputEvent) error { return nil },
		reopen: func(ctx context.Context) (io.ReadCloser, error) { <-ctx.Done(); return nil, ctx.Err() }}
	typing, streaming, done := startViewer(t.Context(), t, v)
	_, err := fmt.Fprint(streaming, "event: frame\ndata: {\"seq\":1,\"width\":51,\"height\":19,\"colour\":true,\"cursor\":{\"x\":3,\"y\":1},\"rows\":[{\"text\":\"> \"}]}\n\n"+
		"event: end\ndata: {\"ok\":false,\"error\":{\"code\":\"not_connected\",\"message\":\"computer 5:küche disconnected\"}}\n\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "disconnected") }, 5*time.Second, time.Millisecond)
	assert.Contains(t, out.String(), "\x1b[19;1H\x1b[0m\x1b[2K\x1b[7m18 of 19 rows shown; computer 5:küche disconnected; waiting\x1b[0m"+
		"\x1b[20;1H\x1b[0m\x1b[2K\x1b[7mfor it to come back; Ctrl-S held leaves\x1b[0m",
		"over the terminal's last two rows, the screen cut to the rows above: %q", out.String())
	typeOn(t, typing, "\x13\x13")
	assert.NoError(t, <-done, "Ctrl-S held leaves")
}

// TestTheScreenViewerLaysItselfOutAgainWhenTheTerminalIsResized: a resize (SIGWINCH) reads the
// terminal's size again and draws the view anew for it: the screen cut to the rows above the
// status line in a shorter terminal, one line saying what the view needs in one too small, and
// the whole screen again once the terminal is large enough. The size was read once, at the
// start, and a terminal made smaller got the screen drawn past its edge.
func TestTheScreenViewerLaysItselfOutAgainWhenTheTerminalIsResized(t *testing.T) {
	out := &testkit.SyncBuffer{}
	var mu sync.Mutex
	termW, termH := 80, 24
	resized := make(chan struct{})
	v := &viewer{out: out, resized: resized, send: func(context.Context, []computer.InputEvent) error { return nil },
		size: func() (int, int) {
			mu.Lock()
			defer mu.Unlock()
			return termW, termH
		}}
	from := 0 // what the view drew since the last resize: drawn()
	drawn := func() string { return out.String()[from:] }
	resize := func(w, h int) {
		t.Helper()
		mu.Lock()
		termW, termH = w, h
		mu.Unlock()
		from = len(out.String())
		resized <- struct{}{}
	}
	typing, streaming, done := startViewer(t.Context(), t, v)
	_, err := fmt.Fprint(streaming, "event: frame\ndata: {\"seq\":1,\"width\":51,\"height\":19,\"colour\":true,\"cursor\":{\"x\":3,\"y\":19},\"rows\":["+
		strings.Repeat("{\"text\":\"\"},", 18)+"{\"text\":\"> bottom\"}]}\n\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "bottom") }, 5*time.Second, time.Millisecond)
	assert.Contains(t, out.String(), "\x1b[20;1H\x1b[0m\x1b[2K\x1b[7mCtrl-S held leaves", "the way out under the screen")

	resize(60, 12)
	require.Eventually(t, func() bool { return strings.Contains(drawn(), "Ctrl-S held leaves") }, 5*time.Second, time.Millisecond)
	shown := drawn()
	assert.Contains(t, shown, "\x1b[2J", "the terminal cleared")
	assert.Contains(t, shown, "\x1b[12;1H\x1b[0m\x1b[2K\x1b[7m11 of 19 rows shown; Ctrl-S held leaves")
	assert.NotContains(t, shown, "bottom", "the 19th row is not drawn past the terminal's edge")

	resize(20, 3)
	require.Eventually(t, func() bool { return strings.Contains(drawn(), "Ctrl-S held leaves") }, 5*time.Second, time.Millisecond)
	assert.Contains(t, drawn(), "\x1b[1;1H\x1b[0m\x1b[2K\x1b[7mtoo small: the view\x1b[0m\x1b[2;1H\x1b[0m\x1b[2K\x1b[7mneeds 26×4\x1b[0m\x1b[3;1H\x1b[0m\x1b[2K\x1b[7mCtrl-S held leaves",
		"in as many rows as it has: %q", drawn())
	assert.NotContains(t, drawn(), "bottom", "no screen drawn")

	resize(51, 20)
	require.Eventually(t, func() bool { return strings.Contains(drawn(), "bottom") }, 5*time.Second, time.Millisecond)
	assert.Contains(t, drawn(), "\x1b[20;1H\x1b[0m\x1b[2K\x1b[7mCtrl-S held leaves", "whole again")
	typeOn(t, typing, "\x13\x13")
	assert.NoError(t, <-done, "Ctrl-S held leaves")
}

// TestTheScreenViewerNamesTheRowsTheComputerHasNotSeen: rows the computer's mirror has not
// seen drawn whole (a frame's unknownRows: the boot's first lines) are named on the status
// line, as runs, so that their blank is not taken for the computer's; the line goes once
// every row is seen, and a view-only status keeps its words first.
func TestTheScreenViewerNamesTheRowsTheComputerHasNotSeen(t *testing.T) {
	out := &testkit.SyncBuffer{}
	v := &viewer{out: out, size: termOf(80, 24),
		send: func(context.Context, []computer.InputEvent) error { return nil }}
	typing, streaming, done := startViewer(t.Context(), t, v)
	frame := func(seq int, text, unknown string) {
		t.Helper()
		_, err := fmt.Fprintf(streaming, "event: frame\ndata: {\"seq\":%d,\"width\":51,\"height\":19,\"colour\":true,\"cursor\":{\"x\":3,\"y\":1,\"blink\":true},\"rows\":[{\"text\":%q}]%s}\n\n",
			seq, text, unknown)
		require.NoError(t, err)
	}
	frame(1, "> ", `,"unknownRows":[2,3,4,6,19]`)
	const status = "rows not yet seen whole: 2-4, 6, 19 (the computer may show more there)"
	assert.LessOrEqual(t, len(status), 80, "one row of an 80-column terminal")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "\x1b[20;1H\x1b[0m\x1b[2K\x1b[7m"+status) },
		5*time.Second, time.Millisecond, "the status line names them: %q", out.String())
	before := len(out.String())
	frame(2, "> l", `,"unknownRows":[2,3,4,6,19]`)
	require.Eventually(t, func() bool { return strings.Contains(out.String()[before:], "l") }, 5*time.Second, time.Millisecond)
	frame(3, "> ls", "")
	require.Eventually(t, func() bool { return saysOnlyTheWayOut(out.String(), 20) }, 5*time.Second, time.Millisecond,
		"the status line goes once every row is seen: %q", out.String())
	assert.Equal(t, 1, strings.Count(out.String(), status), "the same rows again: the line was not drawn again")
	typeOn(t, typing, "\x13\x13")
	assert.NoError(t, <-done, "Ctrl-S held leaves")

	assert.Equal(t, viewOnlyStatus+"; rows not yet seen whole: 1 (the computer may show more there)",
		liveStatus(true, []int{1}, ""), "view only first")
	assert.Equal(t, "", liveStatus(false, nil, ""), "nothing to say")
}

// monitorComputer is a stand-in computer with a monitor on top: it answers screen.read
// {monitor: "top"} with the monitor's screen (a program's ESC byte and a 2x3 block on it, its
// first row not yet seen whole) and any other monitor as the client refuses it.
type monitorComputer struct {
	*daemonfake.Local
}

func (m monitorComputer) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	if typ != protocol.TypeScreenRead {
		return m.Local.Request(ctx, traposID, typ, payload, timeout)
	}
	var p struct{ Monitor string }
	err := json.Unmarshal(payload, &p)
	if err == nil && p.Monitor == "" {
		return json.Marshal(computer.Screen{Width: 3, Height: 2, Colour: true, FG: 1, BG: 32768,
			Rows: []computer.Row{{Text: "own", FG: "000", BG: "fff"}, {Text: "   ", FG: "000", BG: "fff"}}, Palette: []string{"#f0f0f0"}})
	}
	if err != nil || p.Monitor != "top" {
		return nil, &protocol.Error{Code: protocol.CodeBadPayload, Message: `no monitor named "` + p.Monitor + `": this computer's monitors are top`, ByComputer: true}
	}
	row := func(text string) computer.Row {
		text += strings.Repeat(" ", 7-utf8.RuneCountInString(text)) // one byte a character on the wire
		return computer.Row{Text: text, FG: strings.Repeat("0", 7), BG: strings.Repeat("f", 7)}
	}
	return json.Marshal(computer.Screen{Width: 7, Height: 5, Colour: true, FG: 1, BG: 32768, Monitor: "top", TextScale: 1,
		Rows:    []computer.Row{row("tea"), row("\u001b[2J\u0080\u0081"), row(""), row("\u0080"), row("")},
		Palette: []string{"#f0f0f0"}, UnknownRows: []int{1}})
}

// TestScreenMonitorPrintsWhatTheMonitorShows: `screen --monitor top` prints the monitor's rows
// once, without a terminal, each byte as CC's font draws it (a program's ESC is ←, never an
// escape this terminal acts on), and the rows not yet seen whole; a name that is no monitor is
// the computer's refusal, naming its monitors.
func TestScreenMonitorPrintsWhatTheMonitorShows(t *testing.T) {
	clearEnv(t)
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, hostapi.New(computer.New(monitorComputer{daemonfake.NewLocal(nil)}))).Handler())
	defer srv.Close()
	out, err := runClient(t, "screen", "--url", srv.URL, "7:", "--monitor", "top")
	require.NoError(t, err)
	assert.Equal(t, "tea\n←[2J \U0001FB00\n(rows not yet seen whole: 1 (monitor top may show more there))\n", out,
		"the monitor's rows, where the computer's own screen shows others")

	once, err := runClient(t, "screen", "--url", srv.URL, "7:", "--monitor", "top", "--once")
	require.NoError(t, err)
	assert.Equal(t, out, once, "--once prints it once too")
	own, err := runClient(t, "screen", "--url", srv.URL, "7:", "--once")
	require.NoError(t, err)
	assert.Equal(t, "own\n", own, "--once alone prints the computer's own screen once")

	_, err = runClient(t, "screen", "--url", srv.URL, "7:", "--monitor", "left")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no monitor named "left": this computer's monitors are top`)
	assert.Contains(t, err.Error(), "screen --monitor left")
}

// TestScreenMonitorNamesTheMonitorAsTheComputerWasAskedForIt: `screen --monitor Left` on a
// computer with no monitor on its left fails naming the monitor left, as the computer was asked
// for it (CC reads a side in any case): live, as the gateway's refusal of the stream names it
// back (its monitor); printed once, as the read asked for it. The end of a monitor's stream
// names it as the end does (--monitor Top: top), and a refusal that names no monitor (a gateway
// from before the field) names it as typed. Before, the live view's failure named no monitor
// ("computer 7: screen: …"), and the printed one Left as typed, beside the computer's "left".
func TestScreenMonitorNamesTheMonitorAsTheComputerWasAskedForIt(t *testing.T) {
	clearEnv(t)
	d := daemonfake.NewLocal(nil)
	d.Exec = func(typ string, p map[string]any) (any, *daemonfake.Error) {
		if typ == protocol.TypeScreenWatch || typ == protocol.TypeScreenRead {
			return nil, &daemonfake.Error{Code: "bad_payload", Message: fmt.Sprintf("no monitor named %q: this computer has no monitor", p["monitor"])}
		}
		return map[string]any{}, nil
	}
	client := computer.New(d)
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{}, hostapi.New(client), screen.New(client)).Handler())
	defer srv.Close()
	ptmx, tty := openTerminal(t, 51, 19)
	live := func(url, monitor string) error {
		t.Helper()
		c := &ScreenCmd{APIFlags: APIFlags{URL: url}, TraposID: "7:", Monitor: monitor, Colours: "256"}
		return c.Run(t.Context(), Stdout{tty}, Stdin{tty})
	}

	err := live(srv.URL, "Left")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "computer 7: screen --monitor left: "), err.Error())
	assert.Contains(t, err.Error(), `no monitor named "left": this computer has no monitor`)

	_, err = runClient(t, "screen", "--url", srv.URL, "7:", "--monitor", "Left", "--once")
	assert.EqualError(t, err, `computer 7: screen --monitor left: the computer answered bad_payload: no monitor named "left": this computer has no monitor`)

	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get(screen.MonitorParam) == "Left" { // as a gateway before the field answered
			server.WriteError(w, http.StatusBadRequest, protocol.CodeBadPayload, `no monitor named "left": this computer has no monitor`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: end\ndata: "+`{"ok":false,"error":{"code":"not_found","message":"computer 7: says the screen watch ended: monitor top was taken off the computer","monitor":"top"}}`+"\n\n")
	}))
	defer gw.Close()
	err = live(gw.URL, "Top")
	assert.EqualError(t, err, "computer 7: screen --monitor top: not_found: the computer says the screen watch ended: monitor top was taken off the computer")
	// The view's reader of the terminal waits for its next input, as a person's next key,
	// and ends with it: the view has ended.
	_, err = ptmx.Write([]byte("\n"))
	require.NoError(t, err)
	err = live(gw.URL, "Left")
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "computer 7: screen --monitor Left: "), err.Error())
}

// monitorsComputer is a stand-in computer whose own screen's answer names monitors and
// monitorsLeftOut as given (a hostile client's names among them).
type monitorsComputer struct {
	*daemonfake.Local
	monitors []string
	leftOut  int
}

func (m monitorsComputer) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	if typ != protocol.TypeScreenRead {
		return m.Local.Request(ctx, traposID, typ, payload, timeout)
	}
	return json.Marshal(computer.Screen{Width: 3, Height: 1, Colour: true, FG: 1, BG: 32768,
		Rows: []computer.Row{{Text: "own", FG: "000", BG: "fff"}}, Palette: []string{"#f0f0f0"},
		Monitors: m.monitors, MonitorsLeftOut: m.leftOut})
}

// TestScreenOnceNamesTheMonitors: `screen --once` printed the computer's own screen and never
// its monitors, which only the web console's picker and the API named. It names them under the
// screen, counts those the gateway's bound leaves out (past 64), and gives the line that shows
// one; each name a shell word, a hostile name's ESC escaped, never this terminal's escape.
func TestScreenOnceNamesTheMonitors(t *testing.T) {
	clearEnv(t)
	for _, tc := range []struct {
		name     string
		monitors []string
		leftOut  int
		want     string
	}{
		{"none", []string{}, 0, "own\n"},
		{"an old client's", nil, 0, "own\n"},
		{"named", []string{"top", "monitor_0"}, 0,
			"own\n(monitors: top, monitor_0; see one with: trap-sandbox screen --url URL 7:kitchen --monitor top)\n"},
		{"some left out", []string{"top", "my mon", "\x1b[2Jx"}, 6,
			"own\n(monitors: top, 'my mon', '\\x1b[2Jx' and 6 more, not listed; see one with: trap-sandbox screen --url URL 7:kitchen --monitor top)\n"},
		{"all left out", []string{}, 3,
			"own\n(monitors: 3 attached, none listed; see one with: trap-sandbox screen --url URL 7:kitchen --monitor NAME)\n"},
		{"past the bound", slices.Repeat([]string{"m"}, 70), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{},
				hostapi.New(computer.New(monitorsComputer{daemonfake.NewLocal(nil), tc.monitors, tc.leftOut}))).Handler())
			defer srv.Close()
			out, err := runClient(t, "screen", "--url", srv.URL, "7:kitchen", "--once")
			require.NoError(t, err)
			if tc.want == "" { // the gateway names 64 and counts the rest
				assert.Equal(t, "own\n(monitors: "+strings.Repeat("m, ", 63)+"m and 6 more, not listed; see one with: trap-sandbox screen --url "+srv.URL+" 7:kitchen --monitor m)\n", out)
				return
			}
			assert.Equal(t, strings.ReplaceAll(tc.want, "URL", srv.URL), out)
		})
	}
}

// TestScreenOnceHoldsTheMonitorsToTheTerminalsWidth: in a terminal, `screen --once` names as
// many monitors as fit its width and counts the rest, where 64 long names made one line many
// rows long; the command that shows one is never cut, and has a line of its own when no name
// fits beside it. A pipe gets every name (TestScreenOnceNamesTheMonitors).
func TestScreenOnceHoldsTheMonitorsToTheTerminalsWidth(t *testing.T) {
	clearEnv(t)
	var long []string
	for i := range 64 {
		long = append(long, fmt.Sprintf("wired_modem_monitor_%d", i))
	}
	srv := httptest.NewServer(server.New(slog.New(slog.DiscardHandler), server.Config{},
		hostapi.New(computer.New(monitorsComputer{daemonfake.NewLocal(nil), long, 6}))).Handler())
	defer srv.Close()
	hint := "see one with: trap-sandbox screen --url " + srv.URL + " 7:kitchen --monitor wired_modem_monitor_0)"

	// printed reads what `screen --once` writes to a terminal cols wide, its lines as written.
	printed := func(cols uint16) []string {
		ptmx, tty := openTerminal(t, cols, 24)
		c := &ScreenCmd{APIFlags: APIFlags{URL: srv.URL}, TraposID: "7:kitchen", Once: true}
		require.NoError(t, c.Run(t.Context(), Stdout{tty}, Stdin{strings.NewReader("")}))
		require.NoError(t, tty.Close()) // the terminal's side reads what was written, then EIO
		out, _ := io.ReadAll(ptmx)
		return strings.Split(strings.TrimSuffix(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n"), "\n")
	}

	wide := printed(200)
	require.Len(t, wide, 2, "%q", wide)
	assert.Equal(t, "own", wide[0])
	assert.LessOrEqual(t, len(wide[1]), 200, wide[1])
	assert.True(t, strings.HasPrefix(wide[1], "(monitors: wired_modem_monitor_0, wired_modem_monitor_1, "), wide[1])
	assert.Regexp(t, `, wired_modem_monitor_\d+ and \d+ more; `+regexp.QuoteMeta(hint)+`$`, wide[1])
	shown := strings.Count(wide[1], "wired_modem_monitor_") - 1 // the command's example is one
	assert.Contains(t, wide[1], fmt.Sprintf(" and %d more; ", 64+6-shown), "the rest counted, those the gateway left out with them")

	narrow := printed(80) // the command alone is 80 long or more: it has a line of its own
	require.Len(t, narrow, 3, "%q", narrow)
	assert.LessOrEqual(t, len(narrow[1]), 80, narrow[1])
	assert.Regexp(t, `^\(monitors: wired_modem_monitor_0, .* and \d+ more;$`, narrow[1])
	assert.Equal(t, hint, narrow[2], "whole, however long")
}

// TestTheScreenViewerShowsAMonitorReadOnly: the live view of a monitor draws its frames, says on
// its status line that it is read only, its text scale, and which part of a monitor larger than
// the view is shown; nothing typed reaches the computer (a key, a click, Ctrl-T held), and
// Ctrl-S held still leaves.
func TestTheScreenViewerShowsAMonitorReadOnly(t *testing.T) {
	out := &testkit.SyncBuffer{}
	var mu sync.Mutex
	var sent [][]computer.InputEvent
	// Given as typed, in another case: the status line names it as its frames do.
	v := &viewer{out: out, size: termOf(80, 24), monitor: "Top",
		send: func(_ context.Context, evs []computer.InputEvent) error {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, evs)
			return nil
		}}
	typing, streaming, done := startViewer(t.Context(), t, v)
	_, err := fmt.Fprint(streaming, "event: frame\ndata: {\"seq\":1,\"monitor\":\"top\",\"textScale\":0.5,\"width\":82,\"height\":40,\"colour\":true,\"cursor\":{\"x\":1,\"y\":1},\"rows\":[{\"text\":\"on the monitor\"}]}\n\n")
	require.NoError(t, err)
	const status = "51×20 of 82×40 shown; monitor top, read only: keys are not sent; text scale 0.5 Ctrl-S held leaves"
	require.Eventually(t, func() bool {
		return strings.Contains(out.String(), "on the monitor") && strings.Contains(out.String(), "\x1b[21;1H\x1b[0m\x1b[2K\x1b[7m51×20 of 82×40 shown; monitor top")
	}, 5*time.Second, time.Millisecond, "%q", out.String())
	assert.Contains(t, strings.ReplaceAll(out.String(), "\x1b[0m\x1b[22;1H\x1b[0m\x1b[2K\x1b[7m", " "), status, "wrapped over two rows of 80 columns, the way out on its own")
	typeOn(t, typing, "ab\x1b[<0;3;2M\x1b[<0;3;2m\x14\x14")
	typeOn(t, typing, "\x13\x13")
	assert.NoError(t, <-done, "Ctrl-S held leaves")
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, sent, "a monitor takes no keys")
	assert.Equal(t, "monitor top, read only: keys are not sent", monitorStatus("top", screen.FrameJSON{}))
}

// TestTheScreenViewerShowsAMonitorsEscapesAsText: a monitor's rows are drawn as CC's font draws
// each byte, as the computer's own screen's are: a program's ESC, BEL and C1 CSI on a monitor
// (an OSC setting the terminal's title, a cleared screen) reach the terminal as glyphs, never
// as its escapes; and a name given to --monitor with escapes is shown escaped in the status line.
func TestTheScreenViewerShowsAMonitorsEscapesAsText(t *testing.T) {
	out := &testkit.SyncBuffer{}
	v := &viewer{out: out, size: termOf(80, 24), monitor: "top\x1b]0;name\x07",
		send: func(context.Context, []computer.InputEvent) error { return nil }}
	typing, streaming, done := startViewer(t.Context(), t, v)
	_, err := fmt.Fprint(streaming, "event: frame\ndata: {\"seq\":1,\"monitor\":\"top\\u001b]0;name\\u0007\",\"textScale\":1,\"width\":30,\"height\":2,\"colour\":true,\"cursor\":{\"x\":1,\"y\":1},"+
		"\"rows\":[{\"text\":\"\\u001b]0;owned\\u0007\\u001b[2Jmark\"},{\"text\":\"\\u009b31mred\"}]}\n\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return strings.Contains(out.String(), "mark") && strings.Contains(out.String(), "read only")
	},
		5*time.Second, time.Millisecond, "%q", out.String())
	typeOn(t, typing, "\x13\x13")
	require.NoError(t, <-done)
	shown := out.String()
	for _, raw := range []string{"\x1b]0;owned", "\x07", "\x1b]0;name", "\u009b", "\x9b31m"} {
		assert.NotContains(t, shown, raw)
	}
	assert.Contains(t, shown, `top\x1b]0;name\x07`, "the name as text in the status line")
}

// mouseReports is whether the terminal's mouse reports are on after out: turned on, and not
// off since (a view starts without them).
func mouseReports(out string) string {
	if strings.LastIndex(out, string(console.MouseReports(true))) > strings.LastIndex(out, string(console.MouseReports(false))) {
		return "on"
	}
	return "off"
}

// TestTheScreenViewerTurnsTheMouseOnOnlyWhereClicksAreSent: in a terminal, the view of a
// computer's own screen turns the terminal's mouse reports on, to send its clicks; the view of
// a monitor, which takes none, and of a basic computer, which CC fires no mouse event on, never
// turn them on: they took the user's mouse, which then selected no text, for nothing. Each
// turns them off as it ends.
func TestTheScreenViewerTurnsTheMouseOnOnlyWhereClicksAreSent(t *testing.T) {
	for _, tc := range []struct {
		name, monitor string
		colour, on    bool
	}{
		{"an advanced computer's own screen", "", true, true},
		{"a basic computer's own screen", "", false, false},
		{"a monitor", "top", true, false},
	} {
		gw := stoppingGateway(t, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "event: frame\ndata: {\"seq\":1,\"monitor\":%q,\"width\":51,\"height\":19,\"colour\":%t,\"cursor\":{\"x\":1,\"y\":1,\"blink\":false},\"rows\":[{\"text\":\"kitchen\"}]}\n\n",
				r.URL.Query().Get("monitor"), tc.colour)
		})
		ptmx, tty := openTerminal(t, 80, 24)
		c := untilStopped(&ScreenCmd{APIFlags: APIFlags{URL: gw.URL}, TraposID: "7:", Monitor: tc.monitor, Colours: "256"})
		err := c.Run(t.Context(), Stdout{tty}, Stdin{tty})
		gw.Close()
		// What the view wrote waits in the terminal (a frame's few KiB: the pty holds 64 KiB),
		// read without blocking: a read that waits is not ended by closing the terminal.
		fd := int(ptmx.Fd())
		require.NoError(t, syscall.SetNonblock(fd, true))
		var out strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := syscall.Read(fd, buf)
			if n <= 0 || err != nil {
				break
			}
			out.Write(buf[:n])
		}
		require.Equal(t, 2, strings.Count(out.String(), string(console.Stop())),
			"%s: the terminal given back (Stop, and again as Run returns): %q", tc.name, out.String())
		assert.ErrorContains(t, err, stoppedAt(gw), tc.name)
		require.Contains(t, out.String(), "kitchen", tc.name)
		assert.Equal(t, tc.on, strings.Contains(out.String(), string(console.MouseReports(true))), "%s: %q", tc.name, out.String())
		assert.Equal(t, "off", mouseReports(out.String()), "%s: off as it ends", tc.name)
	}
}

// TestScreenOnceTakesATimeoutAsItsSiblingsDo: a read once that runs out is told of --timeout,
// which screen takes as cat and ls do (10s by default, at most 60s: TestATimeoutOutOfRangeIsRefused; the read's timeoutMs),
// and at 60s that it had the most already; the live view, whose calls take the gateway's own
// time, names no flag. screen took no --timeout, and its read once was told "--timeout gives
// it longer" all the same.
func TestScreenOnceTakesATimeoutAsItsSiblingsDo(t *testing.T) {
	clearEnv(t)
	asked := make(chan *int64, 4)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			var body struct {
				TimeoutMs *int64 `json:"timeoutMs"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			asked <- body.TimeoutMs
		}
		server.WriteError(w, http.StatusGatewayTimeout, protocol.CodeTimeout, "the computer did not answer in time")
	}))
	defer gw.Close()
	for _, tc := range []struct {
		args      []string
		timeoutMs int64
		fix       string
	}{
		{nil, 10000, "(--timeout gives it longer, at most 60s)"},
		{[]string{"--timeout", "60s"}, 60000, "(--timeout was 60s already, the most a call may take)"},
		{[]string{"--monitor", "top", "--timeout", "1500ms"}, 1500, "(--timeout gives it longer, at most 60s)"},
	} {
		_, err := runClient(t, append([]string{"screen", "--url", gw.URL, "7:kitchen", "--once"}, tc.args...)...)
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), "the computer did not answer in time "+tc.fix, tc.args)
		timeoutMs := <-asked
		require.NotNil(t, timeoutMs, tc.args)
		assert.Equal(t, tc.timeoutMs, *timeoutMs, tc.args)
	}
	c := &ScreenCmd{APIFlags: APIFlags{URL: gw.URL}, TraposID: "7:kitchen"}
	_, err := c.stream(t.Context(), io.Discard)
	assert.EqualError(t, err, "computer 7:kitchen screen: the gateway answered timeout: the computer did not answer in time",
		"the live view's calls are not --timeout's")
}

// TestTheScreenViewerWaitsBehindABalancerWithEveryGatewayDown: behind a load balancer whose
// every replica is down, the view's look again is answered with the balancer's 502 page; the
// view ended with that page ("the gateway at … answered HTTP 502, a reverse proxy's page …").
// It is no gateway at --url, as nothing listening there is: the view waits, saying so, shows
// the computer once a replica is up again, and when --wait runs out with none, ends saying the
// gateway stopped.
func TestTheScreenViewerWaitsBehindABalancerWithEveryGatewayDown(t *testing.T) {
	const nginx502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
	deadline := make(chan time.Time)
	var asked atomic.Int32
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/screen") {
			server.WriteError(w, http.StatusNotFound, protocol.CodeNotConnected, "computer 7: is not connected")
			return
		}
		n := asked.Add(1)
		if n == 2 || n == 3 || n >= 5 { // every replica down
			if n == 5 {
				close(deadline) // --wait runs out as the view takes this answer
			}
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, nginx502)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: frame\ndata: {\"seq\":1,\"width\":51,\"height\":19,\"colour\":true,\"cursor\":{\"x\":1,\"y\":1,\"blink\":false},\"rows\":[{\"text\":\"replica %d\",\"fg\":\"000000000\",\"bg\":\"fffffffff\"}]}\n\n", n)
		fmt.Fprint(w, endEvent(gateway.ErrShuttingDown))
	}))
	t.Cleanup(lb.Close)
	clock := &busyClock{}
	_, tty := openTerminal(t, 120, 24)
	c := &ScreenCmd{APIFlags: APIFlags{URL: lb.URL}, TraposID: "7:", Colours: "256", Wait: time.Minute,
		after: func(d time.Duration) <-chan time.Time {
			if d == time.Minute {
				return deadline
			}
			return clock.after(d)
		}}
	var out bytes.Buffer
	err := c.Run(t.Context(), Stdout{&out}, Stdin{tty})
	assert.EqualError(t, err, "computer 7: screen: the gateway at "+lb.URL+" stopped: start it again, or point --url at another replica; none answered there within 1m0s (--wait)")
	assert.Contains(t, out.String(), "replica 1")
	assert.Contains(t, out.String(), "no gateway answers at "+lb.URL+"; waiting up to 1m0s for one to start there")
	assert.Contains(t, out.String(), "replica 4", "shown again once a replica is up")
	assert.NotContains(t, out.String(), "502")
}
