package computer

import (
	"context"
	"fmt"

	"trap-sandbox/internal/protocol"
)

// Reauthorizer is a Transport that can tell whether the caller in a context is still
// authorized: nil, or the unauthorized error a new request with its credentials would get (an
// account token revoked or expired since the call began, a gateway pass that ended). The
// gateway's in-process Transport is one (the server's StillAuthorized check); the HTTP one
// needs none, as the gateway authorizes each of its requests anew. (Not the gateway's
// admission of computer sockets, docs/protocol.md: this is the host API's callers.)
type Reauthorizer interface {
	StillAuthorized(ctx context.Context) error
}

// StillAuthorized asks the Transport whether the caller in ctx is still authorized (nil when
// the Transport cannot tell). A call of several requests (Read, Write, input of several
// requests under one InputTurn) asks before each request after its first, so a token revoked
// during it sends nothing more, as a new call with it is refused: every surface (HTTP API,
// CLI, MCP) stops the same way.
func (c *Client) StillAuthorized(ctx context.Context) error {
	a, ok := c.transport.(Reauthorizer)
	if !ok {
		return nil
	}
	return a.StillAuthorized(ctx)
}

// stopped is err (StillAuthorized's refusal) with what the call had done when it stopped.
func stopped(err error, format string, args ...any) error {
	pe, ok := err.(*protocol.Error)
	if !ok {
		return err
	}
	return pe.WithMessage(pe.Message + " (" + fmt.Sprintf(format, args...) + ")")
}
