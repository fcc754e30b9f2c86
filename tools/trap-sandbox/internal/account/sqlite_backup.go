package account

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"modernc.org/sqlite"
)

// Backups of the SQLite store while the gateway runs. Copying accounts.db with cp is safe only
// with every process stopped: what is committed may still be in accounts.db-wal, and a copy
// taken during a checkpoint mixes two states. VACUUM INTO writes a consistent snapshot of what
// was committed when it began, as one reader among the gateway's writers, into a new file that
// is a whole database on its own (no -wal), which is what restoring needs.

// ErrBackupExists is Backup's answer when its destination exists: a backup never replaces a
// file, which may be an earlier backup, the one to go back to.
var ErrBackupExists = errors.New("the backup file exists already")

// BackupFileError is a BackupSQLite failure at the backup's own file (its directory missing
// or not writable, its name, its disk), not at the store: no data directory is to blame.
type BackupFileError struct{ Err error }

func (e BackupFileError) Error() string { return e.Err.Error() }

// Unwrap is the failure itself (fs.ErrNotExist for a missing directory).
func (e BackupFileError) Unwrap() error { return e.Err }

// BackupSQLite writes a copy of the store in the data directory dir, as committed when it
// begins, to the new file dest (mode 0600, like the store): consistent while other processes
// write, checked (SQLite's integrity_check on the copy) before it takes its name, and synced to
// disk. It returns the copy's schema version. It changes nothing in the store: one of an older
// schema is copied as it is, not upgraded (the copy to go back to before an upgrade). A
// failure leaves no dest behind, nor a -wal or -shm beside the store that it did not find
// there (dropMade); an existing dest is refused (ErrBackupExists) and kept as it
// is; a dir without accounts.db is ErrNoStore.
func BackupSQLite(ctx context.Context, dir, dest string) (schema int, err error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	path := filepath.Join(dir, DBFile)
	// Opened for reading first, as SQLite then does: a store of another user (a service's,
	// backed up by its operator's login) is refused naming its owner, not as SQLite's "unable
	// to open database file" at the copy.
	f, err := openStore(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("%w at %s", ErrNoStore, path)
		}
		return 0, notOurs(path, err)
	}
	f.Close()
	found := sideFiles(path)
	// Opened as it is: no schema upgrade, no journal mode set; the gateway's writers make a
	// reader wait at most busyTimeout. Read-only, so that as the last connection to close it
	// does not write a -wal that a killed gateway left into the file (a writer's close does);
	// and its -shm, when there is one, read-only too: a reader writes its place in the -wal
	// there. Without one, SQLite needs to make it (and dropMade removes it).
	q := url.Values{"mode": {"ro"}}
	if found[path+"-shm"] {
		q.Set("readonly_shm", "1")
	}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	dsn := (&url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath(), RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer func() {
		db.Close()
		dropMade(path, found)
	}()
	// Read once before the copy, on the connection the copy takes: a store in WAL mode is read
	// only with its -shm beside it, which SQLite makes then, on the store's disk. Full there,
	// the copy failed as "disk I/O error (4874)" and was blamed on the backup's disk.
	db.SetMaxOpenConns(1)
	var tables int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&tables); err != nil && Full(err) {
		return 0, fmt.Errorf("read the store %s: %w: the disk of the data directory %s is full, and SQLite reads the store only with room beside it (its -shm): make room on it (df %s), then back it up again",
			path, err, dir, dir)
	}
	schema, err = backup(ctx, db, dest)
	if err != nil && damaged(err) {
		// SQLite's own words alone: "copy the store to DIR" before them named the backup's
		// directory, which is not what is damaged.
		var e *sqlite.Error
		errors.As(err, &e)
		return 0, fmt.Errorf("open %s: %w: the file is damaged; restore it from a backup, or move it away (with its -wal and -shm) to start with no accounts", path, e)
	}
	return schema, err
}

// InUse says whether another process (a running gateway) has the store in the data directory
// dir open: by the lock SQLite holds on its -shm while it does (heldByAnother), not by the -shm
// being there, which a killed gateway leaves too.
func InUse(dir string) bool { return heldByAnother(filepath.Join(dir, DBFile+"-shm")) }

// sideFiles says which of the store's -wal and -shm (SQLite's, beside the file at path) exist.
func sideFiles(path string) map[string]bool {
	found := map[string]bool{}
	for _, side := range []string{path + "-wal", path + "-shm"} {
		_, err := os.Lstat(side)
		found[side] = err == nil
	}
	return found
}

// dropMade removes the -wal and -shm beside the store at path that a backup's own connection
// made (not found before it) and SQLite left as it closed: a read that failed for want of room
// on the store's disk left a -shm of 3 bytes and an empty -wal, which the next backup took for
// a running gateway's. Only while no other process has the store open (whileNoOneElse), and a
// -wal only empty: one with frames holds changes that another process committed meanwhile.
func dropMade(path string, found map[string]bool) {
	whileNoOneElse(path, func() {
		for _, side := range []string{path + "-wal", path + "-shm"} {
			info, err := os.Lstat(side)
			if found[side] || err != nil || (side == path+"-wal" && info.Size() > 0) {
				continue
			}
			_ = os.Remove(side) // what is left is only what was there before, at worst
		}
	})
}

// backup is BackupSQLite on the open database db.
func backup(ctx context.Context, db *sql.DB, dest string) (schema int, err error) {
	if abs, err := filepath.Abs(dest); err == nil {
		dest = abs
	}
	if info, err := os.Stat(dest); err == nil && info.IsDir() {
		// The directory the backups go in, given for the file (accounts backup ~/backups/).
		return 0, BackupFileError{fmt.Errorf("%s is a directory: give a new file's name in it, e.g. %s", dest, filepath.Join(dest, "accounts-$(date +%F).db"))}
	}
	if _, err := os.Lstat(dest); err == nil {
		return 0, fmt.Errorf("%w: %s (give a new file name)", ErrBackupExists, dest)
	}
	dir := filepath.Dir(dest)
	// Written beside dest under another name, then linked to it: dest appears whole or not at
	// all, and a link fails, where a rename would replace, if dest appeared meanwhile.
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".*.part") // 0600, empty: what VACUUM INTO takes
	if err != nil {
		made := fmt.Errorf("make the backup file in %s: %w", dir, unwrapPath(err))
		if errors.Is(err, fs.ErrPermission) {
			made = notWritable(dir, made)
		}
		return 0, BackupFileError{made}
	}
	part := tmp.Name()
	defer os.Remove(part) // linked to dest by then, or to be dropped
	if err := tmp.Close(); err != nil {
		return 0, BackupFileError{err}
	}
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", part); err != nil {
		if Full(err) { // the copy is what VACUUM INTO writes: the backup's disk, not the store's
			return 0, BackupFileError{fmt.Errorf("copy the store to %s: %w: the disk of %s is full: make room on it (df %s), or give a backup file on another disk", dir, err, dir, dir)}
		}
		return 0, fmt.Errorf("copy the store to %s: %w", dir, err)
	}
	if schema, err = checkBackup(ctx, part); err != nil {
		return 0, err
	}
	if err := syncFile(part); err != nil {
		return 0, BackupFileError{fmt.Errorf("write the backup to disk: %w", err)}
	}
	if err := link(part, dest); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return 0, fmt.Errorf("%w: %s (give a new file name)", ErrBackupExists, dest)
		}
		// A file system without hard links (FAT on a USB stick): renamed instead, once more
		// checked not to be there.
		if _, lerr := os.Lstat(dest); lerr == nil {
			return 0, fmt.Errorf("%w: %s (give a new file name)", ErrBackupExists, dest)
		}
		if rerr := os.Rename(part, dest); rerr != nil {
			return 0, BackupFileError{fmt.Errorf("name the backup %s: %w", dest, unwrapPath(rerr))}
		}
	}
	if err := syncFile(dir); err != nil {
		return 0, BackupFileError{fmt.Errorf("write the backup's name to disk: %w", err)}
	}
	return schema, nil
}

// link is os.Link; a test makes it fail as on a file system without hard links.
var link = os.Link

// openStore is os.Open; a test makes it refuse as for a user who may not read the store.
var openStore = os.Open

// checkBackup opens the copy at path read-only and returns its schema version once SQLite
// finds it whole.
func checkBackup(ctx context.Context, path string) (int, error) {
	dsn := (&url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath(), RawQuery: "mode=ro"}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil {
		return 0, fmt.Errorf("check the backup: %w", err)
	}
	if check != "ok" {
		return 0, fmt.Errorf("check the backup: SQLite finds the copy damaged (%s): the store itself may be; nothing was written", check)
	}
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, fmt.Errorf("check the backup: %w", err)
	}
	return version, nil
}

// syncFile flushes the file or directory at path to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// unwrapPath is err without the path an *fs.PathError repeats, for a message that names it.
func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}
