package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/clock"
	"trap-sandbox/internal/cluster"
)

// DataDirFlags locate the gateway's data directory (the account store, accounts.db).
type DataDirFlags struct {
	DataDir string `name:"data-dir" env:"SANDBOX_DATA_DIR" help:"The gateway's data directory (accounts, tokens, computer credentials); default: the user's data directory, e.g. ~/.local/share/trap-sandbox."`
}

// dir returns --data-dir, or the per-user default.
func (f DataDirFlags) dir() (string, error) {
	if f.DataDir != "" {
		return f.DataDir, nil
	}
	return DefaultDataDir()
}

// open opens the SQLite account store in the data directory, for a command run on the
// gateway's host (SQLite lets it write beside a running gateway).
func (f DataDirFlags) open(ctx context.Context) (*account.Accounts, *account.SQLite, error) {
	dir, err := f.dir()
	if err != nil {
		return nil, nil, err
	}
	s, err := account.OpenSQLite(ctx, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("the account store (--data-dir): %w", err)
	}
	return account.New(s, clock.Real{}), s, nil
}

// StoreFlags locate the account store for the account commands: the data directory, or
// with --nats the key-value bucket the replicas share.
type StoreFlags struct {
	DataDirFlags
	NATSFlags
	// nc is the connection to the bucket under --nats (set by open), on which a revocation is
	// announced to the running replicas.
	nc *nats.Conn
}

// open opens the store and returns Accounts on it, where it is (for messages) and how to
// close it.
func (f *StoreFlags) open(ctx context.Context) (*account.Accounts, string, func(), error) {
	if !f.NATSFlags.enabled() {
		accounts, s, err := f.DataDirFlags.open(ctx)
		if err != nil {
			return nil, "", nil, err
		}
		return accounts, s.Path(), func() { _ = s.Close() }, nil
	}
	logger := slog.New(slog.DiscardHandler)
	nc, err := f.NATSFlags.connect("trap-sandbox accounts", logger)
	if err != nil {
		return nil, "", nil, err
	}
	kv, err := f.NATSFlags.accountStore(ctx, nc)
	if err != nil {
		nc.Close()
		return nil, "", nil, err
	}
	f.nc = nc
	return account.New(kv, clock.Real{}), "the NATS key-value bucket " + account.KVBucket, nc.Close, nil
}

// DefaultDataDir is where a gateway keeps its data when --data-dir is not given:
// $XDG_DATA_HOME/trap-sandbox or ~/.local/share/trap-sandbox on Unix, the user's config
// directory (Application Support, %AppData%) on macOS and Windows.
func DefaultDataDir() (string, error) {
	switch runtime.GOOS {
	case "darwin", "windows":
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("no per-user directory for the data (%w): give --data-dir", err)
		}
		return filepath.Join(dir, "trap-sandbox"), nil
	}
	if dir := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "trap-sandbox"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for the data (%w): give --data-dir", err)
	}
	return filepath.Join(home, ".local", "share", "trap-sandbox"), nil
}

// AccountsCmd manages accounts in the gateway's data directory.
type AccountsCmd struct {
	Add  AccountsAddCmd  `cmd:"" help:"Create an account and print its first API token (alone, on the last line; shown once)."`
	List AccountsListCmd `cmd:"" help:"List the accounts."`
}

// AccountsAddCmd creates an account.
type AccountsAddCmd struct {
	StoreFlags
	Name  string `arg:"" help:"The account's name (a-z, 0-9, '.', '_', '-'); it is the accountId of its computers."`
	Admin bool   `help:"Make it an admin: it reaches every account's computers."`
}

// Run creates the account and prints its first token alone on the last line.
func (c *AccountsAddCmd) Run(ctx context.Context, out Stdout) error {
	accounts, where, done, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	role := account.RoleUser
	if c.Admin {
		role = account.RoleAdmin
	}
	token, err := accounts.AddAccount(ctx, c.Name, role, "first")
	if errors.Is(err, account.ErrExists) {
		return fmt.Errorf("account %q exists already (trap-sandbox tokens add %s NAME gives it another token)", c.Name, c.Name)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "account %s (%s) created in %s; its API token (shown once, send it as Authorization: Bearer or --api-token):\n%s\n", c.Name, role, where, token)
	return nil
}

// AccountsListCmd lists the accounts.
type AccountsListCmd struct {
	StoreFlags
}

// Run prints one account a line: name, role, created.
func (c *AccountsListCmd) Run(ctx context.Context, out Stdout) error {
	accounts, _, done, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	all, err := accounts.Store().Accounts(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCOUNT\tROLE\tCREATED")
	for _, a := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", a.ID, a.Role, stamp(a.Created))
	}
	return tw.Flush()
}

// TokensCmd manages an account's API tokens in the gateway's data directory.
type TokensCmd struct {
	List   TokensListCmd   `cmd:"" help:"List an account's API tokens (never their secrets)."`
	Add    TokensAddCmd    `cmd:"" help:"Give an account a new API token and print it (alone, on the last line; shown once)."`
	Revoke TokensRevokeCmd `cmd:"" help:"Revoke an API token by its id (see tokens list); it stops working on the next request."`
}

// TokensListCmd lists an account's tokens.
type TokensListCmd struct {
	StoreFlags
	Account string `arg:"" help:"The account."`
}

// Run prints one token a line.
func (c *TokensListCmd) Run(ctx context.Context, out Stdout) error {
	accounts, _, done, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	if _, err := accounts.Store().Account(ctx, c.Account); err != nil {
		return fmt.Errorf("%w (trap-sandbox accounts list shows them)", err)
	}
	toks, err := accounts.Store().Tokens(ctx, c.Account)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tCREATED\tEXPIRES\tREVOKED")
	for _, t := range toks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Selector, t.Name, stamp(t.Created), stamp(t.ExpiresAt), stamp(t.RevokedAt))
	}
	return tw.Flush()
}

// TokensAddCmd issues a token.
type TokensAddCmd struct {
	StoreFlags
	Account string        `arg:"" help:"The account."`
	Name    string        `arg:"" help:"What the token is for (laptop, ci, agent)."`
	Expires time.Duration `help:"Lifetime (e.g. 720h); 0, the default, never expires."`
}

// Run prints the new token alone on the last line.
func (c *TokensAddCmd) Run(ctx context.Context, out Stdout) error {
	accounts, _, done, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	token, t, err := accounts.IssueToken(ctx, c.Account, c.Name, c.Expires)
	if errors.Is(err, account.ErrNotFound) {
		return fmt.Errorf("no account %q (trap-sandbox accounts add %s creates it)", c.Account, c.Account)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "token %s (%s) of %s, expires %s; shown once:\n%s\n", t.Selector, t.Name, t.AccountID, stamp(t.ExpiresAt), token)
	return nil
}

// TokensRevokeCmd revokes a token.
type TokensRevokeCmd struct {
	StoreFlags
	ID string `arg:"" name:"id" help:"The token's id (the ID column of tokens list; the part after tsa_ and before the next _)."`
}

// Run revokes the token.
func (c *TokensRevokeCmd) Run(ctx context.Context, out Stdout) error {
	accounts, _, done, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	id := c.ID
	if strings.HasPrefix(id, string(account.KindToken)+"_") { // the whole token given: its selector
		id, _, _ = strings.Cut(strings.TrimPrefix(id, string(account.KindToken)+"_"), "_")
	}
	t, err := accounts.RevokeToken(ctx, "", id)
	if errors.Is(err, account.ErrNotFound) {
		return fmt.Errorf("no token %q (trap-sandbox tokens list ACCOUNT shows the ids)", id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "token %s (%s) of %s revoked at %s\n", t.Selector, t.Name, t.AccountID, stamp(t.RevokedAt))
	return nil
}

// CredentialsCmd manages computers' own credentials in the gateway's data directory.
type CredentialsCmd struct {
	Add    CredentialsAddCmd    `cmd:"" help:"Issue a computer credential for an account and print it (alone, on the last line; shown once): set it as the computer's sandbox.password."`
	List   CredentialsListCmd   `cmd:"" help:"List computer credentials (never their secrets) with what their last hello said."`
	Revoke CredentialsRevokeCmd `cmd:"" help:"Revoke a computer credential by its id; the computer's next hello is refused (4003 revoked)."`
}

// CredentialsAddCmd issues a computer credential.
type CredentialsAddCmd struct {
	StoreFlags
	Account string `arg:"" help:"The account the computer will belong to."`
}

// Run prints the credential alone on the last line.
func (c *CredentialsAddCmd) Run(ctx context.Context, out Stdout) error {
	accounts, _, done, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	secret, cred, err := accounts.IssueCredential(ctx, c.Account, "operator")
	if errors.Is(err, account.ErrNotFound) {
		return fmt.Errorf("no account %q (trap-sandbox accounts add %s creates it)", c.Account, c.Account)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "credential %s of %s; on the computer: set sandbox.password to it (shown once):\n%s\n", cred.Selector, cred.AccountID, secret)
	return nil
}

// CredentialsListCmd lists credentials.
type CredentialsListCmd struct {
	StoreFlags
	Account string `arg:"" optional:"" help:"The account (default: every account)."`
}

// Run prints one credential a line.
func (c *CredentialsListCmd) Run(ctx context.Context, out Stdout) error {
	accounts, _, done, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	creds, err := accounts.Store().Credentials(ctx, c.Account)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tACCOUNT\tAPPROVED BY\tCREATED\tLAST SEEN\tTRAPOSID\tADDRESS\tREVOKED")
	for _, cr := range creds {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cr.Selector, cr.AccountID, cr.ApprovedBy, stamp(cr.Created), stamp(cr.LastSeen),
			orDash(cr.LastTraposID), orDash(cr.RemoteAddr), stamp(cr.RevokedAt))
	}
	return tw.Flush()
}

// CredentialsRevokeCmd revokes a credential.
type CredentialsRevokeCmd struct {
	StoreFlags
	ID string `arg:"" name:"id" help:"The credential's id (the ID column of credentials list)."`
}

// Run revokes the credential.
func (c *CredentialsRevokeCmd) Run(ctx context.Context, out Stdout) error {
	accounts, _, done, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	cr, err := accounts.RevokeCredential(ctx, "", c.ID)
	if errors.Is(err, account.ErrNotFound) {
		return fmt.Errorf("no credential %q (trap-sandbox credentials list shows the ids)", c.ID)
	}
	if err != nil {
		return err
	}
	if c.nc == nil {
		// One node: the running gateway reads the data directory only at a hello. Revoking
		// through it (computers revoke) closes the socket at once instead.
		fmt.Fprintf(out, "credential %s of %s revoked at %s; its computer's next hello is refused (to close its socket now, revoke it through the gateway: trap-sandbox computers revoke TRAPOSID)\n",
			cr.Selector, cr.AccountID, stamp(cr.RevokedAt))
		return nil
	}
	if err := cluster.PublishRevocation(c.nc, cr.Selector); err != nil {
		return fmt.Errorf("credential %s of %s revoked, but the running replicas were not told (its socket closes at its next hello): %w", cr.Selector, cr.AccountID, err)
	}
	fmt.Fprintf(out, "credential %s of %s revoked at %s; the replica that holds its computer closes its socket now\n", cr.Selector, cr.AccountID, stamp(cr.RevokedAt))
	return nil
}

// stamp is a time for a listing: RFC 3339 in UTC, "-" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var _ io.Writer = Stdout{}

// ComputersGroupCmd is `computers` (the list, as before) and `computers revoke`.
type ComputersGroupCmd struct {
	List   ComputersCmd       `cmd:"" default:"withargs" help:"List the computers connected to a running gateway (the default)."`
	Revoke ComputersRevokeCmd `cmd:"" help:"Revoke a connected computer's own credential: its socket closes at once (4003 revoked) and its daemon stops (by the computer's account, or an admin)."`
}

// ComputersRevokeCmd revokes a connected computer's credential through the API.
type ComputersRevokeCmd struct {
	APIFlags
	TraposID string `arg:"" name:"traposId" help:"The computer's traposId, e.g. 7:kitchen."`
}

// Run revokes and prints what was revoked.
func (c *ComputersRevokeCmd) Run(ctx context.Context, out Stdout) error {
	payload, err := c.transport().RevokeComputer(ctx, c.TraposID)
	if err != nil {
		return failure(c.TraposID, "revoke", err)
	}
	var rev struct {
		AccountID  string `json:"accountId"`
		Credential string `json:"credential"`
	}
	_ = json.Unmarshal(payload, &rev)
	fmt.Fprintf(out, "computer %s of %s: credential %s revoked, its socket closed\n", c.TraposID, rev.AccountID, rev.Credential)
	return nil
}
