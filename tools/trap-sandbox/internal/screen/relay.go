package screen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
)

// Live screens through any replica (docs/scale-out.md). A viewer asks whichever replica a load
// balancer picks, the watching replica; the computer's socket, and so its screen.update
// requests, are on the holder. The watching replica's module keeps the watch and its viewers
// as for a computer of its own, but starts and stops it through the holder's module
// (messages watch and unwatch), which asks the computer and keeps a record of the watch: its
// id and the replica it is for. The holder's module passes each screen.update of a recorded
// watch on to that replica (update), whose answer it gives the computer: unknown_watch there
// stops the watch on the computer, as it does on one gateway.
//
// An update is passed on as a request with a timeout (RelayTimeout), not fired and forgotten:
// the computer sends a watch's next update only once the last one is answered, so the
// watching replica's answer is the watch's flow control end to end (a slow replica slows that
// watch alone, never floods it, and the answer carries unknown_watch back to the computer).
// The wait runs in the update's own handler goroutine (one of the socket's request slots, as
// every screen.update holds), never on the socket's reader, and ends at the timeout: a slow or
// vanished watching replica costs the holder that one goroutine for RelayTimeout at most, and
// the holder then forgets the watch, answers the computer unknown_watch (it stops the watch),
// and tells the watching replica (lost), whose viewers' streams end.
//
// What ends a watch ends a relayed one too, with the same words where the cause is the same:
//   - the computer's socket closes, or it says hello again anywhere: the cluster's lifeline of
//     the computer on the holder ends (Relay.Holder), as a socket's context ends here;
//   - the holder stops, crashes or goes silent, or the watching replica loses NATS: that
//     lifeline ends, naming the holder, within a heartbeat interval of a crash (the cluster
//     probes the replicas lifelines hang on);
//   - the owner withdraws sandbox.allow_screen: the computer's last update, passed on;
//   - the last viewer leaves: unwatch, through the holder;
//   - the watching replica dies: the holder forgets its watches (Relay.Alive), and the
//     computer's next update is answered unknown_watch.

// RelayTimeout bounds how long the holder waits for the watching replica to take a
// screen.update it passes on.
const RelayTimeout = 5 * time.Second

// PassOnWithin makes d the bound of the wait for the watching replica to take an update passed
// on, instead of RelayTimeout (tests of a slow replica).
func (m *Module) PassOnWithin(d time.Duration) *Module {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.relayTimeout = d
	return m
}

// Relay is the module's link to the screen modules of the other replicas: the cluster's Peer.
type Relay interface {
	// Send sends msg to the module on replica about computer (accountID, traposID) and returns
	// its answer (Relayed's there), waiting at most timeout.
	Send(ctx context.Context, replica, accountID, traposID string, msg json.RawMessage, timeout time.Duration) (json.RawMessage, error)
	// Tell sends msg and waits for no answer.
	Tell(replica, accountID, traposID string, msg json.RawMessage) error
	// Holder names the live replica other than this one that holds the computer's socket
	// ("" when none does), and a context that ends when that socket is no longer held there or
	// the replica is given up: its cause is a *protocol.Error when the replica was given up.
	// stop releases it.
	Holder(accountID, traposID string) (replica string, held context.Context, stop context.CancelFunc)
	// Alive returns a context that ends when replica is given up; stop releases it.
	Alive(replica string) (alive context.Context, stop context.CancelFunc)
}

// Messages between the screen modules of two replicas (relayMsg.Op).
const (
	opWatch   = "watch"   // to the holder: start a watch of the computer (Monitor: of that monitor) for the sender
	opUnwatch = "unwatch" // to the holder: stop the sender's watch WatchID
	opUpdate  = "update"  // to the watching replica: the computer's screen.update (Update)
	opLost    = "lost"    // to the watching replica, unanswered: the holder gave up watch WatchID (Message: why)
)

// relayMsg is a message of the module to the module on another replica.
type relayMsg struct {
	Op      string          `json:"op"`
	WatchID json.RawMessage `json:"watchId,omitempty"`
	// Monitor is the monitor watched (host text), "" for the computer's own screen: watch's,
	// and lost's, whose watch is looked up by it. A replica of a build before monitors' watches
	// leaves it out, and watches the computer's own screen, as it asked.
	Monitor string `json:"monitor,omitempty"`
	// Update is the computer's screen.update payload, as it sent it.
	Update  json.RawMessage `json:"update,omitempty"`
	Message string          `json:"message,omitempty"`
}

func (msg relayMsg) encode() json.RawMessage {
	b, _ := json.Marshal(msg) // strings and JSON already valid: it cannot fail
	return b
}

// relayed is a watch this module started for another replica's viewers (owner), on a
// computer whose socket this replica holds.
type relayed struct {
	accountID, traposID, key string
	monitor                  string // host text; "" for the computer's own screen
	owner                    string
	ready                    chan struct{} // closed once screen.watch answered (id or err set)

	// Guarded by Module.mu.
	id      string
	err     error
	dropped bool
	// watching: the computer's socket is watched (from the watch's answer, or, when no socket
	// was known then, from its first update); stops releases what the record watches.
	watching bool
	stops    []func()
}

// Relayed answers a message from the screen module of replica from about computer
// (accountID, traposID): the cluster's handler of the module's messages.
func (m *Module) Relayed(ctx context.Context, from, accountID, traposID string, payload json.RawMessage) (json.RawMessage, error) {
	var msg relayMsg
	if err := json.Unmarshal(payload, &msg); err != nil {
		return nil, protocol.Errorf(protocol.CodeBadPayload, "a screen message from replica %s is not one: %v", from, err)
	}
	if m.relay == nil {
		return nil, protocol.Errorf(protocol.CodeInternal, "this gateway is not a replica")
	}
	switch msg.Op {
	case opWatch:
		return m.watchFor(ctx, from, accountID, traposID, msg.Monitor)
	case opUnwatch:
		return nil, m.unwatchFor(ctx, from, accountID, traposID, msg.Monitor, msg.WatchID)
	case opUpdate:
		u, err := decodeUpdate(msg.Update)
		if err != nil {
			return nil, err
		}
		return nil, m.merge(ctx, protocol.Requester{AccountID: accountID, TraposID: traposID}, u, len(msg.Update), from)
	case opLost:
		m.lost(from, accountID, traposID, msg)
		return nil, nil
	}
	return nil, protocol.Errorf(protocol.CodeBadPayload, "a screen message from replica %s has no known op (%s)", from, clip(msg.Op))
}

// holderOf finds the replica holding the socket of listed, w's computer, when another replica
// does, and records it in w; held is its lifeline then. A computer listed on another replica
// that none holds any more is not connected.
func (m *Module) holderOf(listed computer.Computer, w *watch) (held context.Context, stop context.CancelFunc, err error) {
	if m.relay == nil || listed.AccountID == "" || listed.Replica == "" || listed.Replica == m.replica {
		return nil, nil, nil
	}
	holder, held, stop := m.relay.Holder(listed.AccountID, listed.TraposID)
	if holder == "" {
		return nil, nil, computer.NotConnected(listed.TraposID)
	}
	w.holder = holder
	return held, stop, nil
}

// startThrough starts w through its holder's module (watchFor there).
func (m *Module) startThrough(ctx context.Context, w *watch, timeout time.Duration) (string, error) {
	if timeout <= 0 {
		timeout = computer.DefaultTimeout
	}
	answer, err := m.relay.Send(ctx, w.holder, w.accountID, w.traposID, relayMsg{Op: opWatch, Monitor: w.monitor}.encode(), min(timeout, computer.MaxTimeout))
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.Refused {
		// The computer's own refusal, said so by the holder (watchFor): ByComputer again, so
		// the stream's refusal says it is the computer's here too.
		refused := pe.FromTheAPI()
		refused.Refused = false
		return "", refused
	}
	if err != nil {
		return "", err
	}
	id, err := watchIDOf(answer, w.traposID)
	if err != nil || w.monitor == "" {
		return id, err
	}
	// A holder of a build before monitors' watches reads no monitor in watch, and watches the
	// computer's own screen, whose updates would never reach this monitor's viewers: its
	// answer names no monitor. That watch is stopped, and the viewer told why.
	var said struct {
		Monitor string `json:"monitor"`
	}
	if json.Unmarshal(answer, &said) == nil && said.Monitor == w.monitor {
		return id, nil
	}
	unwatch := relayMsg{Op: opUnwatch, WatchID: rawID(id)}.encode()
	_, _ = m.relay.Send(context.WithoutCancel(ctx), w.holder, w.accountID, w.traposID, unwatch, computer.DefaultTimeout)
	return "", protocol.Errorf(protocol.CodeInternal, "replica %s, which holds the socket of computer %s, runs an older build of the gateway, "+
		"which watches no monitor: upgrade it to watch monitor %s", w.holder, cctext.ShowTraposID(w.traposID), clip(w.monitor))
}

// unwatchThrough stops w, whose last viewer left, through its holder's module (bounded by
// computer.DefaultTimeout; the computer stops it anyway at its next update, answered
// unknown_watch).
func (m *Module) unwatchThrough(w *watch) {
	msg := relayMsg{Op: opUnwatch, WatchID: rawID(w.id), Monitor: w.monitor}.encode()
	_, _ = m.relay.Send(context.Background(), w.holder, w.accountID, w.traposID, msg, computer.DefaultTimeout)
}

// watchFor starts a watch of the computer, whose socket this replica holds (of its monitor named
// monitor; "": its own screen), for replica owner's viewers, and records it: the computer's updates of it go to owner from now on. The
// record ends with owner (Alive), and with the computer's socket (owner's viewers learn that
// from the cluster's lifeline of the computer, Relay.Holder).
func (m *Module) watchFor(ctx context.Context, owner, accountID, traposID, monitor string) (json.RawMessage, error) {
	rw := &relayed{accountID: accountID, traposID: traposID, monitor: monitor, key: watchKey(accountID, traposID, monitor), owner: owner, ready: make(chan struct{})}
	m.mu.Lock()
	m.relayed[rw.key] = append(m.relayed[rw.key], rw)
	m.mu.Unlock()
	timeout := computer.DefaultTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	socket := m.socket(accountID, traposID) // taken before it answers, as Watch takes it
	// As the computer's account, which the viewer's replica checked its viewer reaches: the
	// replicas trust each other (docs/scale-out.md, Security).
	id, err := m.start(account.WithCaller(ctx, account.Caller{Account: accountID}), traposID, monitor, timeout)
	m.mu.Lock()
	rw.id, rw.err = id, err
	if err == nil {
		alive, stop := m.relay.Alive(owner)
		after := context.AfterFunc(alive, func() {
			// Given up on, owner may live on all the same (its heartbeats late, not lost): it
			// is told, so that its viewers do not wait for updates that no longer come.
			if m.drop(rw) {
				m.tellLost(rw, fmt.Sprintf("it took replica %s for gone: %s", owner, reason(context.Cause(alive))))
			}
		})
		rw.stops = append(rw.stops, func() { after(); stop() })
		if stopSocket := untilSocketCloses(socket, func(error) { m.drop(rw) }); stopSocket != nil {
			rw.watching = true
			rw.stops = append(rw.stops, stopSocket)
		}
	} else {
		m.removeLocked(rw)
	}
	close(rw.ready)
	m.mu.Unlock()
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.ByComputer {
		// ByComputer is not on the bus: Refused says it to the watching replica
		// (startThrough), which tells its viewer the refusal is the computer's. A replica of
		// a build before it reads the refusal as the gateway's, as it did.
		refused := pe.ToTheAPI()
		refused.Refused = true
		return nil, refused
	}
	if err != nil {
		return nil, err
	}
	answer := map[string]any{"watchId": rawID(id)}
	if monitor != "" {
		answer["monitor"] = monitor // says the watch is of that monitor (startThrough)
	}
	return json.Marshal(answer)
}

// unwatchFor stops owner's watch id of the computer (of its monitor; "": its own screen): the
// record, and the computer's watch.
func (m *Module) unwatchFor(ctx context.Context, owner, accountID, traposID, monitor string, id json.RawMessage) error {
	if len(id) == 0 {
		return protocol.Errorf(protocol.CodeBadPayload, "unwatch: watchId is missing")
	}
	rw := m.recorded(watchKey(accountID, traposID, monitor), watchID(id))
	if rw == nil || rw.owner != owner {
		return nil // gone already (the socket closed, or the computer answered unknown_watch)
	}
	m.drop(rw)
	payload := map[string]json.RawMessage{"watchId": rawID(rw.id)}
	raw, _ := json.Marshal(payload)
	_, _, err := m.client.Request(account.WithCaller(ctx, account.Caller{Account: accountID}), traposID, protocol.TypeScreenUnwatch, raw, computer.DefaultTimeout)
	return err
}

// relayedWatch is the record of watch id of computer from (of its monitor, host text; "": its
// own screen), if this module keeps one. A watch being started may be it (its update can
// overtake screen.watch's answer): it waits for those.
func (m *Module) relayedWatch(ctx context.Context, from protocol.Requester, monitor, id string) *relayed {
	key := watchKey(from.AccountID, from.TraposID, monitor)
	for {
		var starting chan struct{}
		m.mu.Lock()
		for _, rw := range m.relayed[key] {
			select {
			case <-rw.ready:
				if rw.err == nil && rw.id == id {
					m.mu.Unlock()
					return rw
				}
			default:
				starting = rw.ready
			}
		}
		m.mu.Unlock()
		if starting == nil {
			return nil
		}
		select {
		case <-starting:
		case <-ctx.Done():
			return nil
		}
	}
}

// recorded is the started record of watch id of the computer of key, or nil.
func (m *Module) recorded(key, id string) *relayed {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, rw := range m.relayed[key] {
		select {
		case <-rw.ready:
			if rw.err == nil && rw.id == id {
				return rw
			}
		default:
		}
	}
	return nil
}

// passOn passes the computer's update of rw (payload; ended: its last) on to rw's owner, and
// answers the computer what the owner answered; see the file's comment for a failure.
func (m *Module) passOn(ctx context.Context, rw *relayed, payload json.RawMessage, ended bool) error {
	m.mu.Lock()
	if !rw.watching && !rw.dropped {
		rw.watching = true
		rw.stops = append(rw.stops, untilSocketCloses(ctx, func(error) { m.drop(rw) })) // ctx ends with the socket
	}
	timeout := m.relayTimeout
	m.mu.Unlock()
	_, err := m.relay.Send(ctx, rw.owner, rw.accountID, rw.traposID, relayMsg{Op: opUpdate, WatchID: rawID(rw.id), Update: payload}.encode(), timeout)
	if err == nil {
		if ended {
			m.drop(rw) // the computer ended the watch
		}
		return nil
	}
	m.drop(rw)
	code := protocol.CodeOf(err)
	if ctx.Err() != nil {
		// The computer's socket closed under the send (it left, or this replica is stopping):
		// the cluster's lifeline of the computer ends the owner's viewers in its words (the
		// computer disconnected, the replica shut down). Told lost, they read "could not pass
		// it on (context canceled)" instead, whichever reached the owner first.
		return unknownWatch(rawID(rw.id), rw.traposID)
	}
	if code != protocol.CodeUnknownWatch {
		// The owner may still keep the watch (slow, or its answer lost): its viewers must not
		// wait for updates that no longer come.
		m.tellLost(rw, reason(err))
	}
	if code == protocol.CodeBadPayload {
		return err // the computer's update, refused there: as on one gateway
	}
	return unknownWatch(rawID(rw.id), rw.traposID)
}

// tellLost tells rw's owner that this replica no longer passes rw's updates on, and why.
func (m *Module) tellLost(rw *relayed, why string) {
	_ = m.relay.Tell(rw.owner, rw.accountID, rw.traposID, relayMsg{Op: opLost, WatchID: rawID(rw.id), Monitor: rw.monitor, Message: why}.encode())
}

// reason is err's message without its code.
func reason(err error) string {
	if pe, ok := errors.AsType[*protocol.Error](err); ok {
		return pe.Message
	}
	return err.Error()
}

// drop forgets rw: its updates are answered unknown_watch from now on. It reports whether rw
// was kept until now.
func (m *Module) drop(rw *relayed) bool {
	m.mu.Lock()
	if rw.dropped {
		m.mu.Unlock()
		return false
	}
	m.removeLocked(rw)
	stops := rw.stops
	rw.stops = nil
	m.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	return true
}

// removeLocked takes rw out of m.relayed. m.mu is held.
func (m *Module) removeLocked(rw *relayed) {
	rw.dropped = true
	list := m.relayed[rw.key]
	for i, other := range list {
		if other == rw {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(m.relayed, rw.key)
	} else {
		m.relayed[rw.key] = list
	}
}

// lost ends the watch of the computer that holder gave up (its message lost): the viewers are
// told, and the next one starts a new watch.
func (m *Module) lost(holder, accountID, traposID string, msg relayMsg) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.watches[watchKey(accountID, traposID, msg.Monitor)]
	if w == nil || w.holder != holder || w.gone != nil || w.stopped {
		return
	}
	select {
	case <-w.ready:
	default:
		return // not started yet: its id is not known, so it is not the one lost
	}
	if w.err != nil || w.id != watchID(msg.WatchID) {
		return
	}
	if w.held != nil && w.held.Err() != nil {
		// The lifeline ended first, its end on its way (computerGone): its words say why, the
		// holder's only that it gave this replica up (this replica stopping, gateway.ErrShuttingDown).
		return
	}
	m.endLocked(w, protocol.Errorf(protocol.CodeNotConnected,
		"the live screen of computer %s stopped: replica %s, which holds its socket, could not pass it on (%s); watch it again",
		cctext.ShowTraposID(traposID), holder, clipReason(msg.Message)))
}

// clipReason bounds another replica's reason in a viewer's message.
func clipReason(s string) string {
	if len(s) > maxEndedBytes {
		return s[:maxEndedBytes] + "…"
	}
	return s
}

// Relays is how many watches this module keeps for other replicas' viewers (for tests).
func (m *Module) Relays() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, list := range m.relayed {
		n += len(list)
	}
	return n
}

// watchIDOf reads screen.watch's answer.
func watchIDOf(answer json.RawMessage, traposID string) (string, error) {
	var ans struct {
		WatchID json.RawMessage `json:"watchId"`
	}
	if err := json.Unmarshal(answer, &ans); err != nil || len(ans.WatchID) == 0 {
		return "", protocol.Errorf(protocol.CodeInternal, "computer %s answered screen.watch without a watchId", cctext.ShowTraposID(traposID))
	}
	return watchID(ans.WatchID), nil
}
