// Package host is the contract between a fakecraft computer and the API packages
// (http, fs, textutils, …) installed into its Lua state.
//
// A computer's Lua state is owned by exactly one goroutine, as CC: Tweaked's is owned by
// its computer thread. API packages that do work elsewhere (network, timers) never touch
// the Lua state from their own goroutines: they queue events or hand a function to Do.
package host

import (
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Host is what an API package needs from the computer it is installed on.
type Host interface {
	// QueueEvent appends an event to the computer's queue, as os.queueEvent does but
	// without copying. Safe from any goroutine, but values made off the Lua goroutine
	// must be nil, booleans, numbers, strings or Deferred; anything else must be built
	// inside Do. Like CC, the queue holds 256 events and silently drops the excess.
	QueueEvent(name string, args ...lua.LValue)

	// Do runs fn on the goroutine that owns the Lua state, before the next event is
	// delivered. Safe from any goroutine; never blocks. fn must not yield.
	Do(fn func(L *lua.LState))

	// Go runs fn on a new goroutine that the computer waits for when it shuts down.
	// fn must return once Done is closed. It is for work in flight (a request, a socket's
	// reads): while such a goroutine runs, an answer may come at any moment, so a computer
	// on the virtual clock keeps its clock on real time (see computer.Config.VirtualTime).
	Go(fn func())

	// AtShutdown runs fn once the computer shuts down (Done is closed), before its goroutines
	// are waited for, in the order given: for an API that must stop its own work then (close
	// its sockets, detach peripherals) without holding a goroutine that does nothing until
	// then. fn must not touch the Lua state.
	AtShutdown(fn func())

	// Done is closed when the computer shuts down.
	Done() <-chan struct{}

	// Now is the computer's clock: real time, or faster when the computer runs with a
	// time scale, or the virtual clock's time, so os.epoch and timers stay consistent with
	// each other. Safe from any goroutine.
	Now() time.Time

	// StartTimer starts an os timer, exactly as os.startTimer(seconds) does, and returns
	// its id; the usual timer(id) event is queued when it fires. Lua goroutine only.
	StartTimer(seconds float64) int

	// CancelTimer cancels a timer started by StartTimer or os.startTimer. Lua goroutine only.
	CancelTimer(id int)

	// After runs fn on the Lua goroutine once the computer's clock has advanced by seconds
	// (rounded to ticks as a timer is, at least one), for a peripheral's own timing (a
	// speaker draining its buffer): unlike a timer it queues nothing. It never runs once the
	// computer has shut down. Lua goroutine only.
	After(seconds float64, fn func())
}

// MainThread is a computer that answers main-thread functions as CC: Tweaked does (those
// it marks @LuaFunction(mainThread = true): pocket.equipBack, a printer's newPage, a
// drive's setDiskLabel): work runs on the computer's next tick, as the server's main thread
// runs it, and the call waits for its task_complete (computer.Computer.MainThread). The Go
// function returns what MainThread returns.
type MainThread interface {
	MainThread(L *lua.LState, work func() []lua.LValue) int
}

// Blinker is a computer that hears the cursor blinks of the screens it draws on besides its
// own (a monitor's): a blink turned on is a read() waiting for the player's keys, wherever
// the program's terminal is redirected (computer.Config.Input). Lua goroutine only.
type Blinker interface {
	CursorBlink(was, on bool)
}

// builder is the value a Deferred event argument carries.
type builder func(L *lua.LState) lua.LValue

// Deferred is an event argument that needs the receiving computer's Lua state (a table):
// build runs on that computer's goroutine when the event is delivered, so the event can
// be queued from any goroutine, in order with the others.
func Deferred(build func(L *lua.LState) lua.LValue) lua.LValue {
	return &lua.LUserData{Value: builder(build)}
}

// Resolve builds v in L if it is a Deferred, and returns any other value as it is. The
// computer calls it on every event argument it delivers.
func Resolve(L *lua.LState, v lua.LValue) lua.LValue {
	if ud, ok := v.(*lua.LUserData); ok {
		if build, ok := ud.Value.(builder); ok {
			return build(L)
		}
	}
	return v
}
