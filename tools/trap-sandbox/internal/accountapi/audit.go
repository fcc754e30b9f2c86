package accountapi

import (
	"context"
	"log/slog"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
)

// audited is the caller's account.Manager that logs each change it made at info level: what
// (the account, the token's or credential's id and name, a token's as tokens list shows it:
// cctext.ShowName), then who from where (server.Who).
// An operator can then tell, from the log alone, who issued or revoked what. The secrets a
// change returns are never logged; nor are reads, refusals (the API's auth and the answer say
// those) or store failures (writeError logs those, with the same who).
type audited struct {
	account.Manager
	log *slog.Logger
	who []any
}

func (a audited) done(msg string, args ...any) {
	a.log.Info("account API: "+msg, append(args, a.who...)...)
}

func (a audited) AddAccount(ctx context.Context, id string, role account.Role) (account.NewAccount, error) {
	n, err := a.Manager.AddAccount(ctx, id, role)
	if err == nil {
		a.done("account added", "account", n.Account.ID, "role", string(n.Account.Role), "tokenId", n.Token.Selector)
	}
	return n, err
}

func (a audited) RemoveAccount(ctx context.Context, id string) (account.Removed, error) {
	r, err := a.Manager.RemoveAccount(ctx, id)
	if err == nil {
		a.done("account removed", "account", r.Account.ID, "role", string(r.Account.Role), "tokens", len(r.Tokens),
			"credentials", len(r.Credentials), "enrollmentKeys", len(r.EnrollmentKeys), "linkCodes", r.LinkCodes)
	}
	return r, err
}

func (a audited) AddToken(ctx context.Context, accountID, name string, ttl time.Duration) (account.NewToken, error) {
	n, err := a.Manager.AddToken(ctx, accountID, name, ttl)
	if err == nil {
		expiresIn := "never" // ttl 0, which would read as "at once"
		if !n.Token.ExpiresAt.IsZero() {
			// As made: cut to the caller's own token's when it expires sooner (Caller.Until).
			expiresIn = n.Token.ExpiresAt.Sub(n.Token.Created).Round(time.Second).String()
		}
		a.done("token added", "account", n.Token.AccountID, "tokenId", n.Token.Selector, "name", cctext.ShowName(n.Token.Name, false), "expiresIn", expiresIn)
	}
	return n, err
}

func (a audited) RevokeToken(ctx context.Context, id string) (account.Token, error) {
	tok, err := a.Manager.RevokeToken(ctx, id)
	if err == nil {
		a.done("token revoked", "account", tok.AccountID, "tokenId", tok.Selector, "name", cctext.ShowName(tok.Name, false))
	}
	return tok, err
}

func (a audited) AddCredential(ctx context.Context, accountID string) (account.NewCredential, error) {
	n, err := a.Manager.AddCredential(ctx, accountID)
	if err == nil {
		a.done("credential added", "account", n.Credential.AccountID, "credentialId", n.Credential.Selector)
	}
	return n, err
}

func (a audited) RevokeCredential(ctx context.Context, id string) (account.Credential, error) {
	c, err := a.Manager.RevokeCredential(ctx, id)
	if err == nil {
		a.done("credential revoked", "account", c.AccountID, "credentialId", c.Selector, "lastTraposId", c.LastTraposID)
	}
	return c, err
}
