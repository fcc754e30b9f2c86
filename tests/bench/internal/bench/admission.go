package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"tests/internal/harness"
)

// AdmissionConfig sizes the admission figures of issue 22: computers with the password beside
// attackers without it, and guessers. Every phase runs a fresh gateway binary with its shipped
// limits and a password; the computers share 127.0.0.1, attackers elsewhere use other
// loopback addresses.
type AdmissionConfig struct {
	// Neighbours is how many computers with the password connect, daemon-style (a try, then
	// 5-6 s before the next), beside each attack.
	Neighbours int
	// LoopWorkers is how many goroutines run the loop on the computers' own address; each
	// opens and drops sockets as fast as it can (the campaign's loop: 2 400 a second).
	LoopWorkers int
	// Holders is how many addresses open sockets that never say hello, HoldRate a second each,
	// keeping the newest HoldEach of them open, against a gateway with --max-connections
	// HoldCap (the shipped 20 000 needs more open files than a test machine allows).
	Holders, HoldEach, HoldCap int
	HoldRate                   float64
	// Guessers is how many addresses send wrong secrets and wait for each answer.
	Guessers int
	// Attack is how long each attack runs before the neighbours start, and bounds how long
	// the guessing phases run.
	Attack time.Duration
	// SilenceWorkers is how many goroutines of one address guess taking silence for a wrong
	// secret, Silence how long each waits for an answer before it does.
	SilenceWorkers int
	Silence        time.Duration
	WorkDir        string
	// Progress receives progress lines; nil discards them.
	Progress io.Writer
}

// NeighbourFigures are how the computers with the password fared beside one attack.
type NeighbourFigures struct {
	// In counts the computers in within neighboursWithin, FirstTry those in on their first
	// try; Slowest is the longest one of them took from its first try to its good hello;
	// Tries counts all tries.
	In, FirstTry, Tries int
	Slowest             time.Duration
	// AttackRate is the attack's sockets per second, GatewayCPU the gateway's CPU time per
	// second of it (1 = one core).
	AttackRate, GatewayCPU float64
}

// AdmissionResult holds the figures.
type AdmissionResult struct {
	// Loop: the computers beside a loop on their own address that opens and drops sockets,
	// every other one with a wrong hello.
	Loop NeighbourFigures
	// Spread: the computers beside sockets that never say hello from Holders addresses.
	Spread NeighbourFigures
	// Answered is how many wrong-secret answers a second Guessers addresses got, each waiting
	// for its answers (the gateway-wide budget's figure).
	Answered float64
	// SilenceGuesses is how many secrets a second one address tried, taking no answer within
	// Silence for "wrong" (what no budget of answers can slow: docs/protocol.md).
	SilenceGuesses float64
}

// admissionPassword is SANDBOX_PASSWORD in the admission phases.
const admissionPassword = "bench-admission-pw"

// neighboursWithin bounds how long the computers keep trying beside an attack.
const neighboursWithin = 2 * time.Minute

// Admission runs the four phases against the gateway binary.
func Admission(ctx context.Context, cfg AdmissionConfig) (res AdmissionResult, err error) {
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	fmt.Fprintln(progress, "building the gateway…")
	bin, err := harness.BuildGateway(ctx, cfg.WorkDir, false)
	if err != nil {
		return res, err
	}
	phase := func(name string, extra []string, run func(gw *server) error) error {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		args := append([]string{"--listen", addr, "--password", admissionPassword, "--log-level", "error"}, extra...)
		gw, err := startServer(ctx, "gateway", addr, bin, args, []string{"OPENCODE_URL=http://127.0.0.1:1", gatewayDataEnv(cfg.WorkDir)})
		if err != nil {
			return err
		}
		fmt.Fprintln(progress, name+"…")
		return errors.Join(run(gw), gw.stop())
	}
	err = phase(fmt.Sprintf("a loop of %d workers on the computers' address, %d computers beside it", cfg.LoopWorkers, cfg.Neighbours), nil,
		func(gw *server) (err error) {
			res.Loop, err = beside(ctx, gw, cfg, func(ctx context.Context, opened *atomic.Int64) {
				var wg sync.WaitGroup
				for w := range cfg.LoopWorkers {
					wg.Go(func() { loopSockets(ctx, gw.wsURL(), w, opened) })
				}
				wg.Wait()
			})
			return err
		})
	if err != nil {
		return res, err
	}
	err = phase(fmt.Sprintf("%d addresses holding sockets without hello, %d computers beside them", cfg.Holders, cfg.Neighbours),
		[]string{"--max-connections", fmt.Sprint(cfg.HoldCap)},
		func(gw *server) (err error) {
			res.Spread, err = beside(ctx, gw, cfg, func(ctx context.Context, opened *atomic.Int64) {
				var wg sync.WaitGroup
				for h := range cfg.Holders {
					wg.Go(func() { holdSockets(ctx, gw.wsURL(), fmt.Sprintf("127.0.1.%d", h+1), cfg, opened) })
				}
				wg.Wait()
			})
			return err
		})
	if err != nil {
		return res, err
	}
	err = phase(fmt.Sprintf("%d addresses guessing, each waiting for its answers", cfg.Guessers), nil, func(gw *server) error {
		res.Answered = guessRate(ctx, cfg.Attack, cfg.Guessers, func(ctx context.Context, g int, n *atomic.Int64) {
			waitingGuesser(ctx, gw.wsURL(), fmt.Sprintf("127.0.2.%d", g+1), n)
		})
		return nil
	})
	if err != nil {
		return res, err
	}
	err = phase("one address guessing, taking silence for a wrong secret", nil, func(gw *server) error {
		res.SilenceGuesses = guessRate(ctx, cfg.Attack, cfg.SilenceWorkers, func(ctx context.Context, _ int, n *atomic.Int64) {
			silenceGuesser(ctx, gw.wsURL(), cfg.Silence, n)
		})
		return nil
	})
	return res, err
}

// beside runs attack for cfg.Attack, then the neighbours daemon-style until all are in (at
// most neighboursWithin), and measures them, the attack's rate and the gateway's CPU.
func beside(ctx context.Context, gw *server, cfg AdmissionConfig, attack func(context.Context, *atomic.Int64)) (NeighbourFigures, error) {
	var fig NeighbourFigures
	attackCtx, stopAttack := context.WithCancel(ctx)
	defer stopAttack()
	var opened atomic.Int64
	attackDone := make(chan struct{})
	go func() {
		defer close(attackDone)
		attack(attackCtx, &opened)
	}()
	defer func() { stopAttack(); <-attackDone }()
	cpu0, err := gw.cpu()
	if err != nil {
		return fig, err
	}
	start := time.Now()
	select {
	case <-time.After(cfg.Attack):
	case <-ctx.Done():
		return fig, ctx.Err()
	}

	neighboursCtx, cancel := context.WithTimeout(ctx, neighboursWithin)
	defer cancel()
	type outcome struct {
		tries int
		took  time.Duration
		c     *harness.Computer
	}
	outcomes := make([]outcome, cfg.Neighbours)
	var wg sync.WaitGroup
	for i := range cfg.Neighbours {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(i), 22))
			first := time.Now()
			for tries := 1; neighboursCtx.Err() == nil; tries++ {
				if c := neighbour(neighboursCtx, gw.wsURL(), fmt.Sprintf("%d:neighbour", i+1)); c != nil {
					outcomes[i] = outcome{tries, time.Since(first), c}
					return
				}
				select {
				case <-time.After(reconnectDelay(rnd)): // the daemon's wait
				case <-neighboursCtx.Done():
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, err := gw.cpu()
	if err != nil {
		return fig, err
	}
	fig.AttackRate = float64(opened.Load()) / elapsed.Seconds()
	fig.GatewayCPU = (cpu1 - cpu0).Seconds() / elapsed.Seconds()
	if err := ctx.Err(); err != nil {
		return fig, err
	}
	for _, o := range outcomes {
		if o.c == nil {
			continue // never in
		}
		_ = o.c.Close()
		fig.In++
		fig.Tries += o.tries
		fig.Slowest = max(fig.Slowest, o.took)
		if o.tries == 1 {
			fig.FirstTry++
		}
	}
	return fig, nil
}

// neighbour is one try of a computer with the password: the socket on success, else nil.
func neighbour(ctx context.Context, wsURL, id string) *harness.Computer {
	c, err := harness.Dial(ctx, wsURL, id)
	if err != nil {
		return nil
	}
	helloCtx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	if c.MustHello(helloCtx, admissionPassword) != nil {
		_ = c.Close()
		return nil
	}
	return c
}

// wrongHello is a hello frame with a wrong (empty) secret.
var wrongHello = map[string]any{"event": harness.EventComputerRequest, "traposSenderId": "66:loop", "messageId": "h",
	"type": harness.TypeHello, "payload": map[string]any{"traposId": "66:loop", "secret": ""}}

// loopSockets opens and drops sockets from 127.0.0.1 as fast as it can until ctx ends, a
// wrong hello on every other one.
func loopSockets(ctx context.Context, wsURL string, worker int, opened *atomic.Int64) {
	for i := worker; ctx.Err() == nil; i++ {
		c, err := harness.Dial(ctx, wsURL, "66:loop")
		if err != nil {
			continue
		}
		opened.Add(1)
		if i%2 == 0 {
			_ = c.WriteJSON(wrongHello)
		}
		_ = c.Close()
	}
}

// holdSockets opens sockets from ip that never say hello, cfg.HoldRate a second, keeping the
// newest cfg.HoldEach open, until ctx ends.
func holdSockets(ctx context.Context, wsURL, ip string, cfg AdmissionConfig, opened *atomic.Int64) {
	var held []*harness.Computer
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	tick := time.NewTicker(time.Duration(float64(time.Second) / cfg.HoldRate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c, err := harness.DialFrom(ctx, wsURL, "", ip)
		if err != nil {
			continue
		}
		opened.Add(1)
		held = append(held, c)
		if len(held) > cfg.HoldEach {
			_ = held[0].Close()
			held = held[1:]
		}
	}
}

// guessRate runs workers guessers for d and returns the guesses they counted per second.
func guessRate(ctx context.Context, d time.Duration, workers int, guesser func(context.Context, int, *atomic.Int64)) float64 {
	guessCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var n atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() { guesser(guessCtx, w, &n) })
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}

// waitingGuesser sends wrong secrets from ip, one socket each, and counts every answer it
// waits for, until ctx ends.
func waitingGuesser(ctx context.Context, wsURL, ip string, answered *atomic.Int64) {
	for ctx.Err() == nil {
		c, err := harness.DialFrom(ctx, wsURL, "7:", ip)
		if err != nil {
			continue
		}
		if f, err := c.Hello(ctx, "guess"); err == nil && f.Error != nil && f.Error.Code == "unauthorized" {
			answered.Add(1)
		}
		_ = c.Close()
	}
}

// silenceGuesser sends wrong secrets from 127.0.0.1 and takes no answer within silence for a
// wrong secret (a right one is answered at once), counting every secret so decided.
func silenceGuesser(ctx context.Context, wsURL string, silence time.Duration, guesses *atomic.Int64) {
	for ctx.Err() == nil {
		c, err := harness.Dial(ctx, wsURL, "7:")
		if err != nil {
			continue
		}
		helloCtx, cancel := context.WithTimeout(ctx, silence)
		f, err := c.Hello(helloCtx, "guess")
		cancel()
		if (err != nil && ctx.Err() == nil) || (err == nil && f.Error != nil) {
			guesses.Add(1) // silence, or an answer: either way the secret is known wrong
		}
		_ = c.Close()
	}
}
