package world

import (
	"context"
	"fmt"
	"strconv"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/peripheral"
)

// ComputerPrefix starts the network name of a computer a wired modem connects to its
// cable: computer_0, computer_1, … in the order they connect, as CC numbers each type's
// peripherals in a world.
const ComputerPrefix = "computer_"

// running is what the computer peripheral needs of a running computer
// (*computer.Computer).
type running interface {
	Label() *string
	Shutdown()
	Reboot()
}

// power is a place's computer as other computers switch it, while it is off: its label
// then, and a turnOn that waits for whoever runs it (AwaitTurnOn). Guarded by Place.mu.
type power struct {
	label   *string       // the label it had when it stopped (or will boot with); nil: none
	startOn bool          // turned on while nobody waited: start again at once
	wake    chan struct{} // closed by turnOn while a runner waits; nil otherwise
}

// AwaitTurnOn is for whoever runs the computer at the place, once it has shut down with
// label: it waits until another computer turns it on (or reboots it) through a wired
// modem, then says true: boot it again on the same disk. It says false when ctx ends
// first. Meanwhile the computer peripheral answers isOn false and this label.
func (p *Place) AwaitTurnOn(ctx context.Context, label *string) bool {
	p.mu.Lock()
	p.power.label = label
	if p.power.startOn {
		p.power.startOn = false
		p.mu.Unlock()
		return true
	}
	wake := make(chan struct{})
	p.power.wake = wake
	p.mu.Unlock()
	select {
	case <-wake:
		return true
	case <-ctx.Done():
		p.mu.Lock()
		if p.power.wake == wake {
			p.power.wake = nil
		}
		p.mu.Unlock()
		return false
	}
}

// computer is the computer running (or not) at the place.
func (p *Place) computer() running {
	if h, ok := p.bus.Running().(running); ok {
		return h
	}
	return nil
}

// turnOn starts the place's computer if it is off (a reboot of an off computer does the
// same, as in CC).
func (p *Place) turnOn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.power.wake != nil {
		close(p.power.wake)
		p.power.wake = nil
		return
	}
	p.power.startOn = true
}

// Touch puts two placed computers side by side, as a player places one against the other:
// each is the other's computer peripheral on the side that touches it (CC's
// ComputerPeripheral, as for a cable's computer_N), and what one outputs on its side is the
// other's redstone input, as a Wire's. Nothing else may be on either side.
func (w *World) Touch(pair Wire) error {
	a, b, err := w.ends(pair, "touching")
	if err != nil {
		return err
	}
	if a == b {
		return fmt.Errorf("touching: computer %d cannot touch itself", a.id)
	}
	if err := a.bus.Attach(pair.A.Side, newComputerPeripheral(b)); err != nil {
		return fmt.Errorf("touching: computer %d's %s: %w", a.id, pair.A.Side, err)
	}
	if err := b.bus.Attach(pair.B.Side, newComputerPeripheral(a)); err != nil {
		a.bus.Detach(pair.A.Side)
		return fmt.Errorf("touching: computer %d's %s: %w", b.id, pair.B.Side, err)
	}
	w.join(a, pair.A.Side, b, pair.B.Side)
	return nil
}

// computerPeripheral is CC's computer peripheral: the computer at a place as another
// computer on its cable reaches it (ComputerPeripheral).
type computerPeripheral struct {
	p       *Place
	methods map[string]peripheral.Method
}

func newComputerPeripheral(p *Place) *computerPeripheral {
	c := &computerPeripheral{p: p}
	c.methods = map[string]peripheral.Method{
		"turnOn": func(*lua.LState, *peripheral.Access) int {
			if p.computer() == nil {
				p.turnOn()
			}
			return 0
		},
		"shutdown": func(*lua.LState, *peripheral.Access) int {
			if on := p.computer(); on != nil {
				on.Shutdown()
			} else {
				p.mu.Lock()
				p.power.startOn = false
				p.mu.Unlock()
			}
			return 0
		},
		"reboot": func(*lua.LState, *peripheral.Access) int {
			if on := p.computer(); on != nil {
				on.Reboot()
			} else {
				p.turnOn()
			}
			return 0
		},
		"getID": func(L *lua.LState, _ *peripheral.Access) int {
			L.Push(lua.LNumber(p.id))
			return 1
		},
		"isOn": func(L *lua.LState, _ *peripheral.Access) int {
			L.Push(lua.LBool(p.computer() != nil))
			return 1
		},
		"getLabel": func(L *lua.LState, _ *peripheral.Access) int {
			var label *string
			if on := p.computer(); on != nil {
				label = on.Label()
			} else {
				p.mu.Lock()
				label = p.power.label
				p.mu.Unlock()
			}
			if label == nil {
				return 0
			}
			L.Push(lua.LString(*label))
			return 1
		},
	}
	return c
}

// Types implements peripheral.Peripheral.
func (c *computerPeripheral) Types() []string { return []string{"computer"} }

// Methods implements peripheral.Peripheral.
func (c *computerPeripheral) Methods() map[string]peripheral.Method { return c.methods }

// Attach implements peripheral.Peripheral.
func (c *computerPeripheral) Attach(*peripheral.Access) {}

// Detach implements peripheral.Peripheral.
func (c *computerPeripheral) Detach(*peripheral.Access) {}

// nextComputerName is the network name of the next computer connected to a cable.
func (w *World) nextComputerName() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.computerNames
	w.computerNames++
	return ComputerPrefix + strconv.Itoa(n)
}
