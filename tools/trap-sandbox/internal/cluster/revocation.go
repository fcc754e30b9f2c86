package cluster

import (
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"

	"trap-sandbox/internal/gateway"
)

// Revocations. A credential revoked in the account store (through any replica's API, or by
// `trap-sandbox credentials revoke --nats` on the bucket the replicas share) is announced on
// RevocationSubject; every replica hears it and closes the sockets it holds for that
// credential (4003). The message names the credential and nothing else, and is only a hint:
// the gateway closes a socket after the account store confirms the revocation
// (gateway.Local.RevocationHeard), so a client on the bus that publishes a made-up revocation closes
// nothing. Core NATS delivers at most once: a replica that misses the message (cut off from
// NATS then) still refuses the credential at the computer's next hello.

// RevocationSubject is where revocations are announced to every replica (under trapos.>, which
// the NATS account fences: docs/scale-out.md, Security).
const RevocationSubject = subjectRoot + ".revoked"

// revocation is the body of a message on RevocationSubject.
type revocation struct {
	// Credential is the revoked credential's selector (its id, never its secret).
	Credential string `json:"credential"`
}

// PublishRevocation announces on nc that credential selector was revoked in the account
// store, and waits until NATS has it. The account commands call it after revoking in the
// bucket the replicas share; a Router calls it through its own PublishRevocation.
func PublishRevocation(nc *nats.Conn, selector string) error {
	b, err := json.Marshal(revocation{Credential: selector})
	if err != nil {
		return err
	}
	if err := nc.Publish(RevocationSubject, b); err != nil {
		return fmt.Errorf("announce the revocation on NATS: %w", err)
	}
	if err := nc.FlushTimeout(DefaultOpTimeout); err != nil {
		return fmt.Errorf("announce the revocation on NATS: %w", err)
	}
	return nil
}

// PublishRevocation implements gateway.Cluster.
func (r *Router) PublishRevocation(selector string) error {
	return PublishRevocation(r.nc, selector)
}

// RemoteCredential implements gateway.Cluster: the credential in k's claim, when
// another replica holds it.
func (r *Router) RemoteCredential(k gateway.Key) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, _ := r.remote.get(k)
	return c.credential()
}

// RemoteOlder implements gateway.Cluster: the replica that holds k's socket, when it is of an
// older trap-sandbox that does not close a removed account's computers (its heartbeat does
// not say closesRemoved).
func (r *Router) RemoteOlder(k gateway.Key) (replica string, older bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.remote.get(k)
	if !ok {
		return "", false
	}
	return c.replica(), r.older[c.replica()]
}

// revocationHeard handles a message on RevocationSubject (the subscription's goroutine, so the
// gateway's store check runs in a goroutine of its own, maxRevocationChecks at once).
func (r *Router) revocationHeard(m *nats.Msg) {
	var rev revocation
	if err := json.Unmarshal(m.Data, &rev); err != nil || rev.Credential == "" {
		r.log.Debug("ignored a revocation that names no credential", "subject", m.Subject)
		return
	}
	local := r.attached()
	if local == nil {
		return
	}
	// Waits here for a slot, so a flood waits in NATS's buffer of this subscription, not in
	// a goroutine each.
	select {
	case r.revocationSlots <- struct{}{}:
	case <-r.ctx.Done():
		return
	}
	if !r.spawn(func() {
		defer func() { <-r.revocationSlots }()
		local.RevocationHeard(r.ctx, rev.Credential)
	}) {
		<-r.revocationSlots
	}
}
