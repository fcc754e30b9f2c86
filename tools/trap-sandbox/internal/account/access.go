package account

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	sqlite3 "modernc.org/sqlite/lib"
)

// The reasons a store cannot be opened that an operator meets after running one command as
// another user (sudo trap-sandbox accounts add, a gateway run by a service user), said with
// what to do: the file system's own words ("chmod …: operation not permitted", "attempt to
// write a readonly database (1544)") name neither the owner nor the directory.

// notOurs is err, from opening or restricting path, with whose the file is when it is
// another user's.
func notOurs(path string, err error) error {
	if readOnlyFS(err) {
		return fmt.Errorf("%w: the data directory %s is on a file system mounted read-only, where SQLite cannot keep the store: give a --data-dir on a writable one, or mount it read-write", err, filepath.Dir(path))
	}
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	owner, me, whose := fileOwner(path), currentUser(), "the file"
	if owner == "" {
		// The file cannot be looked at: its directory is another user's, one only its owner
		// enters (a service's 0700 state directory).
		owner, whose = fileOwner(filepath.Dir(path)), "the data directory"
	}
	if owner == "" {
		// Not even the directory can be looked at: a directory above it is closed to this user.
		return shut(path, err, toDataDir, insteadDataDir)
	}
	if owner == me {
		return ownModeShut(path, whose, me, err)
	}
	return fmt.Errorf("%w: %s belongs to %s, and this runs as %s: run trap-sandbox as %s, or give the data directory and its files to %s (chown)", err, whose, owner, me, owner, me)
}

// ownModeShut is err, this user refused its own file at path, with the mode that refused it
// and the chmod that opens it: "open …/accounts.db: permission denied" alone left the owner
// looking for another user (a chmod 000 or 400 of the store, an install -m 200).
func ownModeShut(path, whose, me string, err error) error {
	if whose != "the file" {
		return err
	}
	info, statErr := os.Stat(path)
	if statErr != nil || info.Mode().Perm()&0o600 == 0o600 {
		return err
	}
	return fmt.Errorf("%w: the file is %s's own, but its mode %03o does not let its owner read and write it: chmod 600 %s", err, me, info.Mode().Perm(), path)
}

// shut is err, refused at path, with the directory on path's way that this user may not
// enter, its owner and what to do, or err as it is when there is none. Such a directory (a
// home or a service's state directory, mode 700, above the data directory) refuses a look at
// anything below it, so the file system's words ("mkdir /home/mc/.local/share/trap-sandbox:
// permission denied" for a directory that is there) name neither it nor its owner.
//
// to names what path leads to ("the data directory"), and instead what the user gives in its
// place ("a --data-dir").
func shut(path string, err error, to, instead string) error {
	dir, owner, mode := closedDir(path)
	if dir == "" {
		return err
	}
	me := currentUser()
	if owner == me {
		return fmt.Errorf("%w: %s, on the way to %s, is %s's own but closed to it (mode %03o): let its owner enter it (chmod u+x %s), or give %s elsewhere", err, dir, to, me, mode, dir, instead)
	}
	return fmt.Errorf("%w: %s, on the way to %s, is %s's (mode %03o), and this runs as %s, who may not enter it: run trap-sandbox as %s, or give %s that %s can reach", err, dir, to, owner, mode, me, owner, instead, me)
}

// The data directory's words for shut.
const (
	toDataDir      = "the data directory"
	insteadDataDir = "a --data-dir"
)

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

// Full reports whether err is the store refusing a write for want of room: SQLite's
// SQLITE_FULL ("database or disk is full"), the file system's ENOSPC, or
// SQLITE_IOERR_SHMSIZE ("disk I/O error (4874)"): SQLite's unix VFS could not grow the
// store's -shm file (32 KiB at the first open) by writing to it, which on a disk with a few
// KiB left is the only sign that it is full (the errno stays inside SQLite).
func Full(err error) bool {
	var e interface{ Code() int }
	if errors.As(err, &e) && (e.Code()&0xff == sqlite3.SQLITE_FULL || e.Code() == sqlite3.SQLITE_IOERR_SHMSIZE) {
		return true
	}
	return noSpace(err)
}

// FailedMessage is what the caller of a host API route reads when the store failed under
// its call. The failure itself (which may name the host's paths) goes to the gateway's log;
// the caller reads what happened in words it can act on, and whose fix it is.
func FailedMessage(err error) string {
	if Full(err) {
		return "the gateway could not write its account store: its disk is full; ask the gateway's operator to make room (its log names the store), then try again"
	}
	return "the gateway's account store failed; try again, and if it fails again, ask the gateway's operator (its log says why)"
}

// notWritable is err, this user refused a new file in dir (the backup's directory), with whose
// dir is and what to do: "permission denied" alone named no owner, and the backup of a
// service's store runs as the service's user (docs/accounts.md), in a directory it must own.
func notWritable(dir string, err error) error {
	if closed, _, _ := closedDir(dir); closed != "" {
		return shut(dir, err, "the backup's directory", "a backup file")
	}
	owner, me := fileOwner(dir), currentUser()
	switch owner {
	case "":
		return err
	case me:
		return fmt.Errorf("%w: %s is %s's own but not writable by it: make it writable (chmod u+wx %s), or give a backup file in another directory", err, dir, me, dir)
	}
	return fmt.Errorf("%w: %s belongs to %s, and this runs as %s, who may not write in it: give a backup file in a directory of %s's (sudo install -d -m 700 -o %s DIR), or run trap-sandbox as %s", err, dir, owner, me, me, me, owner)
}
