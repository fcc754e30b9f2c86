package gateway

import (
	"slices"
	"sync"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	hostcomputer "trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
)

// RelabelFollowWindow is how long after a computer said bye relabelled a host caller that
// names one of its former traposIds is answered as the callers that were waiting on its socket
// were (ByeError: not_connected with relabelledTo, which the web console's view follows and
// every other surface names), not with the plain not_connected of a computer never seen. The
// callers that ask again by themselves come back well within it (the web console's view every
// 2 s, trap-sandbox screen's within 2 s, MCP's waits every 250 ms), and so does a person who
// named the computer from a list read just before: the gateway's reconnect window
// (hostcomputer.ReconnectWindow), the time the docs already give a computer to come back in.
const RelabelFollowWindow = hostcomputer.ReconnectWindow

// maxRelabelledComputers bounds the computers whose relabels are remembered at once, and
// maxFormerIDs the former traposIds remembered of each: a computer relabelled in a loop (a
// program calling os.setComputerLabel) keeps one trail of at most maxFormerIDs names, and many
// computers at once push a trail out (makeRoomLocked: the oldest of the account that holds the
// most), so the memory stays bounded whatever they do and one account's flood of relabels
// pushes out its own trails, not another account's.
const (
	maxRelabelledComputers = 4096
	maxFormerIDs           = 8
)

// relabelled computers are keyed by account and computer id: a relabel keeps the computer id
// (RelabelledTo), and a traposId is unique only inside an account, so one account's relabel
// never answers another account's caller.
type relabelKey struct {
	accountID  string
	computerID string
}

// relabelTrail is what is remembered of one computer's recent relabels: the traposId its last
// bye named (to), when (at), and the former traposIds it left since its trail began, oldest
// first, at most maxFormerIDs. A caller naming any of them hears the latest: a view opened on
// 7:a after 7:a became 7:b and then 7:c goes to 7:c at once.
type relabelTrail struct {
	to     string
	at     time.Time
	former []string
}

// recentRelabels remembers the relabels of the last RelabelFollowWindow: those of the sockets
// held here (registry.Unregister) and, with replicas, those the other replicas' withdrawals of
// their claims said (Local.ClaimWithdrawn). Safe for concurrent use; it takes no other lock.
type recentRelabels struct {
	clock clock.Clock

	mu     sync.Mutex // guards trails
	trails map[relabelKey]*relabelTrail
}

func newRecentRelabels(c clock.Clock) *recentRelabels {
	return &recentRelabels{clock: c, trails: make(map[relabelKey]*relabelTrail)}
}

func keyOfRelabel(k Key) relabelKey {
	return relabelKey{accountID: k.AccountID, computerID: account.ComputerID(k.TraposID)}
}

// expired reports whether t's last relabel is older than RelabelFollowWindow at now.
func (t *relabelTrail) expired(now time.Time) bool { return now.Sub(t.at) >= RelabelFollowWindow }

// heard records that computer k said bye relabelled to to (already held to RelabelledTo; ""
// records nothing: there is no new id to name) at at: now for a socket here, the time of the
// withdrawal of its claim for another replica's (the zero time: now). A relabel older than
// RelabelFollowWindow, a withdrawal read again (the claims bucket is read anew after each
// reconnection to NATS, with the withdrawals of the last hour), is not a moment ago and records
// nothing; one older than the trail's latest, read after it, adds its id to the former ones
// and leaves the latest.
func (r *recentRelabels) heard(k Key, to string, at time.Time) {
	if RelabelledTo(k.TraposID, to) == "" {
		return
	}
	now := r.clock.Now()
	if at.IsZero() || at.After(now) {
		at = now // a NATS server's clock ahead of this replica's: not a relabel to come
	}
	if now.Sub(at) >= RelabelFollowWindow {
		return
	}
	rk := keyOfRelabel(k)
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.trails[rk]
	if t != nil && !t.expired(now) && at.Before(t.at) {
		if k.TraposID != t.to {
			t.addFormer(k.TraposID)
		}
		return
	}
	if t == nil || t.expired(at) {
		if t == nil && len(r.trails) >= maxRelabelledComputers {
			r.makeRoomLocked(now, rk.accountID)
		}
		t = &relabelTrail{}
		r.trails[rk] = t
	}
	t.to, t.at = to, at
	t.former = slices.DeleteFunc(t.former, func(id string) bool { return id == to })
	t.addFormer(k.TraposID)
}

// addFormer adds id to t's former traposIds as the latest, keeping maxFormerIDs.
func (t *relabelTrail) addFormer(id string) {
	t.former = slices.DeleteFunc(t.former, func(f string) bool { return f == id })
	t.former = append(t.former, id)
	if len(t.former) > maxFormerIDs {
		t.former = slices.Delete(t.former, 0, len(t.former)-maxFormerIDs)
	}
}

// makeRoomLocked drops the expired trails, or, when none is, the oldest trail of the account
// that holds the most (newcomer's, the account about to add one, when it holds as many): a
// program with the password, or an account with many credentials, relabelling computers in a
// loop (5000 a second from one address, each a hello and a bye) pushed every other account's
// trails out within a second when the oldest of all went, and their callers heard a plain
// not_connected; now it pushes out its own once it holds the most, and every account keeps
// its share. r.mu is held.
func (r *recentRelabels) makeRoomLocked(now time.Time, newcomer string) {
	held := make(map[string]int)
	for rk, t := range r.trails {
		if t.expired(now) {
			delete(r.trails, rk)
			continue
		}
		held[rk.accountID]++
	}
	if len(r.trails) < maxRelabelledComputers {
		return
	}
	most := newcomer
	for accountID, n := range held {
		if n > held[most] {
			most = accountID
		}
	}
	var oldest relabelKey
	var oldestAt time.Time
	for rk, t := range r.trails {
		if rk.accountID == most && (oldestAt.IsZero() || t.at.Before(oldestAt)) {
			oldest, oldestAt = rk, t.at
		}
	}
	delete(r.trails, oldest)
}

// connected records that computer k said hello by k.TraposID, here (Register) or on another
// replica (its claim, Local.ClaimMade): it is at that traposId now. A trail that names another
// one as where the computer went is no longer true (it came back under a former label, or
// under a new one, without a bye that named it: rebooted with its label changed), and goes
// whole, so that no caller naming a former traposId is sent to a label the computer no
// longer has; it hears the plain not_connected. The trail of the relabel this hello ends (to
// is k's traposId) stays. A computer of another Minecraft server with the same id in the same
// account (every server has a computer 0) ends the trail too: its caller hears
// not_connected, the answer of a computer never relabelled, which is no wrong way to go.
func (r *recentRelabels) connected(k Key) {
	rk := keyOfRelabel(k)
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.trails[rk]; t != nil && t.to != k.TraposID {
		delete(r.trails, rk)
	}
}

// left records that computer k left traposId k.TraposID without a relabel (another replica
// withdrew its claim: Local.ClaimWithdrawn). If k's trail names that traposId as a former one,
// the computer was connected by it after it was relabelled from it (a key's claims and
// withdrawals are read in the order they were written), so the trail's new traposId is no
// longer true either, and the trail goes whole, as at the claim (connected), which this
// replica may not have read: the watch of a bucket read anew gives a key's last write only.
func (r *recentRelabels) left(k Key) {
	rk := keyOfRelabel(k)
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.trails[rk]; t != nil && slices.Contains(t.former, k.TraposID) {
		delete(r.trails, rk)
	}
}

// answer is what a caller naming k, which no replica holds, is told when k's computer was
// relabelled from that traposId within RelabelFollowWindow: the bye's own error (ByeError),
// naming the traposId it is now; else nil.
func (r *recentRelabels) answer(k Key) *protocol.Error {
	now := r.clock.Now()
	rk := keyOfRelabel(k)
	r.mu.Lock()
	t := r.trails[rk]
	if t != nil && t.expired(now) {
		delete(r.trails, rk)
		t = nil
	}
	to := ""
	if t != nil && slices.Contains(t.former, k.TraposID) {
		to = t.to
	}
	r.mu.Unlock()
	if to == "" {
		return nil
	}
	return ByeError(k.TraposID, Bye{Reason: ByeRelabelled, To: to})
}

// accountsOf returns the accounts in which computer traposID was relabelled within
// RelabelFollowWindow: an admin naming it, connected in no account, is answered from the one
// account that has it (as a connected computer of one account is found for an admin).
func (r *recentRelabels) accountsOf(traposID string) []string {
	now := r.clock.Now()
	id := account.ComputerID(traposID)
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for rk, t := range r.trails {
		if rk.computerID == id && !t.expired(now) && slices.Contains(t.former, traposID) {
			out = append(out, rk.accountID)
		}
	}
	return out
}
