package gateway

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// relabelledAway connects computer from, has it say bye relabelled to to, and waits until
// its socket has left the registry: a caller asking for from now is one that came after.
func relabelledAway(t *testing.T, h *harness, from, to string) {
	t.Helper()
	c := h.connect(t, from, "")
	c.request("bye-1", TypeBye, map[string]any{"reason": "relabelled", "traposId": to})
	require.True(t, c.read().OK)
	c.expectClose(CloseBye, ByeRelabelled)
	require.Eventually(t, func() bool {
		return h.gw.registry.Lookup(Key{AccountID: LocalAccount, TraposID: from}) == nil
	}, waitLimit, testkit.Poll, "the relabelled socket to leave the registry")
}

// requestError is the error of a request for traposID of account accountID, which no socket
// holds: it is answered at once.
func requestError(t *testing.T, h *harness, accountID, traposID string) *protocol.Error {
	t.Helper()
	_, err := h.gw.Request(context.Background(), accountID, traposID, TypePing, nil)
	pe, ok := err.(*protocol.Error)
	require.True(t, ok, "%v", err)
	require.Equal(t, protocol.CodeNotConnected, pe.Code)
	return pe
}

// A caller that names a computer's old traposId just after it was relabelled (the web
// console's view opening, the CLI's view asking again, an MCP tool) hears its new one, as the
// callers waiting on its socket did; for RelabelFollowWindow, and in that account only.
func TestACallerNamingARelabelledComputerJustAfterHearsItsNewID(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
	h := newHarness(t, Config{Clock: clk}, nil)
	relabelledAway(t, h, "6:keller", "6:cellar")

	pe := requestError(t, h, LocalAccount, "6:keller")
	assert.Equal(t, "computer 6:keller was relabelled: it is 6:cellar now; ask it by that id", pe.Message)
	assert.Equal(t, "6:cellar", pe.RelabelledTo, "for a view that follows it")
	assert.False(t, pe.Absent)

	other := requestError(t, h, "bob", "6:keller")
	assert.Equal(t, "computer 6:keller is not connected", other.Message, "another account's computer is not this one")
	assert.Empty(t, other.RelabelledTo)
	assert.Equal(t, []string{LocalAccount}, h.gw.RelabelledIn("6:keller"), "an admin is answered from its account")
	assert.Empty(t, h.gw.RelabelledIn("6:cellar"))
	assert.Empty(t, requestError(t, h, LocalAccount, "7:keller").RelabelledTo, "another computer id")

	clk.Advance(RelabelFollowWindow - time.Second)
	assert.Equal(t, "6:cellar", requestError(t, h, LocalAccount, "6:keller").RelabelledTo, "still within the window")
	clk.Advance(time.Second)
	late := requestError(t, h, LocalAccount, "6:keller")
	assert.Equal(t, "computer 6:keller is not connected", late.Message, "past the window")
	assert.Empty(t, late.RelabelledTo)
	assert.Empty(t, h.gw.RelabelledIn("6:keller"))
}

// A computer relabelled twice sends a caller of its first name to its latest; one that comes
// back under its first name without a bye that names it (rebooted with its label set back) is
// that name again, and no former name sends a caller on to the latest, which it left: when
// that socket closes each is not connected, not relabelled (6:cellar said "it is 6:attic now").
func TestARelabelledComputersTrailNamesItsLatestIDUntilItIsBack(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
	h := newHarness(t, Config{Clock: clk}, nil)
	relabelledAway(t, h, "6:keller", "6:cellar")
	relabelledAway(t, h, "6:cellar", "6:attic")
	assert.Equal(t, "6:attic", requestError(t, h, LocalAccount, "6:keller").RelabelledTo)
	assert.Equal(t, "6:attic", requestError(t, h, LocalAccount, "6:cellar").RelabelledTo)

	back := h.connect(t, "6:keller", "")
	require.NoError(t, back.conn.Close())
	require.Eventually(t, func() bool {
		return h.gw.registry.Lookup(Key{AccountID: LocalAccount, TraposID: "6:keller"}) == nil
	}, waitLimit, testkit.Poll, "the socket to leave the registry")
	assert.Empty(t, requestError(t, h, LocalAccount, "6:keller").RelabelledTo, "it was back under that name")
	assert.Empty(t, requestError(t, h, LocalAccount, "6:cellar").RelabelledTo, "it is not 6:attic any more")
	assert.Empty(t, h.gw.RelabelledIn("6:cellar"))
}

// A computer relabelled in a loop, and many computers relabelled at once, keep the memory
// bounded: maxFormerIDs names of each, maxRelabelledComputers computers, the oldest pushed out.
func TestRememberedRelabelsStayBounded(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
	r := newRecentRelabels(clk)
	for i := range 1000 {
		r.heard(Key{AccountID: LocalAccount, TraposID: fmt.Sprintf("6:l%d", i)}, fmt.Sprintf("6:l%d", i+1), time.Time{})
	}
	require.Len(t, r.trails, 1)
	for _, t0 := range r.trails {
		assert.Len(t, t0.former, maxFormerIDs)
		assert.Equal(t, "6:l1000", t0.to)
	}
	assert.Equal(t, "6:l1000", r.answer(Key{AccountID: LocalAccount, TraposID: "6:l999"}).RelabelledTo)
	assert.Nil(t, r.answer(Key{AccountID: LocalAccount, TraposID: "6:l0"}), "pushed out of the trail")

	for i := range maxRelabelledComputers + 10 {
		clk.Advance(time.Millisecond)
		r.heard(Key{AccountID: LocalAccount, TraposID: fmt.Sprintf("%d:a", 100+i)}, fmt.Sprintf("%d:b", 100+i), time.Time{})
	}
	assert.Len(t, r.trails, maxRelabelledComputers)
	assert.Nil(t, r.answer(Key{AccountID: LocalAccount, TraposID: "100:a"}), "the oldest pushed out")
	assert.NotNil(t, r.answer(Key{AccountID: LocalAccount, TraposID: fmt.Sprintf("%d:a", 100+maxRelabelledComputers+9)}))

	clk.Advance(RelabelFollowWindow)
	r.heard(Key{AccountID: LocalAccount, TraposID: "9:x"}, "9:y", time.Time{})
	assert.Len(t, r.trails, 1, "room made by the expired ones")
}

// A replica's withdrawal names its computer by the claim's key, as its writer wrote it: any
// client of the claims bucket may write one naming a traposId no hello takes (a label of
// 4 KiB, as long as a NATS subject may be, or holding a control character) or an account no
// account's name is. No caller reaches such a computer, so its relabel is not remembered: a
// flood of them, from a 4 KiB id each, kept up to maxRelabelledComputers trails of
// maxFormerIDs such ids and a 4 KiB account each (about 150 MiB), where the ids a hello takes
// are at most cctext.MaxTraposIDBytes. A relabel of a longest id a hello takes is remembered.
func TestARelabelOfAnIDNoHelloTakesIsNotRemembered(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
	r := newRecentRelabels(clk)
	long := strings.Repeat("x", 4096)
	for _, k := range []Key{
		{AccountID: LocalAccount, TraposID: "6:" + long},
		{AccountID: LocalAccount, TraposID: "6:door\x1b[2J"},
		{AccountID: LocalAccount, TraposID: "06:door"},
		{AccountID: long, TraposID: "6:door"},
		{AccountID: "Bob Smith", TraposID: "6:door"},
	} {
		r.heard(k, "6:cellar", time.Time{})
		assert.Empty(t, r.trails, "%.40q in %.40q", k.TraposID, k.AccountID)
	}

	longest := "6:" + strings.Repeat("x", cctext.MaxTraposIDBytes-2)
	r.heard(Key{AccountID: "bob", TraposID: longest}, "6:cellar", time.Time{})
	pe := r.answer(Key{AccountID: "bob", TraposID: longest})
	require.NotNil(t, pe)
	assert.Equal(t, "6:cellar", pe.RelabelledTo)
}

// One account relabelling computers in a loop (a program with the password, or an account
// with many credentials: 5000 a second from one address against the real gateway) pushes out
// its own trails once it holds the most, not another account's: bob's callers still hear
// where his computers went, and mallory's flood keeps the memory bounded as before.
func TestOneAccountsRelabelFloodPushesOutItsOwnTrails(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
	r := newRecentRelabels(clk)
	for i := range 10 {
		r.heard(Key{AccountID: "bob", TraposID: fmt.Sprintf("%d:keller", i)}, fmt.Sprintf("%d:cellar", i), time.Time{})
	}
	for i := range 2 * maxRelabelledComputers {
		clk.Advance(time.Millisecond)
		r.heard(Key{AccountID: "mallory", TraposID: fmt.Sprintf("%d:a", 100+i)}, fmt.Sprintf("%d:b", 100+i), time.Time{})
	}
	assert.Len(t, r.trails, maxRelabelledComputers)
	for i := range 10 {
		pe := r.answer(Key{AccountID: "bob", TraposID: fmt.Sprintf("%d:keller", i)})
		if assert.NotNil(t, pe, "bob's computer %d's trail pushed out by mallory's flood", i) {
			assert.Equal(t, fmt.Sprintf("%d:cellar", i), pe.RelabelledTo)
		}
	}
	assert.Nil(t, r.answer(Key{AccountID: "mallory", TraposID: "100:a"}), "mallory's oldest pushed out")
	assert.NotNil(t, r.answer(Key{AccountID: "mallory", TraposID: fmt.Sprintf("%d:a", 100+2*maxRelabelledComputers-1)}))

	// The account holding the most gives way, whoever adds: bob's relabels now push out
	// mallory's oldest until the two hold as many.
	for i := range 20 {
		clk.Advance(time.Millisecond)
		r.heard(Key{AccountID: "bob", TraposID: fmt.Sprintf("%d:x", 50+i)}, fmt.Sprintf("%d:y", 50+i), time.Time{})
	}
	assert.Len(t, r.trails, maxRelabelledComputers)
	assert.NotNil(t, r.answer(Key{AccountID: "bob", TraposID: "0:keller"}))
	assert.NotNil(t, r.answer(Key{AccountID: "bob", TraposID: "69:x"}))
}

// Making room takes the trail that a walk over every trail takes (the rule as it was written
// first: the expired ones, then the oldest of the account that holds the most, the newcomer's
// when it holds as many), whatever the order of relabels, their times, hellos and answers
// that drop trails: a few thousand random ones on a memory of 16 trails in three accounts,
// checked against the walk at each relabel that makes room.
func TestMakingRoomTakesTheTrailAWalkOverAllTakes(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
	r := newRecentRelabels(clk)
	r.limit = 16
	rnd := rand.New(rand.NewPCG(7, 48))
	accounts := []string{LocalAccount, "bob", "mallory"}
	key := func() Key {
		return Key{AccountID: accounts[rnd.IntN(len(accounts))], TraposID: fmt.Sprintf("%d:l%d", rnd.IntN(30), rnd.IntN(3))}
	}
	made, pushedOut := 0, 0
	for range 5000 {
		clk.Advance(time.Duration(rnd.IntN(2000)) * time.Millisecond)
		k := key()
		switch op := rnd.IntN(10); {
		case op < 7:
			at := time.Time{}
			if rnd.IntN(2) == 0 { // another replica's, read late, some before the window
				at = clk.Now().Add(-time.Duration(rnd.IntN(int(RelabelFollowWindow/time.Second)+10)) * time.Second)
			}
			to := fmt.Sprintf("%s:l%d", strings.SplitN(k.TraposID, ":", 2)[0], rnd.IntN(3))
			if r.trails[keyOfRelabel(k)] == nil && len(r.trails) >= r.limit && RelabelledTo(k.TraposID, to) != "" &&
				clk.Now().Sub(at) < RelabelFollowWindow {
				before := make(map[relabelKey]time.Time)
				for rk, t := range r.trails {
					before[rk] = t.at
				}
				kept, takeable := walkMakingRoom(before, clk.Now(), k.AccountID, r.limit)
				r.heard(k, to, at)
				made++
				took := 0
				for rk := range kept {
					if r.trails[rk] == nil {
						took++
						assert.True(t, takeable[rk], "took %v, which the walk would not (it takes one of %v)", rk, takeable)
					}
				}
				assert.LessOrEqual(t, took, 1)
				pushedOut += took
				assert.Len(t, r.trails, len(kept)-took+1)
			} else {
				r.heard(k, to, at)
			}
		case op < 8:
			r.connected(k)
		case op < 9:
			r.left(k)
		default:
			r.answer(k)
		}
		requireHeapsHoldTheTrails(t, r)
	}
	t.Logf("%d relabels made room, %d pushed a trail out", made, pushedOut)
	assert.Greater(t, pushedOut, 100, "relabels that pushed a trail out")
}

// walkMakingRoom is the rule of makeRoomLocked as a walk over the trails (their at, by key):
// the trails it keeps after dropping the expired ones, and those of them it may take then,
// any one of which (the oldest of an account that holds the most, newcomer's when it holds as
// many; ties in either are taken in a map's order by the walk); none when there is room.
func walkMakingRoom(trails map[relabelKey]time.Time, now time.Time, newcomer string, limit int) (kept, takeable map[relabelKey]bool) {
	kept, takeable = make(map[relabelKey]bool), make(map[relabelKey]bool)
	held := make(map[string]int)
	for rk, at := range trails {
		if now.Sub(at) < RelabelFollowWindow {
			kept[rk] = true
			held[rk.accountID]++
		}
	}
	if len(kept) < limit {
		return kept, takeable
	}
	most := 0
	for _, n := range held {
		most = max(most, n)
	}
	oldest := make(map[string]time.Time)
	for rk := range kept {
		if (held[newcomer] == most) != (rk.accountID == newcomer) || held[rk.accountID] != most {
			continue
		}
		if o, ok := oldest[rk.accountID]; !ok || trails[rk].Before(o) {
			oldest[rk.accountID] = trails[rk]
		}
	}
	for rk := range kept {
		if o, ok := oldest[rk.accountID]; ok && trails[rk].Equal(o) {
			takeable[rk] = true
		}
	}
	return kept, takeable
}

// requireHeapsHoldTheTrails checks that r's heaps and account sizes hold exactly its trails,
// each where it says, in heap order.
func requireHeapsHoldTheTrails(t *testing.T, r *recentRelabels) {
	t.Helper()
	require.Equal(t, len(r.trails), r.byAge.Len())
	held, most := 0, 0
	for accountID, h := range r.byAccount {
		require.Positive(t, h.Len(), accountID)
		require.Contains(t, r.sizes.holding[h.Len()], accountID)
		held += h.Len()
		most = max(most, h.Len())
		requireHeapOrder(t, h)
	}
	require.Equal(t, len(r.trails), held)
	require.Equal(t, most, r.sizes.most)
	requireHeapOrder(t, &r.byAge)
	for rk, tr := range r.trails {
		require.Equal(t, rk, tr.key)
		require.Same(t, tr, r.byAge.trails[tr.byAge])
		require.Same(t, tr, r.byAccount[rk.accountID].trails[tr.inAccount])
	}
}

func requireHeapOrder(t *testing.T, h *trailHeap) {
	t.Helper()
	for i := 1; i < h.Len(); i++ {
		require.False(t, h.Less(i, (i-1)/2), "trail %d is older than its parent", i)
	}
}

// Another replica's relabel is as old as the withdrawal of its claim: one read again later (the
// bucket read anew after a reconnection to NATS) is not taken for a new one. One older than
// the trail's latest adds its id to the former ones and leaves the latest; one past the
// window records nothing.
func TestARelabelHeardLateIsAsOldAsItsWithdrawal(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
	r := newRecentRelabels(clk)
	key := func(traposID string) Key { return Key{AccountID: LocalAccount, TraposID: traposID} }
	to := func(traposID string) string {
		if pe := r.answer(key(traposID)); pe != nil {
			return pe.RelabelledTo
		}
		return ""
	}
	r.heard(key("6:keller"), "6:cellar", clk.Now())
	r.heard(key("6:attic"), "6:keller", clk.Now().Add(-30*time.Second))
	assert.Equal(t, "6:cellar", to("6:keller"))
	assert.Equal(t, "6:cellar", to("6:attic"), "attic became keller, which became cellar")
	assert.Empty(t, to("6:cellar"))

	r.heard(key("7:old"), "7:new", clk.Now().Add(-RelabelFollowWindow))
	assert.Empty(t, to("7:old"), "relabelled a minute ago")
	clk.Advance(RelabelFollowWindow - time.Second)
	r.heard(key("8:old"), "8:new", clk.Now().Add(time.Hour)) // a NATS server's clock ahead
	assert.Equal(t, "8:new", to("8:old"))
	clk.Advance(RelabelFollowWindow)
	assert.Empty(t, to("8:old"), "a minute after it was read, not an hour and a minute")
}

// BenchmarkRelabelFlood: one relabel of another computer each, with the memory full of one
// account's trails, so that each pushes that account's oldest out (a flood, as in
// TestOneAccountsRelabelFloodPushesOutItsOwnTrails): the cost of one relabel to the gateway.
func BenchmarkRelabelFlood(b *testing.B) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
	r := newRecentRelabels(clk)
	for i := range 10 {
		r.heard(Key{AccountID: "bob", TraposID: fmt.Sprintf("%d:keller", i)}, fmt.Sprintf("%d:cellar", i), time.Time{})
	}
	from := make([]Key, maxRelabelledComputers+b.N)
	to := make([]string, len(from))
	for i := range from {
		from[i] = Key{AccountID: "mallory", TraposID: fmt.Sprintf("%d:a", 100+i)}
		to[i] = fmt.Sprintf("%d:b", 100+i)
	}
	for i := range maxRelabelledComputers {
		clk.Advance(time.Millisecond)
		r.heard(from[i], to[i], time.Time{})
	}
	b.ResetTimer()
	for i := maxRelabelledComputers; i < len(from); i++ {
		clk.Advance(time.Millisecond)
		r.heard(from[i], to[i], time.Time{})
	}
	b.StopTimer()
	require.Len(b, r.trails, maxRelabelledComputers)
	require.NotNil(b, r.answer(Key{AccountID: "bob", TraposID: "0:keller"}), "bob's trail pushed out by mallory's flood")
}
