// Accounts over the real binary: accounts, tokens and computer credentials made with the
// CLI in a data directory, then used by computers (hello) and by host clients (the API and
// the CLI), each seeing only its own account's computers.

package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tests/internal/harness"
)

// lastLine runs a CLI command that prints a secret alone on its last line and returns it.
func lastLine(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := runCLI(ctx, t, nil, args...)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// apiGet calls the API with a token and returns the status and body.
func apiGet(ctx context.Context, t *testing.T, g *harness.Gateway, token, path string) (int, string) {
	t.Helper()
	return apiCall(ctx, t, g, token, http.MethodGet, path, "")
}

// apiPost POSTs a JSON body to the API with a token and returns the status and body.
func apiPost(ctx context.Context, t *testing.T, g *harness.Gateway, token, path, body string) (int, string) {
	t.Helper()
	return apiCall(ctx, t, g, token, http.MethodPost, path, body)
}

// apiCall calls the API with a token (and, when body is not empty, a JSON body) and returns
// the status and body.
func apiCall(ctx context.Context, t *testing.T, g *harness.Gateway, token, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, g.URL(path), strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestAccountsIsolation: alice's token reaches alice's computer and answers "not connected"
// for bob's, on the computer list, requests and file routes and through the CLI, without a
// hint naming it; root (an admin) reaches both; the shared password and bob's credential
// claiming alice's traposId register beside alice's computer instead of evicting it; a
// revoked token stops working on its next request.
func TestAccountsIsolation(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	lastLine(ctx, t, "accounts", "add", "bob", dir)
	root := lastLine(ctx, t, "accounts", "add", "root", "--admin", dir)
	aliceCred := lastLine(ctx, t, "credentials", "add", "alice", dir)
	bobCred := lastLine(ctx, t, "credentials", "add", "bob", dir)
	require.True(t, strings.HasPrefix(alice, "tsa_"), alice)
	require.True(t, strings.HasPrefix(aliceCred, "tsc_"), aliceCred)

	g := startGateway(t, dir)
	aliceComputer := dial(ctx, t, g, "7:")
	require.NoError(t, aliceComputer.MustHello(ctx, aliceCred))
	answerRequests(ctx, aliceComputer, "alice's 7:")
	bobComputer := dial(ctx, t, g, "8:")
	require.NoError(t, bobComputer.MustHello(ctx, bobCred))
	answerRequests(ctx, bobComputer, "bob's 8:")
	// Two impostors claim alice's 7:: the shared password (local) and bob's credential.
	connect(ctx, t, g, "7:")
	impostor := dial(ctx, t, g, "7:")
	require.NoError(t, impostor.MustHello(ctx, bobCred))

	status, body := apiGet(ctx, t, g, alice, "/trapos/computers")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"accountId":"alice"`)
	assert.NotContains(t, body, `"accountId":"bob"`)
	assert.NotContains(t, body, `"accountId":"local"`)
	assert.Equal(t, 1, strings.Count(body, `"traposId"`), body)

	status, body = apiGet(ctx, t, g, root, "/trapos/computers")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, 4, strings.Count(body, `"traposId"`), "an admin sees every account's: %s", body)

	statusMine, _ := apiGet(ctx, t, g, alice, "/trapos/computers/7:/files/x")
	statusBobs, bodyBobs := apiGet(ctx, t, g, alice, "/trapos/computers/8:/files/x")
	statusNone, bodyNone := apiGet(ctx, t, g, alice, "/trapos/computers/9:/files/x")
	assert.NotEqual(t, statusBobs, statusMine, "alice's own computer answers")
	assert.Equal(t, statusNone, statusBobs, "bob's computer answers as one that is not connected")
	assert.Equal(t, strings.ReplaceAll(bodyNone, "9:", "8:"), bodyBobs)

	url := "--url=" + g.URL("")
	out, errOut, code := runCLI(ctx, t, nil, "ping", url, "--api-token="+alice, "7:")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `alice's 7:`, "alice's request reaches alice's computer, not an impostor")
	_, errOut, code = runCLI(ctx, t, nil, "ping", url, "--api-token="+alice, "8:")
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: computer 8: ping: the gateway answered not_connected: the computer is not connected; this token reaches account alice's computers only; trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers)\n", errOut)
	_, errOut, code = runCLI(ctx, t, nil, "ping", url, "--api-token="+alice, "8")
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: computer 8 ping: the gateway answered not_connected: the computer is not connected; this token reaches account alice's computers only; trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers)\n", errOut, "no hint names bob's computer")
	out, errOut, code = runCLI(ctx, t, nil, "ping", url, "--api-token="+root, "8:")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `bob's 8:`)
	out, errOut, code = runCLI(ctx, t, nil, "computers", url, "--api-token="+alice)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 2, len(strings.Split(strings.TrimSpace(out), "\n")), out)

	// MCP over HTTP (/mcp with alice's token) and over stdio (the bridge with alice's token).
	for name, session := range map[string]*sdk.ClientSession{
		"http":  harness.ConnectMCP(ctx, t, g, alice),
		"stdio": harness.ConnectMCPStdio(ctx, t, gatewayBin, g, "SANDBOX_API_TOKEN="+alice),
	} {
		var list map[string]any
		harness.ToolOK(t, harness.CallTool(ctx, t, session, "list_computers", nil), "", &list)
		raw, err := json.Marshal(list)
		require.NoError(t, err)
		assert.Contains(t, string(raw), `"accountId":"alice"`, name)
		assert.Equal(t, 1, strings.Count(string(raw), `"traposId"`), "%s: %s", name, raw)
		msg := harness.ToolError(t, harness.CallTool(ctx, t, session, "ping", map[string]any{"traposId": "8"}), "not_connected")
		assert.NotContains(t, msg, "did you mean", "%s: no hint names bob's computer", name)
		msg = harness.ToolError(t, harness.CallTool(ctx, t, session, "ping", map[string]any{"traposId": "8:"}), "not_connected")
		assert.Equal(t, "not_connected: computer 8: is not connected (if it is rebooting, it is back within seconds: ping with wait true waits for it); "+
			"this token reaches account alice's computers only; trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers)", msg,
			"%s: as the CLI words it, once, with MCP's wait", name)
	}

	// Revoking alice's first token (from the data directory, beside the running gateway).
	id := strings.SplitN(alice, "_", 3)[1]
	_, errOut, code = runCLI(ctx, t, nil, "tokens", "revoke", dir, id)
	require.Equal(t, 0, code, errOut)
	status, body = apiGet(ctx, t, g, alice, "/trapos/computers")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Contains(t, body, "revoked")
	assert.NotContains(t, g.Log(), alice[len(alice)-12:], "no token in the gateway's log")
	assert.NotContains(t, g.Log(), aliceCred[len(aliceCred)-12:], "no credential in the gateway's log")
}

// TestRevokeClosesTheComputer: `computers revoke` by the computer's account closes its socket
// with 4003 and its credential no longer says hello; another account's token cannot (the
// computer is "not connected" to it); a computer on the shared password has nothing of its
// own to revoke.
func TestRevokeClosesTheComputer(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	bob := lastLine(ctx, t, "accounts", "add", "bob", dir)
	root := lastLine(ctx, t, "accounts", "add", "root", "--admin", dir)
	aliceCred := lastLine(ctx, t, "credentials", "add", "alice", dir)

	g := startGateway(t, dir)
	c := dial(ctx, t, g, "7:")
	require.NoError(t, c.MustHello(ctx, aliceCred))
	connect(ctx, t, g, "9:")
	url := "--url=" + g.URL("")

	_, errOut, code := runCLI(ctx, t, nil, "computers", "revoke", url, "--api-token="+bob, "7:")
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: computer 7: revoke: the gateway answered not_connected: the computer is not connected; this token reaches account bob's computers only; trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers); to revoke the credential of a computer that is not connected: trap-sandbox credentials list (its TRAPOSID column), then trap-sandbox credentials revoke ID\n", errOut,
		"bob reaches no computer: alice's is not named, nor are other accounts' said to be gone; a computer to revoke is not sent to sandbox status in game")
	_, errOut, code = runCLI(ctx, t, nil, "computers", "revoke", url, "--api-token="+root, "9:")
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: computer 9: revoke: the gateway answered forbidden: the computer says hello with the shared password, not a credential of its own: there is nothing of its own to revoke (change SANDBOX_PASSWORD, or give it a credential: trap-sandbox credentials add)\n", errOut,
		"worded as every command words the gateway's refusal, not as a refused token (\"the gateway at … answered 403\")")

	// on a gateway without SANDBOX_PASSWORD, where there is no shared password to change
	noPassword := harness.Start(t, gatewayBin, harness.Options{Args: []string{dir}})
	bare := dial(ctx, t, noPassword, "9:")
	require.NoError(t, bare.MustHello(ctx, ""))
	_, errOut, code = runCLI(ctx, t, nil, "computers", "revoke", "--url="+noPassword.URL(""), "--api-token="+root, "9:")
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: computer 9: revoke: the gateway answered forbidden: the computer says hello with no secret (this gateway has no SANDBOX_PASSWORD), not a credential of its own: "+
		"there is nothing of its own to revoke (set SANDBOX_PASSWORD, which every computer must then have as its sandbox.password, or give this one a credential: trap-sandbox credentials add)\n", errOut)

	out, errOut, code := runCLI(ctx, t, nil, "computers", "revoke", url, "--api-token="+alice, "7:")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "computer 7: of alice: credential ")
	assert.Equal(t, "revoked", requireClose(ctx, t, c, 4003))

	again := dial(ctx, t, g, "7:")
	f, err := again.Hello(ctx, aliceCred)
	require.NoError(t, err)
	requireErrorCode(t, f, "unauthorized")
	assert.Contains(t, f.Error.Message, "revoked")
	requireClose(ctx, t, again, 4003)

	out, errOut, code = runCLI(ctx, t, nil, "credentials", "list", dir, "alice")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `\s7:\s+127\.0\.0\.1:\d+\s+20\d\d-`, out, "the last hello's traposId and address, and the revocation time")
}

// TestAnAdminsRevokeOfATraposIDOfSeveralAccountsNamesThem: an admin's `computers revoke
// 7:kitchen`, where alice and bob have each connected a 7:kitchen and the admin's account none,
// revoked the first of them (alice's, where the admin meant bob's stolen one); it is refused as
// every other route refuses it, naming the accounts, and nothing is revoked. The admin's own
// account's computer of that traposId wins, as on every route.
func TestAnAdminsRevokeOfATraposIDOfSeveralAccountsNamesThem(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	lastLine(ctx, t, "accounts", "add", "alice", dir)
	bob := lastLine(ctx, t, "accounts", "add", "bob", dir)
	root := lastLine(ctx, t, "accounts", "add", "root", "--admin", dir)
	aliceCred := lastLine(ctx, t, "credentials", "add", "alice", dir)
	bobCred := lastLine(ctx, t, "credentials", "add", "bob", dir)
	rootCred := lastLine(ctx, t, "credentials", "add", "root", dir)

	g := startGateway(t, dir)
	ofAlice, ofBob := dial(ctx, t, g, "7:kitchen"), dial(ctx, t, g, "7:kitchen")
	require.NoError(t, ofAlice.MustHello(ctx, aliceCred))
	require.NoError(t, ofBob.MustHello(ctx, bobCred))
	url := "--url=" + g.URL("")

	_, errOut, code := runCLI(ctx, t, nil, "computers", "revoke", url, "--api-token="+root, "7:kitchen")
	assert.Equal(t, 1, code)
	assert.Equal(t, "trap-sandbox: computer 7:kitchen revoke: the gateway answered not_connected: the computer is connected in several accounts (alice, bob): use one of those accounts' tokens to reach it\n", errOut)
	status, body := apiPost(ctx, t, g, root, "/trapos/computers/7:kitchen/revoke", `{}`)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, body, `"accounts":["alice","bob"]`, "as the other routes answer it")
	out, errOut, code := runCLI(ctx, t, nil, "credentials", "list", dir)
	require.Equal(t, 0, code, errOut)
	assert.NotRegexp(t, `\s20\d\d-\S+\s*\n`, out, "no credential revoked (no REVOKED time ends a line):\n%s", out)

	// The admin's own computer of that traposId is the one it names.
	ofRoot := dial(ctx, t, g, "7:kitchen")
	require.NoError(t, ofRoot.MustHello(ctx, rootCred))
	out, errOut, code = runCLI(ctx, t, nil, "computers", "revoke", url, "--api-token="+root, "7:kitchen")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "computer 7:kitchen of root: credential ")
	assert.Equal(t, "revoked", requireClose(ctx, t, ofRoot, 4003))

	// A user's token reaches its own alone.
	out, errOut, code = runCLI(ctx, t, nil, "computers", "revoke", url, "--api-token="+bob, "7:kitchen")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "computer 7:kitchen of bob: credential ")
	assert.Equal(t, "revoked", requireClose(ctx, t, ofBob, 4003))
}

// TestTheSharedPasswordTakesNoLinkedComputersNameFromTheOperator: a player's program on the
// shared password says hello as alice's 7:kitchen (it needs no more than the password every
// player's computer holds); the gateway's own caller (here loopback without a token), which the
// operator's CLI, web console and MCP client are, reached that impostor, local's computer
// winning as its "own": the operator's commands, files and keys meant for alice's computer,
// listed as alice's, went to the player. Now no route picks either: each names the accounts,
// and once the impostor is gone alice's computer is reached as before.
func TestTheSharedPasswordTakesNoLinkedComputersNameFromTheOperator(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	lastLine(ctx, t, "accounts", "add", "alice", dir)
	aliceCred := lastLine(ctx, t, "credentials", "add", "alice", dir)

	g := startGateway(t, dir)
	ofAlice := dial(ctx, t, g, "7:kitchen")
	require.NoError(t, ofAlice.MustHello(ctx, aliceCred))
	answerRequests(ctx, ofAlice, "alice's")
	impostor := connect(ctx, t, g, "7:kitchen")
	answerRequests(ctx, impostor, "the impostor")
	url := "--url=" + g.URL("")
	const several = "computer 7:kitchen is connected in several accounts (alice, local): use alice's token to reach alice's; " +
		"no token reaches local's while another account has this traposId connected, since any computer with the shared password may say hello under it: " +
		"give that computer a label of its own in game (label set NAME), or link it (sandbox link)"

	out, errOut, code := runCLI(ctx, t, nil, "ping", url, "7:kitchen")
	assert.Equal(t, 1, code, out)
	assert.Equal(t, "trap-sandbox: computer 7:kitchen ping: the gateway answered not_connected: the computer "+strings.TrimPrefix(several, "computer 7:kitchen ")+"\n", errOut)
	assert.NotContains(t, out, "impostor")

	// The web console's live view and the stdio MCP bridge's waits (the screen stream), and MCP.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL("/trapos/computers/7:kitchen/screen"), nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := harness.HTTPClient().Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `"accounts":["alice","local"]`)
	msg := harness.ToolError(t, harness.CallTool(ctx, t, harness.ConnectMCP(ctx, t, g, ""), "ping", map[string]any{"traposId": "7:kitchen"}), "not_connected")
	assert.Contains(t, msg, several)

	// Gone, the impostor leaves alice's computer the one of that traposId.
	require.NoError(t, impostor.Close())
	require.NoError(t, g.WaitLog(ctx, "computer disconnected"))
	out, errOut, code = runCLI(ctx, t, nil, "ping", url, "7:kitchen")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "alice's")
}

// TestAccountsRemoveClosesItsComputers: `accounts remove` through the running gateway (an
// admin's token) removes the account with its token and credential, closes its connected
// computer at once with 4003 and says so; the account's token is refused from the next
// request and its credential at the next hello. A user's token, the admin's own account and an
// unknown name are refused with the fix. On the data directory beside the running gateway,
// the gateway closes the removed account's computer at its next look for revocations.
func TestAccountsRemoveClosesItsComputers(t *testing.T) {
	ctx := testContext(t)
	dir := "--data-dir=" + t.TempDir()
	alice := lastLine(ctx, t, "accounts", "add", "alice", dir)
	lastLine(ctx, t, "accounts", "add", "bob", dir)
	root := lastLine(ctx, t, "accounts", "add", "root", "--admin", dir)
	aliceCred := lastLine(ctx, t, "credentials", "add", "alice", dir)
	bobCred := lastLine(ctx, t, "credentials", "add", "bob", dir)

	g := startGateway(t, dir)
	c := dial(ctx, t, g, "7:kitchen")
	require.NoError(t, c.MustHello(ctx, aliceCred))
	url := "--url=" + g.URL("")

	_, errOut, code := runCLI(ctx, t, nil, "accounts", "remove", url, "--api-token="+alice, "bob")
	assert.Equal(t, 1, code)
	assert.Equal(t, `trap-sandbox: accounts remove: removing an account needs an admin token, and this one is of "alice", a user (use an admin account's token or the gateway's SANDBOX_API_TOKEN, or run the command on the gateway's host with --data-dir)`+"\n", errOut)
	_, errOut, code = runCLI(ctx, t, nil, "accounts", "remove", url, "--api-token="+root, "root")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "an admin does not remove itself")
	_, errOut, code = runCLI(ctx, t, nil, "accounts", "remove", url, "--api-token="+root, "zed")
	assert.Equal(t, 1, code)
	assert.Equal(t, `trap-sandbox: accounts remove: no account "zed" that this token reaches (trap-sandbox accounts list shows them)`+"\n", errOut)

	out, errOut, code := runCLI(ctx, t, nil, "accounts", "remove", url, "--api-token="+root, "alice")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "account alice (user) removed from the gateway at "+g.URL("")+": 1 API token, 1 computer credential, 0 enrollment keys, 0 approved link codes\n"+
		"closed its connected computers (4003 revoked, their daemons stop): 7:kitchen; its tokens are refused from the next request\n", out)
	assert.Equal(t, "revoked", requireClose(ctx, t, c, 4003))
	status, body := apiGet(ctx, t, g, alice, "/trapos/computers")
	assert.Equal(t, http.StatusUnauthorized, status, body)
	again := dial(ctx, t, g, "7:kitchen")
	f, err := again.Hello(ctx, aliceCred)
	require.NoError(t, err)
	requireErrorCode(t, f, "unauthorized")
	assert.Contains(t, g.Log(), `msg="account API: account removed" account=alice role=user tokens=1 credentials=1`)
	assert.NotContains(t, g.Log(), aliceCred[len(aliceCred)-12:], "no credential in the gateway's log")

	// On the data directory, beside the running gateway.
	b := dial(ctx, t, g, "8:hall")
	require.NoError(t, b.MustHello(ctx, bobCred))
	out, errOut, code = runCLI(ctx, t, nil, "accounts", "remove", dir, "bob")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "account bob (user) removed from ")
	assert.Contains(t, out, "a gateway running on this data directory closes its connected computers within 1s (4003 revoked)")
	assert.Equal(t, "revoked", requireClose(ctx, t, b, 4003))

	out, errOut, code = runCLI(ctx, t, nil, "accounts", "list", dir)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, "alice")
	assert.NotContains(t, out, "bob")
	_, errOut, code = runCLI(ctx, t, nil, "accounts", "remove", dir, "root")
	assert.Equal(t, 1, code)
	assert.Equal(t, `trap-sandbox: accounts remove: account "root" is the last admin account: add another first (trap-sandbox accounts add NAME --admin), then remove it`+"\n", errOut)
}

// TestAccountCommandsWithoutTheStore: the binary run where the gateway's store is not (another
// user's home, no --data-dir) fails as the CLI's other failures do, with the line that names
// the file it looked at and the fix, and leaves no empty store behind; accounts add starts
// one there and says so.
func TestAccountCommandsWithoutTheStore(t *testing.T) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		t.Skip("the default data directory is the user's config directory there, not under HOME/.local/share")
	}
	ctx := testContext(t)
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_DATA_HOME="}
	db := filepath.Join(home, ".local", "share", "trap-sandbox", "accounts.db")
	for _, args := range [][]string{{"accounts", "list"}, {"credentials", "list"}, {"tokens", "revoke", "x"}} {
		out, errOut, code := runCLI(ctx, t, env, args...)
		assert.Equal(t, 1, code, "%v", args)
		assert.Empty(t, out, "%v", args)
		assert.Equal(t, "trap-sandbox: "+strings.Join(args[:2], " ")+": no account store at "+db+": the gateway keeps it in its data directory; give the same --data-dir (SANDBOX_DATA_DIR) as the gateway, run this as the gateway's user, or reach a running gateway with --url and --api-token\n",
			errOut, "%v", args)
	}
	assert.NoDirExists(t, filepath.Join(home, ".local"), "nothing made")

	out, errOut, code := runCLI(ctx, t, env, "accounts", "add", "root", "--admin")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "trap-sandbox: created the account store "+db+" (there was none): a gateway knows its accounts only if it runs on this data directory\n", errOut)
	assert.Contains(t, out, "account root (admin) created in "+db)
	out, errOut, code = runCLI(ctx, t, env, "accounts", "list")
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)
	assert.Regexp(t, `(?m)^root\s+admin\s`, out)
}
