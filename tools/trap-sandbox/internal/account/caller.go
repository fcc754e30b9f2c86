package account

import "context"

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
}

// LocalAdmin is the caller of the setup without accounts: SANDBOX_API_TOKEN, or a loopback
// client when no token is set. It reaches every computer, as before accounts existed.
var LocalAdmin = Caller{Account: Local, Admin: true}

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

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller ctx carries. Without one it is the zero Caller, which reaches
// nothing: a path that forgot to authenticate shows no computer rather than every one.
func CallerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}
