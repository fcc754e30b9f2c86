package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/protocol"
)

// LocalAccount is the account of the shared password: SANDBOX_PASSWORD (or any secret when
// none is set) resolves to it, as before accounts existed.
const LocalAccount = account.Local

// resolveAccount maps a hello secret to the account that owns the computer: a computer's
// own credential (tsc_…, when the gateway has accounts) to its account, the shared password
// to LocalAccount. It fails with account.ErrBadSecret or account.ErrRevoked. A credential
// is checked even when no password is set: it names an account, so a wrong one is refused.
// The credential's selector is returned too ("" for the password), so that revoking it
// finds the socket.
func (g *Gateway) resolveAccount(ctx context.Context, secret, traposID, remoteAddr string) (accountID, credential string, err error) {
	if g.cfg.Accounts != nil && strings.HasPrefix(secret, string(account.KindCredential)+"_") {
		c, err := g.cfg.Accounts.AuthenticateComputer(ctx, secret, traposID, remoteAddr)
		if err != nil {
			return "", "", err
		}
		return c.AccountID, c.Selector, nil
	}
	if !g.secretMatches(secret) {
		return "", "", account.ErrBadSecret
	}
	return LocalAccount, "", nil
}

// Key identifies a computer: traposId ("<computerId>:<label>") is only unique inside an account.
type Key struct {
	AccountID string
	TraposID  string
}

// Registry maps computers to the session that holds their socket. It is an interface so that
// several gateway replicas can share one view: MemoryRegistry is the single process's map, and
// the cluster package's NATS router is the other implementation (docs/scale-out.md).
// Implementations must be safe for concurrent use and must not call Session methods while
// holding their own lock.
type Registry interface {
	// Register makes s the session of s.Key() and returns the session it replaced, if any
	// (newest wins). The caller closes the replaced session.
	Register(s *Session) (replaced *Session)
	// Unregister removes s, but only if it is still the registered session of its key.
	Unregister(s *Session)
	// Lookup returns the session of k, or nil.
	Lookup(k Key) *Session
	// Sessions returns every registered session, in no particular order.
	Sessions() []*Session
	// Route sends a request to a computer whose socket is not in this process (Lookup found
	// none), as Gateway.Request describes; ctx has a deadline. A single process answers
	// not_connected.
	Route(ctx context.Context, k Key, typ string, payload json.RawMessage) (Response, error)
	// Remote returns the computers whose sockets other replicas hold (none in a single
	// process), each with its Replica set.
	Remote() []Computer
}

// MemoryRegistry is the in-process Registry of a single gateway.
type MemoryRegistry struct {
	mu       sync.Mutex // guards sessions
	sessions map[Key]*Session
}

// NewMemoryRegistry returns an empty MemoryRegistry.
func NewMemoryRegistry() *MemoryRegistry {
	return &MemoryRegistry{sessions: make(map[Key]*Session)}
}

// Register implements Registry.
func (r *MemoryRegistry) Register(s *Session) *Session {
	k := s.Key()
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.sessions[k]
	r.sessions[k] = s
	if old == s {
		return nil
	}
	return old
}

// Unregister implements Registry.
func (r *MemoryRegistry) Unregister(s *Session) {
	k := s.Key()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessions[k] == s {
		delete(r.sessions, k)
	}
}

// Lookup implements Registry.
func (r *MemoryRegistry) Lookup(k Key) *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[k]
}

// Sessions implements Registry.
func (r *MemoryRegistry) Sessions() []*Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Session, 0, len(r.sessions))
	for _, s := range r.sessions {
		out = append(out, s)
	}
	return out
}

// Route implements Registry: a single process holds every socket, so a computer Lookup did not
// find is not connected.
func (r *MemoryRegistry) Route(_ context.Context, k Key, _ string, _ json.RawMessage) (Response, error) {
	return Response{}, NotConnected(k.TraposID)
}

// Remote implements Registry: a single process has no other replicas.
func (r *MemoryRegistry) Remote() []Computer { return nil }

// NotConnected is the not_connected error of a computer that no socket holds.
func NotConnected(traposID string) *protocol.Error {
	return protocol.Errorf(protocol.CodeNotConnected, "computer %s is not connected", traposID)
}

// sortComputers orders a snapshot by account, then traposId, so listings are stable.
func sortComputers(cs []Computer) {
	slices.SortFunc(cs, func(a, b Computer) int {
		return cmp.Or(cmp.Compare(a.AccountID, b.AccountID), cmp.Compare(a.TraposID, b.TraposID))
	})
}
