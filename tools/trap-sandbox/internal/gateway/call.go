package gateway

import (
	"context"
	"encoding/json"
	"time"

	"trap-sandbox/internal/protocol"
)

// Caller is the gateway as other modules use it (the host API's file routes, the MCP module,
// a router): list the connected computers, send one a request. *Gateway implements it; a
// module takes a Caller so that it can run against another implementation.
type Caller interface {
	// Computers lists the hello-completed computers, sorted by account and traposId.
	Computers() []Computer
	// Call sends a request to a computer and waits for its answer; see Gateway.Call.
	Call(ctx context.Context, traposID, typ string, payload any, timeout time.Duration) (Response, error)
}

var _ Caller = (*Gateway)(nil)

// Call sends a gateway_request of type typ to computer traposID of the local account and
// waits at most timeout for its answer (zero or negative: Config.RequestTimeout; ctx's own
// deadline still applies). payload is any value encoding to a JSON object (nil means {};
// json.RawMessage passes as it is).
//
// The computer's answer, even ok:false, is the Response (OK, Payload, Error as it sent them)
// with a nil error. A failure on the gateway's side is a *protocol.Error: not_connected,
// timeout, internal (a payload that is not an object, or a frame over 128 KiB); a cancelled
// ctx returns ctx.Err().
func (g *Gateway) Call(ctx context.Context, traposID, typ string, payload any, timeout time.Duration) (Response, error) {
	raw, ok := payload.(json.RawMessage)
	if !ok && payload != nil {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return Response{}, protocol.Errorf(protocol.CodeInternal, "cannot encode the %s payload: %v", typ, err)
		}
	}
	if timeout <= 0 {
		timeout = g.cfg.RequestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return g.Request(ctx, LocalAccount, traposID, typ, raw)
}
