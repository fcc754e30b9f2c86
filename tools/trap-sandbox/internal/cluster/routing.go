package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go"

	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
)

// routedRequest is the body of a NATS request to a computer's subject.
type routedRequest struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
	// TimeoutMs is what is left of the asking request's timeout; the answering replica waits
	// no longer for the computer.
	TimeoutMs int64 `json:"timeoutMs"`
}

// routedResponse is the reply: the computer's answer, or the answering replica's own failure.
type routedResponse struct {
	OK      bool            `json:"ok"`
	Type    string          `json:"type,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Error   *protocol.Error `json:"error,omitempty"`
	// GatewayError is set when the computer gave no answer (not_connected, timeout, …).
	GatewayError *protocol.Error `json:"gatewayError,omitempty"`
}

// Route implements gateway.Registry: a NATS request to the computer's subject, bounded by ctx's
// deadline. No replica subscribed ⇒ not_connected at once; no reply in time ⇒ timeout.
func (r *Router) Route(ctx context.Context, k gateway.Key, typ string, payload json.RawMessage) (gateway.Response, error) {
	start := time.Now()
	resp, err := r.route(ctx, k, typ, payload)
	r.metrics.routed(outcome(resp, err), time.Since(start))
	return resp, err
}

func (r *Router) route(ctx context.Context, k gateway.Key, typ string, payload json.RawMessage) (gateway.Response, error) {
	if !r.nc.IsConnected() {
		return gateway.Response{}, protocol.Errorf(protocol.CodeNotConnected,
			"computer %s is not connected to replica %s, and NATS is unreachable, so the other replicas cannot be asked", k.TraposID, r.cfg.Replica)
	}
	timeout := gateway.DefaultRequestTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	body, err := json.Marshal(routedRequest{Type: typ, Payload: payload, TimeoutMs: max(timeout.Milliseconds(), 1)})
	if err != nil {
		return gateway.Response{}, protocol.Errorf(protocol.CodeInternal, "cannot route %s: %v", typ, err)
	}
	msg := nats.NewMsg(computerSubject(k))
	msg.Data = body

	r.mu.Lock()
	r.inFlight++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
	}()
	reply, err := r.nc.RequestMsgWithContext(ctx, msg)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return gateway.Response{}, gateway.NotConnected(k.TraposID)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return gateway.Response{}, protocol.Errorf(protocol.CodeTimeout, "computer %s did not answer %s in time", k.TraposID, typ)
	case errors.Is(err, context.Canceled):
		return gateway.Response{}, ctx.Err()
	case err != nil:
		return gateway.Response{}, protocol.Errorf(protocol.CodeNotConnected, "computer %s could not be reached over NATS: %v", k.TraposID, err)
	}
	var rr routedResponse
	if err := json.Unmarshal(reply.Data, &rr); err != nil {
		return gateway.Response{}, protocol.Errorf(protocol.CodeInternal, "the replica holding %s sent a reply that is not JSON", k.TraposID)
	}
	if rr.GatewayError != nil {
		return gateway.Response{}, rr.GatewayError
	}
	if rr.OK && len(rr.Payload) == 0 {
		rr.Payload = protocol.EmptyPayload
	}
	return gateway.Response{OK: rr.OK, Type: rr.Type, Payload: rr.Payload, Error: rr.Error}, nil
}

// RoutedInFlight is how many routed requests this replica is waiting on (tests check that none
// is left behind).
func (r *Router) RoutedInFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inFlight
}

// subscribe makes this replica answer k's subject; r.mu is held (Subscribe only queues the
// interest, and the handler runs on the connection's goroutine). nil if NATS refused it.
func (r *Router) subscribe(k gateway.Key) *nats.Subscription {
	sub, err := r.nc.Subscribe(computerSubject(k), func(m *nats.Msg) {
		// One goroutine per request: the subscription's handler runs them one at a time, and
		// a computer may have several requests in flight.
		if !r.spawn(func() { r.answer(k, m) }) {
			respond(m, routedResponse{GatewayError: protocol.Errorf(protocol.CodeNotConnected,
				"replica %s is shutting down", r.cfg.Replica)})
		}
	})
	if err != nil {
		r.log.Warn("cannot subscribe the computer's subject: requests from other replicas will not reach it",
			"traposId", k.TraposID, "err", err)
		return nil
	}
	return sub
}

// answer serves one routed request with the local session and replies.
func (r *Router) answer(k gateway.Key, m *nats.Msg) {
	var req routedRequest
	if err := json.Unmarshal(m.Data, &req); err != nil || req.Type == "" {
		respond(m, routedResponse{GatewayError: protocol.Errorf(protocol.CodeInternal, "a routed request must be JSON with a type")})
		return
	}
	s := r.Lookup(k)
	if s == nil {
		respond(m, routedResponse{GatewayError: gateway.NotConnected(k.TraposID)})
		return
	}
	timeout := time.Duration(req.TimeoutMs) * time.Millisecond
	if timeout <= 0 || timeout > gateway.MaxRequestTimeout {
		timeout = gateway.MaxRequestTimeout
	}
	ctx, cancel := context.WithTimeout(r.ctx, timeout)
	defer cancel()
	payload := req.Payload
	if len(payload) == 0 {
		payload = protocol.EmptyPayload
	}
	resp, err := s.Request(ctx, req.Type, payload)
	if err != nil {
		var pe *protocol.Error
		switch {
		case errors.As(err, &pe):
		case errors.Is(err, context.Canceled):
			pe = protocol.Errorf(protocol.CodeNotConnected, "replica %s is shutting down", r.cfg.Replica)
		default:
			pe = protocol.Errorf(protocol.CodeInternal, "request failed: %v", err)
		}
		respond(m, routedResponse{GatewayError: pe})
		return
	}
	respond(m, routedResponse{OK: resp.OK, Type: resp.Type, Payload: resp.Payload, Error: resp.Error})
}

func respond(m *nats.Msg, rr routedResponse) {
	b, err := json.Marshal(rr)
	if err != nil {
		b, _ = json.Marshal(routedResponse{GatewayError: protocol.Errorf(protocol.CodeInternal, "cannot encode the answer: %v", err)})
	}
	_ = m.Respond(b) // the asker may have given up; nothing to do then
}

// outcome labels a routed request for the metrics.
func outcome(resp gateway.Response, err error) string {
	switch {
	case err != nil:
		if errors.Is(err, context.Canceled) {
			return "cancelled"
		}
		return string(protocol.CodeOf(err))
	case resp.OK:
		return "ok"
	default:
		return "computer_error"
	}
}
