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
	"syscall"
	"time"

	"modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
	sqlite3 "modernc.org/sqlite/lib"
)

// DBFile is the SQLite store's file in the data directory.
const DBFile = "accounts.db"

// busyTimeout is how long a write waits for another writer (another process on the same
// data directory: `trap-sandbox accounts add` beside a running gateway) before it fails.
const busyTimeout = 5 * time.Second

// SQLite is a Store in a SQLite database in a data directory: it survives restarts and may
// be shared by several processes on one machine (WAL, one writer at a time, busy_timeout).
type SQLite struct {
	db   *sql.DB
	path string
	// upgradedFrom is the schema version the file had when this process opened it, when
	// opening it upgraded it; 0 when it did not (already current, or a new file).
	upgradedFrom int
	// created says this process made the file (OpenSQLite on a data directory without one).
	created bool
}

var _ Store = (*SQLite)(nil)

// schema is the database's layout, one step per version; user_version says which one a file
// has, and opening a file runs the steps it lacks. Times are Unix nanoseconds, 0 for none.
// Version 2 adds the audit fields: who created an account or a token, a token's last use;
// version 3 linking (linkSchema), version 4 the removed accounts' credentials (removedSchema),
// version 5 the account's incarnation stamped on its secrets (stampSchema), version 6 the API
// token a link code was approved with (approvalTokenSchema).
var schema = []string{`
CREATE TABLE accounts (
	id      TEXT PRIMARY KEY,
	role    TEXT NOT NULL,
	created INTEGER NOT NULL
);
CREATE TABLE tokens (
	selector   TEXT PRIMARY KEY,
	hash       BLOB NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	name       TEXT NOT NULL,
	created    INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	revoked_at INTEGER NOT NULL
);
CREATE INDEX tokens_account ON tokens(account_id);
CREATE TABLE credentials (
	selector       TEXT PRIMARY KEY,
	hash           BLOB NOT NULL,
	account_id     TEXT NOT NULL REFERENCES accounts(id),
	approved_by    TEXT NOT NULL,
	created        INTEGER NOT NULL,
	last_seen      INTEGER NOT NULL,
	last_trapos_id TEXT NOT NULL,
	remote_addr    TEXT NOT NULL,
	revoked_at     INTEGER NOT NULL
);
CREATE INDEX credentials_account ON credentials(account_id);
`, `
ALTER TABLE accounts ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN last_used INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tokens ADD COLUMN remote_addr TEXT NOT NULL DEFAULT '';
`, linkSchema, removedSchema, stampSchema, approvalTokenSchema}

// stampSchema is schema version 5: a token's, credential's and enrollment key's
// account_created, its account's created when it was issued (Accounts.owner), and a link
// code's, its account's when it was approved; 0 in the rows of an older trap-sandbox.
const stampSchema = `
ALTER TABLE tokens ADD COLUMN account_created INTEGER NOT NULL DEFAULT 0;
ALTER TABLE credentials ADD COLUMN account_created INTEGER NOT NULL DEFAULT 0;
ALTER TABLE enrollment_keys ADD COLUMN account_created INTEGER NOT NULL DEFAULT 0;
ALTER TABLE link_codes ADD COLUMN account_created INTEGER NOT NULL DEFAULT 0;
`

// approvalTokenSchema is schema version 6: a link code's approved_token, the id of the API
// token that approved it (LinkCode.ApprovedToken), empty in the rows of an older trap-sandbox.
const approvalTokenSchema = `
ALTER TABLE link_codes ADD COLUMN approved_token TEXT NOT NULL DEFAULT '';
`

// SchemaVersion is the store's schema version as this trap-sandbox writes it (PRAGMA
// user_version); an older trap-sandbox refuses a file of a later one.
func SchemaVersion() int { return len(schema) }

// RemovalSchemaVersion is the first schema with removed_credentials: a gateway on a file of an
// earlier one is of a trap-sandbox that does not close a removed account's computers.
const RemovalSchemaVersion = 4

// OpenSQLite opens (or creates) the store in dir/accounts.db, making dir (mode 0700) if it
// is missing (Created says whether it made the file). A file of an older schema is upgraded
// in place (UpgradedFrom says so), after which an older trap-sandbox no longer opens it.
func OpenSQLite(ctx context.Context, dir string) (*SQLite, error) {
	return openSQLite(ctx, dir, true)
}

// ErrNoStore is OpenExistingSQLite's answer, with the path it looked at, when the data
// directory holds no accounts.db.
var ErrNoStore = errors.New("no account store")

// OpenExistingSQLite is OpenSQLite without creating anything: ErrNoStore when dir/accounts.db
// is missing. A command that reads or changes what is there uses it, so that one run in the
// wrong data directory (another user's, a forgotten --data-dir) does not leave an empty store
// there and answer from it as if it were the gateway's.
func OpenExistingSQLite(ctx context.Context, dir string) (*SQLite, error) {
	return openSQLite(ctx, dir, false)
}

func openSQLite(ctx context.Context, dir string, create bool) (*SQLite, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // the path logged at start and in errors, whatever the working directory
	}
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		return nil, fmt.Errorf("%s is a file, not a directory: give a directory", dir)
	}
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			if readOnlyFS(err) { // no user can make it there
				return nil, fmt.Errorf("make the data directory %s: %w: it would be on a file system mounted read-only, where SQLite cannot keep the store: give a --data-dir on a writable one, or mount it read-write", dir, err)
			}
			if pe, ok := errors.AsType[*fs.PathError](err); ok && errors.Is(err, syscall.ENOTDIR) {
				// A path that runs through a file (a typo, or the store's file given as the
				// directory): no user can make it, whatever their rights.
				return nil, fmt.Errorf("make the data directory %s: %w: %s is a file, not a directory: give a --data-dir that is a directory or can be made one", dir, err, pe.Path)
			}
			if named := shut(dir, err, toDataDir, insteadDataDir); named != err {
				return nil, fmt.Errorf("make the data directory %s: %w", dir, named)
			}
			return nil, fmt.Errorf("make the data directory %s: %w: give a directory that this user can make (or make it first, mode 700)", dir, err)
		}
	}
	path := filepath.Join(dir, DBFile)
	created, err := private(path, create)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return nil, fmt.Errorf("%w at %s", ErrNoStore, path)
	}
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate") // a transaction takes the write lock first, so it waits instead of failing to upgrade
	dsn := (&url.URL{Scheme: "file", Opaque: (&url.URL{Path: path}).EscapedPath(), RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &SQLite{db: db, path: path, created: created}
	found := sideFiles(path)
	if err := s.migrate(ctx); err != nil {
		db.Close()
		if Full(err) && !created {
			// The gateway's store, on a disk that filled while no process had it open (so no
			// -shm beside it, which SQLite needs to read it): another data directory holds none
			// of its accounts. The -shm and -wal this open began are dropped: left, they read
			// as a gateway's latest changes kept there.
			dropMade(path, found)
			return nil, fmt.Errorf("open %s: %w: the disk of the data directory %s is full, and SQLite opens the store only with room beside it (its -shm): make room on it (df %s), then try again",
				path, err, dir, dir)
		}
		if Full(err) {
			// The file this start made holds nothing: left behind, the next start would take it
			// for the gateway's store and not say that it made a new, empty one. Only on a full
			// disk: a migration that failed otherwise (busy, cancelled) may have met another
			// process's (a CLI's, a replica's) that made the store in it meanwhile.
			removeStore(path)
			return nil, fmt.Errorf("open %s: %w: the disk of the data directory %s is full: make room on it (df %s), or give a --data-dir on another disk", path, err, dir, dir)
		}
		if damaged(err) {
			return nil, fmt.Errorf("open %s: %w: the file is damaged; restore it from a backup, or move it away (with its -wal and -shm) to start with no accounts", path, err)
		}
		if hint := unwritable(dir, err); hint != "" {
			return nil, fmt.Errorf("open %s: %w: %s", path, err, hint)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

// removeStore removes the database file at path with its -wal and -shm.
func removeStore(path string) {
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		_ = os.Remove(f) // best effort: what cannot be removed is what the open failed on
	}
}

// damaged says whether err is SQLite finding the file damaged (a truncated or overwritten
// database: "database disk image is malformed") or no database at all ("file is not a
// database").
func damaged(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	code := e.Code() & 0xff // an extended code carries its primary code in the low byte
	return code == sqlite3.SQLITE_CORRUPT || code == sqlite3.SQLITE_NOTADB
}

// private makes the database file the owner's alone (mode 0600: hashes only, but nobody
// else's business), creating it empty (an empty file is an empty database) when it is
// missing and create says so, which created reports. It does so before SQLite opens it
// because SQLite gives a new -wal and -shm the database file's own mode, whatever the umask;
// a -wal or -shm that an older trap-sandbox left readable is made private too.
func private(path string, create bool) (created bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) && create {
		f, err = os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
		created = err == nil
	}
	if err != nil {
		return false, notOurs(path, err) // "open <path>: <why>" already
	}
	err = f.Chmod(0o600)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return created, notOurs(path, fmt.Errorf("restrict %s: %w", path, err))
	}
	for _, side := range []string{path + "-wal", path + "-shm"} {
		if err := os.Chmod(side, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return created, fmt.Errorf("restrict %s: %w", side, err)
		}
	}
	return created, nil
}

// Path returns the database file's path.
func (s *SQLite) Path() string { return s.path }

// Created says whether opening the store made its file: there was none in the data directory.
func (s *SQLite) Created() bool { return s.created }

// UpgradedFrom is the schema version the file had before this process upgraded it to
// SchemaVersion; 0 when opening it upgraded nothing (it was current, or new).
func (s *SQLite) UpgradedFrom() int { return s.upgradedFrom }

// newerSchema is the refusal of a file of a later trap-sandbox's schema version.
func newerSchema(version int) error {
	return fmt.Errorf("the database is of a newer trap-sandbox (schema %d, this one knows %d): run that trap-sandbox, or to go back to this one restore the copy of accounts.db made before the upgrade (docs/accounts.md, Upgrading trap-sandbox), or use another --data-dir", version, len(schema))
}

func (s *SQLite) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > len(schema) {
		return newerSchema(version)
	}
	if version == len(schema) {
		return tx.Commit()
	}
	for v := version; v < len(schema); v++ {
		if _, err := tx.ExecContext(ctx, schema[v]); err != nil {
			return fmt.Errorf("schema %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(schema))); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if version > 0 { // 0: a new file, made now
		s.upgradedFrom = version
	}
	return nil
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// CreateAccount implements Store.
func (s *SQLite) CreateAccount(ctx context.Context, a Account) (err error) {
	defer s.named(&err)
	return createAccount(ctx, s.db, a)
}

// CreateAccountIf implements Store: check's look and the adds are one write transaction, so a
// failure (a full disk) leaves neither, and, the write lock taken at its start
// (_txlock=immediate), of two calls at once, in this gateway or an account command on the
// file, the second looks after the first has added.
func (s *SQLite) CreateAccountIf(ctx context.Context, a Account, t Token, check func([]Account) error) (err error) {
	defer s.named(&err)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("add account %q: %w", a.ID, err)
	}
	defer tx.Rollback()
	all, err := listAccounts(ctx, tx)
	if err != nil {
		return err
	}
	if err := check(all); err != nil {
		return err
	}
	if err := createAccount(ctx, tx, a); err != nil {
		return err
	}
	r, err := tx.ExecContext(ctx, insertToken, tokenArgs(t)...)
	if err != nil {
		return fmt.Errorf("add token: %w", err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		// Its selector is taken (the account was just inserted): an account without its
		// token is what this transaction exists to prevent.
		return exists("token", t.Selector)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("add account %q: %w", a.ID, err)
	}
	return nil
}

// createAccount inserts a with db (the store's, or a transaction's).
func createAccount(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, a Account) error {
	r, err := db.ExecContext(ctx, "INSERT INTO accounts (id, role, created, created_by) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
		a.ID, string(a.Role), nanos(a.Created), a.CreatedBy)
	if err != nil {
		return fmt.Errorf("add account %q: %w", a.ID, err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return exists("account", a.ID)
	}
	return nil
}

// Account implements Store.
func (s *SQLite) Account(ctx context.Context, id string) (_ Account, err error) {
	defer s.named(&err)
	var a Account
	var role string
	var created int64
	err = s.db.QueryRowContext(ctx, "SELECT id, role, created, created_by FROM accounts WHERE id = ?", id).Scan(&a.ID, &role, &created, &a.CreatedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, notFound("account", id)
	}
	if err != nil {
		return Account{}, fmt.Errorf("read account %q: %w", id, err)
	}
	a.Role, a.Created = Role(role), fromNanos(created)
	return a, nil
}

// Accounts implements Store.
func (s *SQLite) Accounts(ctx context.Context) (_ []Account, err error) {
	defer s.named(&err)
	return listAccounts(ctx, s.db)
}

// listAccounts is Accounts read with db (the store's, or a transaction's).
func listAccounts(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]Account, error) {
	rows, err := db.QueryContext(ctx, "SELECT id, role, created, created_by FROM accounts ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	defer rows.Close()
	out := []Account{}
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("list accounts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// insertOwned runs an INSERT … SELECT … WHERE the account exists ON CONFLICT DO NOTHING and
// tells a missing account (ErrNotFound) from a taken selector (ErrExists).
func (s *SQLite) insertOwned(ctx context.Context, what, selector, accountID, query string, args ...any) error {
	r, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("add %s: %w", what, err)
	}
	if n, _ := r.RowsAffected(); n > 0 {
		return nil
	}
	if _, err := s.Account(ctx, accountID); err != nil {
		return err
	}
	return exists(what, selector)
}

// insertToken adds a token (tokenArgs) if its account exists and its selector is free.
const insertToken = `INSERT INTO tokens (selector, hash, account_id, name, created, expires_at, revoked_at, created_by, last_used, remote_addr,
	account_created)
	SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?) ON CONFLICT DO NOTHING`

func tokenArgs(t Token) []any {
	return []any{t.Selector, t.Hash, t.AccountID, t.Name, nanos(t.Created), nanos(t.ExpiresAt), nanos(t.RevokedAt), t.CreatedBy,
		nanos(t.LastUsed), t.RemoteAddr, nanos(t.AccountCreated), t.AccountID}
}

// CreateToken implements Store.
func (s *SQLite) CreateToken(ctx context.Context, t Token) (err error) {
	defer s.named(&err)
	return s.insertOwned(ctx, "token", t.Selector, t.AccountID, insertToken, tokenArgs(t)...)
}

// CreateTokenIf implements Store: check's look and the add are one write transaction (the
// write lock is taken at its start, _txlock=immediate), so of two calls at once, in this
// gateway or another process on the file (an account command), the second looks after the
// first has added.
func (s *SQLite) CreateTokenIf(ctx context.Context, t Token, check func([]Token) error) (err error) {
	defer s.named(&err)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("add token: %w", err)
	}
	defer tx.Rollback()
	toks, err := listTokens(ctx, tx, t.AccountID)
	if err != nil {
		return err
	}
	if err := check(toks); err != nil {
		return err
	}
	r, err := tx.ExecContext(ctx, insertToken, tokenArgs(t)...)
	if err != nil {
		return fmt.Errorf("add token: %w", err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		tx.Rollback()
		if _, err := s.Account(ctx, t.AccountID); err != nil {
			return err
		}
		return exists("token", t.Selector)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("add token: %w", err)
	}
	return nil
}

const tokenColumns = "selector, hash, account_id, name, created, expires_at, revoked_at, created_by, last_used, remote_addr, account_created"

func scanToken(row interface{ Scan(...any) error }) (Token, error) {
	var t Token
	var created, expires, revoked, used, stamp int64
	if err := row.Scan(&t.Selector, &t.Hash, &t.AccountID, &t.Name, &created, &expires, &revoked, &t.CreatedBy, &used, &t.RemoteAddr, &stamp); err != nil {
		return Token{}, err
	}
	t.Created, t.ExpiresAt, t.RevokedAt, t.LastUsed = fromNanos(created), fromNanos(expires), fromNanos(revoked), fromNanos(used)
	t.AccountCreated = fromNanos(stamp)
	return t, nil
}

// Token implements Store.
func (s *SQLite) Token(ctx context.Context, selector string) (_ Token, err error) {
	defer s.named(&err)
	t, err := scanToken(s.db.QueryRowContext(ctx, "SELECT "+tokenColumns+" FROM tokens WHERE selector = ?", selector))
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, notFound("token", selector)
	}
	if err != nil {
		return Token{}, fmt.Errorf("read token %q: %w", selector, err)
	}
	return t, nil
}

// Tokens implements Store.
func (s *SQLite) Tokens(ctx context.Context, accountID string) (_ []Token, err error) {
	defer s.named(&err)
	return listTokens(ctx, s.db, accountID)
}

// listTokens is Tokens read with db (the store's, or a transaction's).
func listTokens(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, accountID string) ([]Token, error) {
	rows, err := db.QueryContext(ctx, "SELECT "+tokenColumns+" FROM tokens WHERE ? = '' OR account_id = ? ORDER BY created, selector", accountID, accountID)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeToken implements Store.
func (s *SQLite) RevokeToken(ctx context.Context, selector string, at time.Time) (_ Token, err error) {
	defer s.named(&err)
	if _, err := s.db.ExecContext(ctx, "UPDATE tokens SET revoked_at = ? WHERE selector = ? AND revoked_at = 0", nanos(at), selector); err != nil {
		return Token{}, fmt.Errorf("revoke token %q: %w", selector, err)
	}
	return s.Token(ctx, selector)
}

// insertCredential adds a credential (credentialArgs) if its account exists and its selector
// is free.
const insertCredential = `INSERT INTO credentials (selector, hash, account_id, approved_by, created, last_seen, last_trapos_id, remote_addr,
	revoked_at, computer_id, account_created)
	SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?) ON CONFLICT DO NOTHING`

func credentialArgs(c Credential) []any {
	return []any{c.Selector, c.Hash, c.AccountID, c.ApprovedBy, nanos(c.Created), nanos(c.LastSeen), c.LastTraposID, c.RemoteAddr,
		nanos(c.RevokedAt), c.ComputerID, nanos(c.AccountCreated), c.AccountID}
}

// CreateCredential implements Store.
func (s *SQLite) CreateCredential(ctx context.Context, c Credential) (err error) {
	defer s.named(&err)
	return s.insertOwned(ctx, "credential", c.Selector, c.AccountID, insertCredential, credentialArgs(c)...)
}

// CreateBoundCredential implements Store: one write transaction (the write lock is taken at
// its start, _txlock=immediate), so the look and the add of two calls run one after the other.
func (s *SQLite) CreateBoundCredential(ctx context.Context, c Credential) (err error) {
	defer s.named(&err)
	return s.addCredentialIf(ctx, c, true, nil)
}

// CreateApprovedCredential implements Store: its looks and its add are one write transaction,
// as CreateBoundCredential's, so a revocation or a removal (a write too) comes before it,
// and is seen, or after it.
func (s *SQLite) CreateApprovedCredential(ctx context.Context, c Credential, approvedToken string, exclusive bool) (err error) {
	defer s.named(&err)
	return s.addCredentialIf(ctx, c, exclusive, func(tx *sql.Tx) error {
		var acc *Account
		var created int64
		switch err := tx.QueryRowContext(ctx, "SELECT created FROM accounts WHERE id = ?", c.AccountID).Scan(&created); {
		case err == nil:
			acc = &Account{ID: c.AccountID, Created: fromNanos(created)}
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("read account %q: %w", c.AccountID, err)
		}
		var tok *Token
		if approvedToken != "" {
			switch t, err := scanToken(tx.QueryRowContext(ctx, "SELECT "+tokenColumns+" FROM tokens WHERE selector = ?", approvedToken)); {
			case err == nil:
				tok = &t
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("read token %q: %w", approvedToken, err)
			}
		}
		return approvalStanding(c, acc, approvedToken, tok)
	})
}

// addCredentialIf adds c in one write transaction, in which check (when not nil) looks first
// and may refuse, and then, when exclusive, an unrevoked credential of c's account bound to
// c.ComputerID refuses it (*HeldIDError).
func (s *SQLite) addCredentialIf(ctx context.Context, c Credential, exclusive bool, check func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("add credential: %w", err)
	}
	defer tx.Rollback()
	if check != nil {
		if err := check(tx); err != nil {
			return err
		}
	}
	if exclusive {
		held, err := scanCredential(tx.QueryRowContext(ctx, "SELECT "+credentialColumns+
			" FROM credentials WHERE account_id = ? AND computer_id = ? AND revoked_at = 0 ORDER BY created, selector LIMIT 1", c.AccountID, c.ComputerID))
		if err == nil {
			return &HeldIDError{Held: held}
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("add credential: %w", err)
		}
	}
	r, err := tx.ExecContext(ctx, insertCredential, credentialArgs(c)...)
	if err != nil {
		return fmt.Errorf("add credential: %w", err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		tx.Rollback()
		if _, err := s.Account(ctx, c.AccountID); err != nil {
			return err
		}
		return exists("credential", c.Selector)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("add credential: %w", err)
	}
	return nil
}

const credentialColumns = "selector, hash, account_id, approved_by, created, last_seen, last_trapos_id, remote_addr, revoked_at, computer_id, account_created"

func scanCredential(row interface{ Scan(...any) error }) (Credential, error) {
	var c Credential
	var created, seen, revoked, stamp int64
	if err := row.Scan(&c.Selector, &c.Hash, &c.AccountID, &c.ApprovedBy, &created, &seen, &c.LastTraposID, &c.RemoteAddr, &revoked, &c.ComputerID,
		&stamp); err != nil {
		return Credential{}, err
	}
	c.Created, c.LastSeen, c.RevokedAt, c.AccountCreated = fromNanos(created), fromNanos(seen), fromNanos(revoked), fromNanos(stamp)
	return c, nil
}

// Credential implements Store.
func (s *SQLite) Credential(ctx context.Context, selector string) (_ Credential, err error) {
	defer s.named(&err)
	c, err := scanCredential(s.db.QueryRowContext(ctx, "SELECT "+credentialColumns+" FROM credentials WHERE selector = ?", selector))
	if errors.Is(err, sql.ErrNoRows) {
		return Credential{}, notFound("credential", selector)
	}
	if err != nil {
		return Credential{}, fmt.Errorf("read credential %q: %w", selector, err)
	}
	return c, nil
}

// Credentials implements Store.
func (s *SQLite) Credentials(ctx context.Context, accountID string) (_ []Credential, err error) {
	defer s.named(&err)
	rows, err := s.db.QueryContext(ctx, "SELECT "+credentialColumns+" FROM credentials WHERE ? = '' OR account_id = ? ORDER BY created, selector", accountID, accountID)
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	defer rows.Close()
	var out []Credential
	for rows.Next() {
		c, err := scanCredential(rows)
		if err != nil {
			return nil, fmt.Errorf("list credentials: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// RevokeCredential implements Store.
func (s *SQLite) RevokeCredential(ctx context.Context, selector string, at time.Time) (_ Credential, err error) {
	defer s.named(&err)
	if _, err := s.db.ExecContext(ctx, "UPDATE credentials SET revoked_at = ? WHERE selector = ? AND revoked_at = 0", nanos(at), selector); err != nil {
		return Credential{}, fmt.Errorf("revoke credential %q: %w", selector, err)
	}
	return s.Credential(ctx, selector)
}

// SeeCredential implements Store.
func (s *SQLite) SeeCredential(ctx context.Context, selector string, at time.Time, traposID, remoteAddr string) (err error) {
	defer s.named(&err)
	r, err := s.db.ExecContext(ctx, "UPDATE credentials SET last_seen = ?, last_trapos_id = ?, remote_addr = ? WHERE selector = ?",
		nanos(at), traposID, remoteAddr, selector)
	if err != nil {
		return fmt.Errorf("record credential %q's hello: %w", selector, err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return notFound("credential", selector)
	}
	return nil
}

// SeeToken implements Store.
func (s *SQLite) SeeToken(ctx context.Context, selector string, at time.Time, remoteAddr string) (err error) {
	defer s.named(&err)
	r, err := s.db.ExecContext(ctx, "UPDATE tokens SET last_used = ?, remote_addr = ? WHERE selector = ?", nanos(at), remoteAddr, selector)
	if err != nil {
		return fmt.Errorf("record token %q's use: %w", selector, err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return notFound("token", selector)
	}
	return nil
}

// storeFailure is SQLite failing under one of the store's calls after it opened (a full disk,
// an I/O error), with the store's file: the operator's log (and an account command's
// terminal) names which file to look at. A caller who is not the operator never reads it: a
// host API route answers FailedMessage, a computer the gateway's own words.
type storeFailure struct {
	path string
	err  error
}

func (e *storeFailure) Error() string {
	msg := "the account store " + e.path + ": " + e.err.Error()
	if Full(e.err) {
		dir := filepath.Dir(e.path)
		msg += ": its disk is full: make room on it (df " + dir + "), then try again"
	}
	return msg
}

func (e *storeFailure) Unwrap() error { return e.err }

// named makes *err, when it is SQLite's own failure, name the store's file (storeFailure).
// The store's answers (ErrNotFound, ErrExists, a change function's refusal) stay as they are.
func (s *SQLite) named(err *error) {
	if *err == nil || errors.As(*err, new(*storeFailure)) || !errors.As(*err, new(*sqlite.Error)) {
		return
	}
	*err = &storeFailure{path: s.path, err: *err}
}

// ErrWALKept is Close's answer when the store's latest changes could not be written into its
// file for want of room: they stay in its -wal beside it, which SQLite reads at the next
// open, so nothing is lost as long as the two stay together.
var ErrWALKept = errors.New("the account store's latest changes are in its -wal alone")

// Close implements Store. On a full disk SQLite cannot write the -wal into the database file
// as the last connection closes, and leaves the -wal and -shm beside it: Close says so
// (ErrWALKept), since a copy or a move of accounts.db alone would lose what they hold.
func (s *SQLite) Close() error {
	var busy, frames, written int
	checkpoint := s.db.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &written)
	if err := s.db.Close(); err != nil {
		return err
	}
	wal := s.path + "-wal"
	if checkpoint == nil || !Full(checkpoint) {
		return nil
	}
	if info, err := os.Stat(wal); err != nil || info.Size() == 0 {
		return nil // the close wrote it after all
	}
	if heldByAnother(s.path + "-shm") {
		// Not the last to close it (an account command beside a running gateway): the -wal is
		// the other's, which writes it in, or says so as the last to close it. Said here, it
		// was said by every command, accounts list too, while the gateway ran on a full disk.
		return nil
	}
	dir := filepath.Dir(s.path)
	return fmt.Errorf("%w: its disk is full, so they could not be written into %s as it closed; the next start reads them from %s: keep %s-wal and %s-shm with %s (copy or move the three together, or back up with trap-sandbox accounts backup), and make room on the disk (df %s)",
		ErrWALKept, s.path, wal, DBFile, DBFile, DBFile, dir)
}
