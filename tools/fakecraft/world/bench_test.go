package world_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"fakecraft/computer/machine"
	"fakecraft/world"
)

// BenchmarkWorldOfTenBoots boots ten computers with wireless modems in one world, each
// running a startup file that opens rednet and shuts the computer down, and waits for all
// of them: what a ten-computer world costs to bring up, the computers booting side by
// side on their own goroutines.
func BenchmarkWorldOfTenBoots(b *testing.B) {
	for b.Loop() {
		w, err := world.New(world.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var spec world.Spec
		for id := 1; id <= 10; id++ {
			spec.Computers = append(spec.Computers, world.ComputerSpec{ID: id,
				Position:    [3]float64{float64(id), 64, 0},
				Peripherals: map[string]string{"top": "modem"},
				Files:       map[string]string{"/startup.lua": `rednet.open("top") os.shutdown()`}})
		}
		if err := w.Build(spec); err != nil {
			b.Fatal(err)
		}
		machines := make([]*machine.Machine, 0, len(spec.Computers))
		for _, c := range spec.Computers {
			opts, err := w.Machine(spec, c)
			if err != nil {
				b.Fatal(err)
			}
			m, err := machine.New(opts)
			if err != nil {
				b.Fatal(err)
			}
			machines = append(machines, m)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var wg sync.WaitGroup
		for _, m := range machines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if res, err := m.Run(ctx); err != nil || res.Err != nil {
					b.Errorf("run: %v %v", err, res.Err)
				}
			}()
		}
		wg.Wait()
		cancel()
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
