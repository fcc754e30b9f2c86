package cli

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/account/accounttest"
	"trap-sandbox/internal/accountapi"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/computer"
	"trap-sandbox/internal/gateway"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/link"
	"trap-sandbox/internal/server"
	"trap-sandbox/internal/table"
	"trap-sandbox/testkit"
)

// lastLineOf is a command's output's last line (where the commands print a secret).
func lastLineOf(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// serveAccounts serves the account API over the SQLite store in dir, as a gateway with that
// --data-dir does, and returns its URL.
func serveAccounts(t *testing.T, dir string) string {
	t.Helper()
	return serveAccountsWith(t, dir, "gw-tok3n")
}

// serveAccountsWith is serveAccounts with apiToken as its SANDBOX_API_TOKEN ("": none, so a
// loopback caller without a token is its admin).
func serveAccountsWith(t *testing.T, dir, apiToken string) string {
	t.Helper()
	s, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	accounts := account.New(s, clock.Real{})
	logger := slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(server.New(logger, server.Config{APIToken: apiToken, Accounts: accounts}, accountapi.New(accounts, logger),
		link.New(link.Config{Accounts: accounts}, logger)).Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestAccountCommandsOnStoreAndAPI: every account command does the same on the store
// (--data-dir) and through a running gateway (--url, --api-token an admin's), and what one
// way makes the other sees.
func TestAccountCommandsOnStoreAndAPI(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	data := "--data-dir=" + dir
	root := lastLineOf(mustRun(t, "accounts", "add", "root", "--admin", data))
	url := serveAccounts(t, dir)

	for mode, flags := range map[string][]string{
		"store": {data},
		"api":   {"--url=" + url, "--api-token=" + root},
	} {
		t.Run(mode, func(t *testing.T) {
			run := func(args ...string) string {
				t.Helper()
				out, err := runClient(t, append(args, flags...)...)
				require.NoError(t, err, "%v", args)
				return out
			}
			name := "bob-" + mode
			out := run("accounts", "add", name)
			assert.Contains(t, out, "account "+name+" (user) created in ")
			// The environment, not --api-token: every user of the host reads a command line.
			assert.Contains(t, out, "(shown once; send it as Authorization: Bearer, or give it in SANDBOX_API_TOKEN)")
			if mode == "api" {
				assert.Contains(t, out, "created in the gateway at "+url)
			} else {
				assert.Contains(t, out, filepath.Join(dir, account.DBFile))
			}
			bob := lastLineOf(out)
			require.True(t, strings.HasPrefix(bob, "tsa_"), bob)

			by := account.Operator
			if mode == "api" {
				by = "root"
			}
			out = run("accounts", "list")
			assert.Regexp(t, `(?m)^`+name+`\s+user\s+20\S+\s+`+by+`\s+1\s+-\s+-$`, out)
			assert.Regexp(t, `(?m)^root\s+admin\s`, out, "the other way's account too")

			tok := lastLineOf(run("tokens", "add", name, "laptop", "--expires=1h"))
			require.True(t, strings.HasPrefix(tok, "tsa_"), tok)
			id := strings.SplitN(tok, "_", 3)[1]
			out = run("tokens", "list", name)
			assert.Regexp(t, `(?m)^`+id+`\s+`+name+`\s+laptop\s+20\S+\s+`+by+`\s+20\S+\s+-\s+-\s+-$`, out)
			out = run("tokens", "revoke", tok)
			assert.Contains(t, out, "token "+id+" (laptop) of "+name+" revoked at 20")

			// None yet: said on stderr, as computers says none is connected, and no table (a
			// header alone read as a table of nothing).
			out, errOut, err := runWith(t, "", append([]string{"credentials", "list", name}, flags...)...)
			require.NoError(t, err)
			assert.Empty(t, out)
			assert.Equal(t, "no computer credentials in account "+name+"\n", errOut)

			cred := lastLineOf(run("credentials", "add", name))
			require.True(t, strings.HasPrefix(cred, "tsc_"), cred)
			credID := strings.SplitN(cred, "_", 3)[1]
			out = run("credentials", "list", name)
			assert.Regexp(t, `(?m)^`+credID+`\s+`+name+`\s+`+by+`\s+20\S+\s+-\s+-\s+-\s+-$`, out)
			out = run("credentials", "revoke", credID)
			assert.Contains(t, out, "credential "+credID+" of "+name+" revoked at 20")

			_, err = runClient(t, append([]string{"tokens", "revoke", "nope"}, flags...)...)
			require.Error(t, err)
			if mode == "api" {
				assert.Equal(t, `tokens revoke: no token "nope" that this token reaches (trap-sandbox tokens list shows the ids)`, err.Error())
			} else {
				assert.Equal(t, `tokens revoke: no token "nope" (trap-sandbox tokens list shows the ids)`, err.Error())
			}
		})
	}
}

// aliceAndBob serves the account API of a new store holding the users alice and bob, and
// returns its URL and alice's token.
func aliceAndBob(t *testing.T) (url, alice string) {
	t.Helper()
	clearEnv(t)
	dir := t.TempDir()
	data := "--data-dir=" + dir
	alice = lastLineOf(mustRun(t, "accounts", "add", "alice", data))
	mustRun(t, "accounts", "add", "bob", data)
	return serveAccounts(t, dir), alice
}

// TestAccountCommandsThroughTheAPIAsAUser: a user's token manages its own tokens; adding an
// account names the fix; another account is "no account" as one that does not exist.
func TestAccountCommandsThroughTheAPIAsAUser(t *testing.T) {
	url, alice := aliceAndBob(t)
	as := []string{"--url=" + url, "--api-token=" + alice}

	_, err := runClient(t, append([]string{"accounts", "add", "carol"}, as...)...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "adding an account needs an admin token")
	assert.Contains(t, err.Error(), `this one is of "alice", a user`)

	out, err := runClient(t, append([]string{"accounts", "list"}, as...)...)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^alice\s+user\s`, out)
	assert.NotContains(t, out, "bob", "a user sees its own account only")

	_, errBob := runClient(t, append([]string{"tokens", "list", "bob"}, as...)...)
	_, errZed := runClient(t, append([]string{"tokens", "list", "zed"}, as...)...)
	require.Error(t, errBob)
	assert.Equal(t, strings.ReplaceAll(errZed.Error(), "zed", "bob"), errBob.Error(), "bob's answer as a missing account's")
	assert.Contains(t, errBob.Error(), `no account "bob" that this token reaches`)

	tok := lastLineOf(mustRun(t, append([]string{"tokens", "add", "alice", "ci"}, as...)...))
	require.True(t, strings.HasPrefix(tok, "tsa_"))
	out, err = runClient(t, append([]string{"tokens", "list"}, as...)...)
	require.NoError(t, err)
	assert.Contains(t, out, " ci ")
	assert.Regexp(t, `(?m)^\S+\s+alice\s+first\s+20\S+\s+operator\s+-\s+-\s+20\S+\s+127\.0\.0\.1$`, out, "the token in use: its last use and address")

	_, err = runClient(t, append([]string{"accounts", "list"}, "--url="+url, "--api-token=tsa_nope_nope")...)
	require.Error(t, err)
	_, errComputers := runClient(t, append([]string{"computers"}, "--url="+url, "--api-token=tsa_nope_nope")...)
	require.Error(t, errComputers)
	assert.Equal(t, "list computers: "+strings.TrimPrefix(err.Error(), "accounts list: "), errComputers.Error(), "worded as every command words the API auth's refusal")
	assert.Equal(t, "accounts list: the gateway at "+url+" answered 401: unknown or wrong account token: check it, or ask the account's holder or an admin for a new one (trap-sandbox tokens add)"+
		" (the token refused is the one given with --api-token or SANDBOX_API_TOKEN)", err.Error())
}

// TestTokensAddSaysWhenTheTokenExpires: a token without --expires never expires, and the
// line that shows it says so in words, as link key's does, not with a listing's "-".
func TestTokensAddSaysWhenTheTokenExpires(t *testing.T) {
	clearEnv(t)
	data := "--data-dir=" + t.TempDir()
	mustRun(t, "accounts", "add", "alice", data)
	forever := mustRun(t, "tokens", "add", "alice", "laptop", data)
	assert.Regexp(t, `^token \S+ \(laptop\) of alice, never expires; shown once:\ntsa_\S+\n$`, forever)
	hour := mustRun(t, "tokens", "add", "alice", "ci", "--expires=1h", data)
	assert.Regexp(t, `^token \S+ \(ci\) of alice, expires 20\S+Z; shown once:\ntsa_\S+\n$`, hour)
}

// TestAnExpiresPastTheCapIsToldTheCap: tokens add's and link key's --expires past the cap
// (100 years), negative, or too long for a Go duration at all (3000000h, once "is not a
// duration") is a usage error telling the cap in the flag's terms, before either way to the
// store (the API would say it in milliseconds); the cap itself is taken.
func TestAnExpiresPastTheCapIsToldTheCap(t *testing.T) {
	clearEnv(t)
	for _, cmd := range [][]string{{"tokens", "add", "alice", "big"}, {"link", "key", "--account=alice"}} {
		for _, expires := range []string{"1000000h", "3000000h", "99999999999999999999s", "-90m"} {
			err := parseError(t, append(cmd, "--expires="+expires)...)
			assert.EqualError(t, err, "--expires: "+expires+" is out of range: give a lifetime from 1s to 876000h (100 years), or 0 for one that never expires",
				"%v", cmd)
		}
	}
	data := "--data-dir=" + t.TempDir()
	mustRun(t, "accounts", "add", "alice", data)
	assert.Contains(t, mustRun(t, "tokens", "add", "alice", "century", "--expires=876000h", data), "expires 21")
	assert.Contains(t, mustRun(t, "link", "key", "--account=alice", "--expires=876000h", data), "expires 21")
	assert.Contains(t, mustRun(t, "link", "key", "--account=alice", data), "expires 20", "24h, the default")
}

// TestACallWithoutATokenIsNotToldOfOne: through a gateway without SANDBOX_API_TOKEN a loopback
// caller sends no token and is its admin: what does not exist is said so, not "… that this
// token reaches", which named a token nobody gave.
func TestACallWithoutATokenIsNotToldOfOne(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	mustRun(t, "accounts", "add", "alice", "--data-dir="+dir)
	url := "--url=" + serveAccountsWith(t, dir, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tokens", "revoke", "nope"}, `tokens revoke: no token "nope" (trap-sandbox tokens list shows the ids)`},
		{[]string{"credentials", "revoke", "nope"}, `credentials revoke: no credential "nope" (trap-sandbox credentials list shows the ids)`},
		{[]string{"tokens", "list", "zed"}, `tokens list: no account "zed" (trap-sandbox accounts list shows them; accounts add creates one)`},
		{[]string{"accounts", "remove", "zed"}, `accounts remove: no account "zed" (trap-sandbox accounts list shows them)`},
		// The link commands' refusal of an account read "the gateway answered bad_payload: no
		// account "zed" (trap-sandbox accounts list shows them)", unlike the rest.
		{[]string{"link", "key", "--account", "zed"}, `link key: no account "zed" (trap-sandbox accounts list shows them; accounts add creates one)`},
		{[]string{"link", "approve", "BCDF-GHJK", "--account", "zed"}, `link approve: no account "zed" (trap-sandbox accounts list shows them; accounts add creates one)`},
	} {
		_, err := runClient(t, append(tc.args, url)...)
		assert.EqualError(t, err, tc.want, "%v", tc.args)
	}
	// On the store itself too (link key without --url said "(trap-sandbox accounts add zed
	// creates it)").
	_, err := runClient(t, "link", "key", "--account", "zed", "--data-dir="+dir)
	assert.EqualError(t, err, `link key: no account "zed" (trap-sandbox accounts list shows them; accounts add creates one)`)
}

// TestAMisspeltAccountIsNamed: an account name that is none but near one (alcie) is answered
// with the account meant, on the store and through the gateway, by every command that names
// an account: link approve said only `no account "alcie" (trap-sandbox accounts list shows
// them)`. A name near none keeps the list hint. A user's token hears of its own account
// alone: bob's naming alcie is not told of alice, nor is the API's answer to it.
func TestAMisspeltAccountIsNamed(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	data := "--data-dir=" + dir
	alice := lastLineOf(mustRun(t, "accounts", "add", "alice", data))
	bob := lastLineOf(mustRun(t, "accounts", "add", "bob", data))
	url := serveAccountsWith(t, dir, "")
	cmds := [][]string{
		{"tokens", "list", "NAME"}, {"tokens", "add", "NAME", "x"}, {"credentials", "list", "NAME"}, {"credentials", "add", "NAME"},
		{"accounts", "remove", "NAME"}, {"link", "key", "--account", "NAME"}, {"link", "keys", "--account", "NAME"},
		{"link", "approve", "BCDF-GHJK", "--account", "NAME"},
	}
	with := func(cmd []string, name string, flags ...string) []string {
		args := slices.Clone(cmd)
		args[slices.Index(args, "NAME")] = name
		return append(args, flags...)
	}
	for _, cmd := range cmds {
		ways := map[string][]string{"store": {data}, "api": {"--url=" + url}}
		if cmd[1] == "approve" {
			delete(ways, "store") // through the gateway alone
		}
		for way, flags := range ways {
			_, err := runClient(t, with(cmd, "alcie", flags...)...)
			assert.EqualError(t, err, strings.Join(cmd[:2], " ")+`: no account "alcie"; did you mean "alice"?`, "%s %v", way, cmd)
			_, err = runClient(t, with(cmd, "carol", flags...)...)
			require.Error(t, err, "%s %v", way, cmd)
			assert.Contains(t, err.Error(), `no account "carol" (trap-sandbox accounts list shows them`, "%s %v", way, cmd)
		}
	}

	// A user's token: its own account named near, the rest as any name it does not reach.
	_, err := runClient(t, "tokens", "list", "alcie", "--url="+url, "--api-token="+alice)
	assert.EqualError(t, err, `tokens list: no account "alcie" that this token reaches; did you mean "alice"?`)
	for _, cmd := range cmds {
		_, err := runClient(t, with(cmd, "alcie", "--url="+url, "--api-token="+bob)...)
		require.Error(t, err, "%v", cmd)
		assert.NotContains(t, err.Error(), "alice", "%v", cmd)
	}
	for _, token := range []string{bob, ""} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+accountapi.TokensPath+"?account=alcie", nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, resp.Body.Close())
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		if token == "" {
			assert.Contains(t, string(body), `account \"alcie\": not found (did you mean \"alice\"?)`, "the API's answer to its admin")
		} else {
			assert.NotContains(t, string(body), "alice", "the API's answer to bob")
		}
	}
}

// TestAnotherAccountNamesTheTokenThatReachesIt: a user's token naming another account is told
// that its fix is another token (it cannot create accounts), the same whether that account
// exists or not; an admin's, for one that does not exist, that accounts add creates it.
func TestAnotherAccountNamesTheTokenThatReachesIt(t *testing.T) {
	url, alice := aliceAndBob(t)
	for _, other := range []string{"bob", "zed"} {
		for _, cmd := range [][]string{{"tokens", "list", other}, {"tokens", "add", other, "x"}, {"credentials", "list", other}, {"credentials", "add", other}} {
			_, err := runClient(t, append(cmd, "--url="+url, "--api-token="+alice)...)
			require.Error(t, err, "%v", cmd)
			assert.Equal(t, strings.Join(cmd[:2], " ")+`: no account "`+other+`" that this token reaches: a user's token reaches its own account only (trap-sandbox accounts list shows it); another account's needs an admin's token`,
				err.Error(), "%v", cmd)
		}
	}
	_, err := runClient(t, "tokens", "list", "zed", "--url="+url, "--api-token=gw-tok3n")
	require.Error(t, err)
	assert.Equal(t, `tokens list: no account "zed" that this token reaches (trap-sandbox accounts list shows them; accounts add creates one)`, err.Error())
}

// TestAccountCommandsChooseWhereTheyWork: no gateway flag works on the store even with the
// gateway's SANDBOX_API_TOKEN in the environment (as before the API could); a gateway flag
// and a store flag together are refused with the fix; --url alone takes SANDBOX_API_TOKEN.
func TestAccountCommandsChooseWhereTheyWork(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", home)
	t.Setenv("SANDBOX_API_TOKEN", "gw-tok3n")
	out, err := runClient(t, "accounts", "add", "alice")
	require.NoError(t, err)
	assert.Contains(t, out, filepath.Join(home, "trap-sandbox", account.DBFile))

	_, err = runClient(t, "accounts", "list", "--api-token=x", "--data-dir="+home)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not both: --api-token and --data-dir (or SANDBOX_DATA_DIR) are given")
	// SANDBOX_URL, exported for the other commands, is --url here: it is named, where the
	// refusal spoke only of flags the command line did not hold.
	t.Setenv("SANDBOX_URL", "http://127.0.0.1:4444")
	_, err = runClient(t, "accounts", "list", "--data-dir="+home)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not both: --url (or SANDBOX_URL) and --data-dir (or SANDBOX_DATA_DIR) are given")
	require.NoError(t, os.Unsetenv("SANDBOX_URL"))

	url := serveAccounts(t, filepath.Join(home, "trap-sandbox"))
	out, err = runClient(t, "accounts", "add", "bob", "--url="+url)
	require.NoError(t, err, "SANDBOX_API_TOKEN is the gateway's own token: an admin")
	assert.Contains(t, out, "created in the gateway at "+url)
	out, err = runClient(t, "accounts", "list", "--data-dir="+filepath.Join(home, "trap-sandbox"))
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^bob\s+user\s+20\S+\s+local\s`, out, "made through the gateway by its own token: local")

	// A player given bob's token keeps it in SANDBOX_API_TOKEN and forgets --url: on their
	// machine the default store is empty, and was made and answered from ("no account bob").
	bobs := lastLineOf(mustRun(t, "tokens", "add", "bob", "phone", "--url="+url))
	player := t.TempDir()
	t.Setenv("XDG_DATA_HOME", player)
	t.Setenv("SANDBOX_API_TOKEN", bobs)
	for _, args := range [][]string{{"tokens", "list"}, {"accounts", "list"}, {"credentials", "list"},
		{"link", "key", "--account", "bob"}, {"link", "keys"}, {"link", "revoke-key", "x"}} {
		_, err = runClient(t, args...)
		require.Error(t, err, "%v", args)
		assert.Contains(t, err.Error(), "SANDBOX_API_TOKEN holds an account's API token (tsa_...), which only a running gateway takes, and there is no account store in "+
			filepath.Join(player, "trap-sandbox")+": add --url URL", "%v", args)
	}
	assert.NoDirExists(t, filepath.Join(player, "trap-sandbox"), "no empty store made")
	out, err = runClient(t, "tokens", "list", "--url="+url)
	require.NoError(t, err, "with --url the token is bob's")
	assert.Contains(t, out, "phone")

	// On the gateway's host, where the store is, the operator keeping an admin's token in
	// SANDBOX_API_TOKEN (as advised) still works on the store with no flag.
	t.Setenv("XDG_DATA_HOME", home)
	out, err = runClient(t, "accounts", "list")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^bob\s+user\s`, out)
}

// TestStoreCommandsNeedTheStore: with no account store in the data directory (run as
// another user than the gateway's, or without its --data-dir), every command on the store but
// accounts add fails with the one line that names the file and the fix, and makes nothing:
// an empty store made there would answer "no accounts" as if it were the gateway's. accounts
// add starts a store, and says so on stderr with its path; on a store that is there, nothing
// is said.
func TestStoreCommandsNeedTheStore(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", home)
	given := filepath.Join(t.TempDir(), "data")
	for where, flags := range map[string][]string{
		"default":    nil,
		"--data-dir": {"--data-dir=" + given},
	} {
		t.Run(where, func(t *testing.T) {
			dir := filepath.Join(home, "trap-sandbox")
			if flags != nil {
				dir = given
			}
			db := filepath.Join(dir, account.DBFile)
			for _, args := range [][]string{{"accounts", "list"}, {"tokens", "list"}, {"credentials", "list"}, {"link", "keys"},
				{"accounts", "remove", "alice"}, {"tokens", "revoke", "x"}, {"credentials", "revoke", "x"}, {"link", "revoke-key", "x"},
				{"tokens", "add", "alice", "laptop"}, {"credentials", "add", "alice"}, {"link", "key", "--account", "alice"}} {
				out, errOut, err := runWith(t, "", append(args, flags...)...)
				require.Error(t, err, "%v", args)
				assert.Equal(t, strings.Join(args[:2], " ")+": no account store at "+db+": the gateway keeps it in its data directory; give the same --data-dir (SANDBOX_DATA_DIR) as the gateway, run this as the gateway's user, or reach a running gateway with --url and --api-token",
					err.Error(), "%v", args)
				assert.Empty(t, out, "%v", args)
				assert.Empty(t, errOut, "%v", args)
			}
			assert.NoDirExists(t, dir, "nothing made")

			out, errOut, err := runWith(t, "", append([]string{"accounts", "add", "root", "--admin"}, flags...)...)
			require.NoError(t, err)
			assert.Equal(t, "trap-sandbox: created the account store "+db+" (there was none): a gateway knows its accounts only if it runs on this data directory\n", errOut)
			assert.Contains(t, out, "account root (admin) created in "+db)
			assert.FileExists(t, db)

			out, errOut, err = runWith(t, "", append([]string{"accounts", "add", "alice"}, flags...)...)
			require.NoError(t, err)
			assert.Empty(t, errOut, "the store was there")
			assert.Contains(t, out, "account alice (user) created in "+db)
			out, errOut, err = runWith(t, "", append([]string{"accounts", "list"}, flags...)...)
			require.NoError(t, err)
			assert.Empty(t, errOut)
			assert.Regexp(t, `(?m)^alice\s+user\s`, out)
		})
	}
}

// mustRun runs a client command that must succeed and returns its output.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runClient(t, args...)
	require.NoError(t, err, "%v", args)
	return out
}

// TestAccountsAddRefusesTheGatewaysOwnNames: local, operator and admin are refused on the
// store and through the API alike, with the one line that says why.
func TestAccountsAddRefusesTheGatewaysOwnNames(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	data := "--data-dir=" + dir
	root := lastLineOf(mustRun(t, "accounts", "add", "root", "--admin", data))
	url := serveAccounts(t, dir)
	for _, name := range []string{"local", "operator", "admin"} {
		for mode, flags := range map[string][]string{"store": {data}, "api": {"--url=" + url, "--api-token=" + root}} {
			_, err := runClient(t, append([]string{"accounts", "add", name}, flags...)...)
			require.Error(t, err, "%s %s", mode, name)
			assert.Contains(t, err.Error(), `account name "`+name+`" is the gateway's own (`, mode)
			assert.NotContains(t, err.Error(), "\n", mode)
		}
	}
	out := mustRun(t, "accounts", "list", data)
	assert.NotRegexp(t, `(?m)^(local|operator|admin)\s`, out)
}

// TestAccountListingsEscapeWhatTheStoreHolds: a name that holds control characters (a store
// written before names were checked, or by hand) is shown with them as \xNN: its row stays one
// row, and no forged line or terminal escape reaches the operator; tokens add refuses one.
func TestAccountListingsEscapeWhatTheStoreHolds(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	data := "--data-dir=" + dir
	mustRun(t, "accounts", "add", "alice", data)
	_, err := runClient(t, "tokens", "add", "alice", "a\x00b\nc", data)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `token name "a\x00b\nc" holds U+0000`)

	s, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	forged := "x\nroot\tadmin\x1b[2J\u009b"
	require.NoError(t, s.CreateToken(t.Context(), account.Token{Selector: "forged", Hash: []byte("h"), AccountID: "alice", Name: forged, CreatedBy: forged}))
	require.NoError(t, s.Close())

	out := mustRun(t, "tokens", "list", data)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	assert.Regexp(t, `(?m)^forged\s+alice\s+x\\x0aroot\\x09admin\\x1b\[2J\\x9b\s+-\s+x\\x0aroot`, out)
	assert.NotContains(t, out, "\x1b")
}

// TestLookAlikeTokenNamesListApart: a token's name that prints as another (a, U+200B, b beside
// ab; a no-break space beside a space) is refused on the store and through the API alike,
// naming the character; one a store holds anyway (written before the check, or by hand) is
// listed, and named by tokens revoke, with it escaped, and the columns after it stay under
// their headers.
func TestLookAlikeTokenNamesListApart(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	data := "--data-dir=" + dir
	root := lastLineOf(mustRun(t, "accounts", "add", "root", "--admin", data))
	url := serveAccounts(t, dir)
	for mode, flags := range map[string][]string{"store": {data}, "api": {"--url=" + url, "--api-token=" + root}} {
		for name, r := range map[string]string{"a\u200bb": "U+200B", "a\u00a0b": "U+00A0", "\ufeffab": "U+FEFF", "a\u2060b": "U+2060"} {
			_, err := runClient(t, append([]string{"tokens", "add", "root", name}, flags...)...)
			require.Error(t, err, "%s %q", mode, name)
			assert.Contains(t, err.Error(), "token name "+strconv.QuoteToASCII(name)+" holds "+r+", which prints as a space, a hyphen or nothing", mode)
		}
	}

	s, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	for sel, name := range map[string]string{"zwsp": "a\u200bb", "nbsp": "a\u00a0b", "zwj": "a\u200db\u2060"} {
		require.NoError(t, s.CreateToken(t.Context(), account.Token{Selector: sel, Hash: []byte("h"), AccountID: "root", Name: name}))
	}
	require.NoError(t, s.Close())
	mustRun(t, "tokens", "add", "root", "ab", data)

	out := mustRun(t, "tokens", "list", data)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 6, out) // the header, root's first token, the three and ab
	header := columnStarts(lines[0])
	for _, line := range lines[1:] {
		assert.Equal(t, header, columnStarts(line), "the columns of %q under the header's:\n%s", line, out)
	}
	assert.Regexp(t, `(?m)^zwsp\s+root\s+a\\u200bb\s+-\s`, out)
	assert.Regexp(t, `(?m)^nbsp\s+root\s+a\\xa0b\s+-\s`, out)
	assert.Regexp(t, `(?m)^zwj\s+root\s+a\\u200db\\u2060\s+-\s`, out)
	assert.Regexp(t, `(?m)^\w+\s+root\s+ab\s+20`, out)

	for mode, flags := range map[string][]string{"store": {data}, "api": {"--url=" + url, "--api-token=" + root}} {
		sel := map[string]string{"store": "zwsp", "api": "nbsp"}[mode]
		out = mustRun(t, append([]string{"tokens", "revoke", sel}, flags...)...)
		assert.Regexp(t, `^token `+sel+` \(a\\(u200b|xa0)b\) of root revoked at 20`, out, mode)
	}
}

// TestNamesThatLookAlikeByTheirLettersListApart: a token's name that looks like another by its
// letters is refused on the store and through the API alike: a word mixing scripts (lаptop,
// a Cyrillic а), and a name like one of a token of the account that still opens (a Cyrillic
// сору beside copy; café beside e and U+0301), naming that token and how to free its name;
// é written as e and U+0301 is kept as é. What a store holds from before the rule is listed
// and revoked by its id all the same, the names that break it spelled out (l\u0430ptop,
// cafe\u0301) and so are two of one account that look alike, the first too (copy and
// \u0441\u043e\u0440\u0443 where both read copy), on the store and through the API.
func TestNamesThatLookAlikeByTheirLettersListApart(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	data := "--data-dir=" + dir
	root := lastLineOf(mustRun(t, "accounts", "add", "root", "--admin", data))
	url := serveAccounts(t, dir)
	store, api := []string{data}, []string{"--url=" + url, "--api-token=" + root}

	s, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	for sel, name := range map[string]string{"nfd": "cafe\u0301", "mixed": "l\u0430ptop", "latin": "copy", "cyrillic": "\u0441\u043e\u0440\u0443"} {
		require.NoError(t, s.CreateToken(t.Context(), account.Token{Selector: sel, Hash: []byte("h"), AccountID: "root", Name: name}))
	}
	require.NoError(t, s.Close())

	for mode, flags := range map[string][]string{"store": store, "api": api} {
		_, err := runClient(t, append([]string{"tokens", "add", "root", "my l\u0430ptop"}, flags...)...)
		require.Error(t, err, mode)
		assert.Contains(t, err.Error(), `mixes scripts in one word, l\u0430ptop (Latin and Cyrillic: \u0430 is Cyrillic); a word of two scripts may hide a letter`, mode)
		_, err = runClient(t, append([]string{"tokens", "add", "root", "c\u043e\u0440\u0443"}, flags...)...)
		require.Error(t, err, mode)
		assert.Contains(t, err.Error(), "mixes scripts", mode)
		_, err = runClient(t, append([]string{"tokens", "add", "root", "caf\u00e9"}, flags...)...)
		require.Error(t, err, mode)
		assert.Contains(t, err.Error(), `looks like the name of token nfd of account root, which a listing could not tell apart (spelled out: caf\xe9 and cafe\u0301): choose another name, or revoke that token first (trap-sandbox tokens revoke nfd)`, mode)
	}
	_, err = runClient(t, append([]string{"tokens", "add", "root", "\u0441\u043e\u0440\u0443"}, store...)...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is taken by token cyrillic of account root")

	for mode, flags := range map[string][]string{"store": store, "api": api} {
		out := mustRun(t, append([]string{"tokens", "list"}, flags...)...)
		assert.Regexp(t, `(?m)^nfd\s+root\s+cafe\\u0301\s+-\s`, out, mode)
		assert.Regexp(t, `(?m)^mixed\s+root\s+l\\u0430ptop\s+-\s`, out, mode)
		assert.Regexp(t, `(?m)^latin\s+root\s+copy\s+-\s`, out, mode)
		assert.Regexp(t, `(?m)^cyrillic\s+root\s+\\u0441\\u043e\\u0440\\u0443\s+-\s`, out, mode)
	}

	out := mustRun(t, append([]string{"tokens", "revoke", "mixed"}, api...)...)
	assert.Regexp(t, `^token mixed \(l\\u0430ptop\) of root revoked at 20`, out)
	out = mustRun(t, append([]string{"tokens", "revoke", "nfd"}, store...)...)
	assert.Regexp(t, `^token nfd \(cafe\\u0301\) of root revoked at 20`, out)
	out = mustRun(t, append([]string{"tokens", "add", "root", "cafe\u0301"}, api...)...)
	assert.Regexp(t, "^token \\w+ \\(caf\u00e9\\) of root, never expires", out, "kept composed, the old one revoked")
	out = mustRun(t, append([]string{"tokens", "list", "root"}, store...)...)
	assert.Regexp(t, `(?m)^nfd\s+root\s+cafe\\u0301\s+-\s+-\s+-\s+20`, out, "listed revoked, spelled out")
	assert.Regexp(t, `(?m)^\w+\s+root\s+caf\\xe9\s+20`, out, "the new café, a twin of the revoked one, spelled out too")
}

// TestCredentialsListShowsTheComputerAsTheListsDo: the traposId a credential's last hello
// said is shown as every list of computers shows it (cctext.ShowTraposID), where a space at
// its label's end was not to be seen: 7:kitchen\x20 is not 7:kitchen.
func TestCredentialsListShowsTheComputerAsTheListsDo(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	data := "--data-dir=" + dir
	mustRun(t, "accounts", "add", "bob", data)
	plain := lastLineOf(mustRun(t, "credentials", "add", "bob", data))
	s, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	_, err = account.New(s, clock.Real{}).AuthenticateComputer(t.Context(), plain, "7:kitchen ", "192.0.2.7:5555")
	require.NoError(t, err)
	require.NoError(t, s.Close())

	out := mustRun(t, "credentials", "list", data)
	assert.Regexp(t, `(?m)^\w+\s+bob\s+operator\s+20\S+\s+20\S+\s+7:kitchen\\x20\s+192\.0\.2\.7:5555\s+-$`, out)
}

// TestTokenListingLinesUpWideNames: a token's name is any text, and a terminal draws a
// kanji or an emoji two columns wide and a combining accent in none; each column of tokens
// list starts at the same terminal column in every row, under its header.
func TestTokenListingLinesUpWideNames(t *testing.T) {
	clearEnv(t)
	data := "--data-dir=" + t.TempDir()
	mustRun(t, "accounts", "add", "alice", data)
	for _, name := range []string{"台所", "🍳 キッチン", "cafe\u0301", "laptop"} {
		mustRun(t, "tokens", "add", "alice", name, data)
	}

	out := mustRun(t, "tokens", "list", data)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 6, out) // the header, alice's first token and the four
	header := columnStarts(lines[0])
	require.Len(t, header, 9, lines[0])
	for _, line := range lines[1:] {
		assert.Equal(t, header, columnStarts(line), "the columns of %q under the header's:\n%s", line, out)
	}
	assert.Contains(t, out, "  台所    ", "padded by the columns it takes")
}

// columnStarts is the terminal column each cell of a table's line starts at, the cells being
// what two or more spaces part.
func columnStarts(line string) []int {
	var starts []int
	for _, at := range regexp.MustCompile(`(^|  )[^ ]`).FindAllStringSubmatchIndex(line, -1) {
		starts = append(starts, table.Columns(line[:at[3]])) // where the spaces end
	}
	return starts
}

// schema3Store makes a data directory as the release before account removal left it (schema
// 3), holding the account bob with a computer credential, and returns it.
func schema3Store(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	a := account.New(s, clock.Real{})
	_, err = a.AddAccount(t.Context(), "bob", account.RoleUser, "first")
	require.NoError(t, err)
	_, _, err = a.IssueCredential(t.Context(), "bob", account.Operator)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	db, err := sql.Open("sqlite", filepath.Join(dir, account.DBFile))
	require.NoError(t, err)
	_, err = db.ExecContext(t.Context(), accounttest.UndoToSchema3)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	return dir
}

// TestAccountCommandsSayTheyUpgradedTheStore: a command of a newer trap-sandbox run on the
// data directory of an older one's gateway (even one that only reads, accounts list) upgrades
// the store, after which the older trap-sandbox no longer opens it: it says so on stderr, once.
// accounts remove on such a store does not promise what the older gateway does not do.
func TestAccountCommandsSayTheyUpgradedTheStore(t *testing.T) {
	clearEnv(t)
	dir := schema3Store(t)
	out, errOut, err := runWith(t, "", "accounts", "list", "--data-dir="+dir)
	require.NoError(t, err)
	assert.Contains(t, out, "bob")
	assert.Equal(t, "trap-sandbox: upgraded the account store "+filepath.Join(dir, account.DBFile)+" from schema 3 to "+strconv.Itoa(account.SchemaVersion())+": an older trap-sandbox no longer opens it (a gateway of one running on it goes on, but does not start on it again; docs/accounts.md, Upgrading trap-sandbox)\n", errOut)
	_, errOut, err = runWith(t, "", "accounts", "list", "--data-dir="+dir)
	require.NoError(t, err)
	assert.Empty(t, errOut, "upgraded once")

	dir = schema3Store(t)
	out, errOut, err = runWith(t, "", "accounts", "remove", "bob", "--data-dir="+dir)
	require.NoError(t, err)
	assert.Contains(t, errOut, "upgraded the account store")
	assert.Contains(t, out, "1 computer credential")
	assert.Contains(t, out, "\na gateway running on this data directory is of an older trap-sandbox (the store was at schema 3): it refuses its tokens and its computers' next hello, but does not close the connected ones; restart it with this trap-sandbox to close them\n")
	assert.NotContains(t, out, "closes its connected computers within")
}

// TestAccountsRemoveNamesTheComputersAnOlderReplicaKeeps: through a replica whose cluster has
// a replica of a trap-sandbox from before accounts remove, the computers that one holds are
// not said to be closed, but left connected, with the fix; each named as the lists show it
// (9:attic\xa0 beside 9:attic, where its no-break space printed as a space).
func TestAccountsRemoveNamesTheComputersAnOlderReplicaKeeps(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	root := lastLineOf(mustRun(t, "accounts", "add", "root", "--admin", "--data-dir="+dir))
	mustRun(t, "accounts", "add", "bob", "--data-dir="+dir)
	mustRun(t, "accounts", "add", "carol", "--data-dir="+dir)
	s, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	accounts := account.New(s, clock.Real{})
	logger := slog.New(slog.DiscardHandler)
	left := map[string][2][]string{"bob": {{"8:desk"}, {"7:kitchen"}}, "carol": {nil, {"9:attic", "9:attic\u00a0"}}}
	api := accountapi.New(accounts, logger).OnAccountRemoved(func(id string, _ []string) ([]string, []string) {
		return left[id][0], left[id][1]
	})
	srv := httptest.NewServer(server.New(logger, server.Config{APIToken: "gw-tok3n", Accounts: accounts}, api).Handler())
	t.Cleanup(srv.Close)

	out := mustRun(t, "accounts", "remove", "bob", "--url="+srv.URL, "--api-token="+root)
	assert.Contains(t, out, "\nclosed its connected computers (4003 revoked, their daemons stop): 8:desk; its tokens are refused from the next request\n"+
		"left connected by a replica of an older trap-sandbox, which does not close them: 7:kitchen (refused when they reconnect; upgrade that replica, trap-sandbox computers shows which, to close them now)\n")
	out = mustRun(t, "accounts", "remove", "carol", "--url="+srv.URL, "--api-token="+root)
	assert.Contains(t, out, "\nleft connected by a replica of an older trap-sandbox, which does not close them: 9:attic, 9:attic\\xa0 (refused when they reconnect; upgrade that replica, trap-sandbox computers shows which, to close them now); its tokens are refused from the next request\n")
	assert.NotContains(t, out, "none of its computers was connected")
}

// TestAccountsBackupCopiesTheStore: accounts backup writes a copy that, put in place of
// accounts.db, is the store as it was (the account and its token), says how to restore it,
// never replaces a file, and names what to do where there is no file to copy: no store in the
// data directory, or replicas (their accounts are in NATS).
func TestAccountsBackupCopiesTheStore(t *testing.T) {
	if dir := os.Getenv(holdStoreEnv); dir != "" {
		holdStore(t, dir)
		return
	}
	clearEnv(t)
	dir := t.TempDir()
	token := lastLineOf(mustRun(t, "accounts", "add", "alice", "--data-dir", dir))
	dest := filepath.Join(t.TempDir(), "monday.db")
	// Taken while a gateway (another process) has the store open, as meant: nothing but the
	// copy is said.
	gateway := holdingStore(t, dir, "TestAccountsBackupCopiesTheStore")
	out, errOut, err := runWith(t, "", "accounts", "backup", dest, "--data-dir", dir)
	require.NoError(t, err)
	assert.Empty(t, errOut)
	assert.Equal(t, "backed up the account store "+filepath.Join(dir, account.DBFile)+" (schema "+strconv.Itoa(account.SchemaVersion())+") to "+dest+
		"; to restore it, stop the gateway, move accounts.db and its -wal and -shm out of the data directory, and copy this file in as accounts.db (docs/accounts.md, Backing up the store)\n", out)

	// A store no gateway has open (a crontab line without the gateway's SANDBOX_DATA_DIR backs
	// up a default store nobody uses, every night) is copied all the same, and said to be one;
	// so is one whose gateway was killed, which left its -wal and -shm behind (before, the -shm
	// alone was taken for a running gateway's).
	noGateway := "trap-sandbox: no gateway had this store open (a running one holds SQLite's lock on its accounts.db-shm): if yours runs, its store is in another data directory, the one it logs at start (msg=accounts store=...); back that one up with --data-dir\n"
	require.NoError(t, gateway.Process.Kill())
	_ = gateway.Wait()
	require.FileExists(t, filepath.Join(dir, account.DBFile+"-shm"))
	other := filepath.Join(t.TempDir(), "tuesday.db")
	out, errOut, err = runWith(t, "", "accounts", "backup", other, "--data-dir", dir)
	require.NoError(t, err)
	assert.Contains(t, out, "backed up the account store ")
	assert.Equal(t, noGateway, errOut, "a killed gateway's -shm")
	out, errOut, err = runWith(t, "", "accounts", "backup", other+"2", "--data-dir", dir)
	require.NoError(t, err)
	assert.Contains(t, out, "backed up the account store ")
	assert.Equal(t, noGateway, errOut, "no -shm")

	_, err = runClient(t, "accounts", "backup", dest, "--data-dir", dir)
	assert.EqualError(t, err, "accounts backup: the backup file exists already: "+dest+" (give a new file name)")

	restored := t.TempDir()
	data, err := os.ReadFile(dest)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(restored, account.DBFile), data, 0o600))
	assert.Regexp(t, `(?m)^alice\s+user\s`, mustRun(t, "accounts", "list", "--data-dir", restored))
	s, err := account.OpenExistingSQLite(t.Context(), restored)
	require.NoError(t, err)
	defer s.Close()
	got, err := account.New(s, clock.Real{}).Authenticate(t.Context(), token)
	require.NoError(t, err)
	assert.Equal(t, "alice", got.ID)

	// A backup file that cannot be made is the file's fault, not the store's: the message names
	// no data directory, and a missing directory is named with the command that makes it.
	missing := filepath.Join(t.TempDir(), "backups")
	_, err = runClient(t, "accounts", "backup", filepath.Join(missing, "b.db"), "--data-dir", dir)
	assert.EqualError(t, err, "accounts backup: make the backup file in "+missing+": no such file or directory: make the directory first, e.g. mkdir -p -m 700 "+missing)
	if os.Geteuid() != 0 { // root writes anywhere
		locked := t.TempDir()
		require.NoError(t, os.Chmod(locked, 0o500))
		me, err := user.Current()
		require.NoError(t, err)
		_, err = runClient(t, "accounts", "backup", filepath.Join(locked, "b.db"), "--data-dir", dir)
		assert.EqualError(t, err, "accounts backup: make the backup file in "+locked+": permission denied: "+locked+" is "+me.Username+"'s own but not writable by it: make it writable (chmod u+wx "+locked+"), or give a backup file in another directory")
	}

	empty := t.TempDir()
	_, err = runClient(t, "accounts", "backup", filepath.Join(empty, "b.db"), "--data-dir", empty)
	assert.EqualError(t, err, "accounts backup: no account store at "+filepath.Join(empty, account.DBFile)+": the gateway keeps it in its data directory; give the same --data-dir (SANDBOX_DATA_DIR) as the gateway, or run this as the gateway's user, on its host")
	// The other commands' --url and --api-token reach a gateway's API, which serves no copy
	// of the store: said as such (it read 'unknown flag --url', a usage error).
	for _, flag := range [][]string{{"--url", "http://10.0.0.2:4444"}, {"--api-token", "tsa_x_y"}} {
		_, err = runClient(t, append([]string{"accounts", "backup", filepath.Join(empty, "b.db"), "--data-dir", dir}, flag...)...)
		assert.EqualError(t, err, "accounts backup: it copies the store file on the gateway's host, not through a gateway's API (no route serves it): run it there, as the gateway's user, with its --data-dir (docs/accounts.md, Backing up the store)", "%v", flag)
	}
	inNATS := "accounts backup: the replicas keep their accounts in NATS (the JetStream key-value bucket trapos_accounts, stream KV_trapos_accounts), not in a file: back it up with NATS's own tools, e.g. nats stream backup KV_trapos_accounts DIR (docs/accounts.md, Backing up the store)"
	// The NATS line of the other account commands (accounts add alice --nats URL --nats-user
	// sandbox) gets that answer too: it read 'unknown flag --nats-user', a usage error.
	_, err = runClient(t, "accounts", "backup", filepath.Join(empty, "b.db"), "--nats", "nats://127.0.0.1:4222", "--nats-user", "sandbox", "--nats-password", "np")
	assert.EqualError(t, err, inNATS)
	// And the replicas' credentials without --nats, as for the other account commands: meant
	// for the replicas, not the data directory's store.
	_, err = runClient(t, "accounts", "backup", filepath.Join(empty, "b.db"), "--data-dir", dir, "--nats-user", "sandbox")
	assert.EqualError(t, err, "accounts backup: --nats-user (SANDBOX_NATS_USER) set without --nats (SANDBOX_NATS_URL): the replicas' accounts are in NATS, which it does not copy (docs/accounts.md, Backing up the store); leave them out to back up the data directory's store")
	var help strings.Builder
	_, parser := newTestParser(t, kong.Writers(&help, io.Discard), kong.Exit(func(int) {}))
	_, _ = parser.Parse([]string{"accounts", "backup", "--help"})
	assert.Contains(t, help.String(), "--data-dir")
	assert.NotContains(t, help.String(), "--nats", "backup takes the NATS flags only to refuse them: its help lists none")
	t.Setenv("SANDBOX_NATS_URL", "nats://127.0.0.1:4222")
	_, err = runClient(t, "accounts", "backup", filepath.Join(empty, "b.db"))
	assert.EqualError(t, err, inNATS)
	left, err := os.ReadDir(empty)
	require.NoError(t, err)
	assert.Empty(t, left)
}

// TestNATSCredentialsWithoutNATSAreRefused: an account command given the replicas' NATS
// user (or any other of their credentials) but no --nats worked on the data directory's
// store, which no replica reads: accounts add made the account where the replicas never
// see it, with only the line saying a store was created.
func TestNATSCredentialsWithoutNATSAreRefused(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", home)
	for _, args := range [][]string{{"accounts", "add", "alice", "--nats-user", "sandbox"}, {"accounts", "list", "--nats-token", "tok"},
		{"tokens", "list", "--nats-setup-timeout", "30s"}} {
		out, errOut, err := runWith(t, "", args...)
		require.Error(t, err, "%v", args)
		flag := args[len(args)-2]
		assert.Equal(t, strings.Join(args[:2], " ")+": "+flagAndEnv(strings.TrimPrefix(flag, "--"))+" set without --nats (SANDBOX_NATS_URL): give --nats too to reach the replicas' accounts, or leave them out to use the data directory's store",
			err.Error(), "%v", args)
		assert.Empty(t, out)
		assert.Empty(t, errOut)
	}
	assert.NoDirExists(t, filepath.Join(home, "trap-sandbox"), "no store made")
	t.Setenv("SANDBOX_NATS_PASSWORD", "np")
	_, _, err := runWith(t, "", "accounts", "list")
	require.EqualError(t, err, "accounts list: --nats-password (SANDBOX_NATS_PASSWORD) set without --nats (SANDBOX_NATS_URL): give --nats too to reach the replicas' accounts, or leave them out to use the data directory's store")
}

// TestComputersSaysWhoseListIsEmpty: with no computer connected, a user account's token is
// told that the list is its account's ("no computers connected" sent its holder looking for
// why none was, when others' may be), and one of an account that holds no computer credential
// how to link one, as the API's not_connected says it (it was told the list was its
// account's, of computers never linked), and one whose credentials were all revoked that it
// holds none that is not revoked (it was told it had "no computer linked yet", of an account
// that had had computers linked); a token that reaches every computer (an admin's, the
// gateway's own) is told that none is connected.
func TestComputersSaysWhoseListIsEmpty(t *testing.T) {
	g := emptyGateway(t)
	for token, want := range map[string]string{
		g.bob:   "no computers connected in account bob (this token reaches that account's computers only)\n",
		g.alice: "no computers connected: " + computer.NoneLinked("alice", account.HoldsNone) + "\n",
		g.carol: "no computers connected: account carol has no computer credential that is not revoked " +
			"(its token reaches that account's computers only): run sandbox link on the computer in game and approve its code with " +
			"trap-sandbox link approve CODE (docs/accounts.md, Linking a computer)\n",
		g.root:     "no computers connected\n",
		g.apiToken: "no computers connected\n",
	} {
		out, errOut, err := runWith(t, "", "computers", "--url", g.url, "--api-token", token)
		require.NoError(t, err)
		assert.Empty(t, out)
		assert.Equal(t, want, errOut)
	}
}

// TestTheStdioBridgeSaysWhoseListIsEmpty: the stdio bridge's empty list_computers says whose
// computers none is, as /mcp's does (and as ping's not_connected): none at all for a token
// that reaches every computer (the gateway's own, an admin's, or none on loopback when the
// gateway has none), none of account bob for bob's, and for alice's, an account that holds no
// computer credential, how to link one. It kept the general words, "No computer that this
// connection reaches is connected (an account's token reaches that account's computers
// only)", of a token it may not have sent, and not naming the account; then it told alice to
// run sandbox status on computers she never linked.
func TestTheStdioBridgeSaysWhoseListIsEmpty(t *testing.T) {
	g := emptyGateway(t)
	const atAll = "No computer is connected at all: "
	for _, c := range []struct{ url, token, want string }{
		{g.url, g.bob, "No computer of account bob is connected (its token reaches that account's computers only): "},
		{g.url, g.alice, "Account alice has no computer linked yet (its token reaches that account's computers only): run sandbox link on the computer in game"},
		{g.url, g.carol, "Account carol has no computer credential that is not revoked (its token reaches that account's computers only): run sandbox link"},
		{g.url, g.root, atAll},
		{g.url, g.apiToken, atAll},
		{g.withoutToken, "", atAll},
	} {
		note := bridgeListNote(t, c.url, c.token)
		assert.True(t, strings.HasPrefix(note, c.want), "token %q: %s", c.token, note)
	}
}

// bridgeListNote runs the stdio bridge on the gateway at url with token, calls list_computers
// and returns its note (the result's second text).
func bridgeListNote(t *testing.T, url, token string) string {
	t.Helper()
	texts := bridgeCall(t, url, token, "list_computers", map[string]any{})
	require.Len(t, texts, 2)
	return texts[1]
}

// bridgeCall runs the stdio bridge on the gateway at url with token, calls tool with args and
// returns its result's texts.
func bridgeCall(t *testing.T, url, token, tool string, args map[string]any) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientWait)
	defer cancel()
	call, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	require.NoError(t, err)
	var out bytes.Buffer
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + string(call) + "\n")
	require.NoError(t, (&MCPCmd{APIFlags: APIFlags{URL: url, APIToken: token}}).Run(ctx, Stdin{in}, Stdout{&out}))
	for line := range strings.Lines(out.String()) {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &msg), line)
		if msg.ID == 2 {
			var texts []string
			for _, c := range msg.Result.Content {
				texts = append(texts, c.Text)
			}
			return texts
		}
	}
	t.Fatalf("no answer to %s: %s", tool, out.String())
	return nil
}

// anEmptyGateway is a gateway with accounts and no computer connected: its API at url with
// the token apiToken, at withoutToken with none; alice's (an account that holds no computer
// credential), bob's (one that holds one), carol's (one whose only credential is revoked) and
// root's (an admin's) tokens.
type anEmptyGateway struct {
	url, withoutToken, apiToken string
	alice, bob, carol, root     string
}

func emptyGateway(t *testing.T) anEmptyGateway {
	t.Helper()
	clearEnv(t)
	dir := t.TempDir()
	data := "--data-dir=" + dir
	g := anEmptyGateway{apiToken: "gw-tok3n"}
	g.alice = lastLineOf(mustRun(t, "accounts", "add", "alice", data))
	g.bob = lastLineOf(mustRun(t, "accounts", "add", "bob", data))
	mustRun(t, "credentials", "add", "bob", data)
	g.carol = lastLineOf(mustRun(t, "accounts", "add", "carol", data))
	carolsOnly := lastLineOf(mustRun(t, "credentials", "add", "carol", data))
	mustRun(t, "credentials", "revoke", strings.SplitN(carolsOnly, "_", 3)[1], data)
	g.root = lastLineOf(mustRun(t, "accounts", "add", "root", "--admin", data))
	s, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	accounts := account.New(s, clock.Real{})
	logger := slog.New(slog.DiscardHandler)
	gw := gateway.New(gateway.Config{Accounts: accounts}, logger, nil)
	serve := func(apiToken string) string {
		srv := httptest.NewServer(server.New(logger, server.Config{APIToken: apiToken, Accounts: accounts}, gw,
			hostapi.New(computer.New(hostapi.NewGateway(gw))), accountapi.New(accounts, logger)).Handler())
		t.Cleanup(srv.Close)
		return srv.URL
	}
	g.url, g.withoutToken = serve(g.apiToken), serve("")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), clientWait)
		defer cancel()
		assert.NoError(t, gw.Shutdown(ctx))
	})
	return g
}

// holdStoreEnv makes a test that checks for it the child holdingStore starts: it holds the
// store in the variable's directory open (holdStore).
const holdStoreEnv = "TRAP_SANDBOX_TEST_HOLD_STORE"

// holdingLine is holdStore's line once it has the store open.
const holdingLine = "holding the store"

// holdingStore starts this test binary again as test, a process of its own that holds the
// store in dir open, as a running gateway does, until the test ends, and returns once it has.
func holdingStore(t *testing.T, dir, test string) *exec.Cmd {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	// Its TestMain's home is made in TMPDIR: one of this test's, removed with it, as a child
	// that is killed leaves its own behind.
	child.Env = testkit.ChildEnv(holdStoreEnv+"="+dir, "TMPDIR="+t.TempDir())
	stdin, err := child.StdinPipe()
	require.NoError(t, err)
	stdout, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = child.Wait()
	})
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != holdingLine {
	}
	require.Equal(t, holdingLine, lines.Text(), "the child holds the store open")
	return child
}

// holdStore opens the store in dir, says so and keeps it open until stdin closes.
func holdStore(t *testing.T, dir string) {
	s, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	fmt.Println(holdingLine)
	_, _ = io.Copy(io.Discard, os.Stdin)
	require.NoError(t, s.Close())
}

// TestComputersRevokeNamesTheComputerAsTheListsDo: the line after a revocation names the
// computer as every other command does (typedID: the list's form, whichever form was typed);
// it printed the argument as typed, so '8:caf\xe9' was "computer 8:caf\xe9 of alice".
func TestComputersRevokeNamesTheComputerAsTheListsDo(t *testing.T) {
	clearEnv(t)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/trapos/computers/8:caf\\xe9/revoke", r.URL.Path)
		server.WriteJSON(w, http.StatusOK, server.Answer{OK: true, Payload: json.RawMessage(`{"traposId":"8:caf\u00e9","accountId":"alice","credential":"c1"}`)})
	}))
	defer gw.Close()
	out, err := runClient(t, "computers", "revoke", "--url", gw.URL, `8:caf\xe9`)
	require.NoError(t, err)
	assert.Equal(t, "computer 8:café of alice: credential c1 revoked, its socket closed\n", out)
}

// TestComputersRevokeSaysWhichReplicaClosesTheSocket: through a replica that does not hold the
// computer's socket, the line names the one that does, which closes it as the revocation
// reaches it, not "its socket closed" (played: replica b, cut off from NATS, closed it 3 s
// later, once back).
func TestComputersRevokeSaysWhichReplicaClosesTheSocket(t *testing.T) {
	clearEnv(t)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		server.WriteJSON(w, http.StatusOK, server.Answer{OK: true, Payload: json.RawMessage(`{"traposId":"9:g\u00e4ste","accountId":"alice","credential":"c1","replica":"b"}`)})
	}))
	defer gw.Close()
	out, err := runClient(t, "computers", "revoke", "--url", gw.URL, "9:gäste")
	require.NoError(t, err)
	assert.Equal(t, "computer 9:gäste of alice: credential c1 revoked; replica b, which holds its socket, closes it (at once, or once it is back on NATS)\n", out)
}

// TestAPassIsToldWhatItIs: the agent's pass for alice's 7:kitchen, given as --api-token to
// the account and link commands (an agent that read it from its configuration), is refused
// by each saying what it is and who does it instead. The link commands said "your token is
// account alice's: only an admin's token acts for account alice", the account commands `no
// account "alice" that this token reaches: a user's token reaches its own account only`.
func TestAPassIsToldWhatItIs(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	mustRun(t, "accounts", "add", "alice", "--data-dir="+dir)
	s, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	accounts := account.New(s, clock.Real{})
	passes := account.NewPasses()
	pass := account.NewPass()
	passes.Grant(pass, account.Caller{Account: "alice", Only: "7:kitchen"})
	logger := slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(server.New(logger, server.Config{APIToken: "gw-tok3n", Accounts: accounts, Passes: passes},
		accountapi.New(accounts, logger), link.New(link.Config{Accounts: accounts}, logger)).Handler())
	t.Cleanup(srv.Close)
	const is = "this caller is the agent's pass for computer 7:kitchen of account alice: it reaches that computer alone and manages nothing of its account, so it "
	holder := func(does, command string) string {
		return is + does + "; the account's holder does, with one of account alice's API tokens or an admin's (" + command + ")"
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"link", "key"}, "link key: the gateway answered forbidden: " + holder("makes no enrollment key", "trap-sandbox link key")},
		{[]string{"link", "keys"}, "link keys: the gateway answered forbidden: " + holder("lists no enrollment keys", "trap-sandbox link keys")},
		{[]string{"link", "approve", "BCDF-GHJK"}, "link approve: the gateway answered forbidden: " + holder("approves no link code", "trap-sandbox link approve CODE")},
		{[]string{"tokens", "add", "alice", "agent"}, "tokens add: " + holder("makes no API token", "trap-sandbox tokens add")},
		{[]string{"tokens", "list"}, "tokens list: " + holder("lists no API tokens", "trap-sandbox tokens list")},
		{[]string{"credentials", "add", "alice"}, "credentials add: " + holder("makes no computer credential", "trap-sandbox credentials add")},
		{[]string{"accounts", "add", "mallory"}, "accounts add: " + is + "adds no account; adding an account needs an admin token " +
			"(an admin account's, or the gateway's SANDBOX_API_TOKEN; trap-sandbox accounts add)"},
	} {
		_, err := runClient(t, append(tc.args, "--url="+srv.URL, "--api-token="+pass)...)
		assert.EqualError(t, err, tc.want, "%v", tc.args)
	}
	out := mustRun(t, "tokens", "list", "alice", "--data-dir="+dir)
	assert.NotContains(t, out, "agent", "no token made")
}
