// Package link is the link module: a computer without a credential of its own gets one by a
// short code that its account holder approves on the host and its player accepts on the
// computer, or at once by an enrollment key (docs/accounts.md, "Linking a computer";
// docs/protocol.md has the wire). It answers link.begin, link.poll and link.accept (on a link
// session or a computer's normal one) and serves POST /trapos/link/approve and the enrollment
// key routes. The rules of codes and keys are the account package's; this module is their
// protocol and HTTP face, with the rate limits and metrics.
package link

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// Name is the module's name.
const Name = "link"

// Limits, each in docs/protocol.md.
const (
	// DefaultCodesPerAddress is the per-address bucket of link codes a minute (burst the same,
	// refilled evenly). All players of one Minecraft server reach the gateway from its one
	// address, so it is sized for them linking at a normal pace.
	DefaultCodesPerAddress = 30
	// DefaultCodesPerComputer is the bucket of link codes a minute of one computer of an
	// address (burst the same): a player who asks again after a code expired or was declined
	// is served, and a program on one computer that asks in a loop spends a sixth of its
	// server's budget, not all of it, so the server's other players still get codes.
	DefaultCodesPerComputer = 5
	// DefaultCodesGateway is the gateway-wide bucket of link codes a minute (burst the same).
	DefaultCodesGateway = 300
	// DefaultApprovalsPerCaller is the per-account bucket of approval attempts a minute (burst
	// the same): a mistyped code is retried, a 34-bit code is not guessed at that pace.
	DefaultApprovalsPerCaller = 10
	// MaxPollWait caps (and is the default of) link.poll's waitMs.
	MaxPollWait = 5 * time.Second
	// recheckEvery is how often a waiting poll looks at the store again: an approval made on
	// another replica is not announced here.
	recheckEvery = time.Second
	// pruneEvery is how often the module deletes long-expired codes (on link.begin).
	pruneEvery = time.Minute
)

// Gateway is what the module needs of the gateway: its handler table, the wrong-secret
// budget that a wrong enrollment key spends, and the connected computers (an approval must
// not let a code's socket replace one of the account's computers); *gateway.Gateway
// implements it.
type Gateway interface {
	Handle(typ string, h protocol.RequestHandler)
	WrongSecret(ctx context.Context, remoteAddr string) error
	Computers() []computer.Computer
	// ConnectedComputer returns computer traposID of accountID when its socket is held, on
	// this replica or another.
	ConnectedComputer(accountID, traposID string) (computer.Computer, bool)
}

// Config is the module's setup.
type Config struct {
	// Accounts is the account store; nil answers every link request link_disabled.
	Accounts *account.Accounts
	// Clock runs the limits, the poll waits and expiry (nil: the wall clock). It should be
	// the Accounts' clock.
	Clock clock.Clock
	// Metrics registers trapos_gateway_link_codes_total (nil: none).
	Metrics prometheus.Registerer
	// CodeLifetime is a link code's lifetime (0: account.LinkCodeTTL, 10 minutes).
	CodeLifetime time.Duration
	// CodesPerAddress, CodesPerComputer, CodesGateway and ApprovalsPerCaller are a minute's
	// budgets (0: the defaults).
	CodesPerAddress    int
	CodesPerComputer   int
	CodesGateway       int
	ApprovalsPerCaller int
	// Alone says this gateway has no replicas: every pending code in the store that is older
	// than the module was asked for on a socket of the gateway's earlier run, which its stop
	// closed. With replicas, another one may hold such a code's socket.
	Alone bool
	// Peers, with replicas, reaches the link modules of the other replicas (the cluster's
	// Peer; their handler is Relayed): an approval of a pending code that was not asked for
	// here asks them whether its socket is still open (socketElsewhere). Nil: none is asked.
	// OnReplica sets it.
	Peers Peers
}

// OnReplica makes p the module's link to the other replicas (Config.Peers), before the
// gateway serves.
func (m *Module) OnReplica(p Peers) *Module {
	m.cfg.Peers = p
	return m
}

// Peers is the module's link to its counterparts on the other replicas.
type Peers interface {
	// Others names the other live replicas.
	Others() []string
	// Send sends msg to the link module on replica and returns its answer, waiting at most
	// timeout. The computer (accountID, traposID) only routes it.
	Send(ctx context.Context, replica, accountID, traposID string, msg json.RawMessage, timeout time.Duration) (json.RawMessage, error)
}

// Module is the link module; create it with New, Register it on the gateway and mount it on
// the server.
type Module struct {
	cfg      Config
	log      *slog.Logger
	gw       Gateway
	codes    *limits // link codes: per computer, per address and gateway-wide
	approves *limits // approval attempts: per caller account
	outcomes *prometheus.CounterVec

	started time.Time  // when this run of the gateway started (Config.Alone)
	mu      sync.Mutex // guards waiters, owners, keyChecks and lastPrune
	waiters map[string][]chan struct{}
	owners  map[string]owner // a code's id → the socket that asked for it
	// keyChecks holds the sockets an enrollment key is being checked on (beginWithKey).
	keyChecks map[uint64]bool
	lastPrune time.Time
}

// owner is the socket a code was issued to, and until when the code lives. Only that socket
// may poll or accept the code: the code is on the computer's screen for anyone nearby to read,
// and the traposId the link session claimed is the computer's word (a link session needs no
// secret), so a bystander's client claiming the same id must not take the approval the
// account holder meant for the computer that shows the code. A link session is one socket on
// one replica for its whole life, so the binding lives here, not in the shared store.
//
// The code dies with its socket: gone is set when the socket closes (stop cancels that
// watch), so an approval of the code says that its computer is not connected instead of
// approving what nobody can accept.
//
// account is the account the socket said hello in ("" for a link session): a computer that
// asks for a code on its own socket is already the account's computer of its id.
//
// code is the code as NormalizeCode gives it; approved is set once a link.poll told the socket
// the code was approved (its player was shown the account): removing that account deletes
// the code, and the player's answer is told why instead of "unknown link code".
//
// looked, lookErr and lookedAt are what the store said of the code at its last look (look),
// and when; reading is closed when the read under way ends (nil: none is); changes counts the
// changes made here (changed), so a read that began before one is not kept as the last look.
type owner struct {
	socket   uint64
	account  string
	code     string
	expires  time.Time
	gone     bool
	approved bool
	stop     func() bool

	looked   account.LinkCode
	lookErr  error
	lookedAt time.Time
	reading  chan struct{}
	changes  uint64
}

// New returns the module.
func New(cfg Config, logger *slog.Logger) *Module {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	cfg.CodesPerAddress = cmpOr(cfg.CodesPerAddress, DefaultCodesPerAddress)
	cfg.CodesPerComputer = cmpOr(cfg.CodesPerComputer, DefaultCodesPerComputer)
	cfg.CodesGateway = cmpOr(cfg.CodesGateway, DefaultCodesGateway)
	cfg.ApprovalsPerCaller = cmpOr(cfg.ApprovalsPerCaller, DefaultApprovalsPerCaller)
	m := &Module{
		cfg:       cfg,
		log:       logger.With("module", Name),
		codes:     newLimits(cfg.CodesGateway, []string{overComputer, overAddress}, cfg.CodesPerComputer, cfg.CodesPerAddress),
		approves:  newLimits(0, []string{overAccount}, cfg.ApprovalsPerCaller),
		owners:    map[string]owner{},
		keyChecks: map[uint64]bool{},
		waiters:   map[string][]chan struct{}{},
		started:   cfg.Clock.Now(),
	}
	m.outcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trapos_gateway_link_codes_total",
		Help: "Link codes and enrollment-key links, by outcome (issued, approved, accepted, declined, expired, refused).",
	}, []string{"outcome"})
	for _, o := range []string{"issued", "approved", "accepted", "declined", "expired", "refused"} {
		m.outcomes.WithLabelValues(o) // every outcome shows from the start, at 0
	}
	if cfg.Metrics != nil {
		cfg.Metrics.MustRegister(m.outcomes)
	}
	return m
}

func cmpOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Name implements the server's Module interface.
func (m *Module) Name() string { return Name }

// Register adds link.begin, link.poll and link.accept to the gateway's handler table.
func (m *Module) Register(gw Gateway) {
	m.gw = gw
	gw.Handle(protocol.TypeLinkBegin, m.begin)
	gw.Handle(protocol.TypeLinkPoll, m.poll)
	gw.Handle(protocol.TypeLinkAccept, m.accept)
}

func (m *Module) count(outcome string) { m.outcomes.WithLabelValues(outcome).Inc() }

// disabled answers link.* on a gateway without an account store. The computer shows it after
// "The gateway cannot link computers (link_disabled): ", so it does not say that again.
var disabled = protocol.Errorf(protocol.CodeLinkDisabled,
	"this gateway keeps no accounts: its operator starts it with a data directory (--data-dir) or --nats")

// beginPayload is link.begin's request.
type beginPayload struct {
	Key string `json:"key"`
}

// CodeAnswer is link.begin's answer with a code.
type CodeAnswer struct {
	Code        string `json:"code"`
	ExpiresInMs int64  `json:"expiresInMs"`
	ApproveLine string `json:"approveLine"`
}

// LinkedAnswer is link.begin's answer with an enrollment key: the computer is linked.
type LinkedAnswer struct {
	State      account.LinkState `json:"state"`
	Account    string            `json:"account"`
	ApprovedBy string            `json:"approvedBy"`
	Credential string            `json:"credential"`
}

// ApproveLine is the host command that approves code, as the computer shows it.
func ApproveLine(code string) string { return "trap-sandbox link approve " + account.FormatCode(code) }

func (m *Module) begin(ctx context.Context, from protocol.Requester, raw json.RawMessage) (json.RawMessage, error) {
	if m.cfg.Accounts == nil {
		return nil, disabled
	}
	var p beginPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, protocol.Errorf(protocol.CodeBadPayload, "link.begin takes {} or {key: \"tsk_...\"}")
	}
	if p.Key != "" {
		return m.beginWithKey(ctx, from, p.Key)
	}
	now := m.cfg.Clock.Now()
	address := server.AddressKey(from.RemoteAddr)
	wait, over := m.codes.take(now, computerKey(address, from), address)
	connected, isConnected := m.connectedFor(now, address, from)
	if over == overAddress && isConnected && connected >= ownCodesAfter {
		wait, over = m.codes.take(now, computerKey(address, from), "") // its own bucket, not the address's
	}
	if over != "" {
		m.count("refused")
		if over != overAddress {
			return nil, protocol.Errorf(protocol.CodeBusy, "too many link codes from %s; try again in %d s", over, seconds(wait))
		}
		// The player who waits is often not the one who asked (a program on the server may
		// take each code as it comes back): say so, and when this computer's own codes start.
		own := "a computer whose daemon has been connected to the gateway a minute has codes of its own; " +
			"or link this one with an enrollment key from the account's holder (sandbox link KEY)"
		if isConnected {
			own = fmt.Sprintf("this computer has codes of its own once its daemon has been connected a minute, in %d s",
				seconds(ownCodesAfter-connected))
		}
		return nil, protocol.Errorf(protocol.CodeBusy, "too many link codes from %s, which every computer of a Minecraft server shares; try again in %d s; %s",
			over, seconds(wait), own)
	}
	m.prune(ctx, now)
	code, c, err := m.cfg.Accounts.BeginLink(ctx, from.TraposID, from.RemoteAddr, m.cfg.CodeLifetime)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	o := owner{socket: from.Socket, account: from.AccountID, code: code, expires: c.ExpiresAt}
	// ctx is the socket's: it ends when the socket closes (the func runs in a goroutine of
	// its own, so registering it under mu is safe).
	o.stop = context.AfterFunc(ctx, func() { m.socketClosed(c.ID, from.Socket) })
	m.owners[c.ID] = o
	m.mu.Unlock()
	m.count("issued")
	m.log.Info("link code issued", "traposId", from.TraposID, "remote", from.RemoteAddr)
	// The store dated the code by its own clock, a moment after now: the code has its lifetime
	// left, not a few ms more (which sandbox link would round up to a second more).
	left := min(c.ExpiresAt.Sub(now), c.ExpiresAt.Sub(c.Created))
	return json.Marshal(CodeAnswer{Code: account.FormatCode(code), ExpiresInMs: left.Milliseconds(), ApproveLine: ApproveLine(code)})
}

// ownCodesAfter is how long a computer's socket on the shared password must have stayed open
// for its link sessions to get codes past its address's budget (connectedFor), as its
// log lines do (the gateway's ownBudgetAfter).
const ownCodesAfter = time.Minute

// connectedFor reports how long the computer a link session from claims has been connected
// (to this replica, or by its claim to another) on the shared password (the local account:
// with no password, every computer's) under that traposId, from the session's address; false
// when it is not. Connected ownCodesAfter, it spends its own bucket of codes past the
// address's: a link session needs no secret, so one program on a Minecraft server claiming
// ever new computer ids spends the codes of the address every computer of the server shares,
// and the players' sandbox link was refused for as long as it ran. The player's computer's
// daemon has been connected a while; a loop making ids up is not connected, and a computer
// holds 4 sockets at once (CC: Tweaked's default), so each id a program keeps connected to
// earn this costs it one of them a minute, and it shows in trap-sandbox computers. An
// address's codes a minute are then at most its budget and each such computer's own, and
// every address's together the gateway's. A computer that has not stayed a minute (just
// booted, or reconnected) has no such standing: it would be one more id the program could
// make up (docs/accounts.md).
func (m *Module) connectedFor(now time.Time, address string, from protocol.Requester) (time.Duration, bool) {
	if from.AccountID != "" && from.AccountID != account.Local {
		return 0, false // a linked computer's socket: it needs no code
	}
	pc, ok := m.gw.ConnectedComputer(account.Local, from.TraposID)
	if !ok || server.AddressKey(pc.RemoteAddr) != address {
		return 0, false
	}
	return now.Sub(pc.ConnectedSince), true
}

// takeSharedApproval spends one of accountID's approval attempts in the budget the replicas
// share (account.SharedBudgets: the NATS bucket of the accounts) and returns 0, or how long
// until the account has one. The replica's own budget (approves) is taken first, and is all
// there is on a single gateway: without the shared one, a balancer spreading an account's
// approvals over N replicas gave it N × ApprovalsPerCaller tries a minute at guessing a code.
// A budget that cannot be read refuses nothing (the replica's own still holds): the approval
// reads and writes the same bucket next, and fails there if it is gone.
func (m *Module) takeSharedApproval(ctx context.Context, accountID string, now time.Time) time.Duration {
	shared, ok := m.cfg.Accounts.Store().(account.SharedBudgets)
	if !ok {
		return 0
	}
	wait, err := shared.TakeShared(ctx, sharedApprovalBudget+accountID, m.cfg.ApprovalsPerCaller, now)
	if err != nil {
		m.log.Warn("cannot take the account's link approval from the budget the replicas share: this replica's own budget applies alone",
			"accountId", accountID, "err", err)
		return 0
	}
	return wait
}

// sharedApprovalBudget prefixes an account's name to name its approval budget in the shared
// store.
const sharedApprovalBudget = "link approvals of "

// computerKey is the computer's bucket of link codes at its address: its computer id (a label
// is changed at will; a link's credential is bound to the id) within its address (every
// Minecraft server has a computer 7) and the account its socket said hello in ("" for a link
// session, "local" for the shared password). A link session's computer id is its own claim,
// so a program that claims another computer's id spends that id's bucket, but never a
// linked computer's, whose socket's account is its credential's.
func computerKey(address string, from protocol.Requester) string {
	return address + " " + from.AccountID + " " + account.ComputerID(from.TraposID)
}

// errKeyBeingChecked refuses a socket's second enrollment key while its first is checked.
var errKeyBeingChecked = protocol.Errorf(protocol.CodeBusy,
	"an enrollment key is being checked on this connection already: wait for its answer")

func (m *Module) beginWithKey(ctx context.Context, from protocol.Requester, key string) (json.RawMessage, error) {
	// One key at a time on a socket: a wrong key's answer is held back past its address's
	// budget, but it is read from the account store first, and a link session (no secret) may
	// send 16 requests at once: 16 reads for every socket opened, where a hello costs one.
	m.mu.Lock()
	if m.keyChecks[from.Socket] {
		m.mu.Unlock()
		return nil, errKeyBeingChecked
	}
	m.keyChecks[from.Socket] = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.keyChecks, from.Socket)
		m.mu.Unlock()
	}()
	cred, k, err := m.cfg.Accounts.LinkWithKeyUnless(ctx, key, from.TraposID, m.keyTakesPlace(from))
	if errors.Is(err, account.ErrBadSecret) {
		m.count("refused")
		if err := m.gw.WrongSecret(ctx, from.RemoteAddr); err != nil {
			return nil, err
		}
		// The player's fix: trap-sandbox link keys, which shows the key, is the admin's.
		return nil, protocol.Errorf(protocol.CodeLinkInvalid, "unknown or wrong enrollment key: copy it whole, or ask whoever gave it to you for it again")
	}
	if held := (*account.HeldIDError)(nil); errors.As(err, &held) {
		// Another link session claiming this computer id got its credential first.
		return nil, m.wouldReplace(from, held.Held.AccountID, idHeld{credential: &held.Held}, "enrollment key")
	}
	if err != nil {
		return nil, m.keyRefusal(err)
	}
	m.count("accepted")
	m.log.Info("computer linked by enrollment key", "traposId", from.TraposID, "accountId", k.AccountID, "key", k.Selector,
		"credentialId", credentialID(cred))
	return json.Marshal(LinkedAnswer{State: account.LinkApproved, Account: k.AccountID, ApprovedBy: k.CreatedBy + " (key " + k.Selector + ")", Credential: cred})
}

// prune deletes long-expired codes at most once a pruneEvery.
func (m *Module) prune(ctx context.Context, now time.Time) {
	m.mu.Lock()
	due := now.Sub(m.lastPrune) >= pruneEvery
	if due {
		m.lastPrune = now
		for id, o := range m.owners {
			if now.After(o.expires) {
				o.stop()
				delete(m.owners, id)
			}
		}
	}
	m.mu.Unlock()
	if !due {
		return
	}
	if _, err := m.cfg.Accounts.PruneLinkCodes(ctx); err != nil {
		m.log.Warn("cannot delete expired link codes", "err", err)
	}
}

// pollPayload is link.poll's request.
type pollPayload struct {
	Code   string `json:"code"`
	WaitMs *int64 `json:"waitMs"`
}

// PollAnswer is link.poll's answer.
type PollAnswer struct {
	State      account.LinkState `json:"state"`
	Account    string            `json:"account,omitempty"`
	ApprovedBy string            `json:"approvedBy,omitempty"`
}

func (m *Module) poll(ctx context.Context, from protocol.Requester, raw json.RawMessage) (json.RawMessage, error) {
	if m.cfg.Accounts == nil {
		return nil, disabled
	}
	var p pollPayload
	if err := json.Unmarshal(raw, &p); err != nil || p.Code == "" {
		return nil, protocol.Errorf(protocol.CodeBadPayload, "link.poll takes {code: \"XXXX-XXXX\", waitMs?: 0..%d}", MaxPollWait.Milliseconds())
	}
	wait := MaxPollWait
	if p.WaitMs != nil {
		if *p.WaitMs < 0 {
			return nil, protocol.Errorf(protocol.CodeBadPayload, "link.poll's waitMs must be 0 or more, got %d", *p.WaitMs)
		}
		wait = min(time.Duration(*p.WaitMs)*time.Millisecond, MaxPollWait)
	}
	deadline := m.cfg.Clock.NewTimer(wait)
	defer deadline.Stop()
	for {
		// Listen before looking, so an approval between the look and the wait is not missed.
		c, err := m.look(ctx, from, p.Code)
		if err != nil {
			return nil, m.refusal(err)
		}
		wake, stop := m.listen(c.ID)
		c, err = m.look(ctx, from, p.Code)
		if err != nil {
			stop()
			return nil, m.refusal(err)
		}
		switch st := c.StateAt(m.cfg.Clock.Now()); st {
		case account.LinkApproved:
			stop()
			m.sawApproval(c.ID, from.Socket)
			return json.Marshal(PollAnswer{State: st, Account: c.AccountID, ApprovedBy: c.ApprovedBy})
		case account.LinkExpired:
			stop()
			m.count("expired")
			return json.Marshal(PollAnswer{State: st})
		case account.LinkAccepted, account.LinkDeclined:
			stop()
			return nil, m.refusal(map[account.LinkState]error{account.LinkAccepted: account.ErrCodeUsed, account.LinkDeclined: account.ErrCodeDeclined}[st])
		}
		recheck := m.cfg.Clock.NewTimer(recheckEvery)
		select {
		case <-wake:
		case <-recheck.C():
		case <-deadline.C():
			recheck.Stop()
			stop()
			return json.Marshal(PollAnswer{State: account.LinkPending})
		case <-ctx.Done():
			recheck.Stop()
			stop()
			return nil, ctx.Err()
		}
		recheck.Stop()
		stop()
	}
}

// listen returns a channel closed when the code id changes here, and how to stop listening.
func (m *Module) listen(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	m.mu.Lock()
	m.waiters[id] = append(m.waiters[id], ch)
	m.mu.Unlock()
	return ch, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		list := m.waiters[id]
		for i, c := range list {
			if c == ch {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(m.waiters, id)
		} else {
			m.waiters[id] = list
		}
	}
}

// changed wakes the polls waiting on the code id, and has the next look read it again.
func (m *Module) changed(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.owners[id]; ok {
		o.lookedAt = time.Time{}
		o.changes++
		m.owners[id] = o
	}
	for _, ch := range m.waiters[id] {
		close(ch)
	}
	delete(m.waiters, id)
}

// acceptPayload is link.accept's request.
type acceptPayload struct {
	Code   string `json:"code"`
	Accept *bool  `json:"accept"`
}

// AcceptAnswer is link.accept's answer when the player accepted.
type AcceptAnswer struct {
	Account    string `json:"account"`
	Credential string `json:"credential"`
}

func (m *Module) accept(ctx context.Context, from protocol.Requester, raw json.RawMessage) (json.RawMessage, error) {
	if m.cfg.Accounts == nil {
		return nil, disabled
	}
	var p acceptPayload
	if err := json.Unmarshal(raw, &p); err != nil || p.Code == "" || p.Accept == nil {
		return nil, protocol.Errorf(protocol.CodeBadPayload, "link.accept takes {code: \"XXXX-XXXX\", accept: true|false}")
	}
	// An accept that cannot succeed is answered from the code's last look (the store is read
	// for it at most once a recheckEvery, however many are sent); only one that may succeed
	// goes to the store, once.
	looked, err := m.look(ctx, from, p.Code)
	if err == nil {
		err = looked.Acceptable(*p.Accept, m.cfg.Clock.Now())
	}
	if err != nil {
		return nil, m.acceptRefusal(from, p.Code, err)
	}
	acceptLink := m.cfg.Accounts.AcceptLinkExclusive
	if looked.AccountID == from.AccountID {
		// The socket said hello in the approving account: it is that account's computer of
		// its id already (takesPlace let its code through for that).
		acceptLink = m.cfg.Accounts.AcceptLink
	}
	cred, c, err := acceptLink(ctx, p.Code, from.TraposID, *p.Accept)
	if held := (*account.HeldIDError)(nil); errors.As(err, &held) {
		// A computer of this id was linked into the account between the approval and now.
		m.changed(c.ID)
		return nil, m.wouldReplace(from, held.Held.AccountID, idHeld{credential: &held.Held}, "link code")
	}
	if errors.Is(err, account.ErrApprovalRevoked) {
		// For the operator, who revoked the token (it leaked?): which of its approvals died.
		m.log.Warn("link refused: the API token that approved its code was revoked since", "traposId", from.TraposID,
			"accountId", looked.AccountID, "approvedBy", looked.ApprovedBy, "byToken", looked.ApprovedToken)
	}
	if err != nil {
		return nil, m.acceptRefusal(from, p.Code, err)
	}
	m.changed(c.ID)
	if !*p.Accept {
		m.count("declined")
		m.log.Info("link declined on the computer", "traposId", from.TraposID, "accountId", c.AccountID, "approvedBy", c.ApprovedBy)
		return json.RawMessage(`{}`), nil
	}
	m.count("accepted")
	m.log.Info("computer linked", "traposId", from.TraposID, "accountId", c.AccountID, "approvedBy", c.ApprovedBy,
		"credentialId", credentialID(cred))
	return json.Marshal(AcceptAnswer{Account: c.AccountID, Credential: cred})
}

// sawApproval notes that link.poll told socket the code id was approved.
func (m *Module) sawApproval(id string, socket uint64) {
	m.changeOwner(id, socket, func(o *owner) { o.approved = true })
}

// changeOwner applies change to the owner of the code id, when socket is the one that asked
// for it.
func (m *Module) changeOwner(id string, socket uint64, change func(*owner)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.owners[id]; ok && o.socket == socket {
		change(&o)
		m.owners[id] = o
	}
}

// errApproverGone refuses the answer to a code its socket saw approved, whose account was
// removed since (the removal deleted the code; an account made again under the name is not
// the one the player was shown).
var errApproverGone = protocol.Errorf(protocol.CodeLinkInvalid,
	"the account that approved the link code is gone (removed since); run sandbox link again for a new code")

// acceptRefusal words a refused link.accept as refusal does, but a code unknown now that
// this socket was told was approved is one whose account was removed: the player, who saw
// the account's name in the question, is told so. Another socket's code stays unknown.
func (m *Module) acceptRefusal(from protocol.Requester, code string, err error) error {
	if errors.Is(err, account.ErrCodeUnknown) {
		if id, nerr := account.LinkCodeID(code); nerr == nil {
			m.mu.Lock()
			o, ok := m.owners[id]
			seen := ok && o.socket == from.Socket && o.approved
			m.mu.Unlock()
			if seen {
				m.count("refused")
				return errApproverGone
			}
		}
	}
	return m.refusal(err)
}

// credentialID is the id of the credential plain (its selector, as the account API's audit
// lines name one), for a log line that must never hold plain itself.
func credentialID(plain string) string {
	_, selector, _ := account.Identify(plain)
	return selector
}

// refusal words a refused code as link_invalid (counted as refused); any other error is the
// store's and is passed on (internal).
func (m *Module) refusal(err error) error {
	return m.refuse(err, "; run sandbox link again for a new code")
}

// keyRefusal words a refused enrollment key (revoked, expired, used up) as refusal does a
// code.
func (m *Module) keyRefusal(err error) error {
	return m.refuse(err, "; ask the key's account holder for a new key (trap-sandbox link key)")
}

// refuse words err as link_invalid, a refused key or an expired code followed by again (what
// to do instead).
func (m *Module) refuse(err error, again string) error {
	msg := ""
	switch {
	case errors.Is(err, account.ErrCodeUnknown):
		msg = "unknown link code (check it, or run sandbox link again for a new one)"
	case errors.Is(err, account.ErrCodeApproved):
		msg = "the link code was approved already: its computer asks its player whether to join the account that approved it " +
			"(if the question there names an account that is not yours, the player answers n and runs sandbox link again)"
	case errors.Is(err, account.ErrCodeUsed):
		msg = "the link code was already used; run sandbox link again for a new one"
	case errors.Is(err, account.ErrCodeDeclined):
		msg = "the link code was declined on the computer; run sandbox link again for a new one"
	case errors.Is(err, account.ErrApprovalRevoked):
		msg = err.Error() + "; run sandbox link again for a new code, and have it approved again with a token that is not revoked"
	case errors.Is(err, account.ErrCodeNotApproved):
		msg = "the link code is not approved yet: wait until link.poll answers approved"
	case errors.Is(err, account.ErrExpired), errors.Is(err, account.ErrRevoked), errors.Is(err, account.ErrUsedUp):
		msg = err.Error() + again
	default:
		return err
	}
	m.count("refused")
	return protocol.Errorf(protocol.CodeLinkInvalid, "%s", msg)
}

// socketClosed notes that the socket that asked for the code id closed.
func (m *Module) socketClosed(id string, socket uint64) {
	m.changeOwner(id, socket, func(o *owner) { o.gone = true })
}

// goneComputer returns the traposId of a code's computer, the code pending or approved and not
// yet answered, when its socket closed on this gateway, or on its earlier run (restarted; only
// a gateway without replicas knows that), or, with replicas, when no other replica holds it
// open (socketElsewhere). It returns "" otherwise: connected, used, unknown, or open on
// another replica, whose computer hears the approval there. An approved code's computer that
// left while its player was asked (it rebooted) answers nothing any more, as one that left
// before the approval.
func (m *Module) goneComputer(ctx context.Context, code string) (traposID string, restarted bool) {
	c, err := m.cfg.Accounts.LinkStatus(ctx, code, "")
	if err != nil {
		return "", false
	}
	if st := c.StateAt(m.cfg.Clock.Now()); st != account.LinkPending && st != account.LinkApproved {
		return "", false
	}
	m.mu.Lock()
	o, ok := m.owners[c.ID]
	m.mu.Unlock()
	switch {
	case ok && o.gone:
		return c.TraposID, false
	case ok:
		return "", false
	case m.cfg.Alone && c.Created.Before(m.started):
		return c.TraposID, true
	case m.cfg.Peers != nil && !m.socketElsewhere(ctx, c):
		return c.TraposID, false
	}
	return "", false
}

// Socket states a replica answers for a code (Relayed's answer).
const (
	socketOpen    = "open"    // its socket is open here
	socketClosed  = "closed"  // its socket was here, and closed
	socketUnknown = "unknown" // not asked for here (or on this replica's earlier run)
)

// peerTimeout bounds the wait for each other replica's answer in socketElsewhere.
const peerTimeout = 2 * time.Second

// relayMsg is what the module asks its counterpart on another replica, and the answer.
type relayMsg struct {
	Code   string `json:"code,omitempty"`   // the code's ID
	Socket string `json:"socket,omitempty"` // the answer: socketOpen, socketClosed, socketUnknown
}

// socketElsewhere asks every other live replica about pending code c, not asked for on this
// one: false when none holds its socket open (one says it closed, or none knows it: the
// replica it was asked for on has stopped or restarted since, which closed it), as a single
// gateway knows of its own sockets. Whenever a replica cannot tell (an older trap-sandbox, no
// answer in time), it is true: the code is approved as before.
func (m *Module) socketElsewhere(ctx context.Context, c account.LinkCode) bool {
	others := m.cfg.Peers.Others()
	answers := make([]string, len(others))
	var wg sync.WaitGroup
	for i, replica := range others {
		wg.Go(func() {
			msg, _ := json.Marshal(relayMsg{Code: c.ID})
			raw, err := m.cfg.Peers.Send(ctx, replica, Name, c.TraposID, msg, peerTimeout)
			var ans relayMsg
			if err == nil && json.Unmarshal(raw, &ans) == nil {
				answers[i] = ans.Socket
			}
		})
	}
	wg.Wait()
	for _, a := range answers {
		if a != socketClosed && a != socketUnknown {
			return true // open there, or no word that says otherwise
		}
	}
	return false
}

// Relayed answers the link module of replica from (the cluster's handler of the module's
// messages): whether the socket of a code is open here.
func (m *Module) Relayed(_ context.Context, from, _, _ string, payload json.RawMessage) (json.RawMessage, error) {
	var msg relayMsg
	if err := json.Unmarshal(payload, &msg); err != nil || msg.Code == "" {
		return nil, protocol.Errorf(protocol.CodeBadPayload, "a link message from replica %s names no code", from)
	}
	m.mu.Lock()
	o, ok := m.owners[msg.Code]
	m.mu.Unlock()
	state := socketUnknown
	switch {
	case ok && o.gone:
		state = socketClosed
	case ok:
		state = socketOpen
	}
	return json.Marshal(relayMsg{Socket: state})
}

// takesPlace returns why approving the pending code into account into is refused (nil when
// it is not): into holds the code's computer id already (heldID). The traposId a link session
// claims is its own word (it needs no secret), and a linked credential is bound to the computer
// id only, so whoever holds the code could say hello as that computer of into and take its
// place (newest wins in an account, and a replaced computer stops reconnecting), whether it is
// connected now or comes back later. A code asked for on a socket that said hello in into is
// exempt: that socket is into's computer of that id already.
func (m *Module) takesPlace(ctx context.Context, code, into string) (*protocol.Error, error) {
	c, err := m.cfg.Accounts.LinkStatus(ctx, code, "")
	if err != nil || c.StateAt(m.cfg.Clock.Now()) != account.LinkPending {
		return nil, nil // ApproveLink says what is wrong with the code
	}
	m.mu.Lock()
	o, ok := m.owners[c.ID]
	m.mu.Unlock()
	if ok && o.account == into {
		return nil, nil
	}
	id := account.ComputerID(c.TraposID)
	held, err := m.heldID(ctx, into, id)
	if err != nil || held.nothing() {
		return nil, err
	}
	// other is the fix for another computer with the same id, last in every refusal.
	other := fmt.Sprintf("for another computer with id %s (on another Minecraft server), issue it a credential by hand (trap-sandbox credentials add %s)", id, into)
	if pc := held.connected; pc != nil {
		return protocol.Errorf(protocol.CodeForbidden,
			"account %s has computer %s connected already (from %s); this code comes from another connection claiming computer %s, whose credential could take its place. "+
				"Approve only a code shown by a computer that is not linked yet: to link %s anew, revoke its credential first (trap-sandbox computers revoke %s); %s",
			into, pc.TraposID, host(pc.RemoteAddr), id, pc.TraposID, pc.TraposID, other), nil
	}
	cred := held.credential
	last := ""
	if cred.LastTraposID != "" {
		last = ", last hello as " + cred.LastTraposID
	}
	return protocol.Errorf(protocol.CodeForbidden,
		"account %s holds a credential for computer %s already (%s%s); this code comes from another connection claiming computer %s, whose credential could take that computer's place. "+
			"Approve only a code shown by a computer that is not linked yet: if computer %s lost its credential, revoke it first (trap-sandbox credentials revoke %s); %s",
		into, id, cred.Selector, last, id, id, cred.Selector, other), nil
}

// keyTakesPlace is LinkWithKeyUnless's guard for an enrollment key of account into used by
// the computer from: refused (forbidden) when into holds its computer id already (heldID), as
// a code's approval is (takesPlace). A key links computers into its account; it must not take
// the place of one the account has: the traposId a link session claims is its own word, so
// whoever has the key (typed on a turtle in front of other players, or a reusable one handed to
// a helper) could claim computer 7 and say hello as the account's 7:kitchen with the credential,
// knocking it off (newest wins in an account, and a replaced computer stops reconnecting) and
// answering the host's requests in its place. The link it lets through is exclusive: two link
// sessions claiming computer 7 at once both find it free here, and the store then issues one
// of them its credential and refuses the other (wouldReplace words both refusals).
func (m *Module) keyTakesPlace(from protocol.Requester) account.LinkGuard {
	return func(ctx context.Context, into string) (bool, error) {
		if from.AccountID == into {
			return false, nil // the socket said hello in into: it is into's computer of that id already
		}
		held, err := m.heldID(ctx, into, account.ComputerID(from.TraposID))
		if err != nil {
			return false, err
		}
		if !held.nothing() {
			return false, m.wouldReplace(from, into, held, "enrollment key")
		}
		return true, nil
	}
}

// wouldReplace is the refusal of a link into account into, by an enrollment key (what) used
// by the computer from, or by the accept of a code approved into it ("link code"), whose
// computer id into holds already (held). Its reader is the key holder, who is
// often the account's holder but may be whoever read the key off a screen as it was typed or
// was handed it: it says what to do and tells of the account's computers only what the
// refusal itself does, that into has a computer of the id from claimed, the same words
// whether it is connected or off. Not its label, its address, that it is connected or its
// credential's id (the account holder finds it with credentials list); the operator's WARN
// names it (held). The player reads it on the computer, one line of at most 256 bytes
// (sandbox link's).
func (m *Module) wouldReplace(from protocol.Requester, into string, held idHeld, what string) error {
	m.count("refused")
	which := ""
	if pc := held.connected; pc != nil {
		which = pc.TraposID
	} else {
		which = held.credential.Selector
	}
	m.log.Warn(what+" refused: its credential could take the place of a computer of the account",
		"traposId", from.TraposID, "accountId", into, "remote", from.RemoteAddr, "held", which)
	id := account.ComputerID(from.TraposID)
	return protocol.Errorf(protocol.CodeForbidden,
		"account %s has a computer %s already, which this one would replace: ask its holder to revoke that one's credential first (trap-sandbox credentials list), "+
			"or, for another computer %s, to add one by hand (trap-sandbox credentials add %s)", into, id, id, into)
}

// idHeld is what an account holds of one computer id: a computer of that id connected (on any
// replica), else a credential that is not revoked and is bound to that id or, made by hand (bound
// to none), said its last hello as that id; neither is nothing. A hand credential holds the id
// it was last used as: a credential linked for that id, said as its traposId, would knock that
// computer off when it came back (newest wins in an account), and it the linked one, each
// stopping the other. One never used holds none.
type idHeld struct {
	connected  *computer.Computer
	credential *account.Credential
}

func (h idHeld) nothing() bool { return h.connected == nil && h.credential == nil }

// heldID is what account into holds of computer id id (idHeld).
func (m *Module) heldID(ctx context.Context, into, id string) (idHeld, error) {
	for _, pc := range m.gw.Computers() {
		if pc.AccountID == into && account.ComputerID(pc.TraposID) == id {
			return idHeld{connected: &pc}, nil
		}
	}
	creds, err := m.cfg.Accounts.Store().Credentials(ctx, into)
	if err != nil {
		return idHeld{}, err
	}
	for _, cred := range creds {
		if !cred.RevokedAt.IsZero() {
			continue
		}
		if cred.ComputerID == id || (cred.ComputerID == "" && cred.LastTraposID != "" && account.ComputerID(cred.LastTraposID) == id) {
			return idHeld{credential: &cred}, nil
		}
	}
	return idHeld{}, nil
}

// owns returns the stored id of code when the asking socket is the one it was given to, else
// the answer to an unknown code (another socket's, a made-up one, or none: one that does not
// exist answers the same). It asks only the module's own memory: a link session needs no
// secret and may send a poll or an accept as fast as it likes, 16 at a time, so a code it was
// not given must not cost a read of the account store (SQLite, or a round trip to NATS), which
// every computer's hello and API token needs.
func (m *Module) owns(from protocol.Requester, code string) (string, error) {
	id, err := account.LinkCodeID(code)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	o, ok := m.owners[id]
	m.mu.Unlock()
	if !ok || o.socket != from.Socket {
		return "", account.ErrCodeUnknown
	}
	return id, nil
}

// look returns the asking socket's code (LinkStatus: by its code and computer) as the store
// said it at most recheckEvery ago, unless it changed here since (changed): however many polls
// and accepts its socket sends, and however fast or many at once (one read at a time: the
// others wait for it), a code costs the store one read a recheckEvery. What changes a code
// elsewhere (an approval on another replica, its account's removal) is seen within that, as a
// waiting poll's recheck sees it.
func (m *Module) look(ctx context.Context, from protocol.Requester, code string) (account.LinkCode, error) {
	id, err := m.owns(from, code)
	if err != nil {
		return account.LinkCode{}, err
	}
	for {
		now := m.cfg.Clock.Now()
		m.mu.Lock()
		o, ok := m.owners[id]
		switch {
		case !ok || o.socket != from.Socket:
			m.mu.Unlock()
			return account.LinkCode{}, account.ErrCodeUnknown // gone meanwhile
		case !o.lookedAt.IsZero() && now.Sub(o.lookedAt) < recheckEvery:
			m.mu.Unlock()
			return o.looked, o.lookErr
		case o.reading != nil:
			reading := o.reading
			m.mu.Unlock()
			select {
			case <-reading: // its look, if it is kept; else a read of our own
			case <-ctx.Done():
				return account.LinkCode{}, ctx.Err()
			}
			continue
		}
		reading, changes := make(chan struct{}), o.changes
		o.reading = reading
		m.owners[id] = o
		m.mu.Unlock()
		c, err := m.cfg.Accounts.LinkStatus(ctx, code, from.TraposID)
		m.mu.Lock()
		if o, ok := m.owners[id]; ok && o.reading == reading {
			o.reading = nil
			// Kept unless cut short, or a change here came during the read (what it read may
			// be from before: a poll listening since would take it and miss the change).
			if ctx.Err() == nil && o.changes == changes {
				o.looked, o.lookErr, o.lookedAt = c, err, now
			}
			m.owners[id] = o
		}
		close(reading)
		m.mu.Unlock()
		return c, err
	}
}

func seconds(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) }
