package account_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/account/accounttest"
	"trap-sandbox/internal/clock"
	"trap-sandbox/testkit/embeddednats"
)

func TestMemoryStore(t *testing.T) {
	accounttest.Run(t, func(*testing.T) account.Store { return account.NewMemory() })
}

func TestSQLiteStore(t *testing.T) {
	accounttest.Run(t, func(t *testing.T) account.Store {
		s, err := account.OpenSQLite(t.Context(), t.TempDir())
		require.NoError(t, err)
		return s
	})
}

// TestSQLiteRevokedAsItLinksBesideTheGateway: the player's yes is taken by the gateway while
// an account command beside it, on the same data directory (its own open of accounts.db),
// revokes the approving token, removes the approving admin or the account, between the code's
// use and the credential's issue.
func TestSQLiteRevokedAsItLinksBesideTheGateway(t *testing.T) {
	dir := t.TempDir()
	gateway, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, gateway.Close()) })
	command, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, command.Close()) })
	accounttest.RunRevokedAsItLinks(t, gateway, command)
}

// TestSQLiteSurvivesRestart: what one process wrote, the next one opening the directory reads,
// and the file is the owner's alone.
func TestSQLiteSurvivesRestart(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "data")
	s, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	a := account.New(s, clock.Real{})
	token, err := a.AddAccount(ctx, "alice", account.RoleAdmin, "first")
	require.NoError(t, err)
	require.NoError(t, s.Close())

	info, err := os.Stat(filepath.Join(dir, account.DBFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	s, err = account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	got, err := account.New(s, clock.Real{}).Authenticate(ctx, token)
	require.NoError(t, err)
	assert.Equal(t, "alice", got.ID)
}

// TestSQLiteOpenExisting: OpenExistingSQLite opens a store that is there, and on a data
// directory without one answers ErrNoStore naming the file, making neither the directory nor
// the file; OpenSQLite says whether it made the file.
func TestSQLiteOpenExisting(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "data")
	_, err := account.OpenExistingSQLite(ctx, dir)
	require.ErrorIs(t, err, account.ErrNoStore)
	assert.Equal(t, "no account store at "+filepath.Join(dir, account.DBFile), err.Error())
	assert.NoDirExists(t, dir, "no data directory made")

	require.NoError(t, os.Mkdir(dir, 0o700))
	_, err = account.OpenExistingSQLite(ctx, dir)
	require.ErrorIs(t, err, account.ErrNoStore)
	assert.NoFileExists(t, filepath.Join(dir, account.DBFile), "no file made")

	s, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	assert.True(t, s.Created(), "a new file")
	_, err = account.New(s, clock.Real{}).AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s, err = account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	assert.False(t, s.Created(), "the file was there")
	require.NoError(t, s.Close())
	s, err = account.OpenExistingSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	assert.False(t, s.Created())
	all, err := s.Accounts(ctx)
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, "alice", all[0].ID)
}

// TestSQLiteFilesAreTheOwners: while the store is open, the database and its -wal and -shm
// are the owner's alone (0600) whatever the umask, and sidecars an older trap-sandbox left
// readable are tightened at the next open.
func TestSQLiteFilesAreTheOwners(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	ctx := t.Context()
	modes := func(dir string) []os.FileMode {
		var out []os.FileMode
		for _, name := range []string{account.DBFile, account.DBFile + "-wal", account.DBFile + "-shm"} {
			info, err := os.Stat(filepath.Join(dir, name))
			require.NoError(t, err, name)
			out = append(out, info.Mode().Perm())
		}
		return out
	}
	private := []os.FileMode{0o600, 0o600, 0o600}

	dir := t.TempDir()
	s, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	_, err = account.New(s, clock.Real{}).AddAccount(ctx, "alice", account.RoleUser, "first")
	require.NoError(t, err)
	assert.Equal(t, private, modes(dir), "a new store")
	require.NoError(t, s.Close())

	old := t.TempDir()
	for _, name := range []string{account.DBFile, account.DBFile + "-wal", account.DBFile + "-shm"} {
		require.NoError(t, os.WriteFile(filepath.Join(old, name), nil, 0o600))
		require.NoError(t, os.Chmod(filepath.Join(old, name), 0o644))
	}
	s, err = account.OpenSQLite(ctx, old)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, private, modes(old), "files left readable")
}

// TestSQLiteDataDirMistakes: a data directory that is a file, or whose accounts.db cannot be
// opened, is refused naming the path once; a relative one is used (and named) as absolute.
func TestSQLiteDataDirMistakes(t *testing.T) {
	ctx := t.Context()
	file := filepath.Join(t.TempDir(), "afile")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err := account.OpenSQLite(ctx, file)
	require.Error(t, err)
	assert.Equal(t, file+" is a file, not a directory: give a directory", err.Error())
	// One that cannot be made (a typo that runs through a file, a path under /proc) says what
	// to do: it said only mkdir's error.
	_, err = account.OpenSQLite(ctx, filepath.Join(file, "trap-sandbox"))
	require.Error(t, err)
	assert.Equal(t, "make the data directory "+filepath.Join(file, "trap-sandbox")+": mkdir "+file+": not a directory: "+file+" is a file, not a directory: give a --data-dir that is a directory or can be made one", err.Error())

	dir := t.TempDir()
	db := filepath.Join(dir, account.DBFile)
	require.NoError(t, os.Mkdir(db, 0o700)) // accounts.db that cannot be opened as a file
	_, err = account.OpenSQLite(ctx, dir)
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(err.Error(), db), "the path once: %v", err)

	work := t.TempDir()
	t.Chdir(work)
	s, err := account.OpenSQLite(ctx, "data")
	require.NoError(t, err)
	defer s.Close()
	assert.True(t, filepath.IsAbs(s.Path()), s.Path())
	assert.Equal(t, filepath.Join("data", account.DBFile), s.Path()[len(s.Path())-len(filepath.Join("data", account.DBFile)):])
}

// TestSQLiteTwoProcesses: two stores on one directory (the gateway and `trap-sandbox accounts
// add` beside it) write at once; every write lands and each sees the other's.
func TestSQLiteTwoProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	var stores []*account.SQLite
	for range 2 {
		s, err := account.OpenSQLite(ctx, dir)
		require.NoError(t, err)
		defer s.Close()
		stores = append(stores, s)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i, s := range stores {
		wg.Go(func() {
			for j := range 20 {
				errs <- s.CreateAccount(ctx, account.Account{ID: fmt.Sprintf("a%d-%d", i, j), Role: account.RoleUser})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, s := range stores {
		all, err := s.Accounts(ctx)
		require.NoError(t, err)
		assert.Len(t, all, 40)
	}
}

// TestSQLiteDamagedFileNamesTheFix: a truncated accounts.db, or a file that is no database,
// is refused with the path, SQLite's reason and what to do ("database disk image is
// malformed (11)" alone named no fix).
func TestSQLiteDamagedFileNamesTheFix(t *testing.T) {
	ctx := t.Context()
	truncated := t.TempDir()
	s, err := account.OpenSQLite(ctx, truncated)
	require.NoError(t, err)
	for i := range 20 {
		require.NoError(t, s.CreateAccount(ctx, account.Account{ID: fmt.Sprintf("a%d", i), Role: account.RoleUser}))
	}
	require.NoError(t, s.Close()) // the last connection folds the -wal into the file
	db := filepath.Join(truncated, account.DBFile)
	info, err := os.Stat(db)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(db, info.Size()/2))

	garbage := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(garbage, account.DBFile), []byte("not a database, but long enough to have a header of its own\n"), 0o600))

	for dir, why := range map[string]string{truncated: "database disk image is malformed (11)", garbage: "file is not a database (26)"} {
		_, err := account.OpenSQLite(ctx, dir)
		require.Error(t, err)
		assert.Equal(t, "open "+filepath.Join(dir, account.DBFile)+": "+why+": the file is damaged; restore it from a backup, or move it away (with its -wal and -shm) to start with no accounts", err.Error())
	}
}

// TestSQLiteAddAccountIsAllOrNothing: when the store fails to write the new account's first
// token (here a trigger on the real file refuses it, as a full disk would), the account is
// not left behind, so adding it again works instead of answering "exists already".
func TestSQLiteAddAccountIsAllOrNothing(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	db, err := sql.Open("sqlite", filepath.Join(dir, account.DBFile))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, "CREATE TRIGGER no_tokens BEFORE INSERT ON tokens BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END")
	require.NoError(t, err)

	a := account.New(s, clock.Real{})
	_, err = a.AddAccount(ctx, "bob", account.RoleUser, "first")
	require.ErrorContains(t, err, "database or disk is full")
	_, err = s.Account(ctx, "bob")
	require.ErrorIs(t, err, account.ErrNotFound, "the account without its token")

	_, err = db.ExecContext(ctx, "DROP TRIGGER no_tokens")
	require.NoError(t, err)

	// A token insert that adds no row (its selector taken) fails the account too.
	_, err = db.ExecContext(ctx, "CREATE TRIGGER skip_tokens BEFORE INSERT ON tokens BEGIN SELECT RAISE(IGNORE); END")
	require.NoError(t, err)
	_, err = a.AddAccount(ctx, "carol", account.RoleUser, "first")
	require.ErrorIs(t, err, account.ErrExists)
	_, err = s.Account(ctx, "carol")
	require.ErrorIs(t, err, account.ErrNotFound, "the account without its token")
	_, err = db.ExecContext(ctx, "DROP TRIGGER skip_tokens")
	require.NoError(t, err)

	token, err := a.AddAccount(ctx, "bob", account.RoleUser, "first")
	require.NoError(t, err)
	got, err := a.Authenticate(ctx, token)
	require.NoError(t, err)
	assert.Equal(t, "bob", got.ID)
}

func TestSQLiteNewerSchema(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	// A later trap-sandbox's file: this one must refuse it rather than guess.
	raw, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	require.NoError(t, account.SetSchemaVersionForTest(ctx, raw, 99))
	require.NoError(t, raw.Close())
	_, err = account.OpenSQLite(ctx, dir)
	require.ErrorContains(t, err, "newer trap-sandbox")
	require.ErrorContains(t, err, "restore the copy of accounts.db made before the upgrade", "the way back is named")
}

// TestSQLiteSaysWhenItUpgradedTheFile: opening a file of an older schema upgrades it, and
// says from which version (the gateway logs it, a command prints it: an older trap-sandbox
// no longer opens the file); a new file, or one already current, upgrades nothing.
func TestSQLiteSaysWhenItUpgradedTheFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	assert.Equal(t, 0, s.UpgradedFrom(), "a new file")
	require.NoError(t, s.Close())
	s, err = account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	assert.Equal(t, 0, s.UpgradedFrom(), "a current file")
	require.NoError(t, s.Close())

	// The file of the release before account removal (schema 3).
	db, err := sql.Open("sqlite", filepath.Join(dir, account.DBFile))
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, accounttest.UndoToSchema3)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	s, err = account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	assert.Equal(t, 3, s.UpgradedFrom())
	assert.Less(t, s.UpgradedFrom(), account.RemovalSchemaVersion)
	require.NoError(t, s.Close())
	s, err = account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	assert.Equal(t, 0, s.UpgradedFrom(), "upgraded once")
	require.NoError(t, s.Close())

	dir = t.TempDir()
	require.NoError(t, account.WriteSchemaV1ForTest(ctx, dir))
	s, err = account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, 1, s.UpgradedFrom())
	assert.Equal(t, 6, account.SchemaVersion())
}

// TestSQLiteMigratesSchema1: a file of the first schema (before the audit fields) opens with
// what it held, the new fields empty, and takes them from then on.
func TestSQLiteMigratesSchema1(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	require.NoError(t, account.WriteSchemaV1ForTest(ctx, dir,
		"INSERT INTO accounts (id, role, created) VALUES ('alice', 'user', 5)",
		"INSERT INTO tokens (selector, hash, account_id, name, created, expires_at, revoked_at) VALUES ('sel', x'00', 'alice', 'first', 5, 0, 0)"))
	s, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	a, err := s.Account(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, account.Account{ID: "alice", Role: account.RoleUser, Created: time.Unix(0, 5).UTC()}, a)
	tok, err := s.Token(ctx, "sel")
	require.NoError(t, err)
	assert.Equal(t, "first", tok.Name)
	assert.True(t, tok.LastUsed.IsZero())
	require.NoError(t, s.SeeToken(ctx, "sel", time.Unix(9, 0), "10.0.0.1:1"))
	tok, err = s.Token(ctx, "sel")
	require.NoError(t, err)
	assert.Equal(t, "10.0.0.1:1", tok.RemoteAddr)
}

// TestSQLiteRemoveAccountIsAllOrNothing: when the store fails halfway through a removal
// (here a trigger refuses deleting the account row, the last step, as a full disk would), the
// account is left whole: its tokens and credentials still work, and removing it again works.
func TestSQLiteRemoveAccountIsAllOrNothing(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	db, err := sql.Open("sqlite", filepath.Join(dir, account.DBFile))
	require.NoError(t, err)
	defer db.Close()
	a := account.New(s, clock.Real{})
	token, err := a.AddAccount(ctx, "bob", account.RoleUser, "first")
	require.NoError(t, err)
	cred, _, err := a.IssueCredential(ctx, "bob", account.Operator)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "CREATE TRIGGER keep_accounts BEFORE DELETE ON accounts BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END")
	require.NoError(t, err)

	_, err = a.RemoveAccount(ctx, "bob")
	require.ErrorContains(t, err, "database or disk is full")
	got, err := a.Authenticate(ctx, token)
	require.NoError(t, err, "the token still works")
	assert.Equal(t, "bob", got.ID)
	_, err = a.AuthenticateComputer(ctx, cred, "7:kitchen", "10.0.0.5:1")
	require.NoError(t, err, "the credential still works")

	_, err = db.ExecContext(ctx, "DROP TRIGGER keep_accounts")
	require.NoError(t, err)
	r, err := a.RemoveAccount(ctx, "bob")
	require.NoError(t, err)
	assert.Len(t, r.Tokens, 1)
	assert.Len(t, r.Credentials, 1)
	_, err = a.Authenticate(ctx, token)
	require.ErrorIs(t, err, account.ErrBadSecret)
}

// TestTwoAdminsRemovingEachOtherLeaveOne: two admins removing each other at the same moment
// leave one admin: the store counts the admins in the same atomic step as it removes, and
// refuses the second removal as the last admin's. A count taken before the removal, through
// Store.Accounts (as Accounts.RemoveAccount once did), meets countBarrier, which lets neither
// removal on until both have counted two admins: then both would go through.
func TestTwoAdminsRemovingEachOtherLeaveOne(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) account.Store{
		"memory": func(*testing.T) account.Store { return account.NewMemory() },
		"sqlite": func(t *testing.T) account.Store {
			s, err := account.OpenSQLite(t.Context(), t.TempDir())
			require.NoError(t, err)
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := open(t)
			t.Cleanup(func() { assert.NoError(t, s.Close()) })
			a := account.New(s, clock.NewFake(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)))
			for _, id := range []string{"root", "ops"} {
				_, err := a.AddAccount(ctx, id, account.RoleAdmin, "first")
				require.NoError(t, err)
			}
			// Whoever lists the accounts waits until both removals have listed them (the
			// store's removal itself lists none).
			both := &countBarrier{Store: s, arrived: make(chan struct{}, 2), all: make(chan struct{})}
			racing := account.New(both, clock.NewFake(time.Date(2026, 12, 3, 10, 1, 0, 0, time.UTC)))
			errs := make(chan error, 2)
			for _, id := range []string{"root", "ops"} {
				go func() {
					_, err := racing.RemoveAccount(ctx, id)
					errs <- err
				}()
			}
			refused := 0
			for range 2 {
				if err := <-errs; err != nil {
					require.ErrorIs(t, err, account.ErrForbidden)
					require.ErrorContains(t, err, "is the last admin account: add another first (trap-sandbox accounts add NAME --admin)")
					refused++
				}
			}
			assert.Equal(t, 1, refused, "one removal goes through, the other is the last admin's")
			left, err := s.Accounts(ctx)
			require.NoError(t, err)
			require.Len(t, left, 1)
			assert.Equal(t, account.RoleAdmin, left[0].Role)
		})
	}
}

// countBarrier is a store whose Accounts waits until two callers are in it, so that two
// removals that count the admins with it both count before either removes.
type countBarrier struct {
	account.Store
	arrived chan struct{}
	all     chan struct{}
	once    sync.Once
}

func (b *countBarrier) Accounts(ctx context.Context) ([]account.Account, error) {
	b.arrived <- struct{}{}
	if len(b.arrived) == cap(b.arrived) {
		b.once.Do(func() { close(b.all) })
	}
	<-b.all
	return b.Store.Accounts(ctx)
}

// TestTwinTokensAddedAtOnceLeaveOne: two tokens of one account whose names a listing could
// not tell apart (laptop, Iaptop with a capital i), added at the same moment through two
// handles on one store (two replicas on one bucket, a gateway and an account command on one
// file), leave one: the store looks at the account's tokens in the same step as it adds
// (Store.CreateTokenIf), and the later add is refused naming the earlier one's token. A look
// through Store.Tokens before the add (as Accounts.IssueToken once did) meets tokensBarrier,
// which lets neither add on until both have looked and found neither: then both went in.
func TestTwinTokensAddedAtOnceLeaveOne(t *testing.T) {
	for name, open := range twoHandles() {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			stores := open(t)
			clk := clock.NewFake(time.Date(2026, 12, 8, 3, 0, 0, 0, time.UTC))
			_, err := account.New(stores[0], clk).AddAccount(ctx, "alice", account.RoleUser, "first")
			require.NoError(t, err)
			meet := &meeting{arrived: make(chan struct{}, 2), all: make(chan struct{})}
			errs := make(chan error, 2)
			for i, tokenName := range []string{"laptop", "Iaptop"} {
				racing := account.New(tokensBarrier{Store: stores[i], meeting: meet, ctx: ctx}, clk)
				go func() {
					_, _, err := racing.IssueToken(ctx, "alice", tokenName, 0)
					errs <- err
				}()
			}
			var refused []error
			for range 2 {
				if err := <-errs; err != nil {
					refused = append(refused, err)
				}
			}
			require.Len(t, refused, 1, "one add goes through, the other is refused: %v", refused)
			require.ErrorIs(t, refused[0], account.ErrInvalid)
			assert.ErrorContains(t, refused[0], "which a listing could not tell apart (spelled out: ")
			toks, err := account.Latest(stores[1]).Tokens(ctx, "alice")
			require.NoError(t, err)
			var names []string
			for _, tok := range toks {
				names = append(names, tok.Name)
			}
			require.Len(t, names, 2, "the first token and one of the twins: %q", names)
			assert.Contains(t, names, "first")
		})
	}
}

// TestTwinAccountsAddedAtOnceLeaveOne: two accounts whose names a listing could not tell apart
// (alice, a1ice), added at the same moment through two handles on one store, leave one: the
// store looks at the accounts in the same step as it adds (Store.CreateAccountIf), and the
// later add is refused naming the earlier account. A look through Store.Accounts before the
// add (as Accounts.AddAccount once did) meets accountsBarrier, which lets neither add on until
// both have looked and found neither: then both went in.
func TestTwinAccountsAddedAtOnceLeaveOne(t *testing.T) {
	for name, open := range twoHandles() {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			stores := open(t)
			clk := clock.NewFake(time.Date(2026, 12, 8, 3, 0, 0, 0, time.UTC))
			meet := &meeting{arrived: make(chan struct{}, 2), all: make(chan struct{})}
			errs := make(chan error, 2)
			for i, id := range []string{"alice", "a1ice"} {
				racing := account.New(accountsBarrier{Store: stores[i], meeting: meet, ctx: ctx}, clk)
				go func() {
					_, err := racing.AddAccount(ctx, id, account.RoleUser, "first")
					errs <- err
				}()
			}
			var refused []error
			for range 2 {
				if err := <-errs; err != nil {
					refused = append(refused, err)
				}
			}
			require.Len(t, refused, 1, "one add goes through, the other is refused: %v", refused)
			require.ErrorIs(t, refused[0], account.ErrInvalid)
			assert.ErrorContains(t, refused[0], "which a listing could not tell apart: choose another name")
			all, err := account.Latest(stores[1]).Accounts(ctx)
			require.NoError(t, err)
			require.Len(t, all, 1, "%v", all)
			toks, err := account.Latest(stores[1]).Tokens(ctx, "")
			require.NoError(t, err)
			require.Len(t, toks, 1, "the refused account's token is not kept either")
			assert.Equal(t, all[0].ID, toks[0].AccountID)
		})
	}
}

// twoHandles opens, for each kind of store, two handles on one store: the memory store twice,
// two SQLite stores on one file (a gateway and an account command), two NATS stores on one
// bucket through two connections (two replicas).
func twoHandles() map[string]func(t *testing.T) [2]account.Store {
	return map[string]func(t *testing.T) [2]account.Store{
		"memory": func(*testing.T) [2]account.Store {
			s := account.NewMemory()
			return [2]account.Store{s, s}
		},
		"sqlite": func(t *testing.T) (both [2]account.Store) {
			dir := t.TempDir()
			for i := range both {
				s, err := account.OpenSQLite(t.Context(), dir)
				require.NoError(t, err)
				t.Cleanup(func() { assert.NoError(t, s.Close()) })
				both[i] = s
			}
			return both
		},
		"nats": func(t *testing.T) (both [2]account.Store) {
			url := embeddednats.Start(t)
			for i := range both {
				s, err := account.OpenKV(t.Context(), embeddednats.JetStream(t, url))
				require.NoError(t, err)
				both[i] = s
			}
			return both
		},
	}
}

// accountsBarrier is a store whose Accounts, once it has read, waits until two callers have
// read (on any store of the meeting), as tokensBarrier's Tokens.
type accountsBarrier struct {
	account.Store
	*meeting
	ctx context.Context
}

func (b accountsBarrier) Accounts(ctx context.Context) ([]account.Account, error) {
	all, err := b.Store.Accounts(ctx)
	b.meet(b.ctx)
	return all, err
}

// meeting is where two callers wait for each other (tokensBarrier, accountsBarrier).
type meeting struct {
	arrived chan struct{}
	all     chan struct{}
	once    sync.Once
}

// meet waits until two callers have come.
func (m *meeting) meet(ctx context.Context) {
	m.arrived <- struct{}{}
	if len(m.arrived) == cap(m.arrived) {
		m.once.Do(func() { close(m.all) })
	}
	select {
	case <-m.all:
	case <-ctx.Done():
	}
}

// tokensBarrier is a store whose Tokens, once it has read, waits until two callers have read
// (on any store of the meeting), so that two adds that look at the account's tokens with it
// both look before either adds.
type tokensBarrier struct {
	account.Store
	*meeting
	ctx context.Context
}

func (b tokensBarrier) Tokens(ctx context.Context, accountID string) ([]account.Token, error) {
	toks, err := b.Store.Tokens(ctx, accountID)
	b.meet(b.ctx)
	return toks, err
}
