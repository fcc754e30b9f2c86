//go:build unix

package account

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
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

	// The user's own file whose mode keeps its owner out (chmod 000, an install -m 200) is told
	// the chmod that opens it: "permission denied" alone sent the owner looking for another user.
	for _, mode := range []fs.FileMode{0, 0o200, 0o400} {
		shut := filepath.Join(t.TempDir(), DBFile)
		require.NoError(t, os.WriteFile(shut, nil, 0o600))
		require.NoError(t, os.Chmod(shut, mode))
		denied := &fs.PathError{Op: "open", Path: shut, Err: syscall.EACCES}
		assert.Equal(t, fmt.Sprintf("open %s: permission denied: the file is %s's own, but its mode %03o does not let its owner read and write it: chmod 600 %s",
			shut, currentUser(), mode, shut), notOurs(shut, denied).Error())
	}
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

// TestADirectoryClosedOnTheWayIsNamed: a data directory below a directory this user may not
// enter (another user's home or state directory, mode 700) was refused in the file system's
// words alone, "open …/accounts.db: permission denied", or, for the gateway's start,
// "make the data directory D: mkdir D: permission denied: give a directory that this user
// can make", of a directory that is there: neither named the closed directory nor its owner.
// A backup file there, or in a directory the user may not write, was "make the backup file in
// D: permission denied" alone.
// Root enters every directory, so as root the checks run in a copy of this test binary
// started as nobody (uid 65534); as another user, on a directory of its own that it closed.
func TestADirectoryClosedOnTheWayIsNamed(t *testing.T) {
	if base := os.Getenv(closedWayEnv); base != "" {
		closedWay(t, base)
		return
	}
	if os.Getuid() != 0 {
		closed := filepath.Join(t.TempDir(), "closed")
		require.NoError(t, os.Mkdir(closed, 0o700))
		require.NoError(t, os.Chmod(closed, 0))
		t.Cleanup(func() { _ = os.Chmod(closed, 0o700) }) // for TempDir's removal
		_, err := OpenExistingSQLite(t.Context(), filepath.Join(closed, "ts"))
		require.Error(t, err)
		assert.Equal(t, "open "+filepath.Join(closed, "ts", DBFile)+": permission denied: "+closed+", on the way to the data directory, is "+currentUser()+
			"'s own but closed to it (mode 000): let its owner enter it (chmod u+x "+closed+"), or give a --data-dir elsewhere", err.Error())
		return
	}
	// The copy and its directory are open to nobody; the test binary's own directory is not.
	base, err := os.MkdirTemp("", "closed-way-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	bin, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(base, "account.test"), bin, 0o755))
	home := filepath.Join(base, "home") // root's, closed to everyone else
	require.NoError(t, os.Mkdir(home, 0o700))
	require.NoError(t, os.Mkdir(filepath.Join(home, "ts"), 0o700))
	own := filepath.Join(base, "own") // nobody's, closed to nobody too
	require.NoError(t, os.Mkdir(own, 0))
	require.NoError(t, os.Chown(own, 65534, 65534))
	store := filepath.Join(base, "store") // nobody's: the store the backups copy
	require.NoError(t, os.Mkdir(store, 0o700))
	require.NoError(t, os.Chown(store, 65534, 65534))

	child := exec.Command(filepath.Join(base, "account.test"), "-test.run=^TestADirectoryClosedOnTheWayIsNamed$", "-test.v")
	child.Dir = base
	child.Env = testkit.ChildEnv(closedWayEnv + "=" + base)
	child.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := child.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestADirectoryClosedOnTheWayIsNamed", "the checks ran as nobody")
}

// closedWayEnv makes TestADirectoryClosedOnTheWayIsNamed the child, run as nobody, that
// opens stores below the directories its parent made in the variable's directory.
const closedWayEnv = "TRAP_SANDBOX_TEST_CLOSED_WAY"

// closedWay runs as nobody: base/home is root's (mode 700), base/own nobody's (mode 000),
// base/store nobody's (mode 700, empty).
func closedWay(t *testing.T, base string) {
	require.NotZero(t, os.Getuid(), "the child runs as another user than root")
	me, home, own, store := currentUser(), filepath.Join(base, "home"), filepath.Join(base, "own"), filepath.Join(base, "store")
	root := fileOwner("/")
	rootsFix := home + ", on the way to the data directory, is " + root + "'s (mode 700), and this runs as " + me +
		", who may not enter it: run trap-sandbox as " + root + ", or give a --data-dir that " + me + " can reach"

	dir := filepath.Join(home, "ts") // there, but not to be looked at
	_, err := OpenSQLite(t.Context(), dir)
	require.Error(t, err)
	assert.Equal(t, "make the data directory "+dir+": mkdir "+dir+": permission denied: "+rootsFix, err.Error(), "the gateway's start")
	_, err = OpenExistingSQLite(t.Context(), dir)
	require.Error(t, err)
	assert.Equal(t, "open "+filepath.Join(dir, DBFile)+": permission denied: "+rootsFix, err.Error(), "an account command")
	_, err = BackupSQLite(t.Context(), dir, filepath.Join(base, "backup.db"))
	require.Error(t, err)
	assert.Equal(t, "open "+filepath.Join(dir, DBFile)+": permission denied: "+rootsFix, err.Error(), "a backup")

	_, err = OpenExistingSQLite(t.Context(), filepath.Join(own, "ts"))
	require.Error(t, err)
	assert.Equal(t, "open "+filepath.Join(own, "ts", DBFile)+": permission denied: "+own+", on the way to the data directory, is "+me+
		"'s own but closed to it (mode 000): let its owner enter it (chmod u+x "+own+"), or give a --data-dir elsewhere", err.Error())

	// A backup file in a directory this user may not write, or below one it may not enter,
	// said "make the backup file in D: permission denied" alone.
	s, err := OpenSQLite(t.Context(), store)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = BackupSQLite(t.Context(), store, filepath.Join(home, "b.db"))
	require.ErrorAs(t, err, new(BackupFileError))
	assert.Equal(t, "make the backup file in "+home+": permission denied: "+home+" belongs to "+root+", and this runs as "+me+
		", who may not write in it: give a backup file in a directory of "+me+"'s (sudo install -d -m 700 -o "+me+" DIR), or run trap-sandbox as "+root, err.Error())
	_, err = BackupSQLite(t.Context(), store, filepath.Join(home, "backups", "b.db"))
	require.ErrorAs(t, err, new(BackupFileError))
	assert.Equal(t, "make the backup file in "+filepath.Join(home, "backups")+": permission denied: "+home+", on the way to the backup's directory, is "+root+
		"'s (mode 700), and this runs as "+me+", who may not enter it: run trap-sandbox as "+root+", or give a backup file that "+me+" can reach", err.Error())
	_, err = BackupSQLite(t.Context(), store, filepath.Join(own, "b.db"))
	require.ErrorAs(t, err, new(BackupFileError))
	assert.Equal(t, "make the backup file in "+own+": permission denied: "+own+" is "+me+"'s own but not writable by it: make it writable (chmod u+wx "+own+"), or give a backup file in another directory", err.Error())

	// A directory this user may enter but not write keeps its words: the parent is reachable.
	_, err = OpenSQLite(t.Context(), filepath.Join(base, "new"))
	require.Error(t, err)
	assert.Equal(t, "make the data directory "+filepath.Join(base, "new")+": mkdir "+filepath.Join(base, "new")+": permission denied: give a directory that this user can make (or make it first, mode 700)", err.Error())
}
