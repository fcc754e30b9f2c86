package gateway

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
	"unicode/utf8"

	"trap-sandbox/internal/cctext"
	hostcomputer "trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
)

// MaxRequestTimeout caps how long a request may wait for a computer: computer.MaxTimeout, the
// host surfaces' cap, so that a caller cannot park a goroutine for long.
const MaxRequestTimeout = hostcomputer.MaxTimeout

// Response is a computer's answer to a gateway_request (its computer_response).
type Response struct {
	// OK is the computer's ok. When false, Error is set (code and message from the computer).
	OK bool
	// Type echoes the computer_response's type.
	Type string
	// Payload is a JSON object ({} when the computer sent none); meaningful when OK.
	Payload json.RawMessage
	Error   *protocol.Error
}

// Request sends a gateway_request of type typ to computer (accountID, traposID) and waits for
// its computer_response. payload nil, null or [] is sent as {}; any other non-object is refused.
//
// The wait ends at ctx's deadline, or after Config.RequestTimeout when ctx has none. A
// computer's answer, even ok:false, is returned as a Response with a nil error. Failures on the
// gateway's side are returned as a *protocol.Error (use protocol.CodeOf):
//   - not_connected: no such computer, or its socket closed or was replaced before it answered;
//   - timeout: no answer in time (a later answer is ignored);
//   - busy: MaxGatewayRequestsInFlight-1 host requests already wait on this computer (the
//     last slot is the gateway's own, for its idle probe), or its send queue is full (the
//     caller's burst; the computer stays connected);
//   - internal: the request cannot be sent (empty type, bad payload, frame above 128 KiB).
//
// If ctx is cancelled (not timed out), ctx.Err() is returned.
func (g *Gateway) Request(ctx context.Context, accountID, traposID, typ string, payload json.RawMessage) (Response, error) {
	payload, err := requestPayload(typ, payload)
	if err != nil {
		return Response{}, err
	}
	k := Key{AccountID: accountID, TraposID: traposID}
	if s := g.registry.Lookup(k); s != nil {
		return s.request(ctx, typ, payload, byHost) // the socket is here: no hop
	}
	if _, hasDeadline := ctx.Deadline(); !hasDeadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.cfg.RequestTimeout)
		defer cancel()
	}
	return g.registry.Route(ctx, k, typ, payload)
}

// requestPayload checks a host request before it is sent: it needs a type, and its payload
// becomes a JSON object (protocol.ObjectPayload).
func requestPayload(typ string, payload json.RawMessage) (json.RawMessage, error) {
	if typ == "" {
		return nil, protocol.Errorf(protocol.CodeInternal, "a request needs a type")
	}
	if !utf8.Valid(payload) {
		// Its frame would be no text frame, and the computer would close its socket (1007).
		// A host's text is CC's bytes by the text rule before it gets here (cctext.WireJSON).
		return nil, protocol.Errorf(protocol.CodeInternal, "the payload is not UTF-8 text, which a computer would answer by closing its socket")
	}
	return protocol.ObjectPayload(payload)
}

// RequestWithin is Request with the wait bounded by timeout as well as by ctx: what the host
// surfaces call with a caller's timeout. A timeout that passes is the timeout error, as ctx's
// deadline is. For a computer held here the bound is a timer rather than a derived context,
// which costs a host request less.
func (g *Gateway) RequestWithin(ctx context.Context, accountID, traposID, typ string, payload json.RawMessage, timeout time.Duration) (Response, error) {
	payload, err := requestPayload(typ, payload)
	if err != nil {
		return Response{}, err
	}
	k := Key{AccountID: accountID, TraposID: traposID}
	if s := g.registry.Lookup(k); s != nil {
		now := time.Now()
		deadline := now.Add(timeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		timer := startHostTimer(timeout)
		defer stopHostTimer(timer)
		return s.requestUntil(ctx, typ, payload, byHost, timer.C, now, deadline)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return g.registry.Route(ctx, k, typ, payload)
}

// hostTimers recycles RequestWithin's timers: a new timer is two allocations (itself and its
// channel) for every host request.
var hostTimers sync.Pool

// startHostTimer returns a timer that fires once after d, recycled when one is free.
func startHostTimer(d time.Duration) *time.Timer {
	if t, ok := hostTimers.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

// stopHostTimer stops t and keeps it for another request. Its channel is left empty: a timer
// stopped holds no value for its next user since Go 1.23, and the receive that empties it
// otherwise (GODEBUG=asynctimerchan=1) finds nothing either way when it fired and was read.
func stopHostTimer(t *time.Timer) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	hostTimers.Put(t)
}

// request sends a gateway_request on this socket for by and waits for the answer, as Request
// does; payload must already be a JSON object.
func (s *Session) request(ctx context.Context, typ string, payload json.RawMessage, by requester) (Response, error) {
	// Without a deadline of ctx's own the request times out after RequestTimeout on
	// Config.Clock (the idle probe's case, which liveness tests drive).
	var timeout <-chan time.Time
	deadline, hasDeadline := ctx.Deadline()
	if !hasDeadline {
		timer := s.gw.cfg.Clock.NewTimer(s.gw.cfg.RequestTimeout)
		defer timer.Stop()
		timeout = timer.C()
	}
	return s.requestUntil(ctx, typ, payload, by, timeout, time.Now(), deadline)
}

// requestUntil is request, the wait ending when ctx ends or timeout fires (nil: never).
// start is when the caller's wait began by the wall clock (one reading for the request's
// latency and its write's deadline: a clock read costs 70-120 ns on a VM); deadline is when
// it ends (zero: not known), which decides whether the caller may write the frame itself
// (enqueueRequest).
func (s *Session) requestUntil(ctx context.Context, typ string, payload json.RawMessage, by requester, timeout <-chan time.Time, start, deadline time.Time) (Response, error) {
	g := s.gw
	if err := s.olderClientsRefusal(typ, payload); err != nil {
		return Response{}, err
	}
	traposID := s.Key().TraposID
	messageID := newMessageID()
	// Encoded into a pooled buffer, which is free again once the frame is written, unless
	// the send queue keeps the frame (enqueueRequest).
	buf := encodeBuffers.Get().(*[]byte)
	frame, err := protocol.AppendFrame((*buf)[:0], protocol.Frame{
		Event:            protocol.EventGatewayRequest,
		TraposReceiverID: traposID,
		MessageID:        messageID,
		Type:             typ,
		Payload:          payload,
	})
	*buf = frame
	if err != nil {
		putEncodeBuffer(buf)
		return Response{}, protocol.Errorf(protocol.CodeInternal, "cannot send %s to %s: %v", typ, traposID, err)
	}

	wait, err := s.pending.add(messageID, by, typ, start)
	if err != nil {
		putEncodeBuffer(buf)
		if protocol.CodeOf(err) == protocol.CodeBusy {
			g.cfg.Metrics.limited(limitGatewayRequestsInFlight)
		}
		return Response{}, err
	}
	queued, err := s.enqueueRequest(frame, start, deadline)
	if !queued {
		putEncodeBuffer(buf)
	}
	if err != nil {
		s.pending.take(messageID)
		if errors.Is(err, errQueueFull) {
			// The host's burst filled the queue, not the computer: refuse the request and keep
			// the computer.
			g.cfg.Metrics.limited(limitSendQueueBytes)
			return Response{}, protocol.Errorf(protocol.CodeBusy,
				"the gateway's send queue to computer %s is full (%d bytes); retry shortly", traposID, g.cfg.SendQueueBytes)
		}
		return Response{}, err
	}
	g.cfg.Metrics.frameOut(protocol.EventGatewayRequest, typ)
	resp, err := awaitResponse(ctx, timeout, s, wait, messageID, traposID, typ, start)
	g.cfg.Metrics.requestDone(requestOutcome(resp, err), time.Since(start))
	if err == nil && resp.Error != nil {
		resp.Error = s.olderClientsError(typ, codeAsWord(traposID, typ, resp.Error))
	}
	return resp, err
}

// codeAsWord is e, a computer's ok:false to typ, with a code that is not a word
// (protocol.Code.IsWord) answered as internal: the computer's code and message follow the
// gateway's words, which say why, as the computer's words (WithHostWords). Every host surface
// shows a code as the protocol's word, ahead of the message it marks as the computer's: a
// code "timeout: computer 12:odd did not answer in time. The gateway adds: …" led an MCP
// tool error, unmarked. A program serving a type may answer any code (libsandboxserve), and
// a hostile client anything.
func codeAsWord(traposID, typ string, e *protocol.Error) *protocol.Error {
	if e.Code.IsWord() {
		return e
	}
	said := &protocol.Error{Code: protocol.CodeInternal, Message: string(e.Code) + ": " + e.Message}
	return said.WithHostWords(fmt.Sprintf("computer %s answered %s with an error code that is not a word "+
		"(a code is lowercase letters, digits and _, at most %d bytes), which the gateway passes on as internal; what it answered: ",
		cctext.ShowTraposID(traposID), typ, protocol.MaxCodeBytes), "")
}

// newMessageID mints a gateway_request's messageId: a random version 4 UUID, as
// docs/protocol.md says, drawn from the runtime's ChaCha8 generator rather than crypto/rand
// (a quarter of the cost). It must be unique, not secret: an answer only ever reaches the
// pending requests of the socket it came on.
func newMessageID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // the RFC 9562 variant
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	hex.Encode(s[9:13], b[4:6])
	hex.Encode(s[14:18], b[6:8])
	hex.Encode(s[19:23], b[8:10])
	hex.Encode(s[24:36], b[10:16])
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return string(s[:])
}

// awaitResponse waits for the computer's answer to messageID, for ctx to end or for timeout.
// start is when it was sent: a timeout names the request sent before it that still waits.
func awaitResponse(ctx context.Context, timeout <-chan time.Time, s *Session, wait chan result, messageID, traposID, typ string, start time.Time) (Response, error) {
	outcome := func(r result) (Response, error) {
		if r.err != nil {
			return Response{}, r.err
		}
		return r.resp, nil
	}
	timedOut := func() (Response, error) {
		if s.pending.abandon(messageID) == nil {
			// The reader took the answer (or the close failed the request) as time ran out:
			// it is on its way to wait, and it is the outcome.
			return outcome(<-wait)
		}
		// A late answer is now ignored; until it comes, a later timeout names this request.
		return Response{}, protocol.Errorf(protocol.CodeTimeout, "computer %s did not answer %s in time%s", cctext.ShowTraposID(traposID), typ, s.busyWith(start))
	}
	select {
	case r := <-wait:
		return outcome(r)
	case <-timeout:
		return timedOut()
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return timedOut()
		}
		s.pending.take(messageID)
		return Response{}, ctx.Err()
	}
}

// outcomeOK labels a request the computer answered with ok:true.
const outcomeOK = "ok"

// requestOutcome labels a finished request for the latency histogram.
func requestOutcome(resp Response, err error) string {
	switch {
	case err != nil:
		if errors.Is(err, context.Canceled) {
			return "cancelled"
		}
		return string(protocol.CodeOf(err))
	case resp.OK:
		return outcomeOK
	default:
		return "computer_error"
	}
}

// busyWith is what a timeout adds when the computer still owes the answer to a host request
// sent before the one that timed out (whoever sent it): a request the computer has not
// answered yet, probably a run that does not yield (a loop without sleep), which holds the
// whole computer, every other request's answer included, until it ends or CC stops it (7 s
// without yielding). A ping answered only "did not answer ping in time", and an agent took
// the computer for gone. "" when no such request waits.
func (s *Session) busyWith(sent time.Time) string {
	held, ok := s.pending.heldBy(sent)
	if !ok {
		return ""
	}
	when := "just before it"
	if ago := sent.Sub(held.sent).Round(time.Second); ago > 0 {
		when = ago.String() + " before it"
	}
	if held.abandoned {
		// Its call timed out first: what is waited for is gone, what the computer runs is not.
		when += " yet (the call that sent it stopped waiting)"
	} else {
		when += " yet"
	}
	return fmt.Sprintf(hostcomputer.HeldLead+"%s sent %s, which may hold it "+
		"(a run that does not yield, e.g. a loop without sleep, holds the whole computer until it ends, or CC stops it after 7 s): "+
		"ask again once that has ended", held.typ, when)
}
