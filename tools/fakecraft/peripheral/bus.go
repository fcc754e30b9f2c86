package peripheral

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/host"
	"fakecraft/luakit"
)

// Sides are a computer's six sides in CC's order (redstone.getSides, and the order
// peripheral.getNames lists them in).
var Sides = []string{"bottom", "top", "back", "front", "right", "left"}

// sideIndex is the index in Sides of a side named in any case, or -1.
func sideIndex(name string) int {
	for i, s := range Sides {
		if strings.EqualFold(s, name) {
			return i
		}
	}
	return -1
}

// IsSide reports whether name is one of the six sides (in any case, as CC reads them).
func IsSide(name string) bool { return sideIndex(name) >= 0 }

// SameSide reports whether a and b name the same side (in any case).
func SameSide(a, b string) bool {
	i := sideIndex(a)
	return i >= 0 && i == sideIndex(b)
}

// slot is one attached peripheral.
type slot struct {
	name   string // the side in CC's spelling, or the name given
	p      Peripheral
	access *Access // nil while the computer is off
}

// Bus is one computer's sides: the peripherals attached to it and its redstone signals.
// It is safe for concurrent use: mu guards every field. Peripherals' Attach and Detach run
// under mu, so they must not call back into the Bus.
type Bus struct {
	id int

	mu    sync.Mutex
	sides [6]*slot
	named map[string]*slot // peripherals attached under a name that is not a side
	host  host.Host        // the running computer; nil while it is off
	fs    Mounter
	red   redstone
}

// NewBus returns the empty sides of the computer with the given id.
func NewBus(id int) *Bus {
	return &Bus{id: id, named: map[string]*slot{}}
}

// ErrTaken is Attach's refusal: something is already attached under that name.
type ErrTaken string

func (e ErrTaken) Error() string { return "Peripheral already attached on side " + string(e) }

// slotFor finds what is attached under name. Caller holds mu.
func (b *Bus) slotFor(name string) *slot {
	if i := sideIndex(name); i >= 0 {
		return b.sides[i]
	}
	return b.named[name]
}

// Attach attaches p to the side (any case) or under the name given, as a block placed next
// to the computer (or periphemu.create) does: a running computer gets a peripheral event.
// It is refused when something is attached there already. Safe from any goroutine.
func (b *Bus) Attach(name string, p Peripheral) error {
	if name == "" {
		return fmt.Errorf("attach %s: empty name", p.Types()[0])
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.slotFor(name) != nil {
		return ErrTaken(name)
	}
	s := &slot{name: name, p: p}
	if i := sideIndex(name); i >= 0 {
		s.name = Sides[i]
		b.sides[i] = s
	} else {
		b.named[name] = s
	}
	if b.host != nil {
		b.attach(s)
		b.host.QueueEvent("peripheral", lua.LString(s.name))
	}
	return nil
}

// Detach removes what is attached under name and reports whether there was anything; a
// running computer gets a peripheral_detach event. Safe from any goroutine.
func (b *Bus) Detach(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.slotFor(name)
	if s == nil {
		return false
	}
	if i := sideIndex(name); i >= 0 {
		b.sides[i] = nil
	} else {
		delete(b.named, name)
	}
	if s.access != nil {
		b.detach(s)
		b.host.QueueEvent("peripheral_detach", lua.LString(s.name))
	}
	return true
}

// Get returns what is attached under name, or nil.
func (b *Bus) Get(name string) Peripheral {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.slotFor(name); s != nil {
		return s.p
	}
	return nil
}

// Running returns the computer using the bus, nil while it is off.
func (b *Bus) Running() host.Host {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.host
}

// Names lists what is attached: sides in CC's order, then other names sorted.
func (b *Bus) Names() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, s := range b.sides {
		if s != nil {
			out = append(out, s.name)
		}
	}
	return append(out, b.namedNames()...)
}

// namedNames are the attached names that are not sides, sorted. Caller holds mu.
func (b *Bus) namedNames() []string {
	names := make([]string, 0, len(b.named))
	for n := range b.named {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// attach gives s's peripheral to the running computer. Caller holds mu.
func (b *Bus) attach(s *slot) {
	s.access = newAccess(s.name, b.id, b.host, b.fs)
	s.p.Attach(s.access)
}

// detach takes s's peripheral from the running computer. Caller holds mu.
func (b *Bus) detach(s *slot) {
	a := s.access
	s.access = nil
	s.p.Detach(a)
	a.detach()
}

func (b *Bus) each(fn func(*slot)) {
	for _, s := range b.sides {
		if s != nil {
			fn(s)
		}
	}
	for _, n := range b.namedNames() {
		fn(b.named[n])
	}
}

// Install installs the native peripheral API and the redstone API (as redstone and rs) in
// h, a computer that is booting, with fs as the file system its peripherals mount disks
// in, and attaches everything on the bus to it, as CC's PeripheralAPI.startup does. When
// the computer shuts down every peripheral is detached and the redstone outputs turn off.
// It is the computer's API table's row for peripherals (computer/apis.go).
func (b *Bus) Install(L *lua.LState, h host.Host, fs Mounter) error {
	b.start(h, fs)
	h.AtShutdown(func() { b.stop(h) })
	L.SetGlobal("peripheral", b.nativeAPI(L))
	rs := b.redstoneAPI(L)
	L.SetGlobal("redstone", rs)
	L.SetGlobal("rs", rs)
	return nil
}

func (b *Bus) start(h host.Host, fs Mounter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.host, b.fs = h, fs
	b.each(b.attach)
}

func (b *Bus) stop(h host.Host) {
	b.mu.Lock()
	if b.host != h {
		b.mu.Unlock()
		return
	}
	b.each(func(s *slot) {
		if s.access != nil {
			b.detach(s)
		}
	})
	b.host, b.fs = nil, nil
	changed := b.red.resetOutputs()
	listeners := slices.Clone(b.red.listeners)
	b.mu.Unlock()
	for _, side := range changed {
		b.notifyOutput(listeners, side)
	}
}

// call is the native peripheral.call: the method runs on this goroutine, its errors blamed
// on the program that called peripheral.call.
func (b *Bus) call(L *lua.LState) int {
	name := luakit.StrictString(L, 1)
	method := luakit.StrictString(L, 2)
	b.mu.Lock()
	s := b.slotFor(name)
	var a *Access
	var p Peripheral
	if s != nil {
		a, p = s.access, s.p
	}
	b.mu.Unlock()
	if a == nil {
		luakit.RaiseMessage(L, "No peripheral attached")
	}
	L.Remove(1)
	L.Remove(1)
	return luakit.BlameCallersCaller(L, func() int { return CallMethod(L, p, a, method) })
}

// CallMethod runs a peripheral's method with its arguments at 1..L.GetTop(), for
// peripheral.call and a wired modem's callRemote (which runs inside peripheral.call, whose
// errors are blamed on the program that called the ROM's peripheral.call). An unknown
// method is CC's "No such method".
func CallMethod(L *lua.LState, p Peripheral, a *Access, method string) int {
	m := p.Methods()[method]
	if m == nil {
		luakit.RaiseMessage(L, "No such method "+method)
	}
	return m(L, a)
}

// nativeAPI is CC's Java peripheral API, which the ROM's apis/peripheral.lua wraps: sides
// in any case, and (a fakecraft addition, as CraftOS-PC has it) other names attached with
// periphemu, which getNames lists.
func (b *Bus) nativeAPI(L *lua.LState) *lua.LTable {
	present := func(L *lua.LState) *slot {
		name := luakit.StrictString(L, 1)
		b.mu.Lock()
		defer b.mu.Unlock()
		if s := b.slotFor(name); s != nil && s.access != nil {
			return s
		}
		return nil
	}
	fns := map[string]lua.LGFunction{
		"isPresent": func(L *lua.LState) int {
			L.Push(lua.LBool(present(L) != nil))
			return 1
		},
		"getType": func(L *lua.LState) int {
			s := present(L)
			if s == nil {
				return 0
			}
			types := s.p.Types()
			for _, t := range types {
				L.Push(lua.LString(t))
			}
			return len(types)
		},
		"hasType": func(L *lua.LState) int {
			s := present(L)
			want := luakit.StrictString(L, 2)
			if s == nil {
				return 0
			}
			L.Push(lua.LBool(slices.Contains(s.p.Types(), want)))
			return 1
		},
		"getMethods": func(L *lua.LState) int {
			s := present(L)
			if s == nil {
				return 0
			}
			L.Push(MethodList(L, s.p))
			return 1
		},
		"call": b.call,
		"getNames": func(L *lua.LState) int {
			b.mu.Lock()
			names := b.namedNames()
			b.mu.Unlock()
			t := L.CreateTable(len(names), 0)
			for _, n := range names {
				t.Append(lua.LString(n))
			}
			L.Push(t)
			return 1
		},
	}
	t := L.CreateTable(0, len(fns))
	L.SetFuncs(t, fns) // in the names' order: the same on every run
	return t
}

// MethodList is peripheral.getMethods' list of p's methods, in the order CC's lists them:
// CC keeps a peripheral's methods in a HashMap (MethodSupplier.getSelfMethods) and hands
// over its keys in the map's iteration order, which the names' Java hashes decide. Names
// that share a bucket follow the order Java's getMethods gave CC, which no source says (it
// is the JVM's): fakecraft puts them in their names' order.
func MethodList(L *lua.LState, p Peripheral) *lua.LTable {
	ms := p.Methods()
	names := make([]string, 0, len(ms))
	for n := range ms {
		names = append(names, n)
	}
	sort.Strings(names)
	t := L.CreateTable(len(names), 0)
	for _, n := range luakit.JavaMapKeys(luakit.JavaDefaultCapacity, names...) {
		t.Append(lua.LString(n))
	}
	return t
}
