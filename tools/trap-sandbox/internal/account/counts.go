package account

import "context"

// Token and credential states, as counted (metrics) and listed.
const (
	StateActive  = "active"
	StateRevoked = "revoked"
	StateExpired = "expired"
)

// State is the token's state at the Accounts' clock: revoked, expired or active.
func (a *Accounts) State(t Token) string {
	switch {
	case !t.RevokedAt.IsZero():
		return StateRevoked
	case !t.ExpiresAt.IsZero() && !a.clock.Now().Before(t.ExpiresAt):
		return StateExpired
	}
	return StateActive
}

// Counts is how many accounts, tokens and credentials the store holds: accounts by role,
// tokens and credentials by state.
type Counts struct {
	Accounts    map[Role]int
	Tokens      map[string]int
	Credentials map[string]int
}

// Count reads the store's counts (for the metrics, at scrape).
func (a *Accounts) Count(ctx context.Context) (Counts, error) {
	c := Counts{Accounts: map[Role]int{RoleAdmin: 0, RoleUser: 0},
		Tokens:      map[string]int{StateActive: 0, StateRevoked: 0, StateExpired: 0},
		Credentials: map[string]int{StateActive: 0, StateRevoked: 0}}
	all, err := a.store.Accounts(ctx)
	if err != nil {
		return Counts{}, err
	}
	for _, acc := range all {
		c.Accounts[acc.Role]++
	}
	toks, err := a.store.Tokens(ctx, "")
	if err != nil {
		return Counts{}, err
	}
	for _, t := range toks {
		c.Tokens[a.State(t)]++
	}
	creds, err := a.store.Credentials(ctx, "")
	if err != nil {
		return Counts{}, err
	}
	for _, cr := range creds {
		if cr.RevokedAt.IsZero() {
			c.Credentials[StateActive]++
		} else {
			c.Credentials[StateRevoked]++
		}
	}
	return c, nil
}
