package harness

import (
	"context"
	"slices"

	"trap-sandbox/testkit/daemonfake"
)

// Request types a TrapOS computer answers (docs/capabilities.md), as on the wire.
const (
	TypeComputerInfo = "computer.info"
	TypeLuaExec      = "lua.exec"
)

// The owner's settings (sandbox.allow_files).
const (
	AllowFilesNone  = daemonfake.AllowFilesNone
	AllowFilesRead  = daemonfake.AllowFilesRead
	AllowFilesWrite = daemonfake.AllowFilesWrite
)

// Reply is a computer's answer: Payload when Error is nil.
type Reply = daemonfake.Reply

// Daemon is a computer's daemon on a real socket: the answers are daemonfake's (the computer
// vocabulary as the Lua daemon gives it, held to the same table, trapos/tests/fixtures/
// vocabulary.json), and it can keep silent or watch requests as socket tests need.
type Daemon struct {
	daemonfake.Daemon
	// Silent lists types the daemon never answers (to provoke timeouts).
	Silent []string
	// OnRequest, if set, sees every gateway_request as it arrives (from the answering goroutine).
	OnRequest func(Frame)
}

// Serve connects to url, says hello with secret, and answers requests until ctx ends or the
// socket closes. It returns once connected; the returned function closes the socket and waits
// for the answering goroutine.
func (d *Daemon) Serve(ctx context.Context, url, secret string) (stop func(), err error) {
	c, err := Dial(ctx, url, d.TraposID())
	if err != nil {
		return nil, err
	}
	if err := c.MustHello(ctx, secret); err != nil {
		_ = c.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Answer(ctx, d.answer)
	}()
	return func() { _ = c.Close(); <-done }, nil
}

// Reply is the daemon's answer to a gateway_request f (nil: none), for a test that reads the
// socket itself (a computer that also sends requests of its own).
func (d *Daemon) Reply(f Frame) *Reply { return d.answer(f) }

func (d *Daemon) answer(f Frame) *Reply {
	if d.OnRequest != nil {
		d.OnRequest(f)
	}
	if slices.Contains(d.Silent, f.Type) {
		return nil
	}
	r := d.Daemon.Answer(f.Type, f.Payload)
	return &r
}

// Answer reads gateway_requests until reading fails (ctx's deadline, a closed socket) and
// answers each with handle; a nil answer leaves the request unanswered.
func (c *Computer) Answer(ctx context.Context, handle func(Frame) *Reply) error {
	return c.AnswerSeeing(ctx, handle, nil)
}

// AnswerSeeing is Answer that hands every other frame read (the gateway's answers to the
// computer's own requests) to seen (nil: skipped).
func (c *Computer) AnswerSeeing(ctx context.Context, handle func(Frame) *Reply, seen func(Frame)) error {
	for {
		f, err := c.Next(ctx)
		if err != nil {
			return err
		}
		if f.Event != EventGatewayRequest {
			if seen != nil {
				seen(f)
			}
			continue
		}
		r := handle(f)
		if r == nil {
			continue
		}
		msg := map[string]any{"event": EventComputerResponse, "traposSenderId": c.TraposID,
			"messageId": f.MessageID, "type": f.Type, "ok": r.Error == nil}
		if r.Error != nil {
			msg["error"] = r.Error
		} else {
			msg["payload"] = r.Payload
		}
		if err := c.WriteJSON(msg); err != nil {
			return err
		}
	}
}
