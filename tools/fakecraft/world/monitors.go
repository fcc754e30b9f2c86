package world

import (
	"fmt"
	"sort"

	"fakecraft/ccstr"
	"fakecraft/peripheral/modem"
	"fakecraft/peripheral/monitor"
)

// Shown is one monitor of the world and where it stands, for whoever looks at it from
// outside (fakecraft run --show-screens), as a player walks up to a monitor in the game.
type Shown struct {
	Where   string // "computer 1's top", "cable office's monitor_0"
	Monitor *monitor.Monitor
}

// Monitors lists the world's monitors: each computer's, by id and then as its peripheral
// names go (sides in CC's order), then each cable's, by cable and network name.
func (w *World) Monitors() []Shown {
	var out []Shown
	for _, id := range w.IDs() {
		bus := w.At(id).Peripherals()
		for _, name := range bus.Names() {
			if m, ok := bus.Get(name).(*monitor.Monitor); ok {
				out = append(out, Shown{Where: fmt.Sprintf("computer %d's %s", id, name), Monitor: m})
			}
		}
	}
	w.mu.Lock()
	cables := make([]string, 0, len(w.cables))
	for name := range w.cables {
		cables = append(cables, name)
	}
	w.mu.Unlock()
	sort.Strings(cables)
	for _, cable := range cables {
		network := w.Cable(cable)
		for _, name := range network.RemoteNames() {
			if m, ok := network.Remote(name).(*monitor.Monitor); ok {
				out = append(out, Shown{Where: fmt.Sprintf("cable %s's %s", cable, name), Monitor: m})
			}
		}
	}
	return out
}

// Monitor is the monitor the computer standing here knows by name (CC's bytes), as
// peripheral.wrap(name) finds it: on a side (or attached under that name), or on a cable one
// of its wired modems is on, by its network name. The error says what is there instead,
// the name as text.
func (p *Place) Monitor(name string) (*monitor.Monitor, error) {
	found := p.bus.Get(name)
	for _, side := range p.bus.Names() {
		if found != nil {
			break
		}
		if m, ok := p.bus.Get(side).(*modem.Modem); ok {
			found = m.Remote(name)
		}
	}
	if found == nil {
		return nil, fmt.Errorf("this computer has no peripheral named %s", ccstr.ToText(name))
	}
	m, ok := found.(*monitor.Monitor)
	if !ok {
		return nil, fmt.Errorf("%s is a %s, not a monitor", ccstr.ToText(name), found.Types()[0])
	}
	return m, nil
}
