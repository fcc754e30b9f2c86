package account

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/clock"
)

// Errors of Accounts' checks. They say why a secret was refused; none contains the secret.
var (
	ErrBadSecret = errors.New("unknown or wrong secret")
	ErrRevoked   = errors.New("revoked")
	ErrExpired   = errors.New("expired")
	// ErrReserved refuses a token of an account whose name the gateway uses for itself
	// (Reserved): only a store made before the names were reserved holds one, and its token
	// must not pass for the built-in account (a user "local" would reach every
	// shared-password computer).
	ErrReserved = errors.New("the account's name is the gateway's own")
	// ErrNotRecorded is wrapped in AuthenticateComputer's error when the secret is good but
	// the store could not record the hello (a full disk): the hello stands, the credential
	// comes back with the error, and the caller only logs it.
	ErrNotRecorded = errors.New("the hello was not recorded")
)

// ErrInvalid is what a malformed name, role or lifetime is (errors.Is); the error's own text
// says what is wrong and what would do.
var ErrInvalid = errors.New("invalid")

type invalid string

func (e invalid) Error() string        { return string(e) }
func (e invalid) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, args ...any) error { return invalid(fmt.Sprintf(format, args...)) }

// Accounts issues and checks secrets over a Store, on a clock (tests inject a fake one).
type Accounts struct {
	store Store
	clock clock.Clock
}

// New returns Accounts over store; clk is the time of creation, expiry and revocation.
func New(store Store, clk clock.Clock) *Accounts { return &Accounts{store: store, clock: clk} }

// Store returns the store Accounts works on.
func (a *Accounts) Store() Store { return a.store }

// validName is an account's name: short, printable and safe in a log line, a
// NATS subject token and a shell argument.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// reserved are the names the gateway uses for itself, each with what it is; no account may
// take one. The built-in account is known by its name alone (the registry's accountId of a
// shared-password computer), so an account made as "local" would be it: its user token would
// reach every shared-password computer, which only admins may. "operator" and "admin" are
// words of the audit (CREATED BY, APPROVED BY: the store itself, "root (admin)"), which an
// account of that name would make ambiguous.
var reserved = map[string]string{
	Local:             "the built-in account of the shared-password computers",
	Operator:          "the audit's name for a command run on the store itself",
	string(RoleAdmin): "a role, and the audit's mark of an admin acting for another account",
}

// Reserved reports whether name is one the gateway uses for itself (no account may have it).
func Reserved(name string) bool {
	_, ok := reserved[name]
	return ok
}

// CheckName explains why name cannot name an account, or returns nil: the one check of an
// account's name, for the store's commands and the API alike.
func CheckName(name string) error {
	if !validName.MatchString(name) {
		return invalidf("account name %q: use 1 to 63 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit", name)
	}
	if what, ok := reserved[name]; ok {
		return invalidf("account name %q is the gateway's own (%s): choose another name", name, what)
	}
	return nil
}

// MaxTokenName is the most characters a token's name may have.
const MaxTokenName = 64

// CheckTokenName explains why name cannot name a token, or returns nil: the one check of a
// token's name, for the store's commands and the API alike. A name is any text a person
// types (laptop, ci, "Alice's phone", 台所) but nothing that forges a listing's line (control
// characters: C0, DEL, C1; line or paragraph separators; bidirectional controls) or that
// prints as another character or as none (cctext.LooksLikeAnother: a no-break space, a
// zero-width space or joiner, a byte order mark), which the listings show escaped
// (cctext.ShowDistinct): a name is refused that would not list as it was typed. Nor may a
// word of it mix scripts (cctext.MixedScripts: lаptop with a Cyrillic а looks like laptop).
// A name is checked as it is kept, composed (TokenName), and a new token's must not look
// like the name of a token of its account that still opens (twinToken).
func CheckTokenName(name string) error { return checkTokenName(name, name) }

// checkTokenName is CheckTokenName of name, kept as TokenName keeps typed.
func checkTokenName(name, typed string) error {
	switch {
	case name == "":
		return invalid("a token needs a name (what it is for: laptop, ci, agent)")
	case !utf8.ValidString(name):
		return invalidf("token name %q is not UTF-8 text", name)
	case utf8.RuneCountInString(name) > MaxTokenName:
		return invalidf("token name %q has %d characters: give at most %d", name, utf8.RuneCountInString(name), MaxTokenName)
	}
	for _, r := range name {
		if unicode.IsControl(r) || cctext.BreaksLine(r) {
			return invalidf("token name %q holds %U, a control or line-breaking character: give a name of printable characters (laptop, ci, agent)", name, r)
		}
		if cctext.LooksLikeAnother(r) {
			return invalidf("token name %q holds %U, which prints as a space, a hyphen or nothing, so the name would look like another "+
				"(a listing shows it as %s): give it without that character (a plain space for a space)", name, r, cctext.ShowDistinct(string(r), false))
		}
	}
	if word, scripts := cctext.MixedScripts(name); word != "" {
		return mixedScripts(name, typed, word, scripts)
	}
	return nil
}

// mixedScripts is the refusal of name (kept as TokenName keeps typed), a word of which mixes
// scripts: it says which letters are of a script other than the word's first (\u0430 is
// Cyrillic), one the name keeps as another character as it was typed (the ohm sign, U+2126,
// is kept as U+03A9, the Greek capital omega: the same character to Unicode, and Greek as it
// was), and, for a word of two parts, that parting it where its script changes makes two
// words of one script each (10k Ω), which passes.
func mixedScripts(name, typed, word string, scripts []string) error {
	composedFrom := map[rune]rune{}
	for _, r := range typed {
		if kept := []rune(norm.NFC.String(string(r))); len(kept) == 1 && kept[0] != r {
			composedFrom[kept[0]] = r
		}
	}
	// The word's parts, each a run of letters of one script (with the digits and marks
	// among them).
	type part struct{ script, text string }
	var parts []part
	for _, r := range word {
		s := cctext.ScriptOf(r)
		if len(parts) == 0 || (s != "" && parts[len(parts)-1].script != "" && s != parts[len(parts)-1].script) {
			parts = append(parts, part{script: s})
		}
		p := &parts[len(parts)-1]
		p.text += string(r)
		if p.script == "" {
			p.script = s
		}
	}
	var which []string
	for _, p := range parts {
		if p.script == scripts[0] {
			continue
		}
		said := cctext.ShowName(p.text, true) + " is " + p.script
		for _, r := range p.text {
			if from, ok := composedFrom[r]; ok {
				said += fmt.Sprintf(", typed as %s, which Unicode holds to be the same character", cctext.ShowName(string(from), true))
				break
			}
		}
		which = append(which, said)
	}
	fix := "write it in one script"
	if len(parts) == 2 {
		fix = fmt.Sprintf("part it where its script changes (%s or %s), or write it in one script",
			cctext.ShowName(parts[0].text+" "+parts[1].text, false), cctext.ShowName(parts[0].text+"-"+parts[1].text, false))
	}
	return invalidf("token name %q mixes scripts in one word, %s (%s: %s); a word of two scripts may hide a letter that looks like "+
		"another's (a Cyrillic \u0430 for a Latin a), so each word of a name is of one script: %s",
		name, cctext.ShowName(word, true), strings.Join(scripts, " and "), strings.Join(which, "; "), fix)
}

// TokenName is name as a token keeps it, composed (NFC: e and U+0301 is é, one character, as
// RFC 8265 keeps a name), or why it cannot name a token (CheckTokenName's refusal).
func TokenName(name string) (string, error) {
	kept := norm.NFC.String(name)
	return kept, checkTokenName(kept, name)
}

// twinToken refuses name for a new token of accountID when a token of that account that
// still opens (not revoked, not expired at now) has a name a listing could not tell from it
// (cctext.NameKey: the same name, or one that looks like it, laptop and lаptop with Cyrillic
// а): an operator revoking one must not take the other for it. A token revoked or expired
// leaves its name free (its listing's row says which), so a leaked token's holder gets one of
// the same name. toks are the account's tokens as the store holds them at the add
// (Store.CreateTokenIf): of two tokens added at once, through one gateway or two replicas,
// the second is refused naming the first.
func twinToken(accountID, name string, toks []Token, now time.Time) error {
	key := cctext.NameKey(name)
	for _, t := range toks {
		if !t.RevokedAt.IsZero() || (!t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt)) || cctext.NameKey(t.Name) != key {
			continue
		}
		if t.Name == name {
			return invalidf("token name %q is taken by token %s of account %s: choose another name, or revoke that token first (trap-sandbox tokens revoke %s)",
				name, t.Selector, accountID, t.Selector)
		}
		return invalidf("token name %q looks like the name of token %s of account %s, which a listing could not tell apart (spelled out: %s and %s): "+
			"choose another name, or revoke that token first (trap-sandbox tokens revoke %s)",
			name, t.Selector, accountID, cctext.ShowName(name, true), cctext.ShowName(t.Name, true), t.Selector)
	}
	return nil
}

// twinAccount refuses id for a new account when an account, or a name the gateway uses for
// itself (Reserved), has a name a listing could not tell from it (cctext.NameKey: a1ice beside
// alice, rnallory beside mallory); the same name is the store's ErrExists. accounts are every
// account as the store holds them at the add (Store.CreateAccountIf): of two accounts added at
// once, the second is refused naming the first.
func twinAccount(id string, accounts []Account) error {
	key := cctext.NameKey(id)
	for name, what := range reserved {
		if cctext.NameKey(name) == key {
			return invalidf("account name %q looks like %q, the gateway's own (%s): choose another name", id, name, what)
		}
	}
	for _, acc := range accounts {
		if acc.ID != id && cctext.NameKey(acc.ID) == key {
			return invalidf("account name %q looks like that of account %q, which a listing could not tell apart: choose another name", id, acc.ID)
		}
	}
	return nil
}

// AddAccount creates the account id with role and issues its first API token, named
// tokenName; it returns the token's secret (shown once: only its hash is kept).
func (a *Accounts) AddAccount(ctx context.Context, id string, role Role, tokenName string) (string, error) {
	plain, _, err := a.AddAccountBy(ctx, id, role, tokenName, "")
	return plain, err
}

// AddAccountBy is AddAccount recording who created the account and its token (by: an
// account's id, or Operator); it returns the token's record too.
func (a *Accounts) AddAccountBy(ctx context.Context, id string, role Role, tokenName, by string) (string, Token, error) {
	return a.addAccount(ctx, id, role, tokenName, time.Time{}, by)
}

// addAccount is AddAccountBy whose first token expires by until (zero: never).
func (a *Accounts) addAccount(ctx context.Context, id string, role Role, tokenName string, until time.Time, by string) (string, Token, error) {
	if err := CheckName(id); err != nil {
		return "", Token{}, err
	}
	if role != RoleAdmin && role != RoleUser {
		return "", Token{}, invalidf("role %q: use %s or %s", role, RoleAdmin, RoleUser)
	}
	if err := twinAccount(id, nil); err != nil {
		return "", Token{}, err // the gateway's own names: no store read
	}
	plain, t, err := a.newToken(id, tokenName, 0, until, by)
	if err != nil {
		return "", Token{}, err
	}
	acc := Account{ID: id, Role: role, Created: t.Created, CreatedBy: by}
	t.AccountCreated = acc.Created
	if err := a.store.CreateAccountIf(ctx, acc, t, func(all []Account) error { return twinAccount(id, all) }); err != nil {
		return "", Token{}, err
	}
	return plain, t, nil
}

// MaxTokenTTL is the longest lifetime a token may be given, 100 years: longer is no lifetime
// worth counting (0 is never), and the cap keeps a lifetime in seconds (the API's) times
// time.Second, and now plus it, far from time.Duration's overflow (292 years).
const MaxTokenTTL = 100 * 365 * 24 * time.Hour

// MaxTokenTTLText is MaxTokenTTL as the messages that state it say it.
const MaxTokenTTLText = "100 years"

// IssueToken gives accountID a new API token named name, expiring after ttl (0: never). It
// returns the secret, shown once, and the stored record.
func (a *Accounts) IssueToken(ctx context.Context, accountID, name string, ttl time.Duration) (string, Token, error) {
	return a.IssueTokenBy(ctx, accountID, name, ttl, "")
}

// IssueTokenBy is IssueToken recording who issued the token (an account's id, or Operator).
func (a *Accounts) IssueTokenBy(ctx context.Context, accountID, name string, ttl time.Duration, by string) (string, Token, error) {
	return a.issueToken(ctx, accountID, name, ttl, time.Time{}, by)
}

// issueToken is IssueTokenBy for a token that expires by until at the latest (zero: no bound).
func (a *Accounts) issueToken(ctx context.Context, accountID, name string, ttl time.Duration, until time.Time, by string) (string, Token, error) {
	plain, t, err := a.newToken(accountID, name, ttl, until, by)
	if err != nil {
		return "", Token{}, err
	}
	if t.AccountCreated, err = a.incarnation(ctx, accountID); err != nil {
		return "", Token{}, err
	}
	err = a.store.CreateTokenIf(ctx, t, func(toks []Token) error { return twinToken(accountID, t.Name, toks, t.Created) })
	if err != nil {
		return "", Token{}, err
	}
	return plain, t, nil
}

// newToken checks a token's name and lifetime and makes its secret and record, not stored yet;
// it expires after ttl (0: never), by until at the latest (zero: no bound).
func (a *Accounts) newToken(accountID, name string, ttl time.Duration, until time.Time, by string) (string, Token, error) {
	name, err := TokenName(name)
	if err != nil {
		return "", Token{}, err
	}
	if ttl < 0 {
		return "", Token{}, invalidf("a token's lifetime must be positive, got %s", ttl)
	}
	if ttl > MaxTokenTTL {
		return "", Token{}, invalidf("a token's lifetime is at most %s (%s), got %s", MaxTokenTTL, MaxTokenTTLText, ttl)
	}
	plain, selector, hash := newSecret(KindToken)
	now := a.clock.Now()
	t := Token{Selector: selector, Hash: hash, AccountID: accountID, Name: name, Created: now, CreatedBy: by}
	if ttl > 0 {
		t.ExpiresAt = now.Add(ttl)
	}
	t.ExpiresAt = expiresBy(t.ExpiresAt, until)
	return plain, t, nil
}

// expiresBy is a token's or key's expiry at (zero: never), brought forward to until when that
// is sooner (zero: no bound): what a caller whose own token expires makes (Caller.Until).
func expiresBy(at, until time.Time) time.Time {
	if until.IsZero() || (!at.IsZero() && !at.After(until)) {
		return at
	}
	return until
}

// CutTo reports whether expiry, of a token or key a caller made, is its token's own (until):
// what it asked for would have lived longer.
func CutTo(expiry, until time.Time) bool { return !until.IsZero() && expiry.Equal(until) }

// Authenticate returns the account of an API token, or why it is refused: ErrBadSecret,
// ErrRevoked or ErrExpired (a token stops working on the request after its revocation).
func (a *Accounts) Authenticate(ctx context.Context, plain string) (Account, error) {
	acc, _, err := a.authenticate(ctx, plain)
	return acc, err
}

// SeenEvery is how stale a token's recorded last use may get: an API call records its time
// and address when the record is older than this or names another address, so a token used
// many times a second is not a store write per call.
const SeenEvery = time.Minute

// AuthenticateFrom is Authenticate for an API call from remoteAddr (host:port), and records
// the use on the token (its audit fields; see SeenEvery): the time and the host, without the
// port, which changes with every connection. A failure to record does not refuse the call.
func (a *Accounts) AuthenticateFrom(ctx context.Context, plain, remoteAddr string) (Account, error) {
	acc, _, err := a.AuthenticateTokenFrom(ctx, plain, remoteAddr)
	return acc, err
}

// AuthenticateTokenFrom is AuthenticateFrom returning the token's record too (its expiry,
// Caller.Until).
func (a *Accounts) AuthenticateTokenFrom(ctx context.Context, plain, remoteAddr string) (Account, Token, error) {
	acc, t, err := a.authenticate(ctx, plain)
	if err != nil {
		return Account{}, Token{}, err
	}
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		remoteAddr = host
	}
	now := a.clock.Now()
	if t.RemoteAddr != remoteAddr || now.Sub(t.LastUsed) >= SeenEvery {
		_ = a.store.SeeToken(ctx, t.Selector, now, remoteAddr) // bookkeeping: the call stands
	}
	return acc, t, nil
}

func (a *Accounts) authenticate(ctx context.Context, plain string) (Account, Token, error) {
	selector, secret, err := parseSecret(KindToken, plain)
	if err != nil {
		return Account{}, Token{}, fmt.Errorf("%w: %w", ErrBadSecret, err)
	}
	t, err := a.store.Token(ctx, selector)
	if errors.Is(err, ErrNotFound) || (err == nil && !hashMatches(secret, t.Hash)) {
		return Account{}, Token{}, ErrBadSecret
	}
	if err != nil {
		return Account{}, Token{}, err
	}
	acc, err := a.opens(ctx, t)
	if err != nil {
		return Account{}, Token{}, err
	}
	return acc, t, nil
}

// opens returns the account that token t (its secret checked, or checked when the call began)
// opens now, or why it opens nothing: ErrRevoked, ErrExpired, ErrReserved, or ErrBadSecret
// when its account is gone. The one home of what a token must be, for Authenticate and
// TokenStillOpens alike. Its refusal names the token as tokens list does (cctext.ShowName), so
// that a name kept before the rules (l\u0430ptop, with a Cyrillic а) does not read as
// another's in the 401.
func (a *Accounts) opens(ctx context.Context, t Token) (Account, error) {
	name := cctext.ShowName(t.Name, false)
	if !t.RevokedAt.IsZero() {
		return Account{}, fmt.Errorf(`the token "%s" was %w`, name, ErrRevoked)
	}
	if !t.ExpiresAt.IsZero() && !a.clock.Now().Before(t.ExpiresAt) {
		return Account{}, fmt.Errorf(`the token "%s" has %w`, name, ErrExpired)
	}
	if Reserved(t.AccountID) {
		return Account{}, fmt.Errorf(`the token "%s" of account %q: %w`, name, t.AccountID, ErrReserved)
	}
	return a.owner(ctx, t.AccountID, t.AccountCreated)
}

// TokenStillOpens tells whether the API token of id selector still opens the API: nil, or
// the error Authenticate would give its secret now (ErrRevoked, ErrExpired, ErrReserved;
// ErrBadSecret when it is gone, removed with its account), or the store's failure. It checks
// no secret, so it lets nobody in: it is for a call whose caller's secret was checked when it
// began (on this replica, or on another for an input relayed to the one holding the
// computer's socket), which must stop as that caller's next call is refused. The token is
// read as last written
// (Latest): on a NATS cluster through the bucket's stream leader, so a revocation just made
// through any replica is seen; a token found revoked or expired costs no other read.
func (a *Accounts) TokenStillOpens(ctx context.Context, selector string) error {
	if !plausibleSelector(selector) {
		return ErrBadSecret
	}
	t, err := Latest(a.store).Token(ctx, selector)
	if errors.Is(err, ErrNotFound) {
		return ErrBadSecret
	}
	if err != nil {
		return err
	}
	_, err = a.opens(ctx, t)
	return err
}

// incarnation returns the Created of the account id as the store holds it now (Latest: an
// account added, or removed and added again, a moment ago): the stamp of a secret issued to
// it (a record's AccountCreated), which owner checks. ErrNotFound (wrapped) when there is no
// such account.
func (a *Accounts) incarnation(ctx context.Context, id string) (time.Time, error) {
	acc, err := Latest(a.store).Account(ctx, id)
	return acc.Created, err
}

// owner returns the account id of a token, credential or enrollment key stamped stamp (its
// AccountCreated), or ErrBadSecret when the secret is nobody's: one left behind by the
// account's removal (a removal on the NATS bucket cut off halfway, or a secret added while
// the account was being removed) has no account, or one made later under the same name,
// which inherits nothing of the removed account's. The stamp is the account's own Created as
// read from the store when the secret was issued, so the check compares the store's record
// with itself, never two machines' clocks: a replica or an operator's laptop whose clock is
// behind issues secrets that work. A record without a stamp (issued by an older
// trap-sandbox) needs only its account to exist.
func (a *Accounts) owner(ctx context.Context, id string, stamp time.Time) (Account, error) {
	acc, err := a.store.Account(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && !stamp.IsZero() && !stamp.Equal(acc.Created)) {
		return Account{}, ErrBadSecret
	}
	return acc, err
}

// IssueCredential gives one computer of accountID its own credential, approved by
// approvedBy (an account id). It returns the secret, shown once, and the stored record.
func (a *Accounts) IssueCredential(ctx context.Context, accountID, approvedBy string) (string, Credential, error) {
	stamp, err := a.incarnation(ctx, accountID)
	if err != nil {
		return "", Credential{}, err
	}
	plain, selector, hash := newSecret(KindCredential)
	c := Credential{Selector: selector, Hash: hash, AccountID: accountID, ApprovedBy: approvedBy, Created: a.clock.Now(), AccountCreated: stamp}
	if err := a.store.CreateCredential(ctx, c); err != nil {
		return "", Credential{}, err
	}
	return plain, c, nil
}

// ProofKey returns the key the gateway proves itself with to the computer holding the
// credential selector (docs/protocol.md, "The gateway proves itself"): the SHA-256 of the
// credential's secret part, as the store keeps it and as the computer computes it from its
// own. One store read, the one a hello with it makes first. A selector that names no
// credential (none, one longer than any issued) is ErrNotFound, a revoked one the key with
// ErrRevoked: the gateway then refuses the prove in the words it would refuse that hello with,
// since a computer that waits for a proof sends no hello to be told why, and proves the
// refusal with the key, so that the computer tells the gateway's "revoked" from another
// program's on its port (ids are not secret: 64 random bits each, nothing to enumerate, and an
// id alone opens nothing).
func (a *Accounts) ProofKey(ctx context.Context, selector string) ([]byte, error) {
	if !plausibleSelector(selector) {
		return nil, ErrNotFound
	}
	c, err := a.store.Credential(ctx, selector)
	if err != nil {
		return nil, err
	}
	if !c.RevokedAt.IsZero() {
		return c.Hash, ErrRevoked
	}
	if len(c.Hash) == 0 {
		return nil, ErrNotFound
	}
	return c.Hash, nil
}

// AuthenticateComputer returns the credential of a hello's secret, or why it is refused
// (ErrBadSecret, ErrRevoked, a *WrongComputerError for a linked credential said by another
// computer id), and records the hello (time, traposId, address). The credential's
// AccountCreated is its account's Created as the store holds it. A failure to record does not
// refuse the hello, as a failure to record a token's use does not refuse the call: it returns
// the credential with an error wrapping ErrNotRecorded.
func (a *Accounts) AuthenticateComputer(ctx context.Context, plain, traposID, remoteAddr string) (Credential, error) {
	selector, secret, err := parseSecret(KindCredential, plain)
	if err != nil {
		return Credential{}, fmt.Errorf("%w: %w", ErrBadSecret, err)
	}
	c, err := a.store.Credential(ctx, selector)
	if errors.Is(err, ErrNotFound) || (err == nil && !hashMatches(secret, c.Hash)) {
		return Credential{}, ErrBadSecret
	}
	if err != nil {
		return Credential{}, err
	}
	acc, err := a.owner(ctx, c.AccountID, c.AccountCreated)
	if err != nil {
		return Credential{}, err
	}
	if !c.RevokedAt.IsZero() {
		return Credential{}, fmt.Errorf("the computer's credential: %w", ErrRevoked)
	}
	// The account's stamp as the store holds it now, also for a credential issued before
	// stamps (zero in its record): which incarnation of the name the computer is.
	c.AccountCreated = acc.Created
	if c.ComputerID != "" && c.ComputerID != ComputerID(traposID) {
		return Credential{}, &WrongComputerError{ComputerID: c.ComputerID}
	}
	now := a.clock.Now()
	if err := a.store.SeeCredential(ctx, selector, now, traposID, remoteAddr); err != nil {
		return c, fmt.Errorf("%w: %w", ErrNotRecorded, err)
	}
	c.LastSeen, c.LastTraposID, c.RemoteAddr = now, traposID, remoteAddr
	return c, nil
}

// RevokeToken revokes the token selector of accountID (an admin passes "" to revoke any).
// Another account's token answers ErrNotFound, as a token that does not exist. It reads the
// token as last written (Latest), so that one added a moment ago is found.
func (a *Accounts) RevokeToken(ctx context.Context, accountID, selector string) (Token, error) {
	if err := beyondAnyID("token", selector); err != nil {
		return Token{}, err
	}
	s := Latest(a.store)
	t, err := s.Token(ctx, selector)
	if err != nil {
		return Token{}, err
	}
	if accountID != "" && t.AccountID != accountID {
		return Token{}, notFound("token", selector)
	}
	return s.RevokeToken(ctx, selector, a.clock.Now())
}

// RevokeCredential revokes the credential selector of accountID ("" for an admin: any), as
// RevokeToken.
func (a *Accounts) RevokeCredential(ctx context.Context, accountID, selector string) (Credential, error) {
	if err := beyondAnyID("credential", selector); err != nil {
		return Credential{}, err
	}
	s := Latest(a.store)
	c, err := s.Credential(ctx, selector)
	if err != nil {
		return Credential{}, err
	}
	if accountID != "" && c.AccountID != accountID {
		return Credential{}, notFound("credential", selector)
	}
	return s.RevokeCredential(ctx, selector, a.clock.Now())
}

// RemoveAccount removes the account id with its API tokens, computer credentials, enrollment
// keys and the link codes approved into it (Store.RemoveAccount), and returns what went. The
// last admin account is refused (ErrForbidden, naming the fix): removing it would leave no
// account that manages the others. The store counts the admins in the same step as it
// removes, so two admins removing each other at once leave one. The caller closes the
// removed credentials' sockets.
func (a *Accounts) RemoveAccount(ctx context.Context, id string) (Removed, error) {
	if err := beyondAnyID("account", id); err != nil {
		return Removed{}, err
	}
	return a.store.RemoveAccount(ctx, id, a.clock.Now())
}

// lastAdmin is a store's refusal to remove id, the last admin account.
func lastAdmin(id string) error {
	return fmt.Errorf("%w: account %q is the last admin account: add another first (trap-sandbox accounts add NAME --admin), then remove it", ErrForbidden, id)
}
