package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// TestVersionFlag: `trap-sandbox --version` prints the gateway's version and the client it
// serves and exits 0 (it was a usage error, though replicas must run the same version), and
// the start-up config line names the same version.
func TestVersionFlag(t *testing.T) {
	buildVersion = "v9.9.9-test"
	t.Cleanup(func() { buildVersion = "" })
	var out testkit.SyncBuffer
	exited := -1
	var root CLI
	parser, err := NewParser(&root, kong.Writers(&out, io.Discard), kong.Exit(func(code int) {
		exited = code
		panic(kongExited{})
	}))
	require.NoError(t, err)
	func() {
		defer func() {
			if r := recover(); r != nil {
				_, ok := r.(kongExited)
				require.True(t, ok, "%v", r)
			}
		}()
		_, _ = parser.Parse([]string{"--version"})
	}()
	assert.Equal(t, 0, exited)
	assert.Regexp(t, `^trap-sandbox v9\.9\.9-test \(serves trapos-sandbox \d+\.\d+\.\d+\)\n$`, out.String())

	clearEnv(t)
	served, _ := parse(t, "--listen", "127.0.0.1:0", "--password", "a-long-enough-password")
	_, logs, stop := startServe(t, served.Serve)
	require.NoError(t, stop())
	assert.Regexp(t, `msg=config version="trap-sandbox v9\.9\.9-test \(serves trapos-sandbox `, logs.String())
}

// TestVersionTellsBuildsApart: a build with no commit recorded (go run, -buildvcs=false, a git
// worktree) said "(devel)", whatever its sources, and so did every build with uncommitted
// changes of one commit but "+dirty": its Go build ID (the linked binary's hash) now tells
// them apart; a commit alone names a clean build, and the version given at link time wins.
func TestVersionTellsBuildsApart(t *testing.T) {
	commit := func(modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "trap-sandbox", Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0c8a7f7dffc1584cc13fbccd328c73378d914b78"}, {Key: "vcs.modified", Value: modified}}}
	}
	noCommit := &debug.BuildInfo{Main: debug.Module{Path: "trap-sandbox", Version: "(devel)"}}
	for _, tc := range []struct {
		name, given string
		bi          *debug.BuildInfo
		id, want    string
	}{
		{"given at link time", "v1.4.0", commit("true"), "f9tV11XlAjVv", "v1.4.0"},
		{"a module version", "", &debug.BuildInfo{Main: debug.Module{Path: "trap-sandbox", Version: "v1.3.0"}}, "f9tV11XlAjVv", "v1.3.0"},
		{"a clean commit", "", commit("false"), "f9tV11XlAjVv", "0c8a7f7dffc1"},
		{"a commit with changes", "", commit("true"), "f9tV11XlAjVv", "0c8a7f7dffc1+dirty build f9tV11XlAjVv"},
		{"no commit", "", noCommit, "f9tV11XlAjVv", "devel build f9tV11XlAjVv"},
		{"no commit, no build ID", "", noCommit, "", "devel"},
		{"no build info", "", nil, "", "devel"},
	} {
		assert.Equal(t, tc.want, versionOf(tc.given, tc.bi, tc.id), tc.name)
	}
}

// TestBuildIDIsFoundWhereTheLinkerWritesIt: the form the linker writes into a Mach-O or PE
// file is found in its first bytes; a file without one has none. (An ELF binary's note:
// tests/integration's TestVersionNamesTheBuild, against `go tool buildid`.)
func TestBuildIDIsFoundWhereTheLinkerWritesIt(t *testing.T) {
	const id = "zOln2c3h5rak3P1g_SlM/0jxOGNEOUw14aJxbUZnF/tq3VzufFsBhxXTXy2Lgo/f9tV11XlAjVvZ36yenIk"
	head := append(bytes.Repeat([]byte{0}, 4000), "\xff Go build ID: \""+id+"\"\n \xff"...)
	assert.Equal(t, id, markedBuildID(bytes.NewReader(head)))
	assert.Empty(t, markedBuildID(strings.NewReader("no build ID here")))
	assert.Empty(t, buildIDOf(os.DevNull))
	assert.Empty(t, buildIDOf(filepath.Join(t.TempDir(), "missing")))
}

// kongExited stops kong's parse where it would have exited the process.
type kongExited struct{}

// TestServeHelpSaysWhatTheDocsSay: --api-token's help names every route it guards and that
// loopback clients need it too once set, as README.md does, and the secrets' flags that the
// environment is their place; a flag wins over its variable.
func TestServeHelpSaysWhatTheDocsSay(t *testing.T) {
	help := helpOf(t, "serve")
	assert.Contains(t, help, "--api-token=STRING Bearer token for the HTTP API (/trapos/computers, /mcp, /metrics); set, every client sends it, loopback too; give it in the environment, not here.")
	// The secrets' flags say where the secrets belong, as README.md does (and the start warns).
	assert.Contains(t, help, "--password=STRING Secret a computer's hello must carry; give it in the environment, not here: a command line is readable by every user of the host.")
	assert.Contains(t, help, "--opencode-password=STRING Basic Auth password for opencode (in the environment, not here)")

	clearEnv(t)
	t.Setenv("SANDBOX_LISTEN", "127.0.0.1:1")
	served, _ := parse(t, "--listen", "127.0.0.1:2")
	assert.Equal(t, "127.0.0.1:2", served.Serve.Listen, "the flag wins over SANDBOX_LISTEN")
}

// TestClientHelpSaysWhatTheTokenIs: a client command's --api-token said "unset: the gateway
// must be on loopback", which a gateway with SANDBOX_API_TOKEN refuses on loopback too, and
// nothing of which tokens it takes, in what form, or that the environment is its place, as
// README.md says of it.
func TestClientHelpSaysWhatTheTokenIs(t *testing.T) {
	for _, cmd := range [][]string{{"ls"}, {"computers", "list"}, {"mcp"}} {
		help := helpOf(t, cmd...)
		assert.Contains(t, help, "--api-token=STRING The API token, alone (no Bearer before it): the gateway's SANDBOX_API_TOKEN or an account's (tsa_…); "+
			"give it in the environment, not here: a command line is readable by every user of the host "+
			"(unset: no token, which only a gateway on this host without SANDBOX_API_TOKEN takes) ($SANDBOX_API_TOKEN).", cmd)
	}
}

// TestAccountCommandsListNoReplicaFlags: the account commands reach the replicas' bucket
// with --nats and its credentials; a serving replica's own flags (--replica, its heartbeat,
// TTL and operation bound) mean nothing there, so their --help does not offer them.
func TestAccountCommandsListNoReplicaFlags(t *testing.T) {
	for _, cmd := range [][]string{{"accounts", "add"}, {"tokens", "list"}, {"credentials", "revoke"}, {"link", "key"}} {
		help := helpOf(t, cmd...)
		assert.Contains(t, help, "--nats-setup-timeout", cmd)
		for _, flag := range []string{"--replica", "--nats-heartbeat", "--nats-replica-ttl", "--nats-op-timeout"} {
			assert.NotContains(t, help, flag, cmd)
		}
	}
	serve := helpOf(t, "serve")
	for _, flag := range []string{"--replica", "--nats-heartbeat", "--nats-replica-ttl", "--nats-op-timeout", "--nats-setup-timeout"} {
		assert.Contains(t, serve, flag)
	}
}

// helpOf is `trap-sandbox <cmd> --help`, its whitespace folded to single spaces.
func helpOf(t *testing.T, cmd ...string) string {
	t.Helper()
	var out testkit.SyncBuffer
	p := takeParser(t, kong.Writers(&out, io.Discard), kong.Exit(func(int) { panic(kongExited{}) }))
	defer p.giveBack()
	func() {
		defer func() { _, _ = recover().(kongExited) }()
		_, _ = p.parser.Parse(append(cmd, "--help"))
	}()
	return strings.Join(strings.Fields(out.String()), " ")
}
