// Command hardening measures the gateway binary, with its shipped limits, against the two
// loads of issue 11: peak memory (VmRSS) while sockets with no credentials flood it without
// reading, and the time 2 000 computers of one address take to get back in after a restart.
//
//	go run ./tests/bench/hardening [-hostile 250] [-flood 10s] [-storm 2000]
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

// stormTarget is the target for the restart storm.
const stormTarget = 10 * time.Second

func main() {
	cfg := bench.HardeningConfig{Progress: os.Stderr}
	flag.IntVar(&cfg.Hostile, "hostile", 250, "sockets flooding before hello without reading")
	flag.DurationVar(&cfg.Flood, "flood", 10*time.Second, "how long they flood")
	flag.IntVar(&cfg.Storm, "storm", 2000, "computers of one address reconnecting after a restart")
	flag.Parse()
	dir, err := os.MkdirTemp("", "trapos-hardening-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hardening:", err)
		os.Exit(1)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	cfg.WorkDir = dir
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Hardening(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hardening:", err)
		os.Exit(1)
	}
	fmt.Printf("| figure | value |\n|---|---|\n")
	fmt.Printf("| VmRSS before the flood | %.1f MB |\n", float64(res.RSSBefore)/1e6)
	fmt.Printf("| peak VmRSS, %d hostile sockets at a time for %s | %.1f MB |\n", cfg.Hostile, cfg.Flood, float64(res.RSSPeak)/1e6)
	fmt.Printf("| hostile sockets opened / bytes they sent | %d / %.1f MB |\n", res.HostileSockets, float64(res.HostileBytes)/1e6)
	fmt.Printf("| %d computers of one address back after a restart | %.2f s (target ≤ %s) |\n", cfg.Storm, res.StormBack.Seconds(), stormTarget)
	fmt.Printf("| upgrades refused meanwhile | %d |\n", res.StormRefused)
	if res.StormBack > stormTarget {
		os.Exit(3)
	}
}
