package modem

import (
	"fmt"
	"sort"
	"sync"

	"fakecraft/luakit"
	"fakecraft/peripheral"
)

// packet is one transmitted message; its payload is shared by every receiver (each gets
// its own Lua copy).
type packet struct {
	channel, reply int
	payload        peripheral.Value
}

// Network is what modems talk over: the air (NewAir) or a cable (NewCable). It is safe for
// concurrent use.
type Network struct {
	wireless bool

	mu      sync.Mutex
	modems  map[*Modem]bool        // modems used by at least one computer: the receivers
	remote  map[string]*remoteSlot // a cable's peripherals, by network name
	joining int                    // how many peripherals have joined the cable, numbering them
}

type remoteSlot struct {
	name   string
	p      peripheral.Peripheral
	joined int // the order it joined the cable in
}

// NewAir returns a wireless network: wireless modems reach each other within range, ender
// modems everywhere.
func NewAir() *Network {
	return &Network{wireless: true, modems: map[*Modem]bool{}}
}

// NewCable returns a wired network: every wired modem on it reaches every other, and the
// peripherals attached to the cable.
func NewCable() *Network {
	return &Network{modems: map[*Modem]bool{}, remote: map[string]*remoteSlot{}}
}

func (n *Network) join(m *Modem) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.modems[m] = true
}

func (n *Network) leave(m *Modem) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.modems, m)
}

// transmit hands p to every other modem in reach of the sender, as CC's WirelessNetwork
// (and a cable, where every modem is in reach) does: the range is the larger of the two
// modems', and an ender or wired modem at either end has none. The distance each receiver
// is told is the straight line through the air; over a cable, the cable's length, which CC
// sums block by block (WiredNetworkImpl.transmitPacket): fakecraft lays no cable, so it is
// the shortest one, along the axes.
func (n *Network) transmit(from *Modem, p packet) {
	n.mu.Lock()
	receivers := make([]*Modem, 0, len(n.modems))
	for m := range n.modems {
		if m != from {
			receivers = append(receivers, m)
		}
	}
	n.mu.Unlock()
	sendRange, sendAnywhere := from.rangeBlocks()
	for _, m := range receivers {
		recvRange, recvAnywhere := m.rangeBlocks()
		distance := from.pos.Distance(m.pos)
		if !n.wireless {
			distance = from.pos.AlongAxes(m.pos)
		}
		if sendAnywhere || recvAnywhere || distance <= max(sendRange, recvRange) {
			m.receive(p, distance)
		}
	}
}

// AttachRemote puts a peripheral on the cable under a network name ("monitor_0"): every
// computer with a wired modem on the cable can use it, and gets a peripheral event.
func (n *Network) AttachRemote(name string, p peripheral.Peripheral) error {
	if n.wireless {
		return fmt.Errorf("attach %s: only a cable carries peripherals", name)
	}
	if name == "" || peripheral.IsSide(name) {
		return fmt.Errorf("attach %q: a cable's peripheral needs a name that is not a side", name)
	}
	n.mu.Lock()
	if n.remote[name] != nil {
		n.mu.Unlock()
		return fmt.Errorf("attach %s: the cable already has a peripheral named so", name)
	}
	n.joining++
	n.remote[name] = &remoteSlot{name: name, p: p, joined: n.joining}
	modems := n.receivers()
	n.mu.Unlock()
	for _, m := range modems {
		for _, a := range m.users() {
			m.attachRemote(a, name, p)
		}
	}
	return nil
}

// DetachRemote takes a peripheral off the cable; every computer using it gets a
// peripheral_detach event. It reports whether there was one of that name.
func (n *Network) DetachRemote(name string) bool {
	n.mu.Lock()
	if n.remote == nil || n.remote[name] == nil {
		n.mu.Unlock()
		return false
	}
	delete(n.remote, name)
	modems := n.receivers()
	n.mu.Unlock()
	for _, m := range modems {
		for _, a := range m.users() {
			m.detachRemote(a, name)
		}
	}
	return true
}

// Remote returns the cable's peripheral of that name, or nil.
func (n *Network) Remote(name string) peripheral.Peripheral {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s := n.remote[name]; s != nil {
		return s.p
	}
	return nil
}

// RemoteNames lists the network names of the cable's peripherals, sorted.
func (n *Network) RemoteNames() []string {
	slots := n.remotePeripherals()
	names := make([]string, len(slots))
	for i, s := range slots {
		names[i] = s.name
	}
	sort.Strings(names)
	return names
}

// remotePeripherals lists the cable's peripherals in the order a wired modem that starts
// being used meets them: CC's modem keeps them in a HashMap (WiredModemElement's
// remotePeripherals), filled as they join the cable, and walks it.
func (n *Network) remotePeripherals() []*remoteSlot {
	n.mu.Lock()
	defer n.mu.Unlock()
	joined := make([]*remoteSlot, 0, len(n.remote))
	for _, s := range n.remote {
		joined = append(joined, s)
	}
	sort.Slice(joined, func(i, j int) bool { return joined[i].joined < joined[j].joined })
	names := make([]string, len(joined))
	for i, s := range joined {
		names[i] = s.name
	}
	out := make([]*remoteSlot, 0, len(joined))
	for _, name := range luakit.JavaMapKeys(luakit.JavaDefaultCapacity, names...) {
		out = append(out, n.remote[name])
	}
	return out
}

// receivers lists the modems in use. Caller holds mu.
func (n *Network) receivers() []*Modem {
	out := make([]*Modem, 0, len(n.modems))
	for m := range n.modems {
		out = append(out, m)
	}
	return out
}
