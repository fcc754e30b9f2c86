// Package bench measures the real trap-sandbox gateway binary against a bare gorilla/websocket
// baseline under the same conditions: both run as child processes on 127.0.0.1 and face the
// same load clients (docs/performance.md).
package bench

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"tests/internal/harness"
)

// Targets of issue 25 (issue 6 item 7 had 0.70x, 0.35x and 32 KiB).
const (
	// TargetProbeRatio is the least probe_gateway rate, as a share of the baseline's.
	TargetProbeRatio = 1.0
	// TargetHTTPRatio is the least HTTP API ping rate, as a share of the baseline's; the
	// gateway's p99 latency of it may not exceed the baseline's either.
	TargetHTTPRatio = 1.0
	// TargetBytesPerConn is the most memory one idle authenticated connection may cost.
	TargetBytesPerConn = 16 << 10
	// TargetConnectTime bounds connecting and saying hello with all idle computers (issue 6).
	TargetConnectTime = 10 * time.Second
	// DefaultSettle lets the server finish its per-connection work before RSS is read.
	DefaultSettle = 500 * time.Millisecond
	// opencodeHealthBody is what opencode 1.18.33 answers on /global/health.
	opencodeHealthBody = `{"healthy":true,"version":"1.18.33"}`
)

// Config sizes one run.
type Config struct {
	// Computers is the number of sockets of phases (a) and (b).
	Computers int
	// Duration is the length of each throughput phase.
	Duration time.Duration
	// HTTPClients is the number of concurrent HTTP clients of phase (b).
	HTTPClients int
	// IdleComputers is the number of idle sockets of phases (c) and (d).
	IdleComputers int
	// DialConcurrency bounds the dials in flight in phase (d).
	DialConcurrency int
	// Rounds is how often the throughput phases alternate between the servers; each figure is
	// the median round. The server that goes first alternates too (roundOrder): an even number
	// gives each server each place equally often. Zero means 1.
	Rounds int
	// Settle is the pause before each RSS reading; zero means DefaultSettle.
	Settle time.Duration
	// WorkDir receives the gateway binary and the baseline's copy of the bench binary.
	WorkDir string
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
	// ProfileDir, when set, receives a CPU, heap and goroutine profile of each server in each
	// phase (the gateway is then built with -tags benchprofile; profiling costs CPU, so read
	// the figures of such a run as the profiles' context, not as results).
	ProfileDir string
	// SelfCheck puts a second baseline process in the gateway's place (nothing is built): every
	// ratio of the run is then the bench's own bias and noise on this machine.
	SelfCheck bool
	// BaselineUUIDIDs has the baseline mint its message ids as the gateway must, random UUIDs
	// (BaselineUUIDIDsEnv), instead of a short counter: what the ids' 36 bytes cost, measured.
	// The targets are judged against the baseline as it is, not this one.
	BaselineUUIDIDs bool
	// OnlyHTTP runs phase (b) alone (no (a), (c) or (d)), and only its targets are judged: for
	// comparing builds of the host API's path, twice the runs in the same time.
	OnlyHTTP bool
	// BaselineGateway, when set, is a gateway binary that takes the baseline's place (another
	// build of the gateway, started as the bench starts its own): every ratio is then one
	// build against the other, round by round, and no target is judged.
	BaselineGateway string
}

// Figures are one server's measurements.
type Figures struct {
	// Probe is phase (a): computer_request round trips over the WebSocket.
	Probe Rate
	// HTTP is phase (b): ping round trips through the HTTP API and a socket.
	HTTP Rate
	// ProbeRounds and HTTPRounds are the rates of every round, in order; Probe and HTTP are
	// their medians.
	ProbeRounds, HTTPRounds []float64
	// HTTPP99Rounds is the p99 latency of every round of (b), in order (the verdict is on the
	// median round's, HTTP.P99): how far the machine's noise moves it.
	HTTPP99Rounds []time.Duration
	// HTTPCPURounds is the server's CPU per round trip of every round of (b), in order.
	HTTPCPURounds []time.Duration
	// ProbesSent counts the probe_gateway round trips of all rounds.
	ProbesSent int
	// BytesPerConn is phase (c): RSS growth divided by the idle sockets.
	BytesPerConn float64
	// RSSBusy is the process's VmRSS after the throughput phases, when (c) restarts it: what a
	// busy server held, garbage between its collector's cycles included.
	RSSBusy int64
	// RSSBefore and RSSAfter are the fresh process's VmRSS around phase (c).
	RSSBefore, RSSAfter int64
	// BusyPID and FreshPID are the process of the throughput phases and the one (c) and (d)
	// measured: never the same.
	BusyPID, FreshPID int
	// HeapPerConn and StackPerConn are the growth of go_memstats_heap_inuse_bytes and
	// go_memstats_stack_inuse_bytes per socket, when /metrics has them: where (c)'s RSS went.
	HeapPerConn, StackPerConn float64
	// ConnectTime is phase (d): connecting and saying hello with every idle socket.
	ConnectTime time.Duration
}

// Result holds both servers' figures.
type Result struct {
	Gateway, Baseline Figures
	// OpencodeRequests counts the health requests the gateway sent to the fake opencode
	// during the whole run (its probes share one upstream request while one is in flight), to
	// compare with Gateway.ProbesSent.
	OpencodeRequests int64
}

// Run builds the gateway (with cfg.SelfCheck, a second baseline takes its place), starts it and
// the baseline, measures both and returns the figures.
// Both servers run for the whole measurement (the idle one costs nothing) so that the
// throughput phases can alternate between them round by round: a load burst from another
// program on the machine then hits both, not just one.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	if cfg.Settle <= 0 {
		cfg.Settle = DefaultSettle
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 1
	}
	progress := progressOf(cfg)
	self, err := baselineBinary(cfg.WorkDir, "baseline")
	if err != nil {
		return res, err
	}
	var opencodeHits atomic.Int64
	opencode := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		opencodeHits.Add(1)
		if r.URL.Path != "/global/health" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, opencodeHealthBody)
	}))
	defer opencode.Close()

	gwAddr, err := freeAddr()
	if err != nil {
		return res, err
	}
	gwProfEnv, gwProf, err := profileEnv(cfg.ProfileDir, "gateway")
	if err != nil {
		return res, err
	}
	gw, err := startGateway(ctx, cfg, gwAddr, opencode.URL, gwProfEnv)
	if err != nil {
		return res, err
	}
	gw.prof = gwProf
	defer func() {
		if stopErr := gw.stop(); stopErr != nil || err != nil {
			err = fmt.Errorf("gateway: %w\nlog tail:\n%s", errors.Join(err, stopErr), gw.log)
		}
	}()
	baseAddr, err := freeAddr()
	if err != nil {
		return res, err
	}
	baseProfEnv, baseProf, err := profileEnv(cfg.ProfileDir, "baseline")
	if err != nil {
		return res, err
	}
	baseEnv := append([]string{BaselineListenEnv + "=" + baseAddr}, baseProfEnv...)
	if cfg.BaselineUUIDIDs {
		baseEnv = append(baseEnv, BaselineUUIDIDsEnv+"=1")
	}
	var base *server
	if cfg.BaselineGateway != "" {
		env := append(gatewayEnv(opencode.URL, cfg.IdleComputers+cfg.Computers), "SANDBOX_DATA_DIR="+filepath.Join(cfg.WorkDir, "baseline-gateway-data"))
		base, err = startServer(ctx, "baseline gateway", baseAddr, cfg.BaselineGateway, []string{"--listen", baseAddr}, env)
	} else {
		base, err = startServer(ctx, "baseline", baseAddr, self, nil, baseEnv)
	}
	if err != nil {
		return res, err
	}
	base.prof = baseProf
	defer func() {
		if stopErr := base.stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
	}()
	fmt.Fprintf(progress, "gateway on %s, baseline on %s\n", gwAddr, baseAddr)

	targets := []*server{gw, base}
	figures := []*Figures{&res.Gateway, &res.Baseline}
	probes := make([][]Rate, len(targets))
	pings := make([][]Rate, len(targets))
	for round := range cfg.Rounds {
		order := roundOrder(round)
		for _, i := range order {
			if cfg.OnlyHTTP {
				break
			}
			s := targets[i]
			r, err := probePhase(ctx, cfg, s, fmt.Sprintf("a-round%d", round+1))
			if err != nil {
				return res, err
			}
			probes[i] = append(probes[i], r)
			fmt.Fprintf(progress, "round %d: (a) %s %.0f round trips/s\n", round+1, s.name, r.PerSecond)
		}
		for _, i := range order {
			s := targets[i]
			r, err := httpPhase(ctx, cfg, s, fmt.Sprintf("b-round%d", round+1))
			if err != nil {
				return res, err
			}
			pings[i] = append(pings[i], r)
			fmt.Fprintf(progress, "round %d: (b) %s %.0f round trips/s, p99 %s\n", round+1, s.name, r.PerSecond, ms(r.P99))
		}
	}
	res.OpencodeRequests = opencodeHits.Load()
	for i, s := range targets {
		figures[i].Probe = medianRate(probes[i])
		figures[i].HTTP = medianRate(pings[i])
		figures[i].ProbeRounds = perSecond(probes[i])
		for _, r := range probes[i] {
			figures[i].ProbesSent += r.Count
		}
		figures[i].HTTPRounds = perSecond(pings[i])
		for _, r := range pings[i] {
			figures[i].HTTPP99Rounds = append(figures[i].HTTPP99Rounds, r.P99)
			figures[i].HTTPCPURounds = append(figures[i].HTTPCPURounds, r.ServerCPU)
		}
		if cfg.OnlyHTTP {
			continue
		}
		// (c) and (d) begin on a process that has done nothing yet: after (a) and (b), a
		// server's heap holds their garbage, resident and already counted in (c)'s "before",
		// and the idle sockets would take their memory from it unseen, a server that lets
		// more garbage build up (a higher GOGC, a floor under the collector) reading less
		// for it (docs/performance.md, "A floor under the collector").
		if figures[i].RSSBusy, err = s.rss(); err != nil {
			return res, err
		}
		figures[i].BusyPID = s.proc.Pid()
		if err := s.fresh(ctx); err != nil {
			return res, err
		}
		figures[i].FreshPID = s.proc.Pid()
		if err := memoryPhase(ctx, cfg, s, figures[i], s == gw); err != nil {
			return res, err
		}
		fmt.Fprintf(progress, "(c)(d) %s: %d computers in %s, %.1f KiB each\n", s.name, cfg.IdleComputers,
			figures[i].ConnectTime.Round(time.Millisecond), figures[i].BytesPerConn/1024)
	}
	return res, nil
}

// baselineBinary copies the bench's own executable into dir as name, for a baseline process to
// run from. Run from the bench's executable itself, the baseline shared its code pages with the
// load clients (the same file): 4 % more HTTP pings a second than from a copy, in 20 alternating
// rounds with one client, where the gateway, a binary of its own, had no such help
// (docs/performance.md, "The bench's own bias").
func baselineBinary(dir, name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the bench binary: %w", err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		return "", fmt.Errorf("copy the bench binary for the baseline: %w", err)
	}
	bin := filepath.Join(dir, name)
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		return "", fmt.Errorf("copy the bench binary for the baseline: %w", err)
	}
	return bin, nil
}

// progressOf is where cfg's progress lines go.
func progressOf(cfg Config) io.Writer {
	if cfg.Progress == nil {
		return io.Discard
	}
	return cfg.Progress
}

// roundOrder is the order in which round runs the two servers (0 the gateway, 1 the baseline)
// through each throughput phase: the gateway first in rounds 0, 2, 4…, the baseline first in
// rounds 1, 3, 5… (counting from 0; the progress lines count from 1). The server that goes
// first runs right after the other's heavier phase (the load clients' garbage and the other
// server's closing sockets of (a) spill into it): with a fixed order, the baseline measured
// against itself in both places came out 0.98× of itself, a bias against whichever server went
// first (docs/performance.md, "The bench's own bias").
func roundOrder(round int) [2]int {
	if round%2 == 1 {
		return [2]int{1, 0}
	}
	return [2]int{0, 1}
}

// startGateway builds and starts the gateway on addr, or with cfg.SelfCheck a second baseline
// in its place.
func startGateway(ctx context.Context, cfg Config, addr, opencodeURL string, profEnv []string) (*server, error) {
	if cfg.SelfCheck {
		bin, err := baselineBinary(cfg.WorkDir, "baseline-in-the-gateways-place")
		if err != nil {
			return nil, err
		}
		return startServer(ctx, "baseline in the gateway's place", addr, bin, nil, append([]string{BaselineListenEnv + "=" + addr}, profEnv...))
	}
	fmt.Fprintln(progressOf(cfg), "building the gateway…")
	tags := ""
	if cfg.ProfileDir != "" {
		tags = profileTag
	}
	bin, err := harness.BuildGatewayTags(ctx, cfg.WorkDir, false, tags)
	if err != nil {
		return nil, err
	}
	env := append(gatewayEnv(opencodeURL, cfg.IdleComputers+cfg.Computers), gatewayDataEnv(cfg.WorkDir))
	return startServer(ctx, "gateway", addr, bin, []string{"--listen", addr}, append(env, profEnv...))
}

// gatewayDataEnv gives a bench's gateway a data directory in the run's work directory: as
// shipped the gateway keeps its account store in the user's, which on a gateway's host is the
// real one (a run would open it, even upgrade it to its own schema).
func gatewayDataEnv(workDir string) string {
	return "SANDBOX_DATA_DIR=" + filepath.Join(workDir, "gateway-data")
}

// medianRate is the round with the median rate (its percentiles come with it); none: zero.
func medianRate(rs []Rate) Rate {
	if len(rs) == 0 {
		return Rate{}
	}
	sorted := slices.SortedFunc(slices.Values(rs), func(a, b Rate) int { return cmp.Compare(a.PerSecond, b.PerSecond) })
	return sorted[len(sorted)/2]
}

func perSecond(rs []Rate) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.PerSecond
	}
	return out
}

// gatewayEnv configures the gateway as shipped, except the per-IP upgrade rate limit: every
// load client shares 127.0.0.1, and the bench measures capacity, not the admission policy.
// Past the shipped connection cap (a scale run of sockets sockets) the cap is raised to fit.
func gatewayEnv(opencodeURL string, sockets int) []string {
	env := []string{"OPENCODE_URL=" + opencodeURL, "SANDBOX_UPGRADE_RATE=-1"}
	if need := sockets + connectionSpare; need > shippedMaxConnections {
		env = append(env, "SANDBOX_MAX_CONNECTIONS="+strconv.Itoa(need))
	}
	return env
}

// shippedMaxConnections is the gateway's default --max-connections.
const shippedMaxConnections = 20000

// connectionSpare is room above a run's sockets for the ones still closing from a phase before.
const connectionSpare = 1000

// probePhase is phase (a): Computers sockets send probe_gateway back-to-back for Duration.
func probePhase(ctx context.Context, cfg Config, s *server, phase string) (Rate, error) {
	cs, err := connectAll(ctx, s.wsURL(), cfg.Computers, cfg.DialConcurrency)
	if err != nil {
		return Rate{}, fmt.Errorf("%s: connect for (a): %w", s.name, err)
	}
	if err := s.prof.start(); err != nil {
		closeAll(cs)
		return Rate{}, err
	}
	cpu0, cpuErr := s.cpu()
	bench0, benchErr := benchCPU()
	r, err := probeLoad(ctx, cs, cfg.Duration)
	r.ServerCPU = cpuPerOp(s.cpu, cpu0, cpuErr, r.Count)
	r.BenchCPU = cpuPerOp(benchCPU, bench0, benchErr, r.Count)
	err = errors.Join(err, s.prof.stop(phase))
	closeAll(cs)
	if err == nil && r.Count == 0 {
		err = errNoSamples
	}
	if err != nil {
		return r, fmt.Errorf("%s: (a) probe_gateway: %w", s.name, err)
	}
	return r, nil
}

// httpPhase is phase (b): HTTPClients clients POST ping for Duration to Computers sockets that
// answer it.
func httpPhase(ctx context.Context, cfg Config, s *server, phase string) (Rate, error) {
	cs, err := connectAll(ctx, s.wsURL(), cfg.Computers, cfg.DialConcurrency)
	if err != nil {
		return Rate{}, fmt.Errorf("%s: connect for (b): %w", s.name, err)
	}
	wait := answerPings(cs)
	if err := s.prof.start(); err != nil {
		closeAll(cs)
		wait()
		return Rate{}, err
	}
	cpu0, cpuErr := s.cpu()
	bench0, benchErr := benchCPU()
	r, err := httpLoad(ctx, "http://"+s.addr, cs, cfg.HTTPClients, cfg.Duration)
	r.ServerCPU = cpuPerOp(s.cpu, cpu0, cpuErr, r.Count)
	r.BenchCPU = cpuPerOp(benchCPU, bench0, benchErr, r.Count)
	err = errors.Join(err, s.prof.stop(phase))
	closeAll(cs)
	wait()
	if err == nil && r.Count == 0 {
		err = errNoSamples
	}
	if err != nil {
		return r, fmt.Errorf("%s: (b) http ping: %w", s.name, err)
	}
	return r, nil
}

// cpuPerOp divides a process's CPU time (cpu) since cpu0 among n round trips; 0 when unknown
// (the figure explains the others and is not a target).
func cpuPerOp(cpu func() (time.Duration, error), cpu0 time.Duration, err error, n int) time.Duration {
	cpu1, err1 := cpu()
	if err != nil || err1 != nil || n == 0 {
		return 0
	}
	return (cpu1 - cpu0) / time.Duration(n)
}

// memoryPhase is phases (c) and (d) on a fresh server: IdleComputers sockets connect and say
// hello (timed), and the server's RSS growth is divided among them.
func memoryPhase(ctx context.Context, cfg Config, s *server, f *Figures, metrics bool) error {
	// Let the fresh server finish starting (its first health probe, its first log lines)
	// before the memory baseline is read.
	time.Sleep(cfg.Settle)
	before := goMemstats(s.addr, metrics)
	var err error
	if f.RSSBefore, err = s.rss(); err != nil {
		return err
	}
	if err := s.prof.start(); err != nil {
		return err
	}
	start := time.Now()
	idle, err := connectAll(ctx, s.wsURL(), cfg.IdleComputers, cfg.DialConcurrency)
	f.ConnectTime = time.Since(start)
	if err != nil {
		return errors.Join(fmt.Errorf("%s: (d) connect %d computers: %w", s.name, cfg.IdleComputers, err), s.prof.stop("d"))
	}
	defer closeAll(idle)
	if err := s.prof.stop("d"); err != nil {
		return err
	}
	time.Sleep(cfg.Settle)
	if f.RSSAfter, err = s.rss(); err != nil {
		return err
	}
	// (c)'s profiles are taken after its RSS reading: the CPU profile of the idle sockets'
	// settle would be empty, the heap profile is what they hold.
	if err := s.prof.start(); err != nil {
		return err
	}
	if err := s.prof.stop("c"); err != nil {
		return err
	}
	f.BytesPerConn = float64(f.RSSAfter-f.RSSBefore) / float64(cfg.IdleComputers)
	if before.heap > 0 {
		if after := goMemstats(s.addr, metrics); after.heap > 0 {
			f.HeapPerConn = (after.heap - before.heap) / float64(cfg.IdleComputers)
			f.StackPerConn = (after.stack - before.stack) / float64(cfg.IdleComputers)
		}
	}
	return nil
}

// memstats are the Go runtime's memory figures the gateway's /metrics has.
type memstats struct{ heap, stack float64 }

// goMemstats reads go_memstats_heap_inuse_bytes and go_memstats_stack_inuse_bytes from
// /metrics; zero when absent or unreadable (the figures are optional).
func goMemstats(addr string, enabled bool) memstats {
	var m memstats
	if !enabled {
		return m
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return m
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		for name, into := range map[string]*float64{"go_memstats_heap_inuse_bytes ": &m.heap, "go_memstats_stack_inuse_bytes ": &m.stack} {
			if v, ok := strings.CutPrefix(sc.Text(), name); ok {
				if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					*into = n
				}
			}
		}
	}
	return m
}
