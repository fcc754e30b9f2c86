package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit/daemonfake"
)

// lastPingInFlight is a gateway to a computer that is not connected, under load: a ping's
// first look for it answers not_connected, and the next ones are still in flight when the
// wait's time runs out (a ping sent with the wait's last milliseconds, over the stdio bridge's
// HTTP), ending as the deadline that passed.
type lastPingInFlight struct {
	*daemonfake.Local
	pings atomic.Int32
}

func (l *lastPingInFlight) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	if l.pings.Add(1) == 1 {
		return l.Local.Request(ctx, traposID, typ, payload, timeout)
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// pingPolled calls ping with args (wait true) on s, whose waits clk times, and moves clk on by
// connectPoll each time the wait has set its timers (its timeoutMs, its next poll), until ping
// answers.
func pingPolled(t *testing.T, s *sdk.ClientSession, clk *clock.Fake, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	answered := make(chan struct{})
	var res *sdk.CallToolResult
	var err error
	go func() {
		defer close(answered)
		res, err = s.CallTool(t.Context(), &sdk.CallToolParams{Name: "ping", Arguments: args})
	}()
	hangGuard := time.AfterFunc(10*time.Second, func() { t.Error("ping did not answer") })
	defer hangGuard.Stop()
	for clk.WaitArmed(2, answered) {
		clk.Advance(connectPoll)
	}
	require.NoError(t, err)
	return res
}

// TestPingWaitRunsOutAsNotConnected: a ping with wait whose last look for the computer ends
// after its time ran out answers not_connected and that it did not connect within the wait.
// It answered that look's own timeout, "did not answer ping in time" (or, sent with no time
// left as the poll and the deadline were due together, "no time left to send ping"), a
// timeout of a computer that was never there.
func TestPingWaitRunsOutAsNotConnected(t *testing.T) {
	l := &lastPingInFlight{Local: daemonfake.NewLocal(nil)}
	clk := clock.NewFake(testStart)
	s := sessionWatching(t, l, nil, clk)
	res := pingPolled(t, s, clk, map[string]any{"traposId": "6:away", "wait": true, "timeoutMs": 2 * connectPoll.Milliseconds()})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "not_connected: computer 6:away is not connected")
	assert.Contains(t, text(res), waitedAlready+"the 500 ms waited (timeoutMs waits longer, at most 60000)")

	// A wait of the most already is told more time is no fix, as every call that timed out
	// is: told "timeoutMs waits longer, at most 60000", an agent waited a minute again.
	res = pingPolled(t, sessionWatching(t, daemonfake.NewLocal(nil), nil, clk), clk, map[string]any{"traposId": "6:away", "wait": true, "timeoutMs": 60000})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), waitedAlready+"the 60000 ms waited (timeoutMs was 60000 already, the most a call may take)")
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
	clk := clock.NewFake(testStart)
	s := sessionWatching(t, l, nil, clk)

	res := pingPolled(t, s, clk, map[string]any{"traposId": "7:", "wait": true, "timeoutMs": 60000})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, float64(3*connectPoll.Milliseconds()), structured(t, res.StructuredContent)["waitedMs"], "found at its third poll")
	assert.Zero(t, l.listings.Load(), "the wait found the computer: no answer to hint")

	res = pingPolled(t, s, clk, map[string]any{"traposId": "6:away", "wait": true, "timeoutMs": 3 * connectPoll.Milliseconds()})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "within the 750 ms waited")
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
	m := New(computer.New(unlinkedPollsRefused{l}), nil, clock.Real{}, nil)
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

// relabelledOnce is a gateway whose computer 6:keller was relabelled to 6:cellar a moment
// ago: a ping of 6:keller hears so, and a second one (a poll of ping's wait) is refused.
type relabelledOnce struct{ *pollsRefused }

func (l relabelledOnce) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	if l.pings.Add(1) > 1 {
		return nil, &protocol.Error{Code: protocol.CodeInternal, Message: polledAgain}
	}
	return nil, &protocol.Error{Code: protocol.CodeNotConnected,
		Message: "computer 6:keller was relabelled: it is 6:cellar now; ask it by that id", RelabelledTo: "6:cellar"}
}

// TestPingWaitForARelabelledComputerAnswersAtOnce: ping with wait of a computer's old name
// just after it was relabelled in game answers at once with its new one: it never comes back
// under the old name, and the wait ran its whole timeoutMs to say so.
func TestPingWaitForARelabelledComputerAnswersAtOnce(t *testing.T) {
	l := relabelledOnce{&pollsRefused{Local: daemonfake.NewLocal(nil)}}
	s := session(t, l)
	res := callTool(t, s, "ping", map[string]any{"traposId": "6:keller", "wait": true, "timeoutMs": 60000})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "not_connected: computer 6:keller was relabelled: it is 6:cellar now; ask it by that id")
	assert.NotContains(t, text(res), polledAgain, "no poll")
	assert.NotContains(t, text(res), waitedAlready, "no wait")
}

// relabelledBack is a gateway whose computer 6:keller was relabelled to 6:cellar, then back
// (label set keller): 6:cellar's computer.info says label keller, and a ping of 6:keller hears
// of the relabel for its first relabelPings, then finds the computer back under it. With
// goneBack, 6:cellar has said bye relabelled to 6:keller as its computer.info is sent: the
// info is not_connected naming 6:keller.
type relabelledBack struct {
	label        string
	relabelPings int32
	goneBack     bool
	pings, infos atomic.Int32
}

func (l *relabelledBack) Computers(context.Context) ([]computer.Computer, error) {
	return []computer.Computer{{AccountID: account.Local, TraposID: "6:cellar"}}, nil
}

func (l *relabelledBack) Request(_ context.Context, traposID, typ string, _ json.RawMessage, _ time.Duration) (json.RawMessage, error) {
	switch {
	case typ == protocol.TypeComputerInfo && traposID == "6:cellar" && l.goneBack:
		l.infos.Add(1)
		return nil, &protocol.Error{Code: protocol.CodeNotConnected,
			Message: "computer 6:cellar was relabelled: it is 6:keller now; ask it by that id", RelabelledTo: "6:keller"}
	case typ == protocol.TypeComputerInfo && traposID == "6:cellar":
		l.infos.Add(1)
		return json.RawMessage(`{"traposId":"6:cellar","id":6,"label":"` + l.label + `"}`), nil
	case typ == protocol.TypePing && traposID == "6:keller" && l.pings.Add(1) > l.relabelPings:
		return json.RawMessage(`{"traposId":"6:keller"}`), nil
	case typ == protocol.TypePing && traposID == "6:keller":
		return nil, &protocol.Error{Code: protocol.CodeNotConnected,
			Message: "computer 6:keller was relabelled: it is 6:cellar now; ask it by that id", RelabelledTo: "6:cellar"}
	}
	return nil, &protocol.Error{Code: protocol.CodeInternal, Message: "not asked for: " + typ + " of " + traposID}
}

// TestPingWaitForAComputerRelabelledBackWaitsForIt: ping with wait of a computer's old
// traposId whose computer has been given its old label back (an agent's label set keller,
// after label set cellar) waits for it to connect under it, asking its computer.info once:
// it answered at once "it is 6:cellar now; ask it by that id", where the run that set the label
// had just said it connects again as 6:keller. A computer whose label is still another is
// answered at once, as before.
func TestPingWaitForAComputerRelabelledBackWaitsForIt(t *testing.T) {
	l := &relabelledBack{label: "keller", relabelPings: 3}
	clk := clock.NewFake(testStart)
	res := pingPolled(t, sessionWatching(t, l, nil, clk), clk, map[string]any{"traposId": "6:keller", "wait": true, "timeoutMs": 60000})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "6:keller", structured(t, res.StructuredContent)["traposId"])
	assert.Equal(t, float64(3*connectPoll.Milliseconds()), structured(t, res.StructuredContent)["waitedMs"], "found at its third poll")
	assert.Equal(t, int32(1), l.infos.Load(), "6:cellar asked once")

	// Gone from 6:cellar to 6:keller between the ping and its computer.info (the info's
	// not_connected names 6:keller), it is coming back too: waited for, where the ping
	// answered "it is 6:cellar now" of a computer connected as 6:keller a moment later.
	l = &relabelledBack{goneBack: true, relabelPings: 1}
	res = pingPolled(t, sessionWatching(t, l, nil, clk), clk, map[string]any{"traposId": "6:keller", "wait": true, "timeoutMs": 60000})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, float64(connectPoll.Milliseconds()), structured(t, res.StructuredContent)["waitedMs"], "found at its first poll")

	// Not back within the wait (its daemon looks at its label every 15 s, longer than the
	// default wait), it is said to be coming back: the relabel's words, "ask it by that id",
	// told the agent to stop waiting for the id it had waited for.
	l = &relabelledBack{label: "keller", relabelPings: 1000}
	res = pingPolled(t, sessionWatching(t, l, nil, clk), clk, map[string]any{"traposId": "6:keller", "wait": true, "timeoutMs": 1000})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "not_connected: computer 6:keller was relabelled, then given its label back: it is 6:cellar until its daemon next looks at its label, "+
		"then 6:keller again; it did not connect within the 1000 ms waited (timeoutMs waits longer, at most 60000)")
	assert.Equal(t, int32(1), l.infos.Load(), "6:cellar asked once")

	l = &relabelledBack{label: "cellar", relabelPings: 3}
	res = callTool(t, session(t, l), "ping", map[string]any{"traposId": "6:keller", "wait": true, "timeoutMs": 60000})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "not_connected: computer 6:keller was relabelled: it is 6:cellar now; ask it by that id")
	assert.NotContains(t, text(res), waitedAlready, "no wait")
	assert.Equal(t, int32(1), l.pings.Load(), "no poll")
}

// comesBack is a gateway to the stand-in computer, which is away (rebooting) for its first
// away requests: not connected, and not listed.
type comesBack struct {
	*daemonfake.Local
	away     int32
	requests atomic.Int32
}

func (l *comesBack) Computers(ctx context.Context) ([]computer.Computer, error) {
	if l.requests.Load() < l.away {
		return []computer.Computer{}, nil
	}
	return l.Local.Computers(ctx)
}

func (l *comesBack) Request(ctx context.Context, traposID, typ string, payload json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	if l.requests.Add(1) <= l.away {
		return nil, computer.NotConnected(traposID)
	}
	return l.Local.Request(ctx, traposID, typ, payload, timeout)
}

// TestPingWaitReadsAShownFormAtEachPoll: ping with wait of a computer by its shown form
// (7:kitchen\x20, the computer labelled "kitchen ", as "did you mean" names it) while the
// computer is away finds it once it is back: the form was read once, before the call, when no
// computer had it, so the wait waited for a computer named 7:kitchen\x20 and ran out.
func TestPingWaitReadsAShownFormAtEachPoll(t *testing.T) {
	l := &comesBack{Local: daemonfake.NewLocal(nil), away: 2}
	l.Label = "kitchen "
	l.List[0].TraposID = l.TraposID()
	clk := clock.NewFake(testStart)
	s := sessionWatching(t, l, nil, clk)
	res := pingPolled(t, s, clk, map[string]any{"traposId": `7:kitchen\x20`, "wait": true, "timeoutMs": 60000})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "7:kitchen ", structured(t, res.StructuredContent)["traposId"])
	assert.Equal(t, float64(2*connectPoll.Milliseconds()), structured(t, res.StructuredContent)["waitedMs"], "found at its second poll")
}
