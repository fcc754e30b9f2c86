package world

import (
	"fmt"
	"sort"

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
