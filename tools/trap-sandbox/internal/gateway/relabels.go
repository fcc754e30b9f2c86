package gateway

import (
	"container/heap"
	"slices"
	"sync"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
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

	key relabelKey
	// seq orders trails of one at by when they were made, so that the oldest is one trail.
	seq uint64
	// byAge and inAccount are the trail's places in recentRelabels.byAge and in its account's
	// heap of recentRelabels.byAccount.
	byAge, inAccount int
}

// recentRelabels remembers the relabels of the last RelabelFollowWindow: those of the sockets
// held here (registry.Unregister) and, with replicas, those the other replicas' withdrawals of
// their claims said (Local.ClaimWithdrawn). Safe for concurrent use; it takes no other lock.
type recentRelabels struct {
	clock clock.Clock
	limit int // the trails remembered at most: maxRelabelledComputers (a test's fewer)

	mu     sync.Mutex // guards the fields below
	trails map[relabelKey]*relabelTrail
	// byAge holds every trail, oldest (at) first, and byAccount each account's; sizes knows
	// which accounts hold the most. Making room (makeRoomLocked) takes the expired trails and
	// the oldest of the account that holds the most from the heaps' fronts, in O(log n) a
	// trail: a walk over all maxRelabelledComputers trails at each relabel of a flood cost
	// 0.16–0.84 ms a relabel (BenchmarkRelabelFlood; about 1 µs with the heaps).
	byAge     trailHeap
	byAccount map[string]*trailHeap
	sizes     accountSizes
	made      uint64 // the trails made so far (relabelTrail.seq)
}

func newRecentRelabels(c clock.Clock) *recentRelabels {
	return &recentRelabels{clock: c, limit: maxRelabelledComputers, trails: make(map[relabelKey]*relabelTrail),
		byAge:     trailHeap{place: func(t *relabelTrail) *int { return &t.byAge }},
		byAccount: make(map[string]*trailHeap),
		sizes:     newAccountSizes()}
}

// addLocked makes the trail of rk, replacing the one it had. r.mu is held.
func (r *recentRelabels) addLocked(rk relabelKey, at time.Time) *relabelTrail {
	if old := r.trails[rk]; old != nil {
		r.dropLocked(old)
	}
	r.made++
	t := &relabelTrail{key: rk, at: at, seq: r.made}
	r.trails[rk] = t
	heap.Push(&r.byAge, t)
	account := r.byAccount[rk.accountID]
	if account == nil {
		account = &trailHeap{place: func(t *relabelTrail) *int { return &t.inAccount }}
		r.byAccount[rk.accountID] = account
	}
	heap.Push(account, t)
	r.sizes.grew(rk.accountID, account.Len())
	return t
}

// movedLocked puts t, whose at changed, in its place in the heaps. r.mu is held.
func (r *recentRelabels) movedLocked(t *relabelTrail) {
	heap.Fix(&r.byAge, t.byAge)
	heap.Fix(r.byAccount[t.key.accountID], t.inAccount)
}

// dropLocked forgets t. r.mu is held.
func (r *recentRelabels) dropLocked(t *relabelTrail) {
	delete(r.trails, t.key)
	heap.Remove(&r.byAge, t.byAge)
	account := r.byAccount[t.key.accountID]
	heap.Remove(account, t.inAccount)
	r.sizes.shrank(t.key.accountID, account.Len())
	if account.Len() == 0 {
		delete(r.byAccount, t.key.accountID)
	}
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
	if RelabelledTo(k.TraposID, to) == "" || !sayableHello(k) {
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
		if t == nil && len(r.trails) >= r.limit {
			r.makeRoomLocked(now, rk.accountID)
		}
		t = r.addLocked(rk, at)
	} else {
		t.at = at
		r.movedLocked(t)
	}
	t.to = to
	t.former = slices.DeleteFunc(t.former, func(id string) bool { return id == to })
	t.addFormer(k.TraposID)
}

// sayableHello reports whether a computer could have said hello as k: its traposId one a hello
// takes (cctext.TraposIDProblem: at most cctext.MaxTraposIDBytes), in the built-in account or
// one an account's name may be. Another replica's withdrawal names k as the claim's key was
// written, by any client of the claims bucket: a flood of keys no hello takes (a 4 KiB label,
// as long as a NATS subject may be, in a 4 KiB account) kept maxRelabelledComputers trails of
// maxFormerIDs such ids (about 150 MiB), for computers no caller can reach.
func sayableHello(k Key) bool {
	return cctext.TraposIDProblem(k.TraposID) == "" && (k.AccountID == LocalAccount || account.CheckName(k.AccountID) == nil)
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
	for r.byAge.Len() > 0 && r.byAge.oldest().expired(now) {
		r.dropLocked(r.byAge.oldest())
	}
	if len(r.trails) < r.limit {
		return
	}
	most := newcomer
	if account := r.byAccount[newcomer]; account == nil || account.Len() < r.sizes.most {
		most = r.sizes.oneOfTheMost()
	}
	r.dropLocked(r.byAccount[most].oldest())
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
		r.dropLocked(t)
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
		r.dropLocked(t)
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
		r.dropLocked(t)
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

// trailHeap is a heap of trails, oldest (at, then seq) first, that keeps each trail's place in
// it where place says (container/heap).
type trailHeap struct {
	trails []*relabelTrail
	place  func(*relabelTrail) *int
}

func (h *trailHeap) Len() int { return len(h.trails) }
func (h *trailHeap) Less(i, j int) bool {
	a, b := h.trails[i], h.trails[j]
	return a.at.Before(b.at) || a.at.Equal(b.at) && a.seq < b.seq
}
func (h *trailHeap) Swap(i, j int) {
	h.trails[i], h.trails[j] = h.trails[j], h.trails[i]
	*h.place(h.trails[i]), *h.place(h.trails[j]) = i, j
}
func (h *trailHeap) Push(x any) {
	t := x.(*relabelTrail)
	*h.place(t) = len(h.trails)
	h.trails = append(h.trails, t)
}
func (h *trailHeap) Pop() any {
	last := h.trails[len(h.trails)-1]
	h.trails[len(h.trails)-1] = nil
	h.trails = h.trails[:len(h.trails)-1]
	return last
}

// oldest is the heap's first trail; the heap is not empty.
func (h *trailHeap) oldest() *relabelTrail { return h.trails[0] }

// accountSizes knows which accounts hold the most trails as they grow and shrink one trail at
// a time, without counting them over.
type accountSizes struct {
	holding map[int]map[string]struct{} // the accounts holding n trails, by n ≥ 1
	most    int                         // the most trails an account holds (0: none holds any)
}

func newAccountSizes() accountSizes {
	return accountSizes{holding: make(map[int]map[string]struct{})}
}

// grew records that account holds n trails, one more than before.
func (s *accountSizes) grew(account string, n int) {
	s.move(account, n-1, n)
	s.most = max(s.most, n)
}

// shrank records that account holds n trails, one fewer than before.
func (s *accountSizes) shrank(account string, n int) {
	s.move(account, n+1, n)
	if s.most == n+1 && len(s.holding[n+1]) == 0 {
		s.most = n // account holds n now
	}
}

func (s *accountSizes) move(account string, from, to int) {
	if accounts := s.holding[from]; accounts != nil {
		delete(accounts, account)
		if len(accounts) == 0 {
			delete(s.holding, from)
		}
	}
	if to > 0 {
		if s.holding[to] == nil {
			s.holding[to] = make(map[string]struct{})
		}
		s.holding[to][account] = struct{}{}
	}
}

// oneOfTheMost is an account that holds the most trails; some account holds one.
func (s *accountSizes) oneOfTheMost() string {
	for account := range s.holding[s.most] {
		return account
	}
	panic("relabels: no account holds a trail")
}
