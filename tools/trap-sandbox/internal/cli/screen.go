package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"fakecraft/ccstr"
	fcomputer "fakecraft/computer"
	"fakecraft/console"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/screen"
	"trap-sandbox/internal/server"
)

// ScreenCmd is `trap-sandbox screen ID`: the computer's screen live in this terminal, in
// colour, with this terminal's keys typed on it. The renderer and the key mapping are
// fakecraft shell's (fakecraft/console), so both show and type the same way.
type ScreenCmd struct {
	APIFlags
	TraposID string        `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
	Colours  string        `help:"How to send colours: truecolor (24-bit), 256, or auto (truecolor when COLORTERM says the terminal has it)." enum:"auto,truecolor,256" default:"auto"`
	Wait     time.Duration `help:"How long the view waits for a computer that went away (a reboot, its chunk unloaded, or its gateway stopped: it restarted, or another at --url, may show it) to come back before it ends; 0 waits until you leave." default:"5m"`
	Monitor  string        `help:"Show this monitor attached to the computer (a side such as top, or a wired modem's monitor_0) instead of the computer's own screen: live, read only, in a terminal; printed once, as CC's font draws it, when stdin or stdout is not a terminal (as --once)." placeholder:"NAME"`
	Once     bool          `help:"Print what the screen (or --monitor's monitor) shows once, as CC's font draws it, and end, instead of the live view; needs no terminal. The computer's own screen is followed by a line naming its monitors, when it has some."`
	Timeout  CallTimeout   `default:"10s" help:"How long the read once (--once, or a monitor printed once) may take (more than 0, at most 60s); the live view's calls take the gateway's own."`

	busyRetry time.Duration                        // the wait after a busy answer without Retry-After (0: server.BusyRetry)
	after     func(time.Duration) <-chan time.Time // the clock busy waits and the wait for the computer run on (nil: time.After)
}

// The view asks again for a computer that went away after firstLookAgain, then twice as long
// each time, up to lookAgainAtMost (the web console's 2 s): a reboot is back within a second
// or two, and a computer away for longer is not asked for in a loop.
const (
	firstLookAgain  = 250 * time.Millisecond
	lookAgainAtMost = 2 * time.Second
)

// maxBusyWait bounds the wait a busy answer's Retry-After asks for (the web console's bound):
// a broken or hostile gateway's hour, or year, must not leave the view waiting for ever.
const maxBusyWait = time.Minute

// busyWait is how long to wait after busy, a busy answer, before asking again: its
// Retry-After, at most maxBusyWait; fallback when it names none (a gateway older than the
// header, or 0, which would ask again at once, in a loop).
func busyWait(busy error, fallback time.Duration) time.Duration {
	if pe, ok := errors.AsType[*protocol.Error](busy); ok && pe.RetryAfter > 0 {
		return min(pe.RetryAfter, maxBusyWait)
	}
	return fallback
}

// Run shows the screen until the computer goes away, the terminal's input ends, or Ctrl-S is
// held (as fakecraft shell's shutdown, here: leave; the computer stays on).
func (c *ScreenCmd) Run(ctx context.Context, out Stdout, in Stdin) error {
	// A monitor's screen printed once where there is no terminal to show it live in, as
	// --monitor did before monitors had a live view: a script that reads it gets it still.
	if c.Once || c.Monitor != "" && !(aTerminal(in.Reader) && aTerminal(out.Writer)) {
		return c.printOnce(ctx, out)
	}
	// A pipe or a file on stdin gets one line, not the ioctl's errno (RunCommand names the
	// command before it).
	notATerminal := fmt.Errorf("stdin is not a terminal, which it needs for your keys; `%s` reads the screen once", c.readOnce())
	tty, ok := in.Reader.(*os.File)
	if !ok || !console.IsTerminal(int(tty.Fd())) {
		return notATerminal
	}
	// A terminal that says 0×0 has no size set (a pty whose opener never set it: script(1)
	// run from a pipe, docker exec -t before its first resize): drawn in as one whose size
	// cannot be read, where "make it larger" was asked of a size no one can change. Any other
	// is read again at each resize (SIGWINCH), and the view laid out anew (lay).
	size := func() (int, int) {
		w, h, err := console.Size(int(tty.Fd()))
		if err != nil {
			return 0, 0
		}
		return w, h
	}
	if termW, termH := size(); termW > 0 && termH > 0 && (termW < minViewWidth || termH < minViewHeight) {
		// Before the stream, which would start a watch on the computer for nothing.
		return fmt.Errorf("this terminal is %d×%d, and the view needs %d×%d at least: make it larger (`%s` reads the screen once)",
			termW, termH, minViewWidth, minViewHeight, c.readOnce())
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Opened before the terminal is made raw: while it waits for a busy computer, Ctrl-C is
	// still the terminal's interrupt.
	body, err := c.stream(ctx, out)
	if ctx.Err() != nil {
		return nil // SIGINT or SIGTERM while it waited: leaving, as in the view
	}
	if err != nil {
		return err
	}
	defer body.Close()
	restore, err := console.MakeRaw(int(tty.Fd()))
	if err != nil {
		return notATerminal
	}
	defer func() { _ = restore() }()
	// The mouse reports are the view's to turn on, where clicks are sent (mouseReports).
	if _, err := out.Write(console.StartWithoutMouse()); err != nil {
		return err
	}
	defer func() { _, _ = out.Write(console.Stop()) }()
	resized := make(chan struct{}, 1)
	stopResizes := console.NotifyResize(func() {
		select {
		case resized <- struct{}{}:
		default: // one waiting is enough: the size is read when it is taken
		}
	})
	defer stopResizes()
	v := &viewer{renderer: console.Renderer{Mode: colourMode(c.Colours)}, out: out,
		send: c.typeKeys, info: c.info, busyRetry: cmp.Or(c.busyRetry, server.BusyRetry), after: c.after,
		reopen: c.open, waitFor: c.Wait, size: size, resized: resized, monitor: c.Monitor}
	if c.Monitor != "" {
		v.info = nil // a monitor takes no keys: what its owner allows of them is not asked
	}
	err = v.run(ctx, tty, body)
	_, _ = out.Write(console.Stop())
	if err != nil {
		return c.viewFailure(c.Monitor, err)
	}
	return nil
}

// viewFailure is failure of the live view (asked: the monitor as the command sent it): a
// timeout names no fix, as no flag gives the view's calls longer (--timeout is the read
// once's), where failure's "--timeout gives it longer" was told of them.
func (c *ScreenCmd) viewFailure(asked string, err error) error {
	return failureFix(c.TraposID, c.command(asked, err), err, "")
}

// command names the command in its failures: "screen", or "screen --monitor left", the monitor
// as the gateway names it back in err (the refusal of a monitor's stream, or the stream's end:
// its monitor, as the gateway asked the computer for it, a side in lower case as CC reads one),
// else as asked (the name the command sent: for a stream as typed, for a read once as
// ReadMonitor asks for it). It named --monitor Left as typed, beside the computer's words about
// "left" (no monitor named "left": …), as the view's status line names it as its frames do.
func (c *ScreenCmd) command(asked string, err error) string {
	if c.Monitor == "" {
		return "screen"
	}
	if end, ok := errors.AsType[streamEnded](err); ok && end.why.Monitor != "" {
		return "screen --monitor " + end.why.Monitor
	}
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.Monitor != "" {
		return "screen --monitor " + pe.Monitor
	}
	return "screen --monitor " + asked
}

// terminalWidth is the width of the terminal w writes to, the command's stdout (as the live
// view reads its own: console.Size), or 0 when it is none or says none (a pipe, a file, a pty
// whose size is not set).
func terminalWidth(w any) int {
	if !aTerminal(w) {
		return 0
	}
	width, _, err := console.Size(int(w.(*os.File).Fd()))
	if err != nil {
		return 0
	}
	return width
}

// aTerminal reports whether f, the command's stdin's reader or stdout's writer, is a terminal
// (a tty, not any character device as isTerminal: /dev/null is no place for a live view).
func aTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && console.IsTerminal(int(file.Fd()))
}

// printOnce prints what the screen shows, or monitor c.Monitor's (computer.Client.ReadScreen,
// ReadMonitor): each row without its trailing spaces, down to the last that shows something,
// each byte as CC's font draws it (ccstr.Glyph: a program's ESC byte is ←, never a terminal's
// escape), then a line naming the rows the computer has not yet seen drawn whole, when there
// are any, and one naming the computer's monitors (monitorsNote), when it has some.
func (c *ScreenCmd) printOnce(ctx context.Context, out Stdout) error {
	var s computer.Screen
	var err error
	if c.Monitor != "" {
		s, err = c.client().ReadMonitor(ctx, c.TraposID, c.Monitor, c.Timeout.Duration())
	} else {
		s, err = c.client().ReadScreen(ctx, c.TraposID, c.Timeout.Duration())
	}
	if err != nil {
		return callFailure(c.TraposID, c.command(computer.MonitorName(c.Monitor), err), c.Timeout, err)
	}
	// Trimmed again once drawn: an empty 2x3 block (byte 128) is drawn as a space.
	var rows []string
	last := 0
	for i, line := range strings.Split(s.Text(), "\n") {
		var drawn strings.Builder
		for _, r := range line {
			if r < 0x100 {
				drawn.WriteString(ccstr.Glyph(byte(r)))
			} else {
				drawn.WriteRune(r)
			}
		}
		rows = append(rows, strings.TrimRight(drawn.String(), " "))
		if rows[i] != "" {
			last = i + 1
		}
	}
	var b strings.Builder
	for _, row := range rows[:last] {
		b.WriteString(row)
		b.WriteByte('\n')
	}
	if len(s.UnknownRows) > 0 {
		fmt.Fprintf(&b, "(%s)\n", liveStatus(false, s.UnknownRows, cmp.Or(s.Monitor, computer.MonitorName(c.Monitor))))
	}
	for _, line := range c.monitorsNote(s, terminalWidth(out.Writer)) {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	_, err = io.WriteString(out, b.String())
	return err
}

// monitorsNote is the lines naming the monitors attached to the computer, as its own screen's
// answer names them (s.Monitors, bounded by the gateway: 64 at most), counting those it leaves
// out, with the command that shows one: "(monitors: top, left and 6 more, not listed; see one
// with: trap-sandbox screen 7:kitchen --monitor top)". None when it names none (no monitor, a
// client before 0.5.29, a monitor's own answer). Each name is a shell word of the command line,
// as typed after --monitor; the computer's bytes that would move this terminal's cursor or
// colour it (a hostile name's ESC) are escaped (cctext.Show).
//
// In a terminal width columns wide (0: not a terminal, where a script reads every name) the
// names are held to its width, as many as fit, the rest counted ("and 60 more"), where 64
// long names made one line many rows long; the command is never cut, as it is to be copied,
// and goes on a line of its own when no name fits beside it.
func (c *ScreenCmd) monitorsNote(s computer.Screen, width int) []string {
	if len(s.Monitors) == 0 && s.MonitorsLeftOut == 0 {
		return nil
	}
	names := make([]string, len(s.Monitors))
	for i, name := range s.Monitors {
		names[i] = shellWord(cctext.Show(name, false))
	}
	example := "NAME"
	if len(s.Monitors) > 0 {
		example = cctext.Show(s.Monitors[0], false)
	}
	hint := "see one with: " + c.commandLine("screen", typedID(c.TraposID), "--monitor", example) + ")"
	// listed names the first shown of names and counts the rest.
	listed := func(shown int) string {
		switch more := len(names) - shown + s.MonitorsLeftOut; {
		case len(names) == 0:
			return fmt.Sprintf("(monitors: %d attached, none listed;", s.MonitorsLeftOut)
		case shown == len(names) && more > 0:
			return "(monitors: " + strings.Join(names, ", ") + fmt.Sprintf(" and %d more, not listed;", more)
		case more > 0:
			return "(monitors: " + strings.Join(names[:shown], ", ") + fmt.Sprintf(" and %d more;", more)
		}
		return "(monitors: " + strings.Join(names, ", ") + ";"
	}
	fits := func(line string) bool { return width <= 0 || len([]rune(line)) <= width }
	least := min(1, len(names)) // one name at least, however long: the command's example
	for shown := len(names); shown >= least; shown-- {
		if line := listed(shown) + " " + hint; fits(line) {
			return []string{line}
		}
	}
	shown := len(names)
	for shown > least && !fits(listed(shown)) {
		shown--
	}
	return []string{listed(shown), hint}
}

// typeKeys types evs on the computer, whole (computer.Client.TypeInput).
func (c *ScreenCmd) typeKeys(ctx context.Context, evs []computer.InputEvent) error {
	_, _, err := c.client().TypeInput(ctx, c.TraposID, evs, 0)
	return err
}

// info asks the computer what its owner allows now (Allowed nil: its client is older than
// 0.5.15 and does not say) and which client it runs (computer.info).
func (c *ScreenCmd) info(ctx context.Context) (computer.Info, error) {
	return c.client().Info(ctx, c.TraposID, 0)
}

// readOnce is the command line that reads the screen once without a terminal, as it runs
// (commandLine: this gateway's --url, the traposId one shell word).
func (c *ScreenCmd) readOnce() string {
	if c.Monitor != "" {
		return c.commandLine("screen", typedID(c.TraposID), "--monitor", c.Monitor, "--once")
	}
	return c.commandLine("screen", typedID(c.TraposID), "--once")
}

// stream opens the gateway's live view of the computer's screen. While the computer is busy
// it asks again after each busy answer's Retry-After (busyWait), as the web console does, and
// says so once on out.
func (c *ScreenCmd) stream(ctx context.Context, out io.Writer) (io.ReadCloser, error) {
	var body io.ReadCloser
	err := whileBusy(ctx, cmp.Or(c.busyRetry, server.BusyRetry), c.after, func() (err error) {
		body, err = c.open(ctx)
		return err
	}, func(busy error, wait time.Duration) {
		fmt.Fprintf(out, "%s\nTrying again every %s (Ctrl-C to stop)…\n", c.viewFailure(c.Monitor, busy), wait)
	})
	if refused, ok := errors.AsType[refusal](err); ok {
		return nil, c.viewFailure(c.Monitor, refused.error)
	}
	return body, err // open, the gateway not reached, or ctx ended
}

// whileBusy calls try until it answers anything but busy (the host's other requests take all
// of the computer's for the moment, and the answer says to retry shortly), waiting between
// tries as each busy answer asks (busyWait; fallback when it does not say) on after's clock
// (nil: time.After), and returns that answer, or ctx's error when ctx ends while it waits.
// firstBusy, when not nil, is told of the first busy answer and its wait.
func whileBusy(ctx context.Context, fallback time.Duration, after func(time.Duration) <-chan time.Time, try func() error,
	firstBusy func(busy error, wait time.Duration)) error {
	if after == nil {
		after = time.After
	}
	for said := false; ; said = true {
		err := try()
		if _, partly := errors.AsType[*computer.PartlyTyped](err); partly || protocol.CodeOf(err) != protocol.CodeBusy {
			return err // an input partly typed is not sent again: its first parts are typed
		}
		wait := busyWait(err, fallback)
		if !said && firstBusy != nil {
			firstBusy(err, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-after(wait):
		}
	}
}

// refusal is the gateway's answer refusing the live view, as its API's error.
type refusal struct{ error }

func (r refusal) Unwrap() error { return r.error }

// open asks the gateway for the live view once (of monitor c.Monitor when it names one); a
// refusal comes back as a refusal. The view is a read: a computer that went away before it
// answered the watch is said in the CLI's words of how to see it back, where the API's
// named its own list (computer.ReadAgain, as the CLI's client words its requests).
func (c *ScreenCmd) open(ctx context.Context) (io.ReadCloser, error) {
	body, err := openScreenStream(ctx, c.transport(), c.TraposID, c.Monitor)
	if refused, ok := errors.AsType[refusal](err); ok {
		return nil, refusal{computer.ReadAgain(refused.error, computer.CLIBackWait)}
	}
	return body, err
}

// openScreenStream asks the gateway at transport for the host API's stream of the screen of
// computer traposID (as the API's path reads it: typed, or a listed id in its shown form) or of
// its monitor named monitor ("": its own screen) once; a refusal comes back as a refusal.
func openScreenStream(ctx context.Context, transport hostapi.HTTP, traposID, monitor string) (io.ReadCloser, error) {
	path := strings.Replace(screen.WatchPattern, "{traposId}", url.PathEscape(traposID), 1)
	if monitor != "" {
		path += "?" + url.Values{screen.MonitorParam: {monitor}}.Encode()
	}
	resp, err := transport.Open(ctx, http.MethodGet, path, nil, "text/event-stream")
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		err := transport.Refusal(resp.StatusCode, data)
		if hostapi.NoGatewayBehind(resp.StatusCode, data) {
			// A load balancer or reverse proxy at --url whose every gateway is down: no
			// gateway answers there, as when nothing listens (awaitComputer waits for one).
			return nil, refusal{noGatewayBehind{url: hostapi.ShownURL(transport.URL), error: err}}
		}
		if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.Code == protocol.CodeBusy {
			pe.RetryAfter = hostapi.RetryAfter(resp.Header)
		}
		if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.Code == protocol.CodeForbidden {
			// The route's only forbidden is the computer's refusal of the watch (its owner's
			// sandbox.allow_screen, docs/screen.md), answered 403: the computer's words, as
			// request screen.read shows them, not the gateway's (Refusal's reading of a 403
			// forbidden, which could be either).
			var ans server.Answer
			_ = json.Unmarshal(data, &ans)
			err = ans.Error.FromTheAPI()
		}
		return nil, refusal{err}
	}
	return resp.Body, nil
}

// colourMode is the flag's mode; auto picks truecolor when $COLORTERM says so.
func colourMode(flag string) console.ColourMode {
	switch flag {
	case "truecolor":
		return console.TrueColour
	case "256":
		return console.Colour256
	}
	ct := strings.ToLower(os.Getenv("COLORTERM"))
	if ct == "truecolor" || ct == "24bit" {
		return console.TrueColour
	}
	return console.Colour256
}

// viewer draws frames from a stream and sends the keys read from a terminal.
type viewer struct {
	renderer console.Renderer
	out      io.Writer
	send     func(context.Context, []computer.InputEvent) error
	// busyRetry is how long keys the gateway refused busy wait before they are sent again
	// when the busy answer names no Retry-After (server.BusyRetry); after is the clock of
	// that wait (nil: time.After).
	busyRetry time.Duration
	after     func(time.Duration) <-chan time.Time
	// reopen asks the gateway for the live view again once the computer went away and may come
	// back (comesBack); nil: the view ends with the stream. waitFor bounds the wait for it (0:
	// until the person leaves). The status line says what the view waits for meanwhile.
	reopen  func(context.Context) (io.ReadCloser, error)
	waitFor time.Duration
	// size reads the terminal's size (0×0, or size nil: not known, drawn in as it comes);
	// resized says it changed (SIGWINCH): the view reads it again and lays itself out anew.
	size    func() (width, height int)
	resized <-chan struct{}
	// info asks the computer what its owner allows now (computer.info's allowed; nil: a
	// client older than 0.5.15, which does not say) and which client it runs (what it takes
	// of the mouse). nil: the view never asks, learns that the computer is only viewed from
	// its refusal of a key, and sends a mouse press as a click, which every client takes.
	info func(context.Context) (computer.Info, error)
	// termW×termH is the terminal's size last read; laid the layout last drawn (drawn: any).
	termW, termH int
	laid         layout
	drawn        bool
	// held is the clock of a held Ctrl-T's keys (console.Decoder's KeepCtrlTDown): it tells
	// the terminal's repeats from a new press, and when the repeats stopped, the keys let go
	// then (nil: clock.Real).
	held clock.Clock
	// monitor names the monitor viewed ("": the computer's own screen). A monitor takes no
	// keys: nothing typed is sent, and the status line says so (monitorStatus).
	monitor string
	// mouseReports: the terminal's mouse reports are on (run turns them on while clicks are
	// sent, and off while they are not, so the user's mouse selects text then).
	mouseReports bool
}

// monitorStatus is the status line's part for a view of monitor name, whose last frame is f:
// that it is read only, and its text scale (how much of it is shown is the layout's: lay).
func monitorStatus(name string, f screen.FrameJSON) string {
	status := fmt.Sprintf("monitor %s, read only: keys are not sent", name)
	if f.TextScale > 0 {
		status += fmt.Sprintf("; text scale %s", strconv.FormatFloat(f.TextScale, 'f', -1, 64))
	}
	return status
}

// While the computer is only viewed (sandbox.allow_screen view), the view asks it again what
// its owner allows after firstViewOnlyLook, then twice as long each time up to
// viewOnlyLookAtMost (the web console's 2 s to 30 s), and at a key pressed meanwhile, once a
// step, so that it gains its keys soon after the owner allows them without asking in a loop.
const (
	firstViewOnlyLook  = 2 * time.Second
	viewOnlyLookAtMost = 30 * time.Second
)

// viewOnlyStatus is the status line of a computer only viewed: within 80 columns, and
// wrapped over the rows under a pocket computer's screen in a narrow terminal.
const viewOnlyStatus = "view only: the owner allows typing with: " + computer.AllowScreenControl

// liveStatus is the status line of a live view ("" when there is nothing to say): whether
// the computer is only viewed, and the rows its mirror has not seen drawn whole (a frame's
// unknownRows: the boot's first lines, a prompt drawn on them since), where the computer, or
// monitor (a monitor's view: its name, "" for the computer's own screen), may show more than
// here, as runs ("2-4, 6"). The web console words them the same (console.js, unseenNote).
func liveStatus(viewOnly bool, unseen []int, monitor string) string {
	var parts []string
	if viewOnly {
		parts = append(parts, viewOnlyStatus)
	}
	if len(unseen) > 0 {
		var runs []string
		for i := 0; i < len(unseen); {
			j := i
			for j+1 < len(unseen) && unseen[j+1] == unseen[j]+1 {
				j++
			}
			if j == i {
				runs = append(runs, strconv.Itoa(unseen[i]))
			} else {
				runs = append(runs, fmt.Sprintf("%d-%d", unseen[i], unseen[j]))
			}
			i = j + 1
		}
		shownOn := "the computer"
		if monitor != "" {
			// The monitor's rows, where the computer's own screen shows other rows.
			shownOn = "monitor " + cctext.Show(monitor, false)
		}
		parts = append(parts, "rows not yet seen whole: "+strings.Join(runs, ", ")+" ("+shownOn+" may show more there)")
	}
	return strings.Join(parts, "; ")
}

// keysWaiting bounds the key presses that wait while keys are being sent (a busy computer's
// wait included); what is typed past them is dropped (a button's release goes still:
// releasesOnly), so that a computer busy for long does not get a burst of stale keys, nor
// hold up the view. A burst that arrives at once (a line sent by tmux, a paste without
// bracketed paste) fits: the keys waiting go together, in one call (sendKeys).
const keysWaiting = 256

// errLeft is run's answer when the person held Ctrl-S to leave.
var errLeft = errors.New("left")

// run draws each frame of stream and sends what in types until the stream or the input
// ends, Ctrl-S is held or ctx ends (SIGINT or SIGTERM: in the raw terminal a Ctrl-C is a key
// for the computer, so a signal comes from outside and ends the view as leaving does). It
// returns nil when the person left, the input ended or ctx did. Keys are sent in order by a
// sender of their own, so the view keeps drawing while they wait for a busy computer
// (sendKeys). A computer only viewed (its owner's sandbox.allow_screen view: computer.info
// says so, or a key is refused forbidden) stays on screen without its keys (viewOnly).
func (v *viewer) run(ctx context.Context, in io.Reader, stream io.Reader) error {
	var workers sync.WaitGroup
	defer workers.Wait() // after cancel and stopSending, deferred below, end them
	// The keys' sender outlives ctx (a signal) by as long as leaving waits for it
	// (sendBeforeLeaving): a signal leaves as Ctrl-S held does, what was typed and a button
	// still held sent first, and ctx's end would have cancelled those sends.
	sendCtx, stopSending := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSending()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	frames := make(chan screen.FrameJSON)
	streamErr := make(chan error, 1)
	away := make(chan string) // the status while the computer is away; "" once it is back
	go func() { streamErr <- v.follow(ctx, stream, frames, away) }()
	var last *fcomputer.Snapshot // the screen last drawn, greyed while the computer is away
	var unseen []int             // the last frame's unknownRows, named on the status line
	live := true
	keys := make(chan []computer.InputEvent) // the sender takes every key waiting at once
	var waiting []computer.InputEvent        // keys typed since the sender last took them
	presses := 0                             // the key presses in waiting
	sent := make(chan error)                 // each batch's answer (sendKeys)
	sending := false                         // a batch is with the sender, its answer not read yet
	workers.Go(func() { v.sendKeys(sendCtx, keys, sent) })
	only := &viewOnly{v: v, ctx: ctx, workers: &workers, answers: make(chan lookAnswer)}
	var mouse pointer // what the computer's client takes of the mouse, learnt with what the owner allows
	only.look()       // what the owner allows, before the first key
	chunks := make(chan typedChunk)
	go readTyped(ctx, in, chunks)
	// The mouse's cells are the screen's last drawn (a pocket computer's 26×20). A held
	// Ctrl-T's keys stay down until its hold ends, their key_up after its terminate, as in
	// CC (and fakecraft shell): the decoder says when the terminal's repeats have stopped
	// (HeldUntil), and the view lets them go then (LetGo), or at the next key.
	var held clock.Clock = clock.Real{}
	if v.held != nil {
		held = v.held
	}
	d := console.Decoder{KeepCtrlTDown: true, Now: held.Now, Screen: v.shown}
	var letGo clock.Timer // set while keys are down, for when they go up
	var letGoAt time.Time
	defer func() {
		if letGo != nil {
			letGo.Stop()
		}
	}()
	// leave sends, before the view ends, the keys typed and a button still held
	// (sendBeforeLeaving), to a computer that is live and controlled.
	leave := func() {
		if live && !only.on {
			v.sendBeforeLeaving(sendCtx, keys, sent, sending, append(waiting, mouse.letGo()...))
		}
	}
	// typed takes one input of the terminal: the keys waiting to be sent, or the view's end
	// (leaving: Ctrl-S held).
	typed := func(input console.Input) (leaving bool) {
		evs, err := eventsOf(input, &mouse)
		if errors.Is(err, errLeft) {
			return true
		}
		if !live || v.monitor != "" {
			mouse.held = false // a press not sent: its drags and release are not either
			return false
		}
		if len(evs) == 0 {
			return false
		}
		if only.on {
			mouse.held = false
			// Not sent, nor kept: the computer would refuse them. A key asks whether the
			// owner allows typing now, once a step: by computer.info, or for a client that
			// does not say, by sending this key alone.
			if only.keyLooked {
				return false
			}
			if only.reported {
				if !only.asking {
					only.keyLooked = true
					only.look()
				}
				return false
			}
			only.keyLooked = true
			waiting, presses = evs, 1
			return false
		}
		if presses < keysWaiting {
			waiting, presses = append(waiting, evs...), presses+1
		} else if releasesOnly(evs) {
			// A release goes however many presses wait, as the web console's does: its
			// press went before them, and dropped it left the button down for ever.
			waiting = append(waiting, evs...)
		}
		return false
	}
	// typedAll takes inputs in order, until one leaves the view: then what was typed before
	// it, and the keys still down, go (leave).
	typedAll := func(inputs []console.Input) bool {
		for _, input := range inputs {
			if typed(input) {
				for _, up := range d.Close() {
					typed(up)
				}
				leave()
				return true
			}
		}
		return false
	}
	// redraw draws the view as it is now: the last screen, greyed while the computer is away,
	// and the status line, saying why it is away, or, live, what the view has to say
	// (liveStatus; a monitor's, monitorStatus), laid out for the terminal (draw).
	var lastFrame screen.FrameJSON // the screen's size as the computer has it; a monitor's text scale
	awayStatus := ""               // why the computer is away, while it is
	redraw := func() error {
		message := awayStatus
		if live && v.monitor == "" {
			message = liveStatus(only.on, unseen, "")
		} else if live {
			// Named as its frames name it: --monitor Top views the monitor top.
			monitor := cmp.Or(lastFrame.Monitor, v.monitor)
			message = joinStatus(monitorStatus(monitor, lastFrame), liveStatus(false, unseen, monitor))
		}
		// Clicks are sent to a computer's own screen, live, controlled and advanced: a monitor
		// takes none, nor does a basic computer (CC fires mouse events on advanced ones only),
		// and a computer only viewed none of the view's. Elsewhere the mouse reports only
		// kept the user from selecting the screen's text.
		if clicks := live && v.monitor == "" && !only.on && !mouse.basic; clicks != v.mouseReports {
			v.mouseReports = clicks
			if _, err := v.out.Write(console.MouseReports(clicks)); err != nil {
				return err
			}
		}
		_, err := v.out.Write(v.draw(last, lastFrame.Width, lastFrame.Height, !live, message))
		return err
	}
	if v.size != nil {
		v.termW, v.termH = v.size()
	}
	for {
		var sendTo chan<- []computer.InputEvent // nil, never ready, while nothing waits
		if len(waiting) > 0 {
			sendTo = keys
		}
		var letGoC <-chan time.Time // nil, never ready, while no key is down
		if at, ok := d.HeldUntil(); !ok {
			if letGo != nil {
				letGo.Stop()
				letGo = nil
			}
		} else {
			if letGo == nil {
				letGo, letGoAt = held.NewTimer(at.Sub(held.Now())), at
			} else if !at.Equal(letGoAt) {
				letGo.Reset(at.Sub(held.Now()))
				letGoAt = at
			}
			letGoC = letGo.C()
		}
		select {
		case <-ctx.Done():
			typedAll(d.Close())
			leave()
			return nil
		case sendTo <- waiting:
			only.probing = only.on // a key sent while only viewed asks whether it still is
			waiting, presses, sending = nil, 0, true
		case err := <-streamErr:
			if ctx.Err() != nil {
				leave()
				return nil // the stream ended because ctx did
			}
			return err
		case ch := <-chunks:
			inputs := d.Feed(ch.bytes)
			if ch.err != nil { // the input ended: the keys still down go up, and what was typed goes
				inputs = append(inputs, d.Close()...)
			}
			if typedAll(inputs) {
				return nil
			}
			if ch.err != nil {
				leave()
				return nil
			}
		case <-letGoC:
			letGo = nil
			if typedAll(d.LetGo()) {
				return nil
			}
		case err := <-sent:
			sending = false
			probe := only.probing
			only.probing = false
			switch code := protocol.CodeOf(err); {
			case err == nil:
				if probe { // the owner allows typing again: the key went
					only.set(false)
					if err := redraw(); err != nil {
						return err
					}
				}
			case code == protocol.CodeNotConnected:
				// the computer went away: its stream's end says so, and the view waits for it
			case code == protocol.CodeForbidden:
				// screen.input needs sandbox.allow_screen control: the view stays, without keys
				waiting, presses = nil, 0
				if !only.on {
					only.set(true)
					if err := redraw(); err != nil {
						return err
					}
				}
			default:
				return err
			}
		case a := <-only.answers:
			if a.err == nil {
				mouse.client(a.clientVersion)
			}
			if only.answered(a) {
				waiting, presses = nil, 0
				if err := redraw(); err != nil {
					return err
				}
			}
		case <-only.next:
			only.step()
		case f := <-frames:
			mouse.basic = !f.Colour
			snap := snapshotOf(f)
			last, unseen, lastFrame = &snap, f.UnknownRows, f
			if lastFrame.Width <= 0 || lastFrame.Height <= 0 { // a frame without a size: snapshotOf's
				lastFrame.Width, lastFrame.Height = snap.Size()
			}
			if err := redraw(); err != nil {
				return err
			}
		case status := <-away:
			// Keys typed while the computer is away are not sent, nor kept for later (as the
			// web console): only what is typed once it is back reaches it.
			live, awayStatus, waiting, presses = status == "", status, nil, 0
			if live {
				only.look() // the owner may have changed it meanwhile
			}
			if err := redraw(); err != nil {
				return err
			}
		case <-v.resized:
			v.termW, v.termH = v.size()
			if err := redraw(); err != nil {
				return err
			}
		}
	}
}

// releasesOnly reports whether evs only let go of what the computer holds down (a key's
// key_up, a button's mouse_up), with no press among them.
func releasesOnly(evs []computer.InputEvent) bool {
	for _, ev := range evs {
		if ev.Type != computer.InputKeyUp && ev.Type != computer.InputMouseUp {
			return false
		}
	}
	return true
}

// viewOnly is a view's knowledge of whether its computer is only viewed, and its asking
// again (computer.info) while it is; run's loop alone uses it.
type viewOnly struct {
	v       *viewer
	ctx     context.Context
	workers *sync.WaitGroup
	answers chan lookAnswer
	// on: the computer is only viewed; the keys are not sent.
	on bool
	// reported: computer.info says what the owner allows (a client from 0.5.15); until it
	// does, or when it does not, a key is the way to ask.
	reported bool
	// asking: a computer.info is under way; again: a step ended meanwhile, and asks once it
	// is answered; keyLooked: a key asked in this step already; probing: the key sent is the
	// one that asks.
	asking, again, keyLooked, probing bool
	// wait is the step of asking again; next fires at its end (nil: no ask waits).
	wait time.Duration
	next <-chan time.Time
}

// lookAnswer is computer.info's allowed (nil: not reported) and clientVersion, or why it was
// not answered.
type lookAnswer struct {
	allowed       *computer.Allowed
	clientVersion string
	err           error
}

// look asks the computer what its owner allows, unless it is asked already or the view
// cannot ask; the answer comes on answers.
func (o *viewOnly) look() {
	if o.v.info == nil || o.asking {
		return
	}
	o.asking = true
	o.workers.Go(func() {
		info, err := o.v.info(o.ctx)
		select {
		case o.answers <- lookAnswer{info.Allowed, info.ClientVersion, err}:
		case <-o.ctx.Done():
		}
	})
}

// answered takes a look's answer and reports whether the view changed (view-only or not).
// An answer that says nothing (a failure, an older client) changes nothing.
func (o *viewOnly) answered(a lookAnswer) bool {
	o.asking = false
	was := o.on
	if a.err == nil && a.allowed != nil {
		o.reported = true
		switch a.allowed.Screen {
		case computer.ScreenControl:
			o.set(false)
		case computer.ScreenView:
			o.set(true)
		}
		// none: the owner withdrew the screen, and the stream's end says so
	}
	switch {
	case o.again:
		o.again = false
		o.look()
	case o.on && o.next == nil:
		o.schedule()
	}
	return o.on != was
}

// set makes the view only viewed, asking again from the first step, or live.
func (o *viewOnly) set(on bool) {
	if on == o.on {
		return
	}
	o.on, o.keyLooked, o.next = on, false, nil
	if on {
		o.wait = firstViewOnlyLook
		o.schedule()
	}
}

// schedule starts the next step: next fires after wait, and the step after is twice as long.
func (o *viewOnly) schedule() {
	o.next = o.v.clock()(o.wait)
	o.wait = min(2*o.wait, viewOnlyLookAtMost)
}

// step is a step's end: a key may ask again, and computer.info is asked (a client that does
// not say is asked by a key: the next step starts).
func (o *viewOnly) step() {
	o.next, o.keyLooked = nil, false
	if o.reported {
		o.again = o.asking // the answer under way was asked before the step ended
		o.look()
		return
	}
	o.schedule()
}

// leavingSendsAtMost bounds how long leaving waits for what was typed before it to reach the
// computer (sendBeforeLeaving): a computer that is busy or gone keeps nobody in the view.
const leavingSendsAtMost = 2 * time.Second

// sendBeforeLeaving hands the sender the keys still waiting (with the release of a button
// the person still held: pointer.letGo) once the batch it has is answered (sending), and waits
// for their answer, at most leavingSendsAtMost in all. Left at once, the keys typed just before
// Ctrl-S were dropped, and a drag's release with them: the computer's program saw the
// button held for ever (a paint stroke that never ends).
func (v *viewer) sendBeforeLeaving(ctx context.Context, keys chan<- []computer.InputEvent, sent <-chan error, sending bool, waiting []computer.InputEvent) {
	if !sending && len(waiting) == 0 {
		return
	}
	giveUp := v.clock()(leavingSendsAtMost)
	wait := func() bool { // the answer of the batch the sender has
		select {
		case <-sent:
			return true
		case <-giveUp:
		case <-ctx.Done():
		}
		return false
	}
	if sending && !wait() {
		return
	}
	if len(waiting) == 0 {
		return
	}
	select {
	case keys <- waiting:
		wait()
	case <-giveUp:
	case <-ctx.Done():
	}
}

// clock is the view's clock (v.after; nil: time.After).
func (v *viewer) clock() func(time.Duration) <-chan time.Time {
	if v.after == nil {
		return time.After
	}
	return v.after
}

// sendKeys sends each batch of keys in order, each batch in one call (computer.Client.TypeInput:
// the gateway types it whole, in as many screen.input requests as it takes, under the
// computer's input turn, so another caller's keys never land inside a line sent by tmux),
// and tells sent each batch's answer, until ctx ends. A busy answer is not the answer: the
// batch is sent again after its Retry-After (whileBusy), the later keys waiting behind it.
func (v *viewer) sendKeys(ctx context.Context, keys <-chan []computer.InputEvent, sent chan<- error) {
	for {
		select {
		case <-ctx.Done():
			return
		case batch := <-keys:
			err := whileBusy(ctx, v.busyRetry, v.after, func() error { return v.send(ctx, batch) }, nil)
			select {
			case sent <- err:
			case <-ctx.Done():
				return
			}
		}
	}
}

// readFrames reads the stream's events into frames until it ends: an `end` event is the
// computer going away.
func readFrames(ctx context.Context, r io.Reader, frames chan<- screen.FrameJSON) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			name = n
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if name == "end" {
			var ans server.Answer
			if json.Unmarshal([]byte(data), &ans) == nil && ans.Error != nil {
				return streamEnded{ans.Error}
			}
			return errors.New("the gateway ended the screen's stream")
		}
		var f screen.FrameJSON
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			return fmt.Errorf("the gateway sent a frame this client cannot read: %v", err)
		}
		select {
		case frames <- f:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("the gateway ended the screen's stream")
}

// streamEnded is the gateway's reason for ending a screen's stream (its `end` event). It is
// shown as the reason itself, "not_connected: computer 7: disconnected": no answer of the
// gateway's to a request of the view's.
type streamEnded struct{ why *protocol.Error }

func (e streamEnded) Error() string { return e.why.Error() }

// follow reads stream's frames into frames, and when the computer goes away in a way it comes
// back from (comesBack) asks for its screen again until it is back (awaitComputer), saying so
// on away, and reads on; so it does when the gateway that served the view stops
// (gatewayStopping), whose computers connect again to another (a replica behind the same
// --url) or to it once it is back. It returns why the view ends: the stream's end that is
// neither, the computer not back in time, no gateway at --url any more (gatewayStopped), or
// ctx's end.
func (v *viewer) follow(ctx context.Context, stream io.Reader, frames chan<- screen.FrameJSON, away chan<- string) error {
	var reopened io.ReadCloser // the stream follow opened, closed when the next replaces it
	defer func() {
		if reopened != nil {
			_ = reopened.Close()
		}
	}()
	for {
		err := readFrames(ctx, stream, frames)
		if ctx.Err() != nil || v.reopen == nil || !comesBack(err) && !gatewayStopping(err) {
			return err
		}
		body, err := v.awaitComputer(ctx, err, away)
		if err != nil {
			return err
		}
		if reopened != nil {
			_ = reopened.Close()
		}
		reopened, stream = body, body
	}
}

// comesBack reports whether why, the end of a computer's screen stream, is the computer
// going away in a way it comes back from by itself: its socket closed (a reboot, its chunk
// unloaded). Not the gateway shutting down, a computer relabelled (it is another traposId
// now) or cut off for its revoked credential, nor any other end (the owner withdrew the
// screen, the token was revoked, the connection to the gateway was lost).
func comesBack(why error) bool {
	end, ok := errors.AsType[streamEnded](why)
	pe := end.why
	return ok && pe.Code == protocol.CodeNotConnected && pe.RelabelledTo == "" && len(pe.Accounts) == 0 &&
		!gatewayStopping(why) && !gateway.WasCutOff(pe)
}

// gatewayStopping reports whether why, the end of a computer's screen stream, is the gateway
// that served it shutting down (gateway.ErrShuttingDown, marked Stopping): its computer did
// not leave, but its socket went with the gateway. Behind a load balancer (docs/scale-out.md)
// another replica at the same --url shows it again within seconds, once its daemon has
// connected there; with one gateway, no gateway answers there (gatewayStopped), or it does once
// restarted.
//
// It reads the mark, never the words. A gateway of a build before the mark (this CLI at
// another version's --url) ends the stream with the words alone, which is read as the
// computer gone (comesBack): the view waits and looks again all the same, and finds no gateway
// there (noGatewayAt) or another one, saying "waiting for it to come back" rather than "for
// another gateway". No fallback to the words is kept for it, as that would keep the very
// comparison a rewording breaks silently.
func gatewayStopping(why error) bool {
	end, ok := errors.AsType[streamEnded](why)
	return ok && end.why.Code == protocol.CodeNotConnected && end.why.Stopping
}

// gatewayStopped ends a view that looked again for its computer (awaitComputer) where no
// gateway answered at --url up to --wait (waited; 0: the view did not wait): the gateway that
// served it stopped, and none took its place at --url. It says so and what to do, where the
// view ended at once with "the gateway is shutting down", saying nothing of either.
type gatewayStopped struct {
	url    string
	waited time.Duration
}

func (e gatewayStopped) Error() string {
	msg := fmt.Sprintf("the gateway at %s stopped: start it again, or point --url at another replica", e.url)
	if e.waited > 0 {
		msg += fmt.Sprintf("; none answered there within %s (--wait)", e.waited)
	}
	return msg
}

// noGatewayBehind is the answer of a load balancer or reverse proxy at --url that reached no
// gateway behind it (hostapi.NoGatewayBehind: its 502 page, with every replica down), the
// error its answer is (error, which says what the proxy answered) with the URL it is at. To a
// view that looks again for its computer it is no gateway at --url, as nothing listening there
// is (noGatewayAt), where the view ended with the proxy's page.
type noGatewayBehind struct {
	url string
	error
}

func (e noGatewayBehind) Unwrap() error { return e.error }

// noGatewayAt reports whether err, the answer to a view's look again, is no gateway answering
// at --url (nothing listens there, or a proxy there reaches none), with that URL as shown.
func noGatewayAt(err error) (string, bool) {
	if none, ok := errors.AsType[hostapi.NoGatewayError](err); ok {
		return none.URL, true
	}
	if none, ok := errors.AsType[noGatewayBehind](err); ok {
		return none.url, true
	}
	return "", false
}

// awaitComputer asks the gateway for the screen of the computer that went away (why) until
// it is back, first after firstLookAgain, then twice as long each time up to lookAgainAtMost,
// at most v.waitFor (0: until ctx ends), on v.after's clock. It says on away why the view
// waits (after the gateway that served it stopped, gatewayStopping: for another gateway at
// --url), then "" once the computer is back, and returns its new stream. No gateway answering
// at --url (noGatewayAt: nothing listens there, a single gateway restarting, or a load
// balancer whose every replica is down answers its 502) is waited for too, said on away, as
// the gateway and its computers come back by themselves: the view ended at its first look, a
// quarter of a second after the stop, before a restarted gateway listened again. It returns
// the answer that is neither not_connected nor busy nor no gateway, or names the computer's
// new traposId (relabelledAway); when the bound passes, gatewayStopped if no gateway answered
// at the last look, else why with the bound.
func (v *viewer) awaitComputer(ctx context.Context, why error, away chan<- string) (io.ReadCloser, error) {
	after := v.after
	if after == nil {
		after = time.After
	}
	say := func(status string) error {
		select {
		case away <- status:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	gone := why.Error()
	if end, ok := errors.AsType[streamEnded](why); ok {
		gone = end.why.Message // its code, not_connected, tells a person nothing more
	}
	waiting, it := "waiting for it to come back", "it"
	if gatewayStopping(why) {
		// The computer did not go: the view looks for a gateway still running at --url.
		waiting, it = "waiting for another gateway at --url", "the computer"
	}
	noneWaiting := "waiting for one to start there"
	var deadline <-chan time.Time
	if v.waitFor > 0 {
		waiting = strings.Replace(waiting, "waiting ", fmt.Sprintf("waiting up to %s ", v.waitFor), 1)
		noneWaiting = strings.Replace(noneWaiting, "waiting ", fmt.Sprintf("waiting up to %s ", v.waitFor), 1)
		deadline = after(v.waitFor)
	}
	// What happened first, then what the view does; the status line ends with the way out.
	if err := say(gone + "; " + waiting); err != nil {
		return nil, err
	}
	noGateway := "" // the URL at which the last look found no gateway, else ""
	waitedOut := func() error {
		if noGateway != "" {
			return gatewayStopped{url: noGateway, waited: v.waitFor}
		}
		return fmt.Errorf("%w; %s did not come back within %s (--wait)", why, it, v.waitFor)
	}
	for wait := firstLookAgain; ; wait = min(2*wait, lookAgainAtMost) {
		select {
		case <-deadline: // first: a gateway answering at once must not keep the view past it
			return nil, waitedOut()
		default:
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline:
			return nil, waitedOut()
		case <-after(wait):
		}
		body, err := v.reopen(ctx)
		if err == nil {
			return body, say("")
		}
		if url, ok := noGatewayAt(err); ok {
			if noGateway == "" {
				if err := say("no gateway answers at " + url + "; " + noneWaiting); err != nil {
					return nil, err
				}
			}
			noGateway = url
			continue
		}
		if noGateway != "" {
			// A gateway answers again, without the computer yet: waiting for it, as at first.
			noGateway = ""
			if err := say(gone + "; " + waiting); err != nil {
				return nil, err
			}
		}
		if code := protocol.CodeOf(err); code != protocol.CodeNotConnected && code != protocol.CodeBusy || relabelledAway(err) {
			return nil, err
		}
	}
}

// relabelledAway reports whether err, the gateway's answer to a view asked for again, says the
// computer was relabelled meanwhile (its relabelledTo): it comes back under another traposId,
// never this one, and the view ends naming it, as a stream that ends with a relabel does.
func relabelledAway(err error) bool {
	pe, ok := errors.AsType[*protocol.Error](err)
	return ok && pe.RelabelledTo != ""
}

// draw is the output that shows the view as it is now in the terminal (termW×termH): the
// screen last (nil: none yet), greyed when grey (the computer is away), whose size as the
// computer has it is w×h, and the status line with message (lay). A layout other than the one
// drawn last clears the terminal and draws it all again; the same one draws what changed.
func (v *viewer) draw(last *fcomputer.Snapshot, w, h int, grey bool, message string) []byte {
	if last != nil && (w <= 0 || h <= 0) {
		w, h = last.Size()
	} else if last == nil {
		w, h = fcomputer.TermWidth, fcomputer.TermHeight // until the first frame says
	}
	l := lay(v.termW, v.termH, w, h, cctext.Show(message, false))
	var b bytes.Buffer
	b.WriteString("\x1b[?25l")
	drawnStatus := v.laid.status
	if !v.drawn || l.shownW != v.laid.shownW || l.shownH != v.laid.shownH || l.statusRow != v.laid.statusRow || l.tooSmall != v.laid.tooSmall {
		b.WriteString("\x1b[0m\x1b[2J")
		v.renderer.Invalidate()
		drawnStatus = nil
	}
	if !slices.Equal(l.status, drawnStatus) {
		for i := range max(len(l.status), len(drawnStatus)) {
			fmt.Fprintf(&b, "\x1b[%d;1H\x1b[0m\x1b[2K", l.statusRow+i)
			if i < len(l.status) {
				fmt.Fprintf(&b, "\x1b[7m%s\x1b[0m", l.status[i])
			}
		}
	}
	v.laid, v.drawn = l, true
	if last != nil && !l.tooSmall {
		snap := *last
		snap.Colour = snap.Colour && !grey // drawn in CC's greys, as a basic computer's: not the live screen
		v.renderer.Width, v.renderer.Height = l.shownW, l.shownH
		b.Write(v.renderer.Frame(&snap)) // last: it leaves the cursor where the computer has it
	}
	return b.Bytes()
}

// shown is the screen's part the terminal shows (lay), whose cells the mouse reports are: a
// click on the status line under a screen cut short is not one on the row it hides.
func (v *viewer) shown() (int, int) {
	if !v.drawn {
		return fcomputer.TermWidth, fcomputer.TermHeight
	}
	return v.laid.shownW, v.laid.shownH
}

// eventsOf is a terminal input as screen.input events: keys by CC's name, the mouse as mouse
// takes it (pointer.events), Ctrl-T held as terminate, Ctrl-S held as errLeft. Ctrl-R (reboot:
// not a host's to do) sends nothing.
func eventsOf(in console.Input, mouse *pointer) ([]computer.InputEvent, error) {
	switch in.Action {
	case console.Terminate:
		return []computer.InputEvent{{Type: computer.InputTerminate}}, nil
	case console.Shutdown:
		return nil, errLeft
	case console.Reboot:
		return nil, nil
	}
	var evs []computer.InputEvent
	for _, ev := range in.Events {
		switch ev.Name {
		case "key", "key_up":
			if name, ok := console.KeyName(ev.Key); ok {
				evs = append(evs, computer.InputEvent{Type: ev.Name, Name: name})
			}
		case "char": // the decoder's CC bytes as host text, which SendInput turns back into them
			evs = append(evs, computer.InputEvent{Type: computer.InputChar, Text: cctext.FromCC([]byte(ev.Text))})
		case "paste":
			evs = append(evs, computer.InputEvent{Type: computer.InputPaste, Text: cctext.FromCC([]byte(ev.Text))})
		case "mouse_click", "mouse_drag", "mouse_up":
			if !mouse.basic {
				evs = append(evs, mouse.events(ev)...)
			}
		case "mouse_scroll":
			if !mouse.basic {
				evs = append(evs, computer.InputEvent{Type: computer.InputScroll, Direction: ev.Button, X: ev.X, Y: ev.Y})
			}
		}
	}
	return evs, nil
}

// pointer is what the view sends of the terminal's mouse (its presses, drags with a button held,
// and releases, as the terminal reports them: console's mouse_click, mouse_drag and mouse_up)
// to a computer whose client takes drags (from client 0.5.21) and a press apart from its
// release (0.5.22), as the web console sends a browser's: the press, the drags, the release
// where the button is let go. A client that takes neither gets the press as a click, press and
// release at once, as before (a drag would have it refuse the whole call, the keys sent with
// it too); one that takes drags alone, the click, then the drags.
type pointer struct {
	drags, pressApart bool
	// basic: the computer is a basic one (its frames' colour false), which takes no mouse, as
	// CC fires mouse events on advanced computers only: nothing of the mouse is sent (its client
	// refuses a request with one whole, the keys typed with it too).
	basic bool
	// held: a press was sent whose drags and release are to follow; button its button, x, y
	// the cell it was last on (a terminal may report a move within a cell: CC sends a drag a
	// cell).
	held         bool
	button, x, y int
}

// letGo is the release of the button still held when the view ends, where it was last (none
// when no press waits for its release, or the release came with the press: a click).
func (p *pointer) letGo() []computer.InputEvent {
	if !p.held || !p.pressApart {
		return nil
	}
	p.held = false
	return []computer.InputEvent{{Type: computer.InputMouseUp, Button: p.button, X: p.x, Y: p.y}}
}

// client takes what the computer's client (computer.info's clientVersion) takes of the mouse.
func (p *pointer) client(version string) {
	p.drags = computer.TakesInput(version, computer.InputDrag)
	p.pressApart = computer.TakesInput(version, computer.InputMouseClick) && computer.TakesInput(version, computer.InputMouseUp)
}

// events is the screen.input events for the terminal's mouse event ev (not a scroll).
func (p *pointer) events(ev console.Event) []computer.InputEvent {
	at := computer.InputEvent{Button: ev.Button, X: ev.X, Y: ev.Y}
	switch {
	case ev.Name == "mouse_click" && p.pressApart:
		at.Type, p.held = computer.InputMouseClick, true
	case ev.Name == "mouse_click":
		at.Type, p.held = computer.InputClick, p.drags
	case ev.Name == "mouse_drag" && p.held && (ev.X != p.x || ev.Y != p.y):
		at.Type = computer.InputDrag
	case ev.Name == "mouse_up" && p.held && p.pressApart:
		at.Type, p.held = computer.InputMouseUp, false
	default: // a move within the cell, a drag or release of no press sent, or the release a click sent with its press
		p.held = p.held && ev.Name != "mouse_up"
		return nil
	}
	p.button, p.x, p.y = ev.Button, ev.X, ev.Y
	return []computer.InputEvent{at}
}

// snapshotOf is a frame as the renderer draws it: the computer's screen at the top left, at
// its size (a pocket computer's 26×20), cut to fakecraft's largest, 51×20; a frame without
// a size is a computer's 51×19.
func snapshotOf(f screen.FrameJSON) fcomputer.Snapshot {
	snap := fcomputer.Snapshot{CursorX: f.Cursor.X, CursorY: f.Cursor.Y, Blink: f.Cursor.Blink, Colour: f.Colour,
		Palette: fcomputer.DefaultPalette}
	if f.Width > 0 && f.Height > 0 {
		snap.Width, snap.Height = min(f.Width, fcomputer.MaxWidth), min(f.Height, fcomputer.MaxHeight)
	}
	width, height := snap.Size()
	for i, hex := range f.Palette {
		if v, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32); err == nil && i < 16 {
			snap.Palette[i] = uint32(v)
		}
	}
	for y := range height {
		var row computer.Row
		if y < len(f.Rows) {
			row = f.Rows[y]
		}
		// The row's text by the text rule: one CC byte per character, as the computer holds it.
		text, _ := cctext.ToCC("", row.Text)
		for x := range width {
			cell := fcomputer.Cell{Char: ' ', FG: 0, BG: 15}
			if x < len(text) {
				cell.Char = text[x]
			}
			if x < len(row.FG) {
				cell.FG = blitDigit(row.FG[x], 0)
			}
			if x < len(row.BG) {
				cell.BG = blitDigit(row.BG[x], 15)
			}
			snap.Cells[y][x] = cell
		}
	}
	return snap
}

// blitDigit is a blit character's palette index (def when it is none).
func blitDigit(c byte, def uint8) uint8 {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return def
}

// typedChunk is one read of the view's terminal: its bytes, and the error that ended the
// input.
type typedChunk struct {
	bytes []byte
	err   error
}

// readTyped reads the view's terminal into chunks until the input ends or ctx does.
func readTyped(ctx context.Context, in io.Reader, chunks chan<- typedChunk) {
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		select {
		case chunks <- typedChunk{bytes: append([]byte(nil), buf[:n]...), err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}
