// The link flow over the real binary: a raw WebSocket computer opens a link session and asks
// for a code, the account holder approves it with the CLI, the computer accepts and says hello
// with the credential it got; codes refused after expiry, use and decline; a bystander's
// approval declined; an enrollment key made with the CLI links at once; wrong keys spend the
// wrong-secret budget.

package integration

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
	"trap-sandbox/testkit/opencodefake"

	"tests/internal/harness"
)

// linkSession dials and says hello with link:true (no secret).
func linkSession(ctx context.Context, t *testing.T, g *harness.Gateway, traposID string) *harness.Computer {
	t.Helper()
	c := dial(ctx, t, g, traposID)
	f, err := c.Request(ctx, harness.TypeHello, map[string]any{"traposId": traposID, "link": true})
	require.NoError(t, err)
	p := requireOK(t, f)
	assert.Equal(t, true, p["link"])
	assert.Equal(t, "", p["accountId"])
	return c
}

// linkRequest sends one link request and returns its frame.
func linkRequest(ctx context.Context, t *testing.T, c *harness.Computer, typ string, payload any) harness.Frame {
	t.Helper()
	f, err := c.Request(ctx, typ, payload)
	require.NoError(t, err)
	return f
}

// beginCode asks for a link code and returns it.
func beginCode(ctx context.Context, t *testing.T, c *harness.Computer) string {
	t.Helper()
	p := requireOK(t, linkRequest(ctx, t, c, "link.begin", map[string]any{}))
	code, _ := p["code"].(string)
	require.Regexp(t, `^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`, code)
	assert.Equal(t, "trap-sandbox link approve "+code, p["approveLine"])
	return code
}

func TestLinkCodeApprovedAcceptedAndKeptOverARestart(t *testing.T) {
	ctx := testContext(t)
	data := t.TempDir()
	dir := "--data-dir=" + data
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	bob := lastLine(ctx, t, "accounts", "add", "bob", dir)
	g := startGateway(t, dir)
	url := "--url=" + g.URL("")

	c := linkSession(ctx, t, g, "7:kitchen")
	code := beginCode(ctx, t, c)
	p := requireOK(t, linkRequest(ctx, t, c, "link.poll", map[string]any{"code": code, "waitMs": 0}))
	assert.Equal(t, "pending", p["state"])
	status, body := apiGet(ctx, t, g, alice, "/trapos/computers")
	require.Equal(t, http.StatusOK, status)
	assert.NotContains(t, body, "7:kitchen", "a link session is not listed")

	// The account holder types the code as they read it: lower case, without the dash.
	typed := strings.ToLower(strings.ReplaceAll(code, "-", ""))
	out, errOut, exit := runCLI(ctx, t, nil, "link", "approve", url, "--api-token="+alice, typed)
	require.Equal(t, 0, exit, errOut)
	assert.Equal(t, "approved computer 7:kitchen (from 127.0.0.1) into alice; it asks its player to accept\n", out)

	p = requireOK(t, linkRequest(ctx, t, c, "link.poll", map[string]any{"code": code}))
	assert.Equal(t, map[string]any{"state": "approved", "account": "alice", "approvedBy": "alice"}, p)
	p = requireOK(t, linkRequest(ctx, t, c, "link.accept", map[string]any{"code": code, "accept": true}))
	assert.Equal(t, "alice", p["account"])
	cred, _ := p["credential"].(string)
	require.True(t, strings.HasPrefix(cred, "tsc_"), cred)
	assert.Equal(t, "linked", requireClose(ctx, t, c, 1000))

	// Used: a second approval is refused.
	_, errOut, exit = runCLI(ctx, t, nil, "link", "approve", url, "--api-token="+bob, code)
	assert.Equal(t, 1, exit)
	assert.Equal(t, "trap-sandbox: link approve: the gateway answered link_invalid: the link code was already used; run sandbox link again for a new one\n", errOut)

	computer := dial(ctx, t, g, "7:kitchen")
	f, err := computer.Hello(ctx, cred)
	require.NoError(t, err)
	assert.Equal(t, "alice", requireOK(t, f)["accountId"])
	status, body = apiGet(ctx, t, g, alice, "/trapos/computers")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `"traposId":"7:kitchen"`)
	status, body = apiGet(ctx, t, g, bob, "/trapos/computers")
	require.Equal(t, http.StatusOK, status)
	assert.NotContains(t, body, "7:kitchen")
	assert.NotContains(t, g.Log(), cred[len(cred)-12:], "no credential in the gateway's log")
	assert.NotContains(t, g.Log(), code, "no link code in the gateway's log")

	// The credential is this computer's: another computer id is refused.
	other := dial(ctx, t, g, "8:kitchen")
	f, err = other.Hello(ctx, cred)
	require.NoError(t, err)
	requireErrorCode(t, f, "unauthorized")
	assert.Contains(t, f.Error.Message, "belongs to computer 7")
	requireClose(ctx, t, other, harness.CloseUnauthorized)

	// A restart on the same data directory keeps it.
	require.NoError(t, g.Stop())
	second := harness.Start(t, gatewayBin, harness.Options{
		Listen: net.JoinHostPort("127.0.0.1", "0"),
		Args:   []string{"--password", sandboxPassword, "--opencode-url", opencodefake.ClosedPortURL(t), dir},
	})
	again := dial(ctx, t, second, "7:kitchen")
	f, err = again.Hello(ctx, cred)
	require.NoError(t, err)
	assert.Equal(t, "alice", requireOK(t, f)["accountId"])
	status, body = apiGet(ctx, t, second, alice, "/trapos/computers")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `"accountId":"alice"`)
	assert.Contains(t, body, `"traposId":"7:kitchen"`)
}

// TestOneComputerAskingForCodesInALoopLeavesTheOthersTheirs: every computer of a Minecraft
// server reaches the gateway from the server's one address. A program on one computer that
// asked for codes in a loop got the address's whole budget (30 a minute), and every other
// player's sandbox link on that server was refused for the rest of the minute.
func TestOneComputerAskingForCodesInALoopLeavesTheOthersTheirs(t *testing.T) {
	ctx := testContext(t)
	g := startGateway(t, "--data-dir="+t.TempDir())

	flood := linkSession(ctx, t, g, "7:kitchen")
	var refused harness.Frame
	for asked := 0; refused.Error == nil; asked++ {
		require.Less(t, asked, 30, "the computer is refused before its address's whole budget")
		if f := linkRequest(ctx, t, flood, "link.begin", map[string]any{}); !*f.OK {
			refused = f
		}
	}
	requireErrorCode(t, refused, "busy")
	assert.Regexp(t, `^too many link codes from this computer; try again in \d+ s$`, refused.Error.Message)
	// Another link session, under another label, is the same computer.
	again := linkSession(ctx, t, g, "7:pantry")
	f := linkRequest(ctx, t, again, "link.begin", map[string]any{})
	requireErrorCode(t, f, "busy")
	assert.Contains(t, f.Error.Message, "from this computer")

	// Another player's computer on the same server (here, the same loopback address).
	other := linkSession(ctx, t, g, "8:door")
	beginCode(ctx, t, other)
}

func TestLinkCodeRefusedAfterExpiryAndDecline(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	bob := lastLine(ctx, t, "accounts", "add", "bob", dir)
	g := startGateway(t, dir, "--link-code-lifetime=1s")
	url := "--url=" + g.URL("")

	// Expiry: the long poll hears it, then nothing takes the code.
	c := linkSession(ctx, t, g, "7:")
	code := beginCode(ctx, t, c)
	var state string
	for state != "expired" { // each poll waits up to 5 s; the code lives 1 s
		p := requireOK(t, linkRequest(ctx, t, c, "link.poll", map[string]any{"code": code}))
		state, _ = p["state"].(string)
		require.Contains(t, []string{"pending", "expired"}, state)
	}
	_, errOut, exit := runCLI(ctx, t, nil, "link", "approve", url, "--api-token="+alice, code)
	assert.Equal(t, 1, exit)
	assert.Contains(t, errOut, "link_invalid: the link code has expired")
	f := linkRequest(ctx, t, c, "link.accept", map[string]any{"code": code, "accept": true})
	requireErrorCode(t, f, "link_invalid")
	assert.Contains(t, f.Error.Message, "expired")

	// A bystander (bob) approves a code they read off alice's screen; alice's player sees
	// "approved by bob" and declines.
	g2 := startGateway(t, dir)
	url = "--url=" + g2.URL("")
	c = linkSession(ctx, t, g2, "7:")
	code = beginCode(ctx, t, c)
	_, errOut, exit = runCLI(ctx, t, nil, "link", "approve", url, "--api-token="+bob, code)
	require.Equal(t, 0, exit, errOut)
	p := requireOK(t, linkRequest(ctx, t, c, "link.poll", map[string]any{"code": code}))
	assert.Equal(t, "bob", p["account"])
	p = requireOK(t, linkRequest(ctx, t, c, "link.accept", map[string]any{"code": code, "accept": false}))
	assert.Empty(t, p)
	assert.Equal(t, "linked", requireClose(ctx, t, c, 1000))
	_, errOut, exit = runCLI(ctx, t, nil, "link", "approve", url, "--api-token="+alice, code)
	assert.Equal(t, 1, exit)
	assert.Contains(t, errOut, "declined on the computer")
	out, errOut, exit := runCLI(ctx, t, nil, "credentials", "list", dir, "bob")
	require.Equal(t, 0, exit, errOut)
	assert.Equal(t, 1, len(strings.Split(strings.TrimSpace(out), "\n")), "bob got no credential: %s", out)

	// Outside a link session nothing but hello comes first, and a link session only links.
	plain := dial(ctx, t, g2, "9:")
	requireErrorCode(t, linkRequest(ctx, t, plain, "link.begin", map[string]any{}), "not_authenticated")
	c = linkSession(ctx, t, g2, "9:")
	f = linkRequest(ctx, t, c, "ai.ask", map[string]any{"prompt": "hi"})
	requireErrorCode(t, f, "not_authenticated")
	assert.Contains(t, f.Error.Message, "a link session only links")
}

var keyLine = regexp.MustCompile(`(?m)^tsk_\S+$`)

func TestEnrollmentKeyLinksAtOnceAndWrongKeysSpendTheBudget(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	key := lastLine(ctx, t, "link", "key", dir, "--account=alice", "--uses=2", "--expires=1h")
	require.Regexp(t, keyLine, key)
	// Wrong secrets: one answered at once, the next held back (and counted) for 100 s.
	g := startGateway(t, dir, "--failed-hello-burst=1", "--failed-hello-rate=0.01")

	c := linkSession(ctx, t, g, "12:turtle")
	p := requireOK(t, linkRequest(ctx, t, c, "link.begin", map[string]any{"key": key}))
	assert.Equal(t, "approved", p["state"])
	assert.Equal(t, "alice", p["account"])
	assert.Equal(t, "operator (key "+strings.SplitN(key, "_", 3)[1]+")", p["approvedBy"])
	cred, _ := p["credential"].(string)
	assert.Equal(t, "linked", requireClose(ctx, t, c, 1000))
	turtle := dial(ctx, t, g, "12:turtle")
	require.NoError(t, turtle.MustHello(ctx, cred))
	status, body := apiGet(ctx, t, g, alice, "/trapos/computers")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `"traposId":"12:turtle"`)

	out, errOut, exit := runCLI(ctx, t, nil, "link", "keys", dir)
	require.Equal(t, 0, exit, errOut)
	assert.Regexp(t, `alice\s+operator\s+\S+\s+\S+\s+1/2\s+-`, out)

	// A wrong key is answered at once (the budget's one token), then a wrong hello secret from
	// the same address is held back: the key spent the budget.
	c = linkSession(ctx, t, g, "13:")
	f := linkRequest(ctx, t, c, "link.begin", map[string]any{"key": testkit.WrongSecret(key)})
	requireErrorCode(t, f, "link_invalid")
	assert.Contains(t, f.Error.Message, "unknown or wrong enrollment key")
	guess := dial(ctx, t, g, "14:")
	require.NoError(t, guess.WriteJSON(map[string]any{"event": "computer_request", "traposSenderId": "14:", "messageId": "h",
		"type": "hello", "payload": map[string]any{"traposId": "14:", "secret": "wrong"}}))
	waitMetric(ctx, t, g, `trapos_gateway_limited_total{limit="failed_hellos"}`, 1)
	assert.Equal(t, 1.0, metric(ctx, t, g, `trapos_gateway_link_codes_total{outcome="accepted"}`))

	// Through the API with alice's token: a key of her own, listed beside the first.
	url := "--url=" + g.URL("")
	apiKey := lastLine(ctx, t, "link", "key", url, "--api-token="+alice, "--reusable")
	require.Regexp(t, keyLine, apiKey)
	out, errOut, exit = runCLI(ctx, t, nil, "link", "keys", url, "--api-token="+alice)
	require.Equal(t, 0, exit, errOut)
	assert.Regexp(t, `alice\s+alice\s+\S+\s+\S+\s+0/any\s+-`, out)
	assert.Equal(t, 3, len(strings.Split(strings.TrimSpace(out), "\n")), out)
	_, errOut, exit = runCLI(ctx, t, nil, "link", "revoke-key", url, "--api-token="+alice, apiKey)
	require.Equal(t, 0, exit, errOut)

	// Revoked with the CLI: the key links no more.
	id := strings.SplitN(key, "_", 3)[1]
	_, errOut, exit = runCLI(ctx, t, nil, "link", "revoke-key", dir, id)
	require.Equal(t, 0, exit, errOut)
	c = linkSession(ctx, t, g, "15:")
	f = linkRequest(ctx, t, c, "link.begin", map[string]any{"key": key})
	requireErrorCode(t, f, "link_invalid")
	assert.Contains(t, f.Error.Message, "revoked")
}
