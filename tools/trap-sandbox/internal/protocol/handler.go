package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Requester is the computer a computer_request came from (its hello-completed identity).
type Requester struct {
	AccountID string
	TraposID  string
	// AccountCreated is the account's creation stamp as the hello's credential found it
	// (account.Account.Created): an account removed and made again under the same name is
	// another account, whose computers inherit nothing of the removed one's. Zero for the
	// shared password ("local").
	AccountCreated time.Time
	// RemoteAddr is the computer's address, for per-address limits: the socket's peer
	// (host:port), or behind a trusted proxy (--trusted-proxies) the IP the proxy names.
	RemoteAddr string
	// Socket names the socket the request came on, unique in this process (never 0 from
	// the gateway): what binds a conversation of several requests to the socket that began
	// it (a link code to the session that asked for it), where a claimed traposId would not.
	Socket uint64
}

// RequestHandler answers one computer_request type. It returns the response payload (nil
// means {}) or an error: a *Error is sent as it is, any other error as internal. ctx ends
// when the computer's socket closes; its cause (context.Cause) is a *Error when the gateway
// closed it for a reason its viewers should hear instead of "the computer disconnected" (the
// gateway shutting down). Modules register handlers with the gateway by type
// (gateway.Gateway.Handle), so they need not import it.
type RequestHandler func(ctx context.Context, from Requester, payload json.RawMessage) (json.RawMessage, error)

// ErrWouldBlock is what a QuickHandler returns when it cannot answer without blocking: the
// type's RequestHandler then answers the request, in a goroutine of its own.
var ErrWouldBlock = errors.New("the answer would block")

// QuickHandler answers a computer_request at once, on the socket's reader: no goroutine, no
// request slot, nothing to hand over. It must never block (no I/O, no wait, no lock held
// across anything slow): while it runs, the socket reads nothing. It returns ErrWouldBlock
// when it cannot answer that way (e.g. probe_gateway without a fresh enough health), and
// otherwise what a RequestHandler returns. A module declares it when it registers the type
// (gateway.Gateway.HandleQuick), beside the RequestHandler that answers the rest.
type QuickHandler func(from Requester, payload json.RawMessage) (json.RawMessage, error)
