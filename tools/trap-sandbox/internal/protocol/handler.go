package protocol

import (
	"context"
	"encoding/json"
)

// Requester is the computer a computer_request came from (its hello-completed identity).
type Requester struct {
	AccountID string
	TraposID  string
	// RemoteAddr is the socket's remote address (host:port), for per-address limits.
	RemoteAddr string
	// Socket names the socket the request came on, unique in this process (never 0 from
	// the gateway): what binds a conversation of several requests to the socket that began
	// it (a link code to the session that asked for it), where a claimed traposId would not.
	Socket uint64
}

// RequestHandler answers one computer_request type. It returns the response payload (nil
// means {}) or an error: a *Error is sent as it is, any other error as internal. ctx ends
// when the computer's socket closes. Modules register handlers with the gateway by type
// (gateway.Gateway.Handle), so they need not import it.
type RequestHandler func(ctx context.Context, from Requester, payload json.RawMessage) (json.RawMessage, error)
