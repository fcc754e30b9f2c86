package account

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// KVBucket is the JetStream key-value bucket of the NATS store: every replica of a cluster
// reads and writes the same accounts, tokens and credentials there.
const KVBucket = "trapos_accounts"

// kvRetries bounds the compare-and-swap retries of one update; each retry means another
// writer changed the same record in between, so a handful is plenty.
const kvRetries = 16

// KV is a Store in a NATS JetStream key-value bucket (gateway replicas under --nats). Keys are
// <kind>.<hex of the id>, so any id is a valid key; updates are compare-and-swap on the
// key's revision, so a revocation is never lost to a concurrent hello's bookkeeping.
type KV struct {
	kv jetstream.KeyValue
	js jetstream.JetStream // for a purge of the bucket's stream (DeleteLinkCodes)
	// leader reads a key through the bucket's stream leader (getAtLeader): the library's
	// KeyValue has no such read, and the jetstream package's stream read is a direct get as
	// the bucket allows it.
	leader nats.JetStreamContext
	// atLeader sends every read of this KV through the stream leader: the view Latest
	// returns, latest (itself, in that view).
	atLeader bool
	latest   *KV
	// health is what the latest read or write of the bucket found (HealthDetail).
	health *bucketHealth
}

var _ Store = (*KV)(nil)

// OpenKV binds the bucket on js, creating it if it does not exist.
func OpenKV(ctx context.Context, js jetstream.JetStream) (*KV, error) {
	cfg := jetstream.KeyValueConfig{Bucket: KVBucket, History: 1, Description: "trap-sandbox: accounts, API tokens (SHA-256) and computer credentials (SHA-256)"}
	kv, err := js.KeyValue(ctx, KVBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, KVBucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("key-value bucket %s: %w", KVBucket, err)
	}
	return newKV(kv, js)
}

// newKV is the store on the bound bucket kv of js.
func newKV(kv jetstream.KeyValue, js jetstream.JetStream) (*KV, error) {
	leader, err := js.Conn().JetStream(nats.APIPrefix(js.Options().APIPrefix))
	if err != nil {
		return nil, fmt.Errorf("key-value bucket %s: %w", KVBucket, err)
	}
	s := &KV{kv: kv, js: js, leader: leader, health: &bucketHealth{now: time.Now}}
	l := *s
	l.atLeader = true
	s.latest, l.latest = &l, &l
	return s, nil
}

// Latest implements LatestReader: the same bucket, every read of it (a key, a listing)
// through the stream leader, which has applied every write acknowledged before it. KV's own
// reads are direct gets, which any of the stream's replicas may answer on a NATS cluster (a
// follower before it has applied the latest writes: NATS promises no read-your-writes for
// them), and listings, whose consumer the servers may place on such a follower. Its writes are
// KV's.
func (s *KV) Latest() Store { return s.latest }

// ErrNoBucket is OpenExistingKV's answer when NATS has no bucket KVBucket: no replica has
// started on this NATS yet, or NATS lost its store.
var ErrNoBucket = errors.New("NATS has no bucket " + KVBucket + " (no replica has started on it yet, or NATS lost its store: " +
	"restarted without -sd?); no empty one was made in its place. If it lost its store, give it back and its accounts come back; " +
	"else start a replica, or create an empty store with trap-sandbox accounts add NAME --nats URL (docs/scale-out.md)")

// OpenExistingKV binds the bucket on js without creating it: ErrNoBucket when it is missing.
// A command that only reads or changes what is there uses it, so that an operator checking
// on a NATS that lost its store does not put an empty bucket in its place (which would
// refuse every token and credential, and stop the computers' daemons retrying).
func OpenExistingKV(ctx context.Context, js jetstream.JetStream) (*KV, error) {
	kv, err := js.KeyValue(ctx, KVBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, ErrNoBucket
	}
	if err != nil {
		return nil, fmt.Errorf("key-value bucket %s: %w", KVBucket, err)
	}
	return newKV(kv, js)
}

// ErrBucketGone is the answer of every read and write once NATS has lost the bucket after
// OpenKV (restarted without its store, -sd): the library's own words ("no responders
// available for request", "stream not found") name neither the bucket nor what to do. The
// bucket is not created again here: an empty one would refuse every token and credential,
// where giving NATS its store back brings them all back.
var ErrBucketGone = errors.New("NATS has no bucket " + KVBucket + " any more (restarted without its store, -sd?): its accounts, " +
	"API tokens and computer credentials are unknown until it is back; give NATS its store back, or add the accounts " +
	"again with trap-sandbox accounts add --nats (docs/scale-out.md)")

// natsError is err, an error of NATS on a read or write of the bucket, in words that name its
// cause where the library's do not: as ErrBucketGone if it says that the bucket's stream is not
// there; as NATS not reachable while the connection is reconnecting, where the library says
// "outbound buffer limit exceeded" (the replicas buffer nothing while NATS is away: conn.go).
// Every error of the bucket passes here, once.
func natsError(err error) error {
	switch {
	case bucketGone(err):
		return fmt.Errorf("%w (%v)", ErrBucketGone, err)
	case Reconnecting(err):
		return fmt.Errorf("NATS is not reachable (reconnecting): %w", err)
	}
	return err
}

// bucketGone says err, NATS's own error of a read or write of the bucket, is that the
// bucket's stream is not there.
func bucketGone(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrStreamNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, jetstream.ErrBucketNotFound)
}

// Reconnecting says err is a read or write of the bucket made while the store's connection to
// NATS was reconnecting: one made again once it is back may succeed.
func Reconnecting(err error) bool {
	return errors.Is(err, nats.ErrReconnectBufExceeded) || errors.Is(err, nats.ErrConnectionReconnecting)
}

const (
	kvAccount    = "account."
	kvToken      = "token."
	kvCredential = "cred."
	// kvBound keys one record per account and computer id (kvBoundKey) whose revision orders
	// the credentials bound to that id (CreateBoundCredential): the bucket has no transaction
	// that could look at every credential and add one in one step.
	kvBound = "bound."
	// kvTokenAdds keys one record per account (kvKey of its id) whose revision orders the
	// adds of its tokens (CreateTokenIf), as kvBound's does a computer id's credentials.
	kvTokenAdds = "tokenadds."
	// kvAccountAdds is the one record whose revision orders the adds of accounts
	// (CreateAccountIf): an account's name is told from every other account's.
	kvAccountAdds = "accountadds"
)

func kvKey(prefix, id string) string { return prefix + hex.EncodeToString([]byte(id)) }

// kvAccountRecord, kvTokenRecord and kvCredentialRecord are the stored JSON (times as Unix
// nanoseconds, 0 for none, as in the SQLite store).
type kvAccountRecord struct {
	ID        string `json:"id"`
	Role      Role   `json:"role"`
	Created   int64  `json:"created"`
	CreatedBy string `json:"createdBy,omitempty"`
}

type kvTokenRecord struct {
	Selector  string `json:"selector"`
	Hash      []byte `json:"hash"`
	AccountID string `json:"accountId"`
	Name      string `json:"name"`
	Created   int64  `json:"created"`
	ExpiresAt int64  `json:"expiresAt"`
	RevokedAt int64  `json:"revokedAt"`
	// The audit fields (absent in records written before them: zero).
	CreatedBy  string `json:"createdBy,omitempty"`
	LastUsed   int64  `json:"lastUsed,omitempty"`
	RemoteAddr string `json:"remoteAddr,omitempty"`
	// AccountCreated is Token.AccountCreated (absent in records written before it: zero).
	AccountCreated int64 `json:"accountCreated,omitempty"`
}

type kvCredentialRecord struct {
	Selector     string `json:"selector"`
	Hash         []byte `json:"hash"`
	AccountID    string `json:"accountId"`
	ApprovedBy   string `json:"approvedBy"`
	Created      int64  `json:"created"`
	LastSeen     int64  `json:"lastSeen"`
	LastTraposID string `json:"lastTraposId"`
	RemoteAddr   string `json:"remoteAddr"`
	RevokedAt    int64  `json:"revokedAt"`
	ComputerID   string `json:"computerId,omitempty"`
	// AccountCreated is Credential.AccountCreated (absent in records written before it: zero).
	AccountCreated int64 `json:"accountCreated,omitempty"`
}

func (r kvAccountRecord) account() Account {
	return Account{ID: r.ID, Role: r.Role, Created: fromNanos(r.Created), CreatedBy: r.CreatedBy}
}

func (r kvTokenRecord) token() Token {
	return Token{Selector: r.Selector, Hash: r.Hash, AccountID: r.AccountID, Name: r.Name, Created: fromNanos(r.Created),
		ExpiresAt: fromNanos(r.ExpiresAt), RevokedAt: fromNanos(r.RevokedAt), CreatedBy: r.CreatedBy, LastUsed: fromNanos(r.LastUsed),
		RemoteAddr: r.RemoteAddr, AccountCreated: fromNanos(r.AccountCreated)}
}

func (r kvCredentialRecord) credential() Credential {
	return Credential{Selector: r.Selector, Hash: r.Hash, AccountID: r.AccountID, ApprovedBy: r.ApprovedBy, Created: fromNanos(r.Created),
		LastSeen: fromNanos(r.LastSeen), LastTraposID: r.LastTraposID, RemoteAddr: r.RemoteAddr, RevokedAt: fromNanos(r.RevokedAt), ComputerID: r.ComputerID,
		AccountCreated: fromNanos(r.AccountCreated)}
}

// get reads key into v and returns its revision; ErrNotFound (wrapped with what and id) when
// it is absent. It is a direct get, but in the Latest view, where it reads at the leader.
func (s *KV) get(ctx context.Context, what, key, id string, v any) (uint64, error) {
	if s.atLeader {
		return s.getAtLeader(ctx, what, key, id, v)
	}
	e, err := s.kv.Get(ctx, key)
	s.health.saw(err)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, notFound(what, id)
	}
	if err != nil {
		return 0, fmt.Errorf("read %s %q: %w", what, id, natsError(err))
	}
	if err := json.Unmarshal(e.Value(), v); err != nil {
		return 0, fmt.Errorf("read %s %q: %w", what, id, err)
	}
	return e.Revision(), nil
}

// The bucket's stream and the subject of a key in it, as JetStream names them for a bucket.
const (
	kvStream        = "KV_" + KVBucket
	kvSubjectPrefix = "$KV." + KVBucket + "."
)

// getAtLeader is get read through the bucket's stream leader ($JS.API.STREAM.MSG.GET, which
// only the leader answers), where get's KeyValue.Get is a direct get that any of the
// stream's replicas may answer, a follower before it has applied the latest writes. The
// leader has applied every write acknowledged before it (a new one answers only once it has
// applied what its predecessor committed), so this sees each of them; a follower cut off
// from the leader is not asked, and the read waits for the leader or fails. It returns the
// key's revision, as get.
func (s *KV) getAtLeader(ctx context.Context, what, key, id string, v any) (uint64, error) {
	data, rev, err := s.lastAtLeader(ctx, key)
	s.health.saw(err)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, notFound(what, id)
	}
	if err != nil {
		return 0, fmt.Errorf("read %s %q at the bucket's leader: %w", what, id, natsError(err))
	}
	if err := json.Unmarshal(data, v); err != nil {
		return 0, fmt.Errorf("read %s %q: %w", what, id, err)
	}
	return rev, nil
}

// lastAtLeader is the value of key and its revision read through the bucket's stream leader
// (getAtLeader); jetstream.ErrKeyNotFound when it has none, or a deletion's mark.
func (s *KV) lastAtLeader(ctx context.Context, key string) ([]byte, uint64, error) {
	m, err := s.leader.GetLastMsg(kvStream, kvSubjectPrefix+key, nats.Context(ctx))
	if errors.Is(err, nats.ErrMsgNotFound) {
		return nil, 0, jetstream.ErrKeyNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	// A key deleted or purged keeps a marker as its last message.
	if op := m.Header.Get("KV-Operation"); op == "DEL" || op == "PURGE" || m.Header.Get(jetstream.MarkerReasonHeader) != "" {
		return nil, 0, jetstream.ErrKeyNotFound
	}
	return m.Data, m.Sequence, nil
}

// create stores v at key unless the key exists (ErrExists).
func (s *KV) create(ctx context.Context, what, key, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.kv.Create(ctx, key, b)
	s.health.saw(err)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return exists(what, id)
	} else if err != nil {
		return fmt.Errorf("add %s %q: %w", what, id, natsError(err))
	}
	return nil
}

// kvUpdate is kvChange whose change never refuses.
func kvUpdate[T any](ctx context.Context, s *KV, what, key, id string, change func(*T)) (T, error) {
	return kvChange(ctx, s, what, key, id, func(v *T) error {
		change(v)
		return nil
	})
}

// kvChange reads key into v, lets change modify it (its error aborts the update) and writes
// it back if the key's revision did not move meanwhile: a compare-and-swap, which the stream
// leader checks, so a change made on a stale read (a lagging follower's answer) is refused
// rather than written over a later one, and of two concurrent changes one retries on the
// other's result. The retry reads through the leader: a direct get might be answered by the
// same lagging follower again, refused again until the retries ran out.
func kvChange[T any](ctx context.Context, s *KV, what, key, id string, change func(*T) error) (T, error) {
	var zero T
	read := s
	for range kvRetries {
		var v T
		rev, err := read.get(ctx, what, key, id, &v)
		if err != nil {
			return zero, err
		}
		if err := change(&v); err != nil {
			return zero, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return zero, err
		}
		if _, err := s.kv.Update(ctx, key, b, rev); err == nil {
			return v, nil
		} else if !revisionMoved(err) {
			return zero, fmt.Errorf("update %s %q: %w", what, id, natsError(err))
		}
		read = s.latest
	}
	return zero, fmt.Errorf("update %s %q: %d concurrent writers in a row; try again", what, id, kvRetries)
}

// revisionMoved says err, of a compare-and-swap write (KeyValue.Update at a revision, or
// Create), is that another writer wrote the key since it was read: read it again and retry.
func revisionMoved(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || strings.Contains(err.Error(), "wrong last sequence")
}

// addInOrder is the one way the bucket adds a record under a rule that looks at others (a
// computer id's one bound credential, an account's token names, the accounts' names): the
// bucket has no transaction that could look and add in one step, so the adds under one rule
// are ordered by the revision of a record of their own (claim). Each reads claim's revision,
// looks (look: the rule, on records read through the stream leader, Latest), adds (add), and
// then writes claim (value: what it added) if its revision has not moved, which every other
// add under the rule does after adding its own. One that finds it moved takes its add back
// (undo) and looks again, and then its look sees the add of the call that moved it. what
// names the add in its errors (token "…"); left says what an undo that failed leaves. step,
// when not nil, is called after the look ("looked") and between the add and the write
// ("added"), for the tests that interleave two adds.
func (s *KV) addInOrder(ctx context.Context, claim, value, what string, look, add, undo func() error, left string, step func(string)) error {
	for range kvRetries {
		var rev uint64 // 0: the record does not exist yet
		if _, r, err := s.lastAtLeader(ctx, claim); err == nil {
			rev = r
		} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
			return fmt.Errorf("add %s: %w", what, natsError(err))
		}
		if err := look(); err != nil {
			return err
		}
		if step != nil {
			step("looked")
		}
		if err := add(); err != nil {
			return err
		}
		if step != nil {
			step("added")
		}
		var err error
		if rev == 0 {
			_, err = s.kv.Create(ctx, claim, []byte(value))
		} else {
			_, err = s.kv.Update(ctx, claim, []byte(value), rev)
		}
		if err == nil {
			return nil
		}
		if derr := undo(); derr != nil {
			return fmt.Errorf("add %s: %w (and %s: %v)", what, natsError(err), left, natsError(derr))
		}
		if !revisionMoved(err) {
			return fmt.Errorf("add %s: %w", what, natsError(err))
		}
	}
	return fmt.Errorf("add %s: %d concurrent writers in a row; try again", what, kvRetries)
}

// list reads every record whose key starts with prefix.
func kvList[T any](ctx context.Context, s *KV, prefix string) ([]T, error) {
	keys, err := s.keys(ctx, prefix)
	s.health.saw(err)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", strings.TrimSuffix(prefix, "."), natsError(err))
	}
	var out []T
	for _, k := range keys {
		var v T
		if _, err := s.get(ctx, strings.TrimSuffix(prefix, "."), k, k, &v); errors.Is(err, ErrNotFound) {
			continue // deleted since the listing
		} else if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// keys lists the bucket's keys that start with prefix: through KeyValue.ListKeys, whose
// consumer the servers place on any of the stream's replicas, but in the Latest view, where
// the stream's info lists them, which only the leader answers (a deleted key's mark among
// them: its read finds it gone).
func (s *KV) keys(ctx context.Context, prefix string) ([]string, error) {
	if s.atLeader {
		info, err := s.leader.StreamInfo(kvStream, &nats.StreamInfoRequest{SubjectsFilter: kvSubjectPrefix + prefix + ">"}, nats.Context(ctx))
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(info.State.Subjects))
		for subject := range info.State.Subjects {
			keys = append(keys, strings.TrimPrefix(subject, kvSubjectPrefix))
		}
		slices.Sort(keys)
		return keys, nil
	}
	lister, err := s.kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var keys []string
	for k := range lister.Keys() {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// CreateAccount implements Store.
func (s *KV) CreateAccount(ctx context.Context, a Account) error {
	return s.create(ctx, "account", kvKey(kvAccount, a.ID), a.ID, kvAccountRecord{ID: a.ID, Role: a.Role, Created: nanos(a.Created),
		CreatedBy: a.CreatedBy})
}

// CreateAccountWithToken adds a and its first token t as one change, as far as a bucket
// without transactions allows: the account first (so that a taken id is refused before any
// token exists), then the token; when the token cannot be stored the account is deleted again,
// at the revision this call wrote, so that adding it again works instead of answering "exists
// already". Only when that deletion fails too (the bus gone between the two writes) is the
// account left without a token; `trap-sandbox accounts` can then issue it one.
func (s *KV) CreateAccountWithToken(ctx context.Context, a Account, t Token) error {
	b, err := json.Marshal(kvAccountRecord{ID: a.ID, Role: a.Role, Created: nanos(a.Created), CreatedBy: a.CreatedBy})
	if err != nil {
		return err
	}
	key := kvKey(kvAccount, a.ID)
	rev, err := s.kv.Create(ctx, key, b)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return exists("account", a.ID)
	} else if err != nil {
		return fmt.Errorf("add account %q: %w", a.ID, natsError(err))
	}
	if err := s.createTokenRecord(ctx, t); err != nil {
		if derr := s.kv.Delete(ctx, key, jetstream.LastRevision(rev)); derr != nil {
			return fmt.Errorf("%w (and account %q was added without it: %v)", err, a.ID, derr)
		}
		return err
	}
	return nil
}

// CreateAccountIf implements Store optimistically, as CreateTokenIf: it reads the revision of
// the bucket's record of account adds (kvAccountAdds), shows check every account, adds a and t
// (CreateAccountWithToken), and then writes that record if its revision has not moved, which
// every other CreateAccountIf does after adding its own. One that finds the revision moved
// deletes its token and account and looks again, and then its check sees the account added by
// the call that moved it. Both are read through the bucket's stream leader (Latest). One cut
// off between its adds and its write (NATS gone) leaves its account, whose token's secret was
// never given: accounts remove takes it away.
func (s *KV) CreateAccountIf(ctx context.Context, a Account, t Token, check func([]Account) error) error {
	return s.createAccountIf(ctx, a, t, check, nil)
}

// createAccountIf is CreateAccountIf calling step (when not nil) after its look ("looked") and
// between adding the account and writing the record ("added").
func (s *KV) createAccountIf(ctx context.Context, a Account, t Token, check func([]Account) error, step func(string)) error {
	look := func() error {
		all, err := s.latest.Accounts(ctx)
		if err != nil {
			return err
		}
		return check(all)
	}
	add := func() error { return s.CreateAccountWithToken(ctx, a, t) }
	undo := func() error {
		if err := s.kv.Delete(ctx, kvKey(kvToken, t.Selector)); err != nil {
			return err
		}
		return s.kv.Delete(ctx, kvKey(kvAccount, a.ID))
	}
	return s.addInOrder(ctx, kvAccountAdds, a.ID, fmt.Sprintf("account %q", a.ID), look, add, undo,
		"it is left with a token whose secret was never given: remove it, trap-sandbox accounts remove "+a.ID, step)
}

// Account implements Store.
func (s *KV) Account(ctx context.Context, id string) (Account, error) {
	var r kvAccountRecord
	if _, err := s.get(ctx, "account", kvKey(kvAccount, id), id, &r); err != nil {
		return Account{}, err
	}
	return r.account(), nil
}

// accountToWrite reads account id through the bucket's stream leader (Latest), for a write
// that needs it to exist: on a cluster a direct get may be answered by a follower that has not
// applied the account's add yet, and a script's `accounts add` then `tokens add` was answered
// "not found".
func (s *KV) accountToWrite(ctx context.Context, id string) (Account, error) {
	return s.latest.Account(ctx, id)
}

// Accounts implements Store.
func (s *KV) Accounts(ctx context.Context) ([]Account, error) {
	recs, err := kvList[kvAccountRecord](ctx, s, kvAccount)
	if err != nil {
		return nil, err
	}
	out := make([]Account, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.account())
	}
	slices.SortFunc(out, func(a, b Account) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// CreateToken implements Store.
func (s *KV) CreateToken(ctx context.Context, t Token) error {
	if _, err := s.accountToWrite(ctx, t.AccountID); err != nil {
		return err
	}
	return s.createTokenRecord(ctx, t)
}

// createTokenRecord stores t, its account not checked.
func (s *KV) createTokenRecord(ctx context.Context, t Token) error {
	return s.create(ctx, "token", kvKey(kvToken, t.Selector), t.Selector, tokenRecord(t))
}

func tokenRecord(t Token) kvTokenRecord {
	return kvTokenRecord{Selector: t.Selector, Hash: t.Hash, AccountID: t.AccountID, Name: t.Name, Created: nanos(t.Created),
		ExpiresAt: nanos(t.ExpiresAt), RevokedAt: nanos(t.RevokedAt), CreatedBy: t.CreatedBy, LastUsed: nanos(t.LastUsed),
		RemoteAddr: t.RemoteAddr, AccountCreated: nanos(t.AccountCreated)}
}

// CreateTokenIf implements Store optimistically, as CreateBoundCredential: it reads the
// revision of the account's record of token adds (kvTokenAdds), shows check the account's
// tokens, adds t, and then writes that record if its revision has not moved, which every
// other CreateTokenIf of the account does after adding its own token. One that finds the
// revision moved deletes its token and looks again, and then its check sees the token added
// by the call that moved it. Both are read through the bucket's stream leader (Latest), so a
// lagging follower's listing does not miss a token added a moment ago. One cut off between
// its add and its write (NATS gone) leaves its token, whose secret was never given, listed
// until it is revoked.
func (s *KV) CreateTokenIf(ctx context.Context, t Token, check func([]Token) error) error {
	return s.createTokenIf(ctx, t, check, nil)
}

// createTokenIf is CreateTokenIf calling step (when not nil) after its look ("looked") and
// between adding the token and writing the account's record ("added").
func (s *KV) createTokenIf(ctx context.Context, t Token, check func([]Token) error, step func(string)) error {
	if _, err := s.accountToWrite(ctx, t.AccountID); err != nil {
		return err
	}
	look := func() error {
		toks, err := s.latest.Tokens(ctx, t.AccountID)
		if err != nil {
			return err
		}
		return check(toks)
	}
	add := func() error { return s.createTokenRecord(ctx, t) }
	undo := func() error { return s.kv.Delete(ctx, kvKey(kvToken, t.Selector)) }
	return s.addInOrder(ctx, kvKey(kvTokenAdds, t.AccountID), t.Selector, fmt.Sprintf("token %q", t.Selector), look, add, undo,
		"it is left without its secret", step)
}

// Token implements Store.
func (s *KV) Token(ctx context.Context, selector string) (Token, error) {
	var r kvTokenRecord
	if _, err := s.get(ctx, "token", kvKey(kvToken, selector), selector, &r); err != nil {
		return Token{}, err
	}
	return r.token(), nil
}

// Tokens implements Store.
func (s *KV) Tokens(ctx context.Context, accountID string) ([]Token, error) {
	recs, err := kvList[kvTokenRecord](ctx, s, kvToken)
	if err != nil {
		return nil, err
	}
	all := make([]Token, 0, len(recs))
	for _, r := range recs {
		all = append(all, r.token())
	}
	return listOwned(all, accountID), nil
}

// RevokeToken implements Store.
func (s *KV) RevokeToken(ctx context.Context, selector string, at time.Time) (Token, error) {
	r, err := kvUpdate(ctx, s, "token", kvKey(kvToken, selector), selector, func(r *kvTokenRecord) {
		if r.RevokedAt == 0 {
			r.RevokedAt = nanos(at)
		}
	})
	return r.token(), err
}

// CreateCredential implements Store.
func (s *KV) CreateCredential(ctx context.Context, c Credential) error {
	if _, err := s.accountToWrite(ctx, c.AccountID); err != nil {
		return err
	}
	return s.createCredentialRecord(ctx, c)
}

// createCredentialRecord stores c, its account not checked.
func (s *KV) createCredentialRecord(ctx context.Context, c Credential) error {
	return s.create(ctx, "credential", kvKey(kvCredential, c.Selector), c.Selector, credentialRecord(c))
}

// kvBoundKey is the kvBound record of computer id computerID in account accountID (an account
// name holds no NUL).
func kvBoundKey(accountID, computerID string) string {
	return kvKey(kvBound, accountID+"\x00"+computerID)
}

// CreateBoundCredential implements Store, optimistically: it reads the revision of the
// account's record of the computer id (kvBoundKey), looks at the account's credentials,
// adds c, and then writes that record if its revision has not moved, which every other
// CreateBoundCredential of the id does after adding its own credential. One that finds the
// revision moved deletes its credential and looks again, and then sees the one added by the
// call that moved it. A credential is thus kept only by the call whose write of the record
// came first after its look; one cut off between its add and its write (NATS gone) leaves
// its credential, which nobody holds the secret of, listed until it is revoked. The record
// and the credentials are read through the bucket's stream leader (Latest): a listing of a
// lagging follower's would miss the credential bound a moment ago with the record's revision
// read elsewhere, and a second credential would be bound to the id.
func (s *KV) CreateBoundCredential(ctx context.Context, c Credential) error {
	return s.createBound(ctx, c, nil)
}

// createBound is CreateBoundCredential calling step (when not nil) after its look
// ("looked") and between adding the credential and writing the id's record ("added").
func (s *KV) createBound(ctx context.Context, c Credential, step func(string)) error {
	if _, err := s.accountToWrite(ctx, c.AccountID); err != nil {
		return err
	}
	look := func() error {
		creds, err := s.latest.Credentials(ctx, c.AccountID)
		if err != nil {
			return err
		}
		if held := heldBound(creds, c.ComputerID); held != nil {
			return &HeldIDError{Held: *held}
		}
		return nil
	}
	add := func() error { return s.createCredentialRecord(ctx, c) }
	undo := func() error { return s.kv.Delete(ctx, kvKey(kvCredential, c.Selector)) }
	return s.addInOrder(ctx, kvBoundKey(c.AccountID, c.ComputerID), c.Selector, fmt.Sprintf("credential %q", c.Selector), look, add, undo,
		"it is left without its secret", step)
}

// CreateApprovedCredential implements Store with a compensating step, as the bucket has no
// transaction: it adds c first and looks after, reading the account and the token through
// the bucket's stream leader (getAtLeader). A revocation or removal acknowledged before the
// look is seen there, on one NATS server or on a cluster whose bucket has stream replicas
// (where a KeyValue Get, a direct get, may be answered by a follower that has not applied it
// yet: NATS promises no read-your-writes for them), and the credential, whose secret nobody
// has been given, is deleted again; one written after the look comes after the credential
// existed. One cut off between its add and the delete (NATS gone) leaves the credential,
// which nobody holds the secret of, listed until it is revoked. Meanwhile another link of
// the same computer id into the account may be refused for it (*HeldIDError), as for a call
// of CreateBoundCredential that loses.
func (s *KV) CreateApprovedCredential(ctx context.Context, c Credential, approvedToken string, exclusive bool) error {
	return s.createApproved(ctx, c, approvedToken, exclusive, nil)
}

// createApproved is CreateApprovedCredential calling added (when not nil) between the add and
// the look.
func (s *KV) createApproved(ctx context.Context, c Credential, approvedToken string, exclusive bool, added func()) error {
	var err error
	if exclusive {
		err = s.CreateBoundCredential(ctx, c)
	} else {
		err = s.CreateCredential(ctx, c)
	}
	if err != nil {
		return err
	}
	if added != nil {
		added()
	}
	refused := s.approvalStanding(ctx, c, approvedToken)
	if refused == nil {
		return nil
	}
	if derr := s.kv.Delete(ctx, kvKey(kvCredential, c.Selector)); derr != nil {
		return fmt.Errorf("%w (and its credential %q, added before that was seen, is left without its secret: %v)", refused, c.Selector, natsError(derr))
	}
	return refused
}

// approvalStanding reads c's account and the token approvedToken through the bucket's leader
// (Latest) and says whether the approval stands (approvalStanding).
func (s *KV) approvalStanding(ctx context.Context, c Credential, approvedToken string) error {
	var acc *Account
	switch a, err := s.latest.Account(ctx, c.AccountID); {
	case err == nil:
		acc = &a
	case !errors.Is(err, ErrNotFound):
		return err
	}
	var tok *Token
	if approvedToken != "" {
		switch t, err := s.latest.Token(ctx, approvedToken); {
		case err == nil:
			tok = &t
		case !errors.Is(err, ErrNotFound):
			return err
		}
	}
	return approvalStanding(c, acc, approvedToken, tok)
}

func credentialRecord(c Credential) kvCredentialRecord {
	return kvCredentialRecord{Selector: c.Selector, Hash: c.Hash, AccountID: c.AccountID, ApprovedBy: c.ApprovedBy, Created: nanos(c.Created),
		LastSeen: nanos(c.LastSeen), LastTraposID: c.LastTraposID, RemoteAddr: c.RemoteAddr, RevokedAt: nanos(c.RevokedAt),
		ComputerID: c.ComputerID, AccountCreated: nanos(c.AccountCreated)}
}

// Credential implements Store.
func (s *KV) Credential(ctx context.Context, selector string) (Credential, error) {
	var r kvCredentialRecord
	if _, err := s.get(ctx, "credential", kvKey(kvCredential, selector), selector, &r); err != nil {
		return Credential{}, err
	}
	return r.credential(), nil
}

// Credentials implements Store.
func (s *KV) Credentials(ctx context.Context, accountID string) ([]Credential, error) {
	recs, err := kvList[kvCredentialRecord](ctx, s, kvCredential)
	if err != nil {
		return nil, err
	}
	all := make([]Credential, 0, len(recs))
	for _, r := range recs {
		all = append(all, r.credential())
	}
	return listOwned(all, accountID), nil
}

// RevokeCredential implements Store.
func (s *KV) RevokeCredential(ctx context.Context, selector string, at time.Time) (Credential, error) {
	r, err := kvUpdate(ctx, s, "credential", kvKey(kvCredential, selector), selector, func(r *kvCredentialRecord) {
		if r.RevokedAt == 0 {
			r.RevokedAt = nanos(at)
		}
	})
	return r.credential(), err
}

// SeeCredential implements Store.
func (s *KV) SeeCredential(ctx context.Context, selector string, at time.Time, traposID, remoteAddr string) error {
	_, err := kvUpdate(ctx, s, "credential", kvKey(kvCredential, selector), selector, func(r *kvCredentialRecord) {
		r.LastSeen, r.LastTraposID, r.RemoteAddr = nanos(at), traposID, remoteAddr
	})
	return err
}

// SeeToken implements Store.
func (s *KV) SeeToken(ctx context.Context, selector string, at time.Time, remoteAddr string) error {
	_, err := kvUpdate(ctx, s, "token", kvKey(kvToken, selector), selector, func(r *kvTokenRecord) {
		r.LastUsed, r.RemoteAddr = nanos(at), remoteAddr
	})
	return err
}

// Close implements Store; the NATS connection is the caller's.
func (s *KV) Close() error { return nil }

// RemoveAccount implements Store. A bucket has no transactions: every record is read first,
// so a failure to read leaves everything as it was; then the link codes, enrollment keys,
// credentials and tokens are deleted and the account record last, so a removal cut off
// halfway (the bus gone) leaves the account listed, and removing it again finishes the job.
// The credentials added while it ran are looked for once more after that (sweepCredentials).
// Every read is through the bucket's stream leader (Latest): on a lagging follower an account
// added a moment ago was "not found", and a token or credential added a moment ago was left
// behind, unreported.
func (s *KV) RemoveAccount(ctx context.Context, id string, _ time.Time) (Removed, error) {
	return s.removeAccount(ctx, id, nil)
}

// removeAccount is RemoveAccount calling listed (when not nil) once it has read what it
// deletes, before the first delete.
func (s *KV) removeAccount(ctx context.Context, id string, listed func()) (Removed, error) {
	l := s.latest
	acc, err := l.Account(ctx, id)
	if err != nil {
		return Removed{}, err
	}
	r := Removed{Account: acc, Tokens: []string{}, Credentials: []string{}, EnrollmentKeys: []string{}}
	toks, err := l.Tokens(ctx, id)
	if err != nil {
		return Removed{}, err
	}
	creds, err := l.Credentials(ctx, id)
	if err != nil {
		return Removed{}, err
	}
	keys, err := l.EnrollmentKeys(ctx, id)
	if err != nil {
		return Removed{}, err
	}
	codes, err := kvList[kvLinkCodeRecord](ctx, l, kvLinkCode)
	if err != nil {
		return Removed{}, err
	}
	// The last admin is refused on a count made just before the deletes; the bucket has no
	// transactions, so this is best effort: two admins removed at the same moment on two
	// replicas may both pass it (the operator then adds an admin on the bucket: accounts add
	// NAME --admin --nats URL).
	if acc.Role == RoleAdmin {
		all, err := l.Accounts(ctx)
		if err != nil {
			return Removed{}, err
		}
		if !slices.ContainsFunc(all, func(o Account) bool { return o.Role == RoleAdmin && o.ID != id }) {
			return Removed{}, lastAdmin(id)
		}
	}
	if listed != nil {
		listed()
	}
	var doomed []string
	for _, c := range codes {
		if c.AccountID == id {
			if LinkState(c.State) == LinkApproved {
				r.LinkCodes++
			}
			doomed = append(doomed, kvKey(kvLinkCode, c.ID))
		}
	}
	for _, k := range keys {
		r.EnrollmentKeys = append(r.EnrollmentKeys, k.Selector)
		doomed = append(doomed, kvKey(kvEnrollmentKey, k.Selector))
	}
	for _, c := range creds {
		r.Credentials = append(r.Credentials, c.Selector)
		doomed = append(doomed, kvKey(kvCredential, c.Selector))
	}
	for _, t := range toks {
		r.Tokens = append(r.Tokens, t.Selector)
		doomed = append(doomed, kvKey(kvToken, t.Selector))
	}
	for _, key := range append(doomed, kvKey(kvAccount, id)) {
		if err := s.kv.Delete(ctx, key); err != nil {
			return Removed{}, fmt.Errorf("remove account %q (cut off halfway: the account is still listed; remove it again to finish): %w", id, natsError(err))
		}
	}
	r.Credentials = append(r.Credentials, s.sweepCredentials(ctx, acc, r.Credentials)...)
	return r, nil
}

// sweepCredentials deletes, once acc's record is gone, the credentials of acc (stamped with
// its Created, or with none) that a removal which read the account's records before did not
// list (listed): added meanwhile, an enrollment key linking a computer on another replica.
// Such a credential opens nothing from now on (owner), but its computer may have said hello
// before the account's record went, and stays connected unless the removal reports it: its
// selector is returned, deleted or not, so that its socket is closed. One added after this
// look never had a hello let in. Best effort: a failure here leaves what it could not
// delete, which opens nothing.
func (s *KV) sweepCredentials(ctx context.Context, acc Account, listed []string) []string {
	creds, err := s.latest.Credentials(ctx, acc.ID)
	if err != nil {
		return nil
	}
	var late []string
	for _, c := range creds {
		if slices.Contains(listed, c.Selector) || (!c.AccountCreated.IsZero() && !c.AccountCreated.Equal(acc.Created)) {
			continue // an account made again under the name since has its own
		}
		_ = s.kv.Delete(ctx, kvKey(kvCredential, c.Selector))
		late = append(late, c.Selector)
	}
	return late
}
