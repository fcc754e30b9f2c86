package fakecrafttest

import (
	"testing"
	"time"

	"fakecraft/world"
)

// World is a world of computers under test (package world): each runs on its own
// goroutine, and all are stopped and waited for, and the world's directory removed (a
// temporary one: not a spec's Dir), when the test ends.
type World struct {
	*world.World
	t         testing.TB
	computers map[int]*Computer
}

// NewWorld builds the world spec describes (places, peripherals, cables) and starts none
// of its computers: Start or StartAll boot them.
func NewWorld(t testing.TB, spec world.Spec) *World {
	t.Helper()
	// spec.Dir, when given, keeps what the world saves (floppy disks), as for a world file.
	w, err := world.New(world.Options{Dir: spec.Dir})
	if err != nil {
		t.Fatalf("fakecraft: %v", err)
	}
	// Registered before any computer's cleanup, so it runs after they have all stopped.
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("fakecraft: %v", err)
		}
	})
	if err := w.Build(spec); err != nil {
		t.Fatalf("fakecraft: %v", err)
	}
	return &World{World: w, t: t, computers: map[int]*Computer{}}
}

// StartWorld is NewWorld, then StartAll.
func StartWorld(t testing.TB, spec world.Spec) *World {
	t.Helper()
	w := NewWorld(t, spec)
	w.StartAll(spec)
	return w
}

// StartAll boots every computer of spec as a plain CC: Tweaked computer (its startup
// files, then its prompt), in the order given; each runs up to DefaultTimeLimit.
func (w *World) StartAll(spec world.Spec) {
	w.t.Helper()
	w.StartAllWithin(spec, DefaultTimeLimit)
}

// StartAllWithin is StartAll for computers that may each run up to limit (a world whose
// test waits on many computers in turn on a loaded machine).
func (w *World) StartAllWithin(spec world.Spec, limit time.Duration) {
	w.t.Helper()
	for _, c := range spec.Computers {
		opts, err := w.Machine(spec, c)
		if err != nil {
			w.t.Fatalf("fakecraft: %v", err)
		}
		w.computers[c.ID] = StartWithin(w.t, opts, limit)
	}
}

// Computer is the running computer with that id; the test fails when there is none.
func (w *World) Computer(id int) *Computer {
	w.t.Helper()
	c := w.computers[id]
	if c == nil {
		w.t.Fatalf("fakecraft: no computer %d running in the world", id)
	}
	return c
}
