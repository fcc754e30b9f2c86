package account

import (
	"context"
	"errors"
	"fmt"
	"time"

	"trap-sandbox/internal/spelling"
)

// Manager is what the account commands do (`trap-sandbox accounts|tokens|credentials …`),
// wherever the accounts are: on the store itself (Accounts.Manage, on the gateway's host) or
// through a running gateway's API (accountapi.Client, with a token). The CLI has one code
// path for both; the API's routes are this interface on the caller's Manage.
type Manager interface {
	// AddAccount creates the account id with role and its first API token (named "first").
	AddAccount(ctx context.Context, id string, role Role) (NewAccount, error)
	// Accounts lists the accounts the caller sees, with their latest token use.
	Accounts(ctx context.Context) ([]AccountInfo, error)
	// Tokens lists the account's tokens; "" is every account the caller sees.
	Tokens(ctx context.Context, accountID string) ([]Token, error)
	// AddToken gives the account a new API token named name, expiring after ttl (0: never).
	AddToken(ctx context.Context, accountID, name string, ttl time.Duration) (NewToken, error)
	// RevokeToken revokes the token whose selector is id.
	RevokeToken(ctx context.Context, id string) (Token, error)
	// Credentials lists the account's computer credentials; "" is every account the caller
	// sees.
	Credentials(ctx context.Context, accountID string) ([]Credential, error)
	// AddCredential issues a computer credential for the account.
	AddCredential(ctx context.Context, accountID string) (NewCredential, error)
	// RevokeCredential revokes the credential whose selector is id.
	RevokeCredential(ctx context.Context, id string) (Credential, error)
	// RemoveAccount removes the account id with everything that lets anyone act as it (its
	// tokens, credentials, enrollment keys, link codes approved into it); admins only, and
	// never the caller's own account nor the last admin.
	RemoveAccount(ctx context.Context, id string) (Removed, error)
}

// NewAccount is a created account with its first token; Secret is that token, shown once.
type NewAccount struct {
	Account Account `json:"account"`
	Token   Token   `json:"token"`
	Secret  string  `json:"secret"`
	// ExpiresWithCaller says the token's lifetime was cut to the caller's own token's
	// (Caller.Until).
	ExpiresWithCaller bool `json:"expiresWithCaller,omitempty"`
}

// NewToken is an issued token; Secret is the token itself, shown once.
type NewToken struct {
	Token  Token  `json:"token"`
	Secret string `json:"secret"`
	// ExpiresWithCaller says its lifetime was cut to the caller's own token's
	// (Caller.Until).
	ExpiresWithCaller bool `json:"expiresWithCaller,omitempty"`
}

// NewCredential is an issued computer credential; Secret is the credential, shown once.
type NewCredential struct {
	Credential Credential `json:"credential"`
	Secret     string     `json:"secret"`
}

// AccountInfo is an account as listed: with its tokens' latest use (when and from where),
// so an operator sees which accounts are in use without listing every token.
type AccountInfo struct {
	Account
	Tokens     int       `json:"tokens"`
	LastUsed   time.Time `json:"lastUsed,omitzero"`
	RemoteAddr string    `json:"remoteAddr,omitempty"`
}

// ErrForbidden is a Manager's refusal of what the caller's role may not do (a user adding an
// account); its message names the token that would do.
var ErrForbidden = errors.New("forbidden")

// ErrNotReached is ErrNotFound as a caller that is no admin gets it for any account but its
// own, whether that account exists or not (so no name leaks): what reaches it is another
// token, not another name. Through the API the message ends with this error's, which is how
// accountapi.Client tells it apart.
var ErrNotReached = fmt.Errorf("%w (this token reaches its own account only)", ErrNotFound)

// OperatorCaller is who works on the store itself: an admin, recorded as Operator.
var OperatorCaller = Caller{Account: Operator, Admin: true}

// Manage returns the Manager of caller on a's store: the one home of who may manage what.
// An admin manages every account; a user sees its own account and manages its own tokens
// and computer credentials (lists, adds and revokes them); what the caller does not reach
// answers as what does not exist (ErrNotFound), so no other account's name leaks. What it
// creates records the caller's account as its creator.
//
// A caller limited to one computer (Caller.Only: the agent's pass for the computer that
// asked) manages nothing, not even its own account's tokens: a token it could mint would
// reach every computer of the account. Each call is refused saying so (ErrForbidden,
// Caller.PassRefusal), not in a user token's words, which told it that its own account was
// not one "this token reaches".
func (a *Accounts) Manage(caller Caller) Manager {
	if caller.Only != "" {
		return passManager{caller}
	}
	return manager{a: a, caller: caller}
}

// passManager is the Manager of a caller limited to one computer: it refuses everything.
type passManager struct{ caller Caller }

// refuse refuses what the account's holder does instead (command, with its token).
func (p passManager) refuse(does, command string) error {
	return fmt.Errorf("%w: %s", ErrForbidden, p.caller.PassRefusal(does, command))
}

// refuseAdmins refuses what an admin alone does instead.
func (p passManager) refuseAdmins(does, what, command string) error {
	return fmt.Errorf("%w: %s", ErrForbidden, p.caller.passRefusal(does, fmt.Sprintf(
		"%s needs an admin token (an admin account's, or the gateway's SANDBOX_API_TOKEN; %s)", what, command)))
}

func (p passManager) AddAccount(context.Context, string, Role) (NewAccount, error) {
	return NewAccount{}, p.refuseAdmins("adds no account", "adding an account", "trap-sandbox accounts add")
}

func (p passManager) Accounts(context.Context) ([]AccountInfo, error) {
	return nil, p.refuse("lists no accounts", "trap-sandbox accounts list")
}

func (p passManager) Tokens(context.Context, string) ([]Token, error) {
	return nil, p.refuse("lists no API tokens", "trap-sandbox tokens list")
}

func (p passManager) AddToken(context.Context, string, string, time.Duration) (NewToken, error) {
	return NewToken{}, p.refuse("makes no API token", "trap-sandbox tokens add")
}

func (p passManager) RevokeToken(context.Context, string) (Token, error) {
	return Token{}, p.refuse("revokes no API token", "trap-sandbox tokens revoke ID")
}

func (p passManager) Credentials(context.Context, string) ([]Credential, error) {
	return nil, p.refuse("lists no computer credentials", "trap-sandbox credentials list")
}

func (p passManager) AddCredential(context.Context, string) (NewCredential, error) {
	return NewCredential{}, p.refuse("makes no computer credential", "trap-sandbox credentials add")
}

func (p passManager) RevokeCredential(context.Context, string) (Credential, error) {
	return Credential{}, p.refuse("revokes no computer credential", "trap-sandbox credentials revoke ID")
}

func (p passManager) RemoveAccount(context.Context, string) (Removed, error) {
	return Removed{}, p.refuseAdmins("removes no account", "removing an account", "trap-sandbox accounts remove")
}

type manager struct {
	a      *Accounts
	caller Caller
}

// own returns the account a user's call is about ("" is its own), or ErrNotReached for any
// other: the same answer as for an account that does not exist.
func (m manager) own(accountID string) (string, error) {
	if m.caller.Admin {
		return accountID, nil
	}
	if accountID == "" {
		accountID = m.caller.Account
	}
	if m.caller.Account == "" || accountID != m.caller.Account {
		return "", fmt.Errorf("account %s: %w", ShowID(accountID), ErrNotReached)
	}
	return accountID, nil
}

// store is what the manager reads: the store as last written (Latest), so that a command
// finds and lists what a command before it added or changed a moment ago, through whichever
// replica (on a NATS cluster a follower answers reads before it has applied the latest
// writes). Commands are an operator's or a user's, few; a hello and an API call's token are
// read from the store itself, the cheaper.
func (m manager) store() Store { return Latest(m.a.store) }

// exists checks that an admin's named account exists, so a listing of a misspelt account
// says so instead of listing nothing.
func (m manager) exists(ctx context.Context, accountID string) error {
	if accountID == "" {
		return nil
	}
	if err := beyondAnyID("account", accountID); err != nil {
		return err
	}
	_, err := m.store().Account(ctx, accountID)
	return m.unknown(ctx, accountID, err)
}

func (m manager) AddAccount(ctx context.Context, id string, role Role) (NewAccount, error) {
	if !m.caller.Admin {
		return NewAccount{}, fmt.Errorf("%w: adding an account needs an admin token, and this one is of %q, a user (use an admin account's token or the gateway's SANDBOX_API_TOKEN, or run the command on the gateway's host with --data-dir)",
			ErrForbidden, m.caller.Account)
	}
	secret, tok, err := m.a.addAccount(ctx, id, role, "first", m.caller.Until, m.caller.Account)
	if err != nil {
		return NewAccount{}, err
	}
	acc, err := m.store().Account(ctx, id)
	return NewAccount{Account: acc, Token: tok, Secret: secret, ExpiresWithCaller: CutTo(tok.ExpiresAt, m.caller.Until)}, err
}

func (m manager) Accounts(ctx context.Context) ([]AccountInfo, error) {
	var all []Account
	if m.caller.Admin {
		var err error
		if all, err = m.store().Accounts(ctx); err != nil {
			return nil, err
		}
	} else if m.caller.Account != "" {
		acc, err := m.store().Account(ctx, m.caller.Account)
		if err != nil {
			return nil, err
		}
		all = []Account{acc}
	}
	if len(all) == 0 {
		return []AccountInfo{}, nil
	}
	toks, err := m.Tokens(ctx, "")
	if err != nil {
		return nil, err
	}
	byAccount := map[string]*AccountInfo{}
	out := make([]AccountInfo, len(all))
	for i, acc := range all {
		out[i] = AccountInfo{Account: acc}
		byAccount[acc.ID] = &out[i]
	}
	for _, t := range toks {
		info := byAccount[t.AccountID]
		if info == nil {
			continue
		}
		info.Tokens++
		if t.LastUsed.After(info.LastUsed) {
			info.LastUsed, info.RemoteAddr = t.LastUsed, t.RemoteAddr
		}
	}
	return out, nil
}

func (m manager) Tokens(ctx context.Context, accountID string) ([]Token, error) {
	accountID, err := m.own(accountID)
	if err != nil {
		return nil, err
	}
	if err := m.exists(ctx, accountID); err != nil {
		return nil, err
	}
	return m.store().Tokens(ctx, accountID)
}

func (m manager) AddToken(ctx context.Context, accountID, name string, ttl time.Duration) (NewToken, error) {
	accountID, err := m.own(accountID)
	if err != nil {
		return NewToken{}, err
	}
	if accountID == "" {
		return NewToken{}, invalid("a token needs an account")
	}
	secret, tok, err := m.a.issueToken(ctx, accountID, name, ttl, m.caller.Until, m.caller.Account)
	return NewToken{Token: tok, Secret: secret, ExpiresWithCaller: CutTo(tok.ExpiresAt, m.caller.Until)}, m.unknown(ctx, accountID, err)
}

// of is the account a user's revocation is limited to ("" for an admin: any).
func (m manager) of() string {
	if m.caller.Admin {
		return ""
	}
	if m.caller.Account == "" {
		return "\x00" // reaches nothing: no account has this id (CheckName)
	}
	return m.caller.Account
}

func (m manager) RevokeToken(ctx context.Context, id string) (Token, error) {
	return m.a.RevokeToken(ctx, m.of(), id)
}

func (m manager) Credentials(ctx context.Context, accountID string) ([]Credential, error) {
	accountID, err := m.own(accountID)
	if err != nil {
		return nil, err
	}
	if err := m.exists(ctx, accountID); err != nil {
		return nil, err
	}
	return m.store().Credentials(ctx, accountID)
}

func (m manager) AddCredential(ctx context.Context, accountID string) (NewCredential, error) {
	accountID, err := m.own(accountID)
	if err != nil {
		return NewCredential{}, err
	}
	if accountID == "" {
		return NewCredential{}, invalid("a credential needs an account")
	}
	secret, c, err := m.a.IssueCredential(ctx, accountID, m.caller.Account)
	return NewCredential{Credential: c, Secret: secret}, m.unknown(ctx, accountID, err)
}

func (m manager) RevokeCredential(ctx context.Context, id string) (Credential, error) {
	return m.a.RevokeCredential(ctx, m.of(), id)
}

func (m manager) RemoveAccount(ctx context.Context, id string) (Removed, error) {
	if !m.caller.Admin {
		return Removed{}, fmt.Errorf("%w: removing an account needs an admin token, and this one is of %q, a user (use an admin account's token or the gateway's SANDBOX_API_TOKEN, or run the command on the gateway's host with --data-dir)",
			ErrForbidden, m.caller.Account)
	}
	if id == m.caller.Account && !Reserved(id) { // the gateway's own token (local) is no account's
		return Removed{}, fmt.Errorf("%w: account %q is the one whose token makes this call: an admin does not remove itself (use another admin's token or the gateway's SANDBOX_API_TOKEN, or run the command on the gateway's host with --data-dir)",
			ErrForbidden, id)
	}
	r, err := m.a.RemoveAccount(ctx, id)
	return r, m.unknown(ctx, id, err)
}

// Meant is the account a name that is none likely meant (spelling.Nearest), among the
// accounts mg's caller sees, or "": the one home of an account's "did you mean". Its caller
// sees what Accounts lists, so an admin hears of any account, a user of its own alone and a
// pass of none: no other account's name leaks to a token that may not list it. A name longer
// than any account's (maxSelectorBytes) means none: its distance to each would be a long sum.
func Meant(ctx context.Context, mg Manager, name string) string {
	if name == "" || len(name) > maxSelectorBytes {
		return ""
	}
	all, err := mg.Accounts(ctx)
	if err != nil {
		return ""
	}
	ids := make([]string, 0, len(all))
	for _, a := range all {
		if a.ID != name {
			ids = append(ids, a.ID)
		}
	}
	return spelling.Nearest(name, ids)
}

// unknown is err, an account's ErrNotFound (not ErrNotReached: a name of no account this
// caller reaches), with the account name likely meant: "…: not found (did you mean
// \"alice\"?)", so that the API's answer names it as the CLI does.
func (m manager) unknown(ctx context.Context, name string, err error) error {
	if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotReached) {
		return err
	}
	if meant := Meant(ctx, m, name); meant != "" {
		return fmt.Errorf("%w (did you mean %s?)", err, ShowID(meant))
	}
	return err
}
