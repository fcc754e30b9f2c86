package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	hostcomputer "trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// LocalAccount is the account of the shared password: SANDBOX_PASSWORD (or any secret when
// none is set) resolves to it, as before accounts existed.
const LocalAccount = account.Local

// resolveAccount maps a hello secret to the account that owns the computer: a computer's
// own credential (tsc_…, when the gateway has accounts) to its account, the shared password
// to LocalAccount. It fails with account.ErrBadSecret or account.ErrRevoked. A credential
// is checked even when no password is set: it names an account, so a wrong one is refused.
// The credential's selector is returned too ("" for the password), so that revoking it
// finds the socket, and the account's creation stamp (zero for the password), which tells a
// removed account's computers from those of an account made later under the same name. The
// password itself is the password whatever it starts with: a SANDBOX_PASSWORD that happens
// to begin with tsc_ is not taken for a credential. kind says how the credential was made
// (hello's credentialKind: CredentialLinked or CredentialIssued), "" for the password.
func (g *Gateway) resolveAccount(ctx context.Context, secret, traposID, remoteAddr string) (accountID, credential string, created time.Time, kind string, err error) {
	if g.cfg.Password != "" && server.SecretMatches(secret, g.cfg.Password) {
		return LocalAccount, "", time.Time{}, "", nil
	}
	if g.cfg.Accounts != nil && strings.HasPrefix(secret, string(account.KindCredential)+"_") {
		c, err := g.cfg.Accounts.AuthenticateComputer(ctx, secret, traposID, remoteAddr)
		if errors.Is(err, account.ErrNotRecorded) {
			// Only the last-hello bookkeeping failed: a full data directory must not lock
			// out every linked computer.
			g.limits.warns.warn("hello admitted, but the account store could not record it (its time and address; err says why)",
				remoteAddr, "traposId", clip(traposID), "err", err)
		} else if err != nil {
			return "", "", time.Time{}, "", err
		}
		kind = CredentialIssued
		if c.ComputerID != "" {
			kind = CredentialLinked
		}
		return c.AccountID, c.Selector, c.AccountCreated, kind, nil
	}
	if g.cfg.Password != "" {
		return "", "", time.Time{}, "", account.ErrBadSecret
	}
	return LocalAccount, "", time.Time{}, "", nil // no password: any secret is the shared one
}

// How a computer's own credential was made, as hello's answer says (credentialKind): by
// sandbox link (or an enrollment key), bound to the computer's id, or issued by hand
// (trap-sandbox credentials add) and set as its sandbox.password, good for any id.
const (
	CredentialLinked = "linked"
	CredentialIssued = "issued"
)

// Key identifies a computer: traposId ("<computerId>:<label>") is only unique inside an account.
type Key struct {
	AccountID string
	TraposID  string
}

// Cluster is the other replicas, as one replica's gateway sees them when several share their
// computers (docs/scale-out.md); the cluster package's NATS router implements it. The seam is
// narrow on purpose: the gateway keeps the sessions of its own sockets in its registry and
// never hands one over; it tells the cluster which computers it holds (Claim, Release), asks
// it for the others (Route, Remote), and answers through Local what the cluster asks of this
// replica. Implementations are safe for concurrent use, and call Local without holding a lock
// of their own: Local.Evict closes a session, which Releases its claim.
type Cluster interface {
	// Attach gives the cluster this replica's side; New calls it once, before any socket.
	Attach(local Local)
	// Claim announces that this replica holds the socket of c (said hello with credential,
	// "" for the shared password) as hold, a number unique in this process and higher for a
	// later socket (a Claim of a lower hold than the computer's current one here changes
	// nothing): newest wins across replicas, so a later claim elsewhere makes the cluster call
	// Local.Evict(key, hold). It returns once the claim is written, or NATS gave up (a hello
	// waits for it).
	Claim(c Computer, credential string, hold uint64)
	// Release withdraws hold's claim on k (its socket closed), unless a later one replaced it.
	// It may come twice for one hold, and before that hold's Claim returned: a socket that
	// closed while its claim was being written is released again once Claim returns. bye is
	// what the computer said as it left (the zero Bye: none, or the claim was replaced).
	Release(k Key, hold uint64, bye Bye)
	// Route sends a request to a computer whose socket is not in this process, as
	// Gateway.Request describes; ctx has a deadline.
	Route(ctx context.Context, k Key, typ string, payload json.RawMessage) (Response, error)
	// Remote returns the computers whose sockets other replicas hold, each with its Replica.
	Remote() []Computer
	// RemoteAccounts returns the accounts in which another replica holds computer traposID
	// (none: nil), without walking every computer: a host request names its computer by
	// traposId, and this is asked per request.
	RemoteAccounts(traposID string) []string
	// RemoteComputer returns computer k when another live replica holds its socket, as its
	// claim says it (its RemoteAddr and ConnectedSince, the time of its hello there), by one
	// lookup: a link session may ask it as often as it likes.
	RemoteComputer(k Key) (Computer, bool)
	// RemoteCredential is the credential selector the computer k said hello with on another
	// replica, as its claim says ("" for the shared password or an unknown computer).
	RemoteCredential(k Key) string
	// RemoteOlder names the replica that holds k's socket when it is of an older
	// trap-sandbox, one that does not close a removed account's computers (older false: it
	// does, or no other replica holds k).
	RemoteOlder(k Key) (replica string, older bool)
	// PublishRevocation tells every replica (this one included: Local.RevocationHeard) that
	// credential selector was revoked in the account store.
	PublishRevocation(selector string) error
}

// Local is what the cluster asks of this replica's gateway (Cluster.Attach).
type Local interface {
	// Evict closes k's socket with 4009 replaced, if hold is still its claim: the computer
	// said hello later on another replica.
	Evict(k Key, hold uint64)
	// Serve answers a request routed from another replica with k's socket here (not_connected
	// when there is none). payload is a JSON object.
	Serve(ctx context.Context, k Key, typ string, payload json.RawMessage) (Response, error)
	// RevocationHeard closes the sockets of credential selector here once the account store
	// confirms it is revoked: a revocation heard on the bus is a hint, the store decides.
	RevocationHeard(ctx context.Context, selector string)
	// RevocationsMissed asks the account store about every credential a socket here said
	// hello with, and closes the sockets of those revoked or gone: revocations announced on
	// the bus may not have reached this replica (NATS dropped them, or it was cut off from
	// NATS when they were announced). It returns once every credential was asked about,
	// with how many were (checked) and how many of them the store said revoked or gone.
	RevocationsMissed(ctx context.Context) (checked, revoked int)
	// ClaimWithdrawn tells this replica that the claim on computer k was withdrawn at at (the
	// zero time: unknown, taken as now), and what the computer said as it left (bye): after a
	// relabel a caller naming k here until RelabelFollowWindow after at hears its new
	// traposId, as one asking the holder does; after any other, a relabel from k is no longer
	// true (the computer was connected by k since).
	ClaimWithdrawn(k Key, bye Bye, at time.Time)
	// ClaimMade tells this replica that a replica (this one or another) claimed computer k: it
	// said hello there by k, so a relabel remembered here that sends a caller to another of
	// its traposIds is no longer true, everywhere at once rather than at the claim's
	// withdrawal (RelabelFollowWindow).
	ClaimMade(k Key)
}

// registry maps the computers whose sockets this process holds to their sessions (newest wins
// within an account), and keeps the cluster, if any, told.
type registry struct {
	cluster Cluster // nil: a single process
	// relabels are the computers relabelled a moment ago, here or on another replica: a
	// caller naming one's former traposId hears its new one (notConnected).
	relabels *recentRelabels

	mu       sync.Mutex // guards the fields below
	sessions map[Key]held
	lastHold uint64 // the last hold number given
	// credentials counts the registered sessions of each credential selector (none for the
	// password's ""): a revocation heard on the bus, made up or not, asks whether one is held
	// here (holdsCredential), and must not walk every socket to learn it.
	credentials map[string]int
	// ids counts the registered sessions of each traposId, one an account: whether another
	// account has a traposId connected too (connectedInAnother) is asked for every request of
	// the gateway's own caller, and must not walk every socket to learn it.
	ids map[string]int
	// accounts counts the places each account but local's holds here, the share of the
	// connection cap it may hold (Config.maxAccountConnections): its computers registered or
	// whose hello is between its place and Register (pending), each computer once.
	accounts map[string]int
	// pending counts the hellos of each computer that hold a place (takeAccountPlace) and
	// have not registered or ended yet.
	pending map[Key]int
}

// accountPlace is a place in its account's share that a hello of computer k holds from the
// check of the share until Register counts its socket (registry.takeAccountPlace): the
// check and the count are one step, so two hellos at once cannot both take the last place.
// A hello that ends before Register gives it back (release).
type accountPlace struct {
	r    *registry
	k    Key
	held bool // guarded by r.mu; false once Register took it or it was released
}

// held is a registered session and its hold number (Cluster.Claim).
type held struct {
	s          *Session
	hold       uint64
	credential string // s.Credential(), which does not change once it is registered
}

func newRegistry(cluster Cluster, c clock.Clock) *registry {
	return &registry{cluster: cluster, relabels: newRecentRelabels(c), sessions: make(map[Key]held), credentials: make(map[string]int), ids: make(map[string]int),
		accounts: make(map[string]int), pending: make(map[Key]int)}
}

// countAccountLocked adds n (1 or -1) to the places of k's account, unless it is local's;
// r.mu is held.
func (r *registry) countAccountLocked(k Key, n int) {
	if k.AccountID == LocalAccount {
		return
	}
	addCount(r.accounts, k.AccountID, n)
}

// holdsPlaceLocked reports whether computer k holds a place in its account: registered, or a
// hello of it holds one; r.mu is held.
func (r *registry) holdsPlaceLocked(k Key) bool {
	_, registered := r.sessions[k]
	return registered || r.pending[k] > 0
}

// takeAccountPlace takes a place for a hello of computer k in its account's share, most
// places, unless the account holds them all and k none (a computer that holds one, connected
// or saying hello on another socket, is replaced: it takes no other). held is the account's
// places then. local's computers, every player's on the shared password, take none (nil):
// the connection cap alone bounds them. The caller hands the place to Register, or releases it.
func (r *registry) takeAccountPlace(k Key, most int) (place *accountPlace, held int, ok bool) {
	if k.AccountID == LocalAccount {
		return nil, 0, true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	held = r.accounts[k.AccountID]
	if !r.holdsPlaceLocked(k) {
		if held >= most {
			return nil, held, false
		}
		r.countAccountLocked(k, 1)
	}
	r.pending[k]++
	return &accountPlace{r: r, k: k, held: true}, held, true
}

// release gives the place back if Register did not take it: a no-op then, or on nil.
func (p *accountPlace) release() {
	if p == nil {
		return
	}
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	p.dropLocked()
}

// dropLocked ends p's hold on its computer's place; the account keeps the place while the
// computer is registered or another hello of it holds one. r.mu is held.
func (p *accountPlace) dropLocked() {
	if !p.held {
		return
	}
	p.held = false
	r := p.r
	if r.pending[p.k]--; r.pending[p.k] == 0 {
		delete(r.pending, p.k)
	}
	if !r.holdsPlaceLocked(p.k) {
		r.countAccountLocked(p.k, -1)
	}
}

// countCredentialLocked adds n (1 or -1) to the sessions of h's credential; r.mu is held.
func (r *registry) countCredentialLocked(h held, n int) {
	if h.s == nil || h.credential == "" {
		return
	}
	addCount(r.credentials, h.credential, n)
}

// addCount adds n to counts[key], deleting the key when it comes to 0, so that a count map
// holds only what is counted now and never grows with what has been.
func addCount(counts map[string]int, key string, n int) {
	if left := counts[key] + n; left > 0 {
		counts[key] = left
	} else {
		delete(counts, key)
	}
}

// holdsCredential reports whether a session registered here said hello with credential
// selector.
func (r *registry) holdsCredential(selector string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.credentials[selector] > 0
}

// heldCredentials lists the credential selectors the sockets here said hello with, each once.
func (r *registry) heldCredentials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	selectors := make([]string, 0, len(r.credentials))
	for selector, n := range r.credentials {
		if n > 0 {
			selectors = append(selectors, selector)
		}
	}
	return selectors
}

// Register makes s the session of s.Key() and returns the session it replaced, if any (newest
// wins); the caller closes the replaced session. place, the one its hello took
// (takeAccountPlace), becomes the registered computer's; nil: the computer takes one, if it
// has none, unchecked. With a cluster, it claims the computer.
func (r *registry) Register(s *Session, place *accountPlace) (replaced *Session) {
	k, credential := s.Key(), s.Credential()
	r.mu.Lock()
	old := r.sessions[k]
	if old.s == s {
		r.mu.Unlock()
		return nil
	}
	r.lastHold++
	h := held{s: s, hold: r.lastHold, credential: credential}
	if !r.holdsPlaceLocked(k) {
		r.countAccountLocked(k, 1)
	}
	if old.s == nil {
		r.ids[k.TraposID]++
	}
	r.sessions[k] = h
	r.relabels.connected(k)
	if place != nil {
		place.dropLocked() // the registered computer holds the place now
	}
	r.countCredentialLocked(old, -1)
	r.countCredentialLocked(h, 1)
	r.mu.Unlock()
	if r.cluster != nil {
		r.cluster.Claim(s.Computer(), s.Credential(), h.hold)
		if r.lookupHold(k, h.hold) != s {
			// Unregistered (its socket closed) or replaced while the claim was on its way: the
			// Release that followed may have reached the cluster before the Claim, and found
			// nothing to withdraw then.
			r.cluster.Release(k, h.hold, Bye{})
		}
	}
	return old.s
}

// Unregister removes s, but only if it is still the registered session of its key; with a
// cluster, its claim is released.
func (r *registry) Unregister(s *Session) {
	k := s.Key()
	bye := s.saidBye()
	r.mu.Lock()
	h, ok := r.sessions[k]
	if !ok || h.s != s {
		r.mu.Unlock()
		return
	}
	if bye.Reason == ByeRelabelled {
		// Before the session goes: a caller never finds neither it nor the relabel.
		r.relabels.heard(k, bye.To, time.Time{})
	}
	delete(r.sessions, k)
	if r.ids[k.TraposID]--; r.ids[k.TraposID] <= 0 {
		delete(r.ids, k.TraposID)
	}
	r.countCredentialLocked(h, -1)
	if !r.holdsPlaceLocked(k) {
		r.countAccountLocked(k, -1)
	}
	r.mu.Unlock()
	if r.cluster != nil {
		r.cluster.Release(k, h.hold, s.saidBye())
	}
}

// Lookup returns the session of k here, or nil.
func (r *registry) Lookup(k Key) *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[k].s
}

// lookupHold returns the session of k if hold is still its hold number, or nil.
func (r *registry) lookupHold(k Key, hold uint64) *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.sessions[k]; h.hold == hold {
		return h.s
	}
	return nil
}

// Sessions returns every session registered here, in no particular order.
func (r *registry) Sessions() []*Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Session, 0, len(r.sessions))
	for _, h := range r.sessions {
		out = append(out, h.s)
	}
	return out
}

// Route sends a request to a computer whose socket is not here (Lookup found none), through
// the cluster; a single process holds every socket, so it answers not_connected.
func (r *registry) Route(ctx context.Context, k Key, typ string, payload json.RawMessage) (Response, error) {
	if r.cluster == nil {
		return Response{}, r.notConnected(k)
	}
	resp, err := r.cluster.Route(ctx, k, typ, payload)
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.Absent {
		return resp, r.notConnected(k) // no replica holds it
	}
	return resp, err
}

// notConnected is the not_connected of computer k, which no socket holds: a relabel's
// (recentRelabels.answer) when k's computer left that traposId a moment ago, else the plain
// one (hostcomputer.NotConnected).
func (r *registry) notConnected(k Key) *protocol.Error {
	if pe := r.relabels.answer(k); pe != nil {
		return pe
	}
	return hostcomputer.NotConnected(k.TraposID)
}

// Remote returns the computers other replicas hold (none in a single process).
func (r *registry) Remote() []Computer {
	if r.cluster == nil {
		return nil
	}
	return r.cluster.Remote()
}

// connected reports whether k's socket is held here or, by the cluster, on another replica.
func (r *registry) connected(k Key) bool {
	if r.Lookup(k) != nil {
		return true
	}
	return r.cluster != nil && slices.Contains(r.cluster.RemoteAccounts(k.TraposID), k.AccountID)
}

// connectedAlone reports whether computer traposID is connected in account accountID and in no
// other, here or (with a cluster) on another live replica: one lookup under the lock, and the
// cluster asked once only when this replica cannot tell alone (the gateway's own caller asks
// it for every request: account.Caller.OwnWins).
func (r *registry) connectedAlone(accountID, traposID string) bool {
	r.mu.Lock()
	_, own := r.sessions[Key{AccountID: accountID, TraposID: traposID}]
	others := r.ids[traposID]
	r.mu.Unlock()
	if own {
		others--
	}
	if others > 0 {
		return false
	}
	if r.cluster != nil {
		for _, a := range r.cluster.RemoteAccounts(traposID) {
			if a != accountID {
				return false
			}
			own = true
		}
	}
	return own
}

// accountsOf returns the accounts in which computer traposID is connected, here or on another
// replica, in no particular order. This replica's own sockets are walked (their map is by
// account and traposId), the others' are not.
func (r *registry) accountsOf(traposID string) []string {
	var out []string
	r.mu.Lock()
	for k := range r.sessions {
		if k.TraposID == traposID {
			out = append(out, k.AccountID)
		}
	}
	r.mu.Unlock()
	if r.cluster != nil {
		for _, a := range r.cluster.RemoteAccounts(traposID) {
			if !slices.Contains(out, a) { // held here and claimed elsewhere a moment before it closes
				out = append(out, a)
			}
		}
	}
	return out
}

// sortComputers orders a snapshot by account, then traposId as a person reads it (the
// computer's id as a number: cctext.CompareTraposIDs), so listings are stable.
func sortComputers(cs []Computer) {
	slices.SortFunc(cs, func(a, b Computer) int {
		return cmp.Or(cmp.Compare(a.AccountID, b.AccountID), cctext.CompareTraposIDs(a.TraposID, b.TraposID))
	})
}
