package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
)

// Relays. A module of the gateway may need its counterpart on another replica about one
// computer: the screen module keeps a live screen's watch on the replica its viewers asked,
// while the computer's screen.update requests reach the replica holding its socket, which
// passes them on (docs/scale-out.md, Live screens). The Router carries such messages and
// nothing of their meaning: a module registers its handler (HandleRelay) and talks through a
// Peer. A message goes to the other replica's own subject
// (trapos.replica.<replica>.relay.<module>.<account>.<traposId>) and its answer comes back as
// a routed request's does (routing.go: the asker's reply subject, taken only from the replica
// asked, failed at once when that replica is given up). A message nobody waits on (Tell) has
// no reply subject.
//
// Lifelines tell a module, as a context that ends, what a socket's context tells it for a
// computer held here: that a computer held by another replica is no longer held by that
// socket there (its claim withdrawn, or replaced by a later hello's), or that a replica is
// given up (stopped, silent for ReplicaTTL, off NATS at a heartbeat tick's probe, or this
// replica's own NATS connection lost). Their cause says which.

// RelayHandler answers a message of a module relayed by replica from about computer k: the
// answer's payload (nil: {}), or an error (a *protocol.Error goes back as it is, any other as
// internal). ctx ends at the message's timeout, or when its asker gives up.
type RelayHandler func(ctx context.Context, from string, k gateway.Key, payload json.RawMessage) (json.RawMessage, error)

// relayMessage is the body of a relayed message.
type relayMessage struct {
	// From names the replica that sends it.
	From    string          `json:"from"`
	Payload json.RawMessage `json:"payload"`
	// TimeoutMs is how long the sender waits for the answer (0: it waits for none).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
}

// tellTimeout bounds the handling of a message nobody waits on.
const tellTimeout = 10 * time.Second

// HandleRelay registers h as the answer to module's relayed messages. Call it before the
// replica serves: a message for a module not registered is refused.
func (r *Router) HandleRelay(module string, h RelayHandler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.relayHandlers[module] = h
}

// Peer is module's link to its counterparts on the other replicas (Router.Peer). Its methods
// name a computer by account and traposId, as the modules do.
type Peer struct {
	r      *Router
	module string
}

// Peer registers h as module's handler (HandleRelay), the computer named by account and
// traposId, and returns module's link.
func (r *Router) Peer(module string, h func(ctx context.Context, from, accountID, traposID string, payload json.RawMessage) (json.RawMessage, error)) Peer {
	r.HandleRelay(module, func(ctx context.Context, from string, k gateway.Key, payload json.RawMessage) (json.RawMessage, error) {
		return h(ctx, from, k.AccountID, k.TraposID, payload)
	})
	return Peer{r: r, module: module}
}

// Send sends payload to module on replica about computer (accountID, traposID) and returns
// the answer; it waits at most timeout (and until ctx ends).
func (p Peer) Send(ctx context.Context, replica, accountID, traposID string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return p.r.Relay(ctx, replica, p.module, gateway.Key{AccountID: accountID, TraposID: traposID}, payload)
}

// Tell sends payload to module on replica about computer (accountID, traposID) and waits for
// no answer (and none comes): NATS delivers it unless the replica is gone or falls too far
// behind.
func (p Peer) Tell(replica, accountID, traposID string, payload json.RawMessage) error {
	return p.r.Tell(replica, p.module, gateway.Key{AccountID: accountID, TraposID: traposID}, payload)
}

// Holder names the live replica that holds the socket of computer (accountID, traposID) when
// another replica does ("" when none does, or this one), with its lifeline (Router.Holding).
func (p Peer) Holder(accountID, traposID string) (string, context.Context, context.CancelFunc) {
	return p.r.Holding(gateway.Key{AccountID: accountID, TraposID: traposID})
}

// relaysNothingFor is a replica's words for a module it has no handler of (a replica older than
// the module's messages); relaysNothingBetween this replica's for a replica older than every
// relay.
const (
	relaysNothingFor     = "relays nothing for"
	relaysNothingBetween = "relays nothing between replicas"
)

// NotHandled reports whether err says that the replica asked relays nothing for p's module:
// one older than the module's messages, or than every relay.
func (p Peer) NotHandled(err error) bool {
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok {
		return false
	}
	return pe.Code == protocol.CodeInternal && strings.HasSuffix(pe.Message, " "+relaysNothingFor+" "+clipped(p.module)) ||
		pe.Code == protocol.CodeNotConnected && strings.Contains(pe.Message, " "+relaysNothingBetween+" ")
}

// Others names the other live replicas, sorted.
func (p Peer) Others() []string {
	r := p.r
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for name := range r.lastSeen {
		if name != r.cfg.Replica && r.aliveLocked(name, now) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Alive returns replica's lifeline (Router.WhileAlive).
func (p Peer) Alive(replica string) (context.Context, context.CancelFunc) {
	return p.r.WhileAlive(replica)
}

// Relay sends payload to module on replica about computer k and waits for the answer,
// bounded by ctx's deadline (gateway.DefaultRequestTimeout without one).
func (r *Router) Relay(ctx context.Context, replica, module string, k gateway.Key, payload json.RawMessage) (json.RawMessage, error) {
	start := time.Now()
	answer, err := r.relay(ctx, replica, module, k, payload)
	r.metrics.relayed(module, outcome(gateway.Response{OK: err == nil}, err), time.Since(start))
	return answer, err
}

func (r *Router) relay(ctx context.Context, replica, module string, k gateway.Key, payload json.RawMessage) (json.RawMessage, error) {
	if err := r.relayable(replica); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, gateway.DefaultRequestTimeout)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	body, err := json.Marshal(relayMessage{From: r.cfg.Replica, Payload: payload, TimeoutMs: max(time.Until(deadline).Milliseconds(), 1)})
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeInternal, "cannot relay to replica %s: %v", replica, err)
	}
	id, p, err := r.expect(k, replica, false)
	if err != nil {
		return nil, err
	}
	defer r.forget(id)
	r.mu.Lock()
	c, known := r.remote.get(k)
	p.peer = !known || c.replica() != replica // not the holder: the replica watching its screen, say
	r.mu.Unlock()
	msg := &nats.Msg{Subject: relaySubject(replica, module, k), Reply: replySubject(r.cfg.Replica, id), Data: body}
	if err := r.nc.PublishMsg(msg); err != nil {
		return nil, protocol.Errorf(protocol.CodeNotConnected, "replica %s could not be reached over NATS: %v", replica, err)
	}
	if err := r.awaitRoute(ctx, id, p, module+" relay"); err != nil {
		if protocol.CodeOf(err) == protocol.CodeTimeout {
			// The replica did not answer, not the computer.
			return nil, protocol.Errorf(protocol.CodeTimeout, "replica %s did not answer in time", replica)
		}
		return nil, err
	}
	rr := p.resp
	switch {
	case rr.GatewayError != nil:
		return nil, rr.GatewayError
	case !rr.OK && rr.Error != nil:
		return nil, rr.Error
	case !rr.OK:
		return nil, protocol.Errorf(protocol.CodeInternal, "replica %s answered neither ok nor an error", replica)
	case len(rr.Payload) == 0:
		return protocol.EmptyPayload, nil
	}
	return rr.Payload, nil
}

// Tell sends payload to module on replica about computer k, waiting for no answer.
func (r *Router) Tell(replica, module string, k gateway.Key, payload json.RawMessage) error {
	if err := r.relayable(replica); err != nil {
		return err
	}
	body, err := json.Marshal(relayMessage{From: r.cfg.Replica, Payload: payload})
	if err != nil {
		return err
	}
	return r.nc.Publish(relaySubject(replica, module, k), body)
}

// relayable says why a message cannot be relayed to replica now (nil: it can).
func (r *Router) relayable(replica string) error {
	if !r.nc.IsConnected() {
		return protocol.Errorf(protocol.CodeNotConnected, "replica %s cannot reach replica %s: NATS is unreachable", r.cfg.Replica, replica)
	}
	r.mu.Lock()
	noRelays := r.noRelays[replica]
	r.mu.Unlock()
	if noRelays {
		return protocol.Errorf(protocol.CodeNotConnected,
			"replica %s runs an older trap-sandbox, which %s (live screens): upgrade it (docs/scale-out.md)", replica, relaysNothingBetween)
	}
	return nil
}

// serveRelay handles a relayed message (the subscription's goroutine: it must not block). A
// message that cannot be read is refused, never acted on.
func (r *Router) serveRelay(arg string, m *nats.Msg) {
	refuse := func(pe *protocol.Error) {
		if m.Reply != "" {
			r.respond(m, routedResponse{GatewayError: pe})
		}
	}
	module, key, ok := strings.Cut(arg, ".")
	if !ok {
		refuse(protocol.Errorf(protocol.CodeInternal, "a relayed message's subject names no module and computer"))
		return
	}
	module, err := unescapeToken(module)
	if err != nil {
		refuse(protocol.Errorf(protocol.CodeInternal, "a relayed message's subject names no module: %v", err))
		return
	}
	k, err := parseClaimKey(key)
	if err != nil {
		refuse(protocol.Errorf(protocol.CodeInternal, "a relayed message's subject names no computer: %v", err))
		return
	}
	var msg relayMessage
	if err := json.Unmarshal(m.Data, &msg); err != nil || msg.From == "" {
		refuse(protocol.Errorf(protocol.CodeInternal, "a relayed message must be JSON naming its sender"))
		return
	}
	r.mu.Lock()
	h := r.relayHandlers[module]
	r.mu.Unlock()
	if h == nil {
		refuse(protocol.Errorf(protocol.CodeInternal, "replica %s %s %s", r.cfg.Replica, relaysNothingFor, clipped(module)))
		return
	}
	timeout := time.Duration(msg.TimeoutMs) * time.Millisecond
	if m.Reply == "" {
		timeout = tellTimeout
	}
	if timeout <= 0 || timeout > gateway.MaxRequestTimeout {
		timeout = gateway.MaxRequestTimeout
	}
	var a *answering
	if m.Reply != "" {
		a = r.startAnswering(m.Reply)
	}
	if pe := r.spawnAnswer(func() { r.answerRelay(h, msg, k, m, a, timeout) }); pe != nil {
		if a != nil {
			r.stopAnswering(m.Reply, a)
		}
		refuse(pe)
	}
}

// answerRelay runs a relayed message's handler and answers it (unless nobody waits).
func (r *Router) answerRelay(h RelayHandler, msg relayMessage, k gateway.Key, m *nats.Msg, a *answering, timeout time.Duration) {
	parent := r.ctx
	if a != nil {
		defer r.stopAnswering(m.Reply, a)
		parent = a.ctx
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	payload, err := r.runRelayHandler(ctx, h, msg.From, k, msg.Payload)
	if m.Reply == "" {
		return
	}
	if err == nil {
		r.respond(m, routedResponse{OK: true, Payload: payload})
		return
	}
	pe, ok := errors.AsType[*protocol.Error](err)
	if !ok {
		pe = protocol.Errorf(protocol.CodeInternal, "%v", err)
	}
	r.respond(m, routedResponse{Error: pe})
}

// runRelayHandler runs h, a panic becoming an internal error (logged with its stack): a
// message from the bus must not end the replica.
func (r *Router) runRelayHandler(ctx context.Context, h RelayHandler, from string, k gateway.Key, payload json.RawMessage) (answer json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("a relayed message's handler panicked", "from", from, "traposId", k.TraposID, "panic", p, "stack", string(debug.Stack()))
			answer, err = nil, protocol.Errorf(protocol.CodeInternal, "replica %s failed on a relayed message; its log has the details", r.cfg.Replica)
		}
	}()
	return h(ctx, from, k, payload)
}

// clipped keeps a string from the bus short in a message.
func clipped(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// lifeline is a context the router ends (lifelines): a computer's socket on another replica
// (computer set), or a replica.
type lifeline struct {
	replica  string
	computer bool
	k        gateway.Key
	since    int64 // a computer's: its claim's connectedSince, which a later hello changes
	cancel   context.CancelCauseFunc
}

// Holding names the live replica other than this one that holds k's socket, by its claim,
// and returns a context that lives while that socket stays held there: it ends when k's claim
// is withdrawn (the socket closed), replaced by a later hello's (anywhere), when the replica
// is given up, or when this one stops (Leave: gateway.ErrShuttingDown); its cause is a
// *protocol.Error when the replica was given up or this one stops, and another error when the
// socket went. stop releases it. No such replica: "" and a nil context.
func (r *Router) Holding(k gateway.Key) (string, context.Context, context.CancelFunc) {
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.remote.get(k)
	if !ok || r.closing || !r.nc.IsConnected() || !r.aliveLocked(c.replica(), now) {
		return "", nil, nil
	}
	l := &lifeline{replica: c.replica(), computer: true, k: k, since: c.since}
	held := r.addLifelineLocked(l)
	if r.left {
		r.endLifelineLocked(l, gateway.ErrShuttingDown) // the gateway is stopping (Leave)
	}
	return l.replica, held, func() { r.endLifeline(l, context.Canceled) }
}

// HeldElsewhere reports whether a live replica other than this one holds k's socket, by its
// claim (Holding without a lifeline).
func (r *Router) HeldElsewhere(k gateway.Key) bool {
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.remote.get(k)
	return ok && !r.closing && r.nc.IsConnected() && r.aliveLocked(c.replica(), now)
}

// WhileAlive returns a context that lives while replica does: it ends when the replica is
// given up (stopped, silent for ReplicaTTL, off NATS), when this replica loses NATS or
// closes; its cause is a *protocol.Error saying which. stop releases it.
func (r *Router) WhileAlive(replica string) (context.Context, context.CancelFunc) {
	now := r.cfg.Clock.Now()
	l := &lifeline{replica: replica}
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx := r.addLifelineLocked(l)
	switch {
	case r.closing:
		r.endLifelineLocked(l, protocol.Errorf(protocol.CodeNotConnected, "replica %s is shutting down", r.cfg.Replica))
	case !r.aliveLocked(replica, now):
		r.endLifelineLocked(l, protocol.Errorf(protocol.CodeNotConnected, "replica %s is not alive", replica))
	}
	return ctx, func() { r.endLifeline(l, context.Canceled) }
}

func (r *Router) addLifelineLocked(l *lifeline) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	l.cancel = cancel
	r.lifelines[l] = struct{}{}
	return ctx
}

func (r *Router) endLifeline(l *lifeline, cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endLifelineLocked(l, cause)
}

// endLifelineLocked ends l with cause (a second end changes nothing). r.mu is held.
func (r *Router) endLifelineLocked(l *lifeline, cause error) {
	delete(r.lifelines, l)
	l.cancel(cause)
}

// endLifelinesLocked ends every lifeline that gone picks, each with the cause why gives it.
// r.mu is held.
func (r *Router) endLifelinesLocked(gone func(*lifeline) bool, why func(*lifeline) error) int {
	n := 0
	for l := range r.lifelines {
		if gone(l) {
			r.endLifelineLocked(l, why(l))
			n++
		}
	}
	return n
}

// claimMovedLocked ends the computer lifelines of k that its claim no longer stands for: the
// claim is now replica's, of a socket connected since (replica "" when it was withdrawn; bye:
// what the computer said as it left, as its claim's last write named it). r.mu is held.
func (r *Router) claimMovedLocked(k gateway.Key, replica string, since int64, bye gateway.Bye) {
	if len(r.lifelines) == 0 {
		return // the common case: no computer is watched through another replica
	}
	r.endLifelinesLocked(func(l *lifeline) bool {
		return l.computer && l.k == k && (l.replica != replica || l.since != since)
	}, func(l *lifeline) error {
		if replica == "" {
			// A bye is told in a single gateway's words, checked here: the new traposId only
			// when the computer's hello would take it (gateway.RelabelledTo).
			if pe := gateway.ByeError(k.TraposID, bye); pe != nil {
				return pe
			}
			return fmt.Errorf("computer %s disconnected from replica %s", k.TraposID, l.replica)
		}
		return fmt.Errorf("computer %s connected again, to replica %s", k.TraposID, replica)
	})
}

// replicaGoneLocked ends the lifelines that hang on replica, given up: why is what became of
// it. r.mu is held.
func (r *Router) replicaGoneLocked(replica, why string) int {
	return r.endLifelinesLocked(func(l *lifeline) bool { return l.replica == replica }, func(l *lifeline) error {
		if l.computer {
			return holderGone(l.k.TraposID, replica, why)
		}
		return protocol.Errorf(protocol.CodeNotConnected, "replica %s %s", replica, why)
	})
}

// allLifelinesEndLocked ends every lifeline: this replica lost NATS (why), or is closing.
// r.mu is held.
func (r *Router) allLifelinesEndLocked(why string) {
	r.endLifelinesLocked(func(*lifeline) bool { return true }, func(l *lifeline) error {
		if l.computer {
			return protocol.Errorf(protocol.CodeNotConnected, "computer %s is not connected to replica %s, which %s", cctext.ShowTraposID(l.k.TraposID), r.cfg.Replica, why)
		}
		return protocol.Errorf(protocol.CodeNotConnected, "replica %s %s", r.cfg.Replica, why)
	})
}

// lifelineReplicasLocked adds to seen the replicas lifelines hang on (watchHolders checks
// them as it checks those routed requests wait on). r.mu is held.
func (r *Router) lifelineReplicasLocked(seen map[string]bool) {
	for l := range r.lifelines {
		seen[l.replica] = true
	}
}

// relaySubject is where replica answers module's messages about computer k.
func relaySubject(replica, module string, k gateway.Key) string {
	return replicaSubjects(replica) + kindRelay + "." + escapeToken(module) + "." + claimKey(k)
}
