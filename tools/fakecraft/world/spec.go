package world

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"fakecraft/ccstr"
	"fakecraft/computer/machine"
)

// Spec describes a world: the computers in it and the peripherals on its cables. It is
// what a world file (JSON, `fakecraft run --world FILE`) holds:
//
//	{
//	  "computers": [
//	    { "id": 1, "position": [0, 64, 0], "peripherals": { "top": "modem" } },
//	    { "id": 2, "label": "gps", "position": [5, 70, 5], "peripherals": { "top": "modem" },
//	      "files": { "startup.lua": "shell.run('gps host 5 70 5')" } }
//	  ],
//	  "cables": { "lan": { "monitor_0": "monitor:2:1" } },
//	  "wires": [ { "a": { "computer": 1, "side": "left" }, "b": { "computer": 2, "side": "right" } } ],
//	  "touching": [ { "a": { "computer": 1, "side": "back" }, "b": { "computer": 2, "side": "front" } } ]
//	}
type Spec struct {
	// Computers are placed in the order given; ids must differ.
	Computers []ComputerSpec `json:"computers"`
	// Wires join computers' sides with redstone.
	Wires []Wire `json:"wires,omitempty"`
	// Touching are computers placed side by side: each is the other's computer peripheral
	// on its side, and their redstone joins as a wire's does (World.Touch).
	Touching []Wire `json:"touching,omitempty"`
	// Cables are wired networks by name, each with its peripherals by network name; a
	// computer reaches them through a "wired_modem:NAME" on one of its sides.
	Cables map[string]map[string]string `json:"cables,omitempty"`
	// TimeScale runs every computer's clock this many times faster (0: real time).
	TimeScale float64 `json:"time_scale,omitempty"`
	// Dir keeps what the world saves (floppy disks), relative to the world file; empty
	// means a temporary directory.
	Dir string `json:"dir,omitempty"`

	// base is the directory relative host paths in peripheral specs (drive:DIR,
	// printer:FILE) are taken from: the world file's (ReadSpec); empty, the working
	// directory.
	base string
}

// ComputerSpec is one computer of a Spec.
type ComputerSpec struct {
	ID       int        `json:"id"`
	Label    string     `json:"label,omitempty"`
	Position [3]float64 `json:"position"`
	// Basic makes a basic (non-colour) computer.
	Basic bool `json:"basic,omitempty"`
	// Pocket makes a pocket computer (26x20, the pocket API): its only peripheral is an
	// upgrade on its back (modem, ender_modem or speaker), and no wire joins it.
	Pocket bool `json:"pocket,omitempty"`
	// Dir is the computer's own directory, kept across runs (relative to the world file);
	// empty means a fresh temporary one.
	Dir string `json:"dir,omitempty"`
	// Files are written on the computer before it boots, by computer path.
	Files map[string]string `json:"files,omitempty"`
	// Peripherals are attached at boot, by side (or name): TYPE[:ARG...] as Kinds reads
	// them.
	Peripherals map[string]string `json:"peripherals,omitempty"`
}

// ReadSpec reads a world file. Unknown fields are refused (a typo would otherwise place
// nothing), and computer directories are taken relative to the file. What a program sees
// of the file's text (labels, file names, peripheral names) enters as CC's bytes, as
// --label does (ccstr.FromText: "bäd" is the three bytes b\xE4d); a Spec built in Go
// holds CC's bytes already. Peripheral specs keep their host paths as written, and cable
// names, which only match wired_modem:CABLE, stay as they are.
func ReadSpec(path string) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("read world: %w", err)
	}
	var s Spec
	if err := decodeStrict(data, &s); err != nil {
		return Spec{}, fmt.Errorf("world %s: %s%w", path, entryOf(data), err)
	}
	if err := checkPositions(data); err != nil {
		return Spec{}, fmt.Errorf("world %s: %w", path, err)
	}
	s.base = filepath.Dir(path)
	if s.Dir != "" && !filepath.IsAbs(s.Dir) {
		s.Dir = filepath.Join(filepath.Dir(path), s.Dir)
	}
	for i := range s.Computers {
		if d := s.Computers[i].Dir; d != "" && !filepath.IsAbs(d) {
			s.Computers[i].Dir = filepath.Join(filepath.Dir(path), d)
		}
		c := &s.Computers[i]
		c.Label = ccstr.FromText(c.Label)
		var errFiles, errPeripherals error
		c.Files, errFiles = keysFromText(c.Files, "files")
		c.Peripherals, errPeripherals = keysFromText(c.Peripherals, "peripherals")
		if err := errors.Join(errFiles, errPeripherals); err != nil {
			return Spec{}, fmt.Errorf("world %s: computers[%d] (id %d): %w", path, i, c.ID, err)
		}
	}
	for _, cable := range sortedKeys(s.Cables) {
		on, err := keysFromText(s.Cables[cable], "peripherals")
		if err != nil {
			return Spec{}, fmt.Errorf("world %s: cable %s: %w", path, cable, err)
		}
		s.Cables[cable] = on
	}
	return s, nil
}

// keysFromText is m with each key as CC's bytes (ccstr.FromText); nil stays nil. Two
// keys that are one name in CC (日.txt and 月.txt are both ?.txt: a character past U+00FF
// is ?) are refused, naming both, rather than one of them vanishing.
func keysFromText(m map[string]string, what string) (map[string]string, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	from := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		cc := ccstr.FromText(k)
		if first, ok := from[cc]; ok {
			return nil, fmt.Errorf("%s %q and %q are both %q in CC (a character past U+00FF becomes ?): rename one", what, first, k, ccstr.ToText(cc))
		}
		from[cc] = k
		out[cc] = m[k]
	}
	return out, nil
}

// checkPositions refuses a position that is not three numbers: JSON fills a [3]float64
// from [1, 2] without a word, putting the computer at z 0.
func checkPositions(data []byte) error {
	var raw struct {
		Computers []struct {
			ID       int               `json:"id"`
			Position []json.RawMessage `json:"position"`
		} `json:"computers"`
	}
	if json.Unmarshal(data, &raw) != nil {
		return nil // decodeStrict has said what is wrong
	}
	for i, c := range raw.Computers {
		if c.Position != nil && len(c.Position) != 3 {
			return fmt.Errorf("computers[%d] (id %d): position is x, y and z: 3 numbers, not %d", i, c.ID, len(c.Position))
		}
	}
	return nil
}

// decodeStrict decodes data into v, refusing unknown fields.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// entryOf names the entry of a world file that does not decode ("computers[1] (id 11): ",
// "wires[0]: ", "touching[0]: "), so a typo in a file of many computers is found at once; "" when the file
// is wrong outside them (or is no JSON at all).
func entryOf(data []byte) string {
	var raw struct {
		Computers []json.RawMessage `json:"computers"`
		Wires     []json.RawMessage `json:"wires"`
		Touching  []json.RawMessage `json:"touching"`
	}
	if json.Unmarshal(data, &raw) != nil {
		return ""
	}
	for i, c := range raw.Computers {
		var spec ComputerSpec
		if decodeStrict(c, &spec) != nil {
			var id struct {
				ID *int `json:"id"`
			}
			if json.Unmarshal(c, &id) == nil && id.ID != nil {
				return fmt.Sprintf("computers[%d] (id %d): ", i, *id.ID)
			}
			return fmt.Sprintf("computers[%d]: ", i)
		}
	}
	for _, list := range []struct {
		name    string
		entries []json.RawMessage
	}{{"wires", raw.Wires}, {"touching", raw.Touching}} {
		for i, w := range list.entries {
			var wire Wire
			if decodeStrict(w, &wire) != nil {
				return fmt.Sprintf("%s[%d]: ", list.name, i)
			}
		}
	}
	return ""
}

// Build places the spec's computers, attaches their peripherals and lays its cables. The
// computers are not started: Machine gives each one's options.
func (w *World) Build(s Spec) error {
	for _, c := range s.Computers {
		p, err := w.Place(c.ID, Vec{X: c.Position[0], Y: c.Position[1], Z: c.Position[2]})
		if err != nil {
			return err
		}
		if c.Pocket {
			if _, err := p.MakePocket(); err != nil {
				return err
			}
		}
		for _, side := range sortedKeys(c.Peripherals) {
			if err := p.attach(side, c.Peripherals[side], false, s.base); err != nil {
				return fmt.Errorf("computer %d, %s: %w", c.ID, ccstr.ToText(side), err)
			}
		}
	}
	for _, wire := range s.Wires {
		if err := w.Connect(wire); err != nil {
			return err
		}
	}
	for _, pair := range s.Touching {
		if err := w.Touch(pair); err != nil {
			return err
		}
	}
	for _, cable := range sortedKeys(s.Cables) {
		for _, name := range sortedKeys(s.Cables[cable]) {
			if err := w.attachToCable(cable, name, s.Cables[cable][name], s.base); err != nil {
				return fmt.Errorf("cable %s, %s: %w", cable, ccstr.ToText(name), err)
			}
		}
	}
	return nil
}

// Entry is the spec's computer of that id, if it has one.
func (s Spec) Entry(id int) (ComputerSpec, bool) {
	for _, c := range s.Computers {
		if c.ID == id {
			return c, true
		}
	}
	return ComputerSpec{}, false
}

// CheckOwnDirs refuses two computers keeping their files in one directory, naming both
// and the directory: they would share every file, /.settings too (one owner's settings
// would be the other computer's), where each CC computer has a disk of its own. dir is
// the directory of computer id, the one being run, which may differ from its entry's
// (--dir); "" is a fresh one, as is an entry without a dir.
func (s Spec) CheckOwnDirs(id int, dir string) error {
	type owner struct {
		id  int
		dir string
	}
	owners := []owner{{id, dir}}
	for _, c := range s.Computers {
		if c.ID != id {
			owners = append(owners, owner{c.ID, c.Dir})
		}
	}
	sort.Slice(owners, func(i, j int) bool { return owners[i].id < owners[j].id })
	first := map[string]int{}
	for _, o := range owners {
		if o.dir == "" {
			continue
		}
		abs, err := filepath.Abs(o.dir)
		if err != nil {
			return fmt.Errorf("computer %d's dir %s: %w", o.id, o.dir, err)
		}
		abs = withoutSymlinks(abs)
		if other, ok := first[abs]; ok {
			return fmt.Errorf("computers %d and %d both keep their files in %s: each needs a dir of its own, as each CC computer has a disk of its own", other, o.id, abs)
		}
		first[abs] = o.id
	}
	return nil
}

// withoutSymlinks is abs with the symlinks of its longest existing part resolved: two dirs
// naming one directory through a symlink (an existing one, or the parent a fresh one is made
// in) are one disk. What does not exist yet is kept as written.
func withoutSymlinks(abs string) string {
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(dir) == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// Machine returns the options of a spec's computer (placed by Build) as a plain CC:
// Tweaked computer (bare): its shell runs its startup files, then waits at its prompt.
func (w *World) Machine(s Spec, c ComputerSpec) (machine.Options, error) {
	p := w.At(c.ID)
	if p == nil {
		return machine.Options{}, fmt.Errorf("computer %d is not in the world", c.ID)
	}
	return p.Options(machine.Options{
		Label:     c.Label,
		Basic:     c.Basic,
		Overlay:   c.Dir,
		Files:     c.Files,
		TimeScale: s.TimeScale,
		Bare:      true,
	}), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
