package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit/daemonfake"
)

// slowListing is the gateway of a host under load: its list of connected computers, which
// the hint of a not_connected reads, comes only once the ping that asked for it has run out
// of time (its context is done), as a slow gateway's over the stdio bridge would.
type slowListing struct {
	*daemonfake.Local
	mu      sync.Mutex
	pinging context.Context
}

func (l *slowListing) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	l.mu.Lock()
	l.pinging = ctx
	l.mu.Unlock()
	return l.Local.Request(ctx, traposID, typ, payload, timeout)
}

func (l *slowListing) Computers(ctx context.Context) ([]computer.Computer, error) {
	l.mu.Lock()
	pinging := l.pinging
	l.mu.Unlock()
	if pinging != nil {
		<-pinging.Done()
	}
	return l.Local.Computers(ctx)
}

// TestPingWaitRunsOutAsNotConnected: a ping with wait whose last look for the computer ends
// after its time ran out (and after the next poll was due) answers not_connected and that it
// did not connect within the wait; it asked again with no time left, and answered "did not
// answer ping in time", a timeout of a computer that was never there, as often as Go's
// select picked the poll over the deadline.
func TestPingWaitRunsOutAsNotConnected(t *testing.T) {
	l := &slowListing{Local: daemonfake.NewLocal(nil)}
	s := session(t, l)
	// Each try is a coin toss without the fix: both the deadline and the poll are due.
	for range 8 {
		res := callTool(t, s, "ping", map[string]any{"traposId": "6:away", "wait": true, "timeoutMs": 2 * connectPoll.Milliseconds()})
		require.True(t, res.IsError)
		assert.Contains(t, text(res), "not_connected: computer 6:away is not connected")
		assert.Contains(t, text(res), waitedAlready)
	}
}

// countedListing counts the listings of the connected computers (which a not_connected's hint
// reads) on the gateway it stands before.
type countedListing struct {
	*daemonfake.Local
	listings atomic.Int32
}

func (l *countedListing) Computers(ctx context.Context) ([]computer.Computer, error) {
	l.listings.Add(1)
	return l.Local.Computers(ctx)
}

// TestPingWaitListsTheComputersOnceAtMost: ping with wait lists the connected computers only
// for the answer it gives: not at all for a computer that connects during the wait, once for
// one that does not (whose not_connected is hinted as before). It listed every computer of the
// gateway at each of its polls, every 250 ms.
func TestPingWaitListsTheComputersOnceAtMost(t *testing.T) {
	l := &countedListing{Local: daemonfake.NewLocal(nil)}
	l.List = []computer.Computer{{TraposID: "7:"}}
	const away = 3 // the pings that find the computer not connected
	l.Before = func(_ context.Context, step int, _ string) error {
		if step <= away {
			return computer.NotConnected("7:")
		}
		return nil
	}
	s := session(t, l)

	res := callTool(t, s, "ping", map[string]any{"traposId": "7:", "wait": true, "timeoutMs": 60000})
	require.False(t, res.IsError, text(res))
	assert.Zero(t, l.listings.Load(), "the wait found the computer: no answer to hint")

	res = callTool(t, s, "ping", map[string]any{"traposId": "6:away", "wait": true, "timeoutMs": 3 * connectPoll.Milliseconds()})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "not_connected: computer 6:away is not connected; trap-sandbox computers lists the connected ones")
	assert.Contains(t, text(res), waitedAlready)
	assert.Equal(t, int32(1), l.listings.Load(), "the answer given is hinted once")
}

// pollsRefused is a gateway on which a ping's second look for the computer (a poll of ping's
// wait) answers an error of its own, so that a wait that polls ends at once and says so.
type pollsRefused struct {
	*daemonfake.Local
	pings atomic.Int32
}

// polledAgain is what pollsRefused answers a second ping.
const polledAgain = "the wait asked again"

func (l *pollsRefused) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	if l.pings.Add(1) > 1 {
		return nil, &protocol.Error{Code: protocol.CodeInternal, Message: polledAgain}
	}
	return l.Local.Request(ctx, traposID, typ, payload, timeout)
}

// TestPingWaitForANameWithNoIDAnswersAtOnce: ping with wait of "küche" (no computer id) waited
// its whole timeoutMs, though no computer ever connects by a name with no id, and then said
// only that it did not connect within the wait. It answers at once, with what a traposId is
// (computer.NoIDHint), or the connected computer a label names ("did you mean").
func TestPingWaitForANameWithNoIDAnswersAtOnce(t *testing.T) {
	l := &pollsRefused{Local: daemonfake.NewLocal(nil)}
	l.List = []computer.Computer{{TraposID: "7:"}, {TraposID: "5:kitchen"}}
	s := session(t, l)
	for _, tc := range []struct{ name, hint string }{
		{"küche", computer.NoIDHint},
		{":küche", computer.NoIDHint},
		{"kitchen", `; did you mean "5:kitchen"?`},
	} {
		l.pings.Store(0)
		res := callTool(t, s, "ping", map[string]any{"traposId": tc.name, "wait": true, "timeoutMs": 60000})
		require.True(t, res.IsError)
		assert.Equal(t, "not_connected: computer "+tc.name+" is not connected"+tc.hint, text(res), "no poll, no wait")
	}
}

// unlinkedPollsRefused is pollsRefused of a gateway whose accounts hold no computer credential
// (computer.Linker).
type unlinkedPollsRefused struct{ *pollsRefused }

func (unlinkedPollsRefused) ComputerCredentials(context.Context, string) (account.Holding, error) {
	return account.HoldsNone, nil
}

// TestAnAccountWithNoComputerLinkedIsNotToldToWaitForAReboot: an agent whose token is an
// account's that has no computer linked was told, of any computer it named, "if it is
// rebooting, it is back within seconds: ping with wait true waits for it" before how to link
// one, and ping with wait then waited its whole timeoutMs and said that timeoutMs waits
// longer: no computer of that account connects until one is linked. Both answer at once
// with how to link one.
func TestAnAccountWithNoComputerLinkedIsNotToldToWaitForAReboot(t *testing.T) {
	l := &pollsRefused{Local: daemonfake.NewLocal(nil)}
	l.List = nil
	m := New(computer.New(unlinkedPollsRefused{l}), nil, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.handler.ServeHTTP(w, r.WithContext(account.WithCaller(r.Context(), account.Caller{Account: "bob"})))
	}))
	defer srv.Close()
	s := connectHTTP(t, srv)
	want := "not_connected: computer 5:küche is not connected; " + computer.NoneLinked("bob", account.HoldsNone)
	for _, args := range []map[string]any{
		{"traposId": "5:küche"},
		{"traposId": "5:küche", "wait": true, "timeoutMs": 60000},
	} {
		l.pings.Store(0)
		res := callTool(t, s, "ping", args)
		require.True(t, res.IsError)
		assert.Equal(t, want, text(res), "%v", args)
	}
	l.pings.Store(0)
	res := callTool(t, s, "computer_info", map[string]any{"traposId": "5:küche"})
	require.True(t, res.IsError)
	assert.Equal(t, want, text(res))
}
