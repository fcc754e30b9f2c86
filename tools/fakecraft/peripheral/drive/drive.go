// Package drive is CC: Tweaked's disk drive peripheral and what goes in it: floppy disks
// (numbered, their files kept in a directory of the world, mounted at /disk, /disk2, … on
// every computer using the drive), host directories mounted the same way (as CraftOS-PC's
// drive mounts a folder), and music discs (which play silently).
//
// Inserting queues disk(name) on every computer using the drive, ejecting disk_eject(name),
// as CC's drive does; a computer that starts using a drive with a disk in it gets disk too
// (at its boot the computer drops it, as CC's does).
// A program's ejectDisk takes the disk out on the next tick, as CC's does.
package drive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccformat"
	"fakecraft/ccstr"
	"fakecraft/fsapi"
	"fakecraft/luakit"
	"fakecraft/peripheral"
)

// mountName is where a disk's files go: /disk, then /disk2, /disk3, … when taken.
const mountName = "disk"

// Kind is what sort of item a Media is.
type Kind int

// The items a drive takes.
const (
	// Floppy is a floppy disk: an id, a label, and files in Dir.
	Floppy Kind = iota
	// Folder is a host directory used as a disk (CraftOS-PC's mount): no id.
	Folder
	// Record is a music disc: a title, no files.
	Record
)

// Media is an item for a drive. One Media is one item: its label travels with it from
// drive to drive, and it is in one drive at a time. It is safe for concurrent use.
type Media struct {
	kind  Kind
	id    int
	dir   string
	title string

	mu    sync.Mutex
	label *string // nil: none ("" is a label, as CC's)
	in    *Drive  // the drive holding it, or nil
}

// take marks m as held by d; false when another drive holds it.
func (m *Media) take(d *Drive) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.in != nil && m.in != d {
		return false
	}
	m.in = d
	return true
}

// release marks m as out of d.
func (m *Media) release(d *Drive) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.in == d {
		m.in = nil
	}
}

// NewFloppy is floppy disk id, whose files live in the host directory dir (created if
// missing when it is mounted). Its label, which a player's disk keeps as the item's, is
// kept beside them in dir.label (CC's bytes; an empty file an empty label), read here and
// written by SetLabel, so a kept world's floppy keeps its label from one run to the next.
func NewFloppy(id int, dir string) *Media {
	m := &Media{kind: Floppy, id: id, dir: dir}
	if data, err := os.ReadFile(m.labelFile()); err == nil {
		label := string(data)
		m.label = ccstr.OptLabel(&label)
	}
	return m
}

// labelFile is where a floppy's label is kept.
func (m *Media) labelFile() string { return m.dir + ".label" }

// saveLabel keeps a floppy's label (none: no file). Caller holds mu.
func (m *Media) saveLabel() error {
	if m.label == nil {
		if err := os.Remove(m.labelFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(m.dir), 0o755); err != nil {
		return err
	}
	return os.WriteFile(m.labelFile(), []byte(*m.label), 0o644)
}

// NewFolder is a host directory used as a disk.
func NewFolder(dir string) *Media { return &Media{kind: Folder, dir: dir} }

// NewRecord is a music disc with a title.
func NewRecord(title string) *Media { return &Media{kind: Record, title: title} }

// Kind is what the item is.
func (m *Media) Kind() Kind { return m.kind }

// ID is a floppy disk's id.
func (m *Media) ID() int { return m.id }

// Label is the disk's label, nil when it has none; a music disc's is its title.
func (m *Media) Label() *string {
	if m.kind == Record {
		return &m.title
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.label
}

// SetLabel labels a disk, as disk.setLabel does (CC's label rules; nil clears it, "" is a
// label); a music disc's cannot change. A floppy's label is kept on the host (NewFloppy);
// err is a failure to keep it, the label being set all the same.
func (m *Media) SetLabel(label *string) (ok bool, err error) {
	if m.kind == Record {
		return false, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.label = ccstr.OptLabel(label)
	if m.kind == Floppy {
		err = m.saveLabel()
	}
	return true, err
}

// ErrInAnotherDrive is Insert's refusal of an item another drive holds.
var ErrInAnotherDrive = errors.New("already in another drive")

// Resolver finds the item CraftOS-PC's insertDisk names: a floppy disk's id, or a host
// path (a directory is a disk, a file a music disc).
type Resolver func(what string) (*Media, error)

// Drive is a disk drive.
type Drive struct {
	methods map[string]peripheral.Method
	resolve Resolver

	mu      sync.Mutex
	media   *Media
	mounts  map[*peripheral.Access]string // where each computer has the disk mounted ("" for none)
	playing bool
}

// New returns an empty drive. With a resolver, it also has CraftOS-PC's insertDisk(id or
// path) method.
func New(resolve Resolver) *Drive {
	d := &Drive{mounts: map[*peripheral.Access]string{}, resolve: resolve}
	d.methods = d.methodTable()
	return d
}

// Types implements peripheral.Peripheral.
func (d *Drive) Types() []string { return []string{"drive"} }

// Methods implements peripheral.Peripheral.
func (d *Drive) Methods() map[string]peripheral.Method { return d.methods }

// Attach implements peripheral.Peripheral: the computer gets the disk mounted (and a disk
// event) if there is one.
func (d *Drive) Attach(a *peripheral.Access) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mounts[a] = ""
	if d.media != nil {
		d.mount(a)
	}
}

// Detach implements peripheral.Peripheral.
func (d *Drive) Detach(a *peripheral.Access) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.media != nil {
		d.unmount(a)
	}
	delete(d.mounts, a)
}

// mount gives computer a the disk's files, if it has any, and a disk event. Caller holds
// mu.
func (d *Drive) mount(a *peripheral.Access) {
	if d.media.kind != Record {
		at, err := a.Mount(mountName, fsapi.Mount{Dir: d.media.dir})
		if err == nil {
			d.mounts[a] = at
		}
	}
	a.QueueEvent("disk", a.Name())
}

// unmount takes the disk's files from computer a, with a disk_eject event. Caller holds mu.
func (d *Drive) unmount(a *peripheral.Access) {
	if at := d.mounts[a]; at != "" {
		a.Unmount(at)
		d.mounts[a] = ""
	}
	a.QueueEvent("disk_eject", a.Name())
}

// Insert puts m in the drive, ejecting what was there (returned, or nil), as a player
// does. An item is in one drive at a time, as in CC: m in another drive is an error
// (eject it there first), and this drive keeps what it had. Safe from any goroutine.
func (d *Drive) Insert(m *Media) (*Media, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !m.take(d) {
		if m.kind == Floppy {
			return nil, fmt.Errorf("floppy disk %d is %w", m.id, ErrInAnotherDrive)
		}
		return nil, fmt.Errorf("that disk is %w", ErrInAnotherDrive)
	}
	old := d.eject(m)
	if old == m {
		old = nil // put back in
	}
	d.media = m
	if m.kind != Record && m.dir != "" {
		// A floppy's directory appears the first time it is used, as CC makes it.
		_ = os.MkdirAll(m.dir, 0o755)
	}
	for a := range d.mounts {
		d.mount(a)
	}
	return old, nil
}

// Eject takes the item out of the drive and returns it (nil when empty).
func (d *Drive) Eject() *Media {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.eject(nil)
}

// eject empties the drive; what it held is free for other drives unless it is keep, which
// goes back in. Caller holds mu.
func (d *Drive) eject(keep *Media) *Media {
	old := d.media
	if old == nil {
		return nil
	}
	for a := range d.mounts {
		d.unmount(a)
	}
	d.media, d.playing = nil, false
	if old != keep {
		old.release(d)
	}
	return old
}

// Media is what the drive holds, or nil.
func (d *Drive) Media() *Media {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.media
}

// Playing reports whether the drive plays its music disc (silently: fakecraft has no
// sound).
func (d *Drive) Playing() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.playing
}

// methodTable is CC's DiskDrivePeripheral, plus CraftOS-PC's insertDisk when the drive
// can resolve what it names.
func (d *Drive) methodTable() map[string]peripheral.Method {
	media := func() *Media {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.media
	}
	ms := map[string]peripheral.Method{
		"isDiskPresent": func(L *lua.LState, _ *peripheral.Access) int {
			L.Push(lua.LBool(media() != nil))
			return 1
		},
		"getDiskLabel": func(L *lua.LState, _ *peripheral.Access) int {
			m := media()
			if m == nil {
				return 0
			}
			if label := m.Label(); label != nil {
				L.Push(lua.LString(*label))
				return 1
			}
			L.Push(lua.LNil)
			return 1
		},
		// A main-thread method in CC, an empty drive's call too: it answers on the next
		// tick. The label changes at once, so its errors are raised at once.
		"setDiskLabel": func(L *lua.LState, a *peripheral.Access) int {
			label := luakit.OptionalString(L, 1)
			if m := media(); m != nil {
				ok, err := m.SetLabel(label)
				if !ok {
					luakit.RaiseMessage(L, "Disk label cannot be changed")
				}
				if err != nil {
					luakit.RaiseMessage(L, "fakecraft could not keep the disk label on the host: "+err.Error())
				}
			}
			return a.MainThread(L, func() []lua.LValue { return nil })
		},
		"hasData": func(L *lua.LState, a *peripheral.Access) int {
			d.mu.Lock()
			at := d.mounts[a]
			d.mu.Unlock()
			L.Push(lua.LBool(at != ""))
			return 1
		},
		"getMountPath": func(L *lua.LState, a *peripheral.Access) int {
			d.mu.Lock()
			at := d.mounts[a]
			d.mu.Unlock()
			if at == "" {
				L.Push(lua.LNil)
			} else {
				L.Push(lua.LString(at))
			}
			return 1
		},
		"hasAudio": func(L *lua.LState, _ *peripheral.Access) int {
			m := media()
			L.Push(lua.LBool(m != nil && m.kind == Record))
			return 1
		},
		"getAudioTitle": func(L *lua.LState, _ *peripheral.Access) int {
			switch m := media(); {
			case m == nil:
				L.Push(lua.LFalse)
			case m.kind == Record:
				L.Push(lua.LString(m.title))
			default:
				L.Push(lua.LNil)
			}
			return 1
		},
		"playAudio": func(L *lua.LState, _ *peripheral.Access) int {
			d.mu.Lock()
			d.playing = d.media != nil && d.media.kind == Record
			d.mu.Unlock()
			return 0
		},
		"stopAudio": func(L *lua.LState, _ *peripheral.Access) int {
			d.mu.Lock()
			d.playing = false
			d.mu.Unlock()
			return 0
		},
		// CC's ejectDisk only asks for the eject, which the drive does on the server's next
		// tick (DiskDriveBlockEntity's ejectQueued): until then the disk is in and mounted,
		// and disk_eject comes with the tick.
		"ejectDisk": func(L *lua.LState, a *peripheral.Access) int {
			a.After(0, func() { d.Eject() })
			return 0
		},
		"getDiskID": func(L *lua.LState, _ *peripheral.Access) int {
			m := media()
			if m == nil || m.kind != Floppy {
				return 0
			}
			L.Push(lua.LNumber(m.id))
			return 1
		},
	}
	if d.resolve != nil {
		ms["insertDisk"] = func(L *lua.LState, _ *peripheral.Access) int {
			var what string
			switch v := L.Get(1).(type) {
			case lua.LString:
				what = string(v)
			case lua.LNumber:
				what = ccformat.FormatNumber(float64(v))
			default:
				luakit.ArgError(L, 1, "string or number")
			}
			m, err := d.resolve(what)
			if err != nil {
				luakit.RaiseMessage(L, "Could not mount: "+err.Error())
			}
			if _, err := d.Insert(m); err != nil {
				luakit.RaiseMessage(L, "Could not mount: "+err.Error())
			}
			return 0
		}
	}
	return ms
}

// Title is the title a music disc made from a file gets: its name without the extension.
func Title(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}
