package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Linking gives a computer a credential of its own without anyone typing one (docs/accounts.md,
// "Linking a computer"). Two ways, after RFC 8628's device flow and Tailscale's auth keys:
//   - a link code: the computer asks for a short code (BeginLink), the account holder approves
//     it on the host (ApproveLink), and the computer's player accepts or declines the account
//     that approved it (AcceptLink) — that last step is what keeps a bystander who read the
//     code off the screen (RFC 8628 §5.5, session spying) from taking the computer;
//   - an enrollment key (tsk_…): made by an account holder for many computers, typed on each;
//     it links at once (LinkWithKey).
//
// Either way the credential is bound to the computer's id (the number of its traposId): a hello
// with it from another computer id is refused (ErrWrongComputer).

// LinkCodeTTL is a link code's default lifetime (RFC 8628 and the reference: at most 10
// minutes).
const LinkCodeTTL = 10 * time.Minute

// linkAlphabet is RFC 8628 §6.1's base-20 alphabet: no vowels (no words), no digits and
// letters that look alike. 8 characters are 20^8 ≈ 2.6·10^10 codes (34 bits).
const linkAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

// linkCodeLen is a code's length without its dash.
const linkCodeLen = 8

// LinkState is where a link code is.
type LinkState string

// The stored states of a link code, and LinkExpired, which is computed: a code past its
// ExpiresAt that was neither accepted nor declined.
const (
	LinkPending  LinkState = "pending"  // shown on the computer, waiting for the account holder
	LinkApproved LinkState = "approved" // approved into AccountID, waiting for the computer's player
	LinkAccepted LinkState = "accepted" // the player accepted: the credential was issued (used up)
	LinkDeclined LinkState = "declined" // the player declined (used up)
	LinkExpired  LinkState = "expired"  // never stored: past ExpiresAt before it was used
)

// LinkCode is a link code as stored: never the code, only its SHA-256 (ID).
type LinkCode struct {
	// ID is the hex SHA-256 of the code without its dash, in upper case.
	ID string
	// TraposID and RemoteAddr are the asking computer's; Created and ExpiresAt its times.
	TraposID   string
	RemoteAddr string
	Created    time.Time
	ExpiresAt  time.Time
	State      LinkState
	// AccountID, ApprovedBy and ApprovedAt are set by the approval; UsedAt by the accept or
	// decline.
	AccountID  string
	ApprovedBy string
	ApprovedAt time.Time
	UsedAt     time.Time
	// AccountCreated is set by the approval: AccountID's Created then, as a Token's.
	AccountCreated time.Time
	// ApprovedToken is set by the approval: the id (selector) of the API token it was made
	// with, whose revocation before the player's answer takes the approval back (AcceptLink);
	// empty for one made without an account's token (the gateway's own, SANDBOX_API_TOKEN or
	// a loopback call without one), which nobody can revoke, and for one of an older
	// trap-sandbox.
	ApprovedToken string
}

// EnrollmentKey is an enrollment key as stored: never its secret, only the SHA-256.
type EnrollmentKey struct {
	Selector  string
	Hash      []byte
	AccountID string
	// CreatedBy is who made it (an account id, or the operator), for audit.
	CreatedBy string
	Created   time.Time
	// ExpiresAt is when it stops linking (zero: never); RevokedAt when it was revoked.
	ExpiresAt time.Time
	RevokedAt time.Time
	// MaxUses is how many computers it links (0: any number until it expires); Uses how many
	// it did, LastUsed when it last did.
	MaxUses  int
	Uses     int
	LastUsed time.Time
	// AccountCreated is its account's Created when it was made, as a Token's.
	AccountCreated time.Time
}

// LinkStore is the part of a Store that keeps link codes and enrollment keys. Update calls
// are atomic read-modify-writes: change sees the current record and either edits it or
// returns an error, which aborts the update and is returned; so of two concurrent uses of one
// code exactly one sees it unused. change may run more than once (a store retries after a
// concurrent writer), so it only looks at and edits its argument.
type LinkStore interface {
	// CreateLinkCode adds c; ErrExists if its ID is taken.
	CreateLinkCode(ctx context.Context, c LinkCode) error
	// LinkCode returns the code of id, or ErrNotFound.
	LinkCode(ctx context.Context, id string) (LinkCode, error)
	// UpdateLinkCode changes the code of id atomically; ErrNotFound if there is none.
	UpdateLinkCode(ctx context.Context, id string, change func(*LinkCode) error) (LinkCode, error)
	// DeleteLinkCodes deletes the codes that expired before before and returns how many.
	DeleteLinkCodes(ctx context.Context, before time.Time) (int, error)

	// CreateEnrollmentKey adds k; ErrExists if its selector is taken, ErrNotFound if its
	// account is missing.
	CreateEnrollmentKey(ctx context.Context, k EnrollmentKey) error
	// EnrollmentKey returns the key of selector, or ErrNotFound.
	EnrollmentKey(ctx context.Context, selector string) (EnrollmentKey, error)
	// EnrollmentKeys returns the account's keys (revoked ones too), oldest first; "" is every
	// account's.
	EnrollmentKeys(ctx context.Context, accountID string) ([]EnrollmentKey, error)
	// UpdateEnrollmentKey changes the key of selector atomically; ErrNotFound if there is none.
	UpdateEnrollmentKey(ctx context.Context, selector string, change func(*EnrollmentKey) error) (EnrollmentKey, error)

	// CreateBoundCredential adds c, a credential bound to computer id c.ComputerID, unless its
	// account holds a credential bound to that id that is not revoked: then a *HeldIDError
	// naming that one, and nothing is added. The look and the add are one step, so of two
	// calls at once for one account and computer id (two link sessions claiming computer 7
	// with one key, on one gateway or two replicas) one adds its credential and the other is
	// refused, where two CreateCredential calls after two looks would add both. Otherwise as
	// CreateCredential.
	CreateBoundCredential(ctx context.Context, c Credential) error

	// CreateApprovedCredential adds c, the credential that a link code's approval issues to
	// its computer (as CreateBoundCredential when exclusive, else as CreateCredential), only
	// while the approval stands (approvalStanding): c's account is the one c is stamped with
	// (c.AccountCreated), else ErrNotFound; the API token approvedToken (its id; "" for
	// none) is there and not revoked, else ErrApprovalRevoked. Nothing is kept when it
	// refuses. A revocation or removal either comes before the look, and is seen, or after
	// the credential exists, where a revoked token leaves it as it leaves whatever else the
	// token made and a removal takes it with the account: the player's yes and the
	// revocation are ordered, not left to the moment between a look and an add (see each
	// store for how).
	CreateApprovedCredential(ctx context.Context, c Credential, approvedToken string, exclusive bool) error
}

// approvalStanding says why the credential c of a link code's approval may not be issued
// (CreateApprovedCredential), or nil: acc is its account as the store holds it now (nil:
// none), tok the API token approvedToken ("": the approval was made with none; nil: gone).
// An account made again under the name is another one, as for owner: a zero stamp (a code
// approved by an older trap-sandbox) needs only an account of the name.
func approvalStanding(c Credential, acc *Account, approvedToken string, tok *Token) error {
	if acc == nil || (!c.AccountCreated.IsZero() && !c.AccountCreated.Equal(acc.Created)) {
		return notFound("account", c.AccountID)
	}
	if approvedToken != "" && (tok == nil || !tok.RevokedAt.IsZero()) {
		return ErrApprovalRevoked
	}
	return nil
}

// HeldIDError refuses a credential bound to a computer id whose account holds a credential
// bound to that id already, not revoked (CreateBoundCredential): the new one would take that
// computer's place.
type HeldIDError struct {
	Held Credential
}

func (e *HeldIDError) Error() string {
	return fmt.Sprintf("account %s holds a credential for computer %s already (%s)", e.Held.AccountID, e.Held.ComputerID, e.Held.Selector)
}

// heldBound returns the first of creds bound to computerID and not revoked, or nil.
func heldBound(creds []Credential, computerID string) *Credential {
	for _, c := range creds {
		if c.ComputerID == computerID && c.RevokedAt.IsZero() {
			return &c
		}
	}
	return nil
}

// Errors of linking. Each says why a code or a key was refused, never whether a code exists
// for another computer.
var (
	ErrCodeUnknown  = errors.New("unknown link code")
	ErrCodeUsed     = errors.New("the link code was already used")
	ErrCodeDeclined = errors.New("the link code was declined on the computer")
	// ErrCodeApproved is ErrCodeUsed for a code approved already whose computer's player has
	// not answered yet: the second approver (alice, whose code bob approved first) is told so.
	ErrCodeApproved    = fmt.Errorf("%w: approved already, waiting for its player", ErrCodeUsed)
	ErrCodeNotApproved = errors.New("the link code is not approved yet")
	// ErrApprovalRevoked refuses the player's yes to a code whose approving API token was
	// revoked (or its account removed) since the approval: a leaked token's approvals die
	// with it.
	ErrApprovalRevoked = errors.New("the API token that approved the link code was revoked since it approved it")
	ErrUsedUp          = errors.New("used up")
)

// WrongComputerError refuses a credential bound to another computer id than the hello's.
type WrongComputerError struct {
	// ComputerID is the computer the credential belongs to.
	ComputerID string
}

func (e *WrongComputerError) Error() string {
	return fmt.Sprintf("the credential belongs to computer %s", e.ComputerID)
}

// ComputerID is the computer id of a traposId: the number before its colon ("7" of
// "7:kitchen"); a label change keeps it.
func ComputerID(traposID string) string {
	id, _, _ := strings.Cut(traposID, ":")
	return id
}

// NormalizeCode returns a typed code in its canonical form (upper case, no dash or spaces),
// or why it is not a link code.
func NormalizeCode(typed string) (string, error) {
	c := strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(typed))
	if len(c) != linkCodeLen || strings.Trim(c, linkAlphabet) != "" {
		return "", fmt.Errorf("%q is not a link code (8 letters of %s, shown as XXXX-XXXX)", typed, linkAlphabet)
	}
	return c, nil
}

// FormatCode shows a canonical code as XXXX-XXXX.
func FormatCode(code string) string {
	if len(code) != linkCodeLen {
		return code
	}
	return code[:4] + "-" + code[4:]
}

// LinkCodeID is the stored ID of a typed code (NormalizeCode's reading of it), or why it is
// not a link code (an ErrCodeUnknown).
func LinkCodeID(typed string) (string, error) {
	canon, err := NormalizeCode(typed)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrCodeUnknown, err)
	}
	return codeID(canon), nil
}

// codeID is the stored ID of a canonical code.
func codeID(code string) string {
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}

// newLinkCode returns a random canonical code from crypto/rand, each letter uniform (bytes
// past the largest multiple of 20 are drawn again).
func newLinkCode() string {
	out := make([]byte, 0, linkCodeLen)
	buf := make([]byte, 16)
	for len(out) < linkCodeLen {
		rand.Read(buf) // crypto/rand.Read never fails (Go 1.24+)
		for _, b := range buf {
			if b < 240 && len(out) < linkCodeLen {
				out = append(out, linkAlphabet[b%20])
			}
		}
	}
	return string(out)
}

// Expired reports whether c is past its lifetime at now without having been used.
func (c LinkCode) Expired(now time.Time) bool {
	return (c.State == LinkPending || c.State == LinkApproved) && !now.Before(c.ExpiresAt)
}

// StateAt is c's state as the computer sees it at now: LinkExpired for a code past its time.
func (c LinkCode) StateAt(now time.Time) LinkState {
	if c.Expired(now) {
		return LinkExpired
	}
	return c.State
}

// BeginLink issues a link code for the computer traposID at remoteAddr, living ttl (0:
// LinkCodeTTL); it returns the code (canonical, shown once: only its hash is kept) and the
// stored record.
func (a *Accounts) BeginLink(ctx context.Context, traposID, remoteAddr string, ttl time.Duration) (string, LinkCode, error) {
	if ttl <= 0 {
		ttl = LinkCodeTTL
	}
	now := a.clock.Now()
	for range 4 { // a collision among 2.6·10^10 codes is rare; another draw settles it
		code := newLinkCode()
		c := LinkCode{ID: codeID(code), TraposID: traposID, RemoteAddr: remoteAddr, Created: now,
			ExpiresAt: now.Add(ttl), State: LinkPending}
		err := a.store.CreateLinkCode(ctx, c)
		if errors.Is(err, ErrExists) {
			continue
		}
		if err != nil {
			return "", LinkCode{}, err
		}
		return code, c, nil
	}
	return "", LinkCode{}, errors.New("no free link code after 4 draws; try again")
}

// LinkStatus returns the code's record for the computer traposID (any computer when
// traposID is ""): a code another computer asked for is ErrCodeUnknown, as one that does not
// exist. The record's StateAt tells expiry.
func (a *Accounts) LinkStatus(ctx context.Context, code, traposID string) (LinkCode, error) {
	id, err := LinkCodeID(code)
	if err != nil {
		return LinkCode{}, err
	}
	c, err := a.store.LinkCode(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && traposID != "" && ComputerID(c.TraposID) != ComputerID(traposID)) {
		return LinkCode{}, ErrCodeUnknown
	}
	return c, err
}

// Acceptable says why the player's answer to c (accept, or decline) cannot be taken at now,
// or nil: a code used, declined or expired takes none, and only an approved one is accepted.
func (c LinkCode) Acceptable(accept bool, now time.Time) error {
	if err := usable(&c, now); err != nil {
		return err
	}
	if accept && c.State != LinkApproved {
		return ErrCodeNotApproved
	}
	return nil
}

// usable checks that c can still be approved or accepted at now.
func usable(c *LinkCode, now time.Time) error {
	switch {
	case c.State == LinkAccepted:
		return ErrCodeUsed
	case c.State == LinkDeclined:
		return ErrCodeDeclined
	case c.Expired(now):
		return fmt.Errorf("the link code has %w", ErrExpired)
	}
	return nil
}

// ApproveLink approves the code into accountID, as approvedBy (who, for the computer's
// question and the audit), with no account's API token (ApproveLinkWithToken). A code already
// approved is ErrCodeApproved (an ErrCodeUsed): one approval per code.
func (a *Accounts) ApproveLink(ctx context.Context, code, accountID, approvedBy string) (LinkCode, error) {
	return a.ApproveLinkWithToken(ctx, code, accountID, approvedBy, "")
}

// ApproveLinkWithToken is ApproveLink made with the account API token of id token (Caller.Token;
// "" for none): revoked before the player answers, it takes the approval back (AcceptLink).
// The approval reads the account and the code as last written (Latest): an account added a
// moment ago is found.
func (a *Accounts) ApproveLinkWithToken(ctx context.Context, code, accountID, approvedBy, token string) (LinkCode, error) {
	s := Latest(a.store)
	acc, err := s.Account(ctx, accountID)
	if err != nil {
		return LinkCode{}, err
	}
	canon, err := NormalizeCode(code)
	if err != nil {
		return LinkCode{}, fmt.Errorf("%w: %w", ErrCodeUnknown, err)
	}
	now := a.clock.Now()
	c, err := s.UpdateLinkCode(ctx, codeID(canon), func(c *LinkCode) error {
		if err := usable(c, now); err != nil {
			return err
		}
		if c.State == LinkApproved {
			return ErrCodeApproved
		}
		c.State, c.AccountID, c.ApprovedBy, c.ApprovedAt, c.AccountCreated = LinkApproved, accountID, approvedBy, now, acc.Created
		c.ApprovedToken = token
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return LinkCode{}, ErrCodeUnknown
	}
	return c, err
}

// AcceptLink ends the code for the computer traposID: accept true issues the computer its
// credential (returned, shown once) in the approving account; false declines (a pending code
// too: the player gave up). Either way the code is used up. A code approved into an account
// that is gone, or was made again under its name (owner), is ErrCodeUnknown, as the code its
// removal deleted; one whose approving API token was revoked since, or is gone with its
// account (an admin's, approving into another account), is ErrApprovalRevoked, the code left
// as it was (its computer's socket, the only one that may answer it, asks for a new one). A
// revocation or removal in the instant after those looks is seen by the store as it adds the
// credential (CreateApprovedCredential): then the code is used up, and no credential issued.
func (a *Accounts) AcceptLink(ctx context.Context, code, traposID string, accept bool) (string, LinkCode, error) {
	return a.acceptLink(ctx, code, traposID, accept, false)
}

// AcceptLinkExclusive is AcceptLink that issues the credential only if the approving account
// holds no credential bound to the computer's id (CreateBoundCredential; a *HeldIDError
// otherwise, the code used up all the same): the approval looked (the gateway's takesPlace),
// but the player answers minutes later, and a key, or another code approved meanwhile, may
// have linked a computer of that id into the account since.
func (a *Accounts) AcceptLinkExclusive(ctx context.Context, code, traposID string, accept bool) (string, LinkCode, error) {
	return a.acceptLink(ctx, code, traposID, accept, true)
}

func (a *Accounts) acceptLink(ctx context.Context, code, traposID string, accept, exclusive bool) (string, LinkCode, error) {
	c, err := a.LinkStatus(ctx, code, traposID)
	if err != nil {
		return "", LinkCode{}, err
	}
	var stamp time.Time
	if accept && c.State == LinkApproved {
		acc, err := a.owner(ctx, c.AccountID, c.AccountCreated)
		if errors.Is(err, ErrBadSecret) {
			return "", LinkCode{}, ErrCodeUnknown
		}
		if err != nil {
			return "", LinkCode{}, err
		}
		stamp = acc.Created
		if err := a.approvalStands(ctx, c); err != nil {
			return "", LinkCode{}, err
		}
	}
	now := a.clock.Now()
	c, err = a.store.UpdateLinkCode(ctx, c.ID, func(c *LinkCode) error {
		if err := c.Acceptable(accept, now); err != nil {
			return err
		}
		c.State, c.UsedAt = LinkDeclined, now
		if accept {
			c.State = LinkAccepted
		}
		return nil
	})
	if err != nil || !accept {
		return "", c, err
	}
	// Its token may have been revoked, or an account removed, since the look above: the store
	// looks again in the same step as it adds the credential.
	approvedToken := c.ApprovedToken
	plain, _, err := a.issueBound(ctx, c.AccountID, stamp, c.ApprovedBy, traposID, func(ctx context.Context, cred Credential) error {
		return a.store.CreateApprovedCredential(ctx, cred, approvedToken, exclusive)
	})
	if errors.Is(err, ErrNotFound) {
		return "", c, ErrCodeUnknown // the approving account is gone, as the code its removal deleted
	}
	return plain, c, err
}

// approvalStands says why the approval of c no longer stands (ErrApprovalRevoked), or nil:
// its API token is revoked, or gone (its account removed). A leaked token is revoked for what
// it can still do, and what it approved and the player has not accepted yet is among that.
// An expired token's approvals stand: it expires on schedule, not because it leaked.
func (a *Accounts) approvalStands(ctx context.Context, c LinkCode) error {
	if c.ApprovedToken == "" {
		return nil
	}
	tok, err := a.store.Token(ctx, c.ApprovedToken)
	if errors.Is(err, ErrNotFound) || (err == nil && !tok.RevokedAt.IsZero()) {
		return ErrApprovalRevoked
	}
	return err
}

// PruneLinkCodes deletes the codes that expired more than a lifetime ago (a used or expired
// code is kept that long so that a late poll or approval hears why, not "unknown").
func (a *Accounts) PruneLinkCodes(ctx context.Context) (int, error) {
	return a.store.DeleteLinkCodes(ctx, a.clock.Now().Add(-LinkCodeTTL))
}

// issueBound issues a credential of accountID, stamped stamp (owner), bound to the computer
// id of traposID, and adds it to the store with create (a Store's CreateCredential, or one
// that refuses, such as CreateBoundCredential's *HeldIDError).
func (a *Accounts) issueBound(ctx context.Context, accountID string, stamp time.Time, approvedBy, traposID string,
	create func(context.Context, Credential) error) (string, Credential, error) {
	plain, selector, hash := newSecret(KindCredential)
	c := Credential{Selector: selector, Hash: hash, AccountID: accountID, ApprovedBy: approvedBy, Created: a.clock.Now(),
		ComputerID: ComputerID(traposID), AccountCreated: stamp}
	if err := create(ctx, c); err != nil {
		return "", Credential{}, err
	}
	return plain, c, nil
}

// IssueEnrollmentKey makes accountID a key that links maxUses computers (0: any number) until
// ttl passes (0: never); createdBy is who asked, for audit. It returns the key, shown once.
func (a *Accounts) IssueEnrollmentKey(ctx context.Context, accountID, createdBy string, maxUses int, ttl time.Duration) (string, EnrollmentKey, error) {
	return a.IssueEnrollmentKeyBy(ctx, accountID, createdBy, maxUses, ttl, time.Time{})
}

// IssueEnrollmentKeyBy is IssueEnrollmentKey for a key that expires by until at the latest
// (zero: no bound), the expiry of the token of the caller who asked (Caller.Until).
func (a *Accounts) IssueEnrollmentKeyBy(ctx context.Context, accountID, createdBy string, maxUses int, ttl time.Duration, until time.Time) (string, EnrollmentKey, error) {
	if maxUses < 0 {
		return "", EnrollmentKey{}, fmt.Errorf("a key's uses must be positive (or 0 for any number), got %d", maxUses)
	}
	if ttl < 0 {
		return "", EnrollmentKey{}, fmt.Errorf("a key's lifetime must be positive, got %s", ttl)
	}
	stamp, err := a.incarnation(ctx, accountID)
	if err != nil {
		return "", EnrollmentKey{}, err
	}
	plain, selector, hash := newSecret(KindEnrollment)
	now := a.clock.Now()
	k := EnrollmentKey{Selector: selector, Hash: hash, AccountID: accountID, CreatedBy: createdBy, Created: now, MaxUses: maxUses,
		AccountCreated: stamp}
	if ttl > 0 {
		k.ExpiresAt = now.Add(ttl)
	}
	k.ExpiresAt = expiresBy(k.ExpiresAt, until)
	if err := a.store.CreateEnrollmentKey(ctx, k); err != nil {
		return "", EnrollmentKey{}, err
	}
	return plain, k, nil
}

// LinkWithKey spends one use of an enrollment key on the computer traposID and issues it a
// credential in the key's account (returned, shown once). A wrong key is ErrBadSecret, as is
// one whose account is gone or was made again under its name (owner), before a use is spent;
// a revoked, expired or used-up one says so.
func (a *Accounts) LinkWithKey(ctx context.Context, plain, traposID string) (string, EnrollmentKey, error) {
	return a.LinkWithKeyUnless(ctx, plain, traposID, nil)
}

// LinkGuard is asked about a link into the key's account accountID by LinkWithKeyUnless. Its
// error refuses the link (the gateway's: the account has a computer of the link's id
// connected). exclusive issues the credential only if the account holds no credential bound
// to the computer id, looked at in the same step as the credential is added
// (Store.CreateBoundCredential), so that two link sessions claiming one id at once, each
// having found it free, do not both get one: the second is refused with a *HeldIDError. A
// guard answers false for a link session that is the account's computer of that id already
// (its socket said hello in the account), which may take a credential beside its own.
type LinkGuard func(ctx context.Context, accountID string) (exclusive bool, err error)

// LinkWithKeyUnless is LinkWithKey that first asks guard (when not nil) about the key's
// account, once the key is known to be right and usable and before a use is spent. A link
// that guard makes exclusive and that is refused as the account holds the id (*HeldIDError)
// gives its use back.
func (a *Accounts) LinkWithKeyUnless(ctx context.Context, plain, traposID string, guard LinkGuard) (string, EnrollmentKey, error) {
	selector, secret, err := parseSecret(KindEnrollment, plain)
	if err != nil {
		return "", EnrollmentKey{}, fmt.Errorf("%w: %w", ErrBadSecret, err)
	}
	k, err := a.store.EnrollmentKey(ctx, selector)
	if errors.Is(err, ErrNotFound) || (err == nil && !hashMatches(secret, k.Hash)) {
		return "", EnrollmentKey{}, ErrBadSecret
	}
	if err != nil {
		return "", EnrollmentKey{}, err
	}
	acc, err := a.owner(ctx, k.AccountID, k.AccountCreated)
	if err != nil {
		return "", EnrollmentKey{}, err
	}
	now := a.clock.Now()
	exclusive := false
	if guard != nil {
		// Only a key that links is asked about: a revoked, expired or used-up one (its holder
		// no longer trusted with it) learns nothing of the account's computers.
		if err := k.usable(now); err != nil {
			return "", EnrollmentKey{}, err
		}
		if exclusive, err = guard(ctx, k.AccountID); err != nil {
			return "", EnrollmentKey{}, err
		}
	}
	k, err = a.store.UpdateEnrollmentKey(ctx, selector, func(k *EnrollmentKey) error {
		if err := k.usable(now); err != nil {
			return err
		}
		k.Uses++
		k.LastUsed = now
		return nil
	})
	if err != nil {
		return "", EnrollmentKey{}, err
	}
	create := a.store.CreateCredential
	if exclusive {
		create = a.store.CreateBoundCredential
	}
	cred, _, err := a.issueBound(ctx, k.AccountID, acc.Created, k.CreatedBy+" (key "+k.Selector+")", traposID, create)
	if held := (*HeldIDError)(nil); errors.As(err, &held) {
		// No computer was linked: the use goes back, as for a refusal by guard. Meanwhile
		// (between the two writes) the key counted it, which another link of a key at its
		// last use may have been refused for.
		if _, gerr := a.store.UpdateEnrollmentKey(ctx, selector, func(k *EnrollmentKey) error {
			k.Uses = max(k.Uses-1, 0)
			return nil
		}); gerr != nil {
			return "", k, fmt.Errorf("%w (its key's use was spent all the same: %w)", err, gerr)
		}
	}
	return cred, k, err
}

// usable says why k links no computer at now (revoked, expired, used up), or nil.
func (k *EnrollmentKey) usable(now time.Time) error {
	switch {
	case !k.RevokedAt.IsZero():
		return fmt.Errorf("the enrollment key is %w", ErrRevoked)
	case !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt):
		return fmt.Errorf("the enrollment key is %w", ErrExpired)
	case k.MaxUses > 0 && k.Uses >= k.MaxUses:
		linked := fmt.Sprintf("%d computers", k.Uses)
		if k.Uses == 1 {
			linked = "1 computer"
		}
		if k.Uses > k.MaxUses {
			// Spent on a gateway and its replicas both, after accounts copy (copyUses).
			return fmt.Errorf("the enrollment key is %w (it linked %s, more than its limit of %d)", ErrUsedUp, linked, k.MaxUses)
		}
		return fmt.Errorf("the enrollment key is %w (it linked %s, its limit)", ErrUsedUp, linked)
	}
	return nil
}

// RevokeEnrollmentKey revokes the key selector of accountID ("" for an admin: any); another
// account's key is ErrNotFound, as one that does not exist. As RevokeToken, it reads the key
// as last written (Latest).
func (a *Accounts) RevokeEnrollmentKey(ctx context.Context, accountID, selector string) (EnrollmentKey, error) {
	if err := beyondAnyID("enrollment key", selector); err != nil {
		return EnrollmentKey{}, err
	}
	s := Latest(a.store)
	k, err := s.EnrollmentKey(ctx, selector)
	if err != nil {
		return EnrollmentKey{}, err
	}
	if accountID != "" && k.AccountID != accountID {
		return EnrollmentKey{}, notFound("enrollment key", selector)
	}
	now := a.clock.Now()
	return s.UpdateEnrollmentKey(ctx, selector, func(k *EnrollmentKey) error {
		if k.RevokedAt.IsZero() {
			k.RevokedAt = now
		}
		return nil
	})
}
