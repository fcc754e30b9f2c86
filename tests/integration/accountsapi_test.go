// Account management through the running gateway's API: `trap-sandbox accounts|tokens|
// credentials` with --url and --api-token against the real binary.

package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// TestAccountsThroughTheGateway: an admin's token creates bob through the running gateway
// and bob's printed token works at once; bob's token cannot add an account and is told which
// token would; bob lists his own token with its last use and address, issues a credential
// for his computer and revokes it, which closes the computer's socket at once (4003); the
// store's counts and the auth refusals are on /metrics; no secret is logged.
func TestAccountsThroughTheGateway(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	root := lastLine(ctx, t, "accounts", "add", "root", "--admin", dir)
	g := startGateway(t, dir)
	url := "--url=" + g.URL("")

	out, errOut, code := runCLI(ctx, t, nil, "accounts", "add", "bob", url, "--api-token="+root)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "account bob (user) created in the gateway at "+g.URL(""))
	bob := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	require.True(t, strings.HasPrefix(bob, "tsa_"), out)
	status, body := apiGet(ctx, t, g, bob, "/trapos/computers")
	assert.Equal(t, http.StatusOK, status, "bob's token works at once: %s", body)

	_, errOut, code = runCLI(ctx, t, nil, "accounts", "add", "carol", url, "--api-token="+bob)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "adding an account needs an admin token")
	assert.Contains(t, errOut, `this one is of "bob", a user`)

	out, errOut, code = runCLI(ctx, t, nil, "tokens", "list", url, "--api-token="+bob)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `(?m)^\S+\s+bob\s+first\s+20\S+\s+root\s+-\s+-\s+20\S+\s+127\.0\.0\.1$`, out, "created by root, last used from loopback")
	_, errOut, code = runCLI(ctx, t, nil, "tokens", "list", "root", url, "--api-token="+bob)
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: tokens list: no account \"root\" that this token reaches: a user's token reaches its own account only (trap-sandbox accounts list shows it); another account's needs an admin's token\n", errOut)

	cred := lastLine(ctx, t, "credentials", "add", "bob", url, "--api-token="+bob)
	require.True(t, strings.HasPrefix(cred, "tsc_"), cred)
	c := dial(ctx, t, g, "7:")
	require.NoError(t, c.MustHello(ctx, cred))
	out, errOut, code = runCLI(ctx, t, nil, "credentials", "list", url, "--api-token="+bob)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `(?m)\s+bob\s+bob\s+20\S+\s+20\S+\s+7:\s+127\.0\.0\.1:\d+\s+-$`, out, "approved by bob; its hello's time, traposId and address")
	credID := strings.SplitN(cred, "_", 3)[1]
	out, errOut, code = runCLI(ctx, t, nil, "credentials", "revoke", credID, url, "--api-token="+bob)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "the gateway closed its computer's socket")
	assert.Equal(t, "revoked", requireClose(ctx, t, c, 4003))

	status, _ = apiGet(ctx, t, g, testkit.WrongSecret(bob), "/trapos/computers")
	assert.Equal(t, http.StatusUnauthorized, status)
	status, body = apiGet(ctx, t, g, root, "/metrics")
	require.Equal(t, http.StatusOK, status)
	for _, line := range []string{`trapos_accounts{role="admin"} 1`, `trapos_accounts{role="user"} 1`, `trapos_account_tokens{state="active"} 2`,
		`trapos_account_credentials{state="revoked"} 1`, `trapos_api_auth_refused_total{reason="bad_token"} 1`} {
		assert.Contains(t, body, line+"\n")
	}

	for _, secret := range []string{root, bob, cred} {
		assert.NotContains(t, g.Log(), secret[len(secret)-12:], "no secret in the gateway's log")
	}
}

// TestWhatALeakedTokenMadeIsFoundInTheLog: a token makes tokens, credentials and enrollment
// keys, which stay when it is revoked (docs/accounts.md). Each change it made through the
// gateway is a log line naming it (byToken=its id), so that what a leaked token made can be
// found and revoked; the lines named only its account, which every token of it shares. The
// gateway's own caller (loopback without a token) names none.
func TestWhatALeakedTokenMadeIsFoundInTheLog(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	lastLine(ctx, t, "accounts", "add", "bob", dir)
	leaked := lastLine(ctx, t, "tokens", "add", "bob", "laptop", dir)
	leakedID := strings.SplitN(leaked, "_", 3)[1]
	g := startGateway(t, dir)
	url := "--url=" + g.URL("")

	made := lastLine(ctx, t, "tokens", "add", "bob", "mine-now", url, "--api-token="+leaked)
	cred := lastLine(ctx, t, "credentials", "add", "bob", url, "--api-token="+leaked)
	lastLine(ctx, t, "link", "key", url, "--api-token="+leaked)
	lastLine(ctx, t, "credentials", "add", "bob", url) // the gateway's own caller
	c := dial(ctx, t, g, "7:")
	require.NoError(t, c.MustHello(ctx, cred))
	_, errOut, code := runCLI(ctx, t, nil, "computers", "revoke", "7:", url, "--api-token="+leaked)
	require.Equal(t, 0, code, errOut)

	var byLeaked, byLocal []string
	for _, line := range strings.Split(g.Log(), "\n") {
		switch {
		case strings.Contains(line, " byToken="+leakedID):
			byLeaked = append(byLeaked, line)
		case strings.Contains(line, " by=local "):
			byLocal = append(byLocal, line)
		}
	}
	require.Len(t, byLeaked, 4, "%s", g.Log())
	for i, msg := range []string{`msg="account API: token added" account=bob tokenId=` + strings.SplitN(made, "_", 3)[1],
		`msg="account API: credential added" account=bob`, `msg="enrollment key added" module=link account=bob`, `msg="computer revoked"`} {
		assert.Contains(t, byLeaked[i], msg)
		assert.Regexp(t, ` by=bob remote=127\.0\.0\.1:\d+ byToken=`+leakedID+`$`, byLeaked[i], "the token's id last, after who and from where")
	}
	require.Len(t, byLocal, 1, "%s", g.Log())
	assert.NotContains(t, byLocal[0], "byToken=", "the gateway's own caller has no token")
	assert.NotContains(t, g.Log(), leaked[len(leaked)-12:], "the token's id, never its secret")
}

// TestATokenThatExpiresMakesNoneThatOutlivesIt: a token given for an hour made a token, an
// enrollment key or (an admin's) an account whose first token never expired, so whoever held
// it for that hour kept the gateway for good. What it makes now expires with it, and the
// command says so.
func TestATokenThatExpiresMakesNoneThatOutlivesIt(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	lastLine(ctx, t, "accounts", "add", "root", "--admin", dir)
	lastLine(ctx, t, "accounts", "add", "alice", dir)
	hour := lastLine(ctx, t, "tokens", "add", "alice", "for-an-hour", "--expires", "1h", dir)
	rootHour := lastLine(ctx, t, "tokens", "add", "root", "for-an-hour", "--expires", "1h", dir)
	g := startGateway(t, dir)
	url := "--url=" + g.URL("")
	const cut = ", with the token that made it (it can make none that lasts longer)"

	out, errOut, code := runCLI(ctx, t, nil, "tokens", "add", "alice", "forever", url, "--api-token="+hour)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, cut+"; shown once:")
	out, errOut, code = runCLI(ctx, t, nil, "tokens", "add", "alice", "for-a-minute", "--expires", "1m", url, "--api-token="+hour)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, cut, "a shorter lifetime stands")
	out, errOut, code = runCLI(ctx, t, nil, "link", "key", "--expires", "0", url, "--api-token="+hour)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, cut+"; on a computer")
	out, errOut, code = runCLI(ctx, t, nil, "accounts", "add", "bob", url, "--api-token="+rootHour)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "its API token, which expires ")

	expiresAt := func(token, path, name string) string {
		t.Helper()
		status, body := apiGet(ctx, t, g, token, path)
		require.Equal(t, http.StatusOK, status, body)
		var list []struct{ Name, ID, ExpiresAt string }
		if strings.HasPrefix(body, "{") { // the link module's answer: {ok, payload}
			var answer struct{ Payload json.RawMessage }
			require.NoError(t, json.Unmarshal([]byte(body), &answer))
			body = string(answer.Payload)
		}
		require.NoError(t, json.Unmarshal([]byte(body), &list))
		for _, e := range list {
			if e.Name == name || (name == "" && e.ID != "") {
				return e.ExpiresAt
			}
		}
		require.Failf(t, "not listed", "%s in %s", name, body)
		return ""
	}
	made := expiresAt(hour, "/trapos/tokens?account=alice", "for-an-hour")
	require.NotEmpty(t, made)
	assert.Equal(t, made, expiresAt(hour, "/trapos/tokens?account=alice", "forever"), "the token made expires with its maker")
	assert.Equal(t, made, expiresAt(hour, "/trapos/link/keys", ""), "so does the key")
	assert.Equal(t, expiresAt(rootHour, "/trapos/tokens?account=root", "for-an-hour"), expiresAt(rootHour, "/trapos/tokens?account=bob", "first"),
		"so does an account's first token")
}
