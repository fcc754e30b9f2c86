package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	hostcomputer "trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
)

// A session closes once, for the first of these reasons; later calls do nothing. Each fails
// the pending requests and leaves the registry at once, so no new request is routed here.

// closeByGateway ends the socket with a close frame (code, reason) sent after the frames
// already queued. It reports whether this call started the close.
func (s *Session) closeByGateway(code int, reason string) bool {
	return s.beginClose(code, reason, true, nil)
}

// ErrShuttingDown is why a socket closed by Shutdown ended: its pending requests fail with it,
// and its context's cause is it (protocol.RequestHandler), so a screen watch's viewers hear
// that the gateway stopped, not that the computer left: it is marked Stopping, which they read
// (the CLI's view), never its words.
var ErrShuttingDown = &protocol.Error{Code: protocol.CodeNotConnected, Message: "the gateway is shutting down", Stopping: true}

// shutdownBeforeAnswer is the failure of a request whose computer had not answered when the
// gateway shut down: the request was sent, and may have run all the same (a Lua run, a
// write), as one whose computer left may have (hostcomputer.MayHaveDoneIt). ErrShuttingDown
// alone read as if nothing had reached the computer, and a caller that asked again once the
// gateway was back ran it twice. The session's cause stays ErrShuttingDown, which a screen
// watch's viewers read.
func shutdownBeforeAnswer() *protocol.Error {
	return protocol.Errorf(protocol.CodeNotConnected, "%s%s", ErrShuttingDown.Message, hostcomputer.MayHaveDoneIt)
}

// closeForShutdown ends the socket because the gateway is stopping: 1001 (going away, which
// the computer reconnects after), with ErrShuttingDown as the reason.
func (s *Session) closeForShutdown() bool {
	return s.beginClose(CloseGoingAway, "going away", true, ErrShuttingDown)
}

// evict ends a socket that has not said hello, or a link session, to make room for a
// newcomer (admission.go): 4008, with its last frames and close frame bounded by
// evictCloseTimeout and no wait for the peer's close frame.
func (s *Session) evict() {
	s.evicted.Store(true)
	s.mu.Lock()
	reason := evictReason
	if s.linkTraposID != "" {
		reason = evictLinkReason
	}
	s.mu.Unlock()
	if s.closeByGateway(CloseNoHello, reason) {
		// A write blocked on a peer that does not read would otherwise hold the socket for
		// the whole WriteTimeout (net.Conn deadlines may be set from any goroutine).
		_ = s.conn.NetConn().SetWriteDeadline(s.realNow().Add(evictCloseTimeout))
	}
}

// abandon ends the socket without a close frame, because nobody would read it: a write to
// it failed (the peer is gone). The close is recorded as 1006.
func (s *Session) abandon(reason string) bool {
	return s.beginClose(websocket.CloseAbnormalClosure, reason, false, nil)
}

// drop ends the socket without a close frame by the gateway's own decision: the computer
// does not read what it is sent (1013), or sent nothing within the pong wait (1006). A frame
// would not be read, but the gateway ended it all the same, and its disconnect line says so
// (byGateway=true), as it does for the closes it sends a frame for.
func (s *Session) drop(code int, reason string) bool {
	if !s.beginClose(code, reason, false, nil) {
		return false
	}
	s.mu.Lock()
	s.dropped = true
	s.mu.Unlock()
	return true
}

// closedByPeer records that the peer ended the socket with code (1006 when TCP just ended,
// which is how CC closes).
func (s *Session) closedByPeer(code int) bool {
	return s.beginClose(code, "", false, nil)
}

// beginClose starts the close; cause, when not nil, is the session context's cause.
func (s *Session) beginClose(code int, reason string, sendClose bool, cause error) bool {
	return s.beginCloseFor(code, reason, sendClose, cause, Bye{})
}

// beginCloseFor is beginClose of a session that left for bye (its claim's withdrawal says
// it to the other replicas: Cluster.Release).
func (s *Session) beginCloseFor(code int, reason string, sendClose bool, cause error, bye Bye) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.closed = true
	s.closeCode, s.closeReason, s.sendClose, s.bye = code, reason, sendClose, bye
	authenticated, key := s.authenticated, s.key
	s.mu.Unlock()

	s.cancel(cause)
	go s.finishWrites() // the session's last writer; run waits for it
	s.gw.cfg.Metrics.closed(code)
	failure := disconnectFailure(key.TraposID, code, sendClose)
	if pe, ok := errors.AsType[*protocol.Error](cause); ok && pe != ErrShuttingDown {
		failure = pe // why the gateway closed it (a relabel) says more
	}
	s.pending.failAll(failure)
	if authenticated {
		s.gw.registry.Unregister(s)
	}
	return true
}

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// disconnectFailure explains a not_connected failure of a request that was pending.
func disconnectFailure(traposID string, code int, byGateway bool) *protocol.Error {
	switch {
	case byGateway && code == CloseReplaced:
		return hostcomputer.LeftBeforeAnswer(traposID, true)
	case byGateway && code == CloseGoingAway:
		return shutdownBeforeAnswer()
	default:
		return hostcomputer.LeftBeforeAnswer(traposID, false)
	}
}

// finishWrites ends the session's writing: it seals the send queue and waits for a running
// writer, flushes frames already queued (a reply must precede the close that follows it,
// e.g. unauthorized then 4001), sends the close frame if the gateway started the close, and
// gives the peer CloseGrace to answer it; without a close frame of ours the reader is woken
// at once. The flush and the close frame are bounded by one WriteTimeout (an evicted socket:
// evictCloseTimeout, and no grace).
func (s *Session) finishWrites() {
	defer close(s.finished)
	<-s.send.seal()
	timeout, grace := s.gw.cfg.WriteTimeout, s.gw.cfg.CloseGrace
	if s.evicted.Load() {
		timeout, grace = evictCloseTimeout, 0
	}
	deadline := s.realNow().Add(timeout)
	s.mu.Lock()
	code, reason, sendClose := s.closeCode, s.closeReason, s.sendClose
	s.mu.Unlock()
	if sendClose {
		for {
			msg, ok := s.send.pop()
			if !ok || s.write(msg, deadline) != nil {
				break
			}
		}
		// An error here means the connection is already gone or closing; nothing to do.
		_ = s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), deadline)
	} else {
		grace = 0 // nobody will send a close frame to wait for: wake the reader now
	}
	_ = s.conn.SetReadDeadline(s.realNow().Add(grace))
}

// closedOnReadError records why the reader ended: the peer's close code, 1006 when the
// connection just ended (what CC's close() does), or the close already sent for a frame the
// reader refused: 1009 for an oversized frame (refuseTooBig), 1002, sent by the WebSocket
// library, for one that breaks RFC 6455 (unmasked, a reserved bit or opcode, a control frame
// too long or fragmented, a continuation without a start, a bad close code). Those two are the
// gateway's closes (it sent the frame), so they are logged byGateway=true, with no second
// close frame.
func (s *Session) closedOnReadError(err error) {
	var ce *websocket.CloseError
	var netErr net.Error
	switch {
	case errors.As(err, &ce):
		s.closedByPeer(ce.Code)
	case errors.Is(err, websocket.ErrReadLimit):
		s.closedByLibrary(CloseTooBig, tooBigReason)
	case err != nil && !errors.As(err, &netErr) && !errors.Is(err, errReaderFailed) &&
		strings.HasPrefix(err.Error(), protocolErrorPrefix):
		// gorilla's handleProtocolError: it wrote close 1002 with this text as the reason.
		s.closedByLibrary(websocket.CloseProtocolError, "protocol error: "+strings.TrimPrefix(err.Error(), protocolErrorPrefix))
	default:
		s.closedByPeer(websocket.CloseAbnormalClosure)
	}
}

// protocolErrorPrefix starts the errors gorilla/websocket returns after closing 1002.
const protocolErrorPrefix = "websocket: "

// closedByLibrary records a close whose frame the reader or the WebSocket library already
// sent: the gateway's close, without a frame of its own.
func (s *Session) closedByLibrary(code int, reason string) {
	if s.beginClose(code, reason, false, nil) {
		s.mu.Lock()
		s.closeFrameSent = true
		s.mu.Unlock()
	}
}

// The likely causes of a socket that ended without a close frame (1006), as its disconnect
// line says them: an operator who reads "abnormal closure" looks for a fault where there is
// none.
const (
	// likelyLeft: the connection ended cleanly (TCP's end) without a close frame, which is how
	// every CC: Tweaked computer leaves: its close() sends none (reference: issue #2096), and
	// a reboot, a shutdown, an unloaded chunk or a stopping server closes its sockets so.
	likelyLeft = "the computer rebooted or shut down, its chunk was unloaded or its Minecraft server stopped (CC closes a socket without a close frame)"
	// likelySilent: the gateway dropped a socket that sent nothing within the pong wait.
	likelySilent = "the computer's Minecraft server or the network to it stopped answering (a frozen or killed server, a lost connection)"
	// likelyBroken: the connection failed with an error (a reset, a write that failed): not
	// how a computer leaves, so the line carries the error.
	likelyBroken = "the connection failed (err says how): not the way a CC computer leaves"
	// likelyGatewayStalled: the gateway heard nothing from the computer, not even a pong, for
	// longer than the pong wait, which a running gateway never lets a socket be silent (it
	// drops it then, likelySilent): so the gateway did not run meanwhile, sent the computer
	// nothing, and the daemon gave up on it (docs/protocol.md, Liveness); its end, clean or
	// a broken write to a socket the computer closed, is read as the gateway runs again.
	likelyGatewayStalled = `this gateway did not run for a while (its line "the gateway did not run" says so): ` +
		"the computer's daemon reconnects when the gateway sends it nothing within the livenessMs of its hello (or the computer left meanwhile)"
)

// withoutCloseFrame is what the disconnect line of a socket that ended without a close frame
// adds: the likely cause, and the error when the connection failed (reason is the gateway's,
// readErr the reader's end, unheard how long the gateway had heard nothing from the computer,
// pongWait the most it lets a computer be silent while it runs).
func withoutCloseFrame(reason string, readErr error, unheard, pongWait time.Duration) []any {
	var ce *websocket.CloseError
	switch {
	case reason == pongWaitReason:
		return []any{"likely", likelySilent}
	case unheard > pongWait:
		attrs := []any{"likely", likelyGatewayStalled, "unheardFor", unheard.Round(time.Second)}
		// A write that failed says how in its reason; the read it then woke (a deadline's i/o
		// timeout) says nothing more.
		if reason == "" && readErr != nil && !errors.As(readErr, &ce) {
			attrs = append(attrs, "err", readErr.Error())
		}
		return attrs
	case strings.HasPrefix(reason, writeFailedReason):
		return []any{"likely", likelyBroken}
	case errors.As(readErr, &ce):
		// gorilla's end of a connection that ended cleanly: 1006, "unexpected EOF".
		return []any{"likely", likelyLeft}
	case readErr != nil:
		return []any{"likely", likelyBroken, "err", readErr.Error()}
	}
	return nil
}

// logDisconnect writes the socket's disconnect line; ended is when its reader ended (the
// gateway's clock), from which the line tells how long the computer had been unheard.
func (s *Session) logDisconnect(readErr error, ended time.Time) {
	s.mu.Lock()
	code, reason, authenticated, key := s.closeCode, s.closeReason, s.authenticated, s.key
	frameless := !s.sendClose && !s.closeFrameSent // no close frame went either way from the gateway
	byGateway := !frameless || s.dropped
	s.mu.Unlock()
	attrs := []any{"code", code, "byGateway", byGateway}
	if reason != "" {
		attrs = append(attrs, "reason", reason)
	}
	if to := s.relabelledTo(); to != "" {
		attrs = append(attrs, "relabelledTo", clip(to))
	}
	if frameless && code == websocket.CloseAbnormalClosure {
		unheard := ended.Sub(time.Unix(0, s.lastAlive.Load()))
		attrs = append(attrs, withoutCloseFrame(reason, readErr, unheard, s.gw.cfg.PongWait)...)
	}
	var netErr net.Error
	if readErr != nil && !errors.As(readErr, new(*websocket.CloseError)) && !(errors.As(readErr, &netErr) && netErr.Timeout()) {
		s.log().Debug("socket read ended", "err", readErr)
	}
	if !authenticated {
		s.log().Debug("socket closed before hello", attrs...)
		return
	}
	level := slog.LevelInfo
	if byGateway && code == CloseGoingAway && s.gw.isClosing() {
		// Shutdown's close: it logs one line for every socket (a line each, formatted and
		// written while thousands close at once, was half a stopping replica's CPU).
		level = slog.LevelDebug
		if !s.gw.log.Enabled(context.Background(), level) {
			return
		}
	}
	if level == slog.LevelInfo && !s.endLineAllowed() {
		return
	}
	s.log().Log(context.Background(), level, "computer disconnected", append([]any{"accountId", key.AccountID, "traposId", key.TraposID}, attrs...)...)
}
