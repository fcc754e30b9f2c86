package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"trap-sandbox/internal/protocol"
)

// A link session is a socket whose hello said link:true (docs/protocol.md, "Linking a
// computer"): a computer without a credential of its own asks the link module for one. It
// needs no secret, so it gets nothing else: it is never registered (invisible to every host
// surface, it evicts nobody), stays a socket before hello for admission until link.begin gives
// it a code (it counts against the same caps and may be evicted as they say; then only the
// connection cap may evict it: linkAnswering), and only link.* and probe_gateway are answered
// on it. It closes with 1000 "linked" once link.accept is answered, with 4008 at the hello
// timeout until link.begin gave it a code, and at most linkSessionGrace after that code's
// lifetime with 1000 "link expired".

// linkSessionGrace is how long a link session outlives its code: room for the last poll and
// the player's answer to the question that follows an approval.
const linkSessionGrace = 30 * time.Second

// Close reasons of a link session (code 1000).
const (
	linkedReason      = "linked"
	linkExpiredReason = "link expired"
)

// linkTypes are the request types a link session may send.
func linkAllowed(typ string) bool {
	return strings.HasPrefix(typ, "link.") || typ == protocol.TypeProbeGateway
}

// startLinkSession answers a hello with link:true: the socket becomes a link session.
func (s *Session) startLinkSession(f protocol.Frame, traposID string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if s.authenticated || s.linkTraposID != "" {
		s.mu.Unlock()
		s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated,
			"this socket already said hello; open a new socket for a link session"))
		return
	}
	s.linkTraposID = traposID
	s.mu.Unlock()
	s.log().Debug("link session", "traposId", clip(traposID))
	payload, _ := json.Marshal(helloAnswer{Link: true, LivenessMs: s.gw.cfg.Liveness().Milliseconds()})
	s.reply(f, payload, nil)
}

// linkRefusal is the answer to a request of typ on a socket without a good hello: nil when it
// is a link session and typ is a link type.
func (s *Session) linkRefusal(typ string) *protocol.Error {
	s.mu.Lock()
	linking := s.linkTraposID != ""
	s.mu.Unlock()
	switch {
	case !linking:
		return protocol.Errorf(protocol.CodeNotAuthenticated, "send hello first")
	case !linkAllowed(typ):
		return protocol.Errorf(protocol.CodeNotAuthenticated,
			"a link session only links: say hello with the computer's secret on a new socket for %s", quoteClipped(typ))
	}
	return nil
}

// requester is who a request comes from: the hello's identity, or a link session's traposId.
func (s *Session) requester() protocol.Requester {
	s.mu.Lock()
	defer s.mu.Unlock()
	traposID := s.key.TraposID
	if !s.authenticated {
		traposID = s.linkTraposID
	}
	return protocol.Requester{AccountID: s.key.AccountID, TraposID: traposID, AccountCreated: s.accountCreated, RemoteAddr: s.remoteAddr,
		Socket: s.socket}
}

// linkAnswering is called with a good answer to a link request on a link session before that
// answer is written. A code starts the session's lifetime and takes it out of the sockets
// before hello that make room for newcomers (admission.go: linkCodeGiven): it waits minutes
// for the approval, and a flood of silent sockets must not end it. It returns what follows the written answer:
// a credential (link.accept, or link.begin with an enrollment key) or a decline ends the
// session; nil for nothing. Called from the request's handler goroutine, so handlers.Add is
// safe.
func (s *Session) linkAnswering(typ string, payload json.RawMessage) (linked func()) {
	s.mu.Lock()
	linking := !s.authenticated && s.linkTraposID != ""
	s.mu.Unlock()
	if !linking {
		return nil
	}
	var ans struct {
		ExpiresInMs int64  `json:"expiresInMs"`
		Credential  string `json:"credential"`
	}
	_ = json.Unmarshal(payload, &ans)
	switch {
	case typ == protocol.TypeLinkAccept || (typ == protocol.TypeLinkBegin && ans.Credential != ""):
		return func() { s.closeByGateway(CloseChecked, linkedReason) }
	case typ == protocol.TypeLinkBegin && ans.ExpiresInMs > 0 && s.linkBegun.CompareAndSwap(false, true):
		s.gw.limits.linkCodeGiven(s.slot)
		timer := s.gw.cfg.Clock.NewTimer(time.Duration(ans.ExpiresInMs)*time.Millisecond + linkSessionGrace)
		s.handlers.Add(1)
		go func() {
			defer s.handlers.Done()
			defer timer.Stop()
			select {
			case <-timer.C():
				s.closeByGateway(CloseChecked, linkExpiredReason)
			case <-s.ctx.Done():
			}
		}()
	}
	return nil
}

// WrongSecret spends one wrong secret of remoteAddr's budget, as a wrong hello secret does
// (the link module calls it for a wrong enrollment key), and waits out the hold-back it earns
// on the gateway's clock. It returns ctx's error if ctx ends first.
func (g *Gateway) WrongSecret(ctx context.Context, remoteAddr string) error {
	g.limits.warns.warn("link rejected: wrong enrollment key", remoteAddr)
	hold := g.limits.helloFailed(remoteAddr)
	if hold.delay <= 0 {
		return nil
	}
	timer := g.cfg.Clock.NewTimer(hold.delay) // armed before it is counted, for tests
	defer timer.Stop()
	hold.count(g.cfg.Metrics)
	select {
	case <-timer.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
