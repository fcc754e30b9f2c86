// Command bench measures the trap-sandbox gateway against a bare gorilla/websocket baseline:
// probe_gateway and HTTP ping round trips, memory per idle connection, and connect time.
//
//	go run ./tests/bench [-computers 50] [-duration 3s] [-rounds 6] [-self-check] [-only-http] [-http-clients 16] [-idle 10000] [-profile-dir DIR]
//
// With -scale-out N it runs the scale measurement instead: N idle computers over -replicas
// gateway replicas on one nats-server, connected from client worker processes, and a restart
// of every replica (docs/performance.md, Scale).
//
//	go run ./tests/bench -scale-out 100000 -replicas 6
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"tests/bench/internal/bench"
)

func main() {
	if addr := os.Getenv(bench.BaselineListenEnv); addr != "" {
		os.Exit(serveBaseline(addr))
	}
	if spec := os.Getenv(bench.ScaleWorkerEnv); spec != "" {
		os.Exit(serveScaleWorker(spec))
	}
	os.Exit(run())
}

// exitMissed is the exit status when the run completed but a figure missed its target.
const exitMissed = 3

func run() int {
	cfg := bench.Config{Progress: os.Stderr}
	flag.IntVar(&cfg.Computers, "computers", 50, "sockets sending requests back-to-back in (a) and answering pings in (b)")
	flag.DurationVar(&cfg.Duration, "duration", 3*time.Second, "length of each throughput phase")
	flag.IntVar(&cfg.Rounds, "rounds", 6, "rounds alternating the throughput phases between gateway and baseline, each going first in every other round (median reported)")
	flag.IntVar(&cfg.HTTPClients, "http-clients", 16, "concurrent HTTP clients in (b)")
	flag.IntVar(&cfg.IdleComputers, "idle", 10000, "idle authenticated sockets in (c) and (d)")
	flag.IntVar(&cfg.DialConcurrency, "dial-concurrency", 200, "dials in flight in (d)")
	flag.BoolVar(&cfg.SelfCheck, "self-check", false, "put a second baseline in the gateway's place: every ratio is then the bench's own bias and noise (no target is judged)")
	flag.BoolVar(&cfg.BaselineUUIDIDs, "baseline-uuid-ids", false, "have the baseline mint random UUID message ids, as the gateway must, instead of a short counter: what the ids cost (no target is judged)")
	flag.BoolVar(&cfg.OnlyHTTP, "only-http", false, "run phase (b), the HTTP API's ping, alone (no (a), (c) or (d)); only its targets are judged: for comparing builds of the host API's path")
	flag.StringVar(&cfg.BaselineGateway, "baseline-gateway", "", "put this gateway binary (another build of it) in the baseline's place: every ratio is then the gateway built here against that build (no target is judged)")
	flag.StringVar(&cfg.ProfileDir, "profile-dir", "", "save a CPU, heap and goroutine profile of each server in each phase to this directory (created if missing); with -scale-out, of each replica's connects and of its graceful stop")
	var scale bench.ScaleConfig
	flag.IntVar(&scale.Computers, "scale-out", 0, "instead of the phases above: this many idle computers over -replicas gateway replicas on one nats-server, then a restart of every replica")
	flag.IntVar(&scale.Replicas, "replicas", 6, "gateway replicas of -scale-out (each holds at most the open-files limit less 3 000 sockets)")
	flag.IntVar(&scale.PerAddress, "per-address", bench.DefaultPerAddress, "computers of -scale-out sharing one source address (one Minecraft server) and one replica")
	flag.IntVar(&scale.HopSamples, "hop-samples", 200, "host pings of -scale-out through the HTTP API to computers of another replica (and as many direct)")
	flag.StringVar(&scale.NATSServer, "nats-server", "", "nats-server binary of -scale-out (default: from PATH, else built from the module cache)")
	flag.Parse()
	if scale.Computers != 0 {
		scale.DialConcurrency = cfg.DialConcurrency
		scale.ProfileDir = cfg.ProfileDir
		return runScale(scale)
	}
	if cfg.Computers < 1 || cfg.Rounds < 1 || cfg.HTTPClients < 1 || cfg.IdleComputers < 1 || cfg.DialConcurrency < 1 || cfg.Duration <= 0 {
		fmt.Fprintln(os.Stderr, "bench: every count must be at least 1 and the duration positive")
		return 2
	}
	if cfg.BaselineGateway != "" && (cfg.SelfCheck || cfg.BaselineUUIDIDs || cfg.ProfileDir != "") {
		fmt.Fprintln(os.Stderr, "bench: -baseline-gateway takes the baseline's place: it goes with neither -self-check, -baseline-uuid-ids nor -profile-dir")
		return 2
	}
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 2
		}
	}
	if err := raiseFileLimit(cfg.IdleComputers + cfg.Computers); err != nil {
		// Past the limit sockets fail halfway through the run: say so before it starts.
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "trapos-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	cfg.WorkDir = dir
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	missed := bench.Report(os.Stdout, cfg, res)
	if cfg.SelfCheck {
		fmt.Fprintln(os.Stderr, "bench: self-check: the baseline measured against itself, so each ratio is the bench's own bias and noise; no target is judged")
		return 0
	}
	if cfg.BaselineGateway != "" {
		fmt.Fprintln(os.Stderr, "bench: -baseline-gateway: two builds of the gateway measured against each other; no target is judged")
		return 0
	}
	if cfg.BaselineUUIDIDs {
		fmt.Fprintln(os.Stderr, "bench: -baseline-uuid-ids: the baseline minted UUID message ids; no target is judged (they are the default baseline's)")
		return 0
	}
	if len(missed) > 0 {
		fmt.Fprintf(os.Stderr, "bench: %d target(s) missed: %s\n", len(missed), strings.Join(missed, "; "))
		return exitMissed
	}
	return 0
}

// runScale runs -scale-out.
func runScale(cfg bench.ScaleConfig) int {
	if cfg.Computers < 1 || cfg.Replicas < 1 || cfg.PerAddress < 1 || cfg.HopSamples < 0 || cfg.DialConcurrency < 1 {
		fmt.Fprintln(os.Stderr, "bench: -scale-out, -replicas, -per-address and -dial-concurrency must be at least 1, -hop-samples at least 0")
		return 2
	}
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 2
		}
	}
	// Every process of the run (replicas, workers) inherits the soft limit: the hard one.
	if err := raiseFileLimit(0); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "trapos-bench-scale-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	cfg.WorkDir = dir
	cfg.Progress = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.RunScale(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: scale-out:", err)
		return 1
	}
	if missed := bench.ReportScale(os.Stdout, cfg, res); len(missed) > 0 {
		fmt.Fprintf(os.Stderr, "bench: %d target(s) missed: %s\n", len(missed), strings.Join(missed, "; "))
		return exitMissed
	}
	return 0
}

// serveScaleWorker is the child mode of -scale-out: hold a share of the computers' sockets as
// the bench tells it on stdin, until stdin ends.
func serveScaleWorker(spec string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench.ScaleWorkerMain(ctx, spec); err != nil {
		fmt.Fprintln(os.Stderr, "scale worker:", err)
		return 1
	}
	return 0
}

// serveBaseline is the child mode: serve the baseline until SIGTERM.
func serveBaseline(addr string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench.ServeBaseline(ctx, addr); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		return 1
	}
	return 0
}

// raiseFileLimit lifts the soft RLIMIT_NOFILE to the hard limit, and the hard limit to
// sockets plus bench.FileSpare if it is below (only root may: up to fs.nr_open). The bench holds
// the client side of every socket and each server the other; the servers inherit the limit.
func raiseFileLimit(sockets int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("get file limit: %w", err)
	}
	need := uint64(sockets + bench.FileSpare)
	if lim.Max < need {
		raised := syscall.Rlimit{Cur: need, Max: need}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			return nil
		}
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("raise file limit: %w", err)
	}
	if lim.Max < need {
		return fmt.Errorf("the open-files limit is %d and cannot be raised (raising it takes root with CAP_SYS_RESOURCE); this run needs %d for the bench and for each server: raise it (ulimit -Hn %d as root) or lower -idle", lim.Max, need, need)
	}
	return nil
}
