package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"fakecraft/ccstr"
	"fakecraft/computer"
	"fakecraft/computer/machine"
	"fakecraft/console"
	"fakecraft/world"
)

// worldFlags put the computer in a world: other computers around it (a world file) and
// peripherals on its sides.
type worldFlags struct {
	World  string   `help:"World file (JSON): the computers around this one, which boot with it as plain CC computers and stop when it ends, their peripherals and cables; this computer takes its position, peripherals, label, basic, pocket, dir and files from its own entry (its id), if it has one (--label, --basic, --pocket and --dir win)." type:"existingfile" placeholder:"FILE"`
	Attach []string `sep:"none" help:"Attach a peripheral to a side (or, as CraftOS-PC allows, under another name): modem, ender_modem, wired_modem:CABLE, … (see the README). Repeatable." placeholder:"SIDE=TYPE[:ARG...]"`

	// touches are run's and shell's --touch values (touchFlags), made the computer's acts
	// once its place in the world has its peripherals (enter).
	touches []string

	// presets are the --set values (computerFlags.options), told where the computer's
	// .settings is once its directory is known: --dir, or its entry's dir.
	presets *presets
}

// settleLimit bounds how long the computer being run waits for the world's other
// computers to settle (boot and reach their first wait) before it starts anyway: one that
// never waits (a busy loop) must not hold it forever.
const settleLimit = 10 * time.Second

// worldRun is the world one command's computer lives in, with the other computers of the
// world file running beside it.
type worldRun struct {
	w       *world.World
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	settled []<-chan struct{}
	mu      sync.Mutex
	errs    []error
	// running is each other computer while it is on (nil while off), for showScreens.
	running map[int]*computer.Computer
}

// enter places the computer of opts in a world (the world file's, or a world of its own),
// attaches the --attach peripherals, starts the world file's other computers and waits for
// them to settle, and returns the computer's options. stop ends the others and removes what the world left behind.
func (f *worldFlags) enter(opts machine.Options) (machine.Options, *worldRun, error) {
	var spec world.Spec
	if f.World != "" && opts.VirtualTime {
		// The world's other computers run on the real clock, and messages between them
		// arrive in real time: a virtual clock would run this one ahead of them.
		return opts, nil, &exitError{code: ExitUsage, msg: "--world: a world's computers share the real clock, which the virtual clock would run ahead of; add --no-virtual-time (fakecraft test runs on the virtual clock unless told not to)"}
	}
	if f.World != "" {
		var err error
		if spec, err = world.ReadSpec(f.World); err != nil {
			return opts, nil, &exitError{code: ExitUsage, msg: err.Error()}
		}
	}
	w, err := world.New(world.Options{Dir: spec.Dir})
	if err != nil {
		return opts, nil, &exitError{code: ExitUsage, msg: err.Error()}
	}
	run := &worldRun{w: w, cancel: func() {}, running: map[int]*computer.Computer{}}
	fail := func(err error) (machine.Options, *worldRun, error) {
		_ = w.Close()
		return opts, nil, &exitError{code: ExitUsage, msg: err.Error()}
	}
	if err := w.Build(spec); err != nil {
		return fail(err)
	}
	place := w.At(opts.ID)
	if place == nil {
		if place, err = w.Place(opts.ID, world.Vec{}); err != nil {
			return fail(err)
		}
	}
	if opts.Pocket != nil { // --pocket
		if _, err := place.MakePocket(); err != nil {
			return fail(fmt.Errorf("--pocket: %w", err))
		}
	}
	for _, a := range f.Attach {
		name, kind, ok := strings.Cut(a, "=")
		if !ok || name == "" || kind == "" {
			return fail(fmt.Errorf("--attach %q: want SIDE=TYPE[:ARG...]", a))
		}
		// The name is text, as --label is: CC's bytes inside (küche is k\xFCche).
		if err := place.Attach(ccstr.FromText(name), kind); err != nil {
			return fail(fmt.Errorf("--attach %s: %w", a, err))
		}
	}
	if c, ok := spec.Entry(opts.ID); ok {
		opts = fromEntry(opts, c)
	}
	if opts.Acts, err = touchActs(place, f.touches); err != nil {
		return fail(err)
	}
	if err := spec.CheckOwnDirs(opts.ID, opts.Overlay); err != nil {
		return fail(err)
	}
	if f.presets != nil {
		f.presets.in(opts.Overlay)
	}
	opts = place.Options(opts)
	if spec.TimeScale == 0 {
		spec.TimeScale = opts.TimeScale
	}
	ctx, cancel := context.WithCancel(context.Background())
	run.cancel = cancel
	for _, c := range spec.Computers {
		if c.ID == opts.ID {
			continue
		}
		mopts, err := w.Machine(spec, c)
		if err != nil {
			cancel()
			run.wg.Wait()
			return fail(err)
		}
		// The server's http rules are every computer's: --allow-private lets the world's
		// other computers reach a gateway on loopback too, as the one being run.
		mopts.HTTP = opts.HTTP
		id := c.ID
		mopts.OnBoot = func(c *computer.Computer) { run.setRunning(id, c) }
		if err := run.start(ctx, c.ID, mopts); err != nil {
			cancel()
			run.wg.Wait()
			return fail(err)
		}
	}
	run.settle()
	return opts, run, nil
}

// fromEntry gives the computer being run what its own entry of the world file says of it
// (its label, a basic computer, its directory, its files), as the world's other computers
// get theirs; a flag (--label, --basic, --dir) wins over the entry.
func fromEntry(opts machine.Options, c world.ComputerSpec) machine.Options {
	if opts.Label == "" {
		opts.Label = c.Label
	}
	opts.Basic = opts.Basic || c.Basic
	if opts.Overlay == "" {
		opts.Overlay = c.Dir
	}
	if len(c.Files) > 0 {
		files := make(map[string]string, len(opts.Files)+len(c.Files))
		maps.Copy(files, c.Files)
		maps.Copy(files, opts.Files)
		opts.Files = files
	}
	return opts
}

// settle waits until every other computer has booted and reached its first wait (GPS
// hosts answer, servers listen), so the computer being run starts in a world that is up,
// as a player walks up to computers already running; at most settleLimit.
func (r *worldRun) settle() {
	limit := time.NewTimer(settleLimit)
	defer limit.Stop()
	for _, s := range r.settled {
		select {
		case <-s:
		case <-limit.C:
			return
		}
	}
}

// start boots one of the world's other computers on its own goroutine. When it shuts down
// it stays in the world, off, until another computer turns it on through a wired modem
// (world.Place.AwaitTurnOn): then it boots again on the same disk, with its label.
func (r *worldRun) start(ctx context.Context, id int, opts machine.Options) error {
	var disk string // a computer without a dir of its own keeps one for the run
	if opts.Overlay == "" {
		dir, err := os.MkdirTemp("", "fakecraft-overlay-")
		if err != nil {
			return fmt.Errorf("computer %d: make its directory: %w", id, err)
		}
		disk, opts.Overlay = dir, dir
	}
	m, err := machine.New(opts)
	if err != nil {
		_ = os.RemoveAll(disk)
		return fmt.Errorf("computer %d: %w", id, err)
	}
	r.settled = append(r.settled, m.Settled())
	place := r.w.At(id)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() { _ = os.RemoveAll(disk) }()
		for {
			res, err := m.Run(ctx)
			r.setRunning(id, nil)
			if err == nil {
				err = res.Err
			}
			if err != nil && !errors.Is(err, computer.ErrTimeLimit) {
				r.mu.Lock()
				r.errs = append(r.errs, fmt.Errorf("computer %d: %w", id, err))
				r.mu.Unlock()
			}
			if err != nil || ctx.Err() != nil || !place.AwaitTurnOn(ctx, res.Label) {
				return
			}
			// Its files were written at the first boot; the disk has what it made of them.
			opts.SetBootLabel(res.Label)
			opts.Files, opts.Drop = nil, nil
			if m, err = machine.New(opts); err != nil {
				r.mu.Lock()
				r.errs = append(r.errs, fmt.Errorf("computer %d: turn on: %w", id, err))
				r.mu.Unlock()
				return
			}
		}
	}()
	return nil
}

// setRunning notes the computer id is running (c), or off (nil).
func (r *worldRun) setRunning(id int, c *computer.Computer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running[id] = c
}

// showScreens prints what the world's screens show, as a player would read them walking
// round the world: each other computer's terminal (or that it is off), then each monitor
// (world.Monitors), under a line naming it and its size in characters, its rows as the
// screen has them but for the blank ones at the bottom.
func (r *worldRun) showScreens(out io.Writer) {
	r.mu.Lock()
	ids := slices.Sorted(maps.Keys(r.running))
	running := maps.Clone(r.running)
	r.mu.Unlock()
	show := func(what string, t *computer.Terminal) {
		w, h := t.Size()
		rows := strings.TrimRight(t.Screen(), "\n")
		if rows == "" {
			rows = "(blank)"
		}
		fmt.Fprintf(out, "fakecraft: %s (%dx%d):\n%s\n", what, w, h, rows)
	}
	for _, id := range ids {
		if c := running[id]; c != nil {
			show(fmt.Sprintf("computer %d's screen", id), c.Terminal())
		} else {
			fmt.Fprintf(out, "fakecraft: computer %d is off\n", id)
		}
	}
	for _, s := range r.w.Monitors() {
		show(s.Where+", a monitor", s.Monitor.Terminal())
	}
}

// sights are the world's monitors for a player at `fakecraft shell` to look at and touch
// (console.LookAround), as showScreens lists them.
func (r *worldRun) sights() []console.Sight {
	var out []console.Sight
	for _, s := range r.w.Monitors() {
		out = append(out, console.Sight{Where: s.Where, Monitor: s.Monitor})
	}
	return out
}

// stop turns the other computers off, waits for them and removes a temporary world
// directory. It returns what went wrong on them, for stderr.
func (r *worldRun) stop() error {
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	errs := r.errs
	r.mu.Unlock()
	return errors.Join(append(errs, r.w.Close())...)
}
