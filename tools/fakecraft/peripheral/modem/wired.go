package modem

import (
	"fmt"
	"sort"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
	"fakecraft/peripheral"
)

// remoteUse is one computer's use of one of the cable's peripherals.
type remoteUse struct {
	p      peripheral.Peripheral
	access *peripheral.Access
	put    int // the order the computer got it in (see remoteNames)
}

// users lists the computers using the modem.
func (m *Modem) users() []*peripheral.Access {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*peripheral.Access(nil), m.computers...)
}

// attachRemote gives computer a the cable's peripheral p, as CC's wired modem does: p is
// attached under its network name and the computer gets a peripheral event. Nothing
// happens when a already has it or no longer uses the modem.
func (m *Modem) attachRemote(a *peripheral.Access, name string, p peripheral.Peripheral) {
	m.mu.Lock()
	using := false
	for _, c := range m.computers {
		using = using || c == a
	}
	if !using || m.remotes[a][name] != nil || name == m.local {
		m.mu.Unlock()
		return
	}
	if m.remotes[a] == nil {
		m.remotes[a] = map[string]*remoteUse{}
	}
	m.puts++
	sub := &remoteUse{p: p, access: a.Sub(name), put: m.puts}
	m.remotes[a][name] = sub
	m.peak[a] = max(m.peak[a], len(m.remotes[a]))
	m.mu.Unlock()
	p.Attach(sub.access)
	a.QueueEvent("peripheral", name)
}

// detachRemote takes the cable's peripheral of that name from computer a.
func (m *Modem) detachRemote(a *peripheral.Access, name string) {
	m.mu.Lock()
	sub := m.remotes[a][name]
	if sub == nil {
		m.mu.Unlock()
		return
	}
	delete(m.remotes[a], name)
	if len(m.remotes[a]) == 0 {
		delete(m.remotes, a)
	}
	m.mu.Unlock()
	sub.p.Detach(sub.access)
	sub.access.Close()
	a.QueueEvent("peripheral_detach", name)
}

// remoteNames lists the network names of the cable's peripherals computer a has, in the
// order CC's modem lists them: it keeps each computer's in a ConcurrentHashMap (its
// peripheralWrappers), made when the computer starts using the modem, and getNamesRemote
// hands Lua its keySet, whose order follows from the names' Java hashes, the most the map
// has held, and, in a bucket, the order they were put.
func (m *Modem) remoteNames(a *peripheral.Access) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	uses := m.remotes[a]
	names := make([]string, 0, len(uses))
	for name := range uses {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return uses[names[i]].put < uses[names[j]].put })
	return luakit.ConcurrentMapKeys(m.peak[a], names...)
}

// remote finds the cable's peripheral that computer a reaches under name.
func (m *Modem) remote(a *peripheral.Access, name string) (peripheral.Peripheral, *peripheral.Access) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sub := m.remotes[a][name]; sub != nil {
		return sub.p, sub.access
	}
	return nil, nil
}

// addRemoteMethods adds a wired modem's peripheral_hub functions (CC's
// WiredModemPeripheral): what the ROM's peripheral API uses to reach the cable's
// peripherals by name.
func (m *Modem) addRemoteMethods(ms map[string]peripheral.Method) {
	ms["getNamesRemote"] = func(L *lua.LState, a *peripheral.Access) int {
		t := L.NewTable()
		for _, name := range m.remoteNames(a) {
			t.Append(lua.LString(name))
		}
		L.Push(t)
		return 1
	}
	ms["isPresentRemote"] = func(L *lua.LState, a *peripheral.Access) int {
		p, _ := m.remote(a, luakit.StrictString(L, 1))
		L.Push(lua.LBool(p != nil))
		return 1
	}
	ms["getTypeRemote"] = func(L *lua.LState, a *peripheral.Access) int {
		p, _ := m.remote(a, luakit.StrictString(L, 1))
		if p == nil {
			return 0
		}
		types := p.Types()
		for _, t := range types {
			L.Push(lua.LString(t))
		}
		return len(types)
	}
	ms["hasTypeRemote"] = func(L *lua.LState, a *peripheral.Access) int {
		p, _ := m.remote(a, luakit.StrictString(L, 1))
		want := luakit.StrictString(L, 2)
		if p == nil {
			return 0
		}
		has := false
		for _, t := range p.Types() {
			has = has || t == want
		}
		L.Push(lua.LBool(has))
		return 1
	}
	ms["getMethodsRemote"] = func(L *lua.LState, a *peripheral.Access) int {
		p, _ := m.remote(a, luakit.StrictString(L, 1))
		if p == nil {
			return 0
		}
		L.Push(peripheral.MethodList(L, p))
		return 1
	}
	ms["callRemote"] = func(L *lua.LState, a *peripheral.Access) int {
		name := luakit.StrictString(L, 1)
		method := luakit.StrictString(L, 2)
		p, sub := m.remote(a, name)
		if p == nil {
			luakit.RaiseMessage(L, "No peripheral: "+name)
		}
		L.Remove(1)
		L.Remove(1)
		return peripheral.CallMethod(L, p, sub, method)
	}
	ms["getNameLocal"] = func(L *lua.LState, _ *peripheral.Access) int {
		m.mu.Lock()
		local := m.local
		m.mu.Unlock()
		if local == "" {
			return 0 // the modem is off: its computer is not on the cable
		}
		L.Push(lua.LString(local))
		return 1
	}
}

// ConnectLocal puts p, the block the wired modem stands on (its computer, as a computer
// peripheral), on the modem's cable under name ("computer_0"), as a player's right-click
// that turns a wired modem on does: the other computers on the cable reach it by that
// name, and getNameLocal answers it; the modem's own computer does not see itself there.
func (m *Modem) ConnectLocal(name string, p peripheral.Peripheral) error {
	if m.kind != Wired {
		return fmt.Errorf("connect %s: only a wired modem connects its computer to a cable", name)
	}
	m.mu.Lock()
	if m.local != "" {
		m.mu.Unlock()
		return fmt.Errorf("connect %s: the modem is on already, as %s", name, m.local)
	}
	m.local = name
	m.mu.Unlock()
	if err := m.net.AttachRemote(name, p); err != nil {
		m.mu.Lock()
		m.local = ""
		m.mu.Unlock()
		return err
	}
	return nil
}

// DisconnectLocal takes the modem's block off the cable again (the modem is removed or
// turned off); every other computer using it gets a peripheral_detach event.
func (m *Modem) DisconnectLocal() {
	m.mu.Lock()
	local := m.local
	m.local = ""
	m.mu.Unlock()
	if local != "" {
		m.net.DetachRemote(local)
	}
}
