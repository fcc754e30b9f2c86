package account

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Revocations made by another process. Several processes share one data directory: the
// gateway, and `trap-sandbox credentials revoke` run beside it on the host. A revocation
// through the gateway's API closes the computer's socket at once (the API tells the gateway);
// one made by another process changes only the file. A RevocationFeed is how the gateway
// notices those: it looks at the file now and then and lists what was revoked since.

// RevocationPeriod is how often a running gateway looks for credentials revoked by another
// process: a socket whose credential is revoked on the data directory closes within it.
const RevocationPeriod = time.Second

// revocationSlack is how far before the previous look each look reaches back. A
// revocation's time is its revoker's clock as it starts, and it commits later, after waiting
// for another writer (up to busyTimeout): a look in between does not see it yet, and the
// next one must still take it.
const revocationSlack = time.Minute

// RevocationFeed lists the credentials revoked in a SQLite store, by this process or another.
// It is not safe for concurrent use.
type RevocationFeed struct {
	// conn is the feed's own connection: PRAGMA data_version counts the commits of every
	// other connection, so on a connection that only reads it counts them all.
	conn    *sql.Conn
	store   *SQLite // whose failures name its file
	version int64   // data_version at the last look that read the table; -1: none yet
	since   time.Time
}

// FollowRevocations starts a feed of the credentials revoked from now on (and up to
// revocationSlack before). Close it when done.
func (s *SQLite) FollowRevocations(ctx context.Context, now time.Time) (_ *RevocationFeed, err error) {
	defer s.named(&err)
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("follow revocations: %w", err)
	}
	return &RevocationFeed{conn: conn, store: s, version: -1, since: now.Add(-revocationSlack)}, nil
}

// Next lists the selectors of the credentials revoked (or removed with their account) since
// the previous call (now being the
// time of this one), and some a little before, again: what it lists must be safe to revoke
// twice. When no other connection committed since the previous call it does not read the
// table and lists none. After an error the next call looks again from the same time.
func (f *RevocationFeed) Next(ctx context.Context, now time.Time) (_ []string, err error) {
	defer f.store.named(&err)
	var version int64
	if err := f.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&version); err != nil {
		return nil, fmt.Errorf("look for revoked credentials: %w", err)
	}
	if version == f.version {
		return nil, nil
	}
	rows, err := f.conn.QueryContext(ctx, "SELECT selector FROM credentials WHERE revoked_at >= ? UNION ALL SELECT selector FROM removed_credentials WHERE removed_at >= ?",
		nanos(f.since), nanos(f.since))
	if err != nil {
		return nil, fmt.Errorf("look for revoked credentials: %w", err)
	}
	defer rows.Close()
	var revoked []string
	for rows.Next() {
		var selector string
		if err := rows.Scan(&selector); err != nil {
			return nil, fmt.Errorf("look for revoked credentials: %w", err)
		}
		revoked = append(revoked, selector)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("look for revoked credentials: %w", err)
	}
	f.version = version
	f.since = now.Add(-revocationSlack)
	return revoked, nil
}

// Close gives the feed's connection back.
func (f *RevocationFeed) Close() error { return f.conn.Close() }
