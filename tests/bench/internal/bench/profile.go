package bench

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"trap-sandbox/testkit/profiling"
)

// profileTag is the build tag that makes the gateway serve profiles (tools/trap-sandbox/profile.go).
const profileTag = "benchprofile"

// profiler takes one server's CPU and heap profile of each phase into Config.ProfileDir; the
// zero value (no directory) takes none.
type profiler struct {
	dir    string
	server string
	client profiling.Client
}

// start begins the CPU profile of a phase.
func (p profiler) start() error {
	if p.dir == "" {
		return nil
	}
	return p.client.StartCPU()
}

// stop ends the CPU profile and saves it with a heap and a goroutine profile as
// <server>-<phase>.{cpu,heap,goroutine}.pprof, and the runtime's memory figures as
// <server>-<phase>.memstats.json.
func (p profiler) stop(phase string) error {
	if p.dir == "" {
		return nil
	}
	base := filepath.Join(p.dir, p.server+"-"+phase)
	return errors.Join(p.client.StopCPU(base+".cpu.pprof"),
		p.client.Save("heap", base+".heap.pprof"),
		p.client.Save("goroutine", base+".goroutine.pprof"),
		p.client.Save("memstats", base+".memstats.json"))
}

// stopLive is stop, then the heap profile and memory figures after a forced GC, as
// <server>-<phase>.live-heap.pprof and .live-memstats.json: what is live, beside what the
// process holds (the GC lets the heap grow to about twice what was live at the last one).
func (p profiler) stopLive(phase string) error {
	if p.dir == "" {
		return nil
	}
	base := filepath.Join(p.dir, p.server+"-"+phase)
	return errors.Join(p.stop(phase),
		p.client.Save("live-heap", base+".live-heap.pprof"),
		p.client.Save("live-memstats", base+".live-memstats.json"))
}

// serveProfiles serves the baseline's profiles when the bench asked for them (ListenEnv set).
func serveProfiles() error {
	addr := os.Getenv(profiling.ListenEnv)
	if addr == "" {
		return nil
	}
	l, err := profiling.Listen(addr)
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(l, profiling.Handler()) }()
	return nil
}

// profileEnv is the environment entry that makes a child serve profiles on a free port, and
// the profiler of it; none without a directory.
func profileEnv(dir, server string) ([]string, profiler, error) {
	if dir == "" {
		return nil, profiler{}, nil
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, profiler{}, fmt.Errorf("profiles: %w", err)
	}
	return []string{profiling.ListenEnv + "=" + addr}, profiler{dir: dir, server: server, client: profiling.Client{Addr: addr}}, nil
}
