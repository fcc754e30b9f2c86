package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// TestADirectoryOnlyAShellExpandsIsRefused: SANDBOX_DATA_DIR=~/ts in a systemd unit's
// Environment= (which expands neither ~ nor $HOME), or a quoted --data-dir '~/ts', made a
// directory named "~" in the gateway's working directory and kept the store there, where
// nobody looked; the account commands made or missed one of their own the same way. Each is
// refused before anything is made, naming the path a shell would have given.
func TestADirectoryOnlyAShellExpandsIsRefused(t *testing.T) {
	clearEnv(t)
	home := os.Getenv("HOME") // clearEnv's
	t.Setenv("STATE_DIRECTORY", "")
	require.NoError(t, os.Unsetenv("STATE_DIRECTORY"))
	cwd := t.TempDir()
	t.Chdir(cwd)
	tilde := func(flag string) string {
		return "starts with ~, which only a shell turns into a home directory, and only at a word's start (not in a systemd unit's Environment= or EnvironmentFile=, nor after --" + flag + "= or in quotes): give the whole path"
	}

	// A start that got past the checks would serve until its context ends: this one has
	// ended, so that such a start stops at once (and the checks below fail) rather than hang.
	stopped, stop := context.WithCancel(t.Context())
	stop()
	t.Setenv("SANDBOX_DATA_DIR", "~/ts")
	root, _ := parse(t, "--listen", "127.0.0.1:0")
	logs := &testkit.SyncBuffer{}
	err := root.Serve.Run(stopped, logs)
	assert.EqualError(t, err, `--data-dir (SANDBOX_DATA_DIR) "~/ts" `+tilde("data-dir")+", e.g. "+filepath.Join(home, "ts"))
	assert.Empty(t, logs.String(), "refused with the other flags, before the start logs anything")
	require.NoError(t, os.Unsetenv("SANDBOX_DATA_DIR"))

	root, _ = parse(t, "--listen", "127.0.0.1:0", "--data-dir=~/ts") // as bash passes it
	assert.EqualError(t, root.Serve.Run(stopped, logs), `--data-dir (SANDBOX_DATA_DIR) "~/ts" `+tilde("data-dir")+", e.g. "+filepath.Join(home, "ts"))
	root, _ = parse(t, "--listen", "127.0.0.1:0", "--ai-dir", "~")
	assert.EqualError(t, root.Serve.Run(stopped, logs), `--ai-dir (SANDBOX_AI_DIR) "~" `+tilde("ai-dir")+", e.g. "+home)

	_, err = runClient(t, "accounts", "add", "alice", "--data-dir", "$HOME/ts")
	assert.EqualError(t, err, `accounts add: --data-dir (SANDBOX_DATA_DIR) "$HOME/ts" holds $HOME, which only a shell expands (not a systemd unit's Environment= or EnvironmentFile=): give the whole path, e.g. `+filepath.Join(home, "ts"))
	_, err = runClient(t, "accounts", "backup", filepath.Join(cwd, "b.db"), "--data-dir", "${STATE_DIRECTORY}/ts")
	assert.EqualError(t, err, `accounts backup: --data-dir (SANDBOX_DATA_DIR) "${STATE_DIRECTORY}/ts" holds ${STATE_DIRECTORY}, which only a shell expands (not a systemd unit's Environment= or EnvironmentFile=): give the whole path`,
		"no example when the variable is not set here")

	entries, err := os.ReadDir(cwd)
	require.NoError(t, err)
	assert.Empty(t, entries, "no ~ or $HOME directory is made in the working directory")

	// A path that merely holds a ~ or a $ elsewhere is a path.
	dir := filepath.Join(t.TempDir(), "a~b$")
	_, err = runClient(t, "accounts", "add", "alice", "--data-dir", dir)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, "accounts.db"))
}

// TestAValueWithACarriageReturnIsRefused: an environment file with CRLF line ends gives each
// value a carriage return. SANDBOX_DATA_DIR=/srv/ts\r made a second, empty store in a directory
// named "ts\r" beside the gateway's own (every account token and linked computer refused, and
// only a quoted path in the log to tell), and SANDBOX_REPLICA=a\r named a replica unlike its
// twin. Each is refused before anything is made, naming the value to give.
func TestAValueWithACarriageReturnIsRefused(t *testing.T) {
	clearEnv(t)
	parent := t.TempDir()
	stopped, stop := context.WithCancel(t.Context())
	stop()
	logs := &testkit.SyncBuffer{}
	fix := " has a space, tab or line break at its start or end (an environment file with CRLF line ends?): give "

	t.Setenv("SANDBOX_DATA_DIR", filepath.Join(parent, "ts")+"\r")
	root, _ := parse(t, "--listen", "127.0.0.1:0")
	assert.EqualError(t, root.Serve.Run(stopped, logs), `--data-dir (SANDBOX_DATA_DIR) "`+filepath.Join(parent, "ts")+`\r"`+fix+`"`+filepath.Join(parent, "ts")+`"`)
	_, err := runClient(t, "accounts", "add", "alice")
	assert.EqualError(t, err, `accounts add: --data-dir (SANDBOX_DATA_DIR) "`+filepath.Join(parent, "ts")+`\r"`+fix+`"`+filepath.Join(parent, "ts")+`"`)
	require.NoError(t, os.Unsetenv("SANDBOX_DATA_DIR"))

	t.Setenv("SANDBOX_REPLICA", "a\r")
	root, _ = parse(t, "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(parent, "ts"), "--nats", "nats://127.0.0.1:1")
	assert.EqualError(t, root.Serve.Run(stopped, logs), `--replica (SANDBOX_REPLICA) "a\r"`+fix+`"a"`)
	assert.Empty(t, logs.String(), "refused with the other flags, before the start logs anything")

	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	assert.Empty(t, entries, "no directory is made")
}
