package account

import (
	"context"
	"fmt"
	"time"

	"trap-sandbox/internal/cctext"
)

// Caller is who a host-side call is made for: the account its API token opened, and whether
// that account is an admin. The server's API auth puts it in the request's context; every
// Transport reads it from there, so each module (the computer list, requests, files, MCP,
// later ones) shows the caller only what it may reach without a check of its own.
type Caller struct {
	Account string
	Admin   bool
	// Only, when set, limits the caller to one computer of Account, the one of this traposId:
	// the agent's tools act as the computer that asked the agent, on that computer alone.
	Only string
	// Token is the id (selector, never the secret) of the account's API token the call came
	// with, which the audit lines of its changes name (ByToken); empty for the gateway's own
	// caller, the operator and a pass.
	Token string
	// Until is when that token expires (zero: never, or no token). What the call makes that
	// opens the gateway to its holder, an API token or an enrollment key, expires no later
	// (expiresBy): a token given for an hour does not make one that lasts for ever.
	Until time.Time
}

// ByToken is the audit line's attribute naming the API token that made a change ("byToken",
// its id), so that what a leaked token made can be found and revoked; none without one.
func (c Caller) ByToken() []any {
	if c.Token == "" {
		return nil
	}
	return []any{"byToken", c.Token}
}

// TokenID is the id (selector) of plain, an account API token (tsa_<id>_<secret>), or "" when
// plain is not one.
func TokenID(plain string) string {
	id, _, err := parseSecret(KindToken, plain)
	if err != nil {
		return ""
	}
	return id
}

// LocalAdmin is the caller of the setup without accounts: SANDBOX_API_TOKEN, or a loopback
// client when no token is set. It reaches every computer, as before accounts existed.
var LocalAdmin = Caller{Account: Local, Admin: true}

// OwnWins reports whether a traposId that the caller's own account and other accounts have
// connected names its own account's computer (an admin's: one that reaches them all). An
// account's own computer wins: only its credentials say hello in it. Local's does not, for the
// gateway's own caller (LocalAdmin): every computer with the shared password says hello in
// local, under any traposId it likes, so a player's program saying hello as alice's linked
// 7:kitchen would take the operator's requests, files and keys meant for alice's computer, which
// the list showed as alice's. Such a traposId is then refused naming the accounts, as it is to
// an admin whose own account has none.
func (c Caller) OwnWins() bool { return c.Account != Local }

// Reaches reports whether the caller may see and drive every computer of accountID. A caller
// limited to one computer (Only) reaches no whole account: a check that knows only the
// account refuses it, and one that knows the computer asks ReachesComputer.
func (c Caller) Reaches(accountID string) bool {
	return c.Only == "" && (c.Admin || (c.Account != "" && c.Account == accountID))
}

// ReachesComputer reports whether the caller may see and drive the computer traposID of
// accountID.
func (c Caller) ReachesComputer(accountID, traposID string) bool {
	if c.Only != "" {
		return c.Account != "" && c.Account == accountID && c.Only == traposID
	}
	return c.Reaches(accountID)
}

// PassRefusal words the refusal of what a caller limited to one computer (Only: the agent's
// pass) may not do with its account, which it manages nothing of (Manage): does is what it
// does not ("makes no enrollment key"), command what does it with a token of the account
// ("trap-sandbox link key"). It says what the caller is, where a user token's words ("your
// token is account alice's: only an admin's token …") would leave an agent holding it asking
// for a token it already seems to have.
func (c Caller) PassRefusal(does, command string) string {
	return c.passRefusal(does, fmt.Sprintf("the account's holder does, with one of account %s's API tokens or an admin's (%s)", c.Account, command))
}

// passRefusal is PassRefusal naming who does it instead in words of its own (an admin alone).
func (c Caller) passRefusal(does, instead string) string {
	return fmt.Sprintf("this caller is the agent's pass for computer %s of account %s: it reaches that computer alone and manages nothing of its account, "+
		"so it %s; %s", cctext.ShowTraposID(c.Only), c.Account, does, instead)
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	if c == LocalAdmin {
		return context.WithValue(ctx, callerKey{}, localAdminValue)
	}
	return context.WithValue(ctx, callerKey{}, c)
}

// localAdminValue is LocalAdmin as a context value, made once: a Caller made a value anew is
// an allocation, and the gateway's own caller (the operator's CLI, web console, MCP client)
// makes every request of the host's tools.
var localAdminValue any = LocalAdmin

// CallerFrom returns the caller ctx carries. Without one it is the zero Caller, which reaches
// nothing: a path that forgot to authenticate shows no computer rather than every one.
func CallerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}
