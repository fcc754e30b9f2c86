package account

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSQLiteMigratesAFileOfTheFirstSchema: a data directory made before linking existed keeps
// its credentials (bound to no computer) and gains the link tables.
func TestSQLiteMigratesAFileOfTheFirstSchema(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFile))
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, schema[0]+`
		INSERT INTO accounts VALUES ('alice', 'user', 1);
		INSERT INTO credentials VALUES ('c1', x'00', 'alice', 'operator', 1, 0, '', '', 0);
		PRAGMA user_version = 1;`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	s, err := OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	c, err := s.Credential(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, "alice", c.AccountID)
	assert.Empty(t, c.ComputerID, "an old credential is bound to no computer")
	require.NoError(t, s.CreateLinkCode(ctx, LinkCode{ID: "x", State: LinkPending}))
	var version int
	require.NoError(t, s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version))
	assert.Equal(t, len(schema), version)
}
