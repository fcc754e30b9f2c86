package account

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// linkSchema is schema version 2: link codes, enrollment keys, and the computer a linked
// credential is bound to.
const linkSchema = `
ALTER TABLE credentials ADD COLUMN computer_id TEXT NOT NULL DEFAULT '';
CREATE TABLE link_codes (
	id          TEXT PRIMARY KEY,
	trapos_id   TEXT NOT NULL,
	remote_addr TEXT NOT NULL,
	created     INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	state       TEXT NOT NULL,
	account_id  TEXT NOT NULL,
	approved_by TEXT NOT NULL,
	approved_at INTEGER NOT NULL,
	used_at     INTEGER NOT NULL
);
CREATE INDEX link_codes_expires ON link_codes(expires_at);
CREATE TABLE enrollment_keys (
	selector   TEXT PRIMARY KEY,
	hash       BLOB NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	created_by TEXT NOT NULL,
	created    INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	revoked_at INTEGER NOT NULL,
	max_uses   INTEGER NOT NULL,
	uses       INTEGER NOT NULL,
	last_used  INTEGER NOT NULL
);
CREATE INDEX enrollment_keys_account ON enrollment_keys(account_id);
`

const linkCodeColumns = "id, trapos_id, remote_addr, created, expires_at, state, account_id, approved_by, approved_at, used_at, account_created, approved_token"

func scanLinkCode(row interface{ Scan(...any) error }) (LinkCode, error) {
	var c LinkCode
	var state string
	var created, expires, approved, used, stamp int64
	if err := row.Scan(&c.ID, &c.TraposID, &c.RemoteAddr, &created, &expires, &state, &c.AccountID, &c.ApprovedBy, &approved, &used, &stamp, &c.ApprovedToken); err != nil {
		return LinkCode{}, err
	}
	c.State, c.AccountCreated = LinkState(state), fromNanos(stamp)
	c.Created, c.ExpiresAt, c.ApprovedAt, c.UsedAt = fromNanos(created), fromNanos(expires), fromNanos(approved), fromNanos(used)
	return c, nil
}

// CreateLinkCode implements Store.
func (s *SQLite) CreateLinkCode(ctx context.Context, c LinkCode) (err error) {
	defer s.named(&err)
	r, err := s.db.ExecContext(ctx, "INSERT INTO link_codes ("+linkCodeColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
		c.ID, c.TraposID, c.RemoteAddr, nanos(c.Created), nanos(c.ExpiresAt), string(c.State), c.AccountID, c.ApprovedBy,
		nanos(c.ApprovedAt), nanos(c.UsedAt), nanos(c.AccountCreated), c.ApprovedToken)
	if err != nil {
		return fmt.Errorf("add link code: %w", err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return exists("link code", c.ID)
	}
	return nil
}

// LinkCode implements Store.
func (s *SQLite) LinkCode(ctx context.Context, id string) (_ LinkCode, err error) {
	defer s.named(&err)
	c, err := scanLinkCode(s.db.QueryRowContext(ctx, "SELECT "+linkCodeColumns+" FROM link_codes WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return LinkCode{}, notFound("link code", id)
	}
	if err != nil {
		return LinkCode{}, fmt.Errorf("read link code: %w", err)
	}
	return c, nil
}

// UpdateLinkCode implements Store: one write transaction (the write lock is taken at its
// start), so two updates of one code run one after the other.
func (s *SQLite) UpdateLinkCode(ctx context.Context, id string, change func(*LinkCode) error) (_ LinkCode, err error) {
	defer s.named(&err)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return LinkCode{}, fmt.Errorf("update link code: %w", err)
	}
	defer tx.Rollback()
	c, err := scanLinkCode(tx.QueryRowContext(ctx, "SELECT "+linkCodeColumns+" FROM link_codes WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return LinkCode{}, notFound("link code", id)
	}
	if err != nil {
		return LinkCode{}, fmt.Errorf("read link code: %w", err)
	}
	if err := change(&c); err != nil {
		return LinkCode{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE link_codes SET state = ?, account_id = ?, approved_by = ?, approved_at = ?, used_at = ?, account_created = ?, approved_token = ? WHERE id = ?`,
		string(c.State), c.AccountID, c.ApprovedBy, nanos(c.ApprovedAt), nanos(c.UsedAt), nanos(c.AccountCreated), c.ApprovedToken, id); err != nil {
		return LinkCode{}, fmt.Errorf("update link code: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return LinkCode{}, fmt.Errorf("update link code: %w", err)
	}
	return c, nil
}

// DeleteLinkCodes implements Store.
func (s *SQLite) DeleteLinkCodes(ctx context.Context, before time.Time) (_ int, err error) {
	defer s.named(&err)
	r, err := s.db.ExecContext(ctx, "DELETE FROM link_codes WHERE expires_at < ?", nanos(before))
	if err != nil {
		return 0, fmt.Errorf("delete expired link codes: %w", err)
	}
	n, _ := r.RowsAffected()
	return int(n), nil
}

const enrollmentKeyColumns = "selector, hash, account_id, created_by, created, expires_at, revoked_at, max_uses, uses, last_used, account_created"

func scanEnrollmentKey(row interface{ Scan(...any) error }) (EnrollmentKey, error) {
	var k EnrollmentKey
	var created, expires, revoked, used, stamp int64
	if err := row.Scan(&k.Selector, &k.Hash, &k.AccountID, &k.CreatedBy, &created, &expires, &revoked, &k.MaxUses, &k.Uses, &used, &stamp); err != nil {
		return EnrollmentKey{}, err
	}
	k.Created, k.ExpiresAt, k.RevokedAt, k.LastUsed = fromNanos(created), fromNanos(expires), fromNanos(revoked), fromNanos(used)
	k.AccountCreated = fromNanos(stamp)
	return k, nil
}

// CreateEnrollmentKey implements Store.
func (s *SQLite) CreateEnrollmentKey(ctx context.Context, k EnrollmentKey) (err error) {
	defer s.named(&err)
	return s.insertOwned(ctx, "enrollment key", k.Selector, k.AccountID,
		"INSERT INTO enrollment_keys ("+enrollmentKeyColumns+`)
		 SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?) ON CONFLICT DO NOTHING`,
		k.Selector, k.Hash, k.AccountID, k.CreatedBy, nanos(k.Created), nanos(k.ExpiresAt), nanos(k.RevokedAt), k.MaxUses, k.Uses,
		nanos(k.LastUsed), nanos(k.AccountCreated), k.AccountID)
}

// EnrollmentKey implements Store.
func (s *SQLite) EnrollmentKey(ctx context.Context, selector string) (_ EnrollmentKey, err error) {
	defer s.named(&err)
	k, err := scanEnrollmentKey(s.db.QueryRowContext(ctx, "SELECT "+enrollmentKeyColumns+" FROM enrollment_keys WHERE selector = ?", selector))
	if errors.Is(err, sql.ErrNoRows) {
		return EnrollmentKey{}, notFound("enrollment key", selector)
	}
	if err != nil {
		return EnrollmentKey{}, fmt.Errorf("read enrollment key %q: %w", selector, err)
	}
	return k, nil
}

// EnrollmentKeys implements Store.
func (s *SQLite) EnrollmentKeys(ctx context.Context, accountID string) (_ []EnrollmentKey, err error) {
	defer s.named(&err)
	rows, err := s.db.QueryContext(ctx, "SELECT "+enrollmentKeyColumns+" FROM enrollment_keys WHERE ? = '' OR account_id = ? ORDER BY created, selector",
		accountID, accountID)
	if err != nil {
		return nil, fmt.Errorf("list enrollment keys: %w", err)
	}
	defer rows.Close()
	var out []EnrollmentKey
	for rows.Next() {
		k, err := scanEnrollmentKey(rows)
		if err != nil {
			return nil, fmt.Errorf("list enrollment keys: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// UpdateEnrollmentKey implements Store, in one write transaction as UpdateLinkCode.
func (s *SQLite) UpdateEnrollmentKey(ctx context.Context, selector string, change func(*EnrollmentKey) error) (_ EnrollmentKey, err error) {
	defer s.named(&err)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return EnrollmentKey{}, fmt.Errorf("update enrollment key: %w", err)
	}
	defer tx.Rollback()
	k, err := scanEnrollmentKey(tx.QueryRowContext(ctx, "SELECT "+enrollmentKeyColumns+" FROM enrollment_keys WHERE selector = ?", selector))
	if errors.Is(err, sql.ErrNoRows) {
		return EnrollmentKey{}, notFound("enrollment key", selector)
	}
	if err != nil {
		return EnrollmentKey{}, fmt.Errorf("read enrollment key %q: %w", selector, err)
	}
	if err := change(&k); err != nil {
		return EnrollmentKey{}, err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE enrollment_keys SET revoked_at = ?, uses = ?, last_used = ? WHERE selector = ?",
		nanos(k.RevokedAt), k.Uses, nanos(k.LastUsed), selector); err != nil {
		return EnrollmentKey{}, fmt.Errorf("update enrollment key %q: %w", selector, err)
	}
	if err := tx.Commit(); err != nil {
		return EnrollmentKey{}, fmt.Errorf("update enrollment key %q: %w", selector, err)
	}
	return k, nil
}
