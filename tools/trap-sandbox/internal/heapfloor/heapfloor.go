// Package heapfloor keeps Go's collector from running while the heap is small.
//
// At Go's default (GOGC=100) a cycle starts once the heap has grown by what was live after the
// last one. A gateway with few computers has little live (a few MiB), so under load it collects
// dozens of times a second, and each cycle's fixed costs (stopping the world twice, scanning
// every goroutine's stack, sweeping) are paid for a few MiB of garbage: about a seventh of the
// gateway's CPU answering the host's requests (docs/performance.md, "A floor under the
// collector"). A floor lets at least its size of garbage build up between cycles: fewer
// cycles, for at most the floor's size more memory on a busy gateway. Once what is live is
// larger than the floor, the floor changes nothing and GOGC rules as before.
//
// It sets GOGC (debug.SetGCPercent) after each cycle, from a cleanup (runtime.AddCleanup) of an
// object that cycle frees, so that the next goal lies at least the floor above what is live.
// A ballast (a large allocation never written) would raise the goal too, but it counts toward
// GOMEMLIMIT and the heap figures /metrics shows, and gives a large heap more than GOGC does.
package heapfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// What the collector's goal is computed from (Go 1.18+): the goal is live heap plus
// GOGC percent of live heap, goroutine stacks and globals.
var sampled = []string{"/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes"}

// Floor holds the collector's goal at least its bytes above the live heap.
type Floor struct {
	bytes uint64
	// base is GOGC as it was when the floor began (100 unless set): the percent the floor
	// never goes below, so it only ever delays a cycle.
	base int

	mu      sync.Mutex
	stopped bool
	samples []metrics.Sample
	// percent is the GOGC the floor last set.
	percent int
	// adjusted, when set (tests), hears each percent the floor settles on, after each cycle.
	adjusted func(percent int)
}

// running is set while a floor runs: GOGC is the process's, and two floors would undo each
// other (the in-process tests start many gateways).
var running atomic.Bool

// sentinel is the object whose collection marks the end of a cycle. It is 16 bytes without
// pointers, not smaller: the runtime batches smaller pointer-free objects into one block
// (its tiny allocator), and such a block's cleanup may never run.
type sentinel [16]byte

// Start sets a floor of bytes under the collector's goal for the whole process, and returns it
// to stop. It does nothing (and returns nil, which stops as nothing) when bytes is 0, when the
// collector is off (GOGC=off), or while another floor runs.
func Start(bytes uint64) *Floor {
	return start(bytes, nil)
}

func start(bytes uint64, adjusted func(percent int)) *Floor {
	if bytes == 0 || !running.CompareAndSwap(false, true) {
		return nil
	}
	base, off := gogc()
	if off {
		running.Store(false)
		return nil
	}
	f := &Floor{bytes: bytes, base: base, percent: base, adjusted: adjusted}
	f.samples = make([]metrics.Sample, len(sampled))
	for i, name := range sampled {
		f.samples[i].Name = name
	}
	f.adjust()
	return f
}

// CollectorOff is whether GOGC=off has turned Go's collector off: then no floor runs (Start
// returns nil) and nothing but GOMEMLIMIT bounds the heap. It may run beside a floor that
// sets GOGC.
func CollectorOff() bool {
	_, off := gogc()
	return off
}

// gogc reads GOGC as it is now, without changing it (debug.SetGCPercent, the other way to read
// it, sets it meanwhile: GOGC=off turned on for a moment). runtime/metrics gives it as a
// uint64, where off (a negative setting) is one past any int32: the largest uint64, which
// /metrics' go_gc_gogc_percent shows then.
func gogc() (percent int, off bool) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		// A runtime without the metric (Go 1.21 and later have it): taken as Go's default.
		return 100, false
	}
	if v := s[0].Value.Uint64(); v <= math.MaxInt32 {
		return int(v), false
	}
	return -1, true
}

// Stop puts GOGC back as it was before Start. A nil floor stops as nothing.
func (f *Floor) Stop() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.stopped = true
	debug.SetGCPercent(f.base)
	running.Store(false)
}

// Percent is the GOGC the floor last set.
func (f *Floor) Percent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.percent
}

// adjust sets GOGC from what the last cycle left live, and arms itself to run again after the
// next cycle: a sentinel allocated now is unreachable at once, and its cleanup runs once a
// cycle has found it so (one allocated while a cycle marks counts as live in that cycle: the
// one after frees it).
func (f *Floor) adjust() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	metrics.Read(f.samples)
	var scanned uint64
	for _, s := range f.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			scanned += s.Value.Uint64()
		}
	}
	if p := percentFor(f.bytes, scanned, f.base); p != f.percent {
		debug.SetGCPercent(p)
		f.percent = p
	}
	if f.adjusted != nil {
		f.adjusted(f.percent)
	}
	runtime.AddCleanup(new(sentinel), (*Floor).adjust, f)
}

// percentFor is the GOGC that makes the goal's growth (percent of scanned) at least floor
// bytes, and never below base.
func percentFor(floor, scanned uint64, base int) int {
	if scanned == 0 {
		return base
	}
	p := (floor*100 + scanned - 1) / scanned
	// GOGC is an int; beyond this the floor is already far above any heap a gateway has.
	const most = 1 << 20
	if p > most {
		p = most
	}
	return max(int(p), base)
}
