package conformance

import (
	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
	"fakecraft/peripheral"
	"fakecraft/peripheral/modem"
)

// harnessPeripherals are what CC's harness attaches before the specs run: a modem on top
// (CC's FakeModem; here a real wireless modem, alone on its own air) and, at the bottom, a
// peripheral hub fixture that reports one remote peripheral, remote_1. peripheral_spec's
// modem and remote tests run only when they are there.
func harnessPeripherals() *peripheral.Bus {
	bus := peripheral.NewBus(0)
	// Neither can fail: the bus is empty and both names are sides.
	_ = bus.Attach("top", modem.New(modem.Wireless, modem.NewAir(), modem.Vec{}))
	_ = bus.Attach("bottom", fakeHub{})
	return bus
}

// remoteName is the one peripheral fakeHub reports, and remoteTypes its types.
const remoteName = "remote_1"

var remoteTypes = []string{"remote", "other_type"}

// fakeHub is CC's FakePeripheralHub: only the peripheral_hub type and the *Remote queries,
// answering for remote_1, whose one method is "func" (and which cannot be called).
type fakeHub struct{}

func (fakeHub) Types() []string                       { return []string{"peripheral_hub"} }
func (fakeHub) Attach(*peripheral.Access)             {}
func (fakeHub) Detach(*peripheral.Access)             {}
func (fakeHub) Methods() map[string]peripheral.Method { return hubMethods }

var hubMethods = map[string]peripheral.Method{
	"getNamesRemote": func(L *lua.LState, _ *peripheral.Access) int {
		t := L.NewTable()
		t.Append(lua.LString(remoteName))
		L.Push(t)
		return 1
	},
	"isPresentRemote": func(L *lua.LState, _ *peripheral.Access) int {
		L.Push(lua.LBool(luakit.StrictString(L, 1) == remoteName))
		return 1
	},
	"getTypeRemote": func(L *lua.LState, _ *peripheral.Access) int {
		if luakit.StrictString(L, 1) != remoteName {
			return 0
		}
		for _, t := range remoteTypes {
			L.Push(lua.LString(t))
		}
		return len(remoteTypes)
	},
	"hasTypeRemote": func(L *lua.LState, _ *peripheral.Access) int {
		name, want := luakit.StrictString(L, 1), luakit.StrictString(L, 2)
		if name != remoteName {
			return 0
		}
		L.Push(lua.LBool(want == remoteTypes[0] || want == remoteTypes[1]))
		return 1
	},
	"getMethodsRemote": func(L *lua.LState, _ *peripheral.Access) int {
		if luakit.StrictString(L, 1) != remoteName {
			return 0
		}
		t := L.NewTable()
		t.Append(lua.LString("func"))
		L.Push(t)
		return 1
	},
}
