package world

import (
	"fmt"
	"strings"

	"fakecraft/ccstr"
	"fakecraft/peripheral"
	"fakecraft/pocket"
)

// notBeside is the refusal of a peripheral beside a pocket computer, which in CC: Tweaked
// stands beside nothing: its only peripheral is the upgrade on its back.
var notBeside = fmt.Sprintf("a pocket computer has no peripherals but its back upgrade (back=%s or %s)",
	strings.Join(pocket.Upgrades[:len(pocket.Upgrades)-1], ", "), pocket.Upgrades[len(pocket.Upgrades)-1])

// MakePocket makes the computer here a pocket computer (Place.Options then gives it its
// pocket) and returns its pocket. It is refused when something other than a pocket upgrade
// on the back is already attached (as a world file or --attach attached it), or a redstone
// wire joins it: nothing stands beside a pocket computer in CC: Tweaked. Making it one
// again returns the same pocket.
func (p *Place) MakePocket() (*pocket.Pocket, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pocket != nil {
		return p.pocket, nil
	}
	if p.wired {
		return nil, fmt.Errorf("computer %d: a pocket computer has no redstone sides: no wire can join it", p.id)
	}
	for _, name := range p.bus.Names() {
		if err := pocketPlace(name, p.specs[name]); err != nil {
			return nil, fmt.Errorf("computer %d, %s: %w", p.id, ccstr.ToText(name), err)
		}
	}
	pk := pocket.New(func(spec string) (peripheral.Peripheral, error) {
		return site{w: p.w, p: p}.make(spec)
	})
	if spec := p.specs[pocket.Back]; spec != "" {
		pk.Equipped(spec)
	}
	p.pocket = pk
	return pk, nil
}

// Pocket is the pocket of a pocket computer (MakePocket), nil for an ordinary one.
func (p *Place) Pocket() *pocket.Pocket {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pocket
}

// pocketPlace refuses a peripheral spec under name beside a pocket computer unless it is an
// upgrade on its back. spec is "" when it was attached from Go, not made from a spec.
func pocketPlace(name, spec string) error {
	if !peripheral.SameSide(name, pocket.Back) || !pocket.IsUpgrade(spec) {
		return fmt.Errorf("%s", notBeside)
	}
	return nil
}
