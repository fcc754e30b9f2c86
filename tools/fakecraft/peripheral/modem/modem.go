// Package modem is CC: Tweaked's modem peripheral and the networks modems talk over: the
// air of a world (wireless and ender modems) and cables (wired modems, which also reach
// the peripherals attached to their cable).
//
// A message is CC's: transmit(channel, replyChannel, payload) reaches every other modem on
// the network that has the channel open and is in range, and each computer using such a
// modem gets modem_message(name, channel, replyChannel, payload, distance) with its own
// copy of the payload. A modem never hears itself.
package modem

import (
	"math"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
	"fakecraft/peripheral"
)

// MaxOpenChannels is how many channels one modem may have open (CC's ModemState).
const MaxOpenChannels = 128

// MaxChannel is the highest channel number; channels run from 0.
const MaxChannel = 65535

// Wireless ranges in blocks, CC's defaults (modem_range, modem_high_altitude_range): a
// normal wireless modem reaches rangeLow blocks up to y = altitudeFloor, then more the
// higher it is, rangeHigh at the top of the world (y = worldTop).
const (
	rangeLow      = 64
	rangeHigh     = 384
	altitudeFloor = 96
	worldTop      = 319 // Minecraft 1.20's highest block
)

// Vec is a position in the world, in blocks.
type Vec struct{ X, Y, Z float64 }

// Distance is the straight-line distance between two positions.
func (v Vec) Distance(o Vec) float64 {
	dx, dy, dz := v.X-o.X, v.Y-o.Y, v.Z-o.Z
	return math.Sqrt(dx*dx + dy*dy + dz*dz)
}

// AlongAxes is the distance between two positions along the axes: the shortest cable
// between two blocks, one block at a time.
func (v Vec) AlongAxes(o Vec) float64 {
	return math.Abs(v.X-o.X) + math.Abs(v.Y-o.Y) + math.Abs(v.Z-o.Z)
}

// Kind is what sort of modem a Modem is.
type Kind int

// The modems CC has.
const (
	// Wireless is the normal wireless modem: its range grows with its height.
	Wireless Kind = iota
	// Ender is the ender (advanced wireless) modem: no range limit.
	Ender
	// Wired is the wired modem: it talks over its cable and reaches the peripherals on it.
	Wired
)

// Modem is one modem block next to a computer (at the computer's position, as CC measures
// distances from the block the modem is placed on).
type Modem struct {
	net  *Network
	kind Kind
	pos  Vec

	methodTable map[string]peripheral.Method

	mu        sync.Mutex
	channels  map[int]bool
	computers []*peripheral.Access
	remotes   map[*peripheral.Access]map[string]*remoteUse // wired: each computer's use of the cable's peripherals
	peak      map[*peripheral.Access]int                   // wired: the most of them each computer has had at once
	puts      int                                          // wired: how many uses were made, numbering them
	local     string                                       // wired: the network name of the block it stands on, "" while not connected (ConnectLocal)
}

// New returns a modem of the given kind at pos, on net (the air for Wireless and Ender, a
// cable for Wired).
func New(kind Kind, net *Network, pos Vec) *Modem {
	m := &Modem{net: net, kind: kind, pos: pos, channels: map[int]bool{},
		remotes: map[*peripheral.Access]map[string]*remoteUse{}, peak: map[*peripheral.Access]int{}}
	m.methodTable = m.methods()
	return m
}

// Types implements peripheral.Peripheral.
func (m *Modem) Types() []string {
	if m.kind == Wired {
		return []string{"modem", "peripheral_hub"}
	}
	return []string{"modem"}
}

// Remote returns the peripheral of that network name on a wired modem's cable, as the
// computer using the modem reaches it; nil when there is none, or the modem is wireless.
func (m *Modem) Remote(name string) peripheral.Peripheral {
	if m.kind != Wired {
		return nil
	}
	return m.net.Remote(name)
}

// Methods implements peripheral.Peripheral.
func (m *Modem) Methods() map[string]peripheral.Method { return m.methodTable }

// Attach implements peripheral.Peripheral: the first computer puts the modem on its
// network; a wired modem gives the computer the cable's peripherals.
func (m *Modem) Attach(a *peripheral.Access) {
	m.mu.Lock()
	m.computers = append(m.computers, a)
	first := len(m.computers) == 1
	m.mu.Unlock()
	if first {
		m.net.join(m)
	}
	if m.kind == Wired {
		for _, r := range m.net.remotePeripherals() {
			m.attachRemote(a, r.name, r.p)
		}
	}
}

// Detach implements peripheral.Peripheral.
func (m *Modem) Detach(a *peripheral.Access) {
	if m.kind == Wired {
		for _, n := range m.remoteNames(a) { // CC walks the computer's map of them
			m.detachRemote(a, n)
		}
	}
	m.mu.Lock()
	delete(m.peak, a)
	for i, c := range m.computers {
		if c == a {
			m.computers = append(m.computers[:i], m.computers[i+1:]...)
			break
		}
	}
	empty := len(m.computers) == 0
	m.mu.Unlock()
	if empty {
		m.net.leave(m)
	}
}

// IsOpen reports whether the modem listens on channel.
func (m *Modem) IsOpen(channel int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.channels[channel]
}

// rangeBlocks is how far the modem reaches; interdimensional says it has no limit.
func (m *Modem) rangeBlocks() (blocks float64, interdimensional bool) {
	switch m.kind {
	case Ender, Wired:
		return math.MaxInt32, true
	}
	if m.pos.Y > altitudeFloor {
		return rangeLow + (m.pos.Y-altitudeFloor)*(rangeHigh-rangeLow)/(worldTop-altitudeFloor), false
	}
	return rangeLow, false
}

// receive hands a packet to every computer using the modem, if it listens on the channel.
func (m *Modem) receive(p packet, distance float64) {
	m.mu.Lock()
	if !m.channels[p.channel] {
		m.mu.Unlock()
		return
	}
	computers := append([]*peripheral.Access(nil), m.computers...)
	m.mu.Unlock()
	for _, a := range computers {
		a.QueueEvent("modem_message", a.Name(), p.channel, p.reply, p.payload, distance)
	}
}

// checkChannel is argument n as a channel, a Java int as CC reads it (65535.5 is 65535,
// 2^32 + 1 is 1), in CC's words when out of range.
func checkChannel(L *lua.LState, n int) int {
	return channelInRange(L, luakit.CheckInt(L, n))
}

// channelInRange is c, or CC's error when it is no channel (ModemPeripheral.parseChannel).
func channelInRange(L *lua.LState, c int) int {
	if c < 0 || c > MaxChannel {
		luakit.RaiseMessage(L, "Expected number in range 0-65535")
	}
	return c
}

// methods builds the modem's functions (CC's ModemPeripheral), once per modem.
func (m *Modem) methods() map[string]peripheral.Method {
	ms := map[string]peripheral.Method{
		"open": func(L *lua.LState, _ *peripheral.Access) int {
			c := checkChannel(L, 1)
			m.mu.Lock()
			defer m.mu.Unlock()
			if !m.channels[c] {
				if len(m.channels) >= MaxOpenChannels {
					luakit.RaiseMessage(L, "Too many open channels")
				}
				m.channels[c] = true
			}
			return 0
		},
		"isOpen": func(L *lua.LState, _ *peripheral.Access) int {
			L.Push(lua.LBool(m.IsOpen(checkChannel(L, 1))))
			return 1
		},
		"close": func(L *lua.LState, _ *peripheral.Access) int {
			c := checkChannel(L, 1)
			m.mu.Lock()
			delete(m.channels, c)
			m.mu.Unlock()
			return 0
		},
		"closeAll": func(L *lua.LState, _ *peripheral.Access) int {
			m.mu.Lock()
			clear(m.channels)
			m.mu.Unlock()
			return 0
		},
		"transmit": func(L *lua.LState, _ *peripheral.Access) int {
			// CC reads both ints before its body checks either's range: a bad reply
			// channel's type is reported before an out-of-range channel.
			channel, reply := luakit.CheckInt(L, 1), luakit.CheckInt(L, 2)
			channelInRange(L, channel)
			channelInRange(L, reply)
			m.net.transmit(m, packet{channel: channel, reply: reply, payload: peripheral.Export(L.Get(3))})
			return 0
		},
		"isWireless": func(L *lua.LState, _ *peripheral.Access) int {
			L.Push(lua.LBool(m.net.wireless))
			return 1
		},
	}
	if m.kind == Wired {
		m.addRemoteMethods(ms)
	}
	return ms
}
