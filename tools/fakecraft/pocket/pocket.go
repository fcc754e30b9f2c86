// Package pocket is what makes a fakecraft computer a pocket computer besides its 26x20
// screen: CC: Tweaked's pocket API (equipBack, unequipBack) over the upgrade on its back
// and the upgrades its player carries.
//
// In CC: Tweaked nothing stands beside a pocket computer: its one peripheral is the
// upgrade on its back (a wireless modem, normal or advanced, or a speaker), on the side
// "back". pocket.equipBack takes an upgrade from the player's inventory (one that is not
// the upgrade already on) and puts it there, the old one going into the inventory;
// pocket.unequipBack puts the one on the back into the inventory. The inventory starts
// empty (Carry adds to it from Go), so a pocket computer that was given an upgrade can take
// it off and put it on again, as a player's can.
package pocket

import (
	"slices"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/host"
	"fakecraft/peripheral"
)

// Back is the side a pocket computer's upgrade is attached on.
const Back = "back"

// Upgrades are the peripheral types (world.Kinds names) that go on a pocket computer's
// back, as CC: Tweaked's pocket upgrades: a wireless modem (its normal one), an ender
// modem (its advanced wireless modem) and a speaker.
var Upgrades = []string{"modem", "ender_modem", "speaker"}

// IsUpgrade reports whether spec, TYPE[:ARG...], is a pocket upgrade.
func IsUpgrade(spec string) bool {
	kind, _, _ := strings.Cut(spec, ":")
	return slices.Contains(Upgrades, kind)
}

// Maker makes the peripheral of an upgrade from its spec (TYPE[:ARG...]), standing where
// the pocket computer is.
type Maker func(spec string) (peripheral.Peripheral, error)

// Pocket is one pocket computer's back and its player's upgrades. It outlives the
// computer's reboots, as the player and the item do. Safe for concurrent use.
type Pocket struct {
	make Maker

	mu      sync.Mutex
	back    string   // the spec of the upgrade on the back, as Equipped noted it
	carried []string // upgrades in the player's inventory, in the order they went in
}

// New returns a pocket computer whose upgrades are made by make (nil: none can be made,
// so equipBack never finds one).
func New(make Maker) *Pocket {
	return &Pocket{make: make}
}

// Equipped notes that the upgrade spec was attached on the back from outside (a world
// file, --attach), so that unequipBack puts that upgrade, not just its type, in the
// inventory.
func (p *Pocket) Equipped(spec string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.back = spec
}

// Carry puts an upgrade (its spec) in the player's inventory.
func (p *Pocket) Carry(spec string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.carried = append(p.carried, spec)
}

// Carried lists the upgrades in the player's inventory.
func (p *Pocket) Carried() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.carried)
}

// onBack is the spec of what is on bus's back: as noted, or (attached some other way) its
// type; "" when nothing is. Caller holds mu.
func (p *Pocket) onBack(bus *peripheral.Bus) string {
	per := bus.Get(Back)
	if per == nil {
		return ""
	}
	if p.back != "" && slices.Contains(per.Types(), kindOf(p.back)) {
		return p.back
	}
	return per.Types()[0]
}

// kindOf is the type of an upgrade spec.
func kindOf(spec string) string {
	kind, _, _ := strings.Cut(spec, ":")
	return kind
}

// Install sets the global pocket, CC's pocket API, over the computer's sides. Both
// functions are main-thread functions in CC (they touch the player's inventory): each
// answers on the next tick, through m.
func (p *Pocket) Install(L *lua.LState, bus *peripheral.Bus, m host.MainThread) {
	api := L.NewTable()
	api.RawSetString("equipBack", L.NewFunction(func(L *lua.LState) int {
		return m.MainThread(L, func() []lua.LValue { return answer(p.equipBack(bus)) })
	}))
	api.RawSetString("unequipBack", L.NewFunction(func(L *lua.LState) int {
		return m.MainThread(L, func() []lua.LValue { return answer(p.unequipBack(bus)) })
	}))
	L.SetGlobal("pocket", api)
}

// answer is CC's answer of an upgrade function: true, or false and why.
func answer(ok bool, why string) []lua.LValue {
	if ok {
		return []lua.LValue{lua.LTrue}
	}
	return []lua.LValue{lua.LFalse, lua.LString(why)}
}

// equipBack is pocket.equipBack: the first upgrade in the inventory that is not the one on
// the back (by type, as CC compares upgrades) goes on, the old one into the inventory.
func (p *Pocket) equipBack(bus *peripheral.Bus) (bool, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.onBack(bus)
	at := slices.IndexFunc(p.carried, func(spec string) bool { return kindOf(spec) != kindOf(old) })
	if at < 0 || p.make == nil {
		return false, "Cannot find a valid upgrade"
	}
	spec := p.carried[at]
	per, err := p.make(spec)
	if err != nil {
		return false, "Cannot find a valid upgrade"
	}
	p.carried = slices.Delete(p.carried, at, at+1)
	if old != "" {
		bus.Detach(Back)
		p.carried = append(p.carried, old)
	}
	if err := bus.Attach(Back, per); err != nil {
		// Something took the back meanwhile (Go attached it): the item stays carried.
		p.carried = append(p.carried, spec)
		return false, "Cannot find a valid upgrade"
	}
	p.back = spec
	return true, ""
}

// unequipBack is pocket.unequipBack: the upgrade on the back goes into the inventory.
func (p *Pocket) unequipBack(bus *peripheral.Bus) (bool, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.onBack(bus)
	if old == "" || !bus.Detach(Back) {
		return false, "Nothing to unequip"
	}
	p.back = ""
	p.carried = append(p.carried, old)
	return true, ""
}
