package httpapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/ccstr"
	"fakecraft/luakit"
)

// Close codes the client sends when it gives up on a broken stream, as Netty does.
const (
	closeProtocolError = 1002
	closeInvalidData   = 1007
	closeTooBig        = 1009
)

// Error texts raised to Lua by websocket functions.
const (
	errClosedFile        = "attempt to use a closed file"
	errTooManyWebsockets = "Too many websockets already open"
	errWebsocketsOff     = "Websocket connections are disabled"
	errTooManySends      = "Too many ongoing websocket messages"
	errTimeoutRange      = "timeout out of range (between 0.0 and 60.0)" // Java's text of 0.0 and maxTimeoutSeconds
)

// closeFlushTimeout bounds how long a local close() may spend flushing earlier sends to
// a server that has stopped reading.
const closeFlushTimeout = 5 * time.Second

// outMessage is one queued websocket write.
type outMessage struct {
	opcode  byte
	payload []byte
}

// socket is one websocket from http.websocket to its close. Its goroutines: run (connect,
// then read) and, once open, a writer.
type socket struct {
	api *API
	url string // exactly as the program passed it; the key of every event

	// done is closed by the first tryClose.
	done  chan struct{}
	sendq chan outMessage

	// mu guards the fields below.
	mu       sync.Mutex
	closed   bool
	netConn  net.Conn // nil until dialled
	cancel   context.CancelFunc
	inflight int
}

// luaWebsocket is the native http.websocket(url|options [, headers]): it starts connecting
// and returns true, or false and CC's message for a URL it rejects at once.
func (a *API) luaWebsocket(L *lua.LState) int {
	// CC refuses before it reads its arguments (HTTPAPI.websocket).
	if a.opts.WebsocketsDisabled {
		L.RaiseError(errWebsocketsOff)
		return 0
	}
	rawURL, headers, timeout, ok := a.requestOptions(L, 2)
	if !ok {
		return 0
	}
	u, msg := parseWebsocketURL(rawURL)
	if u == nil {
		L.Push(lua.LFalse)
		L.Push(lua.LString(msg))
		return 2
	}

	s := &socket{
		api:   a,
		url:   rawURL,
		done:  make(chan struct{}),
		sendq: make(chan outMessage, maxPendingSends),
	}
	a.mu.Lock()
	if a.opts.MaxWebsockets > 0 && len(a.sockets) >= a.opts.MaxWebsockets {
		a.mu.Unlock()
		L.RaiseError(errTooManyWebsockets)
		return 0
	}
	a.sockets[s] = struct{}{}
	h := a.h
	a.mu.Unlock()

	h.Go(func() { s.run(u, headers, timeout) })
	L.Push(lua.LTrue)
	return 1
}

// requestOptions reads the URL, the headers (argument headerArg, or the options table's
// headers) and the options table's timeout, shared by websocket and request. The Lua
// wrapper has already checked the types.
func (a *API) requestOptions(L *lua.LState, headerArg int) (string, http.Header, time.Duration, bool) {
	var rawURL string
	var headerTable *lua.LTable
	timeoutValue := lua.LValue(lua.LNil)
	if opts, isTable := L.Get(1).(*lua.LTable); isTable {
		rawURL = lua.LVAsString(opts.RawGetString("url"))
		headerTable, _ = opts.RawGetString("headers").(*lua.LTable)
		timeoutValue = opts.RawGetString("timeout")
	} else {
		rawURL = lua.LVAsString(L.Get(1))
		headerTable, _ = L.Get(headerArg).(*lua.LTable)
	}
	// CC reads the headers before the timeout, so a bad header is the error reported.
	headers, msg := a.luaHeaders(headerTable)
	if msg != "" {
		luakit.RaiseMessage(L, msg)
		return "", nil, 0, false
	}
	timeout := defaultTimeout
	if n, isNumber := timeoutValue.(lua.LNumber); isNumber {
		secs := float64(n)
		if math.IsNaN(secs) || secs < 0 || secs > maxTimeoutSeconds {
			luakit.RaiseMessage(L, errTimeoutRange)
			return "", nil, 0, false
		}
		timeout = time.Duration(secs * float64(time.Second))
	}
	return rawURL, headers, timeout, true
}

// luaHeaders keeps only the pairs whose key and value are both strings, as CC does, and
// adds the default User-Agent; msg is CC's error for the first pair its Netty refuses.
func (a *API) luaHeaders(t *lua.LTable) (headers http.Header, msg string) {
	headers = http.Header{}
	hasAgent := false
	if t != nil {
		t.ForEach(func(k, v lua.LValue) {
			ks, kok := k.(lua.LString)
			vs, vok := v.(lua.LString)
			if !kok || !vok || msg != "" {
				return
			}
			if msg = headerError(string(ks), string(vs)); msg != "" {
				return
			}
			// Keep the program's spelling of the name: the map is written directly.
			headers[string(ks)] = append(headers[string(ks)], string(vs))
			if strings.EqualFold(string(ks), "User-Agent") {
				hasAgent = true
			}
		})
	}
	if !hasAgent {
		headers["User-Agent"] = []string{a.opts.UserAgent}
	}
	return headers, msg
}

// run connects, then reads until the socket ends. It is the socket's main goroutine.
func (s *socket) run(u *url.URL, headers http.Header, timeout time.Duration) {
	a := s.api
	ctx, cancel := context.WithCancel(a.ctx)
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(a.ctx, timeout)
	}
	defer cancel()
	if !s.setCancel(cancel) {
		return // closed (shutdown) before it started
	}

	conn, err := s.connect(ctx, u, headers)
	if err != nil {
		msg := friendlyDialError(err)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			msg = msgTimedOut
		}
		if s.tryClose() && a.wait(nil) {
			a.h.QueueEvent("websocket_failure", lua.LString(s.url), lua.LString(msg))
		}
		return
	}

	if !a.wait(s.done) {
		s.tryClose()
		_ = conn.conn.Close() // closed by shutdown, which left the connection to the writer
		return
	}
	ready := make(chan struct{})
	a.h.Do(func(L *lua.LState) {
		defer close(ready)
		if s.isClosed() {
			return
		}
		a.h.QueueEvent("websocket_success", lua.LString(s.url), s.handle(L))
	})
	select {
	case <-ready:
	case <-a.ctx.Done():
		s.tryClose()
		_ = conn.conn.Close()
		return
	}
	a.h.Go(func() { s.write(conn) })
	s.read(conn)
}

// connect resolves, applies the address rules, dials and performs the handshake.
func (s *socket) connect(ctx context.Context, u *url.URL, headers http.Header) (*wsConn, error) {
	a := s.api
	addr, err := a.resolve(ctx, u.Hostname())
	if err != nil {
		return nil, err
	}
	port := u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	nc, err := a.dial(ctx, addr, port)
	if err != nil {
		return nil, err
	}
	if !s.setConn(nc) {
		return nil, net.ErrClosed
	}
	// Bound the handshake by the same timeout, and let shutdown or DropAll interrupt it.
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	var stream net.Conn = nc
	if u.Scheme == "wss" {
		tc, err := a.handshakeTLS(ctx, nc, u.Hostname(), nil)
		if err != nil {
			return nil, err
		}
		stream = tc
	}
	ws, err := clientHandshake(stream, u, headers)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if !stop() {
		return nil, ctx.Err() // the timeout fired and closed the connection
	}
	_ = nc.SetDeadline(time.Time{}) // no idle timeout once open, as in CC
	return ws, nil
}

// dial opens the TCP connection to an address the rules allowed.
func (a *API) dial(ctx context.Context, addr netip.Addr, port string) (net.Conn, error) {
	if a.refuse.Load() {
		return nil, errors.New("connection refused by fault injection")
	}
	return a.opts.Dial(ctx, "tcp", net.JoinHostPort(addr.String(), port))
}

// read delivers frames as events until the stream ends.
func (s *socket) read(conn *wsConn) {
	a := s.api
	for {
		f, err := conn.readFrame(a.opts.MaxWebsocketMessage)
		if err != nil {
			switch {
			case errors.Is(err, errFrameTooLarge):
				// Netty's frame decoder refuses it with a CorruptedWebSocketFrameException,
				// which CC's toFriendlyError does not know (its "Message is too large" is for
				// a TooLongFrameException): the reason is its default, "Could not connect".
				reason := fmt.Sprintf("Max frame length of %d has been exceeded.", a.opts.MaxWebsocketMessage)
				_ = conn.writeFrame(opClose, append(closePayload(closeTooBig), reason...))
				s.closeRemote(msgCouldNotConnect, -1)
			case errors.Is(err, errProtocol):
				_ = conn.writeFrame(opClose, closePayload(closeProtocolError))
				s.closeRemote(msgCouldNotConnect, -1)
			default:
				s.closeRemote(msgConnectionClosed, -1)
			}
			return
		}
		switch f.opcode {
		case opText, opBinary:
			// Netty validates text frames; a bad one is a protocol error, not a message.
			if f.opcode == opText && f.fin && !utf8.Valid(f.payload) {
				_ = conn.writeFrame(opClose, closePayload(closeInvalidData))
				s.closeRemote(msgCouldNotConnect, -1)
				return
			}
			if !a.wait(s.done) || s.isClosed() {
				return
			}
			a.h.QueueEvent("websocket_message", lua.LString(s.url), lua.LString(f.payload), lua.LBool(f.opcode == opBinary))
		case opPing:
			_ = conn.writeFrame(opPong, f.payload)
		case opClose:
			code, reason := parseClose(f.payload)
			// Netty checks the reason is UTF-8 as for a text frame, and hands it to CC as a
			// Java string, which reaches Lua one byte per character.
			if !utf8.ValidString(reason) {
				_ = conn.writeFrame(opClose, closePayload(closeInvalidData))
				s.closeRemote(msgCouldNotConnect, -1)
				return
			}
			// CC does not echo the Close frame: it just drops the connection.
			s.closeRemote(ccstr.FromText(reason), code)
			return
		default:
			// Pongs, and continuation frames: CC has no aggregator, so only the first
			// fragment of a message ever reaches Lua.
		}
	}
}

// closePayload is a Close frame body carrying only code.
func closePayload(code int) []byte {
	return []byte{byte(code >> 8), byte(code)}
}

// write sends queued messages, one frame each, until the socket closes. After a local
// close() it first flushes what was already sent, as Netty does for writes queued before
// the close, then drops the connection.
func (s *socket) write(conn *wsConn) {
	defer func() { _ = conn.conn.Close() }()
	// Shutdown waits for a flush to a server that stopped reading at most closeFlushTimeout,
	// even for a write blocked before it.
	stop := context.AfterFunc(s.api.ctx, func() { _ = conn.conn.SetWriteDeadline(time.Now().Add(closeFlushTimeout)) })
	defer stop()
	for {
		select {
		case m := <-s.sendq:
			s.writeOne(conn, m)
		case <-s.done:
			_ = conn.conn.SetWriteDeadline(time.Now().Add(closeFlushTimeout))
			for {
				select {
				case m := <-s.sendq:
					s.writeOne(conn, m)
				default:
					return
				}
			}
		}
	}
}

// writeOne writes one queued message.
func (s *socket) writeOne(conn *wsConn, m outMessage) {
	err := conn.writeFrame(m.opcode, m.payload)
	s.mu.Lock()
	s.inflight--
	s.mu.Unlock()
	if err != nil {
		_ = conn.conn.Close() // the reader reports the broken stream
	}
}

// closeRemote ends the socket from the network side and queues websocket_closed, unless
// something closed it first.
func (s *socket) closeRemote(reason string, code int) {
	if !s.tryClose() {
		return
	}
	a := s.api
	if !a.wait(nil) {
		return
	}
	reasonValue, codeValue := lua.LValue(lua.LNil), lua.LValue(lua.LNil)
	if reason != "" {
		reasonValue = lua.LString(reason)
	}
	if code >= 0 {
		codeValue = lua.LNumber(code)
	}
	a.h.QueueEvent("websocket_closed", lua.LString(s.url), reasonValue, codeValue)
}

// setCancel records how to abort the connection attempt; false if already closed.
func (s *socket) setCancel(cancel context.CancelFunc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel = cancel
	return !s.closed
}

// setConn records the TCP connection; false (and the connection closed) if already closed.
func (s *socket) setConn(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = nc.Close()
		return false
	}
	s.netConn = nc
	return true
}

// isClosed reports whether the socket has been closed by either side.
func (s *socket) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// tryClose closes the socket once: it frees the slot and drops the TCP connection
// without a Close frame. Only the first caller gets true, so only one event is queued.
func (s *socket) tryClose() bool { return s.closeOnce(true) }

// closeOnce is tryClose; with dropNow false the connection is left for the writer to
// drop once it has flushed the messages already sent.
func (s *socket) closeOnce(dropNow bool) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.closed = true
	close(s.done)
	nc, cancel := s.netConn, s.cancel
	s.mu.Unlock()

	s.api.mu.Lock()
	delete(s.api.sockets, s)
	s.api.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if nc != nil && dropNow {
		_ = nc.Close()
	}
	return true
}

// drop breaks the connection as a dying server would, leaving the reporting to the
// socket's own goroutine.
func (s *socket) drop() {
	s.mu.Lock()
	nc, cancel := s.netConn, s.cancel
	s.mu.Unlock()
	if nc != nil {
		_ = nc.Close()
	} else if cancel != nil {
		cancel()
	}
}

// handle builds the Lua handle table. Lua goroutine only.
func (s *socket) handle(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("send", L.NewFunction(s.luaSend))
	t.RawSetString("close", L.NewFunction(s.luaClose))
	receive := lua.LValue(lua.LNil)
	if err := L.CallByParam(lua.P{Fn: s.api.receiveFactory, NRet: 1, Protect: true},
		lua.LString(s.url), L.NewFunction(s.luaReceiveStart), L.NewFunction(s.luaIsClosed)); err == nil {
		receive = L.Get(-1)
		L.Pop(1)
	}
	t.RawSetString("receive", receive)
	return t
}

// luaSend is ws.send(message [, binary]).
func (s *socket) luaSend(L *lua.LState) int {
	msg, binary := L.Get(1), luakit.OptBool(L, 2, false)
	if s.isClosed() {
		L.RaiseError(errClosedFile)
		return 0
	}
	text := rawToString(msg)
	if len(text) > s.api.opts.MaxWebsocketMessage {
		L.RaiseError(msgMessageTooLarge)
		return 0
	}
	m := outMessage{opcode: opBinary, payload: []byte(text)}
	if !binary {
		m = outMessage{opcode: opText, payload: []byte(ccstr.DecodeUTF8(text))}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0 // closed since the check: CC silently drops a send on a detached channel
	}
	if s.inflight >= maxPendingSends {
		s.mu.Unlock()
		L.RaiseError(errTooManySends)
		return 0
	}
	s.inflight++
	s.mu.Unlock()
	s.sendq <- m // never blocks: inflight bounds the queue
	return 0
}

// luaClose is ws.close(): silent, no Close frame, no event.
func (s *socket) luaClose(L *lua.LState) int {
	s.closeOnce(false)
	return 0
}

// luaReceiveStart is called by the Lua receive wrapper with the caller's timeout argument.
// It checks the argument and the socket, starts the timeout timer, and returns its id (or
// nil). Errors carry no position: the wrapper re-raises them at the caller's level.
func (s *socket) luaReceiveStart(L *lua.LState) int {
	hasTimeout := L.Get(1) != lua.LNil
	secs := luakit.OptFinite(L, 1, 0) // checked before the socket, as CC parses arguments first
	if s.isClosed() {
		L.Error(lua.LString(errClosedFile), 0)
		return 0
	}
	if !hasTimeout {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(lua.LNumber(s.api.h.StartTimer(secs)))
	return 1
}

// luaIsClosed tells the receive wrapper whether this socket is closed.
func (s *socket) luaIsClosed(L *lua.LState) int {
	L.Push(lua.LBool(s.isClosed()))
	return 1
}
