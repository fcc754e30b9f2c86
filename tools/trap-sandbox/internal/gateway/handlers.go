package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/protocol"
)

// Request types the gateway itself knows (protocol/types.go lists them all).
const (
	// TypeHello authenticates and registers a socket: payload {traposId, secret, clientVersion?,
	// check?}; with check it registers nothing and closes 1000 after the answer.
	TypeHello = protocol.TypeHello
	// TypePing is the built-in gateway→computer request; the computer answers {traposId}.
	TypePing = protocol.TypePing
)

// RequestHandler answers one computer_request type (see protocol.RequestHandler).
type RequestHandler = protocol.RequestHandler

// QuickHandler answers one computer_request type on the socket's reader when it can do so
// without blocking (see protocol.QuickHandler).
type QuickHandler = protocol.QuickHandler

// handler is one entry of the gateway's handler table.
type handler struct {
	// serve answers a request in a goroutine of its own, holding one of the socket's request
	// slots (maxRequestsInFlight).
	serve RequestHandler
	// quick, when set, is tried first, on the reader; serve answers when it returns
	// protocol.ErrWouldBlock.
	quick QuickHandler
}

// Handle registers h as the answer to computer_request type typ: the gateway's handler
// table, which modules register into (the opencodehealth module registers probe_gateway).
// Call it before Mount: once mounted, sockets read the table without a lock. Registering
// after Mount, an empty type, hello, or a type twice panics (a wiring mistake).
func (g *Gateway) Handle(typ string, h RequestHandler) { g.register(typ, handler{serve: h}) }

// HandleQuick registers typ as Handle does, declaring that quick can answer it without
// blocking: quick runs on the socket's reader, without a goroutine or a request slot, and h
// answers in a goroutine whenever quick returns protocol.ErrWouldBlock. Answers still leave
// through the socket's send queue, in the order they were made.
func (g *Gateway) HandleQuick(typ string, quick QuickHandler, h RequestHandler) {
	if quick == nil {
		panic(fmt.Sprintf("gateway: HandleQuick(%q): nil quick handler", typ))
	}
	g.register(typ, handler{serve: h, quick: quick})
}

func (g *Gateway) register(typ string, h handler) {
	switch {
	case g.mounted:
		panic(fmt.Sprintf("gateway: Handle(%q) after Mount", typ))
	case typ == "" || typ == TypeHello || typ == TypeProve || typ == TypeBye:
		panic(fmt.Sprintf("gateway: Handle(%q): reserved type", typ))
	case g.handlers[typ].serve != nil:
		panic(fmt.Sprintf("gateway: Handle(%q): registered twice", typ))
	case h.serve == nil:
		panic(fmt.Sprintf("gateway: Handle(%q): nil handler", typ))
	}
	g.handlers[typ] = h
	g.cfg.Metrics.countType(typ)
}

// handleFrame dispatches one inbound frame. It runs in the reader goroutine, so anything slow
// is handed to a goroutine of its own.
func (s *Session) handleFrame(data []byte) {
	if s.verdictPending.Load() {
		return // a wrong secret's answer is being held back: nothing else is heard
	}
	f, err := protocol.DecodeFrame(data)
	if err != nil {
		s.ignoredFrame(err, len(data))
		return
	}
	s.gw.cfg.Metrics.frameIn(f.Event, f.Type)
	switch f.Event {
	case protocol.EventComputerRequest:
		s.handleRequest(&f)
	case protocol.EventComputerResponse:
		s.handleResponse(f)
	default:
		s.ignoredEvent(f.Event)
	}
}

// The reader's path to a quick answer (handleFrame, handleRequest, answer) is kept shallow,
// its rare branches in functions of their own and the frame passed by pointer: a goroutine's
// stack keeps the size its deepest call grew it to, and the path must fit the reader's 4 KiB
// (TestAQuickAnswerKeepsTheReadersStackSmall), or every computer that ever asked
// probe_gateway would hold 4 KiB more while idle.

//go:noinline
func (s *Session) ignoredFrame(err error, size int) {
	// Never log the frame itself: a hello carries the secret.
	s.log().Debug("ignored frame", "err", clip(err.Error()), "bytes", size)
}

//go:noinline
func (s *Session) ignoredEvent(event protocol.Event) {
	s.log().Debug("ignored frame: a computer must not send this event", "event", clip(string(event)))
}

func (s *Session) handleRequest(f *protocol.Frame) {
	if f.Type == TypeHello {
		s.helloSeen = true
		s.helloOffStack(*f)
		return
	}
	if f.Type == TypeProve {
		s.proveOffStack(*f)
		return
	}
	if !s.isAuthenticated() && s.refusedBeforeHello(f) {
		return
	}
	if f.Type == TypeBye {
		s.byeOffStack(*f)
		return
	}
	handler, ok := s.gw.handlers[f.Type]
	if !ok {
		s.refuseUnknownType(f)
		return
	}
	if handler.quick != nil {
		// Answered here, on the reader, when it can be without blocking: no goroutine, no
		// slot (it is never in flight beside the reader), and its answer is queued before the
		// next frame is read. When no writer runs, the reader writes it itself: a computer
		// that does not read its answers then stops being read until the write timeout drops
		// it, and nobody else waits on it.
		payload, err := s.recovered(f, func() (json.RawMessage, error) { return handler.quick(s.requester(), f.Payload) })
		if !errors.Is(err, protocol.ErrWouldBlock) {
			s.answerHandled(f, payload, err, writeInline)
			return
		}
	}
	select {
	case s.slots <- struct{}{}:
	default:
		s.refuseInFlight(f)
		return
	}
	s.handlers.Add(1)
	go s.serve(handler.serve, *f)
}

// refusedBeforeHello answers a request a socket without a good hello may not make (link.go).
//
//go:noinline
func (s *Session) refusedBeforeHello(f *protocol.Frame) bool {
	if pe := s.linkRefusal(f.Type); pe != nil {
		s.reply(*f, nil, pe)
		return true
	}
	return false
}

//go:noinline
func (s *Session) refuseUnknownType(f *protocol.Frame) {
	s.reply(*f, nil, protocol.Errorf(protocol.CodeUnknownType,
		"the gateway has no request type %s (known: %s)", quoteClipped(f.Type), strings.Join(s.gw.knownTypes(), ", ")))
}

//go:noinline
func (s *Session) refuseInFlight(f *protocol.Frame) {
	s.gw.cfg.Metrics.limited(limitRequestsInFlight)
	s.gw.limits.logRefusal(limitRequestsInFlight, s.remoteAddr, "traposId", s.Key().TraposID, "max", maxRequestsInFlight)
	s.reply(*f, nil, protocol.Errorf(protocol.CodeInternal,
		"too many requests in flight on this socket (limit %d)", maxRequestsInFlight))
}

// serve runs a request's handler in the goroutine handleRequest started for it, which holds
// one of the socket's request slots. (A method of its own rather than a closure: a frame
// captured by a closure would be moved to the heap for every request, quick ones included.)
func (s *Session) serve(h RequestHandler, f protocol.Frame) {
	defer s.handlers.Done()
	defer func() { <-s.slots }()
	payload, err := s.recovered(&f, func() (json.RawMessage, error) { return h(s.ctx, s.requester(), f.Payload) })
	var linked func()
	if err == nil {
		linked = s.linkAnswering(f.Type, payload)
	}
	if s.answerHandled(&f, payload, err, writeInline) && linked != nil {
		linked()
	}
}

// recovered runs handle, a module's handler answering request f, a panic becoming the
// request's internal error, logged with its stack. A handler's goroutine is out of reach of
// net/http's recovery, where a panic would end the gateway and drop every computer; and on the
// reader (a quick handler) net/http's recovery would leave the socket open and registered.
func (s *Session) recovered(f *protocol.Frame, handle func() (json.RawMessage, error)) (payload json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log().Error("request handler panicked", "type", clip(f.Type), "panic", p, "stack", string(debug.Stack()))
			payload, err = nil, protocol.Errorf(protocol.CodeInternal, "the gateway failed on this %s request; its log has the details", clip(f.Type))
		}
	}()
	return handle()
}

// helloOffStack runs hello off the reader's stack (offStack).
func (s *Session) helloOffStack(f protocol.Frame) { offStack(func() { s.handleHello(f) }) }

// byeOffStack runs bye off the reader's stack (offStack).
//
//go:noinline
func (s *Session) byeOffStack(f protocol.Frame) { offStack(func() { s.handleBye(&f) }) }

// answerHandled answers request f with what its handler returned: a *protocol.Error as it
// is, any other error as internal (logged). It reports whether the answer was a success.
func (s *Session) answerHandled(f *protocol.Frame, payload json.RawMessage, err error, how writeMode) bool {
	if err != nil {
		s.answer(f, nil, s.handlerError(f, err), how)
		return false
	}
	s.answer(f, payload, nil, how)
	return true
}

// handlerError is what a handler's error answers: a *protocol.Error as it is, any other
// error as internal (logged). A handler that stopped because its socket closed (its ctx
// ended: the computer went away) is no failure: that is logged at DEBUG.
//
//go:noinline
func (s *Session) handlerError(f *protocol.Frame, err error) *protocol.Error {
	var pe *protocol.Error
	if !errors.As(err, &pe) {
		if errors.Is(err, context.Canceled) && s.ctx.Err() != nil {
			s.log().Debug("request ended with its socket", "type", clip(f.Type))
		} else {
			s.log().Error("request handler failed", "type", clip(f.Type), "err", clip(err.Error()))
		}
		pe = protocol.Errorf(protocol.CodeInternal, "%s failed", f.Type)
	}
	return pe
}

// offStack runs fn in a goroutine of its own and waits for it. The reader calls what runs
// deep (hello: JSON, the account store, the registry, a log line) this way, because a
// goroutine's stack keeps the size its deepest call grew it to: run on the reader, a hello
// would leave every idle computer's reader holding an 8 KiB stack instead of 4 KiB.
func offStack(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

// helloPayload is what hello carries. Fields are raw so a wrongly typed one can be named.
type helloPayload struct {
	TraposID json.RawMessage `json:"traposId"`
	Secret   json.RawMessage `json:"secret"`
	// ClientVersion is the client package's version; optional (older clients send none).
	ClientVersion json.RawMessage `json:"clientVersion"`
	// Check, when true, asks only whether the secret is right (the installer's password
	// check): nothing is registered and the socket ends after the answer.
	Check json.RawMessage `json:"check"`
	// Link, when true, opens a link session (link.go): no secret needed, nothing registered.
	Link json.RawMessage `json:"link"`
}

// helloFlag reads one of hello's optional booleans (check, link): absent or null is false; ok
// is false for any other value that is not a boolean.
func helloFlag(raw json.RawMessage) (value, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return false, true
	}
	return value, json.Unmarshal(raw, &value) == nil
}

func (s *Session) handleHello(f protocol.Frame) {
	var p helloPayload
	_ = json.Unmarshal(f.Payload, &p) // the payload is always an object; bad fields stay empty
	var traposID, secret string
	if json.Unmarshal(p.TraposID, &traposID) != nil || traposID == "" {
		s.gw.cfg.Metrics.helloFailed(protocol.CodeNotAuthenticated)
		s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated,
			`hello needs a traposId (a non-empty string like "7:label")`))
		return
	}
	if problem := cctext.TraposIDProblem(traposID); problem != "" {
		s.gw.cfg.Metrics.helloFailed(protocol.CodeNotAuthenticated)
		s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated, "the traposId %s", problem))
		return
	}
	_ = json.Unmarshal(p.Secret, &secret) // a missing or non-string secret is the empty secret
	// noSecret: the computer sent none (its sandbox.password is not set), which its answer
	// says; a secret of another type is a wrong one.
	noSecret := secret == "" && (len(p.Secret) == 0 || string(p.Secret) == "null" || string(p.Secret) == `""`)
	var clientVersion string
	_ = json.Unmarshal(p.ClientVersion, &clientVersion) // missing or not a string: unknown
	clientVersion = cctext.Clip(clientVersion, MaxClientVersionBytes)

	f.TraposSenderID = traposID // answer the computer by the id it just gave
	check, checkOK := helloFlag(p.Check)
	link, linkOK := helloFlag(p.Link)
	if !checkOK || !linkOK {
		// Read as false, "yes" would make a check or a link session a hello that registers,
		// and takes the place of the computer's running daemon (newest wins).
		name, raw := "check", p.Check
		if !linkOK {
			name, raw = "link", p.Link
		}
		s.gw.cfg.Metrics.helloFailed(protocol.CodeNotAuthenticated)
		s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated, "hello's %s must be true or false, not %s", name, clip(string(raw))))
		return
	}
	if link {
		s.startLinkSession(f, traposID)
		return
	}
	if !check {
		if answer, ok := s.sameHelloAgain(traposID, secret); ok {
			s.reply(f, answer, nil)
			return
		}
		if s.isAuthenticated() {
			// Another secret or traposId on a registered socket goes to the account store
			// (a read of the credential, a write of its last hello): a few times a socket.
			if s.otherHellos >= maxOtherHellosOnASocket {
				s.gw.cfg.Metrics.helloFailed(protocol.CodeNotAuthenticated)
				s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated,
					"this socket said hello with another secret or traposId %d times already; say that hello on a new socket", maxOtherHellosOnASocket))
				return
			}
			s.otherHellos++
		}
	}

	tokenID := s.gw.exposedToken(s.ctx, secret)
	if tokenID != "" {
		// Taken or not (a gateway without a password takes any secret), it sits in the
		// computer's .settings for anyone who opens it: the operator is told which to revoke.
		s.gw.limits.warns.warnEach("hello with an API token as the computer's secret: anyone who opens the computer reads it; revoke it (trap-sandbox tokens revoke ID) and link the computer (sandbox link)",
			s.remoteAddr, tokenID, "traposId", clip(traposID), "tokenId", tokenID)
	}
	revocationsBefore := s.gw.revocations.Load() // before the store is asked (revokedDuringHello)
	accountID, credential, accountCreated, credentialKind, err := s.gw.resolveAccount(s.ctx, secret, traposID, s.remoteAddr)
	if errors.Is(err, account.ErrRevoked) {
		s.gw.cfg.Metrics.helloFailed(protocol.CodeUnauthorized)
		s.refusedCredentialLine("hello refused: the computer's credential is revoked", credentialSelector(secret), traposID)
		s.reply(f, nil, protocol.Errorf(protocol.CodeUnauthorized, "%s", revokedCredentialWords))
		s.closeByGateway(CloseRevoked, "revoked")
		return
	}
	if wrong := (*account.WrongComputerError)(nil); errors.As(err, &wrong) {
		s.gw.cfg.Metrics.helloFailed(protocol.CodeUnauthorized)
		s.refusedCredentialLine("hello refused: a linked credential from another computer id", credentialSelector(secret), traposID,
			"boundTo", wrong.ComputerID)
		s.reply(f, nil, protocol.Errorf(protocol.CodeUnauthorized,
			"%s, not to %s (link this computer with: sandbox link)", wrong.Error(), account.ComputerID(traposID)))
		s.closeByGateway(CloseUnauthorized, "unauthorized")
		return
	}
	if err != nil && !errors.Is(err, account.ErrBadSecret) {
		// Each computer with a credential retries while the store is out (NATS down; after 5 s,
		// then less often, up to once a minute): one line per address a minute, with the count
		// of the others.
		s.gw.limits.warns.error("hello: the account store failed", s.remoteAddr, "err", err)
		s.reply(f, nil, protocol.Errorf(protocol.CodeInternal, "the gateway cannot check the secret now; try again later"))
		s.closeByGateway(CloseGoingAway, "account store unavailable")
		return
	}
	if err != nil {
		s.gw.cfg.Metrics.helloFailed(protocol.CodeUnauthorized)
		if kind, id, ok := account.Identify(secret); ok && kind == account.KindCredential && s.gw.cfg.Accounts != nil {
			// A linked computer whose credential the store lacks: after a restored backup, a
			// gateway started on another data directory, or its account's removal, its operator
			// reads why and the fix (the computer's player reads theirs from refuseSecret).
			// Each such computer stops retrying once refused: one line for each, or the
			// operator reads one computer of a server whose every computer links again.
			s.unknownCredentialLine("hello", id, traposID)
		} else if noSecret {
			s.gw.limits.warns.warn("hello rejected: no secret", s.remoteAddr, "traposId", clip(traposID))
		} else {
			s.gw.limits.warns.warn("hello rejected: wrong secret", s.remoteAddr, "traposId", clip(traposID))
		}
		hold := s.gw.limits.helloFailed(s.remoteAddr)
		if hold.delay <= 0 {
			s.refuseSecret(f, secret, noSecret, tokenID)
			return
		}
		// Past the address's or the gateway's burst of failures the answer waits: answered
		// guesses run at the failed-hello rates, however many sockets try.
		s.verdictPending.Store(true)
		timer := s.gw.cfg.Clock.NewTimer(hold.delay) // armed before it is counted, for tests
		hold.count(s.gw.cfg.Metrics)
		s.handlers.Add(1) // on the reader, before run's handlers.Wait
		go func() {
			defer s.handlers.Done()
			defer timer.Stop()
			select {
			case <-timer.C():
				s.refuseSecret(f, secret, noSecret, tokenID)
			case <-s.ctx.Done():
			}
		}()
		return
	}
	key := Key{AccountID: accountID, TraposID: traposID}
	accountPayload := s.goodHelloAnswer(key.AccountID, credentialKind, secret)
	if check {
		// Registering would evict the computer's own daemon (newest wins, 4009) while the
		// installer only asks whether its password is right.
		s.log().Debug("secret checked", "traposId", clip(traposID))
		s.reply(f, accountPayload, nil)
		s.closeByGateway(CloseChecked, "checked")
		return
	}

	if !s.isAuthenticated() && s.gw.stopping() {
		// A socket opened before the stop began, saying hello now: Shutdown is about to close
		// it (1001), and a replica that is leaving announces no computer, so the computer
		// would be served here for that moment, announced to no other replica. Refused the
		// same way, with the answer saying why; the client reconnects after its usual delay,
		// to another replica behind the same address (new sockets here get 503 by then).
		s.log().Debug("hello refused: the gateway is shutting down", "traposId", clip(traposID))
		s.reply(f, nil, errHelloWhileShuttingDown)
		s.closeForShutdown()
		return
	}
	place, ok := s.takeAccountPlace(f, key)
	if !ok {
		return
	}
	defer place.release() // a hello that ends before Register gives its place back
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if s.authenticated {
		registered := s.key
		s.mu.Unlock()
		// Given back before the answer, which the computer may follow at once with a hello
		// that needs the place.
		place.release()
		if registered == key {
			s.reply(f, accountPayload, nil)
			return
		}
		s.gw.cfg.Metrics.helloFailed(protocol.CodeNotAuthenticated)
		s.reply(f, nil, protocol.Errorf(protocol.CodeNotAuthenticated,
			"this socket is already registered as %q; open a new socket for %q", registered.TraposID, key.TraposID))
		if hook := s.gw.testHookAfterRefusedHello; hook != nil {
			hook()
		}
		return
	}
	if !s.gw.limits.helloSucceeded(s.slot) {
		s.mu.Unlock()
		return // evicted just before: its close is under way
	}
	s.key, s.authenticated = key, true
	s.credential = credential
	s.helloSecret = sha256.Sum256([]byte(secret))
	s.credentialKind = credentialKind
	s.accountCreated = accountCreated
	s.clientVersion = clientVersion
	s.mu.Unlock()
	// Trusted now: full-size frames both ways (this runs on the reader, which owns the limit).
	s.readLimit = protocol.MaxFrameBytes
	s.send.setLimit(s.gw.cfg.SendQueueBytes)

	if hook := s.gw.testHookBeforeRegister; hook != nil {
		hook(key)
	}

	// The answer is first on the wire: it takes the writer's role (or, behind the computer's
	// own answers, its place in the queue) before the computer can be reached, so a host's
	// request sent the moment it is registered queues behind it; and, written as the hello
	// ends (its log lines first), it never tells the computer it is connected before it is.
	answer, claimed := s.holdAnswer(&f, accountPayload)
	defer putEncodeBuffer(answer) // deferred first: runs after the write
	if old := s.gw.registry.Register(s, place); old != nil {
		old.Evict()
	}
	if claimed {
		// A closing socket's last writer waits for this one, then closes.
		defer s.writeClaimed(*answer)
	}
	if s.isClosed() {
		// Closed while registering (e.g. shutdown): don't leave a dead entry behind.
		s.gw.registry.Unregister(s)
		return
	}
	if s.revokedDuringHello(credential, revocationsBefore) {
		return
	}
	if s.connectLineAllowed() {
		s.log().Info("computer connected", "accountId", key.AccountID, "traposId", clip(key.TraposID), "clientVersion", clip(clientVersion))
		s.noteClientVersion(key, clientVersion)
	} else {
		s.connectLeftOut.Store(true)
	}
	if s.loopbackOnAPIPort && s.gw.cfg.LoopbackAPI && s.gw.cohostWarned.CompareAndSwap(false, true) {
		if s.gw.cfg.ComputersPort {
			s.log().Warn(CohostedPastTheComputersPort, "traposId", clip(key.TraposID))
		} else {
			s.log().Warn(CohostedWithoutAPIToken, "traposId", clip(key.TraposID))
		}
	}
}

// takeAccountPlace takes a place for key in its account's share of the connection cap here
// (Config.maxAccountConnections; registry.takeAccountPlace), which the hello hands to
// Register or releases. With none left, and key holding none, it refuses f, busy, and
// reports false: the socket stays as it was, as after another refused hello; the computer's
// daemon tries again after its usual wait.
//
//go:noinline
func (s *Session) takeAccountPlace(f protocol.Frame, key Key) (*accountPlace, bool) {
	place, held, ok := s.gw.registry.takeAccountPlace(key, s.gw.cfg.maxAccountConnections())
	if ok {
		return place, true
	}
	s.gw.cfg.Metrics.limited(limitAccountConnections)
	s.gw.limits.warns.warn("hello refused: its account holds its share of the connection cap (half of --max-connections) already", s.remoteAddr,
		"accountId", key.AccountID, "traposId", clip(key.TraposID), "held", held)
	s.reply(f, nil, protocol.Errorf(protocol.CodeBusy,
		"account %s has %d computers connected to this gateway, the most one account may (half of its --max-connections): "+
			"close some, or ask the gateway's operator", key.AccountID, held))
	return nil, false
}

// sameHelloAgain answers a hello on a registered socket with its traposId and the secret it
// said hello with, as the hello that registered it was answered, and reports whether it did.
// The account store is not asked again: a computer may send the same hello as fast as it
// writes frames, and each was a read of its credential and a write of its last hello, for
// an answer it had. Its socket is closed if its credential is revoked meanwhile
// (revokeCredentials), as before. Any other hello goes the whole way (a wrong secret closes
// the socket, another id is refused).
func (s *Session) sameHelloAgain(traposID, secret string) (json.RawMessage, bool) {
	given := sha256.Sum256([]byte(secret))
	s.mu.Lock()
	key, kind := s.key, s.credentialKind
	same := s.authenticated && key.TraposID == traposID && subtle.ConstantTimeCompare(given[:], s.helloSecret[:]) == 1
	s.mu.Unlock()
	if !same {
		return nil, false
	}
	return s.goodHelloAnswer(key.AccountID, kind, secret), true
}

// goodHelloAnswer is the answer to a good hello of a computer of accountID that said it with
// secret, of credentialKind: the first, a check's, and the same hello again alike.
func (s *Session) goodHelloAnswer(accountID, credentialKind, secret string) json.RawMessage {
	proves := s.gw.provesTo(credentialKind, secret)
	var proofKey string
	if proves && credentialKind == "" {
		// The computer said hello with the password, which S tells it nothing more of, over
		// the socket the password just came by: its later proves ask for version 2.
		proofKey = hex.EncodeToString(PasswordProofKeyV2(s.gw.cfg.Password))
	}
	answer, _ := json.Marshal(helloAnswer{AccountID: accountID, CredentialKind: credentialKind,
		LivenessMs: s.gw.cfg.Liveness().Milliseconds(), ServedClient: s.gw.cfg.servedClient(),
		Proves: proves, ProofKey: proofKey})
	return answer
}

// provesTo reports whether the gateway can prove itself (prove.go) to a computer that said
// hello with secret, of credentialKind: with a credential of its own, or with the password
// when the gateway has one. Not without a password, which takes any secret and knows none; nor
// to a password shaped like a credential (tsc_a_b), whose computer would ask for the proof of
// a credential a.
func (g *Gateway) provesTo(credentialKind, secret string) bool {
	if credentialKind != "" {
		return true
	}
	kind, _, shaped := account.Identify(secret)
	return g.cfg.Password != "" && !(shaped && kind == account.KindCredential)
}

// holdAnswer encodes the answer to a good hello, into a pooled buffer the caller returns
// (putEncodeBuffer), and takes the writer's role for it: true, the caller writes it with
// writeClaimed. With a writer running it queues the answer instead, and returns false.
func (s *Session) holdAnswer(f *protocol.Frame, payload json.RawMessage) (*[]byte, bool) {
	buf := encodeBuffers.Get().(*[]byte)
	// A hello's answer always encodes: its payload is the gateway's own, and its messageId
	// came within the read limit before hello, far under the frame limit.
	*buf, _ = protocol.AppendFrame((*buf)[:0], s.response(f, payload, nil))
	if s.claimWriter(*buf, writeInline) {
		s.gw.cfg.Metrics.frameOut(protocol.EventGatewayResponse, f.Type) // counted before it is out, as in answer
		return buf, true
	}
	if err := s.enqueueAs(bytes.Clone(*buf), frameAnswer, writeByWriter); err != nil {
		s.answerNotQueued(f, err)
	} else {
		s.gw.cfg.Metrics.frameOut(protocol.EventGatewayResponse, f.Type)
	}
	return buf, false
}

// CohostedWithoutAPIToken is logged once a run, at the first hello from this machine on the
// API's port while the host API trusts loopback clients: CC's http reaches 127.0.0.1 once the
// operator's rule allows the gateway there, and the API cannot tell a program on a computer
// from the host's own tools. Computers through --computers-listen reach no API there.
const CohostedWithoutAPIToken = "a computer connected from this machine while SANDBOX_API_TOKEN is unset: the host API answers every loopback client without a token, " +
	"and so every program on this Minecraft server's computers (http.post to the gateway can drive and read every computer and add accounts); " +
	"set SANDBOX_API_TOKEN, or give the computers a port of their own with --computers-listen and allow only that one in CC's http rules (docs/user-guide.md)"

// CohostedPastTheComputersPort is CohostedWithoutAPIToken when computers have a port of their
// own: this one came by the API's port all the same (installed through it, or a rule in CC's
// config that allows it).
const CohostedPastTheComputersPort = "a computer connected from this machine through --listen's port, not --computers-listen's, while SANDBOX_API_TOKEN is unset: " +
	"a rule in CC's http config lets it reach the host API, which answers every loopback client without a token; " +
	"allow only --computers-listen's port in CC's http rules and install the computer again through it (the install line of msg=\"computers connect here\"), or set SANDBOX_API_TOKEN (docs/user-guide.md)"

// errHelloWhileShuttingDown answers a hello that arrives once Shutdown has begun.
var errHelloWhileShuttingDown = protocol.Errorf(protocol.CodeNotConnected,
	"the gateway is shutting down; reconnect (to another replica, or to this one once it is back)")

// helloAnswer is the payload of a good hello's answer.
type helloAnswer struct {
	AccountID string `json:"accountId"`
	// CredentialKind is how the computer's own credential was made (CredentialLinked,
	// CredentialIssued); absent for the shared password: sandbox status words it.
	CredentialKind string `json:"credentialKind,omitempty"`
	// Link is set on a link session's answer (link.go).
	Link bool `json:"link,omitempty"`
	// LivenessMs is Config.Liveness: the daemon reconnects when the gateway sends nothing for
	// that long (docs/protocol.md).
	LivenessMs int64 `json:"livenessMs"`
	// ServedClient names the client package the gateway serves at /trapos/install; absent when
	// it serves none (Config.ClientVersion empty), and from older gateways.
	ServedClient *servedClient `json:"servedClient,omitempty"`
	// Proves says the gateway answers this computer's prove with a proof (prove.go): its
	// client asks for one before every later hello to this URL. Absent when it cannot (a
	// gateway without a password, to a computer without a credential), and from older gateways.
	Proves bool `json:"proves,omitempty"`
	// ProofKey is the hex of the password's slow proof key (PasswordProofKeyV2), to a computer
	// that said hello with the password when Proves: it asks for the version 2 proof from
	// then on. Absent otherwise, and from gateways older than 0.5.34's.
	ProofKey string `json:"proofKey,omitempty"`
}

// servedClient is hello's answer's servedClient: the daemon shows its player an update line
// when version is newer than its own (docs/protocol.md).
type servedClient struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// servedClient is the hello answer's servedClient, nil when the gateway serves no client.
func (c Config) servedClient() *servedClient {
	if c.ClientVersion == "" {
		return nil
	}
	return &servedClient{Name: c.ClientName, Version: c.ClientVersion}
}

// refuseSecret answers a wrong-secret hello and closes the socket with 4001. A secret shaped
// like a computer credential (tsc_…) is refused as one: its fix is the credentials list, not
// SANDBOX_PASSWORD, which may not even be set. A hello without a secret is told it sent none:
// "wrong" would send its player to compare a password the computer does not have.
func (s *Session) refuseSecret(f protocol.Frame, secret string, noSecret bool, tokenID string) {
	msg := "wrong secret (check the computer's sandbox.password against SANDBOX_PASSWORD)"
	if noSecret {
		msg = noSecretMsg
		if s.gw.cfg.Accounts != nil {
			msg = noSecretWithAccountsMsg
		}
	} else if hint := misplacedSecret(secret, tokenID); hint != "" {
		msg = "wrong secret: " + hint
	} else if s.gw.cfg.Accounts != nil && strings.HasPrefix(secret, string(account.KindCredential)+"_") {
		nor := ""
		if s.gw.cfg.Password != "" {
			nor = " nor SANDBOX_PASSWORD"
		}
		msg = "wrong secret: " + unknownCredentialWords(nor)
	}
	s.reply(f, nil, protocol.Errorf(protocol.CodeUnauthorized, "%s", msg))
	s.closeByGateway(CloseUnauthorized, "unauthorized")
}

// revokedCredentialWords refuse a computer's revoked credential, at its hello or, before it,
// at its prove: the player's fix.
const revokedCredentialWords = "this computer's credential was revoked (link it again with: sandbox link, or set a new credential with: sandbox setup)"

// unknownCredentialWords refuse a computer credential the gateway does not hold, at its hello
// (nor: " nor SANDBOX_PASSWORD" when the gateway has one, which the secret was not either) or
// at its prove: the player's fix.
func unknownCredentialWords(nor string) string {
	return "not a computer credential of this gateway" + nor +
		" (check the computer's sandbox.password against trap-sandbox credentials list, or link it again: sandbox link)"
}

// noSecretMsg answers a hello that sent no secret to a gateway with a password (its code stays
// unauthorized); noSecretWithAccountsMsg adds the other way in, a credential of its own.
const (
	noSecretMsg             = "no secret sent (sandbox.password is not set): this gateway wants SANDBOX_PASSWORD (set it with: sandbox setup)"
	noSecretWithAccountsMsg = "no secret sent (sandbox.password is not set): this gateway wants SANDBOX_PASSWORD or a linked credential (sandbox setup, or sandbox link)"
)

// misplacedSecret names the fix for a hello secret that is one of the host's secrets, never a
// computer's: an API token (tokenID, exposedToken's answer, which anyone who opens the
// computer reads in its .settings) or an enrollment key; "" for any other. Only the secret's
// id is named, which is no secret.
func misplacedSecret(secret, tokenID string) string {
	kind, _, ok := account.Identify(secret)
	switch {
	case tokenID != "":
		return "it is an API token (tsa_...), for the host's API, never a computer's: anyone who opens the computer reads its settings, so revoke it (trap-sandbox tokens revoke " + tokenID +
			") and give the computer a credential of its own (sandbox link)"
	case ok && kind == account.KindEnrollment:
		return "it is an enrollment key (tsk_...), which links a computer instead: sandbox link KEY"
	}
	return ""
}

// exposedToken returns the id (clipped for a log line) of the API token a hello gave as its
// secret, or "" when the secret is none. With an account store, only a token the store takes
// is one: a secret shaped like a token (tsa_<an id read in a listing>_x) is a wrong secret
// like any other, so an unauthenticated socket neither makes the gateway tell the operator to
// revoke a token that was never exposed nor learns from the answer whether the id exists
// (the answer names the id only to whoever holds the whole token). Without a store the shape
// is all there is to go on.
func (g *Gateway) exposedToken(ctx context.Context, secret string) string {
	kind, id, ok := account.Identify(secret)
	if !ok || kind != account.KindToken {
		return ""
	}
	if g.cfg.Accounts != nil {
		if _, err := g.cfg.Accounts.Authenticate(ctx, secret); err != nil {
			return ""
		}
	}
	return clip(id)
}

// MaxClientVersionBytes bounds a hello's clientVersion as the gateway keeps it (longer is cut,
// marked as cut): a version is a few bytes, and every listing of the computers and each
// replica's claim carries it, as long as the socket lives.
const MaxClientVersionBytes = 64

func (s *Session) handleResponse(f protocol.Frame) {
	if !s.isAuthenticated() {
		s.log().Debug("ignored computer_response before hello", "type", clip(f.Type))
		return
	}
	ch := s.pending.take(f.MessageID)
	if ch == nil {
		s.log().Debug("ignored computer_response: no pending request (late or unknown)", "type", clip(f.Type))
		return
	}
	ch <- result{resp: Response{OK: f.OK, Type: f.Type, Payload: f.Payload, Error: f.Error}}
}

// reply answers request f with a gateway_response: payload when err is nil, else err.
func (s *Session) reply(f protocol.Frame, payload json.RawMessage, err *protocol.Error) {
	s.answer(&f, payload, err, writeByWriter)
}

// answer is reply, with how the frame gets written when no writer runs (enqueueAs).
func (s *Session) answer(f *protocol.Frame, payload json.RawMessage, err *protocol.Error, how writeMode) {
	out := s.response(f, payload, err)
	buf := encodeBuffers.Get().(*[]byte)
	defer putEncodeBuffer(buf)
	frame, encErr := protocol.AppendFrame((*buf)[:0], out)
	*buf = frame
	if encErr != nil {
		if frame, encErr = s.encodeFailed(f, &out, encErr, (*buf)[:0]); encErr != nil {
			return
		}
		*buf = frame
	}
	if s.claimWriter(frame, how) {
		// Written from the pooled buffer at once, not copied into the queue; counted first,
		// as a queued frame is, so that whoever reads the answer finds it counted.
		s.gw.cfg.Metrics.frameOut(protocol.EventGatewayResponse, f.Type)
		s.writeClaimed(frame)
		return
	}
	if qErr := s.enqueueAs(bytes.Clone(frame), frameAnswer, how); qErr != nil {
		s.answerNotQueued(f, qErr)
		return
	}
	s.gw.cfg.Metrics.frameOut(protocol.EventGatewayResponse, f.Type)
}

// response is the gateway_response that answers request f: payload when err is nil, else err.
func (s *Session) response(f *protocol.Frame, payload json.RawMessage, err *protocol.Error) protocol.Frame {
	receiver := f.TraposSenderID
	if k := s.Key(); k.TraposID != "" {
		receiver = k.TraposID
	}
	if err != nil {
		err = errorForComputer(err)
	}
	out := protocol.Frame{
		Event:            protocol.EventGatewayResponse,
		TraposReceiverID: receiver,
		MessageID:        f.MessageID,
		RawMessageID:     f.RawMessageID,
		Type:             f.Type,
		OK:               err == nil,
		Payload:          payload,
		Error:            err,
	}
	if !utf8.Valid(out.RawMessageID) {
		// A text frame must be UTF-8: echo the decoded id (bad bytes became U+FFFD). CC never
		// sends one: it encodes every byte of a Lua string as a character.
		out.RawMessageID = nil
	}
	return out
}

// errorForComputer is err with its message as the computer shows it (textForComputer).
func errorForComputer(err *protocol.Error) *protocol.Error {
	msg := textForComputer(err.Message)
	if msg == err.Message {
		return err
	}
	shown := *err
	shown.Message = msg
	return &shown
}

// textForComputer is gateway text (an error message, a clipped type) as the computer shows
// it: the wire text of its CC bytes by the text rule (cctext.Wire; docs/protocol.md "Text and
// bytes"), as every other text the gateway writes to a computer. The gateway's messages are
// host text, and one with a character past U+00FF would otherwise reach the computer as raw
// UTF-8, which CC shows one character a byte (three for "…"). It is prose (cctext.Prose): the
// gateway's own ellipsis (its clip marker, cctext.Clip) becomes "...", a typographic quote or
// dash its plain twin; any other such character '?', as in CC. What a message quotes of the
// computer's own bytes (code points U+0000 to U+00FF) is unchanged.
func textForComputer(s string) string {
	w, _ := cctext.Wire("message", cctext.Prose(s))
	return w
}

// encodeFailed answers f with the short internal error instead of an answer out that could
// not be encoded (too big), encoded into dst; when even that does not fit (the messageId
// alone is too long to echo) it closes the socket and returns the error.
//
//go:noinline
func (s *Session) encodeFailed(f *protocol.Frame, out *protocol.Frame, encErr error, dst []byte) ([]byte, error) {
	s.gw.limits.warns.warn("cannot encode a reply", s.remoteAddr, "type", clip(f.Type), "err", clip(encErr.Error()))
	out.OK, out.Payload = false, nil
	out.Type = textForComputer(clip(f.Type))
	out.Error = errorForComputer(protocol.Errorf(protocol.CodeInternal, "the reply to %s could not be sent: it would exceed %d bytes",
		quoteClipped(f.Type), protocol.MaxFrameBytes))
	frame, err := protocol.AppendFrame(dst, *out)
	if err != nil {
		s.closeByGateway(websocket.CloseMessageTooBig, "messageId too long to echo")
	}
	return frame, err
}

// answerNotQueued handles an answer the send queue refused.
//
//go:noinline
func (s *Session) answerNotQueued(f *protocol.Frame, qErr error) {
	if errors.Is(qErr, errQueueFull) {
		// Answers to the computer's own requests pile up only if it does not read them (the
		// host's requests queued meanwhile do not count against them: sendQueue).
		s.gw.limits.warns.warn("send queue full, dropping the computer", s.remoteAddr, "traposId", clip(s.Key().TraposID),
			"queuedBytes", s.send.queued())
		s.closeByGateway(CloseTryAgainLater, "send queue full")
		return
	}
	s.log().Debug("reply dropped", "type", clip(f.Type), "err", qErr)
}

// encodeBuffers recycles the buffers answers and host requests are encoded into: a frame
// written at once (claimWriter) leaves its buffer free again; an answer that waits in the
// queue is copied, a request's frame is kept by the queue, its buffer not returned
// (Session.requestUntil).
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledEncodeBuffer keeps a rare big frame's buffer out of the pool.
const maxPooledEncodeBuffer = 4 << 10

func putEncodeBuffer(buf *[]byte) {
	if cap(*buf) <= maxPooledEncodeBuffer {
		*buf = (*buf)[:0]
		encodeBuffers.Put(buf)
	}
}

// knownTypes lists the computer_request types the gateway answers.
func (g *Gateway) knownTypes() []string {
	return slices.Sorted(func(yield func(string) bool) {
		if !yield(TypeHello) || !yield(TypeProve) || !yield(TypeBye) {
			return
		}
		for t := range maps.Keys(g.handlers) {
			if !yield(t) {
				return
			}
		}
	})
}

// The operator's line for a linked computer whose credential the account store lacks, and
// its fix. On a replica the likeliest cause is a single gateway's accounts.db not copied into
// NATS yet (replicas started before trap-sandbox accounts copy), which the copy fixes without
// a new link: the computer's sandbox reconnect (or a reboot) then gets in.
const (
	unknownCredentialMsg = " rejected: a computer credential the account store does not hold (made on another gateway or data directory, " +
		"after the backup it was restored from, or its account removed); the computer links again: sandbox link"
	unknownCredentialOnReplicaMsg = " rejected: a computer credential the account store (NATS) does not hold (made on a gateway without --nats " +
		"whose accounts.db was not copied into NATS: trap-sandbox accounts copy, then sandbox reconnect on the computer; or its account removed); " +
		"else the computer links again: sandbox link"
)

// unknownCredentialLine writes the operator's WARN of a step ("hello", "prove") of traposID
// refused for naming the credential selector, which the store lacks: once a minute per
// credential (warnEach), as each such computer retries.
func (s *Session) unknownCredentialLine(step, selector, traposID string) {
	msg := unknownCredentialMsg
	if s.gw.cfg.Replica != "" {
		msg = unknownCredentialOnReplicaMsg
	}
	s.gw.limits.warns.warnEach(step+msg, s.remoteAddr, selector, "traposId", clip(traposID), "credentialId", clip(selector))
}

// credentialSelector is the selector of a computer's secret shaped as a credential ("" for any
// other secret).
func credentialSelector(secret string) string {
	_, selector, _ := account.Identify(secret)
	return selector
}
