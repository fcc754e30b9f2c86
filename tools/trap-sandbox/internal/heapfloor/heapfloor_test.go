package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentForMakesTheGoalsGrowthTheFloorAtLeast(t *testing.T) {
	for _, c := range []struct {
		floor, scanned uint64
		base, want     int
	}{
		{floor: 32 << 20, scanned: 4 << 20, base: 100, want: 800},
		{floor: 32 << 20, scanned: 3 << 20, base: 100, want: 1067}, // rounded up: never under the floor
		{floor: 32 << 20, scanned: 64 << 20, base: 100, want: 100}, // more live than the floor: GOGC rules
		{floor: 32 << 20, scanned: 4 << 20, base: 1000, want: 1000},
		{floor: 32 << 20, scanned: 0, base: 100, want: 100}, // nothing read yet
		{floor: 1 << 40, scanned: 1, base: 100, want: 1 << 20},
	} {
		if got := percentFor(c.floor, c.scanned, c.base); got != c.want {
			t.Errorf("percentFor(%d, %d, %d) = %d, want %d", c.floor, c.scanned, c.base, got, c.want)
		}
	}
}

// heapGoal reads the collector's goal and the live heap it was set from.
func heapGoal() (goal, live uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// startAndSettle starts a floor and waits until it has set GOGC after a cycle.
func startAndSettle(t *testing.T, bytes uint64) *Floor {
	t.Helper()
	settled := make(chan int, 1)
	f := start(bytes, func(p int) {
		select {
		case settled <- p:
		default:
		}
	})
	if f == nil {
		t.Fatal("the floor did not start")
	}
	t.Cleanup(f.Stop)
	<-settled // Start's own adjust, before any cycle
	runtime.GC()
	select {
	case <-settled:
	case <-time.After(time.Minute): // a hang guard only: the cycle above ends in moments
		t.Fatal("the floor did not adjust after a collection")
	}
	return f
}

func TestAFloorLetsItsSizeOfGarbageBuildUpBeforeTheNextCycle(t *testing.T) {
	const floor = 256 << 20
	// Without a floor, this test's small heap is collected again within a few MiB.
	runtime.GC()
	if goal, live := heapGoal(); goal >= live+floor {
		t.Fatalf("the goal is %d with %d live before any floor; the test needs a small heap", goal, live)
	}
	f := startAndSettle(t, floor)
	if goal, live := heapGoal(); goal < live+floor {
		t.Errorf("under a %d-byte floor the collector's goal is %d with %d live: %d of garbage before the next cycle, want the floor's at least", floor, goal, live, goal-live)
	}
	if got := debug.SetGCPercent(f.Percent()); got != f.Percent() || got <= 100 {
		t.Errorf("GOGC is %d with the floor's percent %d; want it raised above 100 and set", got, f.Percent())
	}
}

func TestAFloorBelowWhatIsLiveLeavesGOGCAsItWas(t *testing.T) {
	live := make([]*[1 << 20]byte, 16) // 16 MiB live, with pointers to them so it is scanned
	for i := range live {
		live[i] = new([1 << 20]byte)
	}
	f := startAndSettle(t, 1<<20)
	if f.Percent() != 100 {
		t.Errorf("a 1 MiB floor under 16 MiB live set GOGC to %d; want 100", f.Percent())
	}
	runtime.KeepAlive(live)
}

func TestStopPutsGOGCBackAndAnotherFloorCanStart(t *testing.T) {
	f := startAndSettle(t, 256<<20)
	if second := Start(1 << 20); second != nil {
		second.Stop()
		t.Fatal("a second floor started while one runs: each would undo the other's GOGC")
	}
	f.Stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC is %d after Stop; want the 100 it was", got)
	}
	again := Start(1 << 20)
	if again == nil {
		t.Fatal("no floor could start after the first stopped")
	}
	again.Stop()
	var none *Floor
	none.Stop() // a floor that never started stops as nothing
	if Start(0) != nil {
		t.Error("a floor of 0 bytes started; 0 means off")
	}
}

// TestAGOGCSetBeforeIsTheFloorsLeast: a GOGC the operator set (here 4000, above what a 1 MiB
// floor asks) is read as the floor starts, kept as the least it sets, and put back by Stop.
func TestAGOGCSetBeforeIsTheFloorsLeast(t *testing.T) {
	old := debug.SetGCPercent(4000)
	defer debug.SetGCPercent(old)
	f := startAndSettle(t, 1<<20)
	if f.Percent() != 4000 {
		t.Errorf("a 1 MiB floor under GOGC=4000 set GOGC to %d; want the 4000 set before it", f.Percent())
	}
	f.Stop()
	if got := debug.SetGCPercent(old); got != 4000 {
		t.Errorf("GOGC is %d after Stop; want the 4000 set before the floor", got)
	}
}

func TestNoFloorWhileTheCollectorIsOff(t *testing.T) {
	if CollectorOff() {
		t.Fatal("the collector reads as off while GOGC is on")
	}
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	if f := Start(32 << 20); f != nil {
		f.Stop()
		t.Fatal("a floor started with GOGC=off: it would turn the collector back on")
	}
	if !CollectorOff() {
		t.Error("GOGC=off does not read as the collector off")
	}
}

// TestAFloorDoesNotReadAsTheCollectorOff: a floor's percent, however large, is not off.
func TestAFloorDoesNotReadAsTheCollectorOff(t *testing.T) {
	f := start(1<<40, nil) // past any heap: the largest percent a floor sets
	defer f.Stop()
	if p := f.Percent(); CollectorOff() {
		t.Errorf("a floor at GOGC=%d reads as the collector off", p)
	}
}
