package account

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// removedSchema is schema version 4: the credentials of removed accounts, by the time of
// their removal, so that a gateway running on the data directory closes their computers'
// sockets (RevocationFeed) as it does a revoked credential's. Rows older than removedKeep are
// pruned by the next removal.
const removedSchema = `
CREATE TABLE removed_credentials (
	selector   TEXT PRIMARY KEY,
	removed_at INTEGER NOT NULL
);
CREATE INDEX removed_credentials_at ON removed_credentials(removed_at);
`

// removedKeep is how long a removed account's credential stays in removed_credentials: far
// longer than a RevocationFeed reaches back (RevocationPeriod and revocationSlack); a gateway
// started later refuses the computer at its next hello, the credential being gone.
const removedKeep = 24 * time.Hour

// RemoveAccount implements Store, in one transaction: a failure (a full disk) leaves the
// account whole. The transaction takes the database's write lock when it begins
// (_txlock=immediate), so the count of admins it refuses the last one on is still true when it
// deletes: of two admins removing each other at once, the second waits and is refused.
func (s *SQLite) RemoveAccount(ctx context.Context, id string, at time.Time) (_ Removed, err error) {
	defer s.named(&err)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Removed{}, fmt.Errorf("remove account %q: %w", id, err)
	}
	defer tx.Rollback()
	var r Removed
	var role string
	var created int64
	err = tx.QueryRowContext(ctx, "SELECT id, role, created, created_by FROM accounts WHERE id = ?", id).Scan(&r.Account.ID, &role, &created, &r.Account.CreatedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return Removed{}, notFound("account", id)
	}
	if err != nil {
		return Removed{}, fmt.Errorf("remove account %q: %w", id, err)
	}
	r.Account.Role, r.Account.Created = Role(role), fromNanos(created)
	if r.Account.Role == RoleAdmin {
		var admins int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM accounts WHERE role = ?", string(RoleAdmin)).Scan(&admins); err != nil {
			return Removed{}, fmt.Errorf("remove account %q: %w", id, err)
		}
		if admins <= 1 {
			return Removed{}, lastAdmin(id)
		}
	}
	for _, list := range []struct {
		into  *[]string
		query string
	}{
		{&r.Tokens, "SELECT selector FROM tokens WHERE account_id = ? ORDER BY created, selector"},
		{&r.Credentials, "SELECT selector FROM credentials WHERE account_id = ? ORDER BY created, selector"},
		{&r.EnrollmentKeys, "SELECT selector FROM enrollment_keys WHERE account_id = ? ORDER BY created, selector"},
	} {
		if *list.into, err = selectors(ctx, tx, list.query, id); err != nil {
			return Removed{}, fmt.Errorf("remove account %q: %w", id, err)
		}
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM link_codes WHERE account_id = ? AND state = ?", id, string(LinkApproved)).Scan(&r.LinkCodes); err != nil {
		return Removed{}, fmt.Errorf("remove account %q: %w", id, err)
	}
	for _, step := range []struct {
		query string
		args  []any
	}{
		{"DELETE FROM removed_credentials WHERE removed_at < ?", []any{nanos(at.Add(-removedKeep))}},
		{"INSERT INTO removed_credentials (selector, removed_at) SELECT selector, ? FROM credentials WHERE account_id = ? ON CONFLICT DO UPDATE SET removed_at = excluded.removed_at",
			[]any{nanos(at), id}},
		{"DELETE FROM link_codes WHERE account_id = ?", []any{id}},
		{"DELETE FROM enrollment_keys WHERE account_id = ?", []any{id}},
		{"DELETE FROM credentials WHERE account_id = ?", []any{id}},
		{"DELETE FROM tokens WHERE account_id = ?", []any{id}},
		{"DELETE FROM accounts WHERE id = ?", []any{id}},
	} {
		if _, err := tx.ExecContext(ctx, step.query, step.args...); err != nil {
			return Removed{}, fmt.Errorf("remove account %q: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return Removed{}, fmt.Errorf("remove account %q: %w", id, err)
	}
	return r, nil
}

// selectors runs query (one column: a selector) with id and returns the column's values.
func selectors(ctx context.Context, tx *sql.Tx, query, id string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
