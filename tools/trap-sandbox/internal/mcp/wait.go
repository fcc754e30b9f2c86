package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
)

// wait_for_screen waits on a computer's screen for an agent: for a program slower than one
// send_text's settle (a build, a turtle digging, a door waiting for its redstone signal), an
// agent otherwise called read_screen again and again, each call a model turn. It is one more
// viewer of the screen's live watch, the one the web console, the CLI's live view and the
// host API's stream share (docs/screen.md), never a loop of screen.read.

// Screens watches computers' screens live: on the gateway its screen module (one watch per
// screen, shared by every viewer), for the stdio bridge the host API's stream of that watch.
type Screens interface {
	// WatchScreen adds a viewer of traposID's own screen, or of its monitor named monitor ("":
	// its own), starting the computer's watch, within timeout, when it is the first viewer. A
	// refusal is the computer's (forbidden without sandbox.allow_screen, bad_payload for a
	// name that is no monitor) or the gateway's (not_connected, an older client's monitor).
	// The watch must be closed.
	WatchScreen(ctx context.Context, traposID, monitor string, timeout time.Duration) (ScreenWatch, error)
}

// ScreenWatch is one viewer of a watched screen.
type ScreenWatch interface {
	// Next waits for a screen newer than the last it returned (the first call: the screen as
	// it is) and returns the newest, those between skipped. It fails with ctx's error when ctx
	// ends first (one newer already there may be returned after ctx ended: a caller that
	// loops keeps its own end), or with a *protocol.Error when the watch ended: the computer disconnected
	// (computer.LeftBeforeAnswer's not_connected), its owner withdrew the screen, the monitor
	// was taken off, the caller's token was revoked, the gateway is stopping.
	Next(ctx context.Context) (computer.Screen, error)
	// Close stops viewing; the last viewer's Close stops the watch on the computer.
	Close()
}

// WaitInput is wait_for_screen's input.
type WaitInput struct {
	TraposID string `json:"traposId" jsonschema:"the computer, as list_computers shows it (e.g. 7:kitchen)"`
	Text     string `json:"text,omitempty" jsonschema:"wait until a row of the screen shows this text: part of one row, as read_screen's text shows it, spaces included (e.g. Done or Password: ; é is one byte, as CC shows it); without it, wait until the screen changes from what it shows when the call begins"`
	Monitor  string `json:"monitor,omitempty" jsonschema:"wait on this monitor attached to the computer instead of its own screen: its name, a side (top) or a wired modem's (monitor_0), as read_screen's monitors names them"`
	Colours  bool   `json:"colours,omitempty" jsonschema:"also return each row's colours (blit strings) and the palette"`
	Cursor   bool   `json:"cursor,omitempty" jsonschema:"also return the cursor's position (1-based) and whether it blinks"`
	// TimeoutMs bounds the whole wait, as every tool's: past it the screen comes back as it is.
	TimeoutMs int64 `json:"timeoutMs,omitempty" jsonschema:"how long to wait, in milliseconds (default 10000); past it the screen is returned as it is then, with timedOut true"`
}

// stillAuthorizedEvery is how often a wait asks whether the caller's token still opens the API
// (computer.Client.StillAuthorized), on a still screen and on a busy one alike: a token revoked
// during a wait of up to a minute ends it within this, as a new call with it is refused. It
// asks once more before it answers with a screen, so a revoked token sees none. The screens in
// between are not shown to the caller, and are not checked one by one: a computer redrawing as
// fast as it can, under many waits, made a token read of the account store (on NATS, of the
// bucket's stream leader) for each of its screens and each wait.
const stillAuthorizedEvery = time.Second

// waitForScreen answers with the screen once it shows in.Text in a row, or, without text,
// once it differs from the first screen the watch gave (the screen as the call began); or,
// when timeoutMs passes first, with the screen then and timedOut. It fails when the watch
// cannot start or ends under it (the computer gone, the screen withdrawn, the token revoked)
// and when the client cancels the call; its viewer is closed either way.
func (t *tools) waitForScreen(ctx context.Context, in WaitInput) (ScreenOutput, error) {
	part, err := waitedText(in.Text)
	if err != nil {
		return ScreenOutput{}, err
	}
	if t.screens == nil {
		return ScreenOutput{}, protocol.Errorf(protocol.CodeInternal, "this MCP server watches no screens")
	}
	timeout := timeoutOf(in.TimeoutMs)
	if timeout <= 0 {
		timeout = computer.DefaultTimeout
	}
	timeout = min(timeout, computer.MaxTimeout)
	start := t.clock.Now()
	// The wait ends at timeoutMs, or at callBound's deadline of the call (ctx's), whichever
	// comes first; the call's own end (the client cancelled it) is ctx's Canceled.
	wait, cancel := clock.WithTimeout(ctx, t.clock, timeout)
	defer cancel()
	// The wait ran out (timeoutMs, or the call's bound), not cancelled by the client.
	ranOut := func() bool { return wait.Err() != nil && !errors.Is(ctx.Err(), context.Canceled) }
	w, err := t.screens.WatchScreen(wait, in.TraposID, in.Monitor, timeout)
	if err != nil {
		return ScreenOutput{}, err
	}
	// The answer does not wait for the viewer to close: the last viewer's Close waits for the
	// computer to confirm the watch's end (screen.unwatch, up to computer.DefaultTimeout), and
	// a computer slow to answer held every wait's answer, a timedOut one up to 10 s past its
	// timeoutMs. The viewer is closed all the same, at once.
	defer func() { go w.Close() }()
	notSent := func(err error) error {
		if ranOut() {
			return protocol.Errorf(protocol.CodeTimeout, "computer %s did not send its screen within the %d ms waited", cctext.ShowTraposID(in.TraposID), t.clock.Now().Sub(start).Milliseconds())
		}
		return err
	}
	// The computer's own screen's answer names the monitors attached, as read_screen's does
	// (computer.Screen's Monitors, bounded where the gateway reads them): a watch's updates
	// name none, and an answer without monitors says that none is attached, so an agent
	// waiting in vain for what a program drew on a monitor had no word of the monitor.
	var attached computer.Screen
	if in.Monitor == "" {
		if attached, err = t.client.ReadScreen(wait, in.TraposID, timeout); err != nil {
			return ScreenOutput{}, notSent(err)
		}
	}
	first, err := w.Next(wait)
	if err != nil {
		return ScreenOutput{}, notSent(err)
	}
	shown := func(s computer.Screen) bool {
		if part != "" {
			return s.Shows(part)
		}
		return !s.Equal(first)
	}
	last, timedOut := first, false
	checked := t.clock.Now() // the token opened the API as the call began
	for !shown(last) {
		s, err := t.nextWhileAuthorized(ctx, wait, w, &checked)
		if err != nil && ranOut() {
			timedOut = true // timeoutMs passed: the screen as it is is the answer
			break
		}
		if err != nil {
			return ScreenOutput{}, leftWhileWatched(err, in, t.clock.Now().Sub(start))
		}
		last = s
	}
	if still := t.answerStillAuthorized(ctx); still != nil {
		return ScreenOutput{}, still
	}
	if in.Monitor == "" {
		last.Monitors, last.MonitorsLeftOut = attached.Monitors, attached.MonitorsLeftOut
	}
	out := screenOutput(last, in.Colours, in.Cursor)
	waited := t.clock.Now().Sub(start).Milliseconds()
	out.WaitedMs, out.TimedOut = &waited, timedOut
	if timedOut {
		// A monitor waited on is called the monitor, not named (its name in the answer is the
		// computer's words, which a note never quotes): "The screen did not show" read as the
		// computer's own screen, which the agent had not waited on.
		out.waitedOn = "screen"
		if in.Monitor != "" {
			out.waitedOn = "monitor"
		}
		out.waitedFor = "did not change"
		if part != "" {
			out.waitedFor = fmt.Sprintf("did not show %q", in.Text)
		}
	}
	return out, nil
}

// leftWhileWatched words the not_connected of a computer that went away while the wait
// watched its screen (computer.LeftBeforeAnswer's, Left): it answered the watch, and the
// request's "disconnected before it answered" read as if it never had; the wait says what it
// watched, how long, and what it waited for, and how to wait on once the computer is back. So
// does the not_connected of a computer whose socket went with the replica holding it
// (ReplicaGone: it stopped, or went silent), after the gateway's words of what became of that
// replica, and why the computer comes back (its daemon connects again elsewhere), marked Left
// as it went during the call; it read "replica a, which held its socket, has stopped" alone,
// with no word of the wait nor of waiting on. Any other error is returned as it is.
func leftWhileWatched(err error, in WaitInput, waited time.Duration) error {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok || pe.Code != protocol.CodeNotConnected || pe.ByComputer || !pe.Left && pe.ReplicaGone == "" {
		return err
	}
	screen, what := "its screen", "changed"
	if in.Monitor != "" {
		screen = "its monitor " + cctext.Show(in.Monitor, false)
	}
	if in.Text != "" {
		what = fmt.Sprintf("showed %q", in.Text)
	}
	if !pe.Left {
		out := pe.WithMessage(fmt.Sprintf("%s, while the wait watched %s, %d ms in, before it %s (its daemon connects again by itself, to a replica still running, within seconds); "+waitOn,
			pe.Message, screen, waited.Milliseconds(), what))
		out.Left = true
		return out
	}
	return pe.WithMessage(fmt.Sprintf("computer %s disconnected while the wait watched %s, %d ms in, before it %s (it may be rebooting, or it was shut down or its chunk unloaded); "+waitOn,
		cctext.ShowTraposID(in.TraposID), screen, waited.Milliseconds(), what))
}

// waitOn ends leftWhileWatched's words: how the agent waits on once the computer is back.
const waitOn = "ping with wait true waits for it to come back, and wait_for_screen then waits on"

// nextWhileAuthorized is w's next screen, waited for until wait ends, asking whether the
// caller's token still opens the API once stillAuthorizedEvery has passed since it last asked
// (checked, updated), whether the screen stays still or changes: a revoked one ends the wait
// with its unauthorized.
func (t *tools) nextWhileAuthorized(ctx, wait context.Context, w ScreenWatch, checked *time.Time) (computer.Screen, error) {
	for {
		// The wait keeps its own end: a watch's Next returns a screen it has not returned
		// before without looking at its ctx (the screen module's viewer), and a computer that
		// sends screens faster than the wait reads them held the call past its timeoutMs and
		// its cancel, with its viewer and its account's place, as long as they came.
		if err := wait.Err(); err != nil {
			return computer.Screen{}, err
		}
		tick, stop := clock.WithTimeout(wait, t.clock, max(stillAuthorizedEvery-t.clock.Now().Sub(*checked), 0))
		s, err := w.Next(tick)
		stop()
		if err != nil && (wait.Err() != nil || !errors.Is(err, context.DeadlineExceeded)) {
			return computer.Screen{}, err
		}
		if t.clock.Now().Sub(*checked) >= stillAuthorizedEvery {
			if still := t.client.StillAuthorized(ctx); still != nil {
				return computer.Screen{}, still
			}
			*checked = t.clock.Now()
		}
		if err == nil {
			return s, nil
		}
	}
}

// answerStillAuthorized asks, before a wait answers with a screen, whether the caller's token
// still opens the API: also when the wait ended at the call's own bound (ctx's deadline), so
// the store is asked with ctx's values but not its end, for as long as a check may take.
func (t *tools) answerStillAuthorized(ctx context.Context) error {
	check, cancel := clock.WithTimeout(context.WithoutCancel(ctx), t.clock, stillAuthorizedEvery)
	defer cancel()
	return t.client.StillAuthorized(check)
}

// waitedText is wait_for_screen's text as a row holds it (host text, CC's bytes: Tür is the
// byte FC as CC shows it), or "" for none (wait for any change). A line break cannot be in one
// row, a character above U+00FF in none, and no row is longer than protocol.MaxScreenSide:
// any of these could never be shown, so the wait would only time out; it is refused instead.
func waitedText(text string) (string, error) {
	if text == "" {
		return "", nil
	}
	if i := strings.IndexAny(text, "\r\n"); i >= 0 {
		return "", protocol.Errorf(CodeBadArgument, "text holds a line break at byte %d: it is looked for within one row of the screen, so give part of one row (e.g. the last line the program prints)", i)
	}
	part, reps := cctext.Wire("text", text)
	if len(reps) > 0 {
		return "", protocol.Errorf(CodeBadArgument, "text holds %q (%s), which no screen of CC's can show (it shows the characters up to U+00FF), so it could never be found; leave it out of text", reps[0].Char, reps[0].CodePoint)
	}
	if n := protocol.WireLen(part); n > protocol.MaxScreenSide {
		// No row is wider (computer.RowProblem): a text of 100 KB was looked for in every
		// screen for up to a minute, and came back whole in the note of the wait that timed out.
		return "", protocol.Errorf(CodeBadArgument, "text is %d characters long, and no screen of CC's has a row of more than %d, so it could never be found; give part of one row (e.g. the last line the program prints)", n, protocol.MaxScreenSide)
	}
	return part, nil
}

// waitNote is what wait_for_screen says beside a screen it answered with at its timeout:
// timedOut means so in the output schema only, which opencode does not hand the model. ""
// when the wait found what it waited for.
func (o ScreenOutput) waitNote() string {
	if !o.TimedOut || o.WaitedMs == nil {
		return ""
	}
	note := fmt.Sprintf("The %s %s within the %d ms waited (timedOut true): this is the %s as it is now. "+
		"wait_for_screen again waits on (timeoutMs waits up to %d a call).", o.waitedOn, o.waitedFor, *o.WaitedMs, o.waitedOn, computer.MaxTimeout.Milliseconds())
	if n := len(o.Monitors) + o.MonitorsLeftOut; o.Monitor == "" && n > 0 {
		// Their names are the computer's words, which a note never quotes: the list has them.
		monitors := fmt.Sprintf("%d monitors", n)
		if n == 1 {
			monitors = "a monitor"
		}
		note += " The computer has " + monitors + " attached (monitors): what a program draws on a monitor shows there, not on this screen; " +
			"wait_for_screen with monitor waits on one."
	}
	return note
}
