package world

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"fakecraft/peripheral"
	"fakecraft/peripheral/drive"
	"fakecraft/peripheral/modem"
	"fakecraft/peripheral/monitor"
	"fakecraft/peripheral/printer"
	"fakecraft/peripheral/speaker"
)

// Kind is one type of peripheral a world can make: how its arguments read, and the maker.
type Kind struct {
	// Args describes the arguments after TYPE, for usage messages ("" when it takes none).
	Args string
	// Help says what it is.
	Help string
	// make builds one from the arguments (the spec's parts after TYPE).
	make func(at site, args []string) (peripheral.Peripheral, error)
}

// site is where a peripheral is being made: the world, the computer it goes next to (nil
// for a cable's), and whether a program asked for it (periphemu) rather than the person
// running fakecraft, who alone may name host files and directories.
type site struct {
	w       *World
	p       *Place
	fromLua bool
	// base is the directory a relative host path is taken from: a world file's (Spec's
	// base), or "" for the working directory (--attach).
	base string
}

// hostPath is a host path of a peripheral spec, relative ones taken from the site's base.
func (at site) hostPath(path string) string {
	if at.base == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(at.base, path)
}

// position is where the peripheral stands: at its computer (a cable's, nowhere in
// particular).
func (at site) position() Vec {
	if at.p == nil {
		return Vec{}
	}
	return at.p.pos
}

// Kinds are the peripherals a world makes, by type name: the names periphemu.create,
// --attach and world files take, and periphemu.names lists. One line each.
var Kinds = map[string]Kind{
	"modem": {Args: "[NETWORK]", Help: "wireless modem; a number joins that separate network (CraftOS-PC's modem networks) instead of the world's air",
		make: makeModem(modem.Wireless)},
	"ender_modem": {Args: "[NETWORK]", Help: "ender modem: wireless without a range limit",
		make: makeModem(modem.Ender)},
	"wired_modem": {Args: "CABLE [on]", Help: "wired modem on the named cable (reaches the other wired modems and the cable's peripherals); on connects its computer to the cable, as a player's right-click does: the others reach it as computer_N (getID, getLabel, isOn, turnOn, shutdown, reboot), and getNameLocal names it",
		make: makeWiredModem},
	"monitor": {Args: "[WIDTH HEIGHT]", Help: "advanced monitor (colour, touch), WIDTH x HEIGHT blocks (default 1x1, at most 8x6); its size in characters follows from the blocks and its text scale, as in CC",
		make: makeMonitor(true)},
	"basic_monitor": {Args: "[WIDTH HEIGHT]", Help: "basic monitor: greys, no touch",
		make: makeMonitor(false)},
	"speaker": {Help: "speaker: plays nothing aloud, with CC's limits and speaker_audio_empty timing",
		make: func(_ site, args []string) (peripheral.Peripheral, error) {
			if len(args) > 0 {
				return nil, fmt.Errorf("a speaker takes no arguments")
			}
			return speaker.New(), nil
		}},
	"printer": {Args: "[FILE]", Help: "printer, full of ink and paper; each finished page is kept for Go and, given FILE, appended to it (a program's FILE, as CraftOS-PC takes one, is ignored: no program writes host files)",
		make: makePrinter},
	"drive": {Args: "[DISK]", Help: "disk drive, empty or holding DISK: a number is that floppy disk of the world, a host directory is mounted as a disk, a host file is a music disc",
		make: makeDrive},
}

// KindNames lists the kinds, sorted.
func KindNames() []string {
	names := make([]string, 0, len(Kinds))
	for n := range Kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// make builds a peripheral from spec, TYPE[:ARG...], at a site.
func (at site) make(spec string) (peripheral.Peripheral, error) {
	parts := strings.Split(spec, ":")
	kind, ok := Kinds[parts[0]]
	if !ok {
		return nil, fmt.Errorf("No peripheral named %s (one of %s)", parts[0], strings.Join(KindNames(), ", "))
	}
	per, err := kind.make(at, parts[1:])
	if errors.Is(err, drive.ErrInAnotherDrive) {
		return nil, fmt.Errorf("%s: %w", spec, err) // the spec is right: no usage
	}
	if err != nil {
		usage := parts[0]
		if kind.Args != "" {
			usage += ":" + strings.ReplaceAll(kind.Args, " ", ":")
		}
		return nil, fmt.Errorf("%s: %w (want %s)", spec, err, usage)
	}
	return per, nil
}

func makeModem(k modem.Kind) func(at site, args []string) (peripheral.Peripheral, error) {
	return func(at site, args []string) (peripheral.Peripheral, error) {
		network := 0
		switch len(args) {
		case 0:
		case 1:
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("network %q is not a number", args[0])
			}
			network = n
		default:
			return nil, fmt.Errorf("too many arguments")
		}
		return modem.New(k, at.w.Air(network), at.position()), nil
	}
}

func makeWiredModem(at site, args []string) (peripheral.Peripheral, error) {
	if len(args) > 2 {
		return nil, fmt.Errorf("too many arguments")
	}
	if len(args) == 0 || args[0] == "" {
		return nil, fmt.Errorf("name the cable")
	}
	on := len(args) == 2
	if on && args[1] != "on" {
		return nil, fmt.Errorf("%q: the only word after the cable is on", args[1])
	}
	if on && at.p == nil {
		return nil, fmt.Errorf("a cable's own modem has no computer to connect")
	}
	m := modem.New(modem.Wired, at.w.Cable(args[0]), at.position())
	if on {
		if err := m.ConnectLocal(at.w.nextComputerName(), newComputerPeripheral(at.p)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func makeDrive(at site, args []string) (peripheral.Peripheral, error) {
	// CraftOS-PC's insertDisk comes from Lua: it names floppy disks only.
	d := drive.New(func(what string) (*drive.Media, error) { return at.w.media(what, false) })
	if len(args) > 0 {
		what := strings.Join(args, ":")
		if _, err := strconv.Atoi(what); err != nil && !at.fromLua {
			what = at.hostPath(what)
		}
		m, err := at.w.media(what, !at.fromLua)
		if err != nil {
			return nil, err
		}
		if _, err := d.Insert(m); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func makeMonitor(advanced bool) func(at site, args []string) (peripheral.Peripheral, error) {
	return func(_ site, args []string) (peripheral.Peripheral, error) {
		w, h := 1, 1
		switch len(args) {
		case 0:
		case 2:
			var err1, err2 error
			w, err1 = strconv.Atoi(args[0])
			h, err2 = strconv.Atoi(args[1])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("width %q and height %q must be whole numbers of blocks", args[0], args[1])
			}
		default:
			return nil, fmt.Errorf("give both width and height, or neither")
		}
		return monitor.New(w, h, advanced)
	}
}

func makePrinter(at site, args []string) (peripheral.Peripheral, error) {
	out := strings.Join(args, ":")
	if at.fromLua {
		out = ""
	}
	if out != "" {
		out = at.hostPath(out)
		// Made now, so a path that cannot be written is refused here rather than every
		// page being lost without a word.
		f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, fmt.Errorf("cannot write the pages to %s: %w", out, errors.Unwrap(err))
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	return printer.New(out), nil
}
