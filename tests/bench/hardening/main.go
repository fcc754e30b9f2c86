// Command hardening measures the gateway binary, with its shipped limits, against the loads of
// issues 11 and 22: peak memory (VmRSS) while sockets with no credentials flood it without
// reading; the time 2 000 computers of one address take to get back in after a restart;
// computers with the password beside a loop on their own address and beside sockets that
// never say hello from many addresses; and how fast wrong secrets are answered, or can be
// tried, from many addresses and from one.
//
//	go run ./tests/bench/hardening [-hostile 250] [-flood 10s] [-storm 2000] [-neighbours 17] [-attack 5s] [-only-admission]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"tests/bench/internal/bench"
)

// stormTarget is issue 11's target for the restart storm.
const stormTarget = 10 * time.Second

// exitMissed is the exit status when the run completed but a figure missed its target.
const exitMissed = 3

func main() {
	cfg := bench.HardeningConfig{Progress: os.Stderr}
	flag.IntVar(&cfg.Hostile, "hostile", 250, "sockets flooding before hello without reading")
	flag.DurationVar(&cfg.Flood, "flood", 10*time.Second, "how long they flood")
	flag.IntVar(&cfg.Storm, "storm", 2000, "computers of one address reconnecting after a restart")
	adm := bench.AdmissionConfig{Progress: os.Stderr}
	flag.IntVar(&adm.Neighbours, "neighbours", 17, "computers with the password trying beside each attack (daemon-style)")
	flag.IntVar(&adm.LoopWorkers, "loop-workers", 16, "goroutines of the loop on the computers' address")
	flag.IntVar(&adm.Holders, "holders", 10, "addresses holding sockets that never say hello")
	flag.IntVar(&adm.HoldEach, "hold-each", 300, "sockets each holding address keeps open")
	flag.Float64Var(&adm.HoldRate, "hold-rate", 100, "sockets each holding address opens a second")
	flag.IntVar(&adm.HoldCap, "hold-cap", 2000, "--max-connections of the gateway the holders face")
	flag.IntVar(&adm.Guessers, "guessers", 40, "addresses guessing secrets, each waiting for its answers")
	flag.DurationVar(&adm.Attack, "attack", 5*time.Second, "how long each attack runs before the computers try, and each guessing phase")
	flag.IntVar(&adm.SilenceWorkers, "silence-workers", 16, "goroutines of one address guessing, each taking silence for a wrong secret")
	flag.DurationVar(&adm.Silence, "silence", 100*time.Millisecond, "how long each waits for an answer")
	onlyAdmission := flag.Bool("only-admission", false, "skip the flood and the restart storm")
	flag.Parse()
	dir, err := os.MkdirTemp("", "trapos-hardening-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hardening:", err)
		os.Exit(1)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	cfg.WorkDir, adm.WorkDir = dir, dir
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var res bench.HardeningResult
	if !*onlyAdmission {
		if res, err = bench.Hardening(ctx, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "hardening:", err)
			os.Exit(1)
		}
	}
	admRes, err := bench.Admission(ctx, adm)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hardening:", err)
		os.Exit(1)
	}
	fmt.Printf("| figure | value |\n|---|---|\n")
	if !*onlyAdmission {
		fmt.Printf("| VmRSS before the flood | %.1f MB |\n", float64(res.RSSBefore)/1e6)
		fmt.Printf("| peak VmRSS, %d hostile sockets at a time for %s | %.1f MB |\n", cfg.Hostile, cfg.Flood, float64(res.RSSPeak)/1e6)
		fmt.Printf("| hostile sockets opened / bytes they sent | %d / %.1f MB |\n", res.HostileSockets, float64(res.HostileBytes)/1e6)
		fmt.Printf("| %d computers of one address back after a restart | %.2f s (target ≤ %s) |\n", cfg.Storm, res.StormBack.Seconds(), stormTarget)
		fmt.Printf("| upgrades refused meanwhile | %d |\n", res.StormRefused)
	}
	neighbours := func(name string, f bench.NeighbourFigures) {
		fmt.Printf("| %s: sockets opened a second / gateway CPU | %.0f / %.2f cores |\n", name, f.AttackRate, f.GatewayCPU)
		fmt.Printf("| %s: computers in on their first try (target: all) / within 2 min | %d / %d of %d (%d tries; slowest %.2f s) |\n",
			name, f.FirstTry, f.In, adm.Neighbours, f.Tries, f.Slowest.Seconds())
	}
	neighbours(fmt.Sprintf("loop of %d workers on the computers' address", adm.LoopWorkers), admRes.Loop)
	neighbours(fmt.Sprintf("%d addresses holding sockets without hello (--max-connections %d)", adm.Holders, adm.HoldCap), admRes.Spread)
	fmt.Printf("| wrong-secret answers a second, %d addresses waiting for them | %.1f |\n", adm.Guessers, admRes.Answered)
	fmt.Printf("| secrets tried a second from one address, %d at a time, silence (%s) taken for wrong | %.0f |\n",
		adm.SilenceWorkers, adm.Silence, admRes.SilenceGuesses)
	if res.StormBack > stormTarget || admRes.Loop.FirstTry < adm.Neighbours || admRes.Spread.FirstTry < adm.Neighbours {
		os.Exit(exitMissed)
	}
}
