package cluster

import (
	"strings"
	"time"
	"unique"

	"trap-sandbox/internal/gateway"
)

// The other replicas' computers. Every replica keeps the claim of every computer another
// replica holds (listing, routing, revocation's credential lookup, doubt and sweep), so with K
// replicas each computer is kept K-1 times over: what one entry costs is multiplied by the
// whole cluster. An entry is therefore small: the values few computers differ in (the
// replica, the account, the client version) are interned, the traposId lives only in the map's
// key, the time is a number, and the whole value fits inline in the map (Go keeps map values
// over 128 bytes behind a pointer of their own).
//
// The map is by traposId, so "in which accounts is traposId connected" is one lookup: the
// host API's admin callers name a computer by traposId alone (hostapi accountOf). A traposId
// is unique inside an account only; the claims of the same traposId in further accounts (rare)
// wait in more.

// remoteClaim is a computer whose socket another replica holds, as its claim says, less its
// traposId (the key it is stored under).
type remoteClaim struct {
	account    unique.Handle[string]
	replica    unique.Handle[string]
	version    unique.Handle[string] // the client's version, "" when it sent none
	remoteAddr string
	credential string // the selector of its own credential, "" for the shared password
	since      int64  // ConnectedSince, Unix nanoseconds
	rev        uint64 // the claim's revision in ClaimsBucket
}

func newRemoteClaim(c claim, rev uint64) remoteClaim {
	return remoteClaim{account: unique.Make(c.AccountID), replica: unique.Make(c.Replica), version: unique.Make(c.ClientVersion),
		remoteAddr: c.RemoteAddr, credential: c.Credential, since: c.ConnectedSince.UnixNano(), rev: rev}
}

func (c remoteClaim) computer(traposID string) gateway.Computer {
	since := time.Unix(0, c.since).UTC()
	return gateway.Computer{AccountID: c.account.Value(), TraposID: traposID, RemoteAddr: c.remoteAddr,
		ConnectedSince: since, LastFrameAt: since, Replica: c.replica.Value(), ClientVersion: c.version.Value()}
}

// remoteSet is the other replicas' claims by computer. The zero value is not usable: see
// newRemoteSet. It is not safe for concurrent use (Router.mu guards it).
type remoteSet struct {
	byID map[string]remoteClaim            // traposId → its claim in one account
	more map[string]map[string]remoteClaim // traposId → account → its claims in other accounts
}

func newRemoteSet() remoteSet {
	return remoteSet{byID: make(map[string]remoteClaim), more: make(map[string]map[string]remoteClaim)}
}

func (s *remoteSet) get(k gateway.Key) (remoteClaim, bool) {
	c, ok := s.byID[k.TraposID]
	if ok && c.account.Value() == k.AccountID {
		return c, true
	}
	c, ok = s.more[k.TraposID][k.AccountID]
	return c, ok
}

func (s *remoteSet) put(k gateway.Key, c remoteClaim) {
	// Copies of k's strings, which may point into a whole NATS message: a map keeps the key of
	// every assignment, even to a key it has.
	id := strings.Clone(k.TraposID)
	if first, ok := s.byID[id]; !ok || first.account == c.account {
		s.byID[id] = c
		return
	}
	others := s.more[id]
	if others == nil {
		others = make(map[string]remoteClaim, 1)
		s.more[id] = others
	}
	others[strings.Clone(k.AccountID)] = c
}

func (s *remoteSet) delete(k gateway.Key) {
	first, ok := s.byID[k.TraposID]
	if !ok {
		return
	}
	others := s.more[k.TraposID]
	if first.account.Value() != k.AccountID {
		delete(others, k.AccountID)
		if len(others) == 0 {
			delete(s.more, k.TraposID)
		}
		return
	}
	delete(s.byID, k.TraposID)
	for account, c := range others { // another account's claim of the traposId takes its place
		s.byID[strings.Clone(k.TraposID)] = c
		delete(others, account)
		if len(others) == 0 {
			delete(s.more, k.TraposID)
		}
		break
	}
}

func (s *remoteSet) len() int {
	n := len(s.byID)
	for _, others := range s.more {
		n += len(others)
	}
	return n
}

// all calls f with every claim and its computer's traposId.
func (s *remoteSet) all(f func(traposID string, c remoteClaim)) {
	for id, c := range s.byID {
		f(id, c)
	}
	for id, others := range s.more {
		for _, c := range others {
			f(id, c)
		}
	}
}

// byTraposID calls f with every claim of traposID, whatever its account.
func (s *remoteSet) byTraposID(traposID string, f func(c remoteClaim)) {
	c, ok := s.byID[traposID]
	if !ok {
		return
	}
	f(c)
	for _, c := range s.more[traposID] {
		f(c)
	}
}
