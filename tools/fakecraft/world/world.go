// Package world puts fakecraft computers in one world: each at a position with its own
// id, label, disk and clock, joined by modem networks (the air for wireless and ender
// modems, named cables for wired ones) and by the peripherals around them, which can be
// attached and detached while they run — from Go, from a world file, from fakecraft's
// --attach flag, or from Lua through CraftOS-PC's periphemu API.
//
// Every computer in a world runs in this process, each on its own goroutine (package
// machine); a world is the set of things they share. A Place is one computer's spot: its
// id, position and sides. Place.Options turns a machine's options into those of a
// computer standing there.
package world

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"fakecraft/computer"
	"fakecraft/computer/machine"
	"fakecraft/peripheral"
	"fakecraft/peripheral/drive"
	"fakecraft/peripheral/modem"
	"fakecraft/pocket"
)

// Vec is a position in the world, in blocks.
type Vec = modem.Vec

// Options configure a world.
type Options struct {
	// Dir keeps what the world saves: floppy disks (disk/<id>/), as a Minecraft world's
	// computercraft/ directory does. Empty means a temporary directory, removed by Close.
	Dir string
}

// World is the shared part of several computers: networks, cables, disks, and who stands
// where. It is safe for concurrent use.
type World struct {
	dir     string
	tempDir string

	mu     sync.Mutex
	air    map[int]*modem.Network // wireless networks by CraftOS-PC network id; 0 is the world's
	cables map[string]*modem.Network
	places map[int]*Place
	// floppies are the world's floppy disks handed out so far, by id.
	floppies map[int]*drive.Media
	// computerNames counts the computers connected to cables (computer_N) so far.
	computerNames int
}

// New makes an empty world.
func New(opts Options) (*World, error) {
	w := &World{dir: opts.Dir, air: map[int]*modem.Network{}, cables: map[string]*modem.Network{},
		places: map[int]*Place{}, floppies: map[int]*drive.Media{}}
	if w.dir == "" {
		dir, err := os.MkdirTemp("", "fakecraft-world-")
		if err != nil {
			return nil, fmt.Errorf("make world directory: %w", err)
		}
		w.dir, w.tempDir = dir, dir
	} else if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return nil, fmt.Errorf("make world directory: %w", err)
	}
	return w, nil
}

// Dir is the world's directory.
func (w *World) Dir() string { return w.dir }

// Close removes a temporary world directory. Stop the computers first.
func (w *World) Close() error {
	if w.tempDir == "" {
		return nil
	}
	dir := w.tempDir
	w.tempDir = ""
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove world directory: %w", err)
	}
	return nil
}

// Air is wireless network id (CraftOS-PC's modem network number; 0 is the world's own).
func (w *World) Air(id int) *modem.Network {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.air[id]
	if n == nil {
		n = modem.NewAir()
		w.air[id] = n
	}
	return n
}

// Cable is the wired network of that name, laid the first time it is named.
func (w *World) Cable(name string) *modem.Network {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.cables[name]
	if n == nil {
		n = modem.NewCable()
		w.cables[name] = n
	}
	return n
}

// AttachToCable makes a peripheral from spec (as Place.Attach reads it) and puts it on
// the cable under a network name such as "monitor_0".
func (w *World) AttachToCable(cable, name, spec string) error {
	return w.attachToCable(cable, name, spec, "")
}

// attachToCable is AttachToCable with relative host paths taken from base (see site).
func (w *World) attachToCable(cable, name, spec, base string) error {
	p, err := site{w: w, base: base}.make(spec)
	if err != nil {
		return err
	}
	if err := w.Cable(cable).AttachRemote(name, p); err != nil {
		discard(p)
		return err
	}
	return nil
}

// discard lets go of a peripheral that left the world or never joined it: a wired modem
// that was on takes its computer off the cable, and a drive's disk is free for another
// drive (a broken drive drops its disk in CC).
func discard(per peripheral.Peripheral) {
	switch per := per.(type) {
	case *modem.Modem:
		per.DisconnectLocal()
	case *drive.Drive:
		per.Eject()
	}
}

// Place is one computer's spot in the world.
type Place struct {
	w   *World
	id  int
	pos Vec
	bus *peripheral.Bus

	mu    sync.Mutex
	power power // the computer while it is off, as computer peripherals switch it
	// specs are what attach made, by canonical name (pocket.go); pocket is a pocket
	// computer's (MakePocket), and wired says a redstone wire joins this computer.
	specs  map[string]string
	pocket *pocket.Pocket
	wired  bool
}

// ErrTaken is Place's refusal of a computer id already in the world.
var ErrTaken = errors.New("a computer with this id is already in the world")

// Place puts computer id at pos, with nothing attached yet.
func (w *World) Place(id int, pos Vec) (*Place, error) {
	if err := computer.CheckID(id); err != nil {
		return nil, fmt.Errorf("computer %d: %w", id, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.places[id] != nil {
		return nil, fmt.Errorf("computer %d: %w", id, ErrTaken)
	}
	p := &Place{w: w, id: id, pos: pos, bus: peripheral.NewBus(id)}
	w.places[id] = p
	return p, nil
}

// At returns the place of computer id, or nil.
func (w *World) At(id int) *Place {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.places[id]
}

// IDs lists the computers in the world, sorted.
func (w *World) IDs() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make([]int, 0, len(w.places))
	for id := range w.places {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// ID is the computer's id.
func (p *Place) ID() int { return p.id }

// Position is where the computer stands.
func (p *Place) Position() Vec { return p.pos }

// Peripherals is the computer's sides.
func (p *Place) Peripherals() *peripheral.Bus { return p.bus }

// Attach makes a peripheral from spec and attaches it to a side (or, as CraftOS-PC allows,
// under another name). spec is TYPE[:ARG...]: Kinds lists the types and their arguments.
func (p *Place) Attach(name, spec string) error {
	return p.attach(name, spec, false, "")
}

// attach is Attach, for the person running fakecraft or (fromLua) for a program, with
// relative host paths taken from base (see site).
func (p *Place) attach(name, spec string, fromLua bool, base string) error {
	pk := p.Pocket()
	if pk != nil {
		if err := pocketPlace(name, spec); err != nil {
			return err
		}
	}
	per, err := site{w: p.w, p: p, fromLua: fromLua, base: base}.make(spec)
	if err != nil {
		return err
	}
	if err := p.bus.Attach(name, per); err != nil {
		discard(per)
		return err
	}
	p.noteSpec(name, spec)
	if pk != nil {
		pk.Equipped(spec)
	}
	return nil
}

// noteSpec remembers what was made under name ("" when it went: Detach).
func (p *Place) noteSpec(name, spec string) {
	if peripheral.IsSide(name) {
		name = strings.ToLower(name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if spec == "" {
		delete(p.specs, name)
		return
	}
	if p.specs == nil {
		p.specs = map[string]string{}
	}
	p.specs[name] = spec
}

// Detach removes what is attached under name; false when there was nothing. A wired modem
// that was on takes the computer off its cable; a drive's disk is free for another drive.
func (p *Place) Detach(name string) bool {
	per := p.bus.Get(name)
	if !p.bus.Detach(name) {
		return false
	}
	p.noteSpec(name, "")
	discard(per)
	return true
}

// Options returns opts for a computer standing here: its id, its sides, and the periphemu
// API.
func (p *Place) Options(opts machine.Options) machine.Options {
	p.mu.Lock()
	p.power.label = opts.BootLabel() // what a computer peripheral says before it boots
	p.mu.Unlock()
	opts.ID = p.id
	opts.Peripherals = p.bus
	if pk := p.Pocket(); pk != nil {
		opts.Pocket = pk
	}
	opts.ExtraAPIs = append(append([]computer.Installer(nil), opts.ExtraAPIs...), p.periphemu)
	return opts
}
