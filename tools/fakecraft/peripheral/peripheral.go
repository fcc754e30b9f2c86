// Package peripheral is a computer's six sides: the peripherals attached to them (CC's
// native `peripheral` API, which the ROM's peripheral API wraps) and the redstone signals
// on them (CC's `redstone` API, also `rs`).
//
// A Peripheral is a block a computer uses: a modem, a monitor, a disk drive… Each computer
// that uses one gets an Access (CC's IComputerAccess): its name for the peripheral (a side,
// or a wired network name such as "monitor_0"), the way to queue events on that computer
// and to mount disks in its file system. A peripheral may be attached to several computers
// at once (a monitor on a wired network), each on its own goroutine, so a peripheral guards
// its own state; its methods run on the goroutine of the computer that called them.
//
// A Bus holds one computer's sides. It outlives the computer's boots: what is attached
// stays attached across a reboot (the blocks are still there), and every boot attaches it
// again to the new Lua state.
package peripheral

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/fsapi"
	"fakecraft/host"
)

// Method is one function of a peripheral, as peripheral.call reaches it: the method's own
// arguments are at 1..L.GetTop() (the name and the method name already removed), a is the
// calling computer's access, and it returns its number of results like any LGFunction.
// Argument errors use luakit's Java wording (CC's peripherals are Java) at the caller's
// position; the native call moves them to the program that called peripheral.call.
type Method func(L *lua.LState, a *Access) int

// Peripheral is a block that computers can use.
type Peripheral interface {
	// Types are the peripheral's types, the main one first ("modem", "peripheral_hub").
	Types() []string
	// Methods are the functions peripheral.call reaches, by name. The map is not changed
	// by the caller, so a peripheral may return a shared one.
	Methods() map[string]Method
	// Attach is called when a computer starts using the peripheral (it boots with it
	// attached, or it is attached while the computer runs); Detach when it stops (the
	// computer shuts down or the peripheral is removed). They may be called from any
	// goroutine, never twice for one Access.
	Attach(a *Access)
	Detach(a *Access)
}

// Mounter is what an Access mounts disks in: the computer's file system.
type Mounter interface {
	Mount(mnt fsapi.Mount) error
	Unmount(at string)
}

// Access is one computer's use of one peripheral, CC's IComputerAccess. Its methods are
// safe from any goroutine; once the peripheral is detached they do nothing.
type Access struct {
	name     string
	id       int
	host     host.Host
	fs       Mounter
	attached atomic.Bool

	mu     sync.Mutex // guards mounts
	mounts []string
}

// NewAccess is an access for computer id (h, mounting in fs) to a peripheral under name,
// outside a Bus: for a peripheral's own tests. Close it to detach.
func NewAccess(name string, id int, h host.Host, fs Mounter) *Access {
	return newAccess(name, id, h, fs)
}

func newAccess(name string, id int, h host.Host, fs Mounter) *Access {
	a := &Access{name: name, id: id, host: h, fs: fs}
	a.attached.Store(true)
	return a
}

// Name is the computer's name for the peripheral: a side ("left") or a network name
// ("monitor_0"), the first argument of the peripheral's events.
func (a *Access) Name() string { return a.name }

// ComputerID is the id of the computer using the peripheral.
func (a *Access) ComputerID() int { return a.id }

// Now is the computer's clock (host.Host.Now).
func (a *Access) Now() time.Time { return a.host.Now() }

// After runs fn on the computer's Lua goroutine once its clock has advanced by seconds
// (host.Host.After): a peripheral's own timing. Call it from that goroutine (a method).
func (a *Access) After(seconds float64, fn func()) { a.host.After(seconds, fn) }

// MainThread answers a method CC runs on the server's main thread (@LuaFunction(mainThread
// = true): a printer's newPage and endPage, a drive's setDiskLabel): work runs on the
// computer's next tick and the call waits for it (host.MainThread), so an event the caller
// is sent meanwhile is not its own, as in CC. The method returns what MainThread returns.
// On a host that has no ticks of its own (a peripheral's tests' fake), work runs at once.
func (a *Access) MainThread(L *lua.LState, work func() []lua.LValue) int {
	if m, ok := a.host.(host.MainThread); ok {
		return m.MainThread(L, work)
	}
	results := work()
	for _, v := range results {
		L.Push(v)
	}
	return len(results)
}

// CursorBlink tells the computer a screen it drew on turned its cursor blink from was to on
// (host.Blinker), when it listens. Lua goroutine only (a method).
func (a *Access) CursorBlink(was, on bool) {
	if b, ok := a.host.(host.Blinker); ok {
		b.CursorBlink(was, on)
	}
}

// Attached reports whether the computer still uses the peripheral through this access.
func (a *Access) Attached() bool { return a.attached.Load() }

// QueueEvent queues an event on the computer. The arguments are Values (nil, bool,
// float64, int, string, *Table); tables are built in the computer's own Lua state when the
// event is delivered.
func (a *Access) QueueEvent(name string, args ...Value) {
	if !a.Attached() {
		return
	}
	vals := make([]lua.LValue, len(args))
	for i, v := range args {
		if t, ok := v.(*Table); ok {
			vals[i] = host.Deferred(func(L *lua.LState) lua.LValue { return Import(L, t) })
		} else {
			vals[i] = Import(nil, v)
		}
	}
	a.host.QueueEvent(name, vals...)
}

// Mount mounts mnt in the computer's file system at the first free place among want,
// want2, want3, … (a disk drive's "disk", "disk2", …, as CC's drive does), labelled with
// the access's name for fs.getDrive, and returns where (without a leading slash).
func (a *Access) Mount(want string, mnt fsapi.Mount) (string, error) {
	if !a.Attached() {
		return "", errDetached
	}
	mnt.Label = a.name
	for n := 1; ; n++ {
		at := want
		if n > 1 {
			at = want + strconv.Itoa(n)
		}
		mnt.At = "/" + at
		err := a.fs.Mount(mnt)
		if err == fsapi.ErrMountExists {
			continue
		}
		if err != nil {
			return "", err
		}
		a.mu.Lock()
		a.mounts = append(a.mounts, at)
		a.mu.Unlock()
		return at, nil
	}
}

// Unmount removes a mount made by Mount.
func (a *Access) Unmount(at string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, m := range a.mounts {
		if m == at {
			a.mounts = append(a.mounts[:i], a.mounts[i+1:]...)
			a.fs.Unmount("/" + at)
			return
		}
	}
}

// Sub is the access of a peripheral this computer reaches through this one (a wired
// modem's remote peripherals): same computer, its own name. Close it when the computer
// stops reaching it.
func (a *Access) Sub(name string) *Access {
	return newAccess(name, a.id, a.host, a.fs)
}

// Close ends an access made by Sub, as detach does for the Bus's own.
func (a *Access) Close() { a.detach() }

// detach marks the access detached and removes what the peripheral left mounted, as CC's
// unmountAll does.
func (a *Access) detach() {
	a.attached.Store(false)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.mounts {
		a.fs.Unmount("/" + m)
	}
	a.mounts = nil
}

// errDetached is Mount's answer once the peripheral is no longer attached.
var errDetached = errors.New("peripheral detached")
