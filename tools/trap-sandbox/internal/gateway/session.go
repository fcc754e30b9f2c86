package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"trap-sandbox/internal/protocol"
)

// maxReadDeadlineStep is how stale the read deadline may get before a data frame pushes it
// back (a pong always does), at most 1/16 of PongWait: moving it costs a timer update, and
// frames can come thousands of times a second while PongWait is tens of seconds.
const maxReadDeadlineStep = time.Second

// drainAfterTooBig caps how much of an oversized frame is read and discarded before the
// connection is closed: closing with unread data makes the kernel send RST, which can destroy
// the 1009 close frame before the peer reads it.
const drainAfterTooBig = 1 << 20

// Computer is a snapshot of one connected computer, for listings and handlers.
type Computer struct {
	AccountID      string
	TraposID       string
	RemoteAddr     string
	ConnectedSince time.Time
	// LastFrameAt is when the last frame (of any kind, even an ignored one) arrived.
	LastFrameAt time.Time
}

// result is what a pending gateway→computer request receives: the computer's response, or
// the error that ended the wait.
type result struct {
	frame protocol.Frame
	err   error
}

// Session is one computer's socket. Its reader runs in the goroutine that calls run, its
// writer in a goroutine started by run; both end when ctx does.
type Session struct {
	gw             *Gateway
	log            *slog.Logger
	conn           *websocket.Conn
	remoteAddr     string
	connectedSince time.Time
	lastFrameAt    atomic.Int64 // unix nanoseconds, by Config.Now (for listings)
	// lastRecv is when the last frame arrived by the real clock, which the liveness timers
	// also run on (Config.Now may be a fixed test clock).
	lastRecv atomic.Int64
	// readDeadlineSetAt is when the read deadline was last pushed back (unix nanoseconds).
	readDeadlineSetAt atomic.Int64
	// readDeadlineStep is min(maxReadDeadlineStep, PongWait/16).
	readDeadlineStep time.Duration
	// probing is set while an idle-probe ping is outstanding.
	probing atomic.Bool

	// send is the outbound queue, drained only by the writer. It is never closed.
	send chan []byte
	// slots bounds running request handlers (maxRequestsInFlight).
	slots chan struct{}
	// handlers counts running request handler goroutines; run waits for them.
	handlers sync.WaitGroup

	ctx    context.Context
	cancel context.CancelFunc

	mu            sync.Mutex // guards the fields below
	key           Key        // set by a good hello
	authenticated bool
	closed        bool
	closeCode     int    // code of the close frame to send, or the peer's code for logs
	closeReason   string // reason of the close frame to send
	sendClose     bool   // whether the writer must send a close frame
	pending       map[string]chan result
}

func newSession(g *Gateway, conn *websocket.Conn, remoteAddr string) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{
		gw:             g,
		log:            g.log.With("remote", remoteAddr),
		conn:           conn,
		remoteAddr:     remoteAddr,
		connectedSince: g.cfg.Now(),
		send:           make(chan []byte, g.cfg.SendQueueSize),
		slots:          make(chan struct{}, maxRequestsInFlight),
		ctx:            ctx,
		cancel:         cancel,
		pending:        make(map[string]chan result),
	}
	s.readDeadlineStep = min(maxReadDeadlineStep, g.cfg.PongWait/16)
	s.lastFrameAt.Store(s.connectedSince.UnixNano())
	s.lastRecv.Store(time.Now().UnixNano())
	return s
}

// Key returns the computer's registry key (zero before a good hello).
func (s *Session) Key() Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.key
}

// Computer returns a snapshot of the session.
func (s *Session) Computer() Computer {
	k := s.Key()
	return Computer{
		AccountID:      k.AccountID,
		TraposID:       k.TraposID,
		RemoteAddr:     s.remoteAddr,
		ConnectedSince: s.connectedSince,
		LastFrameAt:    time.Unix(0, s.lastFrameAt.Load()),
	}
}

// Done is closed when the session has begun closing.
func (s *Session) Done() <-chan struct{} { return s.ctx.Done() }

func (s *Session) isAuthenticated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authenticated
}

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// run serves the socket until it closes and every goroutine of the session has ended.
func (s *Session) run() {
	s.conn.SetReadLimit(protocol.MaxFrameBytes)
	s.extendReadDeadline()
	s.conn.SetPongHandler(func(string) error {
		// A pong proves the TCP peer is alive, not that its daemon is: it extends the read
		// deadline but does not count as activity for the idle probe.
		s.extendReadDeadline()
		return nil
	})

	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		s.writeLoop()
	}()

	readErr := s.readLoop()
	var netErr net.Error
	if errors.As(readErr, &netErr) && netErr.Timeout() {
		// Nothing at all, not even a pong, within PongWait: the peer is gone. No close frame:
		// nobody would read it.
		if s.close(websocket.CloseAbnormalClosure, "no frame or pong within the pong wait", false) {
			s.gw.cfg.Metrics.livenessDrop("pong_timeout")
		}
	}
	peerCode := closeCodeOf(readErr)
	// If the gateway started the close, this keeps its code; otherwise the peer's is recorded.
	s.close(peerCode, "", false)

	<-writerDone
	s.handlers.Wait()
	if errors.Is(readErr, websocket.ErrReadLimit) {
		s.drain()
	}
	_ = s.conn.Close()
	s.logDisconnect(readErr)
}

// frameBuffers recycles the buffers frames are read into: DecodeFrame copies what it keeps, so
// a buffer is free again once the frame is handled. Pooled rather than per session, so that an
// idle computer holds none.
var frameBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readLoop reads frames until the connection fails or is closed; it returns why.
func (s *Session) readLoop() error {
	for {
		buf := frameBuffers.Get().(*bytes.Buffer)
		err := s.readFrame(buf)
		if err == nil {
			s.frameArrived(buf.Bytes())
		}
		buf.Reset()
		frameBuffers.Put(buf)
		if err != nil {
			return err
		}
	}
}

// readFrame reads the next data frame into buf.
func (s *Session) readFrame(buf *bytes.Buffer) error {
	_, r, err := s.conn.NextReader()
	if err != nil {
		return err
	}
	_, err = buf.ReadFrom(r)
	return err
}

// frameArrived records the peer's activity and handles the frame in data.
func (s *Session) frameArrived(data []byte) {
	now := time.Now()
	s.lastFrameAt.Store(s.gw.cfg.Now().UnixNano())
	s.lastRecv.Store(now.UnixNano())
	if now.UnixNano()-s.readDeadlineSetAt.Load() >= int64(s.readDeadlineStep) {
		s.extendReadDeadline()
	}
	s.handleFrame(data)
}

// extendReadDeadline gives the peer another PongWait to send something, unless the session
// is closing (then finishWrites owns the deadline).
func (s *Session) extendReadDeadline() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		now := time.Now()
		_ = s.conn.SetReadDeadline(now.Add(s.gw.cfg.PongWait))
		s.readDeadlineSetAt.Store(now.UnixNano())
	}
}

// writeLoop is the only goroutine that writes data frames. It also keeps the session's three
// clocks (hello deadline, pings, idle probe) on one timer: a select on one timer channel is
// cheaper per frame than on three, and an idle computer holds one timer instead of three.
func (s *Session) writeLoop() {
	cfg := s.gw.cfg
	clocks := newSessionClocks(time.Now(), cfg)
	timer := time.NewTimer(clocks.next())
	defer timer.Stop()
	for {
		var err error
		select {
		case msg := <-s.send:
			err = s.write(msg, time.Now().Add(cfg.WriteTimeout))
		case <-timer.C:
			err = s.tick(&clocks, time.Now())
			timer.Reset(clocks.next())
		case <-s.ctx.Done():
			s.finishWrites()
			return
		}
		if err != nil {
			s.log.Debug("write failed", "err", err)
			s.close(websocket.CloseAbnormalClosure, "", false)
			_ = s.conn.SetReadDeadline(time.Now()) // wake the reader now
			return
		}
	}
}

// sessionClocks are the writer's deadlines.
type sessionClocks struct {
	hello time.Time // zero once checked
	ping  time.Time
	idle  time.Time
}

func newSessionClocks(start time.Time, cfg Config) sessionClocks {
	return sessionClocks{
		hello: start.Add(cfg.HelloTimeout),
		ping:  start.Add(cfg.PingPeriod),
		idle:  start.Add(cfg.IdleProbeAfter),
	}
}

// next is how long until the earliest deadline.
func (c *sessionClocks) next() time.Duration {
	due := c.ping
	for _, t := range [...]time.Time{c.hello, c.idle} {
		if !t.IsZero() && t.Before(due) {
			due = t
		}
	}
	return time.Until(due)
}

// tick does what is due at now: drop a socket without hello, send a ping, probe an idle
// computer. It returns a write error.
func (s *Session) tick(c *sessionClocks, now time.Time) error {
	cfg := s.gw.cfg
	if !c.hello.IsZero() && !now.Before(c.hello) {
		c.hello = time.Time{}
		if !s.isAuthenticated() {
			s.close(CloseNoHello, "no hello in time", true)
		}
	}
	if !now.Before(c.idle) {
		lastRecv := time.Unix(0, s.lastRecv.Load())
		if now.Sub(lastRecv) < cfg.IdleProbeAfter {
			c.idle = lastRecv.Add(cfg.IdleProbeAfter)
		} else {
			if s.isAuthenticated() && !s.probing.Load() {
				s.startIdleProbe()
			}
			c.idle = now.Add(cfg.IdleProbeAfter)
		}
	}
	if !now.Before(c.ping) {
		c.ping = now.Add(cfg.PingPeriod)
		return s.conn.WriteControl(websocket.PingMessage, nil, now.Add(cfg.WriteTimeout))
	}
	return nil
}

// startIdleProbe sends a gateway_request ping to a computer that has been silent for
// IdleProbeAfter. CC's Java side answers WebSocket pings even when the Lua daemon has
// crashed, so only an application-level answer proves the computer is alive; without one
// within RequestTimeout the socket is closed with 4010. Called from the writer only, so
// handlers.Add never races run's handlers.Wait.
func (s *Session) startIdleProbe() {
	s.probing.Store(true)
	s.handlers.Add(1)
	go func() {
		defer s.handlers.Done()
		defer s.probing.Store(false)
		ctx, cancel := context.WithTimeout(s.ctx, s.gw.cfg.RequestTimeout)
		defer cancel()
		_, err := s.request(ctx, TypePing, nil)
		if protocol.CodeOf(err) != protocol.CodeTimeout {
			return // any answer, even ok:false, means the daemon runs; other errors mean closed
		}
		if s.close(CloseUnresponsive, "unresponsive", true) {
			s.gw.cfg.Metrics.livenessDrop("unresponsive")
			s.log.Warn("computer did not answer the idle probe, dropping it", "traposId", s.Key().TraposID,
				"idleProbeAfter", s.gw.cfg.IdleProbeAfter, "requestTimeout", s.gw.cfg.RequestTimeout)
		}
	}()
}

// finishWrites flushes frames already queued (a reply must precede the close that follows
// it, e.g. unauthorized then 4001), sends the close frame if the gateway started the close,
// and gives the peer CloseGrace to answer it. All of it is bounded by one WriteTimeout.
func (s *Session) finishWrites() {
	deadline := time.Now().Add(s.gw.cfg.WriteTimeout)
	s.mu.Lock()
	code, reason, sendClose := s.closeCode, s.closeReason, s.sendClose
	s.mu.Unlock()
	if sendClose {
	flush:
		for {
			select {
			case msg := <-s.send:
				if s.write(msg, deadline) != nil {
					break flush
				}
			default:
				break flush
			}
		}
		// An error here means the connection is already gone or closing; nothing to do.
		_ = s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), deadline)
	}
	_ = s.conn.SetReadDeadline(time.Now().Add(s.gw.cfg.CloseGrace))
}

// write sends one message as one frame: CC drops continuation frames.
func (s *Session) write(msg []byte, deadline time.Time) error {
	if err := s.conn.SetWriteDeadline(deadline); err != nil {
		return err
	}
	return s.conn.WriteMessage(websocket.TextMessage, msg)
}

// enqueue queues one encoded frame for the writer. A full queue means the computer does not
// keep up: it is dropped with 1013 instead of blocking the caller.
func (s *Session) enqueue(frame []byte) error {
	if s.isClosed() {
		return protocol.Errorf(protocol.CodeNotConnected, "computer %s is not connected", s.Key().TraposID)
	}
	select {
	case s.send <- frame:
		return nil
	default:
		s.log.Warn("send queue full, dropping the computer", "traposId", s.Key().TraposID, "queue", cap(s.send))
		s.close(CloseTryAgainLater, "send queue full", true)
		return protocol.Errorf(protocol.CodeNotConnected, "computer %s was too slow to read and was disconnected", s.Key().TraposID)
	}
}

// close starts closing the session once; later calls do nothing. code and reason go into the
// close frame when sendClose (the gateway ends the socket), or are just recorded when the
// peer ended it. It fails the pending requests and leaves the registry at once, so no new
// request is routed here. It reports whether this call started the close.
func (s *Session) close(code int, reason string, sendClose bool) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.closed = true
	s.closeCode, s.closeReason, s.sendClose = code, reason, sendClose
	pending := s.pending
	s.pending = nil
	authenticated, key := s.authenticated, s.key
	s.mu.Unlock()

	s.cancel()
	s.gw.cfg.Metrics.closed(code)
	if len(pending) > 0 {
		err := protocol.Errorf(protocol.CodeNotConnected, "%s", disconnectMessage(key.TraposID, code, sendClose))
		for _, ch := range pending {
			ch <- result{err: err} // buffered, one send per channel
		}
	}
	if authenticated {
		s.gw.registry.Unregister(s)
	}
	return true
}

// disconnectMessage explains a not_connected failure of a request that was pending.
func disconnectMessage(traposID string, code int, byGateway bool) string {
	switch {
	case byGateway && code == CloseReplaced:
		return "computer " + traposID + " was replaced by a newer connection before it answered"
	case byGateway && code == CloseGoingAway:
		return "the gateway is shutting down"
	default:
		return "computer " + traposID + " disconnected before it answered"
	}
}

// addPending registers a pending request; it fails with not_connected once the session closed.
func (s *Session) addPending(messageID string) (chan result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, protocol.Errorf(protocol.CodeNotConnected, "computer %s is not connected", s.key.TraposID)
	}
	ch := make(chan result, 1)
	s.pending[messageID] = ch
	return ch, nil
}

// takePending removes and returns the pending request with messageID, or nil.
func (s *Session) takePending(messageID string) chan result {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.pending[messageID]
	delete(s.pending, messageID)
	return ch
}

// drain reads and discards what the peer still sends, briefly, so that closing the
// connection does not reset it before the peer has read our close frame.
func (s *Session) drain() {
	netConn := s.conn.NetConn()
	_ = netConn.SetReadDeadline(time.Now().Add(s.gw.cfg.CloseGrace))
	_, _ = io.Copy(io.Discard, io.LimitReader(netConn, drainAfterTooBig))
}

// closeCodeOf names the close code behind a read error, for logs: the peer's close code, 1009
// for an oversized frame, 1006 when the connection just ended (what CC's close() does).
func closeCodeOf(err error) int {
	var ce *websocket.CloseError
	switch {
	case errors.As(err, &ce):
		return ce.Code
	case errors.Is(err, websocket.ErrReadLimit):
		return CloseTooBig
	default:
		return websocket.CloseAbnormalClosure
	}
}

func (s *Session) logDisconnect(readErr error) {
	s.mu.Lock()
	code, reason, byGateway, authenticated, key := s.closeCode, s.closeReason, s.sendClose, s.authenticated, s.key
	s.mu.Unlock()
	attrs := []any{"code", code, "byGateway", byGateway}
	if reason != "" {
		attrs = append(attrs, "reason", reason)
	}
	var netErr net.Error
	if readErr != nil && !errors.As(readErr, new(*websocket.CloseError)) && !(errors.As(readErr, &netErr) && netErr.Timeout()) {
		// 1006 with io.EOF is how CC closes (no close frame): detail for debugging only.
		s.log.Debug("socket read ended", "err", readErr)
	}
	if !authenticated {
		s.log.Debug("socket closed before hello", attrs...)
		return
	}
	s.log.Info("computer disconnected", append([]any{"accountId", key.AccountID, "traposId", key.TraposID}, attrs...)...)
}
