package account_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
)

// TestSQLiteBackupWhileTheGatewayWrites: a backup taken by one process (the command) while
// another (the gateway) adds accounts one after another is a consistent snapshot: restored as
// accounts.db into a data directory of its own, it opens, its admin's token authenticates, and
// it holds the accounts added before some point and none after (a copy mixing two states could
// hold a later one without an earlier one). It is the owner's alone and needs no -wal.
func TestSQLiteBackupWhileTheGatewayWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	gateway, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer gateway.Close()
	token, err := account.New(gateway, clock.Real{}).AddAccount(ctx, "ops", account.RoleAdmin, "operator")
	require.NoError(t, err)

	// The gateway writes until the backup is done, and at least once during it: the backup
	// starts after its first write and it stops after its next one once told to.
	firstWritten, stop, written := make(chan struct{}), make(chan struct{}), make(chan int, 1)
	go func() {
		n := 0
		defer func() { written <- n }()
		for {
			if err := gateway.CreateAccount(ctx, account.Account{ID: "a" + strconv.Itoa(n), Role: account.RoleUser}); err != nil {
				t.Errorf("the gateway's write %d: %v", n, err)
				return
			}
			n++
			if n == 1 {
				close(firstWritten)
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	<-firstWritten
	dest := filepath.Join(t.TempDir(), "accounts-backup.db")
	schema, err := account.BackupSQLite(ctx, dir, dest)
	close(stop)
	n := <-written
	require.NoError(t, err)
	assert.Equal(t, account.SchemaVersion(), schema)

	info, err := os.Stat(dest)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	left, err := filepath.Glob(filepath.Join(filepath.Dir(dest), "*"))
	require.NoError(t, err)
	assert.Equal(t, []string{dest}, left, "no part file left beside the backup")

	restored := t.TempDir()
	data, err := os.ReadFile(dest)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(restored, account.DBFile), data, 0o600))
	s, err := account.OpenExistingSQLite(ctx, restored)
	require.NoError(t, err)
	defer s.Close()
	got, err := account.New(s, clock.Real{}).Authenticate(ctx, token)
	require.NoError(t, err)
	assert.Equal(t, "ops", got.ID)
	all, err := s.Accounts(ctx)
	require.NoError(t, err)
	var ids []int
	for _, a := range all {
		if i, ok := strings.CutPrefix(a.ID, "a"); ok {
			k, err := strconv.Atoi(i)
			require.NoError(t, err)
			ids = append(ids, k)
		}
	}
	slices.Sort(ids)
	require.NotEmpty(t, ids, "the write made before the backup began")
	for i, k := range ids {
		require.Equal(t, i, k, "the backup holds a%d without a%d: not one state of the store", k, i)
	}
	assert.LessOrEqual(t, len(ids), n)
	t.Logf("the backup holds %d of the %d accounts written", len(ids), n)
}

// TestSQLiteBackupNeverReplacesAFile: a backup to a file that exists (an earlier backup) is
// refused and the file kept as it was; one into a directory that is not there says so and
// leaves nothing.
func TestSQLiteBackupNeverReplacesAFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	dest := filepath.Join(t.TempDir(), "monday.db")
	require.NoError(t, os.WriteFile(dest, []byte("last monday's"), 0o600))
	_, err = account.BackupSQLite(ctx, dir, dest)
	require.ErrorIs(t, err, account.ErrBackupExists)
	assert.EqualError(t, err, fmt.Sprintf("the backup file exists already: %s (give a new file name)", dest))
	data, err := os.ReadFile(dest)
	require.NoError(t, err)
	assert.Equal(t, "last monday's", string(data))

	// The directory the backups go in, given for the file, is named as one, with a file for it.
	backups := filepath.Dir(dest)
	_, err = account.BackupSQLite(ctx, dir, backups)
	assert.EqualError(t, err, backups+" is a directory: give a new file's name in it, e.g. "+backups+"/accounts-$(date +%F).db")

	missing := filepath.Join(t.TempDir(), "no-such-dir")
	_, err = account.BackupSQLite(ctx, dir, filepath.Join(missing, "b.db"))
	assert.EqualError(t, err, "make the backup file in "+missing+": no such file or directory")
	_, err = os.Stat(missing)
	assert.True(t, os.IsNotExist(err))
	left, err := filepath.Glob(filepath.Join(filepath.Dir(dest), "*"))
	require.NoError(t, err)
	assert.Equal(t, []string{dest}, left)
}

// TestSQLiteBackupUpgradesNothing: the backup of a store of an older schema, the copy to keep
// before upgrading trap-sandbox, is of that schema: taking it upgraded neither the store nor
// the copy, and an older trap-sandbox would open both. A data directory without a store is
// ErrNoStore, and no file is made.
func TestSQLiteBackupUpgradesNothing(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	require.NoError(t, account.WriteSchemaV1ForTest(ctx, dir))
	dest := filepath.Join(t.TempDir(), "before-upgrade.db")
	schema, err := account.BackupSQLite(ctx, dir, dest)
	require.NoError(t, err)
	assert.Equal(t, 1, schema)
	s, err := account.OpenExistingSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, 1, s.UpgradedFrom(), "the store was still of schema 1 after its backup")

	empty := t.TempDir()
	_, err = account.BackupSQLite(ctx, empty, filepath.Join(empty, "b.db"))
	require.ErrorIs(t, err, account.ErrNoStore)
	left, err := os.ReadDir(empty)
	require.NoError(t, err)
	assert.Empty(t, left)
}

// TestSQLiteBackupWithoutHardLinks: on a file system without hard links (a USB stick's FAT)
// the checked copy is renamed into place instead, and an existing file is still never
// replaced.
func TestSQLiteBackupWithoutHardLinks(t *testing.T) {
	defer account.WithoutHardLinksForTest()()
	ctx := t.Context()
	dir := t.TempDir()
	s, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	dest := filepath.Join(t.TempDir(), "stick.db")
	_, err = account.BackupSQLite(ctx, dir, dest)
	require.NoError(t, err)
	left, err := filepath.Glob(filepath.Join(filepath.Dir(dest), "*"))
	require.NoError(t, err)
	assert.Equal(t, []string{dest}, left)
	_, err = account.BackupSQLite(ctx, dir, dest)
	require.ErrorIs(t, err, account.ErrBackupExists)
}

// TestSQLiteBackupOfAnotherUsersStore: a backup run by a user who may not read the store (the
// operator's login, of a service's store) was refused at the copy, "copy the store to …:
// unable to open database file (14)", naming neither the store nor whose it is; it is refused
// at the store, naming its owner and whom to run as, and makes no file.
func TestSQLiteBackupOfAnotherUsersStore(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving the store to another user takes root")
	}
	ctx := t.Context()
	dir := t.TempDir()
	s, err := account.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	path := filepath.Join(dir, account.DBFile)
	require.NoError(t, os.Chown(path, 65534, 65534))
	owner := "65534"
	if u, err := user.LookupId(owner); err == nil {
		owner = u.Username
	}
	me, err := user.Current()
	require.NoError(t, err)
	defer account.UnreadableStoreForTest()()
	backups := t.TempDir()
	_, err = account.BackupSQLite(ctx, dir, filepath.Join(backups, "b.db"))
	require.ErrorIs(t, err, fs.ErrPermission)
	assert.EqualError(t, err, "open "+path+": permission denied: the file belongs to "+owner+", and this runs as "+me.Username+
		": run trap-sandbox as "+owner+", or give the data directory and its files to "+me.Username+" (chown)")
	left, err := os.ReadDir(backups)
	require.NoError(t, err)
	assert.Empty(t, left)
}

// TestSQLiteBackupOfADamagedStoreNamesTheStore: a damaged store (truncated, a page
// overwritten, or no database at all) is refused with SQLite's words and what to do, and no
// backup file is left. It read "open …/accounts.db: copy the store to /backups: database disk
// image is malformed (11): the file is damaged", which named the backup's directory before
// the damage.
func TestSQLiteBackupOfADamagedStoreNamesTheStore(t *testing.T) {
	ctx := t.Context()
	good := t.TempDir()
	s, err := account.OpenSQLite(ctx, good)
	require.NoError(t, err)
	for i := range 200 { // pages of its own for the accounts table
		require.NoError(t, s.CreateAccount(ctx, account.Account{ID: fmt.Sprint("a", i), Role: account.RoleUser, Created: time.Now(), CreatedBy: strings.Repeat("x", 200)}))
	}
	require.NoError(t, s.Close())
	whole, err := os.ReadFile(filepath.Join(good, account.DBFile))
	require.NoError(t, err)
	require.Greater(t, len(whole), 8*4096)

	// Every page but the first, the schema's, overwritten: the tables it names are gone.
	overwritten := slices.Clone(whole)
	copy(overwritten[4096:], bytes.Repeat([]byte{0xff}, len(whole)-4096))
	const fix = ": the file is damaged; restore it from a backup, or move it away (with its -wal and -shm) to start with no accounts"
	for name, tc := range map[string]struct {
		data []byte
		why  string
	}{
		"overwritten pages": {overwritten, "database disk image is malformed (11)"},
		"no database":       {[]byte("garbage"), "file is not a database (26)"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, account.DBFile)
			require.NoError(t, os.WriteFile(path, tc.data, 0o600))
			backups := t.TempDir()
			_, err := account.BackupSQLite(ctx, dir, filepath.Join(backups, "b.db"))
			assert.EqualError(t, err, "open "+path+": "+tc.why+fix)
			left, err := os.ReadDir(backups)
			require.NoError(t, err)
			assert.Empty(t, left, "no backup file is left")
		})
	}
}
