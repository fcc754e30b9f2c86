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

// TestAnotherUsersDataDirectoryNamesItsOwner: a store in a directory only its owner enters
// (a service's 0700 state directory, opened from the operator's login) was refused as "stat
// …/accounts.db: permission denied" alone: the file's owner cannot be looked up, so the
// directory's is named, with the same fix.
func TestAnotherUsersDataDirectoryNamesItsOwner(t *testing.T) {
	dir := "/" // root's, when the test does not run as root
	if os.Getuid() == 0 {
		dir = filepath.Join(t.TempDir(), "state")
		require.NoError(t, os.Mkdir(dir, 0o700))
		require.NoError(t, os.Chown(dir, 65534, 65534))
	}
	path := filepath.Join(dir, "no-such-"+DBFile) // not to be looked at, as in a 0700 directory
	owner := fileOwner(dir)
	require.NotEmpty(t, owner)
	require.NotEqual(t, currentUser(), owner)
	refused := &fs.PathError{Op: "stat", Path: path, Err: syscall.EACCES}
	err := notOurs(path, refused)
	assert.ErrorIs(t, err, fs.ErrPermission)
	assert.Equal(t, refused.Error()+": the data directory belongs to "+owner+", and this runs as "+currentUser()+
		": run trap-sandbox as "+owner+", or give the data directory and its files to "+currentUser()+" (chown)", err.Error())
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

// TestAReadOnlyFileSystemIsNamed: a data directory on a file system mounted read-only was
// refused in the file system's words alone ("restrict …: chmod …: read-only file system"),
// naming no fix; it names the directory and what to do.
func TestAReadOnlyFileSystemIsNamed(t *testing.T) {
	path := "/srv/ts/" + DBFile
	refused := fmt.Errorf("restrict %s: %w", path, &fs.PathError{Op: "chmod", Path: path, Err: syscall.EROFS})
	err := notOurs(path, refused)
	assert.ErrorIs(t, err, syscall.EROFS)
	assert.Equal(t, refused.Error()+": the data directory /srv/ts is on a file system mounted read-only, where SQLite cannot keep the store: give a --data-dir on a writable one, or mount it read-write", err.Error())
}

// TestAFullStoreIsSaidToTheCaller: a write the store refused for want of room (SQLite's
// SQLITE_FULL, or ENOSPC) was answered "the account store failed; try again", which trying
// again never fixes: the caller reads that the disk is full and whose fix it is. Any other
// failure says to try again, then to ask the operator, whose log says why.
func TestAFullStoreIsSaidToTheCaller(t *testing.T) {
	full := "the gateway could not write its account store: its disk is full; ask the gateway's operator to make room (its log names the store), then try again"
	for _, err := range []error{
		fmt.Errorf("add token: %w", sqliteError(13)),
		fmt.Errorf("revoke credential %q: %w", "x", sqliteError(13|(1<<8))), // an extended code of SQLITE_FULL
		&fs.PathError{Op: "write", Path: "/srv/ts/accounts.db-wal", Err: syscall.ENOSPC},
	} {
		assert.True(t, Full(err), "%v", err)
		assert.Equal(t, full, FailedMessage(err), "%v", err)
	}
	for _, err := range []error{errors.New("disk on fire"), fmt.Errorf("add token: %w", sqliteError(5))} {
		assert.False(t, Full(err), "%v", err)
		assert.Equal(t, "the gateway's account store failed; try again, and if it fails again, ask the gateway's operator (its log says why)", FailedMessage(err))
	}
}
