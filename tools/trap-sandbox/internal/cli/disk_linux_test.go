package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/account"
)

// TestAGatewayStoppedOnAFullDiskSaysItsWALIsKept: a gateway stopped on a full disk left
// accounts.db-wal beside accounts.db, holding the store's latest changes, without a word; a
// copy of accounts.db alone, taken once it had stopped, lacked them. Its last lines say so,
// naming the files to keep together. (The store's own test, account's
// TestAStoreClosedOnAFullDiskSaysItsWALIsKept, shows that nothing is lost.)
func TestAGatewayStoppedOnAFullDiskSaysItsWALIsKept(t *testing.T) {
	clearEnv(t)
	disk := t.TempDir()
	if err := syscall.Mount("tmpfs", disk, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("a file system of the test's own takes mounting one: %v", err)
	}
	t.Cleanup(func() { require.NoError(t, syscall.Unmount(disk, 0)) })
	dir := filepath.Join(disk, "ts")
	root, _ := parse(t, "--listen", "127.0.0.1:0", "--data-dir", dir)
	_, logs, stop := startServe(t, root.Serve)

	// Another process on the store (an account command beside the gateway) writes rows that
	// accounts.db must grow to take: they are in the -wal until a checkpoint writes them in.
	other, err := account.OpenSQLite(t.Context(), dir)
	require.NoError(t, err)
	defer other.Close()
	for i := range 30 {
		require.NoError(t, other.CreateAccount(t.Context(), account.Account{ID: fmt.Sprint("a", i), Role: account.RoleUser, Created: time.Now(), CreatedBy: strings.Repeat("x", 2048)}))
	}
	filler, err := os.Create(filepath.Join(disk, "filler"))
	require.NoError(t, err)
	for err == nil {
		_, err = filler.Write(make([]byte, 4096))
	}
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, filler.Close())

	require.NoError(t, stop())
	path := filepath.Join(dir, account.DBFile)
	kept := "the account store's latest changes are in its -wal alone: its disk is full, so they could not be written into " + path + " as it closed; the next start reads them from " + path + "-wal: keep accounts.db-wal and accounts.db-shm with accounts.db"
	assert.Contains(t, logs.String(), `level=WARN msg="accounts: `+kept)

	// An account command on the stopped gateway's store says the same on stderr.
	out, errOut, err := runWith(t, "", "accounts", "list", "--data-dir", dir)
	require.NoError(t, err)
	assert.Contains(t, out, "a29")
	assert.True(t, strings.HasPrefix(errOut, "trap-sandbox: "+kept), errOut)
}
