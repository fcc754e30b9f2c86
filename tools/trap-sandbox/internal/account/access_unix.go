//go:build unix

package account

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// fileOwner names path's owner (its uid when the name is unknown), or "" when it cannot be
// read.
func fileOwner(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return userName(strconv.FormatUint(uint64(st.Uid), 10))
}

// closedDir is the directory on path's way that this user may not enter, with its owner and
// permission bits: the lowest one that can be looked at, when path cannot be (EACCES: a
// directory above it denies the search). dir is "" when path can be looked at or is missing.
func closedDir(path string) (dir, owner string, mode uint32) {
	for p := path; ; {
		info, err := os.Stat(p)
		if err == nil {
			st, ok := info.Sys().(*syscall.Stat_t)
			if p == path || !ok {
				return "", "", 0
			}
			return p, userName(strconv.FormatUint(uint64(st.Uid), 10)), uint32(info.Mode().Perm())
		}
		parent := filepath.Dir(p)
		if !errors.Is(err, fs.ErrPermission) || parent == p {
			return "", "", 0
		}
		p = parent
	}
}

// currentUser names the user this process runs as.
func currentUser() string { return userName(strconv.Itoa(os.Getuid())) }

func userName(uid string) string {
	if u, err := user.LookupId(uid); err == nil {
		return u.Username
	}
	return "uid " + uid
}

// readOnlyFS reports whether err is the file system being mounted read-only (EROFS).
func readOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }

// noSpace reports whether err is the file system out of room (ENOSPC).
func noSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }

// heldByAnother says whether another process has the store whose WAL index is shm open: each
// SQLite connection in WAL mode holds a read lock on the index's DMS byte (offset 128, SQLite's
// unix VFS) while it is open, and F_GETLK names locks of other processes only.
func heldByAnother(shm string) bool {
	f, err := os.Open(shm)
	if err != nil {
		return false
	}
	defer f.Close()
	lock := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: shmDMSByte, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lock); err != nil {
		return false
	}
	return lock.Type != syscall.F_UNLCK
}

// whileNoOneElse runs drop while this process holds SQLite's EXCLUSIVE lock on the database
// file at path, and says whether it ran. That is SQLite's own rule for the -wal and -shm: a
// connection in WAL mode holds a SHARED lock on the file (a read lock on the unix VFS's shared
// range) from its first read until it closes, and the last one to close deletes the two only
// once it has the EXCLUSIVE lock (a write lock on that range). While it is held no other
// process can start reading the store (it waits, SQLITE_BUSY), so none can open a -wal or -shm
// that drop removes. It does not run when another process has the store open, or when the file
// cannot be opened for writing.
func whileNoOneElse(path string, drop func()) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close() // releases the lock
	lock := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: sharedFirst, Len: sharedSize}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lock); err != nil {
		return false
	}
	drop()
	return true
}

// sharedFirst and sharedSize are the bytes of the database file that SQLite's unix VFS
// read-locks for SHARED and write-locks for EXCLUSIVE (PENDING_BYTE 0x40000000 plus 2, 510).
const (
	sharedFirst = 0x40000000 + 2
	sharedSize  = 510
)

// shmDMSByte is the byte of the -shm file that SQLite's unix VFS read-locks for each open
// connection (UNIX_SHM_DMS: UNIX_SHM_BASE 120 plus its 8 WAL locks).
const shmDMSByte = 128
