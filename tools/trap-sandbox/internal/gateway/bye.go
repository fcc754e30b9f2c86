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

// handleBye answers a bye and closes the socket after the answer (1000, the reason). It runs
// on the reader, before the next frame is read, so the close is the gateway's even when the
// computer drops the connection right behind its bye (CC's close() does).
func (s *Session) handleBye(f *protocol.Frame) {
	var p byePayload
	_ = json.Unmarshal(f.Payload, &p) // the payload is always an object; bad fields stay empty
	from := s.Key().TraposID
	s.reply(*f, nil, nil)
	if msg, ok := byeMessages[p.Reason]; ok {
		s.beginClose(CloseBye, p.Reason, true, protocol.Errorf(protocol.CodeNotConnected, msg, cctext.ShowTraposID(from)))
		return
	}
	if p.Reason != ByeRelabelled {
		s.beginClose(CloseBye, byeReasonOther, true, nil)
		return
	}
	// The new traposId is the computer's word, as its hello is: named only when its hello
	// would take it, for the same computer id.
	to := p.TraposID
	if traposIDProblem(to) != "" || account.ComputerID(to) != account.ComputerID(from) || to == from {
		to = ""
	}
	var cause *relabelled
	if to != "" {
		cause = &relabelled{to: to, pe: protocol.Errorf(protocol.CodeNotConnected,
			"computer %s was relabelled: it is %s now; ask it by that id", cctext.ShowTraposID(from), cctext.ShowTraposID(to))}
		cause.pe.RelabelledTo = to
	} else {
		cause = &relabelled{pe: protocol.Errorf(protocol.CodeNotConnected,
			"computer %s was relabelled: it says hello under its new label (trap-sandbox computers lists it)", cctext.ShowTraposID(from))}
	}
	s.beginClose(CloseBye, ByeRelabelled, true, cause)
}

// relabelledTo is the new traposId a relabelled computer's bye named, or "".
func (s *Session) relabelledTo() string {
	var r *relabelled
	if errors.As(context.Cause(s.ctx), &r) {
		return r.to
	}
	return ""
}
