package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"tests/internal/harness"
)

// The scale run (docs/performance.md, "Scale"): more computers than one process may hold
// sockets, spread over gateway replicas on one nats-server, connected from client worker
// processes. Its defaults:
const (
	// DefaultPerAddress is how many computers share one source address: one Minecraft server's
	// computers, which all reconnect together after a restart. Below the gateway's shipped
	// upgrade burst (2000 per address), so the shipped admission lets each server in at once.
	DefaultPerAddress = 1000
	// ScaleStartTimeout bounds a replica's start until /healthz answers. The replicas run with
	// the shipped --nats-setup-timeout (10 s): a replica serves once it knows the live
	// replicas, and reads the computers' claims (100 000 here) in the background.
	ScaleStartTimeout = time.Minute
	// ScaleStopTimeout bounds a replica's graceful stop (SIGTERM) before it is killed: closing
	// 17 000 sockets beside five other replicas doing the same on two loaded cores may take
	// longer than the 10 s a single gateway gets.
	ScaleStopTimeout = time.Minute
	// hopPath is the HTTP API request of the hop sample.
	hopPath = "/trapos/computers/%s/requests"
	// FileSpare is the open files a process needs beside a run's sockets.
	FileSpare = 2000
	// stopProfileWindow is how much of each replica's graceful stop its CPU profile covers
	// (ScaleConfig.ProfileDir): less than the shipped --shutdown-timeout, so the replica is
	// still there to hand the profile over.
	stopProfileWindow = 4 * time.Second
)

// ScaleConfig sizes one scale run.
type ScaleConfig struct {
	// Computers is how many idle authenticated computers connect, over all replicas.
	Computers int
	// Replicas is how many gateway processes share them over NATS.
	Replicas int
	// PerAddress is how many computers share one source address (and so one replica); zero
	// means DefaultPerAddress.
	PerAddress int
	// PerWorker is the most sockets one client worker process holds; zero: what the open-files
	// limit allows (the limit less FileSpare).
	PerWorker int
	// DialConcurrency bounds the dials + hellos in flight, all workers together (each gets its
	// share), as it does in phase (d).
	DialConcurrency int
	// HopSamples is how many host pings go through the HTTP API of a replica to computers held
	// by another (and as many to the holding replica, to compare); zero: none.
	HopSamples int
	// Settle is the pause before each RSS reading; zero means DefaultSettle.
	Settle time.Duration
	// StepTimeout bounds each connect step and each wait for every replica to list every
	// computer; zero: 2 minutes plus 2 ms per computer.
	StepTimeout time.Duration
	// NATSServer is the nats-server binary; empty: the one on PATH, else built from the module
	// cache (tests/go.mod).
	NATSServer string
	// WorkDir receives the binaries and the replicas' and nats-server's data.
	WorkDir string
	// ProfileDir, when set, receives each replica's CPU profile of the connects and its heap
	// and goroutine profiles and runtime memory figures once every replica lists every
	// computer (<replica>-connected.*, read beside the memory figure), and its heap profile
	// and memory figures after a forced GC (.live-heap.pprof, .live-memstats.json: what is
	// live); and a CPU profile of the first stopProfileWindow of each replica's graceful stop
	// that lasts longer, <replica>-stop.cpu.pprof. The gateway is then built with -tags
	// benchprofile.
	ProfileDir string
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
}

// ReplicaFigures are one replica's measurements.
type ReplicaFigures struct {
	// Name is its --replica name.
	Name string
	// Computers is how many computers hold their socket on it.
	Computers int
	// RSSBefore and RSSAfter are its VmRSS before the computers connected and once every
	// replica listed every computer; RSSRestarted the new process's once all were back.
	RSSBefore, RSSAfter, RSSRestarted int64
	// Stop is its graceful stop at the end, from SIGTERM to its exit (or kill).
	Stop time.Duration
}

// ScaleResult holds a scale run's figures.
type ScaleResult struct {
	Replicas []ReplicaFigures
	// Workers is how many client worker processes held the computers' sockets.
	Workers int
	// Addresses is how many source addresses the computers dialled from.
	Addresses int
	// NATSRSSBefore and NATSRSSAfter are the nats-server's VmRSS around the connects (after
	// every replica listed every computer); NATSRSSRestarted after the restart.
	NATSRSSBefore, NATSRSSAfter, NATSRSSRestarted int64
	// ConnectTime is from the command to connect to the last worker's report that all its
	// computers said hello; ListedTime from the same command until every replica listed every
	// computer (its own and the others', learnt over NATS).
	ConnectTime, ListedTime time.Duration
	// KillTime is from SIGKILL to every replica's exit (the restart); StartTime from their new
	// start until every one answers /healthz; ReconnectTime from then until every computer
	// said hello again, and RelistedTime until every replica listed every computer again.
	KillTime, StartTime, ReconnectTime, RelistedTime time.Duration
	// StopTime is the graceful stop at the end: from SIGTERM to every replica's exit, or to
	// the kill at ScaleStopTimeout; StopErr says which replicas did not stop cleanly in time.
	StopTime time.Duration
	StopErr  string
	// Direct and Routed are the hop sample: host pings through the HTTP API of the replica
	// that holds the computer, and through another one (over NATS).
	Direct, Routed Rate
}

// BytesPerComputer is the replicas' RSS growth, summed, divided by the computers: phase (c)'s
// figure over every process that holds them.
func (r ScaleResult) BytesPerComputer() float64 {
	var grow int64
	n := 0
	for _, rep := range r.Replicas {
		grow += rep.RSSAfter - rep.RSSBefore
		n += rep.Computers
	}
	return ratio(float64(grow), float64(n))
}

// scaleRun is one scale run's processes.
type scaleRun struct {
	cfg      ScaleConfig
	progress io.Writer
	bin      string
	nats     *harness.NATS
	names    []string
	addrs    []string
	held     []int
	replicas []*server
	workers  []*workerProc
}

// RunScale runs the scale measurement: a nats-server, cfg.Replicas gateway replicas and the
// client workers, all stopped again before it returns.
func RunScale(ctx context.Context, cfg ScaleConfig) (res ScaleResult, err error) {
	if cfg.Settle <= 0 {
		cfg.Settle = DefaultSettle
	}
	if cfg.PerAddress <= 0 {
		cfg.PerAddress = DefaultPerAddress
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = 2*time.Minute + time.Duration(cfg.Computers)*2*time.Millisecond
	}
	if cfg.Computers < 1 || cfg.Replicas < 1 || cfg.DialConcurrency < 1 || cfg.HopSamples < 0 {
		return res, errors.New("scale: the computers, replicas and dial concurrency must be at least 1")
	}
	limit, err := openFilesLimit()
	if err != nil {
		return res, err
	}
	if cfg.PerWorker <= 0 {
		cfg.PerWorker = limit - FileSpare
	}
	if cfg.PerWorker < 1 || cfg.PerWorker+FileSpare > limit {
		return res, fmt.Errorf("scale: a worker of %d sockets does not fit the open-files limit %d (%d spare)", cfg.PerWorker, limit, FileSpare)
	}
	run := &scaleRun{cfg: cfg, progress: cfg.Progress}
	if run.progress == nil {
		run.progress = io.Discard
	}
	res.Addresses = (cfg.Computers + cfg.PerAddress - 1) / cfg.PerAddress
	run.held = make([]int, cfg.Replicas)
	for k := range res.Addresses {
		run.held[k%cfg.Replicas] += min(cfg.PerAddress, cfg.Computers-k*cfg.PerAddress)
	}
	for r, n := range run.held {
		if n+connectionSpare+FileSpare > limit {
			return res, fmt.Errorf("scale: replica %d would hold %d sockets, more than the open-files limit %d allows one process (%d + %d spare): use more -replicas",
				r+1, n, limit, connectionSpare, FileSpare)
		}
	}
	defer func() { err = errors.Join(err, run.stopAll()) }()
	if err := run.start(ctx); err != nil {
		return res, err
	}
	if err := run.measure(ctx, &res); err != nil {
		return res, err
	}
	return res, nil
}

// openFilesLimit is this process's soft RLIMIT_NOFILE, which its children inherit.
func openFilesLimit() (int, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("get file limit: %w", err)
	}
	return int(min(lim.Cur, 1<<30)), nil
}

// start builds the gateway, starts nats-server, the replicas and the workers.
func (run *scaleRun) start(ctx context.Context) error {
	cfg := run.cfg
	fmt.Fprintln(run.progress, "building the gateway…")
	tags := ""
	if cfg.ProfileDir != "" {
		tags = profileTag
	}
	bin, err := harness.BuildGatewayTags(ctx, cfg.WorkDir, false, tags)
	if err != nil {
		return fmt.Errorf("step build: %w", err)
	}
	run.bin = bin
	natsBin, err := findNATSServer(ctx, cfg.NATSServer, cfg.WorkDir)
	if err != nil {
		return fmt.Errorf("step nats-server: %w", err)
	}
	store := filepath.Join(cfg.WorkDir, "nats")
	if run.nats, err = harness.StartNATSProcess(natsBin, store, harness.NATSOptions{}); err != nil {
		return fmt.Errorf("step nats-server: %w", err)
	}
	fmt.Fprintf(run.progress, "nats-server on %s\n", run.nats.URL)
	run.names = make([]string, cfg.Replicas)
	run.addrs = make([]string, cfg.Replicas)
	for r := range cfg.Replicas {
		run.names[r] = "r" + strconv.Itoa(r+1)
		if run.addrs[r], err = freeAddr(); err != nil {
			return fmt.Errorf("step start replicas: %w", err)
		}
	}
	if _, err := run.startReplicas(ctx); err != nil {
		return fmt.Errorf("step start replicas: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("step start workers: find the bench binary: %w", err)
	}
	targets := make([]string, cfg.Replicas)
	for r, s := range run.replicas {
		targets[r] = s.wsURL()
	}
	workers := (cfg.Computers + cfg.PerWorker - 1) / cfg.PerWorker
	for first := 0; first < cfg.Computers; first += cfg.PerWorker {
		spec := WorkerSpec{First: first, Count: min(cfg.PerWorker, cfg.Computers-first), PerAddress: cfg.PerAddress,
			Targets: targets, DialConcurrency: max(1, cfg.DialConcurrency/workers)}
		w, err := startWorker(self, "worker "+strconv.Itoa(len(run.workers)+1), spec)
		if err != nil {
			return fmt.Errorf("step start workers: %w", err)
		}
		run.workers = append(run.workers, w)
	}
	fmt.Fprintf(run.progress, "%d replicas, %d workers\n", len(run.replicas), len(run.workers))
	return nil
}

// startReplicas starts every replica (all at once) and returns when all answer /healthz.
func (run *scaleRun) startReplicas(ctx context.Context) (time.Duration, error) {
	run.replicas = make([]*server, run.cfg.Replicas)
	errs := make([]error, run.cfg.Replicas)
	t0 := time.Now()
	var wg sync.WaitGroup
	for r := range run.cfg.Replicas {
		wg.Go(func() {
			env := []string{
				"SANDBOX_MAX_CONNECTIONS=" + strconv.Itoa(run.held[r]+connectionSpare),
				"SANDBOX_DATA_DIR=" + filepath.Join(run.cfg.WorkDir, run.names[r]),
			}
			profEnv, prof, err := profileEnv(run.cfg.ProfileDir, run.names[r])
			if err != nil {
				errs[r] = err
				return
			}
			args := []string{"--listen", run.addrs[r], "--nats", run.nats.URL, "--replica", run.names[r]}
			run.replicas[r], errs[r] = startServerWithin(ctx, ScaleStartTimeout, "replica "+run.names[r], run.addrs[r], run.bin, args, append(env, profEnv...))
			if run.replicas[r] != nil {
				run.replicas[r].prof = prof
			}
		})
	}
	wg.Wait()
	return time.Since(t0), errors.Join(errs...)
}

// stopReplicas stops every replica (SIGTERM, all at once; SIGKILL if it outlives
// ScaleStopTimeout) and returns when all exited, with each replica's own stop time by name.
// With a ProfileDir, each replica's stop that lasts longer than stopProfileWindow is profiled
// over that window; a profile that could not be taken is named in the error.
func (run *scaleRun) stopReplicas() (time.Duration, map[string]time.Duration, error) {
	var profErrs []error
	each := make(map[string]time.Duration, len(run.replicas))
	var mu sync.Mutex
	took, err := run.endReplicas(func(s *server) error {
		t0 := time.Now()
		defer func() {
			mu.Lock()
			each[run.nameOf(s)] = time.Since(t0)
			mu.Unlock()
		}()
		if run.cfg.ProfileDir == "" {
			return s.proc.Stop(ScaleStopTimeout)
		}
		profErr := s.prof.start()
		stopped := make(chan error, 1)
		go func() { stopped <- s.proc.Stop(ScaleStopTimeout) }()
		if profErr == nil {
			select {
			case err := <-stopped: // a quick stop: nothing to see, and nobody left to ask
				fmt.Fprintf(run.progress, "%s stopped within %s: no stop profile\n", s.name, stopProfileWindow)
				return err
			case <-time.After(stopProfileWindow):
			}
			profErr = s.prof.client.StopCPU(filepath.Join(run.cfg.ProfileDir, run.nameOf(s)+"-stop.cpu.pprof"))
			if profErr != nil {
				select {
				case err := <-stopped: // it exited as the profile was asked for
					fmt.Fprintf(run.progress, "%s stopped as its stop profile was taken: none\n", s.name)
					return err
				case <-time.After(time.Second):
				}
			}
		}
		if profErr != nil {
			mu.Lock()
			profErrs = append(profErrs, fmt.Errorf("%s: stop profile: %w", s.name, profErr))
			mu.Unlock()
		}
		return <-stopped
	})
	return took, each, errors.Join(append([]error{err}, profErrs...)...)
}

// nameOf is the --replica name of s.
func (run *scaleRun) nameOf(s *server) string {
	return strings.TrimPrefix(s.name, "replica ")
}

// killReplicas kills every replica at once (SIGKILL: a crash, or a host going down) and
// returns when all exited.
func (run *scaleRun) killReplicas() (time.Duration, error) {
	return run.endReplicas(func(s *server) error { return s.proc.Kill() })
}

// endReplicas ends every replica with end, all at once.
func (run *scaleRun) endReplicas(end func(*server) error) (time.Duration, error) {
	errs := make([]error, len(run.replicas))
	t0 := time.Now()
	var wg sync.WaitGroup
	for r, s := range run.replicas {
		if s != nil {
			wg.Go(func() {
				if err := end(s); err != nil {
					errs[r] = fmt.Errorf("%w\nlog tail:\n%s", err, s.log)
				}
			})
		}
	}
	wg.Wait()
	run.replicas = nil
	return time.Since(t0), errors.Join(errs...)
}

// stopAll stops the workers, the replicas and nats-server, whatever state the run is in.
func (run *scaleRun) stopAll() error {
	var errs []error
	var wg sync.WaitGroup
	werrs := make([]error, len(run.workers))
	for i, w := range run.workers {
		wg.Go(func() { werrs[i] = w.stop() })
	}
	wg.Wait()
	errs = append(errs, werrs...)
	if _, _, err := run.stopReplicas(); err != nil {
		errs = append(errs, err)
	}
	if run.nats != nil {
		if err := run.nats.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("nats-server: %w\nlog tail:\n%s", err, tail(run.nats.Log())))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("step stop: %w", err)
	}
	return nil
}

// measure runs the steps: connect, memory, hop sample, restart.
func (run *scaleRun) measure(ctx context.Context, res *ScaleResult) error {
	cfg := run.cfg
	res.Workers = len(run.workers)
	res.Replicas = make([]ReplicaFigures, cfg.Replicas)
	time.Sleep(cfg.Settle)
	var err error
	for r, s := range run.replicas {
		res.Replicas[r] = ReplicaFigures{Name: run.names[r], Computers: run.held[r]}
		if res.Replicas[r].RSSBefore, err = s.rss(); err != nil {
			return fmt.Errorf("step memory before: %s: %w", s.name, err)
		}
	}
	if res.NATSRSSBefore, err = readRSS(run.nats.Pid()); err != nil {
		return fmt.Errorf("step memory before: nats-server: %w", err)
	}

	fmt.Fprintf(run.progress, "connecting %d computers from %d addresses, all at once…\n", cfg.Computers, res.Addresses)
	for _, s := range run.replicas {
		if err := s.prof.start(); err != nil {
			return fmt.Errorf("step connect: %s: %w", s.name, err)
		}
	}
	t0 := time.Now()
	if err := run.connectAll(ctx); err != nil {
		return fmt.Errorf("step connect: %w", err)
	}
	res.ConnectTime = time.Since(t0)
	fmt.Fprintf(run.progress, "all connected and said hello in %s\n", res.ConnectTime.Round(time.Millisecond))
	if err := run.waitListed(ctx); err != nil {
		return fmt.Errorf("step connect: %w", err)
	}
	res.ListedTime = time.Since(t0)
	time.Sleep(cfg.Settle)
	if err := run.checkLive(ctx); err != nil {
		return fmt.Errorf("step memory: %w", err)
	}
	for r, s := range run.replicas {
		if res.Replicas[r].RSSAfter, err = s.rss(); err != nil {
			return fmt.Errorf("step memory: %s: %w", s.name, err)
		}
	}
	if res.NATSRSSAfter, err = readRSS(run.nats.Pid()); err != nil {
		return fmt.Errorf("step memory: nats-server: %w", err)
	}
	fmt.Fprintf(run.progress, "every replica lists every computer after %s; %.1f KiB per computer\n",
		res.ListedTime.Round(time.Millisecond), res.BytesPerComputer()/1024)
	// The profiles are taken after the RSS reading, which they would disturb.
	for _, s := range run.replicas {
		if err := s.prof.stopLive("connected"); err != nil {
			return fmt.Errorf("step memory: %s: %w", s.name, err)
		}
	}

	if cfg.Replicas >= 2 && cfg.HopSamples > 0 {
		fmt.Fprintf(run.progress, "hop sample: %d pings direct, %d through a second replica…\n", cfg.HopSamples, cfg.HopSamples)
		if res.Direct, res.Routed, err = run.hopSample(ctx); err != nil {
			return fmt.Errorf("step hop sample: %w", err)
		}
	}

	fmt.Fprintln(run.progress, "restart: killing every replica (SIGKILL)…")
	if res.KillTime, err = run.killReplicas(); err != nil {
		return fmt.Errorf("step restart: kill: %w", err)
	}
	if res.StartTime, err = run.startReplicas(ctx); err != nil {
		return fmt.Errorf("step restart: start: %w", err)
	}
	t1 := time.Now()
	if err := run.connectAll(ctx); err != nil {
		return fmt.Errorf("step restart: reconnect: %w", err)
	}
	res.ReconnectTime = time.Since(t1)
	if err := run.waitListed(ctx); err != nil {
		return fmt.Errorf("step restart: %w", err)
	}
	res.RelistedTime = time.Since(t1)
	time.Sleep(cfg.Settle)
	if err := run.checkLive(ctx); err != nil {
		return fmt.Errorf("step restart: %w", err)
	}
	for r, s := range run.replicas {
		if res.Replicas[r].RSSRestarted, err = s.rss(); err != nil {
			return fmt.Errorf("step restart: %s: %w", s.name, err)
		}
	}
	if res.NATSRSSRestarted, err = readRSS(run.nats.Pid()); err != nil {
		return fmt.Errorf("step restart: nats-server: %w", err)
	}
	fmt.Fprintf(run.progress, "restart: all %d back %s after every replica served\n", cfg.Computers, res.ReconnectTime.Round(time.Millisecond))

	// The graceful stop is a figure, not a step that fails the run: a replica that outlives
	// ScaleStopTimeout is killed and named in the report.
	fmt.Fprintln(run.progress, "stopping every replica (SIGTERM)…")
	var each map[string]time.Duration
	res.StopTime, each, err = run.stopReplicas()
	if err != nil {
		res.StopErr = firstLines(err.Error())
	}
	for r := range res.Replicas {
		res.Replicas[r].Stop = each[res.Replicas[r].Name]
	}
	return nil
}

// firstLines keeps the lines of a joined error that name what failed, not the log tails.
func firstLines(s string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(line, "replica ") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "; ")
}

// connectAll tells every worker at once to connect all its computers and waits for them all.
func (run *scaleRun) connectAll(ctx context.Context) error {
	errs := make([]error, len(run.workers))
	var wg sync.WaitGroup
	for i, w := range run.workers {
		wg.Go(func() {
			r, err := w.ask(ctx, cmdConnect, run.cfg.StepTimeout)
			if err == nil && r.Live != w.spec.Count {
				err = fmt.Errorf("%s: %d of its %d computers connected (closed by a gateway meanwhile: %v)", w.name, r.Live, w.spec.Count, r.Closed)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// checkLive asks every worker whether all its sockets are still open (none closed by a
// gateway since it connected).
func (run *scaleRun) checkLive(ctx context.Context) error {
	var errs []error
	for _, w := range run.workers {
		r, err := w.ask(ctx, cmdStatus, StopTimeout)
		if err == nil && r.Live != w.spec.Count {
			err = fmt.Errorf("%s: %d of its %d sockets still open (closed by a gateway: %v)", w.name, r.Live, w.spec.Count, r.Closed)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// waitListed polls every replica's /metrics until it counts its own computers and every other
// replica's (trapos_gateway_connected_computers, trapos_gateway_remote_computers), bounded by
// the step timeout.
func (run *scaleRun) waitListed(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, run.cfg.StepTimeout)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	for r, s := range run.replicas {
		want := map[string]float64{"trapos_gateway_connected_computers": float64(run.held[r])}
		if run.cfg.Replicas > 1 {
			want["trapos_gateway_remote_computers"] = float64(run.cfg.Computers - run.held[r])
		}
		for {
			got, err := metricValues(client, s.addr, want)
			if err == nil && mapsEqual(got, want) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s does not list every computer within %s: it counts %v of %v (%v)", s.name, run.cfg.StepTimeout, got, want, err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// metricValues reads the named metrics (summed over their labels) from addr's /metrics.
func metricValues(client *http.Client, addr string, names map[string]float64) (map[string]float64, error) {
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	got := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ = strings.Cut(name, "{")
		if _, wanted := names[name]; !wanted {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			got[name] += v
		}
	}
	return got, sc.Err()
}

// hopSample pings computers held by the first replica through its own HTTP API (direct) and
// through the second's (routed over NATS), one request at a time, each answer checked.
func (run *scaleRun) hopSample(ctx context.Context) (direct, routed Rate, err error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: RoundTripTimeout}
	defer client.CloseIdleConnections()
	held := min(run.cfg.PerAddress, run.cfg.Computers) // address 0's computers are on the first replica
	for i, via := range []*Rate{&direct, &routed} {
		s := run.replicas[i]
		samples := make([]time.Duration, 0, run.cfg.HopSamples)
		t0 := time.Now()
		for n := range run.cfg.HopSamples {
			id := traposID(n * 7919 % held)
			u := "http://" + s.addr + fmt.Sprintf(hopPath, url.PathEscape(id))
			t := time.Now()
			if err := postPing(ctx, client, u, id); err != nil {
				return direct, routed, fmt.Errorf("through %s: %w", s.name, err)
			}
			samples = append(samples, time.Since(t))
		}
		*via = rateOf([][]time.Duration{samples}, time.Since(t0))
	}
	return direct, routed, nil
}

// findNATSServer returns path if set, else nats-server from PATH, else one built from the
// module cache into dir (as tests/scaleout does).
func findNATSServer(ctx context.Context, path, dir string) (string, error) {
	if path != "" {
		return path, nil
	}
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p, nil
	}
	p, err := harness.BuildNATSServer(ctx, dir)
	if err != nil {
		return "", fmt.Errorf("no nats-server on PATH, and building it from the module cache failed (install it: go install github.com/nats-io/nats-server/v2@v2.15.2, docs/scale-out.md): %w", err)
	}
	return p, nil
}

// tail is the end of a long log, for an error message.
func tail(s string) string {
	if len(s) > logTailBytes {
		return s[len(s)-logTailBytes:]
	}
	return s
}
