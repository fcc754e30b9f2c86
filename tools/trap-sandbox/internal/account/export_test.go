package account

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// SetHealthClockForTest makes s's HealthDetail read the time from now.
func SetHealthClockForTest(s *KV, now func() time.Time) { s.health.now = now }

// SetSchemaVersionForTest writes the file's schema version, as a later trap-sandbox would.
func SetSchemaVersionForTest(ctx context.Context, s *SQLite, v int) error {
	_, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v))
	return err
}

// WriteSchemaV1ForTest makes dir/accounts.db as the first trap-sandbox with accounts did
// (schema 1, before the audit fields) and runs stmts on it.
func WriteSchemaV1ForTest(ctx context.Context, dir string, stmts ...string) error {
	s, err := OpenSQLite(ctx, dir)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, q := range append([]string{"DROP TABLE removed_credentials", "DROP TABLE link_codes", "DROP TABLE enrollment_keys", "DROP TABLE tokens", "DROP TABLE credentials", "DROP TABLE accounts", schema[0], "PRAGMA user_version = 1"}, stmts...) {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// WithoutHardLinksForTest makes BackupSQLite's link fail as on a file system without hard
// links (FAT), until the returned function restores it.
func WithoutHardLinksForTest() (restore func()) {
	link = func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	}
	return func() { link = os.Link }
}

// UnreadableStoreForTest makes BackupSQLite's first open of the store refused as for a user
// who may not read it (what root, running the tests, never is), until the returned function
// restores it.
func UnreadableStoreForTest() (restore func()) {
	openStore = func(name string) (*os.File, error) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EACCES}
	}
	return func() { openStore = os.Open }
}

// CopyToKVForTest is CopyToKV calling beforeWrite before each write to the bucket.
func CopyToKVForTest(ctx context.Context, snap Snapshot, to *KV, beforeWrite func()) (CopyReport, error) {
	return copyToKV(ctx, snap, to, beforeWrite)
}

// CreateBoundCredentialForTest is KV.CreateBoundCredential calling step after its look
// ("looked") and between adding the credential and writing the computer id's record
// ("added").
func CreateBoundCredentialForTest(ctx context.Context, s *KV, c Credential, step func(string)) error {
	return s.createBound(ctx, c, step)
}

// RemoveAccountForTest is KV.RemoveAccount calling listed once it has read what it deletes,
// before the first delete.
func RemoveAccountForTest(ctx context.Context, s *KV, id string, listed func()) (Removed, error) {
	return s.removeAccount(ctx, id, listed)
}

// CreateApprovedCredentialForTest is KV.CreateApprovedCredential calling added between adding
// the credential and looking at its approval.
func CreateApprovedCredentialForTest(ctx context.Context, s *KV, c Credential, approvedToken string, exclusive bool, added func()) error {
	return s.createApproved(ctx, c, approvedToken, exclusive, added)
}

// CreateAccountIfForTest is KV.CreateAccountIf calling step after its look ("looked") and
// between adding the account and writing the bucket's record of account adds ("added").
func CreateAccountIfForTest(ctx context.Context, s *KV, a Account, t Token, check func([]Account) error, step func(string)) error {
	return s.createAccountIf(ctx, a, t, check, step)
}

// CreateTokenIfForTest is KV.CreateTokenIf calling step after its look ("looked") and between
// adding the token and writing the account's record of token adds ("added").
func CreateTokenIfForTest(ctx context.Context, s *KV, t Token, check func([]Token) error, step func(string)) error {
	return s.createTokenIf(ctx, t, check, step)
}
