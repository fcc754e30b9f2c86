package account

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit"
)

// smallDisk mounts a file system of its own for the test, small enough to fill, with flags
// (syscall.MS_RDONLY); mounting one takes root (CAP_SYS_ADMIN), without which the test skips.
func smallDisk(t *testing.T, flags uintptr) string {
	disk := t.TempDir()
	if err := syscall.Mount("tmpfs", disk, "tmpfs", flags, "size=1m"); err != nil {
		t.Skipf("a file system of the test's own takes mounting one: %v", err)
	}
	t.Cleanup(func() { require.NoError(t, syscall.Unmount(disk, 0)) })
	return disk
}

// fill writes a file on disk until the disk is full, and returns its path.
func fill(t *testing.T, disk string) string {
	filler := filepath.Join(disk, "filler")
	f, err := os.Create(filler)
	require.NoError(t, err)
	for err == nil {
		_, err = f.Write(make([]byte, 4096))
	}
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, f.Close())
	return filler
}

// TestADataDirectoryOnAReadOnlyFileSystemIsNamed: a --data-dir to make on a file system
// mounted read-only was refused with "give a directory that this user can make (or make it
// first, mode 700)", which no user can: it names the read-only mount and what to do.
func TestADataDirectoryOnAReadOnlyFileSystemIsNamed(t *testing.T) {
	dir := filepath.Join(smallDisk(t, syscall.MS_RDONLY), "ts")
	_, err := OpenSQLite(t.Context(), dir)
	require.ErrorIs(t, err, syscall.EROFS)
	assert.Equal(t, "make the data directory "+dir+": mkdir "+dir+": read-only file system: it would be on a file system mounted read-only, where SQLite cannot keep the store: give a --data-dir on a writable one, or mount it read-write", err.Error())
}

// TestAStoreOnAFullDiskIsRefusedWithNothingLeft: a first start on a full disk was refused
// in SQLite's words alone, "database or disk is full (13)", naming no fix, and left an empty
// accounts.db behind, which the next start (with room) took for the gateway's store: it did
// not say that it made a new, empty one. The start names the disk and what to do, and leaves
// no file; with room again the store is made, and said to be new.
func TestAStoreOnAFullDiskIsRefusedWithNothingLeft(t *testing.T) {
	disk := smallDisk(t, 0)
	filler := fill(t, disk)

	dir := filepath.Join(disk, "ts")
	_, err := OpenSQLite(t.Context(), dir)
	require.Error(t, err)
	path := filepath.Join(dir, DBFile)
	assert.Regexp(t, "^open "+path+": .*: the disk of the data directory "+dir+" is full: make room on it \\(df "+dir+"\\), or give a --data-dir on another disk$", err.Error())
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, left, "a refused start leaves no store behind")

	require.NoError(t, os.Remove(filler))
	s, err := OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	defer s.Close()
	assert.True(t, s.Created(), "the store made once there is room is said to be new")
	_, err = s.Account(t.Context(), "nobody")
	assert.True(t, errors.Is(err, ErrNotFound), "%v", err)
}

// fillLeaving writes a file on disk until no more than room bytes are free on it, and returns
// its path.
func fillLeaving(t *testing.T, disk string, room uint64) string {
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(disk, &st))
	free := st.Bavail * uint64(st.Bsize)
	require.Greater(t, free, room)
	filler := filepath.Join(disk, "filler")
	require.NoError(t, os.WriteFile(filler, make([]byte, free-room), 0o600))
	return filler
}

// TestAStoreOnANearlyFullDiskIsRefusedAsFull: a first start on a disk with a few KiB left
// (room for accounts.db, not for its 32 KiB -shm) was refused with SQLite's "open …: disk I/O
// error (4874)" alone (SQLITE_IOERR_SHMSIZE: the -shm could not be grown), naming neither the
// full disk nor a fix, and left an empty accounts.db behind. It is refused as on a full disk.
func TestAStoreOnANearlyFullDiskIsRefusedAsFull(t *testing.T) {
	disk := smallDisk(t, 0)
	fillLeaving(t, disk, 12<<10)

	dir := filepath.Join(disk, "ts")
	_, err := OpenSQLite(t.Context(), dir)
	require.Error(t, err)
	assert.True(t, Full(err), "%v", err)
	path := filepath.Join(dir, DBFile)
	assert.Regexp(t, "^open "+path+": .*: the disk of the data directory "+dir+" is full: make room on it \\(df "+dir+"\\), or give a --data-dir on another disk$", err.Error())
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, left, "a refused start leaves no store behind")
}

// TestAStoreOnADiskThatFilledIsNotMovedAway: a store no process had open (a gateway stopped
// with room, so no -shm beside it) on a disk that filled since could not be opened, by the
// gateway's start or an account command, and the refusal ended "or give a --data-dir on
// another disk", which answers a new store but here sends the operator to an empty one, where
// every token and linked computer is refused; and the failed open left a -shm of 3 bytes and an
// empty -wal beside the store, which read as a gateway's latest changes kept there. It says
// that SQLite opens the store only with room for its -shm and to make room, and leaves nothing.
func TestAStoreOnADiskThatFilledIsNotMovedAway(t *testing.T) {
	dir := filepath.Join(smallDisk(t, 0), "ts")
	s, err := OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	require.NoError(t, s.CreateAccount(t.Context(), Account{ID: "alice", Role: RoleUser}))
	require.NoError(t, s.Close())
	filler := fill(t, filepath.Dir(dir))

	for name, open := range map[string]func(context.Context, string) (*SQLite, error){"the gateway": OpenSQLite, "a command": OpenExistingSQLite} {
		_, err = open(t.Context(), dir)
		require.Error(t, err, name)
		assert.True(t, Full(err), "%s: %v", name, err)
		assert.Regexp(t, "^open "+filepath.Join(dir, DBFile)+": .*: the disk of the data directory "+dir+
			" is full, and SQLite opens the store only with room beside it \\(its -shm\\): make room on it \\(df "+dir+"\\), then try again$", err.Error(), name)
		assert.Equal(t, []string{DBFile}, names(t, dir), "%s: no -wal or -shm left beside the store", name)
	}

	require.NoError(t, os.Remove(filler))
	s, err = OpenExistingSQLite(t.Context(), dir)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Account(t.Context(), "alice")
	assert.NoError(t, err, "the store as it was, once there is room")
}

// TestABackupOntoAFullDiskBlamesThatDisk: a backup onto a full disk was refused as the
// store's failure, "the account store (the default data directory; --data-dir gives
// another): copy the store to …: database or disk is full (13)", which sends the operator to
// the data directory: it names the backup's disk and what to do, as the backup file's own
// failure, and leaves nothing there.
func TestABackupOntoAFullDiskBlamesThatDisk(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	disk := smallDisk(t, 0)
	filler := fill(t, disk)

	_, err = BackupSQLite(t.Context(), dir, filepath.Join(disk, "b.db"))
	require.ErrorAs(t, err, new(BackupFileError))
	assert.Regexp(t, "^copy the store to "+disk+": .*: the disk of "+disk+" is full: make room on it \\(df "+disk+"\\), or give a backup file on another disk$", err.Error())
	left, err := filepath.Glob(filepath.Join(disk, "*"))
	require.NoError(t, err)
	assert.Equal(t, []string{filler}, left, "a refused backup leaves nothing")
}

// TestABackupOfAStoreOnAFullDiskBlamesTheStoresDisk: a backup of a store whose own disk was
// full (played: a gateway's data directory on a full tmpfs, backed up into a directory on a
// disk with 54 GB free) was refused as "copy the store to /backups: disk I/O error (4874): the
// disk of /backups is full: make room on it (df /backups), or give a backup file on another
// disk", which sent the operator to a disk with room: SQLite could not make the store's -shm
// beside it, to read it. It names the store's disk, and leaves nothing in the backup's.
func TestABackupOfAStoreOnAFullDiskBlamesTheStoresDisk(t *testing.T) {
	dir := filepath.Join(smallDisk(t, 0), "ts")
	s, err := OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	fill(t, filepath.Dir(dir))
	backups := t.TempDir()

	_, err = BackupSQLite(t.Context(), dir, filepath.Join(backups, "b.db"))
	require.Error(t, err)
	assert.False(t, errors.As(err, new(BackupFileError)), "not the backup file's failure: %v", err)
	assert.Regexp(t, "^read the store "+filepath.Join(dir, DBFile)+": .*: the disk of the data directory "+dir+
		" is full, and SQLite reads the store only with room beside it \\(its -shm\\): make room on it \\(df "+dir+"\\), then back it up again$", err.Error())
	left, err := os.ReadDir(backups)
	require.NoError(t, err)
	assert.Empty(t, left, "a refused backup leaves nothing")
	assert.Equal(t, []string{DBFile}, names(t, dir), "nor a -wal or -shm beside the store, which the next backup took for a running gateway's")
}

// names lists the names in dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestAWriteOnAFullDiskNamesTheStoreAndTheFix: a write the store refused after the start
// for want of room read "add account \"bob\": database or disk is full (13)" in the
// gateway's log and an account command's terminal, naming neither the file nor what to do,
// while the caller was told that the log names the store. It names both.
func TestAWriteOnAFullDiskNamesTheStoreAndTheFix(t *testing.T) {
	disk := smallDisk(t, 0)
	dir := filepath.Join(disk, "ts")
	s, err := OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	defer s.Close()
	fill(t, disk)

	err = s.CreateAccount(t.Context(), Account{ID: "bob", Role: RoleUser, Created: time.Now(), CreatedBy: strings.Repeat("x", 8192)})
	require.True(t, Full(err), "%v", err)
	path := filepath.Join(dir, DBFile)
	assert.Regexp(t, "^the account store "+path+": add account \"bob\": .*: its disk is full: make room on it \\(df "+dir+"\\), then try again$", err.Error())
	assert.NotContains(t, FailedMessage(err), disk, "the API's caller reads no path")
}

// TestAStoreClosedOnAFullDiskSaysItsWALIsKept: a gateway stopped on a full disk left
// accounts.db-wal and accounts.db-shm beside accounts.db without a word (docs/accounts.md
// said a clean stop leaves none), and what was written since the last checkpoint is only
// in the -wal: a copy of accounts.db alone, taken as a backup of a stopped gateway, lacked
// it. Close says so; the next open, full or not, reads every change, and nothing is lost.
func TestAStoreClosedOnAFullDiskSaysItsWALIsKept(t *testing.T) {
	disk := smallDisk(t, 0)
	dir := filepath.Join(disk, "ts")
	s, err := OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	const n = 30 // rows of 2 KiB: the -wal holds pages accounts.db must grow to take
	for i := range n {
		require.NoError(t, s.CreateAccount(t.Context(), Account{ID: fmt.Sprint("a", i), Role: RoleUser, Created: time.Now(), CreatedBy: strings.Repeat("x", 2048)}))
	}
	filler := fill(t, disk)

	path := filepath.Join(dir, DBFile)
	closed := func(s *SQLite) {
		t.Helper()
		err := s.Close()
		require.ErrorIs(t, err, ErrWALKept)
		assert.Equal(t, ErrWALKept.Error()+": its disk is full, so they could not be written into "+path+" as it closed; the next start reads them from "+path+"-wal: keep accounts.db-wal and accounts.db-shm with accounts.db (copy or move the three together, or back up with trap-sandbox accounts backup), and make room on the disk (df "+dir+")", err.Error())
		assert.FileExists(t, path+"-wal")
	}
	closed(s)

	for _, room := range []bool{false, true} {
		if room {
			require.NoError(t, os.Remove(filler))
		}
		s, err = OpenSQLite(t.Context(), dir)
		require.NoError(t, err, "room: %v", room)
		all, err := s.Accounts(t.Context())
		require.NoError(t, err)
		assert.Len(t, all, n, "room: %v: nothing is lost", room)
		if !room {
			closed(s)
			continue
		}
		require.NoError(t, s.Close())
		assert.NoFileExists(t, path+"-wal", "with room the close writes it into accounts.db")
	}
}

// TestAStoreClosedBesideAnotherOnAFullDiskLeavesTheWALToIt: an account command run beside a
// running gateway on a full disk (accounts list too) said that the store's latest changes were
// in its -wal alone and "the next start reads them", of a -wal that was the gateway's, which
// the gateway writes in, or says so as it stops. The last process to close the store says so;
// one that closes it while another has it open says nothing. The other process is a child of
// this test (this test binary again) that holds the store open until its stdin closes.
func TestAStoreClosedBesideAnotherOnAFullDiskLeavesTheWALToIt(t *testing.T) {
	if dir := os.Getenv(holdStoreEnv); dir != "" {
		holdStore(t, dir)
		return
	}
	disk := smallDisk(t, 0)
	dir := filepath.Join(disk, "ts")
	s, err := OpenSQLite(t.Context(), dir)
	require.NoError(t, err)

	child, stdin, lines := startStoreHolder(t, dir)

	for i := range 30 { // rows of 2 KiB: the -wal holds pages accounts.db must grow to take
		require.NoError(t, s.CreateAccount(t.Context(), Account{ID: fmt.Sprint("a", i), Role: RoleUser, Created: time.Now(), CreatedBy: strings.Repeat("x", 2048)}))
	}
	fill(t, disk)
	require.NoError(t, s.Close(), "the child has the store open: the -wal is its to write in")
	path := filepath.Join(dir, DBFile)
	assert.FileExists(t, path+"-wal")

	require.NoError(t, stdin.Close()) // the child closes the store, the last to
	var said []string
	for lines.Scan() {
		said = append(said, lines.Text())
	}
	require.NoError(t, child.Wait())
	assert.Contains(t, said, "closed: "+ErrWALKept.Error()+": its disk is full, so they could not be written into "+path+" as it closed; the next start reads them from "+path+"-wal: keep accounts.db-wal and accounts.db-shm with accounts.db (copy or move the three together, or back up with trap-sandbox accounts backup), and make room on the disk (df "+dir+")")
}

// holdStoreEnv makes TestAStoreClosedBesideAnotherOnAFullDiskLeavesTheWALToIt the child that
// holds the store in the variable's directory open until its stdin closes, then closes it and
// prints what Close said.
const holdStoreEnv = "TRAP_SANDBOX_TEST_HOLD_STORE"

// holdingLine is the child's line once it has the store open.
const holdingLine = "holding the store"

// startStoreHolder starts this test's binary again as the child that holds the store in dir
// open (holdStore, the test's own part when it finds holdStoreEnv set) and returns once the
// child says it has it: the child closes it when stdin closes, then prints what Close said on
// lines. The child is killed if the test is still waiting on it a minute later.
func startStoreHolder(t *testing.T, dir string) (child *exec.Cmd, stdin io.WriteCloser, lines *bufio.Scanner) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	child = exec.CommandContext(ctx, os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v")
	child.Env = testkit.ChildEnv(holdStoreEnv + "=" + dir)
	stdin, err := child.StdinPipe()
	require.NoError(t, err)
	stdout, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	lines = bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != holdingLine {
	}
	return child, stdin, lines
}

func holdStore(t *testing.T, dir string) {
	s, err := OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	fmt.Println(holdingLine)
	_, _ = io.Copy(io.Discard, os.Stdin)
	fmt.Println("closed:", s.Close())
}

// TestABackupOnAFullDiskLeavesAnotherProcesssFiles: a backup drops only the -wal and -shm it
// made, and only while no other process has the store open: a gateway's (here a child of this
// test, this test binary again, holding the store open) stay as they are, on a full disk too,
// and SQLite's EXCLUSIVE lock, which dropMade takes first, is refused while the child has the
// store open and granted once it closed it.
func TestABackupOnAFullDiskLeavesAnotherProcesssFiles(t *testing.T) {
	if dir := os.Getenv(holdStoreEnv); dir != "" {
		holdStore(t, dir)
		return
	}
	disk := smallDisk(t, 0)
	dir := filepath.Join(disk, "ts")
	s, err := OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	child, stdin, lines := startStoreHolder(t, dir)
	fill(t, disk)

	path := filepath.Join(dir, DBFile)
	_, _ = BackupSQLite(t.Context(), dir, filepath.Join(t.TempDir(), "b.db")) // it may fail: the disk is full
	assert.Equal(t, []string{DBFile, DBFile + "-shm", DBFile + "-wal"}, names(t, dir), "the child's -wal and -shm stay")
	assert.False(t, whileNoOneElse(path, func() { t.Error("ran while the child has the store open") }))

	require.NoError(t, stdin.Close()) // the child closes the store
	for lines.Scan() {
	}
	require.NoError(t, child.Wait())
	assert.True(t, whileNoOneElse(path, func() {}), "no one else has the store open")
}
