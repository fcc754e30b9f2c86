package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryCommandsErrorNamesIt: each command's error reads WHAT: WHY (errors.go), WHAT named
// once: the account commands said only "no account …", naming no command, where computers
// said "list computers: …".
func TestEveryCommandsErrorNamesIt(t *testing.T) {
	clearEnv(t)
	empty := t.TempDir()           // a data directory without a store
	closed := "http://127.0.0.1:1" // nothing listens there
	for _, tc := range []struct {
		args []string
		what string
	}{
		{[]string{"accounts", "list", "--data-dir", empty}, "accounts list"},
		{[]string{"accounts", "remove", "alice", "--data-dir", empty}, "accounts remove"},
		{[]string{"accounts", "backup", filepath.Join(empty, "b.db"), "--url", closed}, "accounts backup"},
		{[]string{"tokens", "revoke", "x", "--data-dir", empty}, "tokens revoke"},
		{[]string{"tokens", "add", "alice", "laptop", "--expires=1h", "--data-dir", empty}, "tokens add"},
		{[]string{"credentials", "add", "alice", "--data-dir", empty}, "credentials add"},
		{[]string{"link", "keys", "--data-dir", empty}, "link keys"},
		{[]string{"link", "approve", "nope", "--url", closed}, "link approve"},
		{[]string{"link", "approve", "BCDF-GHJK", "--url", closed}, "link approve"},
		{[]string{"computers", "--url", closed}, "list computers"},
		{[]string{"ai-turns", "--url", closed}, "list agent turns"},
		{[]string{"ping", "--url", closed, "7:x"}, "computer 7:x ping"},
		{[]string{"get", "--url", closed, "7:x", "/a", filepath.Join(empty, "no", "dir", "a")}, "get"},
		{[]string{"put", "--url", closed, "7:x", filepath.Join(empty, "none"), "/a"}, "put"},
		{[]string{"screen", "--url", closed, "7:x"}, "screen"},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", "$HOME/ts"}, "serve"},
	} {
		_, _, err := runWith(t, "", tc.args...)
		require.Error(t, err, "%v", tc.args)
		assert.True(t, strings.HasPrefix(err.Error(), tc.what+": "), "%v: %s", tc.args, err)
		assert.NotContains(t, strings.TrimPrefix(err.Error(), tc.what+": "), tc.what+": ", "%v: named once", tc.args)
	}
}

// TestAnErrorIsNamedOnce: named leaves an error that names its command as it is, also when
// it is wrapped, so a failure passed up through another command's words is named once.
func TestAnErrorIsNamedOnce(t *testing.T) {
	inner := named("computer 7: ls /", errors.New("not a directory"))
	assert.Equal(t, "computer 7: ls /: not a directory", named("ls", inner).Error())
	assert.Equal(t, "computer 7: ls /: not a directory", named("ls", &wrapped{inner}).Error())
	assert.Equal(t, "accounts list: no store", named("accounts list", errors.New("no store")).Error())
	assert.NoError(t, named("accounts list", nil))
}

type wrapped struct{ err error }

func (w *wrapped) Error() string { return w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }
