package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"trap-sandbox/internal/account"
	"trap-sandbox/internal/cctext"
	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/link"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/table"
)

// LinkCmd links computers to accounts: approving a computer's code, and enrollment keys.
type LinkCmd struct {
	Approve   LinkApproveCmd   `cmd:"" help:"Approve the link code a computer shows (sandbox link) into your account; the computer then asks its player to accept."`
	Key       LinkKeyCmd       `cmd:"" help:"Make an enrollment key and print it (alone, on the last line; shown once): sandbox link KEY on a computer links it at once. With --url/--api-token through the running gateway; without, on the account store (on the gateway's host)."`
	Keys      LinkKeysCmd      `cmd:"" help:"List enrollment keys (never their secrets); through the gateway with --url/--api-token, else on the account store."`
	RevokeKey LinkRevokeKeyCmd `cmd:"" name:"revoke-key" help:"Revoke an enrollment key by its id (see link keys); computers it linked stay linked; through the gateway with --url/--api-token, else on the account store."`
}

// linkFailure words a link command's error: the gateway's code and message as it answered
// (RunCommand names the command), but its refusal of the account the command named (""
// for none), reach as ManageFlags.reach, as every account command words it (noAccount).
func linkFailure(err error, named, reach string) error {
	var pe *protocol.Error
	if !errors.As(err, &pe) {
		return errors.New(cctext.Show(err.Error(), false))
	}
	if meant, ok := link.NoAccount(pe, named); named != "" && ok {
		return noAccount(named, reach, meant, false)
	}
	if pe.Attributed {
		return errors.New(showMessage(pe.Message))
	}
	return fmt.Errorf("the gateway answered %s: %s", pe.Code, showMessage(pe.Message))
}

// LinkApproveCmd approves a link code through the running gateway.
type LinkApproveCmd struct {
	APIFlags
	Code    string `arg:"" help:"The code the computer shows, e.g. BCDF-GHJK (with or without the dash, any case)."`
	Account string `help:"The account to link the computer into (default: your token's; another account needs an admin's token)."`
}

// Run approves and says which computer was approved.
func (c *LinkApproveCmd) Run(ctx context.Context, out Stdout) error {
	code, err := account.NormalizeCode(c.Code)
	if err != nil {
		return fmt.Errorf("%w: copy it from the computer's screen", err)
	}
	payload, err := c.transport().ApproveLink(ctx, code, c.Account)
	if err != nil {
		return linkFailure(err, c.Account, tokenReach(c.APIToken != ""))
	}
	var a link.Approved
	if err := json.Unmarshal(payload, &a); err != nil {
		return fmt.Errorf("the gateway's answer: %w", err)
	}
	fmt.Fprintf(out, "approved computer %s (from %s) into %s; it asks its player to accept\n",
		cctext.ShowTraposID(a.TraposID), cctext.Show(a.Address, false), a.Account)
	return nil
}

// keyMode is how a key command reaches the keys: by the account commands' rule (ManageFlags):
// through a running gateway's API when --url or --api-token is given, else on the account
// store itself (on the gateway's host, as accounts add).
type keyMode struct {
	ManageFlags
}

func (k *keyMode) viaAPI() bool { return k.throughGateway() }

// transport is the running gateway's API; a key command calls it only when viaAPI.
func (k *keyMode) transport() (hostapi.HTTP, error) {
	url, token, err := k.gateway()
	return hostapi.HTTP{URL: url, Token: token}, err
}

// LinkKeyCmd makes an enrollment key.
type LinkKeyCmd struct {
	keyMode
	Account  string   `help:"The account the key links computers into (default with --api-token: the token's; required on the data directory)."`
	Reusable bool     `help:"Link any number of computers until it expires (default: one computer)."`
	Uses     int      `help:"Link at most this many computers (overrides --reusable)."`
	Expires  Lifetime `default:"24h" help:"Lifetime, at most ${maxTokenTTL}, e.g. 1h or 720h; 0 never expires."`
}

// Run prints the key alone on the last line.
func (c *LinkKeyCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	if c.Uses < 0 {
		return errors.New("--uses must not be negative")
	}
	maxUses := 1
	switch {
	case c.Uses > 0:
		maxUses = c.Uses
	case c.Reusable:
		maxUses = 0
	}
	var k link.Key
	if c.viaAPI() {
		api, err := c.transport()
		if err != nil {
			return err
		}
		payload, err := api.NewEnrollmentKey(ctx, link.NewKeyRequest{Account: c.Account, MaxUses: maxUses, ExpiresInMs: c.Expires.Duration().Milliseconds()})
		if err != nil {
			return linkFailure(err, c.Account, c.reach())
		}
		if err := json.Unmarshal(payload, &k); err != nil {
			return fmt.Errorf("the gateway's answer: %w", err)
		}
	} else {
		if c.Account == "" {
			return errors.New("name the account with --account NAME (or give an API token with --api-token to use the token's)")
		}
		accounts, _, done, err := c.openStore(ctx, stderr, false)
		if err != nil {
			return err
		}
		defer done()
		plain, ek, err := accounts.IssueEnrollmentKey(ctx, c.Account, account.Operator, maxUses, c.Expires.Duration())
		if errors.Is(err, account.ErrNotFound) {
			return noAccount(c.Account, "", account.Meant(ctx, accounts.Manage(account.OperatorCaller), c.Account), false)
		}
		if err != nil {
			return err
		}
		k = link.Key{ID: ek.Selector, Account: ek.AccountID, MaxUses: ek.MaxUses, Secret: plain}
		if !ek.ExpiresAt.IsZero() {
			k.ExpiresAt = &ek.ExpiresAt
		}
	}
	uses := "any number of computers"
	switch {
	case k.MaxUses == 1:
		uses = "one computer"
	case k.MaxUses > 1:
		uses = fmt.Sprintf("%d computers", k.MaxUses)
	}
	var expiresAt time.Time
	if k.ExpiresAt != nil {
		expiresAt = *k.ExpiresAt
	}
	fmt.Fprintf(out, "enrollment key %s of %s: links %s, %s; on a computer: sandbox link KEY (shown once):\n%s\n", k.ID, k.Account, uses,
		expiry(expiresAt, k.ExpiresWithCaller), k.Secret)
	return nil
}

// LinkKeysCmd lists enrollment keys.
type LinkKeysCmd struct {
	keyMode
	Account string `help:"Only this account's keys (default: every account's on the data directory; the token's own through the API, every account's for an admin)."`
}

// Run prints one key a line.
func (c *LinkKeysCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	var keys []link.Key
	var mg account.Manager // on the store; through the gateway opened when needed
	if c.viaAPI() {
		api, err := c.transport()
		if err != nil {
			return err
		}
		payload, err := api.EnrollmentKeys(ctx, c.Account)
		if err != nil {
			return linkFailure(err, c.Account, c.reach())
		}
		if err := json.Unmarshal(payload, &keys); err != nil {
			return fmt.Errorf("the gateway's answer: %w", err)
		}
	} else {
		accounts, _, done, err := c.openStore(ctx, stderr, false)
		if err != nil {
			return err
		}
		defer done()
		mg = accounts.Manage(account.OperatorCaller)
		all, err := account.Latest(accounts.Store()).EnrollmentKeys(ctx, c.Account) // a key made a moment ago is listed
		if err != nil {
			return err
		}
		for _, k := range all {
			lk := link.Key{ID: k.Selector, Account: k.AccountID, CreatedBy: k.CreatedBy, Created: k.Created, MaxUses: k.MaxUses, Uses: k.Uses}
			if !k.ExpiresAt.IsZero() {
				lk.ExpiresAt = &k.ExpiresAt
			}
			if !k.RevokedAt.IsZero() {
				lk.RevokedAt = &k.RevokedAt
			}
			keys = append(keys, lk)
		}
	}
	if len(keys) == 0 {
		// A name of no account lists no keys either: it is said so, with the account meant,
		// as tokens list says it (the routes list a named account's keys without asking).
		if c.Account != "" {
			if mg == nil {
				api, _, done, err := c.open(ctx, stderr)
				if err != nil {
					return err
				}
				defer done()
				mg = api
			}
			if _, err := mg.Tokens(ctx, c.Account); errors.Is(err, account.ErrNotFound) {
				return c.manageError(ctx, mg, err, "account", c.Account)
			}
		}
		return noneListed(stderr, "enrollment keys", c.Account)
	}
	tw := table.NewWriter(out, 2)
	fmt.Fprintln(tw, "ID\tACCOUNT\tCREATED BY\tCREATED\tEXPIRES\tUSES\tREVOKED")
	opt := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return stamp(*t)
	}
	for _, k := range keys {
		uses := fmt.Sprintf("%d/%d", k.Uses, k.MaxUses)
		if k.MaxUses == 0 {
			uses = fmt.Sprintf("%d/any", k.Uses)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", show(k.ID), show(k.Account), orDash(show(k.CreatedBy)), stamp(k.Created), opt(k.ExpiresAt), uses, opt(k.RevokedAt))
	}
	return tw.Flush()
}

// LinkRevokeKeyCmd revokes an enrollment key.
type LinkRevokeKeyCmd struct {
	keyMode
	ID string `arg:"" name:"id" help:"The key's id (the ID column of link keys; or the whole tsk_… key)."`
}

// Run revokes the key.
func (c *LinkRevokeKeyCmd) Run(ctx context.Context, out Stdout, stderr io.Writer) error {
	id := c.ID
	if rest, ok := strings.CutPrefix(id, string(account.KindEnrollment)+"_"); ok { // the whole key given: its selector
		id, _, _ = strings.Cut(rest, "_")
	}
	if c.viaAPI() {
		api, err := c.transport()
		if err != nil {
			return err
		}
		if _, err := api.RevokeEnrollmentKey(ctx, id); err != nil {
			return linkFailure(err, "", "")
		}
	} else {
		accounts, _, done, err := c.openStore(ctx, stderr, false)
		if err != nil {
			return err
		}
		defer done()
		if _, err := accounts.RevokeEnrollmentKey(ctx, "", id); errors.Is(err, account.ErrNotFound) {
			return fmt.Errorf("no enrollment key %s (trap-sandbox link keys shows the ids)", account.ShowID(id))
		} else if err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "enrollment key %s revoked; it links no more computers (those it linked stay linked)\n", id)
	return nil
}
