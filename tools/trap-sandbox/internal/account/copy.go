package account

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Copying a single gateway's store into the replicas' bucket (trap-sandbox accounts copy,
// docs/scale-out.md, From one gateway to replicas). Every record goes over as it is stored:
// the same selectors, the same SHA-256 hashes (no secret is known here, none is made), the same
// times to the nanosecond, so the tokens the players hold and the credentials their computers
// say in their hello work on the replicas unchanged.
//
// The rules, each for a reason:
//   - The bucket is read first, and the copy refuses before it writes anything when the bucket
//     holds one of the file's names or ids as another record (an account made again on NATS
//     under the same name): written over, that account's tokens and computers would change
//     hands; left, the file's would be refused. Records of the bucket the file does not hold
//     (accounts made on NATS only) are left as they are.
//   - A record the bucket holds already as the same one (the same account, created at the same
//     instant; the same secret, by its hash) is not written again, only brought forward: a
//     revocation the file has and the bucket lacks is carried (never the other way), an
//     enrollment key's uses are the bucket's plus the file's since the last copy (a gateway
//     and the replicas that both spent it linked that many), a last use or hello the later
//     one. So a second
//     run (after a first cut off, or after the gateway ran on meanwhile) finishes or catches up,
//     and undoes nothing done on the replicas.
//   - What the bucket holds already is brought forward before anything it lacks is written:
//     cut off between the two, a copy leaves no secret the file added working on the replicas
//     while one the file revoked still works there.
//   - An account of the file that the bucket held and that was removed there since (accounts
//     remove --nats deletes its records, which leaves a deletion mark on each key) is not
//     written again: a second run would otherwise bring it back whole, its tokens and computers
//     working, undoing the replicas' removal. It is told by the marks on its secrets' keys, as
//     the account's own mark is also left by the removal of another account of its name (the
//     conflict's fix below), whose secrets are others.
//   - A bucket has no transactions, so each account is written with its secrets first and its
//     own record last: a secret whose account record is missing is nobody's (Accounts.owner),
//     so a copy cut off halfway (NATS gone) leaves each account either whole or not usable at
//     all, and running it again writes the rest.

// CopyCount is what a copy did with one kind of record: how many it wrote (Copied), found in
// the bucket as the same records (Present), and of those brought forward (Updated: a
// revocation, a key's uses, a later last use).
type CopyCount struct {
	Copied, Present, Updated int
}

// CopyReport is what CopyToKV did.
type CopyReport struct {
	Accounts, Tokens, Credentials, EnrollmentKeys CopyCount
	// OnlyInBucket counts the bucket's accounts the file does not hold: left as they are.
	OnlyInBucket int
	// RemovedInBucket are the file's accounts that an earlier copy put in the bucket and that
	// were removed there since (accounts remove --nats): not copied again.
	RemovedInBucket []string
	// Revoked are the credentials the bucket held unrevoked and the copy revoked (the file
	// had them revoked): a replica holding one's socket closes it when told (trapos.revoked).
	Revoked []string
}

// CopyConflictError is CopyToKV's refusal, before it wrote anything: the bucket holds one of
// the file's names or ids as another record.
type CopyConflictError struct {
	// Conflicts says each one, in words.
	Conflicts []string
}

func (e *CopyConflictError) Error() string {
	return "nothing was copied: the bucket " + KVBucket + " holds " + strings.Join(e.Conflicts, "; ")
}

// CopyCutError is CopyToKV's error when a write failed midway (NATS gone): Whole of Of
// accounts were copied whole; of the others, what was written waits for its account's record.
type CopyCutError struct {
	Whole, Of int
	Err       error
}

func (e *CopyCutError) Error() string {
	return fmt.Sprintf("the copy was cut off after %d of %d accounts (each of those whole, with its tokens, credentials and enrollment keys; "+
		"the others are not usable on the replicas yet: an account's own record is written last): %v", e.Whole, e.Of, e.Err)
}

func (e *CopyCutError) Unwrap() error { return e.Err }

// CopyToKV copies snap (SQLite.Snapshot) into the bucket by the rules above and says what it
// did. It refuses with a *CopyConflictError before writing anything, and a write that fails
// ends it with a *CopyCutError; either way, running it again is safe.
func CopyToKV(ctx context.Context, snap Snapshot, to *KV) (CopyReport, error) {
	return copyToKV(ctx, snap, to, nil)
}

// copyToKV is CopyToKV calling beforeWrite (when not nil) before each write to the bucket,
// for tests that cut NATS off at a given write.
func copyToKV(ctx context.Context, snap Snapshot, to *KV, beforeWrite func()) (CopyReport, error) {
	snap = stamped(snap)
	plan, err := planCopy(ctx, snap, to)
	if err != nil {
		return CopyReport{}, err
	}
	if len(plan.conflicts) > 0 {
		return CopyReport{}, &CopyConflictError{Conflicts: plan.conflicts}
	}
	report := plan.report
	whole := 0
	write := func(f func() error) error {
		if beforeWrite != nil {
			beforeWrite()
		}
		if err := f(); err != nil {
			return &CopyCutError{Whole: whole, Of: len(snap.Accounts) - len(report.RemovedInBucket), Err: err}
		}
		return nil
	}
	// Two passes: what the bucket holds already is brought forward first (a revocation), what
	// it lacks written after, so a copy cut off never leaves a secret the file added working on
	// the replicas beside one the file revoked that still works there.
	for _, present := range []bool{true, false} {
		for _, a := range snap.Accounts {
			if slices.Contains(report.RemovedInBucket, a.ID) {
				continue
			}
			for _, t := range snap.Tokens {
				if bucket := plan.tokens[t.Selector]; t.AccountID == a.ID && (bucket != nil) == present {
					if err := copyOne(ctx, &report.Tokens, bucket, t, write, to.createTokenRecord, to.bringTokenForward); err != nil {
						return report, err
					}
				}
			}
			for _, c := range snap.Credentials {
				bucket := plan.credentials[c.Selector]
				if c.AccountID != a.ID || (bucket != nil) != present {
					continue
				}
				if err := copyOne(ctx, &report.Credentials, bucket, c, write, to.createCredentialRecord, to.bringCredentialForward); err != nil {
					return report, err
				}
				if bucket != nil && bucket.RevokedAt.IsZero() && !c.RevokedAt.IsZero() {
					report.Revoked = append(report.Revoked, c.Selector)
				}
			}
			for _, k := range snap.EnrollmentKeys {
				if bucket := plan.keys[k.Selector]; k.AccountID == a.ID && (bucket != nil) == present {
					if err := copyOne(ctx, &report.EnrollmentKeys, bucket, k, write, to.createCopiedEnrollmentKeyRecord, to.bringEnrollmentKeyForward); err != nil {
						return report, err
					}
				}
			}
			if present {
				continue
			}
			if plan.accounts[a.ID] {
				report.Accounts.Present++
			} else {
				if err := write(func() error { return to.CreateAccount(ctx, a) }); err != nil {
					return report, err
				}
				report.Accounts.Copied++
			}
			whole++
		}
	}
	return report, nil
}

// copyOne writes the file's record v when the bucket has none (bucket nil), or brings the
// bucket's forward to it when it lags behind, counting either in n.
func copyOne[T ownedSecret[T]](ctx context.Context, n *CopyCount, bucket *T, v T, write func(func() error) error,
	create func(context.Context, T) error, forward func(context.Context, T) (bool, error)) error {
	if bucket == nil {
		if err := write(func() error { return create(ctx, v) }); err != nil {
			return err
		}
		n.Copied++
		return nil
	}
	n.Present++
	if !behind(*bucket, v) {
		return nil
	}
	var changed bool
	if err := write(func() (err error) { changed, err = forward(ctx, v); return err }); err != nil {
		return err
	}
	if changed {
		n.Updated++
	}
	return nil
}

// copyPlan is what the bucket holds of the file's records, read before anything is written.
type copyPlan struct {
	accounts    map[string]bool // the file's accounts that the bucket holds as the same
	tokens      map[string]*Token
	credentials map[string]*Credential
	keys        map[string]*EnrollmentKey
	conflicts   []string
	report      CopyReport
}

// planCopy reads from the bucket each record of snap and the bucket's accounts, and finds the
// conflicts.
func planCopy(ctx context.Context, snap Snapshot, to *KV) (copyPlan, error) {
	p := copyPlan{accounts: map[string]bool{}, tokens: map[string]*Token{}, credentials: map[string]*Credential{}, keys: map[string]*EnrollmentKey{}}
	inBucket, err := to.Accounts(ctx)
	if err != nil {
		return p, err
	}
	for _, b := range inBucket {
		i := slices.IndexFunc(snap.Accounts, func(a Account) bool { return a.ID == b.ID })
		switch {
		case i < 0:
			p.report.OnlyInBucket++
		case !b.Created.Equal(snap.Accounts[i].Created) || b.Role != snap.Accounts[i].Role:
			p.conflicts = append(p.conflicts, fmt.Sprintf("account %q as another account (%s, created %s by %s; the file's: %s, created %s): "+
				"to copy the file's, remove it from the bucket first, with what was made for it there (trap-sandbox accounts remove %s --nats …)", b.ID, b.Role, copyStamp(b.Created),
				orOperator(b.CreatedBy), snap.Accounts[i].Role, copyStamp(snap.Accounts[i].Created), b.ID))
		default:
			p.accounts[b.ID] = true
		}
	}
	if err := readEach(ctx, snap.Tokens, to.Token, p.tokens, &p.conflicts, "API token"); err != nil {
		return p, err
	}
	if err := readEach(ctx, snap.Credentials, to.Credential, p.credentials, &p.conflicts, "computer credential"); err != nil {
		return p, err
	}
	if err := readEach(ctx, snap.EnrollmentKeys, to.enrollmentKeyAsCopied, p.keys, &p.conflicts, "enrollment key"); err != nil {
		return p, err
	}
	deleted, err := to.deletedKeys(ctx)
	if err != nil {
		return p, err
	}
	removed := map[string]bool{}
	for _, t := range snap.Tokens {
		removed[t.AccountID] = removed[t.AccountID] || deleted[kvKey(kvToken, t.Selector)]
	}
	for _, c := range snap.Credentials {
		removed[c.AccountID] = removed[c.AccountID] || deleted[kvKey(kvCredential, c.Selector)]
	}
	for _, k := range snap.EnrollmentKeys {
		removed[k.AccountID] = removed[k.AccountID] || deleted[kvKey(kvEnrollmentKey, k.Selector)]
	}
	for _, a := range snap.Accounts {
		if removed[a.ID] {
			p.report.RemovedInBucket = append(p.report.RemovedInBucket, a.ID)
		}
	}
	return p, nil
}

// deletedKeys are the bucket's keys whose last record is a deletion mark (RemoveAccount's),
// which reads and listings take for absent.
func (s *KV) deletedKeys(ctx context.Context) (map[string]bool, error) {
	w, err := s.kv.WatchAll(ctx, jetstream.MetaOnly())
	if err != nil {
		return nil, fmt.Errorf("list the bucket's removed records: %w", natsError(err))
	}
	defer w.Stop()
	deleted := map[string]bool{}
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("list the bucket's removed records: %w", natsError(nats.ErrConnectionClosed))
			}
			if e == nil { // every record there now has come
				return deleted, nil
			}
			if e.Operation() != jetstream.KeyValuePut {
				deleted[e.Key()] = true
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("list the bucket's removed records: %w", ctx.Err())
		}
	}
}

// readEach reads from the bucket each of the file's secrets (by its selector) into found, and
// adds to conflicts each that the bucket holds as another secret or another account's.
func readEach[T ownedSecret[T]](ctx context.Context, file []T, read func(context.Context, string) (T, error), found map[string]*T,
	conflicts *[]string, what string) error {
	for _, v := range file {
		selector, owner, _ := v.owned()
		b, err := read(ctx, selector)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if _, bOwner, _ := b.owned(); bOwner != owner || !slices.Equal(hashOf(b), hashOf(v)) {
			*conflicts = append(*conflicts, fmt.Sprintf("%s %q as another secret (of account %q; the file's is %q's)", what, selector, bOwner, owner))
			continue
		}
		found[selector] = &b
	}
	return nil
}

// hashOf is a secret's stored SHA-256.
func hashOf[T ownedSecret[T]](v T) []byte {
	switch v := any(v).(type) {
	case Token:
		return v.Hash
	case Credential:
		return v.Hash
	case EnrollmentKey:
		return v.Hash
	}
	return nil
}

// stamped is snap with each secret of an older trap-sandbox, which carries no stamp of its
// account (AccountCreated zero), stamped with its account's Created: in the file it needs only
// its account to exist, and so would pass for an account made again under the name on NATS.
func stamped(snap Snapshot) Snapshot {
	created := map[string]time.Time{}
	for _, a := range snap.Accounts {
		created[a.ID] = a.Created
	}
	out := Snapshot{Accounts: snap.Accounts}
	for _, t := range snap.Tokens {
		if t.AccountCreated.IsZero() {
			t.AccountCreated = created[t.AccountID]
		}
		out.Tokens = append(out.Tokens, t)
	}
	for _, c := range snap.Credentials {
		if c.AccountCreated.IsZero() {
			c.AccountCreated = created[c.AccountID]
		}
		out.Credentials = append(out.Credentials, c)
	}
	for _, k := range snap.EnrollmentKeys {
		if k.AccountCreated.IsZero() {
			k.AccountCreated = created[k.AccountID]
		}
		out.EnrollmentKeys = append(out.EnrollmentKeys, k)
	}
	return out
}

// behind says whether the bucket's record b lacks what the file's f has: a revocation, a
// key's uses, a later last use or hello.
func behind[T ownedSecret[T]](b, f T) bool {
	switch b := any(b).(type) {
	case Token:
		f := any(f).(Token)
		return (b.RevokedAt.IsZero() && !f.RevokedAt.IsZero()) || f.LastUsed.After(b.LastUsed)
	case Credential:
		f := any(f).(Credential)
		return (b.RevokedAt.IsZero() && !f.RevokedAt.IsZero()) || f.LastSeen.After(b.LastSeen)
	case EnrollmentKey:
		f := any(f).(EnrollmentKey)
		return (b.RevokedAt.IsZero() && !f.RevokedAt.IsZero()) || f.Uses > b.Uses || f.LastUsed.After(b.LastUsed)
	}
	return false
}

// bringTokenForward carries f's revocation and later last use into the bucket's token (a
// compare-and-swap: a replica's write meanwhile is kept); it says whether it changed it.
func (s *KV) bringTokenForward(ctx context.Context, f Token) (bool, error) {
	changed := false
	_, err := kvUpdate(ctx, s, "token", kvKey(kvToken, f.Selector), f.Selector, func(r *kvTokenRecord) {
		changed = false
		if r.RevokedAt == 0 && !f.RevokedAt.IsZero() {
			r.RevokedAt, changed = nanos(f.RevokedAt), true
		}
		if nanos(f.LastUsed) > r.LastUsed {
			r.LastUsed, r.RemoteAddr, changed = nanos(f.LastUsed), f.RemoteAddr, true
		}
	})
	return changed, err
}

// bringCredentialForward is bringTokenForward for a computer credential (its last hello).
func (s *KV) bringCredentialForward(ctx context.Context, f Credential) (bool, error) {
	changed := false
	_, err := kvUpdate(ctx, s, "credential", kvKey(kvCredential, f.Selector), f.Selector, func(r *kvCredentialRecord) {
		changed = false
		if r.RevokedAt == 0 && !f.RevokedAt.IsZero() {
			r.RevokedAt, changed = nanos(f.RevokedAt), true
		}
		if nanos(f.LastSeen) > r.LastSeen {
			r.LastSeen, r.LastTraposID, r.RemoteAddr, changed = nanos(f.LastSeen), f.LastTraposID, f.RemoteAddr, true
		}
	})
	return changed, err
}

// bringEnrollmentKeyForward is bringTokenForward for an enrollment key: its revocation, its
// uses (copyUses), its later last use.
func (s *KV) bringEnrollmentKeyForward(ctx context.Context, f EnrollmentKey) (bool, error) {
	changed := false
	_, err := kvUpdate(ctx, s, "enrollment key", kvKey(kvEnrollmentKey, f.Selector), f.Selector, func(r *kvEnrollmentKeyRecord) {
		changed = false
		if r.RevokedAt == 0 && !f.RevokedAt.IsZero() {
			r.RevokedAt, changed = nanos(f.RevokedAt), true
		}
		if copyUses(r, f.Uses) {
			changed = true
		}
		if nanos(f.LastUsed) > r.LastUsed {
			r.LastUsed, changed = nanos(f.LastUsed), true
		}
	})
	return changed, err
}

// copyStamp is a time in a conflict's words.
func copyStamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000000000 UTC") }

// orOperator is who created a record, "operator" for the store itself.
func orOperator(by string) string {
	if by == "" {
		return Operator
	}
	return by
}

// copyUses adds to the bucket's key r the computers the file's key linked since the last copy
// (it has fileUses now) and says whether that changed r. Each store counts its own links
// only: a key spent on the gateway after a copy, and on the replicas too, linked the bucket's
// count plus the file's since, which may be more than its limit (each store kept it alone);
// with that sum the replicas' count is every computer it linked, and it links no more. A key
// copied by a trap-sandbox that did not record CopiedUses takes the larger count, as that one
// did: whether the bucket's count holds the file's is not known.
func copyUses(r *kvEnrollmentKeyRecord, fileUses int) bool {
	copied := r.Uses
	if r.CopiedUses != nil {
		copied = *r.CopiedUses
	}
	changed := fileUses > copied
	if changed {
		r.Uses += fileUses - copied
	}
	if r.CopiedUses == nil || *r.CopiedUses != fileUses {
		r.CopiedUses = &fileUses
	}
	return changed
}
