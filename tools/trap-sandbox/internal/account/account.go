// Package account is who owns which computers: accounts with a role, the API tokens a person
// uses on the host side and the per-computer credentials a computer uses in its hello. Store
// is where they live (in memory for tests, SQLite in a data directory); Accounts is the one
// place that issues secrets and checks them, so every caller gets the same rules: secrets
// from crypto/rand, stored as SHA-256, compared in constant time, never logged.
// Accounts.Manage is the one rule of who manages what (accountapi is its HTTP face), and
// accounttest is the conformance suite every Store passes.
package account

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Local is the account of the shared-password setup: a computer whose hello carries
// SANDBOX_PASSWORD (or any secret when none is set) belongs to it, as before accounts existed.
const Local = "local"

// Role says what an account may reach.
type Role string

// The roles. An admin reaches every account's computers and manages accounts; a user reaches
// only its own.
const (
	RoleAdmin Role = "admin"
	RoleUser  Role = "user"
)

// Account is one person (or team) who owns computers. ID is the name given at creation; it
// is the accountId of the registry's key and of the computer list. CreatedBy is who made it
// (audit): an account's id, or Operator for the store itself. The JSON is the account API's
// (docs/http-api.md).
type Account struct {
	ID        string    `json:"id"`
	Role      Role      `json:"role"`
	Created   time.Time `json:"created,omitzero"`
	CreatedBy string    `json:"createdBy,omitempty"`
}

// Operator is the CreatedBy (and a credential's ApprovedBy) of what was made on the store
// itself (`trap-sandbox accounts …` with the data directory or the NATS bucket): whoever can
// open the store, on the gateway's host.
const Operator = "operator"

// Token is an API token as stored: never its secret, only the secret's SHA-256 (never in its
// JSON either). The zero ExpiresAt never expires; a non-zero RevokedAt is the moment it was
// revoked. CreatedBy is who issued it; LastUsed and RemoteAddr (the client's host, no port)
// are its latest use by an API call (recorded at most once a SeenEvery per address, so a busy
// token is not a write per request).
type Token struct {
	Selector   string    `json:"id"`
	Hash       []byte    `json:"-"`
	AccountID  string    `json:"accountId"`
	Name       string    `json:"name"`
	Created    time.Time `json:"created,omitzero"`
	CreatedBy  string    `json:"createdBy,omitempty"`
	ExpiresAt  time.Time `json:"expiresAt,omitzero"`
	RevokedAt  time.Time `json:"revokedAt,omitzero"`
	LastUsed   time.Time `json:"lastUsed,omitzero"`
	RemoteAddr string    `json:"remoteAddr,omitempty"`
	// AccountCreated is its account's Created as the store held it when the token was issued:
	// which incarnation of the account name it belongs to (Accounts.owner). Zero in a record
	// of an older trap-sandbox.
	AccountCreated time.Time `json:"-"`
}

// Credential is a computer's own secret as stored: it makes the computer the account's. It
// is scoped to one computer: LastTraposID, LastSeen and RemoteAddr are what its latest hello
// said; ApprovedBy is who issued it (audit).
type Credential struct {
	Selector     string    `json:"id"`
	Hash         []byte    `json:"-"`
	AccountID    string    `json:"accountId"`
	ApprovedBy   string    `json:"approvedBy,omitempty"`
	Created      time.Time `json:"created,omitzero"`
	LastSeen     time.Time `json:"lastSeen,omitzero"`
	LastTraposID string    `json:"lastTraposId,omitempty"`
	RemoteAddr   string    `json:"remoteAddr,omitempty"`
	RevokedAt    time.Time `json:"revokedAt,omitzero"`
	// ComputerID binds a linked credential to one computer id (the number of its traposId):
	// a hello from another id is refused. Empty for a credential issued by hand (any id).
	ComputerID string `json:"computerId,omitempty"`
	// AccountCreated is its account's Created when it was issued, as a Token's.
	AccountCreated time.Time `json:"-"`
}

// Holding is what an account holds of computer credentials, linked or issued: one that is not
// revoked, or none, never one (HoldsNone) or only revoked ones (HoldsRevokedOnly), where no
// computer of the account can connect (computer.NoneLinked says how to link one, and why
// none connects: an account whose credentials were all revoked was told that it had "no
// computer linked yet", though it had had some). The zero value is HoldsOne, what a caller
// that cannot tell assumes.
type Holding int

const (
	HoldsOne Holding = iota
	HoldsNone
	HoldsRevokedOnly
)

// Unlinked is whether h leaves no computer of the account able to connect.
func (h Holding) Unlinked() bool { return h != HoldsOne }

// HoldingOf is what creds, an account's computer credentials, hold. The gateway's own check
// and the CLI's through the account API read it.
func HoldingOf(creds []Credential) Holding {
	switch {
	case slices.ContainsFunc(creds, func(c Credential) bool { return c.RevokedAt.IsZero() }):
		return HoldsOne
	case len(creds) > 0:
		return HoldsRevokedOnly
	}
	return HoldsNone
}

// Removed is what removing an account took with it: the account as it was, the ids
// (selectors) of its API tokens, computer credentials and enrollment keys, and how many link
// codes approved into it were waiting for their computer's player. Closed is filled by a
// running gateway that removed it: the traposIds of its computers connected then, whose
// sockets it closed (4003 revoked). The JSON is the account API's (docs/http-api.md).
type Removed struct {
	Account        Account  `json:"account"`
	Tokens         []string `json:"tokens"`
	Credentials    []string `json:"credentials"`
	EnrollmentKeys []string `json:"enrollmentKeys"`
	LinkCodes      int      `json:"linkCodes"`
	Closed         []string `json:"closed,omitempty"`
	// NotClosed, also filled by a running gateway, are the traposIds of its computers
	// connected to a replica of an older trap-sandbox, which does not close them: they stay
	// until they reconnect (their hello is then refused).
	NotClosed []string `json:"notClosed,omitempty"`
}

// Errors of a Store. Implementations return them (wrapped or not) so callers can tell them
// apart with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
)

// Store keeps accounts, tokens and credentials. Every implementation passes the suite in
// accounttest and is safe for concurrent use. A Store keeps what it is given: issuing
// secrets, checking them and the clock are Accounts' business.
type Store interface {
	// CreateAccount adds a; ErrExists if its ID is taken.
	CreateAccount(ctx context.Context, a Account) error
	// Account returns the account id, or ErrNotFound.
	Account(ctx context.Context, id string) (Account, error)
	// Accounts returns every account, by ID.
	Accounts(ctx context.Context) ([]Account, error)
	// CreateAccountIf adds a with its first token t as one change (a failure between the two,
	// a full disk, leaves neither: an account without a token would answer the retry "exists
	// already"), unless check, given every account as the store holds them at the add,
	// refuses: then its error, and nothing is added. ErrExists if a's ID is taken. The look
	// and the add are one step, so of two accounts named alike added at once (a1ice and alice,
	// through one gateway or two replicas) the later one's check sees the earlier one (see
	// each store for how).
	CreateAccountIf(ctx context.Context, a Account, t Token, check func(accounts []Account) error) error

	// CreateToken adds t; ErrExists if its selector is taken, ErrNotFound if its account is
	// missing.
	CreateToken(ctx context.Context, t Token) error
	// CreateTokenIf is CreateToken unless check, given the tokens of t's account (revoked
	// ones too) as they are at the add, refuses: then its error, and nothing is added. The
	// look and the add are one step, so of two calls at once for one account (two tokens
	// named alike, added through one gateway or two replicas) the later one's check sees the
	// earlier one's token, where a Tokens read and then a CreateToken let both in (see each
	// store for how).
	CreateTokenIf(ctx context.Context, t Token, check func(accountTokens []Token) error) error
	// Token returns the token of selector, or ErrNotFound.
	Token(ctx context.Context, selector string) (Token, error)
	// Tokens returns the account's tokens (revoked ones too), oldest first; "" is every
	// account's.
	Tokens(ctx context.Context, accountID string) ([]Token, error)
	// RevokeToken marks the token revoked at at (a token already revoked keeps its first
	// time) and returns it; ErrNotFound if there is none.
	RevokeToken(ctx context.Context, selector string, at time.Time) (Token, error)

	// CreateCredential adds c; ErrExists if its selector is taken, ErrNotFound if its account
	// is missing.
	CreateCredential(ctx context.Context, c Credential) error
	// Credential returns the credential of selector, or ErrNotFound.
	Credential(ctx context.Context, selector string) (Credential, error)
	// Credentials returns the account's credentials (revoked ones too), oldest first; "" is
	// every account's.
	Credentials(ctx context.Context, accountID string) ([]Credential, error)
	// RevokeCredential marks the credential revoked at at (the first time is kept) and
	// returns it; ErrNotFound if there is none.
	RevokeCredential(ctx context.Context, selector string, at time.Time) (Credential, error)
	// SeeCredential records a hello made with the credential: its time, traposId and address.
	SeeCredential(ctx context.Context, selector string, at time.Time, traposID, remoteAddr string) error
	// SeeToken records an API call made with the token: its time and address; ErrNotFound
	// if there is none.
	SeeToken(ctx context.Context, selector string, at time.Time, remoteAddr string) error

	// RemoveAccount deletes the account id and everything that lets anyone act as it: its
	// API tokens, its computer credentials, its enrollment keys and the link codes approved
	// into it, as one change (a failure leaves the account whole where the store has
	// transactions; see each store). at is the removal's time. It returns what went;
	// ErrNotFound if there is no such account; ErrForbidden if it is the last admin account,
	// counted in the same atomic step as the removal where the store has one (see each
	// store), so that two admins removing each other at once leave one.
	RemoveAccount(ctx context.Context, id string, at time.Time) (Removed, error)

	// LinkStore keeps link codes and enrollment keys (link.go).
	LinkStore

	// Close releases the store.
	Close() error
}

// notFound wraps ErrNotFound with what was looked for.
func notFound(what, key string) error { return fmt.Errorf("%s %s: %w", what, ShowID(key), ErrNotFound) }

// exists wraps ErrExists with what was added.
func exists(what, key string) error { return fmt.Errorf("%s %q: %w", what, key, ErrExists) }

// LatestReader is a Store whose reads may not see its latest writes yet (the NATS bucket on a
// cluster, whose followers may answer a read before they apply a write), with a view whose
// reads do, slower or dearer (Latest).
type LatestReader interface {
	Latest() Store
}

// Latest is s whose reads see every write acknowledged before them: s.Latest() where s is a
// LatestReader, else s, which does already (SQLite, Memory). For a read that a write relies on
// or that confirms a change just announced, where a stale answer says "not found" for what a
// script added a moment ago (through another replica, or on the same one: a cluster's follower
// applies writes after it acknowledges them) or stamps a secret with an account's removed
// incarnation. Reads that serve a hello or an API call keep the store's own, the cheaper.
func Latest(s Store) Store {
	if l, ok := s.(LatestReader); ok {
		return l.Latest()
	}
	return s
}
