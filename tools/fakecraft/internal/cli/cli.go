// Package cli is fakecraft's command line: `fakecraft run`, `fakecraft shell` and
// `fakecraft test`.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"fakecraft/ccstr"
	"fakecraft/computer"
	"fakecraft/computer/machine"
	"fakecraft/fsapi"
	"fakecraft/httpapi"
	"fakecraft/pocket"
	"fakecraft/transfer"
)

// Exit statuses of the fakecraft command.
const (
	ExitOK        = 0 // the program (or every spec) succeeded
	ExitFailed    = 1 // the program errored or returned false, or a spec failed
	ExitTimeLimit = 2 // the time limit ran out first
	ExitUsage     = 3 // bad flags or setup (no trapos/, unknown package, …)
)

// SpecProgram is the computer path of the spec runner.
const SpecProgram = computer.LauncherDir + "/spec.lua"

// specSuffix marks spec files when a directory is given to `fakecraft test`.
const specSuffix = "_spec.lua"

// computerFlags are the flags shared by run, shell and test.
type computerFlags struct {
	Root         string   `help:"Repository root (the directory holding go.work); found from the current directory upward when empty; --bare needs none." type:"path"`
	Set          []string `short:"s" sep:"none" help:"A default setting, as a server's config gives every computer, its value converted like CC's set program's (true/false/nil/numbers). The computer's own /.settings (see --dir) wins, and fakecraft says so on stderr. Repeatable." placeholder:"KEY=VALUE"`
	ID           int      `help:"Computer id (os.getComputerID)." default:"0"`
	Label        string   `help:"Computer label (os.getComputerLabel)."`
	TimeScale    float64  `help:"Run the computer's clock this many times faster than real time (timers, os.clock, os.epoch)." default:"1"`
	AllowPrivate bool     `help:"Allow http/websocket connections to loopback and private addresses (CC denies them by default with 'Domain not permitted'); for every computer of a --world, as a server's setting."`
	Basic        bool     `help:"Emulate a basic (non-colour) computer instead of an advanced one."`
	Pocket       bool     `help:"A pocket computer (26x20 screen, the pocket API; advanced unless --basic): nothing beside it but its back upgrade (--attach back=modem, ender_modem or speaker)."`
	Dir          string   `help:"The computer's own directory: its files and .settings are kept there across runs, as a real computer's are (default: a fresh temporary one)." type:"path" placeholder:"PATH"`
	worldFlags
}

// virtualTimeHelp says what --virtual-time does, for each command that has it.
const virtualTimeHelp = "Run the computer on the virtual clock: its time (timers, sleep, os.clock, os.epoch, alarms) passes only while it waits with nothing else to do, and then at once; while http or a websocket is in flight it follows real time (at --time-scale). Not with --world."

// virtualTimeOff is --virtual-time for run and shell: off unless asked for, since a program
// someone watches (or a real gateway it talks to) wants real time.
type virtualTimeOff struct {
	VirtualTime bool `help:"${virtual_time_help}" negatable:""`
}

// virtualTimeOn is --virtual-time for test: on unless --no-virtual-time, since specs are tests,
// and a test must not wait for, nor depend on, real time.
type virtualTimeOn struct {
	VirtualTime bool `help:"${virtual_time_help} On by default for test." default:"true" negatable:""`
}

// autostartFlags choose the packages' servers started beside the program.
type autostartFlags struct {
	NoAutostart bool     `help:"Do not start the packages' autostart servers."`
	Package     []string `sep:"none" help:"Start only the autostart servers of this package (repeatable; default: every package)." placeholder:"NAME"`
}

// dropFlags are files dropped on the computer after it boots.
type dropFlags struct {
	Drop []string `sep:"none" help:"Drop this file on the computer once it has booted, as a player drags a file onto its screen (a file_transfer event: the shell's prompt and the import program save it). Repeatable: all go in one drop." type:"existingfile" placeholder:"PATH"`
}

// files reads the dropped files; each keeps its own name, without its directory.
func (d *dropFlags) files() ([]transfer.File, error) {
	files := make([]transfer.File, 0, len(d.Drop))
	for _, path := range d.Drop {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, &exitError{code: ExitUsage, msg: fmt.Sprintf("--drop %s: %v", path, err)}
		}
		files = append(files, transfer.File{Name: filepath.Base(path), Data: data})
	}
	return files, nil
}

// RunCmd is `fakecraft run`.
type RunCmd struct {
	computerFlags
	virtualTimeOff
	dropFlags
	touchFlags
	Bare bool `help:"A fresh CC: Tweaked computer: no trapos/ and no TrapOS launcher. It runs its startup files, then reads commands at its prompt from standard input (PROGRAM, if given, is the first one typed) and shuts down when the input ends."`
	autostartFlags
	TimeLimit   time.Duration `help:"Stop the computer with exit status 2 after this much real time (0: never)." default:"30s"`
	ShowScreens bool          `help:"When the computer stops, print on stderr what the world's other screens show, as a player walking round it would read them: each other computer's terminal (a --world's), then each monitor (this computer's, the others', a cable's)."`
	// Command is the program and its arguments in one passthrough list, so that flags after
	// the program name (sandbox --help) belong to the program, not to fakecraft. "partial":
	// before the program, an unknown flag is fakecraft's mistake (not a program named --bogus).
	Command []string `arg:"" optional:"" passthrough:"partial" name:"program" help:"Program to run in the shell (e.g. sandbox or /programs/sandbox.lua), then its arguments. fakecraft's flags go before it. Required unless --bare."`
}

// TestCmd is `fakecraft test`.
type TestCmd struct {
	computerFlags
	virtualTimeOn
	// Not run's 30s: a limit here guards against a hang (on the real clock, with
	// --no-virtual-time, a whole directory of specs waits out its timers in real time:
	// trapos/tests takes about half a minute on an idle machine).
	TimeLimit time.Duration `help:"Stop the computer with exit status 2 after this much real time (0: never)." default:"10m"`
	// CC's limit is wall time, which a spec run in a -race build on a loaded machine (go
	// test's TestLuaSpecs) takes many times longer to reach the end of a resume in.
	YieldTimeout time.Duration `help:"How long one resume may run before 'Too long without yielding' (CC's limit, in real time)." default:"7s"`
	Paths        []string      `arg:"" optional:"" help:"Spec files or directories of *_spec.lua files (default: trapos/tests)." type:"path"`
}

// CLI is the whole command line.
type CLI struct {
	Run         RunCmd         `cmd:"" help:"Boot a computer over trapos/ and run a program in its shell."`
	Shell       ShellCmd       `cmd:"" help:"Boot a computer over trapos/ and sit at it: its screen and keyboard in this terminal."`
	Test        TestCmd        `cmd:"" help:"Run Lua spec files with the spec framework."`
	Conformance ConformanceCmd `cmd:"" help:"Run CC: Tweaked's test-rom specs (mcfly) on fakecraft."`
}

// exitError carries an exit status out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// env is what commands read from and write to.
type env struct {
	stdin          io.Reader // answers read(); nil types nothing
	stdout, stderr io.Writer
	cwd            string
}

// kongExit is panicked by kong's exit hook (after --help) so Main can return instead of
// the process exiting.
type kongExit struct{ code int }

// Main runs the fakecraft command line with args (without the program name) and returns
// the exit status. Nothing is typed on the computer's keyboard (see MainWithInput).
func Main(args []string, stdout, stderr io.Writer) int {
	return MainWithInput(args, nil, stdout, stderr)
}

// MainWithInput is Main whose computer's read() is answered with stdin's lines.
func MainWithInput(args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	defer func() {
		if r := recover(); r != nil {
			ke, ok := r.(kongExit)
			if !ok {
				panic(r)
			}
			status = ke.code
		}
	}()
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "fakecraft: %v\n", err)
		return ExitUsage
	}
	var cli CLI
	parser, err := kong.New(&cli,
		kong.Name("fakecraft"),
		kong.Description("A headless CC: Tweaked 1.113 computer for testing TrapOS Lua code."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(kongExit{code: code}) }),
		kong.Bind(&env{stdin: stdin, stdout: stdout, stderr: stderr, cwd: cwd}),
		kong.KindMapper(reflect.String, rawString),
		kong.Vars{"virtual_time_help": virtualTimeHelp},
	)
	if err != nil {
		fmt.Fprintf(stderr, "fakecraft: %v\n", err)
		return ExitUsage
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "fakecraft: %v\n%s\n", err, usageHint(err))
		return ExitUsage
	}
	if err := kctx.Run(); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintf(stderr, "fakecraft: %s\n", ee.msg)
			}
			return ee.code
		}
		fmt.Fprintf(stderr, "fakecraft: %v\n", err)
		return ExitUsage
	}
	return ExitOK
}

// usageHint is the line under a command line's mistake: the command's usage and where its
// help is (`fakecraft conformance` alone: what to give it).
func usageHint(err error) string {
	var perr *kong.ParseError
	if errors.As(err, &perr) && perr.Context != nil {
		if n := perr.Context.Selected(); n != nil && n.Type == kong.CommandNode {
			return fmt.Sprintf("usage: fakecraft %s (`fakecraft %s --help` says more)", n.Summary(), n.Path())
		}
	}
	return "(`fakecraft --help` lists the commands)"
}

// options turns the shared flags into machine options. A bare computer has no trapos/ and
// no servers, so it needs no repository: rootDir is then empty.
func (f *computerFlags) options(e *env, bare bool) (machine.Options, string, error) {
	var rootDir, trapos string
	if !bare {
		rootDir = f.Root
		if rootDir == "" {
			r, err := machine.FindRepoRoot(e.cwd)
			if err != nil {
				return machine.Options{}, "", &exitError{code: ExitUsage, msg: err.Error() + " (use --root)"}
			}
			rootDir = r
		}
		trapos = filepath.Join(rootDir, "trapos")
		if st, err := os.Stat(trapos); err != nil || !st.IsDir() {
			return machine.Options{}, "", &exitError{code: ExitUsage, msg: fmt.Sprintf("no trapos/ directory in %s", rootDir)}
		}
	}
	settings := map[string]string{}
	set := &presets{flags: map[string][2]string{}, dir: f.Dir, out: e.stderr, told: map[string]bool{}}
	f.presets = set
	for _, kv := range f.Set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return machine.Options{}, "", &exitError{code: ExitUsage, msg: fmt.Sprintf("--set %q: want KEY=VALUE", kv)}
		}
		// Flags are UTF-8 text; CC stores what the host hands it as one byte per character.
		settings[ccstr.FromText(k)] = ccstr.FromText(v)
		set.flags[ccstr.FromText(k)] = [2]string{k, v}
	}
	if err := computer.CheckID(f.ID); err != nil {
		return machine.Options{}, "", &exitError{code: ExitUsage, msg: fmt.Sprintf("--id %d: %v", f.ID, err)}
	}
	if f.TimeScale <= 0 {
		return machine.Options{}, "", &exitError{code: ExitUsage, msg: fmt.Sprintf("--time-scale %v: must be positive", f.TimeScale)}
	}
	return machine.Options{
		Overlay:           f.Dir,
		Root:              trapos,
		ID:                f.ID,
		Label:             ccstr.FromText(f.Label),
		Settings:          settings,
		TimeScale:         f.TimeScale,
		Stdout:            e.stdout,
		Basic:             f.Basic,
		Pocket:            f.pocket(),
		HTTP:              httpapi.Options{AllowPrivate: f.AllowPrivate},
		SettingOverridden: set.overridden,
	}, rootDir, nil
}

// pocket is --pocket's mark on the options: a pocket the world's place replaces by its own
// (worldFlags.enter), nil without the flag.
func (f *computerFlags) pocket() *pocket.Pocket {
	if !f.Pocket {
		return nil
	}
	return pocket.New(nil)
}

// Run runs the program.
func (r *RunCmd) Run(e *env) error {
	r.touches = r.Touch
	// The input's lines are typed for this run only: its reader stops when Run returns, the
	// computer's end or a failure before it began (a bad --world).
	typing, stopTyping := context.WithCancel(context.Background())
	defer stopTyping()
	opts, rootDir, err := r.options(e, r.Bare)
	if err != nil {
		return err
	}
	opts.VirtualTime = r.VirtualTime
	if opts.Drop, err = r.files(); err != nil {
		return err
	}
	if r.Bare {
		opts.Bare = true
		var typed io.Reader = strings.NewReader("")
		if len(r.Command) > 0 {
			typed = strings.NewReader(commandLine(r.Command) + "\n")
		}
		if e.stdin != nil {
			typed = io.MultiReader(typed, e.stdin)
		}
		opts.Input = computer.LinesFrom(typing, typed)
		return r.worldFlags.boot(e, opts, r.TimeLimit, r.ShowScreens)
	}
	if len(r.Command) == 0 {
		return &exitError{code: ExitUsage, msg: "name a program to run (or use --bare for a computer that reads commands from standard input)"}
	}
	if opts.Autostart, err = r.servers(rootDir); err != nil {
		return err
	}
	if e.stdin != nil {
		opts.Input = computer.LinesFrom(typing, e.stdin)
		// A reboot boots the computer again, and the input's next lines are typed at its
		// shell's prompt, as at a bare computer or a person's (shell).
		opts.RebootProgram = ShellProgram
	}
	// The words are UTF-8 text, as the flags are: they enter as CC's bytes, as the same
	// command typed at a bare computer's prompt does.
	words := make([]string, len(r.Command))
	for i, w := range r.Command {
		words[i] = ccstr.FromText(w)
	}
	opts.Program, opts.Args = words[0], words[1:]
	return r.worldFlags.boot(e, opts, r.TimeLimit, r.ShowScreens)
}

// commandLine is the line a player types to run words: a word with a space goes in quotes,
// which the shell groups back into one argument.
func commandLine(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		if strings.ContainsAny(w, " \t") || w == "" {
			w = `"` + w + `"`
		}
		quoted[i] = w
	}
	return strings.Join(quoted, " ")
}

// servers are the computer paths of the autostart servers to start.
func (a *autostartFlags) servers(rootDir string) ([]string, error) {
	if a.NoAutostart {
		return nil, nil
	}
	auto, err := machine.Autostart(filepath.Join(rootDir, "packages"), a.Package)
	if err != nil {
		return nil, &exitError{code: ExitUsage, msg: err.Error()}
	}
	return auto, nil
}

// Run runs the spec files.
func (t *TestCmd) Run(e *env) error {
	opts, rootDir, err := t.options(e, false)
	if err != nil {
		return err
	}
	opts.VirtualTime = t.VirtualTime
	if t.YieldTimeout <= 0 {
		return &exitError{code: ExitUsage, msg: fmt.Sprintf("--yield-timeout %s: must be positive", t.YieldTimeout)}
	}
	opts.YieldTimeout = t.YieldTimeout
	paths := t.Paths
	if len(paths) == 0 {
		paths = []string{filepath.Join(rootDir, "trapos", "tests")}
	}
	files, err := specFiles(paths)
	if err != nil {
		return &exitError{code: ExitUsage, msg: err.Error()}
	}
	if len(files) == 0 {
		return &exitError{code: ExitUsage, msg: "no spec files found"}
	}
	args, mounts := computerPaths(files, opts.Root)
	opts.Mounts = mounts
	opts.Program, opts.Args = SpecProgram, args
	return t.worldFlags.boot(e, opts, t.TimeLimit, false)
}

// specFiles expands directories to the *_spec.lua files under them.
func specFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("spec path %s: %w", p, err)
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("spec path %s: %w", p, err)
		}
		if !st.IsDir() {
			files = append(files, abs)
			continue
		}
		var found []string
		err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), specSuffix) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("spec path %s: %w", p, err)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, nil
}

// computerPaths maps host spec files to computer paths: files under the trapos/ root keep
// their place, others get their directory mounted read-only at /spec/<n>. A host name is
// UTF-8; the computer's path is CC's bytes, as fs lists it.
func computerPaths(files []string, traposDir string) ([]string, []fsapi.Mount) {
	var out []string
	var mounts []fsapi.Mount
	mounted := map[string]string{}
	for _, f := range files {
		if rel, err := filepath.Rel(traposDir, f); err == nil && !strings.HasPrefix(rel, "..") {
			out = append(out, ccstr.FromText("/"+filepath.ToSlash(rel)))
			continue
		}
		dir := filepath.Dir(f)
		at, ok := mounted[dir]
		if !ok {
			at = fmt.Sprintf("/spec/%d", len(mounted)+1)
			mounted[dir] = at
			mounts = append(mounts, fsapi.Mount{At: at, Dir: dir, ReadOnly: true})
		}
		out = append(out, at+"/"+ccstr.FromText(filepath.Base(f)))
	}
	return out, mounts
}

// boot runs one machine in its world and maps its end to an exit status. A TrapOS computer
// ends with its program: the program's outcome is the status. A bare computer (opts.Bare)
// runs until it shuts down (the input ended, os.shutdown): status 0, or 1 when the bios
// itself failed. The world's other computers stop when it ends; with showScreens, what the
// world's screens show is printed first (worldRun.showScreens).
func (f *worldFlags) boot(e *env, opts machine.Options, limit time.Duration, showScreens bool) error {
	ctx, cancel, err := limited(limit)
	if err != nil {
		return err
	}
	defer cancel()
	opts, w, err := f.enter(opts)
	if err != nil {
		return err
	}
	defer func() {
		if err := w.stop(); err != nil {
			fmt.Fprintf(e.stderr, "fakecraft: world: %v\n", err)
		}
	}()
	err = boot(ctx, opts, limit)
	if showScreens {
		w.showScreens(e.stderr)
	}
	return err
}

// limited is a context that ends when a command's --time-limit runs out, or when a signal
// asks fakecraft to stop (see stopSignals). 0 is no limit, for every command (shell's
// default); a negative limit is refused. Its cancel stops watching for the signals.
func limited(limit time.Duration) (context.Context, context.CancelFunc, error) {
	if limit < 0 {
		return nil, nil, &exitError{code: ExitUsage, msg: fmt.Sprintf("--time-limit %s: give a positive duration, or 0 for no limit", limit)}
	}
	ctx, stopWatching := untilSignal(context.Background())
	if limit == 0 {
		return ctx, stopWatching, nil
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	return ctx, func() { cancel(); stopWatching() }, nil
}

// stopped is the end of a run whose context ended before the computer shut down, said as
// what it is: a signal (exit status 128 plus its number, as a shell reports a process the
// signal killed) or the time limit. The computer's code did not fail: fakecraft turned it off.
func stopped(ctx context.Context, limit time.Duration) error {
	var sig signalled
	if errors.As(context.Cause(ctx), &sig) {
		return &exitError{code: sig.exitStatus(), msg: fmt.Sprintf("%s: fakecraft stopped the computer", sig)}
	}
	return timeLimitReached(limit)
}

// timeLimitReached is the end of a run that --time-limit stopped, said as what it is: the
// computer's code did not fail, fakecraft turned it off.
func timeLimitReached(limit time.Duration) error {
	return &exitError{code: ExitTimeLimit, msg: fmt.Sprintf("--time-limit %s ran out: fakecraft stopped the computer", limit)}
}

// boot runs one machine until ctx ends and maps its end to an exit status (see
// worldFlags.boot).
func boot(ctx context.Context, opts machine.Options, limit time.Duration) error {
	m, err := machine.New(opts)
	if err != nil {
		return &exitError{code: ExitUsage, msg: err.Error()}
	}
	res, err := m.Run(ctx)
	switch {
	case errors.Is(err, computer.ErrTimeLimit):
		return stopped(ctx, limit)
	case err != nil:
		return &exitError{code: ExitFailed, msg: err.Error()}
	case (opts.Bare || m.Rebooted()) && res.Err != nil:
		return &exitError{code: ExitFailed, msg: res.Err.Error()}
	case opts.Bare || m.Rebooted():
		// A prompt read the input's lines: the run ends when the computer shuts down.
		return nil
	case res.InputEnded && !res.Reported:
		return &exitError{code: ExitFailed, msg: "the program waited for a line after standard input ended"}
	case !res.OK:
		return &exitError{code: ExitFailed}
	}
	return nil
}

// rawString takes a string flag's or argument's bytes as they are. kong's own string mapper
// goes through JSON, which turns a byte that is not UTF-8 into U+FFFD (then `?` on the
// computer); by the text rule such a byte stands for itself (`--label $'k\xe9che'` is the
// computer's k\xE9che, as `--label küche` is).
var rawString = kong.MapperFunc(func(ctx *kong.DecodeContext, target reflect.Value) error {
	t, err := ctx.Scan.PopValue("string")
	if err != nil {
		return err
	}
	s, ok := t.Value.(string)
	if !ok {
		s = fmt.Sprint(t.Value)
	}
	target.SetString(s)
	return nil
})
