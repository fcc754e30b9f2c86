package account

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
