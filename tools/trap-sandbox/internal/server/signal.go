package server

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// StopSignal is the cause of a context that NotifyStop ended: the signal that stops the
// gateway, so that its "shutting down" line says who stopped it. A gateway an operator started
// from an SSH session stops when that session closes (SIGHUP), and the log said only
// "shutting down", the same words as a systemctl stop.
type StopSignal struct{ Signal os.Signal }

func (s StopSignal) Error() string { return s.Name() + " received" }

// Name is the signal's name as kill and systemd print it (SIGTERM).
func (s StopSignal) Name() string {
	if known, ok := stopSignals[s.Signal]; ok {
		return known.name
	}
	return s.Signal.String()
}

// likely says where such a signal usually comes from, and for a hangup how to keep the
// gateway up.
func (s StopSignal) likely() string { return stopSignals[s.Signal].likely }

// stopSignals names each signal that stops the gateway, with where it usually comes from.
var stopSignals = map[os.Signal]struct{ name, likely string }{
	syscall.SIGTERM: {"SIGTERM", "a service manager's stop (systemctl stop), or kill"},
	syscall.SIGINT:  {"SIGINT", "Ctrl-C in the terminal that started it"},
	syscall.SIGHUP:  {"SIGHUP", "the terminal or SSH session that started it closed: run it as a service to keep it up (tools/trap-sandbox/README.md)"},
}

// NotifyStop is signal.NotifyContext whose context's cause is a StopSignal.
func NotifyStop(parent context.Context, signals ...os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, signals...)
	go func() {
		select {
		case sig := <-ch:
			cancel(StopSignal{Signal: sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(context.Canceled)
	}
}

// stopAttrs are the "shutting down" line's attributes naming the signal that ended ctx, if
// one did.
func stopAttrs(ctx context.Context) []any {
	if sig, ok := context.Cause(ctx).(StopSignal); ok {
		return []any{"signal", sig.Name(), "likely", sig.likely()}
	}
	return nil
}
