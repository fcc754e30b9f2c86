package account

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

const (
	kvLinkCode      = "link."
	kvEnrollmentKey = "enroll."
)

// kvLinkCodeRecord and kvEnrollmentKeyRecord are the stored JSON (times as Unix nanoseconds,
// 0 for none).
type kvLinkCodeRecord struct {
	ID         string `json:"id"`
	TraposID   string `json:"traposId"`
	RemoteAddr string `json:"remoteAddr"`
	Created    int64  `json:"created"`
	ExpiresAt  int64  `json:"expiresAt"`
	State      string `json:"state"`
	AccountID  string `json:"accountId"`
	ApprovedBy string `json:"approvedBy"`
	ApprovedAt int64  `json:"approvedAt"`
	UsedAt     int64  `json:"usedAt"`
	// AccountCreated is LinkCode.AccountCreated (absent in records written before it: zero).
	AccountCreated int64 `json:"accountCreated,omitempty"`
	// ApprovedToken is LinkCode.ApprovedToken (absent in records written before it, and by a
	// replica of an older trap-sandbox, which drops it from a code it updates: "").
	ApprovedToken string `json:"approvedToken,omitempty"`
}

type kvEnrollmentKeyRecord struct {
	Selector  string `json:"selector"`
	Hash      []byte `json:"hash"`
	AccountID string `json:"accountId"`
	CreatedBy string `json:"createdBy"`
	Created   int64  `json:"created"`
	ExpiresAt int64  `json:"expiresAt"`
	RevokedAt int64  `json:"revokedAt"`
	MaxUses   int    `json:"maxUses"`
	Uses      int    `json:"uses"`
	LastUsed  int64  `json:"lastUsed"`
	// AccountCreated is EnrollmentKey.AccountCreated (absent in records written before it: zero).
	AccountCreated int64 `json:"accountCreated,omitempty"`
	// CopiedUses, on a key that accounts copy brought from a gateway's file, is the file's
	// Uses at the last copy that wrote or brought it forward: a later copy adds the file's
	// uses since then to Uses, which holds those of the replicas too (copyUses). Absent on a
	// key made on NATS, and on one copied by a trap-sandbox before it.
	CopiedUses *int `json:"copiedUses,omitempty"`
}

func linkCodeRecord(c LinkCode) kvLinkCodeRecord {
	return kvLinkCodeRecord{ID: c.ID, TraposID: c.TraposID, RemoteAddr: c.RemoteAddr, Created: nanos(c.Created), ExpiresAt: nanos(c.ExpiresAt),
		State: string(c.State), AccountID: c.AccountID, ApprovedBy: c.ApprovedBy, ApprovedAt: nanos(c.ApprovedAt), UsedAt: nanos(c.UsedAt),
		AccountCreated: nanos(c.AccountCreated), ApprovedToken: c.ApprovedToken}
}

func (r kvLinkCodeRecord) linkCode() LinkCode {
	return LinkCode{ID: r.ID, TraposID: r.TraposID, RemoteAddr: r.RemoteAddr, Created: fromNanos(r.Created), ExpiresAt: fromNanos(r.ExpiresAt),
		State: LinkState(r.State), AccountID: r.AccountID, ApprovedBy: r.ApprovedBy, ApprovedAt: fromNanos(r.ApprovedAt), UsedAt: fromNanos(r.UsedAt),
		AccountCreated: fromNanos(r.AccountCreated), ApprovedToken: r.ApprovedToken}
}

func enrollmentKeyRecord(k EnrollmentKey) kvEnrollmentKeyRecord {
	return kvEnrollmentKeyRecord{Selector: k.Selector, Hash: k.Hash, AccountID: k.AccountID, CreatedBy: k.CreatedBy, Created: nanos(k.Created),
		ExpiresAt: nanos(k.ExpiresAt), RevokedAt: nanos(k.RevokedAt), MaxUses: k.MaxUses, Uses: k.Uses, LastUsed: nanos(k.LastUsed),
		AccountCreated: nanos(k.AccountCreated)}
}

func (r kvEnrollmentKeyRecord) enrollmentKey() EnrollmentKey {
	return EnrollmentKey{Selector: r.Selector, Hash: r.Hash, AccountID: r.AccountID, CreatedBy: r.CreatedBy, Created: fromNanos(r.Created),
		ExpiresAt: fromNanos(r.ExpiresAt), RevokedAt: fromNanos(r.RevokedAt), MaxUses: r.MaxUses, Uses: r.Uses, LastUsed: fromNanos(r.LastUsed),
		AccountCreated: fromNanos(r.AccountCreated)}
}

// CreateLinkCode implements Store.
func (s *KV) CreateLinkCode(ctx context.Context, c LinkCode) error {
	return s.create(ctx, "link code", kvKey(kvLinkCode, c.ID), c.ID, linkCodeRecord(c))
}

// LinkCode implements Store.
func (s *KV) LinkCode(ctx context.Context, id string) (LinkCode, error) {
	var r kvLinkCodeRecord
	if _, err := s.get(ctx, "link code", kvKey(kvLinkCode, id), id, &r); err != nil {
		return LinkCode{}, err
	}
	return r.linkCode(), nil
}

// UpdateLinkCode implements Store.
func (s *KV) UpdateLinkCode(ctx context.Context, id string, change func(*LinkCode) error) (LinkCode, error) {
	r, err := kvChange(ctx, s, "link code", kvKey(kvLinkCode, id), id, func(r *kvLinkCodeRecord) error {
		c := r.linkCode()
		if err := change(&c); err != nil {
			return err
		}
		*r = linkCodeRecord(c)
		return nil
	})
	if err != nil {
		return LinkCode{}, err
	}
	return r.linkCode(), nil
}

// DeleteLinkCodes implements Store. It purges each code's key from the bucket's stream rather
// than deleting it: a KeyValue.Delete leaves a marker under the key, which NATS keeps for good,
// and every sandbox link makes a code of its own, so the bucket held one marker more for each
// code ever made, read past by every listing of it (accounts list, the account gauges of each
// /metrics scrape). Nothing reads a pruned code's marker (accounts copy reads the markers of
// removed accounts, tokens and credentials, which are deleted); a late poll's change of a pruned
// code finds it gone, as it found it deleted.
func (s *KV) DeleteLinkCodes(ctx context.Context, before time.Time) (int, error) {
	recs, err := kvList[kvLinkCodeRecord](ctx, s, kvLinkCode)
	if err != nil {
		return 0, err
	}
	var stream jetstream.Stream
	n := 0
	for _, r := range recs {
		if !fromNanos(r.ExpiresAt).Before(before) {
			continue
		}
		if stream == nil {
			if stream, err = s.js.Stream(ctx, "KV_"+KVBucket); err != nil {
				return n, fmt.Errorf("delete expired link code: %w", natsError(err))
			}
		}
		if err := stream.Purge(ctx, jetstream.WithPurgeSubject("$KV."+KVBucket+"."+kvKey(kvLinkCode, r.ID))); err != nil {
			return n, fmt.Errorf("delete expired link code: %w", natsError(err))
		}
		n++
	}
	return n, nil
}

// CreateEnrollmentKey implements Store.
func (s *KV) CreateEnrollmentKey(ctx context.Context, k EnrollmentKey) error {
	if _, err := s.accountToWrite(ctx, k.AccountID); err != nil {
		return err
	}
	return s.createEnrollmentKeyRecord(ctx, k)
}

// createEnrollmentKeyRecord stores k, its account not checked.
func (s *KV) createEnrollmentKeyRecord(ctx context.Context, k EnrollmentKey) error {
	return s.create(ctx, "enrollment key", kvKey(kvEnrollmentKey, k.Selector), k.Selector, enrollmentKeyRecord(k))
}

// createCopiedEnrollmentKeyRecord stores k, the file's key, as accounts copy brought it
// (CopiedUses), its account not checked.
func (s *KV) createCopiedEnrollmentKeyRecord(ctx context.Context, k EnrollmentKey) error {
	r := enrollmentKeyRecord(k)
	r.CopiedUses = &k.Uses
	return s.create(ctx, "enrollment key", kvKey(kvEnrollmentKey, k.Selector), k.Selector, r)
}

// enrollmentKeyAsCopied is the key of selector as accounts copy compares it with the file's:
// its Uses are the file's that the copies brought (CopiedUses), so that the file's key is
// behind only when it linked computers since; a key copied before CopiedUses was recorded has
// its own Uses, as that copy compared them.
func (s *KV) enrollmentKeyAsCopied(ctx context.Context, selector string) (EnrollmentKey, error) {
	var r kvEnrollmentKeyRecord
	if _, err := s.get(ctx, "enrollment key", kvKey(kvEnrollmentKey, selector), selector, &r); err != nil {
		return EnrollmentKey{}, err
	}
	k := r.enrollmentKey()
	if r.CopiedUses != nil {
		k.Uses = *r.CopiedUses
	}
	return k, nil
}

// EnrollmentKey implements Store.
func (s *KV) EnrollmentKey(ctx context.Context, selector string) (EnrollmentKey, error) {
	var r kvEnrollmentKeyRecord
	if _, err := s.get(ctx, "enrollment key", kvKey(kvEnrollmentKey, selector), selector, &r); err != nil {
		return EnrollmentKey{}, err
	}
	return r.enrollmentKey(), nil
}

// EnrollmentKeys implements Store.
func (s *KV) EnrollmentKeys(ctx context.Context, accountID string) ([]EnrollmentKey, error) {
	recs, err := kvList[kvEnrollmentKeyRecord](ctx, s, kvEnrollmentKey)
	if err != nil {
		return nil, err
	}
	all := make([]EnrollmentKey, 0, len(recs))
	for _, r := range recs {
		all = append(all, r.enrollmentKey())
	}
	return listOwned(all, accountID), nil
}

// UpdateEnrollmentKey implements Store.
func (s *KV) UpdateEnrollmentKey(ctx context.Context, selector string, change func(*EnrollmentKey) error) (EnrollmentKey, error) {
	r, err := kvChange(ctx, s, "enrollment key", kvKey(kvEnrollmentKey, selector), selector, func(r *kvEnrollmentKeyRecord) error {
		k := r.enrollmentKey()
		if err := change(&k); err != nil {
			return err
		}
		copied := r.CopiedUses
		*r = enrollmentKeyRecord(k)
		r.CopiedUses = copied
		return nil
	})
	if err != nil {
		return EnrollmentKey{}, err
	}
	return r.enrollmentKey(), nil
}
