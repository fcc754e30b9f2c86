package cluster

import (
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"

	"trap-sandbox/internal/gateway"
)

// Revocations. A credential revoked in the account store (through any replica's API, or by
// `trap-sandbox credentials revoke --nats` on the bucket the replicas share) is announced on
// RevocationSubject; every replica hears it and closes the sockets it holds for that
// credential (4003). The message names the credential and nothing else, and is only a hint:
// the gateway closes a socket after the account store confirms the revocation
// (gateway.Local.RevocationHeard), so a client on the bus that publishes a made-up revocation closes
// nothing. Core NATS delivers at most once, so a replica may miss the message: NATS drops what
// overflows the replica's buffer of the subscription (a flood on RevocationSubject: measured
// here, 1 000 000 messages published in 2.6 s by one client made this replica's NATS client
// drop 226 685 of them, a real revocation among them), and nothing announced while a replica
// is cut off from NATS reaches it. A replica that missed any (revocationsMissed) asks the
// account store about every credential it holds (Local.RevocationsMissed).

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

// Log lines of a check for missed revocations (revocationsMissed).
const (
	revocationsDroppedLine   = "NATS dropped revocations announced on the bus (a flood on trapos.revoked outran this replica): checking every credential held here against the account store"
	revocationsWhileAwayLine = "revocations announced while this replica was away from NATS did not reach it: checked every credential held here against the account store"
)

// missReason is how a replica may have missed revocations announced on the bus.
type missReason int

const (
	missDropped missReason = iota // NATS dropped messages on RevocationSubject
	missAway                      // the replica was away from NATS
)

// revocationsMissed has every credential held here checked against the account store
// (Local.RevocationsMissed), in a goroutine of the router's: now, or, while a check runs,
// once more after it. A check is followed by another as long as NATS dropped messages on
// RevocationSubject meanwhile, so a revocation dropped during a check is not missed. A drop
// is logged (WARN) as the check starts, once a minute (suppressedSinceLast counting the
// others): a flood on the bus is worth an operator's eye whether or not this replica holds a
// credential, but each check of a flood is short, and the next overflow starts another. A time
// away is logged (INFO) as the checks end, with what they found, and only when they asked
// about a credential: a replica without linked computers says nothing at each reconnection.
func (r *Router) revocationsMissed(reason missReason) {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return
	}
	if reason == missAway {
		r.recheckAway = true
	}
	if r.rechecking {
		r.recheckAgain = true
		r.mu.Unlock()
		return
	}
	r.rechecking = true
	r.mu.Unlock()
	if reason == missDropped {
		r.dropsLogged.Log(slog.LevelWarn, "revocations dropped", revocationsDroppedLine)
	}
	if !r.spawn(r.recheckCredentials) {
		r.mu.Lock()
		r.rechecking = false
		r.mu.Unlock()
	}
}

// FollowAccountStore has every credential held here checked again (revocationsMissed) each
// time nc, the account store's own connection to NATS, comes back. The replica reads the
// store on a connection of its own, which reconnects on its own schedule: the check this
// router starts when its connection is back read the store through nc while nc was still
// reconnecting, failed, and left a credential revoked meanwhile open until its computer's
// next hello (played: nats-server restarted, the check failed with "NATS is not reachable
// (reconnecting)" 2 ms after the router's "NATS connection back"). nc's reconnect handler is
// this router's from then on.
func (r *Router) FollowAccountStore(nc *nats.Conn) {
	nc.SetReconnectHandler(func(*nats.Conn) { r.revocationsMissed(missAway) })
}

// recheckCredentials is revocationsMissed's goroutine.
func (r *Router) recheckCredentials() {
	checked, revoked := 0, 0
	for {
		dropped := r.droppedRevocations()
		r.mu.Lock()
		r.recheckAgain = false
		r.droppedChecked = dropped
		r.mu.Unlock()
		if local := r.attached(); local != nil {
			c, k := local.RevocationsMissed(r.ctx)
			checked, revoked = checked+c, revoked+k
		}
		dropped = r.droppedRevocations()
		r.mu.Lock()
		again := (r.recheckAgain || dropped != r.droppedChecked) && !r.closing && r.ctx.Err() == nil
		away := false
		if !again {
			r.rechecking = false
			away, r.recheckAway = r.recheckAway, false
		}
		r.mu.Unlock()
		if !again {
			if away && checked > 0 {
				r.log.Info(revocationsWhileAwayLine, "credentials", checked, "revoked", revoked)
			}
			return
		}
	}
}

// checkDroppedRevocations starts a check (revocationsMissed) when NATS dropped messages on
// RevocationSubject since the last check began: NATS reports a slow consumer once until the
// subscription takes a message again, so a drop can go unreported (heartbeatLoop calls it).
func (r *Router) checkDroppedRevocations() {
	dropped := r.droppedRevocations()
	r.mu.Lock()
	missed := dropped != r.droppedChecked && !r.rechecking
	r.mu.Unlock()
	if missed {
		r.revocationsMissed(missDropped)
	}
}

// droppedRevocations is how many messages on RevocationSubject NATS has dropped so far.
func (r *Router) droppedRevocations() int {
	n, err := r.revSub.Dropped()
	if err != nil {
		return 0 // unsubscribed: the router is closing
	}
	return n
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
