package account

import (
	"context"
	"fmt"
)

// SetSchemaVersionForTest writes the file's schema version, as a later trap-sandbox would.
func SetSchemaVersionForTest(ctx context.Context, s *SQLite, v int) error {
	_, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v))
	return err
}
