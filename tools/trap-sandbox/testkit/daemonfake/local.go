package daemonfake

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
)

// Local is a computer.Transport to one Daemon in this process, as the gateway is to a
// connected computer, for the packages built on internal/computer. Its hooks break a
// sequence at any step, and it logs what it was asked. Set the fields before the first
// request.
type Local struct {
	*Daemon
	// List is the computer list Computers returns (the Daemon's own record by default).
	List []computer.Computer
	// Before runs before each request reaches the daemon, After once it has been answered.
	// Either may return an error, which the request then returns (Before: never served;
	// After: served, the answer lost). step counts requests from 1.
	Before, After func(ctx context.Context, step int, typ string) error

	mu    sync.Mutex
	log   []Request
	moved bool
}

// Request is one request Local received, its payload as on the wire.
type Request struct {
	Type    string
	Payload map[string]any
	Timeout time.Duration
}

// NewLocal returns a Local to computer "7:", which allows files and exec, holding files
// (paths and contents as the computer's bytes).
func NewLocal(files map[string]string) *Local {
	d := &Daemon{ID: 7, AllowFiles: AllowFilesWrite, AllowExec: true}
	d.MakeDir("/")
	for p, data := range files {
		d.PutFile(p, []byte(data))
	}
	return &Local{Daemon: d, List: []computer.Computer{{AccountID: "local", TraposID: d.TraposID()}}}
}

// Computers implements computer.Transport.
func (l *Local) Computers(context.Context) ([]computer.Computer, error) { return l.List, nil }

// Request implements computer.Transport: an id other than the Daemon's is not connected.
func (l *Local) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if traposID != l.TraposID() {
		return nil, computer.NotConnected(traposID)
	}
	var p map[string]any
	_ = json.Unmarshal(payload, &p) // the log shows what decodes; the daemon judges the rest
	l.mu.Lock()
	l.log = append(l.log, Request{typ, p, timeout})
	step := len(l.log)
	l.mu.Unlock()
	if l.Before != nil {
		if err := l.Before(ctx, step, typ); err != nil {
			return nil, err
		}
	}
	r := l.Answer(typ, payload)
	if typ == protocol.TypeFSMove && r.Error == nil {
		l.mu.Lock()
		l.moved = true
		l.mu.Unlock()
	}
	if l.After != nil {
		if err := l.After(ctx, step, typ); err != nil {
			return nil, err
		}
	}
	if r.Error != nil {
		return nil, &protocol.Error{Code: protocol.Code(r.Error.Code), Message: r.Error.Message, ByComputer: true}
	}
	return json.Marshal(r.Payload)
}

// NeverAnswer returns a Before hook under which the computer never answers a request of type
// typ (busy, or gone with its socket still open): the request ends at its own timeout on clk,
// as the gateway's does, failing as a deadline that passed, so that a test moves clk instead
// of waiting the timeout out. Requests of other types are served.
func (l *Local) NeverAnswer(typ string, clk *clock.Fake) func(ctx context.Context, step int, typ string) error {
	return func(ctx context.Context, step int, got string) error {
		if got != typ {
			return nil
		}
		ctx, cancel := clock.WithTimeout(ctx, clk, l.Log()[step-1].Timeout)
		defer cancel()
		<-ctx.Done()
		return context.Cause(ctx)
	}
}

// RunsButNeverTellsInfo is a computer whose runs succeed (lua.exec returns 1 and shell.run
// succeeds, each printing "opened") and which never answers computer.info (NeverAnswer on
// clk): what a run's relabel check (computer.RelabelCheckTimeout) meets on a computer busy or
// gone right after the run.
func RunsButNeverTellsInfo(clk *clock.Fake) *Local {
	d := NewLocal(nil)
	d.Exec = func(typ string, _ map[string]any) (any, *Error) {
		if typ == protocol.TypeShellRun {
			return map[string]any{"success": true, "output": "opened\n"}, nil
		}
		return map[string]any{"returns": []any{1}, "output": "opened\n"}, nil
	}
	d.Before = d.NeverAnswer(protocol.TypeComputerInfo, clk)
	return d
}

// Log returns the requests received, in order.
func (l *Local) Log() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.log...)
}

// Types lists the types of the requests received, in order.
func (l *Local) Types() []string {
	var out []string
	for _, r := range l.Log() {
		out = append(out, r.Type)
	}
	return out
}

// Moved reports whether an fs.move has succeeded on the computer.
func (l *Local) Moved() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.moved
}
