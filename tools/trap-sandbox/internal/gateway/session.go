package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	hostcomputer "trap-sandbox/internal/computer"
)

// drainAfterTooBig caps how much of an oversized frame is read and discarded before the
// connection is closed: closing with unread data makes the kernel send RST, which can destroy
// the 1009 close frame before the peer reads it.
const drainAfterTooBig = 1 << 20

// Computer is a snapshot of one connected computer, for listings and handlers: the host
// side's one record of a computer (computer.Computer), named here for the registry's users.
type Computer = hostcomputer.Computer

// Session is one computer's socket. Its reader runs in the goroutine that calls run; its
// writer exists only while frames wait (flush, started by the enqueue that finds none
// running), its liveness clocks on one timer that holds no goroutine (liveness.go). So an idle
// computer costs one parked goroutine. The files of the package split it by concern: this one
// reads and writes frames, liveness.go keeps its clocks, closing.go ends it, pending.go
// matches answers to requests, handlers.go answers what the computer asks.
type Session struct {
	gw     *Gateway
	socket uint64 // protocol.Requester.Socket: unique in this process
	conn   *websocket.Conn
	// remoteAddr is the client's address (server.ClientAddr): the TCP peer's host:port, or
	// behind a trusted proxy the IP it names. The per-address limits count by it.
	remoteAddr     string
	connectedSince time.Time
	// loopbackOnAPIPort: the socket came from a loopback address, through no proxy, on the
	// port that serves the host API too (not --computers-listen's): the program that opened
	// it can use the API as the host's own tools do when no token is set.
	loopbackOnAPIPort bool
	// lastFrameAt is when the last data frame arrived, lastAlive when the last frame or pong
	// did, lastSentAt when the gateway last wrote a data frame (unix nanoseconds by
	// Config.Clock; liveness.go reads them).
	lastFrameAt atomic.Int64
	lastAlive   atomic.Int64
	lastSentAt  atomic.Int64
	// probing is set while an idle-probe ping is outstanding.
	probing atomic.Bool
	// pingsBeforeHello counts WebSocket pings received before hello (maxPingsBeforeHello).
	pingsBeforeHello atomic.Int32
	// slot is what the socket holds of the gateway's capacity (admission.go).
	slot *connSlot
	// evicted is set when the socket was closed to make room for a newcomer (admission.go).
	evicted atomic.Bool
	// verdictPending is set while a wrong-secret answer is held back: the socket's frames are
	// ignored and the hello timeout no longer applies.
	verdictPending atomic.Bool
	// linkBegun is set once a link session got its code (link.go): the hello timeout no
	// longer applies, the code's lifetime does.
	linkBegun atomic.Bool
	// connectLogged is set once the computer's connect line was written: its ending's lines
	// (replaced, disconnected) are written too, whatever its address's budget holds
	// (connlines.go).
	connectLogged atomic.Bool
	// connectLeftOut is set when the computer's connect line was left out at its hello, until
	// its ping's tick has tried it again, late (lateConnectLine).
	connectLeftOut atomic.Bool
	// otherHellos counts the hellos on the registered socket that sameHelloAgain did not
	// answer (another secret or traposId), up to maxOtherHellosOnASocket; the reader's alone.
	otherHellos uint8
	// helloSeen is set by the socket's first hello, proved by its prove: a prove comes once,
	// before any hello (prove.go). Both are the reader's alone.
	helloSeen, proved bool
	// readLimit is the largest frame the reader takes (MaxFrameBytesBeforeHello, then
	// protocol.MaxFrameBytes), and frame the reader's view of the frame it reads, cut one byte
	// past it; both are the reader's alone. The gateway keeps the limit itself rather than
	// gorilla's SetReadLimit, whose 1009 carries no reason.
	readLimit int64
	frame     io.LimitedReader

	// send is the outbound queue, drained only by the writer.
	send *sendQueue
	// live holds the liveness clocks and their timer (liveness.go).
	live liveness
	// finished is closed once finishWrites has written the session's last frames.
	finished chan struct{}

	pending *pendingTable
	// slots bounds running request handlers (maxRequestsInFlight).
	slots chan struct{}
	// handlers counts running request handler goroutines; run waits for them.
	handlers sync.WaitGroup

	ctx    context.Context
	cancel context.CancelCauseFunc // cause: why the gateway closed the socket (closeForShutdown), or nil

	mu            sync.Mutex // guards the fields below
	key           Key        // set by a good hello
	authenticated bool
	clientVersion string // hello's clientVersion, empty for an older client
	credential    string // the selector of the computer's own credential at hello, "" for the password
	// credentialKind is hello's answer's (CredentialLinked, CredentialIssued; "" for the
	// password), and helloSecret the SHA-256 of the secret it said hello with: the same hello
	// again is answered from them (sameHelloAgain).
	credentialKind string
	helloSecret    [sha256.Size]byte
	// accountCreated is the account's creation stamp at hello (protocol.Requester), zero for
	// the password.
	accountCreated time.Time
	linkTraposID   string // a link session's traposId (link.go); "" for any other socket
	closed         bool
	closeCode      int    // code of the close frame to send, or the peer's code for logs
	closeReason    string // reason of the close frame to send
	bye            Bye    // what the computer said as it left (handleBye)
	sendClose      bool   // whether the writer must send a close frame
	// closeFrameSent: the reader (1009) or the WebSocket library (1002) already sent the
	// close frame: the gateway's close all the same.
	closeFrameSent bool
	// dropped: the gateway ended the socket without a close frame by its own decision (drop:
	// the computer stopped reading, or said nothing within the pong wait), where a frame would
	// not be read: the gateway's close all the same.
	dropped bool
}

func newSession(g *Gateway, conn *websocket.Conn, remoteAddr string, slot *connSlot) *Session {
	ctx, cancel := context.WithCancelCause(context.Background())
	s := &Session{
		gw:             g,
		socket:         g.sockets.Add(1),
		conn:           conn,
		remoteAddr:     remoteAddr,
		slot:           slot,
		connectedSince: g.cfg.Clock.Now(),
		send:           newSendQueue(preHelloQueueBytes),
		finished:       make(chan struct{}),
		pending:        newPendingTable(g.cfg.MaxGatewayRequestsInFlight),
		slots:          make(chan struct{}, maxRequestsInFlight),
		ctx:            ctx,
		cancel:         cancel,
	}
	s.lastFrameAt.Store(s.connectedSince.UnixNano())
	s.lastAlive.Store(s.connectedSince.UnixNano())
	s.lastSentAt.Store(s.connectedSince.UnixNano())
	return s
}

// log is the session's logger. Made per line rather than kept: a logger with the remote
// address preformatted costs every idle computer a few hundred bytes, and a session logs
// a handful of lines in its life.
func (s *Session) log() *slog.Logger { return s.gw.log.With("remote", s.remoteAddr) }

// Key returns the computer's registry key (zero before a good hello).
func (s *Session) Key() Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.key
}

// Computer returns a snapshot of the session.
func (s *Session) Computer() Computer {
	s.mu.Lock()
	k, version := s.key, s.clientVersion
	s.mu.Unlock()
	return Computer{
		ClientVersion:  version,
		AccountID:      k.AccountID,
		TraposID:       k.TraposID,
		RemoteAddr:     s.remoteAddr,
		ConnectedSince: s.connectedSince,
		LastFrameAt:    time.Unix(0, s.lastFrameAt.Load()),
		Replica:        s.gw.cfg.Replica,
	}
}

// Done is closed when the session has begun closing.
func (s *Session) Done() <-chan struct{} { return s.ctx.Done() }

func (s *Session) isAuthenticated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authenticated
}

// realNow is the wall clock, for socket deadlines: the kernel knows no other. Liveness runs on
// Config.Clock instead (liveness.go).
func (s *Session) realNow() time.Time { return time.Now() }

// run serves the socket until it closes and every goroutine of the session has ended.
func (s *Session) run() {
	// A hello is tiny: until one succeeds, a frame may be small (the reply echoes its messageId
	// and type, so this bounds every answer too).
	s.readLimit = MaxFrameBytesBeforeHello
	s.conn.SetPongHandler(func(string) error {
		// A pong proves the TCP peer is alive, not that its daemon is: it counts for the pong
		// wait but not as activity for the idle probe.
		s.lastAlive.Store(s.gw.cfg.Clock.Now().UnixNano())
		return nil
	})
	s.conn.SetPingHandler(s.answerPing)
	s.startLiveness()

	readErr := s.readLoopRecovered()
	// How long the computer had been unheard is read as its socket ended: the session's last
	// steps below (its handlers, its writer) take a moment, and a computer that left just before
	// the pong wait passed was, read at its disconnect line, said to have been silent past it.
	ended := s.gw.cfg.Clock.Now()
	// If the gateway started the close, this keeps its code; otherwise the reader's end is recorded.
	s.closedOnReadError(readErr)

	<-s.finished
	s.stopLiveness() // after it no idle probe starts, so handlers.Wait cannot race an Add
	s.handlers.Wait()
	if errors.Is(readErr, websocket.ErrReadLimit) {
		s.drain()
	}
	_ = s.conn.Close()
	if hook := s.gw.testHookBeforeDisconnectLine; hook != nil {
		hook()
	}
	s.logDisconnect(readErr, ended)
}

// answerPing answers a WebSocket ping with a pong, as gorilla's default handler does, but
// before hello only maxPingsBeforeHello times: a socket that has not said who it is gets no
// unlimited echo service.
func (s *Session) answerPing(data string) error {
	if !s.isAuthenticated() && s.pingsBeforeHello.Add(1) > maxPingsBeforeHello {
		s.closeByGateway(websocket.ClosePolicyViolation, "too many pings before hello")
		return nil
	}
	err := s.conn.WriteControl(websocket.PongMessage, []byte(data), s.realNow().Add(s.gw.cfg.WriteTimeout))
	if err != nil && !errors.Is(err, websocket.ErrCloseSent) {
		var netErr interface{ Timeout() bool }
		if errors.As(err, &netErr) && netErr.Timeout() {
			return nil
		}
		return err
	}
	return nil
}

// frameBuffers recycles the buffers frames are read into: DecodeFrame copies what it keeps, so
// a buffer is free again once the frame is handled. Pooled rather than per session, and taken
// only once a frame has begun to arrive, so that an idle computer holds none: a reader waits
// for the next frame without one (a buffer grown by the last frame is 1 KiB or more, which the
// Go heap doubles in resident memory, per idle computer).
var frameBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// frameBufferTaken, when a test sets it, is told each time a reader takes (+1) or gives back
// (-1) a frame buffer; nil otherwise, so the readers' path carries no shared counter.
var frameBufferTaken func(delta int)

// errReaderFailed is readLoopRecovered's answer when the reader panicked.
var errReaderFailed = errors.New("the gateway failed reading this socket's frames")

// readLoopRecovered is readLoop with a panic on the reader (the gateway's own frame path:
// decoding, dispatch, the pending table; a module's handler has recovered() of its own)
// ending this socket alone, 1011, logged with its stack. The reader runs in a goroutine of
// its own, out of reach of net/http's recovery: unrecovered, one bad frame would end the
// gateway and drop every computer.
func (s *Session) readLoopRecovered() (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log().Error("the gateway failed reading a frame: closing this socket (1011)", "panic", p, "stack", string(debug.Stack()))
			s.closeByGateway(CloseInternalError, "internal error")
			err = errReaderFailed
		}
	}()
	return s.readLoop()
}

// readLoop reads frames until the connection fails or is closed; it returns why.
func (s *Session) readLoop() error {
	for {
		_, r, err := s.conn.NextReader() // waits for the next data frame, holding no buffer
		if err != nil {
			return err
		}
		buf := frameBuffers.Get().(*bytes.Buffer)
		if frameBufferTaken != nil {
			frameBufferTaken(1)
		}
		s.frame.R, s.frame.N = r, s.readLimit+1
		_, err = buf.ReadFrom(&s.frame)
		s.frame.R = nil
		if err == nil && int64(buf.Len()) > s.readLimit {
			err = s.refuseTooBig()
		}
		if err == nil {
			s.frameArrived(buf.Bytes())
		}
		buf.Reset()
		frameBuffers.Put(buf)
		if frameBufferTaken != nil {
			frameBufferTaken(-1)
		}
		if err != nil {
			return err
		}
	}
}

// tooBigReason is the reason of the 1009 close that ends a socket whose frame is over its
// read limit (docs/protocol.md, Close codes).
const tooBigReason = "frame too big"

// refuseTooBig closes the socket with 1009 for a frame over the read limit, as gorilla's
// SetReadLimit would but with the reason, and returns websocket.ErrReadLimit for the reader
// to end with: the rest of the frame is left unread (run drains a bounded part of it).
//
//go:noinline
func (s *Session) refuseTooBig() error {
	// The close frame may race a write of the writer; WriteControl may run beside it, and a
	// close already sent makes this one fail, which changes nothing.
	_ = s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(CloseTooBig, tooBigReason),
		s.realNow().Add(s.gw.cfg.WriteTimeout))
	return websocket.ErrReadLimit
}

// frameArrived records the peer's activity and handles the frame in data.
func (s *Session) frameArrived(data []byte) {
	now := s.gw.cfg.Clock.Now().UnixNano()
	s.lastFrameAt.Store(now)
	s.lastAlive.Store(now)
	s.handleFrame(data)
}

// flush is the socket's writer: the caller that got the writer role from the send queue
// (enqueue starts it in a goroutine of its own) writes frames until the queue is empty, then
// gives the role back and ends. One writer at a time, so frames go out in queue order and
// never interleave; a computer that does not read blocks only its own writer, and its queue
// fills (reply: 1013, Request: busy).
func (s *Session) flush() {
	for {
		msg, ok := s.send.next()
		if !ok {
			return
		}
		if !s.writeAsWriter(msg, s.realNow().Add(s.gw.cfg.WriteTimeout)) {
			return
		}
	}
}

// writeAsWriter writes msg for the socket's writer (who holds the role). When the write fails
// it ends the socket (writeFailed; the close ends every request's wait) and gives the role
// back, after the close began, so no new writer starts on a dead socket.
func (s *Session) writeAsWriter(msg []byte, deadline time.Time) bool {
	if err := s.write(msg, deadline); err != nil {
		s.writeFailed(err)
		s.send.release()
		return false
	}
	return true
}

// writeFailedReason starts the disconnect line's reason of a socket whose write failed; the
// error follows it.
const writeFailedReason = "write failed"

// writeFailed ends a socket whose write failed. A write that timed out means the computer
// does not read what it is sent: a slow consumer, closed 1013 as one whose queue overflows
// (a quick answer written by the reader, or any frame, that waits WriteTimeout for the
// peer). Any other error means the peer is gone (1006). Neither gets a close frame: it
// would follow a half-written frame.
func (s *Session) writeFailed(err error) {
	s.log().Debug("write failed", "err", err)
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		s.gw.limits.warns.warn("a write timed out, dropping the computer: it does not read", s.remoteAddr,
			"traposId", clip(s.Key().TraposID), "queuedBytes", s.send.queued())
		s.drop(CloseTryAgainLater, "write timed out")
	} else {
		s.abandon(writeFailedReason + ": " + err.Error())
	}
	_ = s.conn.SetReadDeadline(s.realNow()) // wake the reader now
}

// write sends one message as one frame: CC drops continuation frames.
func (s *Session) write(msg []byte, deadline time.Time) error {
	if err := s.conn.SetWriteDeadline(deadline); err != nil {
		return err
	}
	// The time is read before the write: once the frame is out, the computer may act on it
	// (a test's clock moves on), and the frame was sent then, not later.
	sent := s.gw.cfg.Clock.Now()
	if err := s.conn.WriteMessage(websocket.TextMessage, msg); err != nil {
		return err
	}
	s.lastSentAt.Store(sent.UnixNano())
	return nil
}

// errQueueFull is enqueue's refusal: the frame would take the send queue past its budget.
var errQueueFull = errors.New("send queue full")

// writeMode says who writes a queued frame when no writer runs.
type writeMode bool

const (
	// writeByWriter starts a writer goroutine: the caller never blocks on the socket (the
	// reader, a host's Request).
	writeByWriter writeMode = false
	// writeInline makes the caller the writer: a goroutine of the computer's own (a request
	// handler, done with its answer) writes it and what queued meanwhile, saving a goroutine
	// hand-off per answer. A computer that does not read then blocks only its own handler,
	// which holds one of its request slots, until the write timeout drops it.
	writeInline writeMode = true
)

// enqueue queues one encoded frame of kind, and starts a writer goroutine if none runs. It
// fails with not_connected once the session is closing, and with errQueueFull when the
// queue's byte budget for kind has no room (sendQueue): the caller decides whose fault that is.
func (s *Session) enqueue(frame []byte, kind frameKind) error {
	return s.enqueueAs(frame, kind, writeByWriter)
}

// enqueueAs is enqueue, with how the frame gets written when no writer runs.
func (s *Session) enqueueAs(frame []byte, kind frameKind, how writeMode) error {
	if !s.isClosed() {
		switch s.send.push(frame, kind) {
		case pushQueued:
			return nil
		case pushWriter:
			if how == writeInline {
				s.flush()
			} else {
				go s.flush()
			}
			return nil
		case pushFull:
			return errQueueFull
		}
	}
	return hostcomputer.NotConnected(s.Key().TraposID)
}

// claimWriter makes the caller the writer of frame, to write it at once with writeClaimed,
// when it may write (writeInline) and finds the queue idle (sendQueue.claim).
func (s *Session) claimWriter(frame []byte, how writeMode) bool {
	return how == writeInline && !s.isClosed() && s.send.claim(frame)
}

// writeClaimed writes frame after claimWriter, then what was queued meanwhile, and gives the
// writer role back.
func (s *Session) writeClaimed(frame []byte) {
	if s.writeAsWriter(frame, s.realNow().Add(s.gw.cfg.WriteTimeout)) {
		s.flush()
	}
}

// drain reads and discards what the peer still sends, briefly, so that closing the
// connection does not reset it before the peer has read our close frame.
func (s *Session) drain() {
	netConn := s.conn.NetConn()
	_ = netConn.SetReadDeadline(s.realNow().Add(s.gw.cfg.CloseGrace))
	_, _ = io.Copy(io.Discard, io.LimitReader(netConn, drainAfterTooBig))
}
