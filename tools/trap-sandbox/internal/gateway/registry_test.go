package gateway

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/clock"
)

func sessionFor(account, traposID string) *Session {
	return &Session{key: Key{AccountID: account, TraposID: traposID}, authenticated: true}
}

func TestRegistryNewestWins(t *testing.T) {
	r := newRegistry(nil, clock.Real{})
	first := sessionFor(LocalAccount, "7:")
	second := sessionFor(LocalAccount, "7:")

	assert.Nil(t, r.Register(first, nil))
	assert.Same(t, first, r.Lookup(Key{LocalAccount, "7:"}))

	assert.Same(t, first, r.Register(second, nil), "the older session is handed back to be closed")
	assert.Same(t, second, r.Lookup(Key{LocalAccount, "7:"}))

	r.Unregister(first) // the replaced session ending must not evict its successor
	assert.Same(t, second, r.Lookup(Key{LocalAccount, "7:"}))

	assert.Nil(t, r.Register(second, nil), "registering the same session again replaces nothing")

	r.Unregister(second)
	assert.Nil(t, r.Lookup(Key{LocalAccount, "7:"}))
	assert.Empty(t, r.Sessions())
}

func TestRegistryKeysByAccountAndID(t *testing.T) {
	r := newRegistry(nil, clock.Real{})
	a := sessionFor("a", "7:")
	b := sessionFor("b", "7:")
	c := sessionFor("a", "7:x")
	for _, s := range []*Session{a, b, c} {
		assert.Nil(t, r.Register(s, nil))
	}
	assert.Len(t, r.Sessions(), 3)
	assert.Same(t, b, r.Lookup(Key{"b", "7:"}))
	assert.Nil(t, r.Lookup(Key{"c", "7:"}))
}

func TestSortComputers(t *testing.T) {
	cs := []Computer{{AccountID: "b", TraposID: "1:"}, {AccountID: "a", TraposID: "2:"}, {AccountID: "a", TraposID: "10:"}}
	sortComputers(cs)
	assert.Equal(t, []Computer{{AccountID: "a", TraposID: "2:"}, {AccountID: "a", TraposID: "10:"}, {AccountID: "b", TraposID: "1:"}}, cs)
}

// recordingCluster is a Cluster that records what the registry tells it.
type recordingCluster struct {
	Cluster // the rest is not called by these tests
	calls   []string
}

func (c *recordingCluster) Claim(comp Computer, credential string, hold uint64) {
	c.calls = append(c.calls, fmt.Sprintf("claim %s/%s %q hold %d", comp.AccountID, comp.TraposID, credential, hold))
}

func (c *recordingCluster) Release(k Key, hold uint64, _ Bye) {
	c.calls = append(c.calls, fmt.Sprintf("release %s/%s hold %d", k.AccountID, k.TraposID, hold))
}

// The registry tells the cluster each socket it holds by a hold number of its own, so a claim
// released or evicted for an older socket of a computer leaves its newer socket alone.
func TestRegistryClaimsAndReleasesByHold(t *testing.T) {
	c := &recordingCluster{}
	r := newRegistry(c, clock.Real{})
	k := Key{LocalAccount, "7:"}
	first, second := sessionFor(LocalAccount, "7:"), sessionFor(LocalAccount, "7:")
	first.credential = "sel1"
	first.gw, second.gw = &Gateway{}, &Gateway{} // Computer() names the gateway's replica

	assert.Nil(t, r.Register(first, nil))
	assert.Same(t, first, r.Register(second, nil))
	r.Unregister(first) // replaced already: its claim is not the computer's any more
	assert.Nil(t, r.lookupHold(k, 1), "an Evict judged on the first socket finds nothing")
	assert.Same(t, second, r.lookupHold(k, 2))
	r.Unregister(second)
	assert.Equal(t, []string{`claim local/7: "sel1" hold 1`, `claim local/7: "" hold 2`, "release local/7: hold 2"}, c.calls)
}

// claimingCluster keeps the claims as the NATS router does (the latest Claim of a computer is
// its claim; a Release withdraws it when its hold is still the claim), and can hold the next
// Claim before it takes effect.
type claimingCluster struct {
	Cluster                // the rest is not called by these tests
	claiming chan struct{} // closed when a Claim is held, nil: Claims are not held
	proceed  chan struct{} // closed to let the held Claim take effect

	mu   sync.Mutex
	held map[Key]uint64
}

func (c *claimingCluster) Claim(comp Computer, _ string, hold uint64) {
	if c.claiming != nil {
		close(c.claiming)
		c.claiming = nil
		<-c.proceed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held[Key{comp.AccountID, comp.TraposID}] = hold
}

func (c *claimingCluster) Release(k Key, hold uint64, _ Bye) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[k] == hold {
		delete(c.held, k)
	}
}

func (c *claimingCluster) claims() map[Key]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.held)
}

// A socket that closes while its hello's claim is on its way to the cluster (registered, its
// Claim not arrived yet) leaves no claim behind: its close's Release reached the cluster
// first, so the registry withdraws the claim once it is written. Before, the claim stayed,
// and the other replicas listed the computer on this one, which answered not_connected.
func TestASocketClosedBeforeItsClaimArrivesLeavesNoClaim(t *testing.T) {
	c := &claimingCluster{claiming: make(chan struct{}), proceed: make(chan struct{}), held: map[Key]uint64{}}
	claiming := c.claiming
	r := newRegistry(c, clock.Real{})
	s := sessionFor(LocalAccount, "7:")
	s.gw = &Gateway{}
	registered := make(chan struct{})
	go func() {
		defer close(registered)
		r.Register(s, nil)
	}()
	<-claiming
	r.Unregister(s) // the socket closed meanwhile
	close(c.proceed)
	<-registered
	assert.Empty(t, c.claims(), "the closed socket's claim is withdrawn")
	assert.Nil(t, r.Lookup(Key{LocalAccount, "7:"}))
}

// A computer of an account that holds its whole share says hello again (newest wins) without
// taking another place, and its place stays its own while the hello is on its way, even if
// its old socket leaves meanwhile: another computer of the account is refused until the
// hello ends, which gives the place back if it registered nothing.
func TestARegisteredComputerKeepsItsPlaceWhileItSaysHelloAgain(t *testing.T) {
	const most = 2
	r := newRegistry(nil, clock.Real{})
	a, b := sessionFor("alice", "7:a"), sessionFor("alice", "7:b")
	for _, s := range []*Session{a, b} {
		place, _, ok := r.takeAccountPlace(s.key, most)
		require.True(t, ok)
		assert.Nil(t, r.Register(s, place))
	}
	_, held, ok := r.takeAccountPlace(Key{"alice", "7:c"}, most)
	assert.False(t, ok, "a third computer")
	assert.Equal(t, most, held)

	again, _, ok := r.takeAccountPlace(a.key, most)
	require.True(t, ok, "7:a saying hello again")
	r.Unregister(a) // its old socket leaves before the new one registers
	_, _, ok = r.takeAccountPlace(Key{"alice", "7:c"}, most)
	assert.False(t, ok, "7:a's place is taken while its hello is on its way")
	newer := sessionFor("alice", "7:a")
	assert.Nil(t, r.Register(newer, again))
	again.release() // taken by Register: nothing to give back
	assert.Equal(t, most, r.accounts["alice"])

	// A hello of 7:a that ends unregistered gives back nothing 7:a still holds; one of a
	// computer no longer connected gives its place back.
	place, _, ok := r.takeAccountPlace(a.key, most)
	require.True(t, ok)
	place.release()
	assert.Equal(t, most, r.accounts["alice"])
	place, _, ok = r.takeAccountPlace(b.key, most)
	require.True(t, ok)
	r.Unregister(b)
	place.release()
	assert.Equal(t, 1, r.accounts["alice"])
	place, _, ok = r.takeAccountPlace(Key{"alice", "7:c"}, most)
	require.True(t, ok, "the place 7:b left")
	place.release()
	assert.Empty(t, r.pending)

	local, _, ok := r.takeAccountPlace(Key{LocalAccount, "9:"}, 0)
	assert.True(t, ok, "local takes no place")
	assert.Nil(t, local)
	local.release()
}

// remoteAccountsCluster is a Cluster whose other replicas hold the computers of remote (by
// traposId, the accounts that have it there).
type remoteAccountsCluster struct {
	Cluster // the rest is not called by these tests
	remote  map[string][]string
}

func (c remoteAccountsCluster) RemoteAccounts(traposID string) []string { return c.remote[traposID] }

func (remoteAccountsCluster) Claim(Computer, string, uint64) {}

// connectedAlone answers in one lookup what Connected and "no other account's" answered in
// two: whether a traposId is connected in an account and in no other, here or on another
// replica (the gateway's own caller's question for each request: account.Caller.OwnWins).
func TestConnectedAloneCountsEveryAccountHereAndElsewhere(t *testing.T) {
	for _, c := range []struct {
		name   string
		here   []string // the accounts with 7: connected on this replica
		remote []string // and on the others
		alone  bool
	}{
		{name: "nowhere"},
		{name: "local's here", here: []string{LocalAccount}, alone: true},
		{name: "local's on another replica", remote: []string{LocalAccount}, alone: true},
		{name: "local's here and there", here: []string{LocalAccount}, remote: []string{LocalAccount}, alone: true},
		{name: "alice's alone", here: []string{"alice"}},
		{name: "local's and alice's here", here: []string{LocalAccount, "alice"}},
		{name: "local's here, alice's on another replica", here: []string{LocalAccount}, remote: []string{"alice"}},
		{name: "local's on another replica, alice's here", here: []string{"alice"}, remote: []string{LocalAccount}},
		{name: "both on another replica", remote: []string{"alice", LocalAccount}},
	} {
		r := newRegistry(remoteAccountsCluster{remote: map[string][]string{"7:": c.remote}}, clock.Real{})
		for _, a := range c.here {
			s := sessionFor(a, "7:")
			s.gw = &Gateway{} // Computer() names the gateway's replica
			r.Register(s, nil)
		}
		assert.Equal(t, c.alone, r.connectedAlone(LocalAccount, "7:"), c.name)
		assert.Equal(t, c.alone, r.connected(Key{LocalAccount, "7:"}) && !connectedInAnotherByWalk(r, LocalAccount, "7:"), c.name+": as the walk over the computers says")
		assert.False(t, r.connectedAlone(LocalAccount, "8:"), c.name+": another traposId")
	}
}

// connectedInAnotherByWalk is whether an account but accountID has traposID, by accountsOf's
// walk over every computer: what connectedAlone's count must agree with.
func connectedInAnotherByWalk(r *registry, accountID, traposID string) bool {
	return slices.ContainsFunc(r.accountsOf(traposID), func(a string) bool { return a != accountID })
}

// TestAnImpostorRacingHellosNeverMakesLocalsComputerAlone: an impostor computer of another
// account connected by local's traposId keeps the gateway's own caller from taking the
// computer for local's alone (be34e398's rule), however hellos race the one lookup: while
// mallory's stays connected, local's computer saying hello again and again (newest wins, the
// old socket leaving after) and eve's impostor coming and going, connectedAlone answers false
// at every call; once both impostors have left, true. Run under -race, it also holds the
// lookup to the registry's lock.
func TestAnImpostorRacingHellosNeverMakesLocalsComputerAlone(t *testing.T) {
	r := newRegistry(nil, clock.Real{})
	require.Nil(t, r.Register(sessionFor(LocalAccount, "7:desk"), nil))
	mallory := sessionFor("mallory", "7:desk")
	require.Nil(t, r.Register(mallory, nil))

	const rounds = 2000
	var wg sync.WaitGroup
	wg.Go(func() { // local's computer saying hello again
		for range rounds {
			old := r.Lookup(Key{LocalAccount, "7:desk"})
			r.Register(sessionFor(LocalAccount, "7:desk"), nil)
			r.Unregister(old)
		}
	})
	wg.Go(func() { // eve's impostor coming and going
		for range rounds {
			eve := sessionFor("eve", "7:desk")
			r.Register(eve, nil)
			r.Unregister(eve)
		}
	})
	alone := 0
	wg.Go(func() {
		for range 4 * rounds {
			if r.connectedAlone(LocalAccount, "7:desk") {
				alone++
			}
		}
	})
	wg.Wait()
	assert.Zero(t, alone, "local's computer taken for alone while mallory's was connected")

	r.Unregister(mallory)
	assert.True(t, r.connectedAlone(LocalAccount, "7:desk"))
	assert.False(t, r.connectedAlone("mallory", "7:desk"))
}
