package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"fakecraft/computer"
	"fakecraft/computer/machine"
	"fakecraft/console"
)

// ShellProgram is what `fakecraft shell` runs on a TrapOS computer, and `fakecraft run`'s
// TrapOS computer after a reboot: CC's shell with no arguments (a prompt), then shutdown. A
// bare computer's own shell shows its prompt anyway.
const ShellProgram = computer.LauncherDir + "/console.lua"

// ShellCmd is `fakecraft shell`.
type ShellCmd struct {
	computerFlags
	virtualTimeOff
	dropFlags
	touchFlags
	autostartFlags
	Bare      bool          `help:"A fresh CC: Tweaked computer: no trapos/ and no TrapOS launcher; it runs its startup files, then shows its prompt."`
	TimeLimit time.Duration `help:"Turn the computer off after this much real time (0: never)." default:"0"`
	Colours   string        `help:"How to send colours: truecolor (24-bit), 256, or auto (truecolor when COLORTERM says the terminal has it)." enum:"auto,truecolor,256" default:"auto"`
}

// Run boots the computer with its screen in the terminal until it shuts down. A reboot
// (Ctrl-R, os.reboot) boots it again over the same files.
func (s *ShellCmd) Run(e *env) error {
	s.touches = s.Touch
	// The computer's notes for stderr (a --set value its /.settings overrides) wait until
	// the terminal is given back: the screen drawn on it would hide them.
	var notes bytes.Buffer
	defer func() { _, _ = e.stderr.Write(notes.Bytes()) }()
	noted := *e
	noted.stderr = &notes
	opts, rootDir, err := s.options(&noted, s.Bare)
	if err != nil {
		return err
	}
	opts.VirtualTime = s.VirtualTime
	if s.Bare {
		opts.Bare = true
	} else {
		if opts.Autostart, err = s.servers(rootDir); err != nil {
			return err
		}
		opts.Program = ShellProgram
	}
	if opts.Drop, err = s.files(); err != nil {
		return err
	}
	opts.Stdout = nil // the screen is drawn, not transcribed
	opts.Multishell = true
	ctx, cancel, err := limited(s.TimeLimit)
	if err != nil {
		return err
	}
	defer cancel()
	tty, out, err := terminal(e)
	if err != nil {
		return err
	}
	fd := int(tty.Fd())
	restore, err := console.MakeRaw(fd)
	if err != nil {
		return &exitError{code: ExitUsage, msg: fmt.Sprintf("shell could not set up the terminal (%v); `fakecraft run PROGRAM` prints a transcript instead", err)}
	}
	defer func() { _ = restore() }()
	cols, rows, err := console.Size(fd)
	width, height := computer.TermWidth, computer.TermHeight
	if s.Pocket {
		width, height = computer.PocketWidth, computer.PocketHeight
	}
	if err == nil && cols > 0 && rows > 0 && (cols < width || rows < height) {
		fmt.Fprintf(e.stderr, "fakecraft: this terminal is %dx%d; the computer's screen needs %dx%d\r\n",
			cols, rows, width, height)
	}

	if _, err := out.Write(console.Start()); err != nil {
		return err
	}
	defer func() { _, _ = out.Write(console.Stop()) }()
	con := console.New(tty, out, s.colourMode())
	defer con.Close()
	con.Resize(cols, rows) // 0x0 when unknown: drawn whole
	stopResize := console.NotifyResize(func() {
		cols, rows, _ := console.Size(fd)
		con.Resize(cols, rows)
	})
	defer stopResize()

	opts, w, err := s.enter(opts)
	if err != nil {
		return err
	}
	con.LookAround(w.sights)
	defer func() {
		if err := w.stop(); err != nil {
			fmt.Fprintf(e.stderr, "fakecraft: world: %v\r\n", err)
		}
	}()
	_, err = runShown(ctx, con, opts)
	switch {
	case errors.Is(err, computer.ErrTimeLimit):
		return stopped(ctx, s.TimeLimit)
	case err != nil:
		return &exitError{code: ExitFailed, msg: err.Error()}
	}
	return nil
}

// terminal is the keyboard and the screen of `fakecraft shell`: stdin and stdout must be
// a terminal that understands ANSI escape sequences (cursor addressing, colours, the
// alternate screen). Otherwise the player would type blind (stdout a file or a pipe) or
// see the sequences as text (TERM=dumb, as in an Emacs shell buffer): one line says so.
func terminal(e *env) (in, out *os.File, err error) {
	const instead = "; `fakecraft run PROGRAM` prints a transcript instead"
	in, ok := e.stdin.(*os.File)
	if !ok || !console.IsTerminal(int(in.Fd())) {
		return nil, nil, &exitError{code: ExitUsage, msg: "shell needs a terminal on stdin, not a pipe or a file" + instead}
	}
	out, ok = e.stdout.(*os.File)
	if !ok || !console.IsTerminal(int(out.Fd())) {
		return nil, nil, &exitError{code: ExitUsage, msg: "shell draws the computer's screen on stdout, which is not a terminal" + instead}
	}
	if os.Getenv("TERM") == "dumb" {
		return nil, nil, &exitError{code: ExitUsage, msg: "shell needs a terminal that understands ANSI escape sequences, and TERM is dumb" + instead}
	}
	return in, out, nil
}

// runShown runs the machine with the console following each computer it boots; the
// terminal's input ending turns the computer off.
func runShown(ctx context.Context, con *console.Console, opts machine.Options) (computer.Result, error) {
	boots := make(chan console.Computer)
	shown, stopShowing := context.WithCancel(ctx)
	defer stopShowing()
	// current is the running computer; once the input ended, every computer turns off.
	var current struct {
		sync.Mutex
		c           *computer.Computer
		inputClosed bool
	}
	opts.OnBoot = func(c *computer.Computer) {
		current.Lock()
		current.c = c
		if current.inputClosed {
			c.Shutdown()
		}
		current.Unlock()
		select {
		case boots <- c:
		case <-shown.Done():
		}
	}
	m, err := machine.New(opts)
	if err != nil {
		return computer.Result{}, err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := con.Follow(shown, boots); errors.Is(err, console.ErrInputClosed) {
			current.Lock()
			current.inputClosed = true
			current.c.Shutdown()
			current.Unlock()
		}
	}()
	res, err := m.Run(ctx)
	stopShowing()
	wg.Wait()
	return res, err
}

// colourMode picks the colour mode from the flag and, for auto, $COLORTERM.
func (s *ShellCmd) colourMode() console.ColourMode {
	switch s.Colours {
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
