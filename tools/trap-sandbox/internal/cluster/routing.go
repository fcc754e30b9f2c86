package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	hostcomputer "trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/protocol"
)

// Routing. A host request for a computer held by another replica goes to that replica's own
// subject (computerSubject), named by the computer's claim, with this replica's reply subject;
// the answer is taken only if it names the replica asked. While requests wait on a replica, it
// is watched: when presence gives it up (no heartbeat within ReplicaTTL, or it stopped), or NATS
// says nobody answers its alive subject any more (it crashed or was cut off), they fail at once
// with not_connected instead of waiting out their timeout.

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
	// Replica names the answering replica; the asker takes an answer only from the replica it
	// asked.
	Replica string          `json:"replica"`
	OK      bool            `json:"ok"`
	Type    string          `json:"type,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Error   *protocol.Error `json:"error,omitempty"`
	// GatewayError is set when the computer gave no answer (not_connected, timeout, …).
	GatewayError *protocol.Error `json:"gatewayError,omitempty"`
}

// pendingRoute is a routed request this replica waits on, in Router.pending by its id.
type pendingRoute struct {
	k      gateway.Key
	holder string // the replica asked
	// peer: the replica asked is not the computer's holder but a module's counterpart there
	// (a relayed message to the replica watching its screen, relay.go).
	peer bool
	// request: a request for the computer (Route), which its holder passes on to it; not a
	// relayed message between the replicas' modules.
	request bool
	done    chan struct{} // closed by settleLocked, once
	resp    routedResponse
	err     error // set instead of resp when the request failed before an answer came
}

// gone is p's error when the replica asked is given up: why says what became of it. A
// request for the computer that may have reached its holder (reached: not NATS's word that
// nobody took it) may have been passed on to the computer and run there
// (hostcomputer.MayHaveDoneIt), as one waiting on a single gateway that stops may have.
func (p *pendingRoute) gone(why string, reached bool) error {
	if p.peer {
		return protocol.Errorf(protocol.CodeNotConnected, "replica %s %s", p.holder, why)
	}
	pe := holderGone(p.k.TraposID, p.holder, why)
	if p.request && reached {
		pe.Message += hostcomputer.MayHaveDoneIt
	}
	return pe
}

// holderGone is the not_connected of computer traposID whose socket replica held, which is
// given up (why: "has stopped", "has sent no heartbeat for 15s", "is shutting down"): the one
// wording of it, marked ReplicaGone, which MCP's tools read (never its words) to say how to
// wait for the computer to connect again elsewhere.
func holderGone(traposID, replica, why string) *protocol.Error {
	pe := protocol.Errorf(protocol.CodeNotConnected, "computer %s is not connected: replica %s, which held its socket, %s",
		cctext.ShowTraposID(traposID), replica, why)
	pe.ReplicaGone = replica
	return pe
}

// Route implements gateway.Cluster: a NATS request to the replica holding the computer's
// socket, bounded by ctx's deadline. No live replica holds it ⇒ not_connected at once; the
// holder gone while the request waits ⇒ not_connected then; no reply in time ⇒ timeout.
func (r *Router) Route(ctx context.Context, k gateway.Key, typ string, payload json.RawMessage) (gateway.Response, error) {
	start := time.Now()
	resp, err := r.route(ctx, k, typ, payload)
	r.metrics.routed(outcome(resp, err), time.Since(start))
	return resp, err
}

func (r *Router) route(ctx context.Context, k gateway.Key, typ string, payload json.RawMessage) (gateway.Response, error) {
	if !r.nc.IsConnected() {
		return gateway.Response{}, notConnectedWithoutNATS(k, r.cfg.Replica)
	}
	holder, err := r.holder(ctx, k)
	if err != nil {
		return gateway.Response{}, err
	}
	timeout := gateway.DefaultRequestTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	body, err := json.Marshal(routedRequest{Type: typ, Payload: payload, TimeoutMs: max(timeout.Milliseconds(), 1)})
	if err != nil {
		return gateway.Response{}, protocol.Errorf(protocol.CodeInternal, "cannot route %s: %v", typ, err)
	}
	id, p, err := r.expect(k, holder, true)
	if err != nil {
		return gateway.Response{}, err
	}
	defer r.forget(id)
	if !r.nc.IsConnected() {
		// Lost since the check above, maybe before expect, when the disconnect handler's
		// failRoutesOnLostNATS could not see this request.
		return gateway.Response{}, notConnectedWithoutNATS(k, r.cfg.Replica)
	}
	msg := &nats.Msg{Subject: computerSubject(holder, k), Reply: replySubject(r.cfg.Replica, id), Data: body}
	if err := r.nc.PublishMsg(msg); err != nil {
		return gateway.Response{}, protocol.Errorf(protocol.CodeNotConnected, "computer %s could not be reached over NATS: %v", cctext.ShowTraposID(k.TraposID), err)
	}
	if err := r.awaitRoute(ctx, id, p, typ); err != nil {
		return gateway.Response{}, err
	}
	rr := p.resp
	if rr.GatewayError != nil {
		heard := heardError(k, rr.GatewayError, true)
		if rr.GatewayError.ReplicaGone == holder {
			// The holder says it is shutting down (holderGone): of itself, which it knows.
			heard.ReplicaGone = holder
		}
		return gateway.Response{}, heard
	}
	if rr.OK && len(rr.Payload) == 0 {
		rr.Payload = protocol.EmptyPayload
	}
	return gateway.Response{OK: rr.OK, Type: rr.Type, Payload: rr.Payload, Error: heardError(k, rr.Error, false)}, nil
}

// heardError is pe, an error in another replica's answer about computer k, with no more than
// a single gateway's answer would carry: its code and message, and for the gateway's own error
// (gateway) a relabel's new traposId only where the computer's hello would take it
// (gateway.RelabelledTo: the same computer id). A computer's own error carries none, as its
// frame does not. So no answer on the bus sends a web console's view to another computer.
func heardError(k gateway.Key, pe *protocol.Error, gatewayError bool) *protocol.Error {
	if pe == nil {
		return nil
	}
	heard := &protocol.Error{Code: pe.Code, Message: pe.Message}
	if gatewayError {
		heard.RelabelledTo = gateway.RelabelledTo(k.TraposID, pe.RelabelledTo)
	}
	return heard
}

// notConnectedWithoutNATS is the answer for a computer not held here while NATS is unreachable.
func notConnectedWithoutNATS(k gateway.Key, replica string) error {
	return protocol.Errorf(protocol.CodeNotConnected,
		"computer %s is not connected to replica %s, and NATS is unreachable, so the other replicas cannot be asked", cctext.ShowTraposID(k.TraposID), replica)
}

// awaitRoute waits for the routed request id (p) to be settled, or for ctx to end: the error
// is p's, or the timeout or cancellation. An answer that settled it as ctx ended is taken.
func (r *Router) awaitRoute(ctx context.Context, id uint64, p *pendingRoute, typ string) error {
	select {
	case <-p.done:
	case <-ctx.Done():
		r.mu.Lock()
		settled := r.pending[id] != p // settleLocked removed it, and closed p.done, under r.mu
		r.mu.Unlock()
		if settled {
			break
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return protocol.Errorf(protocol.CodeTimeout, "computer %s did not answer %s in time", cctext.ShowTraposID(p.k.TraposID), typ)
		}
		// Given up: the holder stops waiting for the computer too (its own timeout would end
		// the wait at about the same time as a deadline, so only a cancel is told).
		_ = r.nc.Publish(cancelSubject(p.holder), []byte(replySubject(r.cfg.Replica, id)))
		return ctx.Err()
	}
	return p.err
}

// answering is a routed request this replica answers (Router.answering): its context, which
// a cancel from its asker ends.
type answering struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// startAnswering registers the routed request whose reply subject is reply, before anything
// else of its is done: its asker's cancel, which comes after it on the same subscription, then
// always finds it.
func (r *Router) startAnswering(reply string) *answering {
	ctx, cancel := context.WithCancel(r.ctx)
	a := &answering{ctx: ctx, cancel: cancel}
	r.mu.Lock()
	r.answering[reply] = a
	r.mu.Unlock()
	return a
}

// answerStarting, when a test sets it, runs as each routed request's goroutine starts, before
// it is answered; nil otherwise.
var answerStarting func()

// stopAnswering forgets a (answered, or never started).
func (r *Router) stopAnswering(reply string, a *answering) {
	a.cancel()
	r.mu.Lock()
	if r.answering[reply] == a {
		delete(r.answering, reply)
	}
	r.mu.Unlock()
}

// cancelAnswer ends the wait of the routed request whose reply subject is reply, if this
// replica still answers it: its asker gave up.
func (r *Router) cancelAnswer(reply string) {
	r.mu.Lock()
	a := r.answering[reply]
	r.mu.Unlock()
	if a != nil {
		r.log.Debug("a routed request given up by its asker: no longer waiting for the computer", "reply", reply)
		a.cancel()
	}
}

// holder names the live replica that holds k's socket, by its claim. A claim the watcher has
// not delivered yet (a hello a moment ago) is read from the bucket.
func (r *Router) holder(ctx context.Context, k gateway.Key) (string, error) {
	r.mu.Lock()
	c, known := r.remote.get(k)
	r.mu.Unlock()
	holder := ""
	if known {
		holder = c.replica()
	} else {
		ctx, cancel := r.opContext(ctx)
		e, err := r.claims.Get(ctx, claimKey(k))
		err = opError(ctx, err)
		cancel()
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			return "", hostcomputer.NotConnected(k.TraposID) // no claim: nobody holds it
		case err != nil:
			return "", protocol.Errorf(protocol.CodeNotConnected,
				"computer %s is not connected to replica %s, and NATS did not say which replica holds it (%v); try again", cctext.ShowTraposID(k.TraposID), r.cfg.Replica, err)
		}
		holder = claimantOf(e)
		if holder == "" || holder == r.cfg.Replica {
			// Not a claim, or this replica's own, whose socket is gone (Lookup found none).
			return "", hostcomputer.NotConnected(k.TraposID)
		}
	}
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	alive, stopped := r.aliveLocked(holder, now), r.stopped[holder]
	r.mu.Unlock()
	if !alive {
		why := fmt.Sprintf("has sent no heartbeat for %s", r.cfg.ReplicaTTL)
		if stopped {
			why = "has stopped" // it said goodbye (Leave): not a TTL ago
		}
		return "", holderGone(k.TraposID, holder, why)
	}
	return holder, nil
}

// expect records a routed request to holder about to be sent (request: one for the computer,
// not a relayed message); forget removes it. Once the router is closing, no request is sent.
func (r *Router) expect(k gateway.Key, holder string, request bool) (uint64, *pendingRoute, error) {
	p := &pendingRoute{k: k, holder: holder, request: request, done: make(chan struct{})}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return 0, nil, protocol.Errorf(protocol.CodeNotConnected, "replica %s is shutting down", r.cfg.Replica)
	}
	r.nextID++
	r.pending[r.nextID] = p
	return r.nextID, p, nil
}

func (r *Router) forget(id uint64) {
	r.mu.Lock()
	delete(r.pending, id)
	r.mu.Unlock()
}

// settleLocked ends the routed request id with resp, or err; one that has ended or been given
// up on is left alone. r.mu is held.
func (r *Router) settleLocked(id uint64, resp routedResponse, err error) {
	p := r.pending[id]
	if p == nil {
		return
	}
	delete(r.pending, id)
	p.resp, p.err = resp, err
	close(p.done)
}

// RoutedInFlight is how many routed requests this replica is waiting on (tests check that none
// is left behind).
func (r *Router) RoutedInFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// serve handles a message on this replica's own subjects (the subscription's goroutine, so it
// must not block).
func (r *Router) serve(m *nats.Msg) {
	rest, ok := strings.CutPrefix(m.Subject, r.own)
	if !ok {
		return
	}
	kind, arg, _ := strings.Cut(rest, ".")
	switch kind {
	case kindReply:
		r.replyArrived(arg, m)
	case kindAlive:
		_ = m.Respond([]byte(strconv.Quote(r.cfg.Replica)))
	case kindCancel:
		r.cancelAnswer(string(m.Data))
	case kindRelay:
		r.serveRelay(arg, m)
	case kindComputer:
		if m.Reply == "" {
			return
		}
		k, err := parseClaimKey(arg)
		if err != nil {
			r.respond(m, routedResponse{GatewayError: protocol.Errorf(protocol.CodeInternal, "a routed request's subject names no computer: %v", err)})
			return
		}
		// One goroutine per request (a computer may have several requests in flight), up to
		// cfg.MaxBusAnswers at once.
		a := r.startAnswering(m.Reply)
		if pe := r.spawnAnswer(func() {
			if answerStarting != nil {
				answerStarting()
			}
			r.answer(k, m, a)
		}); pe != nil {
			r.stopAnswering(m.Reply, a)
			r.respond(m, routedResponse{GatewayError: pe})
		}
	}
}

// replyArrived applies an answer to the routed request whose id ends its subject. An answer
// that does not name the replica asked is ignored (and logged): only the holder answers for
// its computers.
func (r *Router) replyArrived(idToken string, m *nats.Msg) {
	id, err := strconv.ParseUint(idToken, 10, 64)
	if err != nil {
		return
	}
	r.mu.Lock()
	p := r.pending[id]
	r.mu.Unlock()
	if p == nil {
		return // answered already, or given up on
	}
	if len(m.Data) == 0 && m.Header.Get("Status") == "503" { // NATS: nobody subscribes the subject
		r.fail(id, p.gone("is not on NATS any more (it stopped, crashed or lost its connection)", false))
		return
	}
	var rr routedResponse
	if err := json.Unmarshal(m.Data, &rr); err != nil || rr.Replica != p.holder {
		r.log.Warn("ignored an answer to a routed request that does not come from the replica asked: another NATS client answers for the replicas; fence their subjects (docs/scale-out.md, Security)",
			"traposId", p.k.TraposID, "asked", p.holder, "answerNames", rr.Replica)
		return
	}
	r.mu.Lock()
	r.settleLocked(id, rr, nil)
	r.mu.Unlock()
}

// fail ends the routed request id with err.
func (r *Router) fail(id uint64, err error) {
	r.mu.Lock()
	r.settleLocked(id, routedResponse{}, err)
	r.mu.Unlock()
}

// failRoutesOnLostNATS ends every routed request this replica waits on with not_connected: its
// NATS connection is lost, and with it the subscription its answers arrive on (an answer sent
// meanwhile is dropped by NATS), so waiting would end only at the request's timeout, misnamed
// as the computer's. A request for the computer was sent before NATS went, so its holder may
// have passed it on and the computer run it (hostcomputer.MayHaveDoneIt): without those words
// an exec was asked again and ran twice, and a cut put named no temporary file left.
func (r *Router) failRoutesOnLostNATS() {
	failed := 0
	r.mu.Lock()
	for id, p := range r.pending {
		mayHaveRun := ""
		if p.request {
			mayHaveRun = hostcomputer.MayHaveDoneIt
		}
		r.settleLocked(id, routedResponse{}, protocol.Errorf(protocol.CodeNotConnected,
			"computer %s is not connected to replica %s, and NATS became unreachable while replica %s, which holds its socket, was being asked%s",
			cctext.ShowTraposID(p.k.TraposID), r.cfg.Replica, p.holder, mayHaveRun))
		failed++
	}
	// The relayed messages of watches here reach this replica no more.
	r.allLifelinesEndLocked("lost its NATS connection")
	r.mu.Unlock()
	if failed > 0 {
		r.log.Info("requests waiting on other replicas fail: the NATS connection is lost", "requests", failed)
	}
}

// failRoutesTo ends every routed request waiting on replica with not_connected, why being
// what became of the replica.
func (r *Router) failRoutesTo(replica, why string) {
	failed := 0
	r.mu.Lock()
	for id, p := range r.pending {
		if p.holder == replica {
			r.settleLocked(id, routedResponse{}, p.gone(why, true))
			failed++
		}
	}
	r.replicaGoneLocked(replica, why)
	r.mu.Unlock()
	if failed > 0 {
		r.log.Info("requests waiting on another replica fail: it "+why, "holder", replica, "requests", failed)
	}
}

// watchHolders runs at every heartbeat tick: the routed requests waiting on a replica that
// presence has given up on fail now, and the lifelines hanging on it end (relay.go); every
// other replica they wait or hang on is asked whether it is still on NATS (NATS drops a
// crashed process's subscriptions as soon as its connection closes, so "no responders" there
// means it is gone).
func (r *Router) watchHolders() {
	now := r.cfg.Clock.Now()
	var probe []string
	dead := map[string]string{} // replica: what became of it
	r.mu.Lock()
	seen := map[string]bool{}
	for _, p := range r.pending {
		seen[p.holder] = true
	}
	r.lifelineReplicasLocked(seen)
	for holder := range seen {
		switch {
		case r.stopped[holder]:
			// Its goodbye came while the request was on its way to it (the goodbye failed the
			// requests waiting then): it stopped, it did not go silent.
			dead[holder] = "has stopped"
		case !r.aliveLocked(holder, now):
			dead[holder] = fmt.Sprintf("has sent no heartbeat for %s", r.cfg.ReplicaTTL)
		case !r.probing[holder]:
			r.probing[holder] = true
			probe = append(probe, holder)
		}
	}
	r.mu.Unlock()
	for h, why := range dead {
		r.failRoutesTo(h, why)
	}
	for _, h := range probe {
		if !r.spawn(func() { r.probe(h) }) {
			r.mu.Lock()
			delete(r.probing, h)
			r.mu.Unlock()
		}
	}
}

// probe asks replica whether it is still on NATS; if nobody answers its alive subject, the
// requests waiting on it fail. No answer in time proves nothing (a busy or frozen replica, or
// one that died after the question reached it): presence decides then, within ReplicaTTL. So
// the wait is short, half a heartbeat interval at most, and the next tick asks again.
func (r *Router) probe(replica string) {
	defer func() {
		r.mu.Lock()
		delete(r.probing, replica)
		r.mu.Unlock()
	}()
	ctx, cancel := clock.WithTimeout(r.ctx, r.cfg.Clock, min(r.cfg.OpTimeout, r.cfg.HeartbeatInterval/2))
	defer cancel()
	_, err := r.nc.RequestWithContext(ctx, aliveSubject(replica), nil)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		r.failRoutesTo(replica, "is not on NATS any more (it stopped, crashed or lost its connection)")
	case err != nil:
		r.log.Debug("a replica that requests wait on did not say whether it is alive: presence decides", "subject", aliveSubject(replica), "err", err)
	}
}

// answer serves one routed request with the socket held here (Local.Serve) and replies.
func (r *Router) answer(k gateway.Key, m *nats.Msg, a *answering) {
	defer r.stopAnswering(m.Reply, a)
	var req routedRequest
	if err := json.Unmarshal(m.Data, &req); err != nil || req.Type == "" {
		r.respond(m, routedResponse{GatewayError: protocol.Errorf(protocol.CodeInternal, "a routed request must be JSON with a type")})
		return
	}
	// The asking replica sends an object (Gateway.Request checks it); anyone else on the bus
	// is held to the same rule before the computer sees anything.
	payload, err := protocol.ObjectPayload(req.Payload)
	if err != nil {
		var pe *protocol.Error
		if !errors.As(err, &pe) {
			pe = protocol.Errorf(protocol.CodeInternal, "%v", err)
		}
		r.respond(m, routedResponse{GatewayError: pe})
		return
	}
	local := r.attached()
	if local == nil {
		r.respond(m, routedResponse{GatewayError: hostcomputer.NotConnected(k.TraposID)})
		return
	}
	timeout := time.Duration(req.TimeoutMs) * time.Millisecond
	if timeout <= 0 || timeout > gateway.MaxRequestTimeout {
		timeout = gateway.MaxRequestTimeout
	}
	ctx, cancel := context.WithTimeout(a.ctx, timeout)
	defer cancel()
	resp, err := local.Serve(ctx, k, req.Type, payload)
	if errors.Is(err, context.Canceled) && r.ctx.Err() == nil {
		return // its asker gave up (cancelAnswer): nobody waits for an answer
	}
	if err != nil {
		// A socket closed because this replica stops said "the gateway is shutting down": the
		// asker's caller reads it on another replica, so it names this one.
		stopping := holderGone(k.TraposID, r.cfg.Replica, "is shutting down")
		var pe *protocol.Error
		switch {
		case errors.As(err, &pe):
			if pe.Code == protocol.CodeNotConnected && r.isLeaving() {
				if strings.HasSuffix(pe.Message, hostcomputer.MayHaveDoneIt) { // the computer had it
					stopping.Message += hostcomputer.MayHaveDoneIt
				}
				pe = stopping
			}
		case errors.Is(err, context.Canceled):
			pe = stopping
		default:
			pe = protocol.Errorf(protocol.CodeInternal, "request failed: %v", err)
		}
		r.respond(m, routedResponse{GatewayError: pe})
		return
	}
	r.respond(m, routedResponse{OK: resp.OK, Type: resp.Type, Payload: resp.Payload, Error: resp.Error})
}

// respond sends rr, in this replica's name, to the asker of m.
func (r *Router) respond(m *nats.Msg, rr routedResponse) {
	rr.Replica = r.cfg.Replica
	b, err := json.Marshal(rr)
	if err != nil {
		b, _ = json.Marshal(routedResponse{Replica: r.cfg.Replica, GatewayError: protocol.Errorf(protocol.CodeInternal, "cannot encode the answer: %v", err)})
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
