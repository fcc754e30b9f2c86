//go:build unix

package account

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnotherUsersStoreNamesItsOwner: a store made by one user (sudo trap-sandbox accounts
// add: root) and opened by another (the gateway's service user) was refused in the file
// system's words, "chmod …: operation not permitted", naming neither whose it is nor the fix.
func TestAnotherUsersStoreNamesItsOwner(t *testing.T) {
	path := "/" // root's, when the test does not run as root
	if os.Getuid() == 0 {
		path = filepath.Join(t.TempDir(), DBFile)
		require.NoError(t, os.WriteFile(path, nil, 0o600))
		require.NoError(t, os.Chown(path, 65534, 65534))
	}
	owner := fileOwner(path)
	require.NotEmpty(t, owner)
	require.NotEqual(t, currentUser(), owner)

	refused := fmt.Errorf("restrict %s: %w", path, &fs.PathError{Op: "chmod", Path: path, Err: syscall.EPERM})
	err := notOurs(path, refused)
	assert.ErrorIs(t, err, fs.ErrPermission)
	assert.Equal(t, refused.Error()+": the file belongs to "+owner+", and this runs as "+currentUser()+
		": run trap-sandbox as "+owner+", or give the data directory and its files to "+currentUser()+" (chown)", err.Error())

	// The user's own file, and any other failure, keep their words.
	mine := filepath.Join(t.TempDir(), DBFile)
	require.NoError(t, os.WriteFile(mine, nil, 0o600))
	denied := &fs.PathError{Op: "open", Path: mine, Err: syscall.EACCES}
	assert.Same(t, error(denied), notOurs(mine, denied))
	other := errors.New("disk on fire")
	assert.Same(t, other, notOurs(path, other))
}

// sqliteError stands for modernc's *sqlite.Error, which only SQLite makes.
type sqliteError int

func (e sqliteError) Error() string { return fmt.Sprintf("sqlite error (%d)", int(e)) }
func (e sqliteError) Code() int     { return int(e) }

// TestAReadOnlyDataDirectoryIsNamed: a store whose directory the user cannot write was
// refused as "attempt to write a readonly database (1544)", which sent the operator to the
// file's mode, not the directory's.
func TestAReadOnlyDataDirectoryIsNamed(t *testing.T) {
	assert.Equal(t, "the data directory /srv/ts is not writable by "+currentUser()+
		", and SQLite keeps accounts.db-wal and accounts.db-shm beside the file: make it writable, or run trap-sandbox as its owner",
		unwritable("/srv/ts", fmt.Errorf("migrate: %w", sqliteError(1544))))
	assert.Equal(t, "the store or the data directory /srv/ts is not writable by "+currentUser()+": make them writable, or run trap-sandbox as their owner",
		unwritable("/srv/ts", sqliteError(8)))
	assert.Empty(t, unwritable("/srv/ts", sqliteError(11)))
	assert.Empty(t, unwritable("/srv/ts", errors.New("not SQLite's")))
}
