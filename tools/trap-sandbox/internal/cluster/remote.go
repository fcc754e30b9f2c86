package cluster

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"time"
	"unique"

	"trap-sandbox/internal/gateway"
)

// The other replicas' computers. Every replica keeps the claim of every computer another
// replica holds (listing, routing, revocation's credential lookup, doubt and sweep), so with K
// replicas each computer is kept K-1 times over: what one entry costs is multiplied by the
// whole cluster, and the Go heap doubles it in resident memory (the collector lets the heap
// grow to twice what is live). An entry is therefore small: the values few computers differ
// in (the account, the replica, the client version) are one interned handle, the traposId
// lives only in the map's key, the time is a number, an IPv4 address and port (what a
// computer's socket comes from, behind its Minecraft server) is a number too, and the value
// (48 bytes) fits inline in the map's slots (Go keeps map values over 128 bytes behind a
// pointer of their own, and every slot of a table costs what a used one does).
//
// The map is by traposId, so "in which accounts is traposId connected" is one lookup: the
// host API's admin callers name a computer by traposId alone (hostapi accountOf). A traposId
// is unique inside an account only; the claims of the same traposId in further accounts (rare)
// wait in more.

// remoteClaim is a computer whose socket another replica holds, as its claim says, less its
// traposId (the key it is stored under).
type remoteClaim struct {
	meta  unique.Handle[claimMeta]
	since int64  // ConnectedSince, Unix nanoseconds
	rev   uint64 // the claim's revision in ClaimsBucket
	// addr is the remote address when it is an IPv4 address and port written as netip writes
	// them (addrIPv4 set); otherwise the length of the remote address at the start of text.
	addr uint64
	// text is the remote address, unless addr holds it, followed by the selector of the
	// computer's own credential ("" for the shared password).
	text string
}

// claimMeta is what many computers' claims have in common: it is interned (unique.Make), one
// handle per claim.
type claimMeta struct {
	account string
	replica string
	version string // the client's version, "" when it sent none
}

// addrIPv4 marks remoteClaim.addr as an IPv4 address (bits 0–31) and port (bits 32–47).
const addrIPv4 = 1 << 63

func newRemoteClaim(c claim, rev uint64) remoteClaim {
	rc := remoteClaim{meta: unique.Make(claimMeta{account: c.AccountID, replica: c.Replica, version: c.ClientVersion}),
		since: c.ConnectedSince.UnixNano(), rev: rev}
	if a, ok := packIPv4(c.RemoteAddr); ok {
		rc.addr, rc.text = a, strings.Clone(c.Credential)
	} else {
		rc.addr, rc.text = uint64(len(c.RemoteAddr)), strings.Clone(c.RemoteAddr+c.Credential)
	}
	return rc
}

// packIPv4 is addr as remoteClaim.addr holds an IPv4 address and port, if addr is one written
// as AddrPort.String writes it (so that remoteAddr gives back the very same string).
func packIPv4(addr string) (uint64, bool) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return 0, false
	}
	var buf [len("255.255.255.255:65535")]byte
	if string(ap.AppendTo(buf[:0])) != addr { // a comparison: no copy is made
		return 0, false
	}
	ip := ap.Addr().As4()
	return addrIPv4 | uint64(ap.Port())<<32 | uint64(binary.BigEndian.Uint32(ip[:])), true
}

// unpackIPv4 reverses packIPv4.
func unpackIPv4(packed uint64) string {
	var ip [4]byte
	binary.BigEndian.PutUint32(ip[:], uint32(packed))
	return netip.AddrPortFrom(netip.AddrFrom4(ip), uint16(packed>>32)).String()
}

func (c remoteClaim) account() string { return c.meta.Value().account }
func (c remoteClaim) replica() string { return c.meta.Value().replica }

// remoteAddr is the address the computer's socket comes from, as its claim says.
func (c remoteClaim) remoteAddr() string {
	if c.addr&addrIPv4 != 0 {
		return unpackIPv4(c.addr)
	}
	return c.text[:c.addr]
}

// credential is the selector of the computer's own credential, "" for the shared password.
func (c remoteClaim) credential() string {
	if c.addr&addrIPv4 != 0 {
		return c.text
	}
	return c.text[c.addr:]
}

func (c remoteClaim) computer(traposID string) gateway.Computer {
	since := time.Unix(0, c.since).UTC()
	m := c.meta.Value()
	return gateway.Computer{AccountID: m.account, TraposID: traposID, RemoteAddr: c.remoteAddr(),
		ConnectedSince: since, LastFrameAt: since, Replica: m.replica, ClientVersion: m.version}
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
	if ok && c.account() == k.AccountID {
		return c, true
	}
	c, ok = s.more[k.TraposID][k.AccountID]
	return c, ok
}

func (s *remoteSet) put(k gateway.Key, c remoteClaim) {
	// Copies of k's strings, which may point into a whole NATS message: a map keeps the key of
	// every assignment, even to a key it has.
	id := strings.Clone(k.TraposID)
	if first, ok := s.byID[id]; !ok || first.account() == c.account() {
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
	if first.account() != k.AccountID {
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
