package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// stopSignals ask fakecraft to stop: Ctrl-C at `fakecraft run`, `kill`, the terminal
// closing. The computer is then turned off as --time-limit turns it off, so `fakecraft
// shell` gives the terminal back as it found it and the temporary directories are removed;
// dying of the signal would leave the terminal raw, on its alternate screen with mouse
// reports on, and the directories behind.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// signalNames say each stop signal as a person meets it.
var signalNames = map[os.Signal]string{
	os.Interrupt:    "SIGINT (Ctrl-C)",
	syscall.SIGTERM: "SIGTERM",
	syscall.SIGHUP:  "SIGHUP (the terminal closed)",
}

// signalled is a command context's cause when a stop signal ended it.
type signalled struct{ sig os.Signal }

func (s signalled) Error() string {
	if name, ok := signalNames[s.sig]; ok {
		return name
	}
	return s.sig.String()
}

// exitStatus is 128 plus the signal's number, as a shell reports a process it killed.
func (s signalled) exitStatus() int {
	if n, ok := s.sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return ExitFailed
}

// untilSignal is parent, ended (cause signalled) by the first stop signal. After that
// first one fakecraft no longer catches them: a second stops it at once, should turning
// the computer off hang. stop stops watching.
func untilSignal(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			signal.Stop(sigs)
			cancel(signalled{sig})
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
			cancel(context.Canceled)
		})
	}
}
