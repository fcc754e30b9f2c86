package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// TypeBye is a computer's word that it is closing its socket, and why, sent just before CC's
// close(), which sends no close frame (docs/protocol.md, "bye"). The gateway answers it and
// closes the socket itself with 1000 and a named reason, so the log says why the computer left
// instead of the abnormal 1006 a bare close() leaves.
const TypeBye = protocol.TypeBye

// bye's reasons: the close frame's reason and the log line's say them.
const (
	// ByeRelabelled: the computer's label changed; it says hello again, on a new socket, with
	// its new traposId (payload.traposId).
	ByeRelabelled = "relabelled"
	// ByeStopped: its player stopped the daemon (sandbox stop); nothing reconnects until
	// sandbox reconnect.
	ByeStopped = "stopped"
	// ByeReconnecting: its player asked for a new connection (sandbox reconnect, a changed
	// sandbox.url or sandbox.password); it says hello again at once, on a new socket.
	ByeReconnecting = "reconnecting"
	// LeftRevoked is no bye but the gateway's own close of a computer whose credential was
	// revoked (4003): its claim's withdrawal says it as it says a bye (Bye), so that the other
	// replicas tell a live screen's viewers why, as a single gateway does.
	LeftRevoked = "revoked"
)

// byeMessages are what the host's requests waiting on a socket that said bye fail with, and a
// screen watched on it ends with, by reason (ByeRelabelled has its own, naming the new id).
var byeMessages = map[string]string{
	ByeStopped:      "computer %s was stopped by its player (sandbox stop; sandbox reconnect on it starts it again)",
	ByeReconnecting: "computer %s is reconnecting (sandbox reconnect, or a changed setting on it): ask it again in a moment",
}

// CloseBye: the computer said bye; the reason is bye's own when the gateway knows it, else
// "bye".
const CloseBye = CloseChecked // 1000

// byeReasonOther is the close reason of a bye whose reason the gateway does not know: a
// computer's own words never become the close frame's.
const byeReasonOther = "bye"

// byePayload is what bye carries: why, and for ByeRelabelled the computer's new traposId.
type byePayload struct {
	Reason   string `json:"reason"`
	TraposID string `json:"traposId"`
}

// relabelled is why a relabelled computer's socket ended: its requests that were pending fail
// with pe, its screen's viewers hear it (the session context's cause), and its disconnect line
// names to.
type relabelled struct {
	pe *protocol.Error
	to string
}

func (r *relabelled) Error() string { return r.pe.Error() }
func (r *relabelled) Unwrap() error { return r.pe }

// Bye is what a computer said as it left (its bye): Reason, one of ByeRelabelled, ByeStopped
// and ByeReconnecting (or LeftRevoked: cut off for its revoked credential), and for ByeRelabelled its new traposId To ("" when its bye named none
// the gateway takes, RelabelledTo). The zero Bye: it said none (or none the gateway knows).
// With replicas, the claim of a computer that said bye names it as the claim is withdrawn, so
// that a live screen watched through another replica ends as one watched on the holder
// (docs/scale-out.md).
type Bye struct {
	Reason string
	To     string
}

// RelabelledTo is to when computer from may have been relabelled to it, as a hello would take
// it: a valid traposId of the same computer id that is not from; else "". A bye's word, and
// an answer another replica passes on, are held to it.
func RelabelledTo(from, to string) string {
	if to == "" || cctext.TraposIDProblem(to) != "" || account.ComputerID(to) != account.ComputerID(from) || to == from {
		return ""
	}
	return to
}

// ByeError is what the host's requests waiting on the socket of computer from, which said bye,
// fail with, and what a screen watched on it ends with (with RelabelledTo for a relabel whose
// new traposId is known), or of one cut off for its revoked credential (LeftRevoked); nil for
// a Bye the gateway does not know.
func ByeError(from string, bye Bye) *protocol.Error {
	if bye.Reason == LeftRevoked {
		return revokedCause(from)
	}
	if msg, ok := byeMessages[bye.Reason]; ok {
		return protocol.Errorf(protocol.CodeNotConnected, msg, cctext.ShowTraposID(from))
	}
	if bye.Reason != ByeRelabelled {
		return nil
	}
	to := RelabelledTo(from, bye.To)
	if to == "" {
		return protocol.Errorf(protocol.CodeNotConnected,
			"computer %s was relabelled: it says hello under its new label (trap-sandbox computers lists it)", cctext.ShowTraposID(from))
	}
	pe := protocol.Errorf(protocol.CodeNotConnected,
		"computer %s was relabelled: it is %s now; ask it by that id", cctext.ShowTraposID(from), cctext.ShowTraposID(to))
	pe.RelabelledTo = to
	return pe
}

// handleBye answers a bye and closes the socket after the answer (1000, the reason). It runs
// on the reader, before the next frame is read, so the close is the gateway's even when the
// computer drops the connection right behind its bye (CC's close() does).
func (s *Session) handleBye(f *protocol.Frame) {
	var p byePayload
	_ = json.Unmarshal(f.Payload, &p) // the payload is always an object; bad fields stay empty
	from := s.Key().TraposID
	s.reply(*f, nil, nil)
	// The new traposId is the computer's word, as its hello is: named only when its hello
	// would take it, for the same computer id.
	bye := Bye{Reason: p.Reason, To: RelabelledTo(from, p.TraposID)}
	var pe *protocol.Error
	if bye.Reason != LeftRevoked {
		// LeftRevoked is the gateway's word for its own close (closeRevoked), never a
		// computer's: said in a bye, it would tell the host's callers, screen viewers and other
		// replicas that a computer whose credential still opens its account was cut off.
		pe = ByeError(from, bye)
	}
	if pe == nil {
		s.beginClose(CloseBye, byeReasonOther, true, nil)
		return
	}
	if p.Reason != ByeRelabelled {
		bye.To = ""
		s.beginCloseFor(CloseBye, p.Reason, true, pe, bye)
		return
	}
	s.beginCloseFor(CloseBye, ByeRelabelled, true, &relabelled{pe: pe, to: bye.To}, bye)
}

// saidBye is the Bye the computer said before its socket closed, or LeftRevoked (the zero Bye:
// neither).
func (s *Session) saidBye() Bye {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bye
}

// relabelledTo is the new traposId a relabelled computer's bye named, or "".
func (s *Session) relabelledTo() string {
	var r *relabelled
	if errors.As(context.Cause(s.ctx), &r) {
		return r.to
	}
	return ""
}
