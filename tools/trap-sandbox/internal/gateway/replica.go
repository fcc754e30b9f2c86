package gateway

import (
	"context"
	"encoding/json"
)

// What a Registry that spans several replicas (the cluster package's NATS router) needs from a
// session it holds: answering a request routed from another replica, and evicting the session
// when the computer said hello elsewhere.

// Request sends a gateway_request on this socket and waits for the computer's answer, as
// Gateway.Request does for a computer held here. payload must be a JSON object (the asking
// replica applied the empty-payload rule).
func (s *Session) Request(ctx context.Context, typ string, payload json.RawMessage) (Response, error) {
	return s.request(ctx, typ, payload)
}

// Evict closes the session with 4009 replaced because a newer socket of the same computer said
// hello, on this replica or another; its pending requests fail with not_connected.
func (s *Session) Evict() {
	if s.closeByGateway(CloseReplaced, "replaced") {
		s.log().Info("computer replaced by a newer connection", "traposId", clip(s.Key().TraposID))
	}
}

// RevokeCredential closes the socket that said hello with the credential selector (revoked:
// 4003, the daemon stops), if this process holds one. The caller has already marked it
// revoked in the account store, so the computer's next hello is refused too.
func (g *Gateway) RevokeCredential(selector string) bool {
	if selector == "" {
		return false
	}
	closed := false
	for _, s := range g.registry.Sessions() {
		s.mu.Lock()
		mine := s.credential == selector
		s.mu.Unlock()
		if mine && s.closeByGateway(CloseRevoked, "revoked") {
			s.log().Info("computer closed: its credential was revoked", "traposId", clip(s.Key().TraposID))
			closed = true
		}
	}
	return closed
}
