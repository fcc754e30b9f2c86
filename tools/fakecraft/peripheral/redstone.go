package peripheral

import (
	"fmt"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/luakit"
)

// MaxRedstone is the strongest redstone signal.
const MaxRedstone = 15

// redstone is the signal on each side: what the computer outputs (reset when it turns
// off) and what the world feeds in (kept across boots). Guarded by the Bus's mu.
type redstone struct {
	output, input               [6]int
	bundledOutput, bundledInput [6]int
	listeners                   []OutputListener
}

// OutputListener hears a change of a computer's redstone output on a side: the analogue
// strength and the bundled colours. It runs on the goroutine that changed it, outside the
// Bus's lock.
type OutputListener func(side string, strength, bundled int)

// resetOutputs turns every output off and returns the sides that changed.
func (r *redstone) resetOutputs() []int {
	var changed []int
	for i := range r.output {
		if r.output[i] != 0 || r.bundledOutput[i] != 0 {
			changed = append(changed, i)
		}
		r.output[i], r.bundledOutput[i] = 0, 0
	}
	return changed
}

// OnOutput registers fn to hear every change of the computer's redstone outputs (how a
// world wires one computer's side to another's).
func (b *Bus) OnOutput(fn OutputListener) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.red.listeners = append(b.red.listeners, fn)
}

func (b *Bus) notifyOutput(listeners []OutputListener, side int) {
	b.mu.Lock()
	strength, bundled := b.red.output[side], b.red.bundledOutput[side]
	b.mu.Unlock()
	for _, fn := range listeners {
		fn(Sides[side], strength, bundled)
	}
}

// Output returns the computer's redstone output on a side: the strength (0-15) and the
// bundled colours. ok is false for a name that is not a side.
func (b *Bus) Output(side string) (strength, bundled int, ok bool) {
	i := sideIndex(side)
	if i < 0 {
		return 0, 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.red.output[i], b.red.bundledOutput[i], true
}

// SetInput sets the redstone strength (clamped to 0-15) and the bundled colours fed into a
// side, as the blocks around the computer would; a change queues a redstone event on a
// running computer. Safe from any goroutine.
func (b *Bus) SetInput(side string, strength, bundled int) error {
	i := sideIndex(side)
	if i < 0 {
		return fmt.Errorf("redstone input: %q is not a side (%s)", side, strings.Join(Sides, ", "))
	}
	strength = min(max(strength, 0), MaxRedstone)
	bundled &= 0xFFFF
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.red.input[i] == strength && b.red.bundledInput[i] == bundled {
		return nil
	}
	b.red.input[i], b.red.bundledInput[i] = strength, bundled
	if b.host != nil {
		b.host.QueueEvent("redstone")
	}
	return nil
}

// setOutput changes an output from Lua and tells the listeners.
func (b *Bus) setOutput(side, strength, bundled int) {
	b.mu.Lock()
	if b.red.output[side] == strength && b.red.bundledOutput[side] == bundled {
		b.mu.Unlock()
		return
	}
	b.red.output[side], b.red.bundledOutput[side] = strength, bundled
	listeners := slices.Clone(b.red.listeners)
	b.mu.Unlock()
	for _, fn := range listeners {
		fn(Sides[side], strength, bundled)
	}
}

// checkSide is argument n as a side, in CC's words for anything else.
func checkSide(L *lua.LState, n int) int {
	name := luakit.StrictString(L, n)
	i := sideIndex(name)
	if i < 0 {
		luakit.Raise(L, "bad argument #%d (unknown option %s)", n, name)
	}
	return i
}

// checkInt is argument n as a Java int: a finite number, truncated, its low 32 bits.
func checkInt(L *lua.LState, n int) int {
	return luakit.CheckInt(L, n)
}

// redstoneAPI is CC's redstone API.
func (b *Bus) redstoneAPI(L *lua.LState) *lua.LTable {
	read := func(fn func(r *redstone, i int) lua.LValue) lua.LGFunction {
		return func(L *lua.LState) int {
			i := checkSide(L, 1)
			b.mu.Lock()
			v := fn(&b.red, i)
			b.mu.Unlock()
			L.Push(v)
			return 1
		}
	}
	setAnalogue := func(L *lua.LState) int {
		i := checkSide(L, 1)
		v := checkInt(L, 2)
		if v < 0 || v > MaxRedstone {
			luakit.RaiseMessage(L, "Expected number in range 0-15")
		}
		b.setOutput(i, v, b.bundledOutput(i))
		return 0
	}
	getAnalogueOutput := read(func(r *redstone, i int) lua.LValue { return lua.LNumber(r.output[i]) })
	getAnalogueInput := read(func(r *redstone, i int) lua.LValue { return lua.LNumber(r.input[i]) })
	fns := map[string]lua.LGFunction{
		"getSides": func(L *lua.LState) int {
			t := L.CreateTable(len(Sides), 0)
			for _, s := range Sides {
				t.Append(lua.LString(s))
			}
			L.Push(t)
			return 1
		},
		"setOutput": func(L *lua.LState) int {
			i := checkSide(L, 1)
			strength := 0
			if luakit.CheckBool(L, 2) {
				strength = MaxRedstone
			}
			b.setOutput(i, strength, b.bundledOutput(i))
			return 0
		},
		"getOutput":         read(func(r *redstone, i int) lua.LValue { return lua.LBool(r.output[i] > 0) }),
		"getInput":          read(func(r *redstone, i int) lua.LValue { return lua.LBool(r.input[i] > 0) }),
		"setAnalogOutput":   setAnalogue,
		"setAnalogueOutput": setAnalogue,
		"getAnalogOutput":   getAnalogueOutput,
		"getAnalogueOutput": getAnalogueOutput,
		"getAnalogInput":    getAnalogueInput,
		"getAnalogueInput":  getAnalogueInput,
		"setBundledOutput": func(L *lua.LState) int {
			i := checkSide(L, 1)
			v := checkInt(L, 2)
			b.setOutput(i, b.analogueOutput(i), v)
			return 0
		},
		"getBundledOutput": read(func(r *redstone, i int) lua.LValue { return lua.LNumber(r.bundledOutput[i]) }),
		"getBundledInput":  read(func(r *redstone, i int) lua.LValue { return lua.LNumber(r.bundledInput[i]) }),
		"testBundledInput": func(L *lua.LState) int {
			i := checkSide(L, 1)
			mask := checkInt(L, 2)
			b.mu.Lock()
			in := b.red.bundledInput[i]
			b.mu.Unlock()
			L.Push(lua.LBool(in&mask == mask))
			return 1
		},
	}
	t := L.CreateTable(0, len(fns))
	L.SetFuncs(t, fns) // in the names' order: the same on every run
	return t
}

func (b *Bus) bundledOutput(i int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.red.bundledOutput[i]
}

func (b *Bus) analogueOutput(i int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.red.output[i]
}
