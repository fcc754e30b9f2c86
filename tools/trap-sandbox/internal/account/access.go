package account

import (
	"errors"
	"fmt"
	"io/fs"

	sqlite3 "modernc.org/sqlite/lib"
)

// The reasons a store cannot be opened that an operator meets after running one command as
// another user (sudo trap-sandbox accounts add, a gateway run by a service user), said with
// what to do: the file system's own words ("chmod …: operation not permitted", "attempt to
// write a readonly database (1544)") name neither the owner nor the directory.

// notOurs is err, from opening or restricting path, with whose the file is when it is
// another user's.
func notOurs(path string, err error) error {
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	owner, me := fileOwner(path), currentUser()
	if owner == "" || owner == me {
		return err
	}
	return fmt.Errorf("%w: the file belongs to %s, and this runs as %s: run trap-sandbox as %s, or give the data directory and its files to %s (chown)", err, owner, me, owner, me)
}

// unwritable is what to do about err, SQLite refusing to write the store in dir, or "" when
// err is not that. SQLITE_READONLY_DIRECTORY is a directory where SQLite cannot make the
// -wal and -shm files beside the database.
func unwritable(dir string, err error) string {
	var e interface{ Code() int }
	if !errors.As(err, &e) {
		return ""
	}
	switch code := e.Code(); {
	case code == sqlite3.SQLITE_READONLY_DIRECTORY:
		return fmt.Sprintf("the data directory %s is not writable by %s, and SQLite keeps %s-wal and %s-shm beside the file: make it writable, or run trap-sandbox as its owner", dir, currentUser(), DBFile, DBFile)
	case code&0xff == sqlite3.SQLITE_READONLY:
		return fmt.Sprintf("the store or the data directory %s is not writable by %s: make them writable, or run trap-sandbox as their owner", dir, currentUser())
	}
	return ""
}
