package gateway

import (
	"context"
	"encoding/json"
	"time"
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
		s.log.Info("computer replaced by a newer connection", "traposId", clip(s.Key().TraposID))
	}
}

// Credential is the selector of the credential the computer said hello with ("" for the
// shared password): a replica's claim carries it, so that any replica can revoke a computer
// held by another.
func (s *Session) Credential() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.credential
}

// RevocationBus is implemented by a Registry that spans replicas (the cluster package's NATS
// router): a revocation made on one replica, or by the account commands on the store the
// replicas share, reaches every replica at once. The message only names the credential: the
// replica that hears it closes a socket only after the account store says the credential is
// revoked, so a forged message closes nothing.
type RevocationBus interface {
	// PublishRevocation tells every replica (this one included) that credential selector was
	// revoked in the store.
	PublishRevocation(selector string) error
	// RemoteCredential is the credential selector the computer k said hello with on another
	// replica, as its claim says ("" for the shared password or an unknown computer).
	RemoteCredential(k Key) string
	// OnRevocation makes heard run, in a goroutine of the bus, for each revocation published
	// by any replica or account command. gateway.New calls it once.
	OnRevocation(heard func(ctx context.Context, selector string))
}

// revocationCheckTimeout bounds the account-store read that confirms a revocation heard on
// the bus.
const revocationCheckTimeout = 5 * time.Second

// revocationHeard closes the local sockets of credential selector, once the account store
// confirms that it is revoked: the message on the bus is a hint, the store is the authority.
func (g *Gateway) revocationHeard(ctx context.Context, selector string) {
	if g.cfg.Accounts == nil || selector == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, revocationCheckTimeout)
	defer cancel()
	c, err := g.cfg.Accounts.Store().Credential(ctx, selector)
	switch {
	case err != nil:
		g.log.Warn("ignored a revocation heard on the bus: the account store does not confirm it", "credential", clip(selector), "err", err)
	case c.RevokedAt.IsZero():
		g.log.Warn("ignored a revocation heard on the bus: the account store says the credential is not revoked; another NATS client publishes on the replicas' subjects? Fence them (docs/scale-out.md, Security)",
			"credential", clip(selector))
	default:
		g.RevokeCredential(selector)
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
			s.log.Info("computer closed: its credential was revoked", "traposId", clip(s.Key().TraposID))
			closed = true
		}
	}
	return closed
}
