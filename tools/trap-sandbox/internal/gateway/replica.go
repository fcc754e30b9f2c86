package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
)

// This replica's side of the Cluster seam (registry.go): what the other replicas ask of it,
// through Local, by computer and hold number, never by session.

// local is the gateway's Local, given to its cluster by New.
type local struct{ g *Gateway }

var _ Local = local{}

// Evict implements Local.
func (l local) Evict(k Key, hold uint64) {
	if s := l.g.registry.lookupHold(k, hold); s != nil {
		s.Evict()
	}
}

// Serve implements Local: a request routed from another replica, on the socket held here.
func (l local) Serve(ctx context.Context, k Key, typ string, payload json.RawMessage) (Response, error) {
	s := l.g.registry.Lookup(k)
	if s == nil {
		return Response{}, l.g.registry.notConnected(k)
	}
	return s.request(ctx, typ, payload, byHost)
}

// RevocationHeard implements Local.
func (l local) RevocationHeard(ctx context.Context, selector string) {
	l.g.revocationHeard(ctx, selector)
}

// RevocationsMissed implements Local.
func (l local) RevocationsMissed(ctx context.Context) (checked, revoked int) {
	return l.g.recheckHeldCredentials(ctx)
}

// ClaimWithdrawn implements Local.
func (l local) ClaimWithdrawn(k Key, bye Bye, at time.Time) {
	if bye.Reason == ByeRelabelled {
		l.g.registry.relabels.heard(k, bye.To, at)
		return
	}
	l.g.registry.relabels.left(k)
}

// ClaimMade implements Local.
func (l local) ClaimMade(k Key) {
	l.g.registry.relabels.connected(k)
}

// missedRevocationReads is how many credentials a check for missed revocations
// (recheckHeldCredentials) reads from the account store at once, as the bus's revocations are
// checked 8 at a time (cluster's revocation slots).
const missedRevocationReads = 8

// missedRevocationCheckLimit bounds a whole check for missed revocations. Each read ends at
// revocationCheckTimeout, but against a store that hangs a replica holding thousands of
// credentials would take minutes (5 s for each 8 of them) before it could check again; what is
// not read by then stays unchecked: its sockets stay open until their next hello.
const missedRevocationCheckLimit = 30 * time.Second

// recheckHeldCredentials closes the local sockets of every credential held here that the
// account store says is revoked or gone: revocations this replica did not hear on the bus.
// One read of the store for each credential, missedRevocationReads at once, all within
// missedRevocationCheckLimit; a read that fails, or is not made in time, leaves its sockets
// open (the computer's next hello asks the store again), and is logged. It returns how many
// credentials it could check, and how many of them were revoked or gone.
func (g *Gateway) recheckHeldCredentials(ctx context.Context) (checked, revokedCount int) {
	if g.cfg.Accounts == nil {
		return 0, 0
	}
	// Counted first, as revokeCredentials does: a hello whose credential the store took
	// before this read, not registered yet, asks the store again (revokedDuringHello).
	g.revocations.Add(1)
	held := g.registry.heldCredentials()
	checkCtx, cancel := clock.WithTimeout(ctx, g.cfg.Clock, missedRevocationCheckLimit)
	defer cancel()
	var (
		mu      sync.Mutex // guards revoked, failed, failure
		revoked []string
		failed  int
		failure error
	)
	selectors := make(chan string)
	var readers sync.WaitGroup
	for range min(missedRevocationReads, len(held)) {
		readers.Go(func() {
			for selector := range selectors {
				readCtx, cancelRead := clock.WithTimeout(checkCtx, g.cfg.Clock, revocationCheckTimeout)
				gone, err := g.storeRevoked(readCtx, selector)
				cancelRead()
				mu.Lock()
				switch {
				case err != nil:
					failed++
					failure = err
				case gone:
					revoked = append(revoked, selector)
				}
				mu.Unlock()
			}
		})
	}
	asked := 0
feed:
	for _, selector := range held {
		if checkCtx.Err() != nil {
			break // not one more read, even with a reader free at the limit
		}
		select {
		case selectors <- selector:
			asked++
		case <-checkCtx.Done():
			break feed
		}
	}
	close(selectors)
	readers.Wait()
	g.revokeCredentials(revoked)
	if ctx.Err() != nil {
		return asked - failed, len(revoked)
	}
	if asked < len(held) || errors.Is(context.Cause(checkCtx), context.DeadlineExceeded) {
		failure = fmt.Errorf("the check took its limit of %s", missedRevocationCheckLimit)
	}
	if unchecked := failed + len(held) - asked; unchecked > 0 && account.Reconnecting(failure) {
		// The store's own connection is still reconnecting: it checks them all again once it
		// is back (cluster's FollowAccountStore).
		g.log.Info("cannot check every credential held here for a revocation this replica may have missed yet: the account store's connection to NATS is not back; checking them again once it is",
			"unchecked", unchecked, "err", failure)
	} else if unchecked > 0 {
		g.log.Warn("cannot check every credential held here for a revocation this replica may have missed: their sockets stay open until their next hello",
			"unchecked", unchecked, "err", failure)
	}
	return asked - failed, len(revoked)
}

// Evict closes the session with 4009 replaced because a newer socket of the same computer said
// hello, on this replica or another; its pending requests fail with not_connected.
func (s *Session) Evict() {
	if s.closeByGateway(CloseReplaced, "replaced") && s.endLineAllowed() {
		s.log().Info("computer replaced by a newer connection", "traposId", clip(s.Key().TraposID))
	}
}

// Credential is the selector of the credential the computer said hello with ("" for the
// shared password): a replica's claim carries it, so that any replica can revoke a computer
// held by another.
func (s *Session) Credential() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.credential
}

// revocationCheckTimeout bounds the account-store read that confirms a revocation heard on
// the bus.
const revocationCheckTimeout = 5 * time.Second

// revocationHeard closes the local sockets of credential selector, once the account store
// confirms that it is revoked, or gone (removed with its account: a socket here said hello
// with it, so it existed): the message on the bus is a hint, the store is the authority.
func (g *Gateway) revocationHeard(ctx context.Context, selector string) {
	if g.cfg.Accounts == nil || selector == "" {
		return
	}
	// Counted before the walk, as revokeCredentials does: a hello with it that is not
	// registered yet asks the store again (revokedDuringHello), as does one that begins
	// later while a NATS follower may still answer it with the credential live.
	g.countRevocations(selector)
	if !g.holdsCredential(selector) {
		return // nothing here to close: the store is not asked, no socket walked (a flood of made-up messages costs next to nothing)
	}
	// A flood naming a credential held here (the claims on the bus carry it) is one read at a
	// time: a message heard while the store is asked is one more check after that one, which
	// sees a revocation made after the first read began.
	if !g.revocationChecks.begin(selector) {
		return
	}
	for {
		g.checkRevocationHeard(ctx, selector)
		if !g.revocationChecks.again(selector) {
			return
		}
	}
}

// checkRevocationHeard closes the local sockets of credential selector if the account store
// says it is revoked or gone, and logs a revocation it does not confirm.
func (g *Gateway) checkRevocationHeard(ctx context.Context, selector string) {
	if !g.holdsCredential(selector) {
		return // closed since (by the check before this one, or its computer left)
	}
	ctx, cancel := context.WithTimeout(ctx, revocationCheckTimeout)
	defer cancel()
	revoked, err := g.storeRevoked(ctx, selector)
	// Once a minute for each credential, with the count of the others (logthrottle): a flood
	// of made-up messages would otherwise write one line for each read.
	switch {
	case err != nil:
		msg := "ignored a revocation heard on the bus: the account store does not confirm it"
		g.limits.warns.warnOf(msg, selector, "credential", clip(selector), "err", err)
	case !revoked:
		msg := "ignored a revocation heard on the bus: the account store says the credential is not revoked; another NATS client publishes on the replicas' subjects? Fence them (docs/scale-out.md, Security)"
		g.limits.warns.warnOf(msg, selector, "credential", clip(selector))
	default:
		g.RevokeCredential(selector)
	}
}

// revocationChecks are the credentials whose revocation, heard on the bus, the account store
// is being asked about (revocationHeard), each with whether it was heard again meanwhile. It
// holds only credentials a socket here said hello with.
type revocationChecks struct {
	mu      sync.Mutex
	running map[string]bool
}

// begin reports whether the caller is to check selector: false when a check of it runs,
// which is told to check once more when it ends.
func (c *revocationChecks) begin(selector string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, running := c.running[selector]; running {
		c.running[selector] = true
		return false
	}
	if c.running == nil {
		c.running = make(map[string]bool)
	}
	c.running[selector] = false
	return true
}

// again ends a check of selector, or reports that it was heard again meanwhile: the caller
// checks once more.
func (c *revocationChecks) again(selector string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[selector] {
		c.running[selector] = false
		return true
	}
	delete(c.running, selector)
	return false
}

// holdsCredential reports whether a socket here said hello with credential selector.
func (g *Gateway) holdsCredential(selector string) bool {
	return g.registry.holdsCredential(selector)
}

// RevokeCredential closes the socket that said hello with the credential selector (revoked:
// 4003, the daemon stops), if this process holds one. The caller has already marked it
// revoked in the account store, so the computer's next hello is refused too.
func (g *Gateway) RevokeCredential(selector string) bool {
	return g.revokeCredentials([]string{selector})
}

// revokeCredentials is RevokeCredential for several credentials in one walk over the
// sockets (FollowRevocations may list many at once, and this process may hold many sockets).
func (g *Gateway) revokeCredentials(selectors []string) bool {
	revoked := make(map[string]bool, len(selectors))
	for _, selector := range selectors {
		if selector != "" { // "": the shared password, which is nobody's to revoke
			revoked[selector] = true
		}
	}
	if len(revoked) == 0 {
		return false
	}
	g.countRevocations(slices.Collect(maps.Keys(revoked))...) // before the walk, which misses a hello not registered yet
	closed := false
	for _, s := range g.registry.Sessions() {
		if revoked[s.Credential()] && s.closeRevoked() {
			closed = true
		}
	}
	return closed
}

// closeRevoked closes the socket of a computer whose credential was revoked (4003, the
// daemon stops), and reports whether this call closed it.
func (s *Session) closeRevoked() bool {
	if !s.beginCloseFor(CloseRevoked, "revoked", true, revokedCause(s.Key().TraposID), Bye{Reason: LeftRevoked}) {
		return false
	}
	s.log().Info("computer closed: its credential was revoked", "traposId", clip(s.Key().TraposID))
	return true
}

// revokedDuringHello closes a computer just registered with credential selector when a
// revocation was made or heard here since its hello began (revocationsBefore: what
// Gateway.revocations was then) and the store now refuses the credential, revoked or gone
// with its account. That revocation walked the sockets before this one was among them, so
// it did not close it, and the computer would stay connected with a credential the store
// refuses (its account's host callers reaching it, its agent answering it) until it
// reconnected. A store that cannot answer closes it as at hello (1001: it says hello again).
// It reports whether the socket is closing.
//
// A hello that began after the revocation asks the store again too while the credential is
// among the recent revocations: on a NATS cluster its read is a direct get that a follower,
// not having applied the revocation yet, may answer with the credential live, and nothing
// closes the socket afterwards. Only such hellos pay the latest read (at the bucket's leader).
func (s *Session) revokedDuringHello(selector string, revocationsBefore uint64) bool {
	if selector == "" || (s.gw.revocations.Load() == revocationsBefore && !s.gw.recentRevocations.has(selector, s.gw.cfg.Clock.Now())) {
		return false // no revocation since the store took it, none lately: one made later finds it registered
	}
	revoked, err := s.gw.storeRevoked(s.ctx, selector)
	switch {
	case err != nil && s.ctx.Err() != nil:
		// The socket is closing already (the computer left, the gateway stops): no store fault.
	case err != nil:
		s.gw.limits.warns.error("hello: the account store failed", s.remoteAddr, "err", err)
		s.closeByGateway(CloseGoingAway, "account store unavailable")
	case revoked:
		s.closeRevoked()
	default:
		return false
	}
	return true
}

// storeRevoked asks the account store whether credential selector is revoked, or gone
// (removed with its account).
func (g *Gateway) storeRevoked(ctx context.Context, selector string) (bool, error) {
	// The latest write: a revocation heard on the bus was written a moment ago, and a NATS
	// cluster's follower may not have it yet (it would be ignored, the computer left connected).
	c, err := account.Latest(g.cfg.Accounts.Store()).Credential(ctx, selector)
	switch {
	case errors.Is(err, account.ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	}
	return !c.RevokedAt.IsZero(), nil
}

// countRevocations counts a revocation made or heard here (Gateway.revocations) and keeps
// its credentials among the recent ones (Gateway.recentRevocations).
func (g *Gateway) countRevocations(selectors ...string) {
	g.recentRevocations.add(selectors, g.cfg.Clock.Now())
	g.revocations.Add(1)
}

// recentRevocationLife is how long a revocation counts as recent: longer than a NATS
// follower in working order lags behind its stream's leader; one that lags longer is left to
// the check of every held credential after a reconnection (RevocationsMissed).
const recentRevocationLife = 5 * time.Minute

// maxRecentRevocations bounds the recent revocations kept (about 100 bytes each): past it the
// oldest is forgotten first, so a flood of made-up revocations on the bus costs at most this.
const maxRecentRevocations = 10000

// recentRevocations are credentials revoked lately, each with when.
type recentRevocations struct {
	mu    sync.Mutex
	at    map[string]time.Time
	order []recentRevocation // oldest first; a credential revoked again is in it once more
}

type recentRevocation struct {
	selector string
	at       time.Time
}

// add keeps selectors as revoked at now.
func (r *recentRevocations) add(selectors []string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at == nil {
		r.at = make(map[string]time.Time)
	}
	for _, selector := range selectors {
		if selector == "" {
			continue
		}
		r.at[selector] = now
		r.order = append(r.order, recentRevocation{selector, now})
	}
	// The revocations past their life go, and the oldest past maxRecentRevocations.
	drop := 0
	for ; drop < len(r.order); drop++ {
		old := r.order[drop]
		if len(r.order)-drop <= maxRecentRevocations && now.Sub(old.at) < recentRevocationLife {
			break
		}
		if r.at[old.selector].Equal(old.at) { // not revoked again since
			delete(r.at, old.selector)
		}
	}
	r.order = slices.Delete(r.order, 0, drop)
}

// has reports whether selector was revoked within recentRevocationLife before now.
func (r *recentRevocations) has(selector string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.at[selector]
	return ok && now.Sub(at) < recentRevocationLife
}

// revokedCause is why a computer cut off for its revoked credential went, for those who were
// asking it or watching its screen (a web console would otherwise say it "disconnected" and
// wait for it to come back, which it does not do by itself).
func revokedCause(traposID string) *protocol.Error {
	return protocol.Errorf(protocol.CodeNotConnected, "computer %s %s", cctext.ShowTraposID(traposID), cutOff)
}

// cutOff is revokedCause's words after the computer's name.
const cutOff = "was cut off: its credential was revoked; it connects again once linked anew (sandbox link on it) or given a new credential"

// WasCutOff reports whether err is revokedCause: the computer does not come back by itself,
// so a host view (trap-sandbox screen) stops waiting for it.
func WasCutOff(err error) bool {
	pe, ok := errors.AsType[*protocol.Error](err)
	return ok && pe.Code == protocol.CodeNotConnected && strings.HasSuffix(pe.Message, " "+cutOff)
}

// CredentialRevoked closes the credential's socket wherever it is: here (RevokeCredential),
// and on every other replica, which hear the announcement and close theirs once the account
// store confirms it. The caller has already revoked it in the store.
func (g *Gateway) CredentialRevoked(selector string) {
	g.credentialsRevoked([]string{selector})
}

// credentialsRevoked is CredentialRevoked for several credentials: one walk over the sockets
// here, one announcement each.
func (g *Gateway) credentialsRevoked(selectors []string) {
	g.revokeCredentials(selectors)
	cluster := g.registry.cluster
	if cluster == nil {
		return
	}
	for _, selector := range selectors {
		if selector == "" {
			continue
		}
		if err := cluster.PublishRevocation(selector); err != nil {
			// Revoked in the store all the same: the computer's next hello is refused.
			g.log.Warn("revoked, but the other replicas could not be told: a socket they hold closes at its next hello", "credential", clip(selector), "err", err)
		}
	}
}

// AccountRemoved closes the sockets of the computers of accountID, whose credentials (their
// selectors) were removed from the account store with it: here at once, and on the other
// replicas as CredentialRevoked does (they close theirs once the store confirms the
// credential is gone). It returns the traposIds of the account's computers that were
// connected, on any replica, sorted: closed, and notClosed those held by a replica of an older
// trap-sandbox, which does not close them (they stay until they reconnect, when their hello is
// refused).
func (g *Gateway) AccountRemoved(accountID string, credentials []string) (closed, notClosed []string) {
	removed := make(map[string]bool, len(credentials))
	for _, selector := range credentials {
		removed[selector] = selector != ""
	}
	closed = []string{}
	for _, c := range g.Computers() {
		if c.AccountID != accountID {
			continue
		}
		// Its credential, not its account's name alone: an account made before "local" was
		// reserved shares that name with the shared-password computers, which stay.
		k := Key{AccountID: c.AccountID, TraposID: c.TraposID}
		selector, older := "", false
		if s := g.registry.Lookup(k); s != nil {
			selector = s.Credential()
		} else if cluster := g.registry.cluster; cluster != nil {
			selector = cluster.RemoteCredential(k)
			_, older = cluster.RemoteOlder(k)
		}
		switch {
		case !removed[selector]:
		case older:
			notClosed = append(notClosed, c.TraposID)
		default:
			closed = append(closed, c.TraposID)
		}
	}
	g.credentialsRevoked(credentials)
	return closed, notClosed
}
