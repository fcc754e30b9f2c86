package gateway

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/testkit"
)

// TestConnectLinesOfAnAddressAreBounded: a loop saying hello under ever new ids (the shared
// password is on every computer) wrote two INFO lines a hello, 4 000 lines a second. Past
// its address's bucket a line is left out, and a WARN a minute counts them; the bucket
// refills at its rate. A connect line spends two tokens (its own and its disconnect line's).
// A negative rate logs every line.
func TestConnectLinesOfAnAddressAreBounded(t *testing.T) {
	clk := newFakeClock()
	// Pings and idle probes far off: the minute the test lets pass drops no computer.
	metrics := NewMetrics(prometheus.NewRegistry())
	h := newHarness(t, Config{ConnectionLinesRate: 2, ConnectionLinesBurst: 6, Clock: clk, PingPeriod: time.Hour, IdleProbeAfter: time.Hour,
		Metrics: metrics}, nil)
	connected := func() int { return strings.Count(h.logs.String(), `msg="computer connected"`) }
	warning := regexp.MustCompile(`level=WARN msg="computers from this address connect and disconnect faster than the log takes: their lines are left out \(trapos_gateway_limited_total counts them as log_lines\)" module=trapos-cloud-gateway remote=127\.0\.0\.1:\d+ linesLeftOut=(\d+) rate=2 burst=6( suppressedSinceLast=\d+)? repeatsLoggedEvery=1m0s\n`)

	for i := 1; i <= 5; i++ {
		h.connect(t, fmt.Sprintf("%d:", i), "")
	}
	assert.Equal(t, 3, connected(), "the burst")
	warnings := warning.FindAllStringSubmatch(h.logs.String(), -1)
	require.Len(t, warnings, 1, h.logs.String())
	assert.Equal(t, "1", warnings[0][1], "the 4th; the 5th is counted for the next WARN")

	clk.Advance(time.Minute + time.Second) // full again, and the WARN may be written again
	for i := 6; i <= 9; i++ {
		h.connect(t, fmt.Sprintf("%d:", i), "")
	}
	assert.Equal(t, 6, connected())
	warnings = warning.FindAllStringSubmatch(h.logs.String(), -1)
	require.Len(t, warnings, 2, h.logs.String())
	assert.Equal(t, "2", warnings[1][1], "the 5th and the 9th")
	assert.Equal(t, " suppressedSinceLast=1", warnings[1][2])
	assert.Equal(t, 3.0, testutil.ToFloat64(metrics.limits.WithLabelValues(limitLogLines)), "every line left out is counted")

	off := newHarness(t, Config{ConnectionLinesRate: -1, ConnectionLinesBurst: 1}, nil)
	for i := 1; i <= 5; i++ {
		off.connect(t, fmt.Sprintf("%d:", i), "")
	}
	assert.Equal(t, 5, strings.Count(off.logs.String(), `msg="computer connected"`))
}

// TestAFloodDoesNotHideATakeover: the computers of a Minecraft server share its address, so
// a player there could spend the address's line budget with hellos under ever new ids (the
// shared password is in every computer's .settings) and then take 5:küche over: its
// "replaced" line was left out, and the operator read only a WARN's count. A computer whose
// connect line was written has its ending written too, budget or not.
func TestAFloodDoesNotHideATakeover(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, Config{Password: "pw", ConnectionLinesRate: 1, ConnectionLinesBurst: 4, Clock: clk, PingPeriod: time.Hour, IdleProbeAfter: time.Hour}, nil)
	victim := h.connect(t, "5:küche", "pw")
	for i := 1; i <= 20; i++ {
		h.connect(t, fmt.Sprintf("%d:flood", 100+i), "pw")
	}
	require.Contains(t, h.logs.String(), "linesLeftOut=", "the flood spent the address's budget")

	h.connect(t, "5:küche", "pw") // the takeover, past the budget
	victim.expectClose(CloseReplaced, "replaced")
	assert.Contains(t, h.logs.String(), `msg="computer replaced by a newer connection" module=trapos-cloud-gateway remote=127.0.0.1:`)
	assert.Regexp(t, `msg="computer replaced by a newer connection" [^\n]* traposId=5:küche\n`, h.logs.String())
	require.Eventually(t, func() bool {
		return regexp.MustCompile(`msg="computer disconnected" [^\n]*traposId=5:küche code=4009`).MatchString(h.logs.String())
	}, waitLimit, testkit.Poll, "the victim's disconnect line, whose connect line was written")
	assert.Equal(t, 2, strings.Count(h.logs.String(), `msg="computer connected"`),
		"5:küche's and the flood's first (of 4 lines: a connect line holds its ending's too), and the takeover's is left out")
}

// TestAFloodDoesNotHideARefusedCredential: a hello refused for a revoked credential, or for a
// linked one said by another computer id, spent the address's line budget, so a flood of
// hellos under ever new ids with the shared password hid it. Each such line is its
// credential's, at most once a minute with the count of the others (the credential must be
// one the store holds: a made-up one is a wrong secret).
func TestAFloodDoesNotHideARefusedCredential(t *testing.T) {
	ctx := t.Context()
	accounts := account.New(account.NewMemory(), clock.Real{})
	_, err := accounts.AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	revoked, cred, err := accounts.IssueCredential(ctx, "alice", "alice")
	require.NoError(t, err)
	_, err = accounts.RevokeCredential(ctx, "alice", cred.Selector)
	require.NoError(t, err)
	code, _, err := accounts.BeginLink(ctx, "5:küche", "127.0.0.1:1", 0)
	require.NoError(t, err)
	_, err = accounts.ApproveLink(ctx, code, "alice", "alice")
	require.NoError(t, err)
	linked, _, err := accounts.AcceptLink(ctx, code, "5:küche", true)
	require.NoError(t, err)
	_, linkedSelector, ok := account.Identify(linked)
	require.True(t, ok)

	clk := newFakeClock()
	h := newHarness(t, Config{Password: "pw", Accounts: accounts, ConnectionLinesRate: 1, ConnectionLinesBurst: 4, Clock: clk,
		PingPeriod: time.Hour, IdleProbeAfter: time.Hour}, nil)
	for i := 1; i <= 20; i++ {
		h.connect(t, fmt.Sprintf("%d:flood", 100+i), "pw")
	}
	require.Contains(t, h.logs.String(), "linesLeftOut=", "the flood spent the address's budget")

	refuse := func(traposID, secret string) {
		c := h.dial(t, traposID)
		resp := c.hello(secret)
		require.False(t, resp.OK)
		assert.Equal(t, protocol.CodeUnauthorized, resp.Error.Code)
	}
	for range 3 {
		refuse("7:", revoked)
		refuse("6:keller", linked)
	}
	logs := h.logs.String()
	assert.Regexp(t, `level=WARN msg="hello refused: the computer's credential is revoked" [^\n]*remote=127\.0\.0\.1:\d+ traposId=7: credentialId=`+cred.Selector+` repeatsLoggedEvery=1m0s\n`, logs)
	assert.Regexp(t, `level=WARN msg="hello refused: a linked credential from another computer id" [^\n]*remote=127\.0\.0\.1:\d+ traposId=6:keller credentialId=`+linkedSelector+` boundTo=5 repeatsLoggedEvery=1m0s\n`, logs)
	assert.Equal(t, 1, strings.Count(logs, "credential is revoked"), "a line a minute for the credential")
	assert.Equal(t, 1, strings.Count(logs, "from another computer id"), "a line a minute for the credential")

	clk.Advance(time.Minute + time.Second)
	refuse("7:", revoked)
	assert.Regexp(t, `msg="hello refused: the computer's credential is revoked" [^\n]* suppressedSinceLast=2 `, h.logs.String())
}

// closeAndAwaitGone closes c and waits until the gateway no longer holds traposID's socket.
func (h *harness) closeAndAwaitGone(t *testing.T, c *computer, traposID string) {
	t.Helper()
	require.NoError(t, c.conn.Close())
	require.Eventually(t, func() bool {
		return h.gw.registry.Lookup(Key{AccountID: LocalAccount, TraposID: traposID}) == nil
	}, waitLimit, testkit.Poll, "%s's socket closed", traposID)
}

// TestAFloodDoesNotHideAComputerThatStayedAMinute: a computer that connected while a flood
// from its address had spent the address's budget was left out of the log, and so was its
// takeover (its replacement line followed its connect line's fate): a player on the same
// Minecraft server floods hellos under made-up ids with the shared password, waits for
// 5:küche to come back (a server restart, a chunk reloaded), or for 6:keller to connect, then
// takes it over unseen. A computer whose socket stayed open a minute, which the flood's never
// do, has lines of its own: its reconnect is written, and a takeover of it.
func TestAFloodDoesNotHideAComputerThatStayedAMinute(t *testing.T) {
	clk := newFakeClock()
	// A rate that refills next to nothing in the minutes the test lets pass.
	h := newHarness(t, Config{Password: "pw", ConnectionLinesRate: 0.001, ConnectionLinesBurst: 2, Clock: clk, PingPeriod: time.Hour, IdleProbeAfter: time.Hour}, nil)
	connected := func() int { return strings.Count(h.logs.String(), `msg="computer connected"`) }
	first := h.connect(t, "5:küche", "pw")
	clk.Advance(ownBudgetAfter)
	h.closeAndAwaitGone(t, first, "5:küche") // its connect and disconnect lines: the burst's 2 tokens
	// A loop: each socket says hello and closes.
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("%d:flood", 100+i)
		h.closeAndAwaitGone(t, h.connect(t, id, "pw"), id)
	}
	require.Contains(t, h.logs.String(), "linesLeftOut=", "the flood spent the address's budget")
	require.Equal(t, 1, connected(), "the flood's hellos were left out")

	victim := h.connect(t, "5:küche", "pw") // back while the flood runs
	assert.Equal(t, 2, connected(), "5:küche's reconnect is written:\n%s", h.logs.String())
	h.connect(t, "5:küche", "pw") // the takeover
	victim.expectClose(CloseReplaced, "replaced")
	assert.Regexp(t, `msg="computer replaced by a newer connection" [^\n]* traposId=5:küche\n`, h.logs.String())
	assert.Equal(t, 3, connected(), "the takeover's connect line is written:\n%s", h.logs.String())

	// A computer first seen while the flood runs: its connect line is left out (its id is one
	// the flood could have made up), but once it stayed a minute, a takeover of it is written.
	keller := h.connect(t, "6:keller", "pw")
	assert.Equal(t, 3, connected(), "6:keller's connect line, left out")
	clk.Advance(ownBudgetAfter)
	h.connect(t, "6:keller", "pw")
	keller.expectClose(CloseReplaced, "replaced")
	logs := h.logs.String()
	assert.Regexp(t, `msg="computer replaced by a newer connection" [^\n]* traposId=6:keller\n`, logs)
	assert.Regexp(t, `msg="computer connected" [^\n]* traposId=6:keller `, logs, "the takeover's connect line")

	// The flood's ids, whose sockets closed at once, earned nothing.
	h.connect(t, "101:flood", "pw")
	assert.NotContains(t, h.logs.String(), "traposId=101:flood")
}

// TestAComputerFirstSeenDuringAFloodIsWrittenOnceItStayed: a computer that said hello with
// the shared password while a flood from its address had spent the address's budget was
// never in the log: its id is one more the flood could have made up. Once its socket stayed
// open a minute (at its next ping), which the flood's never do, its connect line is written,
// late, saying when it connected; once, and not for a computer whose line was written.
func TestAComputerFirstSeenDuringAFloodIsWrittenOnceItStayed(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, Config{Password: "pw", ConnectionLinesRate: 0.001, ConnectionLinesBurst: 2, Clock: clk,
		PingPeriod: 30 * time.Second, PongWait: time.Hour, IdleProbeAfter: time.Hour}, nil)
	h.connect(t, "5:küche", "pw") // the address's budget, spent
	keller := h.connect(t, "6:keller", "pw")
	since := h.session(t, "6:keller").connectedSince
	late := regexp.MustCompile(`level=INFO msg="computer connected" module=trapos-cloud-gateway remote=127\.0\.0\.1:\d+ accountId=local traposId=6:keller ` +
		`clientVersion="" connectedSince=` + regexp.QuoteMeta(since.Format("2006-01-02T15:04:05.000Z07:00")) + ` late=true\n`)
	require.NotContains(t, h.logs.String(), "traposId=6:keller", "left out as it said hello")

	armed := clk.Armed() // the two sessions' liveness timers
	// A ping period: each session's timer fires and is set again.
	tick := func() {
		clk.Advance(30 * time.Second)
		require.Eventually(t, func() bool { return clk.Armed() >= armed }, waitLimit, testkit.Poll, "the timers set again")
	}
	tick() // not a minute yet
	assert.NotContains(t, h.logs.String(), "traposId=6:keller")
	tick()
	require.Regexp(t, late, h.logs.String(), "written once it stayed a minute")
	tick()
	assert.Len(t, late.FindAllString(h.logs.String(), -1), 1, "once")
	assert.Equal(t, 1, strings.Count(h.logs.String(), `traposId=5:küche`), "5:küche's line was written: nothing late")

	require.NoError(t, keller.conn.Close())
	require.Eventually(t, func() bool {
		return regexp.MustCompile(`msg="computer disconnected" [^\n]* traposId=6:keller `).MatchString(h.logs.String())
	}, waitLimit, testkit.Poll, "its disconnect line, paid by its connect line")
}

// TestALateConnectLineSaysTheComputerRunsAnOlderClient: the "computer runs an older client"
// line follows a computer's connect line, which tells the operator to upgrade it; a computer
// first seen during a flood, whose connect line is written late, gets it then too, not never.
func TestALateConnectLineSaysTheComputerRunsAnOlderClient(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, Config{Password: "pw", ClientVersion: "0.5.27", ConnectionLinesRate: 0.001, ConnectionLinesBurst: 2, Clock: clk,
		PingPeriod: 30 * time.Second, PongWait: time.Hour, IdleProbeAfter: time.Hour}, nil)
	h.connect(t, "5:küche", "pw") // the address's budget, spent
	h.connect(t, "6:keller", "pw")
	older := regexp.MustCompile(`msg="computer runs an older client: run the install line on it again to upgrade" [^\n]* traposId=6:keller `)
	require.NotRegexp(t, older, h.logs.String(), "left out with its connect line")

	armed := clk.Armed()
	for range 2 { // two ping periods: a minute
		clk.Advance(30 * time.Second)
		require.Eventually(t, func() bool { return clk.Armed() >= armed }, waitLimit, testkit.Poll, "the timers set again")
	}
	logs := h.logs.String()
	require.Contains(t, logs, "late=true", "the late connect line")
	assert.Regexp(t, older, logs, "the older client, said with it")
}

// TestAComputerWithItsOwnBudgetIsBounded: the lines a computer writes past its address's
// budget are its own budget's, which a loop saying hello under that id again and again
// spends like any other: it does not write a line a hello.
func TestAComputerWithItsOwnBudgetIsBounded(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, Config{Password: "pw", ConnectionLinesRate: 0.001, ConnectionLinesBurst: 2, Clock: clk, PingPeriod: time.Hour, IdleProbeAfter: time.Hour}, nil)
	h.connect(t, "5:küche", "pw") // the address's budget, spent
	clk.Advance(ownBudgetAfter)   // 5:küche earns its own
	for range 30 {
		h.connect(t, "5:küche", "pw")
	}
	logs := h.logs.String()
	connected := strings.Count(logs, `msg="computer connected"`)
	assert.Equal(t, 1+ownLineBurst/connectLineTokens, connected, logs)
	require.Eventually(t, func() bool {
		return strings.Count(h.logs.String(), `msg="computer replaced by a newer connection"`) == connected
	}, waitLimit, testkit.Poll, "each written connect line's ending, and no other")
	assert.Contains(t, logs, "linesLeftOut=")
}

// TestAFloodDoesNotHideALinkedComputer: a computer with a credential of its own, connecting
// for the first time while a flood of hellos with the shared password from its address has
// spent the address's budget, was left out, and a takeover with its stolen credential too.
// Its lines are its credential's budget, which a flood cannot make up.
func TestAFloodDoesNotHideALinkedComputer(t *testing.T) {
	accounts, linked := linkedToAlice(t, "5:")

	clk := newFakeClock()
	h := newHarness(t, Config{Password: "pw", Accounts: accounts, ConnectionLinesRate: 1, ConnectionLinesBurst: 4, Clock: clk,
		PingPeriod: time.Hour, IdleProbeAfter: time.Hour}, nil)
	for i := 1; i <= 20; i++ {
		h.connect(t, fmt.Sprintf("%d:flood", 100+i), "pw")
	}
	require.Contains(t, h.logs.String(), "linesLeftOut=", "the flood spent the address's budget")

	victim := h.connect(t, "5:küche", linked)
	assert.Regexp(t, `msg="computer connected" [^\n]* accountId=alice traposId=5:küche `, h.logs.String())
	h.connect(t, "5:küche", linked) // the stolen credential
	victim.expectClose(CloseReplaced, "replaced")
	logs := h.logs.String()
	assert.Regexp(t, `msg="computer replaced by a newer connection" [^\n]* traposId=5:küche\n`, logs)
	assert.Len(t, regexp.MustCompile(`msg="computer connected" [^\n]* accountId=alice traposId=5:küche `).FindAllString(logs, -1), 2,
		"both connect lines:\n%s", logs)
}

// TestOwnLineBudgetsAreBounded: the own line budgets are kept for the most recently used
// computers and credentials alone (each kind apart), so that memory stays bounded; a computer
// forgotten is as one that never earned a budget, until it earns one again.
func TestOwnLineBudgetsAreBounded(t *testing.T) {
	now := newFakeClock().Now()
	c := newConnLines(Config{ConnectionLinesRate: 1, ConnectionLinesBurst: connectLineTokens, Clock: newFakeClock()})
	c.computers.max, c.credentials.max = 2, 1
	const addr = "192.0.2.1:1"
	ok, _ := c.take(addr, ownLine{}, connectLineTokens, now)
	require.True(t, ok, "the address's budget")
	for _, id := range []string{"a", "b", "c"} { // each earned its own, past the address's budget
		ok, _ = c.take(addr, ownLine{key: id, create: true}, connectLineTokens, now)
		require.True(t, ok, id)
	}
	ok, _ = c.take(addr, ownLine{key: "d"}, connectLineTokens, now)
	assert.False(t, ok, "not earned: no budget of its own")
	ok, _ = c.take(addr, ownLine{key: "a"}, connectLineTokens, now)
	assert.False(t, ok, "the least recently used, forgotten")
	for _, id := range []string{"b", "c"} {
		ok, _ = c.take(addr, ownLine{key: id}, connectLineTokens, now)
		assert.True(t, ok, id)
	}
	ok, _ = c.take(addr, ownLine{credential: true, key: "b", create: true}, connectLineTokens, now)
	assert.True(t, ok, "a credential's budget: apart from the computers'")
	assert.Len(t, c.computers.byKey, 2)
	assert.Equal(t, 2, c.computers.order.Len())
	ok, _ = c.take(addr, ownLine{key: "b"}, connectLineTokens, now)
	assert.False(t, ok, "b's own budget: its burst spent")
}
