// Package machine assembles a complete fakecraft computer: the core (package computer) with
// the parts its APIs need (computer/apis.go lists them): the file system with the ROM at
// /rom and trapos/ at /, http, and the sides peripherals attach to. The CLI and other
// modules' tests use it.
package machine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"fakecraft/computer"
	"fakecraft/fsapi"
	"fakecraft/httpapi"
	"fakecraft/peripheral"
	"fakecraft/pocket"
	"fakecraft/romfs"
	"fakecraft/transfer"
)

// Options configures a Machine.
type Options struct {
	// Root is a host directory mounted read-only at / (normally the repository's trapos/).
	// Empty means an empty root.
	Root string
	// Mounts are extra host directories (e.g. spec files outside trapos/).
	Mounts []fsapi.Mount
	// Overlay is the writable host directory that receives writes under /. Empty means a
	// fresh temporary directory, removed by Close.
	Overlay string
	// Files are written into the overlay before boot, keyed by computer path.
	Files map[string]string
	// SpaceLimit is the size of the computer's drive in bytes (CC's computer_space_limit
	// server setting); zero means CC's default, fsapi.RootCapacity.
	SpaceLimit int64

	// ID, Label, Settings, TimeScale, VirtualTime, YieldTimeout, Stdout and Basic are as in
	// computer.Config.
	ID    int
	Label string
	// EmptyLabel, with Label "", labels the computer with the empty string, which CC keeps
	// as a label (os.setComputerLabel("")); Label "" alone is none.
	EmptyLabel   bool
	Settings     map[string]string
	TimeScale    float64
	VirtualTime  bool
	YieldTimeout time.Duration
	Stdout       io.Writer
	Basic        bool
	// Pocket makes a pocket computer (computer.Config.Pocket): a 26x20 screen and the
	// pocket API, whose upgrade goes on Peripherals' back. A world's Place gives its own
	// (world.Place.Options); pocket.New(nil) is one whose player carries nothing.
	Pocket *pocket.Pocket
	// SettingOverridden hears each of Settings the computer's own /.settings overrides, at
	// every boot (computer.Config.SettingOverridden).
	SettingOverridden func(key, value string)

	// HTTP configures the http API (CC's defaults when zero).
	HTTP httpapi.Options

	// Bare makes a plain CC: Tweaked computer (computer.Config.Bare): no TrapOS launcher, so
	// Program, Args and Autostart are ignored; os.reboot restarts it on the same disk.
	Bare bool
	// Input answers read() (computer.Config.Input); it carries over a reboot.
	Input computer.Input
	// Acts are the player's doings beside the keyboard (computer.Config.Acts); they carry
	// over a reboot.
	Acts computer.Acts
	// Drop are files dropped on the computer once it has booted: one file_transfer event,
	// as when a player drags files onto its screen (the shell's prompt and `import` save
	// them). Only the first boot gets them.
	Drop []transfer.File
	// Multishell lets the bios start multishell on an advanced computer
	// (computer.Config.Multishell): for a screen someone looks at, not for a transcript.
	Multishell bool
	// ExtraAPIs are installed after the standard ones (computer.Config.APIs), e.g. the
	// conformance runner's cct_test.
	ExtraAPIs []computer.Installer
	// Peripherals is what is attached to the computer's sides (and redstone): it outlives
	// reboots, and peripherals may be attached and detached through it while the computer
	// runs. Nil means a fresh Bus with nothing attached.
	Peripherals *peripheral.Bus

	// Program and Args are the command run in the shell; Autostart the servers run beside it.
	Program   string
	Args      []string
	Autostart []string
	// RebootProgram, when set, makes a TrapOS computer (not Bare) boot again when it reboots,
	// on the same disk, running RebootProgram (no arguments) in Program's place, Autostart
	// beside it: fakecraft run's computer whose standard input goes on after the reboot.
	// Unset, such a computer's Run ends at a reboot (Result.Reboot).
	RebootProgram string

	// OnBoot, when set, hears each computer just before it starts (on Run's goroutine),
	// for whoever shows it (fakecraft shell). Such a machine is one a person sits at: like a
	// bare one, it boots again on a reboot.
	OnBoot func(*computer.Computer)
}

// Machine is a computer with its file system and http API.
type Machine struct {
	*computer.Computer
	// FS is the computer's file system; use it to read what the program wrote.
	FS *fsapi.FS
	// HTTP is the http API; its fault hooks (DropAll, Refuse, SetDelay) reach every socket.
	HTTP *httpapi.API
	// Peripherals is the computer's sides: attach and detach peripherals, set redstone
	// inputs.
	Peripherals *peripheral.Bus

	opts     Options
	overlay  string
	tempDir  string
	rebooted bool // Run booted the computer again after a reboot
}

// New builds a machine; Run boots it.
func New(opts Options) (*Machine, error) {
	m := &Machine{opts: opts, Peripherals: opts.Peripherals}
	if m.Peripherals == nil {
		m.Peripherals = peripheral.NewBus(opts.ID)
	}
	m.overlay = opts.Overlay
	if m.overlay == "" {
		dir, err := os.MkdirTemp("", "fakecraft-overlay-")
		if err != nil {
			return nil, fmt.Errorf("make overlay: %w", err)
		}
		m.tempDir, m.overlay = dir, dir
	} else if err := os.MkdirAll(m.overlay, 0o755); err != nil {
		return nil, fmt.Errorf("make computer directory: %w", err)
	}
	if err := m.build(opts.BootLabel()); err != nil {
		_ = m.Close()
		return nil, err
	}
	paths := make([]string, 0, len(opts.Files))
	for p := range opts.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := m.FS.WriteFile(p, []byte(opts.Files[p])); err != nil {
			_ = m.Close()
			return nil, fmt.Errorf("write %s: %w", p, err)
		}
	}
	return m, nil
}

// BootLabel is the label the computer boots with: Label, nil for none.
func (o Options) BootLabel() *string {
	if o.Label == "" && !o.EmptyLabel {
		return nil
	}
	return &o.Label
}

// SetBootLabel makes label (nil: none), as a computer had it when it stopped, the one it
// boots with.
func (o *Options) SetBootLabel(label *string) {
	o.Label, o.EmptyLabel = "", false
	if label != nil {
		o.Label, o.EmptyLabel = *label, *label == ""
	}
}

// HarnessDir is the directory of trapos/ that holds the repository's Lua specs: the harness,
// not files a computer holds (the package does not ship it).
const HarnessDir = "tests"

// rootDrive is the size of the drive of a computer over the trapos/ directory root: CC's
// default (fsapi.RootCapacity) for TrapOS's files and the computer's own, plus what its
// HarnessDir costs. Counted in the default, the specs took the room a computer's files have
// (trapos/tests grew past what trapos/ left of 1 MB: a spec's, a host's 40 KB write ran out
// of space).
func rootDrive(root string) (int64, error) {
	cost, err := fsapi.HostCost(filepath.Join(root, HarnessDir))
	if errors.Is(err, os.ErrNotExist) {
		return fsapi.RootCapacity, nil
	}
	if err != nil {
		return 0, fmt.Errorf("the size of %s: %w", filepath.Join(root, HarnessDir), err)
	}
	return fsapi.RootCapacity + cost, nil
}

// build makes the file system over the overlay, the http API and the computer: once in New,
// again at each reboot (a rebooted computer keeps its disk and label, nothing else).
func (m *Machine) build(label *string) error {
	opts := m.opts
	mounts := []fsapi.Mount{{At: "/rom", FS: romfs.ROM()}}
	if !opts.Bare {
		// A bare computer is CC's alone: no launcher, so its / holds rom and nothing else.
		mounts = append(mounts, fsapi.Mount{At: computer.LauncherDir, FS: romfs.Launcher()})
	}
	if opts.Root != "" && !opts.Bare {
		mounts = append(mounts, fsapi.Mount{At: "/", Dir: opts.Root, ReadOnly: true})
	}
	mounts = append(mounts, opts.Mounts...)
	fsys, err := fsapi.New(mounts, m.overlay)
	if err != nil {
		return fmt.Errorf("build file system: %w", err)
	}
	m.FS = fsys
	spaceLimit := opts.SpaceLimit
	if spaceLimit <= 0 && opts.Root != "" && !opts.Bare {
		if spaceLimit, err = rootDrive(opts.Root); err != nil {
			fsys.Close()
			return fmt.Errorf("build file system: %w", err)
		}
	}
	if spaceLimit > 0 {
		fsys.SetRootCapacity(spaceLimit)
	}
	m.HTTP = httpapi.New(opts.HTTP)
	// The parts go to the computer, whose table of APIs (computer/apis.go) installs them.
	c, err := computer.New(computer.Config{
		ID:                opts.ID,
		Label:             label,
		Settings:          opts.Settings,
		SettingOverridden: opts.SettingOverridden,
		TimeScale:         opts.TimeScale,
		VirtualTime:       opts.VirtualTime,
		YieldTimeout:      opts.YieldTimeout,
		Stdout:            opts.Stdout,
		Basic:             opts.Basic,
		Pocket:            opts.Pocket,
		Bare:              opts.Bare,
		Input:             opts.Input,
		Acts:              opts.Acts,
		Multishell:        opts.Multishell,
		Boot:              computer.Boot{Program: opts.Program, Args: opts.Args, Autostart: opts.Autostart},
		FS:                fsys,
		HTTP:              m.HTTP,
		Peripherals:       m.Peripherals,
		APIs:              opts.ExtraAPIs,
	})
	if err != nil {
		return fmt.Errorf("new computer: %w", err)
	}
	m.Computer = c
	return nil
}

// Run boots the computer, runs it until it shuts down or ctx ends, then releases the
// machine (Close). A bare computer (or one with OnBoot or RebootProgram) that reboots is
// started again on the same disk (then m.Computer, m.FS and m.HTTP are the new computer's,
// and Rebooted is true); settings given in Options apply at every boot, as the server's
// default settings would.
func (m *Machine) Run(ctx context.Context) (computer.Result, error) {
	m.announce()
	if len(m.opts.Drop) > 0 {
		transfer.Queue(m.Computer, m.opts.Drop)
	}
	res, err := m.Computer.Run(ctx)
	for err == nil && res.Reboot && (m.opts.Bare || m.opts.OnBoot != nil || m.opts.RebootProgram != "") {
		if err = m.FS.Close(); err != nil {
			break
		}
		m.rebooted = true
		if m.opts.RebootProgram != "" && !m.opts.Bare {
			m.opts.Program, m.opts.Args = m.opts.RebootProgram, nil
		}
		m.FS = nil
		if err = m.build(res.Label); err != nil {
			break
		}
		m.announce()
		res, err = m.Computer.Run(ctx)
	}
	if cerr := m.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return res, err
}

// Rebooted reports whether Run booted the computer again after a reboot.
func (m *Machine) Rebooted() bool { return m.rebooted }

// announce tells OnBoot about the computer about to run.
func (m *Machine) announce() {
	if m.opts.OnBoot != nil {
		m.opts.OnBoot(m.Computer)
	}
}

// Close releases the file system and the temporary overlay. Run calls it.
func (m *Machine) Close() error {
	var err error
	if m.FS != nil {
		err = m.FS.Close()
		m.FS = nil
	}
	return errors.Join(err, m.removeTemp())
}

func (m *Machine) removeTemp() error {
	if m.tempDir == "" {
		return nil
	}
	dir := m.tempDir
	m.tempDir = ""
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove overlay: %w", err)
	}
	return nil
}

// Package is the part of a ccpm.json descriptor fakecraft reads.
type Package struct {
	Name      string   `json:"name"`
	Autostart []string `json:"autostart"`
}

// Autostart returns the computer paths of the autostart entries of the packages in dir
// (packages/<name>/ccpm.json), sorted by package name. only limits it to the named packages;
// naming a package that does not exist is an error. A missing dir means no packages.
func Autostart(dir string, only []string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		if len(only) > 0 {
			return nil, fmt.Errorf("package %q: no packages directory %s", only[0], dir)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read packages: %w", err)
	}
	want := map[string]bool{}
	for _, n := range only {
		want[n] = false
	}
	var paths []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		file := filepath.Join(dir, e.Name(), "ccpm.json")
		data, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		var p Package
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("parse %s: %w", file, err)
		}
		if p.Name == "" {
			p.Name = e.Name()
		}
		if len(only) > 0 {
			if _, ok := want[p.Name]; !ok {
				continue
			}
			want[p.Name] = true
		}
		for _, a := range p.Autostart {
			paths = append(paths, "/"+filepath.ToSlash(filepath.Clean("/" + a))[1:])
		}
	}
	for _, n := range only {
		if !want[n] {
			return nil, fmt.Errorf("package %q not found in %s", n, dir)
		}
	}
	return paths, nil
}

// FindRepoRoot walks up from start to the directory holding go.work.
func FindRepoRoot(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("find repository root: no go.work above %s", start)
		}
		dir = parent
	}
}
