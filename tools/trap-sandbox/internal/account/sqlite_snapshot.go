package account

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Snapshot is every account of a store with its API tokens, computer credentials and
// enrollment keys, as committed at one moment: what CopyToKV carries into the replicas' bucket.
// Link codes are not in it: a code is bound to the socket that asked for it, which the
// gateway's stop closes (docs/scale-out.md, From one gateway to replicas).
type Snapshot struct {
	Accounts       []Account
	Tokens         []Token
	Credentials    []Credential
	EnrollmentKeys []EnrollmentKey
}

// Snapshot reads the store in one read transaction, so a gateway writing meanwhile (a token
// issued, a computer linked) is in it whole or not at all: never a token whose account is
// missing. It takes no write lock and changes nothing.
func (s *SQLite) Snapshot(ctx context.Context) (_ Snapshot, err error) {
	defer s.named(&err)
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Snapshot{}, fmt.Errorf("read the store: %w", err)
	}
	defer tx.Rollback()
	var snap Snapshot
	if snap.Accounts, err = queryAll(ctx, tx, "accounts", "SELECT id, role, created, created_by FROM accounts ORDER BY id", scanAccount); err != nil {
		return Snapshot{}, err
	}
	if snap.Tokens, err = queryAll(ctx, tx, "tokens", "SELECT "+tokenColumns+" FROM tokens ORDER BY created, selector", scanToken); err != nil {
		return Snapshot{}, err
	}
	if snap.Credentials, err = queryAll(ctx, tx, "credentials", "SELECT "+credentialColumns+" FROM credentials ORDER BY created, selector", scanCredential); err != nil {
		return Snapshot{}, err
	}
	if snap.EnrollmentKeys, err = queryAll(ctx, tx, "enrollment keys", "SELECT "+enrollmentKeyColumns+" FROM enrollment_keys ORDER BY created, selector", scanEnrollmentKey); err != nil {
		return Snapshot{}, err
	}
	return snap, nil
}

// SnapshotSQLite reads the store in the data directory dir as committed at one moment
// (SQLite.Snapshot) without changing it, whatever its schema, and returns it with the store's
// path. It is what accounts copy reads: the file is the operator's way back to one gateway,
// and opening it as a store would upgrade one of an older trap-sandbox in place, which that
// trap-sandbox then no longer opens. So the store is backed up (BackupSQLite: one reader,
// nothing upgraded, no -wal or -shm left that it made) into a private temporary directory
// (TMPDIR's), that copy is opened and upgraded, and the directory is removed before it
// returns, on every path. A dir without accounts.db is ErrNoStore.
func SnapshotSQLite(ctx context.Context, dir string) (_ Snapshot, path string, err error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	path = filepath.Join(dir, DBFile)
	tmp, err := os.MkdirTemp("", "trap-sandbox-read-*") // mode 0700: the copy holds the hashes
	if err != nil {
		return Snapshot{}, path, fmt.Errorf("make a private directory for a copy of the store, read in place of it: %w (TMPDIR names another)", err)
	}
	defer os.RemoveAll(tmp)
	version, err := BackupSQLite(ctx, dir, filepath.Join(tmp, DBFile))
	if errors.As(err, new(BackupFileError)) {
		return Snapshot{}, path, fmt.Errorf("copy the store %s to %s, to read it without changing it: %w (TMPDIR names another directory)", path, os.TempDir(), err)
	}
	if err != nil {
		return Snapshot{}, path, err
	}
	if version > len(schema) {
		return Snapshot{}, path, fmt.Errorf("open %s: %w", path, newerSchema(version))
	}
	copied, err := OpenExistingSQLite(ctx, tmp)
	if err != nil {
		return Snapshot{}, path, fmt.Errorf("read the copy of the store %s in %s: %w", path, os.TempDir(), err)
	}
	defer copied.Close() // before the directory's removal: deferred later, run first
	snap, err := copied.Snapshot(ctx)
	if err != nil {
		return Snapshot{}, path, fmt.Errorf("read the copy of the store %s in %s: %w", path, os.TempDir(), err)
	}
	return snap, path, nil
}

func scanAccount(row interface{ Scan(...any) error }) (Account, error) {
	var a Account
	var role string
	var created int64
	if err := row.Scan(&a.ID, &role, &created, &a.CreatedBy); err != nil {
		return Account{}, err
	}
	a.Role, a.Created = Role(role), fromNanos(created)
	return a, nil
}

// queryAll runs query on tx and scans each row with scan; what names the rows in its errors.
func queryAll[T any](ctx context.Context, tx *sql.Tx, what, query string, scan func(interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	return out, nil
}
