// Package monitor is CC: Tweaked's monitor peripheral: a screen of W x H blocks whose
// size in characters follows from its text scale, with the term API's methods plus
// setTextScale/getTextScale. An advanced monitor is in colour and can be touched
// (monitor_touch); changing the scale resizes it, clearing it (monitor_resize on the next
// tick).
package monitor

import (
	"fmt"
	"math"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/computer"
	"fakecraft/luakit"
	"fakecraft/peripheral"
)

// Limits of a monitor, CC's defaults (monitor_width, monitor_height in blocks) and the
// text scale's range in half steps (0.5 to 5).
const (
	MaxWidth     = 8
	MaxHeight    = 6
	minHalfScale = 1
	maxHalfScale = 10
	defaultScale = 2 // 1.0
)

// How CC lays characters on a monitor's face, in blocks: a border and margin on each side
// and, at text scale 1, characters 6x9 pixels of 1/64 block.
const (
	border     = 2.0 / 16
	margin     = 0.5 / 16
	pixel      = 1.0 / 64
	charWidth  = 6
	charHeight = 9
)

// Monitor is one monitor (of any number of blocks). It is safe for concurrent use: the
// computers using it may each draw from their own goroutine.
type Monitor struct {
	advanced         bool
	wBlocks, hBlocks int
	term             *computer.Terminal
	methods          map[string]peripheral.Method

	mu        sync.Mutex
	halfScale int
	computers []*peripheral.Access
	resized   bool // the size changed since the last tick's monitor_resize
}

// New returns a monitor w x h blocks big (1x1 up to 8x6); advanced ones are in colour and
// take touches.
func New(w, h int, advanced bool) (*Monitor, error) {
	if w < 1 || h < 1 || w > MaxWidth || h > MaxHeight {
		return nil, fmt.Errorf("a monitor is 1x1 to %dx%d blocks, not %dx%d", MaxWidth, MaxHeight, w, h)
	}
	m := &Monitor{advanced: advanced, wBlocks: w, hBlocks: h, halfScale: defaultScale}
	cw, ch := m.charSize(defaultScale)
	m.term = computer.NewSizedTerminal(cw, ch, advanced)
	m.methods = m.methodTable()
	return m, nil
}

// charSize is the monitor's size in characters at a text scale (in half steps), as CC
// computes it: what fits inside the border and margin, rounded, at least 1x1.
func (m *Monitor) charSize(halfScale int) (w, h int) {
	scale := float64(halfScale) / 2
	inner := 2 * (border + margin)
	w = int(math.Max(math.Round((float64(m.wBlocks)-inner)/(scale*charWidth*pixel)), 1))
	h = int(math.Max(math.Round((float64(m.hBlocks)-inner)/(scale*charHeight*pixel)), 1))
	return w, h
}

// Types implements peripheral.Peripheral.
func (m *Monitor) Types() []string { return []string{"monitor"} }

// Methods implements peripheral.Peripheral.
func (m *Monitor) Methods() map[string]peripheral.Method { return m.methods }

// Attach implements peripheral.Peripheral.
func (m *Monitor) Attach(a *peripheral.Access) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.computers = append(m.computers, a)
}

// Detach implements peripheral.Peripheral.
func (m *Monitor) Detach(a *peripheral.Access) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, c := range m.computers {
		if c == a {
			m.computers = append(m.computers[:i], m.computers[i+1:]...)
			return
		}
	}
}

func (m *Monitor) each(fn func(a *peripheral.Access)) {
	m.mu.Lock()
	computers := append([]*peripheral.Access(nil), m.computers...)
	m.mu.Unlock()
	for _, a := range computers {
		fn(a)
	}
}

// Terminal is the monitor's screen (Screen, Snapshot, Row).
func (m *Monitor) Terminal() *computer.Terminal { return m.term }

// Screen is the monitor's text, rows joined by newlines, trailing spaces trimmed.
func (m *Monitor) Screen() string { return m.term.Screen() }

// Advanced reports whether the monitor is an advanced one (colour, touch).
func (m *Monitor) Advanced() bool { return m.advanced }

// Touch touches the monitor at character x, y (1-based, clamped to the screen), as a
// player right-clicking it does: every computer using an advanced monitor gets
// monitor_touch(name, x, y); a basic monitor ignores it, as CC's does.
func (m *Monitor) Touch(x, y int) {
	if !m.advanced {
		return
	}
	w, h := m.term.Size()
	x, y = min(max(x, 1), w), min(max(y, 1), h)
	m.each(func(a *peripheral.Access) { a.QueueEvent("monitor_touch", a.Name(), x, y) })
}

// setScale changes the text scale at once; a new size clears the screen and, on the next
// tick of by's computer, queues monitor_resize on every computer using the monitor, once
// however often the size changed meanwhile, as CC's monitor does on its block's next tick
// (MonitorBlockEntity.blockTick, ServerMonitor.pollResized).
func (m *Monitor) setScale(halfScale int, by *peripheral.Access) {
	m.mu.Lock()
	if m.halfScale == halfScale {
		m.mu.Unlock()
		return
	}
	m.halfScale = halfScale
	m.mu.Unlock()
	w, h := m.charSize(halfScale)
	if !m.term.Resize(w, h) {
		return
	}
	m.mu.Lock()
	m.resized = true
	m.mu.Unlock()
	by.After(0, m.announceResize) // each change asks: a computer turned off first never ticks
}

// announceResize queues monitor_resize on every computer using the monitor, when its size
// changed since the last time.
func (m *Monitor) announceResize() {
	m.mu.Lock()
	resized := m.resized
	m.resized = false
	m.mu.Unlock()
	if resized {
		m.each(func(a *peripheral.Access) { a.QueueEvent("monitor_resize", a.Name()) })
	}
}

// methodTable is the term API on the monitor's screen plus the text scale (CC's
// MonitorPeripheral).
func (m *Monitor) methodTable() map[string]peripheral.Method {
	ms := map[string]peripheral.Method{}
	for name, fn := range m.term.Functions() {
		ms[name] = func(L *lua.LState, _ *peripheral.Access) int { return fn(L) }
	}
	// The computer waits for a line when read() turns the blink on, on a monitor as on
	// its own screen.
	setBlink := ms["setCursorBlink"]
	ms["setCursorBlink"] = func(L *lua.LState, a *peripheral.Access) int {
		was := m.term.CursorBlink()
		n := setBlink(L, a)
		a.CursorBlink(was, m.term.CursorBlink())
		return n
	}
	for british, american := range computer.TermAliases {
		ms[american] = ms[british]
	}
	ms["setTextScale"] = func(L *lua.LState, a *peripheral.Access) int {
		half := int(luakit.CheckFinite(L, 1) * 2)
		if half < minHalfScale || half > maxHalfScale {
			luakit.RaiseMessage(L, "Expected number in range 0.5-5")
		}
		m.setScale(half, a)
		return 0
	}
	ms["getTextScale"] = func(L *lua.LState, _ *peripheral.Access) int {
		m.mu.Lock()
		defer m.mu.Unlock()
		L.Push(lua.LNumber(float64(m.halfScale) / 2))
		return 1
	}
	return ms
}
