package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
